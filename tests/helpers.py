"""Shared test helpers: float64 leaves and the gradcheck + gradgradcheck pair every op gets."""
import numpy as np

import lucid
from lucid.autograd import gradcheck, gradgradcheck


def leaf(*shape, low=-1.0, high=1.0, seed=0, requires_grad=True):
    """A float64 leaf with uniform values in [low, high)."""
    rng = np.random.default_rng(seed)
    return lucid.tensor(rng.uniform(low, high, shape), dtype=lucid.float64, requires_grad=requires_grad)


def check_grads(fn, *inputs, atol=1e-5, rtol=1e-3, second=True):
    """First and second derivatives of fn at inputs against central finite differences."""
    assert gradcheck(fn, inputs, atol=atol, rtol=rtol)
    if second:
        assert gradgradcheck(fn, inputs, atol=atol, rtol=rtol)
