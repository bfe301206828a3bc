"""Tensors and dtypes printed (tests/test_torch_repr.py compares the texts with real PyTorch's)."""
import json, sys, torch
x = torch.tensor([1.0, 2.0], requires_grad=True)
cases = [
    torch.tensor([1.0, 2.0]), torch.tensor([[1, 2]]), torch.tensor(3.5), torch.tensor(3.0), torch.tensor(7),
    torch.tensor([1.5, -2.25, 1e-5]), torch.tensor([1e10, 1.0]), torch.tensor([0.1, 123.456]),
    torch.tensor([True, False]), torch.tensor([1, 2], dtype=torch.int32), torch.tensor([1.0], dtype=torch.float64),
    torch.zeros(0, 3), torch.zeros(0), torch.zeros(0, dtype=torch.int64), x, x * 2, (x * 2).sum(),
    torch.arange(2000.0), torch.arange(12).reshape(3, 4), torch.arange(24.0).reshape(2, 3, 4) / 7,
    torch.tensor([float("nan"), float("inf"), -1.0]), torch.tensor([float("nan"), 1.5]),
    torch.arange(30.0) * 1.5, torch.arange(2000).reshape(40, 50), torch.tensor([1.0, 2.0], dtype=torch.float16),
    torch.tensor([[1.0, 2.0]], dtype=torch.float64, requires_grad=True),
    torch.nn.Parameter(torch.tensor([1.0, 2.0])), torch.zeros(2, 2, dtype=torch.bool),
    torch.tensor([1 + 2j, -0.5 - 1j]), torch.tensor([-0.0, 0.0]), torch.ones(3, 40) / 3,
]
out = [repr(c) for c in cases] + [str(cases[0]), str(torch.float32), repr(torch.int64), str(torch.bool),
                                  f"{torch.float64}", str(torch.tensor([1.0]).dtype)]
json.dump(out, open(sys.argv[1], "w"))
