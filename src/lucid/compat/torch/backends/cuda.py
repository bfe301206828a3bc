"""torch.backends.cuda: matmul precision and attention-kernel flags, accepted and doing nothing (MLX picks its own
kernels; its float32 matmuls are float32)."""
import contextlib as _contextlib
import types as _types

from .. import cuda as _cuda

matmul = _types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                                allow_bf16_reduced_precision_reduction=True)
cufft_plan_cache = _types.SimpleNamespace(max_size=0, size=0, clear=lambda: None)


def is_built() -> bool:
    return _cuda.is_available()


def preferred_linalg_library(backend=None):
    return None


def _no_op(enabled: bool = True) -> None:
    return None


enable_flash_sdp = enable_mem_efficient_sdp = enable_math_sdp = enable_cudnn_sdp = _no_op


def flash_sdp_enabled() -> bool:
    return False


mem_efficient_sdp_enabled = cudnn_sdp_enabled = flash_sdp_enabled


def math_sdp_enabled() -> bool:
    return True


@_contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    yield
