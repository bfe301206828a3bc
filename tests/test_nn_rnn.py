"""RNN, LSTM, GRU and their cells: PyTorch's parameter names, shapes and initialisation, forward against the
recurrences written out in numpy (float64), gradients by finite differences, and PyTorch as an optional oracle."""
import math
import warnings

import numpy as np
import pytest

import lucid
from lucid import nn
from lucid.func import functional_call
from tests.helpers import check_grads, leaf

F64 = lucid.float64


# ---------------------------------------------------------------------------------------------------- numpy reference
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_step(mode, x, state, p):
    """One step of the recurrence, PyTorch's formulas; ``state`` is (h,) or (h, c)."""
    h = state[0]
    gi = x @ p["weight_ih"].T + p.get("bias_ih", 0)
    gh = h @ p["weight_hh"].T + p.get("bias_hh", 0)
    if mode == "tanh":
        return (np.tanh(gi + gh),)
    if mode == "relu":
        return (np.maximum(gi + gh, 0),)
    if mode == "lstm":
        i, f, g, o = np.split(gi + gh, 4, -1)
        c = _sigmoid(f) * state[1] + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        return (h @ p["weight_hr"].T if "weight_hr" in p else h), c
    r_i, z_i, n_i = np.split(gi, 3, -1)
    r_h, z_h, n_h = np.split(gh, 3, -1)
    r, z = _sigmoid(r_i + r_h), _sigmoid(z_i + z_h)
    n = np.tanh(n_i + r * n_h)
    return ((1 - z) * n + z * h,)


def np_rnn(module, mode, x, states):
    """The multi-layer (bidirectional) recurrence over time-major x (L, N, I); states: list of (layers*D, N, *)."""
    params = {n: p.detach().numpy() for n, p in module.named_parameters()}
    num_directions = 2 if module.bidirectional else 1
    finals = [[] for _ in states]
    for layer in range(module.num_layers):
        outs = []
        for d in range(num_directions):
            suffix = f"_l{layer}" + ("_reverse" if d else "")
            p = {n[: -len(suffix)]: v for n, v in params.items() if n.endswith(suffix)}
            state = tuple(s[layer * num_directions + d] for s in states)
            ys = [None] * len(x)
            for t in (reversed(range(len(x))) if d else range(len(x))):
                state = np_step(mode, x[t], state, p)
                ys[t] = state[0]
            outs.append(np.stack(ys))
            for i, s in enumerate(state):
                finals[i].append(s)
        x = np.concatenate(outs, -1)
    return x, [np.stack(f) for f in finals]


def _np(t):
    return t.detach().numpy()


def _zero_states(module, batch):
    d = module.num_layers * (2 if module.bidirectional else 1)
    h = np.zeros((d, batch, module.proj_size or module.hidden_size))
    return [h, np.zeros((d, batch, module.hidden_size))] if module.mode == "LSTM" else [h]


# ---------------------------------------------------------------------------------------------------- parameters
def test_lstm_parameter_names_shapes_and_order_match_pytorch():
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    expected = [
        ("weight_ih_l0", (20, 3)), ("weight_hh_l0", (20, 2)), ("bias_ih_l0", (20,)), ("bias_hh_l0", (20,)),
        ("weight_hr_l0", (2, 5)),
        ("weight_ih_l0_reverse", (20, 3)), ("weight_hh_l0_reverse", (20, 2)), ("bias_ih_l0_reverse", (20,)),
        ("bias_hh_l0_reverse", (20,)), ("weight_hr_l0_reverse", (2, 5)),
        ("weight_ih_l1", (20, 4)), ("weight_hh_l1", (20, 2)), ("bias_ih_l1", (20,)), ("bias_hh_l1", (20,)),
        ("weight_hr_l1", (2, 5)),
        ("weight_ih_l1_reverse", (20, 4)), ("weight_hh_l1_reverse", (20, 2)), ("bias_ih_l1_reverse", (20,)),
        ("bias_hh_l1_reverse", (20,)), ("weight_hr_l1_reverse", (2, 5)),
    ]
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == expected
    assert list(m.state_dict()) == [n for n, _ in expected]
    assert [[tuple(p.shape) for p in ws] for ws in m.all_weights][0] == [s for _, s in expected[:5]]


def test_gru_and_rnn_parameter_shapes_without_bias():
    assert [(n, tuple(p.shape)) for n, p in nn.GRU(3, 4, bias=False).named_parameters()] == [
        ("weight_ih_l0", (12, 3)), ("weight_hh_l0", (12, 4))]
    assert [(n, tuple(p.shape)) for n, p in nn.RNN(3, 4, 2).named_parameters()] == [
        ("weight_ih_l0", (4, 3)), ("weight_hh_l0", (4, 4)), ("bias_ih_l0", (4,)), ("bias_hh_l0", (4,)),
        ("weight_ih_l1", (4, 4)), ("weight_hh_l1", (4, 4)), ("bias_ih_l1", (4,)), ("bias_hh_l1", (4,))]


def test_cell_parameters():
    assert [(n, tuple(p.shape)) for n, p in nn.LSTMCell(3, 4).named_parameters()] == [
        ("weight_ih", (16, 3)), ("weight_hh", (16, 4)), ("bias_ih", (16,)), ("bias_hh", (16,))]
    cell = nn.GRUCell(3, 4, bias=False)
    assert [n for n, _ in cell.named_parameters()] == ["weight_ih", "weight_hh"]
    assert cell.bias_ih is None and cell.bias_hh is None


@pytest.mark.parametrize("module", [nn.LSTM(6, 16, 2, bidirectional=True), nn.GRUCell(4, 16)])
def test_initialisation_is_uniform_within_one_over_sqrt_hidden(module):
    bound = 1 / math.sqrt(16)
    values = np.concatenate([_np(p).ravel() for p in module.parameters()])
    assert np.all(np.abs(values) <= bound)
    assert values.std() > bound / 3  # spread over the range (U(-b, b) has std b / sqrt(3))


def test_repr_like_pytorch():
    assert repr(nn.RNN(3, 4, nonlinearity="relu")) == "RNN(3, 4)"
    assert repr(nn.LSTM(3, 4, 2, proj_size=2, dropout=0.5, bidirectional=True, batch_first=True)) == (
        "LSTM(3, 4, proj_size=2, num_layers=2, batch_first=True, dropout=0.5, bidirectional=True)")
    assert repr(nn.GRU(3, 4, bias=False)) == "GRU(3, 4, bias=False)"
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == "RNNCell(3, 4, nonlinearity=relu)"
    assert repr(nn.LSTMCell(3, 4, bias=False)) == "LSTMCell(3, 4, bias=False)"


# ---------------------------------------------------------------------------------------------------- forward
CASES = [
    (nn.RNN, "tanh", dict()),
    (nn.RNN, "relu", dict(nonlinearity="relu", num_layers=2, bidirectional=True)),
    (nn.LSTM, "lstm", dict(num_layers=2, bidirectional=True)),
    (nn.LSTM, "lstm", dict(proj_size=2, num_layers=2)),
    (nn.GRU, "gru", dict(num_layers=2, bidirectional=True)),
    (nn.GRU, "gru", dict(bias=False)),
]


@pytest.mark.parametrize("cls,mode,kwargs", CASES)
def test_forward_matches_numpy_recurrence(cls, mode, kwargs):
    m = cls(3, 4, dtype=F64, **kwargs)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 2, 3))
    states = [s + rng.standard_normal(s.shape) for s in _zero_states(m, 2)]
    hx = tuple(lucid.tensor(s) for s in states)
    out, hidden = m(lucid.tensor(x), hx if mode == "lstm" else hx[0])
    ref_out, ref_states = np_rnn(m, mode, x, states)
    np.testing.assert_allclose(_np(out), ref_out, atol=1e-12)
    for got, want in zip(hidden if mode == "lstm" else (hidden,), ref_states):
        np.testing.assert_allclose(_np(got), want, atol=1e-12)


@pytest.mark.parametrize("cls,mode,kwargs", CASES[::2])
def test_zero_initial_state_by_default(cls, mode, kwargs):
    m = cls(3, 4, dtype=F64, **kwargs)
    x = np.random.default_rng(2).standard_normal((4, 3, 3))
    out, _ = m(lucid.tensor(x))
    np.testing.assert_allclose(_np(out), np_rnn(m, mode, x, _zero_states(m, 3))[0], atol=1e-12)


def test_batch_first_is_time_major_transposed():
    m = nn.LSTM(3, 4, 2, bidirectional=True, dtype=F64)
    mb = nn.LSTM(3, 4, 2, bidirectional=True, batch_first=True, dtype=F64)
    mb.load_state_dict(m.state_dict())
    x = leaf(5, 2, 3, requires_grad=False)
    out, (h, c) = m(x)
    out_b, (h_b, c_b) = mb(x.transpose(0, 1))
    assert tuple(out_b.shape) == (2, 5, 8)
    np.testing.assert_allclose(_np(out_b), _np(out).transpose(1, 0, 2), atol=1e-12)
    np.testing.assert_allclose(_np(h_b), _np(h), atol=1e-12)  # the states stay (layers * D, N, H)
    np.testing.assert_allclose(_np(c_b), _np(c), atol=1e-12)


@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM, nn.GRU])
def test_unbatched_input_is_a_batch_of_one(cls):
    m = cls(3, 4, 2, dtype=F64)
    x = leaf(5, 3, requires_grad=False)
    out, hidden = m(x)
    out1, hidden1 = m(x.unsqueeze(1))
    assert tuple(out.shape) == (5, 4)
    np.testing.assert_allclose(_np(out), _np(out1.squeeze(1)), atol=1e-12)
    for h, h1 in zip(hidden if cls is nn.LSTM else (hidden,), hidden1 if cls is nn.LSTM else (hidden1,)):
        assert tuple(h.shape) == (2, 4)
        np.testing.assert_allclose(_np(h), _np(h1.squeeze(1)), atol=1e-12)
    out2, _ = m(x, hidden)  # unbatched states are (layers * D, H)
    assert tuple(out2.shape) == (5, 4)


def test_output_and_state_shapes():
    out, (h, c) = nn.LSTM(3, 6, 3, bidirectional=True, proj_size=2)(lucid.randn(7, 4, 3))
    assert (tuple(out.shape), tuple(h.shape), tuple(c.shape)) == ((7, 4, 4), (6, 4, 2), (6, 4, 6))
    out, h = nn.GRU(3, 6, batch_first=True)(lucid.randn(4, 7, 3))
    assert (tuple(out.shape), tuple(h.shape)) == ((4, 7, 6), (1, 4, 6))


def test_dropout_between_layers_only_in_training():
    m = nn.GRU(3, 8, num_layers=3, dropout=0.5, dtype=F64)
    x = leaf(4, 2, 3, requires_grad=False)
    m.eval()
    ref = np_rnn(m, "gru", _np(x), _zero_states(m, 2))[0]
    np.testing.assert_allclose(_np(m(x)[0]), ref, atol=1e-12)
    m.train()
    assert not np.allclose(_np(m(x)[0]), ref)


def test_dropout_with_one_layer_warns_and_bad_dropout_raises():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.LSTM(3, 4, dropout=0.2)
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.LSTM(3, 4, dropout=1.5)


def test_constructor_errors():
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.GRU(3, 0)
    with pytest.raises(TypeError, match="input_size should be of type int"):
        nn.GRU(3.0, 4)


def test_forward_errors():
    m = nn.LSTM(3, 4)
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. Expected 3, got 2"):
        m(lucid.randn(5, 2, 2))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 2, 4\), got \[1, 3, 4\]"):
        m(lucid.randn(5, 2, 3), (lucid.zeros(1, 3, 4), lucid.zeros(1, 2, 4)))
    with pytest.raises(RuntimeError, match="hx and cx should also be 3-D"):
        m(lucid.randn(5, 2, 3), (lucid.zeros(2, 4), lucid.zeros(2, 4)))
    with pytest.raises(ValueError, match="Expected input to be 2D or 3D, got 4D"):
        m(lucid.randn(1, 5, 2, 3))
    with pytest.raises(RuntimeError, match="Expected hidden size \\(1, 2, 4\\), got \\[2, 2, 4\\]"):
        nn.GRU(3, 4)(lucid.randn(5, 2, 3), lucid.zeros(2, 2, 4))
    with pytest.raises(ValueError, match="does not match weight dtype"):
        nn.GRU(3, 4)(lucid.randn(5, 2, 3, dtype=F64))


# ---------------------------------------------------------------------------------------------------- cells
@pytest.mark.parametrize("cls,mode,kwargs", [(nn.RNNCell, "tanh", {}), (nn.RNNCell, "relu", dict(nonlinearity="relu")),
                                             (nn.LSTMCell, "lstm", {}), (nn.GRUCell, "gru", {}),
                                             (nn.GRUCell, "gru", dict(bias=False))])
def test_cells_match_numpy_step(cls, mode, kwargs):
    cell = cls(3, 4, dtype=F64, **kwargs)
    p = {n: _np(v) for n, v in cell.named_parameters()}
    rng = np.random.default_rng(3)
    x, h, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    state = (h, c) if mode == "lstm" else (h,)
    got = cell(lucid.tensor(x), tuple(lucid.tensor(s) for s in state) if mode == "lstm" else lucid.tensor(h))
    want = np_step(mode, x, state, p)
    for g, w in zip(got if mode == "lstm" else (got,), want):
        np.testing.assert_allclose(_np(g), w, atol=1e-12)
    zero = cell(lucid.tensor(x))  # the state defaults to zeros
    want0 = np_step(mode, x, tuple(np.zeros_like(s) for s in state), p)
    np.testing.assert_allclose(_np(zero[0] if mode == "lstm" else zero), want0[0], atol=1e-12)
    single = cell(lucid.tensor(x[0]))  # unbatched (H_in,)
    assert tuple((single[0] if mode == "lstm" else single).shape) == (4,)
    np.testing.assert_allclose(_np(single[0] if mode == "lstm" else single), want0[0][0], atol=1e-12)


def test_lstm_layer_equals_its_cell_unrolled():
    layer = nn.LSTM(3, 4, dtype=F64)
    cell = nn.LSTMCell(3, 4, dtype=F64)
    cell.load_state_dict({k[:-3]: v for k, v in layer.state_dict().items()})  # weight_ih_l0 -> weight_ih
    x = leaf(5, 2, 3, requires_grad=False)
    out, (h, c) = layer(x)
    state = None
    for t in range(5):
        state = cell(x[t], state)
        np.testing.assert_allclose(_np(state[0]), _np(out[t]), atol=1e-12)
    np.testing.assert_allclose(_np(state[1]), _np(c[0]), atol=1e-12)


# ---------------------------------------------------------------------------------------------------- gradients
def test_lstm_gradcheck_inputs_and_initial_states():
    m = nn.LSTM(2, 3, bidirectional=True, dtype=F64)
    x, h0, c0 = leaf(3, 1, 2), leaf(2, 1, 3, seed=1), leaf(2, 1, 3, seed=2)

    def f(x, h0, c0):
        out, (h, c) = m(x, (h0, c0))
        return out, h, c

    check_grads(f, x, h0, c0, second=False)


@pytest.mark.parametrize("cls,name", [(nn.GRU, "weight_hh_l0"), (nn.RNN, "weight_ih_l1"),
                                      (nn.LSTM, "weight_hr_l0")])
def test_gradcheck_with_respect_to_weights(cls, name):
    kwargs = dict(proj_size=2) if cls is nn.LSTM else dict(num_layers=2) if cls is nn.RNN else {}
    m = cls(2, 3, dtype=F64, **kwargs)
    x = leaf(2, 1, 2)
    w = leaf(*getattr(m, name).shape, seed=4)

    def f(x, w):
        return functional_call(m, {name: w}, (x,))[0]

    check_grads(f, x, w, second=cls is nn.GRU)


def test_backward_reaches_every_parameter():
    m = nn.LSTM(3, 4, 2, bidirectional=True)
    out, (h, c) = m(lucid.randn(4, 2, 3))
    (out.sum() + h.sum() + c.sum()).backward()
    assert all(p.grad is not None and np.abs(_np(p.grad)).sum() > 0 for p in m.parameters())


# ---------------------------------------------------------------------------------------------------- PyTorch oracle
@pytest.mark.parametrize("name,kwargs", [("RNN", dict(num_layers=2, bidirectional=True, nonlinearity="relu")),
                                         ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
                                         ("LSTM", dict(proj_size=2)),
                                         ("GRU", dict(num_layers=2, bidirectional=True))])
def test_matches_pytorch_outputs_and_gradients(name, kwargs):
    torch = pytest.importorskip("torch")
    tm = getattr(torch.nn, name)(3, 4, dtype=torch.float64, **kwargs)
    lm = getattr(nn, name)(3, 4, dtype=F64, **kwargs)
    assert [n for n, _ in tm.named_parameters()] == [n for n, _ in lm.named_parameters()]
    assert repr(tm) == repr(lm)
    lm.load_state_dict({k: v.numpy() for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 5, 3) if kwargs.get("batch_first") else (5, 2, 3))
    tx, lx = torch.tensor(x, requires_grad=True), lucid.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # oneDNN has no projections: PyTorch warns that it falls back
        t_out, t_hidden = tm(tx)
    l_out, l_hidden = lm(lx)
    t_hidden = t_hidden if isinstance(t_hidden, tuple) else (t_hidden,)
    l_hidden = l_hidden if isinstance(l_hidden, tuple) else (l_hidden,)
    np.testing.assert_allclose(_np(l_out), t_out.detach().numpy(), atol=1e-12)
    for a, b in zip(l_hidden, t_hidden):
        np.testing.assert_allclose(_np(a), b.detach().numpy(), atol=1e-12)
    w = rng.standard_normal(tuple(t_out.shape))
    ((t_out * torch.tensor(w)).sum() + sum(h.sum() for h in t_hidden)).backward()
    ((l_out * lucid.tensor(w)).sum() + sum(h.sum() for h in l_hidden)).backward()
    np.testing.assert_allclose(_np(lx.grad), tx.grad.numpy(), atol=1e-10)
    for (n, tp), lp in zip(tm.named_parameters(), lm.parameters()):
        np.testing.assert_allclose(_np(lp.grad), tp.grad.numpy(), atol=1e-10, err_msg=n)


# -------------------------------------------------------------------------- LSTM: higher orders, float32, lucid.compile
def test_lstm_second_derivative_through_time():
    m = nn.LSTM(2, 3, dtype=F64)
    check_grads(lambda x, h0, c0: m(x, (h0, c0))[0], leaf(3, 1, 2), leaf(1, 1, 3, seed=1), leaf(1, 1, 3, seed=2))


def test_lstm_float32_agrees_with_float64_and_with_lucid_compile():
    """A two-layer LSTM's loss and gradients in float32 against float64, eagerly and traced by lucid.compile."""
    lucid.manual_seed(0)
    m64 = nn.LSTM(3, 5, 2, dtype=F64)
    m32 = nn.LSTM(3, 5, 2)
    m32.load_state_dict({k: v.float() for k, v in m64.state_dict().items()})
    x = np.random.default_rng(7).uniform(-1, 1, (6, 2, 3))

    def grads(m, dtype):
        m.zero_grad()
        out, (h, c) = m(lucid.tensor(x, dtype=dtype))
        loss = (out * out).sum() + (c * h).sum()
        loss.backward()
        return [loss.detach()] + [p.grad.clone() for p in m.parameters()]

    want = [_np(g) for g in grads(m64, F64)]
    eager = [_np(g) for g in grads(m32, lucid.float32)]
    compiled = [_np(g) for g in lucid.compile(lambda: grads(m32, lucid.float32), state=[m32])()]
    for a, b, w in zip(eager, compiled, want):
        np.testing.assert_allclose(a, w, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
