"""Indexing: x[key] and x[key] = value for every kind of key (values against numpy, first and second derivatives,
PyTorch's node names, placement of advanced dims and errors), views made by indexing, and nonzero, index_select,
index_put, masked_fill, masked_select."""
import numpy as np
import pytest

import lucid
from helpers import check_grads, leaf

SHAPE = (3, 4, 2)
MASK = np.random.default_rng(7).uniform(size=SHAPE) > 0.5
MASK_2D = MASK[:, :, 0]


def _np(key):
    """The numpy form of a lucid key (tensors become arrays)."""
    if isinstance(key, tuple):
        return tuple(_np(k) for k in key)
    return key.numpy() if isinstance(key, lucid.Tensor) else key


# (name, key, expected: numpy fn of the array; None means numpy's a[key] has PyTorch's meaning)
KEYS = [
    ("int", 1, None),
    ("negative_int", -1, None),
    ("numpy_int", np.int64(2), None),
    ("two_ints", (1, 2), None),
    ("slice", slice(1, 3), None),
    ("slice_step", (slice(None), slice(0, 4, 2)), None),
    ("slice_past_end", slice(1, 100), None),
    ("slice_empty", slice(2, 1), None),
    ("slice_negative_bounds", (slice(-2, None), slice(None, -1)), None),
    ("ellipsis", (Ellipsis, 1), None),
    ("ellipsis_alone", Ellipsis, None),
    ("empty_tuple", (), None),
    ("none", (None, 0), None),
    ("none_ellipsis_none", (0, None, Ellipsis, None), None),
    ("list", [0, 2], None),
    ("list_repeated", [0, 0, 2], None),
    ("list_negative", [-1, 0], None),
    ("list_empty", [], lambda a: a[np.array([], dtype=np.int64)]),
    ("numpy_array", np.array([2, 0]), None),
    ("tensor_1d", lucid.tensor([2, 1, 2]), None),
    ("tensor_2d", lucid.tensor([[0, 2], [1, 1]]), None),
    ("tensor_int32", lucid.tensor([1, 0], dtype=lucid.int32), None),
    ("adjacent_arrays", ([0, 2], [1, 3]), None),
    ("adjacent_arrays_middle", (slice(None), [0, 2], [1, 0]), None),
    ("separated_arrays_go_first", ([0, 2], slice(None), [1, 0]), None),
    ("broadcast_arrays", ([[0], [2]], [1, 3]), None),
    ("array_slice", ([2, 0], slice(1, 3)), None),
    # PyTorch applies ints first (a select), so they neither separate nor join index arrays (NumPy differs here)
    ("int_then_array_after_slice", (0, slice(None), [1, 0]), lambda a: a[0][:, [1, 0]]),
    ("int_between_arrays", ([0, 2], 1, [1, 0]), lambda a: a[:, 1][[0, 2], [1, 0]]),
    ("tensor_0d", lucid.tensor(1), lambda a: a[1]),
    ("tensor_0d_then_array_after_slice", (lucid.tensor(0), slice(None), [1, 0]), lambda a: a[0][:, [1, 0]]),
    ("mask_full", lucid.tensor(MASK), None),
    ("mask_2d", lucid.tensor(MASK_2D), None),
    ("mask_list", [True, False, True], lambda a: a[np.array([True, False, True])]),
    ("mask_numpy", (slice(None), np.array([False, True, True, False])), None),
    ("mask_then_int", (lucid.tensor([True, False, True]), 1), lambda a: a[:, 1][[True, False, True]]),
    ("mask_and_array", (slice(None), lucid.tensor([True, False, True, False]), [1, 0]), None),
    ("true", True, lambda a: a[None]),
    ("false", False, lambda a: a[None][:0]),
    ("true_in_tuple", (0, True), lambda a: a[0][None]),
    # a short list holding sequences is read as a tuple, as PyTorch does
    ("nested_list_is_tuple", [[0, 1], [1, 2]], lambda a: a[[0, 1], [1, 2]]),
    ("list_of_tensors_is_tuple", [lucid.tensor([0, 1]), lucid.tensor([1, 2])], lambda a: a[[0, 1], [1, 2]]),
    ("list_with_slice_is_tuple", [0, slice(1, 3)], lambda a: a[0, 1:3]),
]
KEY_IDS = [k[0] for k in KEYS]


def _expected(key, fn, a):
    return fn(a) if fn is not None else a[_np(key)]


@pytest.mark.parametrize("name,key,fn", KEYS, ids=KEY_IDS)
def test_getitem_values(name, key, fn):
    a = np.arange(24, dtype=np.float32).reshape(SHAPE)
    out = lucid.tensor(a)[key]
    expected = _expected(key, fn, a)
    assert tuple(out.shape) == expected.shape
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("name,key,fn", KEYS, ids=KEY_IDS)
def test_getitem_grads(name, key, fn):
    x = leaf(*SHAPE)
    check_grads(lambda t: t[key], x, second=False)
    # squared, the second derivative depends on x and on grad_output; gradcheck.py cannot build the Jacobian for a
    # zero-element grad_output (gradgradcheck's second input), so empty results get first derivatives only
    check_grads(lambda t: t[key] * t[key], x, second=x[key].numel() > 0)


def test_getitem_0d():
    x = leaf()
    for key in (Ellipsis, (), None, (None, None)):
        check_grads(lambda t: t[key] * t, x)
    assert tuple(x[None, ..., None].shape) == (1, 1)


NODE_NAMES = [
    (0, "SelectBackward0"),
    ((slice(None), 0), "SelectBackward0"),
    ((slice(1, None), 0), "SelectBackward0"),
    ((0, slice(1, 3)), "SliceBackward0"),
    (slice(0, 1), "SliceBackward0"),
    (None, "UnsqueezeBackward0"),
    (Ellipsis, "AliasBackward0"),
    (slice(None), "AliasBackward0"),
    (lucid.tensor(1), "SelectBackward0"),
    ([0], "IndexBackward0"),
    (lucid.tensor(MASK), "IndexBackward0"),
    ((0, [1]), "IndexBackward0"),
]


@pytest.mark.parametrize("key,name", NODE_NAMES, ids=[str(i) for i in range(len(NODE_NAMES))])
def test_node_names(key, name):
    assert leaf(*SHAPE)[key].grad_fn.name() == name


def test_repeated_indices_accumulate():
    x = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[[0, 0, 2]].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 0.0, 1.0])
    y = lucid.zeros(2, 3, requires_grad=True)
    (y[[1, 1, 0], [2, 2, 2]] * lucid.tensor([1.0, 2.0, 4.0])).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [[0, 0, 4], [0, 0, 3]])


def test_repeated_indices_second_derivative():
    check_grads(lambda t: t[[0, 0, 2, 0]] ** 3, leaf(3))


def test_iteration_and_int_like_keys():
    x = lucid.arange(6).reshape(3, 2)
    assert [r.tolist() for r in x] == [[0, 1], [2, 3], [4, 5]]
    assert x[np.int32(1), lucid.tensor(1)].item() == 3


def test_uint8_index_is_a_mask_with_a_warning():
    x = lucid.arange(3)
    with pytest.warns(UserWarning, match="uint8 is now deprecated"):
        out = x[lucid.tensor([1, 0, 1], dtype=lucid.uint8)]
    assert out.tolist() == [0, 2]


# ---------------------------------------------------------------------------------------------------- setitem
def _np_set(key):
    def set_(a, v):
        a[_np(key)] = v
    return set_


# (name, key, value shape or None for a Python number, numpy assignment; None means numpy's a[key] = v)
SET_CASES = [
    ("int", 1, (4, 2), None),
    ("int_broadcast", 1, (2,), None),
    ("leading_ones_dropped", 1, (1, 1, 4, 2), None),
    ("slice_step", (slice(None), slice(0, 4, 2)), (1, 2), None),
    ("number", (0, 1), None, None),
    ("ellipsis", (Ellipsis, 0), (3, 4), None),
    ("none", (None, 1), (1, 4, 2), None),
    ("list", [0, 2], (2, 4, 2), None),
    ("mask", lucid.tensor(MASK), (), None),
    ("mask_dim0", [True, False, True], (4, 2), lambda a, v: a.__setitem__(np.array([True, False, True]), v)),
    ("adjacent_arrays", ([0, 2], [1, 3]), (2, 2), None),
    ("separated_arrays", ([0, 2], slice(None), [1, 0]), (2, 4), None),
    ("int_then_array_after_slice", (0, slice(None), [1, 0]), (4, 2),
     lambda a, v: a[0].__setitem__((slice(None), [1, 0]), v)),
    ("tensor_0d", lucid.tensor(2), (4, 2), lambda a, v: a.__setitem__(2, v)),
]
SET_IDS = [c[0] for c in SET_CASES]


def _value(shape, seed=1):
    return 2.5 if shape is None else leaf(*shape, seed=seed)


@pytest.mark.parametrize("name,key,vshape,np_set", SET_CASES, ids=SET_IDS)
def test_setitem_values(name, key, vshape, np_set):
    a = np.arange(24, dtype=np.float64).reshape(SHAPE)
    v = _value(vshape)
    x = lucid.tensor(a)
    x[key] = v.detach() if isinstance(v, lucid.Tensor) else v
    (np_set or _np_set(key))(a, v.detach().numpy() if isinstance(v, lucid.Tensor) else v)
    np.testing.assert_array_equal(x.numpy(), a)
    assert x._version == 1


@pytest.mark.parametrize("name,key,vshape,np_set", SET_CASES, ids=SET_IDS)
def test_setitem_grads(name, key, vshape, np_set):
    def f(a, *v):
        b = a * 1
        b[key] = v[0] if v else 2.5
        return b * b

    check_grads(f, leaf(*SHAPE), *([] if vshape is None else [_value(vshape)]))


def test_setitem_gradients_zero_written_positions_and_sum_value_back():
    a = leaf(3, 4)
    v = leaf(4, seed=1)
    b = a * 1
    b[[0, 2]] = v
    b.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [[0] * 4, [1] * 4, [0] * 4])
    np.testing.assert_array_equal(v.grad.numpy(), [2.0] * 4)
    assert b.grad_fn.name() == "IndexPutBackward0"
    c = a * 1
    c[0] = v
    assert c.grad_fn.name() == "CopySlices"


def test_setitem_casts_value_to_the_tensor_dtype():
    x = lucid.zeros(3, dtype=lucid.int64)
    x[0] = 2.7
    x[1:] = lucid.tensor([1.5, -1.5])
    assert x.dtype == lucid.int64 and x.tolist() == [2, 1, -1]
    a = leaf(3)
    b = a * 1
    v = lucid.tensor([1.0, 2.0], requires_grad=True)  # float32 into float64
    b[1:] = v
    b.sum().backward()
    assert v.grad.dtype == lucid.float32


def test_setitem_on_leaf_that_requires_grad():
    x = leaf(3)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is being used in an "
                                           "in-place operation."):
        x[0] = 5.0
    with lucid.no_grad():
        x[0] = 5.0
    assert x[0].item() == 5.0 and x._version == 1


# ---------------------------------------------------------------------------------------------------- views
# (name, in-place write through an indexing view, the same in numpy) on arange(24).reshape(3, 4, 2)
VIEW_WRITES = [
    ("select_fill", lambda x: x[0].fill_(7), lambda a: a[0].fill(7)),
    ("slice_step_zero", lambda x: x[1:, ::2].zero_(), lambda a: a[1:, ::2].fill(0)),
    ("select_of_select", lambda x: x[2][1].mul_(3), lambda a: a[2][1].__imul__(3)),
    ("unsqueeze_view", lambda x: x[None, 1].add_(1), lambda a: a[None, 1].__iadd__(1)),
    ("alias", lambda x: x[...].sub_(1), lambda a: a[...].__isub__(1)),
    ("setitem_on_view", lambda x: x[1].__setitem__((slice(1, 3), 0), 9.0),
     lambda a: a[1].__setitem__((slice(1, 3), 0), 9)),
    ("setitem_advanced_on_view", lambda x: x[:, 1].__setitem__([0, 2], -1.0),
     lambda a: a[:, 1].__setitem__([0, 2], -1)),
]


@pytest.mark.parametrize("name,write,np_write", VIEW_WRITES, ids=[w[0] for w in VIEW_WRITES])
def test_indexing_views_write_through(name, write, np_write):
    a = np.arange(24, dtype=np.float32).reshape(SHAPE)
    x = lucid.tensor(a)
    write(x)
    np_write(a)
    np.testing.assert_array_equal(x.numpy(), a)


@pytest.mark.parametrize("name,write,np_write", VIEW_WRITES, ids=[w[0] for w in VIEW_WRITES])
def test_indexing_views_write_through_differentiably(name, write, np_write):
    def f(a):
        b = a * a
        write(b)
        return b

    check_grads(f, leaf(*SHAPE))


def test_advanced_indexing_is_a_copy():
    x = lucid.zeros(3)
    x[[0, 1]].fill_(1)
    x[lucid.tensor([True, True, False])].fill_(1)
    assert x.tolist() == [0, 0, 0]


# ---------------------------------------------------------------------------------------------------- errors
ERRORS = [
    (lambda x: x[5], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda x: x[-4], IndexError, "index -4 is out of bounds for dimension 0 with size 3"),
    (lambda x: x[0, 7], IndexError, "index 7 is out of bounds for dimension 1 with size 4"),
    (lambda x: x[[0, 5]], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda x: x[::-1], ValueError, "step must be greater than zero"),
    (lambda x: x[::0], ValueError, "slice step cannot be zero"),
    (lambda x: x[0, 0, 0, 0], IndexError, "too many indices for tensor of dimension 3"),
    (lambda x: x[..., ...], IndexError, "an index can only have a single ellipsis"),
    (lambda x: x[1.5], IndexError, r"only integers, slices \(`:`\), ellipsis \(`...`\), None and long or byte"),
    (lambda x: x[lucid.tensor([0.5])], IndexError, "tensors used as indices must be long, int, byte or bool tensors"),
    (lambda x: x[[True, False]], IndexError,
     r"The shape of the mask \[2\] at index 0 does not match the shape of the indexed tensor \[3\] at index 0"),
    (lambda x: lucid.tensor(1.0)[0], IndexError, "invalid index of a 0-dim tensor"),
    (lambda x: x.__setitem__(0, lucid.ones(3)), RuntimeError,
     r"shape mismatch: value tensor of shape \[3\] cannot be broadcast to indexing result of shape \[4, 2\]"),
    (lambda x: x.__setitem__(0, [1.0, 2.0]), TypeError, "can't assign a list"),
    (lambda x: x.masked_fill(lucid.ones(3, 4, 2), 0.0), RuntimeError, "masked_fill_ only supports boolean masks"),
    (lambda x: x.masked_fill(x > 0, lucid.ones(2)), RuntimeError, "only supports a 0-dimensional value tensor"),
    (lambda x: x.index_select(0, lucid.tensor([[0]])), IndexError, "Index is supposed to be a vector"),
]


@pytest.mark.parametrize("fn,exc,message", ERRORS, ids=[m[:30] for _, _, m in ERRORS])
def test_errors(fn, exc, message):
    with pytest.raises(exc, match=message):
        fn(lucid.zeros(*SHAPE))


# ---------------------------------------------------------------------------------------------------- functions
@pytest.mark.parametrize("a", [np.array([[0, 1.5], [2, 0]]), np.array([0, 3, 0, -1]), np.array(2.0), np.array(0.0),
                               np.zeros((2, 0))], ids=["2d", "1d", "0d", "0d_zero", "empty"])
def test_nonzero(a):
    x = lucid.tensor(a)
    out = lucid.nonzero(x)
    assert out.dtype == lucid.int64
    np.testing.assert_array_equal(out.numpy(), np.argwhere(a))
    tup = x.nonzero(as_tuple=True)
    for t, e in zip(tup, np.nonzero(np.atleast_1d(a))):
        assert t.dtype == lucid.int64
        np.testing.assert_array_equal(t.numpy(), e)
    for t, e in zip(lucid.where(x != 0), tup):
        np.testing.assert_array_equal(t.numpy(), e.numpy())


def test_index_select():
    a = np.arange(24.0).reshape(SHAPE)
    idx = lucid.tensor([2, 0, 2])
    np.testing.assert_array_equal(lucid.tensor(a).index_select(1, idx).numpy(), np.take(a, [2, 0, 2], axis=1))
    x = leaf(*SHAPE)
    assert x.index_select(-1, lucid.tensor([1])).grad_fn.name() == "IndexSelectBackward0"
    check_grads(lambda t: t.index_select(1, idx) ** 2, x)
    y = lucid.ones(3, requires_grad=True)
    y.index_select(0, lucid.tensor([1, 1, 1, 0])).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [1.0, 3.0, 0.0])
    assert lucid.index_select(lucid.tensor(5.0), 0, lucid.tensor([0])).shape == ()


def test_index_put():
    a = np.zeros(4)
    x = lucid.tensor(a)
    idx = (lucid.tensor([0, 2, 0]),)
    v = lucid.tensor([1.0, 2.0, 3.0], dtype=lucid.float64)
    np.testing.assert_array_equal(x.index_put(idx, v, accumulate=True).numpy(), [4.0, 0, 2.0, 0])
    assert x.index_put((lucid.tensor([1]),), lucid.tensor(7.0, dtype=lucid.float64)).tolist() == [0, 7, 0, 0]
    np.testing.assert_array_equal(x.tolist(), a)
    x.index_put_((lucid.tensor([True, False, False, True]),), lucid.tensor(5.0, dtype=lucid.float64))
    assert x.tolist() == [5, 0, 0, 5]
    check_grads(lambda t, w: lucid.index_put(t * t, idx, w * w, accumulate=True), leaf(4), leaf(3, seed=1))
    check_grads(lambda t, w: lucid.index_put(t * t, (None, lucid.tensor([1, 0])), w), leaf(2, 3), leaf(2, seed=1))


def test_masked_fill():
    a = np.arange(6.0).reshape(2, 3)
    mask = lucid.tensor([True, False, True])
    np.testing.assert_array_equal(lucid.tensor(a).masked_fill(mask, -1.0).numpy(), np.where([1, 0, 1], -1.0, a))
    x, value = leaf(2, 3), leaf(seed=1)
    assert x.masked_fill(mask, 0.0).grad_fn.name() == "MaskedFillBackward0"
    check_grads(lambda t, v: t.masked_fill(mask, v) ** 2, x, value)
    b = x * 1
    b.masked_fill_(mask, value)
    b.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1, 0], [0, 1, 0]])
    assert value.grad.item() == 4.0


def test_masked_select():
    a = np.arange(6.0).reshape(2, 3)
    mask = np.array([[True, False, True], [False, False, True]])
    np.testing.assert_array_equal(lucid.masked_select(lucid.tensor(a), lucid.tensor(mask)).numpy(), a[mask])
    row = lucid.tensor([True, False, True])
    np.testing.assert_array_equal(lucid.tensor(a).masked_select(row).numpy(), a[:, [0, 2]].reshape(-1))
    check_grads(lambda t: t.masked_select(row) ** 2, leaf(2, 3))

