"""torch.backends.cudnn: lucid has no cuDNN; the flags are accepted and do nothing."""
import contextlib
import sys
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    return False


def version():
    return None


@contextlib.contextmanager
def flags(**values):
    """PyTorch's context manager (and decorator) that sets these flags for a block and restores them after; the
    flags have no effect on lucid, so this only keeps the values readable as PyTorch's are."""
    module = sys.modules[__name__]
    unknown = set(values) - {'deterministic', 'benchmark', 'enabled', 'allow_tf32'}
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
