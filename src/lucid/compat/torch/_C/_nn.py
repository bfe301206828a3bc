"""``torch._C._nn``: what PyTorch's Python code calls from its native nn bindings."""
from lucid._dtype import device as _device, parse_to as _parse


def _parse_to(*args, **kwargs) -> tuple:
    """``to``'s arguments as PyTorch parses them for ``nn.Module.to``: (device, dtype, non_blocking, memory_format),
    the device as a ``torch.device``; ``copy`` is refused (a module converts its tensors in place)."""
    device, dtype, non_blocking, copy, memory_format = _parse(args, kwargs)
    if copy is not None:
        raise RuntimeError(".to() does not accept copy argument")
    return None if device is None else _device(device), dtype, non_blocking, memory_format
