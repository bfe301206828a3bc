"""optim.LBFGS: PyTorch's algorithm (two-loop recursion, first-step scaling, strong-Wolfe line search), checked
against PyTorch step for step when it is installed, and on its own on the Rosenbrock function."""
import numpy as np
import pytest

import lucid


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def _run(lib, line_search, steps=5, history_size=100, max_iter=20, dtype=None):
    x = lib.tensor([-1.5, 2.0], dtype=dtype, requires_grad=True)
    opt = lib.optim.LBFGS([x], lr=1 if line_search else 0.1, line_search_fn=line_search, history_size=history_size,
                          max_iter=max_iter)

    def closure():
        opt.zero_grad()
        loss = rosenbrock(x)
        loss.backward()
        return loss

    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    return losses, x.detach().numpy(), opt


@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_lbfgs_matches_pytorch(line_search):
    torch = pytest.importorskip("torch")
    mine, x_mine, opt = _run(lucid, line_search, dtype=lucid.float64)
    ref, x_ref, topt = _run(torch, line_search, dtype=torch.float64)
    np.testing.assert_allclose(mine, ref, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(x_mine, x_ref, rtol=1e-6, atol=1e-9)
    s, ts = opt.state_dict()["state"][0], topt.state_dict()["state"][0]
    assert s["func_evals"] == ts["func_evals"] and s["n_iter"] == ts["n_iter"]
    assert len(s["old_dirs"]) == len(ts["old_dirs"])


def test_lbfgs_history_size_limits_memory():
    torch = pytest.importorskip("torch")
    mine, x_mine, opt = _run(lucid, "strong_wolfe", history_size=3, dtype=lucid.float64)
    ref, x_ref, _ = _run(torch, "strong_wolfe", history_size=3, dtype=torch.float64)
    assert len(opt.state_dict()["state"][0]["old_dirs"]) <= 3
    np.testing.assert_allclose(x_mine, x_ref, rtol=1e-6, atol=1e-9)


def test_lbfgs_strong_wolfe_minimises_rosenbrock():
    _, x, _ = _run(lucid, "strong_wolfe", steps=10, dtype=lucid.float64)
    np.testing.assert_allclose(x, [1.0, 1.0], atol=1e-5)


def test_lbfgs_max_eval_bounds_closure_calls():
    x = lucid.tensor([-1.5, 2.0], dtype=lucid.float64, requires_grad=True)
    opt = lucid.optim.LBFGS([x], max_iter=50, max_eval=7, line_search_fn="strong_wolfe")
    calls = []

    def closure():
        calls.append(1)
        opt.zero_grad()
        loss = rosenbrock(x)
        loss.backward()
        return loss

    opt.step(closure)
    assert opt.state[x]["func_evals"] == len(calls)
    assert len(calls) < 7 + 25  # stops at the first check after max_eval (a line search may run past it)


def test_lbfgs_stops_at_tolerance_grad():
    x = lucid.tensor([1.0, 1.0], dtype=lucid.float64, requires_grad=True)  # the minimum: gradient 0
    opt = lucid.optim.LBFGS([x])

    def closure():
        opt.zero_grad()
        loss = rosenbrock(x)
        loss.backward()
        return loss

    opt.step(closure)
    assert opt.state[x]["func_evals"] == 1 and "d" not in opt.state[x]


def test_lbfgs_state_dict_round_trip_continues_identically():
    _, _, opt = _run(lucid, "strong_wolfe", steps=2, dtype=lucid.float64)
    x = opt.param_groups[0]["params"][0]
    x2 = lucid.tensor(x.detach().numpy(), requires_grad=True)
    opt2 = lucid.optim.LBFGS([x2], line_search_fn="strong_wolfe")
    opt2.load_state_dict(opt.state_dict())
    for o, p in ((opt, x), (opt2, x2)):
        def closure(o=o, p=p):
            o.zero_grad()
            loss = rosenbrock(p)
            loss.backward()
            return loss
        o.step(closure)
    np.testing.assert_allclose(x.detach().numpy(), x2.detach().numpy(), rtol=1e-12)


def test_lbfgs_rejects_groups_and_unknown_line_search():
    a = lucid.zeros(2, requires_grad=True)
    b = lucid.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="per-parameter options"):
        lucid.optim.LBFGS([{"params": [a]}, {"params": [b]}])
    with pytest.raises(RuntimeError, match="only 'strong_wolfe'"):
        lucid.optim.LBFGS([a], line_search_fn="armijo")
    with pytest.raises(ValueError, match="Invalid learning rate"):
        lucid.optim.LBFGS([a], lr=-1)


def test_lbfgs_fits_a_linear_model():
    rng = np.random.default_rng(0)
    X = lucid.tensor(rng.normal(size=(32, 3)), dtype=lucid.float32)
    w_true = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    y = lucid.tensor(X.numpy() @ w_true)
    model = lucid.nn.Linear(3, 1, bias=False)
    opt = lucid.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((model(X).squeeze(1) - y) ** 2).mean()
        loss.backward()
        return loss

    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(model.weight.detach().numpy()[0], w_true, atol=1e-4)
