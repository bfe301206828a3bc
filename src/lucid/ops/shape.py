"""Shape ops: reshape/view, flatten/unflatten, squeeze/unsqueeze, transpose/permute/t/movedim, expand/broadcast_to,
repeat/tile, flip, roll, clone/contiguous, narrow; cat/stack/hstack/vstack, split/chunk/unbind; and the basic
indexing ops (select, slice: ``x[0]``, ``x[1:3]``) that ``index.py`` builds ``x[key]`` from.

Views: as in PyTorch, the outputs of view/reshape/flatten/squeeze/unsqueeze/transpose/permute/t/narrow/split/
chunk/unbind and of basic indexing are views of their input: writes to them write through, and later writes to the
input show in them. MLX arrays are immutable, so a view is its own tensor that remembers how it was taken and how to
write a new value of itself back into its base (``_set_view_of``: both with lucid ops, so that writes are recorded
and differentiable); lucid._views describes the model.
"""
from __future__ import annotations

# lucid's namespace: PyTorch's functions (view, repeat, expand_as, contiguous are Tensor methods only, as there)
__all__ = ["reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "transpose", "swapaxes", "swapdims", "permute",
           "t", "movedim", "moveaxis", "expand", "broadcast_to", "broadcast_tensors", "tile", "flip", "fliplr",
           "flipud", "roll", "clone", "narrow", "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack",
           "atleast_1d", "atleast_2d", "atleast_3d", "split", "chunk", "unbind"]

import math

import mlx.core as mx

from .. import _cpu_route, _meta
from .._dtype import broadcast_shapes, check_dims, check_new_shape
from .._tensor import Tensor, _wrap
from .. import _grad_mode as gm
from ..autograd import engine as _engine
from ..autograd.graph import Node, _short, edge_of
from ._core import SAVES_INDEX, attach, declare, defop

_FULL = slice(None)
_ALL = (Ellipsis,)  # the basic key that takes (or writes) the whole tensor


# ---------------------------------------------------------------------------------------------------- helpers
def _size_arg(shape) -> tuple:
    """``f(2, 3)`` and ``f((2, 3))`` both mean the shape (2, 3)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(map(int, shape))


def wrap_dim(dim: int, ndim: int) -> int:
    """PyTorch's dim argument: negative counts from the end; a 0-d tensor takes 0 and -1."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def zeros_for(shape, g: Tensor) -> Tensor:
    """Zeros of ``shape`` in g's dtype: the canvas a gradient of a part is written into."""
    return _wrap(mx.zeros(tuple(shape), g.dtype))


def _require_tensor(fn_name: str, tensors, what: str = "tensors") -> list:
    if isinstance(tensors, Tensor):
        raise TypeError(f"{fn_name}(): argument '{what}' must be tuple of Tensors, not Tensor")
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return tensors


# ---------------------------------------------------------------------------------------------------- basic indexing
# ``x[key]`` for a basic key (ints, 0-d index arrays, slices with positive steps, None, Ellipsis) is one MLX call;
# its gradient writes g into zeros at the same place. The node is named after the last step PyTorch would take.
def _take(a, key):
    return a[key]


def _put(base, v, key):
    out = mx.array(base)  # a new array object: the write below replaces its value only, base stays as it was
    if gm.state.mlx_transform_depth:  # under mx.vmap MLX writes a value that is not batched into the first sample
        old = base[key]  # only: a select on the (batched) old values makes it batched, with v's values
        v = mx.where(old == old, v, v)
    out[key] = v
    return out


def _slices_vjp(g, ans, x, key):
    return put_slices(zeros_for(x.shape, g), g, key)


_SLICES = {n: defop("slice", _take, vjp=_slices_vjp, save=None, node=n)
           for n in ("SelectBackward0", "SliceBackward0", "UnsqueezeBackward0", "AliasBackward0")}

# x with x[key] replaced by v (PyTorch's node for a write into a slice of a tensor is CopySlices)
put_slices = defop("copy_slices", _put, save=SAVES_INDEX, node="CopySlices",
                   vjp=(lambda g, ans, base, v, key: put_slices(g, 0, key),
                        lambda g, ans, base, v, key: take_slices(g, key)))


def take_slices(x, key: tuple) -> Tensor:
    """``x[key]`` for a normalized basic key (full slices written as ``slice(None)``)."""
    node = "AliasBackward0"
    for k in reversed(key):
        if k is None:
            node = "UnsqueezeBackward0"
        elif isinstance(k, slice):
            if k == _FULL:
                continue
            node = "SliceBackward0"
        elif k is Ellipsis:
            continue
        else:
            node = "SelectBackward0"
        break
    return _SLICES[node](x, key)


def view_slices(x, key: tuple) -> Tensor:
    """``x[key]`` as a view: in-place writes to it write through into x."""
    def take(b):
        return take_slices(b, key)

    return take(x)._set_view_of(x, take, lambda b, v: put_slices(b, v, key))


@declare(method=True)
def narrow(input, dim: int, start: int, length: int) -> Tensor:
    """The view ``input[..., start:start+length, ...]`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if isinstance(start, Tensor):
        # the view's slice needs the number: read it (PyTorch reads it too), never hand MLX a tensor as a bound
        if start.ndim != 0 or not mx.issubdtype(start.dtype, mx.integer):
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = start.item()
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start = start % size if start < 0 else start
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return view_slices(input, (_FULL,) * d + (slice(start, start + length),))


# ---------------------------------------------------------------------------------------------------- reshaping
# reshape, view, flatten, unflatten, squeeze and unsqueeze all keep the elements in order: one forward (MLX
# reshape), one gradient (reshape back); only PyTorch's node names differ.
def _reshape_vjp(g, ans, x, shape):
    return _view(g, tuple(x.shape))


def _reshape_op(node: str):
    return defop("reshape", lambda a, shape: mx.reshape(a, shape), vjp=_reshape_vjp, save=None, node=node,
                 raw=True)


_view = _reshape_op("ViewBackward0")
_squeeze_all = _reshape_op("SqueezeBackward0")
_squeeze_dim = _reshape_op("SqueezeBackward1")
_squeeze_dims = _reshape_op("SqueezeBackward2")
_unsqueeze = _reshape_op("UnsqueezeBackward0")


def _reshape_back(base, v):
    return _view(v, tuple(base.shape))


def _reshaped(op, input, shape: tuple) -> Tensor:
    def fn(b):
        return op(b, shape)

    return fn(input)._set_view_of(input, fn, _reshape_back)


def _infer_shape(shape: tuple, numel: int) -> tuple:
    """Resolve the one -1 of a requested shape, with PyTorch's errors."""
    if -1 not in shape and math.prod(shape) == numel and min(shape, default=0) >= 0:
        return shape
    free = [i for i, s in enumerate(shape) if s == -1]
    if len(free) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    known = math.prod(s for s in shape if s != -1)
    if free:
        if known == 0:
            raise RuntimeError(f"cannot reshape tensor of {numel} elements into shape {list(shape)} because the "
                               "unspecified dimension size -1 can be any value and is ambiguous")
        if numel % known == 0:
            return shape[:free[0]] + (numel // known,) + shape[free[0] + 1:]
    elif known == numel:
        return shape
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


@declare(method=("reshape", "view"))
def reshape(input, *shape) -> Tensor:
    """The same elements in a new shape (one dim may be -1): ``x.reshape(2, -1)`` or ``x.reshape((2, -1))``."""
    return _reshaped(_view, input, _infer_shape(_size_arg(shape), input.numel()))


@declare(method=True)
def view_as(input, other) -> Tensor:
    """``input`` viewed with ``other``'s shape."""
    return reshape(input, other.shape)


@declare(method=True)
def flatten(input, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dims ``start_dim..end_dim`` into one (a 0-d tensor becomes 1-d)."""
    if input.ndim == 0:
        return _reshaped(_view, input, (1,))
    s, e = wrap_dim(start_dim, input.ndim), wrap_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = input.shape
    return _reshaped(_view, input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


@declare(method=True)
def unflatten(input, dim: int, sizes) -> Tensor:
    """Split dim ``dim`` into ``sizes`` (one may be -1)."""
    d = wrap_dim(dim, input.ndim)
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = input.shape[d]
    try:
        sizes = _infer_shape(sizes, n)
    except RuntimeError:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({n}) in the input tensor") from None
    shape = input.shape
    return _reshaped(_view, input, shape[:d] + sizes + shape[d + 1:])


@declare(method=True)
def squeeze(input, dim=None) -> Tensor:
    """Remove size-1 dims: all of them, or those among ``dim`` (an int or a tuple)."""
    shape = input.shape
    if dim is None:
        return _reshaped(_squeeze_all, input, tuple(s for s in shape if s != 1))
    op = _squeeze_dim if isinstance(dim, int) else _squeeze_dims
    dims = {wrap_dim(d, input.ndim) for d in ((dim,) if isinstance(dim, int) else dim)}
    return _reshaped(op, input, tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1)))


@declare(method=True)
def unsqueeze(input, dim: int) -> Tensor:
    """Insert a size-1 dim at ``dim`` (in ``[-ndim-1, ndim]``)."""
    d = wrap_dim(dim, input.ndim + 1)
    shape = input.shape
    return _reshaped(_unsqueeze, input, shape[:d] + (1,) + shape[d:])


def atleast_1d(*tensors):
    """Each tensor viewed with at least 1 dimension (a 0-d tensor becomes shape (1,))."""
    return _atleast_nd(tensors, 1)


def atleast_2d(*tensors):
    """Each tensor viewed with at least 2 dimensions (leading dimensions of size 1 added)."""
    return _atleast_nd(tensors, 2)


def atleast_3d(*tensors):
    """Each tensor viewed with at least 3 dimensions (as numpy's atleast_3d)."""
    return _atleast_nd(tensors, 3)


def _atleast_nd(tensors: tuple, n: int):
    """One tensor gives a tensor; several (or one sequence of them) give a tuple, as in PyTorch."""
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return _atleast(tensors[0], n)
    if len(tensors) == 1:
        tensors = tensors[0]
    return tuple(_atleast(x, n) for x in tensors)


def _atleast(x, n: int) -> Tensor:
    """PyTorch's atleast_nd: 0-d -> (1,..), (k,) -> (1, k[, 1]), (m, k) -> (m, k, 1)."""
    s = tuple(x.shape)
    if len(s) >= n:
        return x
    return reshape(x, {0: (1,) * n, 1: (1,) + s + (1,) * (n - 2), 2: s + (1,)}[len(s)])


# ---------------------------------------------------------------------------------------------------- transposes
# (the VJPs call the declared ops by name, so they run on MLX arrays as well: raw, engine.py)
_transpose = defop("transpose", lambda a, d0, d1: mx.swapaxes(a, d0, d1), save=None, raw=True,
                   vjp=lambda g, ans, x, d0, d1: _transpose(g, d0, d1))
_permute = defop("permute", lambda a, dims: mx.transpose(a, dims), save=None, raw=True,
                 vjp=lambda g, ans, x, dims: _permute(g, _inverse(dims)))
_t = defop("t", lambda a: mx.transpose(a) if a.ndim == 2 else a, vjp=lambda g, ans, x: _t(g), save=None, raw=True)


def _inverse(perm: tuple) -> tuple:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _t_back(base, v):
    return _t(v)


@declare(method=("transpose", "swapaxes", "swapdims"))
def transpose(input, dim0: int, dim1: int) -> Tensor:
    """Swap two dims (a view)."""
    d0, d1 = wrap_dim(dim0, input.ndim), wrap_dim(dim1, input.ndim)
    if input.ndim == 0:
        return _reshaped(_view, input, ())
    def fn(b):
        return _transpose(b, d0, d1)

    return fn(input)._set_view_of(input, fn, lambda b, v: fn(v))


swapaxes = swapdims = transpose


@declare(method=True)
def permute(input, *dims) -> Tensor:
    """Reorder the dims: ``x.permute(2, 0, 1)``, ``lucid.permute(x, (2, 0, 1))`` (a view)."""
    dims = _size_arg(dims)
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not equal to "
                           f"len(dims) = {len(dims)}")
    dims = tuple(wrap_dim(d, input.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    inv = _inverse(dims)
    return _permute(input, dims)._set_view_of(input, lambda b: _permute(b, dims), lambda b, v: _permute(v, inv))


@declare(method=True)
def t(input) -> Tensor:
    """Transpose a 2-d tensor; 0-d and 1-d tensors come back as they are (a view)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return _t(input)._set_view_of(input, _t, _t_back)


@declare(method=("movedim", "moveaxis"))
def movedim(input, source, destination) -> Tensor:
    """Move dims ``source`` to positions ``destination`` (ints or sequences); the others keep their order."""
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    n = input.ndim
    src = [wrap_dim(d, n) for d in src]
    dst = [wrap_dim(d, n) for d in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise RuntimeError("movedim: repeated dim in `source` or `destination`")
    perm = [-1] * n
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(i for i in range(n) if i not in src)
    perm = [p if p != -1 else next(rest) for p in perm]
    return permute(input, perm) if n else _reshaped(_view, input, ())


moveaxis = movedim

attach("T", property(lambda self: permute(self, tuple(range(self.ndim - 1, -1, -1))) if self.ndim else self))


def _mT(self) -> Tensor:
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {self.ndim}-D "
                           "tensor.")
    return transpose(self, -2, -1)


attach("mT", property(_mT))


# ---------------------------------------------------------------------------------------------------- broadcasting
def _expand_fwd(a, shape):
    return mx.broadcast_to(a, shape)


# the engine sums a gradient back over broadcast dims (engine._conform), so expand's gradient is g itself
_expand = defop("expand", _expand_fwd, vjp=lambda g, ans, x, shape: g, save=None)


def _expanded_shape(shape: tuple, sizes: tuple) -> tuple:
    """The target of ``expand(sizes)`` (-1 keeps a dim), with PyTorch's errors."""
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand(lucid.Tensor{{{list(shape)}}}, size={list(sizes)}): the number of sizes provided "
                           f"({len(sizes)}) must be greater or equal to the number of dimensions in the tensor "
                           f"({len(shape)})")
    lead = len(sizes) - len(shape)
    out = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing "
                                   f"dimension {i}")
            out.append(s)
            continue
        have = shape[i - lead]
        if s == -1:
            s = have
        elif have != 1 and s != have:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(shape)}")
        out.append(s)
    return tuple(out)


@declare(method=True)
def expand(input, *sizes) -> Tensor:
    """Broadcast to ``sizes`` (-1 keeps a dim); the gradient is summed back. A broadcast view allocates nothing,
    so only MLX's limit on one dimension is checked, not memory."""
    have = tuple(input.shape)
    shape = _expanded_shape(have, _size_arg(sizes))
    check_dims(shape)
    out = _expand(input, shape)
    have = (1,) * (len(shape) - len(have)) + have
    ex = input._extra
    if 0 not in shape and ((ex is not None and ex.overlap) or any(h == 1 < n for h, n in zip(have, shape))):
        out._ex().overlap = True  # PyTorch's result repeats elements in memory: in-place writes into it are refused
    return out


@declare(method=True)
def expand_as(input, other) -> Tensor:
    """``input`` broadcast to ``other``'s shape."""
    return expand(input, other.shape)


@declare(method=True)
def broadcast_to(input, size) -> Tensor:
    """``input`` broadcast to ``size`` (as ``input.expand(size)``; -1 keeps a dimension)."""
    return expand(input, size)


def broadcast_tensors(*tensors) -> tuple:
    """Expand all tensors to their common broadcast shape."""
    shape = broadcast_shapes(*(tuple(x.shape) for x in tensors))
    return tuple(x if tuple(x.shape) == shape else expand(x, shape) for x in tensors)


def _repeat_vjp(g, ans, x, reps):
    if not reps:
        return g
    shape = (1,) * (len(reps) - x.ndim) + tuple(x.shape)
    # dim i of g holds reps[i] copies of x's dim i one after another: split it into (copy, index) and sum the copies
    g = _view(g, tuple(v for r, s in zip(reps, shape) for v in (r, s)))
    return _view(g.sum(dim=tuple(range(0, 2 * len(reps), 2))), tuple(x.shape))


_repeat = defop("repeat", lambda a, reps: mx.tile(a, reps), vjp=_repeat_vjp, save=None)


@declare(method=True)
def repeat(input, *sizes) -> Tensor:
    """Tile ``input`` ``sizes[i]`` times along each dim (PyTorch's repeat: ``np.tile``, not ``np.repeat``)."""
    sizes = _size_arg(sizes)
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: {list(sizes)}")
    shape = (1,) * (len(sizes) - input.ndim) + tuple(input.shape)
    check_new_shape(tuple(n * r for n, r in zip(shape, sizes)), input.dtype)  # MLX would crash on a huge request
    return _repeat(input, sizes)


@declare(method=True)
def tile(input, *dims) -> Tensor:
    """``repeat`` where missing leading ``dims`` count as 1."""
    dims = _size_arg(dims)
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


# ---------------------------------------------------------------------------------------------------- reordering
def _flip_fwd(a, dims):
    return a[tuple(slice(None, None, -1) if i in dims else _FULL for i in range(a.ndim))]


_flip = defop("flip", _flip_fwd, vjp=lambda g, ans, x, dims: _flip(g, dims), save=None)


@declare(method=True)
def flip(input, *dims) -> Tensor:
    """Reverse the order of elements along ``dims``: ``lucid.flip(x, (0, 1))``, ``x.flip(0)``."""
    dims = tuple(wrap_dim(d, input.ndim) for d in _size_arg(dims))
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dims has duplicates, original flip dims size={len(dims)}, but unique flip dims "
                           f"size={len(set(dims))}")
    return _flip(input, frozenset(dims))


@declare(method=True)
def fliplr(input) -> Tensor:
    """``input`` with its second dimension reversed (left/right)."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, 1)


@declare(method=True)
def flipud(input) -> Tensor:
    """``input`` with its first dimension reversed (up/down)."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, 0)


def _roll_fwd(a, shifts, dims):
    return mx.roll(a, shifts, dims) if dims is not None else mx.roll(a, shifts)


_roll = defop("roll", _roll_fwd, save=None,
              vjp=lambda g, ans, x, shifts, dims: _roll(g, tuple(-s for s in shifts) if dims is not None else -shifts,
                                                        dims))


@declare(method=True)
def roll(input, shifts, dims=None) -> Tensor:
    """Shift elements cyclically by ``shifts`` along ``dims`` (over the flattened tensor when dims is None)."""
    if dims is None:
        if not isinstance(shifts, int):
            if len(shifts) != 1:
                raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
            shifts = shifts[0]
        return _roll(input, int(shifts), None)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    return _roll(input, shifts, tuple(wrap_dim(d, input.ndim) for d in dims))


# MLX arrays are immutable, so a clone can share the array: it gets its own storage box, which is what in-place
# writes replace
_clone = defop("clone", lambda a: a, vjp=lambda g, ans, x: g, save=None)


@declare(method=True)
def clone(input, *, memory_format=None) -> Tensor:
    """A copy that is no view of ``input`` (gradients flow back unchanged)."""
    return _clone(input)


@declare(method=True)
def contiguous(input, memory_format=None) -> Tensor:
    """MLX handles layout itself: the tensor itself, as PyTorch returns for contiguous tensors; a copy of one whose
    elements share memory in PyTorch (an expanded one), as PyTorch copies it, so it can be written in place."""
    ex = input._extra
    return _clone(input) if ex is not None and ex.overlap else input


# ---------------------------------------------------------------------------------------------------- joining
_cat = defop("cat", lambda *arrays, dim: mx.concatenate(arrays, axis=dim), save=None,
             vjp_all=lambda g, ans, *xs, dim: split(g, [x.shape[dim] for x in xs], dim))
_stack = defop("stack", lambda *arrays, dim: mx.stack(arrays, axis=dim), save=None,
               vjp_all=lambda g, ans, *xs, dim: unbind(g, dim))


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dim; all other dims must match."""
    tensors = _require_tensor("cat", tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    first = tensors[0].shape
    for i, x in enumerate(tensors):
        if x.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    d = wrap_dim(dim, len(first))
    for i, x in enumerate(tensors):
        s = x.shape
        if len(s) != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(first)} and {len(s)}")
        for j, (a, b) in enumerate(zip(first, s)):
            if j != d and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {a} but got "
                                   f"size {b} for tensor number {i} in the list.")
    return _cat(*tensors, dim=d)


concat = concatenate = cat


def stack(tensors, dim: int = 0) -> Tensor:
    """Join equal-shaped tensors along a new dim."""
    tensors = _require_tensor("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0].shape
    for i, x in enumerate(tensors):
        if x.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 and "
                               f"{list(x.shape)} at entry {i}")
    return _stack(*tensors, dim=wrap_dim(dim, len(first) + 1))


def hstack(tensors) -> Tensor:
    """Tensors concatenated along the second dimension (the first for 1-d tensors)."""
    tensors = [_atleast(x, 1) for x in _require_tensor("hstack", tensors)]
    return cat(tensors, 0 if tensors and tensors[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """Tensors concatenated along the first dimension (after ``atleast_2d``)."""
    return cat([_atleast(x, 2) for x in _require_tensor("vstack", tensors)], 0)


def dstack(tensors) -> Tensor:
    """Tensors stacked along the third dimension (after ``atleast_3d``)."""
    return cat([_atleast(x, 3) for x in _require_tensor("dstack", tensors)], 2)


# ---------------------------------------------------------------------------------------------------- splitting
class _PiecesBackward(Node):
    """The one backward node of all outputs of split/chunk/unbind (as in PyTorch): the pieces' gradients are joined
    again with cat (stack for unbind), zeros standing in for pieces that got none. One join is linear in the input's
    size, where a node per piece would pad every piece's gradient to the full size."""

    __slots__ = ("next", "num_outputs", "metas", "dim")
    stacks = False

    def __init__(self, x: Tensor, arrays: list, dim: int):
        self._hooks = None
        self.next = [edge_of(x)]
        self.num_outputs = len(arrays)
        self.metas = [(a.shape, a.dtype) for a in arrays]
        self.dim = dim

    def output_meta(self, nr):
        return self.metas[nr]

    def rebind_output(self, st) -> None:
        pass  # saves no outputs

    def release(self) -> None:
        pass  # saves only shapes

    def apply(self, grads: list, needed=None) -> list:
        gs = [g if g is not None else _wrap(mx.zeros(shape, dtype)) for g, (shape, dtype) in zip(grads, self.metas)]
        return [stack(gs, self.dim) if self.stacks else cat(gs, self.dim)]


SplitBackward0 = type("SplitBackward0", (_PiecesBackward,), {"__slots__": ()})
SplitWithSizesBackward0 = type("SplitWithSizesBackward0", (_PiecesBackward,), {"__slots__": ()})
UnbindBackward0 = type("UnbindBackward0", (_PiecesBackward,), {"__slots__": (), "stacks": True})


@_cpu_route.float64_args
def _pieces(x: Tensor, keys: list, dim: int, node_class) -> tuple:
    """The views ``x[key]`` for each key, sharing one backward node."""
    a = x._storage.data
    arrays = [a[k] for k in keys]
    if _meta.used[0] and _meta.is_meta(a):  # pieces of a meta tensor are meta
        arrays = [_meta.like(p) for p in arrays]
    node = node_class(x, arrays, dim) if x._requires_grad and gm.state.grad else None
    out = []
    for i, (arr, key) in enumerate(zip(arrays, keys)):
        p = _wrap(arr, node, node is not None, i)
        if gm.state.inference:
            p._ex().inference = True
        out.append(p._set_view_of(x, *_piece_fns(key), _multi_output_error(node, i)))
        if node is None:  # off the graph: a write that would be recorded is still refused, as in PyTorch
            p._ex().fn_view = _MULTI_OUTPUT_OFF_GRAPH
    return tuple(out)


_MULTI_OUTPUT_OFF_GRAPH = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. This view is the output "
    "of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. "
    "You should replace the inplace operation by an out-of-place one.")


def _piece_fns(key):
    return (lambda b: take_slices(b, key)), (lambda b, v: put_slices(b, v, key))


def _multi_output_error(node, i):
    if node is None:
        return None
    # PyTorch names the op here, not its node: "Output 0 of Unbind", "Output 1 of Split"
    return (f"Output {i} of {_short(node.name())} is a view and is being modified inplace. This view is the output "
            "of a function that returns multiple views. Such functions do not allow the output views to be modified "
            "inplace. You should replace the inplace operation by an out-of-place one.")


def _split_sizes(x, sizes: list, d: int, node_class) -> tuple:
    keys, start = [], 0
    for n in sizes:
        keys.append((_FULL,) * d + (slice(start, start + n),))
        start += n
    return _pieces(x, keys, d, node_class)


@declare(method=True)
def split(tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or pieces of the listed sizes (views)."""
    d = wrap_dim(dim, tensor.ndim)
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s < 0 or (s == 0 and n != 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        count = max(-(-n // s), 1) if s else 1
        return _split_sizes(tensor, [min(s, n - i * s) for i in range(count)], d, SplitBackward0)
    sizes = [int(s) for s in split_size_or_sections]
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                           f"dimension {d}), but got split_sizes={sizes}")
    return _split_sizes(tensor, sizes, d, SplitWithSizesBackward0)


@declare(method=True)
def chunk(input, chunks: int, dim: int = 0) -> tuple:
    """At most ``chunks`` pieces of size ``ceil(n / chunks)`` along ``dim`` (PyTorch may return fewer)."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if n == 0:
        return _split_sizes(input, [0] * chunks, d, SplitBackward0)
    return split(input, -(-n // chunks), d)


@declare(method=True)
def unbind(input, dim: int = 0) -> tuple:
    """The slices along ``dim``, each without that dim (views)."""
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, input.ndim)
    return _pieces(input, [(_FULL,) * d + (i,) for i in range(input.shape[d])], d, UnbindBackward0)


# ---------------------------------------------------------------------------------------------------- methods
@declare(method="reshape_as")
def _reshape_as(input, other) -> Tensor:
    """``input`` reshaped to ``other``'s shape."""
    return reshape(input, other.shape)


_engine.stack_op = stack  # autograd's engine joins batched gradients with it (the engine cannot import ops)
