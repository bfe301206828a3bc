"""Likelihood-based generative models: realnvp (a RealNVP flow on 2-D two-moons, trained by maximum likelihood
through ``lucid.distributions.TransformedDistribution``; the figure is its learned density and samples over the
data, density.png) and ddpm (a DDPM on the bundled 8x8 digits; the figure is a grid of generated digits,
samples.png, scored by the pixel Fréchet distance of the other digit generators in ``generative``)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import lucid

from ... import models
from .. import figures
from .base import Recipe
from .generative import DigitsGenerator


class RealNVP(Recipe):
    supports_amp = False  # log-densities (log-scales summed over the layers) are kept in float32: no --amp
    name = "realnvp"
    summary = "RealNVP normalizing flow (8 affine couplings) on 2-D two-moons, by maximum likelihood"
    data = "generated two-moons (make_moons, noise 0.05): 4000 train + 2000 test points"
    target = "test NLL <= 0.6 nats per point (a Gaussian fit: 1.89)"
    metric = "test_nll"
    higher_is_better = False
    figure = "density.png"
    steps = 2000
    batch_size = 256
    lr = 1e-3
    eval_every = 500
    n_train, n_test, noise = 4000, 2000, 0.05

    def default_config(self) -> dict:
        return {"dim": 2, "hidden_dim": 64, "num_couplings": 8}

    def load_data(self) -> None:
        points, _ = lucid.datasets.make_moons(self.n_train + self.n_test, noise=self.noise, seed=self.seed)
        self.train_points, self.test_points = points[:self.n_train], points[self.n_train:]
        self.train_examples = self.n_train
        self.steps_per_epoch = self.n_train // self.batch_size
        # the baseline: the maximum-likelihood Gaussian of the training points, scored on the test points
        train, test = self.train_points.numpy().astype(np.float64), self.test_points.numpy().astype(np.float64)
        mean, cov = train.mean(0), np.cov(train, rowvar=False, bias=True)
        d = test - mean
        mahalanobis = np.einsum("ni,ij,nj->n", d, np.linalg.inv(cov), d)
        self.gaussian_nll = float(0.5 * (mahalanobis.mean() + np.linalg.slogdet(2 * np.pi * cov)[1]))

    def build(self) -> dict:
        return {"model": models.realnvp(**self.config)}

    def batch(self, step: int) -> tuple:
        return (self.train_points[lucid.tensor(self.epoch_indices(step, self.n_train))],)

    def nll(self, x):
        """The mean negative log-likelihood of the points x (N, 2), in nats."""
        return -self.model.log_prob(x).mean()

    def train_step(self, x) -> dict:
        return self.simple_step(self.nll, x)

    def evaluate(self) -> dict[str, float]:
        with lucid.no_grad():
            nll = self.nll(self.test_points).item()
        return {"test_nll": nll, "test_nll_gaussian_fit": self.gaussian_nll}

    def draw(self, plt, out: Path, num: int = 2000) -> None:
        nll = self.evaluate()["test_nll"]
        (x0, x1), (y0, y1) = (-1.5, 2.5), (-1.0, 1.5)
        xs, ys = np.linspace(x0, x1, 200), np.linspace(y0, y1, 125)
        grid = np.stack(np.meshgrid(xs, ys), axis=-1).reshape(-1, 2).astype(np.float32)
        with lucid.no_grad():
            density = self.model.log_prob(lucid.tensor(grid)).exp().numpy().reshape(len(ys), len(xs))
            samples = self.model.sample(num).numpy()
        test = self.test_points.numpy()
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), layout="constrained")
        im = axes[0].imshow(density, origin="lower", extent=(x0, x1, y0, y1), cmap="magma", aspect="equal")
        fig.colorbar(im, ax=axes[0], shrink=0.8, label="p(x)")
        axes[0].set_title(f"learned density (test NLL {nll:.3f} nats; a Gaussian fit: {self.gaussian_nll:.3f})")
        axes[1].scatter(test[:, 0], test[:, 1], s=3, color="tab:blue", alpha=0.4, label=f"{len(test)} test points")
        axes[1].scatter(samples[:, 0], samples[:, 1], s=3, color="tab:orange", alpha=0.6,
                        label=f"{num} samples of the flow")
        axes[1].set(xlim=(x0, x1), ylim=(y0, y1), aspect="equal", title="samples over the data")
        axes[1].legend(loc="lower left", markerscale=4, fontsize=8)
        for ax in axes:
            ax.set_xlabel("$x_1$")
            ax.set_ylabel("$x_2$")
        fig.suptitle(f"lucid train realnvp: {self.config['num_couplings']} affine coupling layers on two-moons")
        figures.save(fig, out / self.figure)


class DDPM(DigitsGenerator):
    name = "ddpm"
    summary = "DDPM (Ho et al.; residual-MLP noise predictor, 100 steps) on the bundled 8x8 digits"
    target = "pixel Frechet distance to the test digits <= 1"
    steps = 2000
    lr = 2e-3
    batch_size = 128
    eval_every = 1000
    half_life = 1000  # steps in which the learning rate halves (the samples settle as it falls)

    def default_config(self) -> dict:
        # Ho et al.'s linear schedule (1e-4 to 0.02 over 1000 steps) rescaled to 100 steps: 10x fewer network
        # evaluations per sample, with the same noise level at the end
        return {"input_dim": 64, "hidden_dim": 128, "time_dim": 64, "depth": 3, "timesteps": 100,
                "beta_start": 1e-3, "beta_end": 0.2}

    def build(self) -> dict:
        return {"model": models.ddpm(**self.config)}

    def make_schedulers(self, optimizers: dict) -> dict:
        gamma = 0.5 ** (1 / self.half_life)
        return {"scheduler": lucid.optim.lr_scheduler.ExponentialLR(optimizers["optimizer"], gamma)}

    def noised(self, pixels: np.ndarray, seed) -> tuple:
        """Digits (n, 64) in [0, 1] scaled to [-1, 1], with uniform random timesteps and Gaussian noise from
        ``seed``: the inputs of the denoising loss."""
        rng = np.random.default_rng(seed)
        t = rng.integers(0, self.config["timesteps"], len(pixels))
        noise = rng.standard_normal(pixels.shape, dtype=np.float32)
        return lucid.tensor(pixels * 2.0 - 1.0), lucid.tensor(t), lucid.tensor(noise)

    def batch(self, step: int) -> tuple:
        return self.noised(self.train_pixels[self.epoch_indices(step, len(self.train_pixels))], (self.seed, step, 1))

    def train_step(self, x0, t, noise) -> dict:
        return self.simple_step(self.model.loss, x0, t, noise)

    def evaluate(self) -> dict[str, float]:
        with lucid.no_grad():  # the denoising loss on the test digits, at timesteps and noise fixed by the seed
            test_loss = self.model.loss(*self.noised(self.test_pixels, (self.seed, 1 << 40))).item()
        return {**super().evaluate(), "test_loss": test_loss}

    def generate(self, n: int) -> np.ndarray:
        return (self.model.sample(n).numpy() + 1.0) / 2.0


RECIPES = [RealNVP, DDPM]
