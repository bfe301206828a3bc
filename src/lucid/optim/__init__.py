"""lucid.optim: PyTorch's optimizers and learning-rate schedulers on MLX arrays.

Updates run as fused MLX kernels on the arrays behind the parameters, outside the autograd tape; each ``step()``
evaluates the new parameters and optimizer state with one ``mx.eval``. The keyword arguments ``foreach``, ``fused``
and ``capturable`` are accepted (and validated) as in PyTorch, and change nothing: every update is already a fused
kernel. ``differentiable=True`` records the step on the autograd tape, as PyTorch does (``_differentiable.py``).
"""
from . import lr_scheduler, swa_utils
from .adafactor import Adafactor
from .adam import Adam, Adamax, AdamW, NAdam, RAdam
from .adaptive import Adadelta, Adagrad, RMSprop
from .asgd import ASGD
from .lbfgs import LBFGS
from .lion import Lion
from .muon import Muon
from .optimizer import Optimizer, required
from .rprop import Rprop
from ._stateless import swap_in_optimizer_params_and_state
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad", "Adadelta",
           "Rprop", "ASGD", "SparseAdam", "Lion", "LBFGS", "Adafactor", "Muon", "swap_in_optimizer_params_and_state", "lr_scheduler", "swa_utils", "required"]
