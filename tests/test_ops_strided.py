"""as_strided, as_strided_, as_strided_scatter, Tensor.unfold, fill_diagonal_, Tensor.resize/resize_as
(ops/strided.py) against torch; gradients against finite differences; out-of-bounds views refused."""
import warnings

import numpy as np
import pytest

import lucid
from helpers import check_grads, leaf

torch = pytest.importorskip("torch")


def _t(x):
    return torch.from_numpy(np.array(x.detach().numpy()))


def _close(ours, theirs, **kw):
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **kw)


def _same_error(ours, theirs):
    with pytest.raises(Exception) as t:
        theirs()
    with pytest.raises(type(t.value)) as o:
        ours()
    assert str(o.value) == str(t.value)


CASES = [((2, 2), (1, 2), None), ((4, 3), (1, 1), 0), ((2, 3), (3, 1), 0), ((3, 2, 2), (4, 1, 2), 0), ((2, 2), (0, 1), 3), ((0, 2), (9, 9), 12),
         ((), (), 5), ((3,), (0,), 2)]


@pytest.mark.parametrize("size, stride, offset", CASES)
def test_as_strided_matches_torch(size, stride, offset):
    x = leaf(3, 4, seed=1)
    _close(lucid.as_strided(x, size, stride, offset), torch.as_strided(_t(x), size, stride, offset))
    _close(x.as_strided(size, stride, offset), _t(x).as_strided(size, stride, offset))
    src = leaf(*size, seed=2)
    if all(size) and len(set(torch.as_strided(torch.arange(12), size, stride, offset).reshape(-1).tolist())) == \
            int(np.prod(size)):  # (where positions repeat, which written value wins is unspecified)
        _close(lucid.as_strided_scatter(x, src, size, stride, offset),
               torch.as_strided_scatter(_t(x), _t(src), size, stride, offset))
    if all(size):
        check_grads(lambda t: lucid.as_strided(t, size, stride, offset), x)  # overlapping reads add up


def test_as_strided_gradient_matches_torch_with_overlaps():
    x = leaf(6, seed=3)
    tx = _t(x).requires_grad_()
    g = leaf(4, 3, seed=4, requires_grad=False)
    ours = lucid.autograd.grad(lucid.as_strided(x, (4, 3), (1, 1)), x, g)
    torch.as_strided(tx, (4, 3), (1, 1)).backward(_t(g))
    _close(ours, tx.grad)


def test_as_strided_refuses_out_of_bounds_and_bad_arguments():
    x = lucid.arange(6.0)
    tx = torch.arange(6.0)
    for args in (((2, 2), (1, 2), 3), ((3, 3), (2, 2), 0), ((2, 2), (1, -2)), ((2, 2), (1,)), ((2, -2), (1, 1)),
                 ((2, 2), (1, 1), -1), ((7,), (1,), 0)):
        _same_error(lambda: lucid.as_strided(x, *args), lambda: torch.as_strided(tx, *args))
        y = x.clone()
        with pytest.raises(RuntimeError):
            y.as_strided_(*args)
        assert y.tolist() == tx.tolist()
    _same_error(lambda: lucid.as_strided_scatter(x, lucid.ones(2, 2), (2, 2), (0, 1)),
                lambda: torch.as_strided_scatter(tx, torch.ones(2, 2), (2, 2), (0, 1)))
    _same_error(lambda: lucid.as_strided_scatter(x, lucid.ones(2, 3), (2, 2), (1, 2)),
                lambda: torch.as_strided_scatter(tx, torch.ones(2, 3), (2, 2), (1, 2)))
    assert x.tolist() == tx.tolist()  # untouched


def test_as_strided_is_a_view_and_as_strided_inplace():
    b, tb = lucid.arange(6.0), torch.arange(6.0)
    v, tv = b.as_strided((2, 2), (1, 2)), tb.as_strided((2, 2), (1, 2))
    v[0, 1] = 100.0
    tv[0, 1] = 100.0
    _close(b, tb)
    y, ty = lucid.arange(6.0), torch.arange(6.0)
    y.as_strided_((2, 2), (1, 2))
    ty.as_strided_((2, 2), (1, 2))
    _close(y, ty)
    w = leaf(6, seed=5)
    z = w * 1.0
    z.as_strided_((2, 2), (2, 1), 1)
    g = lucid.autograd.grad(z.sum(), w)
    assert g.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 0.0]


def test_unfold_matches_torch_with_gradient():
    x = leaf(3, 7, seed=6)
    for dim, size, step in ((1, 3, 2), (0, 2, 1), (-1, 7, 1), (1, 1, 3), (1, 0, 1)):
        _close(x.unfold(dim, size, step), _t(x).unfold(dim, size, step))
    check_grads(lambda t: t.unfold(1, 3, 2), x)
    _close(lucid.tensor(3.0).unfold(0, 1, 1), torch.tensor(3.0).unfold(0, 1, 1))
    _same_error(lambda: x.unfold(1, 8, 1), lambda: _t(x).unfold(1, 8, 1))
    _same_error(lambda: x.unfold(1, 2, 0), lambda: _t(x).unfold(1, 2, 0))


@pytest.mark.parametrize("shape, wrap", [((3, 4), False), ((7, 3), False), ((7, 3), True), ((4, 4, 4), False),
                                         ((1, 5), True), ((0, 3), False)])
def test_fill_diagonal_matches_torch(shape, wrap):
    x, tx = lucid.zeros(*shape), torch.zeros(*shape)
    x.fill_diagonal_(5.0, wrap)
    tx.fill_diagonal_(5.0, wrap)
    _close(x, tx)


def test_fill_diagonal_errors_and_gradient():
    _same_error(lambda: lucid.zeros(3, 4, 5).fill_diagonal_(1), lambda: torch.zeros(3, 4, 5).fill_diagonal_(1))
    _same_error(lambda: lucid.zeros(3).fill_diagonal_(1), lambda: torch.zeros(3).fill_diagonal_(1))
    w = leaf(3, 3, seed=7)
    y = w * 2.0
    y.fill_diagonal_(0.0)
    g = lucid.autograd.grad(y.sum(), w)
    assert g.tolist() == [[0.0, 2.0, 2.0], [2.0, 0.0, 2.0], [2.0, 2.0, 0.0]]


def test_resize_and_resize_as_out_of_place():
    x = leaf(6, seed=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(x.resize(2, 3), _t(x).resize(2, 3))
        _close(x.resize_as(lucid.ones(3, 2)), _t(x).resize_as(torch.ones(3, 2)))
        check_grads(lambda t: t.resize(3, 2), x)
        _same_error(lambda: x.resize(2, 2), lambda: _t(x).resize(2, 2))
        _same_error(lambda: x.resize_as(lucid.ones(2, 4)), lambda: _t(x).resize_as(torch.ones(2, 4)))
    with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
        x.resize(6)
