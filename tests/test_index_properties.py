"""Property tests: random shapes and index tensors, in and out of range, against numpy.

Each op either gives numpy's values or raises (PyTorch's type) exactly where an index is out of range; indices are
given known (made from host data) or lazy (computed by MLX), where the error comes at the next evaluation.
"""
import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

import lucid  # noqa: E402
import lucid.nn.functional as F  # noqa: E402

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True)


@st.composite
def case(draw, negative_ok: bool):
    """(array, dim, index values, lazy?) with indices that are sometimes out of range."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    d = draw(st.integers(0, len(shape) - 1))
    size = shape[d]
    lo = -size if negative_ok else 0
    inside = st.integers(lo, size - 1)
    outside = st.one_of(st.integers(size, size + 3), st.integers(lo - 3, lo - 1), st.sampled_from([10 ** 9, -10 ** 9]))
    n = draw(st.integers(1, 4))
    idx = draw(st.lists(st.one_of(inside, inside, outside), min_size=n, max_size=n))
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    return a, d, np.array(idx, dtype=np.int64), draw(st.booleans())


def _index(values, lazy):
    t = lucid.tensor(values)
    return t * 1 if lazy else t


def _bad(idx, size, negative_ok):
    return bool(np.any((idx >= size) | (idx < (-size if negative_ok else 0))))


def _agree(compute, expected, bad, exc):
    """Run ``compute`` (which ends by reading values); it must raise ``exc`` iff ``bad``, else give ``expected``."""
    if bad:
        with pytest.raises(exc):
            compute()
    else:
        np.testing.assert_array_equal(compute(), expected)
    assert not lucid._checks.has_pending()


@SETTINGS
@given(case(negative_ok=True))
def test_getitem(c):
    a, d, idx, lazy = c
    key = (slice(None),) * d + (_index(idx, lazy),)
    bad = _bad(idx, a.shape[d], True)
    _agree(lambda: lucid.tensor(a)[key].numpy(), None if bad else np.take(a, idx, axis=d), bad, IndexError)


@SETTINGS
@given(case(negative_ok=True))
def test_setitem(c):
    a, d, idx, lazy = c
    bad = _bad(idx, a.shape[d], True)
    expected = a.copy()
    if not bad:
        expected[(slice(None),) * d + (idx,)] = -1.0
    t = lucid.tensor(a)

    def write():
        t[(slice(None),) * d + (_index(idx, lazy),)] = -1.0
        return t.numpy()

    _agree(write, expected, bad, IndexError)
    np.testing.assert_array_equal(t.numpy(), expected if not bad else a)  # all or nothing


@SETTINGS
@given(case(negative_ok=False))
def test_gather_and_scatter_add(c):
    a, d, idx, lazy = c
    shape = list(a.shape)
    shape[d] = len(idx)
    along = np.broadcast_to(idx.reshape([-1 if e == d else 1 for e in range(a.ndim)]), shape).copy()
    bad = _bad(idx, a.shape[d], False)
    _agree(lambda: lucid.tensor(a).gather(d, _index(along, lazy)).numpy(),
           None if bad else np.take_along_axis(a, along, d), bad, RuntimeError)
    src = np.ones(shape, np.float32)
    expected = None
    if not bad:
        expected = a.copy()
        for pos in np.ndindex(*shape):
            target = list(pos)
            target[d] = along[pos]
            expected[tuple(target)] += 1.0
    _agree(lambda: lucid.tensor(a).scatter_add(d, _index(along, lazy), lucid.tensor(src)).numpy(), expected, bad,
           RuntimeError)


@SETTINGS
@given(case(negative_ok=False))
def test_index_select_and_index_add(c):
    a, d, idx, lazy = c
    bad = _bad(idx, a.shape[d], False)
    _agree(lambda: lucid.tensor(a).index_select(d, _index(idx, lazy)).numpy(),
           None if bad else np.take(a, idx, axis=d), bad, IndexError)
    shape = list(a.shape)
    shape[d] = len(idx)
    expected = None
    if not bad:
        expected = a.copy()
        np.add.at(expected, (slice(None),) * d + (idx,), np.ones(shape, np.float32))
    _agree(lambda: lucid.tensor(a).index_add(d, _index(idx, lazy), lucid.ones(*shape)).numpy(), expected, bad,
           IndexError)


@SETTINGS
@given(case(negative_ok=False))
def test_embedding(c):
    a, d, idx, lazy = c
    w = a.reshape(a.shape[0], -1)
    bad = _bad(idx, w.shape[0], False)
    _agree(lambda: F.embedding(_index(idx, lazy), lucid.tensor(w)).numpy(), None if bad else w[idx], bad, IndexError)


@SETTINGS
@given(case(negative_ok=False), st.booleans())
def test_class_index_losses(c, with_ignored):
    a, d, idx, lazy = c
    classes = a.shape[d]
    logits = np.random.default_rng(len(idx)).standard_normal((len(idx), classes)).astype(np.float32)
    target = idx.copy()
    if with_ignored:
        target[0] = -100
    keep = target != -100
    bad = _bad(target[keep], classes, False)
    expected = None
    if not bad:
        logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
        picked = -logp[np.arange(len(target))[keep], target[keep]]
        expected = np.float32(picked.mean()) if keep.any() else np.float32(np.nan)
    got = lambda: np.float32(F.cross_entropy(lucid.tensor(logits), _index(target, lazy)).item())  # noqa: E731
    if bad:
        _agree(got, None, True, IndexError)
    else:
        np.testing.assert_allclose(got(), expected, rtol=1e-5, atol=1e-6)
    got_nll = lambda: F.nll_loss(lucid.tensor(logits), _index(target, lazy), reduction="sum").item()  # noqa: E731
    if bad:
        _agree(got_nll, None, True, IndexError)
    else:
        np.testing.assert_allclose(got_nll(), -logits[np.arange(len(target))[keep], target[keep]].sum(), rtol=1e-5,
                                   atol=1e-6)
