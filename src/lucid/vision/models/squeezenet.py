"""torchvision's SqueezeNet 1.0 and 1.1 (Iandola et al., 2016)."""
from __future__ import annotations

import lucid

from ... import nn
from ._api import Weights, load_weights, make_weights, prepare

_URL = "https://download.pytorch.org/models/"
SqueezeNet1_0_Weights = make_weights("SqueezeNet1_0_Weights", "IMAGENET1K_V1",
                                     IMAGENET1K_V1=Weights(_URL + "squeezenet1_0-b66bff10.pth"))
SqueezeNet1_1_Weights = make_weights("SqueezeNet1_1_Weights", "IMAGENET1K_V1",
                                     IMAGENET1K_V1=Weights(_URL + "squeezenet1_1-b8a52dc0.pth"))


class Fire(nn.Module):
    """A 1x1 ``squeeze`` convolution, then 1x1 and 3x3 ``expand`` convolutions side by side (concatenated)."""

    def __init__(self, inplanes: int, squeeze_planes: int, expand1x1_planes: int, expand3x3_planes: int) -> None:
        super().__init__()
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        return lucid.cat([self.expand1x1_activation(self.expand1x1(x)),
                          self.expand3x3_activation(self.expand3x3(x))], 1)


class SqueezeNet(nn.Module):
    """``features`` (a stem and eight ``Fire`` modules) and a convolutional ``classifier`` (dropout, 1x1
    convolution to ``num_classes``, ReLU, global average pooling). ``version``: ``"1_0"`` or ``"1_1"`` (2.4x less
    computation, same accuracy)."""

    def __init__(self, version: str = "1_0", num_classes: int = 1000, dropout: float = 0.5) -> None:
        super().__init__()
        self.num_classes = num_classes
        pool = lambda: nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True)  # noqa: E731
        if version == "1_0":
            self.features = nn.Sequential(
                nn.Conv2d(3, 96, kernel_size=7, stride=2), nn.ReLU(inplace=True), pool(),
                Fire(96, 16, 64, 64), Fire(128, 16, 64, 64), Fire(128, 32, 128, 128), pool(),
                Fire(256, 32, 128, 128), Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256),
                pool(), Fire(512, 64, 256, 256))
        elif version == "1_1":
            self.features = nn.Sequential(
                nn.Conv2d(3, 64, kernel_size=3, stride=2), nn.ReLU(inplace=True), pool(),
                Fire(64, 16, 64, 64), Fire(128, 16, 64, 64), pool(),
                Fire(128, 32, 128, 128), Fire(256, 32, 128, 128), pool(),
                Fire(256, 48, 192, 192), Fire(384, 48, 192, 192), Fire(384, 64, 256, 256), Fire(512, 64, 256, 256))
        else:
            raise ValueError(f"Unsupported SqueezeNet version {version}: 1_0 or 1_1 expected")
        final_conv = nn.Conv2d(512, self.num_classes, kernel_size=1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), final_conv, nn.ReLU(inplace=True),
                                        nn.AdaptiveAvgPool2d((1, 1)))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if m is final_conv:
                    nn.init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    nn.init.kaiming_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        return self.classifier(self.features(x)).flatten(1)


def squeezenet1_0(*, weights=None, progress: bool = True, **kwargs) -> SqueezeNet:
    """SqueezeNet 1.0 (1.2 M parameters). ``weights``: None, a checkpoint file or a ``SqueezeNet1_0_Weights``
    name; ``**kwargs`` go to ``SqueezeNet`` (``num_classes``, ``dropout``)."""
    weights = prepare(weights, SqueezeNet1_0_Weights, kwargs)
    return load_weights(SqueezeNet("1_0", **kwargs), weights)


def squeezenet1_1(*, weights=None, progress: bool = True, **kwargs) -> SqueezeNet:
    """SqueezeNet 1.1 (1.2 M parameters); arguments as ``squeezenet1_0``."""
    weights = prepare(weights, SqueezeNet1_1_Weights, kwargs)
    return load_weights(SqueezeNet("1_1", **kwargs), weights)
