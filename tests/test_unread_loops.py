"""Loops that write tensors in place under no_grad and never read a value (a hand-written update, as the README
shows) run in flat memory: lucid evaluates the pending writes itself, so the lazy chains stay short and the first
read afterwards has little left to compute."""
import mlx.core as mx
import numpy as np

import lucid
from lucid import _tensor


def _params():
    lucid.manual_seed(0)
    x, y = lucid.randn(32, 4), lucid.randn(32, 1)
    params = [lucid.randn(4, 16).requires_grad_(), lucid.zeros(16, requires_grad=True),
              lucid.randn(16, 1).requires_grad_(), lucid.zeros(1, requires_grad=True)]
    return x, y, params


def _step(x, y, params, lr=0.01):
    w1, b1, w2, b2 = params
    loss = (((x @ w1 + b1).tanh() @ w2 + b2 - y) ** 2).mean()
    loss.backward()
    with lucid.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None
    return loss


def test_hand_written_update_loop_runs_in_flat_memory():
    x, y, params = _params()
    for step in range(2000):
        loss = _step(x, y, params)
        if step == 100:
            at_100 = mx.get_active_memory()
        # the pending writes never span more than two steps (a proxy for the work a first read would face)
        assert _tensor._pending.writes <= 2 * len(params)
    grown = mx.get_active_memory() - at_100
    # before: every step's scalars and graph stayed alive, about 36 bytes a step here (72 KB over the loop)
    assert grown < 16 * 1024, grown
    assert np.isfinite(loss.item())


def test_unread_loop_gives_the_values_of_a_loop_that_reads_every_step():
    x, y, unread = _params()
    for _ in range(300):
        _step(x, y, unread)
    x, y, read = _params()
    for _ in range(300):
        _step(x, y, read).item()
    for a, b in zip(unread, read):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_a_loop_of_writes_alone_is_evaluated_in_bounded_chunks():
    t = lucid.zeros(2)
    with lucid.no_grad():
        for _ in range(3 * _tensor.MAX_PENDING_WRITES + 5):
            t += 1
            assert _tensor._pending.writes < _tensor.MAX_PENDING_WRITES
    assert t.tolist() == [3 * _tensor.MAX_PENDING_WRITES + 5] * 2


def test_reading_a_value_evaluates_pending_writes_with_it(monkeypatch):
    t = lucid.zeros(3)
    with lucid.no_grad():
        t += 1
    evaluated = []
    real_eval = mx.eval
    monkeypatch.setattr(mx, "eval", lambda arrays: evaluated.append(list(arrays)) or real_eval(arrays))
    assert (t * 2).sum().item() == 6.0
    assert len(evaluated) == 1 and any(a is t._storage.data for a in evaluated[0])  # one evaluation for both
    assert _tensor._pending.refs == {}


def test_training_with_an_optimizer_has_no_extra_evaluation(monkeypatch):
    model = lucid.nn.Sequential(lucid.nn.Linear(4, 8), lucid.nn.BatchNorm1d(8), lucid.nn.Linear(8, 1))
    opt = lucid.optim.SGD(model.parameters(), lr=0.1)
    x = lucid.randn(16, 4)
    calls = []
    real_eval, real_async = mx.eval, mx.async_eval
    monkeypatch.setattr(mx, "eval", lambda arrays: calls.append("eval") or real_eval(arrays))
    monkeypatch.setattr(mx, "async_eval", lambda arrays: calls.append("async") or real_async(arrays))
    for _ in range(5):
        opt.zero_grad()
        model(x).pow(2).mean().backward()  # BatchNorm writes its running stats under no_grad
        opt.step()
    assert calls == ["eval"] * 5  # the step's own evaluation, nothing else
