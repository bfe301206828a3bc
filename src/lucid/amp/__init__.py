"""``lucid.amp``: automatic mixed precision, as ``torch.amp``: ``autocast`` (per-op precision inside a region) and
``GradScaler`` (dynamic loss scaling for float16)."""
from .autocast_mode import autocast, custom_bwd, custom_fwd, get_autocast_dtype, is_autocast_enabled
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "custom_bwd", "custom_fwd", "get_autocast_dtype", "is_autocast_enabled"]
