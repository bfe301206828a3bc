"""RealNVP (Dinh, Sohl-Dickstein & Bengio, 2017): a normalizing flow of affine coupling layers, for vectors of a
few dimensions (such as 2-D two-moons points).

Each coupling layer keeps the features its binary ``mask`` selects and transforms the others by an affine map
whose log-scale s and shift t are computed from the kept ones:

    y = mask * x + (1 - mask) * (x * exp(s(mask * x)) + t(mask * x)),   log |det dy/dx| = sum((1 - mask) * s)

so it inverts in closed form and its Jacobian is triangular. The masks alternate (the features that one layer
keeps the next transforms). The model is a ``TransformedDistribution`` of a standard normal base through the
coupling layers (as ``lucid.distributions.transforms.Transform``s): ``log_prob`` is exact and training is maximum
likelihood. The paper's batch normalization and multi-scale architecture (for images) are left out."""
from __future__ import annotations

import lucid

from .. import nn
from ..distributions import Independent, Normal, TransformedDistribution, constraints
from ..distributions.transforms import Transform


class AffineCoupling(nn.Module):
    """One coupling layer on vectors of ``dim`` features: ``net`` (an MLP, ``dim`` -> ``hidden_dim`` ->
    ``hidden_dim`` -> 2 ``dim``, ReLU) maps the kept features ``mask * x`` to the raw log-scale and the shift; the
    log-scale is ``scale * tanh(raw)`` with a learned per-feature ``scale`` (Dinh et al.'s bounded scale, which
    keeps early training stable). ``net``'s last layer starts at zero, so the layer starts as the identity.

    ``forward(x)`` returns ``(y, log_det)`` and ``inverse(y)`` returns ``(x, log_det)``, each ``log_det`` (N,) the
    log |det| of the forward map's Jacobian (at that pair)."""

    def __init__(self, mask, hidden_dim: int = 64):
        super().__init__()
        dim = mask.shape[0]
        self.register_buffer("mask", mask.float(), persistent=False)  # follows from the layer's place
        self.net = nn.Sequential(nn.Linear(dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, hidden_dim), nn.ReLU(),
                                 nn.Linear(hidden_dim, 2 * dim))
        nn.init.zeros_(self.net[-1].weight)
        nn.init.zeros_(self.net[-1].bias)
        self.scale = nn.Parameter(lucid.ones(dim))

    def log_scale_and_shift(self, kept):
        """(s, t), each (N, dim) and zero on the kept features, from the kept features ``mask * x``."""
        raw_s, t = self.net(kept).chunk(2, dim=-1)
        free = 1.0 - self.mask
        return free * self.scale * lucid.tanh(raw_s), free * t

    def forward(self, x):
        s, t = self.log_scale_and_shift(self.mask * x)
        return x * lucid.exp(s) + t, s.sum(-1)

    def inverse(self, y):
        s, t = self.log_scale_and_shift(self.mask * y)
        return (y - t) * lucid.exp(-s), s.sum(-1)


class AffineCouplingTransform(Transform):
    """An ``AffineCoupling`` layer as a bijective ``Transform`` of real vectors (event_dim 1), so that a
    ``TransformedDistribution`` can push a base distribution through it. The layer computes log |det J| together
    with the image, so the transform keeps it for the pair it just computed and ``log_abs_det_jacobian`` of that
    pair costs nothing (another pair runs the layer again)."""

    domain = constraints.real_vector
    codomain = constraints.real_vector
    bijective = True

    def __init__(self, coupling: AffineCoupling, cache_size: int = 0):
        super().__init__(cache_size=cache_size)
        self.coupling = coupling
        self._last = None  # (x, y, log_det) of the last pair computed

    def __getstate__(self):
        return {**super().__getstate__(), "_last": None}

    def _call(self, x):
        y, log_det = self.coupling(x)
        self._last = x, y, log_det
        return y

    def _inverse(self, y):
        x, log_det = self.coupling.inverse(y)
        self._last = x, y, log_det
        return x

    def log_abs_det_jacobian(self, x, y):
        if self._last is not None and self._last[0] is x and self._last[1] is y:
            return self._last[2]
        return self.coupling(x)[1]


class RealNVP(nn.Module):
    """A RealNVP density on vectors of ``dim`` features: ``num_couplings`` ``AffineCoupling`` layers (in
    ``couplings``, with hidden width ``hidden_dim``) over a standard normal base, the masks alternating between
    the features of even and of odd index.

    ``log_prob(x)`` (N, dim) -> (N,) is the exact log density; ``sample(n)`` draws (n, dim) without gradients;
    ``flow()`` is the ``TransformedDistribution`` both come from (``rsample`` for samples with gradients).
    ``forward(x)`` is ``log_prob(x)``.

    :param dim: the data's dimension.
    :param hidden_dim: the coupling networks' hidden width.
    :param num_couplings: the coupling layers (alternating masks).
    """

    def __init__(self, dim: int = 2, hidden_dim: int = 64, num_couplings: int = 8):
        super().__init__()
        if dim < 2:
            raise ValueError(f"a coupling layer needs at least 2 features, got dim={dim}")
        features = lucid.arange(dim)
        self.couplings = nn.ModuleList([AffineCoupling((features + i) % 2 == 0, hidden_dim)
                                        for i in range(num_couplings)])
        self.register_buffer("base_loc", lucid.zeros(dim), persistent=False)
        self.register_buffer("base_scale", lucid.ones(dim), persistent=False)

    def flow(self) -> TransformedDistribution:
        """The model as a distribution: N(0, I) pushed through the coupling layers in order."""
        base = Independent(Normal(self.base_loc, self.base_scale), 1)
        return TransformedDistribution(base, [AffineCouplingTransform(c) for c in self.couplings])

    def log_prob(self, x):
        return self.flow().log_prob(x)

    def forward(self, x):
        return self.log_prob(x)

    def sample(self, n: int):
        return self.flow().sample((n,))


def realnvp(dim: int = 2, hidden_dim: int = 64, num_couplings: int = 8) -> RealNVP:
    """A ``RealNVP`` flow (2-D by default, for two-moons).

    :param dim: the data's dimension.
    :param hidden_dim: the coupling networks' hidden width.
    :param num_couplings: the coupling layers (alternating masks).
    """
    return RealNVP(dim, hidden_dim, num_couplings)
