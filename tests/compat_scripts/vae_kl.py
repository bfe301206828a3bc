"""A VAE written for PyTorch with ``torch.distributions``: the encoder gives q(z|x) = Independent(Normal(mu,
sigma), 1), the decoder p(x|z) = Independent(Bernoulli(logits), 1), the prior N(0, I); the loss is the negative
ELBO, E_q[-log p(x|z)] + KL(q || prior) by ``kl_divergence``, with z from ``rsample``.

With ``--same-noise 1`` the noise comes from numpy (z = loc + scale * eps) so that PyTorch and lucid draw the same."""
import numpy as np
import torch
import torch.distributions as D
from torch import nn

from _common import options, report, start_from

PIXELS, LATENT = 16, 3


def bars(n: int, rng) -> np.ndarray:
    """4 x 4 images, each lighting one random row or column (eight patterns)."""
    images = np.zeros((n, 4, 4), dtype=np.float32)
    which = rng.integers(0, 8, size=n)
    for i, k in enumerate(which):
        if k < 4:
            images[i, k, :] = 1
        else:
            images[i, :, k - 4] = 1
    return images.reshape(n, PIXELS)


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(PIXELS, 32), nn.ReLU(), nn.Linear(32, 2 * LATENT))
        self.decoder = nn.Sequential(nn.Linear(LATENT, 32), nn.ReLU(), nn.Linear(32, PIXELS))

    def posterior(self, x):
        mu, log_sigma = self.encoder(x).chunk(2, dim=-1)
        return D.Independent(D.Normal(mu, log_sigma.exp()), 1)

    def likelihood(self, z):
        return D.Independent(D.Bernoulli(logits=self.decoder(z)), 1)


def main():
    args = options(steps=25, same_noise=0)
    torch.manual_seed(0)
    model = VAE()
    start_from(args, model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    data = torch.from_numpy(bars(64, rng))
    prior = D.Independent(D.Normal(torch.zeros(LATENT), torch.ones(LATENT)), 1)
    losses, kls = [], []
    for _ in range(args.steps):
        q = model.posterior(data)
        if args.same_noise:
            eps = torch.from_numpy(rng.standard_normal((64, LATENT)).astype(np.float32))
            z = q.base_dist.loc + q.base_dist.scale * eps
        else:
            z = q.rsample()
        kl = D.kl_divergence(q, prior)
        loss = (-model.likelihood(z).log_prob(data) + kl).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        kls.append(kl.mean().item())
    with torch.no_grad():
        sample = model.likelihood(prior.sample((8,))).mean
    assert sample.shape == (8, PIXELS) and bool(((sample >= 0) & (sample <= 1)).all())
    print(f"negative ELBO {losses[0]:.2f} -> {losses[-1]:.2f}, KL {kls[-1]:.2f}")
    report(args, losses=losses, kl=kls)


if __name__ == "__main__":
    main()
