"""lucid.fft: PyTorch's torch.fft names (discrete Fourier transforms), declared in ``lucid.ops.fft`` (the Hermitian
ones in ``lucid.ops.fft_hermitian``)."""
from ._tensor import Tensor  # noqa: F401  (torch.fft.Tensor)
from .ops.fft import (fft, fft2, fftfreq, fftn, fftshift, ifft, ifft2, ifftn, ifftshift, irfft, irfft2,  # noqa: F401
                      irfftn, rfft, rfft2, rfftfreq, rfftn)
from .ops.fft_hermitian import hfft, hfft2, hfftn, ihfft, ihfft2, ihfftn  # noqa: F401

__all__ = ["fft", "ifft", "rfft", "irfft", "fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2",
           "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
           "Tensor"]
