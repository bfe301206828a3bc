"""MAML and the PINN: their higher-order gradients are right (float64 finite differences) and they learn."""
import numpy as np
import pytest

import lucid
from lucid.models import maml, pinn


def _flat_grad(params):
    return np.concatenate([p.grad.numpy().ravel() for p in params])


def _finite_difference(loss_of_params, params, eps=1e-6):
    """Central differences of loss_of_params() w.r.t. every entry of every parameter (changed in place)."""
    out = []
    for p in params:
        base = p.detach().numpy().copy()
        for i in range(base.size):
            values = []
            for sign in (1, -1):
                moved = base.copy()
                moved.flat[i] += sign * eps
                with lucid.no_grad():
                    p.copy_(lucid.tensor(moved, dtype=lucid.float64))
                values.append(loss_of_params())
            out.append((values[0] - values[1]) / (2 * eps))
        with lucid.no_grad():
            p.copy_(lucid.tensor(base, dtype=lucid.float64))
    return np.array(out)


def test_maml_meta_gradient_is_second_order():
    """The meta-gradient equals a float64 finite difference of the post-adaptation query loss w.r.t. the initial
    parameters; the first-order approximation (no create_graph) does not."""
    lucid.manual_seed(0)
    model = maml.SineMLP(hidden=4, dtype=lucid.float64)
    params = list(model.parameters())
    tasks = maml.sample_tasks(3, k_shot=5, k_query=5, seed=1, dtype=lucid.float64)
    kwargs = dict(inner_steps=2, inner_lr=0.05)

    maml.meta_loss(model, tasks, **kwargs).backward()
    second_order = _flat_grad(params)
    for p in params:
        p.grad = None
    maml.meta_loss(model, tasks, first_order=True, **kwargs).backward()
    first_order = _flat_grad(params)

    def post_adaptation_loss():
        return maml.meta_loss(model, tasks, **kwargs).item()
    numerical = _finite_difference(post_adaptation_loss, params)
    np.testing.assert_allclose(second_order, numerical, rtol=1e-5, atol=1e-7)
    assert np.abs(first_order - numerical).max() > 1e-3 * np.abs(numerical).max()


def test_maml_adaptation_helps_after_short_meta_training():
    lucid.manual_seed(0)
    model = maml.SineMLP()
    optimizer = lucid.optim.Adam(model.parameters(), lr=3e-3)
    for step in range(250):
        optimizer.zero_grad()
        maml.meta_loss(model, maml.sample_tasks(10, seed=(0, step)), inner_steps=1, inner_lr=0.01).backward()
        optimizer.step()
    curve = maml.evaluate(model, maml.sample_tasks(100, seed=12345), inner_steps=5, inner_lr=0.01)
    assert curve[1] < 0.75 * curve[0]  # one inner step, as in meta-training (about 0.6 here)
    assert curve[5] < 0.6 * curve[0]


def test_pinn_laplacian_matches_finite_differences():
    lucid.manual_seed(0)
    model = pinn.PoissonPINN(dim=2, width=8, depth=2, dtype=lucid.float64)
    x = lucid.tensor(np.array([[0.3, 0.6], [0.7, 0.2]]), dtype=lucid.float64).requires_grad_()
    lap = pinn.laplacian(model(x), x).detach().numpy().ravel()
    h = 1e-4
    with lucid.no_grad():
        def u(points):
            return model(lucid.tensor(points, dtype=lucid.float64)).numpy().ravel()
        base = x.detach().numpy()
        numerical = -2 * 2 * u(base)
        for i in range(2):
            for sign in (1, -1):
                moved = base.copy()
                moved[:, i] += sign * h
                numerical += u(moved)
    np.testing.assert_allclose(lap, numerical / h ** 2, rtol=1e-4, atol=1e-5)


def test_pinn_residual_of_exact_solution_is_zero():
    class Exact(lucid.nn.Module):
        dim = 2

        def forward(self, x):
            return pinn.exact_solution(x)
    x, _ = pinn.collocation_points(16, 4, dim=2, dtype=lucid.float64)
    assert np.abs(pinn.residual(Exact(), x).detach().numpy()).max() < 1e-9


@pytest.mark.parametrize("dim", [1])
def test_pinn_reaches_small_error_against_exact_solution(dim):
    lucid.manual_seed(0)
    model = pinn.PoissonPINN(dim=dim, width=32, depth=3)
    start = pinn.relative_l2_error(model)
    optimizer = lucid.optim.Adam(model.parameters(), lr=3e-3)
    for step in range(200):
        interior, boundary = pinn.collocation_points(128, 32, dim=dim, seed=(0, step))
        optimizer.zero_grad()
        pinn.pinn_loss(model, interior, boundary).backward()
        optimizer.step()
    error = pinn.relative_l2_error(model)
    assert start > 0.5
    assert error < 0.05
