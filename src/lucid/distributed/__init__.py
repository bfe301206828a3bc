"""``lucid.distributed``: PyTorch's collective API on MLX's own distributed engine (``mx.distributed``).

Processes are started by MLX's launcher, which tells each one its rank and how to reach the others::

    mlx.launch -n 2 --backend ring --python $(which python) train.py       # 2 processes on this machine
    mlx.launch --hostfile hosts.json --backend ring --python $(which python) train.py   # several machines

and each calls ``init_process_group()`` before anything else here. The backends are MLX's: ``"ring"`` (TCP or
Thunderbolt sockets), ``"mpi"``, ``"nccl"`` (CUDA), ``"jaccl"``, or ``"any"`` (the first that works; the default).
Without a launcher, ``init_process_group()`` gives a world of one process, so the same script runs alone;
naming a backend explicitly makes a missing launcher an error instead.

Collectives work in place on tensors and keep PyTorch's timing. With ``async_op=False`` (the default) a collective
is synchronous: it has run when the call returns, so a rank that all-reduces a metric and exits has taken part,
whether or not it ever reads the result. With ``async_op=True`` it is started at the call and runs while the
program goes on; the returned ``Work``'s ``wait()`` blocks until it is done. ``destroy_process_group()`` and the
interpreter's exit wait for collectives still running. Every rank must issue the same collectives in the same
order, as in PyTorch. Inside ``lucid.compile`` a collective is part of the compiled step and runs with it.
(DistributedDataParallel's own gradient reductions are not these calls: they stay lazy, so MLX overlaps them with
the rest of the backward, and the optimizer's step evaluates them.) Ops outside MLX's collectives are built from
them: ``broadcast`` is a sum in which every rank but ``src`` contributes zeros (exact, except that ``-0.0``
arrives as ``0.0``); ``AVG`` is the sum divided by the world size.
"""
from __future__ import annotations

import atexit
import enum
import os
import sys
from pathlib import Path

import mlx.core as mx

from .. import _threads
from .._tensor import Tensor, _wrap
from .._grad_mode import no_grad
from .._pending import _tracing
from ..utils.data import distributed as _data

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")
_BACKENDS = ("any", "ring", "mpi", "nccl", "jaccl")
_ALIASES = {"gloo": "any"}  # PyTorch's CPU backend: whatever MLX's launcher set up


class ReduceOp(enum.Enum):
    """The reductions ``all_reduce`` supports (PyTorch's values; MLX has no product or bitwise collectives)."""
    SUM = 0
    AVG = 1
    MIN = 3
    MAX = 4


class ProcessGroup:
    """The world: every process the launcher started. ``rank()`` and ``size()`` as in PyTorch; ``mlx`` is MLX's
    ``mx.distributed.Group``.

    :param group: MLX's ``mx.distributed.Group``.
    :param backend: the backend's name ("ring", "mpi", "nccl", "jaccl").
    """

    def __init__(self, group: mx.distributed.Group, backend: str):
        self.mlx = group
        self.backend = backend

    def rank(self) -> int:
        return self.mlx.rank()

    def size(self) -> int:
        return self.mlx.size()

    def __repr__(self):
        return f"ProcessGroup(backend={self.backend!r}, rank={self.rank()}, size={self.size()})"


class _World:
    group: ProcessGroup | None = None
    exit_hook = False  # _finish_collectives registered with atexit


class group:  # noqa: N801  (PyTorch's name: ``dist.group.WORLD``)
    """``group.WORLD``: the default process group once initialized (None before)."""
    WORLD: ProcessGroup | None = None


_NAMESPACE = group  # destroy_process_group's parameter is also called ``group``


class Work:
    """What a collective returns with ``async_op=True``, as PyTorch's ``Work``: the collective was started at the
    call; ``wait()`` blocks until it is done. ``is_completed()`` is True once ``wait()`` (or ``synchronize()``) has
    returned: MLX cannot tell whether a running computation has finished without waiting for it.

    :param tensors: the tensors the collective writes.
    :param arrays: their new MLX arrays, stored into the tensors by ``wait()``.
    """

    def __init__(self, tensors: list[Tensor], arrays: list[mx.array]):
        self._tensors = tensors
        self._arrays = arrays  # the collectives' results
        self._done = False
        self._exception: BaseException | None = None

    def wait(self, timeout=None) -> bool:
        arrays, self._arrays = self._arrays, []
        try:
            if arrays and not _tracing():  # (while tracing, the collective runs with the compiled step)
                _threads.evaluate(arrays)
        except RuntimeError as e:  # a peer lost: PyTorch's Work raises from wait() too
            self._exception = e
            raise
        finally:
            self._done = True
        return True

    def synchronize(self) -> None:
        self.wait()

    def is_completed(self) -> bool:
        return self._done

    def is_success(self) -> bool:
        return self._done and self._exception is None

    def exception(self) -> BaseException | None:
        return self._exception

    def result(self) -> list[Tensor]:
        return self._tensors

    def source_rank(self) -> int:
        raise RuntimeError("sourceRank() may only be called on recv or recvAnysource work objects, and lucid has "
                           "no point-to-point operations")


# ------------------------------------------------------------------------------------------ the process group
def is_available() -> bool:
    """True: MLX always has a distributed engine (a world of one process at least)."""
    return True


def is_initialized() -> bool:
    """Whether ``init_process_group`` has been called (and not undone by ``destroy_process_group``)."""
    return _World.group is not None


def init_process_group(backend: str | None = None, init_method: str | None = None, timeout=None,
                       world_size: int = -1, rank: int = -1, store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Join the processes started by ``mlx.launch``. ``backend``: ``"ring"``, ``"mpi"``, ``"nccl"``, ``"jaccl"``
    or ``None``/``"any"`` (PyTorch's ``"gloo"`` means ``"any"``). The launcher decides ranks: ``world_size`` and
    ``rank``, when given, must agree with it. ``init_method``, ``timeout``, ``store`` and the rest are accepted
    for PyTorch programs and have no effect (MLX's launcher does the rendezvous).

    :param backend: "ring", "mpi", "nccl", "jaccl", or None/"any"/"gloo" for what the launcher set up.
    :param init_method: accepted, no effect.
    :param timeout: accepted, no effect.
    :param world_size: if given, must equal the launcher's number of processes.
    :param rank: if given, must equal the launcher's rank for this process.
    :param store: accepted, no effect.
    :param group_name: accepted, no effect.
    :param pg_options: accepted, no effect.
    :param device_id: accepted, no effect (one device per process).

    Alone (not started by ``mlx.launch``), it makes a world of one process, so the same script runs either way.
    """
    if _World.group is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = "any" if backend is None else _ALIASES.get(str(backend).lower(), str(backend).lower())
    if name not in _BACKENDS:
        raise ValueError(f"Invalid backend: {backend!r}; MLX's backends are {', '.join(map(repr, _BACKENDS))}")
    try:
        if _launched_alone():  # `mlx.launch -n 1` hands MLX an empty hostfile, which its backends reject
            g = mx.distributed.init(strict=False, backend="mpi")
        else:
            g = mx.distributed.init(strict=backend is not None and name != "any", backend=name)
    except RuntimeError as e:
        raise RuntimeError(f"init_process_group(backend={backend!r}): MLX could not start it ({e}). Start the "
                           f"processes with `mlx.launch -n N --backend {name} --python $(which python) script.py`, "
                           f"or call init_process_group() without a backend to run as a single process.") from None
    for what, given, actual in (("world_size", world_size, g.size()), ("rank", rank, g.rank())):
        if given not in (-1, None) and given != actual:
            raise ValueError(f"init_process_group: {what}={given}, but mlx.launch started this process with "
                             f"{what} {actual}")
    _World.group = group.WORLD = ProcessGroup(g, name)
    if not _World.exit_hook:
        atexit.register(_finish_collectives)
        _World.exit_hook = True


def _launched_alone() -> bool:
    """True in the single process of ``mlx.launch -n 1`` (a rank, and a hostfile that names no peers)."""
    path = os.environ.get("MLX_HOSTFILE")
    if os.environ.get("MLX_RANK") != "0" or not path:
        return False
    try:
        return not Path(path).read_text().strip()
    except OSError:
        return False


def destroy_process_group(group=None) -> None:
    """Leave the process group (MLX keeps its connections; a later ``init_process_group`` joins them again).

    :param group: accepted for PyTorch's signature; the only group is the world (None).
    """
    if _World.group is None:
        raise AssertionError("Process group cannot be None")
    _threads.synchronize()  # collectives started with async_op=True and never waited for
    _World.group = _NAMESPACE.WORLD = None


def _finish_collectives() -> None:
    """At the interpreter's exit: let the collectives this rank started finish, so that the ranks still running
    them are not left without their peer."""
    if _World.group is None:
        return
    try:
        _threads.synchronize()
    except RuntimeError as e:  # a peer already gone: nothing left to finish
        print(f"lucid.distributed: at exit, a collective could not finish: {e}", file=sys.stderr)


def _world(g=None) -> ProcessGroup:
    if _World.group is None:
        raise ValueError(_NOT_INITIALIZED)
    if g is not None and g is not _World.group:
        raise ValueError("lucid.distributed has only the default process group (group=None or group.WORLD)")
    return _World.group


def get_rank(group=None) -> int:
    """This process's rank, in [0, world size).

    :param group: accepted for PyTorch's signature; the only group is the world (None).
    """
    return _world(group).rank()


def get_world_size(group=None) -> int:
    """The number of processes.

    :param group: accepted for PyTorch's signature; the only group is the world (None).
    """
    return _world(group).size()


def get_backend(group=None) -> str:
    """The backend's name ("ring", "mpi", "nccl", ...).

    :param group: accepted for PyTorch's signature; the only group is the world (None).
    """
    return _world(group).backend


# ------------------------------------------------------------------------------------------------ collectives
def _check_tensor(tensor, param: str = "tensor") -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{param}` of type lucid.Tensor but got "
                        f"{type(tensor).__name__} instead.")


def _write(tensor: Tensor, arr: mx.array) -> None:
    """Put ``arr`` into ``tensor`` in place (views of it see the change), outside autograd, as PyTorch's
    collectives do."""
    with no_grad():
        tensor.copy_(_wrap(arr))


def _done(tensors: list[Tensor], results: list[mx.array], async_op: bool):
    """Run the collectives whose ``results`` were written into ``tensors``: now (synchronous, PyTorch's default:
    this evaluation at the call is the collective's documented semantics, not a stray sync), or started in the
    background with a ``Work`` to wait on (``async_op=True``). While tracing (lucid.compile) they stay in the
    traced graph."""
    if _tracing():
        return Work(tensors, []) if async_op else None
    _threads.evaluate(results, wait=not async_op)
    return Work(tensors, results) if async_op else None


def all_sum(arr: mx.array, pg: ProcessGroup) -> mx.array:
    """The sum of ``arr`` over the ranks (lazy); booleans are summed as integers and come back as "any"."""
    if arr.dtype == mx.bool_:
        return mx.distributed.all_sum(arr.astype(mx.int32), group=pg.mlx) != 0
    return mx.distributed.all_sum(arr, group=pg.mlx)


def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` over all ranks, in place: every rank ends with the same result.

    :param tensor: the tensor to reduce, in place.
    :param op: ``ReduceOp.SUM`` (default), ``AVG``, ``MIN`` or ``MAX``.
    :param group: accepted for PyTorch's signature; the only group is the world (None).
    :param async_op: return a ``Work`` at once (the collective runs in the background) instead of None after it ran.
    """
    pg = _world(group)
    _check_tensor(tensor)
    if not isinstance(op, ReduceOp):
        raise ValueError(f"lucid.distributed.all_reduce: unsupported op {op!r}; use ReduceOp.SUM, AVG, MIN or MAX")
    arr = tensor._st.data
    if op is ReduceOp.SUM:
        out = all_sum(arr, pg)
    elif op is ReduceOp.AVG:
        total = all_sum(arr, pg)
        out = (total // pg.size() if mx.issubdtype(arr.dtype, mx.integer) else total / pg.size()).astype(arr.dtype)
    else:
        reduce = mx.distributed.all_max if op is ReduceOp.MAX else mx.distributed.all_min
        out = reduce(arr.astype(mx.int32), group=pg.mlx).astype(mx.bool_) if arr.dtype == mx.bool_ \
            else reduce(arr, group=pg.mlx)
    _write(tensor, out)
    return _done([tensor], [out], async_op)


def broadcast(tensor: Tensor, src: int | None = None, group=None, async_op: bool = False, group_src=None):
    """Copy rank ``src``'s ``tensor`` into every rank's ``tensor`` (same shape and dtype on all ranks).

    :param tensor: the tensor sent by ``src`` and overwritten on the other ranks.
    :param src: the rank whose tensor is sent.
    :param group: accepted for PyTorch's signature; the only group is the world (None).
    :param async_op: return a ``Work`` at once (the collective runs in the background) instead of None after it ran.
    :param group_src: the same as ``src`` (PyTorch's name within a group).
    """
    pg = _world(group)
    _check_tensor(tensor)
    src = group_src if src is None else src
    if not isinstance(src, int) or not 0 <= src < pg.size():
        raise ValueError(f"Invalid src rank {src!r}: the ranks are 0..{pg.size() - 1}")
    out = broadcast_array(tensor._st.data, src, pg)
    _write(tensor, out)
    return _done([tensor], [out], async_op)


def broadcast_array(arr: mx.array, src: int, pg: ProcessGroup) -> mx.array:
    """Rank ``src``'s ``arr`` on every rank (lazy): a sum to which the other ranks contribute zeros."""
    if pg.size() == 1:
        return arr
    return all_sum(arr if pg.rank() == src else mx.zeros_like(arr), pg)


def all_gather(tensor_list: list, tensor: Tensor, group=None, async_op: bool = False):
    """Fill ``tensor_list[i]`` with rank i's ``tensor``; the list holds world-size tensors of its shape and dtype.

    :param tensor_list: world-size tensors, overwritten with each rank's ``tensor``.
    :param tensor: this rank's contribution.
    :param group: accepted for PyTorch's signature; the only group is the world (None).
    :param async_op: return a ``Work`` at once (the collective runs in the background) instead of None after it ran.
    """
    pg = _world(group)
    _check_tensor(tensor)
    n = pg.size()
    if not isinstance(tensor_list, list) or len(tensor_list) != n:
        got = len(tensor_list) if isinstance(tensor_list, (list, tuple)) else type(tensor_list).__name__
        raise RuntimeError(f"all_gather: tensor_list must be a list of {n} tensors (the world size), got {got}")
    for i, t in enumerate(tensor_list):
        _check_tensor(t, f"tensor_list[{i}]")
        if tuple(t.shape) != tuple(tensor.shape) or t.dtype != tensor.dtype:
            raise RuntimeError(f"all_gather: tensor_list[{i}] has shape {list(t.shape)} and dtype {t.dtype}, but "
                               f"tensor has shape {list(tensor.shape)} and dtype {tensor.dtype}")
    arr = tensor._st.data
    wide = arr.astype(mx.int32) if arr.dtype == mx.bool_ else arr
    gathered = mx.distributed.all_gather(wide.reshape(1, *arr.shape), group=pg.mlx)
    for i, t in enumerate(tensor_list):
        _write(t, gathered[i].astype(arr.dtype))
    return _done(list(tensor_list), [gathered], async_op)


def barrier(group=None, async_op: bool = False, device_ids=None, timeout=None):
    """Wait until every rank has reached this point.

    :param group: accepted for PyTorch's signature; the only group is the world (None).
    :param async_op: return a ``Work`` at once (the collective runs in the background) instead of None after it ran.
    :param device_ids: accepted, no effect.
    :param timeout: accepted, no effect.
    """
    pg = _world(group)
    return _done([], [mx.distributed.all_sum(mx.array(1.0), group=pg.mlx)], async_op)


def _sampler_world() -> tuple[int, int]:
    """(world size, rank) for DistributedSampler's defaults."""
    pg = _world()
    return pg.size(), pg.rank()


_data.register_world(_sampler_world)


def sync_batch_norm_collective(group):
    """For nn.SyncBatchNorm (lucid/__init__ hands it over): None before init_process_group, else (world size, the
    sum of an array over the ranks)."""
    if _World.group is None:
        return None
    pg = _world(group)
    return pg.size(), lambda arr: all_sum(arr, pg)


__all__ = ["ProcessGroup", "ReduceOp", "Work", "all_gather", "all_reduce", "barrier", "broadcast",
           "destroy_process_group", "get_backend", "get_rank", "get_world_size", "group", "init_process_group",
           "is_available", "is_initialized"]
