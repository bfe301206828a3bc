"""torch.cuda.amp (deprecated in PyTorch for torch.amp): ``torch.amp``'s autocast and GradScaler on ``"cuda"``,
which warn and disable themselves where CUDA is not available, as PyTorch's do."""
from __future__ import annotations

from .. import amp as _amp


class autocast(_amp.autocast):
    def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True):
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
