"""Tensor methods and settings ported programs use: new_*, in-place random fills, stride/nbytes/itemsize,
numel/is_tensor, set_printoptions, get/set_default_dtype, and RandomSampler drawing lazily."""
import itertools

import numpy as np
import pytest

import lucid
from lucid.utils.data import RandomSampler


def test_new_factories_take_dtype_from_self():
    x = lucid.zeros(2, dtype=lucid.float64)
    for t, value in ((x.new_zeros(2, 3), 0), (x.new_ones((2, 3)), 1), (x.new_empty(2, 3), 0),
                     (x.new_full((2, 3), 7.0), 7)):
        assert t.shape == (2, 3) and t.dtype == lucid.float64 and (t.numpy() == value).all()
    t = x.new_tensor([1, 2])
    assert t.dtype == lucid.float64 and t.tolist() == [1.0, 2.0] and t.is_leaf
    assert x.new_zeros(2, dtype=lucid.int32).dtype == lucid.int32
    assert x.new_ones(2, requires_grad=True).requires_grad
    src = lucid.ones(2, requires_grad=True)
    assert not x.new_tensor(src).requires_grad


@pytest.mark.parametrize("dtype", [lucid.float32, lucid.float64])
def test_random_fills_have_the_right_distribution(dtype):
    lucid.manual_seed(0)
    x = lucid.zeros(20000, dtype=dtype)
    assert x.normal_(2.0, 3.0) is x and x.dtype == dtype
    assert abs(x.mean().item() - 2) < 0.1 and abs(x.std().item() - 3) < 0.1
    x.uniform_(-1, 3)
    assert x.min().item() >= -1 and x.max().item() < 3 and abs(x.mean().item() - 1) < 0.05
    x.exponential_(2.0)
    assert x.min().item() >= 0 and abs(x.mean().item() - 0.5) < 0.02
    x.random_(3, 7)
    assert set(np.unique(x.numpy())) == {3, 4, 5, 6}
    x.random_(4)
    assert set(np.unique(x.numpy())) == {0, 1, 2, 3}
    x.bernoulli_(0.25)
    assert set(np.unique(x.numpy())) == {0, 1} and abs(x.mean().item() - 0.25) < 0.02
    x.log_normal_(0.0, 0.5)
    assert abs(np.log(x.numpy()).std() - 0.5) < 0.02
    x.geometric_(0.5)
    assert x.min().item() == 1 and abs(x.mean().item() - 2) < 0.1
    x.cauchy_()
    assert abs(np.median(x.numpy())) < 0.05


def test_random_fills_follow_generator_and_inplace_rules():
    a, b = lucid.zeros(5), lucid.zeros(5)
    a.normal_(generator=lucid.Generator().manual_seed(1))
    b.normal_(generator=lucid.Generator().manual_seed(1))
    assert a.tolist() == b.tolist()
    i = lucid.zeros(1000, dtype=lucid.int64).random_()
    assert i.min().item() >= 0 and i.max().item() > 2 ** 40
    w = lucid.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.normal_()
    with lucid.no_grad():
        w.uniform_()
    assert w.requires_grad and w.is_leaf
    v0 = w._version
    with lucid.no_grad():
        w.normal_()
    assert w._version == v0 + 1
    with pytest.raises(RuntimeError, match="from=5 >= to=5"):
        lucid.zeros(2).random_(5, 5)
    with pytest.raises(RuntimeError, match="floating point"):
        lucid.zeros(2, dtype=lucid.int64).normal_()


def test_storage_facts():
    x = lucid.zeros(2, 3, 4)
    assert x.stride() == (12, 4, 1) and x.stride(1) == 4 and x.stride(-1) == 1
    assert x.nbytes == 96 and x.itemsize == 4 and x.element_size() == 4
    assert not x.is_xpu and not x.is_cuda and x.is_mps in (True, False) and x.is_contiguous()
    assert lucid.numel(x) == 24 and lucid.is_tensor(x) and not lucid.is_tensor(np.zeros(2))
    assert lucid.tensor(3.0).stride() == ()


def test_set_printoptions_changes_repr():
    x = lucid.tensor([1.123456789, 2.0])
    try:
        lucid.set_printoptions(precision=2)
        assert repr(x) == "Tensor([1.12, 2.  ])"
        lucid.set_printoptions(threshold=5, edgeitems=1)
        assert "..." in repr(lucid.arange(10))
    finally:
        np.set_printoptions(precision=8, threshold=1000, edgeitems=3, linewidth=75, suppress=False)


def test_default_dtype():
    assert lucid.get_default_dtype() == lucid.float32
    try:
        lucid.set_default_dtype(lucid.float64)
        assert lucid.tensor([1.5]).dtype == lucid.float64
        assert lucid.zeros(2).dtype == lucid.rand(2).dtype == lucid.arange(0.0, 1.0).dtype == lucid.float64
        assert lucid.full((2,), 1.5).dtype == lucid.float64
        assert lucid.nn.Linear(2, 2).weight.dtype == lucid.float64
        assert lucid.tensor([1]).dtype == lucid.int64
    finally:
        lucid.set_default_dtype(lucid.float32)
    with pytest.raises(TypeError, match="floating-point"):
        lucid.set_default_dtype(lucid.int32)


def test_random_sampler_with_replacement_draws_lazily():
    sampler = RandomSampler(range(10), replacement=True, num_samples=10 ** 10)
    assert len(sampler) == 10 ** 10
    first = list(itertools.islice(iter(sampler), 5000))  # would need 74.5 GiB if drawn up front
    assert len(first) == 5000 and set(first) == set(range(10))
    assert len(list(RandomSampler(range(3), replacement=True, num_samples=2500))) == 2500


def test_legacy_new_makes_sizes_or_data_with_this_dtype():
    x = lucid.zeros(3, dtype=lucid.float64)
    assert x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype == lucid.float64
    assert x.new(lucid.Size([4])).shape == (4,)
    assert x.new([1, 2]).tolist() == [1.0, 2.0] and x.new([1, 2]).dtype == lucid.float64
    assert x.new().shape == (0,)


def test_bernoulli_draws_zero_or_one_with_the_inputs_probabilities():
    p = lucid.tensor([0.0, 1.0, 0.0, 1.0], requires_grad=True)
    out = lucid.bernoulli(p)
    assert out.tolist() == [0.0, 1.0, 0.0, 1.0] and not out.requires_grad
    assert p.bernoulli().tolist() == [0.0, 1.0, 0.0, 1.0]
    assert lucid.bernoulli(lucid.ones(1000), p=0.0).sum().item() == 0.0
    draws = lucid.rand(2000).bernoulli()
    assert set(draws.tolist()) <= {0.0, 1.0} and 0.4 < draws.mean().item() < 0.6
