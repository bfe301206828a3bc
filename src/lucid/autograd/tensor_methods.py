"""The Tensor methods of the autograd layer: ``backward``, ``register_hook`` and
``register_post_accumulate_grad_hook``. They need the engine and the graph's hooks, which sit above the tensor
layer, so they are attached to Tensor here (by ``lucid._surface.attach``), when ``lucid.autograd`` is imported."""
from __future__ import annotations

from .._surface import attach
from .engine import backward as _engine_backward
from .graph import RemovableHandle, add_hook


def register_hook(self, hook) -> RemovableHandle:
    """``hook(grad) -> None | Tensor`` runs when the gradient for this tensor is computed (backward and
    autograd.grad), in registration order; a returned tensor replaces the gradient that flows on."""
    if not self._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._fn is None:
        ex = self._ex()
        if ex.leaf_hooks is None:
            ex.leaf_hooks = {}
        return add_hook(ex.leaf_hooks, hook)
    return add_hook(self._fn.hooks().tensor_pre.setdefault(self._nr, {}), hook)


def register_post_accumulate_grad_hook(self, hook) -> RemovableHandle:
    """``hook(tensor) -> None`` runs after backward has accumulated into this leaf's ``.grad``."""
    if self._fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if not self._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    ex = self._ex()
    if ex.post_hooks is None:
        ex.post_hooks = {}
    return add_hook(ex.post_hooks, hook)


def backward(self, gradient=None, retain_graph=None, create_graph: bool = False, inputs=None) -> None:
    """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (``lucid.autograd.backward(self, ...)``).

    :param gradient: the seed, of this tensor's shape; None means ones, allowed only for a one-element tensor.
    :param retain_graph: keep the saved tensors for another backward; defaults to ``create_graph``.
    :param create_graph: record the backward, so ``.grad`` is itself differentiable.
    :param inputs: accumulate only into these tensors.
    :returns: None.

    >>> import lucid
    >>> w = lucid.tensor([3.0], requires_grad=True)
    >>> (w * w).sum().backward()
    >>> w.grad
    Tensor([6.])
    """
    _engine_backward(self, None if gradient is None else [gradient], retain_graph, create_graph, inputs=inputs)


attach("register_hook", register_hook)
attach("register_post_accumulate_grad_hook", register_post_accumulate_grad_hook)
attach("backward", backward)
