"""A normalizing flow written for PyTorch: a RealNVP (affine coupling layers, a custom ``Transform``) on 2-D two
moons, trained by maximum likelihood through ``TransformedDistribution``, and a logistic distribution built as
``Uniform`` pushed through ``SigmoidTransform().inv`` and a learnable ``AffineTransform``."""
import numpy as np
import torch
import torch.distributions as D
from torch import nn
from torch.distributions import constraints
from torch.distributions.transforms import AffineTransform, SigmoidTransform, Transform

from _common import options, report, start_from

rng = np.random.default_rng(0)


def two_moons(n: int) -> np.ndarray:
    """Two interleaved half circles with a little noise."""
    t = rng.uniform(0, np.pi, size=n)
    upper = rng.uniform(size=n) < 0.5
    x = np.where(upper, np.cos(t), 1 - np.cos(t))
    y = np.where(upper, np.sin(t), 0.5 - np.sin(t))
    return (np.stack([x, y], 1) + rng.normal(scale=0.05, size=(n, 2))).astype(np.float32)


class AffineCoupling(Transform):
    """RealNVP's coupling layer: the masked coordinates pass through and set a scale and shift for the others."""

    domain = constraints.real_vector
    codomain = constraints.real_vector
    bijective = True

    def __init__(self, net: nn.Module, mask: torch.Tensor):
        super().__init__()
        self.net, self.mask = net, mask

    def _scale_shift(self, x):
        s, t = self.net(x * self.mask).chunk(2, dim=-1)
        return torch.tanh(s) * (1 - self.mask), t * (1 - self.mask)

    def _call(self, x):
        s, t = self._scale_shift(x)
        return x * torch.exp(s) + t

    def _inverse(self, y):
        s, t = self._scale_shift(y)
        return (y - t) * torch.exp(-s)

    def log_abs_det_jacobian(self, x, y):
        s, _ = self._scale_shift(x)
        return s.sum(-1)


def coupling_net() -> nn.Module:
    return nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 4))


def main():
    args = options(steps=20)
    torch.manual_seed(0)
    nets = nn.ModuleList([coupling_net() for _ in range(4)])
    start_from(args, nets)
    masks = [torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])] * 2
    base = D.Independent(D.Normal(torch.zeros(2), torch.ones(2)), 1)
    flow = D.TransformedDistribution(base, [AffineCoupling(net, m) for net, m in zip(nets, masks)])
    opt = torch.optim.Adam(nets.parameters(), lr=3e-3)
    data = torch.from_numpy(two_moons(256))
    losses = []
    for _ in range(args.steps):
        loss = -flow.log_prob(data).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    probe = torch.tensor([[0.0, 0.5], [1.0, 0.0], [-1.0, 1.0]])
    with torch.no_grad():
        probe_log_prob = flow.log_prob(probe).tolist()
        samples = flow.sample((256,))
    assert samples.shape == (256, 2) and bool(torch.isfinite(samples).all())

    # a logistic distribution: U ~ Uniform(0, 1), logit(U) * scale + loc, fitted by maximum likelihood
    loc = torch.zeros(1, requires_grad=True)
    log_scale = torch.zeros(1, requires_grad=True)
    target = torch.from_numpy(rng.logistic(loc=1.5, scale=0.5, size=256).astype(np.float32)).unsqueeze(-1)
    logistic_opt = torch.optim.SGD([loc, log_scale], lr=0.1)
    logistic_losses = []
    for _ in range(args.steps):
        logistic = D.TransformedDistribution(D.Uniform(torch.zeros(1), torch.ones(1)),
                                             [SigmoidTransform().inv, AffineTransform(loc, log_scale.exp())])
        loss = -logistic.log_prob(target).mean()
        logistic_opt.zero_grad()
        loss.backward()
        logistic_opt.step()
        logistic_losses.append(loss.item())
    print(f"flow nll {losses[0]:.3f} -> {losses[-1]:.3f}; logistic loc {loc.item():.3f} "
          f"scale {log_scale.exp().item():.3f}")
    report(args, losses=[losses, logistic_losses], probe_log_prob=probe_log_prob, loc=loc.item(),
           scale=log_scale.exp().item())


if __name__ == "__main__":
    main()
