"""lucid.autograd.grad: the seed contract (003) plus PyTorch's rules (pytorch-autograd-semantics.md §2)."""
import pytest

import lucid
from lucid.autograd import grad


def t(values, rg=True, dtype=None):
    return lucid.tensor(values, requires_grad=rg, dtype=dtype)


def test_single_tensor_input_returns_tensor_and_sequence_returns_tuple():
    x = t([1.0, 2.0])
    assert isinstance(grad((x * x).sum(), x), lucid.Tensor)
    r = grad((x * x).sum(), [x])
    assert isinstance(r, tuple) and r[0].tolist() == [2.0, 4.0]
    r = grad((x * x).sum(), (x,))
    assert isinstance(r, tuple)


def test_dict_inputs_return_dict():
    a, b = t(1.0), t(2.0)
    r = grad(a * b, {"a": a, "b": b})
    assert set(r) == {"a", "b"} and r["a"].item() == 2.0 and r["b"].item() == 1.0


def test_never_touches_leaf_grad():
    x = t([1.0, 2.0])
    x.grad = lucid.tensor([5.0, 5.0])
    grad((x * x).sum(), x)
    assert x.grad.tolist() == [5.0, 5.0]
    y = t([1.0])
    grad((y * 2).sum(), y)
    assert y.grad is None


def test_omitted_grad_outputs_means_ones_and_python_scalars_accepted():
    x = t(3.0)
    assert grad(x * x, x).item() == 6.0
    assert grad(x * x, x, grad_outputs=2.0).item() == 12.0
    v = t([1.0, 2.0])
    assert grad(v * 3, v, grad_outputs=[2.0]).tolist() == [6.0, 6.0]


def test_non_scalar_output_without_grad_outputs_errors():
    x = t([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        grad(x * 2, x)


def test_grad_outputs_shape_checked():
    x = t([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        grad(x * 2, x, lucid.ones(2))


def test_multiple_outputs_and_repeated_output_are_summed():
    x = t(2.0)
    y = x * x
    assert grad([y, y], x).item() == 8.0
    assert grad([x * x, x * 3], x).item() == 7.0


def test_unused_input_error_names_index():
    a, b = t(1.0), t(2.0)
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to not have been used in "
                                           "the graph. Set allow_unused=True if this is the desired behavior."):
        grad(a * 2, [a, b])


def test_allow_unused_gives_none_and_materialize_gives_zeros():
    a, b = t(1.0), t([2.0, 3.0])
    ga, gb = grad(a * 2, [a, b], allow_unused=True)
    assert gb is None
    ga, gb = grad(a * 2, [a, b], materialize_grads=True)
    assert gb.tolist() == [0.0, 0.0] and not gb.requires_grad
    ga, gb = grad(a * a, [a, b], materialize_grads=True, create_graph=True)
    assert gb.requires_grad


def test_materialize_with_allow_unused_false_is_value_error():
    a = t(1.0)
    with pytest.raises(ValueError, match="Expected allow_unused to be True or not passed when materialize_grads=True"):
        grad(a * 2, a, materialize_grads=True, allow_unused=False)


def test_leaf_from_another_graph_counts_as_unused():
    x = t(1.0)
    y = x * 2
    other = y.detach().requires_grad_()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        grad(y, other)


def test_input_that_does_not_require_grad_errors_even_with_allow_unused():
    a = t(1.0)
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        grad(a * 2, [a, lucid.tensor(1.0)], allow_unused=True)


def test_output_that_does_not_require_grad_errors_unless_allow_unused():
    a = t(1.0)
    c = lucid.tensor(3.0)
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        grad(c * 2, a)
    # the seed contract: with allow_unused such outputs are skipped
    assert grad([c * 2, a * 5], a, allow_unused=True).item() == 5.0
    assert grad(c * 2, a, allow_unused=True) is None


def test_empty_inputs_errors():
    a = t(1.0)
    with pytest.raises(RuntimeError, match="`inputs` argument to `grad\\(\\)` cannot be empty."):
        grad(a * 2, [])


def test_create_graph_results_have_grad_fn_and_plain_results_do_not():
    x = t(2.0)
    g = grad(x * x * x, x, create_graph=True)
    assert g.requires_grad and type(g.grad_fn).__name__ == "MulBackward0" or g.grad_fn is not None
    assert grad(g, x).item() == 12.0
    h = grad(x * x * x, x)
    assert not h.requires_grad and h.grad_fn is None


def test_create_graph_under_no_grad_still_builds_graph():
    x = t(2.0)
    y = x * x * x
    with lucid.no_grad():
        g = grad(y, x, create_graph=True)
    assert g.requires_grad


def test_create_graph_without_retain_frees_original_graph():
    x = t(2.0)
    y = x ** 3
    g = grad(y, x, create_graph=True, retain_graph=False)
    grad(g, x)  # the new graph is fine
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        grad(y, x)


def test_third_derivative():
    x = t(1.5)
    y = x.sin() * x
    g1 = grad(y, x, create_graph=True)
    g2 = grad(g1, x, create_graph=True)
    g3 = grad(g2, x)
    import math
    # d3/dx3 (x sin x) = -3 sin x - x cos x
    assert g3.item() == pytest.approx(-3 * math.sin(1.5) - 1.5 * math.cos(1.5), rel=1e-5)


def test_non_leaf_input_and_duplicated_input():
    x = t(2.0)
    h = x * 3
    y = h * h
    gh, gh2 = grad(y, [h, h])
    assert gh.item() == 12.0 and gh2.item() == 12.0


def test_only_walks_nodes_leading_to_inputs():
    calls = []
    a, b = t(1.0), t(2.0)
    ya = a * 2
    yb = b * 3
    yb.register_hook(lambda g: calls.append("b"))
    grad(ya + yb, a)
    assert calls == []


def test_is_grads_batched_gives_jacobian_rows():
    x = t([1.0, 2.0, 3.0])
    jac = grad(x * x, x, lucid.eye(3), is_grads_batched=True)
    assert jac.tolist() == [[2.0, 0, 0], [0, 4.0, 0], [0, 0, 6.0]]


def test_is_grads_batched_shape_error():
    x = t([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="we interpret the first dimension of each grad_output as the batch"):
        grad(x * x, x, lucid.ones(3, 2), is_grads_batched=True)


def test_only_inputs_false_warns():
    x = t(1.0)
    with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
        grad(x * 2, x, only_inputs=False)


def test_grad_fills_retain_grad_non_leaves():
    x = t(2.0)
    h = x * 3
    h.retain_grad()
    grad(h * h, x)
    assert h.grad.item() == 12.0


def test_is_grads_batched_shape_mismatch_names_the_per_sample_shape():
    # PyTorch shows grad_output's shape without its batch dim, as a Size
    x = lucid.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"grad_output\[0\] has a shape of lucid\.Size\(\[4\]\) and output\[0\] "
                                           r"has a shape of lucid\.Size\(\[3\]\)"):
        lucid.autograd.grad(x * 2, x, lucid.ones(2, 4), is_grads_batched=True)
