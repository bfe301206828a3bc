"""Generative models of the bundled 8x8 digits: vae (pytorch/examples' VAE on the 64 pixels scaled to [0, 1])
and dcgan (pytorch/examples' Generator/Discriminator at image_size 16: the digits are upscaled 2x by pixel
repetition and scaled to [-1, 1]). The figure is a grid of generated digits (samples.png).

Both report the Fréchet distance between generated digits and the held-out test digits in raw pixel space
(``test_pixel_fd``: FID's formula on the 64 pixel values instead of Inception features; 0 for identical
distributions; against the test digits, the train digits score 0.10, the mean digit repeated 4.8, uniform noise
10, blank images 15)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import lucid
import lucid.nn.functional as F

from ... import models
from .. import figures
from . import base
from .base import Recipe


def frechet_distance(a: np.ndarray, b: np.ndarray) -> float:
    """||mu_a - mu_b||^2 + tr(S_a + S_b - 2 (S_a S_b)^(1/2)) for samples a (n, d) and b (m, d)."""
    mu_a, mu_b = a.mean(0), b.mean(0)
    s_a, s_b = np.cov(a, rowvar=False), np.cov(b, rowvar=False)
    # tr((S_a S_b)^(1/2)) = sum of the square roots of the eigenvalues of S_a S_b (real and >= 0 in theory)
    eig = np.linalg.eigvals(s_a @ s_b)
    return float(((mu_a - mu_b) ** 2).sum() + np.trace(s_a) + np.trace(s_b)
                 - 2 * np.sqrt(np.clip(eig.real, 0, None)).sum())


class DigitsGenerator(Recipe):
    data = "bundled digits (1797 8x8, 80/20 split; pixels in [0, 1])"
    metric = "test_pixel_fd"
    higher_is_better = False
    figure = "samples.png"
    can_sample = True
    batch_size = 64
    n_eval = 1000  # generated digits per evaluation

    def load_data(self) -> None:
        digits = lucid.datasets.load_digits()
        pixels = digits.images.numpy().reshape(-1, 64) / 16.0
        train, test = base.split(len(pixels), 0.8, self.seed)
        self.train_pixels, self.test_pixels = pixels[train].astype(np.float32), pixels[test].astype(np.float32)
        self.train_examples = len(train)
        self.steps_per_epoch = len(train) // self.batch_size

    def generate(self, n: int) -> np.ndarray:
        """n generated digits, (n, 64) pixels in [0, 1]."""
        raise NotImplementedError

    def evaluate(self) -> dict[str, float]:
        return {"test_pixel_fd": frechet_distance(self.generate(self.n_eval).astype(np.float64),
                                                  self.test_pixels.astype(np.float64))}

    def draw(self, plt, out: Path, num: int = 64) -> None:
        fd = self.evaluate()["test_pixel_fd"]
        images = self.generate(num).reshape(-1, 1, 8, 8)
        figures.image_grid(plt, images, out / self.figure,
                           f"lucid train {self.name}: {num} generated digits\n"
                           f"(Fréchet distance of their pixels to the test digits' pixels: {fd:.2f})")

    def sample(self, out: Path, plt=None, num: int = 64, **options) -> str:
        if plt is None:
            raise self.usage_error(f"drawing samples.png needs matplotlib: {figures.INSTALL_HINT}")
        self.draw(plt, out, num)
        return f"wrote {num} generated digits to {out / self.figure}"

    @staticmethod
    def usage_error(message: str):
        from .base import UsageError
        return UsageError(message)


class VAE(DigitsGenerator):
    name = "vae"
    summary = "variational autoencoder (pytorch/examples VAE, 64-256-8) on the bundled 8x8 digits"
    target = "test negative ELBO <= 25 nats per digit"
    metric = "test_neg_elbo"
    steps = 2000
    lr = 1e-3
    eval_every = 500

    def default_config(self) -> dict:
        return {"input_dim": 64, "hidden_dim": 256, "latent_dim": 8}

    def build(self) -> dict:
        return {"model": models.vae(**self.config)}

    def batch(self, step: int) -> tuple:
        return (lucid.tensor(self.train_pixels[self.epoch_indices(step, len(self.train_pixels))]),)

    def neg_elbo(self, x):
        """The negative ELBO per digit of a batch x (B, 64) (one latent sample per digit)."""
        recon, mu, logvar = self.model(x)
        return models.vae_loss(recon, x, mu, logvar) / x.shape[0]

    def train_step(self, x) -> dict:
        return self.simple_step(self.neg_elbo, x)

    def evaluate(self) -> dict[str, float]:
        with lucid.no_grad():
            elbo = self.neg_elbo(lucid.tensor(self.test_pixels)).item()
        return {"test_neg_elbo": elbo, **super().evaluate()}

    def generate(self, n: int) -> np.ndarray:
        with lucid.no_grad():
            return self.model.decode(lucid.randn(n, self.config["latent_dim"])).numpy()


class DCGAN(DigitsGenerator):
    supports_amp = False  # its own training step (second derivatives or two optimizers): no --amp
    name = "dcgan"
    summary = "DCGAN (pytorch/examples Generator/Discriminator at 16x16) on the bundled digits"
    target = "pixel Frechet distance to the test digits <= 1"
    steps = 800
    lr = 5e-4
    eval_every = 250

    def default_config(self) -> dict:
        return {"nz": 32, "ngf": 16, "ndf": 16, "nc": 1, "image_size": 16}

    def build(self) -> dict:
        netG, netD = models.dcgan(**self.config)
        return {"model": netG, "discriminator": netD}

    def make_optimizers(self, modules: dict, lr: float) -> dict:
        return {"optimizer": lucid.optim.Adam(modules["model"].parameters(), lr=lr, betas=(0.5, 0.999)),
                "optimizer_d": lucid.optim.Adam(modules["discriminator"].parameters(), lr=lr, betas=(0.5, 0.999))}

    def to_images(self, pixels: np.ndarray) -> np.ndarray:
        """(n, 64) pixels in [0, 1] -> (n, 1, 16, 16) in [-1, 1], each pixel repeated 2x2."""
        images = pixels.reshape(-1, 1, 8, 8).repeat(2, axis=2).repeat(2, axis=3)
        return images * 2.0 - 1.0

    def batch(self, step: int) -> tuple:
        real = self.to_images(self.train_pixels[self.epoch_indices(step, len(self.train_pixels))])
        noise = np.random.default_rng((self.seed, step, 1)).standard_normal((self.batch_size, self.config["nz"], 1, 1))
        return lucid.tensor(real), lucid.tensor(noise.astype(np.float32))

    def train_step(self, real, noise) -> dict:
        """pytorch/examples' step: D on real (label 1) and fake (label 0) images, then G to make D say 1."""
        netG, netD = self.model, self.discriminator
        ones, zeros = lucid.ones(real.shape[0]), lucid.zeros(real.shape[0])
        self.optimizer_d.zero_grad()
        fake = netG(noise)
        loss_d = F.binary_cross_entropy(netD(real), ones) + F.binary_cross_entropy(netD(fake.detach()), zeros)
        loss_d.backward()
        self.optimizer_d.step()
        self.optimizer.zero_grad()
        loss_g = F.binary_cross_entropy(netD(fake), ones)
        loss_g.backward()
        self.optimizer.step()
        return {"loss_d": loss_d, "loss_g": loss_g}

    def generate(self, n: int) -> np.ndarray:
        with lucid.no_grad():
            images = self.model(lucid.randn(n, self.config["nz"], 1, 1)).numpy()
        # back to 8x8 in [0, 1]: the mean of each 2x2 block
        small = images.reshape(n, 8, 2, 8, 2).mean(axis=(2, 4))
        return ((small + 1.0) / 2.0).reshape(n, 64)


RECIPES = [VAE, DCGAN]
