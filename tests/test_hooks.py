"""Tensor and node hooks (pytorch-autograd-semantics.md §4)."""
import pytest

import lucid
from lucid.autograd import grad


def leaf(v=(1.0, 2.0)):
    return lucid.tensor(list(v), requires_grad=True)


def test_tensor_hooks_run_in_registration_order_and_chain():
    x = leaf()
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(("a", g.tolist())) or g * 10)
    y.register_hook(lambda g: seen.append(("b", g.tolist())))
    y.sum().backward()
    assert seen == [("a", [1.0, 1.0]), ("b", [10.0, 10.0])]
    assert x.grad.tolist() == [20.0, 20.0]


def test_leaf_hooks_run_before_accumulation_and_for_grad():
    x = leaf()
    x.register_hook(lambda g: g * 3)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]
    assert grad((x * 2).sum(), x).tolist() == [6.0, 6.0]


def test_hooks_fire_in_reverse_topological_order():
    x = leaf()
    y = x * 2
    z = y * 3
    order = []
    x.register_hook(lambda g: order.append("x"))
    y.register_hook(lambda g: order.append("y"))
    z.register_hook(lambda g: order.append("z"))
    z.sum().backward()
    assert order == ["z", "y", "x"]


def test_hook_handle_remove():
    x = leaf()
    h = x.register_hook(lambda g: g * 100)
    h.remove()
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


def test_hook_changing_size_errors():
    x = leaf()
    y = x * 2
    y.register_hook(lambda g: lucid.ones(3))
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        y.sum().backward()


def test_hook_changing_type_or_size_errors_as_in_pytorch():
    """PyTorch 2.13's messages (torch.FloatTensor spelled lucid.FloatTensor); .grad is left untouched."""
    def h(g):
        return g.double()

    x = leaf()
    x.register_hook(h)  # a leaf's hook
    with pytest.raises(RuntimeError, match=r"^hook 'h' has changed the type of value \(was lucid.FloatTensor got "
                                           r"lucid.DoubleTensor\)$"):
        (x * 2).sum().backward()
    assert x.grad is None
    y = leaf() * 2  # a non-leaf's hook, through autograd.grad too; the type is checked before the size
    y.register_hook(lambda g: g.to(lucid.float16)[:1])
    with pytest.raises(RuntimeError, match=r"hook '<lambda>' has changed the type of value \(was lucid.FloatTensor "
                                           r"got lucid.HalfTensor\)"):
        grad(y.sum(), y)
    x = leaf()
    x.register_hook(lambda g: g.reshape(2, 1))
    with pytest.raises(RuntimeError, match=r"^hook '<lambda>' has changed the size of value$"):
        (x * 2).sum().backward()

    class Callable:
        def __call__(self, g):
            return g.long()

    x = leaf()
    x.register_hook(Callable())
    with pytest.raises(RuntimeError, match=r"^hook '<unknown>' has changed the type of value \(was lucid.FloatTensor "
                                           r"got lucid.LongTensor\)$"):
        (x * 2).sum().backward()
    x = leaf()
    x.register_hook(lambda g: 3)
    with pytest.raises(TypeError, match=r"^expected Variable, but hook returned 'int'$"):
        (x * 2).sum().backward()


def test_node_hooks_changing_type_or_size_error():
    x = leaf()
    y = x * 2
    y.grad_fn.register_prehook(lambda gos: (gos[0].double(),))
    with pytest.raises(RuntimeError, match=r"has changed the type of value \(was lucid.FloatTensor got "
                                           r"lucid.DoubleTensor\)"):
        y.sum().backward()
    y = x.exp()
    y.grad_fn.register_hook(lambda gis, gos: (gis[0][:1],))
    with pytest.raises(RuntimeError, match=r"^hook '<lambda>' has changed the size of value$"):
        y.sum().backward()


def test_hook_on_tensor_without_grad_errors():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        lucid.ones(2).register_hook(lambda g: g)


def test_retained_grad_is_value_after_hooks():
    x = leaf()
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 5)
    y.sum().backward()
    assert y.grad.tolist() == [5.0, 5.0]


def test_post_accumulate_grad_hook():
    x = leaf()
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * 2).sum().backward()
    assert seen == [[2.0, 2.0]]
    grad((x * 2).sum(), x)  # not fired by autograd.grad
    assert len(seen) == 1
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    x.register_post_accumulate_grad_hook(lambda t: 1)
    with pytest.raises(RuntimeError, match="Tensor post accumulate grad hooks should return None."):
        (x * 2).sum().backward()


def test_node_prehook_and_hook():
    x = leaf()
    y = x * 2
    calls = []
    y.grad_fn.register_prehook(lambda gos: (gos[0] * 2,))
    y.grad_fn.register_hook(lambda gis, gos: calls.append((len(gis), gis[1], gos[0].tolist())))
    y.sum().backward()
    assert calls == [(2, None, [2.0, 2.0])]
    assert x.grad.tolist() == [4.0, 4.0]


def test_node_hook_wrong_number_of_values_errors():
    x = leaf()
    y = x * 2
    y.grad_fn.register_hook(lambda gis, gos: (gis[0],))
    with pytest.raises(RuntimeError, match=r"returned an incorrect number of values \(got 1, but expected 2\)"):
        y.sum().backward()


def test_nonleaf_hook_runs_with_none_when_its_output_gets_no_gradient():
    x = lucid.randn(3, requires_grad=True)
    parts = x.unbind()
    seen = []
    parts[0].register_hook(lambda g: seen.append(None if g is None else g.tolist()))
    parts[0].backward()
    parts[1].backward()  # runs the shared UnbindBackward node, where output 0 has no gradient
    assert seen == [1.0, None]
    assert x.grad.tolist() == [1.0, 1.0, 0.0]


def test_accumulate_grad_post_hook_sees_the_new_grad_after_post_accumulate_hooks():
    x = lucid.ones(3, requires_grad=True)
    acc = x.view_as(x).grad_fn.next_functions[0][0]
    x.register_hook(lambda g: g - 2.0)
    acc.register_prehook(lambda gs: (gs[0] / 5.0,))

    def post_accumulate(t):
        t.grad.add_(0.5)

    x.register_post_accumulate_grad_hook(post_accumulate)

    def post(grad_inputs, grad_outputs):
        x.grad = grad_outputs[0] * 10

    acc.register_hook(post)
    x.sum().backward()
    assert x.grad.tolist() == pytest.approx([3.0, 3.0, 3.0])


def test_var_mean_outputs_share_one_node_whose_prehook_sees_both_gradients():
    a = lucid.randn(3, 3, requires_grad=True)
    var, mean = lucid.var_mean(a, dim=0)
    assert var.grad_fn is mean.grad_fn and (var.output_nr, mean.output_nr) == (0, 1)
    (var + mean).sum().backward()
    reference = a.grad.clone()
    a.grad = None
    seen = []

    def double(grad_outputs):
        seen.append(len(grad_outputs))
        return tuple(g * 2 for g in grad_outputs)

    var, mean = lucid.var_mean(a, dim=0)
    mean.grad_fn.register_prehook(double)
    (var + mean).sum().backward()
    assert seen == [2]
    assert lucid.allclose(a.grad, reference * 2)
