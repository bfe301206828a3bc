"""PyTorch's ``torch.backends.X.flags(...)``: a context manager (and decorator) that sets some of a backend module's
flags for a block and restores them after. The flags change nothing in lucid; this keeps them readable as
PyTorch's are inside the block."""
from __future__ import annotations

import contextlib
import sys


def flags_for(module_name: str, names: tuple):
    """The ``flags`` function of the backend module ``module_name``, whose flags are ``names``."""

    @contextlib.contextmanager
    def flags(**values):
        """Set these flags (by keyword) for the block, then restore them.

        :param values: flag names and their values (None leaves a flag as it is)."""
        module = sys.modules[module_name]
        unknown = set(values) - set(names)
        if unknown:
            raise TypeError(f"flags() got an unexpected keyword argument {sorted(unknown)[0]!r}")
        saved = {name: getattr(module, name) for name in values}
        for name, value in values.items():
            if value is not None:
                setattr(module, name, value)
        try:
            yield
        finally:
            for name, value in saved.items():
                setattr(module, name, value)

    return flags
