"""Complex gradients follow PyTorch's convention (the gradient of a real loss with respect to z is dL/d conj(z), so
a holomorphic op's input gradient is g * conj(f'(z))): each op against PyTorch, first and second order, the raw and
the recording backward."""
import numpy as np
import pytest

import lucid

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)


def _c(*shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


Z, W, C, P = _c(3), _c(3), _c(3), _c(3)
OPS = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b, "rsub": lambda m, a, b: 2.0 - a,
    "mul": lambda m, a, b: a * b, "div": lambda m, a, b: a / b, "neg": lambda m, a, b: -a,
    "pow": lambda m, a, b: a ** b, "pow_scalar": lambda m, a, b: a ** 3.0, "reciprocal": lambda m, a, b: a.reciprocal(),
    "square": lambda m, a, b: a.square(), "sqrt": lambda m, a, b: a.sqrt(), "rsqrt": lambda m, a, b: a.rsqrt(),
    "exp": lambda m, a, b: a.exp(), "log": lambda m, a, b: a.log(),
    "log2": lambda m, a, b: a.log2(), "log10": lambda m, a, b: a.log10(), "log1p": lambda m, a, b: a.log1p(),
    "sin": lambda m, a, b: a.sin(), "cos": lambda m, a, b: a.cos(), "tan": lambda m, a, b: a.tan(),
    "sinh": lambda m, a, b: a.sinh(), "cosh": lambda m, a, b: a.cosh(), "tanh": lambda m, a, b: a.tanh(),
    "prod": lambda m, a, b: a.prod().reshape(1), "dot": lambda m, a, b: m.dot(a, b).reshape(1),
    "mv": lambda m, a, b: m.mv(a.reshape(3, 1).expand(3, 3), b),
    "mm": lambda m, a, b: m.mm(a.reshape(3, 1), b.reshape(1, 3)).reshape(-1)[:3],
    "abs": lambda m, a, b: a.abs(), "real": lambda m, a, b: a.real * b.imag,
}


def _grads(m, name, create_graph=False):
    z, w = (m.tensor(v, requires_grad=True) for v in (Z, W))
    y = OPS[name](m, z, w)
    c = m.tensor(C[:y.shape[0]])
    loss = (y * c).real.sum() if y.is_complex() else (y * c.real).sum()
    gz, gw = m.autograd.grad(loss, (z, w), create_graph=create_graph, allow_unused=True)
    return z, w, gz, gw


@pytest.mark.parametrize("name", sorted(OPS))
def test_complex_gradients_match_pytorch(name):
    _, _, tz, tw = _grads(torch, name)
    _, _, lz, lw = _grads(lucid, name)
    for t, got in ((tz, lz), (tw, lw)):
        if t is None:
            assert got is None or not np.any(got.numpy())
        else:
            np.testing.assert_allclose(got.numpy(), t.resolve_conj().numpy(), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", ["mul", "exp", "pow", "mm"])
def test_complex_second_derivatives_match_pytorch(name):
    def second(m):
        z, w, gz, _ = _grads(m, name, create_graph=True)
        probe = m.tensor(P[:gz.shape[0]])
        return m.autograd.grad((gz * probe).real.sum(), (z, w), allow_unused=True)
    for t, got in zip(second(torch), second(lucid)):
        if t is None:
            assert got is None or not np.any(got.numpy())
        else:
            np.testing.assert_allclose(got.numpy(), t.resolve_conj().numpy(), rtol=2e-5, atol=2e-5)


def test_real_inputs_are_unchanged_by_the_rule():
    x = lucid.tensor([0.5, 2.0], requires_grad=True)
    (x.exp() * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 2.0]) * (1 + np.array([0.5, 2.0])), rtol=1e-6)
