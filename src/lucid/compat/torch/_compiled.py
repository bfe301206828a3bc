"""``torch.compile``: a module comes back as ``lucid.compile``'s ``OptimizedModule`` (each call one compiled tape
node, see docs/api/compile.md); a function comes back as it is and runs eagerly.

PyTorch's ``OptimizedModule`` holds the model as ``_orig_mod`` (so its state_dict keys start with ``_orig_mod.``,
which scripts such as nanoGPT strip when they load); lucid's keeps that shape, so checkpoints move between the two
unchanged. Of the options, ``backend="eager"`` runs the module's own calls (as PyTorch's eager backend does),
``fullgraph=True`` makes a forward that cannot be traced an error instead of an eager call, and ``disable=True``
returns the argument itself; ``mode``, ``dynamic``, ``options`` and the other backends are accepted and change
nothing (there is one MLX compiler; every new input shape gets its own trace)."""
from __future__ import annotations

from lucid._compile import OptimizedModule
from lucid.nn import Module

__all__ = ["OptimizedModule", "compile"]


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="inductor", mode=None, options=None,
            disable: bool = False):
    """``torch.compile(model)``, ``torch.compile(fn)`` and ``@torch.compile(...)``; options are accepted."""
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if isinstance(model, Module) and not disable:
        return OptimizedModule(model, fullgraph=fullgraph, eager=backend == "eager")
    return model
