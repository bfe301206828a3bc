"""Views as in PyTorch (lucid._views): a view sees later writes to its base, shares its base's version counter,
and its grad_fn follows writes to the base; writes through views (and through detach()/.data of views) reach the
base. Gradients are checked against float64 finite differences or closed forms. The behaviours are those of
PyTorch's test_autograd.py (test_inplace_on_view_*, test_version_counter, test_detach_base,
test_retain_grad_inplace_over_view, test_tensor_hooks_inplace_over_view, the allow_mutation view tests)."""
import gc

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from helpers import check_grads, leaf

VERSION_ERROR = "modified by an inplace operation"


# ---------------------------------------------------------------------------------------------------- values
def test_view_sees_later_writes_to_its_base():
    x = lucid.zeros(2, 3)
    row = x[0]
    col = x[:, 0]
    flat = x.view(-1)
    xt = x.t()
    x[:, 0].mul_(2)  # a write through another view
    x.add_(1)
    np.testing.assert_array_equal(row.numpy(), [1, 1, 1])
    x[:, 0].mul_(3)
    np.testing.assert_array_equal(row.numpy(), [3, 1, 1])
    np.testing.assert_array_equal(col.numpy(), [3, 3])
    np.testing.assert_array_equal(flat.numpy(), [3, 1, 1, 3, 1, 1])
    np.testing.assert_array_equal(xt.numpy(), [[3, 3], [1, 1], [1, 1]])


def test_view_of_view_sees_writes_and_writes_through():
    x = lucid.arange(12.0).reshape(3, 4)
    inner = x[1:].narrow(1, 1, 2)  # a view of a view
    x.mul_(2)
    np.testing.assert_array_equal(inner.numpy(), [[10, 12], [18, 20]])
    inner.zero_()
    np.testing.assert_array_equal(x.numpy(), 2 * np.array([[0, 1, 2, 3], [4, 0, 0, 7], [8, 0, 0, 11]]))


def test_split_pieces_and_diagonal_see_writes_to_the_base():
    x = lucid.zeros(3, 3)
    pieces = x.split(1)
    diag = x.diagonal()
    x.copy_(lucid.eye(3) * 5)
    np.testing.assert_array_equal(pieces[1].numpy(), [[0, 5, 0]])
    np.testing.assert_array_equal(diag.numpy(), [5, 5, 5])


def test_detach_and_data_of_a_view_share_the_base_memory():
    x = lucid.zeros(2, 2)
    d = x[0].detach()
    x.add_(1)
    np.testing.assert_array_equal(d.numpy(), [1, 1])
    d.mul_(4)  # writes into x
    np.testing.assert_array_equal(x.numpy(), [[4, 4], [1, 1]])
    v = x[1].data
    v.fill_(7)
    np.testing.assert_array_equal(x.numpy(), [[4, 4], [7, 7]])


def test_detach_of_a_view_keeps_only_the_storage_alive():
    x = lucid.ones(3)
    x_ref = __import__("weakref").ref(x)
    d = x[1:].detach()
    del x
    gc.collect()
    assert x_ref() is None
    np.testing.assert_array_equal(d.numpy(), [1, 1])


def test_write_through_a_detached_view_of_a_leaf_is_unrecorded():
    w = lucid.ones(3, requires_grad=True)
    w[:2].detach().zero_()  # PyTorch allows this: no history, the leaf's memory changes
    assert w.is_leaf and w.grad_fn is None
    np.testing.assert_array_equal(w.detach().numpy(), [0, 0, 1])
    (w * 2).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2, 2, 2])


# ---------------------------------------------------------------------------------------------------- versions
def test_view_shares_the_version_counter_of_its_base():
    x = lucid.randn(1, 2)
    x.add_(1).add_(1)
    xz = x[:]
    assert x._version == xz._version == 2
    xz.add_(1)
    assert x._version == xz._version == 3  # one write, one bump
    saved = x._version
    x.data = lucid.randn(2, 3)  # keeps the counter (and the view keeps sharing it)
    assert x._version == saved
    x.add_(1)
    assert x._version == xz._version == saved + 1
    xz.add_(1)
    assert x._version == xz._version == saved + 2
    np.testing.assert_array_equal(tuple(xz.shape), (1, 2))  # the view keeps the old storage


def test_detach_shares_the_version_counter():
    x = lucid.ones(3)
    d = x.detach()
    dv = x[0].detach()
    d.add_(1)
    assert x._version == d._version == dv._version == 1
    dv.add_(1)
    assert x._version == 2


def test_saved_view_notices_a_write_to_its_base():
    a = lucid.rand(2, 3, requires_grad=True)
    b = a.clone()
    c = b[:]
    out = (c ** 2).sum()
    b *= 2
    with pytest.raises(RuntimeError, match=VERSION_ERROR):
        out.backward()


def test_saved_base_notices_a_write_through_its_view():
    a = lucid.rand(2, 3, requires_grad=True)
    b = a.clone()
    c = b.view_as(b)
    out = (b ** 2).sum()
    c.sin_()
    with pytest.raises(RuntimeError, match=VERSION_ERROR):
        out.backward()


def test_saved_output_of_an_inplace_view_op_notices_a_later_base_write():
    x = lucid.rand(3, requires_grad=True).clone()
    v = x[:2]
    v.exp_()  # exp saves its output: the view
    loss = x.sum()
    del v
    x.mul_(2)
    with pytest.raises(RuntimeError, match=VERSION_ERROR):
        loss.backward()


# ---------------------------------------------------------------------------------------------------- autograd
def test_inplace_on_view_backprop_base():
    root = lucid.randn(2, 2, requires_grad=True)
    x = root.clone()
    x.narrow(0, 0, 1).mul_(2)
    x.sum().backward()
    assert root.grad.tolist() == [[2, 2], [1, 1]]


def test_view_taken_before_a_write_backprops_through_it():
    root = lucid.randn(2, 2, requires_grad=True)
    x = root.clone()
    v1 = x.narrow(0, 0, 1)
    v2 = x.narrow(0, 0, 1)
    v1.mul_(2)
    np.testing.assert_allclose(v2.detach().numpy(), 2 * root.detach().numpy()[:1], rtol=1e-6)
    v2.sum().backward()
    assert root.grad.tolist() == [[2, 2], [0, 0]]


def test_inplace_on_view_of_view_backprop_base():
    root = lucid.randn(2, 2, requires_grad=True)
    x = root.clone()
    x.narrow(0, 0, 1).narrow(1, 1, 1).mul_(2)
    x.sum().backward()
    assert root.grad.tolist() == [[1, 2], [1, 1]]


def test_inplace_on_view_of_non_contiguous_view():
    root = lucid.ones(2, 3, 2)[:, :, 1].t().requires_grad_(True)
    x = root.clone()
    x.narrow(0, 0, 1).narrow(1, 1, 1).mul_(2)
    x.sum().backward()
    assert root.grad.tolist() == [[1, 2], [1, 1], [1, 1]]


def test_inplace_on_view_gradcheck():
    def func(root, b):
        x = root.clone()
        x.narrow(1, 2, 2).narrow(0, 1, 2).mul_(b)
        x.narrow(1, 0, 2).narrow(0, 1, 2).mul_(b)
        return x

    check_grads(func, leaf(4, 4, seed=0), leaf(2, 2, seed=1))


def test_inplace_on_view_makes_base_require_grad():
    a, b = leaf(4, 4, seed=0, requires_grad=False), leaf(4, 2, seed=1)

    def func(root, b):
        x = root.clone()
        assert not x.requires_grad
        x.narrow(1, 2, 2).mul_(b)
        assert x.requires_grad
        return x

    check_grads(func, a, b)


def test_inplace_on_base_makes_earlier_view_require_grad():
    def fn(r):
        x = lucid.ones(5, dtype=lucid.float64)
        v = x[1]
        assert not v.requires_grad and v.grad_fn is None
        x.add_(r)  # v now depends on r
        assert v.requires_grad and v.grad_fn is not None
        return v

    check_grads(fn, leaf(1, seed=2))


def test_base_write_rebases_earlier_views_gradient_closed_form():
    # y = x * w elementwise, then x's view v is read: dv/dw = x[0]
    w = lucid.tensor([3.0, 5.0], requires_grad=True)
    x = lucid.tensor([[2.0, 7.0], [1.0, 1.0]])
    v = x[0]
    x.mul_(w)
    v.sum().backward()
    assert v.tolist() == [6.0, 35.0]
    assert w.grad.tolist() == [2.0, 7.0]


def test_inplace_on_view_backprop_view():
    a = lucid.tensor([2.0, 5.0])
    b = lucid.tensor([3.0], requires_grad=True)
    res = a.narrow(0, 1, 1).mul_(b)
    res.sum().backward()
    assert b.grad.tolist() == [5.0]
    assert not a.is_leaf and a.tolist() == [2.0, 15.0]  # a's history now holds the write


def test_view_grad_fn_after_no_grad_write_to_leaf_base_reaches_the_leaf():
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = x[1:]
    with lucid.no_grad():
        x.mul_(2)  # an optimizer-style update
    assert v.tolist() == [4.0, 6.0]
    (v * v).sum().backward()
    assert x.grad.tolist() == [0.0, 8.0, 12.0]  # d/dx of the new values, as in PyTorch


def test_inplace_on_view_then_no_grad_graph_access():
    a = lucid.ones(3, 1, dtype=lucid.float64, requires_grad=True)
    c = (a * 2).view_as(a)
    c[0][0] = 3
    with lucid.no_grad():
        c.grad_fn
    c.sum().backward()
    assert a.grad.tolist() == [[0.0], [2.0], [2.0]]


def test_inplace_on_view_python_function():
    class PyAdd(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.mark_dirty(x)
            x.add_(y)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    def func(root, b):
        x = root.clone()
        PyAdd.apply(x.narrow(1, 2, 2).narrow(0, 1, 2), b)
        PyAdd.apply(x.narrow(1, 0, 2).narrow(0, 1, 2), b)
        return x

    check_grads(func, leaf(4, 4, seed=3), leaf(2, 2, seed=4))


def test_retain_grad_moves_with_a_view_rebased_by_a_write():
    base = lucid.tensor([1.0], requires_grad=True).clone()
    view = base[:]
    view2 = base[:]
    view.retain_grad()
    view2.retain_grad()
    view.mul_(2)
    (view + view2).sum().backward()
    assert view.grad.tolist() == [1.0] and view2.grad.tolist() == [1.0]


def test_tensor_hooks_registered_before_a_rebase_do_not_fire():
    fired = []
    base = lucid.tensor([1.0], requires_grad=True).clone()
    view = base[:]
    view2 = base[:]
    view.register_hook(lambda g: fired.append("old view"))
    view2.register_hook(lambda g: fired.append("old view2"))
    view.mul_(2)
    view2.register_hook(lambda g: fired.append(g.tolist()))
    (view + view2).sum().backward()
    assert fired == [[1.0]]


def test_detaching_the_base_does_not_detach_its_view():
    x = lucid.randn(10, 10, requires_grad=True)
    view = x.narrow(0, 1, 4)
    x.detach_()
    assert not x.requires_grad
    assert view.requires_grad and view.grad_fn is not None
    assert view._base is x and view._is_view() and not x._is_view()
    assert x[1:][0]._base is x and x.detach()._base is None


def test_detach_inplace_on_a_view_raises():
    x = lucid.randn(3, requires_grad=True).clone()
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        x[:2].detach_()


def test_inplace_on_view_of_leaf_raises_at_once():
    x = lucid.zeros(1, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an "
                                           "in-place operation."):
        x.view_as(x).add_(1)


@pytest.mark.parametrize("make", [lambda t: t.unbind(), lambda t: t.split(1), lambda t: t.chunk(3),
                                  lambda t: t[0].view_as(t[0]).unbind(), lambda t: t.view_as(t).unbind()])
def test_inplace_on_multiple_output_views_raises(make):
    x = lucid.arange(9.0).reshape(3, 3).requires_grad_().clone()
    views = make(x)
    with pytest.raises(RuntimeError, match="This view is the output of a function that returns multiple views"):
        views[0].mul_(2)


def test_multiple_output_view_of_view_raises():
    a = lucid.rand(10, requires_grad=True).clone()
    c = a.unbind(0)[0].view_as(a[0])
    with pytest.raises(RuntimeError, match="multiple views"):
        c.mul_(2)


def test_inplace_relu_on_view_frees_the_graph():
    dealloc = []

    class Marker:
        def __del__(self):
            dealloc.append(1)

    def run():
        root = lucid.randn(3, 3, requires_grad=True)
        copy = root.clone()
        copy.grad_fn.register_hook(Marker())
        F.relu(copy.view(9), inplace=True)

    run()
    gc.collect()
    assert dealloc == [1]


# ---------------------------------------------------------------------------------------------------- optimizers
def test_optimizer_step_on_data_views_of_a_flat_buffer():
    flat = lucid.zeros(5)
    w = flat[:3].data.view(3).requires_grad_()  # parameters that live in one buffer
    b = flat[3:].data.requires_grad_()
    opt = lucid.optim.SGD([w, b], lr=0.5)
    (w.sum() * 2 + b.sum()).backward()
    opt.step()
    np.testing.assert_array_equal(flat.numpy(), [-1, -1, -1, -0.5, -0.5])
    flat.mul_(2)  # a write to the buffer shows in the parameters
    np.testing.assert_array_equal(w.detach().numpy(), [-2, -2, -2])
    np.testing.assert_array_equal(b.detach().numpy(), [-1, -1])


def test_optimizer_step_shows_in_earlier_views_of_a_parameter():
    lin = lucid.nn.Linear(2, 2)
    row = lin.weight.detach()[0]
    opt = lucid.optim.SGD(lin.parameters(), lr=1.0)
    lin(lucid.ones(1, 2)).sum().backward()
    before = lin.weight.detach().numpy().copy()
    opt.step()
    np.testing.assert_allclose(row.numpy(), before[0] - 1.0, rtol=1e-6)


# ---------------------------------------------------------------------------------------------------- cost
def test_views_of_a_base_that_is_never_written_stay_bounded():
    w = lucid.randn(4, 4)
    for _ in range(1000):
        w.t()  # a transient view per step, as Linear-like code takes
    assert len(w._storage.views.refs) <= 32


def test_retain_grad_moves_with_a_tensor_written_in_place():
    # the same rule as for views (_views.rebind_grad_fn): .grad is the gradient of the value after the writes
    a = lucid.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.mul_(2)
    a.sum().backward()
    assert a.grad.tolist() == [1.0]


# ---------------------------------------------------------------------------------------------------- shape in place
# t_/transpose_/squeeze_/unsqueeze_ change only the tensor they are called on (PyTorch: only its strides): a view
# keeps deriving from and writing through to its base, and views taken before keep their shape, values and writes.
# Expected values are PyTorch 2.13's.
def test_shape_change_of_a_plain_tensor_keeps_identity_and_earlier_nodes_their_shapes():
    x = lucid.arange(6.0).view(2, 3)
    assert x.t_() is x and x.shape == (3, 2) and x._version == 1
    assert x.tolist() == [[0, 3], [1, 4], [2, 5]]
    a = lucid.ones(2, 3, requires_grad=True)
    y = a * 1
    y.mul_(2)  # MulBackward0 made y's value before add_ did: it keeps the shape [2, 3] after t_()
    y.add_(1)
    y.t_()
    y.sum().backward()
    assert a.grad.tolist() == [[2, 2, 2], [2, 2, 2]]
    y = a.exp()
    with lucid.no_grad():
        y.add_(1)  # ExpBackward0 saved its output: this write still shows after the shape change
    y.t_()
    with pytest.raises(RuntimeError, match=VERSION_ERROR):
        y.sum().backward()


def test_shape_change_of_a_view_keeps_deriving_from_and_writing_through_to_its_base():
    base = lucid.zeros(2, 3)
    row = base[0]
    row.unsqueeze_(0)
    row.t_()  # [3, 1], still the first row of base
    row.add_(lucid.arange(3.0).reshape(3, 1))
    base[0, 0] = 5
    assert row.shape == (3, 1) and row.tolist() == [[5], [1], [2]]
    assert base.tolist() == [[5, 1, 2], [0, 0, 0]]
    assert base._version == row._version == 4


def test_shape_change_of_a_base_leaves_its_earlier_views_as_they_were():
    x = lucid.arange(6.0).reshape(2, 3)
    r = x[0]
    xt = x.t()
    rr = r[1:]  # a view of a view
    x.t_()
    assert x.shape == (3, 2) and xt.shape == (3, 2)
    assert r.tolist() == [0, 1, 2] and rr.tolist() == [1, 2]
    x[0].fill_(-1)  # a write through the reshaped base
    assert r.tolist() == [-1, 1, 2] and xt.tolist() == [[-1, -1], [1, 4], [2, 5]] and rr.tolist() == [1, 2]
    rr.mul_(10)  # a write through an earlier view
    assert x.tolist() == [[-1, -1], [10, 4], [20, 5]] and xt.tolist() == x.tolist()
    xt[2, 1] = 99
    assert x.tolist() == [[-1, -1], [10, 4], [20, 99]]
    assert x._version == r._version == 4


def test_shape_change_of_a_view_leaves_the_views_taken_of_it_as_they_were():
    b = lucid.arange(12.0).reshape(3, 4)
    v = b[1:]
    w = v[:, 0]
    ww = w[1:]
    v.t_()
    assert v.shape == (4, 2) and w.tolist() == [4, 8] and b._version == v._version == 1
    v[0].fill_(100)
    assert b.tolist() == [[0, 1, 2, 3], [100, 5, 6, 7], [100, 9, 10, 11]]
    assert w.tolist() == [100, 100] and ww.tolist() == [100]
    ww.add_(1)
    assert b[2, 0].item() == 101 and v.tolist() == [[100, 101], [5, 9], [6, 10], [7, 11]] and w.tolist() == [100, 101]
    b.mul_(2)
    assert v.tolist() == [[200, 202], [10, 18], [12, 20], [14, 22]] and w.tolist() == [200, 202]
    assert b._version == 4
    u = v.unsqueeze(0)  # taken after the change: a view of the [4, 2] v
    v.squeeze_()
    v.unsqueeze_(1)
    assert v.shape == (4, 1, 2) and u.shape == (1, 4, 2)
    u.sub_(200)
    assert v[0].tolist() == [[0, 2]] and b[1:, 0].tolist() == [0, 2]


def _root_with_earlier_views(a, w, s):
    x = a * 1
    r, c, xt = x[0], x[:, 1], x.t()
    x.t_()
    x.mul_(w)  # the views' grad_fns now go through the reshaped base's history
    r.mul_(2.0)
    c.add_(s)
    return (x * x).sum() + (r ** 3).sum() + (c * xt[1]).sum() + xt.exp().sum()


def _view_with_earlier_views(a, w, s):
    b = a * 1
    v = b[1:]
    col = v[:, 0]
    v.t_()
    v.mul_(w[:, 1:])  # through the transposed view into b
    col.mul_(s[:2])  # through the earlier view of v
    b.add_(1)
    return (b ** 2).sum() + (v.sin() * 3).sum() + (col ** 3).sum()


def _chain_transposed_in_the_middle(a, w, s):
    b = a * 1
    v = b.t()
    v2 = v[1:]
    v.t_()
    v2.mul_(w[1:])
    v.mul_(a)
    v.unsqueeze_(0)
    return (b ** 2).sum() + (v2 * v2).sum() + v.cos().sum() + s.sum()


@pytest.mark.parametrize("fn", [_root_with_earlier_views, _view_with_earlier_views, _chain_transposed_in_the_middle])
def test_shape_change_in_a_view_family_gradients(fn):
    check_grads(fn, leaf(3, 4, seed=1), leaf(4, 3, seed=2), leaf(3, seed=3))


def test_shape_change_of_a_view_grad_fn_and_retain_grad():
    a = leaf(2, 3)
    v = (a * 2)[0:1]
    v.t_()
    v.retain_grad()
    (v * lucid.tensor([[1.0], [2.0], [3.0]], dtype=lucid.float64)).sum().backward()
    assert v.grad.shape == (3, 1)
    assert a.grad.tolist() == [[2, 4, 6], [0, 0, 0]]


def test_shape_change_of_views_of_inference_tensors():
    with lucid.inference_mode():
        a = lucid.arange(6.0).reshape(2, 3)
        v = a[0]
        v.unsqueeze_(0)
        a.t_()
        a.add_(1)
        assert lucid.is_inference(v) and v.tolist() == [[1, 2, 3]]
        v.mul_(2)
        assert a.tolist() == [[2, 4], [4, 5], [6, 6]]


def test_unbind_piece_off_the_graph_refuses_a_write_that_requires_grad():
    a = lucid.rand(1, 2)  # requires no grad: the pieces have no node
    b = lucid.rand(1, requires_grad=True)
    piece = a.unbind()[0]
    with pytest.raises(RuntimeError, match="This view is the output of a function that returns multiple views"):
        piece.copy_(b)
    piece.copy_(b.detach())  # a write that is not recorded is fine
    assert a[0].tolist() == b.tolist() * 2
    a.select(1, 0).copy_(b)  # a single-output view takes the recorded write
    assert a.requires_grad


def test_view_taken_in_no_grad_refuses_a_write_that_requires_grad():
    a = lucid.rand(2, requires_grad=True).clone()
    with lucid.no_grad():
        b = a[:]
        c = a.view(2)
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace with "
                                           "grad mode enabled"):
        b.mul_(2)
    d = c.view(2)  # a view of that view, taken with grad on, inherits the rule
    with pytest.raises(RuntimeError, match="created in no_grad mode and is being modified inplace"):
        d.mul_(2)
    with lucid.no_grad():
        b.mul_(2)  # inside no_grad the write is simply unrecorded
    plain = lucid.zeros(2)
    with lucid.no_grad():
        v = plain.view(2)
    v.mul_(2)  # nothing requires grad: allowed


def test_view_of_a_view_taken_in_inference_mode_refuses_a_write_that_requires_grad():
    x = lucid.zeros(2)
    with lucid.inference_mode():
        y = x.view(2)
    y.requires_grad_(True)
    z = y.view(2)
    with pytest.raises(RuntimeError, match="a view of a view which was created in inference mode and is being "
                                           "modified inplace in normal mode"):
        z /= 2


def test_inplace_on_view_saved_output_is_freed_by_refcount():
    # an in-place op through a view gives the base a grad_fn that leads back through the view's value: the nodes
    # recorded there must not hold the base itself, or base -> grad_fn -> ... -> base is a cycle that only the
    # cyclic GC frees (with the whole graph and its saved values)
    import weakref
    gc.disable()
    try:
        root = lucid.randn(3, 3, requires_grad=True)
        copy = root.clone()
        node = weakref.ref(copy.grad_fn)
        view = copy.view(9)
        F.relu(view, inplace=True)
        nested = root.clone()
        nested_node = weakref.ref(nested.grad_fn)
        row = nested.t()[0]
        row.mul_(2)
        refs = [weakref.ref(t) for t in (copy, view, nested, row)]
        del copy, view, nested, row
        assert node() is None and nested_node() is None and all(r() is None for r in refs)
    finally:
        gc.enable()
    # the gradient still flows through the write
    base = leaf(3, 3)
    c = base.clone()
    F.relu(c.view(9), inplace=True)
    c.sum().backward()
    np.testing.assert_array_equal(base.grad.numpy(), (base.detach().numpy() > 0).astype(float))
