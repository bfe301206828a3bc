"""``lucid.nn.parallel``: ``DistributedDataParallel`` on ``lucid.distributed`` (MLX's distributed engine)."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
