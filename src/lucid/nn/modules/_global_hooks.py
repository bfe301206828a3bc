"""Hooks common to every Module (PyTorch's ``torch.nn.modules.module.register_module_*``), re-exported by
``lucid.nn.modules.module``.

The call hooks (forward pre/post, backward pre/post) are kept in dicts that maintain ``state.active``: whether any
of them holds a hook. ``Module.__call__`` reads that one attribute, so when no global hook is registered (the usual
case) the global hooks cost one attribute load per call, whatever the number of dicts.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Callable

from ...autograd.graph import RemovableHandle, add_hook


class _State:
    __slots__ = ("active", "is_full_backward_hook")

    def __init__(self):
        self.active = False
        # like PyTorch's _global_is_full_backward_hook: None until a global backward hook picks a kind
        self.is_full_backward_hook = None


state = _State()


class _CallHooks(OrderedDict):
    """A global call-hook dict: every change (including RemovableHandle.remove's ``pop``) refreshes ``state.active``."""

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        _refresh()

    def __delitem__(self, key):
        super().__delitem__(key)
        _refresh()

    def pop(self, *args):
        try:
            return super().pop(*args)
        finally:
            _refresh()

    def popitem(self, last: bool = True):
        try:
            return super().popitem(last)
        finally:
            _refresh()

    def clear(self):
        super().clear()
        _refresh()


_global_forward_pre_hooks: dict[int, Callable] = _CallHooks()
_global_forward_hooks: dict[int, Callable] = _CallHooks()
_global_forward_hooks_with_kwargs: dict[int, bool] = OrderedDict()
_global_forward_hooks_always_called: dict[int, bool] = OrderedDict()
_global_backward_pre_hooks: dict[int, Callable] = _CallHooks()
_global_backward_hooks: dict[int, Callable] = _CallHooks()
_global_buffer_registration_hooks: dict[int, Callable] = OrderedDict()
_global_module_registration_hooks: dict[int, Callable] = OrderedDict()
_global_parameter_registration_hooks: dict[int, Callable] = OrderedDict()


def _refresh() -> None:
    state.active = bool(_global_forward_pre_hooks or _global_forward_hooks or _global_backward_pre_hooks
                        or _global_backward_hooks)


def register_module_buffer_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, buffer) -> None | new buffer``, run by every ``register_buffer`` (and buffer
    assignment) of every module."""
    return add_hook(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, submodule) -> None | new submodule``, run whenever any module registers a child."""
    return add_hook(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, param) -> None | new param``, run by every ``register_parameter`` of every module."""
    return add_hook(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """``hook(module, args) -> None | new args`` before every module's ``forward``, before the module's own
    pre-hooks."""
    return add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs: bool = False, always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output) -> None | new output`` after every module's ``forward``, before the module's own
    forward hooks (``with_kwargs`` and ``always_call`` as in ``Module.register_forward_hook``)."""
    handle = RemovableHandle(_global_forward_hooks, extra_dict=[_global_forward_hooks_with_kwargs,
                                                                _global_forward_hooks_always_called])
    _global_forward_hooks[handle.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def _register_backward(hook, full: bool) -> RemovableHandle:
    if state.is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    state.is_full_backward_hook = full
    return add_hook(_global_backward_hooks, hook)


def register_module_backward_hook(hook) -> RemovableHandle:
    """Deprecated (as in PyTorch) in favour of ``register_module_full_backward_hook``: ``hook(module, grad_input,
    grad_output)`` on the autograd node that made each module's output (see ``Module.register_backward_hook``)."""
    return _register_backward(hook, full=False)


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """``hook(module, grad_output) -> None | new grad_output`` for every module, before its own pre-hooks."""
    return add_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """``hook(module, grad_input, grad_output) -> None | new grad_input`` for every module, before its own hooks."""
    return _register_backward(hook, full=True)


_DICTS = ("_global_forward_pre_hooks", "_global_forward_hooks", "_global_forward_hooks_with_kwargs",
          "_global_forward_hooks_always_called", "_global_backward_pre_hooks", "_global_backward_hooks",
          "_global_buffer_registration_hooks", "_global_module_registration_hooks",
          "_global_parameter_registration_hooks")


__all__ = ["register_module_buffer_registration_hook", "register_module_module_registration_hook",
           "register_module_parameter_registration_hook", "register_module_forward_pre_hook",
           "register_module_forward_hook", "register_module_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook"]
