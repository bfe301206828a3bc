"""``torch._C``: the few pieces of PyTorch's C extension that Python code (PyTorch's own tests and libraries) calls
directly, each on lucid's own state: the name of the custom-device backend, the oneDNN flag (which
``torch.backends.mkldnn.enabled`` reads), and ``torch._C._nn._parse_to`` (``to``'s argument parser)."""
from lucid.backends import mkldnn as _mkldnn

from . import _nn  # noqa: F401


def _get_privateuse1_backend_name() -> str:
    """PyTorch's name for the custom-device backend, "privateuseone" until a plugin renames it (lucid has none, so
    no device type ever has this name)."""
    return "privateuseone"


def _set_mkldnn_enabled(enabled: bool) -> None:
    """Set ``torch.backends.mkldnn.enabled`` (lucid has no oneDNN: the flag is kept, and read back, only)."""
    _mkldnn.enabled = bool(enabled)


def _get_mkldnn_enabled() -> bool:
    return _mkldnn.enabled
