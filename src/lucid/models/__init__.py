"""lucid.models: the model zoo. Every model that follows a published PyTorch implementation (torchvision, nanoGPT,
pytorch/examples) uses its parameter names and layouts, so that model's state_dict loads unchanged; realnvp (a
RealNVP flow built on ``lucid.distributions``) and ddpm (a DDPM with an MLP noise predictor) follow their papers.
``lucid train MODEL`` trains each one (``lucid models`` lists them)."""
from . import maml, pinn
from .dcgan import Discriminator, Generator, dcgan
from .ddpm import DDPM, ddpm
from .gpt import GPT, GPTConfig, gpt
from .lenet import LeNet5, lenet5
from .lstm_lm import RNNModel, lstm_lm
from .mlp import MLP, mlp
from .realnvp import RealNVP, realnvp
from .resnet import ResNet, resnet18, resnet34
from .vae import VAE, vae, vae_loss
from .vit import VisionTransformer, vit

__all__ = ["mlp", "MLP", "lenet5", "LeNet5", "ResNet", "resnet18", "resnet34", "VisionTransformer", "vit",
           "GPTConfig", "GPT", "gpt", "RNNModel", "lstm_lm", "VAE", "vae", "vae_loss", "Generator",
           "Discriminator", "dcgan", "RealNVP", "realnvp", "DDPM", "ddpm", "maml", "pinn"]
