"""torch.distributed: importable, reporting no process group. lucid runs a single process on one MLX device;
what needs a process group raises when called. ``is_available()`` is False, as in a PyTorch build without it."""
from __future__ import annotations

from ._unsupported import unsupported as _unsupported

_WHY = "lucid runs a single process on one MLX device and has no process groups (run the script without " \
       "torchrun; the usual `if ddp:` paths are then skipped)"


def is_available() -> bool:
    return False


def is_initialized() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return False


class ReduceOp:
    SUM, PRODUCT, MIN, MAX, BAND, BOR, BXOR, AVG, PREMUL_SUM = "sum", "product", "min", "max", "band", "bor", \
        "bxor", "avg", "premul_sum"


class group:
    WORLD = None


init_process_group = _unsupported("torch.distributed.init_process_group", _WHY)
destroy_process_group = _unsupported("torch.distributed.destroy_process_group", _WHY)
new_group = _unsupported("torch.distributed.new_group", _WHY)
get_rank = _unsupported("torch.distributed.get_rank", _WHY)
get_world_size = _unsupported("torch.distributed.get_world_size", _WHY)
barrier = _unsupported("torch.distributed.barrier", _WHY)
all_reduce = _unsupported("torch.distributed.all_reduce", _WHY)
all_gather = _unsupported("torch.distributed.all_gather", _WHY)
broadcast = _unsupported("torch.distributed.broadcast", _WHY)
reduce = _unsupported("torch.distributed.reduce", _WHY)
