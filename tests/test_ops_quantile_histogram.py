"""quantile, nanquantile, mode (ops/quantile.py), histogram, histogramdd and gradient (ops/histogram.py) against
torch, with gradients against finite differences."""
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


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_matches_torch(interpolation):
    x = leaf(3, 7, 2, seed=1)
    tx = _t(x)
    q = lucid.tensor([0.0, 0.1, 0.25, 0.5, 0.9, 1.0], dtype=lucid.float64)
    for dim in (None, 0, 1, -1):
        for keepdim in (False, True):
            for qq in (q, 0.3):
                ours = lucid.quantile(x, qq, dim, keepdim, interpolation=interpolation)
                theirs = torch.quantile(tx, _t(qq) if isinstance(qq, lucid.Tensor) else qq, dim, keepdim,
                                        interpolation=interpolation)
                _close(ours, theirs, rtol=1e-12)
    y = x.detach().clone()
    y.data[0, 1, 0] = float("nan")
    y.data[2] = float("nan")
    for fn in ("quantile", "nanquantile"):
        _close(getattr(lucid, fn)(y, q, 1, interpolation=interpolation),
               getattr(torch, fn)(_t(y), _t(q), 1, interpolation=interpolation), rtol=1e-12)


def test_quantile_gradients_and_errors():
    x = leaf(4, 5, seed=2)
    check_grads(lambda t: lucid.quantile(t, lucid.tensor([0.3, 0.8], dtype=lucid.float64), 1), x)
    check_grads(lambda t: t.nanquantile(0.4, 0, interpolation="midpoint"), x)
    f = lucid.tensor([1.0, 2.0])
    for ours, theirs in (
            (lambda: lucid.quantile(lucid.tensor([1, 2]), 0.5), lambda: torch.quantile(torch.tensor([1, 2]), 0.5)),
            (lambda: lucid.quantile(f, 1.5), lambda: torch.quantile(_t(f), 1.5)),
            (lambda: lucid.quantile(f, lucid.tensor([0.5], dtype=lucid.float64)),
             lambda: torch.quantile(_t(f), torch.tensor([0.5], dtype=torch.float64))),
            (lambda: lucid.quantile(f, lucid.tensor([[0.5]])), lambda: torch.quantile(_t(f), torch.tensor([[0.5]]))),
            (lambda: lucid.quantile(f, 0.5, interpolation="foo"),
             lambda: torch.quantile(_t(f), 0.5, interpolation="foo")),
            (lambda: lucid.quantile(lucid.tensor([]), 0.5), lambda: torch.quantile(torch.tensor([]), 0.5))):
        _same_error(ours, theirs)
    with pytest.raises(RuntimeError, match=r"q values must be in the range \[0, 1\]"):
        lucid.quantile(f, lucid.tensor([0.5, 2.0])).numpy()


def test_mode_matches_torch_and_its_gradient():
    rng = np.random.default_rng(0)
    v = rng.integers(0, 4, (5, 9)).astype(np.float64)
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            ours = lucid.mode(lucid.tensor(v), dim, keepdim)
            theirs = torch.mode(torch.tensor(v), dim, keepdim)
            _close(ours.values, theirs.values)
            _close(ours.indices, theirs.indices)
    ints = lucid.tensor([2, 2, 1, 1, 3, 1, 2])
    assert lucid.mode(ints).values.item() == 1 and lucid.mode(ints).indices.item() == 5
    x = lucid.tensor(v, requires_grad=True)
    x.mode(1).values.sum().backward()
    tx = torch.tensor(v, requires_grad=True)
    tx.mode(1).values.sum().backward()
    _close(x.grad, tx.grad)
    _same_error(lambda: lucid.mode(lucid.tensor([]), 0), lambda: torch.mode(torch.tensor([]), 0))


def test_histogram_matches_torch():
    rng = np.random.default_rng(1)
    v = rng.normal(size=200)
    w = rng.uniform(size=200)
    x, tx = lucid.tensor(v), torch.tensor(v)
    cases = [dict(bins=7), dict(bins=5, range=(-1.0, 1.0)), dict(bins=4, weight=True, density=True),
             dict(bins=lucid.tensor([-3.0, -0.5, 0.0, 0.1, 2.0], dtype=lucid.float64)), dict(bins=3, density=True)]
    for kw in cases:
        ours_kw, theirs_kw = dict(kw), dict(kw)
        if kw.get("weight"):
            ours_kw["weight"], theirs_kw["weight"] = lucid.tensor(w), torch.tensor(w)
        if isinstance(kw["bins"], lucid.Tensor):
            theirs_kw["bins"] = _t(kw["bins"])
        ours, theirs = lucid.histogram(x, **ours_kw), torch.histogram(tx, **theirs_kw)
        _close(ours.hist, theirs.hist, rtol=1e-12)
        _close(ours.bin_edges, theirs.bin_edges, rtol=1e-12)
    edge = lucid.tensor([0.0, 0.75, 1.5, 3.0, 3.0, 1.0])  # values on the edges
    _close(lucid.histogram(edge, 4, range=(0.0, 3.0)).hist, torch.histogram(_t(edge), 4, range=(0.0, 3.0)).hist)
    _close(lucid.histogram(lucid.tensor([1.0, 1.0]), 2).bin_edges, torch.histogram(torch.tensor([1.0, 1.0]), 2).bin_edges)
    f = lucid.tensor([1.0, 2.0, 1.0])
    _same_error(lambda: lucid.histogram(lucid.tensor([1, 2]), 4), lambda: torch.histogram(torch.tensor([1, 2]), 4))
    _same_error(lambda: lucid.histogram(f, 4, range=(3.0, 0.0)), lambda: torch.histogram(_t(f), 4, range=(3.0, 0.0)))
    _same_error(lambda: lucid.histogram(f, 0), lambda: torch.histogram(_t(f), 0))


def test_histogramdd_matches_torch():
    rng = np.random.default_rng(2)
    v = rng.uniform(-1, 1, (100, 3))
    x, tx = lucid.tensor(v), torch.tensor(v)
    for kw in (dict(bins=4), dict(bins=[2, 3, 4]), dict(bins=2, range=[0.0, 1.0, -1.0, 0.0, -0.5, 0.5]),
               dict(bins=[3, 2, 2], density=True)):
        ours, theirs = lucid.histogramdd(x, **kw), torch.histogramdd(tx, **kw)
        _close(ours.hist, theirs.hist, rtol=1e-12)
        assert len(ours.bin_edges) == 3
        for a, b in zip(ours.bin_edges, theirs.bin_edges):
            _close(a, b, rtol=1e-12)


def test_gradient_matches_torch_and_is_differentiable():
    x = leaf(5, 6, seed=3)
    tx = _t(x)
    coords = lucid.tensor([0.0, 0.5, 1.5, 1.7, 3.0], dtype=lucid.float64)
    cases = [dict(), dict(spacing=2.0), dict(spacing=[0.5, 3.0], edge_order=2), dict(dim=1, edge_order=2),
             dict(spacing=(coords,), dim=0), dict(spacing=(coords,), dim=0, edge_order=2)]
    for kw in cases:
        theirs_kw = dict(kw)
        if isinstance(kw.get("spacing"), tuple):
            theirs_kw["spacing"] = (_t(coords),)
        ours, theirs = lucid.gradient(x, **kw), torch.gradient(tx, **theirs_kw)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _close(a, b, rtol=1e-10)
    check_grads(lambda t: lucid.gradient(t, spacing=(coords,), dim=0, edge_order=2)[0], x)
    _same_error(lambda: lucid.gradient(lucid.tensor([1.0, 4.0]), edge_order=2),
                lambda: torch.gradient(torch.tensor([1.0, 4.0]), edge_order=2))
    _same_error(lambda: lucid.gradient(x, spacing=[1.0, 2.0], dim=1), lambda: torch.gradient(tx, spacing=[1.0, 2.0], dim=1))
