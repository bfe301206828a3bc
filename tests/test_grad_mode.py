"""Grad modes (pytorch-autograd-semantics.md §3): no_grad, enable_grad, set_grad_enabled, inference_mode."""
import threading

import pytest

import lucid


def leaf():
    return lucid.tensor([1.0, 2.0], requires_grad=True)


def test_no_grad_results_do_not_require_grad():
    x = leaf()
    with lucid.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf


def test_no_grad_and_enable_grad_as_decorators_with_and_without_parentheses():
    x = leaf()

    @lucid.no_grad
    def f1():
        return x * 2

    @lucid.no_grad()
    def f2():
        return x * 2

    @lucid.enable_grad()
    def f3():
        return x * 2

    assert not f1().requires_grad and not f2().requires_grad
    with lucid.no_grad():
        assert f3().requires_grad
    assert f1.__name__ == "f1"


def test_decorating_generator_functions():
    x = leaf()

    @lucid.no_grad()
    def gen():
        for _ in range(2):
            yield lucid.is_grad_enabled(), x * 2

    out = list(gen())
    assert [o[0] for o in out] == [False, False] and not out[0][1].requires_grad
    assert lucid.is_grad_enabled()


def test_nesting_and_instance_reuse():
    ng = lucid.no_grad()
    with ng:
        assert not lucid.is_grad_enabled()
        with lucid.enable_grad():
            assert lucid.is_grad_enabled()
            with ng:
                assert not lucid.is_grad_enabled()
            assert lucid.is_grad_enabled()
        assert not lucid.is_grad_enabled()
    assert lucid.is_grad_enabled()


def test_set_grad_enabled_function_context_and_decorator():
    with pytest.raises(TypeError):
        lucid.set_grad_enabled()
    lucid.set_grad_enabled(False)
    try:
        assert not lucid.is_grad_enabled()
    finally:
        lucid.set_grad_enabled(True)
    assert lucid.is_grad_enabled()
    with lucid.set_grad_enabled(False):
        assert not lucid.is_grad_enabled()
    assert lucid.is_grad_enabled()

    @lucid.set_grad_enabled(False)
    def f():
        return lucid.is_grad_enabled()

    assert lucid.is_grad_enabled()  # decorating does not switch the mode
    assert f() is False and lucid.is_grad_enabled()


def test_grad_mode_is_thread_local():
    seen = []
    with lucid.no_grad():
        th = threading.Thread(target=lambda: seen.append(lucid.is_grad_enabled()))
        th.start()
        th.join()
    assert seen == [True]


def test_inference_mode():
    x = leaf()
    with lucid.inference_mode():
        assert lucid.is_inference_mode_enabled() and not lucid.is_grad_enabled()
        y = x * 2
        assert y.is_inference() and not y.requires_grad
    assert not lucid.is_inference_mode_enabled()
    with lucid.inference_mode(False):
        assert lucid.is_grad_enabled() and not (x * 2).is_inference()

    @lucid.inference_mode()
    def f():
        return x * 3

    assert f().is_inference()


def test_inference_tensors_outside_inference_mode():
    x = leaf()
    with lucid.inference_mode():
        y = x * 2
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * y
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside InferenceMode"):
        y.add_(1)
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor outside InferenceMode"):
        y.requires_grad_()
    assert (y + 1).tolist() == [3.0, 5.0]  # use without grad tracking is allowed


def test_backward_and_grad_restore_grad_mode():
    x = leaf()
    (x * x).sum().backward()
    lucid.autograd.grad((x * x).sum(), x, create_graph=True)
    assert lucid.is_grad_enabled() is True
    y = (x * x).sum()
    with lucid.no_grad():
        y.backward()
        assert lucid.is_grad_enabled() is False
