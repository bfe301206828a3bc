"""A simulated GPU default device for machines whose MLX has none (mlx[cpu]): MLX's GPU refusal of float64, on the CPU.

Every MLX GPU backend refuses float64 when the graph is built: an op placed on a GPU stream with a float64 input or
output raises ``ValueError("float64 is not supported on the GPU")`` (mlx/array.cpp). ``install()`` wraps MLX's
functions (``mlx.core`` and its ``linalg``, ``fft``, ``random``, ``fast`` modules) and the methods of ``mx.array``
so that they raise exactly that while the simulated default device is the GPU, unless the call names a CPU stream;
``mx.default_device``, ``mx.set_default_device`` and ``mx.stream`` report and switch the simulated device (``mx.is_available``
still says there is no GPU: lucid makes no GPU stream).
The arithmetic itself still runs on the CPU: this checks where lucid places float64 work, not GPU kernels.

``LUCID_TEST_DEVICE=simgpu`` runs the suite so (tests/conftest.py installs it before lucid is imported, so that
lucid's own references to MLX functions are the wrapped ones); tests/test_gpu_routing.py uses ``simulated_gpu()``.
"""
from __future__ import annotations

import contextlib
import types

import mlx.core as mx

REFUSAL = "float64 is not supported on the GPU"

# Not graph-building: evaluation, saving, transforms of functions, device and stream management.
_SKIP = {"eval", "async_eval", "compile", "vmap", "grad", "value_and_grad", "jvp", "vjp", "custom_function",
         "checkpoint", "stream", "default_stream", "set_default_stream", "new_stream", "new_thread_unsafe_stream",
         "new_thread_local_stream", "synchronize", "save", "savez", "savez_compressed", "save_safetensors",
         "save_gguf", "load", "export_function", "import_function", "export_to_dot", "exporter", "issubdtype",
         "finfo", "iinfo", "default_device", "set_default_device", "is_available", "device_count", "device_info",
         "seed", "clear_streams"}
# mx.array methods that read values or describe the array rather than build an op on it
_ARRAY_SKIP = {"__init__", "__new__", "__repr__", "__str__", "__len__", "__array__", "__dlpack__",
               "__dlpack_device__", "item", "tolist", "__bool__", "__float__", "__int__", "__index__", "__hash__",
               "__getstate__", "__setstate__", "__copy__", "__deepcopy__", "__getattribute__", "__setattr__",
               "__delattr__", "__init_subclass__", "__reduce__", "__reduce_ex__", "__sizeof__", "__format__",
               "__dir__", "__class__", "__subclasshook__", "__buffer__", "__release_buffer__", "__iter__",
               "__next__", "__array_namespace__", "__complex__"}

_state = types.SimpleNamespace(gpu=False, installed=False)


def _has_f64(x) -> bool:
    if isinstance(x, mx.array):
        return x.dtype == mx.float64
    if isinstance(x, (list, tuple)):
        return any(_has_f64(y) for y in x)
    if isinstance(x, dict):
        return any(_has_f64(v) for v in x.values())
    return False


def _names_cpu(s) -> bool:
    if s is None:
        return False
    if s == mx.cpu:
        return True
    d = getattr(s, "device", s)
    return getattr(d, "type", None) == mx.cpu


def _refuses(args, kwargs, out) -> bool:
    return _state.gpu and not _names_cpu(kwargs.get("stream")) and (
        _has_f64(args) or _has_f64(kwargs) or _has_f64(out))


def _wrap(fn):
    def call(*args, **kwargs):
        out = fn(*args, **kwargs)
        if _refuses(args, kwargs, out):
            raise ValueError(REFUSAL)
        return out

    call.__name__ = getattr(fn, "__name__", "call")
    call.__doc__ = getattr(fn, "__doc__", None)
    return call


_saved: list = []  # (owner, name, original) of what install() replaced


def _replace(owner, name, value) -> None:
    _saved.append((owner, name, owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)))
    setattr(owner, name, value)


def install() -> None:
    """Wrap MLX (transparent while the simulated device is the CPU); ``uninstall`` puts it back."""
    if _state.installed:
        return
    _state.installed = True
    for mod in (mx, mx.linalg, mx.fft, mx.random, mx.fast):
        for name in dir(mod):
            f = getattr(mod, name)
            if name.startswith("_") or name in _SKIP or isinstance(f, (type, types.ModuleType)) or not callable(f):
                continue
            _replace(mod, name, _wrap(f))
    for name in dir(mx.array):
        f = getattr(mx.array, name)
        if name in _ARRAY_SKIP or isinstance(f, property) or not callable(f) or name not in mx.array.__dict__:
            continue
        _replace(mx.array, name, _wrap(f))
    transpose = mx.array.transpose
    _replace(mx.array, "T", property(lambda a: transpose(a)))

    real_default, real_set, real_stream = mx.default_device, mx.set_default_device, mx.stream
    gpu = mx.Device(mx.gpu)

    def default_device():
        return gpu if _state.gpu else real_default()

    def set_default_device(d):
        _state.gpu = getattr(d, "type", d) == mx.gpu
        if not _state.gpu:
            real_set(d)

    @contextlib.contextmanager
    def stream(s):
        before = _state.gpu
        _state.gpu = not _names_cpu(s)
        try:
            with real_stream(s if _names_cpu(s) else mx.cpu):
                yield
        finally:
            _state.gpu = before

    _replace(mx, "default_device", default_device)
    _replace(mx, "set_default_device", set_default_device)
    _replace(mx, "stream", stream)


def uninstall() -> None:
    while _saved:
        owner, name, original = _saved.pop()
        setattr(owner, name, original)
    _state.installed = _state.gpu = False


@contextlib.contextmanager
def simulated_gpu():
    """The simulated GPU as the default device for the ``with`` block; the wrappers installed for the block only,
    unless they were installed before (LUCID_TEST_DEVICE=simgpu)."""
    installed = _state.installed
    install()
    before = _state.gpu
    _state.gpu = True
    try:
        yield
    finally:
        _state.gpu = before
        if not installed:
            uninstall()
