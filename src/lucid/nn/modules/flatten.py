"""Flatten and Unflatten: reshape a contiguous range of dimensions (PyTorch's layers of the same names)."""
from __future__ import annotations

from ..._tensor import Tensor
from .module import Module


class Flatten(Module):
    """Flatten dims ``start_dim..end_dim`` into one: (N, C, H, W) -> (N, C*H*W) with the defaults.

    :param start_dim: the first dimension flattened.
    :param end_dim: the last dimension flattened.

    >>> import lucid
    >>> lucid.nn.Flatten()(lucid.zeros(2, 3, 4, 5)).shape
    lucid.Size([2, 60])
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expand dim ``dim`` into ``unflattened_size``: (N, 12) -> (N, 3, 4) with ``Unflatten(1, (3, 4))``.

    :param dim: the dimension to expand.
    :param unflattened_size: its new shape (its product is the dimension's size).
    """

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError("invalid argument type for dim parameter")
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError(f"unflattened_size must be tuple of ints, but found element of type "
                                f"{type(elem).__name__} at pos {idx}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


__all__ = ["Flatten", "Unflatten"]
