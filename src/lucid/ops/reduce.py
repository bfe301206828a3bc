"""Reductions: sum, mean, prod, max/min, amax/amin, argmax/argmin, var/std, logsumexp, norm, softmax,
log_softmax. ``dim`` is an int or a tuple of ints (None means all), ``keepdim`` keeps reduced dims as size 1.

Each public function normalizes ``dim`` to a tuple of MLX axes once and passes it to the declared op, so forward
and VJP read the same axes. VJPs only read the input's ``shape`` (a released node keeps shapes, not tensors) and are
written with lucid ops, so they are differentiable again. Subgradients follow PyTorch: ``max()``/``amax`` split the
gradient evenly among ties, ``max(dim)`` sends it only to the returned index, ``norm`` is 0 at the zero vector.
"""
from __future__ import annotations

__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std", "var_mean",
           "std_mean", "logsumexp", "norm", "softmax", "log_softmax"]

import builtins
import math
from collections import namedtuple

import mlx.core as mx

from .. import _cpu_route, _meta
from .._tensor import Tensor, _wrap
from .. import _sums
from . import _f64
from .. import _grad_mode as gm
from ..autograd.graph import FREED_MESSAGE, Node, edge_of
from ._core import _version_error, declare, defop
from .elementwise import abs, eq, exp, maximum, minimum, sign, where

_TORCH_NAMES = {mx.int64: "Long", mx.int32: "Int", mx.int16: "Short", mx.int8: "Char", mx.uint8: "Byte",
                mx.bool_: "Bool", mx.uint16: "UInt16", mx.uint32: "UInt32", mx.uint64: "UInt64"}


# ---------------------------------------------------------------------------------------------------- helpers
def _axes(dim, ndim: int) -> tuple:
    """PyTorch's ``dim`` (None, int or sequence; negative allowed) as a sorted tuple of MLX axes. None and an
    empty sequence mean every dim. A 0-d tensor accepts dim 0 / -1 and has no axes to reduce."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        return tuple(range(ndim))
    lo, hi = (-1, 0) if ndim == 0 else (-ndim, ndim - 1)
    out = []
    for d in dims:
        if not isinstance(d, int):
            raise TypeError(f"dim must be an int or a tuple of ints, but got {type(d).__name__}")
        if not lo <= d <= hi:
            raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})")
        d = d % ndim if ndim else 0
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(sorted(out)) if ndim else ()


def _one_dim(dim, ndim: int, fn: str) -> int | None:
    """A single ``dim`` (max(dim), argmax, prod, softmax) as an MLX axis; None for a 0-d tensor."""
    if not isinstance(dim, int):
        raise TypeError(f"{fn}(): argument 'dim' must be int, not {type(dim).__name__}")
    axes = _axes(dim, ndim)
    return axes[0] if axes else None


def _kept_shape(shape, axes) -> tuple:
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _kept(g, shape, axes, keepdim):
    """A reduced tensor reshaped so it broadcasts against the input (reduced dims as size 1)."""
    if keepdim or not axes:
        return g
    return g.reshape(_kept_shape(shape, axes))


def _unreduce(g, shape, axes, keepdim):
    """The gradient of a sum: the reduced gradient broadcast back over the reduced dims."""
    # always an expand, even to the same shape: the result must be a new node, not g itself (an autograd.grad
    # that returns its own seed unchanged gives a tensor cut off from that seed; see engine._execute's capture)
    return _kept(g, shape, axes, keepdim).expand(shape)


def _count(shape, axes) -> int:
    return math.prod(shape[a] for a in axes)


def _is_full(dim, keepdim) -> bool:
    """A call that reduces everything to a 0-d result (PyTorch's ...Backward0 / MaxBackward1 overloads)."""
    return (dim is None or (not isinstance(dim, int) and len(dim) == 0)) and not keepdim


def _float_only(x: Tensor, message: str) -> None:
    if not mx.issubdtype(x.dtype, mx.inexact):
        raise RuntimeError(message.format(_TORCH_NAMES.get(x.dtype, str(x.dtype))))


_TO_INT64 = {mx.bool_, mx.int8, mx.int16, mx.int32, mx.uint8, mx.uint16, mx.uint32}


def _integral_to_int64(x: Tensor, dtype) -> Tensor:
    """sum and prod accumulate integers and bools in int64, as PyTorch does; ``dtype`` casts first."""
    if dtype is not None:
        return x.to(dtype)
    return x.to(mx.int64) if x.dtype in _TO_INT64 else x


def _nonempty(x: Tensor, fn: str) -> None:
    if x.numel() == 0:
        raise RuntimeError(f"{fn}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")


def _ties(x, ans_kept, g_kept, axes):
    """Gradient of an extremum split evenly among the elements equal to it (max(), amax, amin, inf-norm)."""
    mask = eq(x, ans_kept)
    return where(mask, g_kept / mask.sum(axes, keepdim=True), 0.0)


# ---------------------------------------------------------------------------------------------------- sum, mean
# float sums go through lucid._sums: MLX's CPU sum adds in sequence, so large float32 sums drift (see README)
def _sum_fwd(a, axes, keepdim):
    return _sums.sum(a, axes, keepdim)


def _sum_vjp(g, ans, x, axes, keepdim):
    return _unreduce(g, x.shape, axes, keepdim)


def _mean_fwd(a, axes, keepdim):
    return _sums.mean(a, axes, keepdim)


def _mean_vjp(g, ans, x, axes, keepdim):
    return _unreduce(g / _count(x.shape, axes), x.shape, axes, keepdim)


_sum_all = defop("sum", _sum_fwd, vjp=_sum_vjp, save=None, node="SumBackward0")
_sum_dim = defop("sum", _sum_fwd, vjp=_sum_vjp, save=None, node="SumBackward1")
_mean_all = defop("mean", _mean_fwd, vjp=_mean_vjp, save=None, node="MeanBackward0")
_mean_dim = defop("mean", _mean_fwd, vjp=_mean_vjp, save=None, node="MeanBackward1")


@declare(method=True)
def sum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:  # noqa: A001
    """Sum over ``dim`` (all elements when None); integers and bools are summed in int64."""
    input = _integral_to_int64(input, dtype)
    op = _sum_all if _is_full(dim, keepdim) else _sum_dim
    return op(input, _axes(dim, input.ndim), keepdim)


@declare(method=True)
def mean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Arithmetic mean over ``dim`` (all elements when None). Integer inputs need ``dtype``."""
    if dtype is not None:
        input = input.to(dtype)
    _float_only(input, "mean(): could not infer output dtype. Input dtype must be either a floating point or "
                       "complex dtype. Got: {}")
    op = _mean_all if _is_full(dim, keepdim) else _mean_dim
    return op(input, _axes(dim, input.ndim), keepdim)


# ---------------------------------------------------------------------------------------------------- prod
def _others_fwd(a, axis):
    """For each element, the product of the other elements along ``axis``: exclusive products from both sides,
    so zeros need no special case (no division)."""
    return mx.cumprod(a, axis=axis, inclusive=False) * mx.cumprod(a, axis=axis, reverse=True, inclusive=False)


def _others_vjp(g, ans, x, axis):
    # d others_i / d x_k = product of all but x_i and x_k (k != i), 0 for k == i. Row i of `rows` is x with x_i
    # replaced by 1 (a new axis before `axis` indexes i); the products of the others along `axis` of that row are
    # then exactly the wanted derivatives. This costs n^2, but only when differentiating twice.
    n = x.shape[axis]
    rows_shape = x.shape[:axis] + (n,) + x.shape[axis:]
    diag = _wrap(mx.eye(n, dtype=mx.bool_).reshape((n, n) + (1,) * (len(x.shape) - axis - 1)))
    rows = where(diag, 1.0, x.reshape(x.shape[:axis] + (1,) + x.shape[axis:]).expand(rows_shape))
    d = where(diag, 0.0, _prod_others(rows, axis + 1))
    return (g.reshape(x.shape[:axis + 1] + (1,) + x.shape[axis + 1:]) * d).sum(axis)


_prod_others = defop("prod_others", _others_fwd, vjp=_others_vjp)


def _prod_fwd(a, axes, keepdim):
    return mx.prod(a, axis=axes, keepdims=keepdim)


def _prod_vjp(g, ans, x, axes, keepdim):
    if len(axes) == 1:
        return _kept(g, x.shape, axes, keepdim) * _prod_others(x, axes[0])
    # the full product: the product of the others over the flattened input
    flat = x.reshape(-1)
    return _kept(g, x.shape, axes, keepdim) * _prod_others(flat, 0).reshape(x.shape)


_prod_all = defop("prod", _prod_fwd, vjp=_prod_vjp, node="ProdBackward0")
_prod_dim = defop("prod", _prod_fwd, vjp=_prod_vjp, node="ProdBackward1")


@declare(method=True)
def prod(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """Product of all elements, or along one ``dim``; the gradient is exact with zeros in the input."""
    input = _integral_to_int64(input, dtype)
    if dim is None:
        return (_prod_dim if keepdim else _prod_all)(input, tuple(range(input.ndim)), keepdim)
    axis = _one_dim(dim, input.ndim, "prod")
    return _prod_dim(input, () if axis is None else (axis,), keepdim)


# ---------------------------------------------------------------------------------------------------- max, min
def _extremum_vjp(g, ans, x, axes, keepdim):
    return _ties(x, _kept(ans, x.shape, axes, keepdim), _kept(g, x.shape, axes, keepdim), axes)


def _max_fwd(a, axes, keepdim):
    return mx.max(a, axis=axes, keepdims=keepdim)


def _min_fwd(a, axes, keepdim):
    return mx.min(a, axis=axes, keepdims=keepdim)


_max_all = defop("max", _max_fwd, vjp=_extremum_vjp, save="both", node="MaxBackward1")
_min_all = defop("min", _min_fwd, vjp=_extremum_vjp, save="both", node="MinBackward1")
_amax = defop("amax", _max_fwd, vjp=_extremum_vjp, save="both")
_amin = defop("amin", _min_fwd, vjp=_extremum_vjp, save="both")


def _pick_fwd(a, idx, axis, keepdim):
    """The elements at ``idx`` (the arg-extremum, kept dims) along ``axis``."""
    if axis is None:
        return a
    out = mx.take_along_axis(a, mx.stop_gradient(idx), axis)  # (idx: no derivative, also under MLX's transforms)
    return out if keepdim else mx.squeeze(out, axis)


def _pick_vjp(g, ans, x, idx, axis, keepdim):
    if axis is None:  # 0-d: the identity
        return _unreduce(g, x.shape, (), keepdim)
    shape = (1,) * axis + (x.shape[axis],) + (1,) * (len(x.shape) - axis - 1)
    hit = _wrap(mx.arange(x.shape[axis]).reshape(shape) == idx)  # only the returned index gets the gradient
    return where(hit, _kept(g, x.shape, (axis,), keepdim), 0.0)


_max_dim = defop("max", _pick_fwd, vjp=(_pick_vjp,), node="MaxBackward0")
_min_dim = defop("min", _pick_fwd, vjp=(_pick_vjp,), node="MinBackward0")

max_return = namedtuple("max", ["values", "indices"])
min_return = namedtuple("min", ["values", "indices"])


def _arg_fwd(find):
    def fwd(a, axis, keepdim):
        if axis is None:  # 0-d: the only element
            return mx.zeros((), mx.int64)
        return find(a, axis=axis, keepdims=keepdim).astype(mx.int64)
    return fwd


@_cpu_route.float64_args
def _extremum(input, dim, keepdim, other, name, full, by_dim, arg, pair, return_type):
    if other is not None:  # max(a, b): elementwise
        return pair(input, other)
    if isinstance(dim, Tensor):
        return pair(input, dim)
    if dim is None:
        _nonempty(input, name)
        return full(input, tuple(range(input.ndim)), False)
    axis = _one_dim(dim, input.ndim, name)
    idx = arg(input._storage.data, axis, True)  # kept dims, as the VJP needs them
    values = by_dim(input, idx, axis, keepdim)
    idx = idx if keepdim or axis is None else mx.squeeze(idx, axis)
    if _meta.used[0] and _meta.is_meta(input._storage.data):  # a meta input's indices are meta
        idx = _meta.like(idx)
    return return_type(values, _wrap(idx))


@declare(method=True)
def max(input, dim=None, keepdim: bool = False, *, other=None):  # noqa: A001
    """``max(x)``: the largest element (ties share the gradient). ``max(x, dim, keepdim)``: ``(values, indices)``
    along ``dim`` (the gradient goes to the returned index). ``max(x, y)`` with a tensor ``y``: ``maximum``."""
    return _extremum(input, dim, keepdim, other, "max", _max_all, _max_dim, _argmax_fwd, maximum, max_return)


@declare(method=True)
def min(input, dim=None, keepdim: bool = False, *, other=None):  # noqa: A001
    """``min(x)``, ``min(x, dim, keepdim) -> (values, indices)``, or ``minimum(x, y)``; see ``max``."""
    return _extremum(input, dim, keepdim, other, "min", _min_all, _min_dim, _argmin_fwd, minimum, min_return)


@declare(method=True)
def amax(input, dim=(), keepdim: bool = False) -> Tensor:
    """Largest values over ``dim`` (all dims when empty); ties split the gradient evenly."""
    if _is_full(dim, False):
        _nonempty(input, "amax")
    return _amax(input, _axes(dim, input.ndim), keepdim)


@declare(method=True)
def amin(input, dim=(), keepdim: bool = False) -> Tensor:
    """Smallest values over ``dim`` (all dims when empty); ties split the gradient evenly."""
    if _is_full(dim, False):
        _nonempty(input, "amin")
    return _amin(input, _axes(dim, input.ndim), keepdim)


_argmax_fwd = _arg_fwd(mx.argmax)
_argmin_fwd = _arg_fwd(mx.argmin)
_argmax = defop("argmax", _argmax_fwd, differentiable=False)
_argmin = defop("argmin", _argmin_fwd, differentiable=False)


def _arg(input, dim, keepdim, op, name):
    if dim is not None:
        return op(input, _one_dim(dim, input.ndim, name), keepdim)
    _nonempty(input, name)
    flat = op(input.reshape(-1), 0, False)  # dim=None: an index into the flattened input
    return flat.reshape((1,) * input.ndim) if keepdim else flat


@declare(method=True)
def argmax(input, dim=None, keepdim: bool = False) -> Tensor:
    """Index (int64) of the first largest element along ``dim``, or in the flattened input when None."""
    return _arg(input, dim, keepdim, _argmax, "argmax")


@declare(method=True)
def argmin(input, dim=None, keepdim: bool = False) -> Tensor:
    """Index (int64) of the first smallest element along ``dim``, or in the flattened input when None."""
    return _arg(input, dim, keepdim, _argmin, "argmin")


# ---------------------------------------------------------------------------------------------------- var, std
def _var_fwd(a, axes, dof, keepdim):
    return _sums.var(a, axes, dof, keepdim)


def _centered(x, axes):
    return x - mean(x, axes, keepdim=True)


def _var_vjp(g, ans, x, axes, dof, keepdim):
    return _kept(g, x.shape, axes, keepdim) * _centered(x, axes) * 2 / dof


def _std_vjp(g, ans, x, axes, dof, keepdim):
    # d std = d var / (2 std); where std is 0 (a constant input) the gradient is 0, as in PyTorch's std_backward
    # (a safe denominator, so the second derivative there is 0 too, not 0 * inf)
    zero = eq(ans, 0)
    return _kept(where(zero, 0.0, g / where(zero, 1.0, ans)), x.shape, axes, keepdim) * _centered(x, axes) / dof


_var = defop("var", _var_fwd, vjp=_var_vjp)
_std = defop("std", lambda a, axes, dof, keepdim: mx.sqrt(_var_fwd(a, axes, dof, keepdim)), vjp=_std_vjp,
             save="both")


def _var_args(input, dim, unbiased, correction, name):
    """Resolve PyTorch's overloads: ``var(x, dim, *, correction, keepdim)``, ``var(x, dim, unbiased, keepdim)``
    and ``var(x, unbiased)``. Returns (axes, degrees of freedom)."""
    if isinstance(dim, bool):  # var(x, True): the old (input, unbiased) overload
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError(f"{name}(): cannot specify both unbiased and correction")
    if correction is None:
        correction = 1 if unbiased is None else int(unbiased)
    _float_only(input, "std and var only support floating point and complex dtypes, but got {}")
    axes = _axes(dim, input.ndim)
    # dof <= 0 gives inf / nan as in PyTorch (x / 0); 0.0 keeps the division in floating point
    return axes, builtins.max(0.0, _count(input.shape, axes) - correction)


@declare(method=True)
def var(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """Variance over ``dim`` with ``correction`` (1: unbiased, the default; 0: population)."""
    axes, dof = _var_args(input, dim, unbiased, correction, "var")
    return _var(input, axes, dof, keepdim)


@declare(method=True)
def std(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> Tensor:
    """Standard deviation over ``dim``; see ``var``."""
    axes, dof = _var_args(input, dim, unbiased, correction, "std")
    return _std(input, axes, dof, keepdim)


class _SpreadMeanBackward(Node):
    """The one backward node of both outputs of var_mean / std_mean (as in PyTorch, so a pre-hook on it sees both
    gradients): the sum of the var (or std) VJP and the mean VJP, from the saved input (and std output)."""

    __slots__ = ("next", "num_outputs", "x", "version", "ans", "metas", "axes", "dof", "keepdim")

    def __init__(self, x: Tensor, spread, mean_, axes, dof, keepdim):
        self._hooks = None
        self.next = [edge_of(x)]
        self.num_outputs = 2
        self.x, self.version = x, x._storage.version
        self.ans = spread if type(self) is StdMeanBackward0 else None  # std's VJP reads its output
        self.metas = [(spread.shape, spread.dtype), (mean_.shape, mean_.dtype)]
        self.axes, self.dof, self.keepdim = axes, dof, keepdim

    def output_meta(self, nr):
        return self.metas[nr]

    def rebind_output(self, st) -> None:
        pass  # the saved std output is an array of its own

    def release(self) -> None:
        self.x = self.ans = None

    def apply(self, grads: list, needed=None) -> list:
        x = self.x
        if x is None:
            raise RuntimeError(FREED_MESSAGE)
        if x._storage.version != self.version:
            _version_error(x, x._storage.version, self.version)
        g_spread, g_mean = grads
        axes, keepdim = self.axes, self.keepdim
        total = None
        if g_spread is not None:
            if self.ans is None:
                total = _var_vjp(g_spread, None, x, axes, self.dof, keepdim)
            else:
                total = _std_vjp(g_spread, _wrap(self.ans, self, True, 0), x, axes, self.dof, keepdim)
        if g_mean is not None:
            gm_ = _mean_vjp(g_mean, None, x, axes, keepdim)
            total = gm_ if total is None else total + gm_
        return [total]


VarMeanBackward0 = type("VarMeanBackward0", (_SpreadMeanBackward,), {"__slots__": ()})
StdMeanBackward0 = type("StdMeanBackward0", (_SpreadMeanBackward,), {"__slots__": ()})


@_cpu_route.float64_args
def _spread_mean(input, axes, dof, keepdim, std: bool) -> tuple:
    a = input._storage.data
    spread = _var_fwd(a, axes, dof, keepdim)
    if std:
        spread = mx.sqrt(spread)
    mean_ = _mean_fwd(a, axes, keepdim)
    if _meta.used[0] and _meta.is_meta(a):
        spread, mean_ = _meta.like(spread), _meta.like(mean_)
    if not (input._requires_grad and gm.state.grad):
        outs = (_wrap(spread), _wrap(mean_))
        if gm.state.inference:
            for o in outs:
                o._ex().inference = True
        return outs
    node = (StdMeanBackward0 if std else VarMeanBackward0)(input, spread, mean_, axes, dof, keepdim)
    return _wrap(spread, node, True, 0), _wrap(mean_, node, True, 1)


def var_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    """``(var(input, ...), mean(input, ...))``, with one backward node for both."""
    axes, dof = _var_args(input, dim, unbiased, correction, "var_mean")
    return _spread_mean(input, axes, dof, keepdim, std=False)


def std_mean(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> tuple:
    """``(std(input, ...), mean(input, ...))``, with one backward node for both."""
    axes, dof = _var_args(input, dim, unbiased, correction, "std_mean")
    return _spread_mean(input, axes, dof, keepdim, std=True)


# ---------------------------------------------------------------------------------------------------- exp-based
# MLX's CPU float64 exp is float32-accurate: float64 inputs take the exact forms of _f64
def _logsumexp_fwd(a, axes, keepdim):
    if a.size == 0:  # MLX refuses empty input; PyTorch gives -inf over an empty dim (an empty result otherwise)
        return mx.log(mx.sum(mx.exp(a), axis=axes, keepdims=keepdim))
    if a.dtype == mx.float64:
        return _f64.logsumexp(a, axis=axes, keepdims=keepdim)
    return _sums.logsumexp(a, axes, keepdim)


def _logsumexp_vjp(g, ans, x, axes, keepdim):
    return _kept(g, x.shape, axes, keepdim) * exp(x - _kept(ans, x.shape, axes, keepdim))


_logsumexp = defop("logsumexp", _logsumexp_fwd, vjp=_logsumexp_vjp, save="both")


@declare(method=True)
def logsumexp(input, dim, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input), dim))``, computed stably. Integer inputs give float32."""
    if not mx.issubdtype(input.dtype, mx.inexact):
        input = input.to(mx.float32)
    return _logsumexp(input, _axes(dim, input.ndim), keepdim)


def _softmax_fwd(a, axes):
    if a.dtype == mx.float64:
        return _f64.softmax(a, axis=axes)
    if _sums.blocked(a, axes):  # a long row: normalized by the accurate sum (MLX's would be off by ~1e-5)
        return mx.exp(a - _sums.logsumexp(a, axes, True))
    return mx.softmax(a, axis=axes, precise=True)


def _log_softmax_fwd(a, axes):
    # PyTorch's order: (x - max) - log(sum(exp(x - max))). x - logsumexp(x) would round logsumexp to x's magnitude
    # first (an error of up to half an ulp of 1e7 for float32 inputs near 1e7), losing shift invariance
    if a.size == 0:
        return a - _logsumexp_fwd(a, axes, True)
    shifted = a - mx.stop_gradient(mx.max(a, axis=axes, keepdims=True))  # a row of infinities is NaN, as in PyTorch
    return shifted - _logsumexp_fwd(shifted, axes, True)


_softmax = defop("softmax", _softmax_fwd, save="ans", raw=True,
                 vjp=lambda g, ans, x, axes: ans * (g - _sum_dim(g * ans, axes, True)))
# the declared ops by name (not Tensor methods), so that the raw backward (engine.py) can run it on MLX arrays
_log_softmax = defop("log_softmax", _log_softmax_fwd, save="ans", node="LogSoftmaxBackward0", raw=True,
                     vjp=lambda g, ans, x, axes: g - exp(ans) * _sum_dim(g, axes, True))


def _softmax_args(input, dim, dtype, name):
    if dtype is not None:
        input = input.to(dtype)
    _float_only(input, f'"{name}" not implemented for \'{{}}\': pass a floating point input or dtype=')
    if dim is None:
        raise TypeError(f"{name}() missing required argument 'dim'")
    axis = _one_dim(dim, input.ndim, name)
    return input, () if axis is None else (axis,)


@declare(method=True)
def softmax(input, dim, dtype=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim``."""
    return _softmax(*_softmax_args(input, dim, dtype, "softmax"))


@declare(method=True)
def log_softmax(input, dim, dtype=None) -> Tensor:
    """``x - logsumexp(x, dim)``: the log of softmax, computed stably."""
    return _log_softmax(*_softmax_args(input, dim, dtype, "log_softmax"))


# softmax over the elements ``mask`` leaves (masked ones give 0). A row masked whole is 0 / 0, NaN, as in PyTorch's
# CPU kernel, and passes no gradient: the gradient is PyTorch's, softmax's with the masked elements' zeroed
_masked_softmax = defop("_masked_softmax", lambda a, mask, axes: _softmax_fwd(mx.where(mask, -mx.inf, a), axes),
                        save="both", node="MaskedSoftmaxBackward0",
                        vjp=(lambda g, ans, x, mask, axes: where(mask, 0.0, ans * (g - _sum_dim(g * ans, axes, True))),
                             None))


def masked_softmax(input, mask, dim=None, mask_type=None) -> Tensor:
    """PyTorch's ``torch._masked_softmax`` (the attention layers' fused path): softmax of ``input`` along ``dim``
    (default the last) over the elements where the bool ``mask`` is False. ``mask_type`` 2: ``mask`` has
    ``input``'s shape; for a 4-D ``(B, H, L, L)`` input and a 2-D mask, 0: an ``(L, L)`` attention mask, 1: a
    ``(B, L)`` key padding mask (any other mask is type 2)."""
    if mask.dtype != mx.bool_:
        raise RuntimeError("Mask should be a boolean tensor")
    _float_only(input, '"masked_softmax" not implemented for \'{}\'')
    shape = tuple(input.shape)
    if mask.ndim != 2 or input.ndim != 4:
        mask_type = 2
    elif mask_type is None:
        raise RuntimeError("Mask Type should be defined")
    elif mask_type not in (0, 1, 2):
        raise RuntimeError("Mask Type should be 0 (src_mask) or 1 (src_key_padding_mask), or 2 (default_mask)")
    if mask_type == 2 and tuple(mask.shape) != shape:
        raise RuntimeError("For mask_type == 2 mask shape should match input shape")
    if mask_type == 1:
        if shape[0] != mask.shape[0] or shape[2] != mask.shape[1]:
            raise RuntimeError("For mask_type == 1 mask shape should be (B, L)")
        mask = mask.reshape(shape[0], 1, 1, shape[2]).expand(shape)
    elif mask_type == 0:
        if shape[2] != mask.shape[0] or shape[2] != mask.shape[1]:
            raise RuntimeError("For mask_type == 0 mask shape should be (L, L)")
        mask = mask.reshape(1, 1, shape[2], shape[2]).expand(shape)
    axis = _one_dim(-1 if dim is None else dim, input.ndim, "_masked_softmax")
    return _masked_softmax(input, mask, () if axis is None else (axis,))


# ---------------------------------------------------------------------------------------------------- norm
def _norm_fwd(a, p, axes, keepdim):
    if p == 2:
        return mx.sqrt(_sums.sum(a * a, axes, keepdim))
    if p == 1:
        return _sums.sum(mx.abs(a), axes, keepdim)
    if p == math.inf:
        return mx.max(mx.abs(a), axis=axes, keepdims=keepdim)
    if p == -math.inf:
        return mx.min(mx.abs(a), axis=axes, keepdims=keepdim)
    if p == 0:
        return mx.sum(a != 0, axis=axes, keepdims=keepdim).astype(a.dtype)
    return mx.power(_sums.sum(mx.power(mx.abs(a), p), axes, keepdim), 1.0 / p)


def _norm_vjp(g, ans, x, p, axes, keepdim):
    """PyTorch's norm_backward; where the norm is 0 the gradient is 0 (safe denominators keep nan out of the
    second derivative too)."""
    g, n = _kept(g, x.shape, axes, keepdim), _kept(ans, x.shape, axes, keepdim)
    if p == 0:
        return _wrap(mx.zeros(x.shape, x.dtype))
    if p == 1:
        return g * sign(x)
    if math.isinf(p):
        return sign(x) * _ties(abs(x), n, g, axes)
    zero = eq(n, 0)
    safe_n = where(zero, 1.0, n)
    if p == 2:
        return x * where(zero, 0.0, g / safe_n)
    safe_abs = where(eq(x, 0), 1.0, abs(x))  # sign(0) = 0 makes these entries 0 without inf * 0
    return sign(x) * safe_abs ** (p - 1) * where(zero, 0.0, g / safe_n ** (p - 1))


_norm = defop("norm", _norm_fwd, vjp=_norm_vjp, save="both", node="LinalgVectorNormBackward0")


# lucid.ops.decomp's matrix_norm, for p="nuc"; decomp builds on this module, so it sets this when it is imported.
_matrix_norm = None


@declare(method=True)
def norm(input, p="fro", dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """Vector p-norm over ``dim`` (all elements when None): p = 2 ('fro', the default), 1, inf, -inf, 0 (count of
    nonzeros) or any other number, ``sum(|x|**p) ** (1/p)``."""
    if dtype is not None:
        input = input.to(dtype)
    _float_only(input, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}")
    if isinstance(p, str):
        if p == "nuc":  # the nuclear norm is a matrix norm: sum of singular values over two dims
            return _matrix_norm(input, "nuc", dim=(-2, -1) if dim is None else dim, keepdim=keepdim)
        if p != "fro":
            raise RuntimeError(f"norm(): unknown p='{p}': expected a number, 'fro' or 'nuc'")
        p = 2
    return _norm(input, float(p), _axes(dim, input.ndim), keepdim)
