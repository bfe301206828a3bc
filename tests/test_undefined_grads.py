"""Undefined output gradients (PyTorch's "Notes about undefined output gradients"): a node that only undefined
(None) gradients reach still runs, as in PyTorch: tensor hooks see None, a custom Function's backward gets zeros
(or None with ``ctx.set_materialize_grads(False)``), a built-in node passes None on; gradcheck checks every backward
copes (``check_undefined_grad``). Expected values are PyTorch 2.13's, written out."""
import warnings

import pytest

import lucid
from lucid.autograd import Function, grad, gradcheck, gradgradcheck
from lucid.autograd.gradcheck import GradcheckError, undefined_grad


class Identity(Function):
    calls: list = []

    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        Identity.calls.append(None if g is None else g.tolist())
        return g


class DropGrad(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, g):
        return None


class TwoOutputs(Function):
    calls: list = []

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 1, x * 2

    @staticmethod
    def backward(ctx, g1, g2):
        TwoOutputs.calls.append((g1, None if g2 is None else g2.tolist()))
        return g1


@pytest.fixture(autouse=True)
def _clear_calls():
    Identity.calls.clear()
    TwoOutputs.calls.clear()


def test_custom_function_below_a_none_gradient_runs_with_zeros():
    x = lucid.ones(2, requires_grad=True)
    seen = []
    y = x * 2
    y.register_hook(lambda g: seen.append(g.tolist()))
    (DropGrad.apply(Identity.apply(y)).sum() + (x * 3).sum()).backward()
    assert Identity.calls == [[0.0, 0.0]] and seen == [[0.0, 0.0]]
    assert x.grad.tolist() == [3.0, 3.0]


def test_undefined_grad_reaches_a_custom_function_as_zeros():
    x = lucid.ones(2, requires_grad=True)
    leaf = []
    x.register_hook(lambda g: leaf.append(g.tolist()))
    out = undefined_grad(Identity.apply(x.clone()))
    assert type(out.grad_fn).__name__ == "UndefinedGradBackward"
    assert grad(out, x, lucid.ones(2), allow_unused=True).tolist() == [0.0, 0.0]
    assert Identity.calls == [[0.0, 0.0]] and leaf == [[0.0, 0.0]]


def test_undefined_grad_with_materialize_grads_false_gives_none_and_hooks_see_none():
    x = lucid.ones(2, requires_grad=True)
    leaf = []
    x.register_hook(lambda g: leaf.append(g))
    a, b = TwoOutputs.apply(x)
    assert grad(undefined_grad(a), x, lucid.ones(2), allow_unused=True) is None
    assert TwoOutputs.calls == [(None, None)] and leaf == [None]
    a, b = TwoOutputs.apply(x)
    assert grad([undefined_grad(a), b], x, [lucid.ones(2)] * 2, allow_unused=True) is None
    assert TwoOutputs.calls[-1] == (None, [1.0, 1.0])


def test_undefined_grad_through_builtin_ops_calls_tensor_hooks_with_none():
    x = lucid.ones(3, requires_grad=True)
    seen = []
    y = x.sin()
    y.register_hook(lambda g: seen.append(g))
    z = y.exp() * 2
    assert grad(undefined_grad(z), x, lucid.ones(3), allow_unused=True) is None
    assert seen == [None]


def test_gradcheck_reports_a_backward_that_cannot_take_undefined_grads():
    def fn(x):
        def hook(g):
            if g is None:
                raise RuntimeError("x is undefined")
        y = x.clone()
        y.register_hook(hook)
        return y

    x = lucid.ones(1, dtype=lucid.float64, requires_grad=True)
    with pytest.warns(UserWarning, match="Backwards compatibility: New undefined gradient support checking feature"):
        with pytest.raises(GradcheckError, match="Expected backward function to handle undefined output grads"):
            gradcheck(fn, (x,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(fn, (x,), raise_exception=False) is False
    assert gradcheck(fn, (x,), check_undefined_grad=False)


def test_gradcheck_rejects_a_backward_that_is_nonzero_for_undefined_grads():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return lucid.ones(1, dtype=lucid.float64) if g is None else g

    x = lucid.ones(1, dtype=lucid.float64, requires_grad=True)
    with pytest.warns(UserWarning, match="Backwards compatibility"):
        with pytest.raises(GradcheckError, match="Expected all input grads to be undefined or zero"):
            gradcheck(Bad.apply, (x,))


def test_gradcheck_undefines_one_output_at_a_time_and_gradgradcheck_passes_the_check_on():
    x = lucid.tensor([0.3, 0.7], dtype=lucid.float64, requires_grad=True)
    assert gradcheck(lambda t: (t.sin(), t.exp() * t), (x,))
    assert gradgradcheck(lambda t: (t.sin() * t, t.exp()), (x,))
