"""DCGAN (Radford et al., 2016) as in pytorch/examples ``dcgan``: a ``Generator`` of transposed convolutions and a
``Discriminator`` of strided convolutions, each a Sequential ``main`` (keys ``main.0.weight``, ``main.1.weight``,
``main.1.running_mean``, ...), sized by ``image_size`` (64 gives pytorch/examples' exact layers)."""
from __future__ import annotations

import math

from .. import nn


def _stages(image_size: int) -> int:
    """The number of stride-2 (up/down)sampling layers between 4x4 and ``image_size`` (a power of two, >= 8)."""
    stages = int(round(math.log2(image_size))) - 2 if image_size > 0 else 0
    if stages < 1 or 4 * 2 ** stages != image_size:
        raise ValueError(f"image_size must be a power of two of at least 8, got {image_size}")
    return stages


class Generator(nn.Module):
    """Latent vectors (N, nz, 1, 1) -> images (N, nc, image_size, image_size) in [-1, 1].

    ``main``: ConvTranspose2d(nz, ngf*2^(s-1), 4, 1, 0) to 4x4, then s-1 blocks of ConvTranspose2d(4, 2, 1) halving
    the width and doubling the size, each followed by BatchNorm2d and ReLU, then ConvTranspose2d(ngf, nc, 4, 2, 1)
    and Tanh, where s = log2(image_size) - 2 (4 at 64 px: ngf*8, ngf*4, ngf*2, ngf, as pytorch/examples).

    :param nz: the latent vector's size.
    :param ngf: the generator's base width.
    :param nc: the images' channels.
    :param image_size: the images' side (a power of 2, at least 8).
    """

    def __init__(self, nz: int = 100, ngf: int = 64, nc: int = 3, image_size: int = 64):
        super().__init__()
        stages = _stages(image_size)
        width = ngf * 2 ** (stages - 1)
        layers = [nn.ConvTranspose2d(nz, width, 4, 1, 0, bias=False), nn.BatchNorm2d(width), nn.ReLU()]
        for _ in range(stages - 1):
            layers += [nn.ConvTranspose2d(width, width // 2, 4, 2, 1, bias=False), nn.BatchNorm2d(width // 2),
                       nn.ReLU()]
            width //= 2
        layers += [nn.ConvTranspose2d(width, nc, 4, 2, 1, bias=False), nn.Tanh()]
        self.main = nn.Sequential(*layers)
        self.nz = nz

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    """Images (N, nc, image_size, image_size) -> the probability (N,) that each is real.

    ``main``: Conv2d(nc, ndf, 4, 2, 1) and LeakyReLU(0.2), then s-1 blocks of Conv2d(4, 2, 1) doubling the width
    and halving the size, each followed by BatchNorm2d and LeakyReLU(0.2), then Conv2d(ndf*2^(s-1), 1, 4, 1, 0) and
    Sigmoid, where s = log2(image_size) - 2 (the mirror of the ``Generator``).

    :param ndf: the discriminator's base width.
    :param nc: the images' channels.
    :param image_size: the images' side (a power of 2, at least 8).
    """

    def __init__(self, ndf: int = 64, nc: int = 3, image_size: int = 64):
        super().__init__()
        stages = _stages(image_size)
        layers = [nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2)]
        width = ndf
        for _ in range(stages - 1):
            layers += [nn.Conv2d(width, width * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(width * 2),
                       nn.LeakyReLU(0.2)]
            width *= 2
        layers += [nn.Conv2d(width, 1, 4, 1, 0, bias=False), nn.Sigmoid()]
        self.main = nn.Sequential(*layers)

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)


def weights_init(m: nn.Module) -> None:
    """pytorch/examples' DCGAN initialisation (use with ``module.apply``): convolution weights N(0, 0.02), batch
    norm weights N(1, 0.02) and biases 0."""
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.normal_(m.weight, 0.0, 0.02)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.normal_(m.weight, 1.0, 0.02)
        nn.init.zeros_(m.bias)


def dcgan(nz: int = 100, ngf: int = 64, ndf: int = 64, nc: int = 3, image_size: int = 64):
    """``(Generator, Discriminator)`` initialised with ``weights_init``; the defaults are pytorch/examples'.

    :param nz: the latent vector's size.
    :param ngf: the generator's base width.
    :param ndf: the discriminator's base width.
    :param nc: the images' channels.
    :param image_size: the images' side (a power of 2, at least 8).
    :returns: ``(generator, discriminator)``.
    """
    netG, netD = Generator(nz, ngf, nc, image_size), Discriminator(ndf, nc, image_size)
    netG.apply(weights_init)
    netD.apply(weights_init)
    return netG, netD
