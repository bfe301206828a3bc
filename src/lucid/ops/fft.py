"""Discrete Fourier transforms (``lucid.fft``, PyTorch's ``torch.fft``) on MLX's ``mx.fft``, and the complex
helpers they need (``real``, ``imag``, ``conj``, ``complex``, ``view_as_real``, ``view_as_complex``).

Three transforms carry everything, each the adjoint of another (``norm`` swaps "backward" <-> "forward", "ortho"
stays), so every derivative is again a transform and higher derivatives come free:

    c2c  (fftn / ifftn)       vjp: g -> c2c(g, dual norm, the other direction)
    r2c  (rfftn, real in)     vjp: g -> c2r(g * c, dual norm) / 2
    c2r  (irfftn, real out)   vjp: g -> r2c(g, dual norm) * 2 / c

where ``c`` is 2 on the half-spectrum's edge planes along the last transformed dim (index 0, and n/2 for even n),
1 elsewhere: the half spectrum stands for two conjugate entries except at the edges. Gradients follow PyTorch's
convention for complex numbers (the conjugate Wirtinger derivative: ``grad = dL/dRe + i dL/dIm`` for a real loss).
Sizes ``n``/``s`` crop or zero-pad the input first (``_resize``, its own adjoint).

MLX computes in complex64 (it has no complex128): a float64 input gives a complex64 result, where PyTorch gives
complex128. So derivatives here are tested against PyTorch and against adjoint identities, in single precision.
"""
from __future__ import annotations

__all__ = ["real", "imag", "conj", "complex", "view_as_real", "view_as_complex"]

import inspect

import mlx.core as mx

from .._dtype import get_default_dtype, is_complex
from .._tensor import Tensor, _wrap
from ._core import UNARY, attach, defop
from .shape import roll, stack

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


# ---------------------------------------------------------------------------------------------------- complex parts
def _complex_fwd(re, im):
    return re.astype(mx.complex64) + 1j * im.astype(mx.complex64)


def _complex_signature(real, imag, *, out=None): ...  # noqa: E704


complex = defop("complex", _complex_fwd, save=None,  # noqa: A001  (PyTorch's name)
                vjp=(lambda g, ans, re, im: real(g), lambda g, ans, re, im: imag(g)),
                sig=inspect.signature(_complex_signature), doc="The complex tensor ``real + 1j * imag`` (complex64).")
real = defop("real", mx.real, vjp=lambda g, ans, z: complex(g, g.new_zeros(g.shape)), save=None,
             sig=UNARY, doc="The real part of a complex tensor (a real tensor as it is).")
imag = defop("imag", mx.imag, vjp=lambda g, ans, z: complex(g.new_zeros(g.shape), g), save=None,
             sig=UNARY, doc="The imaginary part of a complex tensor.")
conj = defop("conj", mx.conj, vjp=lambda g, ans, z: conj(g), save=None,
             sig=UNARY, doc="The complex conjugate (a real tensor as it is).", method=True)


def view_as_real(input) -> Tensor:
    """A complex (...) tensor as a real (..., 2) one: the real and imaginary parts (a copy: MLX has no views)."""
    if not is_complex(input.dtype):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return stack([real(input), imag(input)], -1)


def view_as_complex(input) -> Tensor:
    """A real (..., 2) tensor as a complex (...) one."""
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return complex(input[..., 0], input[..., 1])


attach("real", property(real))
attach("imag", property(imag))
attach("conj_physical", conj)
attach("resolve_conj", lambda self: self, "``self``: lucid's conj is computed, never a lazy conjugate bit.")


# ---------------------------------------------------------------------------------------------------- the transforms
def _resize_fwd(a, axes, sizes):
    """Crop or zero-pad ``a`` along ``axes`` to ``sizes`` (the leading entries are kept)."""
    a = a[tuple(slice(0, sizes[axes.index(i)]) if i in axes else slice(None) for i in range(a.ndim))]
    widths = [(0, sizes[axes.index(i)] - a.shape[i]) if i in axes else (0, 0) for i in range(a.ndim)]
    return mx.pad(a, widths) if any(w for _, w in widths) else a


_resize = defop("fft_resize", _resize_fwd, save=None,
                vjp=lambda g, ans, x, axes, sizes: _resize(g, axes, tuple(x.shape[i] for i in axes)))


def _edge_weights(m: int, n: int, axis: int, ndim: int, dtype) -> Tensor:
    """``c``: 2 at index 0 (and at n/2 for even n) of a half spectrum of length m along ``axis``, 1 elsewhere."""
    c = [1.0] * m
    c[0] = 2.0
    if n % 2 == 0 and m == n // 2 + 1:
        c[-1] = 2.0
    shape = [1] * ndim
    shape[axis] = m
    return _wrap(mx.array(c, dtype=dtype).reshape(shape))


def _c2c_fwd(a, axes, norm, inverse):
    return (mx.fft.ifftn if inverse else mx.fft.fftn)(a, axes=axes, norm=norm)


def _r2c_fwd(a, axes, norm):
    return mx.fft.rfftn(a, axes=axes, norm=norm)


def _c2r_fwd(a, axes, norm, n):
    s = [a.shape[i] for i in axes[:-1]] + [n]
    return mx.fft.irfftn(a, s=s, axes=axes, norm=norm)


def _r2c_vjp(g, ans, x, axes, norm):
    n = x.shape[axes[-1]]
    c = _edge_weights(g.shape[axes[-1]], n, axes[-1], g.ndim, mx.float32)
    return _c2r(g * c, axes, _DUAL[norm], n) * 0.5


def _c2r_vjp(g, ans, z, axes, norm, n):
    return _r2c(g, axes, _DUAL[norm]) * (2.0 / _edge_weights(z.shape[axes[-1]], n, axes[-1], z.ndim, mx.float32))


_c2c = defop("fft_c2c", _c2c_fwd, save=None,
             vjp=lambda g, ans, x, axes, norm, inverse: _c2c(g, axes, _DUAL[norm], not inverse))
_r2c = defop("fft_r2c", _r2c_fwd, vjp=_r2c_vjp, save=None)
_c2r = defop("fft_c2r", _c2r_fwd, vjp=_c2r_vjp, save=None)


# ---------------------------------------------------------------------------------------------------- arguments
def _norm(norm) -> str:
    if norm is None:
        return "backward"
    if norm not in _DUAL:
        raise ValueError(f"Invalid normalization mode: {norm}")
    return norm


def _dims(input, s, dim, fn: str) -> tuple[tuple, tuple | None]:
    """PyTorch's (s, dim) rules: dim None with s given means the last len(s) dims; both None mean all dims."""
    ndim = input.ndim
    if dim is None:
        dims = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        if not -ndim <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
        d %= ndim
        if d in out:
            raise RuntimeError(f"{fn} dims must be unique")
        out.append(d)
    if s is not None:
        s = tuple(s)
        if len(s) != len(out):
            raise RuntimeError(f"When given, dim and shape arguments must have the same length (got {len(s)} and "
                               f"{len(out)})")
        for v in s:
            if v != -1 and v < 1:
                raise RuntimeError(f"Invalid number of data points ({v}) specified")
    return tuple(out), s


def _floating(input, complex_ok: bool):
    """Integers and bools are transformed in the default float dtype, as in PyTorch."""
    if is_complex(input.dtype):
        if not complex_ok:
            raise RuntimeError(f"expected a real input tensor, but got {str(input.dtype).replace('mlx.core.', '')}")
        return input
    return input if mx.issubdtype(input.dtype, mx.floating) else input.to(get_default_dtype())


def _sized(x, axes, sizes):
    """``x`` cropped or zero-padded along ``axes`` to ``sizes`` (None or -1 entries keep the size)."""
    if sizes is None:
        return x
    sizes = tuple(x.shape[a] if v in (None, -1) else v for a, v in zip(axes, sizes))
    if all(x.shape[a] == v for a, v in zip(axes, sizes)):
        return x
    return _resize(x, axes, sizes)


def _fftn(input, s, dim, norm, inverse, fn):
    axes, s = _dims(input, s, dim, fn)
    x = _sized(_floating(input, True), axes, s)
    if not axes:
        return x.to(mx.complex64)
    return _c2c(x, axes, _norm(norm), inverse)


def _rfftn(input, s, dim, norm, fn):
    axes, s = _dims(input, s, dim, fn)
    if not axes:
        raise RuntimeError(f"{fn} must transform at least one axis")
    return _r2c(_sized(_floating(input, False), axes, s), axes, _norm(norm))


def _irfftn(input, s, dim, norm, fn):
    axes, s = _dims(input, s, dim, fn)
    if not axes:
        raise RuntimeError(f"{fn} must transform at least one axis")
    x = _floating(input, True)
    last = axes[-1]
    n = 2 * (x.shape[last] - 1) if s is None or s[-1] == -1 else s[-1]
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    sizes = (None,) * (len(axes) - 1) if s is None else s[:-1]
    x = _sized(x.to(mx.complex64), axes, tuple(sizes) + (n // 2 + 1,))
    return _c2r(x, axes, _norm(norm), n)


def _one(n, dim):
    return None if n is None else (n,), dim


# ---------------------------------------------------------------------------------------------------- torch.fft
def fft(input, n=None, dim=-1, norm=None) -> Tensor:
    """1-d discrete Fourier transform along ``dim`` (``n``: crop or zero-pad to n points first)."""
    return _fftn(input, *_one(n, dim), norm, False, "fft")


def ifft(input, n=None, dim=-1, norm=None) -> Tensor:
    """Inverse 1-d discrete Fourier transform of ``input`` along ``dim``."""
    return _fftn(input, *_one(n, dim), norm, True, "ifft")


def rfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The non-negative frequencies (n//2 + 1 of them) of the transform of a real input."""
    return _rfftn(input, *_one(n, dim), norm, "rfft")


def irfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The real signal (``n`` points, default 2 (m - 1)) whose rfft is ``input``."""
    return _irfftn(input, *_one(n, dim), norm, "irfft")


def fftn(input, s=None, dim=None, norm=None) -> Tensor:
    """N-d discrete Fourier transform over ``dim`` (all dimensions by default)."""
    return _fftn(input, s, dim, norm, False, "fftn")


def ifftn(input, s=None, dim=None, norm=None) -> Tensor:
    """Inverse N-d discrete Fourier transform over ``dim`` (all dimensions by default)."""
    return _fftn(input, s, dim, norm, True, "ifftn")


def rfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """N-d Fourier transform of a real input (the last dimension halved: n // 2 + 1 frequencies)."""
    return _rfftn(input, s, dim, norm, "rfftn")


def irfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """Inverse of ``rfftn``: a real output from the half spectrum."""
    return _irfftn(input, s, dim, norm, "irfftn")


def fft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """2-d discrete Fourier transform over the last two dimensions."""
    return _fftn(input, s, dim, norm, False, "fft2")


def ifft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """Inverse 2-d discrete Fourier transform over the last two dimensions."""
    return _fftn(input, s, dim, norm, True, "ifft2")


def rfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """2-d Fourier transform of a real input over the last two dimensions."""
    return _rfftn(input, s, dim, norm, "rfft2")


def irfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """Inverse of ``rfft2``: a real output from the half spectrum."""
    return _irfftn(input, s, dim, norm, "irfft2")


def _freq_tensor(values: list, d: float, dtype, requires_grad: bool) -> Tensor:
    t = _wrap(mx.array(values, dtype=get_default_dtype() if dtype is None else dtype) / d)
    if requires_grad:
        t.requires_grad_()
    return t


def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    """The sample frequencies of an n-point ``fft``: [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d n)."""
    if n < 0:
        raise RuntimeError(f"fftfreq: n must be non-negative, got {n}")
    values = [(k if k < (n + 1) // 2 else k - n) / n for k in range(n)] if n else []
    return _freq_tensor(values, d, dtype, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    """The sample frequencies of an n-point ``rfft``: [0, 1, ..., n//2] / (d n)."""
    if n < 0:
        raise RuntimeError(f"rfftfreq: n must be non-negative, got {n}")
    return _freq_tensor([k / n for k in range(n // 2 + 1)] if n else [], d, dtype, requires_grad)


def _shift(input, dim, sign: int) -> Tensor:
    dims = tuple(range(input.ndim)) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    if not dims:
        return input
    return roll(input, tuple(sign * (input.shape[d] // 2) for d in dims), dims)


def fftshift(input, dim=None) -> Tensor:
    """Move the zero frequency to the centre (a roll by n//2 along each dim)."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None) -> Tensor:
    """The inverse of ``fftshift`` (a roll by -(n//2))."""
    return _shift(input, dim, -1)
