"""In-place writes into a tensor whose elements share memory in PyTorch (an expanded one) raise PyTorch's error,
except for the ops PyTorch lets through; PyTorch's in-place elu/celu/selu/leaky_relu/rrelu save their result and
refuse a backward with a negative slope. Both compared with torch on the same calls."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.autograd import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

# name -> fn(lib, functional, x): the same call on lucid and on torch
WRITES = {
    "add_": lambda L, f, x: x.add_(1),
    "mul_": lambda L, f, x: x.mul_(2),
    "exp_": lambda L, f, x: x.exp_(),
    "clamp_": lambda L, f, x: x.clamp_(0, 1),
    "copy_": lambda L, f, x: x.copy_(L.ones(6, 6)),
    "uniform_": lambda L, f, x: x.uniform_(),
    "index_add_": lambda L, f, x: x.index_add_(0, L.tensor([0]), L.ones(1, 6)),
    "elu": lambda L, f, x: f.elu(x, inplace=True),
    "elu_": lambda L, f, x: f.elu_(x),
    "leaky_relu_": lambda L, f, x: f.leaky_relu_(x),
    "hardswish": lambda L, f, x: f.hardswish(x, inplace=True),
    "silu": lambda L, f, x: f.silu(x, inplace=True),
    "mish": lambda L, f, x: f.mish(x, inplace=True),
    "relu_": lambda L, f, x: f.relu_(x),
    "softplus_out": lambda L, f, x: f.softplus(x, out=x),
    "softshrink_out": lambda L, f, x: f.softshrink(x, out=x),
    "exp_out": lambda L, f, x: L.exp(L.ones(6, 6), out=x),
    # PyTorch lets these write
    "fill_": lambda L, f, x: x.fill_(1.0),
    "zero_": lambda L, f, x: x.zero_(),
    "tril_": lambda L, f, x: x.tril_(),
    "threshold_": lambda L, f, x: f.threshold_(x, 0.0, 1.0),
    "index_fill_": lambda L, f, x: x.index_fill_(0, L.tensor([0]), 1.0),
    "setitem_row": lambda L, f, x: x.__setitem__(0, L.ones(6)),
    "transpose_": lambda L, f, x: x.t_(),
}


def _raises(L, f, fn, x):
    try:
        fn(L, f, x)
    except RuntimeError as e:
        return str(e)
    return None


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", list(WRITES))
def test_write_into_expanded_tensor_as_torch(name):
    fn = WRITES[name]
    expected = _raises(torch, TF, fn, torch.randn(1, 6).expand(6, 6))
    got = _raises(lucid, F, fn, lucid.randn(1, 6).expand(6, 6))
    assert got == expected
    if name.startswith("add"):  # (the case this test is about does raise)
        assert got is not None and got.startswith("unsupported operation")


@pytest.mark.parametrize("shape, target", [((1, 6), (6, 6)), ((6,), (3, 6)), ((6, 1), (6, 1)), ((6,), (1, 6)),
                                           ((2, 1), (2, 0)), ((0, 1), (0, 5))])
def test_only_a_broadcast_expand_overlaps(shape, target):
    """A dim of size 1 kept at 1, or a new dim of size 1, repeats nothing: the write goes through, as in PyTorch."""
    expected = _raises(torch, TF, WRITES["add_"], torch.zeros(shape).expand(target))
    got = _raises(lucid, F, WRITES["add_"], lucid.zeros(shape).expand(target))
    assert got == expected


def test_expanded_in_no_grad_and_clone_and_as_strided():
    x = lucid.randn(1, 6).expand(6, 6)
    with lucid.no_grad(), pytest.raises(RuntimeError, match="unsupported operation"):
        x.mul_(2)
    y = x.clone().add_(1)  # a clone owns its elements
    np.testing.assert_allclose(y.numpy(), x.numpy() + 1)
    with pytest.raises(RuntimeError, match="unsupported operation"):
        lucid.ones(6).as_strided((2, 3), (0, 1)).add_(1)
    z = lucid.ones(6)
    z.as_strided((2, 3), (3, 1)).add_(1)  # no repeated element
    assert z.tolist() == [2.0] * 6


def test_contiguous_copies_an_expanded_tensor_as_torch():
    x = lucid.randn(1, 6).expand(6, 6)
    assert not x.is_contiguous() and not torch.randn(1, 6).expand(6, 6).is_contiguous()
    y = x.contiguous()
    assert y is not x and y.is_contiguous()
    y.add_(1)  # a copy owns its elements (PyTorch's contiguous() copies an expanded tensor too)
    np.testing.assert_allclose(y.numpy(), x.numpy() + 1)
    z = lucid.randn(2, 3)
    assert z.contiguous() is z


def test_refused_write_leaves_tensor_untouched():
    x = lucid.randn(1, 6).expand(6, 6)
    before = x.numpy().copy()
    with pytest.raises(RuntimeError):
        F.elu_(x)
    np.testing.assert_array_equal(x.numpy(), before)


# ------------------------------------------------------------------------------ in-place nodes that save the result
INPLACE_ACTIVATIONS = {
    "elu_neg": (lambda f, x: f.elu_(x, alpha=-2.0), "call out-of-place version"),
    "celu_neg": (lambda f, x: f.celu_(x, alpha=-2.0), "call out-of-place version"),
    "leaky_relu_neg": (lambda f, x: f.leaky_relu_(x, -2.0), "call out-of-place version"),
    "rrelu_eval_neg": (lambda f, x: f.rrelu_(x, -5.0, 1.0), "call out-of-place version"),
    "elu_inplace_kw_neg": (lambda f, x: f.elu(x, alpha=-2.0, inplace=True), "call out-of-place version"),
    "elu": (lambda f, x: f.elu_(x, alpha=0.7), None),
    "elu_zero": (lambda f, x: f.elu_(x, alpha=0.0), None),
    "celu": (lambda f, x: f.celu_(x, alpha=0.7), None),
    "selu": (lambda f, x: f.selu_(x), None),
    "leaky_relu": (lambda f, x: f.leaky_relu_(x, 0.2), None),
    "leaky_relu_zero": (lambda f, x: f.leaky_relu_(x, 0.0), None),
    "rrelu_eval": (lambda f, x: f.rrelu_(x, 0.1, 0.3), None),
}


@pytest.mark.parametrize("name", list(INPLACE_ACTIVATIONS))
def test_inplace_activation_backward_as_torch(name):
    fn, error = INPLACE_ACTIVATIONS[name]
    values = [-1.5, -0.25, 0.0, 0.5, 2.0]
    a_t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    a_l = lucid.tensor(values, dtype=lucid.float64, requires_grad=True)
    b_t, b_l = fn(TF, a_t.clone()), fn(F, a_l.clone())
    assert type(b_l.grad_fn).__name__ == type(b_t.grad_fn).__name__
    np.testing.assert_allclose(b_l.detach().numpy(), b_t.detach().numpy(), rtol=1e-12)
    if error is not None:
        with pytest.raises(RuntimeError) as expected:
            b_t.backward(torch.ones(5, dtype=torch.float64))
        with pytest.raises(RuntimeError, match=error) as got:
            b_l.backward(lucid.ones(5, dtype=lucid.float64))
        assert str(got.value) == str(expected.value)
        return
    b_t.backward(torch.ones(5, dtype=torch.float64))
    b_l.backward(lucid.ones(5, dtype=lucid.float64))
    np.testing.assert_allclose(a_l.grad.numpy(), a_t.grad.numpy(), rtol=1e-7)  # (torch takes celu's 1/alpha in float32)


@pytest.mark.parametrize("name", ["elu", "celu", "selu", "leaky_relu", "rrelu_eval"])
def test_inplace_activation_gradcheck(name):
    fn, _ = INPLACE_ACTIVATIONS[name]
    x = lucid.tensor([-1.5, -0.25, 0.5, 2.0], dtype=lucid.float64, requires_grad=True)  # away from the kink
    assert gradcheck(lambda t: fn(F, t.clone()), (x,))
