"""``lucid.amp``: automatic mixed precision, as ``torch.amp``: ``autocast`` (per-op precision inside a region) and
``GradScaler`` (dynamic loss scaling for float16)."""
from .autocast_mode import autocast, custom_bwd, custom_fwd, get_autocast_dtype, is_autocast_enabled
from .grad_scaler import GradScaler
from .settings import *  # noqa: F401,F403  (set_autocast_enabled, set_autocast_dtype, ... : torch's top-level names)
from . import settings as _settings_module

__all__ = ["autocast", "GradScaler", "custom_bwd", "custom_fwd", "get_autocast_dtype", "is_autocast_enabled",
           *_settings_module.__all__]
