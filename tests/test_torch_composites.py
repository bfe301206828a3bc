"""The composite PyTorch functions (ops/composites.py) against torch, and their gradients."""
import numpy as np
import pytest

import lucid
from helpers import check_grads, leaf

torch = pytest.importorskip("torch")


def _t(x):
    return torch.from_numpy(np.asarray(x.detach().numpy()))


def _same(ours, theirs):
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same(o, t)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)


CASES = [
    ("ravel", lambda m, x: m.ravel(x.transpose(0, 1))),
    ("positive", lambda m, x: m.positive(x)),
    ("column_stack", lambda m, x: m.column_stack([x[:, 0], x, x[:, 1:2]])),
    ("diagflat", lambda m, x: m.diagflat(x[:2, :2], 1)),
    ("inner", lambda m, x: m.inner(x, x[1:])),
    ("vdot", lambda m, x: m.vdot(x[0], x[1])),
    ("dist", lambda m, x: m.dist(x, x.flip(0), 3)),
    ("rot90", lambda m, x: [m.rot90(x, k, [0, 1]) for k in (-1, 0, 1, 2, 3, 5)] + [m.rot90(x, 1, [1, 0])]),
    ("tensor_split", lambda m, x: [m.tensor_split(x, 2, 1), m.tensor_split(x, [1, 3], 1), m.tensor_split(x, 3),
                                   m.tensor_split(x, [2, 1, 5], 1), m.tensor_split(x, [-1], 0)]),
    ("hsplit", lambda m, x: [m.hsplit(x, 2), m.hsplit(x, [1])]),
    ("vsplit", lambda m, x: m.vsplit(x, 3)),
    ("dsplit", lambda m, x: m.dsplit(x.reshape(3, 2, 2), [1])),
    ("nansum", lambda m, x: [m.nansum(x), m.nansum(x, 1, keepdim=True)]),
    ("nanmean", lambda m, x: [m.nanmean(x), m.nanmean(x, 0)]),
    ("aminmax", lambda m, x: [tuple(m.aminmax(x)), tuple(m.aminmax(x, dim=1, keepdim=True)),
                              tuple(m.aminmax(x, keepdim=True))]),
    ("float_power", lambda m, x: m.float_power(x.abs(), 2.5)),
    ("ldexp", lambda m, x: m.ldexp(x, m.tensor([1, -2, 3, 0]))),
]


@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
def test_values_match_torch(name, fn):
    x = leaf(3, 4, requires_grad=False)
    _same(fn(lucid, x), fn(torch, _t(x)))


@pytest.mark.parametrize("name, fn", [c for c in CASES if c[0] not in ("aminmax", "ravel", "positive")],
                         ids=[c[0] for c in CASES if c[0] not in ("aminmax", "ravel", "positive")])
def test_gradients(name, fn):
    def scalar(x):
        out = fn(lucid, x)
        flat = out if isinstance(out, lucid.Tensor) else [o for group in (out if isinstance(out, list) else [out])
                                                           for o in (group if isinstance(group, tuple) else (group,))]
        return out if isinstance(flat, lucid.Tensor) else lucid.stack([f.sum() for f in flat])
    check_grads(scalar, leaf(3, 4, low=0.5, high=2.0), second=False)


def test_nan_handling_and_predicates():
    x = lucid.tensor([1.0, float("nan"), float("inf"), -float("inf"), 2.0])
    tx = _t(x)
    _same(lucid.nansum(x), torch.nansum(tx))
    _same(lucid.nanmean(x[[0, 1, 4]]), torch.nanmean(tx[[0, 1, 4]]))
    for name in ("isposinf", "isneginf", "isreal"):
        assert np.array_equal(getattr(lucid, name)(x).numpy(), getattr(torch, name)(tx).numpy())
    z = lucid.tensor(np.array([1 + 0j, 2j], dtype=np.complex64))
    assert lucid.isreal(z).tolist() == torch.isreal(torch.from_numpy(z.numpy())).tolist()
    assert lucid.is_same_size(x, x) and not lucid.is_same_size(x, x[:2])
    assert lucid.is_signed(x) and not lucid.tensor([1], dtype=lucid.uint8).is_signed()
    assert lucid.tensor([3.0]).is_nonzero() and not lucid.is_nonzero(lucid.tensor(0))
    with pytest.raises(RuntimeError, match="more than one value is ambiguous"):
        lucid.is_nonzero(x)
    with pytest.raises(RuntimeError, match="no values is ambiguous"):
        lucid.is_nonzero(x[:0])


def test_errors_are_pytorchs():
    x = lucid.ones(3, 4)
    for ours, theirs in ((lambda m: m.vdot(m.ones(2, 2), m.ones(2)), RuntimeError),
                         (lambda m: m.rot90(m.ones(3, 4), 1, [0, 0]), RuntimeError),
                         (lambda m: m.hsplit(m.ones(3, 4), 3), RuntimeError),
                         (lambda m: m.vsplit(m.ones(3), 1), RuntimeError),
                         (lambda m: m.positive(m.ones(2, dtype=m.bool)), RuntimeError),
                         (lambda m: m.nanmean(m.ones(2, dtype=m.int64)), RuntimeError)):
        with pytest.raises(theirs) as want:
            ours(torch)
        with pytest.raises(theirs) as got:
            ours(lucid)
        assert str(got.value).split("!")[0] == str(want.value).split("!")[0]
    assert x.ravel().shape == (12,)


def test_views_and_predicates_match_torch():
    x = leaf(2, 3, requires_grad=False)
    tx = _t(x)
    _same(x.H, tx.H)
    _same(x.mH, tx.mH)
    _same(lucid.adjoint(leaf(2, 3, 4, requires_grad=False)), torch.adjoint(_t(leaf(2, 3, 4, requires_grad=False))))
    _same(x.sum_to_size(1, 3), tx.sum_to_size(1, 3))
    _same(x.sum_to_size((3,)), tx.sum_to_size((3,)))
    _same(lucid.fill(x, 2.5), torch.fill(tx, 2.5))
    assert x.is_cpu and x.get_device() == tx.get_device() == -1
    assert not lucid.is_conj(x) and not x.is_neg() and lucid.resolve_neg(x) is x and lucid.resolve_conj(x) is x
    assert x.cfloat().dtype == lucid.complex64 and not lucid.detach(x).requires_grad
    with pytest.raises(RuntimeError) as want:
        tx.sum_to_size(2)
    with pytest.raises(RuntimeError, match=str(want.value).replace("[", r"\[").replace("]", r"\]").replace(".", r"\.")
                       .replace("{", r"\{").replace("}", r"\}")):
        x.sum_to_size(2)
    check_grads(lambda t: t.sum_to_size(1, 3), leaf(2, 3))


def test_adjoint_and_vdot_conjugate_complex_tensors_as_torch():
    # complex inputs take the conjugate (mH, adjoint, H, vdot's first argument), which once raised AttributeError
    rng = np.random.default_rng(0)
    z = rng.normal(size=(2, 3, 4)) + 1j * rng.normal(size=(2, 3, 4))
    x, tx = lucid.tensor(z.astype(np.complex64)), torch.tensor(z.astype(np.complex64))
    for ours, theirs in ((x.mH, tx.mH), (lucid.adjoint(x), torch.adjoint(tx)), (x[0].H, tx[0].H),
                         (lucid.vdot(x[0, 0], x[1, 0]), torch.vdot(tx[0, 0], tx[1, 0]))):
        np.testing.assert_allclose(ours.numpy(), theirs.resolve_conj().numpy(), rtol=1e-6, atol=1e-6)


def test_pdist_trapezoid_isin_vander_match_torch():
    x = leaf(5, 3, requires_grad=False)
    tx = _t(x)
    for p in (1, 2, 3.5):
        _same(lucid.pdist(x, p), torch.pdist(tx, p))
        _same(lucid.nn.functional.pdist(x, p), torch.nn.functional.pdist(tx, p))
    pts = lucid.tensor([0.0, 0.5, 2.0, 2.5, 4.0], dtype=lucid.float64)
    for dim in (0, 1, -1):
        _same(lucid.trapezoid(x, dim=dim), torch.trapezoid(tx, dim=dim))
        _same(lucid.trapezoid(x, dx=0.3, dim=dim), torch.trapezoid(tx, dx=0.3, dim=dim))
        _same(lucid.cumulative_trapezoid(x, dim=dim), torch.cumulative_trapezoid(tx, dim=dim))
    _same(lucid.trapezoid(x, pts, dim=0), torch.trapezoid(tx, _t(pts), dim=0))
    _same(lucid.cumulative_trapezoid(x, pts, dim=0), torch.cumulative_trapezoid(tx, _t(pts), dim=0))
    a, b = lucid.tensor([[1, 2], [3, 4]]), lucid.tensor([2, 3, 7])
    for invert in (False, True):
        assert lucid.isin(a, b, invert=invert).tolist() == torch.isin(_t(a), _t(b), invert=invert).tolist()
    assert lucid.isin(a, 4).tolist() == torch.isin(_t(a), 4).tolist()
    v = lucid.tensor([1.5, -2.0, 3.0], dtype=lucid.float64)
    for n, inc in ((None, False), (2, True), (4, False), (0, False)):
        _same(lucid.vander(v, n, inc), torch.vander(_t(v), n, inc))
    assert lucid.vander(lucid.tensor([1, 2])).tolist() == torch.vander(torch.tensor([1, 2])).tolist()
    check_grads(lambda t: lucid.pdist(t), leaf(4, 3))
    check_grads(lambda t: lucid.cumulative_trapezoid(t, dim=0), leaf(4, 3))
    check_grads(lambda t: lucid.vander(t, 3), leaf(3))
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 1D"):
        lucid.pdist(v)


def test_stack_dataset_and_trapz_match_torch():
    from torch.utils.data import StackDataset as TorchStack
    ours, theirs = lucid.utils.data.StackDataset(x=[1, 2], y=[3, 4]), TorchStack(x=[1, 2], y=[3, 4])
    assert ours[1] == theirs[1] and len(ours) == len(theirs)
    assert lucid.utils.data.StackDataset([1, 2], "ab")[0] == TorchStack([1, 2], "ab")[0]
    for args, kwargs in ((([1, 2], [3]), {}), (([1],), {"b": [2]}), ((), {})):
        with pytest.raises(ValueError) as want:
            TorchStack(*args, **kwargs)
        with pytest.raises(ValueError) as got:
            lucid.utils.data.StackDataset(*args, **kwargs)
        assert str(got.value) == str(want.value)
    y = leaf(4, requires_grad=False)
    _same(lucid.trapz(y), torch.trapz(_t(y)))


def test_combinations_match_torch():
    x = lucid.tensor([1.5, 2.0, -3.0, 4.0], dtype=lucid.float64)
    for r in (0, 1, 2, 3, 5):
        for rep in (False, True):
            _same(lucid.combinations(x, r, rep), torch.combinations(_t(x), r, rep))
    for bad in ((lucid.ones(2, 2), 2), (x, -1)):
        with pytest.raises(RuntimeError) as want:
            torch.combinations(_t(bad[0]), bad[1])
        with pytest.raises(RuntimeError) as got:
            lucid.combinations(*bad)
        assert str(got.value) == str(want.value)
    check_grads(lambda t: lucid.combinations(t, 2), leaf(4))
