"""optim.swap_in_optimizer_params_and_state: a step on other parameters and a state_dict-shaped state, against
PyTorch; the live optimizer restored; the swapped-in state written in place; PyTorch's errors."""
import numpy as np
import pytest

import lucid

torch = pytest.importorskip("torch")


def _run(mod):
    rng = np.random.default_rng(0)
    m, m2 = mod.nn.Linear(3, 2), mod.nn.Linear(3, 2)
    with mod.no_grad():
        for p in list(m.parameters()) + list(m2.parameters()):
            p.copy_(mod.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    opt = mod.optim.Adam(m.parameters(), lr=0.1)
    x = mod.tensor(rng.standard_normal((4, 3)).astype(np.float32))
    m(x).sum().backward()
    opt.step()
    sd = opt.state_dict()
    osd = {"state": {k: {kk: vv.clone() for kk, vv in v.items()} for k, v in sd["state"].items()},
           "param_groups": [dict(g, lr=0.5) for g in sd["param_groups"]]}
    m2(x).sum().backward()
    with mod.optim.swap_in_optimizer_params_and_state(opt, dict(m2.named_parameters()), osd):
        opt.step()
        inside = opt.param_groups[0]["lr"], opt.param_groups[0]["params"][0] is m2.weight
    return ([p.detach().numpy() for p in m2.parameters()], osd["state"][0]["exp_avg"].numpy(), inside,
            opt.param_groups[0]["lr"], opt.param_groups[0]["params"][0] is m.weight, len(opt.state))


def test_a_swapped_in_step_matches_torch_and_restores_the_optimizer():
    expected, got = _run(torch), _run(lucid)
    for a, b in zip(got[0], expected[0]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-6, atol=1e-6)  # written in place into the caller's state
    assert got[2:] == expected[2:] == ((0.5, True), 0.1, True, 2)


def test_errors_are_torchs():
    p = lucid.zeros(2, requires_grad=True)
    opt = lucid.optim.SGD([p], lr=0.1, momentum=0.9)
    with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
        with lucid.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, opt.state_dict()):
            pass
    p.grad = lucid.ones(2)
    opt.step()
    sd = opt.state_dict()
    with pytest.raises(RuntimeError, match="different number of parameter groups"):
        with lucid.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, dict(sd, param_groups=[])):
            pass
    bad = dict(sd, param_groups=[{k: v for k, v in sd["param_groups"][0].items() if k != "lr"}])
    with pytest.raises(RuntimeError, match=r"Keys only in swap-in: \[\]. Keys only in live: \['lr'\]"):
        with lucid.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, bad):
            pass
    with pytest.raises(RuntimeError, match="got extra keys \\[7\\]"):
        with lucid.optim.swap_in_optimizer_params_and_state(opt, {"p": p}, dict(sd, state={**sd["state"], 7: {}})):
            pass
