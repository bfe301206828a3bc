"""Tensor: one MLX array plus autograd metadata.

The array lives in a ``Storage`` box that ``detach()`` and ``.data`` share, so an in-place write through one of
them shows through the other (MLX arrays are immutable; "in place" means the box gets a new array). The box also
carries the version counter that backward checks saved tensors against. Views, which share their base's data and
counter as in PyTorch, are described in ``lucid._views``.

Operators and methods (``x + y``, ``x.sum()``) are attached by the op modules in ``lucid.ops``: each op is
declared once there and becomes both ``lucid.op`` and ``Tensor.op``. ``backward()`` and the hook methods are attached
by ``lucid.autograd.tensor_methods`` (this layer imports neither: docs/architecture.md).
"""
from __future__ import annotations

import copy
import warnings
import weakref

import mlx.core as mx
import numpy as np

from . import _checks, _cpu_route, _dtype, _meta, _threads, _views
from ._checks import mark_known
from ._threads import adopt_thread
from ._pending import (MAX_PENDING_STEPS, MAX_PENDING_WRITES, _pending, _with_pending, backward_starting,  # noqa: F401
                       evaluate_later, evaluate_pending, take_pending_evals)
from . import _grad_mode as gm
from ._views import (_INFERENCE_VIEW_MESSAGE, OVERLAP_MESSAGE, SharedStorage, Storage, _check_view_mode,
                     _custom_view_error, counter_of, info_of)

_new = object.__new__


class _Extra:
    """Rarely-set per-tensor state, kept off the hot path."""

    __slots__ = ("retains_grad", "post_hooks", "view_of", "inference", "data_alias", "leaf_hooks", "inference_view",
                 "fn_view", "overlap")

    def __init__(self):
        self.retains_grad = False
        self.post_hooks = None  # {key: fn(tensor)} after .grad accumulation (leaves)
        self.view_of = None  # a _views.ViewInfo: how this view was taken of its base
        self.inference = False
        self.data_alias = False  # `.data`: in-place writes do not bump the version counter
        self.leaf_hooks = None  # {key: fn(grad)}: register_hook on a leaf
        self.inference_view = False  # a view of a normal tensor taken in inference mode (not an inference tensor)
        self.fn_view = None  # a view (or an input as is) returned by a custom Function: (its name, output nr), or
        #                      True when that Function recorded nothing; or the whole message (a str) for another
        #                      kind of view that a recorded write may not enter (unbind's pieces taken off the graph)
        self.overlap = False  # several elements share one memory location in PyTorch (expand, as_strided stride 0)


class Size(tuple):
    """A tensor's shape: a tuple that prints like PyTorch's and knows ``numel()``. It prints under the name the
    program reaches it by: ``lucid.Size([2, 3])``, or ``torch.Size([2, 3])`` while ``torch`` is lucid.compat.torch
    (``lucid run``; set by lucid.compat._alias)."""

    face = "lucid"

    def __repr__(self):
        return f"{Size.face}.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n


sparse_grad_types: tuple = ()  # lucid.sparse's class (set there): a .grad may be sparse, as in PyTorch (SparseAdam)
_INDEX_DTYPES = frozenset((mx.int64, mx.int32, mx.int16, mx.int8, mx.uint8, mx.uint16, mx.uint32, mx.uint64))


def _on_storage(st, fn, rg: bool, nr: int) -> "Tensor":
    """Another Tensor on the storage ``st`` (its value and version counter), in the graph at ``(fn, nr)``."""
    t = _wrap(st.data, fn, rg, nr)
    t._storage = st
    return t


def _wrap(arr: mx.array, fn=None, rg: bool = False, nr: int = 0) -> "Tensor":
    """The fast constructor used by every op."""
    st = _new(Storage)
    st.data = arr
    st.version = 0
    st.views = None
    t = _new(Tensor)
    t._storage = st
    t._requires_grad = rg
    t._node = fn
    t._output_nr = nr
    t._grad = None
    t._accum = None
    t._extra = None
    return t


def _shape_str(shape) -> str:
    return str(list(shape))


def _size_str(shape) -> str:
    """A shape as PyTorch prints it where its message shows a ``torch.Size`` (``lucid.Size([2, 3])``; see Size)."""
    return repr(Size(shape))
def _infer_numpy(data, dtype=None) -> np.ndarray:
    """numpy view of Python data with PyTorch's defaults (float -> float32, int -> int64) when no dtype is asked;
    numpy arrays and scalars keep their own dtype."""
    arr = np.asarray(data)
    if arr.dtype == object:
        raise TypeError(f"can't make a tensor from {type(data).__name__} data with mixed or unsupported elements")
    if dtype is not None or isinstance(data, (np.ndarray, np.generic)):
        return arr
    if arr.dtype == np.float64:
        return arr.astype(_dtype.to_numpy_dtype(_dtype.get_default_dtype()))
    if arr.dtype == np.complex128:
        return arr.astype(np.complex64)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    return arr


def _to_array(data, dtype=None, device=None) -> mx.array:
    """Data of any supported kind -> a fresh MLX array of the requested (or inferred) dtype."""
    adopt_thread()  # a cast below is an op: it must land on the shared stream
    if isinstance(data, Tensor):
        arr = data._storage.data
    elif isinstance(data, mx.array):
        arr = data
    elif isinstance(data, (list, tuple)) and any(isinstance(d, Tensor) for d in _flat(data)):
        arr = mx.array(np.array(_nested_values(data)))
        if dtype is None:
            first = next(d for d in _flat(data) if isinstance(d, Tensor))
            dtype = first.dtype
    else:
        a = _infer_numpy(data, dtype)
        target = dtype if dtype is not None else _dtype.from_numpy_dtype(a.dtype)
        if a.dtype == np.float64 and target != mx.float64:
            a = a.astype(np.float32)
        arr = mx.array(a, dtype=target)
        mark_known(arr)  # made from host values: indices (and probabilities) are checked at once (lucid._checks)
    meta = _meta.used[0] and _meta.is_meta(arr)  # a meta Tensor's data: the result is meta too
    if dtype is not None and arr.dtype != dtype:
        arr = _cpu_route.build(arr.astype, dtype)
    if device is not None:
        _dtype.check_device(device, arr.dtype)
    return _meta.like(arr) if meta or _dtype.wants_meta(device) else arr


def _flat(data):
    for d in data:
        if isinstance(d, (list, tuple)):
            yield from _flat(d)
        else:
            yield d


def _nested_values(data):
    if isinstance(data, (list, tuple)):
        return [_nested_values(d) for d in data]
    return data.item() if isinstance(data, Tensor) else data


def _legacy_data(args: tuple, dtype) -> tuple:
    """(data, dtype) for ``Tensor(*args)``, as PyTorch's ``torch.Tensor``: sizes or a Size make zeros of that shape,
    data (a sequence, a numpy array) is converted, both in the default float dtype unless ``dtype`` is given; a
    Tensor or MLX array is taken as it is."""
    if len(args) == 1 and isinstance(args[0], (Tensor, mx.array)):
        return args[0], dtype
    dtype = _dtype.get_default_dtype() if dtype is None else dtype
    if (len(args) == 1 and isinstance(args[0], Size)) or (
            args and all(isinstance(a, int) and not isinstance(a, bool) for a in args)):
        shape = tuple(args[0]) if isinstance(args[0], Size) else args
        return mx.zeros(_dtype.check_new_shape(shape, dtype), dtype), dtype  # MLX has no uninitialised memory
    if not args:
        return mx.zeros((0,), dtype), dtype
    if len(args) == 1 and (isinstance(args[0], (list, tuple)) or hasattr(args[0], "__array__")):
        return args[0], dtype
    if len(args) == 1:
        raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
    raise TypeError("new() received an invalid combination of arguments - got "
                    f"({', '.join(type(a).__name__ for a in args)})")


class Tensor:
    """A multi-dimensional array with autograd, backed by an ``mlx.core.array`` (``t.mlx``)."""

    __slots__ = ("_storage", "_requires_grad", "_node", "_output_nr", "_grad", "_accum", "_extra", "__weakref__")
    __array_priority__ = 1000  # numpy defers `ndarray + Tensor` to Tensor.__radd__

    def __init__(self, *args, dtype=None, requires_grad: bool = False, device=None):
        """PyTorch's legacy constructor: ``Tensor(3, 4)`` zeros, ``Tensor([1, 2])`` data (see ``_legacy_data``)."""
        arr = _to_array(*_legacy_data(args, dtype), device)
        src = _wrap(arr)
        self._storage, self._requires_grad, self._node, self._output_nr = src._storage, False, None, 0
        self._grad = self._accum = self._extra = None
        if requires_grad:
            self._set_requires_grad(True, "Only Tensors of floating point and complex dtype can require gradients")

    # ------------------------------------------------------------------------------------------------ data
    @property
    def mlx(self) -> mx.array:
        """The MLX array behind this tensor (no copy)."""
        return self._storage.data

    @property
    def shape(self) -> Size:
        return Size(self._storage.data.shape)

    def size(self, dim: int | None = None):
        """The shape as a ``lucid.Size``, or the size of dimension ``dim``."""
        s = self._storage.data.shape
        return Size(s) if dim is None else s[dim]

    @property
    def ndim(self) -> int:
        return self._storage.data.ndim

    def dim(self) -> int:
        """The number of dimensions (``ndim``); ``ndimension()`` is the same."""
        return self._storage.data.ndim

    ndimension = dim

    def numel(self) -> int:
        """The number of elements; ``nelement()`` is the same."""
        return self._storage.data.size

    nelement = numel

    @property
    def dtype(self):
        return self._storage.data.dtype

    @property
    def device(self) -> _dtype.device:
        return _dtype.device("meta") if self.is_meta else _dtype.array_device()

    @property
    def is_meta(self) -> bool:
        """Whether this is a meta tensor: a shape and a dtype without values (``device="meta"``, lucid._meta)."""
        return _meta.used[0] and _meta.is_meta(self._storage.data)

    def is_floating_point(self) -> bool:
        """True for float16/32/64 and bfloat16 tensors."""
        return _dtype.is_floating(self.dtype)

    def is_complex(self) -> bool:
        """True for complex tensors."""
        return _dtype.is_complex(self.dtype)

    def element_size(self) -> int:
        """Bytes per element."""
        return self._storage.data.itemsize

    def __len__(self):
        s = self._storage.data.shape
        if not s:
            raise TypeError("len() of a 0-d tensor")
        return s[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(len(self)))

    def numpy(self) -> np.ndarray:
        """The values as a numpy array (evaluates the lazy MLX graph). A tensor that requires grad must be
        ``detach()``-ed first, as in PyTorch."""
        if self._requires_grad and gm.state.grad:  # under no_grad PyTorch allows it
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self._to_numpy("numpy")

    def _values(self, read: str = "copy") -> mx.array:
        """The array, about to be read on the host (``_with_pending``); integer arrays are remembered as known
        (indices checked at once from now on: lucid._checks). A meta tensor raises PyTorch's error for ``read``."""
        if self.is_meta:
            raise _meta.read_error(read)
        a = _with_pending(self._storage.data)
        if a.dtype in _INDEX_DTYPES:
            _checks.mark_known(a)
        return a

    def _to_numpy(self, read: str = "copy") -> np.ndarray:
        a = self._values(read)
        if a.dtype == mx.bfloat16:
            a = a.astype(mx.float32)
        return _threads.to_numpy(a)

    def __array__(self, dtype=None, copy=None):
        """``np.asarray(t)`` / ``np.array(t)``: as ``numpy()``, so a tensor that requires grad is refused (outside
        ``no_grad``) with PyTorch's message."""
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    # ------------------------------------------------------------------------------------------------ interop
    def __mlx_array__(self) -> mx.array:
        """The MLX array (no copy), so that ``mx.array(t)`` and MLX functions taking array-likes accept tensors."""
        return self._storage.data

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export the values through DLPack (``np.from_dlpack(t)``, ``torch.from_dlpack(t)``), as MLX exports them.
        Unlike PyTorch's, a tensor that requires grad is exported too (its values, as ``detach()``'s): MLX reads
        tensors through this, and ``mx.array(parameter)`` must work as ``parameter.mlx`` does."""
        return self._values().__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple:
        return self._storage.data.__dlpack_device__()

    def __reduce_ex__(self, protocol):
        # PyTorch's pickle keeps the values and requires_grad only: a non-leaf comes back as a leaf (no history), the
        # .grad and hooks are dropped; a meta tensor keeps its shape and dtype
        if self.is_meta:
            return (_rebuild_meta, (tuple(self.shape), _dtype.dtype_name(self.dtype), self._requires_grad))
        return (_rebuild_tensor_from_numpy, _pickled_values(self._values()) + (self._requires_grad,))

    def __deepcopy__(self, memo):
        if self._node is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the "
                "moment.  If you were attempting to deepcopy a module, this may be because of a "
                "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        new = _rebuild_tensor(self._storage.data, self._requires_grad)  # the array is immutable: sharing it is a copy
        memo[id(self)] = new
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        return new

    def tolist(self):
        """The values as nested Python lists (a number for a 0-d tensor)."""
        return _threads.tolist(self._values())

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self._storage.data.size != 1:
            raise RuntimeError(f"a Tensor with {self._storage.data.size} elements cannot be converted to Scalar")
        return _threads.item(self._values("item"))

    def __bool__(self):
        if self._storage.data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(_threads.item(self._values("item")))

    # ValueError as in PyTorch (not item()'s RuntimeError): callers such as matplotlib catch ValueError/TypeError
    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def _scalar(self):
        if self._storage.data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return _threads.item(self._values("item"))

    def __index__(self):
        if not mx.issubdtype(self.dtype, mx.integer) or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    __hash__ = object.__hash__

    # ------------------------------------------------------------------------------------------------ autograd
    def _ex(self) -> _Extra:
        ex = self._extra
        if ex is None:
            ex = self._extra = _Extra()
        return ex

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool):
        self._set_requires_grad(flag, "only Tensors of floating point and complex dtype can require gradients")

    @requires_grad.deleter
    def requires_grad(self):
        raise RuntimeError("requires_grad must be a bool")

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Set ``requires_grad`` in place (leaf tensors of floating dtype only); returns ``self``."""
        self._set_requires_grad(requires_grad, "only Tensors of floating point dtype can require gradients")
        return self

    def _set_requires_grad(self, flag: bool, dtype_message: str):
        flag = bool(flag)
        if self._node is not None:
            if not flag:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                    "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
            return
        if flag and not _dtype.can_require_grad(self.dtype):
            raise RuntimeError(dtype_message)
        ex = self._extra
        if flag and ex is not None and ex.inference and not gm.state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._requires_grad = flag

    @property
    def volatile(self) -> bool:
        """Removed in PyTorch 0.4 (use ``no_grad``); always False, with PyTorch's warning."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    @property
    def is_leaf(self) -> bool:
        return self._node is None

    @property
    def grad_fn(self):
        ex = self._extra
        if ex is not None and ex.inference_view == _views.REBASED_INFERENCE_VIEW:
            raise RuntimeError(
                "A view was created in inference mode and its base or another view of its base has been modified "
                "inplace in normal mode. Given that this use case is ambiguous and error-prone, it is forbidden. You "
                "can clarify your code by moving both the view and the inplace either both inside the inference_mode "
                "block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be "
                "tracked).")
        return self._node

    @property
    def output_nr(self) -> int:
        return self._output_nr

    # PyTorch's private spellings of grad_fn and of the tensor's hooks: readable, and deleting them is refused with
    # PyTorch's errors (as deleting .data and .requires_grad is)
    @property
    def _grad_fn(self):
        return self.grad_fn

    @_grad_fn.deleter
    def _grad_fn(self):
        raise RuntimeError("Deletion of _grad_fn not allowed. Detach tensor instead!")

    @property
    def _backward_hooks(self):
        """The hooks ``register_hook`` added (a dict in registration order), or None."""
        if self._node is None:
            return None if self._extra is None else self._extra.leaf_hooks
        hooks = self._node._hooks
        return None if hooks is None else hooks.tensor_pre.get(self._output_nr)

    @_backward_hooks.setter
    def _backward_hooks(self, hooks):
        """Replace the tensor's hooks by the dict ``hooks`` (PyTorch code sets it to an empty OrderedDict)."""
        if self._node is None:
            if hooks is not None or self._extra is not None:
                self._ex().leaf_hooks = hooks
        elif hooks is None:
            if self._node._hooks is not None:
                self._node._hooks.tensor_pre.pop(self._output_nr, None)
        else:
            self._node.hooks().tensor_pre[self._output_nr] = hooks

    @_backward_hooks.deleter
    def _backward_hooks(self):
        raise RuntimeError("Deletion of _backwards_hooks not allowed!")

    @property
    def _version(self) -> int:
        ex = self._extra
        if ex is not None and ex.inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._storage.version

    @property
    def grad(self):
        if self._node is not None and not self.retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
                "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
                "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf "
                "Tensor by mistake, make sure you access the leaf Tensor instead.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor) and not isinstance(value, sparse_grad_types):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError(f"attempting to assign a gradient of size '{_shape_str(value.shape)}' to a tensor "
                                   f"of size '{_shape_str(self.shape)}'. Please ensure that the gradient and the "
                                   "tensor are the same size")
            if value.dtype != self.dtype:
                raise RuntimeError(f"attempting to assign a gradient with dtype '{_dtype.dtype_name(value.dtype)}' "
                                   f"to a tensor with dtype '{_dtype.dtype_name(self.dtype)}'. Please ensure that "
                                   "the gradient and the tensor have the same dtype")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Clear ``.grad`` between backward calls: set it to None (default) or fill it with zeros in place."""
        if set_to_none or self._grad is None:
            self._grad = None
        elif not isinstance(self._grad, Tensor):  # a sparse gradient (assigned by hand): no entries left
            self._grad.zero_()
        else:
            g = self._grad
            g._storage.data = mx.zeros_like(g._storage.data)
            after_write(g._storage, True)

    @property
    def retains_grad(self) -> bool:
        return self._extra is not None and self._extra.retains_grad

    def retain_grad(self) -> None:
        """Make a non-leaf keep its ``.grad`` after backward (a no-op on leaves)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._node is None or self.retains_grad:
            return
        self._ex().retains_grad = True
        self._node.hooks().retain[self._output_nr] = weakref.ref(self)

    def detach(self) -> "Tensor":
        """A tensor that shares this one's data and version counter and is cut off from the graph (of a view: a
        view without history, so that it keeps seeing and writing its base's memory)."""
        t = _wrap(self._storage.data)
        if self._extra is not None and self._extra.view_of is not None:
            return _views.make_view(t, self, None, None, alias=True)
        t._storage = self._storage
        return t

    def detach_(self) -> "Tensor":
        """Detach ``self`` from the graph in place: it becomes a leaf that does not require grad."""
        if self._is_view():
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                               "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                               "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                               "function in torch/optim/optimizer.py as the solution.")
        self._node = None
        self._requires_grad = False
        self._output_nr = 0
        return self

    @property
    def data(self) -> "Tensor":
        """This tensor's data without autograd: writes to it show through and do not bump the version."""
        t = self.detach()
        t._ex().data_alias = True
        return t

    @data.setter
    def data(self, value: "Tensor"):
        """New data in a new storage (the views taken so far keep the old one) with the same version counter."""
        if value is None:
            raise TypeError("Variable data has to be a tensor, but got NoneType")
        arr = value._storage.data if isinstance(value, Tensor) else mx.array(value)
        if self._requires_grad and not _dtype.can_require_grad(arr.dtype):
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        old = self._storage
        _views.new_memory(self, old, _wrap)
        st = _new(SharedStorage)
        st.data = arr
        st.views = None
        st.counter = counter_of(old)
        self._storage = st

    @data.deleter
    def data(self):
        raise RuntimeError("Deleting tensor data is not allowed. Delete tensor instead!")

    def _is_view(self) -> bool:
        """Whether autograd tracks this tensor as a view. An inference tensor never is, as in PyTorch (lucid still
        keeps a view of one in step with its base's writes)."""
        info = info_of(self)
        return info is not None and not info.alias and not self._extra.inference

    @property
    def _base(self):
        """The tensor this view was taken of (the first one that is no view); None for a tensor that is no view."""
        return _views.root_tensor(self) if self._is_view() else None

    def is_inference(self) -> bool:
        """True for a tensor made in ``inference_mode``."""
        return self._extra is not None and self._extra.inference

    # ------------------------------------------------------------------------------------------------ in place
    def _inplace(self, compute, via_view: bool = False, bump: bool = True, inverse=None,
                 overlap_ok: bool = False) -> "Tensor":
        """Replace this tensor's value by ``compute(old)``, where ``compute`` is built from lucid ops.

        With recording on, ``old`` is a fresh alias of the current value (same grad_fn), so the graph sees the
        value before the write, and this tensor takes the result's grad_fn. The version counter goes up (unless
        ``bump`` is False: a write through ``.data``), so nodes that saved this tensor notice. A view writes its new
        value into its base, and a write to a storage re-derives the live views of it (lucid._views).

        ``inverse``: ``compute`` changes only the shape (transpose_, squeeze_, ...) and ``inverse`` undoes it; see
        ``_change_shape``. ``overlap_ok``: one of the ops PyTorch lets write into a tensor whose elements share memory
        (``_Extra.overlap``, ``fill_``...; lucid has no strides to tell that of a view of one, left unchecked)."""
        d = self._storage.data
        if d.itemsize == 8 and d.dtype == mx.float64 and _cpu_route.gpu_default():  # (itemsize first: cheaper)
            with _cpu_route.on_cpu():  # the write and the views it re-derives are float64 ops
                return self._inplace(compute, via_view, bump, inverse, overlap_ok)
        if inverse is not None:
            return self._change_shape(compute, inverse)
        self._check_inplace(via_view)
        ex = self._extra
        if ex is not None and ex.overlap and not (overlap_ok or via_view):
            raise RuntimeError(OVERLAP_MESSAGE)
        recording = gm.state.grad
        view = ex.view_of if ex is not None else None
        if recording:
            if view is not None and view.grad:
                old = _views.fresh_value(self)
            else:
                old = _wrap(self._storage.data, self._node, self._requires_grad, self._output_nr)
            new = compute(old)
            if new._requires_grad and self._extra is not None and self._extra.fn_view is not None:
                _custom_view_error(self._extra.fn_view)  # (nothing has been written yet)
        else:
            new = compute(self)
        new = self._conform_inplace(new)
        bump = bump and (ex is None or not ex.data_alias)
        if view is not None:
            if view.alias:  # the root's memory changes, unrecorded; the alias takes the write's history
                _views.write_alias(self, view, new, bump, _wrap)
                evaluate_later(self, write=True)
            else:  # the base's write re-derives every live view of the root, this one included
                view.base._inplace(lambda b: _views.into_base(view, b, new), via_view=True, bump=bump)
                if recording and new._node is not None:  # a saved output is this view's value, at its new version
                    new._node.rebind_output(_views.own_output(self._storage))
            return self
        st = self._storage
        st.data = _meta.written(st.data, new._storage.data) if _meta.used[0] else new._storage.data
        if not recording:  # under no_grad the tensor keeps its place in the graph (optimizer updates)
            after_write(st, bump)
            evaluate_later(self, write=True)
            return self
        if bump:  # before rebind_output: a node saving this output expects its new version
            st.version += 1
        regraph = new._node is not None or self._node is not None
        if new._node is not None:
            fn, nr, rg = self._node, self._output_nr, self._requires_grad
            _views.rebind_grad_fn(self, new._node, new._output_nr, True)
            new._node.rebind_output(st)
            _views.unsave(self, new._node, fn, lambda: _on_storage(st, fn, rg, nr))
        elif self._node is not None:  # the new value depends on nothing that requires grad
            _views.rebind_grad_fn(self, None, 0, False)
        after_write(st, False, regraph)
        return self

    def _change_shape(self, compute, inverse) -> "Tensor":
        """The in-place shape methods: this tensor keeps its identity and takes the shape of ``compute(self)``, its
        values unchanged (``inverse`` undoes ``compute``). Nothing is written to a base: a view's path from its root
        gets the step, and the views taken of this tensor before keep their shape, values and writes
        (``_views.shape_changed``). The version goes up, as in PyTorch."""
        self._check_inplace(False)
        fn = self._node
        st = self._storage
        if fn is not None and getattr(fn, "out_st", None) is st:
            # the node that made the value keeps it in a storage of its own, with the old shape, at the version it
            # has now (its out_v stays, so an earlier write still shows; this change does not)
            keep = _new(Storage)
            keep.data, keep.version, keep.views = st.data, st.version, None
            fn.out_st = keep
        recording = gm.state.grad
        new = compute(_wrap(st.data, fn, self._requires_grad, self._output_nr) if recording else self)
        ex = self._extra
        st.data = new._storage.data
        if ex is None or not ex.data_alias:
            st.version += 1
        _views.shape_changed(self, compute, inverse, recording and self._requires_grad)
        if not recording:
            evaluate_later(self, write=True)
        elif new._node is not None:
            _views.rebind_grad_fn(self, new._node, new._output_nr, True)
            new._node.rebind_output(st)
        elif fn is not None:
            _views.rebind_grad_fn(self, None, 0, False)
        return self

    def _renew(self, arr: mx.array) -> "Tensor":
        """New memory of another shape (``out=`` resizing this tensor): a view stops being one, and the views taken
        of this tensor so far keep the old memory. The version goes up."""
        _views.leave(self, _wrap)
        self.data = _wrap(arr)
        ex = self._extra
        after_write(self._storage, ex is None or not ex.data_alias)
        evaluate_later(self, write=True)
        return self

    def _check_inplace(self, via_view: bool):
        ex = self._extra
        if ex is not None and ex.inference and not gm.state.inference:
            raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make "
                               "a clone to get a normal tensor before doing inplace update.See "
                               "https://github.com/pytorch/rfcs/pull/17 for more details.")
        if not gm.state.grad:
            return
        if ex is not None and ex.inference_view and self._requires_grad:
            raise RuntimeError(_INFERENCE_VIEW_MESSAGE)
        if ex is not None and ex.view_of is not None and not ex.view_of.alias:
            _check_view_mode(self)
        if self._requires_grad and self._node is None:
            if via_view:
                raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                                   "operation.")
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        view = ex.view_of if ex is not None else None
        if view is not None and not view.alias:
            if view.error is not None and view.grad:
                raise RuntimeError(view.error)
            view.base._check_inplace(True)

    def _conform_inplace(self, new: "Tensor") -> "Tensor":
        a, b = self._storage.data, new._storage.data
        if b.shape != a.shape:
            raise RuntimeError(f"output with shape {_shape_str(a.shape)} doesn't match the broadcast shape "
                               f"{_shape_str(b.shape)}")
        if b.dtype != a.dtype:
            if _dtype._category(b.dtype) > _dtype._category(a.dtype):
                raise RuntimeError(f"result type {_dtype.dtype_name(b.dtype)} can't be cast to the desired output "
                                   f"type {_dtype.dtype_name(a.dtype)}")
            # cast the fresh result's own storage: its node keeps its name (AddBackward0, as in PyTorch) and the
            # engine casts the incoming gradient to this dtype, read from that storage
            new._storage.data = _cpu_route.build(b.astype, a.dtype)
        return new

    def _set_view_of(self, base: "Tensor", fn, write_back, error: str | None = None) -> "Tensor":
        """Make this tensor, the result of ``fn(base)``, a view of ``base`` (lucid._views); ``error``: why an
        in-place write through it is refused. Inference mode's rules: a view of an inference tensor is one (outside
        the graph); a view of a normal tensor taken inside inference mode stays normal and keeps requires_grad (as a
        leaf), and refuses in-place writes outside inference mode (``_INFERENCE_VIEW_MESSAGE``)."""
        _views.make_view(self, base, fn, write_back, error)
        ex = self._extra
        bex = base._extra
        if bex is not None and bex.inference:
            ex.inference = True
            self._node, self._requires_grad, self._output_nr = None, False, 0
        elif gm.state.inference:
            ex.inference = False
            ex.inference_view = True
            self._requires_grad = base._requires_grad
        return self


def _rebuild_tensor(arr: mx.array, requires_grad: bool) -> Tensor:
    """An unpickled (or deep-copied) tensor: a leaf holding ``arr``."""
    return _wrap(arr, None, requires_grad)


def _rebuild_meta(shape: tuple, dtype: str, requires_grad: bool) -> Tensor:
    """An unpickled meta tensor."""
    return _wrap(_meta.placeholder(shape, _dtype.dtype_named(dtype)), None, requires_grad)


def _pickled_values(a: mx.array) -> tuple:
    """``a`` as (numpy values, dtype name) for pickling. Not the MLX array itself: MLX pickles float64 as float32.
    bfloat16, which numpy lacks, travels as float32 (exact) and is cast back on loading."""
    host = a.astype(mx.float32) if a.dtype == mx.bfloat16 else a
    return _threads.to_numpy(host), str(a.dtype).rsplit(".", 1)[-1]


def _rebuild_tensor_from_numpy(values: np.ndarray, dtype: str, requires_grad: bool) -> Tensor:
    """An unpickled tensor (``_rebuild_tensor`` still loads pickles written before values travelled as numpy)."""
    return _wrap(mx.array(values, dtype=_dtype.dtype_named(dtype)), None, requires_grad)


def is_inference(input: Tensor) -> bool:
    """Whether ``input`` is an inference tensor (made inside ``inference_mode``)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.is_inference()


def after_write(st: Storage, bump: bool, regraph: bool = False) -> None:
    """``st`` has just been given a new array: bump its version, re-derive its live views."""
    if bump:
        st.version += 1
    if st.views is not None:
        _views.refresh(st, regraph, _wrap)


__all__ = ["Tensor", "Size", "Storage", "_wrap", "after_write"]
