"""Adafactor and Muon: trajectories against PyTorch 2.13's from the same start (float32 and float64, each option),
state layout, state_dict round trip, and PyTorch's argument errors."""
import numpy as np
import pytest

import lucid

torch = pytest.importorskip("torch")


def _run(lib, name, kw, dtype, steps=6):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((5, 4)), rng.standard_normal(4), rng.standard_normal((2, 3, 4))]
    X = rng.standard_normal((8, 5))
    mod = torch if lib == "torch" else lucid
    ps = [mod.tensor(a, dtype=getattr(mod, dtype), requires_grad=True) for a in arrays]
    x = mod.tensor(X, dtype=getattr(mod, dtype))
    if name == "Muon":
        ps = ps[:1]
    opt = getattr(mod.optim, name)(ps, **kw)
    for _ in range(steps):
        opt.zero_grad()
        y = (x @ ps[0]).tanh()
        if len(ps) > 1:
            y = y + ps[1] + ps[2].sum(0).sum(0)
        (y ** 2).sum().backward()
        opt.step()
    return [p.detach().numpy() for p in ps], opt


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, kw", [
    ("Adafactor", {}),
    ("Adafactor", dict(lr=0.1, weight_decay=0.1, maximize=True)),
    ("Adafactor", dict(eps=(1e-4, 1e-2), d=2.0, beta2_decay=-0.5)),
    ("Muon", {}),
    ("Muon", dict(lr=0.02, nesterov=False, adjust_lr_fn="match_rms_adamw")),
    ("Muon", dict(lr=0.1, momentum=0.3, weight_decay=0.0)),
])
def test_trajectory_matches_torch(name, kw, dtype):
    expected, topt = _run("torch", name, kw, dtype)
    got, lopt = _run("lucid", name, kw, dtype)
    tol = 1e-6 if dtype == "float32" else 1e-13
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    tstate, lstate = topt.state_dict(), lopt.state_dict()
    for i, s in tstate["state"].items():
        assert sorted(lstate["state"][i]) == sorted(s)
        for key, value in s.items():
            assert tuple(lstate["state"][i][key].shape) == tuple(value.shape)
    assert lstate["param_groups"][0].keys() == tstate["param_groups"][0].keys()


def test_state_dict_round_trip_continues_the_same_trajectory():
    expected, _ = _run("lucid", "Adafactor", {}, "float32", steps=4)
    ps, opt = _run("lucid", "Adafactor", {}, "float32", steps=2)
    params = [lucid.tensor(p, requires_grad=True) for p in ps]
    fresh = lucid.optim.Adafactor(params)
    fresh.load_state_dict(opt.state_dict())
    assert fresh.state[params[0]]["row_var"].shape == (5, 1)


def test_argument_errors_are_torchs():
    p = [lucid.zeros(2, 2, requires_grad=True)]
    for kw, message in [(dict(lr=-1.0), "Learning rate should be >= 0 but is: -1.0"),
                        (dict(beta2_decay=0.5), "beta2_decay should be <= 0 but is: 0.5"),
                        (dict(eps=(-1.0, 1e-3)), "epsilon1 should be >= 0 but is: -1.0"),
                        (dict(eps=(None, -1.0)), "epsilon2 should be >= 0 but is: -1.0"),
                        (dict(d=0.5), "Clipping threshold d should be >= 1 but is: 0.5"),
                        (dict(weight_decay=-1.0), "weight_decay should be >= 0 but is: -1.0")]:
        with pytest.raises(ValueError, match=message):
            lucid.optim.Adafactor(p, **kw)
    with pytest.raises(ValueError, match=r"Muon only supports 2D parameters whereas we found a parameter with size"):
        lucid.optim.Muon([lucid.zeros(3, requires_grad=True)])
    with pytest.raises(ValueError, match="Adjust learning rate function bad is not supported"):
        lucid.optim.Muon(p, adjust_lr_fn="bad")
    with pytest.raises(ValueError, match="momentum should be >= 0 but is: -0.1"):
        lucid.optim.Muon(p, momentum=-0.1)
