"""LBFGS on flat and linear functions: PyTorch divides by zero there with IEEE results (its scalars are tensors) and
returns early or clips the step; lucid must neither raise ZeroDivisionError nor produce NaN."""
import numpy as np
import pytest

import lucid

torch = pytest.importorskip("torch")


def _run(lib, mode, **kw):
    p = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    opt = lib.optim.LBFGS([p], **kw)

    def closure():
        opt.zero_grad()
        loss = (p * 0).sum() + 3.0 if mode == "zero" else lib.tensor(3.0, dtype=lib.float64, requires_grad=True)
        loss.backward()
        return loss

    loss = opt.step(closure)
    return float(loss), p.detach().numpy().copy()


@pytest.mark.parametrize("mode", ["zero", "no_grad"])
@pytest.mark.parametrize("kw", [{}, {"tolerance_grad": -1.0}, {"line_search_fn": "strong_wolfe"},
                                {"tolerance_grad": -1.0, "line_search_fn": "strong_wolfe"}])
def test_constant_function_matches_torch(mode, kw):
    (lloss, lp), (tloss, tp) = _run(lucid, mode, **kw), _run(torch, mode, **kw)
    assert lloss == tloss == 3.0
    np.testing.assert_array_equal(lp, tp)  # unchanged: PyTorch stops before moving


def test_linear_function_with_line_search_clips_instead_of_dividing_by_zero():
    # a constant slope makes the cubic's denominator 0: PyTorch gets inf and clips the step to 10x; so must lucid
    p = lucid.tensor([1.0, 2.0], dtype=lucid.float64, requires_grad=True)
    opt = lucid.optim.LBFGS([p], line_search_fn="strong_wolfe", tolerance_grad=-1.0)

    def closure():
        opt.zero_grad()
        loss = p.sum()
        loss.backward()
        return loss

    assert float(opt.step(closure)) == 3.0
    x = p.detach().numpy()
    assert np.all(np.isfinite(x)) and np.all(x < -1e20)  # extrapolated far downhill, as PyTorch does (~-5e23)
