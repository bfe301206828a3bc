"""torchvision's AlexNet (Krizhevsky et al., 2012, in the "one weird trick" single-tower form)."""
from __future__ import annotations

from ... import nn
from ._api import Weights, load_weights, make_weights, prepare

AlexNet_Weights = make_weights("AlexNet_Weights", "IMAGENET1K_V1",
                               IMAGENET1K_V1=Weights("https://download.pytorch.org/models/alexnet-owt-7be5be79.pth"))


class AlexNet(nn.Module):
    """Five convolutions (``features``), ``avgpool`` to 6x6 and a 4096-4096-num_classes ``classifier`` with
    ``dropout``. Input (N, 3, H, W) with H, W >= 63; logits (N, num_classes)."""

    def __init__(self, num_classes: int = 1000, dropout: float = 0.5) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2))
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(p=dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes))

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def alexnet(*, weights=None, progress: bool = True, **kwargs) -> AlexNet:
    """AlexNet (61.1 M parameters). ``weights``: None, a checkpoint file or an ``AlexNet_Weights`` name;
    ``**kwargs`` go to ``AlexNet`` (``num_classes``, ``dropout``)."""
    weights = prepare(weights, AlexNet_Weights, kwargs)
    return load_weights(AlexNet(**kwargs), weights)
