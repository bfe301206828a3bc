"""lucid.optim.lr_scheduler: learning-rate sequences against the closed forms in PyTorch's documentation (and the
papers they cite), composition (chained, sequential), ReduceLROnPlateau's bookkeeping, state dicts, errors, warnings,
and PyTorch as an optional oracle."""
import math
import warnings
from bisect import bisect_right

import numpy as np
import pytest

import lucid
from lucid import optim
from lucid.optim import lr_scheduler as sched

BASES = (0.1, 0.25)  # two param groups with their own initial learning rates


def _optimizer(opt_cls=optim.SGD, bases=BASES, **kw):
    groups = [{"params": [lucid.zeros(2, requires_grad=True)], "lr": lr} for lr in bases]
    return opt_cls(groups, **kw)


def _run(make, n=40, opt_cls=optim.SGD, **kw):
    """Learning rates of epochs 0..n (one row per epoch, one column per group), the optimizer, the scheduler."""
    opt = _optimizer(opt_cls, **kw)
    s = make(opt)
    lrs = [s.get_last_lr()]
    for _ in range(n):
        opt.step()
        s.step()
        lrs.append(s.get_last_lr())
        assert s.get_last_lr() == [g["lr"] for g in opt.param_groups]
    return np.array(lrs), opt, s


def _expected(formula, n=40):
    return np.array([[formula(e, base) for base in BASES] for e in range(n + 1)])


def _cosine(eta_min, base, t, period):
    return eta_min + (base - eta_min) * (1 + math.cos(math.pi * t / period)) / 2


CLOSED_FORMS = {
    "LambdaLR": (lambda o: sched.LambdaLR(o, lambda e: 1 / (1 + 0.3 * e)),
                 lambda e, b: b / (1 + 0.3 * e)),
    "MultiplicativeLR": (lambda o: sched.MultiplicativeLR(o, lambda e: 0.95),
                         lambda e, b: b * 0.95 ** e),
    "StepLR": (lambda o: sched.StepLR(o, step_size=7, gamma=0.5),
               lambda e, b: b * 0.5 ** (e // 7)),
    "MultiStepLR": (lambda o: sched.MultiStepLR(o, milestones=[5, 12, 12, 30], gamma=0.3),
                    lambda e, b: b * 0.3 ** bisect_right([5, 12, 12, 30], e)),
    "ExponentialLR": (lambda o: sched.ExponentialLR(o, gamma=0.93),
                      lambda e, b: b * 0.93 ** e),
    "LinearLR": (lambda o: sched.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=10),
                 lambda e, b: b * (0.2 + 0.7 * min(e, 10) / 10)),
    "ConstantLR": (lambda o: sched.ConstantLR(o, factor=0.25, total_iters=6),
                   lambda e, b: b * (0.25 if e < 6 else 1.0)),
    "PolynomialLR": (lambda o: sched.PolynomialLR(o, total_iters=15, power=2.0),
                     lambda e, b: b * (1 - min(e, 15) / 15) ** 2),
    # torch's recursive form follows the closed form, also past T_max where the cosine climbs back up
    "CosineAnnealingLR": (lambda o: sched.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
                          lambda e, b: _cosine(0.001, b, e, 10)),
    "CosineAnnealingWarmRestarts": (lambda o: sched.CosineAnnealingWarmRestarts(o, T_0=7, eta_min=0.01),
                                    lambda e, b: _cosine(0.01, b, e % 7, 7)),
}


@pytest.mark.parametrize("name", sorted(CLOSED_FORMS))
def test_closed_form(name):
    make, formula = CLOSED_FORMS[name]
    lrs, _, _ = _run(make)
    np.testing.assert_allclose(lrs, _expected(formula), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "LinearLR", "ConstantLR", "PolynomialLR",
                                  "CosineAnnealingLR"])
def test_step_with_epoch_uses_closed_form(name):
    make, formula = CLOSED_FORMS[name]
    opt = _optimizer()
    s = make(opt)
    opt.step()
    for epoch in (3, 17, 8, 25):
        with pytest.warns(UserWarning, match="The epoch parameter"):
            s.step(epoch)
        np.testing.assert_allclose(s.get_last_lr(), [formula(epoch, b) for b in BASES], rtol=1e-12)


def _sgdr(epoch, base, T_0, T_mult, eta_min):
    """SGDR: find the restart cycle that contains ``epoch`` (cycle i lasts T_0 * T_mult ** i epochs)."""
    start, period = 0, T_0
    while epoch >= start + period:
        start, period = start + period, period * T_mult
    return _cosine(eta_min, base, epoch - start, period)


def test_cosine_warm_restarts_with_growing_periods():
    lrs, _, _ = _run(lambda o: sched.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.005), n=50)
    np.testing.assert_allclose(lrs, _expected(lambda e, b: _sgdr(e, b, 3, 2, 0.005), 50), rtol=1e-10)


def test_cosine_warm_restarts_fractional_epochs():
    opt = _optimizer()
    s = sched.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=2)
    for epoch in (0.5, 2.25, 3.999, 4.0, 9.5, 12.0, 27.75, 1.5):
        s.step(epoch)
        np.testing.assert_allclose(s.get_last_lr(), [_sgdr(epoch, b, 4, 2, 0.0) for b in BASES], rtol=1e-10)
    assert s.last_epoch == 1
    with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
        s.step(-1)


def _one_cycle(step, max_lr, total, pct=0.3, div=25.0, final_div=1e4, three_phase=False, cos=True):
    """The 1cycle policy: (lr, momentum) at ``step``, from the phase boundaries in PyTorch's documentation."""
    initial, low = max_lr / div, max_lr / div / final_div
    anneal = ((lambda a, b, t: b + (a - b) / 2 * (1 + math.cos(math.pi * t))) if cos
              else (lambda a, b, t: a + (b - a) * t))
    up = pct * total - 1
    if three_phase:
        phases = [(0, up, initial, max_lr, 0.95, 0.85), (up, 2 * pct * total - 2, max_lr, initial, 0.85, 0.95),
                  (2 * pct * total - 2, total - 1, initial, low, 0.95, 0.95)]
    else:
        phases = [(0, up, initial, max_lr, 0.95, 0.85), (up, total - 1, max_lr, low, 0.85, 0.95)]
    for i, (start, end, lr0, lr1, m0, m1) in enumerate(phases):
        if step <= end or i == len(phases) - 1:
            t = (step - start) / (end - start)
            return anneal(lr0, lr1, t), anneal(m0, m1, t)


@pytest.mark.parametrize("three_phase,cos", [(False, True), (False, False), (True, True), (True, False)])
def test_one_cycle(three_phase, cos):
    strategy = "cos" if cos else "linear"
    lrs, opt, s = _run(lambda o: sched.OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=40, three_phase=three_phase,
                                               anneal_strategy=strategy), n=39, momentum=0.9)
    expected = np.array([[_one_cycle(e, m, 40, three_phase=three_phase, cos=cos)[0] for m in (1.0, 2.0)]
                         for e in range(40)])
    np.testing.assert_allclose(lrs, expected, rtol=1e-10, atol=1e-15)
    assert lrs[0, 0] == pytest.approx(1.0 / 25) and lrs[-1, 0] == pytest.approx(1.0 / 25 / 1e4)
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.95)
    s.step()  # epoch 40 = total_steps is still allowed (as in PyTorch), 41 is not
    with pytest.raises(ValueError, match="Tried to step 41 times. The specified number of total steps is 40"):
        s.step()


def test_one_cycle_cycles_momentum_or_beta1():
    _, sgd, _ = _run(lambda o: sched.OneCycleLR(o, 1.0, epochs=2, steps_per_epoch=10), n=6, momentum=0.9)
    _, adam, _ = _run(lambda o: sched.OneCycleLR(o, 1.0, total_steps=20), n=6, opt_cls=optim.Adam)
    expected = _one_cycle(6, 1.0, 20)[1]
    assert sgd.param_groups[0]["momentum"] == pytest.approx(expected)
    assert adam.param_groups[1]["betas"] == (pytest.approx(expected), 0.999)
    assert sgd.param_groups[0]["max_momentum"] == 0.95 and sgd.param_groups[0]["base_momentum"] == 0.85


def test_one_cycle_errors():
    opt = _optimizer(momentum=0.9)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        sched.OneCycleLR(opt, 1.0)
    with pytest.raises(ValueError, match="Expected positive integer total_steps, but got 0"):
        sched.OneCycleLR(opt, 1.0, total_steps=0)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start, but got 1.5"):
        sched.OneCycleLR(opt, 1.0, total_steps=10, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        sched.OneCycleLR(opt, 1.0, total_steps=10, anneal_strategy="exp")
    with pytest.raises(ValueError, match="max_lr must have the same length as optimizer.param_groups"):
        sched.OneCycleLR(opt, [1.0], total_steps=10)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        sched.OneCycleLR(_optimizer(optim.Adagrad), 1.0, total_steps=10)


def _triangle(e, half, base, peak, scale):
    """Smith (2017), "Cyclical Learning Rates": cycle = floor(1 + e / (2 half)), x = |e / half - 2 cycle + 1|."""
    cycle = math.floor(1 + e / (2 * half))
    x = abs(e / half - 2 * cycle + 1)
    return base + (peak - base) * max(0.0, 1 - x) * scale(cycle, e)


@pytest.mark.parametrize("mode,scale", [("triangular", lambda c, e: 1.0),
                                        ("triangular2", lambda c, e: 1 / 2 ** (c - 1)),
                                        ("exp_range", lambda c, e: 0.97 ** e)])
def test_cyclic(mode, scale):
    lrs, opt, _ = _run(lambda o: sched.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=5, mode=mode,
                                             gamma=0.97), momentum=0.9)
    expected = np.array([[_triangle(e, 5, b, 0.1, scale) for b in (0.01, 0.02)] for e in range(41)])
    np.testing.assert_allclose(lrs, expected, rtol=1e-10, atol=1e-15)
    # momentum runs inversely, from max_momentum at the cycle start down to base_momentum at the peak
    momentum = 0.9 - (0.9 - 0.8) * (lrs[-1, 0] - 0.01) / (0.1 - 0.01)
    assert opt.param_groups[0]["momentum"] == pytest.approx(momentum)


def test_cyclic_asymmetric_custom_scale_and_no_momentum():
    lrs, opt, _ = _run(lambda o: sched.CyclicLR(o, 0.0, 1.0, step_size_up=2, step_size_down=6, cycle_momentum=False,
                                             scale_fn=lambda x: 0.5, scale_mode="iterations"), n=9, opt_cls=optim.Adam)
    np.testing.assert_allclose(lrs[:, 0], [0, 0.25, 0.5, 5 / 12, 1 / 3, 0.25, 1 / 6, 1 / 12, 0, 0.25])
    assert opt.param_groups[0]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        sched.CyclicLR(_optimizer(), 0.1, 1.0, mode="zigzag")


def test_sequential_warmup_then_decay():
    lrs, _, _ = _run(lambda o: sched.SequentialLR(o, [sched.LinearLR(o, 0.1, 1.0, total_iters=5),
                                                   sched.ExponentialLR(o, gamma=0.9)], milestones=[5]))
    expected = _expected(lambda e, b: b * (0.1 + 0.9 * e / 5) if e < 5 else b * 0.9 ** (e - 5))
    np.testing.assert_allclose(lrs, expected, rtol=1e-10)


def test_sequential_three_schedulers():
    lrs, _, _ = _run(lambda o: sched.SequentialLR(
        o, [sched.ConstantLR(o, 0.5, total_iters=10), sched.StepLR(o, 3, 0.5), sched.CosineAnnealingLR(o, 8)],
        milestones=[4, 20]))
    expected = _expected(lambda e, b: b * 0.5 if e < 4 else b * 0.5 ** ((e - 4) // 3) if e < 20
                         else _cosine(0.0, b, e - 20, 8))
    np.testing.assert_allclose(lrs, expected, rtol=1e-10, atol=1e-15)


def test_chained_schedulers_compose():
    lrs, _, _ = _run(lambda o: sched.ChainedScheduler([sched.ConstantLR(o, 0.5, total_iters=4),
                                                    sched.ExponentialLR(o, gamma=0.9)]))
    np.testing.assert_allclose(lrs, _expected(lambda e, b: b * 0.9 ** e * (0.5 if e < 4 else 1.0)), rtol=1e-10)


def test_composite_errors():
    opt, other = _optimizer(), _optimizer()
    with pytest.raises(ValueError, match="expects number of schedulers provided to be one more than the number"):
        sched.SequentialLR(opt, [sched.StepLR(opt, 2), sched.StepLR(opt, 3)], milestones=[])
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
        sched.ChainedScheduler([sched.StepLR(opt, 2), sched.StepLR(other, 3)])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        sched.SequentialLR(opt, [sched.StepLR(opt, 2), sched.ReduceLROnPlateau(opt)], milestones=[3])
    with pytest.raises(ValueError, match="expects at least one scheduler"):
        sched.ChainedScheduler([])


def _plateau(metrics, **kw):
    opt = _optimizer(bases=(1.0,))
    s = sched.ReduceLROnPlateau(opt, **kw)
    out = []
    for m in metrics:
        s.step(m)
        out.append(s.get_last_lr()[0])
    return out


def test_plateau_patience():
    # the best is 1.0 after epoch 1; with patience 2 the third bad epoch in a row reduces the rate
    assert _plateau([1.0, 1.0, 1.1, 1.0, 1.2, 1.3, 0.5, 0.6], patience=2) == [1, 1, 1, 0.1, 0.1, 0.1, 0.1, 0.1]
    assert _plateau([1.0, 2.0, 3.0], patience=0, factor=0.5) == [1.0, 0.5, 0.25]


def test_plateau_thresholds_and_modes():
    # rel: 0.99995 is not below 1.0 * (1 - 1e-4), so it does not count as better
    assert _plateau([1.0, 0.99995, 0.9], patience=0) == [1.0, 0.1, 0.1]
    assert _plateau([1.0, 0.995, 0.98], patience=0, threshold=0.01, threshold_mode="abs") == [1.0, 0.1, 0.1]
    assert _plateau([1.0, 2.0, 1.5, 1.5], mode="max", patience=1) == [1.0, 1.0, 1.0, 0.1]
    with pytest.raises(ValueError, match="mode median is unknown!"):
        _plateau([], mode="median")
    with pytest.raises(ValueError, match="threshold mode ratio is unknown!"):
        _plateau([], threshold_mode="ratio")
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        _plateau([], factor=1.0)


def test_plateau_cooldown_min_lr_and_eps():
    bad = [1.0] + [2.0] * 9
    assert _plateau(bad, patience=0, cooldown=2, factor=0.5) == [1, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125,
                                                                   0.125, 0.125]
    assert _plateau(bad[:5], patience=0, factor=0.5, min_lr=0.3) == [1, 0.5, 0.3, 0.3, 0.3]
    assert _plateau(bad[:4], patience=0, factor=0.9, eps=0.095) == [1, 0.9, 0.9, 0.9]  # 0.9 -> 0.81 is under eps


def test_plateau_per_group_min_lr_and_tensor_metric():
    opt = _optimizer()
    s = sched.ReduceLROnPlateau(opt, patience=0, min_lr=[0.05, 0.0])
    for metric in (lucid.tensor(1.0), lucid.tensor(2.0), 3.0):
        s.step(metric)
    assert s.get_last_lr() == pytest.approx([0.05, 0.0025])
    assert s.best == 1.0 and s.num_bad_epochs == 0 and s.last_epoch == 3
    with pytest.raises(ValueError, match="expected 2 min_lrs, got 1"):
        sched.ReduceLROnPlateau(opt, min_lr=[0.1])


def test_plateau_state_dict():
    opt = _optimizer()
    s = sched.ReduceLROnPlateau(opt, patience=1, mode="max")
    s.step(1.0)
    s.step(0.5)
    state = s.state_dict()
    assert "optimizer" not in state and state["best"] == 1.0 and state["num_bad_epochs"] == 1
    s2 = sched.ReduceLROnPlateau(_optimizer(), patience=1)
    s2.load_state_dict(state)
    assert s2.mode == "max" and s2._is_better(2.0, 1.0)


class _Halve:
    """A callable object: its __dict__ goes into LambdaLR's state_dict (plain lambdas do not)."""

    def __init__(self):
        self.factor = 0.5

    def __call__(self, epoch):
        return self.factor ** epoch


@pytest.mark.parametrize("make", [
    lambda o: sched.StepLR(o, 3, 0.5),
    lambda o: sched.CosineAnnealingLR(o, 9, 0.01),
    lambda o: sched.LambdaLR(o, _Halve()),
    lambda o: sched.CyclicLR(o, 0.01, 0.1, step_size_up=4),
    lambda o: sched.OneCycleLR(o, 1.0, total_steps=30),
    lambda o: sched.CosineAnnealingWarmRestarts(o, 4, 2),
    lambda o: sched.SequentialLR(o, [sched.LinearLR(o, 0.5, total_iters=4), sched.ExponentialLR(o, 0.8)], [4]),
    lambda o: sched.ChainedScheduler([sched.ExponentialLR(o, 0.9), sched.StepLR(o, 5)]),
], ids=["step", "cosine", "lambda", "cyclic", "onecycle", "warm_restarts", "sequential", "chained"])
def test_state_dict_resume(make):
    opt_a = _optimizer(momentum=0.9)
    a = make(opt_a)
    for _ in range(7):
        opt_a.step()
        a.step()
    saved_sched, saved_opt = a.state_dict(), opt_a.state_dict()
    assert "optimizer" not in saved_sched
    opt_b = _optimizer(momentum=0.9)
    b = make(opt_b)
    b.load_state_dict(saved_sched)
    opt_b.load_state_dict(saved_opt)
    for _ in range(10):
        opt_a.step()
        opt_b.step()
        a.step()
        b.step()
        assert a.get_last_lr() == b.get_last_lr()


def test_lambda_state_dict_keeps_callable_objects_only():
    opt = _optimizer()
    halve = _Halve()
    s = sched.LambdaLR(opt, [halve, lambda e: 1.0])
    state = s.state_dict()
    assert state["lr_lambdas"] == [{"factor": 0.5}, None]
    halve.factor = 0.1
    s.load_state_dict(state)
    assert halve.factor == 0.5
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        sched.LambdaLR(opt, [halve])
    with pytest.raises(TypeError, match="lr_lambda should be a function, but got float"):
        sched.MultiplicativeLR(opt, 0.5)


def test_initial_lr_and_resuming():
    opt = _optimizer()
    s = sched.ExponentialLR(opt, 0.5)
    assert [g["initial_lr"] for g in opt.param_groups] == list(BASES) and s.base_lrs == list(BASES)
    assert s.last_epoch == 0 and s._step_count == 1
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified in param_groups\\[0\\]"):
        sched.StepLR(_optimizer(), 3, last_epoch=4)
    resumed = sched.StepLR(opt, 3, gamma=0.5, last_epoch=4)  # epoch 5 of an existing run: rates kept as they are
    assert resumed.last_epoch == 5 and resumed.get_last_lr() == list(BASES)
    with pytest.raises(TypeError, match="int is not an Optimizer"):
        sched.StepLR(3, 3)


def test_warnings():
    opt = _optimizer()
    s = sched.StepLR(opt, 3)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        s.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s.get_lr()
    opt2 = _optimizer()
    s2 = sched.StepLR(opt2, 3)
    opt2.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s2.step()


def test_validation_errors():
    opt = _optimizer()
    with pytest.raises(ValueError, match="Constant multiplicative factor expected to be between 0 and 1."):
        sched.ConstantLR(opt, factor=1.5)
    with pytest.raises(ValueError, match="Starting multiplicative factor expected to be greater than 0"):
        sched.LinearLR(opt, start_factor=0)
    with pytest.raises(ValueError, match="Ending multiplicative factor expected to be between 0 and 1."):
        sched.LinearLR(opt, end_factor=2)
    with pytest.raises(ValueError, match="Expected positive integer T_0, but got 0"):
        sched.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1, but got 0"):
        sched.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=0)


# ------------------------------------------------------------------------------------------------ PyTorch oracle
ORACLE = {
    "lambda": lambda L, o: L.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1)]),
    "multiplicative": lambda L, o: L.MultiplicativeLR(o, lambda e: 0.9),
    "step": lambda L, o: L.StepLR(o, 7, 0.5),
    "multistep": lambda L, o: L.MultiStepLR(o, [5, 12, 12, 30], 0.3),
    "exponential": lambda L, o: L.ExponentialLR(o, 0.93),
    "linear": lambda L, o: L.LinearLR(o, 0.2, 0.9, 10),
    "constant": lambda L, o: L.ConstantLR(o, 0.25, 6),
    "polynomial": lambda L, o: L.PolynomialLR(o, 15, 2.0),
    "cosine": lambda L, o: L.CosineAnnealingLR(o, 10, 0.001),
    "warm_restarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, 5, 2, 0.01),
    "onecycle": lambda L, o: L.OneCycleLR(o, [1.0, 2.0], total_steps=41),
    "onecycle3": lambda L, o: L.OneCycleLR(o, 1.0, epochs=5, steps_per_epoch=9, three_phase=True,
                                           anneal_strategy="linear", pct_start=0.25),
    "cyclic": lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=4, step_size_down=6),
    "cyclic2": lambda L, o: L.CyclicLR(o, [0.01, 0.02], 0.1, step_size_up=5, mode="triangular2"),
    "cyclic3": lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="exp_range", gamma=0.95),
    "sequential": lambda L, o: L.SequentialLR(o, [L.LinearLR(o, 0.1, 1.0, 5), L.ExponentialLR(o, 0.9),
                                                  L.StepLR(o, 3)], [5, 20]),
    "chained": lambda L, o: L.ChainedScheduler([L.ConstantLR(o, 0.5, 4), L.ExponentialLR(o, 0.9),
                                                L.CosineAnnealingLR(o, 12)]),
    "plateau": lambda L, o: L.ReduceLROnPlateau(o, patience=1, cooldown=2, factor=0.5, min_lr=0.02),
}


@pytest.mark.parametrize("name", sorted(ORACLE))
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_matches_pytorch(name, opt_name):
    torch = pytest.importorskip("torch")
    metrics = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.5, 0.6, 0.6, 0.6, 0.6] * 4

    def sequence(lib, make_tensor):
        kw = {"momentum": 0.9} if opt_name == "SGD" else {}
        opt = getattr(lib.optim, opt_name)([{"params": [make_tensor()], "lr": lr} for lr in BASES], **kw)
        s = ORACLE[name](lib.optim.lr_scheduler, opt)
        out = []
        for i in range(40):
            opt.step()
            s.step(metrics[i]) if name == "plateau" else s.step()
            out.append((s.get_last_lr(), [dict((k, v) for k, v in g.items() if k != "params")
                                          for g in opt.param_groups]))
        return out

    ours = sequence(lucid, lambda: lucid.zeros(2, requires_grad=True))
    theirs = sequence(torch, lambda: torch.zeros(2, requires_grad=True))
    for (lr_a, groups_a), (lr_b, groups_b) in zip(ours, theirs):
        assert lr_a == lr_b
        for ga, gb in zip(groups_a, groups_b):
            assert {k: ga[k] for k in ("lr", "initial_lr", "momentum", "betas") if k in gb} == \
                   {k: gb[k] for k in ("lr", "initial_lr", "momentum", "betas") if k in gb}
