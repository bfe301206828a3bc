"""Transforms: invertible (or at least computable) maps between constrained spaces, with the log absolute
determinant of their Jacobian (``torch.distributions.transforms``).

A transform ``t`` maps ``t.domain`` to ``t.codomain``; ``t.inv`` is its inverse (``t.inv.inv is t``);
``t.log_abs_det_jacobian(x, y)`` is log |dy/dx| summed over the transform's event dimensions. With
``cache_size=1`` a transform remembers its last (x, y) pair, so inverting the value it just produced returns the
very input (a ``TransformedDistribution`` sample scored by ``log_prob`` needs no numerical inversion).
``TransformedDistribution`` and ``biject_to``/``transform_to`` are built from them. The base class and the
transforms that combine others live in ``_transform``; this module has the concrete ones and exports them all.
"""
from __future__ import annotations

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform", "LowerCholeskyTransform",
           "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
           "SoftplusTransform", "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform",
           "Transform", "identity_transform"]

import math
from numbers import Number

from .._creation import eye, full_like
from .._dtype import broadcast_shapes
from .._tensor import Size
from ..linalg import cholesky
from ..nn.functional import logsigmoid, pad, softplus
from ..ops.elementwise import atanh, sigmoid
from . import constraints
from ._transform import (CatTransform, ComposeTransform, IndependentTransform, ReshapeTransform, StackTransform,
                         Transform, identity_transform)
from .utils import broadcast_all, finfo_eps, finfo_tiny, lazy_property, tril_matrix_to_vec, vec_to_tril_matrix


class ExpTransform(Transform):
    """y = exp(x).

    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """y = x ** exponent, on the positive reals.

    :param exponent: the power.
    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool((self.exponent == other.exponent).all())

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return broadcast_shapes(tuple(shape), tuple(self.exponent.shape))

    def inverse_shape(self, shape):
        return broadcast_shapes(tuple(shape), tuple(self.exponent.shape))


def _clipped_sigmoid(x):
    """sigmoid(x) kept inside (0, 1): [tiny, 1 - eps], so that its logit stays finite."""
    return sigmoid(x).clamp(min=finfo_tiny(x.dtype), max=1.0 - finfo_eps(x.dtype))


class SigmoidTransform(Transform):
    """y = 1 / (1 + exp(-x)), x = logit(y).

    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        y = y.clamp(min=finfo_tiny(y.dtype), max=1.0 - finfo_eps(y.dtype))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)) (linear above x = 20).

    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


class TanhTransform(Transform):
    """y = tanh(x) (the stable form of Affine(0, 2), Sigmoid, Affine(-1, 2)). Use ``cache_size=1`` where samples
    reach +-1, whose inverse is infinite.

    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return atanh(y)

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) written without cancellation: 2 (log 2 - x - softplus(-2x))
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(Transform):
    """y = |x| (not injective: the inverse picks the non-negative root).

    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale * x, pointwise.

    :param loc: Tensors or numbers.
    :param scale: Tensors or numbers.
    :param event_dim: the size of the event shape (0: univariate, 1: vectors, ...), summed over in
        ``log_abs_det_jacobian``.

    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    bijective = True

    def __init__(self, loc, scale, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.real if self.event_dim == 0 else constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.real if self.event_dim == 0 else constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, Number) and isinstance(b, Number):
                if a != b:
                    return False
            elif not bool((a == b).all()):
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, Number):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, Number):
            result = full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self.event_dim:
            result = result.reshape(tuple(result.shape[:-self.event_dim]) + (-1,)).sum(-1)
            shape = shape[:-self.event_dim]
        return result.expand(*shape)

    def forward_shape(self, shape):
        return broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                tuple(getattr(self.scale, "shape", ())))

    inverse_shape = forward_shape


class CorrCholeskyTransform(Transform):
    """An unconstrained vector of length D(D-1)/2 -> the Cholesky factor of a D x D correlation matrix (lower
    triangular, positive diagonal, rows of unit length): the vector fills the strict lower triangle row by row,
    each entry goes through tanh into (-1, 1), and each row is made of unit length by a signed stick-breaking
    (y_ij = r_ij sqrt(1 - sum_{k<j} y_ik^2)).

    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = finfo_eps(x.dtype)
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        remaining = (1 - r * r).sqrt().cumprod(-1)  # sqrt of the stick left after each entry of a row
        r = r + eye(r.shape[-1], dtype=r.dtype)
        return r * pad(remaining[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        left = 1 - (y * y).cumsum(dim=-1)
        left_before = pad(left[..., :-1], [1, 0], value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left_before, diag=-1).sqrt()
        return (t.log1p() - (-t).log1p()) / 2  # atanh

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        # the stick-breaking part: 1/2 sum log(stick left) over the entries below the subdiagonal;
        # the tanh part: log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x))
        left = tril_matrix_to_vec(1 - (y * y).cumsum(dim=-1), diag=-2)
        stick_breaking = 0.5 * left.log().sum(-1)
        tanh_part = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking + tanh_part

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return Size(tuple(shape[:-2]) + (d * (d - 1) // 2,))


def _at_least_one_dim(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")
    return shape


class SoftmaxTransform(Transform):
    """Unconstrained vectors -> the simplex: exp, then normalise. Not bijective (the inverse returns log y, one of
    the preimages); coordinate-wise, so suited to coordinate-wise optimisation.

    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        probs = (x - x.amax(-1, keepdim=True)).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        return _at_least_one_dim(shape)

    inverse_shape = forward_shape


class StickBreakingTransform(Transform):
    """Unconstrained vectors of length K -> the simplex of K + 1 entries, by stick-breaking: each logit (shifted by
    log of the entries left, so that zero maps to the centre) takes a sigmoid fraction of the stick that remains.
    Bijective (suited to HMC); it mixes the coordinates.

    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _log_offset(x, n):
        """log(K + 1 - k) for k = 1..K (K = n): the shift that makes x = 0 the uniform point of the simplex."""
        return (n + 1 - x.new_ones(n).cumsum(-1)).log()

    def _call(self, x):
        z = _clipped_sigmoid(x - self._log_offset(x, x.shape[-1]))
        z_cumprod = (1 - z).cumprod(-1)
        return pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        left = (1 - y_crop.cumsum(-1)).clamp(min=finfo_tiny(y.dtype))
        return y_crop.log() - left.log() + (y.shape[-1] - y.new_ones(y_crop.shape[-1]).cumsum(-1)).log()

    def log_abs_det_jacobian(self, x, y):
        x = x - self._log_offset(x, x.shape[-1])
        return (-x + logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        shape = _at_least_one_dim(shape)
        return Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        shape = _at_least_one_dim(shape)
        return Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(Transform):
    """Unconstrained square matrices -> lower-triangular matrices with a positive diagonal (the strict lower
    triangle kept, the diagonal exponentiated).

    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Unconstrained square matrices -> positive-definite ones: L L^T with L from ``LowerCholeskyTransform``.

    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(cholesky(y))


class CumulativeDistributionTransform(Transform):
    """y = F(x), the cumulative distribution function of ``distribution`` (its support -> [0, 1]); a copula
    from a multivariate base distribution, for instance.

    :param distribution: the distribution whose CDF is the transform.
    :param cache_size: 0 (no cache) or 1 (remember the last ``(x, y)`` pair, so ``inv(t(x))`` returns ``x`` itself).
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size: int = 0) -> None:
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
