"""PyTorch functions that are compositions of lucid's ops (their gradients come from the ops they are made of):
``ravel``, ``positive``, ``column_stack``, ``diagflat``, ``inner``, ``vdot``, ``dist``, ``rot90``, ``tensor_split``
and ``hsplit``/``vsplit``/``dsplit``, ``isposinf``/``isneginf``/``isreal``, ``nansum``/``nanmean``, ``aminmax``,
``float_power``, ``ldexp``, ``pdist``, ``trapezoid``/``cumulative_trapezoid``, ``isin``, ``vander``,
``combinations``, ``adjoint`` (and ``H``/``mH``), ``sum_to_size``, and the predicates ``is_same_size``,
``is_signed``, ``is_nonzero``, ``is_conj``/``is_neg`` (lucid has no lazy conjugate or negation bits).
"""
from __future__ import annotations

import builtins
import itertools
from collections import namedtuple

import mlx.core as mx

from .. import _creation
from .._tensor import Tensor
from ._core import attach, declare
from . import elementwise as _ew
from . import reduce as _red
from . import scan as _scan
from . import shape as _sh
from .fft import conj, imag
from .linalg import diag, tensordot

__all__ = ["ravel", "positive", "column_stack", "diagflat", "inner", "vdot", "dist", "rot90", "tensor_split",
           "hsplit", "vsplit", "dsplit", "isposinf", "isneginf", "isreal", "nansum", "nanmean", "aminmax",
           "float_power", "ldexp", "is_same_size", "is_signed", "is_nonzero", "detach", "fill", "adjoint", "is_conj",
           "is_neg", "resolve_conj", "resolve_neg", "get_device", "pdist", "trapezoid", "cumulative_trapezoid", "trapz",
           "isin", "combinations", "vander"]

aminmax_result = namedtuple("aminmax", ["min", "max"])


@declare(method=True)
def ravel(input) -> Tensor:
    """The elements as a 1-D tensor (a view where the layout allows)."""
    return _sh.reshape(input, (-1,))


@declare(method=True)
def positive(input) -> Tensor:
    """``input`` itself (unary plus); bool tensors are refused, as in PyTorch."""
    if input.dtype == mx.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def column_stack(tensors) -> Tensor:
    """Stack along columns: 0-d and 1-d tensors become columns first."""
    return _sh.hstack([_sh.reshape(t, (t.numel(), 1)) if t.ndim <= 1 else t for t in tensors])


@declare(method=True)
def diagflat(input, offset: int = 0) -> Tensor:
    """A 2-D tensor with the flattened ``input`` on diagonal ``offset``."""
    return diag(_sh.reshape(input, (-1,)), offset)


@declare(method=True)
def inner(input, other) -> Tensor:
    """The dot product over the last dimension of both (a product when either is 0-d)."""
    if input.ndim == 0 or other.ndim == 0:
        return _ew.mul(input, other)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, dims=([input.ndim - 1], [other.ndim - 1]))


@declare(method=True)
def vdot(input, other) -> Tensor:
    """``sum(conj(input) * other)`` of two 1-D tensors."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src [{other.shape[0]}] "
                           "to have the same number of elements, but got "
                           f"{input.shape[0]} and {other.shape[0]} elements respectively")
    return _red.sum(_ew.mul(conj(input) if input.is_complex() else input, other))


@declare(method=True)
def dist(input, other, p=2) -> Tensor:
    """The p-norm of ``input - other``."""
    return _red.norm(_ew.sub(input, other), p)


@declare(method=True)
def rot90(input, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotate by 90 degrees ``k`` times in the plane ``dims``, from the first towards the second axis."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (d % input.ndim for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return _sh.transpose(_sh.flip(input, [d1]), d0, d1)
    if k == 2:
        return _sh.flip(input, [d0, d1])
    if k == 3:
        return _sh.transpose(_sh.flip(input, [d0]), d0, d1)
    return input.clone()


@declare(method=True)
def tensor_split(input, indices_or_sections, dim: int = 0) -> tuple:
    """Views of ``input`` split along ``dim``: into n near-equal parts (the first ``size % n`` one longer) for an
    int, or at the given indices."""
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = dim % input.ndim
    size = input.shape[d]
    if isinstance(indices_or_sections, Tensor):
        indices_or_sections = indices_or_sections.tolist()
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        bounds = [i * (size // n) + min(i, size % n) for i in range(n + 1)]
    else:
        bounds = [0] + [min(max(i if i >= 0 else i + size, 0), size) for i in indices_or_sections] + [size]
    return tuple(_sh.narrow(input, d, lo, max(hi - lo, 0)) for lo, hi in zip(bounds, bounds[1:]))


def _directional_split(name: str, input, sections, dim: int, min_dims: int):
    if input.ndim < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a tensor with "
                           f"{input.ndim} dimensions!")
    if isinstance(sections, int) and (sections == 0 or input.shape[dim] % sections):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{input.shape[dim]} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


@declare(method=True)
def hsplit(input, indices_or_sections) -> tuple:
    """``tensor_split`` along the columns (dimension 1, or 0 for a 1-D tensor), into equal parts for an int."""
    return _directional_split("hsplit", input, indices_or_sections, 0 if input.ndim == 1 else 1, 1)


@declare(method=True)
def vsplit(input, indices_or_sections) -> tuple:
    """``tensor_split`` along the rows (dimension 0) of a tensor of 2 or more dimensions."""
    return _directional_split("vsplit", input, indices_or_sections, 0, 2)


@declare(method=True)
def dsplit(input, indices_or_sections) -> tuple:
    """``tensor_split`` along the depth (dimension 2) of a tensor of 3 or more dimensions."""
    return _directional_split("dsplit", input, indices_or_sections, 2, 3)


@declare(method=True)
def isposinf(input) -> Tensor:
    """True where ``input`` is +inf."""
    return _ew.logical_and(_ew.isinf(input), _ew.gt(input, 0))


@declare(method=True)
def isneginf(input) -> Tensor:
    """True where ``input`` is -inf."""
    return _ew.logical_and(_ew.isinf(input), _ew.lt(input, 0))


@declare(method=True)
def isreal(input) -> Tensor:
    """True where the imaginary part is 0 (everywhere for a real tensor)."""
    if not input.is_complex():
        return _creation.ones_like(input, dtype=mx.bool_)
    return _ew.eq(imag(input), 0)


@declare(method=True)
def nansum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``sum`` treating NaN as 0."""
    clean = _ew.where(_ew.isnan(input), 0, input) if input.is_floating_point() or input.is_complex() else input
    return _red.sum(clean, dim, keepdim, dtype=dtype)


@declare(method=True)
def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``mean`` over the elements that are not NaN."""
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_red._TORCH_NAMES.get(input.dtype, input.dtype)}")
    count = _red.sum(_ew.logical_not(_ew.isnan(input)), dim, keepdim)
    return _ew.div(nansum(input, dim, keepdim, dtype=dtype), count)


@declare(method=True)
def aminmax(input, *, dim=None, keepdim: bool = False):
    """``(amin, amax)`` in one call, as a named tuple ``(min, max)``."""
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        every = tuple(range(input.ndim)) if input.ndim else None
        return aminmax_result(_red.amin(input, every, keepdim), _red.amax(input, every, keepdim))
    return aminmax_result(_red.amin(input, dim, keepdim), _red.amax(input, dim, keepdim))


@declare(method=True)
def float_power(input, exponent) -> Tensor:
    """``input ** exponent`` computed in float64 (complex64 for complex operands: MLX has no complex128)."""
    wide = mx.complex64 if any(isinstance(v, Tensor) and v.is_complex() or isinstance(v, complex)
                               for v in (input, exponent)) else mx.float64
    cast = [v.to(wide) if isinstance(v, Tensor) else v for v in (input, exponent)]
    return _ew.pow(*cast)


@declare(method=True, inplace=True)
def ldexp(input, other) -> Tensor:
    """``input * 2 ** other``."""
    return _ew.mul(input, _ew.pow(2.0, other))


@declare(method=True)
def is_same_size(input, other) -> bool:
    """Whether the two tensors have the same shape."""
    return input.shape == other.shape


@declare(method=True)
def is_signed(input) -> bool:
    """Whether the dtype is signed (False for bool and the unsigned integers)."""
    return input.dtype.is_signed


@declare(method=True)
def is_nonzero(input) -> bool:
    """The truth value of a one-element tensor (reads the value: a sync point)."""
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def pdist(input, p: float = 2) -> Tensor:
    """The p-norm distances between the rows of an (N, M) tensor, for the pairs i < j in row-major order.

    :param p: the norm's order.
    """
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = _creation.triu_indices(input.shape[0], input.shape[0], 1)
    return _red.norm(_ew.sub(input[i], input[j]), p, dim=1)


def _trapezoid_steps(y, x, dx, dim: int, name: str):
    """The (areas of the) trapezoids between neighbours of ``y`` along ``dim``."""
    d = dim % y.ndim if y.ndim else 0
    n = y.shape[d]
    pairs = _ew.add(_sh.narrow(y, d, 1, max(n - 1, 0)), _sh.narrow(y, d, 0, max(n - 1, 0)))
    if x is None:
        return _ew.mul(pairs, (1.0 if dx is None else dx) / 2)
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        steps = _ew.sub(x[1:], x[:-1]).reshape(*[n - 1 if k == d else 1 for k in range(y.ndim)])
    else:
        steps = _ew.sub(_sh.narrow(x, d, 1, max(n - 1, 0)), _sh.narrow(x, d, 0, max(n - 1, 0)))
    return _ew.div(_ew.mul(pairs, steps), 2)


def trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The trapezoidal rule along ``dim``: at sample points ``x``, or with spacing ``dx`` (1 by default)."""
    return _red.sum(_trapezoid_steps(y, x, dx, dim, "trapezoid"), dim)


trapz = trapezoid  # PyTorch's older name


def cumulative_trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running trapezoidal rule along ``dim`` (one element fewer than ``y`` there)."""
    return _scan.cumsum(_trapezoid_steps(y, x, dx, dim, "cumulative_trapezoid"), dim)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """True where an element of ``elements`` is among ``test_elements`` (either may be a scalar)."""
    elements = elements if isinstance(elements, Tensor) else _creation.tensor(elements)
    tests = test_elements if isinstance(test_elements, Tensor) else _creation.tensor(test_elements)
    found = _red.amax(_ew.eq(elements.reshape(*elements.shape, 1), tests.reshape(-1)), -1) if tests.numel() else \
        _creation.zeros_like(elements, dtype=mx.bool_)
    return _ew.logical_not(found) if invert else found


def vander(x, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of a 1-D ``x``: columns ``x ** (N - 1), ..., x, 1`` (reversed when ``increasing``)."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    powers = _creation.arange(n) if increasing else _creation.arange(n - 1, -1, -1)
    base = x if x.is_floating_point() or x.is_complex() else x.to(mx.int64)
    return _ew.pow(base.reshape(-1, 1), powers.to(base.dtype))


def combinations(input, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of a 1-D tensor's elements, one per row, in ``itertools`` order."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _creation.zeros(0, dtype=input.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = list(pick(builtins.range(input.shape[0]), r))  # positions only: the sizes are known, no value is read
    index = _creation.tensor(rows, dtype=mx.int64).reshape(len(rows), r)
    return input[index]


def detach(input) -> Tensor:
    """``input.detach()``."""
    return input.detach()


def fill(input, value) -> Tensor:
    """A new tensor like ``input`` filled with ``value`` (the out-of-place ``fill_``)."""
    return _creation.full_like(input, value.item() if isinstance(value, Tensor) else value)


@declare(method=True)
def adjoint(input) -> Tensor:
    """The conjugate transpose of the last two dimensions."""
    if input.ndim < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor."
                           if input.ndim == 1 else
                           "tensor.adjoint() is only supported on matrices or batches of matrices. Got 0-D tensor.")
    t = _sh.transpose(input, -2, -1)
    return conj(t) if input.is_complex() else t


@declare(method=True)
def is_conj(input) -> bool:
    """False: lucid's conj is computed, never a lazy conjugate bit."""
    return False


@declare(method=True)
def is_neg(input) -> bool:
    """False: lucid has no lazy negation bit."""
    return False


def resolve_conj(input) -> Tensor:
    """``input``: there is no lazy conjugate bit to materialise."""
    return input


@declare(method=True)
def resolve_neg(input) -> Tensor:
    """``input``: there is no lazy negation bit to materialise."""
    return input


@declare(method=True)
def get_device(input) -> int:
    """-1 for a CPU tensor, else the device's index (PyTorch's convention)."""
    d = input.device
    return -1 if d.type == "cpu" else d.index


def _sum_to_size(self, *size) -> Tensor:
    """Sum ``self`` down to ``size``, a shape ``self`` broadcasts from (the reverse of ``expand``)."""
    size = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
    lead = self.ndim - len(size)
    if lead < 0 or any(s not in (1, n) for s, n in zip(size, self.shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(self.shape)}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and self.shape[lead + i] != 1)
    return _sh.reshape(_red.sum(self, dims), size) if dims else self


attach("sum_to_size", _sum_to_size)
attach("cfloat", lambda self: self.to(mx.complex64), "``self.to(complex64)``.")
attach("H", property(lambda self: adjoint(self) if self.ndim == 2 else _matrix_only("H", self),
                     doc="The conjugate transpose of a matrix."))
attach("mH", property(adjoint, doc="The conjugate transpose of the last two dimensions."))
attach("is_cpu", property(lambda self: self.device.type == "cpu", doc="Whether the tensor is on the CPU."))


def _matrix_only(name: str, input) -> Tensor:
    raise RuntimeError(f"tensor.{name} is only supported on matrices (2-D tensors). Got {input.ndim}-D tensor.")
