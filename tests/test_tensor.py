"""Tensor creation, conversion, inspection, repr, requires_grad rules, detach, devices."""
import mlx.core as mx
import numpy as np
import pytest

import lucid


def test_dtype_inference_like_pytorch():
    assert lucid.tensor([1.0, 2.0]).dtype == lucid.float32
    assert lucid.tensor([1, 2]).dtype == lucid.int64
    assert lucid.tensor([True, False]).dtype == lucid.bool
    assert lucid.tensor(3.5).dtype == lucid.float32 and lucid.tensor(3.5).shape == ()
    assert lucid.tensor(np.array([1.0], dtype=np.float64)).dtype == lucid.float64
    assert lucid.tensor(np.array([1], dtype=np.int32)).dtype == lucid.int32
    assert lucid.tensor(mx.array([1.0], dtype=mx.float16)).dtype == lucid.float16
    assert lucid.tensor([1.0], dtype=lucid.float64).dtype == lucid.float64


def test_float64_numpy_keeps_precision():
    v = 0.1 + 1e-12
    assert lucid.tensor(np.array([v])).tolist()[0] == v


def test_tensor_from_tensor_is_a_copy_leaf():
    a = lucid.tensor([1.0, 2.0], requires_grad=True)
    b = lucid.tensor(a)
    assert b.is_leaf and not b.requires_grad and b.tolist() == [1.0, 2.0]


def test_factories():
    assert lucid.zeros(2, 3).shape == (2, 3) and lucid.zeros((2, 3)).tolist() == [[0.0] * 3] * 2
    assert lucid.ones(2).tolist() == [1.0, 1.0]
    assert lucid.full((2,), 7).dtype == lucid.int64 and lucid.full((2,), 7.0).tolist() == [7.0, 7.0]
    assert lucid.empty(3).shape == (3,)
    assert lucid.arange(5).tolist() == [0, 1, 2, 3, 4] and lucid.arange(5).dtype == lucid.int64
    assert lucid.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert lucid.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert lucid.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert lucid.eye(2, 3).shape == (2, 3)
    x = lucid.ones(2, 3, dtype=lucid.float64)
    assert lucid.zeros_like(x).dtype == lucid.float64 and lucid.ones_like(x).shape == (2, 3)
    assert lucid.full_like(x, 3.0).tolist() == [[3.0] * 3] * 2
    assert lucid.empty_like(x).shape == (2, 3)
    assert lucid.zeros(2, requires_grad=True).requires_grad


def test_random_factories_and_manual_seed():
    lucid.manual_seed(1)
    a = lucid.rand(3)
    lucid.manual_seed(1)
    b = lucid.rand(3)
    assert a.tolist() == b.tolist()
    assert all(0 <= v < 1 for v in a.tolist())
    assert lucid.randn(2, 3).shape == (2, 3)
    r = lucid.randint(0, 5, (100,))
    assert r.dtype == lucid.int64 and 0 <= min(r.tolist()) and max(r.tolist()) < 5
    assert lucid.randint(3, (4,)).shape == (4,)
    assert lucid.normal(2.0, 0.5, (1000,)).mean().item() == pytest.approx(2.0, abs=0.1)
    assert lucid.normal(lucid.zeros(3), lucid.ones(3)).shape == (3,)
    x = lucid.ones(4)
    assert lucid.rand_like(x).shape == (4,) and lucid.randn_like(x).dtype == lucid.float32
    assert sorted(lucid.randperm(5).tolist()) == [0, 1, 2, 3, 4]


def test_manual_seed_takes_pytorchs_range_of_seeds():
    """torch.manual_seed accepts [-2**63, 2**64): a negative seed is its 64-bit two's complement (-1 is 2**64 - 1,
    torch.initial_seed() says so); outside, ValueError."""
    draws = []
    for seed in (-1, 2 ** 64 - 1, -2 ** 63, 2 ** 63):
        lucid.manual_seed(seed)
        draws.append(lucid.rand(3).tolist())
    assert draws[0] == draws[1] and draws[2] == draws[3] and draws[0] != draws[2]
    torch = pytest.importorskip("torch")
    for seed in (2 ** 64, -2 ** 63 - 1):
        with pytest.raises(ValueError) as theirs:
            torch.manual_seed(seed)
        with pytest.raises(ValueError, match=str(theirs.value)):
            lucid.manual_seed(seed)


def test_conversion_and_inspection():
    x = lucid.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert isinstance(x.numpy(), np.ndarray) and x.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert np.asarray(x).shape == (2, 2)
    assert x.shape == (2, 2) and x.size() == (2, 2) and x.size(1) == 2 and x.ndim == 2 and x.dim() == 2
    assert x.numel() == 4 and len(x) == 2
    assert [r.tolist() for r in x] == [[1.0, 2.0], [3.0, 4.0]]
    assert lucid.tensor([5.0]).item() == 5.0 and bool(lucid.tensor([1.0]))
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(x)
    assert isinstance(x.mlx, mx.array)
    assert lucid.from_numpy(np.arange(3)).dtype == lucid.int64
    assert repr(x.shape) == "lucid.Size([2, 2])" and x.shape.numel() == 4
    assert float(lucid.tensor(2.5)) == 2.5 and int(lucid.tensor(3)) == 3


def test_numpy_of_tensor_requiring_grad_errors():
    x = lucid.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Use tensor.detach\\(\\).numpy\\(\\) instead"):
        x.numpy()
    assert x.detach().numpy().tolist() == [1.0]


def test_casts():
    x = lucid.tensor([1.5, 2.5])
    assert x.double().dtype == lucid.float64 and x.long().tolist() == [1, 2] and x.int().dtype == lucid.int32
    assert x.bool().dtype == lucid.bool and x.half().dtype == lucid.float16 and x.float() is x
    assert x.to(lucid.float64).dtype == lucid.float64 and x.to("cpu") is x
    assert x.to(lucid.tensor([1])).dtype == lucid.int64


def test_repr_forms():
    assert repr(lucid.tensor([2.0, 4.0, 6.0])) == "Tensor([2., 4., 6.])"
    assert repr(lucid.tensor([1.0], requires_grad=True)) == "Tensor([1.], requires_grad=True)"
    x = lucid.tensor([1.0], requires_grad=True)
    assert repr(x * 2) == "Tensor([2.], grad_fn=<MulBackward0>)"
    assert repr(lucid.tensor([1.0], dtype=lucid.float64)) == "Tensor([1.], dtype=lucid.float64)"
    assert repr(lucid.tensor(3.0)) == "Tensor(3.)"
    assert repr(lucid.tensor([1, 2])) == "Tensor([1, 2])"


def test_requires_grad_only_for_float_and_complex_with_three_messages():
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        lucid.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        lucid.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"):
        lucid.tensor([1, 2]).requires_grad = True
    for dt in (lucid.float16, lucid.bfloat16, lucid.float64):
        assert lucid.zeros(2, dtype=dt, requires_grad=True).requires_grad


def test_requires_grad_flags_on_non_leaf():
    x = lucid.tensor([1.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad = False
    y.requires_grad_(True)  # no-op
    x.requires_grad_(False)
    assert not x.requires_grad


def test_is_leaf_rules():
    assert lucid.tensor([1.0]).is_leaf
    x = lucid.rand(2, requires_grad=True)
    assert x.is_leaf and not (x + 1).is_leaf
    assert x.detach().is_leaf and (x * 2).detach().is_leaf
    with lucid.no_grad():
        assert (x * 2).is_leaf


def test_grad_fn_graph_structure():
    x = lucid.tensor([1.0], requires_grad=True)
    y = x * 2
    nf = y.grad_fn.next_functions
    assert type(nf[0][0]).__name__ == "AccumulateGrad" and nf[0][0].variable is x and nf[1] == (None, 0)
    assert y.grad_fn.name() == "MulBackward0"
    z = y + y
    assert z.grad_fn.next_functions[0][0] is y.grad_fn


def test_detach_shares_data_and_version():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    d.add_(1)
    assert x.tolist() == [2.0, 3.0] and x._version == 1
    x2 = x.detach().requires_grad_()
    assert x2.requires_grad and x2.is_leaf


def test_detach_in_place_on_non_leaf():
    x = lucid.tensor([1.0], requires_grad=True)
    y = x * 2
    y.detach_()
    assert y.grad_fn is None and not y.requires_grad and y.is_leaf


def test_data_shares_storage_without_version_bump():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    x.data.add_(1)
    assert x.tolist() == [2.0, 3.0] and x._version == 0
    x.data = lucid.tensor([7.0, 7.0])
    assert x.tolist() == [7.0, 7.0] and x.requires_grad


def test_devices():
    x = lucid.ones(2)
    assert x.device == lucid.device("cpu") or x.device.type == "gpu"
    assert str(lucid.device("cpu")) == "cpu" and lucid.device("cuda").type == "gpu"
    assert x.cpu() is x
    if not mx.is_available(mx.gpu):
        with pytest.raises(RuntimeError, match="device 'gpu' is not available"):
            x.to("gpu")


def test_float64_to_gpu_keeps_its_values_or_says_there_is_no_gpu():
    x = lucid.tensor([0.1, 1e-300], dtype=lucid.float64)
    if not mx.is_available(mx.gpu):
        with pytest.raises(RuntimeError, match="device 'gpu' is not available"):
            x.to("gpu")
        return
    y = x.to("gpu")  # the GPU has no float64: its ops run on the CPU stream
    assert y.dtype == lucid.float64 and y.tolist() == [0.1, 1e-300]


def test_numpy_interop_operators():
    x = lucid.tensor([1.0, 2.0])
    assert (np.array([1.0, 1.0]) + x).tolist() == [2.0, 3.0]
    assert isinstance(np.array([1.0, 1.0]) * x, lucid.Tensor)
