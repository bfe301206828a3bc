"""Matrix products: values against numpy, gradcheck + gradgradcheck in float64 (broadcast batch dims included),
node names, type promotion and shape errors.

The table is (name, fn, input shapes, expected node); adding a product or a shape case adds its tests."""
import re

import numpy as np
import pytest

import lucid
from helpers import check_grads, leaf

# (name, fn(a, b), shapes of a and b, grad_fn name of the result or None when not pinned down); the numpy
# reference is np.matmul, or np.outer for the names in OUTER
PRODUCTS = [
    ("dot-1d-1d", lucid.matmul, (3,), (3,), "DotBackward0"),
    ("mv-2d-1d", lucid.matmul, (2, 3), (3,), "MvBackward0"),
    ("vm-1d-2d", lucid.matmul, (3,), (3, 2), "MvBackward0"),
    ("mm-2d-2d", lucid.matmul, (2, 3), (3, 4), "MmBackward0"),
    ("bmm-3d-3d", lucid.matmul, (2, 2, 3), (2, 3, 2), "BmmBackward0"),
    ("batch-broadcast", lucid.matmul, (2, 1, 2, 3), (3, 3, 2), "BmmBackward0"),
    ("batch-size-1", lucid.matmul, (1, 2, 3), (2, 3, 2), "BmmBackward0"),
    ("2d-3d", lucid.matmul, (2, 3), (2, 3, 2), "BmmBackward0"),
    ("3d-2d", lucid.matmul, (2, 2, 3), (3, 2), "BmmBackward0"),
    ("1d-3d", lucid.matmul, (3,), (2, 3, 2), None),
    ("3d-1d", lucid.matmul, (2, 2, 3), (3,), None),
    ("operator", lambda a, b: a @ b, (2, 3), (3, 2), "MmBackward0"),
    ("method", lambda a, b: a.matmul(b), (2, 2, 3), (3,), None),
    ("mm", lucid.mm, (2, 3), (3, 2), "MmBackward0"),
    ("Tensor.mm", lambda a, b: a.mm(b), (1, 3), (3, 1), "MmBackward0"),
    ("bmm", lucid.bmm, (2, 2, 3), (2, 3, 1), "BmmBackward0"),
    ("dot", lucid.dot, (4,), (4,), "DotBackward0"),
    ("mv", lambda a, b: a.mv(b), (3, 2), (2,), "MvBackward0"),
    ("outer", lucid.outer, (3,), (2,), "MulBackward0"),
    ("ger", lambda a, b: a.ger(b), (2,), (2,), "MulBackward0"),
]
OUTER = {"outer", "ger"}
CASES = [pytest.param(fn, sa, sb, node, np.outer if name in OUTER else np.matmul, id=name)
         for name, fn, sa, sb, node in PRODUCTS]


@pytest.mark.parametrize("fn, sa, sb, node, ref", CASES)
def test_values_match_numpy(fn, sa, sb, node, ref):
    a, b = leaf(*sa, seed=1), leaf(*sb, seed=2)
    out = fn(a, b)
    expected = ref(a.detach().numpy(), b.detach().numpy())
    assert tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("fn, sa, sb, node, ref", CASES)
def test_gradients(fn, sa, sb, node, ref):
    check_grads(fn, leaf(*sa, seed=1), leaf(*sb, seed=2))


@pytest.mark.parametrize("fn, sa, sb, node, ref", [c for c in CASES if c.values[3] is not None])
def test_node_names(fn, sa, sb, node, ref):
    assert type(fn(leaf(*sa), leaf(*sb)).grad_fn).__name__ == node


def test_gradient_with_only_one_input_requiring_grad():
    a, b = leaf(2, 3), leaf(3, 2, requires_grad=False)
    check_grads(lucid.matmul, a, b)
    (a @ b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.ones((2, 2)) @ b.numpy().T)


def test_broadcast_batch_gradient_is_summed():
    a, b = leaf(4, 2, 3), leaf(3, 2)
    (a @ b).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), a.detach().numpy().sum(0).T @ np.ones((2, 2)))
    assert b.grad.shape == (3, 2)


def test_type_promotion():
    f32 = lucid.tensor([[1.0, 2.0]])
    f64 = lucid.tensor([[1.0], [2.0]], dtype=lucid.float64)
    i64 = lucid.tensor([[3], [4]])
    assert (f32 @ f64).dtype == lucid.float64
    assert (f32 @ i64).dtype == lucid.float32 and (f32 @ i64).tolist() == [[11.0]]
    ints = lucid.tensor([[2**40, 1], [0, 3]]) @ lucid.tensor([[1], [2]])
    assert ints.dtype == lucid.int64 and ints.tolist() == [[2**40 + 2], [6]]  # exact, not through float
    assert lucid.dot(lucid.tensor([1, 2]), lucid.tensor([3, 4])).item() == 11


def test_mixed_precision_gradients_keep_each_leaf_dtype():
    a = lucid.tensor([[1.0, 2.0]], requires_grad=True)
    b = lucid.tensor([[1.0], [2.0]], dtype=lucid.float64, requires_grad=True)
    (a @ b).sum().backward()
    assert a.grad.dtype == lucid.float32 and b.grad.dtype == lucid.float64


def test_rmatmul_with_a_nested_list():
    b = lucid.tensor([[1.0], [2.0]])
    assert ([[3.0, 4.0]] @ b).tolist() == [[11.0]]


def test_results_do_not_require_grad_without_grad_inputs():
    out = lucid.ones(2, 3) @ lucid.ones(3)
    assert not out.requires_grad and out.grad_fn is None


# ---------------------------------------------------------------------------------------------------- errors
ERRORS = [
    (lambda: lucid.ones(2, 3) @ lucid.ones(4, 5), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
    (lambda: lucid.ones(3) @ lucid.ones(4), "inconsistent tensor size, expected tensor [3] and src [4] to have the "
                                             "same number of elements, but got 3 and 4 elements respectively"),
    (lambda: lucid.ones(2, 3) @ lucid.ones(4), "size mismatch, got input (2), mat (2x3), vec (4)"),
    (lambda: lucid.ones(3) @ lucid.ones(4, 5), "matmul: shapes [3] and [4, 5] cannot be multiplied (3 != 4)"),
    (lambda: lucid.ones(2, 2, 3) @ lucid.ones(2, 4, 5), "shapes [2, 2, 3] and [2, 4, 5] cannot be multiplied"),
    (lambda: lucid.ones(2, 2, 3) @ lucid.ones(3, 3, 4), "batch dimensions of shapes [2, 2, 3] and [3, 3, 4] cannot "
                                                         "be broadcast"),
    (lambda: lucid.ones(()) @ lucid.ones(3), "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
    (lambda: lucid.mm(lucid.ones(2, 2, 2), lucid.ones(2, 2)), "self must be a matrix, but got a tensor of shape "
                                                               "[2, 2, 2]"),
    (lambda: lucid.mm(lucid.ones(2, 2), lucid.ones(2)), "mat2 must be a matrix, but got a tensor of shape [2]"),
    (lambda: lucid.bmm(lucid.ones(2, 2), lucid.ones(2, 2, 2)), "batch1 must be a 3D tensor"),
    (lambda: lucid.bmm(lucid.ones(2, 2, 3), lucid.ones(3, 3, 2)), "shapes [2, 2, 3] and [3, 3, 2] cannot be "
                                                                   "multiplied"),
    (lambda: lucid.dot(lucid.ones(2, 2), lucid.ones(2)), "1D tensors expected, but got 2D and 1D tensors"),
    (lambda: lucid.mv(lucid.ones(2), lucid.ones(2)), "mv: expected a 2-D matrix and a 1-D vector, but got shapes "
                                                     "[2] and [2]"),
    (lambda: lucid.outer(lucid.ones(2, 2), lucid.ones(2)), "outer: Expected 1-D argument self, but got 2-D"),
]


@pytest.mark.parametrize("fn, message", ERRORS, ids=[m[:30] for _, m in ERRORS])
def test_shape_errors(fn, message):
    with pytest.raises(RuntimeError, match=re.escape(message)):
        fn()
