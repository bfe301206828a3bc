"""differentiable=True: the optimizer step on the autograd tape. PyTorch's TestDifferentiableOptimizer check, for the
optimizers it covers: gradcheck of (new parameter, new state) with respect to the parameter, the gradient and the
state tensors given as tensors that require grad; the same values as a plain step; state created by the step."""
import numpy as np
import pytest

import lucid
import lucid.optim as O
from lucid.autograd import gradcheck

CASES = [(O.SGD, dict(lr=0.9, momentum=0.9, nesterov=True, weight_decay=0.1)),
         (O.Adam, dict(lr=0.9, amsgrad=True, weight_decay=0.1)),
         (O.AdamW, dict(lr=0.9)),
         (O.Adagrad, dict(lr=0.9)),
         (O.Adadelta, dict(lr=0.9, weight_decay=0.1)),
         (O.Adamax, dict(lr=0.9)),
         (O.ASGD, dict(lr=0.9)),
         (O.NAdam, dict(lr=0.9)),
         (O.RAdam, dict(lr=0.9)),
         (O.RMSprop, dict(lr=0.9, centered=True, momentum=0.9)),
         (O.Rprop, dict(lr=0.9))]


def _step(p, grad, state, cls, kwargs, *ignored):
    """PyTorch's _diff_fn: a fresh optimizer over a copy of p, its state set from ``state``, one step."""
    p = p.clone()
    p.grad = grad
    state = {k: v.clone() if isinstance(v, lucid.Tensor) else v for k, v in state.items()}
    opt = cls([p], **kwargs)
    opt.state[p].update(state)
    opt.step()
    return (p,) + tuple(v for v in opt.state[p].values() if isinstance(v, lucid.Tensor) and v.requires_grad)


def _state(cls, kwargs, seed):
    """Random state with the optimizer's own keys (taken from one plain step); step counts at 10."""
    rng = np.random.default_rng(seed)
    q = lucid.zeros(10, dtype=lucid.float64, requires_grad=True)
    q.grad = lucid.ones(10, dtype=lucid.float64)
    opt = cls([q], **kwargs)
    opt.step()
    state = {}
    for key, value in opt.state[q].items():
        if isinstance(value, lucid.Tensor) and value.ndim > 0:
            low = 0.01 if key == "grad_avg" else 0.5  # (centered RMSprop: square_avg - grad_avg**2 stays positive)
            state[key] = lucid.tensor(rng.uniform(low, 2 * low, 10), requires_grad=True)
        else:
            state[key] = lucid.tensor(10.0) if key == "step" else value
    return state


@pytest.mark.parametrize("cls, kwargs", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradcheck_through_step(cls, kwargs):
    rng = np.random.default_rng(0)
    p = lucid.tensor(rng.uniform(0, 1, 10), requires_grad=True)
    grad = lucid.tensor(rng.uniform(0, 1, 10), requires_grad=True)
    state = _state(cls, kwargs, 1)
    kwargs = dict(kwargs, differentiable=True)
    assert gradcheck(_step, (p, grad, state, cls, kwargs, *state.values()))


@pytest.mark.parametrize("cls, kwargs", CASES[:3], ids=[c[0].__name__ for c in CASES[:3]])
def test_a_differentiable_step_takes_the_plain_steps_values_and_creates_its_state(cls, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    start, grads = rng.uniform(0, 1, 6), [rng.uniform(-1, 1, 6) for _ in range(3)]
    x = lucid.tensor(start, requires_grad=True).clone()  # a non-leaf, as a differentiable step needs
    # (PyTorch's own differentiable Adam takes its bias corrections in float32, from the step tensor's dtype: the
    # reference is its plain step, which lucid's differentiable step equals)
    t = torch.tensor(start, requires_grad=True)
    lopt = cls([x], **kwargs, differentiable=True)
    topt = getattr(torch.optim, cls.__name__)([t], **kwargs)
    for g in grads:
        x.grad, t.grad = lucid.tensor(g), torch.tensor(g)
        lopt.step()
        topt.step()
    np.testing.assert_allclose(x.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert sorted(lopt.state[x]) == sorted(topt.state[t])
    assert x.grad_fn is not None  # the whole trajectory is on the tape, back to the starting point


@pytest.mark.parametrize("decoupled", [False, True])
def test_nadam_learns_through_mu_product_as_torch(decoupled):
    """PyTorch's test gives NAdam's 0-d ``mu_product`` as a float64 tensor that requires grad: the new parameter
    and the new mu_product depend on it (gradcheck), with torch's gradients, and it stays float64."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    v = {k: rng.uniform(0, 1, 10) for k in ("p", "g", "m", "s")}
    kwargs = dict(lr=0.9, differentiable=True, decoupled_weight_decay=decoupled, weight_decay=0.1)

    def state(lib):
        return {"step": lib.tensor(10.0, dtype=lib.float64), "exp_avg": lib.tensor(v["m"], requires_grad=True),
                "exp_avg_sq": lib.tensor(v["s"], requires_grad=True),
                "mu_product": lib.tensor(0.8, dtype=lib.float64, requires_grad=True)}

    ls = state(lucid)
    p, g = lucid.tensor(v["p"], requires_grad=True), lucid.tensor(v["g"], requires_grad=True)
    assert gradcheck(_step, (p, g, ls, O.NAdam, kwargs, *ls.values()))

    ts = state(torch)
    pt, gt = torch.tensor(v["p"], requires_grad=True), torch.tensor(v["g"], requires_grad=True)
    outs_l = _step(p, g, ls, O.NAdam, kwargs)
    q = pt.clone()
    q.grad = gt
    topt = torch.optim.NAdam([q], **kwargs)
    topt.state[q].update({k: t.clone() for k, t in ts.items()})
    topt.step()
    outs_t = (q,) + tuple(t for t in topt.state[q].values() if t.requires_grad)
    assert len(outs_l) == len(outs_t) == 4 and outs_l[-1].dtype == lucid.float64
    for ol, ot in zip(outs_l, outs_t):
        np.testing.assert_allclose(ol.detach().numpy(), ot.detach().numpy(), rtol=1e-12)
        gl = lucid.autograd.grad(ol.sum(), [ls["mu_product"], g], allow_unused=True)
        gtt = torch.autograd.grad(ot.sum(), [ts["mu_product"], gt], allow_unused=True, retain_graph=True)
        for a, b in zip(gl, gtt):
            a = np.zeros(()) if a is None else a.numpy()
            b = np.zeros(()) if b is None else b.numpy()
            np.testing.assert_allclose(np.broadcast_to(a, np.shape(b) or np.shape(a)), b, rtol=1e-10, atol=1e-12)
