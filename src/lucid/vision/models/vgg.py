"""torchvision's VGG networks (Simonyan & Zisserman, 2014), with and without batch norm: torchvision's
constructors, module names and state_dict keys."""
from __future__ import annotations

from ... import nn
from ._api import Weights, load_weights, make_weights, overwrite_param, prepare

_URL = "https://download.pytorch.org/models/"
# the convolution widths of each configuration ("M": a 2x2 max-pool)
cfgs: dict[str, list] = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M", 512, 512, 512, 512, "M"],
}


class VGG(nn.Module):
    """``features`` (the convolutions), ``avgpool`` to 7x7 and ``classifier`` (4096-4096-num_classes with ReLU
    and ``dropout``). Input (N, 3, H, W) with H, W >= 32; logits (N, num_classes)."""

    def __init__(self, features: nn.Module, num_classes: int = 1000, init_weights: bool = True,
                 dropout: float = 0.5) -> None:
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, 4096), nn.ReLU(True), nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes))
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def make_layers(cfg: list, batch_norm: bool = False) -> nn.Sequential:
    """The convolutions of a configuration: 3x3 convolutions (each followed by batch norm when ``batch_norm``) and
    ReLU, and 2x2 max-pools."""
    layers: list[nn.Module] = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            continue
        layers.append(nn.Conv2d(in_channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2d(v))
        layers.append(nn.ReLU(inplace=True))
        in_channels = v
    return nn.Sequential(*layers)


def _weights(name: str, file: str):
    return make_weights(name, "IMAGENET1K_V1", IMAGENET1K_V1=Weights(_URL + file))


VGG11_Weights = _weights("VGG11_Weights", "vgg11-8a719046.pth")
VGG11_BN_Weights = _weights("VGG11_BN_Weights", "vgg11_bn-6002323d.pth")
VGG13_Weights = _weights("VGG13_Weights", "vgg13-19584684.pth")
VGG13_BN_Weights = _weights("VGG13_BN_Weights", "vgg13_bn-abd245e5.pth")
VGG16_Weights = _weights("VGG16_Weights", "vgg16-397923af.pth")
VGG16_BN_Weights = _weights("VGG16_BN_Weights", "vgg16_bn-6c64b313.pth")
VGG19_Weights = _weights("VGG19_Weights", "vgg19-dcbb9e9d.pth")
VGG19_BN_Weights = _weights("VGG19_BN_Weights", "vgg19_bn-c79401a0.pth")


def _vgg(cfg: str, batch_norm: bool, weights, enum, kwargs: dict) -> VGG:
    weights = prepare(weights, enum, kwargs)
    if weights is not None:
        overwrite_param(kwargs, "init_weights", False)
    return load_weights(VGG(make_layers(cfgs[cfg], batch_norm), **kwargs), weights)


def vgg11(*, weights=None, progress: bool = True, **kwargs) -> VGG:
    """VGG-11 (configuration "A", 132.9 M parameters). ``weights``: None, a checkpoint file or a
    ``VGG11_Weights`` name; ``**kwargs`` go to ``VGG`` (``num_classes``, ``dropout``, ``init_weights``)."""
    return _vgg("A", False, weights, VGG11_Weights, kwargs)


def vgg11_bn(*, weights=None, progress: bool = True, **kwargs) -> VGG:
    """VGG-11 with batch norm; arguments as ``vgg11``."""
    return _vgg("A", True, weights, VGG11_BN_Weights, kwargs)


def vgg13(*, weights=None, progress: bool = True, **kwargs) -> VGG:
    """VGG-13 (configuration "B"); arguments as ``vgg11``."""
    return _vgg("B", False, weights, VGG13_Weights, kwargs)


def vgg13_bn(*, weights=None, progress: bool = True, **kwargs) -> VGG:
    """VGG-13 with batch norm; arguments as ``vgg11``."""
    return _vgg("B", True, weights, VGG13_BN_Weights, kwargs)


def vgg16(*, weights=None, progress: bool = True, **kwargs) -> VGG:
    """VGG-16 (configuration "D", 138.4 M parameters); arguments as ``vgg11``."""
    return _vgg("D", False, weights, VGG16_Weights, kwargs)


def vgg16_bn(*, weights=None, progress: bool = True, **kwargs) -> VGG:
    """VGG-16 with batch norm; arguments as ``vgg11``."""
    return _vgg("D", True, weights, VGG16_BN_Weights, kwargs)


def vgg19(*, weights=None, progress: bool = True, **kwargs) -> VGG:
    """VGG-19 (configuration "E", 143.7 M parameters); arguments as ``vgg11``."""
    return _vgg("E", False, weights, VGG19_Weights, kwargs)


def vgg19_bn(*, weights=None, progress: bool = True, **kwargs) -> VGG:
    """VGG-19 with batch norm; arguments as ``vgg11``."""
    return _vgg("E", True, weights, VGG19_BN_Weights, kwargs)
