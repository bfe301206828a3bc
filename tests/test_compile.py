"""lucid.compile: a PyTorch-style training step compiled into one MLX graph gives the eager results."""
import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F


def _params(model):
    return [np.array(v.detach()) for v in model.state_dict().values()]


def _train(make_model, make_opt, data, compiled: bool, steps: int = 20):
    model = make_model()
    opt = make_opt(model)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    f = lucid.compile(step) if compiled else step
    losses = [f(*data(i)).item() for i in range(steps)]
    return model, losses


def _assert_same(make_model, make_opt, data):
    eager, l_e = _train(make_model, make_opt, data, compiled=False)
    comp, l_c = _train(make_model, make_opt, data, compiled=True)
    np.testing.assert_allclose(l_c, l_e, rtol=1e-4, atol=1e-5)
    for a, b in zip(_params(eager), _params(comp)):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


lucid.manual_seed(0)
X = lucid.randn(40, 8)
Y = lucid.randint(0, 3, (40,))
IMG = lucid.randn(20, 1, 8, 8)
IMG_Y = lucid.randint(0, 3, (20,))


def mlp():
    lucid.manual_seed(1)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))


def cnn():
    lucid.manual_seed(1)
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(64, 3))


def test_mlp_with_adam_matches_eager():
    _assert_same(mlp, lambda m: lucid.optim.Adam(m.parameters(), lr=1e-2), lambda i: (X[:32], Y[:32]))


def test_cnn_with_batchnorm_matches_eager_including_running_stats():
    _assert_same(cnn, lambda m: lucid.optim.SGD(m.parameters(), lr=0.05, momentum=0.9), lambda i: (IMG, IMG_Y))


def test_smaller_last_batch_retraces_and_matches_eager():
    # batches of 16, 16, 8 (the last one smaller), repeated: a new shape is a new trace
    def data(i):
        k = i % 3
        return (X[16 * k:16 * k + 16], Y[16 * k:16 * k + 16]) if k < 2 else (X[32:40], Y[32:40])
    _assert_same(mlp, lambda m: lucid.optim.AdamW(m.parameters(), lr=1e-2), data)


def test_lr_scheduler_changes_are_seen_without_retracing():
    def make_opt(m):
        opt = lucid.optim.SGD(m.parameters(), lr=0.1)
        make_opt.sched = lucid.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)
        return opt

    results = []
    for compiled in (False, True):
        model = mlp()
        opt = make_opt(model)
        sched = make_opt.sched

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        f = lucid.compile(step) if compiled else step
        for _ in range(8):
            f(X, Y)
            sched.step()
        results.append(_params(model))
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-6)


def test_train_eval_switch_and_inference_function():
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5), nn.Linear(8, 3))
    infer = lucid.compile(lambda x: model(x))
    model.eval()
    expected = model(X).detach().numpy()
    for _ in range(3):
        np.testing.assert_allclose(infer(X).detach().numpy(), expected, rtol=1e-6)
    model.train()
    a, b, c = (infer(X).detach().numpy() for _ in range(3))  # dropout: new masks each call
    assert not np.allclose(b, c)
    model.eval()
    np.testing.assert_allclose(infer(X).detach().numpy(), expected, rtol=1e-6)


def test_value_dependent_control_flow_is_a_clear_error():
    def branchy(x):
        s = (x * 2).sum()
        return s if s > 0 else -s

    f = lucid.compile(branchy, state=[])
    f(X)  # the first call of a configuration runs eagerly
    with pytest.raises(RuntimeError, match="read a tensor's value.*lucid.where"):
        f(X)


def test_a_failed_trace_leaves_parameters_grads_and_rng_usable():
    model = mlp()
    x = lucid.randn(4, 8)
    model(x).sum().backward()
    before = _params(model)

    def branchy(inp):
        out = model(inp).sum()
        out.backward()
        return out if out > 0 else -out

    f = lucid.compile(branchy)
    f(x)
    with pytest.raises(RuntimeError, match="read a tensor's value"):
        f(x)
    assert lucid.rand(2).shape == (2,)  # the random key is a real array again
    for a, b in zip(before, _params(model)):
        np.testing.assert_array_equal(a, b)
    assert all(p.grad is not None for p in model.parameters())
