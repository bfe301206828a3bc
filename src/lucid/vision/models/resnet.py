"""torchvision's ResNets (He et al., 2016), ResNeXt (Xie et al., 2017) and Wide ResNets (Zagoruyko & Komodakis,
2016): torchvision's constructors, module names and state_dict keys, so its checkpoints load unchanged."""
from __future__ import annotations

from collections.abc import Callable

from ... import nn
from ._api import Weights, make_weights, overwrite_param, prepare, load_weights

_URL = "https://download.pytorch.org/models/"


def conv3x3(in_planes: int, out_planes: int, stride: int = 1, groups: int = 1, dilation: int = 1) -> nn.Conv2d:
    """3x3 convolution with padding (no bias: a batch norm follows)."""
    return nn.Conv2d(in_planes, out_planes, 3, stride=stride, padding=dilation, groups=groups, bias=False,
                     dilation=dilation)


def conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    """1x1 convolution (no bias)."""
    return nn.Conv2d(in_planes, out_planes, 1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm and a residual connection:
    ``relu(bn2(conv2(relu(bn1(conv1(x))))) + downsample(x))``; ``downsample`` (or None) matches the shortcut's
    shape where the stride or the width changes."""
    expansion: int = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None,
                 groups: int = 1, base_width: int = 64, dilation: int = 1,
                 norm_layer: Callable[..., nn.Module] | None = None) -> None:
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    """1x1 (reduce) -> 3x3 (stride, groups) -> 1x1 (expand x4) convolutions with batch norm and a residual
    connection (the stride sits on the 3x3, "ResNet V1.5"). ``groups`` and ``base_width`` give ResNeXt and the wide
    ResNets."""
    expansion: int = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None,
                 groups: int = 1, base_width: int = 64, dilation: int = 1,
                 norm_layer: Callable[..., nn.Module] | None = None) -> None:
        super().__init__()
        norm_layer = norm_layer or nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet(nn.Module):
    """torchvision's ResNet: stem ``conv1`` (7x7, stride 2) / ``bn1`` / ReLU / ``maxpool`` (3x3, stride 2), four
    stages ``layer1..layer4`` of ``layers[i]`` blocks (widths 64, 128, 256, 512 times the block's expansion,
    strides 1, 2, 2, 2), global average pooling and ``fc``. Input (N, 3, H, W), logits (N, num_classes).

    ``zero_init_residual`` zeroes each block's last batch-norm weight (each block starts as the identity);
    ``replace_stride_with_dilation`` (3 bools) trades a stage's stride for dilation."""

    def __init__(self, block: type[BasicBlock | Bottleneck], layers: list[int], num_classes: int = 1000,
                 zero_init_residual: bool = False, groups: int = 1, width_per_group: int = 64,
                 replace_stride_with_dilation: list[bool] | None = None,
                 norm_layer: Callable[..., nn.Module] | None = None) -> None:
        super().__init__()
        self._norm_layer = norm_layer or nn.BatchNorm2d
        self.inplanes = 64
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, got "
                             f"{replace_stride_with_dilation}")
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = self._norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], 2, replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], 2, replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], 2, replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)
        self._init_weights(zero_init_residual)

    def _init_weights(self, zero_init_residual: bool) -> None:
        """torchvision's: Kaiming-normal (fan_out) convolutions, norm layers weight 1 and bias 0 (each block's last
        norm weight 0 with ``zero_init_residual``)."""
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block, planes: int, blocks: int, stride: int = 1, dilate: bool = False) -> nn.Sequential:
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes * block.expansion, stride),
                                       norm_layer(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width, previous_dilation,
                        norm_layer)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes, groups=self.groups, base_width=self.base_width,
                         dilation=self.dilation, norm_layer=norm_layer) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def _forward_impl(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(self.avgpool(x).flatten(1))

    def forward(self, x):
        return self._forward_impl(x)


def _w(name: str, **preset) -> Weights:
    return Weights(_URL + name, **preset)


ResNet18_Weights = make_weights("ResNet18_Weights", "IMAGENET1K_V1", IMAGENET1K_V1=_w("resnet18-f37072fd.pth"))
ResNet34_Weights = make_weights("ResNet34_Weights", "IMAGENET1K_V1", IMAGENET1K_V1=_w("resnet34-b627a593.pth"))
ResNet50_Weights = make_weights("ResNet50_Weights", "IMAGENET1K_V2", IMAGENET1K_V1=_w("resnet50-0676ba61.pth"),
                                IMAGENET1K_V2=_w("resnet50-11ad3fa6.pth", resize_size=232))
ResNet101_Weights = make_weights("ResNet101_Weights", "IMAGENET1K_V2", IMAGENET1K_V1=_w("resnet101-63fe2227.pth"),
                                 IMAGENET1K_V2=_w("resnet101-cd907fc2.pth", resize_size=232))
ResNet152_Weights = make_weights("ResNet152_Weights", "IMAGENET1K_V2", IMAGENET1K_V1=_w("resnet152-394f9c45.pth"),
                                 IMAGENET1K_V2=_w("resnet152-f82ba261.pth", resize_size=232))
ResNeXt50_32X4D_Weights = make_weights("ResNeXt50_32X4D_Weights", "IMAGENET1K_V2",
                                       IMAGENET1K_V1=_w("resnext50_32x4d-7cdf4587.pth"),
                                       IMAGENET1K_V2=_w("resnext50_32x4d-1a0047aa.pth", resize_size=232))
Wide_ResNet50_2_Weights = make_weights("Wide_ResNet50_2_Weights", "IMAGENET1K_V2",
                                       IMAGENET1K_V1=_w("wide_resnet50_2-95faca4d.pth"),
                                       IMAGENET1K_V2=_w("wide_resnet50_2-9ba9bcbe.pth", resize_size=232))


def _resnet(block, layers: list[int], weights, enum, kwargs: dict) -> ResNet:
    weights = prepare(weights, enum, kwargs)
    return load_weights(ResNet(block, layers, **kwargs), weights)


def resnet18(*, weights=None, progress: bool = True, **kwargs) -> ResNet:
    """ResNet-18: [2, 2, 2, 2] ``BasicBlock``s (11.7 M parameters). ``weights``: None (random), a checkpoint file,
    or a ``ResNet18_Weights`` name; ``**kwargs`` go to ``ResNet`` (``num_classes``, ...). ``progress`` is
    accepted for torchvision's signature (nothing is downloaded)."""
    return _resnet(BasicBlock, [2, 2, 2, 2], weights, ResNet18_Weights, kwargs)


def resnet34(*, weights=None, progress: bool = True, **kwargs) -> ResNet:
    """ResNet-34: [3, 4, 6, 3] ``BasicBlock``s (21.8 M parameters); arguments as ``resnet18``."""
    return _resnet(BasicBlock, [3, 4, 6, 3], weights, ResNet34_Weights, kwargs)


def resnet50(*, weights=None, progress: bool = True, **kwargs) -> ResNet:
    """ResNet-50: [3, 4, 6, 3] ``Bottleneck``s (25.6 M parameters); arguments as ``resnet18``."""
    return _resnet(Bottleneck, [3, 4, 6, 3], weights, ResNet50_Weights, kwargs)


def resnet101(*, weights=None, progress: bool = True, **kwargs) -> ResNet:
    """ResNet-101: [3, 4, 23, 3] ``Bottleneck``s (44.5 M parameters); arguments as ``resnet18``."""
    return _resnet(Bottleneck, [3, 4, 23, 3], weights, ResNet101_Weights, kwargs)


def resnet152(*, weights=None, progress: bool = True, **kwargs) -> ResNet:
    """ResNet-152: [3, 8, 36, 3] ``Bottleneck``s (60.2 M parameters); arguments as ``resnet18``."""
    return _resnet(Bottleneck, [3, 8, 36, 3], weights, ResNet152_Weights, kwargs)


def resnext50_32x4d(*, weights=None, progress: bool = True, **kwargs) -> ResNet:
    """ResNeXt-50 32x4d: ResNet-50 with 32 groups of width 4 in each 3x3 convolution (25.0 M parameters)."""
    weights = prepare(weights, ResNeXt50_32X4D_Weights, kwargs)
    overwrite_param(kwargs, "groups", 32)
    overwrite_param(kwargs, "width_per_group", 4)
    return load_weights(ResNet(Bottleneck, [3, 4, 6, 3], **kwargs), weights)


def wide_resnet50_2(*, weights=None, progress: bool = True, **kwargs) -> ResNet:
    """Wide ResNet-50-2: ResNet-50 with twice the bottleneck width (68.9 M parameters)."""
    weights = prepare(weights, Wide_ResNet50_2_Weights, kwargs)
    overwrite_param(kwargs, "width_per_group", 64 * 2)
    return load_weights(ResNet(Bottleneck, [3, 4, 6, 3], **kwargs), weights)
