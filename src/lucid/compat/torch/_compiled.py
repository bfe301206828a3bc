"""``torch.compile``: a module comes back wrapped, a function comes back as it is; both run eagerly.

PyTorch returns an ``OptimizedModule`` that holds the model as ``_orig_mod`` (so its state_dict keys start with
``_orig_mod.``, which scripts such as nanoGPT strip when they load). lucid keeps that shape, so checkpoints move
between the two unchanged. For speed, ``lucid.compile`` compiles a whole training step (forward, backward and the
optimizer's update) into one MLX graph; a forward pass alone has nothing to gain from it."""
from __future__ import annotations

from lucid.nn import Module


class OptimizedModule(Module):
    """The compiled model: calls ``_orig_mod``; attributes it does not have itself are the model's."""

    def __init__(self, mod: Module):
        super().__init__()
        self._orig_mod = mod

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)  # parameters, buffers, submodules (_orig_mod itself)
        except AttributeError:
            return getattr(super().__getattr__("_orig_mod"), name)


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor", mode=None, options=None,
            disable: bool = False):
    """``torch.compile(model)``, ``torch.compile(fn)`` and ``@torch.compile(...)``; options are accepted."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if isinstance(model, Module) and not disable:
        return OptimizedModule(model)
    return model
