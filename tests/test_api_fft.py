"""lucid.fft: values against numpy, gradients (first and second) against PyTorch's.

MLX has no complex128, so the transforms compute in complex64 and float64 gradcheck cannot apply; instead each
derivative is compared with PyTorch's (float32 inputs, single-precision tolerances) through real losses that are
nonlinear in the spectrum, so second derivatives are exercised too."""
import numpy as np
import pytest

import lucid

RNG = np.random.default_rng(0)
X3 = RNG.normal(size=(3, 4, 6)).astype(np.float32)
Z3 = (RNG.normal(size=(3, 4, 6)) + 1j * RNG.normal(size=(3, 4, 6))).astype(np.complex64)

# (name, kwargs, input kind)
CASES = [
    ("fft", {}, "c"), ("fft", {"n": 4, "dim": 1}, "r"), ("fft", {"n": 9, "norm": "ortho"}, "c"),
    ("ifft", {"dim": 0, "norm": "forward"}, "c"), ("ifft", {}, "r"),
    ("rfft", {}, "r"), ("rfft", {"n": 5, "dim": 1}, "r"), ("rfft", {"n": 8, "norm": "ortho"}, "r"),
    ("irfft", {}, "c"), ("irfft", {"n": 7, "dim": 1}, "c"), ("irfft", {"n": 10, "norm": "forward"}, "c"),
    ("fft2", {}, "c"), ("ifft2", {"s": (3, 5)}, "r"), ("rfft2", {"norm": "ortho"}, "r"),
    ("irfft2", {}, "c"), ("irfft2", {"s": (5, 9)}, "c"),
    ("fftn", {}, "c"), ("fftn", {"s": (2, 8), "dim": (0, 2)}, "r"), ("ifftn", {"dim": (1,)}, "c"),
    ("rfftn", {}, "r"), ("rfftn", {"dim": (0, 1), "norm": "forward"}, "r"), ("irfftn", {}, "c"),
    ("irfftn", {"s": (4, 5), "dim": (2, 0)}, "c"),
]
# the Hermitian transforms (numpy has only the 1-d ones: these are checked against PyTorch)
HERMITIAN = [
    ("hfft", {}, "c"), ("hfft", {"n": 7, "dim": 1, "norm": "ortho"}, "c"), ("hfft", {"n": 4}, "r"),
    ("ihfft", {}, "r"), ("ihfft", {"n": 5, "dim": 0, "norm": "forward"}, "r"),
    ("hfft2", {}, "c"), ("hfft2", {"s": (3, 9), "norm": "forward"}, "c"), ("ihfft2", {"s": (5, 4)}, "r"),
    ("hfftn", {}, "c"), ("hfftn", {"dim": (2, 0), "norm": "ortho"}, "c"), ("ihfftn", {}, "r"),
    ("ihfftn", {"s": (3, 7), "dim": (0, 2)}, "r"),
]
IDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}-{kind}" for n, kw, kind in CASES]
HIDS = [f"{n}-{'-'.join(f'{k}={v}' for k, v in kw.items())}-{kind}" for n, kw, kind in HERMITIAN]


def _numpy_kwargs(name, kw):
    out = dict(kw)
    if "dim" in out:
        out["axis" if name in ("fft", "ifft", "rfft", "irfft") else "axes"] = out.pop("dim")
    return out


@pytest.mark.parametrize("name, kw, kind", CASES, ids=IDS)
def test_values_match_numpy(name, kw, kind):
    a = X3 if kind == "r" else Z3
    out = getattr(lucid.fft, name)(lucid.tensor(a), **kw)
    ref = getattr(np.fft, name)(a, **_numpy_kwargs(name, kw))
    assert tuple(out.shape) == ref.shape
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-4)


def _grads(lib, name, kw, kind):
    """First and second derivatives of a nonlinear real loss of the transform, in library ``lib``."""
    re = lib.tensor(X3 if kind == "r" else Z3.real.copy(), requires_grad=True)
    im = lib.tensor(Z3.imag.copy(), requires_grad=True)
    x = re if kind == "r" else lib.complex(re, im)
    y = getattr(lib.fft, name)(x, **kw)
    w = lib.tensor(np.linspace(0.5, 1.5, int(np.prod(y.shape))).reshape(tuple(y.shape)).astype(np.float32))
    parts = (y.real, y.imag) if y.is_complex() else (y, y)
    loss = ((parts[0] ** 2 + 0.3 * parts[1] ** 3) * w).sum()
    leaves = [re] if kind == "r" else [re, im]
    first = lib.autograd.grad(loss, leaves, create_graph=True)
    second = lib.autograd.grad(sum((g * g).sum() for g in first), leaves)
    return [g.detach().resolve_neg().resolve_conj().numpy() for g in (*first, *second)]


@pytest.mark.parametrize("name, kw, kind", HERMITIAN, ids=HIDS)
def test_hermitian_values_match_pytorch(name, kw, kind):
    torch = pytest.importorskip("torch")
    a = X3 if kind == "r" else Z3
    out = getattr(lucid.fft, name)(lucid.tensor(a), **kw)
    ref = getattr(torch.fft, name)(torch.tensor(a), **kw).resolve_conj().numpy()
    assert tuple(out.shape) == ref.shape and out.dtype == (lucid.complex64 if ref.dtype.kind == "c" else lucid.float32)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name, kw, kind", CASES + HERMITIAN, ids=IDS + HIDS)
def test_first_and_second_derivatives_match_pytorch(name, kw, kind):
    torch = pytest.importorskip("torch")
    mine = _grads(lucid, name, kw, kind)
    ref = _grads(torch, name, kw, kind)
    for a, b in zip(mine, ref):
        scale = np.abs(b).max() + 1e-6
        np.testing.assert_allclose(a / scale, b / scale, atol=2e-4)


def test_fftfreq_rfftfreq_and_shifts_match_numpy():
    for n in (1, 4, 7):
        np.testing.assert_allclose(lucid.fft.fftfreq(n, 0.1).numpy(), np.fft.fftfreq(n, 0.1), rtol=1e-6)
        np.testing.assert_allclose(lucid.fft.rfftfreq(n, 0.1).numpy(), np.fft.rfftfreq(n, 0.1), rtol=1e-6)
    a = np.arange(15.0, dtype=np.float32).reshape(3, 5)
    np.testing.assert_array_equal(lucid.fft.fftshift(lucid.tensor(a)).numpy(), np.fft.fftshift(a))
    np.testing.assert_array_equal(lucid.fft.ifftshift(lucid.tensor(a), dim=1).numpy(), np.fft.ifftshift(a, axes=1))
    np.testing.assert_array_equal(lucid.fft.ifftshift(lucid.fft.fftshift(lucid.tensor(a))).numpy(), a)


def test_fft_of_float64_and_integers_is_complex64():
    assert lucid.fft.fft(lucid.tensor([1.0, 2.0], dtype=lucid.float64)).dtype == lucid.complex64
    np.testing.assert_allclose(lucid.fft.rfft(lucid.tensor([1, 2, 3])).numpy(), np.fft.rfft([1, 2, 3]), rtol=1e-6)


def test_complex_helpers():
    z = lucid.tensor(Z3)
    np.testing.assert_array_equal(lucid.view_as_real(z).numpy(), np.stack([Z3.real, Z3.imag], -1))
    np.testing.assert_array_equal(lucid.view_as_complex(lucid.view_as_real(z)).numpy(), Z3)
    np.testing.assert_array_equal(z.conj().numpy(), Z3.conj())
    np.testing.assert_array_equal(z.real.numpy(), Z3.real)
    np.testing.assert_array_equal(z.imag.numpy(), Z3.imag)


def test_bad_arguments():
    x = lucid.tensor(X3)
    with pytest.raises(ValueError, match="Invalid normalization mode"):
        lucid.fft.fft(x, norm="bogus")
    with pytest.raises(RuntimeError, match="Invalid number of data points"):
        lucid.fft.fft(x, n=0)
    with pytest.raises(RuntimeError, match="expected a real input"):
        lucid.fft.rfft(lucid.tensor(Z3))
    with pytest.raises(IndexError, match="Dimension out of range"):
        lucid.fft.fft(x, dim=3)
    with pytest.raises(RuntimeError, match="same length"):
        lucid.fft.fftn(x, s=(2, 3), dim=(0,))
