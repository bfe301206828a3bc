"""The Hermitian transforms of ``torch.fft``: ``hfft``/``ihfft`` and their 2-d and n-d forms.

A signal whose spectrum is real is Hermitian in time, so these are the real transforms run the other way round:

    hfftn(x, norm)  = irfftn(conj(x), dual norm)     (a one-sided Hermitian signal -> its real spectrum)
    ihfftn(x, norm) = conj(rfftn(x, dual norm))      (a real spectrum -> the one-sided Hermitian signal)

where the dual norm swaps "backward" and "forward" (the forward transform is unnormalized by default, as ``fft``).
They are composed of ``lucid.fft``'s differentiable transforms and ``conj``, so their gradients (and higher ones)
are those transforms' adjoints. As all of ``lucid.fft``, they compute in complex64.
"""
from __future__ import annotations

__all__ = ["hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn"]

from .._tensor import Tensor
from .fft import _DUAL, _floating, _irfftn, _norm, _one, _rfftn, conj


def _hfftn(input, s, dim, norm, fn) -> Tensor:
    return _irfftn(conj(_floating(input, True)), s, dim, _DUAL[_norm(norm)], fn)


def _ihfftn(input, s, dim, norm, fn) -> Tensor:
    return conj(_rfftn(input, s, dim, _DUAL[_norm(norm)], fn))


def hfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The real spectrum (``n`` points, default 2 (m - 1)) of a one-sided Hermitian signal of m points."""
    return _hfftn(input, *_one(n, dim), norm, "hfft")


def ihfft(input, n=None, dim=-1, norm=None) -> Tensor:
    """The one-sided Hermitian signal (n // 2 + 1 points) whose ``hfft`` is the real ``input``."""
    return _ihfftn(input, *_one(n, dim), norm, "ihfft")


def hfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """2-d ``hfftn``: the last of ``dim`` holds the one-sided half."""
    return _hfftn(input, s, dim, norm, "hfft2")


def ihfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:
    """2-d ``ihfftn``: the inverse of ``hfft2``."""
    return _ihfftn(input, s, dim, norm, "ihfft2")


def hfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """N-d real spectrum of a signal Hermitian over ``dim`` (the last dim of ``dim`` holds its one-sided half)."""
    return _hfftn(input, s, dim, norm, "hfftn")


def ihfftn(input, s=None, dim=None, norm=None) -> Tensor:
    """N-d inverse of ``hfftn``: a real input's transform, its last dim halved (n // 2 + 1 points)."""
    return _ihfftn(input, s, dim, norm, "ihfftn")
