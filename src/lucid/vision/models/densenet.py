"""torchvision's DenseNet-121 (Huang et al., 2017)."""
from __future__ import annotations

from collections import OrderedDict

import lucid

from ... import nn
from ...utils import checkpoint as cp
from ._api import Weights, load_weights, make_weights, prepare, remap_keys

DenseNet121_Weights = make_weights(
    "DenseNet121_Weights", "IMAGENET1K_V1",
    IMAGENET1K_V1=Weights("https://download.pytorch.org/models/densenet121-a639ec97.pth"))


class _DenseLayer(nn.Module):
    """BN-ReLU-1x1 convolution (to ``bn_size * growth_rate``) -> BN-ReLU-3x3 convolution (to ``growth_rate``) on
    the concatenation of every earlier feature map of the block. ``memory_efficient`` recomputes the bottleneck
    in the backward pass (activation checkpointing) instead of keeping it."""

    def __init__(self, num_input_features: int, growth_rate: int, bn_size: int, drop_rate: float,
                 memory_efficient: bool = False) -> None:
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1, stride=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, stride=1, padding=1, bias=False)
        self.drop_rate = float(drop_rate)
        self.memory_efficient = memory_efficient

    def bn_function(self, inputs: list):
        return self.conv1(self.relu1(self.norm1(lucid.cat(inputs, 1))))

    def forward(self, input):
        prev_features = [input] if isinstance(input, lucid.Tensor) else input
        if self.memory_efficient and any(t.requires_grad for t in prev_features):
            bottleneck = cp.checkpoint(lambda *inputs: self.bn_function(list(inputs)), *prev_features,
                                       use_reentrant=False)
        else:
            bottleneck = self.bn_function(prev_features)
        new_features = self.conv2(self.relu2(self.norm2(bottleneck)))
        if self.drop_rate > 0:
            new_features = nn.functional.dropout(new_features, p=self.drop_rate, training=self.training)
        return new_features


class _DenseBlock(nn.ModuleDict):
    """``num_layers`` ``_DenseLayer``s (``denselayer1``, ...), each adding ``growth_rate`` channels."""

    def __init__(self, num_layers: int, num_input_features: int, bn_size: int, growth_rate: int, drop_rate: float,
                 memory_efficient: bool = False) -> None:
        super().__init__()
        for i in range(num_layers):
            self.add_module(f"denselayer{i + 1}", _DenseLayer(num_input_features + i * growth_rate, growth_rate,
                                                              bn_size, drop_rate, memory_efficient))

    def forward(self, init_features):
        features = [init_features]
        for layer in self.values():
            features.append(layer(features))
        return lucid.cat(features, 1)


class _Transition(nn.Sequential):
    """BN-ReLU-1x1 convolution (halving the channels) and 2x2 average pooling between dense blocks."""

    def __init__(self, num_input_features: int, num_output_features: int) -> None:
        super().__init__()
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_input_features, num_output_features, kernel_size=1, stride=1, bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)


class DenseNet(nn.Module):
    """``features`` (stem ``conv0``/``norm0``/``relu0``/``pool0``, ``denseblock1..4`` with ``transition1..3``,
    ``norm5``), ReLU, global average pooling and ``classifier``."""

    def __init__(self, growth_rate: int = 32, block_config: tuple[int, int, int, int] = (6, 12, 24, 16),
                 num_init_features: int = 64, bn_size: int = 4, drop_rate: float = 0, num_classes: int = 1000,
                 memory_efficient: bool = False) -> None:
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, num_init_features, kernel_size=7, stride=2, padding=3, bias=False)),
            ("norm0", nn.BatchNorm2d(num_init_features)), ("relu0", nn.ReLU(inplace=True)),
            ("pool0", nn.MaxPool2d(kernel_size=3, stride=2, padding=1))]))
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            self.features.add_module(f"denseblock{i + 1}", _DenseBlock(num_layers, num_features, bn_size,
                                                                       growth_rate, drop_rate, memory_efficient))
            num_features += num_layers * growth_rate
            if i != len(block_config) - 1:
                self.features.add_module(f"transition{i + 1}", _Transition(num_features, num_features // 2))
                num_features //= 2
        self.features.add_module("norm5", nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        out = nn.functional.relu(self.features(x))
        out = nn.functional.adaptive_avg_pool2d(out, (1, 1)).flatten(1)
        return self.classifier(out)


def _old_keys(state: dict) -> dict:
    # the published checkpoint predates the layer names: 'denselayer1.norm.1.weight' is 'denselayer1.norm1.weight'
    return remap_keys(state, r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|"
                             r"running_var))$", lambda m: m.group(1) + m.group(2))


def densenet121(*, weights=None, progress: bool = True, **kwargs) -> DenseNet:
    """DenseNet-121 (growth 32, blocks (6, 12, 24, 16), 8.0 M parameters). ``weights``: None, a checkpoint file
    or a ``DenseNet121_Weights`` name (the published file's old key names are translated); ``**kwargs`` go to
    ``DenseNet`` (``num_classes``, ``drop_rate``, ``memory_efficient``, ...)."""
    weights = prepare(weights, DenseNet121_Weights, kwargs)
    return load_weights(DenseNet(32, (6, 12, 24, 16), 64, **kwargs), weights, remap=_old_keys)
