"""lucid.compile(model): each call is one tape node whose forward and backward are compiled traces. Held to the eager
module (the semantics reference) by differential tests: the same losses, gradients, parameters, buffers and random
draws over several optimizer steps; and to PyTorch where installed. Every fallback to the eager module is checked
to give eager's results."""
import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid._compile import CompiledFunctionBackward, OptimizedModule

X = lucid.randn(16, 6, generator=lucid.Generator().manual_seed(3))
Y = lucid.randn(16, 3, generator=lucid.Generator().manual_seed(4))


def _mlp(dropout=0.0, norm=False):
    lucid.manual_seed(1)
    layers = [nn.Linear(6, 32), nn.BatchNorm1d(32) if norm else nn.Identity(), nn.GELU(), nn.Dropout(dropout),
              nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 3)]
    return nn.Sequential(*layers)


def _np(t):
    return np.array(t.detach())


def _train(model, steps, compiled, *, seed_each_step=True, modes=None, x=X, y=Y):
    """An ordinary eager loop; returns (losses, grads per step, the module)."""
    net = lucid.compile(model) if compiled else model
    opt = lucid.optim.Adam(model.parameters(), lr=1e-2)
    losses, grads = [], []
    for i in range(steps):
        if modes is not None:
            net.train(modes[i])
        if seed_each_step:
            lucid.manual_seed(100 + i)
        opt.zero_grad()
        loss = F.mse_loss(net(x), y)
        loss.backward()
        grads.append([_np(p.grad) for p in model.parameters()])
        opt.step()
        losses.append(loss.item())
    return losses, grads, net


def _assert_same_training(a, b, rtol=1e-5, atol=1e-6):
    (la, ga, _), (lb, gb, _) = a, b
    np.testing.assert_allclose(la, lb, rtol=rtol, atol=atol)
    for step_a, step_b in zip(ga, gb):
        for g1, g2 in zip(step_a, step_b):
            np.testing.assert_allclose(g1, g2, rtol=rtol, atol=atol)


def test_one_node_per_call_and_eager_gradients_over_optimizer_steps():
    model = _mlp()
    eager = _train(_mlp(), 6, False)
    compiled = _train(model, 6, True)
    _assert_same_training(eager, compiled)
    net = compiled[2]
    out = net(X)
    assert type(out.grad_fn) is CompiledFunctionBackward and out.grad_fn.name() == "CompiledFunctionBackward"
    assert all(e[0].__class__.__name__ == "AccumulateGrad" for e in out.grad_fn.next_functions)  # nothing between
    assert len(out.grad_fn.next_functions) == len(list(model.parameters()))
    (plan,) = [p for p in net._plans.values() if not isinstance(p, str)]
    assert plan.reuses_forward and plan.layout["residuals"]  # the backward reads the forward's values
    assert plan.traced and not plan.backward_failed  # (not the eager fallback)


def test_dropout_draws_from_lucids_generator_and_the_backward_replays_the_mask():
    eager = _train(_mlp(dropout=0.4), 5, False)
    compiled = _train(_mlp(dropout=0.4), 5, True)
    _assert_same_training(eager, compiled)
    model = _mlp(dropout=0.4)
    net = lucid.compile(model)
    for _ in range(3):
        net(X)
    a, b = net(X), net(X)  # the generator moves on between calls: new masks
    assert not np.allclose(_np(a), _np(b))


def test_train_and_eval_switches_retrace_and_batchnorm_buffers_follow_eager():
    modes = [True, True, True, False, False, True, False, True]
    ea, ca = _mlp(dropout=0.3, norm=True), _mlp(dropout=0.3, norm=True)
    eager = _train(ea, 8, False, modes=modes)
    compiled = _train(ca, 8, True, modes=modes)
    _assert_same_training(eager, compiled)
    for (name, b1), b2 in zip(ea.named_buffers(), ca.buffers()):
        np.testing.assert_allclose(_np(b1), _np(b2), rtol=1e-5, atol=1e-6, err_msg=name)
    assert int(ca[1].num_batches_tracked.item()) == 5


def test_gradients_equal_pytorchs():
    torch = pytest.importorskip("torch")
    model = _mlp()
    tmodel = torch.nn.Sequential(torch.nn.Linear(6, 32), torch.nn.Identity(), torch.nn.GELU(), torch.nn.Dropout(0.0),
                                 torch.nn.Linear(32, 32), torch.nn.Tanh(), torch.nn.Linear(32, 3))
    tmodel.load_state_dict({k: torch.tensor(_np(v)) for k, v in model.state_dict().items()})
    net = lucid.compile(model)
    for _ in range(3):  # the first call of a configuration runs eagerly, the second traces
        model.zero_grad()
        F.mse_loss(net(X), Y).backward()
    torch.nn.functional.mse_loss(tmodel(torch.tensor(_np(X))), torch.tensor(_np(Y))).backward()
    for p, (name, tp) in zip(model.parameters(), tmodel.named_parameters()):
        np.testing.assert_allclose(_np(p.grad), tp.grad.numpy(), rtol=1e-4, atol=1e-6, err_msg=name)


def test_input_gradients_shape_changes_and_requires_grad_changes():
    model = _mlp()
    net = lucid.compile(model)
    for n, rg in [(16, False), (16, False), (16, True), (16, True), (16, True), (5, True), (5, True), (5, False)]:
        x = X[:n].detach().requires_grad_(rg)
        h = x * 2.0 if rg else x  # a non-leaf input: its gradient flows on through the eager tape
        xe = X[:n].detach().requires_grad_(rg)
        he = xe * 2.0 if rg else xe
        model.zero_grad()
        F.mse_loss(net(h), Y[:n]).backward()
        got = [_np(p.grad) for p in model.parameters()], None if not rg else _np(x.grad)
        model.zero_grad()
        F.mse_loss(model(he), Y[:n]).backward()
        want = [_np(p.grad) for p in model.parameters()], None if not rg else _np(xe.grad)
        for g1, g2 in zip(got[0], want[0]):
            np.testing.assert_allclose(g1, g2, rtol=1e-5, atol=1e-6)
        if rg:
            np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-6)
    assert sum(1 for p in net._plans.values() if not isinstance(p, str)) == 3  # (16, no), (16, yes), (5, yes)


def test_grad_mode_off_runs_the_compiled_forward_without_recording():
    model = _mlp()
    net = lucid.compile(model)
    with lucid.no_grad():
        for _ in range(3):
            out = net(X)
    assert out.grad_fn is None and not out.requires_grad
    np.testing.assert_allclose(_np(out), _np(model(X)), rtol=1e-5, atol=1e-6)


def test_create_graph_runs_the_eager_module_for_a_differentiable_gradient():
    model, ref = _mlp(), _mlp()
    net = lucid.compile(model)

    def penalty(f, m):  # a gradient penalty: d/dθ ||d loss / dx||²
        x = X.detach().requires_grad_(True)
        loss = F.mse_loss(f(x), Y)
        (gx,) = lucid.autograd.grad(loss, [x], create_graph=True)
        m.zero_grad()
        (gx ** 2).sum().backward()
        return _np(gx), [_np(p.grad) for p in m.parameters()]

    for _ in range(3):
        got = penalty(net, model)
    want = penalty(ref, ref)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    for g1, g2 in zip(got[1], want[1]):
        np.testing.assert_allclose(g1, g2, rtol=1e-4, atol=1e-6)


def test_a_released_node_raises_and_retain_graph_keeps_it():
    net = lucid.compile(_mlp())
    for _ in range(2):
        net(X)
    loss = net(X).sum()
    loss.backward(retain_graph=True)
    loss.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        loss.backward()


def test_writing_a_parameter_between_forward_and_backward_is_a_version_error():
    model = _mlp()
    net = lucid.compile(model)
    for _ in range(2):
        net(X)
    loss = net(X).sum()
    with lucid.no_grad():
        model[0].weight.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_module_hooks_run_the_eager_module():
    model = _mlp()
    net = lucid.compile(model)
    seen = []
    handle = model[4].register_forward_hook(lambda m, i, o: seen.append(o.shape))
    for _ in range(3):
        out = net(X)
    assert len(seen) == 3 and type(out.grad_fn) is not CompiledFunctionBackward
    handle.remove()
    for _ in range(3):
        out = net(X)
    assert len(seen) == 3 and type(out.grad_fn) is CompiledFunctionBackward


class _Writes(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)

    def forward(self, x):
        x.mul_(2.0)  # an in-place write to the input
        return self.lin(x)


def test_an_in_place_write_to_an_input_stays_eager():
    net = lucid.compile(_Writes())
    for _ in range(3):
        x = X.clone()
        out = net(x)
        np.testing.assert_allclose(_np(x), _np(X) * 2.0)
    assert type(out.grad_fn) is not CompiledFunctionBackward and list(net._plans.values()) == ["eager"]


class _ReadsValue(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)

    def forward(self, x):
        y = self.lin(x)
        return y * 2.0 if y.sum().item() > 0 else y  # Python control flow on a value: cannot be traced


def test_a_forward_that_reads_values_runs_eagerly_and_fullgraph_raises():
    model = _ReadsValue()
    net = lucid.compile(model)
    out = net(X)
    with pytest.warns(UserWarning, match="forward of _ReadsValue could not be traced"):
        out = net(X)
    out = net(X)
    np.testing.assert_allclose(_np(out), _np(model(X)), rtol=1e-6)
    strict = lucid.compile(model, fullgraph=True)
    strict(X)
    with pytest.raises(RuntimeError, match="read a tensor's value"):
        strict(X)


def test_index_checks_inside_the_compiled_forward_raise_as_in_eager():
    emb = nn.Embedding(5, 3)
    net = lucid.compile(emb)
    ok = lucid.tensor([0, 4, 2])
    for _ in range(3):
        net(ok).sum().backward()
    bad = ok + lucid.tensor([0, 3, 0])  # computed, so its values are not known until evaluated: checked later
    out = net(bad)
    assert type(out.grad_fn) is CompiledFunctionBackward
    with pytest.raises(IndexError, match="index out of range"):
        out.sum().backward()
    assert emb.weight.grad is not None  # (from the good calls; the failed backward changed nothing)


def test_a_compiled_module_inside_a_compiled_step_and_torch_compile():
    model = _mlp()
    net = lucid.compile(model)
    opt = lucid.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(net(x), y)
        loss.backward()
        opt.step()
        return loss

    ref = _mlp()
    ref_opt = lucid.optim.SGD(ref.parameters(), lr=0.1)
    f = lucid.compile(step, state=[model, opt])
    for _ in range(4):
        got = f(X, Y)
        ref_opt.zero_grad()
        want = F.mse_loss(ref(X), Y)
        want.backward()
        ref_opt.step()
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-5)
    from lucid.compat import torch as ltorch
    c = ltorch.compile(_mlp(), mode="max-autotune", fullgraph=False, dynamic=None)
    assert isinstance(c, OptimizedModule)
    for _ in range(3):
        out = c(X)
    assert type(out.grad_fn) is CompiledFunctionBackward
    e = ltorch.compile(_mlp(), backend="eager")
    for _ in range(3):
        out = e(X)
    assert type(out.grad_fn) is not CompiledFunctionBackward


class _ReadInBackward(lucid.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 3.0

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (3.0 if x.sum().item() != 0 else 0.0)  # reads a value: this backward cannot be traced


class _Custom(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 3)

    def forward(self, x):
        return _ReadInBackward.apply(self.lin(x))


def test_a_backward_that_cannot_be_traced_runs_the_eager_module_again():
    model, ref = _Custom(), _Custom()
    ref.load_state_dict(model.state_dict())
    net = lucid.compile(model)
    net(X).sum().backward()
    model.zero_grad()
    out = net(X)
    assert type(out.grad_fn) is CompiledFunctionBackward
    with pytest.warns(UserWarning, match="backward of _Custom could not be traced"):
        out.sum().backward()
    ref(X).sum().backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(_np(p.grad), _np(q.grad), rtol=1e-6)


def test_a_replaced_layer_is_followed():
    model = _mlp()
    net = lucid.compile(model)
    for _ in range(3):
        net(X)
    model[6] = nn.Linear(32, 3)  # a new submodule, with new parameters
    for _ in range(3):
        model.zero_grad()
        out = net(X)
        out.sum().backward()
    np.testing.assert_allclose(_np(out), _np(model(X)), rtol=1e-5, atol=1e-6)
    assert model[6].weight.grad is not None


def test_a_dtype_change_of_the_parameters_retraces():
    lucid.manual_seed(2)
    model = nn.Sequential(nn.Linear(6, 4), nn.Tanh())
    ref = nn.Sequential(nn.Linear(6, 4), nn.Tanh())
    ref.load_state_dict(model.state_dict())
    net = lucid.compile(model)
    for _ in range(3):
        net(X).sum().backward()
    model.double()
    ref.double()
    x = X.double()
    for _ in range(3):
        model.zero_grad()
        out = net(x)
        out.sum().backward()
    assert out.dtype == lucid.float64 and model[0].weight.grad.dtype == lucid.float64
    ref(x).sum().backward()
    np.testing.assert_allclose(_np(model[0].weight.grad), _np(ref[0].weight.grad), rtol=1e-10, atol=1e-12)


class _TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 8)
        self.a = nn.Linear(8, 3)
        self.b = nn.Linear(8, 2)
        self.const = lucid.ones(3)  # a tensor attribute: outputs made from it alone need no gradient

    def forward(self, x, *, scale=1.0):
        h = F.relu(self.body(x)) * scale
        return {"a": self.a(h), "b": self.b(h), "n": x.shape[0], "idx": h.argmax(dim=1), "c": self.const * 2.0}


def test_structured_outputs_an_unused_head_kwargs_and_two_calls_in_one_graph():
    model, ref = _TwoHeads(), _TwoHeads()
    ref.load_state_dict(model.state_dict())
    net = lucid.compile(model)

    def loss_of(m):
        one, two = m(X, scale=0.5), m(X[:8] * 2.0, scale=0.5)  # the same weights used twice: two nodes
        return one["a"].sum() + (two["a"] ** 2).mean(), one
    for _ in range(3):
        model.zero_grad()
        loss, out = loss_of(net)
        loss.backward()
    ref_loss, ref_out = loss_of(ref)
    ref_loss.backward()
    assert out["n"] == 16 and out["idx"].dtype == lucid.int64 and not out["idx"].requires_grad
    assert not out["c"].requires_grad and out["a"].requires_grad
    np.testing.assert_array_equal(_np(out["idx"]), _np(ref_out["idx"]))
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        if name.startswith("b."):  # the unused head: no gradient reaches it, .grad stays None as in eager mode
            assert p.grad is None and q.grad is None
        else:
            np.testing.assert_allclose(_np(p.grad), _np(q.grad), rtol=1e-5, atol=1e-6, err_msg=name)


def test_a_compiled_module_can_be_copied():
    import copy
    net = lucid.compile(_mlp())
    for _ in range(3):
        net(X)
    twin = copy.deepcopy(net)
    for _ in range(3):
        out = twin(X)
    assert type(out.grad_fn) is CompiledFunctionBackward
    np.testing.assert_allclose(_np(out), _np(net(X)), rtol=1e-6)
