"""``lucid.nn.utils.parametrizations`` (PyTorch's ``torch.nn.utils.parametrizations``): ``weight_norm`` and
``spectral_norm`` as parametrizations (``parametrize.register_parametrization``), PyTorch's current form, with its
state_dict keys: ``parametrizations.weight.original0`` (g) and ``original1`` (v) for weight_norm;
``parametrizations.weight.original`` and the power-iteration buffers ``parametrizations.weight.0._u``/``._v`` for
spectral_norm. (The older hook form, ``weight_g``/``weight_orig``, is ``lucid.nn.utils.weight_norm``.) And
``orthogonal``: a matrix (or batch) kept orthogonal (unitary) through the matrix exponential, the Cayley map or
Householder reflectors of an unconstrained one, with PyTorch's maps, defaults and state_dict layout.

The matrix exponential and the Householder product are ``lucid.linalg.matrix_exp`` and
``lucid.linalg.householder_product``; ``use_trivialization=False`` with Householder reflectors assigns through
``geqrf`` (lucid/ops/householder.py)."""
from __future__ import annotations

from enum import Enum

from ... import _creation, linalg
from ..._dtype import finfo
from ..._tensor import Tensor
from ..._grad_mode import no_grad
from ...ops.shape import cat
from ...ops.linalg import mv
from ...ops.norm import normalize
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize
from .weight_norm import norm_except_dim

__all__ = ["weight_norm", "spectral_norm", "orthogonal"]


class _WeightNorm(Module):
    """``weight = g * v / ||v||``, the norm over every dim but ``dim`` (all of them for -1)."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return weight_v * (weight_g / norm_except_dim(weight_v, 2, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Reparametrise ``module.<name>`` as ``g * v / ||v||`` (``dim=None``: one norm for the whole tensor): ``g`` is
    ``module.parametrizations.<name>.original0``, ``v`` is ``original1``. State_dicts of the hook form
    (``<name>_g``/``<name>_v``) still load. Returns the module."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module.register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    """``weight / sigma``, sigma the largest singular value of the weight as a matrix (``dim`` first, the rest
    flattened), estimated by power iteration on the buffers ``_u``, ``_v`` (advanced in training mode only). A
    1-D weight is just normalised."""

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got "
                             f"{dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight.detach())
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)  # start from a reasonable estimate, as PyTorch does

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        with no_grad():
            weight_mat = weight_mat.detach()
            for _ in range(n_power_iterations):
                self._u.copy_(normalize(mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(normalize(mv(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * mv(weight_mat, v)).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Divide ``module.<name>`` by its spectral norm, estimated by ``n_power_iterations`` steps of power iteration
    per training-mode access. ``dim`` defaults to 1 for transposed convolutions, else 0. Returns the module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# ---------------------------------------------------------------------------------------------------- orthogonal
class _OrthMaps(Enum):
    matrix_exp = 1
    cayley = 2
    householder = 3


def _is_orthogonal(Q: Tensor) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * finfo(Q.dtype).eps
    return bool((Q.mH @ Q).allclose(_creation.eye(k, dtype=Q.dtype), atol=eps))


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of A's QR decomposition with R's diagonal made positive (PyTorch's geqrf + householder_product with
    the diagonal's signs: the same unique factor)."""
    Q, R = linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _Orthogonal(Module):
    """The map from an unconstrained matrix to an orthogonal one; with ``use_trivialization`` the result is
    ``base @ map(X)``, ``base`` the orthogonal matrix last assigned (so assigning never needs the map's inverse)."""

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:  # work on the tall form
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:  # embedded in a square matrix
                X = cat([X, _creation.zeros(n, n - k, dtype=X.dtype).expand(*X.shape[:-2], -1, -1)], -1)
            A = X - X.mH  # skew-symmetric (skew-Hermitian)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = linalg.matrix_exp(A)
            else:
                eye = _creation.eye(n, dtype=A.dtype)
                Q = linalg.solve(eye - 0.5 * A, eye + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = linalg.householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if "base" in self._buffers:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            if tuple(Q.shape) != tuple(self.shape):
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of "
                                 f"shape {Q.shape}.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                from ...ops.householder import geqrf  # noqa: PLC0415  (only this path needs the raw reflectors)
                A, tau = geqrf(Q)
                # the reflectors below the diagonal; on it the signs the forward multiplies by (flipped where tau
                # is 0: that column was not reflected)
                signs = A.diagonal(dim1=-2, dim2=-1).sign()
                signs = signs.where(tau != 0, -signs)
                A = A.tril(diagonal=-1) + _diag_embed(signs, A.shape)
                return A.mT if transpose else A
            if n == k:
                Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
            else:  # completed with random columns into a square orthogonal matrix
                N = _creation.randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
                Q = _make_orthogonal(cat([Q, N], -1))
            self.base = Q
            # -Id: the Householder map of X = -Id is the identity, so base @ map(right_inverse(Q)) == Q
            neg_id = _diag_embed(-_creation.ones(*Q_init.shape[:-2], min(Q_init.shape[-2:]), dtype=Q_init.dtype),
                                 Q_init.shape)
            return neg_id


def _diag_embed(d: Tensor, shape) -> Tensor:
    """A zero tensor of ``shape`` with ``d`` on the diagonal of its last two dims."""
    n, k = shape[-2], shape[-1]
    m = min(n, k)
    eye = _creation.eye(n, k, dtype=d.dtype)
    padded = d if m == k else cat([d, _creation.zeros(*d.shape[:-1], k - m, dtype=d.dtype)], -1)
    return eye * padded.unsqueeze(-2)


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Keep ``module.<name>`` orthogonal (unitary, if complex): ``Q^T Q = I`` for a tall matrix, ``Q Q^T = I`` for a
    wide one, per matrix of a batch. ``orthogonal_map``: "matrix_exp" (the default for square or complex
    matrices), "cayley" or "householder" (the default otherwise). Assigning an orthogonal matrix to the weight
    stores it (with ``use_trivialization``, as ``base``)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.shape[-2] == weight.shape[-1] or weight.is_complex()
                          else "householder")
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError(f'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: '
                         f"{orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module

