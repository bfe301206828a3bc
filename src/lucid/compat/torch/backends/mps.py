"""torch.backends.mps: Metal, MLX's GPU backend on Apple Silicon. ``torch.device("mps")`` is lucid's GPU device."""
import mlx.core as _mx


def is_available() -> bool:
    return _mx.metal.is_available()


def is_built() -> bool:
    return _mx.metal.is_available()
