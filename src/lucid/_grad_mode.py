"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode. Thread-local, nestable, usable as context
managers and as decorators (with or without parentheses, on plain and generator functions)."""
from __future__ import annotations

import functools
import inspect
import threading
import warnings

from ._threads import adopt_thread


class _State(threading.local):
    grad = True  # record ops on the tape
    inference = False  # tensors made now are inference tensors
    compiling = False  # lucid.compile is tracing in this thread
    mlx_transform_depth = 0  # lucid.func is running user code inside MLX transforms in this thread
    autocast = None  # the lucid.autocast in force in this thread (an object with apply/cast), or None

    def __init__(self):
        adopt_thread()  # every op reads this state, so a new thread is set up before its first op


state = _State()


def is_grad_enabled() -> bool:
    """True if ops record the autograd graph in this thread (False inside ``no_grad``)."""
    return state.grad


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` in this thread."""
    return state.inference


def is_compiling() -> bool:
    """True while lucid.compile traces a function in this thread (optimizers skip their per-step ``mx.eval``
    then)."""
    return state.compiling


class _Mode:
    """Base for the grad-mode switches: subclasses say which state they enter in ``_enter``."""

    def __new__(cls, func=None, *args, **kwargs):
        self = super().__new__(cls)
        if callable(func) and cls is not set_grad_enabled:  # used as @no_grad without parentheses
            self.__init__()
            return self(func)
        return self

    def __enter__(self):
        self._stack = getattr(self, "_stack", [])  # a stack, so one instance can be reused and nested
        self._stack.append((state.grad, state.inference))
        self._enter()

    def __exit__(self, *exc):
        state.grad, state.inference = self._stack.pop()
        return False

    def __call__(self, func):
        if inspect.isclass(func):  # PyTorch: only construction runs in the mode, and it is deprecated
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should only "
                          "decorate functions or methods. To preserve the current behavior of class decoration, you "
                          "can directly decorate the `__init__` method and nothing else.", FutureWarning, stacklevel=2)
            cls = func
            func = lambda *args, **kwargs: cls(*args, **kwargs)  # noqa: E731
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as e:
                            with self.clone():
                                response = gen.throw(e)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as stop:
                    return stop.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()


class no_grad(_Mode):
    """Ops run inside record nothing: results have ``requires_grad=False`` and no ``grad_fn``. A context manager,
    or a decorator (``@no_grad()`` or ``@no_grad``); thread-local, as PyTorch's.

    :param func: when used as ``@no_grad`` without brackets, the decorated function.

    >>> import lucid
    >>> w = lucid.ones(2, requires_grad=True)
    >>> with lucid.no_grad():
    ...     y = w * 2
    >>> y.requires_grad
    False
    """

    def __init__(self, func=None):
        pass

    def _enter(self):
        state.grad = False


class enable_grad(_Mode):
    """Re-enable recording inside ``no_grad`` (a context manager or decorator).

    :param func: when used as ``@enable_grad`` without brackets, the decorated function.

    >>> import lucid
    >>> w = lucid.ones(2, requires_grad=True)
    >>> with lucid.no_grad(), lucid.enable_grad():
    ...     (w * 2).requires_grad
    True
    """

    def __init__(self, func=None):
        pass

    def _enter(self):
        state.grad = True


class set_grad_enabled(_Mode):
    """``set_grad_enabled(mode)`` switches recording on or off at once; as a context manager or decorator it
    restores the previous state afterwards.

    :param mode: True to record, False not to.

    >>> import lucid
    >>> with lucid.set_grad_enabled(False):
    ...     lucid.is_grad_enabled()
    False
    """

    def __init__(self, mode: bool):
        self.mode = mode
        self.prev = state.grad
        state.grad = mode

    def __enter__(self):
        self._stack = getattr(self, "_stack", [])
        self._stack.append((self.prev, state.inference))
        state.grad = self.mode

    def _enter(self):
        state.grad = self.mode

    def __exit__(self, *exc):
        state.grad, state.inference = self._stack.pop()
        return False

    def clone(self):
        prev = state.grad
        c = set_grad_enabled(self.mode)
        state.grad = prev  # cloning (for a decorated call) must not switch the mode now
        c.prev = prev
        return c

    def __call__(self, func):
        state.grad = self.prev  # as a decorator, `set_grad_enabled(False)` must not change the mode at definition
        return super().__call__(func)


class inference_mode(_Mode):
    """Like ``no_grad``, and tensors made inside are inference tensors that may not enter recorded graphs later.
    ``inference_mode(False)`` switches inference mode off and recording on, even inside ``inference_mode()`` or
    ``no_grad()`` (PyTorch's InferenceMode(false) sets grad mode to ``not mode``).

    :param mode: True (the default) for inference mode; False to switch it off inside it.

    >>> import lucid
    >>> with lucid.inference_mode():
    ...     y = lucid.ones(2) * 2
    >>> y.is_inference()
    True
    """

    def __new__(cls, mode=True):
        if callable(mode):  # @inference_mode, or inference_mode(mode=func) as PyTorch allows
            self = super().__new__(cls)
            self.mode = True
            return self(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self.mode = mode

    def _enter(self):
        state.grad = not self.mode
        state.inference = bool(self.mode)

    def clone(self):
        return inference_mode(self.mode)
