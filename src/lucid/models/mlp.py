"""A multilayer perceptron classifier: the zoo's baseline for the digits and for ``make_shapes``."""
from __future__ import annotations

from collections.abc import Sequence

from .. import nn


class MLP(nn.Sequential):
    """``Flatten`` then, per hidden width, ``Linear -> ReLU -> Dropout``, then a last ``Linear`` to the logits.

    Input (N, *) with ``in_features`` values per example (an image (N, C, H, W) is flattened); output logits
    (N, num_classes). The keys are those of the same ``torch.nn.Sequential``: with the default hidden=(128, 64),
    ``1.weight`` (128, 64), ``1.bias``, ``4.weight`` (64, 128), ``4.bias``, ``7.weight`` (10, 64), ``7.bias``.

    :param in_features: the flattened input's size (64 for the 8x8 digits).
    :param hidden: the hidden layers' widths.
    :param num_classes: the logits' size.
    :param dropout: the dropout after each hidden layer.

    >>> import lucid
    >>> lucid.models.mlp()(lucid.zeros(2, 8, 8)).shape
    lucid.Size([2, 10])
    """

    def __init__(self, in_features: int = 64, hidden: Sequence[int] = (128, 64), num_classes: int = 10,
                 dropout: float = 0.1):
        layers: list[nn.Module] = [nn.Flatten()]
        width = in_features
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU(), nn.Dropout(dropout)]
            width = h
        layers.append(nn.Linear(width, num_classes))
        super().__init__(*layers)


def mlp(in_features: int = 64, hidden: Sequence[int] = (128, 64), num_classes: int = 10,
        dropout: float = 0.1) -> MLP:
    """An ``MLP``; the defaults fit the bundled 8x8 digits (64 pixels, 10 classes).

    :param in_features: the flattened input's size (64 for the 8x8 digits).
    :param hidden: the hidden layers' widths.
    :param num_classes: the logits' size.
    :param dropout: the dropout after each hidden layer.

    >>> import lucid
    >>> lucid.models.mlp()(lucid.zeros(2, 8, 8)).shape
    lucid.Size([2, 10])
    """
    return MLP(in_features, hidden, num_classes, dropout)
