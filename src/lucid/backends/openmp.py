"""lucid.backends.openmp: MLX manages its own CPU threads."""


def is_available() -> bool:
    """False: MLX's CPU threads are its own, not OpenMP's."""
    return False
