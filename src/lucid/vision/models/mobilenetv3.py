"""torchvision's MobileNetV3 small and large (Howard et al., 2019)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from ... import nn
from ..ops.misc import Conv2dNormActivation
from ..ops.misc import SqueezeExcitation as SElayer
from ._api import Weights, load_weights, make_weights, prepare
from ._utils import _make_divisible, init_like_mobilenet

_URL = "https://download.pytorch.org/models/"
MobileNet_V3_Large_Weights = make_weights("MobileNet_V3_Large_Weights", "IMAGENET1K_V2",
                                          IMAGENET1K_V1=Weights(_URL + "mobilenet_v3_large-8738ca79.pth"),
                                          IMAGENET1K_V2=Weights(_URL + "mobilenet_v3_large-5c1a4163.pth",
                                                                        resize_size=232))
MobileNet_V3_Small_Weights = make_weights("MobileNet_V3_Small_Weights", "IMAGENET1K_V1",
                                          IMAGENET1K_V1=Weights(_URL + "mobilenet_v3_small-047dcff4.pth"))


class InvertedResidualConfig:
    """One block's settings (the widths scaled by ``width_mult`` and rounded to multiples of 8)."""

    def __init__(self, input_channels: int, kernel: int, expanded_channels: int, out_channels: int, use_se: bool,
                 activation: str, stride: int, dilation: int, width_mult: float) -> None:
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.use_se = use_se
        self.use_hs = activation == "HS"  # hard-swish, else ReLU ("RE")
        self.stride = stride
        self.dilation = dilation

    @staticmethod
    def adjust_channels(channels: int, width_mult: float) -> int:
        return _make_divisible(channels * width_mult, 8)


class InvertedResidual(nn.Module):
    """Expand (1x1) -> depthwise (``kernel``, stride or dilation) -> squeeze-and-excitation (hard-sigmoid gate,
    optional) -> project (1x1, linear), with a residual connection when the shape is kept."""

    def __init__(self, cnf: InvertedResidualConfig, norm_layer: Callable[..., nn.Module],
                 se_layer: Callable[..., nn.Module] = partial(SElayer, scale_activation=nn.Hardsigmoid)) -> None:
        super().__init__()
        if not (1 <= cnf.stride <= 2):
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        activation_layer = nn.Hardswish if cnf.use_hs else nn.ReLU
        layers: list[nn.Module] = []
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, cnf.expanded_channels, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=activation_layer))
        stride = 1 if cnf.dilation > 1 else cnf.stride
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.expanded_channels, kernel_size=cnf.kernel,
                                           stride=stride, dilation=cnf.dilation, groups=cnf.expanded_channels,
                                           norm_layer=norm_layer, activation_layer=activation_layer))
        if cnf.use_se:
            layers.append(se_layer(cnf.expanded_channels, _make_divisible(cnf.expanded_channels // 4, 8)))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.out_channels = cnf.out_channels
        self._is_cn = cnf.stride > 1

    def forward(self, input):
        result = self.block(input)
        return result + input if self.use_res_connect else result


class MobileNetV3(nn.Module):
    """``features`` (a hard-swish stride-2 stem, the blocks of ``inverted_residual_setting``, a 1x1 convolution
    to 6x the last width), ``avgpool`` and ``classifier`` (linear to ``last_channel``, hard-swish, dropout,
    linear). Batch norm with eps 0.001 and momentum 0.01 unless ``norm_layer`` says otherwise."""

    def __init__(self, inverted_residual_setting: list[InvertedResidualConfig], last_channel: int,
                 num_classes: int = 1000, block: Callable[..., nn.Module] | None = None,
                 norm_layer: Callable[..., nn.Module] | None = None, dropout: float = 0.2, **kwargs) -> None:
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        if not (isinstance(inverted_residual_setting, Sequence)
                and all(isinstance(s, InvertedResidualConfig) for s in inverted_residual_setting)):
            raise TypeError("The inverted_residual_setting should be List[InvertedResidualConfig]")
        block = block or InvertedResidual
        norm_layer = norm_layer or partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        first = inverted_residual_setting[0].input_channels
        layers: list[nn.Module] = [Conv2dNormActivation(3, first, kernel_size=3, stride=2, norm_layer=norm_layer,
                                                        activation_layer=nn.Hardswish)]
        layers += [block(cnf, norm_layer) for cnf in inverted_residual_setting]
        lastconv_input = inverted_residual_setting[-1].out_channels
        lastconv_output = 6 * lastconv_input
        layers.append(Conv2dNormActivation(lastconv_input, lastconv_output, kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(lastconv_output, last_channel), nn.Hardswish(inplace=True),
                                        nn.Dropout(p=dropout, inplace=True), nn.Linear(last_channel, num_classes))
        init_like_mobilenet(self)

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)).flatten(1))


def _mobilenet_v3_conf(arch: str, width_mult: float = 1.0, reduced_tail: bool = False, dilated: bool = False):
    """The block table and ``last_channel`` of ``arch``; ``reduced_tail`` halves the last stage's widths,
    ``dilated`` trades its stride for dilation 2 (both for detection/segmentation backbones)."""
    rd = 2 if reduced_tail else 1
    d = 2 if dilated else 1
    conf = partial(InvertedResidualConfig, width_mult=width_mult)
    # input, kernel, expanded, output, squeeze-excitation, activation, stride, dilation
    if arch == "mobilenet_v3_large":
        table = [(16, 3, 16, 16, False, "RE", 1, 1), (16, 3, 64, 24, False, "RE", 2, 1),
                 (24, 3, 72, 24, False, "RE", 1, 1), (24, 5, 72, 40, True, "RE", 2, 1),
                 (40, 5, 120, 40, True, "RE", 1, 1), (40, 5, 120, 40, True, "RE", 1, 1),
                 (40, 3, 240, 80, False, "HS", 2, 1), (80, 3, 200, 80, False, "HS", 1, 1),
                 (80, 3, 184, 80, False, "HS", 1, 1), (80, 3, 184, 80, False, "HS", 1, 1),
                 (80, 3, 480, 112, True, "HS", 1, 1), (112, 3, 672, 112, True, "HS", 1, 1),
                 (112, 5, 672, 160 // rd, True, "HS", 2, d), (160 // rd, 5, 960 // rd, 160 // rd, True, "HS", 1, d),
                 (160 // rd, 5, 960 // rd, 160 // rd, True, "HS", 1, d)]
        last = 1280 // rd
    elif arch == "mobilenet_v3_small":
        table = [(16, 3, 16, 16, True, "RE", 2, 1), (16, 3, 72, 24, False, "RE", 2, 1),
                 (24, 3, 88, 24, False, "RE", 1, 1), (24, 5, 96, 40, True, "HS", 2, 1),
                 (40, 5, 240, 40, True, "HS", 1, 1), (40, 5, 240, 40, True, "HS", 1, 1),
                 (40, 5, 120, 48, True, "HS", 1, 1), (48, 5, 144, 48, True, "HS", 1, 1),
                 (48, 5, 288, 96 // rd, True, "HS", 2, d), (96 // rd, 5, 576 // rd, 96 // rd, True, "HS", 1, d),
                 (96 // rd, 5, 576 // rd, 96 // rd, True, "HS", 1, d)]
        last = 1024 // rd
    else:
        raise ValueError(f"Unsupported model type {arch}")
    return [conf(*row) for row in table], InvertedResidualConfig.adjust_channels(last, width_mult)


def _mobilenet_v3(arch: str, weights, enum, kwargs: dict) -> MobileNetV3:
    weights = prepare(weights, enum, kwargs)
    conf_kwargs = {k: kwargs.pop(k) for k in ("width_mult", "reduced_tail", "dilated") if k in kwargs}
    setting, last_channel = _mobilenet_v3_conf(arch, **conf_kwargs)
    return load_weights(MobileNetV3(setting, last_channel, **kwargs), weights)


def mobilenet_v3_large(*, weights=None, progress: bool = True, **kwargs) -> MobileNetV3:
    """MobileNetV3-Large (5.5 M parameters). ``weights``: None, a checkpoint file or a
    ``MobileNet_V3_Large_Weights`` name; ``**kwargs``: ``num_classes``, ``dropout``, ``width_mult``,
    ``reduced_tail``, ``dilated``, ``norm_layer``."""
    return _mobilenet_v3("mobilenet_v3_large", weights, MobileNet_V3_Large_Weights, kwargs)


def mobilenet_v3_small(*, weights=None, progress: bool = True, **kwargs) -> MobileNetV3:
    """MobileNetV3-Small (2.5 M parameters); arguments as ``mobilenet_v3_large``."""
    return _mobilenet_v3("mobilenet_v3_small", weights, MobileNet_V3_Small_Weights, kwargs)
