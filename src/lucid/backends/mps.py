"""lucid.backends.mps: Metal, MLX's GPU backend on Apple Silicon. ``device("mps")`` is lucid's GPU device."""
import mlx.core as _mx


def is_available() -> bool:
    """Whether MLX runs on a Metal GPU here (an Apple Silicon Mac)."""
    return _mx.metal.is_available()


def is_built() -> bool:
    """Whether this MLX build has Metal (the same as ``is_available``: MLX builds Metal only where it runs)."""
    return _mx.metal.is_available()
