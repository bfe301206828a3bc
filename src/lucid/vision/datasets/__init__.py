"""torchvision.datasets on lucid: the image datasets read from their standard files on disk (MNIST's IDX files,
CIFAR's python pickles read as plain data, SVHN's .mat files, a folder per class), and ``FakeData``. Items are
``(PIL image, int)`` as torchvision's, so ``transforms.ToTensor()`` and a ``DataLoader`` take them as they are."""
from .cifar import CIFAR10, CIFAR100
from .fakedata import FakeData
from .folder import DatasetFolder, ImageFolder
from .mnist import EMNIST, KMNIST, MNIST, FashionMNIST
from .svhn import SVHN
from .vision import StandardTransform, VisionDataset

__all__ = ["CIFAR10", "CIFAR100", "DatasetFolder", "EMNIST", "FakeData", "FashionMNIST", "ImageFolder", "KMNIST",
           "MNIST", "SVHN", "StandardTransform", "VisionDataset"]
