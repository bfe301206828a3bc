"""The short-time Fourier transform and its inverse: ``stft`` and ``istft`` (PyTorch's arguments, defaults,
shapes and errors).

``stft`` pads the signal (``center``: ``n_fft // 2`` each side, ``pad_mode``), cuts it into frames ``hop_length``
apart (``Tensor.unfold``: a gather), multiplies each by the window (zero-padded to ``n_fft`` around its centre)
and takes the FFT of each frame (one-sided for real input). ``istft`` inverts each frame, windows it again and
overlap-adds the frames (a scatter-add), then divides by the overlap-added squared window. Everything is made of
differentiable lucid ops, so gradients (with respect to the signal and the window) come for free. The check that
the squared window never sums to 0 (else the inverse does not exist) reads values: it is deferred to the next
evaluation (``lucid._checks``). MLX's FFTs compute in single precision (complex64), so float64 signals are
transformed to complex64 results.
"""
from __future__ import annotations

__all__ = ["stft", "istft"]

import math
import warnings

import mlx.core as mx

from .. import _creation
from .._checks import check_later
from .._tensor import Tensor, _wrap
from . import elementwise as _ew
from . import shape as _sh
from ._core import data, declare
from .fft import fft, ifft, irfft, rfft, view_as_real
from .index import _index_add
from .pool import pad as _pad


def _window(window, win_length: int, n_fft: int, dtype, fn: str, message: str) -> Tensor:
    """The window, checked and zero-padded to ``n_fft`` around its centre (ones, with PyTorch's warning, if None)."""
    if window is None:
        warnings.warn(message, UserWarning, stacklevel=3)
        w = _creation.ones(win_length, dtype=dtype)
    else:
        w = window
        if w.ndim != 1 or w.shape[0] != win_length:
            raise RuntimeError(f"{fn}: expected a 1D window tensor of size equal to win_length={win_length}, but got "
                               f"window with size {list(w.shape)}")
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        w = _pad(w, (left, n_fft - win_length - left))
    return w


def _lengths(n_fft: int, hop_length, win_length, fn: str) -> tuple:
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if hop <= 0:
        raise RuntimeError(f"{fn}: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{fn}: expected 0 < win_length <= n_fft, but got win_length={win}")
    return hop, win


_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known to cause spectral "
              "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce "
              "spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
              "`window=torch.ones(n_fft, device=<device>)`.")


def stft(input, n_fft: int, hop_length: int | None = None, win_length: int | None = None, window=None,
         center: bool = True, pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform of the 1-D signal ``input`` (or a (B, L) batch): (B?, n_fft // 2 + 1 (or
    n_fft, not ``onesided``), frames) complex values, frame t being the FFT of the windowed
    ``input[t * hop_length : t * hop_length + n_fft]`` (of the padded signal with ``center``)."""
    fn = "stft(...)"
    complex_in = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=2)
    if align_to_window is not None and center:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"{fn}: expected a 1D or 2D tensor")
    hop, win = _lengths(n_fft, hop_length, win_length, fn)
    batched = input.ndim == 2
    x = input if batched else _sh.unsqueeze(input, 0)
    if center:
        half = n_fft // 2
        x = _sh.squeeze(_pad(_sh.unsqueeze(x, 1), (half, half), mode=pad_mode), 1)
    elif align_to_window:
        side = (n_fft - win) // 2
        x = _pad(x, (side, side))
    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"{fn}: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if onesided is None:
        onesided = not complex_in
    elif onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    w = _window(window, win, n_fft, input.dtype if input.is_floating_point() else None, fn, _NO_WINDOW)
    frames = _ew.mul(x.unfold(-1, n_fft, hop), w)  # (B, frames, n_fft)
    spec = rfft(frames, dim=-1) if onesided else fft(frames, dim=-1)
    if normalized:
        spec = _ew.mul(spec, 1.0 / math.sqrt(n_fft))
    spec = _sh.transpose(spec, -1, -2)  # (B, freq, frames)
    if not batched:
        spec = _sh.squeeze(spec, 0)
    return spec if return_complex else view_as_real(spec)


def istft(input, n_fft: int, hop_length: int | None = None, win_length: int | None = None, window=None,
          center: bool = True, normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """The inverse of ``stft`` (given the same window): the frames' inverse FFTs, windowed and overlap-added, divided
    by the overlap-added squared window; ``length`` trims (or zero-pads) the signal to that many samples."""
    fn = "istft(...)"
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{fn} : expected a tensor with a 2 or 3 dimensions of complex, but got {input.ndim}")
    hop, win = _lengths(n_fft, hop_length, win_length, fn)
    batched = input.ndim == 3
    spec = input if batched else _sh.unsqueeze(input, 0)
    bins, n_frames = spec.shape[-2], spec.shape[-1]
    if onesided is None:
        onesided = bins != n_fft
    if onesided:
        if n_fft // 2 + 1 != bins:
            raise RuntimeError(f"{fn} : expected the frequency dimension (3rd to the last) of the input tensor to "
                               f"match n_fft / 2 + 1 when onesided=True, but got {bins}")
        if return_complex:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
    elif n_fft != bins:
        raise RuntimeError(f"{fn} : expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {bins}")
    real_dtype = mx.float32
    w = _window(window, win, n_fft, real_dtype if window is None else None, fn,
                "A window was not provided. A rectangular window will be applied.Please provide the same window used "
                "by stft to make the inversion lossless.To suppress this warning and use a rectangular window, "
                "explicitly set `window=torch.ones(n_fft, device=<device>)`.")
    if not return_complex and window is not None and window.is_complex():
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    frames = _sh.transpose(spec, -1, -2)  # (B, frames, bins)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        frames = ifft(frames, n_fft, -1, norm)
    else:
        if not onesided:
            frames = _sh.narrow(frames, -1, 0, n_fft // 2 + 1)
        frames = irfft(frames, n_fft, -1, norm)
    frames = _ew.mul(frames, w)
    expected = n_fft + hop * (n_frames - 1)
    positions = (mx.arange(n_frames)[:, None] * hop + mx.arange(n_fft)[None, :]).reshape(-1)
    b = frames.shape[0]
    y = _index_add(_wrap(mx.zeros((b, expected), data(frames).dtype)), frames.reshape(b, -1),
                   (slice(None), positions))
    envelope = _index_add(_wrap(mx.zeros((expected,), data(w).dtype)),
                          _sh.reshape(_sh.expand(_ew.mul(w, w), (n_frames, n_fft)), (-1,)), (positions,))
    start = n_fft // 2 if center else 0
    end = expected if length is None and not center else expected - n_fft // 2 if length is None else start + length
    stop = min(end, expected)
    y = _sh.narrow(y, -1, start, max(stop - start, 0))
    envelope = _sh.narrow(envelope, 0, start, max(stop - start, 0))
    env = data(envelope)
    check_later(mx.any(mx.abs(env) < 1e-11), lambda _: RuntimeError(f"{fn} window overlap add min: 1"), "istft")
    y = _ew.div(y, envelope)
    if end > expected:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.", UserWarning, stacklevel=2)
        y = _pad(y, (0, end - expected))
    return y if batched else _sh.squeeze(y, 0)


declare(stft, method=True)
declare(istft, method=True)
