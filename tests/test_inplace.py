"""In-place ops (add_, mul_, ..., +=): values, the leaf error, no_grad updates, ``.data``, recording on non-leaves,
the version counter check on saved tensors, dtype and shape rules, and in-place ``.grad`` accumulation."""
import numpy as np
import pytest

import lucid

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
Y = np.array([2.0, -0.5, 4.0])

INPLACE = [
    ("add_", lambda t: t.add_(lucid.tensor(Y)), lambda x: x + Y),
    ("add_alpha", lambda t: t.add_(lucid.tensor(Y), alpha=2), lambda x: x + 2 * Y),
    ("add_scalar", lambda t: t.add_(1.5), lambda x: x + 1.5),
    ("sub_", lambda t: t.sub_(lucid.tensor(Y)), lambda x: x - Y),
    ("mul_", lambda t: t.mul_(lucid.tensor(Y)), lambda x: x * Y),
    ("div_", lambda t: t.div_(lucid.tensor(Y)), lambda x: x / Y),
    ("pow_", lambda t: t.pow_(2), lambda x: x ** 2),
    ("pow_tensor", lambda t: t.pow_(lucid.tensor([2.0, 3.0, 1.0])), lambda x: x ** np.array([2.0, 3.0, 1.0])),
    ("clamp_", lambda t: t.clamp_(-0.5, 1.0), lambda x: np.clip(x, -0.5, 1.0)),
    ("clamp_min", lambda t: t.clamp_(min=0.0), lambda x: np.maximum(x, 0.0)),
    ("zero_", lambda t: t.zero_(), np.zeros_like),
    ("fill_", lambda t: t.fill_(3.0), lambda x: np.full_like(x, 3.0)),
    ("fill_tensor", lambda t: t.fill_(lucid.tensor(-2.0)), lambda x: np.full_like(x, -2.0)),
    ("copy_", lambda t: t.copy_(lucid.tensor(X[::-1].copy())), lambda x: x[::-1]),
    ("copy_broadcast", lambda t: t.copy_(lucid.tensor(Y)), lambda x: np.broadcast_to(Y, x.shape)),
    ("copy_numpy", lambda t: t.copy_(X * 3), lambda x: x * 3),
]


def _iop(op):
    def f(t, other=lucid.tensor(Y)):
        if op == "+=":
            t += other
        elif op == "-=":
            t -= other
        elif op == "*=":
            t *= other
        elif op == "/=":
            t /= other
        return t

    return f


OPERATORS = [("+=", np.add), ("-=", np.subtract), ("*=", np.multiply), ("/=", np.divide)]
ALL = INPLACE + [(op, _iop(op), lambda x, r=ref: r(x, Y)) for op, ref in OPERATORS]
IDS = [n for n, _, _ in ALL]


# ---------------------------------------------------------------------------------------------------- values
@pytest.mark.parametrize("name, fn, ref", ALL, ids=IDS)
def test_inplace_values_return_self_and_bump_the_version(name, fn, ref):
    t = lucid.tensor(X, dtype=lucid.float64)
    out = fn(t)
    assert out is t
    assert t._version == 1
    assert t.dtype == lucid.float64 and tuple(t.shape) == X.shape
    np.testing.assert_allclose(t.numpy(), ref(X), rtol=1e-14)


@pytest.mark.parametrize("name, fn, ref", ALL, ids=IDS)
def test_inplace_on_a_leaf_that_requires_grad_errors(name, fn, ref):
    x = lucid.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place "
                                           "operation."):
        fn(x)
    assert x._version == 0
    np.testing.assert_array_equal(x.detach().numpy(), X.astype(np.float32))


@pytest.mark.parametrize("name, fn, ref", ALL, ids=IDS)
def test_inplace_on_a_leaf_is_allowed_under_no_grad_and_bumps_the_version(name, fn, ref):
    x = lucid.tensor(X, dtype=lucid.float64, requires_grad=True)
    with lucid.no_grad():
        out = fn(x)
    assert out is x
    assert x._version == 1
    assert x.is_leaf and x.requires_grad and x.grad_fn is None
    np.testing.assert_allclose(x.detach().numpy(), ref(X), rtol=1e-14)


def test_optimizer_style_update_under_no_grad_keeps_the_leaf():
    w = lucid.tensor([1.0, 2.0], requires_grad=True)
    (w * w).sum().backward()
    with lucid.no_grad():
        w -= 0.1 * w.grad
    assert w.is_leaf and w.requires_grad and w._version == 1
    np.testing.assert_allclose(w.detach().numpy(), [0.8, 1.6], rtol=1e-6)
    (w * w).sum().backward()  # the graph built after the update is fine
    np.testing.assert_allclose(w.grad.numpy(), [2.0 + 1.6, 4.0 + 3.2], rtol=1e-6)


def test_data_add_changes_the_tensor_without_bumping_the_version():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    x.data.add_(1)
    assert x._version == 0
    np.testing.assert_array_equal(x.detach().numpy(), [2.0, 3.0])
    y = x * x  # saves x
    x.data.mul_(10)
    assert x._version == 0
    y.sum().backward()  # no version error: .data writes are invisible to autograd
    np.testing.assert_array_equal(x.grad.numpy(), [40.0, 60.0])


# ---------------------------------------------------------------------------------------------------- non-leaves
@pytest.mark.parametrize("fn, name", [
    (lambda y: y.add_(1), "AddBackward0"), (lambda y: y.sub_(1), "SubBackward0"), (lambda y: y.mul_(2), "MulBackward0"),
    (lambda y: y.div_(2), "DivBackward0"), (lambda y: y.pow_(2), "PowBackward0"),
    (lambda y: y.clamp_(0, 1), "ClampBackward1"), (lambda y: y.zero_(), "ZeroBackward0"),
    (lambda y: y.copy_(lucid.tensor([1.0, 2.0])), "CopyBackwards"),
    (lambda y: y.__iadd__(1), "AddBackward0"), (lambda y: y.__imul__(2), "MulBackward0"),
], ids=["add_", "sub_", "mul_", "div_", "pow_", "clamp_", "zero_", "copy_", "+=", "*="])
def test_inplace_on_a_non_leaf_is_recorded_under_the_op_name(fn, name):
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    out = fn(y)
    assert out is y
    assert type(y.grad_fn).__name__ == name
    assert y.requires_grad and not y.is_leaf and y._version == 1


def test_gradients_through_inplace_ops_match_closed_forms():
    xn = np.array([0.5, -1.0, 2.0])
    x = lucid.tensor(xn, dtype=lucid.float64, requires_grad=True)
    y = x * 2
    y.mul_(x)  # 2x^2
    y.add_(3)  # 2x^2 + 3
    y.pow_(2)  # (2x^2 + 3)^2
    y.div_(2)
    y -= x  # (2x^2 + 3)^2 / 2 - x
    np.testing.assert_allclose(y.detach().numpy(), (2 * xn ** 2 + 3) ** 2 / 2 - xn, rtol=1e-14)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (2 * xn ** 2 + 3) * 4 * xn - 1, rtol=1e-14)


def test_inplace_op_that_reads_self_as_the_other_operand():
    x = lucid.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = x + 1
    y.add_(y)  # add saves nothing: 2(x + 1)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])
    z = x + 1
    z.mul_(z)  # mul saved z as `other`, and the write then changed it (PyTorch raises too)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        z.sum().backward()


def test_clamp_inplace_gradient():
    x = lucid.tensor([-1.0, 0.0, 0.5, 1.0, 2.0], requires_grad=True)
    y = x * 1
    y.clamp_(0, 1)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 1.0, 1.0, 0.0])


def test_fill_and_zero_cut_the_gradient_of_the_old_value():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.zero_()
    (y + x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])
    v = lucid.tensor(2.0, requires_grad=True)
    z = x * 3
    z.fill_(v)
    (z * lucid.tensor([1.0, 10.0])).sum().backward()
    assert v.grad.item() == 11.0
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 1.0])  # unchanged: fill_ gave the old value 0


def test_inplace_with_a_grad_requiring_argument_makes_a_plain_tensor_a_non_leaf():
    t = lucid.zeros(2, 3)
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    t.add_(x)
    assert t.requires_grad and not t.is_leaf and type(t.grad_fn).__name__ == "AddBackward0"
    t.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_copy_from_a_grad_requiring_source_sums_the_broadcast_and_keeps_its_dtype():
    t = lucid.zeros(2, 3)
    src = lucid.tensor([1.0, 2.0, 3.0], dtype=lucid.float64, requires_grad=True)
    t.copy_(src)
    assert t.dtype == lucid.float32
    np.testing.assert_array_equal(t.detach().numpy(), [[1.0, 2.0, 3.0]] * 2)
    (t * lucid.tensor([[1.0], [2.0]])).sum().backward()
    assert src.grad.dtype == lucid.float64
    np.testing.assert_array_equal(src.grad.numpy(), [3.0, 3.0, 3.0])


def test_copy_from_numpy_float64_keeps_the_precision():
    t = lucid.zeros(2, dtype=lucid.float64)
    t.copy_(np.array([0.1, 0.2]))
    assert t.tolist() == [0.1, 0.2]


# ---------------------------------------------------------------------------------------------------- versions
def test_modifying_a_saved_output_then_backward_raises():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()  # saves its output
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as e:
        y.sum().backward()
    assert "is at version 1; expected version 0 instead" in str(e.value)


def test_modifying_a_saved_input_then_backward_raises_and_names_the_last_writer():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    a = x + 0
    b = a.sin()  # saves a
    a.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as e:
        b.sum().backward()
    msg = str(e.value)
    assert "output 0 of Mul" in msg and "is at version 1; expected version 0 instead" in msg


def test_modifying_a_saved_plain_tensor_then_backward_raises_without_a_node_name():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    w = lucid.tensor([3.0, 4.0])
    y = x * w  # saves w for x's gradient
    w.add_(1)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead") as e:
        y.sum().backward()
    assert "which is output" not in str(e.value)


def test_two_inplace_writes_report_version_two():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    a = x + 0
    b = a * a
    a.add_(1)
    a.add_(1)
    with pytest.raises(RuntimeError, match="is at version 2; expected version 0 instead"):
        b.sum().backward()


def test_modifying_a_tensor_that_was_not_saved_still_backprops():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2  # saves x and 2, not y
    y.detach().add_(1)
    assert y._version == 1  # detach() shares the version counter
    np.testing.assert_array_equal(y.detach().numpy(), [3.0, 5.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_add_saves_nothing_so_its_inputs_may_change():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y + 1  # add needs no saved tensors
    y.add_(5)
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_a_saved_tensor_modified_before_use_is_fine():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    a = x + 0
    a.mul_(3)  # written before anything saved it
    b = a * a
    b.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * 9 * np.array([1.0, 2.0]))


# ---------------------------------------------------------------------------------------------------- dtype / shape
@pytest.mark.parametrize("fn", [lambda i: i.add_(1.5), lambda i: i.mul_(lucid.tensor([0.5, 0.5])),
                                lambda i: i.div_(2), lambda i: _iop("*=")(i, 1.5), lambda i: _iop("/=")(i, 2)],
                         ids=["add_", "mul_", "div_", "*=", "/="])
def test_inplace_with_a_float_result_on_an_int_tensor_errors(fn):
    i = lucid.tensor([1, 2])
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        fn(i)
    assert i.dtype == lucid.int64 and i.tolist() == [1, 2] and i._version == 0


def test_inplace_with_an_int_result_on_an_int_tensor_works():
    i = lucid.tensor([1, 2])
    i += 3
    i *= 2
    assert i.dtype == lucid.int64 and i.tolist() == [8, 10]


def test_inplace_casts_a_same_category_result_to_self_dtype():
    t = lucid.tensor([1.0, 2.0])
    t.add_(lucid.tensor([0.5, 0.25], dtype=lucid.float64))
    assert t.dtype == lucid.float32
    np.testing.assert_array_equal(t.numpy(), [1.5, 2.25])


def test_inplace_mixed_dtype_gradient_reaches_both_inputs_in_their_dtypes():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    d = lucid.tensor([3.0, 4.0], dtype=lucid.float64, requires_grad=True)
    y = x * 1
    y.mul_(d)
    assert y.dtype == lucid.float32
    y.sum().backward()
    assert x.grad.dtype == lucid.float32 and d.grad.dtype == lucid.float64
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(d.grad.numpy(), [1.0, 2.0])


def test_inplace_mixed_dtype_keeps_the_op_node_name():
    y = lucid.tensor([1.0, 2.0], requires_grad=True) * 1
    y.add_(lucid.tensor([1.0, 1.0], dtype=lucid.float64))
    assert type(y.grad_fn).__name__ == "AddBackward0"


@pytest.mark.parametrize("requires_grad", [False, True], ids=["plain", "non_leaf"])
def test_inplace_broadcast_that_would_change_the_shape_errors_and_leaves_self_untouched(requires_grad):
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=requires_grad)
    t = x * 1 if requires_grad else x
    fn_before = t.grad_fn
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        t.add_(lucid.ones(2, 3))
    assert tuple(t.shape) == (3,) and t._version == 0 and t.grad_fn is fn_before
    np.testing.assert_array_equal(t.detach().numpy(), [1.0, 2.0, 3.0])


def test_inplace_broadcast_of_the_other_operand_is_fine():
    t = lucid.ones(2, 3)
    t.mul_(lucid.tensor([1.0, 2.0, 3.0]))
    t.add_(lucid.tensor([[10.0], [20.0]]))
    np.testing.assert_array_equal(t.numpy(), [[11.0, 12.0, 13.0], [21.0, 22.0, 23.0]])


# ---------------------------------------------------------------------------------------------------- .grad
def test_leaf_grad_is_accumulated_in_place_across_backward_calls():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    g = x.grad
    (x * x).sum().backward()
    assert x.grad is g
    np.testing.assert_array_equal(g.numpy(), [3.0 + 2.0, 3.0 + 4.0])


@pytest.mark.parametrize("write", [
    lambda y: y.add_(y * 2),
    lambda y: y.mul_(y.sin() * 2),
    lambda y: y.add_((y * 2).exp().sum()),
])
def test_inplace_write_of_a_value_computed_from_itself_leaves_no_reference_cycle(write):
    # y.op_(f(y)): f's node saved y and y's new grad_fn sits above it; the write swaps the saved y for a tensor on
    # its storage, so the graph is freed by reference counting alone
    import gc
    import weakref
    x = lucid.ones(3, requires_grad=True)
    gc.disable()
    try:
        y = x.clone()
        write(y)
        alive_y, alive_fn = weakref.ref(y), weakref.ref(y.grad_fn)
        del y
        assert alive_y() is None and alive_fn() is None
    finally:
        gc.enable()


def test_inplace_write_of_a_value_computed_from_itself_keeps_pytorchs_gradients_and_errors():
    x = lucid.tensor([0.5, 1.0, 2.0], requires_grad=True)
    y = x.clone()
    y.add_(y * 2)  # y = 3x
    (y * y).sum().backward()
    assert x.grad.tolist() == [9.0, 18.0, 36.0]  # 18 x
    y = x.clone()
    y.add_(y * 2)
    g = lucid.autograd.grad((y * y).sum(), x, create_graph=True)
    assert lucid.autograd.grad(g.sum(), x).tolist() == [18.0, 18.0, 18.0]
    x.grad = None
    y = lucid.zeros(3)
    y.add_(x * y + x.exp())  # x * y saved y's value before the write
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        (y * y).sum().backward()
    y = x.clone()
    y.mul_(y * y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
