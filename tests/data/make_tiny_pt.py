"""Writes tiny_state_dict.pt, the PyTorch checkpoint test_compat_torch.py reads without PyTorch installed (run once
with PyTorch 2.x: `python tests/data/make_tiny_pt.py`)."""
from collections import OrderedDict
from pathlib import Path

import torch

base = torch.arange(12, dtype=torch.float32)
state = OrderedDict(
    weight=base[:6].reshape(2, 3).t(),   # a transposed (strided) view
    tail=base[8:],                       # the same storage at an offset
    param=torch.nn.Parameter(torch.tensor([0.5, -1.5])),
    half=torch.tensor([1.0, 2.5], dtype=torch.bfloat16),
    steps=torch.tensor(7, dtype=torch.int64),
    mask=torch.tensor([True, False]),
    meta={"epoch": 3, "name": "tiny", "sizes": (2, 3)},
)
torch.save(state, Path(__file__).with_name("tiny_state_dict.pt"))
