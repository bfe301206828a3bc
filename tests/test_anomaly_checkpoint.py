"""detect_anomaly / set_detect_anomaly, and activation checkpointing."""
import mlx.core as mx
import numpy as np
import pytest

import lucid
from lucid.autograd import detect_anomaly, gradcheck, gradgradcheck, is_anomaly_enabled, set_detect_anomaly
from lucid.utils.checkpoint import checkpoint, checkpoint_sequential
from helpers import leaf


def make_nan_in_backward():
    a = lucid.tensor([0.0, 1.0], requires_grad=True)
    return (a.sqrt() * 0).sum()  # forward is finite; d sqrt at 0 is inf, times 0 gives nan


def test_detect_anomaly_names_node_and_forward_line():
    with detect_anomaly():
        assert is_anomaly_enabled()
        loss = make_nan_in_backward()
        with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output") as e:
            loss.backward()
    assert "make_nan_in_backward" in str(e.value) and "a.sqrt()" in str(e.value)
    assert not is_anomaly_enabled()


def test_set_detect_anomaly_and_off_by_default():
    loss = make_nan_in_backward()
    loss.backward()  # off: nan flows silently, as in PyTorch
    set_detect_anomaly(True)
    try:
        with pytest.raises(RuntimeError, match="returned nan values"):
            make_nan_in_backward().backward()
    finally:
        set_detect_anomaly(False)
    with detect_anomaly(check_nan=False):
        make_nan_in_backward().backward()


def test_detect_anomaly_as_decorator():
    @detect_anomaly()
    def f():
        make_nan_in_backward().backward()

    with pytest.raises(RuntimeError, match="returned nan values"):
        f()


def block(h):
    for _ in range(3):
        h = (h * 1.1).tanh() + h.sin()
    return h


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_gives_same_gradients(reentrant):
    x = leaf(3, 4)
    w = leaf(4, seed=1)
    checkpoint(lambda a, b: block(a * b), x, w, use_reentrant=reentrant).sum().backward()
    gx, gw = x.grad, w.grad
    x.grad = w.grad = None
    block(x * w).sum().backward()
    assert gx.tolist() == x.grad.tolist() and gw.tolist() == w.grad.tolist()


def test_non_reentrant_checkpoint_passes_gradcheck_and_gradgradcheck():
    assert gradcheck(lambda a: checkpoint(block, a, use_reentrant=False), (leaf(2, 3),))
    assert gradgradcheck(lambda a: checkpoint(block, a, use_reentrant=False), (leaf(2, 3),))


def test_reentrant_checkpoint_refuses_grad_and_backward_inputs():
    # PyTorch's rule: the reentrant variant's node runs a full nested backward, so only a full backward may reach it
    x = leaf(2, 2)
    with pytest.raises(RuntimeError, match="torch.utils.checkpoint is incompatible with .grad()"):
        lucid.autograd.grad(checkpoint(lucid.exp, x, use_reentrant=True).sum(), x)
    with pytest.raises(RuntimeError, match="use_reentrant=False"):
        checkpoint(lucid.exp, x, use_reentrant=True).sum().backward(inputs=[x])
    checkpoint(lucid.exp, x, use_reentrant=True).sum().backward()  # the refusal left nothing behind
    assert x.grad.tolist() == x.exp().tolist()


def test_reentrant_checkpoint_gives_closed_over_parameters_gradients():
    lin = lucid.nn.Linear(3, 2)
    x = lucid.randn(4, 3, requires_grad=True)
    checkpoint(lin, x, use_reentrant=True).tanh().sum().backward()
    got = lin.weight.grad, lin.bias.grad, x.grad
    lin.zero_grad(set_to_none=True)
    x.grad = None
    lin(x).tanh().sum().backward()
    for g, e in zip(got, (lin.weight.grad, lin.bias.grad, x.grad)):
        assert g is not None and np.allclose(g.numpy(), e.numpy())


def test_nested_reentrant_checkpoints_give_the_same_gradients():
    x = leaf(2, 3)
    inner = lambda b: (b * b).exp()  # noqa: E731
    checkpoint(lambda a: checkpoint(inner, a, use_reentrant=True).sin(), x, use_reentrant=True).sum().backward()
    got, x.grad = x.grad, None
    inner(x).sin().sum().backward()
    assert np.allclose(got.numpy(), x.grad.numpy())


def test_reentrant_checkpoint_double_backward_with_create_graph():
    # lucid's extension: backward(create_graph=True) through a reentrant segment gives a differentiable .grad
    x = leaf(2, 3)
    checkpoint(block, x, use_reentrant=True).sum().backward(create_graph=True)
    got = lucid.autograd.grad(x.grad.sum(), x)
    y = x.detach().requires_grad_()
    (e,) = lucid.autograd.grad(block(y).sum(), [y], create_graph=True)
    assert np.allclose(got.numpy(), lucid.autograd.grad(e.sum(), y).numpy())


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_replays_random_state(reentrant):
    x = lucid.ones(1000, requires_grad=True)

    def noisy(a):
        return a * (lucid.rand(1000) > 0.5)

    lucid.manual_seed(0)
    checkpoint(noisy, x, use_reentrant=reentrant).sum().backward()
    lucid.manual_seed(0)
    mask = (lucid.rand(1000) > 0.5).float()
    assert x.grad.tolist() == mask.tolist()


def test_checkpoint_sequential_and_kwargs():
    x = leaf(2, 3)
    fns = [lambda h: h.sin(), lambda h: h * 2, lambda h: h.exp(), lambda h: h.tanh()]
    y = checkpoint_sequential(fns, 2, x, use_reentrant=False)
    expected = x.sin().mul(2).exp().tanh()
    assert y.tolist() == expected.tolist()
    assert checkpoint(lambda a, k=1: a * k, x, k=3, use_reentrant=False).tolist() == (x * 3).tolist()


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_lowers_peak_memory(reentrant):
    def run(use):
        x = lucid.randn(500, 500, requires_grad=True)
        mx.eval(x.mlx)
        mx.reset_peak_memory()
        base = mx.get_active_memory()
        h = x
        for _ in range(8):
            h = checkpoint(block, h, use_reentrant=reentrant) if use else block(h)
        h.sum().backward()
        mx.eval(x.grad.mlx)
        return mx.get_peak_memory() - base

    plain, ckpt = run(False), run(True)
    assert ckpt < 0.6 * plain


def test_anomaly_mode_warns_on_entry_and_names_the_failing_node_with_its_forward_trace():
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            with lucid.autograd.detect_anomaly():
                a = lucid.randn(5, requires_grad=True)
                d1 = a + 1
                d2 = d1 ** 2  # the failing node's forward call: this line is in its trace
                d1 += 1
                lucid.autograd.grad(d2.sum(), a)
    messages = [str(x.message) for x in w]
    assert "Anomaly Detection has been enabled" in messages[0]
    assert messages[1].startswith("Error detected in PowBackward0") and "d2 = d1 ** 2" in messages[1]


def test_anomaly_error_in_a_node_recorded_by_a_backward_names_the_node_that_recorded_it():
    import warnings

    class Inner(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g / 0.0 * 0.0  # NaN

    class Outer(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return Inner.apply(g * x)

    x = lucid.rand(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="returned nan values"):
            with lucid.autograd.detect_anomaly():
                (gx,) = lucid.autograd.grad(Outer.apply(x), (x,), lucid.ones(3), create_graph=True)
                gx.sum().backward()
    messages = [str(x.message) for x in w]
    assert "Error detected in InnerBackward" in messages[1] and "Inner.apply(g * x)" in messages[1]
    assert "induced by OuterBackward" in messages[2] and "Outer.apply(x)" in messages[2]


def test_anomaly_error_without_forward_information_says_so():
    import warnings
    a = lucid.randn(3, requires_grad=True)
    d1 = a + 1
    d2 = d1 ** 2
    d1 += 1
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            with lucid.autograd.detect_anomaly():
                d2.sum().backward()
    assert "No forward pass information available" in str(w[1].message)


def test_reentrant_checkpoint_of_a_function_without_graph_raises_at_backward():
    def no_graph(a):
        with lucid.no_grad():
            return a * 2

    x = lucid.randn(2, requires_grad=True)
    out = checkpoint(no_graph, x, use_reentrant=True)
    with pytest.raises(RuntimeError, match="none of output has requires_grad=True"):
        (out + x).sum().backward()
    out = checkpoint(no_graph, x, use_reentrant=False)  # the non-reentrant variant just has no graph there
    (out + x).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
