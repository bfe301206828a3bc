"""lucid.fft: PyTorch's torch.fft names (discrete Fourier transforms), declared in ``lucid.ops.fft``."""
from .ops.fft import (fft, fft2, fftfreq, fftn, fftshift, ifft, ifft2, ifftn, ifftshift, irfft, irfft2,  # noqa: F401
                      irfftn, rfft, rfft2, rfftfreq, rfftn)

__all__ = ["fft", "ifft", "rfft", "irfft", "fftn", "ifftn", "rfftn", "irfftn", "fft2", "ifft2", "rfft2", "irfft2",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
