"""lucid.backends.mkldnn: lucid has no oneDNN; the flag is accepted and does nothing."""
from ._flags import flags_for

enabled = True


def is_available() -> bool:
    """False: MLX's CPU kernels are its own (with a BLAS), not oneDNN's."""
    return False


flags = flags_for(__name__, ("enabled",))
