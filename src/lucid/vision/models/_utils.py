"""Helpers the model files share."""
from __future__ import annotations


def _make_divisible(v: float, divisor: int, min_value: int | None = None) -> int:
    """``v`` rounded to the nearest multiple of ``divisor`` (at least ``min_value``), never more than 10% below
    ``v`` (the channel rounding of the MobileNets and EfficientNets)."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def init_like_mobilenet(model) -> None:
    """The MobileNets' initialisation: Kaiming-normal (fan_out) convolutions with zero bias, norm layers weight 1
    and bias 0, linear layers N(0, 0.01) with zero bias."""
    from ... import nn

    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0, 0.01)
            nn.init.zeros_(m.bias)
