"""A whole module through pickle, copy.deepcopy and torch.save/torch.load(weights_only=False) keeps every
parameter's and buffer's dtype, values and requires_grad, the parameter/buffer types, and the module's attributes.
(MLX itself pickles a float64 array as float32: tensors must not hand it their arrays.)"""
import copy
import io
import pickle

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.compat import torch as ctorch


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.w64 = nn.Parameter(lucid.tensor([1.0 + 2.0 ** -40, -3.25], dtype=lucid.float64))
        self.frozen = nn.Parameter(lucid.tensor([0.1, 0.2], dtype=lucid.float64), requires_grad=False)
        self.register_buffer("steps", lucid.tensor([2 ** 40 + 1, -7], dtype=lucid.int64))
        self.register_buffer("mask", lucid.tensor([True, False]))
        self.register_buffer("scratch", lucid.ones(3, dtype=lucid.bfloat16) / 3, persistent=False)


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.b16 = nn.Parameter(lucid.tensor([1.5, -0.125], dtype=lucid.bfloat16))
        self.lin = nn.Linear(2, 3).double()
        self.tag = {"name": "outer", "k": (1, 2)}
        self.inner.w64.no_decay = True  # an attribute set on a parameter


def _torch_roundtrip(m):
    buf = io.BytesIO()
    ctorch.save(m, buf)
    buf.seek(0)
    return ctorch.load(buf, weights_only=False)


ROUNDTRIPS = {
    "pickle": lambda m: pickle.loads(pickle.dumps(m)),
    "pickle_protocol1": lambda m: pickle.loads(pickle.dumps(m, protocol=1)),
    "deepcopy": copy.deepcopy,
    "torch_save": _torch_roundtrip,
}


def _as_numpy(t):
    return np.asarray(t.detach().to(lucid.float32 if t.dtype == lucid.bfloat16 else t.dtype))


@pytest.mark.parametrize("how", list(ROUNDTRIPS))
def test_module_roundtrip_keeps_everything(how):
    m = Outer()
    m2 = ROUNDTRIPS[how](m)
    assert type(m2) is Outer and type(m2.inner) is Inner
    for (name, p), (name2, p2) in zip(m.named_parameters(), m2.named_parameters(), strict=True):
        assert name == name2 and type(p2) is nn.Parameter
        assert p2.dtype == p.dtype and p2.requires_grad == p.requires_grad, name
        np.testing.assert_array_equal(_as_numpy(p2), _as_numpy(p))
    for (name, b), (name2, b2) in zip(m.named_buffers(), m2.named_buffers(), strict=True):
        assert name == name2 and b2.dtype == b.dtype, name
        np.testing.assert_array_equal(_as_numpy(b2), _as_numpy(b))
    assert set(m2.state_dict()) == set(m.state_dict())  # the non-persistent buffer stays out of it
    assert "inner.scratch" not in m2.state_dict()
    assert m2.tag == {"name": "outer", "k": (1, 2)} and m2.training
    assert m2.inner.w64.no_decay is True
    assert m2.inner.steps.tolist() == [2 ** 40 + 1, -7]
    assert m2.inner.w64.tolist()[0] == 1.0 + 2.0 ** -40  # a float64 value a float32 cannot hold


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16", "int64", "int32", "uint8", "bool",
                                   "complex64"])
@pytest.mark.parametrize("protocol", [1, 2, pickle.HIGHEST_PROTOCOL])
def test_tensor_pickle_keeps_dtype(dtype, protocol):
    t = lucid.arange(6).reshape(2, 3).to(getattr(lucid, dtype))
    t2 = pickle.loads(pickle.dumps(t, protocol=protocol))
    assert t2.dtype == t.dtype and t2.shape == t.shape
    np.testing.assert_array_equal(_as_numpy(t2), _as_numpy(t))


def test_buffer_pickle_keeps_type_and_persistence():
    b = nn.Buffer(lucid.ones(2, dtype=lucid.float64), persistent=False)
    b2 = pickle.loads(pickle.dumps(b))
    assert type(b2) is nn.Buffer and b2.persistent is False and b2.dtype == lucid.float64
