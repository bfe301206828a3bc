"""The ``meta`` device: tensors with a shape, a dtype and ``requires_grad`` but no values (PyTorch's
``device="meta"``: build a model's structure without memory, then ``Module.to_empty`` or
``load_state_dict(..., assign=True)``).

A meta tensor is an ordinary Tensor whose MLX array is a *placeholder*: a 0-d zero broadcast to the shape, which
MLX holds as one element whatever the shape. The placeholder arrays are registered here (weakly, by identity), so
meta-ness belongs to the array and everything sharing it is meta too: ``detach()``, ``.data``, ``Parameter(t)``,
a deep copy. Three places keep it so:

- an op with a meta operand (``lucid.ops._core``) returns a fresh placeholder of the shape and dtype MLX worked out
  (MLX computes shapes eagerly and values lazily), and the lazy graph behind it is dropped unevaluated: nothing is
  ever computed from a meta tensor;
- an in-place write into a meta tensor (``uniform_``, ``copy_``, an init function) leaves it a placeholder;
- reading values (``item()``, ``tolist()``, ``numpy()``, ``.to("cpu")``) raises PyTorch's errors.

Unlike PyTorch, an op mixing a meta and a real operand gives a meta result (PyTorch raises "Tensor on device meta
is not on the expected device cpu!" for most ops and returns garbage for some, ``x @ meta``); writing a meta value
into a real tensor raises.
"""
from __future__ import annotations

import weakref

import mlx.core as mx

_arrays: dict = {}  # id(array) -> weakref of the placeholder arrays
used = [False]  # whether any placeholder was ever made: until then the ops skip the check entirely

NO_DATA = "Cannot copy out of meta tensor; no data!"


def read_error(read: str) -> Exception:
    """PyTorch's error for reading a meta tensor's values: by ``item()`` (and ``bool``, ``float``, ``int``), by
    ``numpy()``, or by any other copy (``tolist()``, ``.to("cpu")``)."""
    if read == "item":
        return RuntimeError("Tensor.item() cannot be called on meta tensors")
    if read == "numpy":
        return TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                         "host memory first.")
    return NotImplementedError(NO_DATA)


def placeholder(shape, dtype) -> mx.array:
    """A new placeholder array of ``shape`` and ``dtype`` (one element of memory)."""
    used[0] = True
    arr = mx.broadcast_to(mx.zeros((), dtype), tuple(shape))
    key = id(arr)
    _arrays[key] = weakref.ref(arr, lambda r: _arrays.get(key) is r and _arrays.pop(key, None))
    return arr


def is_meta(arr) -> bool:
    """Whether the array ``arr`` is a placeholder."""
    r = _arrays.get(id(arr))
    return r is not None and r() is arr


def like(arr: mx.array) -> mx.array:
    """A placeholder with ``arr``'s shape and dtype (``arr`` is dropped unevaluated)."""
    return placeholder(arr.shape, arr.dtype)


def any_meta(tensors) -> bool:
    """Whether any of ``tensors`` (Tensors and other values mixed) holds a placeholder."""
    for t in tensors:
        st = getattr(t, "_storage", None)
        if st is not None and is_meta(st.data):
            return True
        if isinstance(t, (list, tuple)) and any_meta(t):  # cat, stack: a sequence of tensors
            return True
    return False


def written(old: mx.array, new: mx.array) -> mx.array:
    """What a tensor holding ``old`` stores when ``new`` is written into it in place: a meta tensor stays meta (the
    write is a no-op, as in PyTorch); a real tensor cannot take a meta value."""
    if is_meta(old):
        return new if is_meta(new) else like(new)
    if is_meta(new):
        raise NotImplementedError(NO_DATA)
    return new
