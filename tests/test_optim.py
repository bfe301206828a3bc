"""lucid.optim: every optimizer against a numpy transcription of PyTorch's documented algorithm (float64, several
steps, two parameters, one of which sometimes has no gradient), the Optimizer API (groups, zero_grad, closure,
state_dict round trips and errors, hooks), the one-evaluation-per-step rule, and PyTorch as an optional oracle."""
import math

import mlx.core as mx
import numpy as np
import pytest

import lucid
from lucid import optim


# ------------------------------------------------------------------------------------------------ numpy references
# Each reference takes (param, grad, state dict, **options with PyTorch's defaults) and returns the new param.
def _grad_and_decay(p, g, lr, weight_decay, maximize, decoupled=False):
    g = -g if maximize else g
    if weight_decay:
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
    return p, g


def _count(st):
    st["step"] = st.get("step", 0) + 1
    return st["step"]


def ref_sgd(p, g, st, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, maximize=False):
    p, g = _grad_and_decay(p, g, lr, weight_decay, maximize)
    if momentum:
        b = st.get("momentum_buffer")
        b = st["momentum_buffer"] = g if b is None else momentum * b + (1 - dampening) * g
        g = g + momentum * b if nesterov else b
    return p - lr * g


def ref_adam(p, g, st, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, maximize=False,
             decoupled_weight_decay=False):
    (b1, b2), t = betas, _count(st)
    p, g = _grad_and_decay(p, g, lr, weight_decay, maximize, decoupled_weight_decay)
    m = st["exp_avg"] = b1 * st.get("exp_avg", 0) + (1 - b1) * g
    v = st["exp_avg_sq"] = b2 * st.get("exp_avg_sq", 0) + (1 - b2) * g * g
    if amsgrad:
        v = st["max_exp_avg_sq"] = np.maximum(st.get("max_exp_avg_sq", 0), v)
    return p - lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)


def ref_adamw(p, g, st, weight_decay=1e-2, **kw):
    return ref_adam(p, g, st, weight_decay=weight_decay, decoupled_weight_decay=True, **kw)


def ref_adamax(p, g, st, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, maximize=False):
    (b1, b2), t = betas, _count(st)
    p, g = _grad_and_decay(p, g, lr, weight_decay, maximize)
    m = st["exp_avg"] = b1 * st.get("exp_avg", 0) + (1 - b1) * g
    u = st["exp_inf"] = np.maximum(b2 * st.get("exp_inf", 0), np.abs(g) + eps)
    return p - lr / (1 - b1 ** t) * m / u


def ref_nadam(p, g, st, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
              decoupled_weight_decay=False, maximize=False):
    (b1, b2), t = betas, _count(st)
    p, g = _grad_and_decay(p, g, lr, weight_decay, maximize, decoupled_weight_decay)
    mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
    mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
    # PyTorch keeps the running product in a float32 tensor, whatever the parameter's dtype
    prod = st["mu_product"] = float(np.float32(st.get("mu_product", 1.0)) * np.float32(mu))
    m = st["exp_avg"] = b1 * st.get("exp_avg", 0) + (1 - b1) * g
    v = st["exp_avg_sq"] = b2 * st.get("exp_avg_sq", 0) + (1 - b2) * g * g
    denom = np.sqrt(v / (1 - b2 ** t)) + eps
    return p - lr * (1 - mu) / (1 - prod) * g / denom - lr * mu_next / (1 - prod * mu_next) * m / denom


def ref_radam(p, g, st, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
              maximize=False):
    (b1, b2), t = betas, _count(st)
    p, g = _grad_and_decay(p, g, lr, weight_decay, maximize, decoupled_weight_decay)
    m = st["exp_avg"] = b1 * st.get("exp_avg", 0) + (1 - b1) * g
    v = st["exp_avg_sq"] = b2 * st.get("exp_avg_sq", 0) + (1 - b2) * g * g
    m_hat = m / (1 - b1 ** t)
    rho_inf = 2 / (1 - b2) - 1
    rho_t = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
    if rho_t <= 5:
        return p - lr * m_hat
    adaptive = math.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
    rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
    return p - lr * m_hat * adaptive * rect


def ref_rmsprop(p, g, st, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                maximize=False):
    _count(st)
    p, g = _grad_and_decay(p, g, lr, weight_decay, maximize)
    v = st["square_avg"] = alpha * st.get("square_avg", 0) + (1 - alpha) * g * g
    if centered:
        ga = st["grad_avg"] = alpha * st.get("grad_avg", 0) + (1 - alpha) * g
        v = v - ga * ga
    if momentum > 0:
        b = st["momentum_buffer"] = momentum * st.get("momentum_buffer", 0) + g / (np.sqrt(v) + eps)
        return p - lr * b
    return p - lr * g / (np.sqrt(v) + eps)


def ref_adagrad(p, g, st, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                maximize=False):
    t = _count(st)
    p, g = _grad_and_decay(p, g, lr, weight_decay, maximize)
    s = st["sum"] = st.get("sum", initial_accumulator_value) + g * g
    return p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s) + eps)


def ref_adadelta(p, g, st, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False):
    _count(st)
    p, g = _grad_and_decay(p, g, lr, weight_decay, maximize)
    v = st["square_avg"] = rho * st.get("square_avg", 0) + (1 - rho) * g * g
    dx = np.sqrt(st.get("acc_delta", 0) + eps) / np.sqrt(v + eps) * g
    st["acc_delta"] = rho * st.get("acc_delta", 0) + (1 - rho) * dx * dx
    return p - lr * dx


def ref_lion(p, g, st, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0, maximize=False):
    b1, b2 = betas
    p, g = _grad_and_decay(p, g, lr, weight_decay, maximize, decoupled=True)
    m = st.get("exp_avg", 0)
    p = p - lr * np.sign(b1 * m + (1 - b1) * g)
    st["exp_avg"] = b2 * m + (1 - b2) * g
    return p


REFS = {"SGD": ref_sgd, "Adam": ref_adam, "AdamW": ref_adamw, "Adamax": ref_adamax, "NAdam": ref_nadam,
        "RAdam": ref_radam, "RMSprop": ref_rmsprop, "Adagrad": ref_adagrad, "Adadelta": ref_adadelta,
        "Lion": ref_lion}

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.8, nesterov=True, maximize=True, weight_decay=0.05)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, maximize=True, betas=(0.8, 0.9), eps=1e-3)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True, maximize=True, weight_decay=0.3)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.01)),  # rho_t crosses 5 at step 6: both branches run
    ("RAdam", dict(lr=0.01, weight_decay=0.1, betas=(0.9, 0.9))),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True, betas=(0.8, 0.6))),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, maximize=True, alpha=0.9)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.5, maximize=True)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1, maximize=True)),
    ("Lion", dict(lr=0.01)),
    ("Lion", dict(lr=0.01, betas=(0.5, 0.9), weight_decay=0.5, maximize=True)),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in CASES]
ALL = sorted(REFS)


def _grads(steps, shapes, seed=1):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s) for s in shapes] for _ in range(steps)]


def _has_grad(i, k):
    return not (i == 1 and k % 3 == 1)  # the second parameter has no gradient every third step


def _run(name, kw, steps=9, dtype=np.float64):
    """Run the optimizer and the reference side by side; return both parameter lists and the optimizer."""
    rng = np.random.default_rng(0)
    init = [rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal(5).astype(dtype)]
    params = [lucid.tensor(a, requires_grad=True) for a in init]
    opt = getattr(optim, name)(params, **kw)
    ref, states = [a.astype(np.float64) for a in init], [{}, {}]
    for k, grads in enumerate(_grads(steps, [a.shape for a in init])):
        for i, (p, g) in enumerate(zip(params, grads)):
            g = g.astype(dtype)
            p.grad = lucid.tensor(g) if _has_grad(i, k) else None
            if _has_grad(i, k):
                ref[i] = REFS[name](ref[i], g.astype(np.float64), states[i], **kw)
        opt.step()
    return params, ref, opt


# ------------------------------------------------------------------------------------------------ update rules
@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_update_rule_matches_reference(name, kw):
    params, ref, _ = _run(name, kw)
    for p, r in zip(params, ref):
        assert p.dtype == mx.float64
        np.testing.assert_allclose(np.array(p.detach()), r, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", ALL)
def test_float32_parameters_stay_float32(name):
    kw = dict(CASES[[n for n, _ in CASES].index(name)][1])
    params, ref, opt = _run(name, kw, steps=4, dtype=np.float32)
    for p, r in zip(params, ref):
        assert p.dtype == mx.float32
        np.testing.assert_allclose(np.array(p.detach()), r, rtol=2e-5, atol=2e-6)
    for value in opt.state[params[0]].values():
        assert value.dtype == mx.float32  # moments in the parameter's dtype, step counters always float32


def test_step_is_float32_scalar_tensor_like_pytorch():
    p = lucid.zeros(3, dtype=lucid.float64, requires_grad=True)
    opt = optim.NAdam([p])
    for _ in range(3):
        p.grad = lucid.ones(3, dtype=lucid.float64)
        opt.step()
    state = opt.state[p]
    assert list(state) == ["step", "mu_product", "exp_avg", "exp_avg_sq"]
    assert isinstance(state["step"], lucid.Tensor) and state["step"].ndim == 0
    assert state["step"].dtype == mx.float32 and state["step"].item() == 3.0
    assert state["mu_product"].dtype == mx.float32 and state["exp_avg"].dtype == mx.float64


def test_parameter_without_grad_is_skipped_and_gets_no_state():
    a, b = lucid.ones(2, requires_grad=True), lucid.ones(2, requires_grad=True)
    opt = optim.Adam([a, b], lr=0.1)
    a.grad = lucid.ones(2)
    opt.step()
    assert b not in opt.state and a in opt.state
    assert np.array(b.detach()).tolist() == [1.0, 1.0] and b._version == 0
    assert a._version == 1


def test_sgd_without_momentum_keeps_no_state():
    p = lucid.ones(2, requires_grad=True)
    opt = optim.SGD([p], lr=0.5)
    p.grad = lucid.ones(2)
    opt.step()
    assert opt.state_dict()["state"] == {}
    np.testing.assert_allclose(np.array(p.detach()), [0.5, 0.5])


def test_adagrad_state_exists_from_construction():
    p = lucid.zeros(2, requires_grad=True)
    opt = optim.Adagrad([p], initial_accumulator_value=0.25)
    assert opt.state[p]["step"].item() == 0.0
    np.testing.assert_allclose(np.array(opt.state[p]["sum"]), [0.25, 0.25])


def test_amsgrad_switched_on_later_creates_its_buffer():
    p = lucid.zeros(2, requires_grad=True)
    opt = optim.Adam([p], lr=0.1)
    p.grad = lucid.ones(2)
    opt.step()
    opt.param_groups[0]["amsgrad"] = True
    opt.step()
    assert "max_exp_avg_sq" in opt.state[p]


def test_half_precision_parameters_keep_their_dtype():
    for dtype in (lucid.float16, lucid.bfloat16):
        p = lucid.ones(4, dtype=dtype, requires_grad=True)
        opt = optim.AdamW([p], lr=0.01)
        p.grad = lucid.ones(4, dtype=dtype)
        opt.step()
        assert p.dtype == dtype and opt.state[p]["exp_avg"].dtype == dtype
        np.testing.assert_allclose(np.array(p.detach().float()), 1 - 0.01 * 0.01 - 0.01, rtol=1e-2)


# ------------------------------------------------------------------------------------------------ evaluation
@pytest.mark.parametrize("name", ALL)
def test_one_step_is_one_eval(name, monkeypatch):
    params = [lucid.randn(3, 2, requires_grad=True), lucid.randn(4, requires_grad=True)]
    opt = getattr(optim, name)(params, lr=0.01)
    calls = []
    real_eval = mx.eval

    def counting_eval(*args):
        calls.append(len(args[0]))
        return real_eval(*args)

    monkeypatch.setattr(mx, "eval", counting_eval)
    for k in range(3):
        for p in params:
            p.grad = lucid.ones(*p.shape)
        opt.step()
        assert len(calls) == k + 1
    # what is evaluated: the two new parameters and their new state arrays
    state_arrays = sum(1 for p in params for v in opt.state[p].values() if v.ndim > 0)
    assert calls[-1] == len(params) + state_arrays


def test_step_also_evaluates_tensors_written_under_no_grad(monkeypatch):
    p, running_mean = lucid.ones(3, requires_grad=True), lucid.zeros(3)
    opt = optim.SGD([p], lr=0.1)
    with lucid.no_grad():  # as BatchNorm updates its running statistics
        running_mean.add_(0.1)
    evaluated = []
    real_eval = mx.eval
    monkeypatch.setattr(mx, "eval", lambda arrays: (evaluated.append(list(arrays)), real_eval(arrays))[1])
    p.grad = lucid.ones(3)
    opt.step()
    assert len(evaluated) == 1 and any(a is running_mean._storage.data for a in evaluated[0])


def test_step_also_evaluates_the_loss_of_the_last_backward(monkeypatch):
    """Reading the loss after step() (loss.item() for logging) then needs no second evaluation."""
    p = lucid.ones(3, requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    loss = (p * p).sum()
    loss.backward()
    evaluated = []
    real_eval = mx.eval
    monkeypatch.setattr(mx, "eval", lambda arrays: (evaluated.append(list(arrays)), real_eval(arrays))[1])
    opt.step()
    assert len(evaluated) == 1 and any(a is loss._storage.data for a in evaluated[0])
    opt.step()  # registered once: the next step evaluates only the parameters
    assert not any(a is loss._storage.data for a in evaluated[1])
    # only one-element roots are registered, and only weakly
    big = p * 2
    big.backward(lucid.ones(3))
    opt.step()
    assert not any(a is big._storage.data for a in evaluated[2])


def test_backward_without_optimizer_keeps_no_pending_entries():
    from lucid._tensor import _pending
    p = lucid.ones(3, requires_grad=True)
    for _ in range(50):
        (p * p).sum().backward()
    assert len(_pending.refs) <= 1  # dead losses leave the registry


def test_update_bumps_version_like_an_inplace_write():
    w = lucid.ones(3, requires_grad=True)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    optim.SGD([w], lr=0.1).step()
    assert w._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_update_shows_through_data_alias():
    w = lucid.ones(2, requires_grad=True)
    alias = w.data
    w.grad = lucid.ones(2)
    optim.SGD([w], lr=0.5).step()
    np.testing.assert_allclose(np.array(alias), [0.5, 0.5])


# ------------------------------------------------------------------------------------------------ groups and API
def test_per_group_options():
    a, b = lucid.ones(2, requires_grad=True), lucid.ones(2, requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5, "momentum": 0.9}], lr=0.1)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[0]["momentum"] == 0
    assert opt.param_groups[1]["params"] == [b] and opt.param_groups[1]["momentum"] == 0.9
    ra, rb, sa, sb = np.ones(2), np.ones(2), {}, {}
    for _ in range(3):
        a.grad, b.grad = lucid.ones(2), lucid.ones(2)
        opt.step()
        ra = ref_sgd(ra, np.ones(2), sa, lr=0.1)
        rb = ref_sgd(rb, np.ones(2), sb, lr=0.5, momentum=0.9)
    np.testing.assert_allclose(np.array(a.detach()), ra, rtol=1e-6)
    np.testing.assert_allclose(np.array(b.detach()), rb, rtol=1e-6)
    assert a not in opt.state and b in opt.state


def test_named_parameters_are_kept_as_param_names():
    a, b = lucid.ones(2, requires_grad=True), lucid.ones(3, requires_grad=True)
    opt = optim.Adam([("w", a), ("b", b)])
    assert opt.param_groups[0]["params"] == [a, b] and opt.param_groups[0]["param_names"] == ["w", "b"]
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]
    with pytest.raises(ValueError, match="with/without names. cannot add param group without names"):
        opt.add_param_group({"params": [lucid.ones(1, requires_grad=True)]})


def test_add_param_group_checks():
    a = lucid.ones(2, requires_grad=True)
    opt = optim.SGD([a], lr=0.1)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([a])
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {lucid.ones(1, requires_grad=True)}})
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the params is int"):
        opt.add_param_group({"params": [3]})
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        opt.add_param_group({"params": [a * 2]})
    b = lucid.ones(1, requires_grad=True)
    opt.add_param_group({"params": b, "lr": 0.3})
    assert opt.param_groups[1]["lr"] == 0.3 and opt.param_groups[1]["momentum"] == 0
    with pytest.warns(UserWarning, match="duplicate parameters"):
        optim.SGD([b, b], lr=0.1)


def test_required_option_and_constructor_errors():
    class Plain(optim.Optimizer):
        def __init__(self, params, lr=optim.required):
            super().__init__(params, dict(lr=lr))

    with pytest.raises(ValueError, match="didn't specify a value of required optimization parameter lr"):
        Plain([lucid.ones(1, requires_grad=True)])
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="should be an iterable of Tensors or dicts, but got lucid.Tensor"):
        optim.SGD(lucid.ones(1, requires_grad=True), lr=0.1)
    p = [lucid.ones(1, requires_grad=True)]
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero dampening"):
        optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True)
    for name in ALL:
        with pytest.raises(ValueError, match="Invalid learning rate: -0.1"):
            getattr(optim, name)(p, lr=-0.1)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam(p, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid epsilon value: -1"):
        optim.RAdam(p, eps=-1)
    with pytest.raises(ValueError, match="Invalid weight_decay value: -0.5"):
        optim.AdamW(p, weight_decay=-0.5)
    with pytest.raises(ValueError, match="Invalid momentum value: -1"):
        optim.RMSprop(p, momentum=-1)
    with pytest.raises(ValueError, match="Invalid rho value: 1.5"):
        optim.Adadelta(p, rho=1.5)
    with pytest.raises(ValueError, match="Invalid momentum_decay value: -1"):
        optim.NAdam(p, momentum_decay=-1)
    with pytest.raises(ValueError, match="Invalid initial_accumulator_value value: -1"):
        optim.Adagrad(p, initial_accumulator_value=-1)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        optim.Adam(p, fused=True, foreach=True)
    assert optim.SGD(p, lr=lucid.tensor(0.25)).param_groups[0]["lr"] == 0.25


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_zero_grad():
    a, b = lucid.ones(2, requires_grad=True), lucid.ones(2, requires_grad=True)
    opt = optim.SGD([a, b], lr=0.1)
    (a * b).sum().backward()
    opt.zero_grad()
    assert a.grad is None and b.grad is None
    (a * b).sum().backward(create_graph=True)
    ga = a.grad
    assert ga.requires_grad
    opt.zero_grad(set_to_none=False)
    assert a.grad is ga and np.array(ga).tolist() == [0.0, 0.0]
    assert not ga.requires_grad and ga.grad_fn is None


def test_closure_runs_with_grad_enabled_and_its_loss_is_returned():
    w = lucid.tensor([3.0], requires_grad=True)
    opt = optim.SGD([w], lr=0.25)
    seen = []

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        seen.append(lucid.is_grad_enabled())
        loss.backward()
        return loss

    with lucid.no_grad():
        loss = opt.step(closure)
    assert seen == [True] and loss.item() == 9.0
    np.testing.assert_allclose(np.array(w.detach()), [1.5])


def test_repr_lists_group_options():
    opt = optim.SGD([lucid.ones(1, requires_grad=True)], lr=0.1)
    text = repr(opt)
    assert text.startswith("SGD (\nParameter Group 0\n") and "    lr: 0.1\n" in text and text.endswith(")")


def test_step_hooks():
    p = lucid.ones(1, requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    log = []
    pre = opt.register_step_pre_hook(lambda o, args, kwargs: log.append(("pre", o is opt)))
    opt.register_step_post_hook(lambda o, args, kwargs: log.append(("post", o is opt)))
    p.grad = lucid.ones(1)
    opt.step()
    pre.remove()
    opt.step()
    assert log == [("pre", True), ("post", True), ("post", True)]


def test_torch_style_subclass_overriding_step(monkeypatch):
    class SignSGD(optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, dict(lr=lr))

        def step(self, closure=None):
            with lucid.no_grad():
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is not None:
                            p.sub_(group["lr"] * p.grad.sign())
                            self.state[p]["n"] = self.state[p].get("n", 0) + 1

    p = lucid.tensor([1.0, -1.0], requires_grad=True)
    opt = SignSGD([p])
    calls, evaluated = [], []
    opt.register_step_post_hook(lambda *a: calls.append(1))
    real_eval = mx.eval
    monkeypatch.setattr(mx, "eval", lambda arrays: (evaluated.append(list(arrays)), real_eval(arrays))[1])
    for _ in range(2):
        p.grad = lucid.tensor([2.0, -3.0])
        opt.step()
    np.testing.assert_allclose(np.array(p.detach()), [0.8, -0.8])
    assert calls == [1, 1] and opt.state_dict()["state"] == {0: {"n": 2}}
    # its in-place writes are evaluated once per step, as the built-in optimizers' updates are
    assert len(evaluated) == 2 and evaluated[-1][0] is p._storage.data


# ------------------------------------------------------------------------------------------------ state dict
@pytest.mark.parametrize("name,kw", [c for c in CASES if c[0] != "SGD" or c[1].get("momentum")],
                         ids=[i for i, c in zip(IDS, CASES) if c[0] != "SGD" or c[1].get("momentum")])
def test_state_dict_round_trip_continues_identically(name, kw):
    def make():
        rng = np.random.default_rng(0)
        params = [lucid.tensor(rng.standard_normal((3, 2)), requires_grad=True),
                  lucid.tensor(rng.standard_normal(4), requires_grad=True)]
        return params, getattr(optim, name)(params, **kw)

    grads = _grads(6, [(3, 2), (4,)])

    def train(params, opt, steps):
        for k in steps:
            for i, p in enumerate(params):
                p.grad = lucid.tensor(grads[k][i]) if _has_grad(i, k) else None
            opt.step()

    params_a, opt_a = make()
    train(params_a, opt_a, range(3))
    saved = opt_a.state_dict()
    assert sorted(saved["state"]) == [0, 1] and saved["param_groups"][0]["params"] == [0, 1]
    params_b, opt_b = make()
    for pa, pb in zip(params_a, params_b):
        pb.data = pa.detach().clone()
    opt_b.load_state_dict(saved)
    before = {k: np.array(v) for k, v in saved["state"][0].items()}
    train(params_b, opt_b, range(3, 6))
    for key, value in before.items():  # loading copied the state: training on did not write into `saved`
        np.testing.assert_array_equal(np.array(saved["state"][0][key]), value)
    train(params_a, opt_a, range(3, 6))
    for pa, pb in zip(params_a, params_b):
        np.testing.assert_array_equal(np.array(pa.detach()), np.array(pb.detach()))
    if "step" in before:
        assert opt_b.state[params_b[0]]["step"].item() == opt_a.state[params_a[0]]["step"].item() == 6.0


def test_state_dict_layout_and_load_does_not_alias():
    a, b, c = (lucid.ones(2, requires_grad=True) for _ in range(3))
    opt = optim.Adam([{"params": [a, b]}, {"params": [c], "lr": 0.5}])
    a.grad, c.grad = lucid.ones(2), lucid.ones(2)
    opt.step()
    sd = opt.state_dict()
    assert sorted(sd["state"]) == [0, 2]
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sd["param_groups"][1]["lr"] == 0.5 and opt.param_groups[0]["params"] == [a, b]
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}
    saved = np.array(sd["state"][0]["exp_avg"])

    a2, b2, c2 = (lucid.ones(2, requires_grad=True) for _ in range(3))
    opt2 = optim.Adam([{"params": [a2, b2]}, {"params": [c2]}])
    opt2.load_state_dict(sd)
    assert opt2.param_groups[1]["lr"] == 0.5 and opt2.param_groups[1]["params"] == [c2]
    a2.grad = lucid.ones(2)
    opt2.step()
    np.testing.assert_array_equal(np.array(sd["state"][0]["exp_avg"]), saved)  # the loaded dict is untouched


def test_load_state_dict_casts_to_parameter_dtype_but_not_step():
    p32 = lucid.ones(2, requires_grad=True)
    opt = optim.Adam([p32])
    p32.grad = lucid.ones(2)
    opt.step()
    p64 = lucid.ones(2, dtype=lucid.float64, requires_grad=True)
    opt64 = optim.Adam([p64])
    opt64.load_state_dict(opt.state_dict())
    assert opt64.state[p64]["exp_avg"].dtype == mx.float64
    assert opt64.state[p64]["step"].dtype == mx.float32
    p64.grad = lucid.ones(2, dtype=lucid.float64)
    opt64.step()
    assert opt64.state[p64]["step"].item() == 2.0


def test_load_state_dict_errors():
    a, b = lucid.ones(2, requires_grad=True), lucid.ones(2, requires_grad=True)
    sd = optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="loaded state dict has a different number of parameter groups"):
        optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that doesn't match the size "
                                         "of optimizer's group"):
        optim.SGD([a], lr=0.1).load_state_dict(sd)


def test_state_dict_hooks():
    p = lucid.ones(1, requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    assert opt.state_dict()["extra"] == 1
    seen = []
    opt.register_load_state_dict_pre_hook(lambda o, sd: seen.append("pre"))
    opt.register_load_state_dict_post_hook(lambda o: seen.append("post"), prepend=True)
    opt.load_state_dict(opt.state_dict())
    assert seen == ["pre", "post"]


# ------------------------------------------------------------------------------------------------ training
def test_adam_fits_a_linear_regression():
    rng = np.random.default_rng(0)
    x = lucid.tensor(rng.standard_normal((64, 3)).astype(np.float32))
    y = x @ lucid.tensor([[1.5], [-2.0], [0.5]]) + 0.3
    w = lucid.zeros(3, 1, requires_grad=True)
    b = lucid.zeros(1, requires_grad=True)
    opt = optim.Adam([w, b], lr=0.1)
    for _ in range(150):
        opt.zero_grad()
        loss = ((x @ w + b - y) ** 2).mean()
        loss.backward()
        opt.step()
    assert loss.item() < 1e-4


# ------------------------------------------------------------------------------------------------ PyTorch oracle
@pytest.mark.parametrize("name,kw", [c for c in CASES if c[0] != "Lion"],
                         ids=[i for i, c in zip(IDS, CASES) if c[0] != "Lion"])
def test_matches_pytorch(name, kw):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    init = [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(5).astype(np.float32)]
    lp = [lucid.tensor(a, requires_grad=True) for a in init]
    tp = [torch.tensor(a, requires_grad=True) for a in init]
    lopt, topt = getattr(optim, name)(lp, **kw), getattr(torch.optim, name)(tp, **kw)
    for k, grads in enumerate(_grads(9, [a.shape for a in init])):
        for i, g in enumerate(grads):
            g = g.astype(np.float32)
            lp[i].grad = lucid.tensor(g) if _has_grad(i, k) else None
            tp[i].grad = torch.tensor(g) if _has_grad(i, k) else None
        lopt.step()
        topt.step()
    for a, b in zip(lp, tp):
        np.testing.assert_allclose(np.array(a.detach()), b.detach().numpy(), rtol=1e-6, atol=1e-7)
    lsd, tsd = lopt.state_dict(), topt.state_dict()
    assert set(lsd["param_groups"][0]) == set(tsd["param_groups"][0])
    assert lsd["state"].keys() == tsd["state"].keys()
    for i in tsd["state"]:
        assert list(lsd["state"][i]) == list(tsd["state"][i])
        for key, value in tsd["state"][i].items():
            np.testing.assert_allclose(np.array(lsd["state"][i][key]), value.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.01, amsgrad=True)),
                                     ("NAdam", dict(lr=0.01))])
def test_loads_a_pytorch_state_dict(name, kw):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    init = rng.standard_normal((3, 2)).astype(np.float32)
    tp = torch.tensor(init, requires_grad=True)
    topt = getattr(torch.optim, name)([tp], **kw)
    grads = [rng.standard_normal((3, 2)).astype(np.float32) for _ in range(6)]
    for g in grads[:3]:
        tp.grad = torch.tensor(g)
        topt.step()
    lp = lucid.tensor(tp.detach().numpy(), requires_grad=True)
    lopt = getattr(optim, name)([lp], **kw)
    lopt.load_state_dict(topt.state_dict())
    assert all(isinstance(v, lucid.Tensor) for v in lopt.state[lp].values())
    for g in grads[3:]:
        tp.grad, lp.grad = torch.tensor(g), lucid.tensor(g)
        topt.step()
        lopt.step()
    np.testing.assert_allclose(np.array(lp.detach()), tp.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_state_dict_survives_lucid_save_and_load(tmp_path):
    p = lucid.tensor([1.0, -2.0, 3.0], requires_grad=True)
    opt = optim.NAdam([p], lr=0.1, weight_decay=0.01)
    for _ in range(2):
        p.grad = p.detach() * 2
        opt.step()
    lucid.save(opt.state_dict(), tmp_path / "opt.safetensors")
    q = lucid.tensor(np.array(p.detach()), requires_grad=True)
    opt2 = optim.NAdam([q])
    opt2.load_state_dict(lucid.load(tmp_path / "opt.safetensors"))
    assert opt2.param_groups[0]["lr"] == 0.1 and opt2.param_groups[0]["betas"] == (0.9, 0.999)
    for _ in range(2):
        p.grad, q.grad = p.detach() * 2, q.detach() * 2
        opt.step()
        opt2.step()
    np.testing.assert_array_equal(np.array(p.detach()), np.array(q.detach()))
