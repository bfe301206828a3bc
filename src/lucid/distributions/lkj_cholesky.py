"""``LKJCholesky(dim, concentration)``: the LKJ distribution over correlation matrices, given by their lower
Cholesky factors (Lewandowski, Kurowicka and Joe, 2009), sampled by the onion method."""
from __future__ import annotations

__all__ = ["LKJCholesky"]

import math

from .._creation import arange
from .._tensor import Size
from ..ops.linalg import diag_embed
from ..ops.shape import cat
from ..special import gammaln, multigammaln
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all, finfo_tiny, standard_normal


class LKJCholesky(Distribution):
    """The Cholesky factor L of a correlation matrix L L^T with density proportional to det(L L^T)^(eta - 1)
    (``concentration`` = eta > 0; eta = 1 is uniform over correlation matrices). Event shape (dim, dim).

    :param dim: the size of the matrices.
    :param concentration: eta (> 0): 1 is uniform over correlation matrices.
    :param validate_args: check the parameters (and later ``log_prob``'s values) against their constraints, raising
        PyTorch's ValueError; default ``Distribution._validate_args`` (True unless
        ``set_default_validate_args(False)``).
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args=None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # the onion method: row i of L is sqrt(y_i) times a uniform direction in its first i coordinates, with
        # y_i ~ Beta(i / 2, eta + (dim - 1 - i) / 2); row 0 is (1, 0, ...) and its Beta a placeholder. (PyTorch
        # 2.13 draws y_i ~ Beta(i - 1/2, ...), which for dim > 2 gives the later rows too much correlation.)
        marginal = self.concentration + 0.5 * (dim - 2)
        offset = arange(dim - 1, dtype=self.concentration.dtype)
        offset = cat([offset.new_zeros((1,)), offset])  # i - 1 for row i >= 1
        self._beta = Beta(0.5 * (offset + 1), marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.shape, (dim, dim), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(tuple(batch_shape))
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u = standard_normal(self._extended_shape(sample_shape), y.dtype).tril(-1)
        direction = u / u.norm(dim=-1, keepdim=True)
        # the first row has no coordinates below the diagonal: its direction is 0 (its norm was 0, the ratio NaN)
        row = arange(self.dim).reshape(self.dim, 1)
        direction = direction.masked_fill(row == 0, 0.0)
        w = y.sqrt() * direction
        diag = (1 - w.pow(2).sum(-1)).clamp(min=finfo_tiny(w.dtype)).sqrt()
        return w + diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - arange(2, self.dim + 1,
                                                                              dtype=value.dtype)
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = 0.5 * dm1 * math.log(math.pi) + multigammaln(alpha - 0.5, dm1) - gammaln(alpha) * dm1
        return unnormalized - normalizer
