"""gcd/lcm, the shifts, frexp, nextafter, angle, polar, logcumsumexp, addbmm, chain_matmul, renorm (ops/numeric.py)
and scatter_reduce, index_reduce, masked_scatter, put, select_scatter, slice_scatter, unravel_index
(ops/scatter_reduce.py): values and errors against torch, gradients against finite differences."""
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


def _same_error(fn_ours, fn_theirs):
    with pytest.raises(Exception) as theirs:
        fn_theirs()
    with pytest.raises(type(theirs.value)) as ours:
        fn_ours()
    assert str(ours.value) == str(theirs.value).replace("torch.float", "lucid.float")


INTS = [-12, -7, -1, 0, 1, 4, 6, 9, 127, 30030]


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_gcd_lcm_shifts_match_torch(dtype):
    a = np.array(INTS) % 100 if dtype == "int8" else np.array(INTS)
    b = np.array([8, 21, 5, 0, -3, 6, 4, 12, 3, 510])
    shifts = np.array([-1, 0, 1, 3, 7, 8, 9, 15, 33, 64])
    la, lb, ls = (lucid.tensor(v, dtype=getattr(lucid, dtype)) for v in (a, b, shifts))
    ta, tb, ts = (torch.tensor(v, dtype=getattr(torch, dtype)) for v in (a, b, shifts))
    _close(lucid.gcd(la, lb), torch.gcd(ta, tb))
    _close(lucid.lcm(la, lb), torch.lcm(ta, tb))
    _close(lucid.bitwise_left_shift(la, ls), torch.bitwise_left_shift(ta, ts))
    _close(lucid.bitwise_right_shift(la, ls), torch.bitwise_right_shift(ta, ts))
    _close(la.bitwise_left_shift(2), ta.bitwise_left_shift(2))
    x = la.clone()
    x.gcd_(lb)
    _close(x, torch.gcd(ta, tb))


def test_integer_ops_errors_match_torch():
    f = lucid.tensor([1.0, 2.0])
    _same_error(lambda: lucid.gcd(f, f), lambda: torch.gcd(_t(f), _t(f)))
    _same_error(lambda: lucid.gcd(lucid.tensor([4]), 2), lambda: torch.gcd(torch.tensor([4]), 2))
    _same_error(lambda: lucid.bitwise_left_shift(f, 1), lambda: torch.bitwise_left_shift(_t(f), 1))
    assert lucid.gcd(lucid.tensor([4], dtype=lucid.int32), lucid.tensor([6])).dtype == lucid.int64


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frexp_and_nextafter_match_torch(dtype):
    v = np.array([0.0, -0.0, 1.0, -3.5, 1e-40, -2.5e-44, 1e30, np.inf, -np.inf, np.nan, 0.75, 2 ** -126])
    x = lucid.tensor(v, dtype=getattr(lucid, dtype))
    tx = torch.tensor(v, dtype=getattr(torch, dtype))
    m, e = lucid.frexp(x)
    tm, te = torch.frexp(tx)
    _close(m, tm)
    _close(e, te)
    assert e.dtype == lucid.int32 and x.frexp().mantissa.dtype == x.dtype
    y = lucid.tensor(v[::-1].copy(), dtype=getattr(lucid, dtype))
    _close(lucid.nextafter(x, y), torch.nextafter(tx, _t(y)))
    _close(lucid.nextafter(x, lucid.zeros_like(x)), torch.nextafter(tx, torch.zeros_like(tx)))


def test_frexp_gradient_and_nextafter_backward_raises():
    check_grads(lambda x: lucid.frexp(x).mantissa, leaf(5, low=-8, high=8))
    x = leaf(3)
    with pytest.raises(NotImplementedError, match="nextafter"):
        lucid.nextafter(x, lucid.zeros_like(x)).sum().backward()
    _same_error(lambda: lucid.frexp(lucid.tensor([1, 2])), lambda: torch.frexp(torch.tensor([1, 2])))


def test_angle_polar_conj_physical():
    v = np.array([-1.0, 0.0, 2.0, np.nan, -0.0])
    _close(lucid.angle(lucid.tensor(v)), torch.angle(torch.tensor(v)))
    _close(lucid.angle(lucid.tensor([-1, 0, 2])), torch.angle(torch.tensor([-1, 0, 2])))
    z = np.array([1 + 1j, -2 + 0.5j, -1 - 1j], dtype=np.complex64)
    _close(lucid.angle(lucid.tensor(z)), torch.angle(torch.tensor(z)), rtol=1e-6)
    r, a = lucid.tensor([1.0, 2.0]), lucid.tensor([0.5, -1.0])
    _close(lucid.polar(r, a), torch.polar(_t(r), _t(a)), rtol=1e-6)
    _same_error(lambda: lucid.polar(lucid.tensor([1]), lucid.tensor([1])),
                lambda: torch.polar(torch.tensor([1]), torch.tensor([1])))
    _close(lucid.conj_physical(lucid.tensor(z)), torch.conj_physical(torch.tensor(z)))
    w = lucid.tensor(z)
    w.conj_physical_()
    _close(w, torch.tensor(z).conj_physical())
    check_grads(lucid.angle, leaf(4))  # 0 almost everywhere, as PyTorch's


def test_logcumsumexp_values_and_gradients():
    x = leaf(3, 5, low=-30, high=30)
    _close(lucid.logcumsumexp(x, 1), torch.logcumsumexp(_t(x), 1), rtol=1e-12)
    _close(x.logcumsumexp(0), torch.logcumsumexp(_t(x), 0), rtol=1e-12)
    inf = lucid.tensor([-np.inf, -np.inf, 1.0])
    _close(lucid.logcumsumexp(inf, 0), torch.logcumsumexp(_t(inf), 0))
    check_grads(lambda t: lucid.logcumsumexp(t, 1), leaf(2, 4, low=-3, high=3))
    big = leaf(6, low=500, high=700)  # exp would overflow: the log-space gradient does not
    g = lucid.autograd.grad(lucid.logcumsumexp(big, 0).sum(), big)
    tb = _t(big).requires_grad_()
    torch.logcumsumexp(tb, 0).sum().backward()
    _close(g, tb.grad, rtol=1e-10)
    _same_error(lambda: lucid.logcumsumexp(lucid.tensor([1, 2]), 0),
                lambda: torch.logcumsumexp(torch.tensor([1, 2]), 0))


def test_addbmm_chain_matmul_renorm():
    m, b1, b2 = leaf(2, 4, seed=1), leaf(3, 2, 5, seed=2), leaf(3, 5, 4, seed=3)
    _close(lucid.addbmm(m, b1, b2, beta=0.5, alpha=2), torch.addbmm(_t(m), _t(b1), _t(b2), beta=0.5, alpha=2))
    check_grads(lambda a, b, c: lucid.addbmm(a, b, c, beta=0.5, alpha=2), m, b1, b2)
    y = m.detach().clone()
    y.addbmm_(b1.detach(), b2.detach())
    _close(y, torch.addbmm(_t(m), _t(b1), _t(b2)))
    _same_error(lambda: lucid.addbmm(m, b1, leaf(2, 5, 4)), lambda: torch.addbmm(_t(m), _t(b1), torch.ones(2, 5, 4,
                                                                                                          dtype=torch.float64)))
    a, b, c = leaf(2, 3, seed=4), leaf(3, 4, seed=5), leaf(4, 2, seed=6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(lucid.chain_matmul(a, b, c), torch.chain_matmul(_t(a), _t(b), _t(c)))
        _same_error(lambda: lucid.chain_matmul(), lambda: torch.chain_matmul())
    x = leaf(3, 4, 2, low=-2, high=2)
    for p, dim, maxnorm in ((2, 0, 1.0), (1, 1, 0.5), (3.5, -1, 2.0)):
        _close(lucid.renorm(x, p, dim, maxnorm), torch.renorm(_t(x), p, dim, maxnorm), rtol=1e-10)
    check_grads(lambda t: lucid.renorm(t, 2, 0, 1.0), x)
    _same_error(lambda: lucid.renorm(x, 0, 0, 1.0), lambda: torch.renorm(_t(x), 0, 0, 1.0))
    _same_error(lambda: x.detach().float().float_power_(2), lambda: torch.ones(3).float_power_(2))


# ---------------------------------------------------------------------------------------------------- scatter family
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_matches_torch_values_and_gradients(reduce, include_self):
    x = leaf(4, 3, seed=1)
    src = leaf(5, 3, seed=2)
    src.data[1, 0] = 0.0  # a zero factor (prod's special case)
    src.data[2, 1] = src.data[4, 1].item()  # a tie (amax/amin share the gradient)
    idx = lucid.tensor([[0, 1, 2], [0, 1, 2], [3, 0, 2], [0, 1, 1], [3, 0, 1]])
    out = lucid.scatter_reduce(x, 0, idx, src, reduce, include_self=include_self)
    tx, ts = _t(x).requires_grad_(), _t(src).requires_grad_()
    expected = torch.scatter_reduce(tx, 0, _t(idx), ts, reduce, include_self=include_self)
    _close(out, expected, rtol=1e-12)
    g = leaf(4, 3, seed=3, requires_grad=False)
    gx, gs = lucid.autograd.grad(out, (x, src), g)
    tgx, tgs = torch.autograd.grad(expected, (tx, ts), _t(g))
    _close(gx, tgx, rtol=1e-10, atol=1e-12)
    _close(gs, tgs, rtol=1e-10, atol=1e-12)
    if reduce in ("sum", "mean"):
        check_grads(lambda a, s: lucid.scatter_reduce(a, 0, idx, s, reduce, include_self=include_self), x, src)


def test_scatter_reduce_integers_inplace_and_errors():
    x = lucid.tensor([-1, 2, 3])
    _close(x.scatter_reduce(0, lucid.tensor([0, 0]), lucid.tensor([-2, -4]), "mean", include_self=False),
           torch.tensor([-1, 2, 3]).scatter_reduce(0, torch.tensor([0, 0]), torch.tensor([-2, -4]), "mean",
                                                   include_self=False))
    y = lucid.zeros(3)
    y.scatter_reduce_(0, lucid.tensor([0, 0, 2]), lucid.tensor([1.0, 5.0, 2.0]), "amax")
    _close(y, torch.tensor([5.0, 0.0, 2.0]))
    z = lucid.zeros(3)
    for ours, theirs in ((lambda: z.scatter_reduce(0, lucid.tensor([0]), lucid.ones(1), "foo"),
                          lambda: torch.zeros(3).scatter_reduce(0, torch.tensor([0]), torch.ones(1), "foo")),
                         (lambda: z.scatter_reduce(0, lucid.tensor([0]), lucid.ones(1, dtype=lucid.float64), "sum"),
                          lambda: torch.zeros(3).scatter_reduce(0, torch.tensor([0]), torch.ones(1, dtype=torch.float64),
                                                                "sum"))):
        _same_error(ours, theirs)
    w = lucid.ones(3)
    with pytest.raises(RuntimeError, match="out of bounds"):
        w.scatter_reduce_(0, lucid.tensor([0, 5]), lucid.ones(2), "sum")
        w.numpy()
    _close(w, torch.ones(3))  # unchanged


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce_matches_torch(reduce):
    x, src = leaf(4, 3, seed=1), leaf(5, 3, seed=2)
    index = lucid.tensor([0, 2, 0, 3, 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for include_self in (True, False):
            out = lucid.index_reduce(x, 0, index, src, reduce, include_self=include_self)
            tx, ts = _t(x).requires_grad_(), _t(src).requires_grad_()
            expected = torch.index_reduce(tx, 0, _t(index), ts, reduce, include_self=include_self)
            _close(out, expected, rtol=1e-12)
            g = leaf(4, 3, seed=3, requires_grad=False)
            for ours, theirs in zip(lucid.autograd.grad(out, (x, src), g), torch.autograd.grad(expected, (tx, ts),
                                                                                                 _t(g))):
                _close(ours, theirs, rtol=1e-10, atol=1e-12)
        _same_error(lambda: x.index_reduce(0, index, src, "sum"), lambda: _t(x).index_reduce(0, _t(index), _t(src),
                                                                                                "sum"))


def test_masked_scatter_put_and_scatter_copies():
    x, src = leaf(2, 3, seed=1), leaf(6, seed=2)
    mask = lucid.tensor([True, False, True])
    out = lucid.masked_scatter(x, mask, src)
    _close(out, torch.masked_scatter(_t(x), _t(mask), _t(src)))
    check_grads(lambda a, s: lucid.masked_scatter(a, mask, s), x, src)
    _same_error(lambda: x.masked_scatter(lucid.tensor([1, 0, 1]), src),
                lambda: _t(x).masked_scatter(torch.tensor([1, 0, 1]), _t(src)))
    with pytest.raises(RuntimeError, match="Number of elements of source"):
        lucid.masked_scatter(x, mask, src[:2]).detach().numpy()

    index = lucid.tensor([0, -1, 4])
    v = leaf(3, seed=4)
    for acc in (False, True):
        _close(lucid.put(x, index, v, acc), _t(x).put(_t(index), _t(v), acc))
    check_grads(lambda a, s: a.put(index, s, accumulate=True), x, v)
    y = x.detach().clone()
    with pytest.raises(IndexError, match="out of range: tried to access index 7 on a tensor of 6 elements"):
        y.put_(lucid.tensor([0, 7]), lucid.ones(2, dtype=lucid.float64))
        y.numpy()
    _close(y, _t(x))

    base, row = leaf(3, 4, seed=5), leaf(3, seed=6)
    _close(lucid.select_scatter(base, row, 1, -2), torch.select_scatter(_t(base), _t(row), 1, -2))
    check_grads(lambda b, r: lucid.select_scatter(b, r, 1, 2), base, row)
    part = leaf(3, 2, seed=7)
    _close(lucid.slice_scatter(base, part, 1, 1, None, 2), torch.slice_scatter(_t(base), _t(part), 1, 1, None, 2))
    check_grads(lambda b, p: b.slice_scatter(p, 1, 0, 4, 2), base, part)
    _same_error(lambda: lucid.select_scatter(base, row, 1, 9), lambda: torch.select_scatter(_t(base), _t(row), 1, 9))
    _same_error(lambda: lucid.slice_scatter(base, row, 1), lambda: torch.slice_scatter(_t(base), _t(row), 1))


def test_unravel_index_matches_torch():
    for idx, shape in (([10, -1, 4, 0], (2, 3)), (5, (7,)), ([[3, 7]], (2, 2, 2))):
        ours = lucid.unravel_index(lucid.tensor(idx), shape)
        theirs = torch.unravel_index(torch.tensor(idx), shape)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _close(a, b)
    _same_error(lambda: lucid.unravel_index(lucid.tensor([1.0]), (2, 3)),
                lambda: torch.unravel_index(torch.tensor([1.0]), (2, 3)))
    _same_error(lambda: lucid.unravel_index(lucid.tensor(4), (2, -3)),
                lambda: torch.unravel_index(torch.tensor(4), (2, -3)))
