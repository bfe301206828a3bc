"""PyTorch's top-level in-place functions (``torch.relu_(x)``, ``torch.zero_(x)``, ``torch.clamp_(x, 0, 1)``): the
Tensor methods, called on ``input``. lucid imports it after every op module, so that all the methods exist."""
from __future__ import annotations

import inspect

from .._tensor import Tensor

_TOP_LEVEL_INPLACE = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_",
    "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_",
    "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "i0_", "index_put_",
    "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_", "rad2deg_", "reciprocal_",
    "relu_", "resize_as_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_",
    "tanh_", "trunc_", "xlogy_", "zero_", "negative_")


def _top_level(name: str):
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    sig = inspect.signature(getattr(Tensor, name))
    first, *rest = sig.parameters.values()
    fn.__signature__ = sig.replace(parameters=[first.replace(name="input"), *rest])
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(...)``: the in-place Tensor method as a function."
    return fn


globals().update({_name: _top_level(_name) for _name in _TOP_LEVEL_INPLACE})

__all__ = list(_TOP_LEVEL_INPLACE)
