"""A denoising diffusion model (Ho et al., 2020) on 2-D points, in the form of the tiny-diffusion tutorials: a linear
beta schedule whose alphas_cumprod comes from torch.cumprod(alphas, axis=0), an MLP of three hidden layers of 64
with a sinusoidal timestep embedding predicting the noise, Adam on the MSE, then ancestral sampling with the
posterior variance clipped away from zero. The data: two moons made with numpy.

With ``--same-noise 1`` the timesteps and noise come from numpy so that PyTorch and lucid draw the same."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from _common import options, report, start_from


def two_moons(n, rng, noise=0.05):
    angle = rng.random(n) * math.pi
    upper = rng.random(n) < 0.5
    x = np.where(upper, np.cos(angle), 1 - np.cos(angle))
    y = np.where(upper, np.sin(angle), 0.5 - np.sin(angle))
    points = np.stack([x, y], 1) + noise * rng.standard_normal((n, 2))
    return ((points - points.mean(0)) / points.std(0)).astype(np.float32)


class SinusoidalEmbedding(nn.Module):
    def __init__(self, dim, scale=25.0):
        super().__init__()
        self.dim, self.scale = dim, scale

    def forward(self, t):
        half = self.dim // 2
        freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / (half - 1))
        angles = self.scale * t.float().unsqueeze(-1) * freqs.unsqueeze(0)
        return torch.cat((torch.sin(angles), torch.cos(angles)), dim=-1)


class Denoiser(nn.Module):
    def __init__(self, hidden=64, emb=32, num_timesteps=50):
        super().__init__()
        self.num_timesteps = num_timesteps
        self.time_emb = SinusoidalEmbedding(emb)
        self.net = nn.Sequential(nn.Linear(2 + emb, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.GELU(),
                                 nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, 2))

    def forward(self, x, t):
        return self.net(torch.cat((x, self.time_emb(t / self.num_timesteps)), dim=-1))


class NoiseScheduler:
    def __init__(self, num_timesteps=50, beta_start=1e-4, beta_end=0.02):
        self.num_timesteps = num_timesteps
        self.betas = torch.linspace(beta_start, beta_end, num_timesteps, dtype=torch.float32)
        self.alphas = 1.0 - self.betas
        self.alphas_cumprod = torch.cumprod(self.alphas, axis=0)
        self.alphas_cumprod_prev = F.pad(self.alphas_cumprod[:-1], (1, 0), value=1.0)
        self.sqrt_alphas_cumprod = self.alphas_cumprod ** 0.5
        self.sqrt_one_minus_alphas_cumprod = (1 - self.alphas_cumprod) ** 0.5
        self.posterior_variance = self.betas * (1.0 - self.alphas_cumprod_prev) / (1.0 - self.alphas_cumprod)

    def add_noise(self, x_start, noise, t):
        s1 = self.sqrt_alphas_cumprod[t].reshape(-1, 1)
        s2 = self.sqrt_one_minus_alphas_cumprod[t].reshape(-1, 1)
        return s1 * x_start + s2 * noise

    def step(self, model_output, t, sample, noise):
        """x_{t-1} from x_t: the posterior mean from the predicted noise, plus sigma_t z except at t = 0."""
        x0 = (sample - self.sqrt_one_minus_alphas_cumprod[t] * model_output) / self.sqrt_alphas_cumprod[t]
        x0 = x0.clamp(-3.0, 3.0)  # keep the predicted clean point in the data's range
        coef1 = self.betas[t] * self.alphas_cumprod_prev[t] ** 0.5 / (1.0 - self.alphas_cumprod[t])
        coef2 = (1.0 - self.alphas_cumprod_prev[t]) * self.alphas[t] ** 0.5 / (1.0 - self.alphas_cumprod[t])
        mean = coef1 * x0 + coef2 * sample
        if t == 0:
            return mean
        variance = torch.clip(self.posterior_variance[t], 1e-20)  # the log-variance form needs it non-zero
        return mean + variance ** 0.5 * noise


def main():
    args = options(steps=20, batch_size=32, num_timesteps=50, samples=64, same_noise=0)
    rng = np.random.default_rng(0)
    data = torch.from_numpy(two_moons(args.batch_size * args.steps, rng))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data), batch_size=args.batch_size)
    torch.manual_seed(0)
    model = Denoiser(num_timesteps=args.num_timesteps)
    start_from(args, model)
    scheduler = NoiseScheduler(args.num_timesteps)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    model.train()
    for (batch,) in loader:
        if args.same_noise:
            noise = torch.from_numpy(rng.standard_normal(batch.shape).astype(np.float32))
            timesteps = torch.from_numpy(rng.integers(0, args.num_timesteps, len(batch)))
        else:
            noise = torch.randn(batch.shape)
            timesteps = torch.randint(0, args.num_timesteps, (batch.shape[0],)).long()
        noisy = scheduler.add_noise(batch, noise, timesteps)
        loss = F.mse_loss(model(noisy, timesteps), noise)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    draw = (lambda *shape: torch.from_numpy(rng.standard_normal(shape).astype(np.float32))) if args.same_noise \
        else (lambda *shape: torch.randn(*shape))
    sample = draw(args.samples, 2)
    with torch.no_grad():
        for t in reversed(range(args.num_timesteps)):
            timesteps = torch.full((args.samples,), t, dtype=torch.long)
            sample = scheduler.step(model(sample, timesteps), t, sample, draw(args.samples, 2))
    assert sample.shape == (args.samples, 2) and bool(torch.isfinite(sample).all())
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}; samples' mean {sample.mean(0).tolist()}")
    report(args, losses=losses, alphas_cumprod_last=scheduler.alphas_cumprod[-1].item(),
           sample_mean=sample.mean(0).tolist(), sample_std=sample.std(0).tolist())


if __name__ == "__main__":
    main()
