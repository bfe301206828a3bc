"""Whether MLX runs on CUDA here (an ``mlx[cuda]`` build): ``torch.cuda.is_available()``, also read by ``torch.amp``
(which ``torch.cuda`` imports, so it cannot import ``torch.cuda`` back)."""
import mlx.core as _mx


def cuda_available() -> bool:
    cuda = getattr(_mx, "cuda", None)
    return cuda is not None and cuda.is_available()
