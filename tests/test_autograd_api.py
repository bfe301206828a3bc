"""The smaller autograd API PyTorch's suite uses: constants, dtype attributes, legacy constructors, Variable,
select and the in-place shape methods, out=, calling grad_fn, GradientEdge, increment_version,
register_multi_grad_hook, InplaceFunction. (Inference mode and checkpointing: test_inference_checkpoint.py.)"""
import math
import warnings
from functools import partial

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.autograd import Function, InplaceFunction, Variable, grad, gradcheck, gradgradcheck
from lucid.autograd.graph import GradientEdge, get_gradient_edge, increment_version, register_multi_grad_hook
from helpers import leaf


# ---------------------------------------------------------------------------------------------------- constants, dtypes
def test_constants_are_pythons():
    assert lucid.inf == math.inf and math.isnan(lucid.nan) and lucid.pi == math.pi and lucid.e == math.e


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "complex64", "int8", "int16",
                                  "int32", "int64", "uint8", "bool"])
def test_dtype_attributes_match_torch(name):
    torch = pytest.importorskip("torch")
    d, t = getattr(lucid, name), getattr(torch, name)
    assert (d.is_floating_point, d.is_complex, d.is_signed, d.itemsize) == (
        t.is_floating_point, t.is_complex, t.is_signed, t.itemsize)


def test_dtype_attributes_without_torch():
    assert lucid.float32.is_floating_point and not lucid.int64.is_floating_point
    assert not lucid.uint8.is_signed and not lucid.bool.is_signed and lucid.int8.is_signed
    assert lucid.complex64.is_complex and lucid.float64.itemsize == 8
    assert lucid.ones(2).argmax().dtype.is_floating_point is False


# ---------------------------------------------------------------------------------------------------- legacy names
def test_legacy_constructor_shape_and_data_forms():
    assert lucid.FloatTensor(2, 3).shape == (2, 3) and lucid.FloatTensor(2, 3).dtype == lucid.float32
    assert lucid.FloatTensor([1, 2]).tolist() == [1.0, 2.0]
    assert lucid.LongTensor([1, 2]).dtype == lucid.int64 and lucid.BoolTensor([1, 0]).tolist() == [True, False]
    assert lucid.DoubleTensor(np.ones(2)).dtype == lucid.float64 and lucid.IntTensor(3).dtype == lucid.int32
    assert lucid.ByteTensor([1]).dtype == lucid.uint8 and lucid.FloatTensor().shape == (0,)
    assert lucid.FloatTensor.dtype == lucid.float32


def test_legacy_constructor_isinstance_and_type():
    x = lucid.randn(2, 2)
    assert isinstance(x, lucid.FloatTensor) and not isinstance(x, lucid.LongTensor)
    assert isinstance(x.int(), lucid.IntTensor) and not isinstance([1.0], lucid.FloatTensor)


def test_legacy_constructor_of_a_tensor_aliases_it_and_checks_dtype():
    x = lucid.ones(2)
    y = lucid.FloatTensor(x)
    y.add_(1)
    assert x.tolist() == [2.0, 2.0]
    with pytest.raises(TypeError):
        lucid.FloatTensor(lucid.ones(2, dtype=lucid.int64))
    with pytest.raises(TypeError, match="data must be a sequence"):
        lucid.FloatTensor(2.5)


def test_variable_is_a_detached_alias_with_requires_grad():
    x = lucid.ones(2)
    v = Variable(x, requires_grad=True)
    assert v is not x and v.requires_grad and not x.requires_grad and v.is_leaf
    assert isinstance(x, Variable) and not isinstance(1.0, Variable)
    w = lucid.ones(2, requires_grad=True) * 2
    assert Variable(w).grad_fn is None and not Variable(w).requires_grad
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        Variable([1, 2])
    v.sum().backward()
    assert v.grad.tolist() == [1.0, 1.0]


def test_is_inference_function_checks_its_argument():
    assert not lucid.is_inference(lucid.ones(1))
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        lucid.is_inference([1])


# ---------------------------------------------------------------------------------------------------- shape methods
def test_select_is_indexing_along_a_dim():
    x = lucid.arange(6).view(2, 3)
    assert x.select(1, 2).tolist() == [2, 5] and lucid.select(x, -2, 1).tolist() == [3, 4, 5]
    a = leaf(3, 4)
    assert gradcheck(lambda t: t.select(1, 2), (a,)) and gradgradcheck(lambda t: t.select(0, -1) ** 2, (a,))


@pytest.mark.parametrize("method, args, shape", [
    ("transpose_", (0, 1), (3, 2)), ("swapdims_", (0, 1), (3, 2)), ("swapaxes_", (1, 0), (3, 2)),
    ("t_", (), (3, 2)), ("unsqueeze_", (1,), (2, 1, 3)), ("squeeze_", (), (2, 3))])
def test_inplace_shape_methods_change_shape_and_bump_version(method, args, shape):
    x = lucid.arange(6.0).view(2, 3)
    v = x._version
    expected = getattr(x.clone(), method.rstrip("_"))(*args) if method != "t_" else x.t()
    assert getattr(x, method)(*args) is x
    assert x.shape == shape and x._version == v + 1 and x.tolist() == expected.tolist()


def test_inplace_shape_method_refuses_leaf_that_requires_grad():
    x = lucid.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.transpose_(0, 1)


def test_inplace_shape_method_gradient_by_finite_differences():
    def f(a):
        z = a.exp()
        z.transpose_(0, 1)
        z.unsqueeze_(0)
        return z * lucid.arange(6.0, dtype=lucid.float64).view(1, 3, 2)
    a = leaf(2, 3)
    assert gradcheck(f, (a,)) and gradgradcheck(f, (a,))
    y = a.clone()
    y.t_()
    assert y.grad_fn.name() == "TBackward0"


def test_inplace_shape_change_of_a_view_keeps_writing_through():
    base = lucid.zeros(2, 3)
    row = base[0]
    row.unsqueeze_(0)
    row.add_(1)
    assert row.shape == (1, 3) and base.tolist() == [[1, 1, 1], [0, 0, 0]]


def test_resize_keeps_leading_elements_and_zero_fills():
    x = lucid.arange(6.0)
    v = x._version
    assert x.resize_(2, 2) is x and x.tolist() == [[0, 1], [2, 3]] and x._version > v
    assert x.resize_((6,)).tolist() == [0, 1, 2, 3, 0, 0]  # lucid zero-fills the new elements
    assert x.resize_as_(lucid.ones(3, 2)).shape == (3, 2)
    base = lucid.zeros(2, 3)
    row = base[1]
    row.resize_(3, 1)  # same number of elements: still a view that writes through
    row.add_(1)
    assert base.tolist() == [[0, 0, 0], [1, 1, 1]]
    with pytest.raises(RuntimeError, match="negative dimension"):
        x.resize_(-1)


def test_resize_refuses_a_tensor_that_requires_grad_outside_inference_mode():
    a = lucid.ones(3, requires_grad=True)
    for t in (a, a * 2):
        with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
            t.resize_(2)
    with lucid.no_grad(), pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        a.resize_(2)
    with lucid.inference_mode():
        c = lucid.ones(1, 2, 3, requires_grad=True)
        c.resize_(1, 2)
    assert c.shape == (1, 2) and c.requires_grad and lucid.is_inference(c)


# ---------------------------------------------------------------------------------------------------- out=
def test_out_writes_into_the_tensor_in_place():
    a, b = lucid.tensor([1.0, 2.0]), lucid.tensor([3.0, 4.0])
    o = lucid.zeros(2)
    v = o._version
    assert lucid.add(a, b, out=o) is o and o.tolist() == [4.0, 6.0] and o._version == v + 1
    assert lucid.mul(a, b, out=o) is o and o.tolist() == [3.0, 8.0]
    assert lucid.sum(lucid.ones(3, 2), 0, out=o).tolist() == [3.0, 3.0]
    m = lucid.zeros(2, 2)
    lucid.matmul(lucid.eye(2), lucid.ones(2, 2), out=m)
    assert m.tolist() == [[1, 1], [1, 1]]
    c = lucid.zeros(4)
    lucid.cat([a, b], out=c)
    assert c.tolist() == [1, 2, 3, 4]


def test_out_into_a_view_writes_its_base():
    base = lucid.zeros(2, 2)
    lucid.add(lucid.ones(2), 1, out=base[1])
    assert base.tolist() == [[0, 0], [2, 2]]


def test_out_resizes_with_pytorch_warning_unless_empty():
    o = lucid.zeros(3)
    with pytest.warns(UserWarning, match=r"An output with one or more elements was resized since it had shape \[3\]"):
        lucid.add(lucid.ones(2), 1, out=o)
    assert o.shape == (2,)
    e = lucid.zeros(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lucid.exp(lucid.zeros(2, 2), out=e)
    assert e.tolist() == [[1, 1], [1, 1]]


def test_out_casts_to_its_dtype_but_not_float_into_int():
    o = lucid.zeros(2, dtype=lucid.float64)
    lucid.add(lucid.ones(2), 1, out=o)
    assert o.dtype == lucid.float64 and o.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        lucid.add(lucid.ones(2) * 1.5, 1, out=lucid.zeros(2, dtype=lucid.int64))


def test_out_is_not_differentiable():
    a = lucid.randn(2, 2, requires_grad=True)
    x = lucid.zeros(2, 2)
    msg = r"mul\(\): functions with out=\.\.\. arguments don't support automatic differentiation, but one of"
    with pytest.raises(RuntimeError, match=msg):
        lucid.mul(a, a, out=x)
    with lucid.no_grad():
        lucid.mul(a, a, out=x)
    assert np.allclose(x.numpy(), (a * a).detach().numpy())
    with pytest.raises(RuntimeError, match="out="):
        lucid.mul(lucid.ones(2), lucid.ones(2), out=lucid.zeros(2, requires_grad=True))
    with pytest.raises(TypeError, match="argument 'out' must be Tensor"):
        lucid.add(lucid.ones(2), 1, out=[0, 0])


# ---------------------------------------------------------------------------------------------------- grad_fn, edges
def test_calling_grad_fn_checks_argument_count():
    x = lucid.ones(1, requires_grad=True)
    y = x ** 2
    with pytest.raises(TypeError, match="expected 1 arguments, got 2 instead"):
        y.grad_fn(x.detach(), x.detach())
    with pytest.raises(TypeError, match="expected 1 arguments, got 0 instead"):
        y.grad_fn()
    assert y.grad_fn(x.detach() * 3).tolist() == [6.0]


def test_node_metadata_is_kept():
    y = lucid.ones(1, requires_grad=True) * 2
    y.grad_fn.metadata["k"] = 1
    assert y.grad_fn.metadata == {"k": 1}


def test_grad_to_gradient_edge_equals_grad_to_tensor():
    x = lucid.rand(2, requires_grad=True)
    for inp in (x, x.clone()):
        out = inp.clone() * 3
        ref = grad(out.sum(), inp, retain_graph=True)
        assert grad(out.sum(), get_gradient_edge(inp)).tolist() == ref.tolist() == [3.0, 3.0]


def test_gradient_edge_names_the_value_before_an_inplace_write():
    x = lucid.rand(2, requires_grad=True).clone()
    edge = get_gradient_edge(x)
    x *= 2
    g_old, g_new = grad(x.sum(), (edge, x))
    assert g_old.tolist() == [2.0, 2.0] and g_new.tolist() == [1.0, 1.0]


def test_gradient_edges_built_by_hand_and_materialize_error():
    x = lucid.rand(2, requires_grad=True).clone()
    y = lucid.rand(2, requires_grad=True).clone()
    out = x + y
    ref = grad(out.sum(), (x, y), retain_graph=True)
    new = grad(out.sum(), (GradientEdge(x.grad_fn, x.output_nr), GradientEdge(y.grad_fn, y.output_nr)),
               retain_graph=True)
    assert [r.tolist() for r in ref] == [n.tolist() for n in new]
    with pytest.raises(RuntimeError, match="materialize_grads cannot be used when the given input is a GradientEdge"):
        grad(x.sum(), (x, get_gradient_edge(y)), allow_unused=True, materialize_grads=True)


def test_materialize_grads_accepts_a_gradient_edge_that_is_reached():
    # only an edge that gets no gradient has nothing to materialize zeros from
    x = lucid.rand(2, requires_grad=True).clone()
    y = lucid.rand(2, requires_grad=True).clone()
    gx, gy = grad(x.sum(), (get_gradient_edge(x), y), allow_unused=True, materialize_grads=True)
    assert gx.tolist() == [1.0, 1.0] and gy.tolist() == [0.0, 0.0]


def test_compat_grad_takes_a_single_gradient_edge_as_one_input():
    import lucid.compat.torch as torch
    x = lucid.rand(2, requires_grad=True)
    (g,) = torch.autograd.grad(x.clone().sum(), get_gradient_edge(x))
    assert g.tolist() == [1.0, 1.0]


def test_backward_to_gradient_edges():
    a = lucid.rand(2, requires_grad=True)
    x = a.clone()
    out = x * 3
    lucid.autograd.backward(out.sum(), inputs=(get_gradient_edge(a),), retain_graph=True)
    assert a.grad.tolist() == [3.0, 3.0]
    lucid.autograd.backward(out.sum(), inputs=(get_gradient_edge(x), a))
    assert a.grad.tolist() == [6.0, 6.0]


def test_increment_version():
    a = lucid.rand(5, requires_grad=True)
    v = a._version
    increment_version(a)
    assert a._version == v + 1
    b = lucid.zeros(5, dtype=lucid.int32)
    increment_version(b)
    assert b._version == 1
    y = (a * a).sum()
    increment_version(a)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    with lucid.inference_mode():
        c = lucid.rand(5, requires_grad=True)
        increment_version(c)
    increment_version(c)  # inference tensors have no counter: a no-op, as in PyTorch


# ---------------------------------------------------------------------------------------------------- multi grad hooks
class _Clone(Function):
    @staticmethod
    def forward(ctx, a):
        return a.clone()

    @staticmethod
    def backward(ctx, g):
        return g


class _Raise(Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("error message")


def test_multi_grad_hook_all_runs_once_per_walk_with_what_it_computed():
    t1, t2, t3, t4 = (lucid.rand(2, requires_grad=True) for _ in range(4))
    t1, t2, t3, t4 = t1.mul(2), _Clone.apply(t2), t3.clone(), t4.exp()
    seen = []
    handle = register_multi_grad_hook((t1, t2, t3, t4), lambda grads: seen.append([g is not None for g in grads]))
    out = t2 * t3
    out.sum().backward(inputs=(t2, t3), retain_graph=True)
    assert seen == [[False, True, True, False]]
    out.sum().backward(inputs=(t1, t4), retain_graph=True)
    assert len(seen) == 1
    out.sum().backward(inputs=(t1, t3), retain_graph=True)
    assert seen[-1] == [False, False, True, False]
    with pytest.raises(RuntimeError, match="error message"):
        (_Raise.apply(t2) * t3).sum().backward(inputs=(t2, t3))
    assert len(seen) == 2
    handle.remove()
    out.sum().backward(inputs=(t1, t3))
    assert len(seen) == 2


def test_multi_grad_hook_any_runs_first_and_once():
    order, handles, ids = [], [], [0]

    def hook(i, *unused):
        order.append(i)

    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            z = self.lin(x)
            out = lucid.sin(z), lucid.cos(z)
            z.register_hook(partial(hook, ids[0]))
            handles.append(register_multi_grad_hook(out, partial(hook, ids[0] + 1), mode="any"))
            ids[0] += 2
            return out

    m1, m2 = Two(), Two()
    out = m2(sum(m1(lucid.randn(2, 3))))
    (out[0] + out[1]).sum().backward()
    assert order == [3, 2, 1, 0]
    order.clear()
    ids[0] = 0
    out = m2(sum(m1(lucid.randn(2, 3))))
    for h in handles[2:]:
        h.remove()
    (out[0] + out[1]).sum().backward()
    assert order == [2, 0]


def test_multi_grad_hook_invalid_mode():
    t = lucid.rand(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"Expects mode to be one of \('all', 'any'\) but got foo"):
        register_multi_grad_hook((t,), lambda _: None, mode="foo")


# ---------------------------------------------------------------------------------------------------- InplaceFunction
def test_inplace_function_base():
    class AddOne(InplaceFunction):
        @staticmethod
        def forward(ctx, a):
            ctx.mark_dirty(a)
            return a.add_(1)

        @staticmethod
        def backward(ctx, g):
            return g

    assert AddOne(inplace=True).inplace and not InplaceFunction().inplace
    x = leaf(3)
    assert gradcheck(lambda t: AddOne.apply(t.clone()) * t, (x,))
    with pytest.raises(RuntimeError):  # no forward: NotImplementedError is a RuntimeError, as in PyTorch
        InplaceFunction.apply(lucid.ones(1, requires_grad=True))


def test_queue_callback_runs_after_the_walk_in_order_and_may_queue_more():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    seen = []

    def last():
        seen.append(("last", x.grad.tolist()))

    def first():
        seen.append(("first", x.grad.tolist()))  # every gradient is in by now
        Variable._execution_engine.queue_callback(last)

    y = x * 3
    y.register_hook(lambda g: Variable._execution_engine.queue_callback(first))
    y.sum().backward()
    assert seen == [("first", [3.0, 3.0]), ("last", [3.0, 3.0])]


def test_queue_callback_inside_a_nested_backward_runs_when_that_walk_ends():
    order = []
    x = lucid.tensor([1.0], requires_grad=True)

    def hook(g):
        with lucid.enable_grad():  # hooks run under no_grad during a plain backward
            inner = lucid.tensor([2.0], requires_grad=True)
            z = inner * 2
            z.register_hook(lambda g2: Variable._execution_engine.queue_callback(lambda: order.append("inner")))
            z.sum().backward()
        order.append("inner backward returned")
        Variable._execution_engine.queue_callback(lambda: order.append("outer"))
        return g

    y = x * 1
    y.register_hook(hook)
    y.sum().backward()
    assert order == ["inner", "inner backward returned", "outer"]


def test_queue_callback_outside_backward_raises():
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass"):
        Variable._execution_engine.queue_callback(lambda: None)


def test_saved_result_shares_the_output_value_and_version_counter():
    a = lucid.rand(2, requires_grad=True)
    b = a.exp()
    saved = b.grad_fn._saved_result
    assert saved.grad_fn is b.grad_fn and saved._version == b._version
    with lucid.no_grad():
        b += 1
    assert saved.tolist() == b.tolist() and saved._version == b._version == 1
