"""torch.types: the typing aliases PyTorch's annotations use (``from torch.types import Number, _size``)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Union

from lucid import Size, Tensor, device

Number = Union[int, float, bool]
_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_size = Union[Size, list, tuple]
_int = int
_float = float
_bool = bool
_dtype = object
Device = Union[device, str, int, None]
