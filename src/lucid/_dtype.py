"""dtypes, devices and sizes: lucid uses MLX's dtype objects directly, with PyTorch's names and promotion rules; shapes are
checked here before MLX allocates them."""
from __future__ import annotations

import builtins
import math
import os

import mlx.core as mx
import numpy as np

float16 = half = mx.float16
bfloat16 = mx.bfloat16
float32 = float = mx.float32
float64 = double = mx.float64
complex64 = cfloat = mx.complex64
int8 = mx.int8
int16 = short = mx.int16
int32 = int = mx.int32
int64 = long = mx.int64
uint8 = mx.uint8
uint16 = mx.uint16
uint32 = mx.uint32
uint64 = mx.uint64
bool = mx.bool_  # noqa: A001  (PyTorch's name)

Dtype = mx.Dtype

# lucid's dtypes are MLX's own objects (so they pass to MLX unchanged and compare with its dtypes); PyTorch's dtype
# attributes are added to MLX's Dtype class as read-only properties. MLX defines none of these names, so MLX's own
# behaviour is unchanged.
_UNSIGNED = (mx.bool_, mx.uint8, mx.uint16, mx.uint32, mx.uint64)
Dtype.is_floating_point = property(lambda d: mx.issubdtype(d, mx.floating), doc="True for float16/32/64, bfloat16.")
Dtype.is_complex = property(lambda d: mx.issubdtype(d, mx.complexfloating), doc="True for complex64.")
Dtype.is_signed = property(lambda d: d not in _UNSIGNED, doc="False for bool and the unsigned integers.")
Dtype.itemsize = property(lambda d: d.size, doc="Bytes per element.")

_ALL_DTYPES = (mx.bool_, mx.uint8, mx.uint16, mx.uint32, mx.uint64, mx.int8, mx.int16, mx.int32, mx.int64, mx.float16,
               mx.bfloat16, mx.float32, mx.float64, mx.complex64)


# the names, read once: under ``lucid run`` a dtype's str is PyTorch's ("torch.float32", lucid.compat._torch_repr)
_NAMES = {d: str(d).replace("mlx.core.", "") for d in _ALL_DTYPES}
_BY_NAME = {n: d for d, n in _NAMES.items()}


def dtype_named(name: str):
    """The dtype whose ``str`` is ``mlx.core.<name>`` (how a pickled dtype comes back: the same singleton)."""
    if name not in _BY_NAME:
        raise ValueError(f"unknown dtype {name!r}")
    return _BY_NAME[name]


# MLX's Dtype has no pickle support, so copy.deepcopy(optimizer) (whose state holds dtypes) failed: a dtype pickles as
# its name and deep-copies as itself (dtypes are singletons, as torch.float32 is)
Dtype.__reduce__ = lambda d: (dtype_named, (_NAMES[d],))
Dtype.__deepcopy__ = lambda d, memo: d
Dtype.__copy__ = lambda d: d

_NUMPY_TO_MX = {
    np.dtype("float16"): mx.float16, np.dtype("float32"): mx.float32, np.dtype("float64"): mx.float64,
    np.dtype("complex64"): mx.complex64, np.dtype("complex128"): mx.complex64,
    np.dtype("int8"): mx.int8, np.dtype("int16"): mx.int16, np.dtype("int32"): mx.int32, np.dtype("int64"): mx.int64,
    np.dtype("uint8"): mx.uint8, np.dtype("uint16"): mx.uint16, np.dtype("uint32"): mx.uint32,
    np.dtype("uint64"): mx.uint64, np.dtype("bool"): mx.bool_,
}


def is_floating(dtype) -> bool:
    return mx.issubdtype(dtype, mx.floating)


def is_complex(dtype) -> bool:
    return mx.issubdtype(dtype, mx.complexfloating)


def can_require_grad(dtype) -> bool:
    return mx.issubdtype(dtype, mx.inexact)


def _category(dtype) -> int:
    """PyTorch's promotion categories: bool < integer < floating < complex."""
    if dtype == mx.bool_:
        return 0
    if mx.issubdtype(dtype, mx.integer):
        return 1
    if mx.issubdtype(dtype, mx.floating):
        return 2
    return 3


def promote(a: mx.array, b: mx.array) -> tuple[mx.array, mx.array]:
    """Cast two arrays to PyTorch's result type. MLX promotes a 0-d float64 with a float32 vector to float64;
    PyTorch lets a dimensioned operand win within the same category (a 0-d f64 leaves a f32 tensor f32)."""
    da, db = a.dtype, b.dtype
    if da == db:
        return a, b
    if a.ndim == 0 and b.ndim != 0 and _category(da) <= _category(db):
        return a.astype(db), b
    if b.ndim == 0 and a.ndim != 0 and _category(db) <= _category(da):
        return a, b.astype(da)
    return a, b  # otherwise MLX's table is PyTorch's


# the dtype of Python floats and of float factories (``lucid.set_default_dtype``); one for all threads, as in PyTorch
_default_float = [mx.float32]


def get_default_dtype():
    """The floating-point dtype that ``tensor(1.0)``, ``zeros(...)``, ``rand(...)`` and new layers use."""
    return _default_float[0]


def set_default_dtype(d) -> None:
    """Make ``d`` (float16, bfloat16, float32 or float64) the default floating-point dtype, as PyTorch's
    ``torch.set_default_dtype``. Complex data stays complex64 (MLX has no complex128)."""
    if not isinstance(d, mx.Dtype) or not is_floating(d):
        raise TypeError("only floating-point types are supported as the default type")
    _default_float[0] = d


def dtype_name(dtype) -> str:
    return _NAMES[dtype]


# ---------------------------------------------------------------------------------------------------- sizes
_MAX_DIM = 2**31 - 1  # MLX keeps each dimension in an int32: a larger one is an OverflowError deep inside it
_ram_bytes: list = []  # physical memory, looked up on first use


def _machine_bytes() -> int:
    if not _ram_bytes:
        try:
            n = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):  # no sysconf (Windows): MLX's own view of the device
            n = mx.device_info().get("memory_size", 0) if hasattr(mx, "device_info") else 0
        _ram_bytes.append(n if n > 0 else 2**63)
    return _ram_bytes[0]


def check_new_shape(shape: tuple, dtype) -> tuple:
    """Validate the shape of a tensor about to be allocated (a factory, repeat, tile); returns it.

    MLX allocates lazily and dereferences a failed allocation when the value is computed, killing the process
    (a Jupyter kernel with it); a request larger than the machine's physical memory is refused here instead, with
    PyTorch's out-of-memory error. Smaller requests that the machine still cannot serve are not caught."""
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    nbytes = math.prod(shape) * dtype.size
    if nbytes > _machine_bytes():
        raise RuntimeError(f"can't allocate memory: you tried to allocate {nbytes} bytes, more than this machine's "
                           f"{_machine_bytes()} bytes of memory (shape {list(shape)}, {dtype_name(dtype)})")
    check_dims(shape)
    return shape


def broadcast_shapes(*shapes) -> tuple:
    """The shape that ``shapes`` broadcast to, with PyTorch's error where two sizes differ and neither is 1 (MLX's
    own is a ValueError). Like PyTorch, the shapes are folded from the left and each pair compared from the right."""
    out = ()
    for s in shapes:
        n = max(len(out), len(s))
        a, b = (1,) * (n - len(out)) + tuple(out), (1,) * (n - len(s)) + tuple(s)
        for i in range(n - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                raise RuntimeError(f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at "
                                   f"non-singleton dimension {i}")
        out = tuple(y if x == 1 else x for x, y in zip(a, b))
    return out


def check_dims(shape: tuple) -> None:
    """MLX's limit on a single dimension (a broadcast view of that size allocates nothing, but MLX cannot hold it)."""
    for s in shape:
        if s > _MAX_DIM:
            raise RuntimeError(f"size {s} in shape {list(shape)} is too large: MLX supports dimensions of at most "
                               f"2**31 - 1 = {_MAX_DIM}")


# ---------------------------------------------------------------------------------------------------- devices
class device:
    """Where MLX runs an op: ``device("cpu")`` or ``device("gpu")`` (Metal on Apple Silicon, CUDA on Linux builds
    that have it). MLX arrays live in unified memory, so a tensor's device names the stream its ops run on.
    ``device("meta")`` is PyTorch's meta device: tensors with a shape and a dtype but no values (lucid._meta).

    As in PyTorch, a device is a context manager: inside ``with lucid.device("meta"):`` the factories (and the
    layers, which call them) make tensors on that device unless told otherwise."""

    __slots__ = ("type", "index")

    def __init__(self, type: str | "device", index: int | None = None):  # noqa: A002  (PyTorch's name)
        if isinstance(type, device):
            type, index = type.type, type.index
        name, _, idx = str(type).partition(":")
        if name == "mps" or name == "cuda":
            name = "gpu"  # PyTorch spellings port unchanged
        if name not in ("cpu", "gpu", "meta"):
            raise RuntimeError("Expected one of cpu, gpu, mps, cuda or meta device type at start of device string: "
                               f"{type}")
        self.type = name
        self.index = builtins.int(idx) if idx else (index or 0)  # (`int` here is lucid's dtype)

    def __eq__(self, other):
        other = device(other) if isinstance(other, str) else other
        return isinstance(other, device) and other.type == self.type

    def __hash__(self):
        return hash(self.type)

    def __repr__(self):
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type

    def __enter__(self) -> "device":
        _outer_devices.append(get_default_device())
        set_default_device(self)
        return self

    def __exit__(self, *exc) -> None:
        set_default_device(_outer_devices.pop())

    @property
    def mx(self) -> mx.Device:
        return mx.Device(mx.cpu if self.type == "cpu" else mx.gpu, self.index)


_outer_devices: list = []  # the default devices that `with device(...)` blocks will restore, innermost last
_meta_default = [False]  # set_default_device("meta"): factories make meta tensors (MLX's own default is kept)


def gpu_available() -> bool:
    return mx.is_available(mx.gpu)


def cuda_available() -> bool:
    """Whether MLX's GPU here is CUDA (an ``mlx[cuda]`` build on Linux): what ``lucid.cuda.is_available()``,
    ``Tensor.cuda()`` and autocast's ``"cuda"`` read."""
    cuda = getattr(mx, "cuda", None)
    return cuda is not None and cuda.is_available()


def require_cuda() -> None:
    """PyTorch's AssertionError ("Torch not compiled with CUDA enabled"), in lucid's words, unless CUDA is here."""
    if not cuda_available():
        raise AssertionError("CUDA is not available: lucid runs on MLX, and this MLX build has no CUDA backend (an "
                             "mlx[cuda] build on Linux has one); check cuda.is_available() first")


def check_device(dev, dtype) -> device:
    """Validate a requested device for a tensor of ``dtype``; returns the device. float64 is accepted on the GPU:
    MLX's GPUs have none, so its ops run on the CPU stream (lucid._cpu_route)."""
    d = device(dev)
    if d.type == "meta":
        return d
    if d.type == "gpu" and not gpu_available():
        if isinstance(dev, str) and dev.startswith("cuda"):
            require_cuda()  # PyTorch's AssertionError, as x.cuda() (a device object no longer knows its spelling)
        raise RuntimeError("device 'gpu' is not available: this MLX build has no GPU backend (use 'cpu')")
    return d


def get_default_device() -> device:
    """The device new tensors are made on (``set_default_device`` changes it)."""
    return device("meta") if _meta_default[0] else array_device()


def array_device() -> device:
    """The device MLX runs ops on (that of every tensor that is not a meta tensor)."""
    return device("cpu" if mx.default_device().type == mx.cpu else "gpu")


def set_default_device(dev) -> None:
    """Set where ops run (MLX's default device), or make factories build meta tensors (``"meta"``)."""
    d = check_device(dev, None)
    _meta_default[0] = d.type == "meta"
    if d.type != "meta":
        mx.set_default_device(d.mx)


def wants_meta(dev) -> builtins.bool:
    """Whether a factory given ``device=dev`` makes a meta tensor (``dev`` None: the default device's)."""
    return _meta_default[0] if dev is None else device(dev).type == "meta"


def from_numpy_dtype(dt) -> mx.Dtype:
    try:
        return _NUMPY_TO_MX[np.dtype(dt)]
    except KeyError:
        raise TypeError(f"can't convert numpy dtype {dt} to a lucid dtype") from None


_MX_TO_NUMPY = {v: k for k, v in _NUMPY_TO_MX.items() if k != np.dtype("complex128")}


def to_numpy_dtype(dt):
    return _MX_TO_NUMPY.get(dt, np.dtype("float32"))


_TO_SIGNATURES = ("\n * (device device = None, dtype dtype = None, bool non_blocking = False, bool copy = False, *, "
                  "memory_format memory_format = None)\n * (dtype dtype, bool non_blocking = False, bool copy = False, "
                  "*, memory_format memory_format = None)\n * (Tensor tensor, bool non_blocking = False, bool copy = "
                  "False, *, memory_format memory_format = None)")
_TO_KEYWORDS = ("device", "dtype", "non_blocking", "copy", "memory_format")


def _is_tensor(a) -> builtins.bool:
    return hasattr(a, "dtype") and hasattr(a, "_storage")


def _type_name(a) -> str:
    return "dtype" if isinstance(a, mx.Dtype) else "Tensor" if _is_tensor(a) else type(a).__name__


def parse_to(args, kwargs) -> tuple:
    """``to``'s arguments, by PyTorch's three overloads: ``(device=None, dtype=None, non_blocking=False,
    copy=False)``, ``(dtype, non_blocking=False, copy=False)``, ``(tensor, non_blocking=False, copy=False)``, each
    with the keyword ``memory_format``. Returns (device, dtype, non_blocking, copy, memory_format), copy None where
    not given (``Module.to`` refuses it given at all). Anything that fits none of them (a dtype given twice, a bool
    where a dtype goes, a list, a name lucid lacks) raises PyTorch's TypeError, before anything is converted."""
    def invalid():
        got = [_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
        return TypeError(f"to() received an invalid combination of arguments - got ({', '.join(got)}), but "
                         f"expected one of:{_TO_SIGNATURES}")

    first = args[0] if args else None
    if not kwargs and len(args) == 1 and isinstance(first, mx.Dtype):  # to(dtype): most calls
        return None, first, False, None, None
    if any(k not in _TO_KEYWORDS for k in kwargs):
        raise invalid()
    if args and (isinstance(first, mx.Dtype) or _is_tensor(first)):  # the dtype or the tensor overload
        names = ("dtype", "non_blocking", "copy")
        if "device" in kwargs or "dtype" in kwargs:
            raise invalid()
    elif first is None or isinstance(first, (str, device, builtins.int)) and not isinstance(first, builtins.bool):
        names = ("device", "dtype", "non_blocking", "copy")
    else:
        raise invalid()
    if len(args) > len(names) or any(k in kwargs for k in names[:len(args)]):
        raise invalid()
    given = {**dict(zip(names, args)), **kwargs}
    dtype, dev = given.get("dtype"), given.get("device")
    if _is_tensor(first):
        dtype, dev = first.dtype, first.device
    if dtype is not None and not isinstance(dtype, mx.Dtype) or any(
            not isinstance(given.get(k, False), builtins.bool) for k in ("non_blocking", "copy")):
        raise invalid()
    return dev, dtype, given.get("non_blocking", False), given.get("copy"), given.get("memory_format")


# ------------------------------------------------------------------------------------------ dtype information
def _is_dtype(d) -> builtins.bool:
    return isinstance(d, mx.Dtype)


class finfo:
    """PyTorch's ``torch.finfo``: the limits of a floating-point dtype (of the real part for complex64; the default
    dtype when none is given)."""

    def __init__(self, type=None):  # noqa: A002  (PyTorch's name)
        d = get_default_dtype() if type is None else type
        if not _is_dtype(d) or not mx.issubdtype(d, mx.inexact):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        d = mx.float32 if d == mx.complex64 else d
        if d == mx.bfloat16:  # numpy has no bfloat16: 8 exponent bits and 7 stored fraction bits
            self.bits, self.eps, self.max, self.tiny, self.resolution = 16, 2.0**-7, (2 - 2.0**-7) * 2.0**127, \
                2.0**-126, 0.01
        else:
            info = np.finfo(to_numpy_dtype(d))
            self.bits, self.eps, self.max = info.bits, builtins.float(info.eps), builtins.float(info.max)
            self.tiny, self.resolution = builtins.float(info.tiny), 10.0 ** -info.precision
        self.min, self.smallest_normal, self.dtype = -self.max, self.tiny, dtype_name(d)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """PyTorch's ``torch.iinfo``: the limits of an integer dtype."""

    def __init__(self, type):  # noqa: A002  (PyTorch's name)
        if _is_dtype(type) and type == mx.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if not _is_dtype(type) or not mx.issubdtype(type, mx.integer):
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(to_numpy_dtype(type))
        self.bits, self.min, self.max, self.dtype = info.bits, builtins.int(info.min), builtins.int(info.max), \
            dtype_name(type)

    def __repr__(self):
        return f"iinfo(min={builtins.float(self.min):g}, max={builtins.float(self.max):g}, dtype={self.dtype})"


def promote_types(type1, type2):
    """The dtype two dtypes promote to: PyTorch's table, where PyTorch has one. Where it refuses (uint16/32/64 mixed
    with other dtypes) this is MLX's promotion, which lucid's ops use; float64 with complex64 is complex64 (MLX has
    no complex128)."""
    return mx.result_type(type1, type2)


def can_cast(from_, to) -> builtins.bool:
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` for an in-place or ``out=`` result: never to a
    lower category (complex > floating > integer > bool)."""
    return _category(from_) <= _category(to)
