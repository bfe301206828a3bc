"""lucid.autograd.backward / Tensor.backward: PyTorch's semantics (pytorch-autograd-semantics.md §1), each rule a
test named after it."""
import warnings

import numpy as np
import pytest

import lucid
from lucid.autograd import backward


def t(values, rg=True, dtype=None):
    return lucid.tensor(values, requires_grad=rg, dtype=dtype)


def test_implicit_seed_for_one_element_root_of_any_rank():
    x = t([[1.0]])
    (x * x * 1.0).backward()
    assert x.grad.tolist() == [[2.0]]


def test_implicit_seed_rejected_for_non_scalar():
    x = t([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()


def test_grad_tensors_shape_must_match_exactly():
    x = t([1.0, 2.0, 3.0])
    # shapes print as PyTorch's torch.Size does in this message
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of lucid\.Size\(\[1, 3\]\) "
                                           r"and output\[0\] has a shape of lucid\.Size\(\[3\]\)"):
        backward(x * 2, lucid.ones(1, 3))
    assert x.grad is None


def test_grad_tensors_single_tensor_is_wrapped():
    x = t([1.0, 2.0])
    backward(x * 3, lucid.tensor([1.0, 2.0]))
    assert x.grad.tolist() == [3.0, 6.0]


def test_grad_tensors_bare_float_is_type_error():
    x = t(2.0)
    with pytest.raises(TypeError, match="not iterable"):
        backward(x * 2, 1.0)


def test_grad_tensors_list_element_must_be_tensor_or_none():
    x = t(2.0)
    with pytest.raises(TypeError, match="gradients can be either Tensors or None, but got float"):
        backward([x * 2], [1.0])


def test_grad_tensors_any_real_dtype_and_leaf_keeps_dtype():
    x = t([1.0, 2.0])
    backward(x * 2, lucid.tensor([1.0, 1.0], dtype=lucid.float64))
    assert x.grad.dtype == lucid.float32 and x.grad.tolist() == [2.0, 2.0]
    x.grad = None
    backward(x * 2, lucid.tensor([1, 1]))
    assert x.grad.dtype == lucid.float32


def test_too_few_gradients_error_and_extra_ignored():
    x = t([1.0, 2.0])
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        backward([x * 2, x * 3], [lucid.ones(2)])
    backward([x * 2], [lucid.ones(2), lucid.ones(5)])
    assert x.grad.tolist() == [2.0, 2.0]


def test_grad_variables_is_deprecated_alias():
    x = t(1.0)
    with pytest.warns(FutureWarning, match="`grad_variables` is deprecated. Use `grad_tensors` instead."):
        backward(x * 2, grad_variables=[lucid.tensor(1.0)])
    assert x.grad.item() == 2.0


def test_root_that_does_not_require_grad_names_its_index():
    x = t([1.0])
    y = lucid.tensor([2.0])
    with pytest.raises(RuntimeError, match="element 1 of tensors does not require grad and does not have a grad_fn"):
        backward([x * 2, y * 2], [lucid.ones(1), lucid.ones(1)])
    with lucid.no_grad():
        z = x * 2
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad"):
        z.backward()


def test_leaf_root_gets_grad_one():
    x = t(3.0)
    x.backward()
    assert x.grad.item() == 1.0


def test_several_roots_are_summed_at_shared_leaves():
    x = t([1.0, 2.0])
    backward([(x * x).sum(), (x * 3).sum()])
    assert x.grad.tolist() == [5.0, 7.0]


def test_root_that_feeds_another_root():
    x = t(2.0)
    y = x * x
    z = y * 3
    backward([y, z])
    assert x.grad.item() == pytest.approx(2 * 2.0 + 3 * 2 * 2.0)


def test_retain_graph_defaults_to_create_graph_and_second_walk_raises():
    x = t([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph_true_allows_second_walk_and_accumulates():
    x = t([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_nodes_that_save_nothing_can_be_walked_twice():
    x = t([1.0, 2.0, 3.0])
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("make", [lambda x: (x * 2).sum(), lambda x: x.exp().sum(), lambda x: (x ** 2).sum(),
                                  lambda x: (x * x).sum()])
def test_nodes_that_save_tensors_raise_on_second_walk(make):
    x = t([1.0, 2.0])
    y = make(x)
    y.backward()
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        y.backward()


def test_saved_tensor_access_after_free_raises():
    x = t([1.0, 2.0])
    y = x * x
    assert y.grad_fn._saved_self is x
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.grad_fn._saved_self


def test_leaf_grad_accumulates_in_place_keeping_identity():
    x = t([1.0, 2.0])
    (x * x).sum().backward()
    g = x.grad
    (x * x).sum().backward()
    assert x.grad is g and g.tolist() == [4.0, 8.0]


def test_manually_assigned_grad_is_added_to():
    x = t([1.0, 2.0])
    x.grad = lucid.tensor([10.0, 10.0])
    (x * 3).sum().backward()
    assert x.grad.tolist() == [13.0, 13.0]


def test_grad_reset_by_none_or_zero_():
    x = t([1.0])
    (x * 3).sum().backward()
    x.grad.zero_()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0]
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0]
    x.zero_grad()
    assert x.grad is None


def test_assigning_grad_of_wrong_shape_or_dtype_errors():
    x = t([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"attempting to assign a gradient of size '\[3\]' to a tensor of size "
                                           r"'\[2\]'. Please ensure that the gradient and the tensor are the same size"):
        x.grad = lucid.ones(3)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype 'int64'"):
        x.grad = lucid.tensor([1, 2])
    assert x.grad is None


def test_grad_is_fresh_tensor_not_the_seed():
    x = t([1.0, 2.0])
    seed = lucid.tensor([1.0, 1.0])
    x.backward(seed)
    assert x.grad is not seed
    x.grad.add_(1)
    assert seed.tolist() == [1.0, 1.0]


def test_inputs_restricts_accumulation():
    a, b = t([1.0]), t([2.0])
    (a * b).sum().backward(inputs=[a])
    assert a.grad.tolist() == [2.0] and b.grad is None


def test_inputs_single_tensor_and_duplicates_not_double_counted():
    a, b = t([1.0]), t([2.0])
    (a * b).sum().backward(inputs=a)
    assert a.grad.tolist() == [2.0]
    (a * b).sum().backward(inputs=[b, b])
    assert b.grad.tolist() == [1.0]


def test_inputs_non_leaf_gets_grad_via_retain_grad():
    x = t([1.0, 2.0])
    h = x * 2
    y = (h * h).sum()
    y.backward(inputs=[h], retain_graph=True)
    assert h.retains_grad and h.grad.tolist() == [4.0, 8.0] and x.grad is None
    y.backward(inputs=[h])
    assert h.grad.tolist() == [8.0, 16.0]


def test_inputs_unused_is_not_an_error():
    a, c = t([1.0]), t([5.0])
    (a * 2).sum().backward(inputs=[a, c])
    assert c.grad is None and a.grad.tolist() == [2.0]


def test_inputs_empty_errors():
    a = t([1.0])
    with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be empty."):
        (a * 2).sum().backward(inputs=[])


def test_inputs_that_do_not_require_grad_error():
    a = t([1.0])
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        (a * 2).sum().backward(inputs=[lucid.tensor([1.0])])


def test_inputs_dict_values_and_non_dict_mapping_type_error():
    from types import MappingProxyType
    a = t([1.0])
    (a * 2).sum().backward(inputs={"a": a})
    assert a.grad.tolist() == [2.0]
    with pytest.raises(TypeError):
        (a * 2).sum().backward(inputs=MappingProxyType({"a": a}))


def test_non_leaf_grad_access_warns_and_is_none():
    x = t([1.0])
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert y.grad is None


def test_retain_grad_on_non_leaf_accumulates_and_root_gets_seed():
    x = t([1.0, 2.0])
    y = x * 3
    y.retain_grad()
    z = y.sum()
    z.retain_grad()
    z.backward(retain_graph=True)
    assert y.grad.tolist() == [1.0, 1.0] and z.grad.item() == 1.0
    z.backward()
    assert y.grad.tolist() == [2.0, 2.0]


def test_retain_grad_on_leaf_is_noop_and_on_no_grad_tensor_errors():
    x = t([1.0])
    x.retain_grad()
    assert not x.retains_grad
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        lucid.tensor([1.0]).retain_grad()


def test_create_graph_makes_grad_differentiable_and_warns():
    x = t(2.0)
    y = x ** 3
    with pytest.warns(UserWarning, match="create a reference cycle"):
        y.backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.grad_fn is not None
    assert x.grad.item() == 12.0
    (g2,) = lucid.autograd.grad(x.grad, [x])
    assert g2.item() == 12.0


def test_create_graph_works_inside_no_grad():
    x = t(2.0)
    y = x ** 3
    with lucid.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y.backward(create_graph=True)
    assert x.grad.requires_grad


def test_backward_runs_under_no_grad_without_create_graph():
    x = t(2.0)
    (x ** 3).backward()
    assert not x.grad.requires_grad and x.grad.grad_fn is None


def test_deep_chain_has_no_recursion_limit():
    x = t(1.0)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.backward()
    assert x.grad.item() == 1.0


def test_broadcast_gradients_summed_back_to_each_shape():
    a = t(np.arange(6.0).reshape(2, 3))
    b = t([1.0, 2.0, 3.0])
    c = t(2.0)
    d = t([[1.0], [2.0]])
    (a * b * c + d).sum().backward()
    an = np.arange(6.0).reshape(2, 3)
    assert b.grad.tolist() == (an.sum(0) * 2).tolist()
    assert c.grad.item() == (an * np.array([1, 2, 3])).sum()
    assert d.grad.tolist() == [[3.0], [3.0]]


def test_leaf_grad_keeps_leaf_dtype_through_promotion():
    a = t([1.0, 2.0])
    b = t([3.0, 4.0], dtype=lucid.float64)
    (a * b).sum().backward()
    assert a.grad.dtype == lucid.float32 and b.grad.dtype == lucid.float64


def test_zero_dim_float64_does_not_promote_float32():
    a = t([1.0, 2.0])
    s = lucid.tensor(2.0, dtype=lucid.float64, requires_grad=True)
    y = a * s
    assert y.dtype == lucid.float32
    y.sum().backward()
    assert s.grad.dtype == lucid.float64 and s.grad.item() == 3.0
