"""lucid.models: the model zoo. Every model uses PyTorch's parameter names and layouts (torchvision, nanoGPT,
pytorch/examples), so the state_dict of the PyTorch model it follows loads unchanged. ``lucid train MODEL``
trains each one (``lucid models`` lists them)."""
from . import maml, pinn
from .dcgan import Discriminator, Generator, dcgan
from .gpt import GPT, GPTConfig, gpt
from .lenet import LeNet5, lenet5
from .lstm_lm import RNNModel, lstm_lm
from .mlp import MLP, mlp
from .resnet import ResNet, resnet18, resnet34
from .vae import VAE, vae, vae_loss
from .vit import VisionTransformer, vit

__all__ = ["mlp", "MLP", "lenet5", "LeNet5", "ResNet", "resnet18", "resnet34", "VisionTransformer", "vit",
           "GPTConfig", "GPT", "gpt", "RNNModel", "lstm_lm", "VAE", "vae", "vae_loss", "Generator",
           "Discriminator", "dcgan", "maml", "pinn"]
