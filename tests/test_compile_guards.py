"""lucid.compile retraces when a Python value the step reads changes (a flag, the epoch, a module attribute), and
every compiled call equals the eager step run from the same state."""
import functools
from types import SimpleNamespace

import numpy as np
import pytest

import lucid
import lucid._compile as _compile
import lucid.nn as nn
import lucid.nn.functional as F

lucid.manual_seed(0)
X = lucid.randn(16, 8)
Y = lucid.randint(0, 3, (16,))


def _params(model):
    return [np.array(v.detach()) for v in model.state_dict().values()]


def _mlp():
    lucid.manual_seed(1)
    return nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.1), nn.Linear(16, 3))


def _traces(f) -> int:
    return sum(1 for entry in f.cache.values() if entry != "seen")


def _compare(build, settings):
    """Run the step ``build()`` returns eagerly and compiled, from the same initial state, calling ``set_(s)``
    before each call; the losses and the final parameters must agree. Returns the compiled function."""
    results = []
    for compiled in (False, True):
        step, model, set_ = build()
        f = lucid.compile(step) if compiled else step
        losses = []
        for s in settings:
            set_(s)
            losses.append(f(X, Y).item())
        results.append((losses, _params(model)))
    (l_e, p_e), (l_c, p_c) = results
    np.testing.assert_allclose(l_c, l_e, rtol=1e-4, atol=1e-6)
    for a, b in zip(p_e, p_c):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-6)
    return f


def _sgd_step(model, loss_of):
    opt = lucid.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = loss_of(x, y)
        loss.backward()
        opt.step()
        return loss
    return step


FLAGS = [True, True, True, False, False, False, True, True, False]


def test_bool_flag_in_a_closure_toggled_between_calls_retraces():
    def build():
        model = _mlp()
        use_l1 = True  # a closure variable of loss_of, rebound by set_

        def loss_of(x, y):
            loss = F.cross_entropy(model(x), y)
            if use_l1:
                loss = loss + 0.05 * model[0].weight.abs().sum()
            return loss

        def set_(flag):
            nonlocal use_l1
            use_l1 = flag
        return _sgd_step(model, loss_of), model, set_

    f = _compare(build, FLAGS)
    assert _traces(f) == 2  # one per flag value: toggling back reuses the first trace


USE_NOISE = True


def test_bool_flag_in_a_global_read_by_a_helper_function_retraces():
    def penalty(model):
        return 0.1 * model[2].weight.pow(2).sum() if USE_NOISE else 0.0

    def build():
        model = _mlp()

        def set_(flag):
            global USE_NOISE
            USE_NOISE = flag
        return _sgd_step(model, lambda x, y: F.cross_entropy(model(x), y) + penalty(model)), model, set_

    _compare(build, FLAGS)


def test_int_epoch_in_python_arithmetic_and_branches_retraces():
    def build():
        model = _mlp()
        epoch = 0

        def loss_of(x, y):
            loss = F.cross_entropy(model(x), y) * (1.0 + epoch / 4)  # e.g. a loss-weight warm-up
            if epoch % 2:
                loss = loss + model[0].bias.abs().sum()
            return loss

        def set_(e):
            nonlocal epoch
            epoch = e
        return _sgd_step(model, loss_of), model, set_

    f = _compare(build, [0, 0, 0, 1, 1, 1, 2, 2, 1, 1])
    assert _traces(f) == 3


def test_config_object_and_config_dict_attributes_retrace():
    cfg = SimpleNamespace(scale=1.0)
    opts = {"clip": False}

    def build():
        model = _mlp()
        cfg.scale, opts["clip"] = 1.0, False

        def loss_of(x, y):
            out = model(x) * cfg.scale
            if opts["clip"]:
                out = out.clamp(-0.5, 0.5)
            return F.cross_entropy(out, y)

        def set_(s):
            cfg.scale, opts["clip"] = s
        return _sgd_step(model, loss_of), model, set_

    _compare(build, [(1.0, False)] * 3 + [(2.0, False)] * 3 + [(2.0, True)] * 3 + [(1.0, False)])


class SkipNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.head = nn.Linear(8, 3)
        self.use_skip = True

    def forward(self, x):
        h = self.a(x).tanh()
        return self.head(h + x if self.use_skip else h)


def test_module_attributes_changed_between_calls_retrace():
    # a user module's flag (read by its forward) and a lucid module's hyperparameter (LeakyReLU.negative_slope)
    def build():
        lucid.manual_seed(2)
        model = nn.Sequential(SkipNet(), nn.LeakyReLU(0.1))

        def set_(s):
            model[0].use_skip, model[1].negative_slope = s
        return _sgd_step(model, lambda x, y: F.cross_entropy(model(x), y)), model, set_

    f = _compare(build, [(True, 0.1)] * 3 + [(False, 0.1)] * 3 + [(False, 0.5)] * 3 + [(True, 0.1)] * 2)
    assert _traces(f) == 3


def test_an_unchanged_configuration_is_traced_once():
    model = _mlp()
    flag = True
    f = lucid.compile(_sgd_step(model, lambda x, y: F.cross_entropy(model(x), y) * (2.0 if flag else 1.0)))
    for _ in range(8):
        f(X, Y)
    assert _traces(f) == 1 and len(f.cache) == 2  # the eager first calls: before and after optimizer state exists
    model.eval()
    model.train()  # back to the same configuration: nothing new
    for _ in range(3):
        f(X, Y)
    assert _traces(f) == 1 and len(f.cache) == 2


def test_python_scalar_arguments_are_keyed_by_type():
    # 2 and 2.0 are equal as dict keys, but an integer tensor times them gives int64 vs float32
    f = lucid.compile(lambda x, s: x * s, state=[])
    x = lucid.tensor([1, 2, 3])
    for s in (2, 2, 2, 2.0, 2.0):
        out = f(x, s)
        assert out.dtype == (x * s).dtype
        np.testing.assert_array_equal(out.numpy(), (x * s).numpy())


def test_past_the_trace_limit_new_configurations_run_eagerly_with_one_warning(monkeypatch):
    monkeypatch.setattr(_compile, "cache_size_limit", 4)

    def build():
        model = _mlp()
        epoch = 0

        def set_(e):
            nonlocal epoch
            epoch = e
        return _sgd_step(model, lambda x, y: F.cross_entropy(model(x), y) * (1 + epoch)), model, set_

    with pytest.warns(UserWarning, match=r"traced for 4 configurations.*epoch: 2 -> 3") as record:
        f = _compare(build, [0, 0, 0, 1, 1, 2, 3, 4, 5])
    assert len([w for w in record if "configurations" in str(w.message)]) == 1
    assert len(f.cache) == 4


def test_compiling_a_module_follows_its_parameters_and_attributes():
    model = _mlp()
    f = lucid.compile(model)
    for _ in range(3):
        f(X)
    with lucid.no_grad():
        model[0].weight.mul_(0.5)  # an update made outside the compiled function
    model[1].negative_slope = 0.3
    for _ in range(2):
        np.testing.assert_allclose(f(X).detach().numpy(), model(X).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_a_bound_method_of_a_plain_object_finds_its_model_and_flags():
    class Trainer:
        def __init__(self):
            self.model = _mlp()
            self.opt = lucid.optim.SGD(self.model.parameters(), lr=0.1)
            self.smooth = 0.0

        def step(self, x, y):
            self.opt.zero_grad()
            loss = F.cross_entropy(self.model(x), y, label_smoothing=self.smooth)
            loss.backward()
            self.opt.step()
            return loss

    def build():
        t = Trainer()

        def set_(s):
            t.smooth = s
        return t.step, t.model, set_

    _compare(build, [0.0, 0.0, 0.0, 0.2, 0.2, 0.2, 0.0])


def test_a_partial_step_finds_its_model_through_the_partial():
    model = _mlp()

    def infer(m, x, scale):
        return m(x) * scale

    f = lucid.compile(functools.partial(infer, model, scale=2.0))
    for _ in range(3):
        f(X)
    with lucid.no_grad():
        model[2].bias.add_(1.0)  # the parameters are state, not constants baked into the trace
    np.testing.assert_allclose(f(X).detach().numpy(), (model(X) * 2.0).detach().numpy(), rtol=1e-5, atol=1e-6)
