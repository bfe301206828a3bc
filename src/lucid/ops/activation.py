"""Activation functions: ``lucid.nn.functional``'s pointwise non-linearities (relu, sigmoid and tanh live in
elementwise). Defaults, subgradients at the kinks and node names follow PyTorch: elu, selu and celu share one
form with PyTorch's (alpha, scale, input_scale) parameters; hardtanh passes no gradient at its bounds
(unlike clamp); relu6 is hardtanh(0, 6). Each VJP is written with lucid ops, so it can be differentiated again.

``inplace=True`` (where PyTorch takes it) writes the result into ``input`` and returns it; the ``name_`` forms
(``elu_``, ``leaky_relu_``, ...) do the same.
"""
from __future__ import annotations

__all__ = ["softplus", "gelu", "silu", "mish", "elu", "selu", "celu", "leaky_relu", "hardtanh", "relu6",
           "hardsigmoid", "hardswish", "logsigmoid", "softsign", "glu", "threshold", "hardshrink", "softshrink",
           "tanhshrink", "prelu", "rrelu", "relu", "relu_", "elu_", "selu_", "celu_", "leaky_relu_", "hardtanh_",
           "threshold_", "rrelu_", "softmax", "log_softmax", "softmin", "gumbel_softmax"]

import functools
import math
import warnings

import mlx.core as mx

from .. import _cpu_route
from .._random import next_key
from .._tensor import Tensor, _wrap
from . import _f64
from ._core import call_with_out, declare, defop
from .elementwise import abs, erf, erfc, exp, gt, le, logical_and, lt, sigmoid, tanh, where
from .elementwise import relu as _relu
from .shape import cat, narrow, wrap_dim
from . import reduce as _reduce
from ..autograd.grad_mode import state as _gm_state  # lucid.autocast's hook (ops/autocast_policy.py)

_exp = _f64.by_dtype(mx.exp, _f64.exp)
_sigmoid = _f64.by_dtype(mx.sigmoid, _f64.sigmoid)
_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_GELU_C = 0.044715
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _maybe_inplace(input: Tensor, inplace: bool, compute, in_place_compute=None, overlap_ok: bool = False) -> Tensor:
    """``compute(input)``, or written into ``input`` when ``inplace`` (by ``in_place_compute`` when given: an op
    whose backward reads the result, as PyTorch's in-place nodes do); ``overlap_ok``: as ``Tensor._inplace``'s."""
    if not inplace:
        return compute(input)
    return input._inplace(in_place_compute or compute, overlap_ok=overlap_ok)


# PyTorch's in-place elu, celu, selu, leaky_relu and rrelu (eval) save their result, not their input (EluBackward1,
# ...), and derive the gradient from its sign, which says the input's only for a non-negative slope
_NEGATIVE_SLOPE = ("In-place {} backward calculation is triggered with a negative slope which is not supported. This "
                   "is caused by calling in-place forward function with a negative slope, please call out-of-place "
                   "version instead.")
_LEAKY_ISSUE = (" File an issue at https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
                "backward calculation with negative slope")


# ---------------------------------------------------------------------------------------------------- smooth
def _softplus_fwd(a, beta, threshold):
    bx = a * beta
    return mx.where(bx > threshold, a, mx.log1p(_exp(bx)) / beta)


# above the threshold softplus is the identity (PyTorch's convention, gradient 1 there)
_softplus = defop("softplus", _softplus_fwd,
                  vjp=lambda g, ans, x, beta, threshold: where(gt(x * beta, threshold), g, g * sigmoid(x * beta)))


def _takes_out(fn):
    """PyTorch's ``out=`` on the activations whose ATen kernels take it (gelu, softplus, logsigmoid, hardshrink,
    softshrink, threshold): the result written into ``out`` (not differentiable, as there)."""
    @functools.wraps(fn)
    def call(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        return call_with_out(fn, args, dict(kwargs, out=out))
    return call


@_takes_out
def softplus(input, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """``log(1 + exp(beta * x)) / beta``, and ``x`` where ``beta * x > threshold``.

    :param beta: the sharpness.
    """
    return _softplus(input, beta, threshold)


def _gelu_fwd(a, approximate, cdf=None):
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (a + _GELU_C * a * a * a)
        return 0.5 * a * (1 + mx.tanh(inner))
    if cdf is not None:  # Phi(x), computed by the caller and kept for the backward
        return a * cdf
    if a.dtype == mx.float64:  # the erfc form keeps its digits for large negative x
        return 0.5 * a * _f64.erfc(-a * _SQRT_HALF)
    return a * 0.5 * (1 + mx.erf(a * _SQRT_HALF))


def _gelu_vjp(g, ans, x, approximate, cdf=None):
    if approximate == "tanh":
        t = tanh(_SQRT_2_OVER_PI * (x + _GELU_C * x * x * x))
        return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _SQRT_2_OVER_PI * (1 + 3 * _GELU_C * x * x))
    # d/dx x Phi(x) = Phi(x) + x phi(x). A first-order backward reuses the forward's Phi (an array, a constant): on
    # the CPU MLX's erf costs about two exps (~40 ns an element), the largest part of a GPT step's backward when it
    # was computed again. Under create_graph Phi is recomputed from x with lucid ops, so higher derivatives stay
    # exact: by erfc in float64 (as the forward), by MLX's one-kernel erf otherwise.
    if cdf is None or _gm_state.grad:
        cdf = 0.5 * erfc(-x * _SQRT_HALF) if x.dtype == mx.float64 else 0.5 * (1 + erf(x * _SQRT_HALF))
    # the Tensor on the left: `mx.array + Tensor` is MLX's __add__, which reads the Tensor through __dlpack__: an
    # evaluation of the forward graph and a copy in the middle of the backward, instead of one evaluation per step
    return g * (x * exp(-0.5 * x * x) * _INV_SQRT_2PI + cdf)


_gelu = defop("gelu", _gelu_fwd, vjp=_gelu_vjp)


@_cpu_route.float64_args
@_takes_out
def gelu(input, approximate: str = "none") -> Tensor:
    """``x * Phi(x)`` with the exact normal CDF; ``approximate="tanh"`` takes the tanh approximation."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    if approximate == "none" and isinstance(input, Tensor) and input._requires_grad and _gm_state.grad:
        a = input._storage.data  # recorded: Phi(x) once, for the forward and (as a constant array) the backward
        if a.dtype == mx.float64:
            cdf = 0.5 * _f64.erfc(-a * _SQRT_HALF)
        elif mx.issubdtype(a.dtype, mx.floating):
            cdf = 0.5 * (1 + mx.erf(a * _SQRT_HALF))
        else:
            return _gelu(input, approximate)
        return _gelu(input, approximate, cdf)
    return _gelu(input, approximate)


def _silu_vjp(g, ans, x):
    s = sigmoid(x)
    return g * s * (1 + x * (1 - s))


_silu = defop("silu", lambda a: a * _sigmoid(a), vjp=_silu_vjp)


def silu(input, inplace: bool = False) -> Tensor:
    """``x * sigmoid(x)`` (swish)."""
    return _maybe_inplace(input, inplace, _silu)


def _stable_softplus(a):
    return mx.maximum(a, 0) + mx.log1p(_exp(-mx.abs(a)))


def _mish_vjp(g, ans, x):
    t = tanh(softplus(x))
    return g * (t + x * sigmoid(x) * (1 - t * t))


_mish = defop("mish", lambda a: a * mx.tanh(_stable_softplus(a)), vjp=_mish_vjp)


def mish(input, inplace: bool = False) -> Tensor:
    """``x * tanh(softplus(x))``."""
    return _maybe_inplace(input, inplace, _mish)


def _logsigmoid_fwd(a):
    return mx.minimum(a, 0) - mx.log1p(_exp(-mx.abs(a)))


_logsigmoid = defop("log_sigmoid", _logsigmoid_fwd, vjp=lambda g, ans, x: g * sigmoid(-x), node="LogSigmoidBackward0")


@_takes_out
def logsigmoid(input) -> Tensor:
    """``log(sigmoid(x))``, stable for large |x|."""
    return _logsigmoid(input)


def softsign(input) -> Tensor:
    """``x / (1 + |x|)`` (a composite, as in PyTorch)."""
    return input / (1 + abs(input))


def tanhshrink(input) -> Tensor:
    """``x - tanh(x)`` (a composite, as in PyTorch)."""
    return input - tanh(input)


# ------------------------------------------------------------------------------------------------- exponential linear
def _elu_fwd(a, alpha, scale, input_scale):
    return mx.where(a > 0, a * scale, mx.expm1(a * input_scale) * (alpha * scale))


def _elu_vjp(g, ans, x, alpha, scale, input_scale):
    return where(gt(x, 0), g * scale, g * (alpha * scale * input_scale) * exp(x * input_scale))


def _elu_result_vjp(g, ans, x, alpha, scale, input_scale):
    if alpha < 0:
        raise RuntimeError(_NEGATIVE_SLOPE.format("elu"))
    return where(gt(ans, 0), g * scale, g * input_scale * (ans + alpha * scale))


_elu = defop("elu", _elu_fwd, vjp=_elu_vjp)  # elu and selu
_celu = defop("celu", _elu_fwd, vjp=_elu_vjp)
_elu_ = defop("elu_", _elu_fwd, vjp=_elu_result_vjp, save="ans", node="EluBackward1")
_celu_ = defop("celu_", _elu_fwd, vjp=_elu_result_vjp, save="ans", node="CeluBackward1")


def elu(input, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise."""
    return _maybe_inplace(input, inplace, lambda x: _elu(x, alpha, 1.0, 1.0), lambda x: _elu_(x, alpha, 1.0, 1.0))


def selu(input, inplace: bool = False) -> Tensor:
    """``scale * elu(x, alpha)`` with the self-normalizing constants."""
    return _maybe_inplace(input, inplace, lambda x: _elu(x, _SELU_ALPHA, _SELU_SCALE, 1.0),
                          lambda x: _elu_(x, _SELU_ALPHA, _SELU_SCALE, 1.0))


def celu(input, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _maybe_inplace(input, inplace, lambda x: _celu(x, alpha, 1.0, 1.0 / alpha),
                          lambda x: _celu_(x, alpha, 1.0, 1.0 / alpha))


# ---------------------------------------------------------------------------------------------------- piecewise linear
def _leaky_relu_fwd(a, slope):
    return mx.where(a > 0, a, a * slope)


def _leaky_relu_vjp(g, ans, x, slope):
    return where(gt(x, 0), g, g * slope)


def _leaky_relu_result_vjp(g, ans, x, slope):
    if slope < 0:
        raise RuntimeError(_NEGATIVE_SLOPE.format("leakyReLu") + _LEAKY_ISSUE)
    return where(gt(ans, 0), g, g * slope)


_leaky_relu = defop("leaky_relu", _leaky_relu_fwd, vjp=_leaky_relu_vjp)
_leaky_relu_ = defop("leaky_relu_", _leaky_relu_fwd, vjp=_leaky_relu_result_vjp, save="ans",
                     node="LeakyReluBackward1")


def leaky_relu(input, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """``x`` for x > 0, ``negative_slope * x`` otherwise."""
    return _maybe_inplace(input, inplace, lambda x: _leaky_relu(x, negative_slope),
                          lambda x: _leaky_relu_(x, negative_slope))


_hardtanh = defop("hardtanh", lambda a, lo, hi: mx.clip(a, lo, hi),
                  vjp=lambda g, ans, x, lo, hi: where(logical_and(gt(x, lo), lt(x, hi)), g, 0.0))


def hardtanh(input, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """``x`` clipped to [min_val, max_val]; the gradient is 0 at and beyond the bounds.

    :param min_val: the lower clip.
    :param max_val: the upper clip.
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _maybe_inplace(input, inplace, lambda x: _hardtanh(x, min_val, max_val))


def relu6(input, inplace: bool = False) -> Tensor:
    """``min(max(0, x), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def relu(input, inplace: bool = False) -> Tensor:
    """``max(0, x)`` (``lucid.relu`` with PyTorch's functional ``inplace`` keyword)."""
    return _maybe_inplace(input, inplace, _relu)


_hardsigmoid = defop("hardsigmoid", lambda a: mx.minimum(mx.maximum(a + 3, 0), 6) / 6,
                     vjp=lambda g, ans, x: where(logical_and(gt(x, -3.0), lt(x, 3.0)), g / 6, 0.0))


def hardsigmoid(input, inplace: bool = False) -> Tensor:
    """``relu6(x + 3) / 6``."""
    return _maybe_inplace(input, inplace, _hardsigmoid)


# PyTorch's subgradients: 0 at -3, 1 at 3
_hardswish = defop("hardswish", lambda a: a * mx.minimum(mx.maximum(a + 3, 0), 6) / 6,
                   vjp=lambda g, ans, x: where(le(x, -3.0), 0.0, where(lt(x, 3.0), g * (x / 3 + 0.5), g)))


def hardswish(input, inplace: bool = False) -> Tensor:
    """``x * relu6(x + 3) / 6``."""
    return _maybe_inplace(input, inplace, _hardswish)


# tested as "at or below" (PyTorch's x <= threshold ? value : x), so that NaN passes through as in PyTorch
_threshold = defop("threshold", lambda a, th, value: mx.where(a <= th, value, a),
                   vjp=lambda g, ans, x, th, value: where(le(x, th), 0.0, g))


@_takes_out
def threshold(input, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``x`` where x > threshold, else ``value``.

    :param value: the value below the threshold.
    """
    return _maybe_inplace(input, inplace, lambda x: _threshold(x, threshold, value), overlap_ok=True)


# zero inside the band, x (and g) elsewhere: tested as "inside", so that NaN, inside no band, propagates as in PyTorch
_hardshrink = defop("hardshrink", lambda a, lambd: mx.where(mx.abs(a) <= lambd, 0, a),
                    vjp=lambda g, ans, x, lambd: where(le(abs(x), lambd), 0.0, g))


@declare(method=True)
@_takes_out
def hardshrink(input, lambd: float = 0.5) -> Tensor:
    """``x`` where |x| > lambd, else 0."""
    return _hardshrink(input, lambd)


_softshrink = defop("softshrink",  # a * 0 inside the band: NaN stays NaN (and -0.5 gives -0.0) as in PyTorch
                    lambda a, lambd: mx.where(a > lambd, a - lambd, mx.where(a < -lambd, a + lambd, a * 0)),
                    vjp=lambda g, ans, x, lambd: where(le(abs(x), lambd), 0.0, g))


@_takes_out
def softshrink(input, lambd: float = 0.5) -> Tensor:
    """``x - lambd`` above lambd, ``x + lambd`` below -lambd, 0 between."""
    if lambd < 0:
        raise RuntimeError(f"lambda must be greater or equal to 0, but found to be {lambd}.")
    return _softshrink(input, lambd)


_prelu = defop("_prelu_kernel", lambda a, w: mx.where(a > 0, a, w * a), node="PreluKernelBackward0",
               vjp=(lambda g, ans, x, w: where(gt(x, 0), g, g * w), lambda g, ans, x, w: where(gt(x, 0), 0.0, g * x)))


@declare(method=True)
def prelu(input, weight) -> Tensor:
    """``x`` for x > 0, ``weight * x`` otherwise; ``weight`` has one element or one per channel (dim 1).

    :param weight: the learnt slopes: one, or one per channel (dim 1).
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("prelu", prelu, input, weight)
    n = weight.numel()
    if n != 1:
        channels = input.shape[1] if input.ndim >= 2 else 1
        if weight.ndim != 1 or n != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{n} and channel size = {channels}.")
        weight = weight.reshape((n,) + (1,) * (input.ndim - 2))
    elif input.ndim == 0:
        weight = weight.reshape(())
    return _prelu(input, weight)


# in training every negative element has its own slope (a raw array: no gradient); in eval mode the mean slope
# applies as in leaky_relu (also its subgradient at 0); PyTorch names both nodes RreluWithNoiseBackward0
_rrelu = defop("rrelu_with_noise", lambda a, slopes: mx.where(a >= 0, a, a * slopes),
               vjp=(lambda g, ans, x, slopes: where(lt(x, 0.0), g * slopes, g),))
_rrelu_eval = defop("rrelu_with_noise", _leaky_relu_fwd, vjp=_leaky_relu_vjp)
_rrelu_eval_ = defop("rrelu_with_noise_", _leaky_relu_fwd, vjp=_leaky_relu_result_vjp, save="ans",
                     node="RreluWithNoiseBackward1")


@_cpu_route.float64_args
def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Leaky relu with a random slope from U(lower, upper) per negative element in training, and the mean slope
    (lower + upper) / 2 otherwise.

    :param lower: the lower bound of the random slope.
    """
    if not training:
        slope = (lower + upper) / 2
        return _maybe_inplace(input, inplace, lambda x: _rrelu_eval(x, slope), lambda x: _rrelu_eval_(x, slope))
    # drawn in float32 (MLX's generator has no float64) and cast
    slopes = mx.random.uniform(lower, upper, tuple(input.shape), key=next_key()).astype(input.dtype)
    return _maybe_inplace(input, inplace, lambda x: _rrelu(x, slopes))


# ---------------------------------------------------------------------------------------------------- gated
def _glu_fwd(a, axis):
    first, second = mx.split(a, 2, axis=axis)
    return first * _sigmoid(second)


def _glu_vjp(g, ans, x, axis):
    n = x.shape[axis] // 2
    a, s = narrow(x, axis, 0, n), sigmoid(narrow(x, axis, n, n))
    return cat([g * s, g * a * s * (1 - s)], axis), None


_glu = defop("glu", _glu_fwd, vjp_all=_glu_vjp)


def glu(input, dim: int = -1) -> Tensor:
    """``a * sigmoid(b)`` where ``a`` and ``b`` are the two halves of ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    return _glu(input, d)


# ---------------------------------------------------------------------------------------------------- in place
def relu_(input) -> Tensor:
    """In-place ``relu``: ``input`` is overwritten with ``max(input, 0)``."""
    return relu(input, inplace=True)


def elu_(input, alpha: float = 1.0) -> Tensor:
    """In-place ``elu``."""
    return elu(input, alpha, inplace=True)


def selu_(input) -> Tensor:
    """In-place ``selu``."""
    return selu(input, inplace=True)


def celu_(input, alpha: float = 1.0) -> Tensor:
    """In-place ``celu``."""
    return celu(input, alpha, inplace=True)


def leaky_relu_(input, negative_slope: float = 0.01) -> Tensor:
    """In-place ``leaky_relu``."""
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place ``hardtanh``.

    :param min_val: the lower clip.
    :param max_val: the upper clip.
    """
    return hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input, threshold: float, value: float) -> Tensor:
    """In-place ``threshold``.

    :param value: the value below the threshold.
    """
    return _maybe_inplace(input, True, lambda x: _threshold(x, threshold, value), overlap_ok=True)


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """In-place ``rrelu``.

    :param lower: the lower bound of the random slope.
    """
    return rrelu(input, lower, upper, training, inplace=True)


# ------------------------------------------------------------------- nn.functional's softmax family (dim optional)
def _softmax_dim(name: str, ndim: int, dim, stacklevel: int) -> int:
    """PyTorch's implicit dimension (with its warning) when ``dim`` is not given: 0 for 0-, 1- and 3-d inputs (an
    unbatched sequence or image), else 1."""
    if dim is not None:
        return dim
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an "
                  "argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``exp(x) / sum(exp(x))`` along ``dim`` (nn.functional's form: without ``dim``, PyTorch's implicit one).

    :param _stacklevel: the warning's stack level when ``dim`` is omitted (PyTorch's private argument).
    """
    return _reduce.softmax(input, _softmax_dim("softmax", input.ndim, dim, _stacklevel), dtype)


def log_softmax(input, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``x - logsumexp(x, dim)`` (nn.functional's form: without ``dim``, PyTorch's implicit one).

    :param _stacklevel: the warning's stack level when ``dim`` is omitted (PyTorch's private argument).
    """
    return _reduce.log_softmax(input, _softmax_dim("log_softmax", input.ndim, dim, _stacklevel), dtype)


def softmin(input, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """``softmax(-x)`` along ``dim`` (without ``dim``, PyTorch's implicit one).

    :param _stacklevel: the warning's stack level when ``dim`` is omitted (PyTorch's private argument).
    """
    return _reduce.softmax(-input, _softmax_dim("softmin", input.ndim, dim, _stacklevel), dtype)


def gumbel_softmax(logits, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax (concrete) distribution: ``softmax((logits + g) / tau)`` with g standard Gumbel
    noise from lucid's generator. ``hard`` returns the one-hot of its argmax in the forward pass with the soft
    sample's gradient (straight-through).

    :param logits: unnormalized log-probabilities.
    :param tau: the temperature (> 0).
    :param hard: return one-hot samples, differentiable through the soft ones (straight-through).
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    # g = -log(E), E ~ Exp(1) = -log1p(-U): float32 draws (MLX samples no float64), cast as rand() does
    u = mx.random.uniform(shape=tuple(logits.shape), key=next_key()).astype(logits.dtype)
    gumbels = _wrap(-mx.log(-mx.log1p(-u)))
    y_soft = _reduce.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.argmax(dim, keepdim=True)
    y_hard = _wrap(mx.zeros(tuple(y_soft.shape), y_soft.dtype)).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft

