"""lucid.nn: neural-network building blocks (``lucid.nn.functional`` now; modules come with the nn issue)."""
from . import functional  # noqa: F401
