"""PyTorch's private ops that its nn code and tests call: ``torch._masked_softmax``, ``torch._softmax`` and
``torch._VF._add_relu``, on lucid.compat.torch, against torch on the same inputs."""
import numpy as np
import pytest

import lucid
import lucid.compat.torch as ltorch
from lucid.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def _pair(values, dtype="float64", requires_grad=False):
    return (torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=requires_grad),
            lucid.tensor(values, dtype=getattr(lucid, dtype), requires_grad=requires_grad))


def _close(a, t, **kw):
    np.testing.assert_allclose(a.detach().numpy(), t.detach().numpy(), **kw)


# (input shape, mask shape, dim, mask_type)
CASES = [((3, 5), (3, 5), 1, 2), ((3, 5), (3, 5), 0, 2), ((2, 3, 4), (2, 3, 4), None, 1), ((2, 3, 4, 4), (2, 4), -1, 1),
         ((2, 3, 4, 4), (2, 4), 2, 1), ((2, 3, 4, 4), (4, 4), -1, 0), ((2, 3, 4, 4), (4, 4), 1, 0),
         ((2, 3, 4, 4), (2, 3, 4, 4), 3, 7)]


@pytest.mark.parametrize("shape, mshape, dim, mask_type", CASES)
def test_masked_softmax_as_torch(shape, mshape, dim, mask_type):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    m = rng.random(mshape) < 0.4
    m.reshape(-1, mshape[-1])[0] = True  # a row masked whole: NaN forward, no gradient (PyTorch's CPU kernel)
    g = rng.standard_normal(shape)
    xt, xl = _pair(x.tolist(), requires_grad=True)
    rt = torch._masked_softmax(xt, torch.tensor(m), dim, mask_type)
    rl = ltorch._masked_softmax(xl, lucid.tensor(m), dim, mask_type)
    assert type(rl.grad_fn).__name__ == type(rt.grad_fn).__name__ == "MaskedSoftmaxBackward0"
    _close(rl, rt, rtol=1e-12, atol=1e-15)  # (NaN where torch has NaN)
    # the gradient against torch's with the mask spelled out whole (torch's backward of a 2-D mask over the last dim
    # fails: "Mask shape should match grad shape")
    full = np.broadcast_to(m.reshape((shape[0], 1, 1, -1) if mask_type == 1 else (1, 1) + m.shape), shape) \
        if len(mshape) == 2 and len(shape) == 4 else m
    xt2 = xt.detach().clone().requires_grad_()
    torch._masked_softmax(xt2, torch.tensor(full.copy()), dim, 2).backward(torch.tensor(g))
    rl.backward(lucid.tensor(g))
    _close(xl.grad, xt2.grad, rtol=1e-9, atol=1e-12)


def test_masked_softmax_gradients():
    rng = np.random.default_rng(1)
    x = lucid.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    m = lucid.tensor(rng.random((3, 5)) < 0.4)
    m[0] = True
    m[1, 0] = False

    def f(t):  # a row masked whole is NaN: compare the other rows (its gradient, 0, is checked above)
        return ltorch._masked_softmax(t, m, 1, 2)[1:]

    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


@pytest.mark.parametrize("args", [
    ((2, 3, 4, 4), (2, 4), -1, None), ((2, 3, 4, 4), (2, 4), -1, 3), ((3, 4), (4, 3), 1, 2),
    ((2, 3, 4, 4), (3, 4), -1, 1), ((2, 3, 4, 4), (4, 3), -1, 0), ((3, 4), (3, 4), 2, 2)])
def test_masked_softmax_errors_as_torch(args):
    shape, mshape, dim, mask_type = args
    with pytest.raises(Exception) as expected:
        torch._masked_softmax(torch.zeros(shape), torch.zeros(mshape, dtype=torch.bool), dim, mask_type)
    with pytest.raises(expected.type) as got:
        ltorch._masked_softmax(lucid.zeros(shape), lucid.zeros(mshape, dtype=lucid.bool), dim, mask_type)
    assert str(got.value) == str(expected.value)


def test_masked_softmax_mask_and_input_dtypes_as_torch():
    with pytest.raises(RuntimeError, match="Mask should be a boolean tensor"):
        ltorch._masked_softmax(lucid.zeros(3), lucid.zeros(3), 0, 2)
    with pytest.raises(RuntimeError) as expected:
        torch._masked_softmax(torch.zeros(3, dtype=torch.long), torch.zeros(3, dtype=torch.bool), 0, 2)
    with pytest.raises(RuntimeError) as got:
        ltorch._masked_softmax(lucid.zeros(3, dtype=lucid.int64), lucid.zeros(3, dtype=lucid.bool), 0, 2)
    assert str(got.value) == str(expected.value)


def test_softmax_kernel_name():
    xt, xl = _pair([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    _close(ltorch._softmax(xl, 1, False), torch._softmax(xt, 1, False), rtol=1e-12)
    with pytest.raises(RuntimeError, match="half to float conversion is not supported on CPU"):
        ltorch._softmax(xl, 1, True)


@pytest.mark.parametrize("other", ["tensor", "broadcast", 1, -0.5])
def test_add_relu_as_torch(other):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 5))
    b = {"tensor": rng.standard_normal((4, 5)), "broadcast": rng.standard_normal((1, 5))}.get(other, other)
    at, al = _pair(a.tolist())
    bt, bl = (torch.tensor(b), lucid.tensor(b)) if isinstance(b, np.ndarray) else (b, b)
    _close(ltorch._VF._add_relu(al, bl), torch._VF._add_relu(at, bt), rtol=1e-12)
    if isinstance(b, np.ndarray):
        _close(ltorch._VF._add_relu(al, bl, alpha=2), torch._VF._add_relu(at, bt, alpha=2), rtol=1e-12)


def test_add_relu_gradients():
    a = lucid.tensor([[-1.3, 0.4, 2.0], [0.7, -0.2, 1.1]], dtype=lucid.float64, requires_grad=True)
    b = lucid.tensor([0.5, -0.9, 0.25], dtype=lucid.float64, requires_grad=True)
    assert gradcheck(lambda x, y: ltorch._VF._add_relu(x, y, alpha=2), (a, b))
    assert ltorch._VF.relu is lucid.relu  # its public names are torch's own
