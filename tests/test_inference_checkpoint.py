"""Inference-mode tensors' rules (PyTorch's TestAutogradInferenceMode) and non-reentrant, nested checkpointing
(TestNestedCheckpoint)."""
import collections
import weakref
from itertools import product

import mlx.core as mx
import pytest

import lucid
from lucid.autograd import grad, gradcheck, gradgradcheck
from lucid.utils.checkpoint import checkpoint, checkpoint_sequential, set_checkpoint_early_stop
from helpers import leaf

is_inf = lucid.is_inference
ADD, TRANSPOSE = (lambda x: x.add_(2)), (lambda x: x.transpose_(0, 1))
VIEW_MSG = "A view was created in inference mode and is being modified inplace"


# ---------------------------------------------------------------------------------------------------- inference mode
@pytest.mark.parametrize("mode, use_kwarg", list(product((True, False, None), (True, False))))
def test_inference_mode_decorator_forms(mode, use_kwarg):
    expected = True if mode is None else mode

    def func(x):
        assert lucid.is_inference_mode_enabled() == expected
        return x * x
    if mode is None:
        decorated = lucid.inference_mode(mode=func) if use_kwarg else lucid.inference_mode(func)
    else:
        decorated = (lucid.inference_mode(mode=mode) if use_kwarg else lucid.inference_mode(mode))(func)
    for rg in (True, False):
        d = decorated(lucid.ones(1, 2, 3, requires_grad=rg))
        assert (not expected or is_inf(d)) and d.requires_grad == (rg and not expected)


def test_inference_tensors_made_in_inference_mode():
    with lucid.inference_mode():
        c = lucid.ones(1, 2, 3)
        assert is_inf(c) and not c.requires_grad
        t = lucid.ones(1, 2, 3, requires_grad=True)
        assert is_inf(t) and t.requires_grad
        assert is_inf(lucid.ones(2).requires_grad_(False))
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
        c._version


def test_inplace_in_inference_mode_on_saved_normal_tensor_is_detected():
    a = lucid.ones(1, 2, 3, requires_grad=True).clone()
    out = a * a
    with lucid.inference_mode():
        a.add_(2)
    assert not is_inf(a)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward(lucid.ones_like(out))


@pytest.mark.parametrize("fn", [ADD, TRANSPOSE, lambda x: x.copy_(lucid.ones(1, 2, 3))])
def test_inference_tensor_inplace_in_inference_mode_stays_inference(fn):
    with lucid.inference_mode():
        for rg in (True, False):
            c = lucid.ones(1, 2, 3, requires_grad=rg)
            fn(c)
            assert is_inf(c) and c.requires_grad == rg


def test_views_of_inference_tensors_are_inference_tensors_without_grad():
    for rg in (True, False):
        with lucid.inference_mode():
            c = lucid.ones(1, 2, 3, requires_grad=rg)
            v = c.view(-1)
            assert is_inf(v) and not v.requires_grad
        out = c.view(-1)
        assert is_inf(out) and not out.requires_grad and out.is_leaf
        t1 = c.view_as(lucid.ones(6))
        assert is_inf(t1) and not t1.requires_grad


@pytest.mark.parametrize("fn", [ADD, TRANSPOSE])
def test_inference_tensor_inplace_outside_inference_mode_is_refused(fn):
    with lucid.inference_mode():
        c = lucid.ones(1, 2, 3)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        fn(c)
    assert not is_inf(c * c) and (c * c).is_leaf


@pytest.mark.parametrize("fn", [ADD, TRANSPOSE])
def test_normal_tensor_stays_normal_in_inference_mode(fn):
    for rg in (True, False):
        a = lucid.ones(1, 2, 3, requires_grad=rg).clone()
        with lucid.inference_mode():
            fn(a)
            fn(a)
            assert not is_inf(a) and a.requires_grad == rg
            v = a.view(-1)
            assert not is_inf(v) and v.requires_grad == rg
        fn(a)
        assert not is_inf(a) and a.requires_grad == rg


def test_view_made_in_inference_mode_of_normal_tensor():
    for rg in (True, False):
        a = lucid.ones(1, 2, 3, requires_grad=rg).clone()
        with lucid.inference_mode():
            out = a.view(-1)
            assert not is_inf(out) and out.requires_grad == rg and out.is_leaf
            tmp = out.view(-1)
            tmp.add_(2)  # inside inference mode: allowed
            assert not is_inf(tmp) and tmp.requires_grad == rg
        assert (out * out).requires_grad == rg and not is_inf(out * out)
        if rg:
            with pytest.raises(RuntimeError, match=VIEW_MSG):
                out.add_(2)
            with pytest.raises(RuntimeError, match=VIEW_MSG):
                out.transpose_(0, 0)
        else:
            out.add_(2)
        assert out.view(2, 3).requires_grad == rg


def test_mixing_inference_and_normal_tensors():
    for rg in (True, False):
        s = lucid.ones(1, 2, 3, requires_grad=rg)
        with lucid.inference_mode():
            c = lucid.ones(1, 2, 3, requires_grad=rg)
        out = c.add(s)  # add saves nothing: fine
        assert not is_inf(out) and out.requires_grad == rg
        assert s.view_as(c).requires_grad == rg and not is_inf(s.view_as(c))
        if rg:
            out.backward(lucid.ones_like(out))
            assert c.grad.tolist() == lucid.ones_like(c).tolist()
            with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
                c * s


def test_inference_tensor_as_inplace_argument_and_as_out():
    with lucid.inference_mode():
        c = lucid.ones(1, 2, 3)
    s = lucid.ones(1, 2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        s.clone().mul_(c)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        lucid.mul(s, s, out=c)
    a = lucid.ones(1, 2, 3)
    a.mul_(c)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode is not allowed"):
        lucid.mul(a, a, out=c)


# ---------------------------------------------------------------------------------------------------- checkpointing
def _grad(fn):
    def wrapper(x):
        with lucid.enable_grad():
            return grad(fn(x), (x,), create_graph=True)[0]
    return wrapper


def _sum(fn):
    return lambda x: fn(x).sum()


def _c(fn):
    return lambda *a, **k: checkpoint(fn, *a, use_reentrant=False, **k)


def _assert_graph_dies(fn):
    """Every node of fn's result graph is freed once the result is (no reference cycle through checkpointing)."""
    def scope():
        out = fn(lucid.randn((), requires_grad=True))
        refs, seen, todo = [], set(), collections.deque([out.grad_fn])
        while todo:
            node = todo.popleft()
            marker = type("Marker", (), {})()
            node.metadata["m"] = marker
            refs.append(weakref.ref(marker))
            for nxt, _ in node.next_functions:
                if nxt is not None and nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return refs
    assert all(r() is None for r in scope())


def _f(x):
    return x.sin().exp().sin()


def _g(x):
    grad(x.sin().exp().sin(), x)  # a backward inside the checkpointed function
    return x.sin()


@pytest.mark.parametrize("early_stop", [True, False])
@pytest.mark.parametrize("fn", [_f, _g])
def test_nested_checkpoints_give_the_same_derivatives(early_stop, fn):
    g, c = _grad, _c
    cases = [(fn, (c(fn), c(c(fn)))), (g(fn), (g(c(fn)), g(c(c(fn))))),
             (g(g(fn)), (g(c(g(fn))), c(g(g(c(fn)))), g(c(g(c(fn)))))),
             (g(g(g(fn))), (g(c(g(g(c(fn))))), g(c(g(c(g(c(fn))))))))]
    with set_checkpoint_early_stop(early_stop):
        x = lucid.randn((), requires_grad=True)
        for expected_fn, actual_fns in cases:
            expected = expected_fn(x)
            for actual_fn in actual_fns:
                assert lucid.allclose(expected, actual_fn(x))
                _assert_graph_dies(actual_fn)


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint_two_children(early_stop):
    g, s, c = _grad, _sum, _c

    def f2(x):
        return x.cos().sin().exp()

    with set_checkpoint_early_stop(early_stop):
        a = lucid.randn(3, 3, requires_grad=True)
        expected = g(s(g(s(lambda x: f2(_f(x))))))(a)
        hc = c(lambda x: c(f2)(c(_f)(x)))
        assert lucid.allclose(expected, g(s(g(s(hc))))(a))
        assert lucid.allclose(expected, g(s(c(g(s(hc)))))(a))
        _assert_graph_dies(g(hc))


def test_non_reentrant_checkpoint_gradients_by_finite_differences():
    assert gradcheck(lambda a: _c(_f)(a), (leaf(2, 3),))
    assert gradgradcheck(lambda a: _c(_c(_f))(a), (leaf(2, 3),))


def test_non_reentrant_checkpoint_non_tensor_inputs_outputs_and_kwargs():
    def fn(k, a, b, f, blah=None):
        return f(k * a * b.exp()) * (1 if blah is None else blah), 1, "abcd"
    a, b, w = (lucid.tensor(v, requires_grad=True) for v in (2.0, 3.0, 0.5))
    out, one, text = checkpoint(fn, 3, a, b, lucid.sin, blah=w, use_reentrant=False)
    assert (one, text) == (1, "abcd")
    actual = grad(out, (a, b, w))
    expected = grad(fn(3, a, b, lucid.sin, blah=w)[0], (a, b, w))
    assert all(lucid.allclose(p, q) for p, q in zip(actual, expected))


def test_non_reentrant_checkpoint_gives_closed_over_parameters_gradients():
    w = lucid.randn(3, requires_grad=True)
    x = lucid.randn(3)  # the input does not require grad
    checkpoint(lambda z: (z * w).sin().sum(), x, use_reentrant=False).backward()
    assert lucid.allclose(w.grad, (x * w).cos() * x)


def test_non_reentrant_checkpoint_keeps_the_graph_nodes():
    calls = []
    a = lucid.tensor(1.0, requires_grad=True)
    out = checkpoint(lambda t: t.sin().cos().sin(), a, use_reentrant=False)
    assert out.grad_fn.name() == "SinBackward0"
    out.grad_fn.next_functions[0][0].register_hook(lambda *_: calls.append(1))
    out.backward()
    assert calls == [1]


def test_non_reentrant_checkpoint_backward_inside_a_hook():
    def run(ckpt):
        a = lucid.tensor(1.0, requires_grad=True)
        fn = (lambda t: (t.sin().cos(), t.sin().cos().sin()))
        x, out = checkpoint(fn, a, use_reentrant=False) if ckpt else fn(a)
        out.grad_fn.register_hook(lambda *_: x.backward(retain_graph=True))
        out.backward(retain_graph=True)
        return a.grad.item()
    assert run(True) == pytest.approx(run(False))


def test_early_stop_skips_the_rest_of_the_recomputation():
    calls = []

    def fn(x):
        y = x.sin().cos()
        calls.append("clone")
        return y.clone()  # clone saves nothing: early stop ends the rerun before it
    a = lucid.tensor(1.0, requires_grad=True)
    checkpoint(fn, a, use_reentrant=False).backward()
    assert len(calls) == 1  # the forward only
    calls.clear()
    with set_checkpoint_early_stop(False):
        out = checkpoint(fn, a, use_reentrant=False)
    out.backward()  # the setting at forward time counts
    assert len(calls) == 2
    calls.clear()
    checkpoint(lambda x: (calls.append(1), x.clone())[1], a, use_reentrant=False).backward()
    assert len(calls) == 1  # nothing saved: nothing recomputed
    expected = 2 * (-lucid.sin(lucid.sin(a)) * lucid.cos(a)).item() + 1  # two sin().cos() walks and a clone
    assert a.grad.item() == pytest.approx(expected)


def test_checkpoint_warns_when_use_reentrant_is_not_passed():
    x = lucid.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="torch.utils.checkpoint: the use_reentrant parameter should be passed "
                                         "explicitly"):
        checkpoint(lucid.sin, x)
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter should be passed"):
        checkpoint_sequential([lucid.sin], 1, x)


def test_reentrant_checkpoint_refuses_keyword_arguments():
    with pytest.raises(ValueError, match="Unexpected keyword arguments: k"):
        checkpoint(lambda a, k=1: a * k, lucid.ones(1), k=2, use_reentrant=True)


def test_non_reentrant_checkpoint_saved_value_read_outside_backward_recomputes_each_time():
    calls = [0]

    def f(a):
        calls[0] += 1
        return (a * a).exp()

    x = lucid.randn(4, requires_grad=True)
    y = checkpoint(f, x, use_reentrant=False)
    assert calls[0] == 1
    assert y.grad_fn._saved_result.tolist() == y.tolist()  # recomputed for this read, then dropped again
    assert calls[0] == 2
    y.grad_fn._saved_result
    assert calls[0] == 3
    y.sum().backward()
    assert calls[0] == 4
    with pytest.raises(RuntimeError, match="directly access saved tensors after they have already been freed"):
        y.grad_fn._saved_result


class _SavesIntermediates(lucid.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        w = a * b
        ctx.save_for_backward(a, b, w)
        return w * 2

    @staticmethod
    def backward(ctx, g):
        a, b, w = ctx.saved_tensors
        return 2 * g * b, 2 * g * a


def test_non_reentrant_checkpoint_drops_and_recomputes_custom_function_saved_tensors():
    x, y = lucid.randn(3, requires_grad=True), lucid.randn(3, requires_grad=True)
    out = checkpoint(lambda a, b: _SavesIntermediates.apply(a.sin(), b.cos()), x, y, use_reentrant=False)
    ctx = out.grad_fn
    assert ctx.saved_tensors[2].tolist() == (x.sin() * y.cos()).tolist()  # read outside backward: recomputed
    out.sum().backward()
    assert mx.allclose(x.grad._storage.data, (2 * y.cos() * x.cos())._storage.data).item()
    assert mx.allclose(y.grad._storage.data, (-2 * x.sin() * y.sin())._storage.data).item()


def test_checkpointed_custom_function_may_read_saved_tensors_once_per_backward():
    class ReadsTwice(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            ctx.saved_tensors
            ctx.saved_tensors  # PyTorch frees a recomputed value when it is unpacked
            return g * 2

    x = lucid.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Unpack is being triggered for a tensor that was already unpacked once"):
        checkpoint(lambda a: ReadsTwice.apply(a.exp()), x, use_reentrant=False).sum().backward()
    ReadsTwice.apply(x.exp()).sum().backward()  # outside a checkpoint, reading twice is fine


def test_view_of_inference_tensor_is_not_an_autograd_view():
    with lucid.inference_mode():
        c = lucid.ones(1, 2, 3)
    out = c.view(-1)
    assert lucid.is_inference(out) and not out.requires_grad
    assert not out._is_view() and out._base is None  # as PyTorch: views of inference tensors are not tracked


@pytest.mark.parametrize("write", [lambda a: a.add_(2), lambda a: a.transpose_(0, 1)])
def test_inference_view_grad_fn_refused_after_base_written_in_normal_mode(write):
    for requires_grad in (True, False):
        a = lucid.ones(1, 2, 3, requires_grad=requires_grad).clone()
        with lucid.inference_mode():
            v = a.view(-1)
        write(a)
        if requires_grad:
            with pytest.raises(RuntimeError, match="A view was created in inference mode and its base or another "
                                                   "view of its base has been modified inplace in normal mode"):
                v.grad_fn
        else:
            assert v.grad_fn is None
