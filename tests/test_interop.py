"""Tensors crossing into numpy, MLX and PyTorch (DLPack, __mlx_array__, __array__), pickling and deep copies as
PyTorch's, format(), and modules refusing what is not a tensor. PyTorch is an optional oracle."""
import copy
import pickle

import mlx.core as mx
import numpy as np
import pytest

import lucid
import lucid.nn as nn

try:
    import torch
except ImportError:
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


# ------------------------------------------------------------------------------------------------ DLPack
@pytest.mark.parametrize("dtype", [lucid.float32, lucid.float64, lucid.int64, lucid.bool])
def test_numpy_from_dlpack(dtype):
    t = lucid.arange(6).reshape(2, 3).to(dtype)
    a = np.from_dlpack(t)
    assert a.shape == (2, 3) and a.dtype == np.dtype(str(dtype).replace("mlx.core.", ""))
    np.testing.assert_array_equal(a, t.numpy())
    assert t.__dlpack_device__() == t.mlx.__dlpack_device__()


def test_dlpack_export_of_a_lazy_result_computes_it():
    t = lucid.ones(3) * 2 + 1  # not evaluated yet
    np.testing.assert_array_equal(np.from_dlpack(t), [3.0, 3.0, 3.0])


def test_dlpack_exports_a_tensor_that_requires_grad_as_its_values():
    # PyTorch's __dlpack__ refuses one; MLX reads tensors through DLPack, so mx.array(parameter) needs it
    w = lucid.ones(2, requires_grad=True)
    np.testing.assert_array_equal(np.from_dlpack(w), [1.0, 1.0])
    assert mx.array(w * 2).tolist() == [2.0, 2.0]


@needs_torch
def test_torch_from_dlpack_and_back():
    t = lucid.tensor([[1.5, -2.0], [3.0, 4.0]])
    pt = torch.from_dlpack(t)
    assert pt.dtype == torch.float32 and pt.tolist() == t.tolist()
    back = lucid.from_dlpack(torch.arange(4, dtype=torch.float64))
    assert back.dtype == lucid.float64 and back.tolist() == [0.0, 1.0, 2.0, 3.0]
    bf = lucid.from_dlpack(torch.ones(2, dtype=torch.bfloat16))  # numpy has no bfloat16: MLX reads it
    assert bf.dtype == lucid.bfloat16 and bf.tolist() == [1.0, 1.0]


def test_lucid_from_dlpack():
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    t = lucid.from_dlpack(a)
    assert isinstance(t, lucid.Tensor) and t.dtype == lucid.float64 and t.shape == (2, 3)
    np.testing.assert_array_equal(t.numpy(), a)
    assert not t.requires_grad
    t2 = lucid.from_dlpack(lucid.tensor([1, 2, 3]))
    assert t2.dtype == lucid.int64 and t2.tolist() == [1, 2, 3]
    assert lucid.from_dlpack(mx.array([1.0, 2.0])).tolist() == [1.0, 2.0]
    with pytest.raises(TypeError, match="__dlpack__"):
        lucid.from_dlpack([1, 2])


# ------------------------------------------------------------------------------------------------ MLX
def test_mlx_functions_accept_tensors():
    t = lucid.tensor([1.0, 2.0, 3.0])
    assert isinstance(mx.array(t), mx.array) and mx.array(t).tolist() == [1.0, 2.0, 3.0]
    assert mx.array(lucid.tensor(2.5)).item() == 2.5
    np.testing.assert_allclose(np.array(mx.exp(t)), np.exp([1.0, 2.0, 3.0]), rtol=1e-6)
    assert t.__mlx_array__() is t.mlx  # no copy
    w = lucid.ones(2, requires_grad=True)
    assert mx.array(w).tolist() == [1.0, 1.0]  # t.mlx already gives it: no autograd in MLX's functions


# ------------------------------------------------------------------------------------------------ numpy / torch
def test_np_asarray_refuses_a_tensor_that_requires_grad_as_pytorch():
    w = lucid.tensor([1.0, 2.0], requires_grad=True)
    message = r"Can't call numpy\(\) on Tensor that requires grad. Use tensor.detach\(\).numpy\(\) instead."
    with pytest.raises(RuntimeError, match=message):
        np.asarray(w)
    with pytest.raises(RuntimeError, match=message):
        np.asarray(w * 2)
    np.testing.assert_array_equal(np.asarray(w.detach()), [1.0, 2.0])
    assert np.asarray(lucid.tensor([1, 2]), dtype=np.float64).dtype == np.float64
    if torch is not None:
        with pytest.raises(RuntimeError, match=message):
            np.asarray(torch.tensor([1.0], requires_grad=True))


@needs_torch
@pytest.mark.parametrize("make", [lambda: lucid.tensor(2.5), lambda: lucid.tensor([1.0, 2.0]),
                                  lambda: lucid.arange(6).reshape(2, 3), lambda: lucid.tensor([True, False])],
                         ids=["0-d", "1-d", "int 2-d", "bool"])
def test_torch_tensor_and_as_tensor(make):
    t = make()
    for convert in (torch.tensor, torch.as_tensor):
        pt = convert(t)
        assert tuple(pt.shape) == tuple(t.shape) and pt.tolist() == t.tolist()
        assert str(pt.dtype).replace("torch.", "") == str(t.dtype).replace("mlx.core.", "")


def test_len_and_iteration_of_a_0d_tensor_raise_as_pytorch():
    s = lucid.tensor(1.0)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(s)
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(s)


# ------------------------------------------------------------------------------------------------ pickle, deepcopy
@pytest.mark.parametrize("dtype", [lucid.float32, lucid.float64, lucid.bfloat16, lucid.int64, lucid.bool,
                                   lucid.complex64, lucid.uint8])
def test_dtypes_pickle_and_deepcopy_to_themselves(dtype):
    assert pickle.loads(pickle.dumps(dtype)) is dtype
    assert copy.deepcopy(dtype) is dtype and copy.copy(dtype) is dtype


def test_deepcopy_of_an_optimizer_after_a_step():
    model = nn.Linear(3, 2)
    opt = lucid.optim.Adam(model.parameters(), lr=0.1)
    model(lucid.ones(4, 3)).sum().backward()
    opt.step()
    clone = copy.deepcopy(opt)
    assert clone.state_dict()["state"].keys() == opt.state_dict()["state"].keys()
    sd = pickle.loads(pickle.dumps(opt.state_dict()))
    assert sd["state"][0]["exp_avg"].tolist() == opt.state_dict()["state"][0]["exp_avg"].tolist()


def test_pickle_of_tensors():
    for t in (lucid.tensor([1.0, 2.0]), lucid.arange(4, dtype=lucid.int32), lucid.ones(2, dtype=lucid.bfloat16)):
        back = pickle.loads(pickle.dumps(t))
        assert back.dtype == t.dtype and back.tolist() == t.tolist() and not back.requires_grad
    w = lucid.tensor([1.0, 2.0], requires_grad=True)
    w.grad = lucid.ones(2)
    back = pickle.loads(pickle.dumps(w))
    assert back.requires_grad and back.is_leaf and back.grad is None  # as PyTorch: .grad is not pickled


def test_pickle_of_a_non_leaf_gives_a_leaf_as_pytorch():
    w = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = w * 3
    back = pickle.loads(pickle.dumps(y))
    assert back.tolist() == [3.0, 6.0] and back.requires_grad and back.is_leaf and back.grad_fn is None
    if torch is not None:
        ty = pickle.loads(pickle.dumps(torch.tensor([1.0, 2.0], requires_grad=True) * 3))
        assert (ty.requires_grad, ty.is_leaf, ty.grad_fn) == (back.requires_grad, back.is_leaf, None)


def test_deepcopy_of_a_non_leaf_raises_pytorchs_error():
    y = lucid.tensor([1.0], requires_grad=True) * 2
    message = r"Only Tensors created explicitly by the user \(graph leaves\) support the deepcopy protocol"
    with pytest.raises(RuntimeError, match=message):
        copy.deepcopy(y)
    if torch is not None:
        with pytest.raises(RuntimeError, match=message):
            copy.deepcopy(torch.tensor([1.0], requires_grad=True) * 2)


def test_deepcopy_of_a_leaf_copies_value_flag_and_grad():
    w = lucid.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    c = copy.deepcopy(w)
    assert c is not w and c.requires_grad and c.is_leaf and c.tolist() == [1.0, 2.0]
    assert c.grad.tolist() == [2.0, 4.0] and c.grad is not w.grad
    with lucid.no_grad():
        c.mul_(10)
    assert w.tolist() == [1.0, 2.0]  # independent storage
    pair = copy.deepcopy([w, w])
    assert pair[0] is pair[1]  # the memo keeps shared tensors shared


# ------------------------------------------------------------------------------------------------ format
def test_format_of_one_element_tensors():
    assert format(lucid.tensor(2.0 / 3), ".3f") == "0.667"
    assert f"{lucid.tensor(0.5)}" == "0.5"  # PyTorch formats a 0-d tensor as its number
    assert f"{lucid.tensor(7)}" == "7" and f"{lucid.tensor(7):>4d}" == "   7"
    assert f"{lucid.tensor([[2.5]]):.2f}" == "2.50"  # lucid: any one-element tensor given a spec
    assert f"{lucid.tensor([1.0, 2.0])}" == str(lucid.tensor([1.0, 2.0]))
    with pytest.raises(TypeError, match="unsupported format string"):
        format(lucid.tensor([1.0, 2.0]), ".3f")
    w = lucid.tensor(1.25, requires_grad=True)
    assert f"{w * 2:.1f}" == "2.5"
    if torch is not None:
        assert f"{torch.tensor(0.5)}" == "0.5" and format(torch.tensor(2.0 / 3), ".3f") == "0.667"


# ------------------------------------------------------------------------------------------------ modules
@pytest.mark.parametrize("module,bad,fn", [
    (nn.Linear(3, 2), np.ones((1, 3), np.float32), "linear"),
    (nn.Linear(3, 2), [[1.0, 2.0, 3.0]], "linear"),
    (nn.Conv2d(1, 1, 3), np.ones((1, 1, 4, 4)), "conv2d"),
    (nn.MaxPool2d(2), [[[1.0, 2.0], [3.0, 4.0]]], "max_pool2d"),
    (nn.LSTM(3, 2), [[1.0, 2.0, 3.0]], "lstm"),
    (nn.LayerNorm(3), np.ones(3), "layer_norm"),
    (nn.BatchNorm1d(3), np.ones((2, 3)), "batch_norm"),
    (nn.GroupNorm(1, 2), np.ones((1, 2)), "group_norm"),
])
def test_module_given_a_numpy_array_or_list_names_the_argument(module, bad, fn):
    kind = "numpy.ndarray" if isinstance(bad, np.ndarray) else "list"
    with pytest.raises(TypeError, match=rf"{fn}\(\): argument 'input' \(position 1\) must be Tensor, not {kind}"):
        module(bad)
