"""lucid.utils.data against PyTorch's documented semantics: datasets, random_split, samplers, collation and the
DataLoader (batch counts, shuffling with generators, argument conflicts, iterable datasets, workers)."""
import collections
import warnings

import numpy as np
import pytest

import lucid
from lucid.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset, Generator,
                              IterableDataset, RandomSampler, SequentialSampler, Subset, SubsetRandomSampler,
                              TensorDataset, WeightedRandomSampler, default_collate, default_convert,
                              get_worker_info, random_split)


class Squares(Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i * i

    def __len__(self):
        return self.n


class Stream(IterableDataset):
    def __init__(self, n, with_len=True):
        self.n = n
        if with_len:
            self.__class__ = StreamWithLen

    def __iter__(self):
        return iter(range(self.n))


class StreamWithLen(Stream):
    def __len__(self):
        return self.n


def labels(loader):
    return [b[1].tolist() for b in loader]


def toy(n=10):
    return TensorDataset(lucid.arange(n * 2, dtype=lucid.float32).reshape(n, 2), lucid.arange(n))


# ---------------------------------------------------------------------------------------------------- datasets
def test_tensor_dataset_indexes_every_tensor():
    ds = toy(5)
    assert len(ds) == 5
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3


def test_tensor_dataset_size_mismatch():
    with pytest.raises(ValueError, match="Size mismatch between tensors"):
        TensorDataset(lucid.zeros(3, 2), lucid.zeros(4))


def test_subset_and_concat():
    sub = Subset(Squares(10), [9, 2, 4])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [81, 4, 16]
    assert sub.__getitems__([0, 2]) == [81, 16]
    cat = Squares(3) + Squares(2)
    assert isinstance(cat, ConcatDataset) and len(cat) == 5 and cat.cumulative_sizes == [3, 5]
    assert [cat[i] for i in range(5)] == [0, 1, 4, 0, 1]
    assert cat[-1] == 1 and cat[-5] == 0
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        cat[-6]
    with pytest.raises(IndexError):
        cat[5]


def test_concat_rejects_empty_and_iterable():
    with pytest.raises(ValueError, match="datasets should not be an empty iterable"):
        ConcatDataset([])
    with pytest.raises(TypeError, match="ConcatDataset does not support IterableDataset"):
        ConcatDataset([Squares(2), Stream(3)])


def test_iterable_add_chains():
    chain = Stream(2) + Stream(3)
    assert isinstance(chain, ChainDataset) and list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5


# ---------------------------------------------------------------------------------------------------- random_split
def _check_partition(parts, n):
    seen = sorted(i for p in parts for i in p.indices)
    assert seen == list(range(n))


def test_random_split_lengths():
    parts = random_split(range(10), [3, 7], generator=Generator().manual_seed(42))
    assert [len(p) for p in parts] == [3, 7]
    _check_partition(parts, 10)
    assert all(p.dataset == range(10) for p in parts)


def test_random_split_fractions_deal_out_the_remainder():
    # floor(11 * .5, .3, .2) = 5, 3, 2; the one left over goes to the first split
    parts = random_split(range(11), [0.5, 0.3, 0.2], generator=Generator().manual_seed(0))
    assert [len(p) for p in parts] == [6, 3, 2]
    _check_partition(parts, 11)
    assert [len(p) for p in random_split(range(10), [0.3, 0.3, 0.4])] == [3, 3, 4]


def test_random_split_zero_length_warns():
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        parts = random_split(range(10), [0.95, 0.05])
    assert [len(p) for p in parts] == [10, 0]


def test_random_split_errors():
    with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0 is not between 0 and 1"):
        random_split(range(10), [1.5, -0.5])
    with pytest.raises(ValueError, match="non-negative integers"):
        random_split(range(10), [12, -2])


def test_random_split_reproducible_with_generator_and_global_seed():
    split = lambda **kw: [p.indices for p in random_split(range(20), [5, 15], **kw)]  # noqa: E731
    assert split(generator=Generator().manual_seed(7)) == split(generator=Generator().manual_seed(7))
    assert split(generator=Generator().manual_seed(7)) != split(generator=Generator().manual_seed(8))
    lucid.manual_seed(3)
    first = split()
    lucid.manual_seed(3)
    assert split() == first


# ---------------------------------------------------------------------------------------------------- generator
def test_generator_seeding_and_state():
    g = Generator()
    assert lucid.Generator is Generator
    assert g.initial_seed() == 67280421310721  # PyTorch's default
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    assert Generator().manual_seed(-1).initial_seed() == 2 ** 64 - 1
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        g.manual_seed(2 ** 64)
    state = g.get_state()
    first = list(RandomSampler(range(8), generator=g))
    g.set_state(state)
    assert list(RandomSampler(range(8), generator=g)) == first
    s = Generator().seed()
    assert isinstance(s, int) and 0 <= s < 2 ** 64


# ---------------------------------------------------------------------------------------------------- samplers
def test_sequential_sampler():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3] and len(SequentialSampler(range(4))) == 4


def test_random_sampler_is_a_permutation_that_changes_per_epoch():
    s = RandomSampler(range(50), generator=Generator().manual_seed(0))
    a, b = list(s), list(s)
    assert sorted(a) == sorted(b) == list(range(50)) and a != b and len(s) == 50
    again = RandomSampler(range(50), generator=Generator().manual_seed(0))
    assert [list(again), list(again)] == [a, b]


def test_random_sampler_num_samples_and_replacement():
    s = RandomSampler(range(4), num_samples=10, generator=Generator().manual_seed(1))
    drawn = list(s)
    assert len(drawn) == len(s) == 10
    assert sorted(drawn[:4]) == sorted(drawn[4:8]) == [0, 1, 2, 3]  # whole permutations, then a partial one
    assert len(set(drawn[8:])) == 2
    r = list(RandomSampler(range(3), replacement=True, num_samples=200, generator=Generator().manual_seed(1)))
    assert len(r) == 200 and set(r) == {0, 1, 2}


def test_random_sampler_errors():
    with pytest.raises(TypeError, match="replacement should be a boolean value, but got replacement=1"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value, but got num_samples=0"):
        RandomSampler(range(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples=0"):
        RandomSampler([])


def test_random_sampler_without_generator_follows_the_global_seed():
    s = RandomSampler(range(30))
    lucid.manual_seed(11)
    first = list(s)
    lucid.manual_seed(11)
    assert list(s) == first


def test_subset_random_sampler():
    s = SubsetRandomSampler([10, 20, 30, 40], generator=Generator().manual_seed(0))
    assert sorted(s) == [10, 20, 30, 40] and len(s) == 4


def test_weighted_random_sampler():
    s = WeightedRandomSampler([0.0, 1.0, 3.0, 0.0], 1000, generator=Generator().manual_seed(0))
    drawn = np.array(list(s))
    assert len(s) == 1000 and set(drawn.tolist()) == {1, 2}
    assert abs((drawn == 2).mean() - 0.75) < 0.06
    no_repeat = list(WeightedRandomSampler([1, 1, 1, 1], 4, replacement=False, generator=Generator()))
    assert sorted(no_repeat) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="weights should be a 1d sequence"):
        WeightedRandomSampler([[1.0, 2.0]], 2)
    with pytest.raises(RuntimeError, match="without replacement"):
        WeightedRandomSampler([1.0, 0.0], 2, replacement=False)


def test_batch_sampler_keeps_or_drops_the_last_batch():
    assert list(BatchSampler(SequentialSampler(range(10)), 3, drop_last=False)) == [[0, 1, 2], [3, 4, 5],
                                                                                   [6, 7, 8], [9]]
    assert list(BatchSampler(SequentialSampler(range(10)), 3, drop_last=True)) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert len(BatchSampler(range(10), 3, False)) == 4 and len(BatchSampler(range(10), 3, True)) == 3
    assert len(BatchSampler(range(9), 3, False)) == len(BatchSampler(range(9), 3, True)) == 3


def test_batch_sampler_errors():
    for bad in (0, -1, True, 2.0):
        with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
            BatchSampler(range(3), bad, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value, but got drop_last=0"):
        BatchSampler(range(3), 2, 0)


# ---------------------------------------------------------------------------------------------------- collate
def test_collate_stacks_tensors():
    out = default_collate([lucid.ones(2, 3), lucid.zeros(2, 3)])
    assert out.shape == (2, 2, 3) and out.dtype == lucid.float32
    with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
        default_collate([lucid.ones(2), lucid.ones(3)])


def test_collate_numpy_keeps_dtype():
    out = default_collate([np.zeros((2, 2), np.float64), np.ones((2, 2), np.float64)])
    assert isinstance(out, lucid.Tensor) and out.shape == (2, 2, 2) and out.dtype == lucid.float64
    assert default_collate([np.uint8(3), np.uint8(4)]).dtype == lucid.uint8
    scalars = default_collate([np.float64(0.5), np.float64(1.5)])
    assert scalars.dtype == lucid.float64 and scalars.tolist() == [0.5, 1.5]
    with pytest.raises(TypeError, match="default_collate: batch must contain tensors, numpy arrays, numbers"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_collate_python_numbers_and_strings():
    floats = default_collate([1.0, 2.5])
    assert floats.dtype == lucid.float64 and floats.tolist() == [1.0, 2.5]
    ints = default_collate([1, 2, 3])
    assert ints.dtype == lucid.int64 and ints.tolist() == [1, 2, 3]
    assert default_collate([True, False]).dtype == lucid.bool
    assert default_collate(["a", "b"]) == ["a", "b"]
    with pytest.raises(TypeError, match="found <class 'object'>"):
        default_collate([object(), object()])


Point = collections.namedtuple("Point", "x y")


def test_collate_nested_structures():
    batch = [{"img": lucid.ones(3), "label": 1, "meta": {"name": "a", "w": 0.5}, "pair": (1, lucid.zeros(2))},
             {"img": lucid.zeros(3), "label": 0, "meta": {"name": "b", "w": 1.5}, "pair": (2, lucid.ones(2))}]
    out = default_collate(batch)
    assert set(out) == {"img", "label", "meta", "pair"}
    assert out["img"].shape == (2, 3) and out["label"].tolist() == [1, 0]
    assert out["meta"]["name"] == ["a", "b"] and out["meta"]["w"].dtype == lucid.float64
    assert isinstance(out["pair"], list) and out["pair"][0].tolist() == [1, 2] and out["pair"][1].shape == (2, 2)
    points = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(points, Point) and points.x.tolist() == [1, 3] and points.y.dtype == lucid.float64
    lists = default_collate([[1, 2], [3, 4]])
    assert isinstance(lists, list) and [t.tolist() for t in lists] == [[1, 3], [2, 4]]
    ordered = default_collate([collections.OrderedDict(b=1, a=2)] * 2)
    assert isinstance(ordered, collections.OrderedDict) and list(ordered) == ["b", "a"]
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        default_collate([[1, 2], [3]])


def test_default_convert():
    t = lucid.ones(2)
    assert default_convert(t) is t
    arr = default_convert(np.arange(3, dtype=np.int16))
    assert isinstance(arr, lucid.Tensor) and arr.dtype == lucid.int16
    out = default_convert((np.zeros(2), "s", 3))
    assert isinstance(out, list) and isinstance(out[0], lucid.Tensor) and out[1:] == ["s", 3]
    assert isinstance(default_convert(Point(np.zeros(1), 1)).x, lucid.Tensor)
    assert default_convert({"k": np.ones(1)})["k"].dtype == lucid.float64


# ---------------------------------------------------------------------------------------------------- DataLoader
def test_loader_batches_in_order():
    loader = DataLoader(toy(10), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and len(batches) == 3
    assert [b[0].shape for b in batches] == [(4, 2), (4, 2), (2, 2)]
    assert labels(loader) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_loader_drop_last():
    loader = DataLoader(toy(10), batch_size=4, drop_last=True)
    assert len(loader) == 2 and labels(loader) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(DataLoader(toy(8), batch_size=4, drop_last=True)) == len(DataLoader(toy(8), batch_size=4)) == 2


def test_loader_shuffle_is_reproducible_with_a_generator():
    def run(seed):
        loader = DataLoader(toy(20), batch_size=6, shuffle=True, generator=lucid.Generator().manual_seed(seed))
        return [labels(loader), labels(loader)]  # two epochs

    first = run(0)
    assert first == run(0) and first != run(1)
    assert first[0] != first[1]  # epochs differ
    assert sorted(sum(first[0], [])) == list(range(20))


def test_loader_shuffle_without_generator_follows_lucid_manual_seed():
    loader = DataLoader(toy(20), batch_size=5, shuffle=True)
    lucid.manual_seed(0)
    first = labels(loader)
    lucid.manual_seed(0)
    assert labels(loader) == first and first != labels(loader)


def test_loader_argument_conflicts():
    ds = toy(6)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                         "sampler, and drop_last"):
        DataLoader(ds, batch_size=2, batch_sampler=BatchSampler(range(6), 2, False))
    for kwargs in ({"shuffle": True}, {"drop_last": True}, {"sampler": SequentialSampler(ds)}):
        with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
            DataLoader(ds, batch_sampler=BatchSampler(range(6), 2, False), **kwargs)
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(ds, sampler=SequentialSampler(ds), shuffle=True)
    with pytest.raises(ValueError, match="batch_size=None option disables auto-batching and is mutually exclusive "
                                         "with drop_last"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="timeout option should be non-negative"):
        DataLoader(ds, timeout=-1)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified in multiprocessing"):
        DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected unspecified shuffle option"):
        DataLoader(Stream(4), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        DataLoader(Stream(4), sampler=SequentialSampler(range(4)))


def test_loader_attributes_are_frozen():
    loader = DataLoader(toy(4), batch_size=2)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is initialized"):
        loader.batch_size = 3
    loader.num_workers = 0  # other attributes may change


def test_loader_with_sampler_and_batch_sampler():
    ds = Squares(6)
    loader = DataLoader(ds, batch_size=2, sampler=[5, 3, 1])
    assert [b.tolist() for b in loader] == [[25, 9], [1]]
    loader = DataLoader(ds, batch_sampler=[[0, 1, 2], [4]])
    assert loader.batch_size is None and [b.tolist() for b in loader] == [[0, 1, 4], [16]]
    assert len(loader) == 2


def test_loader_without_batching_converts_each_sample():
    class Arrays(Dataset):
        def __getitem__(self, i):
            return np.full(2, i, dtype=np.int32)

        def __len__(self):
            return 3

    loader = DataLoader(Arrays(), batch_size=None)
    items = list(loader)
    assert len(loader) == 3 and all(isinstance(t, lucid.Tensor) and t.shape == (2,) for t in items)
    assert items[2].tolist() == [2, 2] and items[0].dtype == lucid.int32


def test_loader_custom_collate_and_getitems():
    class Batched(Squares):
        calls = 0

        def __getitems__(self, indices):
            Batched.calls += 1
            return [self[i] for i in indices]

    loader = DataLoader(Batched(5), batch_size=2, collate_fn=lambda samples: sum(samples))
    assert list(loader) == [1, 13, 16] and Batched.calls == 3


def test_loader_iterable_dataset():
    loader = DataLoader(Stream(10), batch_size=4)
    assert [b.tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and len(loader) == 3
    loader = DataLoader(Stream(10), batch_size=4, drop_last=True)
    assert [b.tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7]] and len(loader) == 2
    unbatched = DataLoader(Stream(3, with_len=False), batch_size=None)
    assert list(unbatched) == [0, 1, 2]
    with pytest.raises(TypeError):
        len(DataLoader(Stream(3, with_len=False)))


def test_loader_workers_run_in_the_main_process():
    seen = []

    class Sharded(IterableDataset):
        def __iter__(self):
            info = get_worker_info()
            seen.append((info.id, info.num_workers))
            return iter(range(info.id, 7, info.num_workers))

    def init(worker_id):
        seen.append(("init", worker_id, get_worker_info().id))

    loader = DataLoader(Sharded(), batch_size=3, num_workers=2, worker_init_fn=init)
    assert [b.tolist() for b in loader] == [[0, 1, 2], [3, 4, 5], [6]]
    assert seen == [("init", 0, 0), (0, 1)]
    assert get_worker_info() is None
    same = DataLoader(toy(7), batch_size=3, num_workers=2, shuffle=True, generator=Generator().manual_seed(2))
    ref = DataLoader(toy(7), batch_size=3, shuffle=True, generator=Generator().manual_seed(2))
    assert labels(same) == labels(ref)


def test_loader_feeds_a_training_step():
    x = lucid.randn(12, 3)
    y = x @ lucid.tensor([[1.0], [-2.0], [0.5]])
    w = lucid.zeros(3, 1, requires_grad=True)
    for xb, yb in DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True, generator=Generator()):
        loss = ((xb @ w - yb) ** 2).mean()
        loss.backward()
    assert w.grad is not None and w.grad.shape == (3, 1)


def test_no_warnings_on_plain_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(DataLoader(toy(5), batch_size=2, shuffle=True))


def test_tensor_dataset_fast_gather_matches_per_sample_collation():
    ds = toy(11)

    class Doubled(TensorDataset):  # overrides indexing: the loader must call it
        def __getitem__(self, i):
            x, y = super().__getitem__(i)
            return x * 2, y

    for dataset in (ds, Subset(ds, [10, 3, 5, 0, 7]), Subset(Subset(ds, list(range(8))), [7, 1, 2]),
                    Doubled(*ds.tensors)):
        fast = list(DataLoader(dataset, batch_size=2))
        slow = list(DataLoader(dataset, batch_size=2, collate_fn=lambda b: default_collate(b)))
        assert len(fast) == len(slow)
        for f, s in zip(fast, slow):
            assert isinstance(f, list) and len(f) == 2
            assert all(a.dtype == b.dtype and a.shape == b.shape and a.tolist() == b.tolist() for a, b in zip(f, s))
    assert list(DataLoader(Doubled(*ds.tensors), batch_size=11))[0][0].tolist() == (ds.tensors[0] * 2).tolist()
    with pytest.raises(IndexError, match="index 11 is out of bounds"):
        list(DataLoader(ds, batch_sampler=[[0, 11]]))


def test_against_torch_as_an_oracle():
    torch = pytest.importorskip("torch")
    import torch.utils.data as T

    def describe(x):
        if isinstance(x, (torch.Tensor, lucid.Tensor)):
            return "tensor", str(x.dtype).split(".")[-1].rstrip("_"), tuple(x.shape), np.asarray(x).tolist()
        if isinstance(x, dict):
            return type(x).__name__, {k: describe(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return type(x).__name__, [describe(v) for v in x]
        return x

    batch = [{"x": np.ones(2) * i, "y": i, "z": float(i), "s": f"n{i}", "t": (i, [i, 2.0]), "b": bool(i),
              "u": np.uint8(i), "p": Point(i, 1.5), "o": collections.OrderedDict(b=1, a=i)} for i in range(3)]
    assert describe(default_collate(batch)) == describe(T.default_collate(batch))
    for sample in [(np.zeros(2), "s", 3), {"k": np.ones(1)}, Point(np.zeros(1), 1), [np.zeros(1), 2]]:
        assert describe(default_convert(sample)) == describe(T.default_convert(sample))
    for n, bs, drop in [(0, 3, False), (7, 3, False), (7, 3, True), (9, 3, True), (10, 1, True), (5, None, False)]:
        assert len(DataLoader(range(n), batch_size=bs, drop_last=drop)) == len(T.DataLoader(range(n), batch_size=bs,
                                                                                             drop_last=drop))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n, fractions in [(11, [0.5, 0.3, 0.2]), (17, [0.1] * 10), (10, [0.95, 0.05]), (5, [1 / 3] * 3)]:
            assert ([len(s) for s in random_split(range(n), fractions)]
                    == [len(s) for s in T.random_split(range(n), fractions)])
