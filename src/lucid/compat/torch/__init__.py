"""lucid.compat.torch: PyTorch's API on lucid's tensors and modules (``import lucid.compat.torch as torch``).

Every name is lucid's own object (``torch.Tensor is lucid.Tensor``, ``torch.nn.Linear is lucid.nn.Linear``); this
package holds only where PyTorch's API differs from lucid's seed API or has no lucid counterpart:

- ``torch.autograd.grad`` returns a tuple for a single input, as PyTorch's (``lucid.autograd.grad`` returns the
  Tensor: the one semantic difference between the two faces);
- ``torch.cuda.amp`` (``torch.cuda`` itself is ``lucid.cuda``'s functions; ``torch.backends``, ``torch.mps`` and
  ``torch.accelerator`` are ``lucid``'s);
- ``torch.compile`` (returns the module wrapped, running eagerly), ``torch.save``/``torch.load`` (PyTorch's zip
  checkpoints, written so that PyTorch loads them, and read without running their pickle), ``torch.amp`` (lucid's
  autocast and GradScaler; on ``"cuda"`` without CUDA they warn and disable themselves, as PyTorch's do);
- what has no MLX counterpart (``torch.distributed`` process groups, ``torch.onnx.export``, ``torch.jit.script``,
  CUDA streams) imports fine and raises when used.

Any ``torch.X`` submodule that compat does not define is lucid's ``lucid.X`` (``torch.nn.init``, ``torch.optim``,
``torch.optim.lr_scheduler``, ``torch.utils.data``, ``torch.linalg``, ``torch.special``, ``torch.func``,
``torch.utils.checkpoint``, ``torch.utils.tensorboard``, ``torch.utils.benchmark``, ``torch.distributions``), so what
lucid adds appears here too.
"""
import builtins as _builtins
import os as _os
import sys as _sys

from lucid import *  # noqa: F401,F403  (every public lucid name, the same objects)
from lucid import Size, Tensor, device, dtype, func, linalg, optim, utils  # noqa: F401

# compat's own versions follow; the star import bound lucid's, which `from . import` would otherwise return as is
del amp, autograd, cuda, nn, serialization, compile, save, load  # noqa: F821

from .._alias import AliasFinder as _AliasFinder
from .._alias import install as _install

# lucid.compat.torch.<x> is lucid.<x> unless compat has its own module <x> (see the docstring)
_install(_AliasFinder(__name__, "lucid"))

from . import _C, amp, autograd, cuda, distributed, nn, jit, onnx, testing  # noqa: E402,F401
from . import serialization  # noqa: E402
from ._compiled import compile  # noqa: E402,A001
from .amp import autocast  # noqa: E402  (torch.autocast is torch.amp.autocast: "cuda" without CUDA disables itself)
autograd.torch = _sys.modules[__name__]  # torch.autograd imports torch, and old code reaches it as torch.autograd.torch
from .serialization import load, save  # noqa: E402
from ._errors import AcceleratorError, FatalError, GradScaler, OutOfMemoryError  # noqa: E402,F401
from . import _VF  # noqa: E402,F401
from lucid.ops.reduce import masked_softmax as _masked_softmax  # noqa: E402,F401

from lucid.ops.embedding_bag import native_embedding_bag as _embedding_bag  # noqa: E402
_embedding_bag_forward_only = _embedding_bag  # (PyTorch's variant that skips saving for backward: lucid saves lazily)
from lucid import _legacy as _legacy_types  # noqa: E402
_LEGACY_NAMES = {getattr(_legacy_types, n).dtype: n for n in _legacy_types.__all__}
from lucid.autograd import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: E402,F401

__version__ = "2.13.0+lucid"  # the PyTorch API version this layer follows (scripts compare torch.__version__)

_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision: str) -> None:
    """Accepted; MLX's float32 matmuls are float32 (there is no TF32 mode to allow)."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision {precision!r}: expected 'highest', 'high' or 'medium'")
    _matmul_precision[0] = precision


def get_float32_matmul_precision() -> str:
    return _matmul_precision[0]


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """PyTorch's print options: for lucid's printer and for PyTorch's face of it (``lucid run``)."""
    from lucid import set_printoptions as _lucid_set
    from .. import _torch_repr
    _lucid_set(precision, threshold, edgeitems, linewidth, profile, sci_mode)
    _torch_repr.set_printoptions(precision, threshold, edgeitems, linewidth, profile, sci_mode)


def cond(pred, true_fn, false_fn, operands=()):
    """torch.cond: ``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``. ``pred`` is a bool, a number or
    a one-element tensor (read here, as a Python ``if`` would: lucid traces no control flow). Gradients flow through
    the branch taken."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        pred = pred.item()
    return true_fn(*operands) if pred else false_fn(*operands)


def _softmax(input, dim: int, half_to_float: bool):
    """ATen's softmax kernel: ``softmax(input, dim)``; ``half_to_float`` (a float16 input, a float32 result) is
    CUDA's only, as in PyTorch."""
    if half_to_float:
        raise RuntimeError("softmax with half to float conversion is not supported on CPU")
    return softmax(input, dim)  # noqa: F405  (lucid's, from the star import)


def set_num_threads(n: int) -> None:
    """Accepted; MLX manages its own CPU threads."""


def get_num_threads() -> int:
    return _os.cpu_count() or 1


_deterministic = [False]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Accepted; MLX's kernels give the same results run to run."""
    _deterministic[0] = _builtins.bool(mode)  # (`bool` here is the dtype, as torch.bool)
    _deterministic_warn_only[0] = _builtins.bool(warn_only)


_deterministic_warn_only = [False]


def are_deterministic_algorithms_enabled() -> bool:
    return _deterministic[0]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _deterministic_warn_only[0]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode) -> None:
    """PyTorch's other spelling of ``use_deterministic_algorithms``: 0/"default" off, 1/"warn" warn only,
    2/"error" on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, _builtins.int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    return 0 if not _deterministic[0] else 1 if _deterministic_warn_only[0] else 2


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Switch autograd's anomaly detection on or off (``torch.autograd.set_detect_anomaly`` without the context)."""
    autograd.set_detect_anomaly(enabled, check_nan)


def get_num_interop_threads() -> int:
    """MLX has no inter-op thread pool; reported as PyTorch's default, the number of cores."""
    return get_num_threads()


def set_num_interop_threads(n: int) -> None:
    """Accepted; MLX manages its own threads."""


def typename(obj) -> str:
    """The type's name as PyTorch writes it: ``torch.FloatTensor`` for a float32 tensor, else ``module.Class``."""
    if isinstance(obj, Tensor):
        return "torch." + _LEGACY_NAMES.get(obj.dtype, "Tensor")
    module, name = type(obj).__module__, type(obj).__qualname__
    return name if module in ("builtins", "__builtin__", None) else f"{module}.{name}"


_warn_always = [False]


def set_warn_always(b: bool) -> None:
    """Accepted: lucid's warnings are Python warnings each time (the ``warnings`` filters decide what shows);
    PyTorch's flag turns its once-per-process C++ warnings into every-time ones."""
    _warn_always[0] = _builtins.bool(b)


def is_warn_always_enabled() -> bool:
    return _warn_always[0]


class memory_format:
    """torch.memory_format: the layout names that ``clone``, ``contiguous``, ``to`` and ``empty_like`` accept.
    MLX arrays have one layout, so every name gives the same tensor; they exist for code that passes them."""

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")


# ATen's unvectorized CPU grid sampler, which PyTorch's tests compare grid_sample with: lucid has one sampler
from lucid.ops.sampling import grid_sampler_2d as _grid_sampler_2d_cpu_fallback  # noqa: E402,F401


def _nnpack_available() -> bool:
    """False: lucid's convolutions are MLX's, never NNPACK's."""
    return False
