"""torch.distributed: lucid's own collectives on MLX's distributed engine (``lucid.distributed``: processes started
by ``mlx.launch``; without a launcher a process group is a world of one). The names PyTorch has and MLX cannot
provide (sub-groups, point-to-point, reduce to one rank) raise when called."""
from __future__ import annotations

from lucid.distributed import *  # noqa: F401,F403
from lucid.distributed import __all__ as _lucid_all

from lucid._unsupported import unsupported as _unsupported

_WHY = "MLX's distributed engine has collectives over all processes only (all_sum, all_gather, ...)"


def is_torchelastic_launched() -> bool:
    return False


new_group = _unsupported("torch.distributed.new_group", _WHY)
reduce = _unsupported("torch.distributed.reduce", _WHY)
send = _unsupported("torch.distributed.send", _WHY)
recv = _unsupported("torch.distributed.recv", _WHY)
scatter = _unsupported("torch.distributed.scatter", _WHY)
gather = _unsupported("torch.distributed.gather", _WHY)
reduce_scatter = _unsupported("torch.distributed.reduce_scatter", _WHY)

__all__ = [*_lucid_all, "is_torchelastic_launched", "new_group", "reduce", "send", "recv", "scatter", "gather",
           "reduce_scatter"]
