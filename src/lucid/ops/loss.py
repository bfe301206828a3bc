"""Loss functions (``lucid.nn.functional``): PyTorch's arguments, defaults, reductions, formulas and errors.

Every loss is composed of lucid ops, so gradients of every order and float64 come from those ops; nll_loss is one
op itself (its VJP a constant times g), and cross_entropy is log_softmax then nll_loss, PyTorch's two nodes.
Class-index targets never leave the device: ``ignore_index`` is a mask, the picked log-probabilities are read at the
masked targets, and weighted means divide by a sum of weights (never a count read back to Python). Out-of-range
targets raise PyTorch's "Target 5 is out of bounds." at once when their values are known, else at the next
evaluation (lucid._checks); binary_cross_entropy checks that its probabilities are in [0, 1], evaluating them at
the call.

``reduction`` is 'mean' (the default), 'sum' or 'none'; the deprecated ``size_average`` and ``reduce`` still
override it, with PyTorch's warning. Rules that differ from a plain mean, as in PyTorch:
  - nll_loss / cross_entropy with class indices: the mean is the sum over the non-ignored targets divided by the
    sum of their class weights (the count of them without ``weight``); all ignored gives NaN.
  - cross_entropy with class probabilities divides by the number of samples (N * d1 * ...), whatever the weights.
  - kl_div: 'mean' divides by every element (with PyTorch's warning); 'batchmean' by the batch size.
  - mse_loss / l1_loss with ``weight``: sum(weight * err) / sum(weight); huber_loss with ``weight``: the plain mean.
"""
from __future__ import annotations

__all__ = ["nll_loss", "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss",
           "gaussian_nll_loss", "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss",
           "soft_margin_loss", "hinge_embedding_loss", "multilabel_soft_margin_loss", "ctc_loss"]

import math
import warnings

import mlx.core as mx
import numpy as np

from .. import _cpu_route, _sums
from .._checks import check_later, checked_index, checked_index_seen, is_known
from .._pending import _tracing
from .._threads import to_numpy
from .._tensor import Tensor, _wrap
from ._core import data, defop
from .activation import logsigmoid
from .elementwise import abs, eq, exp, gt, isinf, log, log1p, lt, maximum, minimum, ne, sqrt, square, where, xlogy
from .index import _scalar_name, gather, take
from .nn_basic import pairwise_distance
from .reduce import log_softmax
from .shape import cat
from ..autograd.grad_mode import state as _gm_state  # lucid.autocast's hook (ops/autocast_policy.py)

_REDUCTIONS = ("none", "mean", "sum")


# ---------------------------------------------------------------------------------------------------- reduction
def _legacy_reduction(size_average, reduce) -> str:
    """PyTorch's _Reduction.legacy_get_string: the deprecated (size_average, reduce) pair as a reduction."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  stacklevel=4)
    return ret


def _reduction(size_average, reduce, reduction: str, extra: tuple = ()) -> str:
    """The reduction in force, checked (``extra`` names more valid values, as kl_div's 'batchmean')."""
    if size_average is not None or reduce is not None:
        return _legacy_reduction(size_average, reduce)
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=3)
        return "mean"
    if reduction not in _REDUCTIONS and reduction not in extra:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def _weighted_mean_reduce(loss: Tensor, weight: Tensor, reduction: str) -> Tensor:
    """mse_loss / l1_loss with ``weight``: the mean is sum(loss) / sum(weight)."""
    if reduction == "mean":
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


def _warn_size(input, target) -> None:
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


def _check_weight_size(weight, input) -> None:
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")


# ---------------------------------------------------------------------------------------------------- class indices
def _class_dim(input) -> int:
    return 0 if input.ndim == 1 else 1


def _check_class_targets(input, target, weight) -> None:
    """PyTorch's nll_loss_nd checks on (N, C, d1, ...) / (C,) input and (N, d1, ...) / () integer target."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and input.shape[0] != (target.shape[0] if target.ndim else 0):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0] if target.ndim else 0}).")
    classes = input.shape[_class_dim(input)]
    bad_weight = weight is not None and (weight.ndim != 1 or weight.shape[0] != classes)
    if input.ndim <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if input.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")
        _check_index_dtype(target)
        if bad_weight:
            raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but "
                               f"got weight tensor of shape: {list(weight.shape)}")
        return
    if input.ndim == 4 and target.ndim != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target.ndim}")
    if input.ndim == 4 and tuple(target.shape) != tuple(input.shape[:1] + input.shape[2:]):
        raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
    if tuple(target.shape[1:]) != tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {[input.shape[0]] + list(input.shape[2:])}, got "
                           f"{list(target.shape)}")
    _check_index_dtype(target)
    if bad_weight:
        raise RuntimeError("weight tensor should be defined either for all or no classes")


def _check_index_dtype(target) -> None:
    if target.dtype not in (mx.int64, mx.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_scalar_name(target.dtype)}")


def _class_reduce(loss: Tensor, w, reduction: str) -> Tensor:
    """PyTorch's reductions of class-index losses: the mean divides by the total weight of the kept targets."""
    if reduction == "mean":
        return loss.sum() / w.sum()
    return _reduce(loss, reduction)


# nll_loss as one op (PyTorch's NllLossBackward0): a fused forward, and a VJP that is a constant (-the target's weight
# at each target's class, 0 elsewhere) times g, so it is linear in g and made of one lucid op (second derivatives:
# zero in the log-probabilities, as the loss is linear in them).
@_cpu_route.float64_args
def _nll_terms(logp: mx.array, target: mx.array, weight, ignore_index: int):
    """(class dim, safe targets, mask of kept targets, weight of each target: 0 where ignored), all arrays."""
    cd = _class_dim(logp)
    t = target
    if t.ndim == logp.ndim:  # a (1,) target with a (C,) input: one sample, a 0-d result as in PyTorch
        t = t.reshape(())
    t = t.astype(mx.int64)  # a uint8 target compared with ignore_index = -100 must not wrap around
    keep = t != ignore_index
    safe = mx.where(keep, t, 0)  # ignored targets read class 0, and are masked out
    if weight is None:
        w = keep.astype(logp.dtype)
    else:
        w = mx.where(keep, mx.take(weight, safe).astype(logp.dtype), 0)
    return cd, safe, keep, w


def _nll_fwd(logp, weight, safe, keep, w, total_w, cd, reduction):
    """``safe``, ``keep``, ``w``: the targets, their mask and weights from ``_nll_terms``, and ``total_w`` their sum
    for the mean (computed once, shared with the VJP); ``weight`` is an argument only so that asking for its
    derivative is an error, as in PyTorch. ``keep`` and ``w`` None: every target counts, with weight 1 (the
    targets' values were read and none is ignored), and ``total_w`` is their number, a Python float."""
    picked = mx.squeeze(mx.take_along_axis(logp, mx.expand_dims(safe, cd), cd), cd)
    if keep is None:
        loss = -picked
    else:
        loss = mx.where(keep, -picked * w, 0.0)  # (a Python 0.0 takes logp's dtype, for one MLX call less)
    if reduction == "none":
        return loss
    total = _sums.sum(loss)
    return total / total_w if reduction == "mean" else total


def _nll_vjp(g, ans, input, weight, safe, keep, w, total_w, cd, reduction):
    logp = data(input)
    classes = mx.arange(logp.shape[cd])
    if cd != logp.ndim - 1:  # (N, C, d1, ...): the classes along dim 1
        classes = classes.reshape((-1,) + (1,) * (logp.ndim - cd - 1))
    picked = classes == mx.expand_dims(safe, cd)
    if reduction == "none":  # g is a Tensor, or an MLX array in the raw backward (engine.py)
        g = g.unsqueeze(cd) if isinstance(g, Tensor) else mx.expand_dims(g, cd)
    if w is None:  # every target kept, weight 1: -g (over their number for the mean) at each target's class
        return where(picked, g * (-1.0 / total_w if reduction == "mean" else -1.0), 0.0)
    if reduction == "mean":
        w = w / total_w
    return g * mx.where(picked, -mx.expand_dims(w, cd), 0.0)  # 0.0: logp's dtype


_nll_ops = {nd: defop("nll_loss", _nll_fwd, vjp=(_nll_vjp, None), node=node, raw=True)
            for nd, node in (("", "NllLossBackward0"), ("2d", "NllLoss2DBackward0"))}


def _checked_targets(input, target, ignore_index: int, op: str) -> mx.array:
    """The class-index targets, checked to lie in [0, C) unless equal to ``ignore_index`` (lucid._checks)."""
    classes = input.shape[_class_dim(input)]
    return checked_index(data(target), classes, lambda v: IndexError(f"Target {v} is out of bounds."), op,
                         ignore=ignore_index)


def _checked_targets_seen(input, target, ignore_index: int, op: str) -> tuple:
    """``(_checked_targets(...), all kept)``: all kept when the targets' values were read, all lie in [0, C), and
    ``ignore_index`` is not a class (so no target is ignored: ``_nll`` needs no mask and no weights)."""
    classes = input.shape[_class_dim(input)]
    t, seen = checked_index_seen(data(target), classes, lambda v: IndexError(f"Target {v} is out of bounds."), op,
                                 ignore=ignore_index)
    return t, seen and not 0 <= ignore_index < classes


@_cpu_route.float64_args
def _nll(logp, target, weight, ignore_index: int, reduction: str, all_kept: bool = False) -> Tensor:
    if all_kept and weight is None:  # no mask and no weights: 5 MLX calls fewer in the forward, 3 in the backward
        la = data(logp)
        cd = _class_dim(la)
        t = target.reshape(()) if target.ndim == la.ndim else target  # (C,) input, (1,) target: a 0-d result
        safe, keep, w = t.astype(mx.int64), None, None
        total_w = float(t.size) if reduction == "mean" else None
        return _nll_ops["2d" if la.ndim == 4 else ""](logp, weight, safe=safe, keep=keep, w=w, total_w=total_w,
                                                        cd=cd, reduction=reduction)
    cd, safe, keep, w = _nll_terms(data(logp), target, data(weight), ignore_index)
    total_w = _sums.sum(w) if reduction == "mean" else None
    # the two tensors positional, the rest as keywords: the op's fast path for two arguments records it
    return _nll_ops["2d" if logp.ndim == 4 else ""](logp, weight, safe=safe, keep=keep, w=w, total_w=total_w, cd=cd,
                                                      reduction=reduction)


def nll_loss(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class-index targets: ``-weight[t] * input[n, t]`` for log-probabilities
    ``input`` (N, C), (N, C, d1, ...) or unbatched (C,) and int64 ``target`` (N), (N, d1, ...) or ().
    Targets equal to ``ignore_index`` add nothing, to the loss or to the mean's denominator.

    :param weight: a rescaling weight per class, (C,), or None.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("nll_loss", nll_loss, input, target, weight, size_average, ignore_index, reduce,
                                       reduction)
    reduction = _reduction(size_average, reduce, reduction)
    _check_class_targets(input, target, weight)
    target, kept = _checked_targets_seen(input, target, ignore_index, "nll_loss")
    return _nll(input, target, weight, ignore_index, reduction, kept)


def _weight_along(weight, logp):
    """The (C,) class weights shaped to broadcast along the class dim of ``logp``."""
    if logp.ndim <= 1:
        return weight
    return weight.reshape((1, weight.shape[0]) + (1,) * (logp.ndim - 2))


def _check_smoothing(label_smoothing: float) -> None:
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")


def _cross_entropy_probs(input, target, weight, reduction: str, label_smoothing: float) -> Tensor:
    """Class-probability targets: ``-sum_c weight[c] * target[c] * log_softmax(input)[c]``; the mean divides by
    the number of samples."""
    cd = _class_dim(input)
    classes = input.shape[cd]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {classes} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    logp = log_softmax(input, cd)
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / classes
    terms = logp * target
    if weight is not None:
        terms = terms * _weight_along(weight, logp)
    if reduction == "none":
        return -terms.sum(cd)
    total = -terms.sum()
    if reduction == "sum":
        return total
    return total / (input.numel() // classes) if input.numel() else total * math.nan


def cross_entropy(input, target, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy between logits ``input`` (N, C), (N, C, d1, ...) or (C,) and either class indices (int64
    ``target`` of the input's shape without the class dim) or class probabilities (a float ``target`` of the input's
    shape). ``label_smoothing`` mixes the target with the uniform distribution: ``(1 - s) * nll + s * mean over
    classes of -log_softmax`` for indices, ``target * (1 - s) + s / C`` for probabilities.

    :param weight: a rescaling weight per class, (C,), or None.
    :param label_smoothing: in [0, 1]: the target mixed with the uniform distribution.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("cross_entropy", cross_entropy, input, target, weight, size_average,
                                       ignore_index, reduce, reduction, label_smoothing)
    reduction = _reduction(size_average, reduce, reduction)
    _check_smoothing(label_smoothing)  # PyTorch's first check, before the shapes'
    if tuple(input.shape) == tuple(target.shape):
        if not mx.issubdtype(target.dtype, mx.floating):
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{_scalar_name(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    _check_class_targets(input, target, weight)
    target, kept = _checked_targets_seen(input, target, ignore_index, "cross_entropy")
    cd = _class_dim(input)
    logp = log_softmax(input, cd)
    nll = _nll(logp, target, weight, ignore_index, reduction, kept)
    if label_smoothing <= 0.0:
        return nll
    _, _, keep, w = _nll_terms(data(logp), target, data(weight), ignore_index)
    w = _wrap(w)
    # the uniform part: -sum_c weight[c] * logp[c] per target, 0 where ignored, normalized as the nll part
    smooth = -(logp if weight is None else logp * _weight_along(weight, logp)).sum(cd)
    smooth = _class_reduce(where(keep, smooth, 0.0), w, reduction)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / input.shape[cd])


# ---------------------------------------------------------------------------------------------------- regression
def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None) -> Tensor:
    """``(input - target) ** 2`` (times ``weight``, of the input's size), reduced; the target broadcasts, with
    PyTorch's warning when its size differs.

    :param weight: a rescaling weight broadcast against the elementwise losses, or None.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("mse_loss", mse_loss, input, target, size_average, reduce, reduction, weight)
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    loss = square(input - target)
    if weight is None:
        return _reduce(loss, reduction)
    _check_weight_size(weight, input)
    return _weighted_mean_reduce(loss * weight, weight, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean", weight=None) -> Tensor:
    """``|input - target|`` (times ``weight``, of the input's size), reduced.

    :param weight: a rescaling weight broadcast against the elementwise losses, or None.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("l1_loss", l1_loss, input, target, size_average, reduce, reduction, weight)
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    loss = abs(input - target)
    if weight is None:
        return _reduce(loss, reduction)
    _check_weight_size(weight, input)
    return _weighted_mean_reduce(loss * weight, weight, reduction)


def _quadratic_then_linear(diff: Tensor, width: float, slope: float) -> Tensor:
    """``0.5 * slope * d**2 / width`` for ``|d| < width``, else ``slope * (|d| - 0.5 * width)``: smooth_l1
    (slope 1, width beta) and huber (slope delta, width delta)."""
    z = abs(diff)
    return where(lt(z, width), square(diff) * (0.5 * slope / width), (z - 0.5 * width) * slope)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """``0.5 * d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 * beta`` (``d = input - target``);
    ``beta = 0`` is l1_loss.

    :param beta: where the loss turns from quadratic to linear (0 gives L1).
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("smooth_l1_loss", smooth_l1_loss, input, target, size_average, reduce, reduction,
                                       beta)
    _warn_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    diff = input - target
    return _reduce(abs(diff) if beta == 0 else _quadratic_then_linear(diff, beta, 1.0), reduction)


def huber_loss(input, target, reduction: str = "mean", delta: float = 1.0, weight=None) -> Tensor:
    """``0.5 * d**2`` where ``|d| < delta``, else ``delta * (|d| - 0.5 * delta)``; with ``weight`` (of the input's
    size) the weighted losses are reduced as they are (the mean divides by their count).

    :param delta: where the loss turns from quadratic to linear.
    :param weight: a rescaling weight broadcast against the elementwise losses, or None.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("huber_loss", huber_loss, input, target, reduction, delta, weight)
    _warn_size(input, target)
    reduction = _reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    loss = _quadratic_then_linear(input - target, delta, delta)
    if weight is not None:
        _check_weight_size(weight, input)
        loss = loss * weight
    return _reduce(loss, reduction)


# ---------------------------------------------------------------------------------------------------- probabilistic
# binary_cross_entropy as PyTorch computes it: each log clamped to >= -100 (p = 0 or 1 gives a finite loss), and a
# gradient (p - t) / max(p (1 - p), 1e-12) that ignores the clamp (-1e12 at p = 0 with t = 1, as PyTorch), where the
# clamped forward's own derivative would be 0; the target's gradient is -logit(p), unclamped as in PyTorch.
_BCE_EPS = 1e-12


def _bce_fwd(p, t):
    lo = mx.array(-100, p.dtype)
    return (t - 1) * mx.maximum(mx.log1p(-p), lo) - t * mx.maximum(mx.log(p), lo)


_bce = defop("binary_cross_entropy", _bce_fwd, node="BinaryCrossEntropyBackward0", vjp=(
    lambda g, ans, p, t: g * (p - t) / (p * (1 - p)).clamp_min(_BCE_EPS),
    lambda g, ans, p, t: g * (log1p(-p) - log(p))))


def _check_probabilities(input, target) -> None:
    """PyTorch's range check of binary_cross_entropy, done as the index checks are (lucid._checks): at once when
    the values are on the host, else as a lazy flag raised at the next evaluation (``backward()``, ``.item()``)."""
    for name, x in (("input", input), ("target", target)):
        a = data(x)
        if a.size == 0:
            continue
        error = (lambda name: lambda _: RuntimeError(f"all elements of {name} should be between 0 and 1"))(name)
        if is_known(a):
            h = to_numpy(a, copy=None)
            if not np.all((h >= 0) & (h <= 1)):  # NaN fails both comparisons
                raise error(None)
        else:
            check_later(mx.logical_not(mx.all((a >= 0) & (a <= 1))), error, "binary_cross_entropy")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """``-weight * (target * log(input) + (1 - target) * log(1 - input))`` for probabilities ``input``, each log
    clamped to >= -100 as PyTorch does. ``weight`` broadcasts to the input's shape. Values outside [0, 1] (NaN
    included) raise PyTorch's error (see ``_check_probabilities``).

    :param weight: a rescaling weight broadcast against the elementwise losses, or None.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("binary_cross_entropy", binary_cross_entropy, input, target, weight,
                                       size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input size "
                         f"({input.size()}) is deprecated. Please ensure they have the same size.")
    _check_probabilities(input, target)
    loss = _bce(input, target)
    return _reduce(loss if weight is None else loss * weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None) -> Tensor:
    """binary_cross_entropy of ``sigmoid(input)``, computed stably as ``(1 - t) * x - (1 + (pos_weight - 1) * t) *
    logsigmoid(x)``; ``pos_weight`` (broadcast along the last dim, one per class) weighs the positive term.

    :param weight: a rescaling weight broadcast against the elementwise losses, or None.
    :param pos_weight: a weight of the positive examples per class, broadcast along the last dim.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("binary_cross_entropy_with_logits", binary_cross_entropy_with_logits, input,
                                       target, weight, size_average, reduce, reduction, pos_weight)
    reduction = _reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    log_weight = 1 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = (1 - target) * input - log_weight * logsigmoid(input)
    return _reduce(loss if weight is None else loss * weight, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """Pointwise KL divergence ``target * (log(target) - input)`` for log-probabilities ``input`` (``target``
    also as log-probabilities with ``log_target``). 'batchmean' divides the sum by the batch size (the KL
    divergence per sample); 'mean' divides by every element, with PyTorch's warning.

    :param log_target: ``target`` holds log-probabilities.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("kl_div", kl_div, input, target, size_average, reduce, reduction, log_target)
    if size_average is None and reduce is None and reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    reduction = _reduction(size_average, reduce, reduction, extra=("batchmean",))
    if log_target:
        loss = exp(target) * (target - input)
    else:
        loss = xlogy(target, target) - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.ndim else total
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:
    """Poisson negative log-likelihood: ``exp(input) - target * input`` (``log_input``) or ``input - target *
    log(input + eps)``; ``full`` adds Stirling's approximation of ``log(target!)`` where target > 1.

    :param log_input: the input holds log-rates.
    :param full: add Stirling's approximation of ``log(target!)``.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("poisson_nll_loss", poisson_nll_loss, input, target, log_input, full,
                                       size_average, eps, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = exp(input) - target * input
    else:
        loss = input - target * log(input + eps)
    if full:
        above = gt(target, 1)
        t = where(above, target, 2.0)  # a safe value elsewhere: no log(0) even in derivatives
        stirling = t * log(t) - t + log(t * (2 * math.pi)) * 0.5
        loss = loss + where(above, stirling, 0.0)
    return _reduce(loss, reduction)


@_cpu_route.float64_args
def gaussian_nll_loss(input, target, var, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Gaussian negative log-likelihood ``0.5 * (log(var) + (input - target)**2 / var)`` (+ ``0.5 * log(2 pi)``
    with ``full``). ``var`` has the input's shape, or one dim fewer, or a single mismatched dim of size 1 (shared
    variance); its value is clamped to >= eps but its gradient is not (PyTorch clamps in place under no_grad).
    A negative entry of ``var`` is PyTorch's ValueError, raised at once as PyTorch's Python check does (so a
    ``var`` MLX has not computed yet is computed here; inside a trace the check is deferred).

    :param var: the variances (broadcast against the input).
    :param full: add the constant ``0.5 * log(2 * pi)``.
    """
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _wrap(mx.full(input.shape, var, input.dtype))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and
                  sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    negative = mx.any(data(var) < 0)
    if _tracing():
        check_later(negative, lambda _: ValueError("var has negative entry/entries"), "gaussian_nll_loss")
    elif _wrap(negative).item():  # (a Tensor's read: the pending checks of earlier ops are evaluated with it)
        raise ValueError("var has negative entry/entries")
    var = var + (var.clamp_min(eps) - var).detach()
    loss = (log(var) + square(input - target) / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# ---------------------------------------------------------------------------------------------------- margins
def cosine_embedding_loss(input1, input2, target, margin: float = 0, size_average=None, reduce=None,
                          reduction: str = "mean") -> Tensor:
    """``1 - cos(x1, x2)`` where target is 1, ``max(0, cos(x1, x2) - margin)`` where it is -1, for (N, D) inputs
    and (N) target (or (D) and ())."""
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("cosine_embedding_loss", cosine_embedding_loss, input1, input2, target, margin,
                                       size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    dim = target.ndim
    if dim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.ndim != dim + 1 or input2.ndim != dim + 1:
        raise RuntimeError(f"{dim}D target tensor expects {dim + 1}D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    eps = 1e-12  # PyTorch's EPSILON, added to each squared magnitude
    prod = (input1 * input2).sum(dim)
    cos = prod / sqrt(((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps))
    loss = where(eq(target, 1), 1 - cos, 0.0) + where(eq(target, -1), (cos - margin).clamp_min(0), 0.0)
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin: float = 0, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """``max(0, -target * (input1 - input2) + margin)``: target 1 asks input1 to rank higher, -1 lower."""
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("margin_ranking_loss", margin_ranking_loss, input1, input2, target, margin,
                                       size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``max(0, d(a, p) - d(a, n) + margin)`` with ``d`` the pairwise p-norm distance along the last dim;
    ``swap`` uses ``min(d(a, n), d(p, n))`` as the negative distance.

    :param anchor: the anchors.
    :param positive: the positive examples.
    :param negative: the negative examples.
    :param p: the norm's order of the distance.
    :param swap: use the positive-negative distance when it is smaller.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("triplet_margin_loss", triplet_margin_loss, anchor, positive, negative, margin,
                                       p, eps, swap, size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((d_pos - d_neg + margin).clamp_min(0), reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """``log(1 + exp(-target * input))`` (two-class logistic loss, target 1 or -1), computed stably."""
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("soft_margin_loss", soft_margin_loss, input, target, size_average, reduce,
                                       reduction)
    reduction = _reduction(size_average, reduce, reduction)
    return _reduce(-logsigmoid(target * input), reduction)


def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """``input`` where target is 1, ``max(0, margin - input)`` where it is -1 (PyTorch: other targets count as
    both)."""
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("hinge_embedding_loss", hinge_embedding_loss, input, target, margin,
                                       size_average, reduce, reduction)
    reduction = _reduction(size_average, reduce, reduction)
    loss = where(ne(target, 1), (margin - input).clamp_min(0), 0.0) + where(ne(target, -1), input, 0.0)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean") -> Tensor:
    """Per-class binary cross entropy of ``sigmoid(input)`` (optionally weighted), averaged over the classes (the
    last dim), then reduced over the samples.

    :param weight: a rescaling weight per class, (C,), or None.
    """
    reduction = _reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.sum(input.ndim - 1) / input.shape[-1], reduction)


# ---------------------------------------------------------------------------------------------------- ctc
def _log_add(*terms: Tensor) -> Tensor:
    """``log(sum(exp(terms)))`` elementwise, -inf where every term is -inf, with finite derivatives there (the
    shift is a constant, and the log reads a safe 1 where the sum is 0)."""
    m = terms[0]
    for t in terms[1:]:
        m = maximum(m, t)
    m = m.detach()
    m = where(isinf(m), 0.0, m)
    total = exp(terms[0] - m)
    for t in terms[1:]:
        total = total + exp(t - m)
    alive = gt(total, 0)
    return where(alive, log(where(alive, total, 1.0)) + m, -math.inf)


def _lengths(lengths, n: int, name: str, at_most: int | None = None) -> mx.array:
    """(N,) int64 lengths from a Tensor or a host sequence; host values are checked as PyTorch does (free: they
    are on the host already), a Tensor's are not read."""
    if isinstance(lengths, Tensor):
        if not mx.issubdtype(lengths.dtype, mx.integer):
            raise RuntimeError(f"{name} must be integral")
        a = data(lengths).reshape(-1).astype(mx.int64)
    else:
        host = np.asarray(lengths, dtype=np.int64).reshape(-1)
        if host.size and host.min() < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value {host.min()} (while "
                               "checking arguments for ctc_loss_allocate_outputs)")
        if at_most is not None and host.size and host.max() > at_most:
            raise RuntimeError(f"Expected {name} to have value at most {at_most}, but got value {host.max()} (while "
                               "checking arguments for ctc_loss_allocate_outputs)")
        a = mx.array(host)
    if a.shape[0] != n:
        raise RuntimeError(f"{name} must be of size batch_size")
    return a


def _padded_targets(targets: mx.array, target_lengths: mx.array, n: int) -> mx.array:
    """(N, S) targets from padded (N, S) ones or from the concatenated 1-d form; in the latter S is the total
    length (an upper bound of the longest, known without reading the lengths)."""
    if targets.ndim == 2:
        return targets
    total = targets.shape[0]
    starts = mx.cumsum(target_lengths) - target_lengths
    positions = mx.minimum(starts[:, None] + mx.arange(total)[None, :], max(total - 1, 0))
    return targets[positions] if total else mx.zeros((n, 0), targets.dtype)


@_cpu_route.float64_args
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Tensor:
    """Connectionist Temporal Classification: ``-log`` of the total probability of the alignments of each target
    with ``log_probs`` (T, N, C) (or unbatched (T, C)), by the forward (alpha) recursion in log space.
    ``targets`` are padded (N, S) or concatenated (sum(target_lengths),) class indices (never ``blank``);
    ``input_lengths`` and ``target_lengths`` are (N,) tensors or sequences. 'mean' divides each loss by its target
    length (at least 1), then averages over the batch; ``zero_infinity`` replaces infinite losses (impossible
    alignments) and their gradients by 0. The gradient is the exact one of this function (PyTorch's differs by
    ``exp(log_probs)``, which vanishes after a log_softmax).

    :param log_probs: (T, N, C) log-probabilities.
    :param targets: (N, S) padded, or the concatenated targets.
    :param input_lengths: each sequence's length, (N,).
    :param target_lengths: each target's length, (N,).
    :param blank: the blank label's index.
    :param zero_infinity: replace infinite losses (impossible alignments) and their gradients by zero.
    """
    if _gm_state.autocast is not None:
        return _gm_state.autocast.call("ctc_loss", ctc_loss, log_probs, targets, input_lengths, target_lengths, blank,
                                       reduction, zero_infinity)
    reduction = _reduction(None, None, reduction)
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs, targets = log_probs.unsqueeze(1), targets.reshape(1, -1)
    if log_probs.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional tensor for argument "
                           "#1 'log_probs' (while checking arguments for ctc_loss_allocate_outputs)")
    steps, n, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    in_len = _lengths(input_lengths, n, "input_lengths", at_most=steps)
    tgt_len = _lengths(target_lengths, n, "target_lengths")
    if targets.ndim == 2 and not isinstance(target_lengths, Tensor):
        longest = int(np.max(np.asarray(target_lengths), initial=0))
        if targets.shape[1] < longest:
            raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                               f"{targets.shape[1]} for argument #2 'targets' (while checking arguments for "
                               "ctc_loss_allocate_outputs)")
    labels = _padded_targets(data(targets).astype(mx.int64), tgt_len, n)
    width = labels.shape[1]
    labels = mx.where(mx.arange(width)[None, :] < tgt_len[:, None], labels, blank)  # padding reads blank
    # the extended sequence blank, l1, blank, l2, ..., blank: (N, L) with L = 2S + 1
    interleaved = mx.stack([mx.full(labels.shape, blank, mx.int64), labels], 2).reshape(n, 2 * width)
    ext = mx.concatenate([interleaved, mx.full((n, 1), blank, mx.int64)], 1)
    size = ext.shape[1]
    # a label may be reached from two states back (skipping a blank) unless it repeats the label before
    skip = mx.concatenate([mx.zeros((n, min(2, size)), mx.bool_),
                           (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])], 1)
    emit = gather(log_probs, 2, mx.broadcast_to(ext[None], (steps, n, size))).unbind(0)  # T of (N, L)
    state = mx.arange(size)[None, :]
    alpha = where(in_len[:, None] > 0, where(state < 2, emit[0], -math.inf),
                  where(state == 0, 0.0, -math.inf))  # an empty input aligns only with an empty target
    unreachable = _wrap(mx.full((n, 2), -math.inf, log_probs.dtype))
    for t in range(1, steps):
        shifted = cat([unreachable, alpha], 1)  # the states one and two back, -inf before the first
        one_back, two_back = shifted.narrow(1, 1, size), where(skip, shifted.narrow(1, 0, size), -math.inf)
        alpha = where(in_len[:, None] > t, emit[t] + _log_add(alpha, one_back, two_back), alpha)
    last = gather(alpha, 1, (2 * tgt_len)[:, None]).squeeze(1)
    before = where(tgt_len > 0, gather(alpha, 1, mx.maximum(2 * tgt_len - 1, 0)[:, None]).squeeze(1), -math.inf)
    loss = -_log_add(last, before)
    if zero_infinity:
        loss = where(isinf(loss), 0.0, loss)
    if reduction == "mean":
        return (loss / _wrap(mx.maximum(tgt_len, 1).astype(loss.dtype))).mean()
    if reduction == "sum":
        return loss.sum()
    return loss.reshape(()) if unbatched else loss
