"""LeNet-5 (LeCun et al., 1998) in the layout of PyTorch's "Neural Networks" tutorial: ``conv1, conv2, fc1, fc2,
fc3`` with ReLU and 2x2 max-pooling."""
from __future__ import annotations

from .. import nn
from ..nn import functional as F


class LeNet5(nn.Module):
    """LeNet-5 for (N, in_channels, input_size, input_size) inputs, logits (N, num_classes).

    ``conv1`` (6, in_channels, 5, 5) -> ReLU -> max-pool 2 -> ``conv2`` (16, 6, 5, 5) -> ReLU -> max-pool 2 ->
    flatten -> ``fc1`` (120, 16*s*s) -> ReLU -> ``fc2`` (84, 120) -> ReLU -> ``fc3`` (num_classes, 84).
    At input_size 32 this is the classic network (s = 5); at 28 (MNIST) conv1 pads by 2 so s is 5 again; at 8 (the
    bundled digits) both convolutions pad by 2 and s = 2. Every size from 4 pixels up works.

    :param num_classes: the logits' size.
    :param in_channels: the input's channels.
    :param input_size: the input's height and width (28 for MNIST, 8 for the bundled digits).
    """

    def __init__(self, num_classes: int = 10, in_channels: int = 1, input_size: int = 28):
        super().__init__()
        if input_size < 4:
            raise ValueError(f"LeNet5 needs inputs of at least 4x4 pixels, got input_size={input_size}")
        # A 5x5 convolution pads by 2 (keeping the size) where the input is too small to shrink: conv1 under 32 px
        # (the usual MNIST adaptation), conv2 under 10 px (it must leave 5 px or more before the pool).
        pad1 = 0 if input_size >= 32 else 2
        size = (input_size + 2 * pad1 - 4) // 2
        pad2 = 0 if size >= 10 else 2
        size = (size + 2 * pad2 - 4) // 2
        self.input_size = input_size
        self.conv1 = nn.Conv2d(in_channels, 6, 5, padding=pad1)
        self.conv2 = nn.Conv2d(6, 16, 5, padding=pad2)
        self.fc1 = nn.Linear(16 * size * size, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def lenet5(num_classes: int = 10, in_channels: int = 1, input_size: int = 28) -> LeNet5:
    """A ``LeNet5`` for square inputs of ``input_size`` pixels (8 for the bundled digits, 28 for MNIST).

    :param num_classes: the logits' size.
    :param in_channels: the input's channels.
    :param input_size: the input's height and width (28 for MNIST, 8 for the bundled digits).
    """
    return LeNet5(num_classes, in_channels, input_size)
