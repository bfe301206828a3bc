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


def op_table_tests(ops, low=-2.0, high=2.0):
    """The two tests every entry of an op table gets: its float64 forward against the numpy reference, and
    gradcheck + gradgradcheck. ``ops``: (name, lucid fn, numpy ref, input shapes). Use as
    ``test_forward_matches_numpy, test_gradients = op_table_tests(OPS)``."""
    import pytest

    cases = [pytest.param(fn, ref, shapes, id=name) for name, fn, ref, shapes in ops]

    def inputs(shapes):
        return [leaf(*s, low=low, high=high, seed=i) for i, s in enumerate(shapes)]

    @pytest.mark.parametrize("fn, ref, shapes", cases)
    def test_forward_matches_numpy(fn, ref, shapes):
        xs = inputs(shapes)
        out = fn(*xs)
        expected = ref(*[x.detach().numpy() for x in xs])
        assert tuple(out.shape) == expected.shape and out.dtype == lucid.float64
        np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-10, atol=1e-12)

    @pytest.mark.parametrize("fn, ref, shapes", cases)
    def test_gradients(fn, ref, shapes):
        check_grads(fn, *inputs(shapes))

    return test_forward_matches_numpy, test_gradients


def real_torchvision():
    """The real torchvision as a test oracle (the test is skipped without torch and torchvision). Its import
    registers fake kernels for its compiled ops, which fails beside this PyTorch build; with that registration
    made a no-op, its Python parts (models, transforms, the box ops, roi_align's reference) work."""
    import sys

    import pytest

    torch = pytest.importorskip("torch")
    if "torchvision" not in sys.modules:
        saved = torch.library.register_fake
        torch.library.register_fake = lambda *a, **k: (lambda f: f)
        try:
            pytest.importorskip("torchvision")
        finally:
            torch.library.register_fake = saved
    return sys.modules["torchvision"]
