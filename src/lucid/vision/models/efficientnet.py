"""torchvision's EfficientNet-B0 (Tan & Le, 2019): MBConv blocks with squeeze-and-excitation, SiLU and
stochastic depth."""
from __future__ import annotations

import copy
import math
from collections.abc import Callable
from functools import partial

from ... import nn
from ..ops.misc import Conv2dNormActivation, SqueezeExcitation
from ..ops.stochastic_depth import StochasticDepth
from ..transforms.functional import InterpolationMode
from ._api import Weights, load_weights, make_weights, prepare
from ._utils import _make_divisible

EfficientNet_B0_Weights = make_weights(
    "EfficientNet_B0_Weights", "IMAGENET1K_V1",
    IMAGENET1K_V1=Weights("https://download.pytorch.org/models/efficientnet_b0_rwightman-7f5810bc.pth",
                          resize_size=256, interpolation=InterpolationMode.BICUBIC))


class MBConvConfig:
    """One stage's settings: widths scaled by ``width_mult`` (multiples of 8), block count by ``depth_mult``."""

    def __init__(self, expand_ratio: float, kernel: int, stride: int, input_channels: int, out_channels: int,
                 num_layers: int, width_mult: float = 1.0, depth_mult: float = 1.0) -> None:
        self.expand_ratio = expand_ratio
        self.kernel = kernel
        self.stride = stride
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.num_layers = int(math.ceil(num_layers * depth_mult))
        self.block = MBConv

    @staticmethod
    def adjust_channels(channels: int, width_mult: float, min_value: int | None = None) -> int:
        return _make_divisible(channels * width_mult, 8, min_value)


class MBConv(nn.Module):
    """Expand (1x1, SiLU) -> depthwise (``kernel``, stride, SiLU) -> squeeze-and-excitation -> project (1x1,
    linear); a residual connection (through stochastic depth) when the shape is kept."""

    def __init__(self, cnf: MBConvConfig, stochastic_depth_prob: float, norm_layer: Callable[..., nn.Module],
                 se_layer: Callable[..., nn.Module] = SqueezeExcitation) -> None:
        super().__init__()
        if not (1 <= cnf.stride <= 2):
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        layers: list[nn.Module] = []
        if expanded != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=nn.SiLU))
        layers += [Conv2dNormActivation(expanded, expanded, kernel_size=cnf.kernel, stride=cnf.stride,
                                        groups=expanded, norm_layer=norm_layer, activation_layer=nn.SiLU),
                   se_layer(expanded, max(1, cnf.input_channels // 4), activation=partial(nn.SiLU, inplace=True)),
                   Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1, norm_layer=norm_layer,
                                        activation_layer=None)]
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, input):
        result = self.block(input)
        return self.stochastic_depth(result) + input if self.use_res_connect else result


class EfficientNet(nn.Module):
    """``features`` (a SiLU stride-2 stem, one ``Sequential`` of blocks per stage, a 1x1 convolution to
    ``last_channel`` or 4x the last width), ``avgpool`` and ``classifier`` (dropout, linear). Block i of all n
    drops its residual branch with probability ``stochastic_depth_prob * i / n`` in training."""

    def __init__(self, inverted_residual_setting: list[MBConvConfig], dropout: float,
                 stochastic_depth_prob: float = 0.2, num_classes: int = 1000,
                 norm_layer: Callable[..., nn.Module] | None = None, last_channel: int | None = None) -> None:
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        if not all(isinstance(s, MBConvConfig) for s in inverted_residual_setting):
            raise TypeError("The inverted_residual_setting should be List[MBConvConfig]")
        norm_layer = norm_layer or nn.BatchNorm2d
        layers: list[nn.Module] = [Conv2dNormActivation(3, inverted_residual_setting[0].input_channels,
                                                        kernel_size=3, stride=2, norm_layer=norm_layer,
                                                        activation_layer=nn.SiLU)]
        total_blocks = sum(cnf.num_layers for cnf in inverted_residual_setting)
        block_id = 0
        for cnf in inverted_residual_setting:
            stage: list[nn.Module] = []
            for _ in range(cnf.num_layers):
                block_cnf = copy.copy(cnf)
                if stage:  # the stage's later blocks keep its width and stride 1
                    block_cnf.input_channels = block_cnf.out_channels
                    block_cnf.stride = 1
                stage.append(block_cnf.block(block_cnf, stochastic_depth_prob * float(block_id) / total_blocks,
                                             norm_layer))
                block_id += 1
            layers.append(nn.Sequential(*stage))
        lastconv_input = inverted_residual_setting[-1].out_channels
        lastconv_output = last_channel if last_channel is not None else 4 * lastconv_input
        layers.append(Conv2dNormActivation(lastconv_input, lastconv_output, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(lastconv_output, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                init_range = 1.0 / math.sqrt(m.out_features)
                nn.init.uniform_(m.weight, -init_range, init_range)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def efficientnet_b0(*, weights=None, progress: bool = True, **kwargs) -> EfficientNet:
    """EfficientNet-B0 (5.3 M parameters, 224 px). ``weights``: None, a checkpoint file or an
    ``EfficientNet_B0_Weights`` name; ``**kwargs`` go to ``EfficientNet`` (``num_classes``, ``dropout`` (0.2),
    ``stochastic_depth_prob``, ``norm_layer``)."""
    weights = prepare(weights, EfficientNet_B0_Weights, kwargs)
    conf = partial(MBConvConfig, width_mult=1.0, depth_mult=1.0)
    # expand ratio, kernel, stride, input channels, output channels, blocks
    setting = [conf(1, 3, 1, 32, 16, 1), conf(6, 3, 2, 16, 24, 2), conf(6, 5, 2, 24, 40, 2),
               conf(6, 3, 2, 40, 80, 3), conf(6, 5, 1, 80, 112, 3), conf(6, 5, 2, 112, 192, 4),
               conf(6, 3, 1, 192, 320, 1)]
    model = EfficientNet(setting, kwargs.pop("dropout", 0.2), **kwargs)
    return load_weights(model, weights)
