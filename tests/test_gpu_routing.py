"""float64 on a GPU default device runs on the CPU stream (lucid._cpu_route): on MLX's GPU where there is one, else
on a CPU-only MLX with the simulated GPU of tests/simgpu.py, where MLX refuses float64 off the CPU stream exactly as
its GPU backends do. Either way, every float64 op below that lucid did not route to the CPU would raise. Values
are checked against numpy or closed forms; gradients with gradcheck and gradgradcheck."""
import threading

import mlx.core as mx
import numpy as np
import pytest

import lucid
from lucid import _cpu_route
from lucid.autograd import gradcheck, gradgradcheck
from simgpu import REFUSAL, simulated_gpu

f64 = lucid.float64


@pytest.fixture
def gpu():
    """MLX's GPU as the default device: the real one where this MLX has a GPU, else the simulated one."""
    if mx.is_available(mx.gpu):
        before = mx.default_device()
        mx.set_default_device(mx.gpu)
        try:
            yield
        finally:
            mx.set_default_device(before)
    else:
        with simulated_gpu():
            assert lucid.get_default_device().type == "gpu"
            yield
    assert _cpu_route._OnCpu._depth == 0  # every scope closed


@pytest.fixture
def scopes(monkeypatch):
    """How many times lucid entered its CPU scope."""
    count = [0]
    enter = _cpu_route._OnCpu.__enter__

    def counted(self):
        count[0] += 1
        return enter(self)

    monkeypatch.setattr(_cpu_route._OnCpu, "__enter__", counted)
    return count


def test_the_simulation_refuses_float64_as_mlx_gpus_do(gpu):
    with pytest.raises(ValueError, match=REFUSAL):
        mx.array([1.0], dtype=mx.float64) + 1
    np.testing.assert_array_equal(np.array(mx.add(mx.array([1.0], dtype=mx.float64), 1, stream=mx.cpu)), [2.0])


@pytest.mark.cpu_only("about a CPU default device")
def test_nothing_is_routed_on_a_cpu_default(scopes):
    x = lucid.tensor([0.5, 1.5], dtype=f64, requires_grad=True)
    (x.sin() * x).sum().backward()
    lucid.zeros(3, dtype=f64).add_(1)
    assert gradcheck(lucid.exp, (x,))
    lucid.sort(x.detach())
    assert scopes[0] == 0


def test_float32_work_stays_on_the_gpu(gpu, scopes):
    x = lucid.randn(4, 3, requires_grad=True)
    loss = (lucid.nn.functional.softmax(x @ x.T, dim=1) * 2).sum()
    loss.backward()
    lucid.sort(x.detach(), dim=1)
    assert scopes[0] == 0 and x.grad.shape == (4, 3)


def test_factories_and_casts_make_float64_on_the_cpu(gpu):
    assert lucid.tensor([1.0, 2.0], dtype=f64).dtype == f64
    np.testing.assert_array_equal(lucid.zeros(2, 3, dtype=f64).numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(lucid.ones(2, dtype=f64).numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(lucid.full((2,), 0.1, dtype=f64).numpy(), [0.1, 0.1])
    np.testing.assert_array_equal(lucid.eye(2, dtype=f64).numpy(), np.eye(2))
    np.testing.assert_array_equal(lucid.arange(0, 1, 0.25, dtype=f64).numpy(), [0, 0.25, 0.5, 0.75])
    r = lucid.rand(1000, dtype=f64).numpy()
    assert r.dtype == np.float64 and 0 <= r.min() and r.max() < 1
    assert lucid.randn(3, 3, dtype=f64).dtype == f64
    x = lucid.tensor([1.5, -2.25])
    assert x.double().dtype == f64 and x.to(f64).dtype == f64
    np.testing.assert_array_equal(x.double().float().numpy(), [1.5, -2.25])


def test_float64_values_forward_and_backward(gpu):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    x = lucid.tensor(a, dtype=f64, requires_grad=True)
    y = (x.exp() * x.sin()).sum(dim=1) @ lucid.ones(3, dtype=f64)
    np.testing.assert_allclose(y.item(), (np.exp(a) * np.sin(a)).sum(), rtol=1e-13)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(a) * (np.sin(a) + np.cos(a)), rtol=1e-13)
    (g,) = lucid.autograd.grad((x * x).sum(), [x], create_graph=True)
    (gg,) = lucid.autograd.grad(g.sum(), [x])
    np.testing.assert_array_equal(gg.numpy(), np.full((3, 4), 2.0))


def test_mixed_float32_float64_promotes_and_backpropagates(gpu):
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    w = lucid.tensor([0.5, 0.25], dtype=f64, requires_grad=True)
    y = x * w
    assert y.dtype == f64
    y.sum().backward()
    assert x.grad.dtype == lucid.float32 and w.grad.dtype == f64
    np.testing.assert_array_equal(x.grad.numpy(), [0.5, 0.25])
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 2.0])


@pytest.mark.parametrize("fn, shape", [
    (lambda a: (a @ a.T).tanh(), (3, 4)),
    (lambda a: lucid.nn.functional.softmax(a, dim=1) * a.exp(), (3, 4)),
    (lambda a: lucid.nn.functional.gelu(a).cumsum(1), (3, 4)),
    (lambda a: lucid.sort(a, dim=1).values * lucid.var_mean(a, dim=0)[0], (3, 4)),
    (lambda a: lucid.linalg.inv(a @ a.T + 3 * lucid.eye(3, dtype=f64)), (3, 3)),
    (lambda a: a[1:, ::2].max(dim=0).values, (3, 4)),
    (lambda a: lucid.stack(lucid.split(a, [1, 2], dim=0)[1].unbind(0)).erf(), (3, 4)),
], ids=["matmul_tanh", "softmax_exp", "gelu_cumsum", "sort_var_mean", "linalg_inv", "index_max_dim",
        "split_unbind_erf"])
def test_gradcheck_and_gradgradcheck_on_a_gpu_default(gpu, fn, shape):
    a = lucid.tensor(np.random.default_rng(1).uniform(-1, 1, shape), dtype=f64, requires_grad=True)
    assert gradcheck(fn, (a,))
    assert gradgradcheck(fn, (a,))


def test_in_place_writes_and_views_of_float64(gpu):
    x = lucid.zeros(2, 3, dtype=f64)
    x[0] = lucid.tensor([1.0, 2.0, 3.0], dtype=f64)
    row = x[1]
    row.add_(5)  # through a view: the base sees it
    x.mul_(2)
    np.testing.assert_array_equal(x.numpy(), [[2, 4, 6], [10, 10, 10]])
    np.testing.assert_array_equal(row.numpy(), [10, 10, 10])
    y = lucid.ones(2)
    y.add_(lucid.tensor([0.5, 0.5], dtype=f64))  # float64 result cast into float32 self
    assert y.dtype == lucid.float32
    np.testing.assert_array_equal(y.numpy(), [1.5, 1.5])


def test_a_float64_model_trains_with_each_optimizer(gpu):
    rng = np.random.default_rng(0)
    xs = lucid.tensor(rng.standard_normal((32, 3)), dtype=f64)
    ys = xs @ lucid.tensor([[1.0], [-2.0], [0.5]], dtype=f64)
    for make in (lambda p: lucid.optim.SGD(p, lr=0.1, momentum=0.9), lambda p: lucid.optim.Adam(p, lr=0.05)):
        lucid.manual_seed(0)
        model = lucid.nn.Linear(3, 1).double()
        opt = make(model.parameters())
        first = None
        for _ in range(60):
            opt.zero_grad()
            loss = lucid.nn.functional.mse_loss(model(xs), ys)
            loss.backward()
            opt.step()
            first = loss.item() if first is None else first
        assert model.weight.dtype == f64 and loss.item() < 0.05 * first
        opt.load_state_dict(opt.state_dict())


def test_mlx_errors_other_than_the_refusal_keep_pytorchs_type(gpu):
    a = lucid.zeros(2, 3, dtype=f64)
    with pytest.raises(RuntimeError, match="size of tensor a"):
        a + lucid.zeros(4, dtype=f64)


def test_the_cpu_scope_is_shared_by_threads_and_restores_the_gpu(gpu):
    start = threading.Barrier(4)

    def work():
        start.wait()
        for _ in range(20):
            x = lucid.tensor([1.0, 2.0], dtype=f64, requires_grad=True)
            (x * x).sum().backward()
            assert x.grad.tolist() == [2.0, 4.0]

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert mx.default_device().type == mx.gpu and _cpu_route._OnCpu._depth == 0
