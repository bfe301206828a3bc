"""``weight_norm`` and ``spectral_norm`` in PyTorch's hook form (``torch.nn.utils.weight_norm``/``spectral_norm``):
the parameter ``name`` is replaced by parameters (or buffers) it is recomputed from before every forward, with
PyTorch's names, so state_dicts carry over (``weight_g``/``weight_v``; ``weight_orig``/``weight_u``/``weight_v``).

spectral_norm's state_dict records its format version in the metadata (``state_dict._metadata[prefix]
["spectral_norm"]["weight.version"] = 1``), as PyTorch's does; a state_dict of the format before version 1 (no
``weight_v`` buffer, the normalized weight saved as ``weight``) is converted on loading: ``v`` is solved from
``weight_orig``, ``u`` and the saved weight's scale.
"""
from __future__ import annotations

from ..._creation import randn
from ..._tensor import Tensor
from ..._grad_mode import no_grad
from ...ops.elementwise import sqrt
from ...ops.decomp import pinv
from ...ops.linalg import dot, mv
from ...ops.reduce import norm
from ..parameter import Parameter, is_lazy

__all__ = ["weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:  # noqa: A002
    """The ``pow``-norm of v over every dim but ``dim`` (all of them for dim -1), shaped to broadcast against v."""
    if dim == -1:
        return norm(v, pow)
    d = dim % v.ndim
    others = tuple(i for i in range(v.ndim) if i != d)
    return norm(v, pow, dim=others, keepdim=True) if others else v.abs()


class _WeightNorm:
    def __init__(self, name: str, dim: int):
        self.name, self.dim = name, dim

    def compute_weight(self, module) -> Tensor:
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, 2, self.dim))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int | None = 0):
    """Reparametrise ``module.<name>`` as ``g * v / ||v||`` (norm over every dim but ``dim``; ``dim=None``: the
    whole tensor): parameters ``<name>_g`` (the norms) and ``<name>_v`` (the direction). Returns the module."""
    if dim is None:
        dim = -1
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, _WeightNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
    fn = _WeightNorm(name, dim)
    weight = getattr(module, name)
    if is_lazy(weight):
        raise ValueError("The module passed to `WeightNorm` can't have uninitialized parameters. Make sure to run the "
                         "dummy forward before applying weight normalization")
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, dim).detach()))
    module.register_parameter(name + "_v", Parameter(weight.detach()))
    setattr(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    return module


def _remove(module, name: str, kind, what: str, finish) -> object:
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, kind) and hook.name == name:
            finish(hook)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")


def remove_weight_norm(module, name: str = "weight"):
    """Undo ``weight_norm``: ``<name>`` becomes a plain parameter holding the current weight."""
    def finish(hook):
        weight = hook.compute_weight(module).detach()
        del module._parameters[name + "_g"]
        del module._parameters[name + "_v"]
        module.__dict__.pop(name, None)
        module.register_parameter(name, Parameter(weight))
    return _remove(module, name, _WeightNorm, "weight_norm", finish)


# ---------------------------------------------------------------------------------------------------- spectral norm
_SPECTRAL_NORM_VERSION = 1  # PyTorch's: version 1 saves v as a buffer and no longer the normalized weight


def _normalize(x: Tensor, eps: float) -> Tensor:
    return x / (sqrt((x * x).sum()).clamp(min=eps))


class _SpectralNorm:
    def __init__(self, name: str, n_power_iterations: int, dim: int, eps: float):
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            perm = [self.dim] + [d for d in range(weight.ndim) if d != self.dim]
            weight = weight.permute(*perm)
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration: bool) -> Tensor:
        """weight / sigma, sigma estimated by power iteration on the buffers u and v (updated in training)."""
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        matrix = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                w = matrix.detach()
                for _ in range(self.n_power_iterations):
                    v.copy_(_normalize(mv(w.t(), u), self.eps))
                    u.copy_(_normalize(mv(w, v), self.eps))
        sigma = (u.detach() * mv(matrix, v.detach())).sum()
        return weight / sigma

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    def save_version(self, module, state_dict, prefix: str, local_metadata: dict) -> None:
        """The state_dict hook: record this format's version in the module's metadata."""
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = _SPECTRAL_NORM_VERSION

    def load_old_version(self, module, state_dict, prefix: str, local_metadata: dict, strict: bool,
                         missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        """The load_state_dict pre-hook: a state_dict from before version 1 (``<name>_orig``, ``<name>_u`` and the
        normalized ``<name>``, no ``<name>_v``) gets the ``v`` that makes ``u^T W v`` the saved weight's sigma."""
        version = local_metadata.get("spectral_norm", {}).get(self.name + ".version")
        if version is not None and version >= _SPECTRAL_NORM_VERSION:
            return
        key = prefix + self.name
        if version is None and key not in state_dict and all(key + s in state_dict for s in ("_orig", "_u", "_v")):
            return  # today's format, only the metadata is missing
        absent = [key + s for s in ("_orig", "", "_u") if key + s not in state_dict]
        if absent:
            if strict:
                missing_keys.extend(absent)
            return
        with no_grad():
            weight_orig = state_dict[key + "_orig"]
            sigma = (weight_orig / state_dict.pop(key)).mean()
            matrix = self.reshape_weight_to_matrix(weight_orig)
            u = state_dict[key + "_u"]
            v = mv(pinv(matrix), u)  # the least-squares solution of W v = u, rescaled to give sigma
            state_dict[key + "_v"] = v * (sigma / dot(u, mv(matrix, v)))


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None):
    """Divide ``module.<name>`` by its largest singular value, estimated by ``n_power_iterations`` steps of power
    iteration per training forward (PyTorch's hook form: parameter ``<name>_orig``, buffers ``<name>_u`` and
    ``<name>_v``). ``dim`` defaults to 1 for transposed convolutions, else 0. Returns the module."""
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, _SpectralNorm) and hook.name == name:
            raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
    fn = _SpectralNorm(name, n_power_iterations, dim, eps)
    weight = getattr(module, name)
    if is_lazy(weight):
        raise ValueError("The module passed to `SpectralNorm` can't have uninitialized parameters. Make sure to run "
                         "the dummy forward before applying spectral normalization")
    with no_grad():
        matrix = fn.reshape_weight_to_matrix(weight.detach())
        h, w = matrix.shape
        u = _normalize(randn(h, dtype=weight.dtype), eps)
        v = _normalize(randn(w, dtype=weight.dtype), eps)
    del module._parameters[name]
    module.register_parameter(name + "_orig", Parameter(weight.detach()))
    setattr(module, name, weight.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(fn)
    fn.handles = (module._register_state_dict_hook(fn.save_version),
                  module.register_load_state_dict_pre_hook(fn.load_old_version))
    return module


def remove_spectral_norm(module, name: str = "weight"):
    """Undo ``spectral_norm``: ``<name>`` becomes a plain parameter holding the current normalised weight."""
    def finish(hook):
        weight = hook.compute_weight(module, do_power_iteration=False).detach()
        del module._parameters[name + "_orig"]
        del module._buffers[name + "_u"]
        del module._buffers[name + "_v"]
        for handle in hook.handles:
            handle.remove()
        module.__dict__.pop(name, None)
        module.register_parameter(name, Parameter(weight))
    return _remove(module, name, _SpectralNorm, "spectral_norm", finish)

