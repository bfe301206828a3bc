"""ResNet-18 and ResNet-34 (He et al., 2016) with torchvision's module names and shapes, so torchvision's
``resnet18``/``resnet34`` state_dicts load unchanged; ``small_input=True`` adapts the stem to 28-32 px images."""
from __future__ import annotations

from collections.abc import Sequence

from .. import nn


def _conv3x3(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_planes, out_planes, 3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm and a residual connection (torchvision's ``BasicBlock``):
    ``relu(bn2(conv2(relu(bn1(conv1(x))))) + downsample(x))``, (N, inplanes, H, W) -> (N, planes, H/s, W/s).
    ``downsample`` (a 1x1 convolution ``downsample.0`` and batch norm ``downsample.1``) exists where the stride or
    the width changes."""
    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1):
        super().__init__()
        self.conv1 = _conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU()
        self.conv2 = _conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False),
                                            nn.BatchNorm2d(planes))
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    """A ResNet of ``BasicBlock``s: stem ``conv1``/``bn1``/ReLU/``maxpool``, four stages ``layer1..layer4`` of
    ``layers[i]`` blocks with widths w, 2w, 4w, 8w (w = ``width``, 64 in torchvision) and strides 1, 2, 2, 2, global
    average pooling, and ``fc`` (num_classes, 8w).

    Input (N, in_channels, H, W), logits (N, num_classes). The stem is torchvision's 7x7 stride-2 convolution and
    3x3 stride-2 max-pool (H/32 at layer4), or with ``small_input=True`` a 3x3 stride-1 convolution and no
    max-pool (H/8 at layer4), the usual CIFAR adaptation; either way the keys are torchvision's (``conv1.weight``,
    ``bn1.running_mean``, ``layer1.0.conv1.weight``, ``layer2.0.downsample.0.weight``, ..., ``fc.bias``) and only
    ``conv1.weight``'s shape differs. A smaller ``width`` keeps the keys and shrinks every layer (for CPU runs).
    Initialisation follows torchvision: Kaiming-normal (fan_out) convolutions, batch norm weight 1 and bias 0.
    """

    def __init__(self, layers: Sequence[int], num_classes: int = 1000, small_input: bool = False,
                 in_channels: int = 3, width: int = 64):
        super().__init__()
        if len(layers) != 4:
            raise ValueError(f"ResNet takes the number of blocks of its 4 stages, got layers={list(layers)}")
        self.inplanes = width
        if small_input:
            self.conv1 = nn.Conv2d(in_channels, width, 3, stride=1, padding=1, bias=False)
            self.maxpool = nn.Identity()
        else:
            self.conv1 = nn.Conv2d(in_channels, width, 7, stride=2, padding=3, bias=False)
            self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU()
        self.layer1 = self._make_layer(width, layers[0])
        self.layer2 = self._make_layer(2 * width, layers[1], stride=2)
        self.layer3 = self._make_layer(4 * width, layers[2], stride=2)
        self.layer4 = self._make_layer(8 * width, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8 * width * BasicBlock.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def _make_layer(self, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
        layers = [BasicBlock(self.inplanes, planes, stride)]
        self.inplanes = planes * BasicBlock.expansion
        layers += [BasicBlock(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))


def resnet18(num_classes: int = 1000, small_input: bool = False, in_channels: int = 3, width: int = 64) -> ResNet:
    """ResNet-18: [2, 2, 2, 2] basic blocks (11.7 M parameters at 1000 classes and width 64)."""
    return ResNet([2, 2, 2, 2], num_classes, small_input, in_channels, width)


def resnet34(num_classes: int = 1000, small_input: bool = False, in_channels: int = 3, width: int = 64) -> ResNet:
    """ResNet-34: [3, 4, 6, 3] basic blocks (21.8 M parameters at 1000 classes and width 64)."""
    return ResNet([3, 4, 6, 3], num_classes, small_input, in_channels, width)
