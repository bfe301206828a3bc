"""What PyTorch's convolution, embedding, RNN, optim and nn test files found (tools/torch_suite.py), each checked
against PyTorch itself: complex and channel-less convolutions, ``to()``'s argument parsing, an embedding's padding
row under a NaN gradient, ``torch._embedding_bag``, RNN/GRU ``proj_size``, ``_flat_weights``, the ``torch._C``
pieces, ``torch.random``, the factories' ``size=`` keyword and ``optim.SparseAdam``."""
import numpy as np
import pytest

import lucid
import lucid.compat.torch as ltorch
import lucid.nn.functional as F
from helpers import error_of

torch = pytest.importorskip("torch")


def _complex(rng, *shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


# ------------------------------------------------------------------------------------------------ convolutions
@pytest.mark.parametrize("fn, x_shape, w_shape, kwargs", [
    ("conv1d", (2, 4, 9), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
    ("conv2d", (2, 3, 7, 6), (4, 3, 3, 2), dict(dilation=2)),
    ("conv3d", (1, 2, 4, 4, 4), (2, 2, 2, 2, 2), {}),
    ("conv_transpose2d", (2, 3, 5, 5), (3, 2, 3, 3), dict(stride=2, output_padding=1)),
])
def test_complex_convolution_values_and_gradients_match_pytorch(fn, x_shape, w_shape, kwargs):
    rng = np.random.default_rng(0)
    bias = w_shape[1] if "transpose" in fn else w_shape[0]
    arrays = _complex(rng, *x_shape), _complex(rng, *w_shape), _complex(rng, bias)
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    ours = [lucid.tensor(a, requires_grad=True) for a in arrays]
    expected = getattr(torch.nn.functional, fn)(*theirs, **kwargs)
    got = getattr(F, fn)(*ours, **kwargs)
    assert got.dtype == lucid.complex64
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-4, atol=1e-4)
    expected.abs().sum().backward()  # a real loss: PyTorch's (conjugate) gradient convention
    got.abs().sum().backward()
    for t, ours_t in zip(theirs, ours):
        np.testing.assert_allclose(ours_t.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-3)


def test_complex_convolution_checks_sizes_as_pytorch():
    x = np.zeros((3, 1, 2), np.complex64)
    for lib in (torch, lucid):
        conv = lib.nn.Conv1d(1, 1, 3).to(lib.cfloat)
        assert error_of(lambda: conv(lib.tensor(x)))[0] == "RuntimeError"
        assert lib.nn.Conv1d(1, 1, 3, stride=2, padding=1).to(lib.cfloat)(lib.tensor(x)).shape == (3, 1, 1)


@pytest.mark.parametrize("n, shape", [(1, (2, 0, 15)), (2, (2, 0, 9, 8)), (3, (2, 0, 5, 4, 6))])
def test_convolution_over_no_input_channels_gives_zero_gradients_as_pytorch(n, shape):
    results = []
    for lib in (torch, lucid):
        lib.manual_seed(0)
        conv = getattr(lib.nn, f"Conv{n}d")(0, 8, 3, stride=2)
        x = lib.randn(*shape, requires_grad=True)
        out = conv(x)
        out.backward(lib.rand_like(out))
        results.append((tuple(out.shape), tuple(x.grad.shape), tuple(conv.weight.grad.shape),
                        conv.bias.grad.numpy().tolist()))
        bad = getattr(lib.nn, f"Conv{n}d")(0, 8, 3)
        assert "Given groups=1, weight" in error_of(lambda: bad(lib.randn(2, 1, *[4] * n)))[1]
    assert results[0] == results[1]
    assert results[1][3] == [0.0] * 8


def test_nn_functional_grad_is_the_nn_grad_module():
    assert F.grad is lucid.nn.grad
    assert torch.nn.functional.grad is torch.nn.grad
    x, w = np.random.default_rng(1).standard_normal((2, 3, 6)), np.random.default_rng(2).standard_normal((4, 3, 2))
    go = np.ones((2, 4, 5))
    expected = torch.nn.functional.grad.conv1d_weight(torch.tensor(x), w.shape, torch.tensor(go))
    np.testing.assert_allclose(F.grad.conv1d_weight(lucid.tensor(x), w.shape, lucid.tensor(go)).numpy(),
                               expected.numpy(), rtol=1e-10)


# ------------------------------------------------------------------------------------------------ to()
_TO_CALLS = [
    lambda L, x: x.to(L.float64, True), lambda L, x: x.to("cpu", L.float64, True, True), lambda L, x: x.to(None),
    lambda L, x: x.to(None, L.float64), lambda L, x: x.to(L.ones(1, dtype=L.int64)),
    lambda L, x: x.to(dtype=L.float64, device="cpu", non_blocking=True, copy=True),
    lambda L, x: x.to("cpu", True), lambda L, x: x.to(L.float64, dtype=L.float32), lambda L, x: x.to(object()),
    lambda L, x: x.to([]), lambda L, x: x.to("cpu", "cpu"), lambda L, x: x.to(foo=1),
    lambda L, x: x.to(L.ones(1), device="cpu"), lambda L, x: x.to("cpu", L.ones(1)),
    lambda L, x: x.to(L.float64, None), lambda L, x: x.to(L.float32, L.float32),
]


@pytest.mark.parametrize("call", _TO_CALLS)
def test_tensor_to_parses_pytorchs_overloads(call):
    def run(lib):
        try:
            return "ok", str(call(lib, lib.ones(2)).dtype).split(".")[-1]
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e).split(" - got")[0]
    assert run(lucid) == run(torch)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.Linear(2, 2).to(L.float64, True).weight, lambda L: L.nn.Linear(2, 2).to("cpu", copy=False),
    lambda L: L.nn.Linear(2, 2).to("cpu", L.float64, True, False), lambda L: L.nn.Linear(2, 2).to([]),
    lambda L: L.nn.Linear(2, 2).to({}, non_blocking=True), lambda L: L.nn.Linear(2, 2).to(None, True),
    lambda L: L.nn.Linear(2, 2).to(L.tensor(3), non_blocking=True),
])
def test_module_to_parses_as_pytorch(call):
    def run(lib):
        try:
            out = call(lib)
            return "ok", str(getattr(out, "dtype", "")).split(".")[-1]
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e).split(" - got")[0].split(", but got")[0]
    assert run(lucid) == run(torch)


@pytest.mark.parametrize("args, kwargs", [
    (("cpu",), {}), ((), dict(dtype="float64", device="cpu", non_blocking=True)), (("float64", True), {}),
    ((None,), {}), (("cpu", "float64", True, False), {}), (("cpu", True), {}),
])
def test_parse_to_matches_pytorchs(args, kwargs):
    def run(lib):
        a = tuple(getattr(lib, v) if v == "float64" else v for v in args)
        k = {n: getattr(lib, v) if v == "float64" else v for n, v in kwargs.items()}
        try:
            device, dtype, non_blocking, memory_format = lib._C._nn._parse_to(*a, **k)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__
        return (None if device is None else device.type, str(dtype).split(".")[-1], non_blocking, memory_format)
    assert run(ltorch) == run(torch)
    assert repr(ltorch._C._nn._parse_to(memory_format=ltorch.contiguous_format)[3]) == "torch.contiguous_format"


# ------------------------------------------------------------------------------------------------ embedding
def test_embedding_padding_row_gets_no_gradient_even_of_a_nan():
    """PyTorch's embedding backward skips padding_idx; 0 * NaN would make the padding row NaN."""
    w0 = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    grads = []
    for lib in (torch, lucid):
        idx = lib.tensor([[3, 3, 3], [1, 3, 2]])
        w = lib.tensor(w0, requires_grad=True)
        e = lib.nn.functional.embedding(idx, w, padding_idx=3)
        keep = idx.ne(3).to(lib.float32).unsqueeze(-1)
        mean = e.mul(keep).sum(1).div(keep.sum(1))  # NaN for the all-padding bag
        mean.masked_fill(idx.eq(3).all(-1).unsqueeze(-1), 0).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])
    assert not np.isnan(grads[1]).any()


@pytest.mark.parametrize("mode, padding_idx", [(0, -1), (1, -1), (1, 3), (2, 3), (2, -1)])
def test_native_embedding_bag_matches_pytorchs(mode, padding_idx):
    w = np.random.default_rng(0).standard_normal((4, 2))
    idx, off = [3, 1, 3, 0, 2], [0, 2, 2]
    expected = torch._embedding_bag(torch.tensor(w), torch.tensor(idx), torch.tensor(off), mode=mode,
                                    padding_idx=padding_idx)
    for fn in (ltorch._embedding_bag, ltorch._embedding_bag_forward_only):
        got = fn(lucid.tensor(w), lucid.tensor(idx), lucid.tensor(off), mode=mode, padding_idx=padding_idx)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12)


@pytest.mark.parametrize("w_shape, i_shape, o_shape", [((2, 6), (2, 0, 0, 6, 6), (2, 0, 0, 6, 6)),
                                                       ((2, 2), (2,), (2, 0, 0, 6, 6)), ((2, 2, 2), (2,), (2,))])
def test_native_embedding_bag_dimension_errors_match_pytorchs(w_shape, i_shape, o_shape):
    def run(lib, fn):
        return error_of(lambda: fn(lib.zeros(*w_shape, dtype=lib.float64), lib.full(i_shape, 1, dtype=lib.int64),
                                 lib.zeros(*o_shape, dtype=lib.int64)))
    assert run(ltorch, ltorch._embedding_bag) == run(torch, torch._embedding_bag)


# ------------------------------------------------------------------------------------------------ RNN
@pytest.mark.parametrize("mode", ["RNN", "GRU"])
@pytest.mark.parametrize("proj_size", [0, 10])
def test_rnn_and_gru_refuse_proj_size_as_pytorch(mode, proj_size):
    def make(lib):
        return error_of(lambda: getattr(lib.nn, mode)(30, 20, 2, proj_size=proj_size))
    assert make(lucid) == make(torch) == ("ValueError", "proj_size argument is only supported for LSTM, not RNN or GRU")
    assert error_of(lambda: getattr(lucid.nn, mode)(3, 4, foo=1))[0] == "TypeError"


@pytest.mark.parametrize("kwargs, name", [({}, "weight_ih_l0"), ({"proj_size": 4}, "weight_hr_l0")])
def test_lstm_flat_weights_follow_weight_norm_as_pytorch(kwargs, name):
    def kinds(lib):
        lstm = lib.nn.LSTM(8, 8, **kwargs)
        before = [isinstance(p, lib.nn.Parameter) for p in lstm._flat_weights]
        lstm = lib.nn.utils.weight_norm(lstm, name=name)
        normed = [isinstance(p, lib.nn.Parameter) for p in lstm._flat_weights]
        lstm = lib.nn.utils.remove_weight_norm(lstm, name=name)
        return before, normed, [isinstance(p, lib.nn.Parameter) for p in lstm._flat_weights], lstm._flat_weights_names
    assert kinds(lucid) == kinds(torch)


# ------------------------------------------------------------------------------------------------ torch._C, random
def test_c_pieces_hold_lucids_state():
    assert ltorch._C._get_privateuse1_backend_name() == torch._C._get_privateuse1_backend_name()
    saved = ltorch._C._get_mkldnn_enabled()
    try:
        ltorch._C._set_mkldnn_enabled(False)
        assert ltorch.backends.mkldnn.enabled is False and ltorch._C._get_mkldnn_enabled() is False
        with ltorch.backends.mkldnn.flags(enabled=True):
            assert ltorch._C._get_mkldnn_enabled() is True
    finally:
        ltorch._C._set_mkldnn_enabled(saved)


def test_random_module_forks_and_restores_the_generator():
    assert ltorch.random is lucid.random
    lucid.random.manual_seed(3)
    assert lucid.random.initial_seed() == 3
    with lucid.random.fork_rng():
        inside = lucid.rand(4).numpy()
    after = lucid.rand(4).numpy()
    np.testing.assert_array_equal(inside, after)  # the block's draws did not advance the generator
    state = lucid.random.get_rng_state()
    first = lucid.randn(3).numpy()
    lucid.random.set_rng_state(state)
    np.testing.assert_array_equal(lucid.randn(3).numpy(), first)
    with lucid.random.fork_rng(enabled=False):
        lucid.rand(1)
    assert not np.array_equal(lucid.randn(3).numpy(), first)  # not forked: the draw inside advanced it
    with pytest.raises(ZeroDivisionError), lucid.random.fork_rng():
        lucid.rand(1)
        raise ZeroDivisionError
    lucid.random.set_rng_state(state)
    with lucid.random.fork_rng():
        lucid.rand(5)
    np.testing.assert_array_equal(lucid.randn(3).numpy(), first)


@pytest.mark.parametrize("call", [
    lambda L: L.ones(size=(2, 3)), lambda L: L.zeros(size=[2, 3]), lambda L: L.empty(size=(2,)),
    lambda L: L.rand(size=(2, 3)), lambda L: L.randn(size=(1, 2), dtype=L.float64),
    lambda L: L.ones(1).new_ones(size=(2,)), lambda L: L.ones(1).new_zeros(size=(2, 2)),
    lambda L: L.ones(1).new_empty(size=(3,)), lambda L: L.randint(high=4, size=(2,)),
    lambda L: L.randint(4, size=(5,)), lambda L: L.ones(2, size=(2, 3)), lambda L: L.ones(1).new_ones(2, size=(2,)),
])
def test_factories_take_size_as_a_keyword_as_pytorch(call):
    def run(lib):
        try:
            out = call(lib)
            return tuple(out.shape), str(out.dtype).split(".")[-1]
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
    assert run(lucid) == run(torch)


# ------------------------------------------------------------------------------------------------ SparseAdam
def test_sparse_adam_matches_pytorch_over_steps_with_repeated_indices():
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((6, 3))
    tp, lp = torch.tensor(w0, requires_grad=True), lucid.tensor(w0, requires_grad=True)
    topt = torch.optim.SparseAdam([tp], lr=0.1, betas=(0.8, 0.9), maximize=True)
    lopt = lucid.optim.SparseAdam([lp], lr=0.1, betas=(0.8, 0.9), maximize=True)
    for step in range(4):
        idx = np.array([[1, 4, 1]]) if step % 2 == 0 else np.array([[0, 5]])
        vals = rng.standard_normal((idx.shape[1], 3))
        tp.grad = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (6, 3))
        lp.grad = lucid.sparse_coo_tensor(lucid.tensor(idx), lucid.tensor(vals), (6, 3))
        topt.step()
        lopt.step()
        np.testing.assert_allclose(lp.detach().numpy(), tp.detach().numpy(), rtol=1e-12, atol=1e-12)
        for key in ("exp_avg", "exp_avg_sq"):
            np.testing.assert_allclose(lopt.state[lp][key].numpy(), topt.state[tp][key].numpy(), rtol=1e-12)
        assert lopt.state[lp]["step"] == topt.state[tp]["step"] == step + 1
    assert 2 not in idx and (lp.detach().numpy()[2] == w0[2]).all()  # row 2 never held a gradient


def test_sparse_adam_with_an_empty_sparse_gradient_changes_nothing():
    p = lucid.randn(5, 1, requires_grad=True)
    before = p.detach().numpy().copy()
    opt = lucid.optim.SparseAdam([p], lr=1e-5)
    p.grad = lucid.sparse_coo_tensor(lucid.empty(1, 0), lucid.empty(0, 1), (5, 1))
    opt.step()
    np.testing.assert_array_equal(p.detach().numpy(), before)


@pytest.mark.parametrize("call", [
    lambda L, p: L.optim.SparseAdam([p], lr=0.0), lambda L, p: L.optim.SparseAdam([p], eps=0.0),
    lambda L, p: L.optim.SparseAdam([p], betas=(1.0, 0.9)), lambda L, p: L.optim.SparseAdam([p], betas=(0.9, -0.1)),
    lambda L, p: L.optim.SparseAdam([p.to(L.complex64)]),
])
def test_sparse_adam_argument_errors_match_pytorchs(call):
    assert error_of(lambda: call(lucid, lucid.zeros(2))) == error_of(lambda: call(torch, torch.zeros(2)))


def test_dense_gradient_errors_and_sparse_gradients_on_dense_optimizers():
    p = lucid.zeros(3, requires_grad=True)
    p.grad = lucid.ones(3)
    t = torch.zeros(3, requires_grad=True)
    t.grad = torch.ones(3)
    expected = error_of(lambda: torch.optim.SparseAdam([t]).step())
    assert error_of(lambda: lucid.optim.SparseAdam([p]).step()) == expected
    p.grad = lucid.sparse_coo_tensor(lucid.tensor([[0]]), lucid.tensor([1.0]), (3,))
    before = p.detach().numpy().copy()
    assert error_of(lambda: lucid.optim.Adam([p]).step()) == ("RuntimeError", "Adam does not support sparse gradients")
    np.testing.assert_array_equal(p.detach().numpy(), before)
    with pytest.raises(RuntimeError, match="attempting to assign a gradient of size"):
        p.grad = lucid.sparse_coo_tensor(lucid.tensor([[0]]), lucid.tensor([1.0]), (4,))


@pytest.mark.parametrize("clear", [lambda L, p: L.optim.SparseAdam([p]).zero_grad(set_to_none=False),
                                   lambda L, p: p.zero_grad(set_to_none=False) if L is lucid else p.grad.zero_(),
                                   lambda L, p: _holder(L, p).zero_grad(set_to_none=False)])
def test_zero_grad_keeps_a_sparse_gradient_sparse_and_empty_as_pytorch(clear):
    def run(lib):
        p = lib.nn.Parameter(lib.zeros(4, 2))
        p.grad = lib.sparse_coo_tensor(lib.tensor([[1, 3]]), lib.ones(2, 2), (4, 2))
        clear(lib, p)
        return p.grad.is_sparse, p.grad._nnz(), tuple(p.grad.shape), p.grad.to_dense().numpy().tolist()
    assert run(lucid) == run(torch)


def _holder(lib, p):
    m = lib.nn.Module()
    m.p = p
    return m
