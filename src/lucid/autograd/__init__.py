"""lucid.autograd: reverse-mode automatic differentiation on the tape of lucid ops."""
import sys as _sys

from .anomaly import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .engine import backward, grad
from .._grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                          set_grad_enabled)
from .function import Function, FunctionCtx, InplaceFunction, once_differentiable
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .graph import Node
from .variable import Variable
from . import tensor_methods  # noqa: F401  (attaches Tensor.backward and the hook methods)
from . import graph  # noqa: F401  (lucid.autograd.graph: GradientEdge, register_multi_grad_hook, ...)
from . import reference  # noqa: F401  (the reference walk: engine.use_reference() runs it)
from .. import _grad_mode as grad_mode  # PyTorch's path to the grad modes; they live in the tensor layer, which reads
_sys.modules[__name__ + ".grad_mode"] = grad_mode  # them on every op (so `import lucid.autograd.grad_mode` works too)

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "Node", "gradcheck", "gradgradcheck", "GradcheckError",
           "Function", "FunctionCtx", "InplaceFunction", "once_differentiable", "Variable",
           "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]
from . import functional  # noqa: E402
