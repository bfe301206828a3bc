"""Rprop and ASGD against torch.optim over several steps: same start, same gradients, same parameters and state."""
import numpy as np
import pytest

import lucid

torch = pytest.importorskip("torch")

CASES = [
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("Rprop", {"maximize": True, "foreach": False, "differentiable": False, "capturable": False}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.1, "alpha": 0.5, "t0": 2, "weight_decay": 0.1}),
    ("ASGD", {"t0": 0, "maximize": True, "foreach": False}),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, kw", CASES)
def test_matches_torch_over_steps(name, kw, dtype):
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (5,)]
    starts = [rng.standard_normal(s).astype(dtype) for s in shapes]
    lp = [lucid.tensor(v, requires_grad=True) for v in starts]
    tp = [torch.tensor(v, requires_grad=True) for v in starts]
    lo, to = getattr(lucid.optim, name)(lp, **kw), getattr(torch.optim, name)(tp, **kw)
    for step in range(7):
        # gradients that often flip sign (Rprop's interesting case), and one step where they are zero
        for i, (a, b) in enumerate(zip(lp, tp)):
            g = (rng.standard_normal(shapes[i]) * (step != 3)).astype(dtype)
            a.grad, b.grad = lucid.tensor(g), torch.tensor(g)
        lo.step(), to.step()
        rtol = 1e-12 if dtype == np.float64 else 2e-6
        for a, b in zip(lp, tp):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=rtol)
    ls, ts = lo.state_dict(), to.state_dict()
    assert ls["param_groups"] == [{k: v for k, v in g.items()} for g in ts["param_groups"]]
    for i in ts["state"]:
        assert list(ls["state"][i]) == list(ts["state"][i])
        for key, tv in ts["state"][i].items():
            lv = ls["state"][i][key]
            assert lv.shape == tuple(tv.shape) and str(lv.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], key
            np.testing.assert_allclose(lv.numpy(), tv.numpy(), rtol=rtol, atol=rtol, err_msg=key)


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_state_dict_round_trip_continues_identically(name):
    rng = np.random.default_rng(1)
    v = rng.standard_normal(6)
    a, b = lucid.tensor(v, requires_grad=True), lucid.tensor(v, requires_grad=True)
    oa = getattr(lucid.optim, name)([a], lr=0.1, **({"t0": 1} if name == "ASGD" else {}))
    grads = [rng.standard_normal(6) for _ in range(6)]
    for g in grads[:3]:
        a.grad = lucid.tensor(g)
        oa.step()
    with lucid.no_grad():
        b.copy_(a)
    ob = getattr(lucid.optim, name)([b], lr=0.7)
    ob.load_state_dict(oa.state_dict())
    for g in grads[3:]:
        a.grad, b.grad = lucid.tensor(g), lucid.tensor(g)
        oa.step(), ob.step()
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_bad_options_raise_like_torch():
    p = [lucid.zeros(2, requires_grad=True)]
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        lucid.optim.Rprop(p, lr=-1)
    with pytest.raises(ValueError, match="Invalid eta values: 1.5, 1.2"):
        lucid.optim.Rprop(p, etas=(1.5, 1.2))
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        lucid.optim.ASGD(p, lr=-1)
    with pytest.raises(ValueError, match="Invalid weight_decay value: -0.1"):
        lucid.optim.ASGD(p, weight_decay=-0.1)


def test_global_step_hooks_run_around_every_optimizer_and_are_removable():
    from lucid.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
    calls = []
    p = lucid.zeros(2, requires_grad=True)
    opt = lucid.optim.SGD([p], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    hpre = register_optimizer_step_pre_hook(lambda o, a, k: calls.append(("gpre", o is opt)))
    hpost = register_optimizer_step_post_hook(lambda o, a, k: calls.append(("gpost", o is opt)))
    try:
        p.grad = lucid.ones(2)
        opt.step()
        # PyTorch's order: global pre, own pre, step, own post, global post
        assert calls == [("gpre", True), "pre", "post", ("gpost", True)]
    finally:
        hpre.remove(), hpost.remove()
    calls.clear()
    opt.step()
    assert calls == ["pre", "post"]


def test_step_pre_hook_returning_junk_raises_before_the_step():
    p = lucid.zeros(2, requires_grad=True)
    p.grad = lucid.ones(2)
    opt = lucid.optim.SGD([p], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: 3)
    with pytest.raises(RuntimeError, match=r"must return None or a tuple of \(new_args, new_kwargs\), but got 3"):
        opt.step()
    assert p.detach().numpy().tolist() == [0.0, 0.0]


@pytest.mark.parametrize("name, kw", [("Rprop", {}), ("ASGD", {"t0": 2, "lambd": 0.01}), ("NAdam", {})])
def test_compiled_step_matches_eager(name, kw):
    # inside lucid.compile the step counts are traced arrays: ASGD's eta and mu, NAdam's float32-rounded mu_product
    # must be computed, never read
    lucid.manual_seed(0)
    x, y = lucid.randn(16, 4), lucid.randint(0, 3, (16,))

    def train(compiled):
        lucid.manual_seed(1)
        model = lucid.nn.Linear(4, 3)
        opt = getattr(lucid.optim, name)(model.parameters(), lr=0.05, **kw)

        def step():
            opt.zero_grad()
            loss = lucid.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        f = lucid.compile(step) if compiled else step
        return [f().item() for _ in range(6)], [v.detach().numpy() for v in model.state_dict().values()]

    (le, pe), (lc, pc) = train(False), train(True)
    np.testing.assert_allclose(lc, le, rtol=1e-5, atol=1e-6)
    for a, b in zip(pe, pc):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)

