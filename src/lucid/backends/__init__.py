"""lucid.backends: PyTorch's ``torch.backends``, the flags PyTorch programs set in their first lines. They are
accepted and change nothing: MLX chooses its own kernels (no cuDNN autotuning to enable, no TF32 mode to allow), and
its results are deterministic run to run. ``mps.is_available()`` reports MLX's Metal GPU, ``cuda.is_built()`` an
MLX CUDA build."""
from . import cuda, cudnn, mkldnn, mps, openmp, quantized  # noqa: F401
