"""The zoo's ResNet-18 and ResNet-34: torchvision's ResNet (``lucid.vision.models.resnet``: the same blocks,
stages, keys and initialisation, so torchvision's ``resnet18``/``resnet34`` state_dicts load unchanged) with three
options for small images and CPU runs: a small-input stem, ``in_channels`` and a narrower ``width``."""
from __future__ import annotations

from collections.abc import Sequence

from .. import nn
from ..vision.models import resnet as tv


class ResNet(tv.ResNet):
    """torchvision's ResNet of ``BasicBlock``s: stem ``conv1``/``bn1``/ReLU/``maxpool``, four stages
    ``layer1..layer4`` of ``layers[i]`` blocks with widths w, 2w, 4w, 8w (w = ``width``, 64 in torchvision) and
    strides 1, 2, 2, 2, global average pooling, and ``fc`` (num_classes, 8w).

    Input (N, in_channels, H, W), logits (N, num_classes). The stem is torchvision's 7x7 stride-2 convolution and
    3x3 stride-2 max-pool (H/32 at layer4), or with ``small_input=True`` a 3x3 stride-1 convolution and no
    max-pool (H/8 at layer4), the usual CIFAR adaptation; either way the keys are torchvision's (``conv1.weight``,
    ``bn1.running_mean``, ``layer1.0.conv1.weight``, ``layer2.0.downsample.0.weight``, ..., ``fc.bias``) and only
    ``conv1.weight``'s shape differs. A smaller ``width`` keeps the keys and shrinks every layer (for CPU runs).
    Initialisation is torchvision's: Kaiming-normal (fan_out) convolutions, batch norm weight 1 and bias 0.

    :param layers: the number of blocks in each of the four stages.
    :param num_classes: the logits' size.
    :param small_input: a 3x3 stride-1 stem without max pooling, for small images (32x32).
    :param in_channels: the input's channels.
    :param width: the first stage's width (64 in torchvision; the zoo trains with 16).
    """

    def __init__(self, layers: Sequence[int], num_classes: int = 1000, small_input: bool = False,
                 in_channels: int = 3, width: int = 64):
        if len(layers) != 4:
            raise ValueError(f"ResNet takes the number of blocks of its 4 stages, got layers={list(layers)}")
        nn.Module.__init__(self)  # torchvision's constructor fixes the widths and the stem: built here instead
        self._norm_layer = nn.BatchNorm2d
        self.inplanes, self.dilation, self.groups, self.base_width = width, 1, 1, 64
        if small_input:
            self.conv1 = nn.Conv2d(in_channels, width, 3, stride=1, padding=1, bias=False)
        else:
            self.conv1 = nn.Conv2d(in_channels, width, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.Identity() if small_input else nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = self._make_layer(tv.BasicBlock, width, layers[0])
        self.layer2 = self._make_layer(tv.BasicBlock, 2 * width, layers[1], stride=2)
        self.layer3 = self._make_layer(tv.BasicBlock, 4 * width, layers[2], stride=2)
        self.layer4 = self._make_layer(tv.BasicBlock, 8 * width, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8 * width * tv.BasicBlock.expansion, num_classes)
        self._init_weights(zero_init_residual=False)


def resnet18(num_classes: int = 1000, small_input: bool = False, in_channels: int = 3, width: int = 64) -> ResNet:
    """ResNet-18: [2, 2, 2, 2] basic blocks (11.7 M parameters at 1000 classes and width 64).

    :param num_classes: the logits' size.
    :param small_input: a 3x3 stride-1 stem without max pooling, for small images (32x32).
    :param in_channels: the input's channels.
    :param width: the first stage's width (64 in torchvision; the zoo trains with 16).

    >>> import lucid
    >>> lucid.models.resnet18(num_classes=6, small_input=True, width=16)(lucid.zeros(1, 3, 32, 32)).shape
    lucid.Size([1, 6])
    """
    return ResNet([2, 2, 2, 2], num_classes, small_input, in_channels, width)


def resnet34(num_classes: int = 1000, small_input: bool = False, in_channels: int = 3, width: int = 64) -> ResNet:
    """ResNet-34: [3, 4, 6, 3] basic blocks (21.8 M parameters at 1000 classes and width 64).

    :param num_classes: the logits' size.
    :param small_input: a 3x3 stride-1 stem without max pooling, for small images (32x32).
    :param in_channels: the input's channels.
    :param width: the first stage's width (64 in torchvision; the zoo trains with 16).
    """
    return ResNet([3, 4, 6, 3], num_classes, small_input, in_channels, width)
