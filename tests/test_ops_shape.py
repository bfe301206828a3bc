"""Shape ops: first and second derivatives, values against numpy, PyTorch's node names and errors, and views that
write through to their base."""
import numpy as np
import pytest

import lucid
from helpers import check_grads, leaf


def _squared(fn):
    """fn's outputs squared, so that second derivatives also depend on the input (not only on grad_output)."""
    def f(*xs):
        out = fn(*xs)
        return tuple(o * o for o in out) if isinstance(out, tuple) else out * out
    return f


# (name, fn, input shapes): gradcheck and gradgradcheck of fn, and of fn squared (the square makes the second
# derivative depend on the input as well as on grad_output)
GRAD_CASES = [
    ("reshape", lambda x: x.reshape(3, -1), [(2, 3)]),
    ("reshape_0d", lambda x: lucid.reshape(x, (1, 1)), [()]),
    ("view_tuple", lambda x: x.view((6,)), [(2, 3)]),
    ("view_as", lambda x, y: x.view_as(y) * y, [(2, 3), (3, 2)]),
    ("flatten", lambda x: x.flatten(1), [(2, 3, 2)]),
    ("flatten_0d", lambda x: lucid.flatten(x), [()]),
    ("unflatten", lambda x: x.unflatten(1, (2, -1)), [(2, 6)]),
    ("squeeze_all", lambda x: x.squeeze(), [(1, 3, 1)]),
    ("squeeze_dim", lambda x: x.squeeze(0), [(1, 3)]),
    ("squeeze_dims", lambda x: x.squeeze((0, 2)), [(1, 3, 1)]),
    ("unsqueeze", lambda x: x.unsqueeze(-1), [(2, 3)]),
    ("unsqueeze_0d", lambda x: x.unsqueeze(0), [()]),
    ("transpose", lambda x: x.transpose(0, 2), [(2, 3, 2)]),
    ("swapaxes", lambda x: lucid.swapaxes(x, -1, 0), [(2, 3)]),
    ("permute", lambda x: x.permute(2, 0, 1), [(2, 3, 2)]),
    ("permute_tuple", lambda x: lucid.permute(x, (1, 0)), [(2, 3)]),
    ("t", lambda x: x.t(), [(2, 3)]),
    ("t_1d", lambda x: x.t(), [(3,)]),
    ("T", lambda x: x.T, [(2, 3, 2)]),
    ("mT", lambda x: x.mT, [(2, 3, 2)]),
    ("movedim", lambda x: lucid.movedim(x, (0, 1), (2, 0)), [(2, 3, 2)]),
    ("expand", lambda x: x.expand(2, -1, 3), [(3, 1)]),
    ("expand_0d", lambda x: x.expand(2, 3), [()]),
    ("expand_as", lambda x, y: x.expand_as(y) * y, [(3, 1), (2, 3, 3)]),
    ("broadcast_to", lambda x: lucid.broadcast_to(x, (2, 3)), [(3,)]),
    ("broadcast_tensors", lambda x, y: lucid.broadcast_tensors(x, y), [(2, 1), (3,)]),
    ("repeat", lambda x: x.repeat(2, 1, 3), [(2, 3)]),
    ("repeat_0d", lambda x: x.repeat(3), [()]),
    ("tile", lambda x: x.tile((2,)), [(2, 3)]),
    ("flip", lambda x: x.flip(0, 2), [(2, 3, 2)]),
    ("fliplr", lambda x: lucid.fliplr(x), [(2, 3)]),
    ("roll", lambda x: x.roll((1, -2), (0, 1)), [(3, 4)]),
    ("roll_flat", lambda x: x.roll(2), [(3, 4)]),
    ("clone", lambda x: x.clone(), [(2, 3)]),
    ("clone_0d", lambda x: lucid.clone(x), [()]),
    ("contiguous", lambda x: x.contiguous() * 1, [(2, 3)]),
    ("narrow", lambda x: x.narrow(1, 1, 2), [(2, 4)]),
    ("narrow_negative_start", lambda x: lucid.narrow(x, 0, -2, 2), [(3, 2)]),
    ("cat", lambda x, y: lucid.cat([x, y], 1), [(2, 3), (2, 2)]),
    ("cat_three", lambda x, y, z: lucid.cat((x, y, z), -1), [(2, 1), (2, 2), (2, 1)]),
    ("concat_one", lambda x: lucid.concat([x]), [(3,)]),
    ("stack", lambda x, y: lucid.stack([x, y], 1), [(2, 3), (2, 3)]),
    ("stack_0d", lambda x, y: lucid.stack([x, y]), [(), ()]),
    ("hstack", lambda x, y: lucid.hstack([x, y]), [(2,), (3,)]),
    ("vstack", lambda x, y: lucid.vstack([x, y]), [(3,), (2, 3)]),
    ("dstack", lambda x, y: lucid.dstack([x, y]), [(2, 2), (2, 2)]),
    ("split_int", lambda x: x.split(2, 1), [(2, 5)]),
    ("split_sizes", lambda x: lucid.split(x, [1, 3, 1], 1), [(2, 5)]),
    ("split_one_piece_used", lambda x: x.split(2)[1], [(5, 2)]),
    ("chunk", lambda x: x.chunk(3), [(5, 2)]),
    ("unbind", lambda x: x.unbind(1), [(2, 3)]),
    ("unbind_sum", lambda x: sum(x.unbind(0)), [(3, 2)]),
]


@pytest.mark.parametrize("name,fn,shapes", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grads(name, fn, shapes):
    inputs = [leaf(*s, seed=i) for i, s in enumerate(shapes)]
    check_grads(fn, *inputs)
    check_grads(_squared(fn), *inputs)


# (name, lucid fn, numpy fn, input shape)
VALUE_CASES = [
    ("reshape", lambda x: x.reshape(-1, 2), lambda a: a.reshape(-1, 2), (2, 3)),
    ("flatten", lambda x: x.flatten(0, 1), lambda a: a.reshape(6, 4), (2, 3, 4)),
    ("flatten_same_dim", lambda x: x.flatten(1, 1), lambda a: a, (2, 3)),
    ("unflatten", lambda x: x.unflatten(-1, (2, 2)), lambda a: a.reshape(2, 3, 2, 2), (2, 3, 4)),
    ("squeeze_noop_dim", lambda x: x.squeeze(1), lambda a: a, (2, 3)),
    ("squeeze_all", lambda x: x.squeeze(), lambda a: a.squeeze(), (1, 2, 1, 3)),
    ("unsqueeze", lambda x: x.unsqueeze(1), lambda a: a[:, None], (2, 3)),
    ("transpose", lambda x: x.transpose(2, 0), lambda a: np.swapaxes(a, 2, 0), (2, 3, 4)),
    ("swapdims", lambda x: x.swapdims(0, 1), lambda a: np.swapaxes(a, 0, 1), (2, 3, 4)),
    ("permute", lambda x: x.permute(1, 2, 0), lambda a: a.transpose(1, 2, 0), (2, 3, 4)),
    ("T", lambda x: x.T, lambda a: a.T, (2, 3, 4)),
    ("mT", lambda x: x.mT, lambda a: np.swapaxes(a, -1, -2), (2, 3, 4)),
    ("movedim", lambda x: x.movedim(0, -1), lambda a: np.moveaxis(a, 0, -1), (2, 3, 4)),
    ("moveaxis", lambda x: lucid.moveaxis(x, (0, 2), (1, 0)), lambda a: np.moveaxis(a, (0, 2), (1, 0)), (2, 3, 4)),
    ("expand", lambda x: x.expand(2, 3, -1), lambda a: np.broadcast_to(a, (2, 3, 4)), (3, 4)),
    ("repeat", lambda x: x.repeat(2, 3), lambda a: np.tile(a, (2, 3)), (2, 3)),
    ("repeat_more_dims", lambda x: x.repeat(2, 1, 2), lambda a: np.tile(a, (2, 1, 2)), (2, 3)),
    ("repeat_zero", lambda x: x.repeat(0, 2), lambda a: np.tile(a, (0, 2)), (2, 3)),
    ("tile_fewer_dims", lambda x: lucid.tile(x, (2,)), lambda a: np.tile(a, 2), (2, 3)),
    ("flip", lambda x: lucid.flip(x, (0, 2)), lambda a: np.flip(a, (0, 2)), (2, 3, 4)),
    ("flipud", lambda x: lucid.flipud(x), lambda a: np.flipud(a), (2, 3)),
    ("roll", lambda x: x.roll(1, 1), lambda a: np.roll(a, 1, 1), (2, 3, 4)),
    ("roll_dims", lambda x: x.roll((1, -1), (0, 2)), lambda a: np.roll(a, (1, -1), (0, 2)), (2, 3, 4)),
    ("roll_flat", lambda x: x.roll(5), lambda a: np.roll(a, 5), (2, 3, 4)),
    ("narrow", lambda x: x.narrow(-1, 1, 2), lambda a: a[..., 1:3], (2, 3, 4)),
    ("cat", lambda x: lucid.cat([x, x * 2], 1), lambda a: np.concatenate([a, a * 2], 1), (2, 3)),
    ("stack", lambda x: lucid.stack([x, x * 2], -1), lambda a: np.stack([a, a * 2], -1), (2, 3)),
    ("hstack_2d", lambda x: lucid.hstack([x, x]), lambda a: np.hstack([a, a]), (2, 3)),
    ("vstack_1d", lambda x: lucid.vstack([x, x]), lambda a: np.vstack([a, a]), (3,)),
    ("dstack", lambda x: lucid.dstack([x, x]), lambda a: np.dstack([a, a]), (2, 3)),
    ("atleast_3d", lambda x: lucid.atleast_3d(x), lambda a: np.atleast_3d(a), (3,)),
    ("atleast_2d_0d", lambda x: lucid.atleast_2d(x), lambda a: np.atleast_2d(a), ()),
    ("atleast_2d_several", lambda x: lucid.atleast_2d(x, x[0]), lambda a: tuple(np.atleast_2d(a, a[0])), (3,)),
    ("hstack_one", lambda x: lucid.hstack([x]), lambda a: np.hstack([a]), (3,)),
    ("split_int", lambda x: x.split(2, 1), lambda a: tuple(np.split(a, [2], 1)), (2, 3)),
    ("split_big", lambda x: x.split(5), lambda a: (a,), (2, 3)),
    ("split_sizes", lambda x: x.split([1, 0, 2], 1), lambda a: tuple(np.split(a, [1, 1], 1)), (2, 3)),
    ("chunk_uneven", lambda x: x.chunk(4, 0), lambda a: tuple(np.split(a, [2, 4])), (5, 2)),
    ("chunk_even", lambda x: x.chunk(2, -1), lambda a: tuple(np.split(a, 2, -1)), (2, 4)),
    ("unbind", lambda x: lucid.unbind(x, 1), lambda a: tuple(a[:, i] for i in range(3)), (2, 3)),
]


@pytest.mark.parametrize("name,fn,np_fn,shape", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_match_numpy(name, fn, np_fn, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) - 3
    out, expected = fn(lucid.tensor(a)), np_fn(a)
    if isinstance(expected, tuple):
        assert isinstance(out, tuple) and len(out) == len(expected)
    else:
        out, expected = (out,), (expected,)
    for o, e in zip(out, expected):
        assert tuple(o.shape) == e.shape
        np.testing.assert_array_equal(o.numpy(), e)


def test_cat_and_stack_promote_dtypes():
    assert lucid.cat([lucid.ones(2), lucid.ones(2, dtype=lucid.int64)]).dtype == lucid.float32
    assert lucid.stack([lucid.ones(2, dtype=lucid.float64), lucid.ones(2)]).dtype == lucid.float64
    x = leaf(2)
    y = lucid.cat([x, lucid.ones(2)])
    y.sum().backward()
    assert x.grad.dtype == lucid.float64


def test_contiguous_returns_self_and_flatten_same_dim_too():
    x = lucid.ones(2, 3)
    assert x.contiguous() is x
    assert x.flatten(1, 1) is x


NODE_NAMES = [
    (lambda x: x.view(6), "ViewBackward0"),
    (lambda x: x.reshape(3, 2), "ViewBackward0"),
    (lambda x: x.flatten(), "ViewBackward0"),
    (lambda x: x.unflatten(0, (1, 2)), "ViewBackward0"),
    (lambda x: x.unsqueeze(0), "UnsqueezeBackward0"),
    (lambda x: x.unsqueeze(0).squeeze(), "SqueezeBackward0"),
    (lambda x: x.unsqueeze(0).squeeze(0), "SqueezeBackward1"),
    (lambda x: x.unsqueeze(0).squeeze((0, 1)), "SqueezeBackward2"),
    (lambda x: x.transpose(0, 1), "TransposeBackward0"),
    (lambda x: x.swapaxes(0, 1), "TransposeBackward0"),
    (lambda x: x.mT, "TransposeBackward0"),
    (lambda x: x.permute(1, 0), "PermuteBackward0"),
    (lambda x: x.T, "PermuteBackward0"),
    (lambda x: x.movedim(0, 1), "PermuteBackward0"),
    (lambda x: x.t(), "TBackward0"),
    (lambda x: x.expand(2, 2, 3), "ExpandBackward0"),
    (lambda x: x.broadcast_to((2, 2, 3)), "ExpandBackward0"),
    (lambda x: x.repeat(1, 2), "RepeatBackward0"),
    (lambda x: x.tile(2), "RepeatBackward0"),
    (lambda x: x.flip(0), "FlipBackward0"),
    (lambda x: x.roll(1, 0), "RollBackward0"),
    (lambda x: x.clone(), "CloneBackward0"),
    (lambda x: x.narrow(1, 0, 2), "SliceBackward0"),
    (lambda x: lucid.cat([x, x]), "CatBackward0"),
    (lambda x: lucid.stack([x, x]), "StackBackward0"),
    (lambda x: x.split(1)[1], "SplitBackward0"),
    (lambda x: x.chunk(2)[0], "SplitBackward0"),
    (lambda x: x.split([1, 1])[0], "SplitWithSizesBackward0"),
    (lambda x: x.unbind(1)[2], "UnbindBackward0"),
]


@pytest.mark.parametrize("fn,name", NODE_NAMES, ids=[n for _, n in NODE_NAMES])
def test_node_names(fn, name):
    assert fn(leaf(2, 3)).grad_fn.name() == name


def test_split_outputs_share_one_node():
    pieces = leaf(4, 2).split(1)
    assert len({id(p.grad_fn) for p in pieces}) == 1
    assert [p.output_nr for p in pieces] == [0, 1, 2, 3]


def test_ops_under_no_grad_record_nothing():
    x = leaf(2, 3)
    with lucid.no_grad():
        outs = [x.view(6), x.t(), lucid.cat([x, x]), *x.unbind(0), x.repeat(2, 1)]
    assert all(not o.requires_grad and o.grad_fn is None for o in outs)


def test_expand_gradient_is_summed():
    x = lucid.tensor([[1.0], [2.0]], requires_grad=True)
    x.expand(2, 3).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[3.0], [3.0]])


# ---------------------------------------------------------------------------------------------------- views
# (name, view of a lucid tensor, the same view of a numpy array); the tensor is arange(24).reshape(2, 3, 4)
VIEWS = [
    ("view", lambda x: x.view(-1), lambda a: a.reshape(-1)),
    ("reshape", lambda x: x.reshape(6, 4), lambda a: a.reshape(6, 4)),
    ("flatten", lambda x: x.flatten(1), lambda a: a.reshape(2, 12)),
    ("unflatten", lambda x: x.unflatten(2, (2, 2)), lambda a: a.reshape(2, 3, 2, 2)),
    ("squeeze", lambda x: x[:1].squeeze(0), lambda a: a[:1].squeeze(0)),
    ("unsqueeze", lambda x: x.unsqueeze(1), lambda a: a[:, None]),
    ("transpose", lambda x: x.transpose(0, 2), lambda a: np.swapaxes(a, 0, 2)),
    ("permute", lambda x: x.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    ("t", lambda x: x[0].t(), lambda a: a[0].T),
    ("T", lambda x: x.T, lambda a: a.T),
    ("movedim", lambda x: x.movedim(0, 2), lambda a: np.moveaxis(a, 0, 2)),
    ("narrow", lambda x: x.narrow(1, 1, 2), lambda a: a[:, 1:3]),
    ("split", lambda x: x.split(2, 2)[1], lambda a: a[:, :, 2:]),
    ("chunk", lambda x: x.chunk(3, 1)[2], lambda a: a[:, 2:]),
    ("unbind", lambda x: x.unbind(2)[3], lambda a: a[:, :, 3]),
    ("view_of_views", lambda x: x.transpose(0, 1)[2].t()[1:], lambda a: np.swapaxes(a, 0, 1)[2].T[1:]),
    ("view_of_reshape", lambda x: x[1].view(-1)[2:7], lambda a: a[1].reshape(-1)[2:7]),
]
MULTI_OUTPUT = ("split", "chunk", "unbind")  # PyTorch forbids in-place writes to these with grad (tested below)


@pytest.mark.parametrize("name,view,np_view", VIEWS, ids=[v[0] for v in VIEWS])
def test_inplace_on_view_writes_base(name, view, np_view):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = lucid.tensor(a)
    v = view(x)
    v.mul_(2).add_(1)
    w = np_view(a)
    w *= 2
    w += 1
    np.testing.assert_array_equal(x.numpy(), a)
    np.testing.assert_array_equal(v.numpy(), w)
    assert x._version == 2


@pytest.mark.parametrize("name,view,np_view", [v for v in VIEWS if v[0] not in MULTI_OUTPUT],
                         ids=[v[0] for v in VIEWS if v[0] not in MULTI_OUTPUT])
def test_inplace_on_view_of_non_leaf_is_differentiable(name, view, np_view):
    a = leaf(2, 3, 4)
    weights = lucid.tensor(np.arange(24.0).reshape(2, 3, 4), dtype=lucid.float64)
    b = a * 1
    view(b).mul_(3)
    expected = np.ones((2, 3, 4))
    np_view(expected)[...] *= 3
    (b * weights).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), weights.numpy() * expected)


def test_torch_example_write_through():
    x = lucid.zeros(3, 4)
    x[0].fill_(1)
    x.t().mul_(2)
    x.view(-1)[2] = 5
    expected = np.zeros((3, 4), np.float32)
    expected[0] = 2
    expected[0, 2] = 5
    np.testing.assert_array_equal(x.numpy(), expected)


def test_write_through_gradients_match_out_of_place():
    def f(a, c):
        b = a * 1
        b.t()[1].mul_(c)
        b[0].fill_(2)
        b.view(-1)[5] = c * c
        return b

    check_grads(f, leaf(3, 4), leaf(seed=1))


def test_inplace_on_view_of_leaf_is_an_error():
    x = leaf(2, 3)
    for v in (x.t(), x.view(-1), x[0], x.narrow(0, 0, 1)):
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an "
                                               "in-place operation."):
            v.mul_(2)
    with lucid.no_grad():
        x.t().mul_(2)
    assert x._version == 1


def test_inplace_on_multi_output_view_with_grad_is_an_error():
    # PyTorch 2.13 names the op, not its node, in this message ("Output 1 of Unbind")
    b = leaf(2, 3) * 1
    with pytest.raises(RuntimeError, match="Output 1 of Unbind is a view and is being modified inplace. "
                                           "This view is the output of a function that returns multiple views."):
        b.unbind(0)[1].mul_(2)
    with pytest.raises(RuntimeError, match="Output 0 of Split is a view"):
        b.split(1)[0].zero_()
    assert b._version == 0


def test_clone_is_not_a_view():
    x = lucid.zeros(3)
    c = x.clone()
    c.add_(1)
    np.testing.assert_array_equal(x.numpy(), [0, 0, 0])


# ---------------------------------------------------------------------------------------------------- errors
ERRORS = [
    (lambda: lucid.ones(2, 3).view(4, 2), RuntimeError, r"shape '\[4, 2\]' is invalid for input of size 6"),
    (lambda: lucid.ones(2, 3).view(-1, -1), RuntimeError, "only one dimension can be inferred"),
    (lambda: lucid.ones(0).view(-1, 0), RuntimeError, "cannot reshape tensor of 0 elements"),
    (lambda: lucid.ones(2, 3).unflatten(1, (2, 2)), RuntimeError, r"unflatten: Provided sizes \[2, 2\] don't multiply"),
    (lambda: lucid.ones(2, 3).flatten(1, 0), RuntimeError, "start_dim cannot come after end_dim"),
    (lambda: lucid.ones(2, 3).transpose(0, 2), IndexError,
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    (lambda: lucid.ones(2).unsqueeze(3), IndexError, r"expected to be in range of \[-2, 1\], but got 3"),
    (lambda: lucid.ones(2, 3).permute(0, 0), RuntimeError, "duplicate dims are not allowed"),
    (lambda: lucid.ones(2, 3).permute(0), RuntimeError, "input.dim\\(\\) = 2 is not equal to len\\(dims\\) = 1"),
    (lambda: lucid.ones(2, 3, 4).t(), RuntimeError, "t\\(\\) expects a tensor with <= 2 dimensions, but self is 3D"),
    (lambda: lucid.ones(3).mT, RuntimeError, "tensor.mT is only supported on matrices or batches of matrices"),
    (lambda: lucid.ones(2, 3).expand(2, 4), RuntimeError,
     r"The expanded size of the tensor \(4\) must match the existing size \(3\) at non-singleton dimension 1"),
    (lambda: lucid.ones(3).expand(-1, 3), RuntimeError, "isn't allowed in a leading, non-existing dimension 0"),
    (lambda: lucid.ones(2, 3).expand(3), RuntimeError, r"the number of sizes provided \(1\) must be greater or equal"),
    (lambda: lucid.ones(2, 3).repeat(2), RuntimeError, "Number of dimensions of repeat dims can not be smaller"),
    (lambda: lucid.ones(3).roll((1, 2), 0), RuntimeError, "shifts and dimensions must align"),
    (lambda: lucid.ones(3).narrow(0, 2, 2), RuntimeError, r"start \(2\) \+ length \(2\) exceeds dimension size \(3\)"),
    (lambda: lucid.cat([]), RuntimeError, "expected a non-empty list of Tensors"),
    (lambda: lucid.cat([lucid.ones(2, 3), lucid.ones(2, 2)]), RuntimeError,
     "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for tensor number 1"),
    (lambda: lucid.cat([lucid.ones(2), lucid.ones(2, 2)]), RuntimeError,
     "Tensors must have same number of dimensions: got 1 and 2"),
    (lambda: lucid.cat([lucid.tensor(1.0)]), RuntimeError, r"zero-dimensional tensor \(at position 0\) cannot be"),
    (lambda: lucid.cat(lucid.ones(2)), TypeError, "must be tuple of Tensors"),
    (lambda: lucid.stack([lucid.ones(2), lucid.ones(3)]), RuntimeError,
     r"stack expects each tensor to be equal size, but got \[2\] at entry 0 and \[3\] at entry 1"),
    (lambda: lucid.ones(3).split([1, 1]), RuntimeError, "split_with_sizes expects split_sizes to sum exactly to 3"),
    (lambda: lucid.ones(3).split(0), RuntimeError, "split_size can only be 0 if dimension size is 0"),
    (lambda: lucid.ones(3).chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
]


@pytest.mark.parametrize("fn,exc,message", ERRORS, ids=[m[:30] for _, _, m in ERRORS])
def test_errors(fn, exc, message):
    with pytest.raises(exc, match=message):
        fn()
