"""A denoising diffusion probabilistic model (Ho, Jain & Abbeel, 2020) for small flat data such as the bundled 8x8
digits: the forward process adds Gaussian noise over ``timesteps`` steps of a linear beta schedule, a network
``eps_model(x_t, t)`` learns to predict the noise that was added (the paper's simplified loss, its Algorithm 1), and
ancestral sampling (Algorithm 2) turns pure noise into data one step at a time.

The noise-prediction network here is an MLP with residual blocks, each conditioned on a sinusoidal embedding of the
timestep (the Transformer's position encoding, as in the paper's U-Net), which suits 64-pixel images on a CPU."""
from __future__ import annotations

import math

import lucid

from .. import nn
from ..nn import functional as F


def timestep_embedding(t, dim: int, max_period: float = 10000.0):
    """The sinusoidal embedding (N, dim) of integer timesteps t (N,): ``[sin(t w_0), ..., sin(t w_{h-1}), cos(t w_0),
    ..., cos(t w_{h-1})]`` with h = dim // 2 and frequencies w_i = max_period^(-i/h) from 1 down to nearly
    1/max_period (Vaswani et al.'s position encoding, used for the timestep by Ho et al.). ``dim`` must be even."""
    if dim % 2:
        raise ValueError(f"the timestep embedding needs an even dim, got {dim}")
    half = dim // 2
    freqs = lucid.exp(lucid.arange(half, dtype=lucid.float32) * (-math.log(max_period) / half))
    angles = t.float()[:, None] * freqs[None, :]
    return lucid.cat([lucid.sin(angles), lucid.cos(angles)], dim=1)


class ResidualBlock(nn.Module):
    """h + fc2(SiLU(fc1(SiLU(norm(h))) + temb(t_emb))): a pre-norm residual MLP block told the timestep."""

    def __init__(self, hidden_dim: int, time_dim: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden_dim)
        self.fc1 = nn.Linear(hidden_dim, hidden_dim)
        self.temb = nn.Linear(time_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, hidden_dim)

    def forward(self, h, t_emb):
        return h + self.fc2(F.silu(self.fc1(F.silu(self.norm(h))) + self.temb(t_emb)))


class NoiseMLP(nn.Module):
    """The noise-prediction network: x_t (N, input_dim) and timesteps t (N,) -> the predicted noise (N, input_dim).

    ``time_mlp`` (Linear, SiLU, Linear) maps the sinusoidal embedding of t to ``time_dim`` features; ``inp`` lifts
    x_t to ``hidden_dim``; ``blocks`` are ``depth`` ``ResidualBlock``s; ``out`` (LayerNorm, SiLU, Linear) projects
    back to ``input_dim``."""

    def __init__(self, input_dim: int = 64, hidden_dim: int = 256, time_dim: int = 64, depth: int = 3):
        super().__init__()
        if time_dim % 2:
            raise ValueError(f"the timestep embedding needs an even time_dim, got {time_dim}")
        self.time_dim = time_dim
        self.time_mlp = nn.Sequential(nn.Linear(time_dim, time_dim), nn.SiLU(), nn.Linear(time_dim, time_dim))
        self.inp = nn.Linear(input_dim, hidden_dim)
        self.blocks = nn.ModuleList([ResidualBlock(hidden_dim, time_dim) for _ in range(depth)])
        self.out = nn.Sequential(nn.LayerNorm(hidden_dim), nn.SiLU(), nn.Linear(hidden_dim, input_dim))

    def forward(self, x, t):
        t_emb = self.time_mlp(timestep_embedding(t, self.time_dim))
        h = self.inp(x)
        for block in self.blocks:
            h = block(h, t_emb)
        return self.out(h)


class DDPM(nn.Module):
    """A DDPM over data of ``input_dim`` values scaled to [-1, 1], with a ``NoiseMLP`` as ``eps_model``.

    The schedule: beta_t rising linearly from ``beta_start`` to ``beta_end`` over t = 1..``timesteps`` (Ho et al.:
    1e-4 to 0.02 over 1000 steps; for fewer steps scale both by 1000 / timesteps, as Nichol & Dhariwal do, so that
    the last step is still nearly pure noise); alpha_t = 1 - beta_t and abar_t their running product. The schedule is
    held in non-persistent buffers (it follows from the constructor's arguments), so the state_dict holds the
    network's weights alone, under ``eps_model.``. Timesteps are 0-based here: index t stands for the paper's t+1.

    ``loss(x0)`` is the simplified objective ||eps - eps_model(sqrt(abar_t) x0 + sqrt(1 - abar_t) eps, t)||^2 (mean
    over the batch and the values) at uniform random t; ``sample(n)`` is ancestral sampling with sigma_t^2 the
    posterior variance beta_t (1 - abar_{t-1}) / (1 - abar_t).

    :param input_dim: the data's size (64 for the 8x8 digits).
    :param hidden_dim: the noise network's width.
    :param time_dim: the timestep embedding's width.
    :param depth: the residual blocks.
    :param timesteps: the diffusion steps T.
    :param beta_start: the noise schedule's first variance.
    :param beta_end: its last variance.
    """

    def __init__(self, input_dim: int = 64, hidden_dim: int = 256, time_dim: int = 64, depth: int = 3,
                 timesteps: int = 1000, beta_start: float = 1e-4, beta_end: float = 0.02):
        super().__init__()
        if timesteps < 1:
            raise ValueError(f"timesteps must be at least 1, got {timesteps}")
        if not 0 < beta_start <= beta_end < 1:
            raise ValueError(f"the betas need 0 < beta_start <= beta_end < 1, got {beta_start} and {beta_end}")
        self.input_dim, self.timesteps = input_dim, timesteps
        self.eps_model = NoiseMLP(input_dim, hidden_dim, time_dim, depth)
        betas = lucid.linspace(beta_start, beta_end, timesteps, dtype=lucid.float64)
        abar = lucid.cumprod(1.0 - betas, 0)
        abar_prev = lucid.cat([lucid.ones(1, dtype=lucid.float64), abar[:-1]])
        # computed in float64 and stored in float32: abar_t falls to ~4e-5, where float32 running products drift
        schedule = {"betas": betas, "sqrt_abar": abar.sqrt(), "sqrt_one_minus_abar": (1.0 - abar).sqrt(),
                    "sqrt_recip_alphas": (1.0 - betas).rsqrt(),
                    "posterior_std": (betas * (1.0 - abar_prev) / (1.0 - abar)).sqrt()}
        for name, value in schedule.items():
            self.register_buffer(name, value.float(), persistent=False)

    def forward(self, x, t):
        """The predicted noise eps_model(x_t, t), (N, input_dim)."""
        return self.eps_model(x, t)

    def q_sample(self, x0, t, noise):
        """x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) noise: x0 (N, input_dim) noised to timesteps t (N,)."""
        return self.sqrt_abar[t][:, None] * x0 + self.sqrt_one_minus_abar[t][:, None] * noise

    def loss(self, x0, t=None, noise=None):
        """The mean squared error of the predicted noise (Algorithm 1's loss) for data x0 (N, input_dim), at
        timesteps t (N,) and noise (N, input_dim) drawn from lucid's generator where not given."""
        if t is None:
            t = lucid.randint(0, self.timesteps, (x0.shape[0],))
        if noise is None:
            noise = lucid.randn_like(x0)
        return F.mse_loss(self(self.q_sample(x0, t, noise), t), noise)

    @lucid.no_grad()
    def sample(self, n: int):
        """n samples (n, input_dim) by ancestral sampling from x_T ~ N(0, I) (Algorithm 2), clipped to [-1, 1]."""
        x = lucid.randn(n, self.input_dim)
        for step in reversed(range(self.timesteps)):
            t = lucid.full((n,), step, dtype=lucid.int64)
            eps = self(x, t)
            x = self.sqrt_recip_alphas[step] * (x - self.betas[step] / self.sqrt_one_minus_abar[step] * eps)
            if step > 0:
                x = x + self.posterior_std[step] * lucid.randn_like(x)
        return x.clamp(-1.0, 1.0)


def ddpm(input_dim: int = 64, hidden_dim: int = 256, time_dim: int = 64, depth: int = 3, timesteps: int = 1000,
         beta_start: float = 1e-4, beta_end: float = 0.02) -> DDPM:
    """A ``DDPM``; the schedule's defaults are Ho et al.'s (1000 steps, betas 1e-4 to 0.02).

    :param input_dim: the data's size (64 for the 8x8 digits).
    :param hidden_dim: the noise network's width.
    :param time_dim: the timestep embedding's width.
    :param depth: the residual blocks.
    :param timesteps: the diffusion steps T.
    :param beta_start: the noise schedule's first variance.
    :param beta_end: its last variance.
    """
    return DDPM(input_dim, hidden_dim, time_dim, depth, timesteps, beta_start, beta_end)
