"""torch.autograd: lucid's autograd with PyTorch's ``grad`` return convention (always a tuple).

This is the one semantic difference between the two faces: ``lucid.autograd.grad(y, x)`` with a single Tensor
``x`` returns a Tensor (lucid's documented API), so ``lucid.autograd.grad(u, x)[0]`` would silently be the first
row of the gradient; PyTorch code writes ``torch.autograd.grad(u, x)[0]`` everywhere and means the gradient."""
from lucid.autograd import *  # noqa: F401,F403
from lucid.autograd import functional, graph  # noqa: F401
from lucid.autograd import grad as _lucid_grad
from lucid import Tensor as _Tensor
import lucid.autograd as _lucid_autograd
from ..._alias import share_shadowed_submodules as _share

# `from torch.autograd.gradcheck import ...` must leave torch.autograd.gradcheck the function (see _alias)
_share(_lucid_autograd, __name__)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False) -> tuple:
    """PyTorch's ``torch.autograd.grad``: a tuple with one gradient per input, also for a single Tensor input."""
    # a GradientEdge is a tuple too: it is one input, not a sequence of them
    inputs = (inputs,) if isinstance(inputs, (_Tensor, graph.GradientEdge)) else tuple(inputs)
    return _lucid_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, only_inputs, allow_unused,
                       is_grads_batched, materialize_grads)


class set_multithreading_enabled:
    """``set_multithreading_enabled(mode)``: PyTorch's switch for running backward on one thread per device, as a
    context manager (restoring the previous setting on exit). Accepted and recorded; lucid's backward walk always
    runs on the calling thread, so it changes nothing else."""

    _enabled = [True]

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self.prev = set_multithreading_enabled._enabled[0]
        set_multithreading_enabled._enabled[0] = self.mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        set_multithreading_enabled._enabled[0] = self.prev

    def clone(self) -> "set_multithreading_enabled":
        return self.__class__(self.mode)
