"""torch.nn.parallel. lucid runs one process on one MLX device, so ``DataParallel`` is what PyTorch's is without
several GPUs: a wrapper that calls its module (state_dict keys get the ``module.`` prefix, as in PyTorch).
``DistributedDataParallel`` is lucid's own (``lucid.nn.parallel``, on ``lucid.distributed``)."""
from __future__ import annotations

from lucid.nn import Module
from lucid.nn.parallel import DistributedDataParallel  # noqa: F401


class DataParallel(Module):
    """Calls ``module`` on the whole batch (PyTorch's behaviour with no GPUs to scatter over)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        self.module = module
        self.device_ids, self.output_device, self.dim = [], output_device, dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    return module(*inputs, **(module_kwargs or {}))
