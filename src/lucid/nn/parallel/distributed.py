"""``DistributedDataParallel``: the same model on every rank, each on its own share of the batch, with gradients
averaged across ranks during ``backward()`` so every rank takes the same optimizer step.

How the averaging works. At wrap time rank 0's parameters and buffers are broadcast, so all replicas start equal.
The parameters that require grad are grouped into buckets (reverse registration order, which is roughly the order
backward produces their gradients; the first bucket small, the rest up to ``bucket_cap_mb``; one dtype per
bucket). Each parameter has a post-accumulate-grad hook; when the last gradient of a bucket has been accumulated,
the bucket is flattened into one array, summed across ranks with ``mx.distributed.all_sum``, divided by the world
size and written back into the ``.grad`` tensors in place. MLX is lazy, so "issuing" a bucket adds the
reduction to the graph: it depends only on that bucket's gradients, and MLX may run it while the rest of the
backward is still being computed. Inside ``lucid.compile`` the hooks run while tracing and the reductions become
part of the compiled graph (MLX compiles its collectives).

``no_sync()`` turns the hooks off: gradients accumulate locally, and the first backward after the block averages
the whole accumulated ``.grad``, as PyTorch does.
"""
from __future__ import annotations

import contextlib

import mlx.core as mx

from ... import distributed as dist
from ..._tensor import Tensor, _wrap, after_write
from ... import _grad_mode as gm
from ..modules.module import Module

_FIRST_BUCKET_BYTES = 1 << 20  # PyTorch's: a small first bucket starts communication early in the backward

_UNUSED = ("Expected to have finished reduction in the prior iteration before starting a new one. This error "
           "indicates that your module has parameters that were not used in producing loss. You can enable unused "
           "parameter detection by passing the keyword argument `find_unused_parameters=True` to "
           "`lucid.nn.parallel.DistributedDataParallel`, and by making sure all `forward` function outputs "
           "participate in calculating loss. Parameters that did not receive a gradient: {}")


class _Bucket:
    """Parameters whose gradients are reduced together, and how many of them are ready in this backward."""

    __slots__ = ("params", "ready", "nbytes")

    def __init__(self):
        self.params: list[Tensor] = []
        self.ready: set[int] = set()
        self.nbytes = 0


class DistributedDataParallel(Module):
    """Wrap ``module`` for data-parallel training on the process group from ``lucid.distributed``.

    ``forward`` is the module's; ``state_dict`` keys get the ``module.`` prefix (save ``ddp.module.state_dict()``
    for a checkpoint that loads without the wrapper). ``device_ids``, ``output_device``, ``dim`` and
    ``gradient_as_bucket_view`` are accepted for PyTorch programs: MLX has one device per process.
    ``find_unused_parameters=True`` lets a forward leave parameters out of the loss (found by walking the
    output's graph; their gradient counts as zero on this rank); without it such a parameter is an error at the
    next forward, as in PyTorch.

    :param module: the model; rank 0's parameters and buffers are broadcast to the others when it is wrapped.
    :param device_ids: accepted, no effect (one device per process).
    :param output_device: accepted, no effect.
    :param dim: accepted, no effect (each rank gets its own batch).
    :param broadcast_buffers: broadcast rank 0's buffers (BatchNorm statistics) at each forward.
    :param init_sync: broadcast rank 0's state when wrapping (False: trust that every rank starts equal).
    :param process_group: accepted for PyTorch's signature; the world.
    :param bucket_cap_mb: the size of the gradient buckets all-reduced as they become ready (PyTorch's 25 MB default).
    :param find_unused_parameters: allow forwards that leave parameters out of the loss.
    :param check_reduction: accepted, no effect (deprecated in PyTorch).
    :param gradient_as_bucket_view: accepted, no effect.
    :param static_graph: accepted, no effect.
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, init_sync: bool = True, process_group=None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False, static_graph: bool = False):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel expects an nn.Module, got {type(module).__name__}")
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self.module = module
        self.process_group = dist._world(process_group)
        self.world_size = self.process_group.size()
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * (1 << 20))
        self._params = [p for p in module.parameters() if p.requires_grad]
        self._buckets = _make_buckets(self._params, self.bucket_bytes_cap)
        self._bucket_of = {id(p): b for b in self._buckets for p in b.params}
        if init_sync:
            self._broadcast([*module.parameters(), *module.buffers()])
        self._hooks = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in self._params]

    # ------------------------------------------------------------------------------------------ communication
    def _broadcast(self, tensors: list[Tensor]) -> None:
        """Rank 0's values of ``tensors`` into every rank's, in place, in one reduction per dtype."""
        if self.world_size == 1 or not tensors:
            return
        for dtype in dict.fromkeys(t.dtype for t in tensors):
            same = [t for t in tensors if t.dtype == dtype]
            flat = dist.broadcast_array(_flatten([t._st.data for t in same]), 0, self.process_group)
            for t, arr in zip(same, _unflatten(flat, same)):
                _write(t, arr)

    def _grad_ready(self, param: Tensor) -> None:
        """Post-accumulate-grad hook: when ``param`` completes its bucket, average the bucket across ranks."""
        if not self.require_backward_grad_sync:
            return
        bucket = self._bucket_of[id(param)]
        bucket.ready.add(id(param))
        if len(bucket.ready) == len(bucket.params):
            self._reduce(bucket)

    def _reduce(self, bucket: _Bucket) -> None:
        bucket.ready.clear()
        if self.world_size == 1:
            return
        arrays = [mx.zeros_like(p._st.data) if p._grad is None else p._grad._st.data for p in bucket.params]
        flat = mx.distributed.all_sum(_flatten(arrays), group=self.process_group.mlx) / self.world_size
        for p, arr in zip(bucket.params, _unflatten(flat.astype(arrays[0].dtype), bucket.params)):
            if p._grad is None:  # unused here (find_unused_parameters): the other ranks' gradient arrives
                p._grad = _wrap(arr)
            else:
                _write(p._grad, arr)

    # ---------------------------------------------------------------------------------------------- forward
    def forward(self, *inputs, **kwargs):
        syncing = gm.is_grad_enabled() and self.require_backward_grad_sync
        if syncing:
            pending = [b for b in self._buckets if b.ready]
            if pending:
                missing = [n for n, p in self.module.named_parameters()
                           if id(p) in self._bucket_of and self._bucket_of[id(p)].ready
                           and id(p) not in self._bucket_of[id(p)].ready]
                for b in pending:
                    b.ready.clear()
                raise RuntimeError(_UNUSED.format(", ".join(missing)))
        if self.broadcast_buffers:
            self._broadcast(list(self.module.buffers()))
        out = self.module(*inputs, **kwargs)
        if syncing and self.find_unused_parameters:
            used = _reachable_leaves(out)
            for p in self._params:
                if id(p) not in used:
                    self._grad_ready(p)
        return out

    @contextlib.contextmanager
    def no_sync(self):
        """Inside the block, backward accumulates gradients locally without communication; the first backward
        after it averages everything accumulated."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def bytes_per_sync(self) -> int:
        """Bytes of gradient each rank sends into the all-reduce of one synchronised backward."""
        return sum(p._st.data.nbytes for p in self._params)


def _make_buckets(params: list[Tensor], cap: int) -> list[_Bucket]:
    buckets: list[_Bucket] = []
    open_by_dtype: dict = {}
    for p in reversed(params):
        size = p._st.data.nbytes
        b = open_by_dtype.get(p.dtype)
        if b is not None and b.nbytes + size > (_FIRST_BUCKET_BYTES if b is buckets[0] else cap):
            b = None  # full: a parameter larger than the cap gets a bucket of its own
        if b is None:
            b = open_by_dtype[p.dtype] = _Bucket()
            buckets.append(b)
        b.params.append(p)
        b.nbytes += size
    return buckets


def _flatten(arrays: list[mx.array]) -> mx.array:
    return arrays[0].reshape(-1) if len(arrays) == 1 else mx.concatenate([a.reshape(-1) for a in arrays])


def _unflatten(flat: mx.array, like: list[Tensor]) -> list[mx.array]:
    out, start = [], 0
    for t in like:
        shape = t._st.data.shape
        n = t._st.data.size
        out.append(flat[start:start + n].reshape(shape))
        start += n
    return out


def _write(t: Tensor, arr: mx.array) -> None:
    """``t``'s value replaced in place, outside autograd (its version moves on; its views follow)."""
    st = t._st
    st.data = arr
    after_write(st, True)


def _reachable_leaves(out) -> set[int]:
    """ids of the leaf tensors whose gradients the tensors in ``out`` (nested lists, tuples, dicts) depend on."""
    stack, seen, leaves = [], set(), set()
    todo = [out]
    while todo:
        o = todo.pop()
        if isinstance(o, Tensor):
            if o.grad_fn is not None:
                stack.append(o.grad_fn)
        elif isinstance(o, (list, tuple)):
            todo.extend(o)
        elif isinstance(o, dict):
            todo.extend(o.values())
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.add(id(variable))
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return leaves
