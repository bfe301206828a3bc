"""lucid.backends.cuda: matmul precision and attention-kernel flags, accepted and doing nothing (MLX picks its own
kernels; its float32 matmuls are float32)."""
import contextlib as _contextlib
import types as _types

from .._dtype import cuda_available as _cuda_available

matmul = _types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                                allow_bf16_reduced_precision_reduction=True)
cufft_plan_cache = _types.SimpleNamespace(max_size=0, size=0, clear=lambda: None)


def is_built() -> bool:
    """Whether this MLX build runs on CUDA (``lucid.cuda.is_available()``)."""
    return _cuda_available()


def preferred_linalg_library(backend=None):
    """None: MLX runs its factorizations with LAPACK on the CPU, whatever is preferred.

    :param backend: accepted and ignored."""
    return None


def _no_op(enabled: bool = True) -> None:
    """Accepted; MLX picks its own attention kernel.

    :param enabled: ignored."""
    return None


enable_flash_sdp = enable_mem_efficient_sdp = enable_math_sdp = enable_cudnn_sdp = _no_op


def flash_sdp_enabled() -> bool:
    """False: lucid has no flash-attention kernel of its own to switch."""
    return False


mem_efficient_sdp_enabled = cudnn_sdp_enabled = flash_sdp_enabled


def math_sdp_enabled() -> bool:
    """True: ``scaled_dot_product_attention`` computes the attention as written."""
    return True


@_contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """A context that changes nothing (MLX picks its own attention kernel).

    :param enable_flash: ignored.
    :param enable_math: ignored.
    :param enable_mem_efficient: ignored.
    :param enable_cudnn: ignored."""
    yield
