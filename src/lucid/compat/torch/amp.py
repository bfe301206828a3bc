"""torch.amp: accepted, and computing in full precision.

MLX has no autocast: every op runs in the dtype of its inputs, so ``autocast`` changes nothing (to train in lower
precision, cast the model: ``model.to(torch.bfloat16)``). Without float16 autocast there are no float16 gradients
to underflow, so ``GradScaler`` behaves as PyTorch's disabled scaler: ``scale`` returns the loss unchanged and
``step`` calls ``optimizer.step()``."""
from __future__ import annotations

import functools

from lucid.amp import custom_bwd, custom_fwd  # noqa: F401  (a custom Function's decorators)


def is_autocast_available(device_type: str) -> bool:
    return False


class autocast:
    """A context manager and decorator that leaves dtypes as they are."""

    def __init__(self, device_type: str = "cpu", dtype=None, enabled: bool = True, cache_enabled=None):
        self.device_type, self.fast_dtype, self.enabled = device_type, dtype, enabled

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> bool:
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


class GradScaler:
    """PyTorch's GradScaler as it behaves when disabled (no loss scaling is needed without float16 autocast)."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self.device = device

    def is_enabled(self) -> bool:
        return False

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer) -> None:
        return None

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None) -> None:
        return None

    def get_scale(self) -> float:
        return 1.0

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        return None
