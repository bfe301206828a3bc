"""The variational autoencoder of pytorch/examples ``vae`` (Kingma & Welling, 2014): ``fc1`` -> (``fc21``,
``fc22``) encode the mean and log-variance of a Gaussian latent, ``fc3`` -> ``fc4`` decode Bernoulli pixel
probabilities; trained on the ELBO (``vae_loss``)."""
from __future__ import annotations

import lucid

from .. import nn
from ..nn import functional as F


class VAE(nn.Module):
    """Inputs with values in [0, 1], (N, input_dim) or any (N, ...) of that many values, e.g. 784 for 28x28 MNIST
    (the pytorch/examples default) or 64 for the bundled 8x8 digits scaled to [0, 1].

    ``fc1`` (hidden_dim, input_dim), ``fc21`` and ``fc22`` (latent_dim, hidden_dim), ``fc3`` (hidden_dim,
    latent_dim), ``fc4`` (input_dim, hidden_dim). ``forward(x)`` returns ``(recon_x, mu, logvar)``: the decoded
    probabilities (N, input_dim) of a latent sampled with the reparameterisation trick, and the posterior mean and
    log-variance (N, latent_dim). As in pytorch/examples the latent is sampled in eval mode too; use
    ``decode(mu)`` for the deterministic reconstruction and ``decode(lucid.randn(n, latent_dim))`` for samples.

    :param input_dim: the flattened input's size.
    :param hidden_dim: the hidden layer's width.
    :param latent_dim: the latent code's size.
    """

    def __init__(self, input_dim: int = 784, hidden_dim: int = 400, latent_dim: int = 20):
        super().__init__()
        self.input_dim, self.latent_dim = input_dim, latent_dim
        self.fc1 = nn.Linear(input_dim, hidden_dim)
        self.fc21 = nn.Linear(hidden_dim, latent_dim)
        self.fc22 = nn.Linear(hidden_dim, latent_dim)
        self.fc3 = nn.Linear(latent_dim, hidden_dim)
        self.fc4 = nn.Linear(hidden_dim, input_dim)

    def encode(self, x):
        """(N, input_dim) -> (mu, logvar), each (N, latent_dim)."""
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        """z = mu + eps * exp(logvar / 2), eps ~ N(0, I): a sample that gradients flow through."""
        std = lucid.exp(0.5 * logvar)
        return mu + lucid.randn_like(std) * std

    def decode(self, z):
        """(N, latent_dim) -> pixel probabilities (N, input_dim)."""
        return F.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x):
        mu, logvar = self.encode(x.reshape(-1, self.input_dim))
        return self.decode(self.reparameterize(mu, logvar)), mu, logvar


def vae_loss(recon_x, x, mu, logvar):
    """The negative ELBO summed over the batch (pytorch/examples' ``loss_function``): the binary cross-entropy of
    the reconstruction plus KL(q(z|x) || N(0, I)) = -1/2 sum(1 + logvar - mu^2 - exp(logvar)) (Kingma & Welling,
    appendix B). Divide by the batch size for a per-example value.

    :param recon_x: the decoded probabilities.
    :param x: the inputs, in [0, 1].
    :param mu: the posterior means.
    :param logvar: the posterior log-variances.
    :returns: the loss, a 0-d tensor.
    """
    bce = F.binary_cross_entropy(recon_x, x.reshape(recon_x.shape), reduction="sum")
    kld = -0.5 * lucid.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def vae(input_dim: int = 784, hidden_dim: int = 400, latent_dim: int = 20) -> VAE:
    """A ``VAE``; the defaults are pytorch/examples' (784 -> 400 -> 20).

    :param input_dim: the flattened input's size.
    :param hidden_dim: the hidden layer's width.
    :param latent_dim: the latent code's size.
    """
    return VAE(input_dim, hidden_dim, latent_dim)
