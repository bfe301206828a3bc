"""torchvision.ops.misc: the building blocks torchvision's models share (convolution + norm + activation, the
squeeze-and-excitation gate, the MLP), with torchvision's submodule names, so the models' state_dict keys match."""
from __future__ import annotations

from collections.abc import Callable

from ... import nn


class Conv2dNormActivation(nn.Sequential):
    """``Conv2d`` -> ``norm_layer`` -> ``activation_layer`` as one ``Sequential`` (keys ``0.weight``, ``1.weight``,
    ...). ``padding=None`` keeps the size at stride 1 (``(kernel_size - 1) // 2 * dilation``); ``bias=None`` gives
    the convolution a bias only when there is no norm layer; ``norm_layer=None`` or ``activation_layer=None`` leave
    that part out."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int = 3, stride: int = 1,
                 padding: int | None = None, groups: int = 1,
                 norm_layer: Callable[..., nn.Module] | None = nn.BatchNorm2d,
                 activation_layer: Callable[..., nn.Module] | None = nn.ReLU, dilation: int = 1,
                 inplace: bool | None = True, bias: bool | None = None) -> None:
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers: list[nn.Module] = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
                                             dilation=dilation, groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer() if inplace is None else activation_layer(inplace=inplace))
        super().__init__(*layers)
        self.out_channels = out_channels


class SqueezeExcitation(nn.Module):
    """The squeeze-and-excitation gate (Hu et al., 2018): ``x * scale_activation(fc2(activation(fc1(avgpool(x)))))``
    with 1x1 convolutions ``fc1`` (input_channels -> squeeze_channels) and ``fc2`` (back)."""

    def __init__(self, input_channels: int, squeeze_channels: int,
                 activation: Callable[..., nn.Module] = nn.ReLU,
                 scale_activation: Callable[..., nn.Module] = nn.Sigmoid) -> None:
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, input):
        return self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(input)))))

    def forward(self, input):
        return self._scale(input) * input


class MLP(nn.Sequential):
    """``Linear`` -> (``norm_layer``) -> activation -> ``Dropout`` for each width of ``hidden_channels`` but the
    last, then ``Linear`` -> ``Dropout`` (torchvision's layout: a 2-layer MLP's linears are ``0`` and ``3``)."""

    def __init__(self, in_channels: int, hidden_channels: list[int],
                 norm_layer: Callable[..., nn.Module] | None = None,
                 activation_layer: Callable[..., nn.Module] | None = nn.ReLU, inplace: bool | None = None,
                 bias: bool = True, dropout: float = 0.0) -> None:
        params = {} if inplace is None else {"inplace": inplace}
        layers: list[nn.Module] = []
        in_dim = in_channels
        for hidden_dim in hidden_channels[:-1]:
            layers.append(nn.Linear(in_dim, hidden_dim, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden_dim))
            layers += [activation_layer(**params), nn.Dropout(dropout, **params)]
            in_dim = hidden_dim
        layers += [nn.Linear(in_dim, hidden_channels[-1], bias=bias), nn.Dropout(dropout, **params)]
        super().__init__(*layers)
