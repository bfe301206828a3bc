"""Max pooling's indices as PyTorch treats them: the node saves the indices it returns, so an in-place change to them
before backward raises the saved-tensor version error (every max pool: fixed, adaptive, fractional, batched or
not); windows made of padding only (dilation can step over the whole input) give -inf, PyTorch's index for them,
and no gradient."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from helpers import check_grads

SAMPLES = [[[0.3, 0.7, 0.5]] * 2]  # fractional pooling's fixed window offsets, (N=1, C=2, dims)

# (name, pool(F, x) -> (values, indices), input shape)
POOLS = [
    ("max_pool1d tiles", lambda F, x: F.max_pool1d(x, 2, return_indices=True), (1, 2, 8)),
    ("max_pool1d windows", lambda F, x: F.max_pool1d(x, 3, 2, 1, return_indices=True), (1, 2, 9)),
    ("max_pool2d tiles", lambda F, x: F.max_pool2d(x, 2, return_indices=True), (1, 2, 4, 4)),
    ("max_pool2d unbatched", lambda F, x: F.max_pool2d(x, 3, 2, 1, return_indices=True), (2, 5, 5)),
    ("max_pool3d windows", lambda F, x: F.max_pool3d(x, 2, 1, return_indices=True), (1, 1, 3, 3, 3)),
    ("adaptive_max_pool1d", lambda F, x: F.adaptive_max_pool1d(x, 3, return_indices=True), (1, 2, 7)),
    ("adaptive_max_pool2d", lambda F, x: F.adaptive_max_pool2d(x, (2, 3), return_indices=True), (1, 2, 5, 4)),
    ("adaptive_max_pool3d", lambda F, x: F.adaptive_max_pool3d(x, 2, return_indices=True), (1, 1, 4, 3, 5)),
    ("fractional_max_pool2d", lambda F, x: F.fractional_max_pool2d(
        x, 2, output_size=3, return_indices=True, _random_samples=x.new_tensor(SAMPLES)[..., :2]), (1, 2, 6, 5)),
    ("fractional_max_pool3d", lambda F, x: F.fractional_max_pool3d(
        x, 2, output_size=3, return_indices=True, _random_samples=x.new_tensor(SAMPLES)), (1, 2, 5, 5, 6)),
]


def _input(lib, shape):
    values = np.random.default_rng(0).permutation(int(np.prod(shape))).reshape(shape) / 10.0
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


@pytest.mark.parametrize("name, pool, shape", POOLS, ids=[p[0] for p in POOLS])
def test_changing_the_indices_before_backward_raises(name, pool, shape):
    x = _input(lucid, shape)
    values, indices = pool(F, x)
    assert not indices.requires_grad and values.requires_grad
    values.sum().backward(retain_graph=True)  # the indices as returned: backward runs
    indices.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation: \[Tensor int64 .* is at version 1; "
                                           r"expected version 0 instead"):
        values.sum().backward()


@pytest.mark.parametrize("name, pool, shape", POOLS, ids=[p[0] for p in POOLS])
def test_values_indices_and_node_as_pytorch(name, pool, shape):
    torch = pytest.importorskip("torch")
    values, indices = pool(F, _input(lucid, shape))
    tvalues, tindices = pool(torch.nn.functional, _input(torch, shape))
    np.testing.assert_array_equal(indices.numpy(), tindices.numpy())
    np.testing.assert_array_equal(values.detach().numpy(), tvalues.detach().numpy())
    # (PyTorch pools 1-d inputs as 2-d ones; lucid pools an unbatched input as a batch of one)
    if "1d" not in name and "unbatched" not in name:
        assert values.grad_fn.name() == tvalues.grad_fn.name()


def test_changing_the_input_before_backward_raises():
    """PyTorch's max-pool node saves its input too (``_saved_self``)."""
    x = _input(lucid, (1, 2, 6))
    y = x * 1
    values, _ = F.max_pool1d(y, 3, 2, 1, return_indices=True)
    y.mul_(2)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        values.sum().backward()


def test_gradients_of_every_order():
    x = _input(lucid, (1, 2, 5, 4))
    check_grads(lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True)[0], x)
    check_grads(lambda t: F.adaptive_max_pool2d(t, (2, 3), return_indices=True)[0], x)


# ---------------------------------------------------------------------------------------------------- padding only
# (pool, input shape, args): windows that hold no element of the input (a dim whose windows step over the input
# has no other windows, so the whole output is -inf)
PADDING_ONLY = [
    (1, (1, 1), (2, None, 1, 2)),  # PyTorch's corner cases
    (1, (2, 1), (2, None, 1, 2)),
    (1, (1, 2, 1), (2, 2, 1, 2, True)),
    (2, (1, 2, 1, 3), (2, 1, 1, 2)),  # the whole height is padding
    (2, (2, 2, 3, 2), ((1, 2), (1, 2), (0, 1), (1, 3), True)),  # the width is: its index is inside the plane
    (3, (1, 1, 1, 2, 2), (2, 2, 1, 2)),
]


def _pool(n, lib_F, x, args, return_indices=True):
    k, s, p, d, *ceil = args
    pool = getattr(lib_F, f"max_pool{n}d")
    return pool(x, k, s, p, d, ceil_mode=bool(ceil and ceil[0]), return_indices=return_indices)


@pytest.mark.parametrize("n, shape, args", PADDING_ONLY)
def test_windows_of_padding_only_give_minus_infinity(n, shape, args):
    x = lucid.tensor(np.arange(1.0, 1 + np.prod(shape)).reshape(shape), requires_grad=True)
    values, indices = _pool(n, F, x, args)
    empty = np.isneginf(values.detach().numpy())
    assert empty.all()
    g = np.random.default_rng(1).standard_normal(values.shape)
    (grad,) = lucid.autograd.grad(values, [x], lucid.tensor(g, dtype=values.dtype))
    np.testing.assert_array_equal(grad.numpy(), 0)  # -inf is a constant: nothing flows back to x
    torch = pytest.importorskip("torch")
    tvalues, tindices = _pool(n, torch.nn.functional, torch.tensor(x.detach().numpy()), args)
    np.testing.assert_array_equal(values.detach().numpy(), tvalues.numpy())
    np.testing.assert_array_equal(indices.numpy(), tindices.numpy())
    np.testing.assert_array_equal(_pool(n, F, x, args, False).detach().numpy(),
                                  _pool(n, torch.nn.functional, torch.tensor(x.detach().numpy()), args, False).numpy())


def test_windows_of_padding_only_in_integers_give_the_lowest_value():
    out = F.max_pool2d(lucid.ones(1, 1, 1, 1, dtype=lucid.int64), 2, 2, 1, 2)
    assert out.item() == np.iinfo(np.int64).min
