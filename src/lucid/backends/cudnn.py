"""lucid.backends.cudnn: lucid has no cuDNN; the flags are accepted and do nothing."""
from ._flags import flags_for

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: MLX does not use cuDNN's API through lucid."""
    return False


def version():
    """None: there is no cuDNN to report."""
    return None


flags = flags_for(__name__, ("deterministic", "benchmark", "enabled", "allow_tf32"))
