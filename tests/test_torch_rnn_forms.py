"""PyTorch's top-level recurrent forms (torch.rnn_tanh/rnn_relu/lstm/gru with ATen's flat weights, both overloads,
and the four cells) and torch.ctc_loss: values against PyTorch's own functions from the same weights, gradients by
gradcheck in float64."""
import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck

torch = pytest.importorskip("torch")


def L(t):
    return lucid.tensor(t.detach().numpy())


def close(mine, ref):
    for a, b in zip(mine, ref):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=2e-6)


CASES = [(mode, kw) for mode in ("rnn_tanh", "rnn_relu", "lstm", "gru")
         for kw in (dict(num_layers=2, bidirectional=True), dict(bias=False, batch_first=True))] + \
        [("lstm", dict(proj_size=3, num_layers=2))]


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")  # PyTorch's own
@pytest.mark.parametrize("mode, kw", CASES, ids=[f"{m}-{'-'.join(kw)}" for m, kw in CASES])
def test_flat_weight_forms_match_pytorch(mode, kw):
    torch.manual_seed(0)
    if mode.startswith("rnn"):
        m = torch.nn.RNN(4, 5, nonlinearity=mode[4:], **kw)
    else:
        m = (torch.nn.LSTM if mode == "lstm" else torch.nn.GRU)(4, 5, **kw)
    x = torch.randn(2, 6, 4) if m.batch_first else torch.randn(6, 2, 4)
    d = 2 if m.bidirectional else 1
    h0 = torch.randn(m.num_layers * d, 2, m.proj_size or 5)
    hx = [h0, torch.randn(m.num_layers * d, 2, 5)] if mode == "lstm" else h0
    params = [p.detach() for p in m._flat_weights]
    args = (m.bias, m.num_layers, 0.0, False, m.bidirectional, m.batch_first)
    ref = getattr(torch, mode)(x, hx, params, *args)
    mine = getattr(lucid, mode)(L(x), [L(h) for h in hx] if mode == "lstm" else L(hx), [L(p) for p in params], *args)
    assert len(mine) == len(ref)
    close(mine, ref)


def test_packed_overload_matches_pytorch():
    torch.manual_seed(1)
    m = torch.nn.LSTM(4, 5)
    pk = torch.nn.utils.rnn.pack_padded_sequence(torch.randn(5, 3, 4), [5, 3, 2])
    hx = [torch.zeros(1, 3, 5), torch.zeros(1, 3, 5)]
    params = [p.detach() for p in m._flat_weights]
    ref = torch.lstm(pk.data, pk.batch_sizes, hx, params, True, 1, 0.0, False, False)
    mine = lucid.lstm(L(pk.data), lucid.tensor(pk.batch_sizes.numpy()), [L(h) for h in hx], [L(p) for p in params],
                      True, 1, 0.0, False, False)
    close(mine, ref)


@pytest.mark.parametrize("name, cell", [("rnn_tanh_cell", "RNNCell"), ("rnn_relu_cell", "RNNCell"),
                                        ("lstm_cell", "LSTMCell"), ("gru_cell", "GRUCell")])
def test_cells_match_pytorch(name, cell):
    torch.manual_seed(2)
    c = getattr(torch.nn, cell)(4, 5)
    x = torch.randn(2, 4)
    hx = (torch.randn(2, 5), torch.randn(2, 5)) if name == "lstm_cell" else torch.randn(2, 5)
    lhx = [L(h) for h in hx] if name == "lstm_cell" else L(hx)
    w = (c.weight_ih, c.weight_hh, c.bias_ih, c.bias_hh)
    for k in (4, 2):  # with and without biases
        ref = getattr(torch, name)(x, hx, *w[:k])
        mine = getattr(lucid, name)(L(x), lhx, *(L(t) for t in w[:k]))
        close(mine if name == "lstm_cell" else [mine], ref if name == "lstm_cell" else [ref])


def test_forms_are_differentiable():
    rng = np.random.default_rng(0)
    t = lambda *s: lucid.tensor(rng.normal(size=s), dtype=lucid.float64, requires_grad=True)  # noqa: E731
    x, h, c = t(3, 2, 2), t(1, 2, 3), t(1, 2, 3)
    w_ih, w_hh, b_ih, b_hh = t(12, 2), t(12, 3), t(12), t(12)
    assert gradcheck(lambda *a: lucid.lstm(a[0], [a[1], a[2]], list(a[3:]), True, 1, 0.0, False, False, False),
                     (x, h, c, w_ih, w_hh, b_ih, b_hh))
    g_ih, g_hh = t(9, 2), t(9, 3)
    assert gradcheck(lambda *a: lucid.gru_cell(*a), (x[0], h[0], g_ih, g_hh, t(9), t(9)))


def test_ctc_loss_integer_reduction_matches_pytorch():
    torch.manual_seed(3)
    lp = torch.randn(6, 2, 5).log_softmax(-1)
    tg = torch.tensor([[1, 2], [3, 3]])
    for red in (0, 1, 2):
        ref = torch.ctc_loss(lp, tg, [6, 5], [2, 2], 0, red)
        np.testing.assert_allclose(lucid.ctc_loss(L(lp), L(tg), [6, 5], [2, 2], 0, red).numpy(), ref.numpy(),
                                   rtol=1e-5)
    with pytest.raises(RuntimeError, match="3 is not a valid value for reduction"):
        lucid.ctc_loss(L(lp), L(tg), [6, 5], [2, 2], 0, 3)
