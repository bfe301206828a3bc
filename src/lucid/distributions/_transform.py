"""The ``Transform`` base class and the transforms that combine others (``ComposeTransform``,
``IndependentTransform``, ``ReshapeTransform``, ``CatTransform``, ``StackTransform``); ``transforms`` re-exports them
with the concrete transforms (see its docstring)."""
from __future__ import annotations

import math

from .._tensor import Size
from ..ops.shape import cat, stack
from . import constraints
from .utils import lazy_property, sum_rightmost


class Transform:
    """The base class of transforms. Subclasses define ``_call`` (x -> y), ``_inverse`` (y -> x) where it exists,
    ``log_abs_det_jacobian``, ``domain``/``codomain``, and ``bijective``/``sign`` where they apply.

    :param cache_size: 0 (no caching) or 1 (remember the last pair (x, y), matched by identity).
    """

    bijective = False

    def __init__(self, cache_size: int = 0) -> None:
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 1:
            self._cached_x_y = None, None
        elif cache_size != 0:
            raise ValueError("cache_size must be 0 or 1")
        super().__init__()

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None  # the inverse refers back to this transform: rebuilt on demand
        return state

    @property
    def event_dim(self) -> int:
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self) -> "Transform":
        """The inverse transform (``t.inv.inv is t``)."""
        inv = self._inv
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = inv
        return inv

    @property
    def sign(self) -> int:
        """The sign of the Jacobian's determinant (bijective univariate transforms)."""
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        """This transform with ``cache_size`` (itself when it already has it)."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        """y = t(x)."""
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        """x = t^-1(y)."""
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """log |dy/dx| at the pair (x, y)."""
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__ + "()"

    def forward_shape(self, shape):
        """The shape of t(x) for x of ``shape``."""
        return shape

    def inverse_shape(self, shape):
        """The shape of t^-1(y) for y of ``shape``."""
        return shape


class _InverseTransform(Transform):
    """The inverse of a transform (private: use ``Transform.inv``)."""

    def __init__(self, transform: Transform) -> None:
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self) -> bool:
        return self._inv.bijective

    @property
    def sign(self) -> int:
        return self._inv.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """The transforms ``parts`` applied in order (each part does its own caching).

    :param parts: the transforms, applied in order.
    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    def __init__(self, parts: list, cache_size: int = 0) -> None:
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        # the event dimensions the whole chain reads: a later part may consume more than the first one's
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @lazy_property
    def bijective(self) -> bool:
        return all(p.bijective for p in self.parts)

    @lazy_property
    def sign(self) -> int:
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self) -> Transform:
        inv = self._inv
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = inv
            inv._inv = self
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return x.new_zeros(x.shape)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total = None
        event_dim = self.domain.event_dim
        for part, xi, yi in zip(self.parts, xs[:-1], xs[1:]):
            term = sum_rightmost(part.log_abs_det_jacobian(xi, yi), event_dim - part.domain.event_dim)
            total = term if total is None else total + term
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        return type(self).__name__ + "(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more rightmost dimensions counted as one event: the
    map is the same, ``log_abs_det_jacobian`` sums over those dimensions.

    :param base_transform: the transform whose batch dims are reinterpreted as event dims.
    :param reinterpreted_batch_ndims: how many rightmost batch dims become event dims.
    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self) -> bool:
        return self.base_transform.bijective

    @property
    def sign(self) -> int:
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


def _reshape_target(shape, have, want):
    """``shape`` with its trailing ``have`` part replaced by ``want`` (ReshapeTransform's shape inference)."""
    if len(shape) < len(have):
        raise ValueError("Too few dimensions on input")
    cut = len(shape) - len(have)
    if tuple(shape[cut:]) != tuple(have):
        raise ValueError(f"Shape mismatch: expected {Size(shape[cut:])} but got {have}")
    return Size(tuple(shape[:cut]) + tuple(want))


class ReshapeTransform(Transform):
    """Reshape the rightmost ``in_shape`` of a tensor to ``out_shape`` (same number of elements; unit Jacobian).

    :param in_shape: the event shape of the input.
    :param out_shape: the event shape of the output (same number of elements).
    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size: int = 0) -> None:
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        return x.reshape(tuple(x.shape[:x.dim() - len(self.in_shape)]) + tuple(self.out_shape))

    def _inverse(self, y):
        return y.reshape(tuple(y.shape[:y.dim() - len(self.out_shape)]) + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

    def forward_shape(self, shape):
        return _reshape_target(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return _reshape_target(shape, self.out_shape, self.in_shape)


def _check_dim(t, dim: int, name: str, what: str, want: int, expected: str) -> None:
    """Cat/StackTransform's checks of an input ``t`` (called ``name`` in the range message, ``what`` in the size
    message): ``dim`` in range and of size ``want`` (``expected`` says what that size is)."""
    if not -t.dim() <= dim < t.dim():
        raise AssertionError(f"dim {dim} out of range for {name} with {t.dim()} dimensions")
    if t.shape[dim] != want:
        raise AssertionError(f"{what}.size({dim}) = {t.shape[dim]} must equal {expected}")


class CatTransform(Transform):
    """The transforms ``tseq`` applied to consecutive slices of ``dim`` of lengths ``lengths`` (as ``cat``).

    :param tseq: the transforms, one per slice along ``dim``.
    :param dim: the dimension the slices are taken along.
    :param lengths: the size of each slice along ``dim`` (default 1 each).
    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    def __init__(self, tseq, dim: int = 0, lengths=None, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    @lazy_property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self) -> int:
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, t):
        start = 0
        for length in self.lengths:
            yield t.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        _check_dim(x, self.dim, "tensor", "x", self.length, f"length {self.length}")
        return cat([t(s) for t, s in zip(self.transforms, self._slices(x))], dim=self.dim)

    def _inverse(self, y):
        _check_dim(y, self.dim, "tensor", "y", self.length, f"length {self.length}")
        return cat([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_dim(x, self.dim, "x", "x", self.length, f"length {self.length}")
        _check_dim(y, self.dim, "y", "y", self.length, f"length {self.length}")
        terms = []
        for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y)):
            term = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                term = sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        if dim < 0:  # the concatenated dimension survives in the Jacobian terms
            return cat(terms, dim=dim)
        return sum(terms)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """The transforms ``tseq`` applied to the entries along ``dim`` (as ``stack``).

    :param tseq: the transforms, one per slice along ``dim``.
    :param dim: the dimension the slices are taken along.
    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    def __init__(self, tseq, dim: int = 0, cache_size: int = 0) -> None:
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _check(self, t, name, what):
        n = len(self.transforms)
        _check_dim(t, self.dim, name, what, n, f"len(transforms) {n}")

    def _call(self, x):
        self._check(x, "tensor", "x")
        return stack([t(s) for s, t in zip(self._slice(x), self.transforms)], dim=self.dim)

    def _inverse(self, y):
        self._check(y, "tensor", "y")
        return stack([t.inv(s) for s, t in zip(self._slice(y), self.transforms)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x, "x", "x")
        self._check(y, "y", "y")
        return stack([t.log_abs_det_jacobian(xs, ys)
                      for xs, ys, t in zip(self._slice(x), self._slice(y), self.transforms)], dim=self.dim)

    @property
    def bijective(self) -> bool:
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)
