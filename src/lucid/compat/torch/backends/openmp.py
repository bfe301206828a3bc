"""torch.backends.openmp: MLX manages its own CPU threads."""


def is_available() -> bool:
    return False
