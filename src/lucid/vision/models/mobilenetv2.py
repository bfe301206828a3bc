"""torchvision's MobileNetV2 (Sandler et al., 2018)."""
from __future__ import annotations

from collections.abc import Callable

from ... import nn
from ..ops.misc import Conv2dNormActivation
from ._api import Weights, load_weights, make_weights, prepare
from ._utils import _make_divisible, init_like_mobilenet

MobileNet_V2_Weights = make_weights(
    "MobileNet_V2_Weights", "IMAGENET1K_V2",
    IMAGENET1K_V1=Weights("https://download.pytorch.org/models/mobilenet_v2-b0353104.pth"),
    IMAGENET1K_V2=Weights("https://download.pytorch.org/models/mobilenet_v2-7ebf99e0.pth", resize_size=232))


class InvertedResidual(nn.Module):
    """Expand (1x1, ReLU6) -> depthwise 3x3 (``stride``, ReLU6) -> project (1x1, linear), with a residual
    connection when the shape is kept."""

    def __init__(self, inp: int, oup: int, stride: int, expand_ratio: int,
                 norm_layer: Callable[..., nn.Module] | None = None) -> None:
        super().__init__()
        self.stride = stride
        if stride not in [1, 2]:
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        norm_layer = norm_layer or nn.BatchNorm2d
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = self.stride == 1 and inp == oup
        layers: list[nn.Module] = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=nn.ReLU6))
        layers += [Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim,
                                        norm_layer=norm_layer, activation_layer=nn.ReLU6),
                   nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False), norm_layer(oup)]
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup
        self._is_cn = stride > 1

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2(nn.Module):
    """``features`` (a stride-2 stem, 17 ``InvertedResidual`` blocks, a 1x1 convolution to 1280 channels) and
    ``classifier`` (dropout, linear). ``width_mult`` scales every width (rounded to ``round_nearest``);
    ``inverted_residual_setting`` replaces the [t, c, n, s] table."""

    def __init__(self, num_classes: int = 1000, width_mult: float = 1.0,
                 inverted_residual_setting: list[list[int]] | None = None, round_nearest: int = 8,
                 block: Callable[..., nn.Module] | None = None,
                 norm_layer: Callable[..., nn.Module] | None = None, dropout: float = 0.2) -> None:
        super().__init__()
        block = block or InvertedResidual
        norm_layer = norm_layer or nn.BatchNorm2d
        input_channel, last_channel = 32, 1280
        if inverted_residual_setting is None:
            # t (expansion), c (output channels), n (blocks), s (stride of the first)
            inverted_residual_setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2],
                                         [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]
        if len(inverted_residual_setting) == 0 or len(inverted_residual_setting[0]) != 4:
            raise ValueError("inverted_residual_setting should be non-empty or a 4-element list, got "
                             f"{inverted_residual_setting}")
        input_channel = _make_divisible(input_channel * width_mult, round_nearest)
        self.last_channel = _make_divisible(last_channel * max(1.0, width_mult), round_nearest)
        features: list[nn.Module] = [Conv2dNormActivation(3, input_channel, stride=2, norm_layer=norm_layer,
                                                          activation_layer=nn.ReLU6)]
        for t, c, n, s in inverted_residual_setting:
            output_channel = _make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(block(input_channel, output_channel, s if i == 0 else 1, expand_ratio=t,
                                      norm_layer=norm_layer))
                input_channel = output_channel
        features.append(Conv2dNormActivation(input_channel, self.last_channel, kernel_size=1, norm_layer=norm_layer,
                                             activation_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), nn.Linear(self.last_channel, num_classes))
        init_like_mobilenet(self)

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(x.flatten(1))


def mobilenet_v2(*, weights=None, progress: bool = True, **kwargs) -> MobileNetV2:
    """MobileNetV2 (3.5 M parameters). ``weights``: None, a checkpoint file or a ``MobileNet_V2_Weights`` name;
    ``**kwargs`` go to ``MobileNetV2`` (``num_classes``, ``width_mult``, ``dropout``, ...)."""
    weights = prepare(weights, MobileNet_V2_Weights, kwargs)
    return load_weights(MobileNetV2(**kwargs), weights)
