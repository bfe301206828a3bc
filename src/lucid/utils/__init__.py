"""lucid.utils: checkpoint (activation checkpointing); data loading comes with the nn issue."""
from . import checkpoint  # noqa: F401
