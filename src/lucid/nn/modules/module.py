"""Module: the base class of every layer, with PyTorch's registration, traversal, state_dict and hook semantics.

Attributes that are Parameters, Modules or buffers live in the ``_parameters``, ``_modules`` and ``_buffers`` dicts
(``__setattr__`` puts them there, ``__getattr__`` finds them), which is what gives ``named_parameters()`` and
``state_dict()`` PyTorch's key names and order. Two deliberate differences from PyTorch:

- ``load_state_dict`` validates every key and shape first and copies only when nothing is wrong, so a failed load
  leaves the module untouched (PyTorch copies what it can before raising). The one exception: with
  ``register_load_state_dict_post_hook`` hooks, which may clear or add missing/unexpected keys, a strict load checks
  the keys after the hooks, hence after the copy, as PyTorch does. Values may be lucid Tensors, numpy
  arrays, or anything ``lucid.tensor`` accepts, so a PyTorch state_dict converted with ``.numpy()`` loads.
- Shapes in error messages print as lists (``[3, 2]``), not as ``torch.Size([3, 2])``.
"""
from __future__ import annotations

import itertools
import sys
import types
import warnings
from collections import OrderedDict, namedtuple
from typing import Any, Callable, Iterator


from ..._tensor import Tensor
from ... import _grad_mode as gm
from ...autograd.graph import RemovableHandle, add_hook
from ..parameter import Buffer, Parameter
from . import _global_hooks as _gh
from ._backward_hooks import _BackwardHookState, _attach_legacy_hooks, _wrap_tensors
from ._conversions import _Conversions
from ._global_hooks import (register_module_backward_hook, register_module_buffer_registration_hook,
                            register_module_forward_hook, register_module_forward_pre_hook,
                            register_module_full_backward_hook, register_module_full_backward_pre_hook,
                            register_module_module_registration_hook, register_module_parameter_registration_hook)

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


def _typename(obj) -> str:
    if isinstance(obj, Tensor):
        return "lucid." + type(obj).__name__
    module = type(obj).__module__
    name = type(obj).__qualname__
    return name if module in (None, "builtins") else module + "." + name


def _addindent(s: str, num_spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line for line in lines)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _registration_hooks(hooks: dict, module, name: str, value):
    """Run the global registration hooks on ``value``; each may return a replacement."""
    for hook in hooks.values():
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def _as_tensor(value) -> Tensor | None:
    """A checkpoint value as a lucid Tensor (lucid Tensor, numpy array, mx.array, PyTorch tensor, nested lists,
    numbers); None when it is not array-like."""
    if isinstance(value, Tensor):
        return value
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a PyTorch tensor (numpy has no bfloat16)
        value = value.detach().cpu()
        value = value.float().numpy() if str(value.dtype) == "torch.bfloat16" else value.numpy()
    if isinstance(value, (str, bytes, dict)) or value is None:
        return None
    from ..._creation import tensor
    try:
        return tensor(value)
    except Exception:  # noqa: BLE001  (anything lucid.tensor refuses is "not tensor-like")
        return None


# ---------------------------------------------------------------------------------------------------- Module
_HOOK_DICTS = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks", "_forward_hooks_with_kwargs",
               "_forward_hooks_always_called", "_backward_hooks", "_backward_pre_hooks", "_state_dict_hooks",
               "_state_dict_pre_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")


class Module(_Conversions):
    """Base class for all neural-network modules (PyTorch's ``torch.nn.Module``).

    Subclasses call ``super().__init__()`` first, assign Parameters, buffers and sub-modules as attributes, and
    define ``forward``; calling the module runs its hooks around ``forward``."""

    _version: int = 1
    training: bool
    # True: Module.__init__ passes its arguments on to the next class in the MRO (for mixins), as in PyTorch
    call_super_init: bool = False

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} "
                            "were given")
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_modules", {})
        setattr_("_is_full_backward_hook", None)  # None until a backward hook picks full or legacy
        for name in _HOOK_DICTS:
            setattr_(name, OrderedDict())
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ------------------------------------------------------------------------------------------------ registration
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (BatchNorm's running_mean); non-persistent buffers stay
        out of ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' (lucid Tensor or None "
                            "required)")
        tensor = _registration_hooks(_gh._global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter", self._parameters)
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' (lucid.nn.Parameter or "
                            "None required)")
        elif param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                             f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                             "the forward() method.")
        else:
            self._parameters[name] = _registration_hooks(_gh._global_parameter_registration_hooks, self, name, param)

    def _check_name(self, name, kind: str, own: dict) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f"{kind} name can't contain \".\"")
        if name == "":
            raise KeyError(f"{kind} name can't be empty string \"\"")
        if hasattr(self, name) and name not in own:
            raise KeyError(f"attribute '{name}' already exists")

    def add_module(self, name: str, module: "Module | None") -> None:
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f"module name can't contain \".\", got: {name}")
        if name == "":
            raise KeyError("module name can't be empty string \"\"")
        self._modules[name] = _registration_hooks(_gh._global_module_registration_hooks, self, name, module)

    register_module = add_module

    def get_submodule(self, target: str) -> "Module":
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target: str) -> Parameter:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            members = d.get(store)
            if members is not None and name in members:
                return members[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, "_parameters")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' (lucid.nn.Parameter or "
                                "None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, "_modules")
            modules[name] = _registration_hooks(_gh._global_module_registration_hooks, self, name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' (lucid.nn.Module or "
                                "None expected)")
            modules[name] = _registration_hooks(_gh._global_module_registration_hooks, self, name, value)
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' (lucid.nn.Buffer, "
                                "lucid.Tensor or None expected)")
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            persistent = value.persistent if isinstance(value, Buffer) else \
                name not in self._non_persistent_buffers_set
            if isinstance(value, Buffer):
                self._forget(name, "_buffers")
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str) -> None:
        """Remove ``name`` from every store but ``keep`` (an attribute changes kind)."""
        d = self.__dict__
        d.pop(name, None)
        for store in ("_parameters", "_buffers", "_modules"):
            if store != keep:
                d[store].pop(name, None)
        if keep != "_buffers":
            self._non_persistent_buffers_set.discard(name)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self):
        keys = list(super().__dir__()) + list(self._parameters) + list(self._modules) + list(self._buffers)
        return sorted(k for k in set(keys) if not k[0].isdigit())

    # ------------------------------------------------------------------------------------------------ traversal
    def _named_members(self, get_members, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        seen = set()  # ids: Tensor.__eq__ is elementwise, so tensors are never compared
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else \
            [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self) -> Iterator["Module"]:
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def modules(self) -> Iterator["Module"]:
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True):
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    # ------------------------------------------------------------------------------------------------ modes, grads
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            g = p._grad
            if g is None:
                continue
            if set_to_none:
                p._grad = None
                continue
            if not isinstance(g, Tensor):  # a sparse gradient (assigned by hand): no entries left
                g.zero_()
                continue
            if g.grad_fn is not None:
                g.detach_()
            else:
                g.requires_grad_(False)
            with gm.no_grad():
                g.zero_()

    # ------------------------------------------------------------------------------------------------ conversion
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> "Module":
        """Convert every parameter and buffer with ``fn``. Parameters keep their identity (their data is
        replaced), so optimizers holding them stay valid; buffers are replaced."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        with gm.no_grad():
            for param in self._parameters.values():
                if param is None:
                    continue
                new = fn(param)
                if new is not param:
                    param.data = new
                g = param._grad
                if g is not None:
                    new_g = fn(g)
                    if new_g is not g:
                        g.data = new_g
            for key, buf in self._buffers.items():
                if buf is not None:
                    self._buffers[key] = fn(buf)
        return self

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ------------------------------------------------------------------------------------------------ state_dict
    def get_extra_state(self) -> Any:
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state: Any) -> None:
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        """An OrderedDict of the persistent state (parameters and buffers, detached unless ``keep_vars``), keyed as
        in PyTorch ("0.weight", "bn.running_mean")."""
        if args:  # the deprecated positional form state_dict(destination, prefix, keep_vars)
            destination, prefix, keep_vars = (list(args) + [destination, prefix, keep_vars][len(args):])[:3]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                if getattr(hook, "_from_public_api", False):
                    raise RuntimeError("state_dict post-hook must return None")
                destination = result  # the private form's result replaces the dict (kept only at the root)
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        """Check this module's own entries of ``state_dict``; layers override it to adapt old checkpoints (and call
        super). The copies are queued in ``local_metadata["pending"]`` and made by ``load_state_dict`` once the
        whole state_dict has been checked."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent_buffers.items())
                       if v is not None}
        pending = local_metadata.setdefault("pending", [])
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            input_param = _as_tensor(value)
            if input_param is None:
                error_msgs.append(f'While copying the parameter named "{key}", expected lucid.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(value)}")
                continue
            if param.ndim == 0 and input_param.ndim == 1 and input_param.shape[0] == 1:
                input_param = input_param.reshape(())
            if tuple(input_param.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {list(input_param.shape)} "
                                  "from checkpoint, the shape in current model is "
                                  f"{list(param.shape)}.")
                continue
            if input_param.is_complex() and not param.is_complex():
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{list(param.shape)} and whose dimensions in the checkpoint are "
                                  f"{list(input_param.shape)}, an exception occurred : ('cannot copy a complex "
                                  f"value into a real tensor',).")
                continue
            if param.is_meta and not input_param.is_meta and not local_metadata.get("assign_to_params_buffers"):
                warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to a meta parameter in "
                              "the current model, which is a no-op. (Did you mean to pass `assign=True` to assign "
                              "items in the state dictionary to their corresponding key in the module instead of "
                              "copying them in place?)", UserWarning, stacklevel=4)
            pending.append((self, name, param, input_param))
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:  # set now, as PyTorch: it may add submodules, whose entries load next
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False) -> _IncompatibleKeys:
        """Copy ``state_dict`` into this module's parameters and buffers (in place: Parameter objects are kept,
        unless ``assign=True``, which makes the checkpoint's tensors the new parameters). Returns
        ``(missing_keys, unexpected_keys)``; with ``strict`` any of those is an error. On any error no parameter or
        buffer is changed (extra states are set as they are read, as in PyTorch)."""
        from collections.abc import Mapping
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs, pending = [], [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        def check(module: Module, local_state_dict, prefix: str = ""):
            local_metadata = dict({} if metadata is None else metadata.get(prefix[:-1], {}))
            local_metadata["pending"] = pending
            local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    check(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                          child_prefix)

        check(self, state_dict)
        check = None  # the recursive closure refers to itself: break that cycle (PyTorch's load_state_dict makes none)
        # post-hooks may clear or add to the key lists, so with any of them the key check waits for them
        hooked = any(m._load_state_dict_post_hooks for m in self.modules())
        self._raise_load_errors(strict and not hooked, missing_keys, unexpected_keys, error_msgs)
        with gm.no_grad():
            for module, name, param, value in pending:
                if assign:
                    if isinstance(param, Parameter) and not isinstance(value, Parameter):
                        value = Parameter(value, requires_grad=param.requires_grad)
                    elif isinstance(param, Parameter):
                        value.requires_grad_(param.requires_grad)
                    setattr(module, name, value)
                else:
                    param.copy_(value)
        # As in PyTorch, each module's post-hooks run after its children's, on the live key lists, and decide
        # whether a strict load fails; they see the loaded module, so such a failure comes after the copy
        def post_hooks(module: Module) -> None:
            for child in module._modules.values():
                if child is not None:
                    post_hooks(child)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, _IncompatibleKeys(missing_keys, unexpected_keys)) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be modified, "
                                         "it should be done inplace.")

        if hooked:
            post_hooks(self)
            self._raise_load_errors(strict, missing_keys, unexpected_keys, error_msgs)
        post_hooks = None  # (as check)
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    def _raise_load_errors(self, strict: bool, missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))

    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` before the module saves its state."""
        return add_hook(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata) -> None`` after; it may edit ``state_dict`` in place."""
        hook._from_public_api = True  # (PyTorch's mark: such a hook may not return a new dict)
        return add_hook(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook) -> RemovableHandle:
        """PyTorch's older form, whose hook may return a new dict (honoured for the module state_dict is called on)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was previously "
                               "registered via register_state_dict_post_hook")
        return add_hook(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)``
        before the module checks its entries; it may edit ``state_dict`` (a copy) in place."""
        return add_hook(self._load_state_dict_pre_hooks, hook)

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False) -> RemovableHandle:
        """PyTorch's older form: ``hook`` without the module argument unless ``with_module``."""
        return self.register_load_state_dict_pre_hook(hook if with_module else lambda module, *args: hook(*args))

    def __setstate__(self, state) -> None:
        """Unpickling: a module saved without some hook dict (older PyTorch, or deleted) gets it back empty."""
        self.__dict__.update(state)
        for name in _HOOK_DICTS:
            self.__dict__.setdefault(name, OrderedDict())

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` after the values are loaded; it may add to (or clear) the key lists
        in place, which decides whether a strict load raises."""
        return add_hook(self._load_state_dict_post_hooks, hook)

    # ------------------------------------------------------------------------------------------------ hooks, call
    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args) -> None | new args`` (or ``hook(module, args, kwargs) -> None | (args, kwargs)``
        with ``with_kwargs``) before ``forward``."""
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle._key] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle._key, last=False)
        return handle

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output) -> None | new output`` (``hook(module, args, kwargs, output)`` with
        ``with_kwargs``) after ``forward``; ``always_call`` runs it even when ``forward`` raises."""
        handle = RemovableHandle(self._forward_hooks, extra_dict=[self._forward_hooks_with_kwargs,
                                                                  self._forward_hooks_always_called])
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle._key] = True
        if always_call:
            self._forward_hooks_always_called[handle._key] = True
        if prepend:
            self._forward_hooks.move_to_end(handle._key, last=False)
        return handle

    def _pick_backward_kind(self, full: bool) -> None:
        if self.__dict__.get("_is_full_backward_hook") is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", full)

    def register_backward_hook(self, hook) -> RemovableHandle:
        """Deprecated, as in PyTorch, in favour of ``register_full_backward_hook``: ``hook(module, grad_input,
        grad_output) -> None | new grad_input`` is a hook on the autograd node that made the module's (first)
        output, so it sees that node's gradients only (with a warning where they are not the module's)."""
        self._pick_backward_kind(full=False)
        return add_hook(self._backward_hooks, hook)

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output) -> None | new grad_input`` once the gradients with respect to
        the module's tensor inputs are computed (grad_input holds None for inputs that need no gradient)."""
        self._pick_backward_kind(full=True)
        handle = add_hook(self._backward_hooks, hook)
        if prepend:
            self._backward_hooks.move_to_end(handle._key, last=False)
        return handle

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output) -> None | new grad_output`` when the gradients of the module's outputs are
        known, before the gradients of its inputs are computed."""
        handle = add_hook(self._backward_pre_hooks, hook)
        if prepend:
            self._backward_pre_hooks.move_to_end(handle._key, last=False)
        return handle

    def __call__(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
                or _gh.state.active):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _backward_hook_lists(self) -> tuple[list, list, list]:
        """(full backward hooks, legacy backward hooks, backward pre-hooks), the global ones first."""
        full, legacy = [], []
        for kind, hooks in ((_gh.state.is_full_backward_hook, _gh._global_backward_hooks),
                            (self.__dict__.get("_is_full_backward_hook"), self._backward_hooks)):
            if kind is not None:
                (full if kind else legacy).extend(hooks.values())
        return full, legacy, [*_gh._global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        full, legacy, pre = self._backward_hook_lists()
        forward_hooks = [*_gh._global_forward_hooks.items(), *self._forward_hooks.items()]
        with_kwargs = (self._forward_hooks_with_kwargs, _gh._global_forward_hooks_with_kwargs)
        called = set()
        try:  # a forward pre-hook that raises also gets the always_call forward hooks run, as in PyTorch
            for key, hook in [*_gh._global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()]:
                if key in self._forward_pre_hooks_with_kwargs:
                    result = hook(self, args, kwargs)
                    if result is not None:
                        if not (isinstance(result, tuple) and len(result) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                               f"new_kwargs), but got {result}.")
                        args, kwargs = result
                else:
                    result = hook(self, args)
                    if result is not None:
                        args = result if isinstance(result, tuple) else (result,)
            state = None
            if (full or pre) and gm.state.grad:
                state = _BackwardHookState(self, full, pre)
                args = _wrap_tensors(args, state, "input")
            output = self.forward(*args, **kwargs)
            for key, hook in forward_hooks:
                called.add(key)
                if key in with_kwargs[0] or key in with_kwargs[1]:
                    result = hook(self, args, kwargs, output)
                else:
                    result = hook(self, args, output)
                if result is not None:
                    output = result
        except Exception:
            for key, hook in forward_hooks:
                if key in called or not (key in self._forward_hooks_always_called
                                         or key in _gh._global_forward_hooks_always_called):
                    continue
                try:
                    if key in with_kwargs[0] or key in with_kwargs[1]:
                        hook(self, args, kwargs, None)
                    else:
                        hook(self, args, None)
                except Exception:  # noqa: BLE001  (PyTorch warns and re-raises the forward's error)
                    pass
            raise
        if state is not None:
            output = _wrap_tensors(output, state, "output")
        if legacy:
            _attach_legacy_hooks(self, legacy, args, output)
        return output

    # ------------------------------------------------------------------------------------------------ repr
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text between the parentheses of this module's repr (layers override it)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


# (defined here, not in _global_hooks: the API reference's inspector reads a module's class's functions as
# members of the module their code lives in)
class _ModuleWithHookDicts(types.ModuleType):
    """The class of ``lucid.nn.modules.module``, where PyTorch keeps these dicts as module attributes: code that
    reads them there sees these, and code that resets them by assigning a fresh dict (PyTorch's own hook tests do,
    in tearDown) refills these instead, so the registered hooks and ``state.active`` stay one set."""

    def __getattr__(self, name):
        if name in _gh._DICTS:
            return getattr(_gh, name)
        if name == "_global_is_full_backward_hook":
            return _gh.state.is_full_backward_hook
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name in _gh._DICTS:
            hooks = getattr(_gh, name)
            hooks.clear()
            hooks.update(value)
        elif name == "_global_is_full_backward_hook":
            _gh.state.is_full_backward_hook = value
        else:
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _ModuleWithHookDicts  # PyTorch's spelling: nn.modules.module._global_forward_hooks, read or reset


__all__ = ["register_module_forward_pre_hook", "register_module_forward_hook", "register_module_full_backward_pre_hook",
           "register_module_backward_hook", "register_module_full_backward_hook",
           "register_module_buffer_registration_hook", "register_module_module_registration_hook",
           "register_module_parameter_registration_hook", "Module"]
