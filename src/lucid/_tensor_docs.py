"""The docstrings of the Tensor's own attributes (its properties and the methods of its class body), kept here so
that ``_tensor.py`` stays about the Tensor's machinery; ``_surface`` sets them at import. Each says what PyTorch's
says the attribute is, in lucid's words."""
from __future__ import annotations

DOCS = {
    "shape": "The tensor's shape, a ``lucid.Size`` (a tuple of ints): ``t.shape[0]``, ``t.shape == (2, 3)``.\n\n"
             ">>> import lucid\n>>> lucid.zeros(2, 3).shape\nlucid.Size([2, 3])",
    "ndim": "The number of dimensions (``len(t.shape)``).",
    "dtype": "The element type: ``lucid.float32``, ``lucid.int64``, ... (MLX's dtype objects).\n\n"
             ">>> import lucid\n>>> lucid.tensor([1, 2]).dtype\nmlx.core.int64",
    "device": "Where the tensor's ops run: lucid's default device (``gpu`` on Apple Silicon, ``cpu`` with "
              "``mlx[cpu]``); memory is unified, so a tensor is never copied between devices.",
    "is_cuda": "True when the tensor's device is lucid's GPU and MLX runs on CUDA (an ``mlx[cuda]`` build).",
    "requires_grad": "Whether operations on this tensor are recorded for backward. Settable on leaves (floating "
                     "point dtypes only); a result requires grad when any input does (outside ``no_grad``).",
    "is_leaf": "True for tensors not made by a recorded op: user-made tensors and parameters, and every tensor that "
               "does not require grad. Only leaves get ``.grad`` from backward (others need ``retain_grad()``).",
    "grad_fn": "The backward node of the op that made this tensor (``MulBackward0`` ...), or None for a leaf.",
    "output_nr": "Which output of its ``grad_fn`` this tensor is (0 for single-output ops).",
    "grad": "The gradient accumulated by ``backward()`` for this leaf (None until then); assign None to clear it. "
            "A non-leaf has one only after ``retain_grad()`` (reading it otherwise warns, as in PyTorch).\n\n"
            ">>> import lucid\n>>> w = lucid.tensor([1.0, 2.0], requires_grad=True)\n>>> (w * w).sum().backward()\n"
            ">>> w.grad\nTensor([2., 4.])",
    "retains_grad": "Whether ``retain_grad()`` was called on this non-leaf.",
    "T": "The tensor with its dimensions reversed (deprecated in PyTorch beyond 2-D; ``mT`` for matrices).",
    "mT": "The batch of matrices with their last two dimensions swapped.",
    "itemsize": "The size of one element in bytes.",
    "nbytes": "The tensor's size in bytes (``numel() * itemsize``).",
    "is_mps": "True when the tensor's device is a Metal GPU (an Apple Silicon Mac).",
    "is_xpu": "False (lucid has no Intel GPU device).",
}

PARAMS = {
    "size": ":param dim: a dimension: its size is returned instead of the whole shape.",
    "requires_grad_": ":param requires_grad: whether to record operations on this tensor.",
    "zero_grad": ":param set_to_none: set ``.grad`` to None (default) instead of filling it with zeros.",
    "register_hook": ":param hook: ``hook(grad)``, returning None or a replacement gradient.\n"
                     ":returns: a handle whose ``remove()`` unregisters the hook.",
    "register_post_accumulate_grad_hook": ":param hook: ``hook(tensor)``, called with this leaf.\n"
                                          ":returns: a handle whose ``remove()`` unregisters the hook.",
    "to": ":param args: a dtype, a device, a device and a dtype, or another tensor (its dtype).\n"
          ":param dtype: the dtype to cast to.\n:param device: the device (lucid's one device accepts its names).\n"
          ":param copy: return a copy even when nothing changes.\n"
          ":param non_blocking: accepted for PyTorch's signature.\n:returns: ``self`` when nothing changes.",
}
