"""Helpers shared by the distributions, as ``torch.distributions.utils``: broadcasting parameters, logits <-> probs,
clamping probabilities, lazily computed parameters, and packing lower triangles into vectors."""
from __future__ import annotations

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]

import functools
import math
from numbers import Number

import numpy as np

from .._creation import rand, randn, tensor, zeros
from .._dtype import bfloat16, float16, float32, float64, get_default_dtype, int64
from .._grad_mode import enable_grad
from .._tensor import Size, Tensor
from ..ops.elementwise import log, log1p, sigmoid
from ..ops.reduce import softmax
from ..ops.shape import broadcast_tensors, cat

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant

# eps (the gap above 1) and tiny (the smallest normal number) of each floating dtype, as torch.finfo gives them
_FINFO = {float16: (float(np.finfo(np.float16).eps), float(np.finfo(np.float16).tiny)),
          bfloat16: (2.0 ** -7, 2.0 ** -126),
          float32: (float(np.finfo(np.float32).eps), float(np.finfo(np.float32).tiny)),
          float64: (float(np.finfo(np.float64).eps), float(np.finfo(np.float64).tiny))}


def finfo_eps(dtype) -> float:
    return _FINFO[dtype][0]


def finfo_tiny(dtype) -> float:
    return _FINFO[dtype][1]


def broadcast_all(*values) -> tuple:
    """Broadcast ``values`` (Tensors and Python numbers) against each other. Numbers become tensors of the dtype of
    the first Tensor among ``values`` (the default dtype if there is none)."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        dtype = next((v.dtype for v in values if isinstance(v, Tensor)), get_default_dtype())
        values = tuple(v if isinstance(v, Tensor) else tensor(v, dtype=dtype) for v in values)
    return tuple(broadcast_tensors(*values))


def params_batch_shape(args, first: Tensor):
    """The batch shape of a distribution built from ``args`` (as given) whose broadcast parameters include
    ``first``: () when every argument is a Python number."""
    return Size() if all(isinstance(a, Number) for a in args) else first.shape


def standard_normal(shape, dtype, generator=None) -> Tensor:
    return randn(tuple(shape), dtype=dtype, generator=generator)


def standard_uniform(shape, dtype, generator=None) -> Tensor:
    """Uniform on [0, 1) (MLX draws float32 and lucid casts: float64 samples have float32's resolution)."""
    return rand(tuple(shape), dtype=dtype, generator=generator)


def open_uniform(shape, dtype, generator=None) -> Tensor:
    """Uniform on the open interval (0, 1): [tiny, 1 - eps], for samplers that take the log of u or of 1 - u."""
    eps = finfo_eps(dtype)
    return standard_uniform(shape, dtype, generator).clamp(min=finfo_tiny(dtype), max=1 - eps)


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Logits -> probabilities: the sigmoid of log-odds (``is_binary``) or the softmax over the last dimension."""
    if is_binary:
        return sigmoid(logits)
    return softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamp probabilities into [eps, 1 - eps], eps the dtype's machine epsilon."""
    eps = finfo_eps(probs.dtype)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities -> logits: log-odds (``is_binary``) or log-probabilities."""
    p = clamp_probs(probs)
    if is_binary:
        return log(p) - log1p(-p)
    return log(p)


class lazy_property:
    """A method computed on first access and then stored on the instance (a parameter derived from another:
    ``probs`` from ``logits``). Computed with grad enabled, so the stored value stays connected to the parameter
    it was derived from."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What the class attribute looks like: a lazy_property (for argument validation, which skips parameters
    not computed yet) and a property (for documentation tools)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


@functools.lru_cache(maxsize=None)
def _tril_positions(n: int, diag: int) -> np.ndarray:
    """The flat (row-major) positions in an n x n matrix of the elements on or below diagonal ``diag``."""
    rows, cols = np.tril_indices(n, diag)
    return rows * n + cols


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular elements (on and below diagonal ``diag``) of a (batch of) D x D matrix, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    flat = mat.reshape(tuple(mat.shape[:-2]) + (n * n,))
    return flat.index_select(-1, tensor(_tril_positions(n, diag), dtype=int64))


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of ``tril_matrix_to_vec``: a (batch of) D x D lower-triangular matrix from its elements."""
    m = vec.shape[-1]
    # the positive root of D^2 + (1 + 2 diag) D - |diag| (diag + 1) - 2 m = 0
    n = (-(1 + 2 * diag) + math.sqrt((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1))) / 2
    n = round(n)
    if n < 1 or len(_tril_positions(n, diag)) != m:  # (an exact count: no rounding tolerance to choose)
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    # every matrix position reads from [0, vec...]: position 0 of the padded vector is the zero above the triangle
    source = np.zeros(n * n, dtype=np.int64)
    source[_tril_positions(n, diag)] = np.arange(1, m + 1)
    padded = cat([zeros(tuple(vec.shape[:-1]) + (1,), dtype=vec.dtype), vec], dim=-1)
    flat = padded.index_select(-1, tensor(source, dtype=int64))
    return flat.reshape(tuple(vec.shape[:-1]) + (n, n))
