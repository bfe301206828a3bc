"""Losses (lucid.nn.functional and the lucid.nn modules): values against numpy formulas written here, for every
reduction, with class weights, ignore_index (all ignored included), label smoothing of index and probability
targets and K-dim inputs; gradcheck + gradgradcheck in float64; module forms against the functions; PyTorch's
legacy arguments, warnings and error messages; no evaluation inside (the losses trace under vmap and compile);
PyTorch as an optional oracle."""
import itertools
import math
import warnings

import mlx.core as mx
import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid._tensor import _wrap
from helpers import check_grads, leaf

REDUCTIONS = ["mean", "sum", "none"]
rng = np.random.default_rng(0)


def f64(*shape, low=-2.0, high=2.0):
    return rng.uniform(low, high, shape)


def T(a):
    """A lucid tensor of a numpy array, keeping float64 and int64."""
    return lucid.tensor(a, dtype=lucid.float64) if a.dtype == np.float64 else lucid.tensor(a)


def close(actual, expected, atol=1e-10):
    a = actual.detach().numpy()
    assert a.shape == np.shape(expected)
    np.testing.assert_allclose(a, expected, rtol=1e-9, atol=atol, equal_nan=True)


# ---------------------------------------------------------------------------------------------------- numpy formulas
def np_reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


def np_log_softmax(x, axis):
    z = x - x.max(axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis, keepdims=True))


def np_index_loss(logp, t, w=None, ignore_index=-100, reduction="mean", ls=0.0):
    """Per target: (1 - ls) * w[t] * -logp[t] + ls / C * sum_c w[c] * -logp[c], 0 where ignored; the mean divides
    by the summed weights w[t] of the targets kept."""
    cd = 0 if logp.ndim == 1 else 1
    lp = np.moveaxis(logp, cd, -1)
    c = lp.shape[-1]
    w = np.ones(c) if w is None else w
    t = t.reshape(lp.shape[:-1])
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    nll = -np.take_along_axis(lp, safe[..., None], -1)[..., 0] * w[safe]
    uniform = -(lp * w).sum(-1)
    loss = np.where(keep, (1 - ls) * nll + ls / c * uniform, 0.0)
    if reduction == "mean":
        with np.errstate(invalid="ignore"):
            return loss.sum() / np.where(keep, w[safe], 0.0).sum()
    return np_reduce(loss, "sum") if reduction == "sum" else loss


def np_prob_loss(x, p, w=None, reduction="mean", ls=0.0):
    """-sum_c w[c] * q[c] * log_softmax(x)[c] with q = p * (1 - ls) + ls / C; the mean divides by N * d1 * ..."""
    cd = 0 if x.ndim == 1 else 1
    c = x.shape[cd]
    q = p * (1 - ls) + ls / c
    wb = 1.0 if w is None else w.reshape((c,) + (1,) * (x.ndim - cd - 1))
    loss = -(np_log_softmax(x, cd) * q * wb).sum(cd)
    return loss.sum() / (x.size // c) if reduction == "mean" else np_reduce(loss, reduction)


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_bce(x, t, w=1.0):
    return -w * (t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log(1 - x), -100))


def np_huber(d, delta):
    return np.where(np.abs(d) < delta, 0.5 * d * d, delta * (np.abs(d) - 0.5 * delta))


def np_smooth_l1(d, beta):
    return np.abs(d) if beta == 0 else np.where(np.abs(d) < beta, 0.5 * d * d / beta, np.abs(d) - 0.5 * beta)


def np_pdist(a, b, p, eps=1e-6):
    return (np.abs(a - b + eps) ** p).sum(-1) ** (1 / p)


def np_cos(a, b, axis):
    return (a * b).sum(axis) / np.sqrt(((a * a).sum(axis) + 1e-12) * ((b * b).sum(axis) + 1e-12))


# ---------------------------------------------------------------------------------------------------- class indices
def _targets(classes, shape, ignored=()):
    t = rng.integers(0, classes, shape)
    for i in ignored:
        t.reshape(-1)[i] = -100
    return t


W5 = rng.uniform(0.5, 2.0, 5)
INDEX_CASES = {  # name: (input shape, target shape, flat positions set to ignore_index)
    "2d": ((4, 5), (4,), (1,)),
    "3d": ((2, 5, 3), (2, 3), (2,)),
    "4d": ((2, 5, 3, 2), (2, 3, 2), (0, 7)),
    "5d": ((1, 5, 2, 2, 2), (1, 2, 2, 2), (3,)),
    "unbatched": ((5,), (), ()),
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ls", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("case", INDEX_CASES)
def test_cross_entropy_index_targets(case, weighted, ls, reduction):
    xshape, tshape, ignored = INDEX_CASES[case]
    x, t = f64(*xshape), _targets(5, tshape, ignored)
    w = W5 if weighted else None
    out = F.cross_entropy(T(x), T(t), None if w is None else T(w), reduction=reduction, label_smoothing=ls)
    close(out, np_index_loss(np_log_softmax(x, 0 if x.ndim == 1 else 1), t, w, reduction=reduction, ls=ls))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("case", INDEX_CASES)
def test_nll_loss(case, weighted, reduction):
    xshape, tshape, ignored = INDEX_CASES[case]
    logp, t = np_log_softmax(f64(*xshape), 0 if len(xshape) == 1 else 1), _targets(5, tshape, ignored)
    w = W5 if weighted else None
    out = F.nll_loss(T(logp), T(t), None if w is None else T(w), reduction=reduction)
    close(out, np_index_loss(logp, t, w, reduction=reduction))


@pytest.mark.parametrize("ls", [0.0, 0.3])
def test_cross_entropy_ignore_index_is_a_class(ls):
    x, t = f64(6, 4), np.array([0, 2, 2, 1, 3, 2])
    for reduction in REDUCTIONS:
        out = F.cross_entropy(T(x), T(t), T(W5[:4]), ignore_index=2, reduction=reduction, label_smoothing=ls)
        close(out, np_index_loss(np_log_softmax(x, 1), t, W5[:4], 2, reduction, ls))


@pytest.mark.parametrize("ls", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_all_targets_ignored(weighted, ls):
    # PyTorch: the mean is 0 / 0 = nan, the sum 0, 'none' zeros
    x, t = T(f64(3, 5)), lucid.tensor([-100, -100, -100])
    w = T(W5) if weighted else None
    assert math.isnan(F.cross_entropy(x, t, w, label_smoothing=ls).item())
    assert F.cross_entropy(x, t, w, reduction="sum", label_smoothing=ls).item() == 0
    close(F.cross_entropy(x, t, w, reduction="none", label_smoothing=ls), np.zeros(3))
    assert math.isnan(F.nll_loss(x, t, w).item())


def test_ignored_targets_get_no_gradient_even_at_minus_inf():
    # a masked -inf logit at class 0 (the class ignored targets read) must not turn into nan
    x = lucid.tensor([[-math.inf, 1.0, 2.0], [0.5, 1.0, 2.0]], requires_grad=True)
    loss = F.nll_loss(x, lucid.tensor([-100, 2]), reduction="sum")
    loss.backward()
    assert loss.item() == -2.0
    close(x.grad, np.array([[0.0, 0, 0], [0, 0, -1]]))


def test_unbatched_input_with_a_one_element_target():
    # PyTorch reads (C,) input with a (1,) target as one sample and returns a 0-d loss even for 'none'
    x = f64(5)
    out = F.cross_entropy(T(x), lucid.tensor([3]), reduction="none")
    close(out, np_index_loss(np_log_softmax(x, 0), np.array(3), reduction="none"))


def test_byte_targets():
    x, t = f64(4, 5), np.array([1, 0, 4, 3], np.uint8)
    close(F.cross_entropy(T(x), T(t)), np_index_loss(np_log_softmax(x, 1), t.astype(np.int64)))


PROB_CASES = {"2d": (4, 5), "3d": (2, 5, 3), "unbatched": (5,)}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ls", [0.0, 0.25])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("case", PROB_CASES)
def test_cross_entropy_probability_targets(case, weighted, ls, reduction):
    shape = PROB_CASES[case]
    cd = 0 if len(shape) == 1 else 1
    x, p = f64(*shape), rng.uniform(0, 1, shape)
    p = p / p.sum(cd, keepdims=True)
    w = W5 if weighted else None
    out = F.cross_entropy(T(x), T(p), None if w is None else T(w), reduction=reduction, label_smoothing=ls)
    close(out, np_prob_loss(x, p, w, reduction, ls))


def test_negative_label_smoothing_is_ignored():
    # PyTorch only smooths when label_smoothing > 0
    x, t = T(f64(3, 4)), lucid.tensor([0, 3, 1])
    close(F.cross_entropy(x, t, label_smoothing=-0.5), F.cross_entropy(x, t).numpy())


def test_cross_entropy_float32_keeps_dtype():
    x = lucid.tensor(f64(3, 4), dtype=lucid.float32)
    assert F.cross_entropy(x, lucid.tensor([0, 3, 1]), label_smoothing=0.1).dtype == lucid.float32
    assert F.cross_entropy(x, x.softmax(1)).dtype == lucid.float32


# ---------------------------------------------------------------------------------------------------- regression
X34, Y34, W34 = f64(3, 4), f64(3, 4), rng.uniform(0.1, 1.0, (3, 4))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_and_l1(reduction):
    d = X34 - Y34
    close(F.mse_loss(T(X34), T(Y34), reduction=reduction), np_reduce(d * d, reduction))
    close(F.l1_loss(T(X34), T(Y34), reduction=reduction), np_reduce(np.abs(d), reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_weighted_mse_l1_huber(reduction):
    # mse and l1 divide the weighted sum by the sum of the weights; huber takes the plain mean of weighted terms
    d = X34 - Y34
    for fn, terms, w_mean in ((F.mse_loss, d * d, True), (F.l1_loss, np.abs(d), True),
                              (F.huber_loss, np_huber(d, 1.0), False)):
        out = fn(T(X34), T(Y34), reduction=reduction, weight=T(W34))
        expected = (terms * W34).sum() / W34.sum() if reduction == "mean" and w_mean else np_reduce(terms * W34,
                                                                                                   reduction)
        close(out, expected)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("beta", [0.0, 0.5, 2.0])
def test_smooth_l1(beta, reduction):
    close(F.smooth_l1_loss(T(X34), T(Y34), reduction=reduction, beta=beta),
          np_reduce(np_smooth_l1(X34 - Y34, beta), reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("delta", [0.5, 1.0, 2.5])
def test_huber(delta, reduction):
    close(F.huber_loss(T(X34), T(Y34), reduction=reduction, delta=delta),
          np_reduce(np_huber(X34 - Y34, delta), reduction))


def test_target_size_mismatch_warns_and_broadcasts():
    y = f64(4)
    with pytest.warns(UserWarning, match=r"Using a target size \(lucid.Size\(\[4\]\)\) that is different to the "
                                         r"input size \(lucid.Size\(\[3, 4\]\)\)"):
        out = F.mse_loss(T(X34), T(y))
    close(out, ((X34 - y) ** 2).mean())


# ---------------------------------------------------------------------------------------------------- probabilistic
P34, Q34 = rng.uniform(0.02, 0.98, (3, 4)), rng.uniform(0, 1, (3, 4))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction):
    close(F.binary_cross_entropy(T(P34), T(Q34), reduction=reduction), np_reduce(np_bce(P34, Q34), reduction))
    w = W34[0]  # broadcasts along the last dim
    close(F.binary_cross_entropy(T(P34), T(Q34), T(w), reduction=reduction),
          np_reduce(np_bce(P34, Q34, w), reduction))


def test_binary_cross_entropy_clamps_log_at_minus_100():
    x = lucid.tensor([0.0, 1.0, 0.0, 1.0, 1e-50], dtype=lucid.float64, requires_grad=True)
    t = lucid.tensor([1.0, 0.0, 0.0, 1.0, 1.0], dtype=lucid.float64)
    loss = F.binary_cross_entropy(x, t, reduction="none")
    close(loss, np.array([100.0, 100.0, 0.0, 0.0, 100.0]))  # log(1e-50) = -115 is clamped too
    loss.sum().backward()
    # PyTorch's gradient, which ignores the clamp: (x - t) / max(x (1 - x), 1e-12), nowhere inf or nan
    close(x.grad, np.array([-1e12, 1e12, 0.0, 0.0, -1e12]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_with_logits(reduction):
    x = X34 * 3
    pw, w = rng.uniform(0.5, 3.0, 4), W34
    expected = -w * (pw * Q34 * np.log(np_sigmoid(x)) + (1 - Q34) * np.log(1 - np_sigmoid(x)))
    close(F.binary_cross_entropy_with_logits(T(x), T(Q34), T(w), reduction=reduction, pos_weight=T(pw)),
          np_reduce(expected, reduction))
    close(F.binary_cross_entropy_with_logits(T(x), T(Q34), reduction=reduction),
          np_reduce(np_bce(np_sigmoid(x), Q34), reduction))


def test_binary_cross_entropy_with_logits_is_stable():
    x = lucid.tensor([200.0, -200.0, 200.0, -200.0], requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(x, lucid.tensor([0.0, 1.0, 1.0, 0.0]), reduction="none")
    close(loss, np.array([200.0, 200.0, 0.0, 0.0]))
    loss.sum().backward()
    close(x.grad, np.array([1.0, -1.0, 0.0, 0.0]))


@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(log_target):
    logp = np_log_softmax(f64(3, 4), 1)
    q = rng.uniform(0, 1, (3, 4))
    q[0, 0] = 0.0  # 0 * log 0 = 0
    q = q / q.sum(1, keepdims=True)
    tgt = np.log(q + 0.1) if log_target else q
    prob = np.exp(tgt) if log_target else q
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(prob > 0, prob * (np.log(prob) - logp), 0.0)
    for reduction, expected in (("sum", terms.sum()), ("none", terms), ("batchmean", terms.sum() / 3)):
        close(F.kl_div(T(logp), T(tgt), reduction=reduction, log_target=log_target), expected)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        close(F.kl_div(T(logp), T(tgt), log_target=log_target), terms.mean())


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
def test_poisson_nll_loss(full, reduction):
    t = rng.uniform(0, 3, (3, 4))
    stirling = np.where(t > 1, t * np.log(np.maximum(t, 1)) - t + 0.5 * np.log(2 * np.pi * np.maximum(t, 1)), 0)
    extra = stirling if full else 0.0
    close(F.poisson_nll_loss(T(X34), T(t), full=full, reduction=reduction),
          np_reduce(np.exp(X34) - t * X34 + extra, reduction))
    close(F.poisson_nll_loss(T(P34), T(t), log_input=False, full=full, reduction=reduction),
          np_reduce(P34 - t * np.log(P34 + 1e-8) + extra, reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_gaussian_nll_loss(reduction):
    for var in (rng.uniform(0.1, 2, (3, 4)), rng.uniform(0.1, 2, (3,)), rng.uniform(0.1, 2, (3, 1)), 0.7):
        v = var if isinstance(var, float) else (var[:, None] if var.ndim == 1 else var)
        expected = 0.5 * (np.log(v) + (X34 - Y34) ** 2 / v)
        arg = var if isinstance(var, float) else T(var)
        close(F.gaussian_nll_loss(T(X34), T(Y34), arg, reduction=reduction), np_reduce(expected, reduction))
        close(F.gaussian_nll_loss(T(X34), T(Y34), arg, full=True, reduction=reduction),
              np_reduce(expected + 0.5 * np.log(2 * np.pi), reduction))


def test_gaussian_nll_loss_clamps_var_value_not_gradient():
    var = lucid.tensor([0.0, 1.0], dtype=lucid.float64, requires_grad=True)
    loss = F.gaussian_nll_loss(lucid.zeros(2, dtype=lucid.float64), lucid.ones(2, dtype=lucid.float64), var,
                               reduction="sum")
    close(loss, 0.5 * (np.log(1e-6) + 1 / 1e-6) + 0.5)
    loss.backward()
    close(var.grad, 0.5 * (1 / np.array([1e-6, 1.0]) - 1 / np.array([1e-6, 1.0]) ** 2), atol=1e-3)


@pytest.mark.parametrize("var", [-1 * lucid.ones(3, 4), lucid.tensor([[0.5], [-0.1], [1.0]]), -0.5])
def test_gaussian_nll_loss_negative_var_raises_at_once(var):
    """PyTorch's Python check reads ``var`` at the call: a var computed lazily (``-1 * ones``) is read too."""
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        F.gaussian_nll_loss(T(X34), T(Y34), var)
    ok = F.gaussian_nll_loss(T(X34), T(Y34), lucid.tensor([[0.0], [float("nan")], [1.0]]))  # 0 and NaN pass
    assert ok.shape == ()


def test_gaussian_nll_loss_negative_var_in_a_compiled_call():
    f = lucid.compile(lambda x, v: F.gaussian_nll_loss(x, x, v))
    x = lucid.zeros(3, 4)
    assert f(x, lucid.ones(3, 4)).item() == pytest.approx(0.0)
    with pytest.raises(ValueError, match="var has negative entry/entries"):
        f(x, -lucid.ones(3, 4)).item()


# ---------------------------------------------------------------------------------------------------- margins
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cosine_embedding_loss(reduction):
    t = np.array([1.0, -1.0, -1.0])
    cos = np_cos(X34, Y34, 1)
    expected = np.where(t == 1, 1 - cos, np.maximum(cos - 0.1, 0))
    close(F.cosine_embedding_loss(T(X34), T(Y34), T(t), margin=0.1, reduction=reduction),
          np_reduce(expected, reduction))
    one = F.cosine_embedding_loss(T(X34[0]), T(Y34[0]), lucid.tensor(-1.0), margin=-0.5, reduction=reduction)
    close(one, np.maximum(np_cos(X34[0], Y34[0], 0) + 0.5, 0))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_ranking_loss(reduction):
    a, b, t = f64(6), f64(6), np.array([1.0, -1, 1, -1, 1, -1])
    close(F.margin_ranking_loss(T(a), T(b), T(t), margin=0.3, reduction=reduction),
          np_reduce(np.maximum(-t * (a - b) + 0.3, 0), reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("p", [1, 2, 3])
def test_triplet_margin_loss(p, swap, reduction):
    a, pos, neg = X34, Y34, f64(3, 4)
    d_neg = np_pdist(a, neg, p)
    if swap:
        d_neg = np.minimum(d_neg, np_pdist(pos, neg, p))
    close(F.triplet_margin_loss(T(a), T(pos), T(neg), margin=0.7, p=p, swap=swap, reduction=reduction),
          np_reduce(np.maximum(np_pdist(a, pos, p) - d_neg + 0.7, 0), reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin_hinge_multilabel(reduction):
    sign = np.sign(Y34)
    close(F.soft_margin_loss(T(X34), T(sign), reduction=reduction),
          np_reduce(np.log1p(np.exp(-sign * X34)), reduction))
    close(F.hinge_embedding_loss(T(X34), T(sign), margin=0.5, reduction=reduction),
          np_reduce(np.where(sign == 1, X34, np.maximum(0.5 - X34, 0)), reduction))
    labels = (Y34 > 0).astype(np.float64)
    terms = -(labels * np.log(np_sigmoid(X34)) + (1 - labels) * np.log(1 - np_sigmoid(X34))) * W34[0]
    close(F.multilabel_soft_margin_loss(T(X34), T(labels), T(W34[0]), reduction=reduction),
          np_reduce(terms.mean(1), reduction))


# ---------------------------------------------------------------------------------------------------- ctc
def np_ctc(log_probs, targets, input_lengths, target_lengths, blank=0):
    """-log of the summed probability of every path (all C**T of them) that collapses to the target."""
    losses = []
    for n, (steps, length) in enumerate(zip(input_lengths, target_lengths)):
        target = tuple(targets[n][:length])
        total = 0.0
        for path in itertools.product(range(log_probs.shape[2]), repeat=steps):
            merged = [c for i, c in enumerate(path) if i == 0 or c != path[i - 1]]
            if tuple(c for c in merged if c != blank) == target:
                total += np.exp(sum(log_probs[t, n, c] for t, c in enumerate(path)))
        losses.append(-np.log(total) if total > 0 else np.inf)
    return np.array(losses)


CTC_LOGP = np_log_softmax(f64(5, 4, 3), 2)
CTC_TARGETS = np.array([[1, 2, 2], [2, 1, 0], [1, 0, 0], [2, 2, 1]])  # padded; repeats need a blank between
CTC_IN, CTC_TGT = [5, 4, 3, 2], [3, 2, 0, 3]  # the last is impossible (3 labels, 1 repeat, 2 steps)


@pytest.mark.parametrize("form", ["padded", "concatenated", "tensor_lengths"])
def test_ctc_loss(form):
    expected = np_ctc(CTC_LOGP, CTC_TARGETS, CTC_IN, CTC_TGT)
    targets = T(CTC_TARGETS)
    if form == "concatenated":
        targets = T(np.concatenate([row[:k] for row, k in zip(CTC_TARGETS, CTC_TGT)]))
    in_len, tgt_len = (lucid.tensor(CTC_IN), lucid.tensor(CTC_TGT)) if form == "tensor_lengths" else (CTC_IN, CTC_TGT)
    close(F.ctc_loss(T(CTC_LOGP), targets, in_len, tgt_len, reduction="none"), expected)
    close(F.ctc_loss(T(CTC_LOGP), targets, in_len, tgt_len, reduction="sum"), np.inf)
    finite = F.ctc_loss(T(CTC_LOGP), targets, in_len, tgt_len, reduction="none", zero_infinity=True)
    close(finite, np.where(np.isinf(expected), 0.0, expected))
    mean = F.ctc_loss(T(CTC_LOGP), targets, in_len, tgt_len, zero_infinity=True)
    close(mean, (np.where(np.isinf(expected), 0.0, expected) / np.maximum(CTC_TGT, 1)).mean())


def test_ctc_loss_unbatched_and_blank():
    logp = CTC_LOGP[:, 0]
    out = F.ctc_loss(T(logp), lucid.tensor([0, 1]), lucid.tensor(4), lucid.tensor(2), blank=2, reduction="none")
    assert out.shape == ()
    close(out, np_ctc(logp[:, None], [[0, 1]], [4], [2], blank=2)[0])


def test_ctc_impossible_alignment_has_zero_gradient():
    x = lucid.tensor(CTC_LOGP, dtype=lucid.float64, requires_grad=True)
    F.ctc_loss(x, T(CTC_TARGETS), CTC_IN, CTC_TGT, zero_infinity=True).backward()
    assert np.isfinite(x.grad.numpy()).all() and (x.grad.numpy()[:, 3] == 0).all()


# ---------------------------------------------------------------------------------------------------- gradients
IDX2 = lucid.tensor([2, -100])
IDX3D = lucid.tensor([[0, -100], [3, 1]])
WEIGHT3 = leaf(3, low=0.5, high=2.0, seed=9, requires_grad=False)
WEIGHT4 = leaf(4, low=0.5, high=2.0, seed=9, requires_grad=False)
SIGNS = lucid.tensor([1.0, -1.0], dtype=lucid.float64)
IDX_CTC = lucid.tensor([[1, 2]])

GRAD_CASES = {  # name: (fn, leaves)
    "cross_entropy": (lambda x: F.cross_entropy(x, IDX2, WEIGHT3, label_smoothing=0.2), [leaf(2, 3)]),
    "cross_entropy_3d_none": (lambda x: F.cross_entropy(x, IDX3D, WEIGHT4, reduction="none", label_smoothing=0.1),
                              [leaf(2, 4, 2)]),
    "cross_entropy_probs": (lambda x, p: F.cross_entropy(x, p, WEIGHT3, label_smoothing=0.1),
                            [leaf(2, 3), leaf(2, 3, low=0.1, high=0.9, seed=1)]),
    "nll_loss": (lambda x: F.nll_loss(x, IDX2, WEIGHT3), [leaf(2, 3)]),
    # the fused nll op: every reduction, unweighted, unbatched and 4-d (NllLoss2DBackward0) inputs
    "cross_entropy_plain": (lambda x: F.cross_entropy(x, IDX2), [leaf(2, 3)]),
    "cross_entropy_sum": (lambda x: F.cross_entropy(x, lucid.tensor([2, 0, 1]), reduction="sum"), [leaf(3, 3)]),
    "nll_loss_none_weighted": (lambda x: F.nll_loss(x, IDX2, WEIGHT3, reduction="none"), [leaf(2, 3)]),
    "nll_loss_unbatched": (lambda x: F.nll_loss(x, lucid.tensor(1)), [leaf(3)]),
    "cross_entropy_4d": (lambda x: F.cross_entropy(x, lucid.tensor([[[0, 3], [-100, 1]]]), WEIGHT4),
                         [leaf(1, 4, 2, 2)]),
    "cross_entropy_4d_none": (lambda x: F.cross_entropy(x, lucid.tensor([[[0, 3], [-100, 1]]]), reduction="none"),
                              [leaf(1, 4, 2, 2)]),
    "mse_loss": (lambda x, y: F.mse_loss(x, y), [leaf(2, 3), leaf(2, 3, seed=1)]),
    "l1_loss_weighted": (lambda x, y: F.l1_loss(x, y, weight=WEIGHT3.expand(2, 3)), [leaf(2, 3), leaf(2, 3, seed=1)]),
    "smooth_l1_loss": (lambda x, y: F.smooth_l1_loss(x, y, beta=0.5), [leaf(2, 3), leaf(2, 3, seed=1)]),
    "huber_loss": (lambda x, y: F.huber_loss(x, y, delta=0.4, reduction="sum"), [leaf(2, 3), leaf(2, 3, seed=1)]),
    "binary_cross_entropy": (lambda x, y: F.binary_cross_entropy(x, y, WEIGHT3),
                             [leaf(2, 3, low=0.1, high=0.9), leaf(2, 3, low=0.0, high=1.0, seed=1)]),
    "bce_with_logits": (lambda x, y: F.binary_cross_entropy_with_logits(x, y, WEIGHT3, pos_weight=WEIGHT3 * 2),
                        [leaf(2, 3, low=-3, high=3), leaf(2, 3, low=0.0, high=1.0, seed=1)]),
    "kl_div": (lambda x, y: F.kl_div(x, y, reduction="batchmean"), [leaf(2, 3), leaf(2, 3, low=0.1, seed=1)]),
    "kl_div_log_target": (lambda x, y: F.kl_div(x, y, reduction="sum", log_target=True),
                          [leaf(2, 3), leaf(2, 3, seed=1)]),
    "poisson_nll_loss": (lambda x, y: F.poisson_nll_loss(x, y, full=True),
                         [leaf(2, 3), leaf(2, 3, low=0.0, high=3.0, seed=1)]),
    "gaussian_nll_loss": (lambda x, y, v: F.gaussian_nll_loss(x, y, v, full=True),
                          [leaf(2, 3), leaf(2, 3, seed=1), leaf(2, 1, low=0.2, high=2.0, seed=2)]),
    "cosine_embedding_loss": (lambda a, b: F.cosine_embedding_loss(a, b, SIGNS, margin=-0.9),
                              [leaf(2, 3), leaf(2, 3, seed=1)]),
    "margin_ranking_loss": (lambda a, b: F.margin_ranking_loss(a, b, SIGNS, margin=2.5),
                            [leaf(2), leaf(2, seed=1)]),
    "triplet_margin_loss": (lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=3.0, p=3, swap=True),
                            [leaf(2, 3), leaf(2, 3, seed=1), leaf(2, 3, seed=2)]),
    "soft_margin_loss": (lambda x: F.soft_margin_loss(x, SIGNS.reshape(2, 1)), [leaf(2, 3)]),
    "hinge_embedding_loss": (lambda x: F.hinge_embedding_loss(x, SIGNS.reshape(2, 1), margin=2.0), [leaf(2, 3)]),
    "multilabel_soft_margin_loss": (lambda x, y: F.multilabel_soft_margin_loss(x, y, WEIGHT3),
                                    [leaf(2, 3), leaf(2, 3, low=0.0, high=1.0, seed=1)]),
    "ctc_loss": (lambda x: F.ctc_loss(x, IDX_CTC, [3], [2], reduction="sum"), [leaf(3, 1, 3)]),
}


@pytest.mark.parametrize("name", GRAD_CASES)
def test_gradients(name):
    fn, leaves = GRAD_CASES[name]
    check_grads(fn, *leaves)


def test_ctc_loss_gradient_with_repeats_and_lengths():
    targets = lucid.tensor([[1, 1], [2, 0]])
    check_grads(lambda x: F.ctc_loss(x.log_softmax(2), targets, [3, 2], [2, 1]), leaf(3, 2, 3), second=False)


# ---------------------------------------------------------------------------------------------------- lazy
def test_losses_trace_under_vmap_and_compile():
    # nothing reads a value: per-sample losses under vmap, and the whole loss compiled, match eager
    x, t = lucid.randn(4, 5), lucid.tensor([1, -100, 3, 0])
    per_sample = lucid.func.vmap(lambda xi, ti: F.cross_entropy(xi, ti, reduction="sum", label_smoothing=0.1))
    close(per_sample(x, t), F.cross_entropy(x, t, reduction="none", label_smoothing=0.1).numpy(), atol=1e-6)
    compiled = mx.compile(lambda a, b: F.cross_entropy(_wrap(a), _wrap(b), label_smoothing=0.1)._storage.data)
    np.testing.assert_allclose(np.array(compiled(x._storage.data, t._storage.data)),
                               F.cross_entropy(x, t, label_smoothing=0.1).item(), rtol=1e-6)
    g = lucid.func.grad(lambda a: F.cross_entropy(a, t, label_smoothing=0.1))(x)
    xr = x.detach().requires_grad_()
    F.cross_entropy(xr, t, label_smoothing=0.1).backward()
    close(g, xr.grad.numpy(), atol=1e-6)


# ---------------------------------------------------------------------------------------------------- reduction args
def test_legacy_size_average_and_reduce():
    x, y = T(X34), T(Y34)
    for size_average, reduce, reduction in ((None, None, "mean"), (False, None, "sum"), (None, False, "none"),
                                            (True, True, "mean"), (False, False, "none")):
        if size_average is None and reduce is None:
            continue
        with pytest.warns(UserWarning, match=f"please use reduction='{reduction}' instead"):
            out = F.mse_loss(x, y, size_average=size_average, reduce=reduce, reduction="none")
        close(out, F.mse_loss(x, y, reduction=reduction).numpy())
    with pytest.warns(UserWarning, match="elementwise_mean"):
        close(F.l1_loss(x, y, reduction="elementwise_mean"), F.l1_loss(x, y).numpy())


@pytest.mark.parametrize("fn, args", [
    (F.cross_entropy, (T(X34), lucid.tensor([0, 1, 2]))), (F.nll_loss, (T(X34), lucid.tensor([0, 1, 2]))),
    (F.mse_loss, (T(X34), T(Y34))), (F.binary_cross_entropy, (T(P34), T(Q34))),
    (F.kl_div, (T(X34), T(Q34))), (F.triplet_margin_loss, (T(X34), T(Y34), T(Y34))),
])
def test_invalid_reduction(fn, args):
    with pytest.raises(ValueError, match="^bogus is not a valid value for reduction$"):
        fn(*args, reduction="bogus")


# ---------------------------------------------------------------------------------------------------- errors
X35 = lucid.randn(3, 5)
ERRORS = [  # (call, exception, PyTorch's message)
    (lambda: F.cross_entropy(X35, lucid.tensor([1, 2])), ValueError,
     "Expected input batch_size (3) to match target batch_size (2)."),
    (lambda: F.nll_loss(X35, lucid.tensor([[1, 2, 3]])), ValueError,
     "Expected input batch_size (3) to match target batch_size (1)."),
    (lambda: F.nll_loss(lucid.tensor(1.0), lucid.tensor(1)), ValueError, "Expected 1 or more dimensions (got 0)"),
    (lambda: F.nll_loss(lucid.randn(3, 5), lucid.ones(3, 2, dtype=lucid.int64)), RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    (lambda: F.nll_loss(X35, lucid.tensor([1, 2, 3], dtype=lucid.int32)), RuntimeError,
     "expected target dtype to be Long or Byte, but got Int"),
    (lambda: F.cross_entropy(X35, lucid.tensor([1.0, 2.0, 3.0])), RuntimeError,
     "expected target dtype to be Long or Byte, but got Float"),
    (lambda: F.cross_entropy(X35, lucid.tensor([1, 2, 3]), weight=lucid.ones(4)), RuntimeError,
     "weight tensor should be defined either for all 5 classes or no classes but got weight tensor of shape: [4]"),
    (lambda: F.nll_loss(lucid.randn(3, 5, 4), lucid.ones(3, 3, dtype=lucid.int64)), RuntimeError,
     "Expected target size [3, 4], got [3, 3]"),
    (lambda: F.nll_loss(lucid.randn(3, 5, 4, 2), lucid.ones(3, 4, dtype=lucid.int64)), RuntimeError,
     "only batches of spatial targets supported (3D tensors) but got targets of dimension: 2"),
    (lambda: F.nll_loss(lucid.randn(3, 5, 4, 2), lucid.ones(3, 4, 3, dtype=lucid.int64)), RuntimeError,
     "size mismatch (got input: [3, 5, 4, 2] , target: [3, 4, 3]"),
    (lambda: F.nll_loss(lucid.randn(3, 5, 4), lucid.ones(3, 4, dtype=lucid.int64), weight=lucid.ones(4)),
     RuntimeError, "weight tensor should be defined either for all or no classes"),
    (lambda: F.nll_loss(lucid.randn(5), lucid.tensor([1, 2])), ValueError,
     "For 1D input, 1D target must have size 1, but got target size: 2"),
    (lambda: F.cross_entropy(X35, lucid.ones(3, 5, dtype=lucid.int64)), RuntimeError,
     "Expected floating point type for target with class probabilities, got Long"),
    (lambda: F.cross_entropy(X35, lucid.rand(3, 5), ignore_index=1), RuntimeError,
     "ignore_index is not supported for floating point target"),
    (lambda: F.cross_entropy(X35, lucid.rand(3, 5), weight=lucid.ones(3)), RuntimeError,
     "cross_entropy: weight tensor should be defined either for all 5 classes or no classes but got weight tensor "
     "of shape: [3]"),
    (lambda: F.cross_entropy(X35, lucid.tensor([1, 2, 3]), label_smoothing=1.5), RuntimeError,
     "label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    (lambda: F.cross_entropy(X35, lucid.rand(3, 5), label_smoothing=1.5), RuntimeError,
     "label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    (lambda: F.binary_cross_entropy(lucid.rand(3, 5), lucid.rand(3, 4)), ValueError,
     "Using a target size (lucid.Size([3, 4])) that is different to the input size (lucid.Size([3, 5])) is "
     "deprecated. Please ensure they have the same size."),
    (lambda: F.binary_cross_entropy_with_logits(lucid.rand(3, 5), lucid.rand(3, 4)), ValueError,
     "Target size (lucid.Size([3, 4])) must be the same as input size (lucid.Size([3, 5]))"),
    (lambda: F.mse_loss(X35, X35, weight=lucid.rand(5)), ValueError, "Weights and input must have the same size."),
    (lambda: F.smooth_l1_loss(X35, X35, beta=-1), RuntimeError,
     "smooth_l1_loss does not support negative values for beta."),
    (lambda: F.huber_loss(X35, X35, delta=0), RuntimeError,
     "huber_loss does not support non-positive values for delta."),
    (lambda: F.cosine_embedding_loss(X35, X35, lucid.ones(3, 1)), RuntimeError,
     "0D or 1D target tensor expected, multi-target not supported"),
    (lambda: F.cosine_embedding_loss(X35, X35, lucid.ones(())), RuntimeError,
     "0D target tensor expects 1D input tensors, but found inputs with sizes [3, 5] and [3, 5]."),
    (lambda: F.cosine_embedding_loss(lucid.rand(5), lucid.rand(5), lucid.ones(3)), RuntimeError,
     "1D target tensor expects 2D input tensors, but found inputs with sizes [5] and [5]."),
    (lambda: F.margin_ranking_loss(X35, X35, lucid.ones(3)), RuntimeError,
     "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: "
     "lucid.Size([3, 5]), input2: lucid.Size([3, 5]), target: lucid.Size([3]) "),
    (lambda: F.triplet_margin_loss(X35, X35, lucid.rand(5)), RuntimeError,
     "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: "
     "anchor 2D, positive 2D, and negative 1D inputs"),
    (lambda: F.triplet_margin_loss(X35, X35, X35, margin=0), ValueError, "margin must be greater than 0, got 0"),
    (lambda: F.gaussian_nll_loss(X35, X35, lucid.ones(2)), ValueError, "var is of incorrect size"),
    (lambda: F.gaussian_nll_loss(X35, X35, -1.0), ValueError, "var has negative entry/entries"),
    (lambda: F.ctc_loss(T(CTC_LOGP), T(CTC_TARGETS), [5, 4, 3], CTC_TGT), RuntimeError,
     "input_lengths must be of size batch_size"),
    (lambda: F.ctc_loss(T(CTC_LOGP), T(CTC_TARGETS), CTC_IN, [3, 2, 0, 4]), RuntimeError,
     "Expected tensor to have size at least 4 at dimension 1, but got size 3 for argument #2 'targets' (while "
     "checking arguments for ctc_loss_allocate_outputs)"),
    (lambda: F.ctc_loss(T(CTC_LOGP), T(CTC_TARGETS), [6, 4, 3, 2], CTC_TGT), RuntimeError,
     "Expected input_lengths to have value at most 5, but got value 6 (while checking arguments for "
     "ctc_loss_allocate_outputs)"),
    (lambda: F.ctc_loss(T(CTC_LOGP), T(CTC_TARGETS), CTC_IN, CTC_TGT, blank=3), RuntimeError,
     "blank must be in label range"),
    (lambda: nn.TripletMarginLoss(margin=-1.0), ValueError,
     "TripletMarginLoss: expected margin to be greater than 0, got -1.0 instead"),
]


@pytest.mark.parametrize("call, exc, message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_error_messages(call, exc, message):
    with pytest.raises(exc) as info:
        call()
    assert str(info.value) == message


# ---------------------------------------------------------------------------------------------------- modules
W5T = T(W5)
IDX4 = lucid.tensor([1, -100, 4, 0])
X45 = T(f64(4, 5))
MODULES = [  # (module, functional equivalent, args)
    (nn.CrossEntropyLoss(W5T, label_smoothing=0.1, reduction="sum"),
     lambda *a: F.cross_entropy(*a, weight=W5T, label_smoothing=0.1, reduction="sum"), (X45, IDX4)),
    (nn.CrossEntropyLoss(ignore_index=1), lambda *a: F.cross_entropy(*a, ignore_index=1), (X45, IDX4.clamp(0))),
    (nn.NLLLoss(W5T, reduction="none"), lambda *a: F.nll_loss(*a, W5T, reduction="none"), (X45, IDX4)),
    (nn.MSELoss(), F.mse_loss, (T(X34), T(Y34))),
    (nn.L1Loss(reduction="sum"), lambda *a: F.l1_loss(*a, reduction="sum"), (T(X34), T(Y34))),
    (nn.SmoothL1Loss(beta=0.5), lambda *a: F.smooth_l1_loss(*a, beta=0.5), (T(X34), T(Y34))),
    (nn.HuberLoss(delta=0.5), lambda *a: F.huber_loss(*a, delta=0.5), (T(X34), T(Y34))),
    (nn.BCELoss(T(W34)), lambda *a: F.binary_cross_entropy(*a, T(W34)), (T(P34), T(Q34))),
    (nn.BCEWithLogitsLoss(pos_weight=T(W34[0])),
     lambda *a: F.binary_cross_entropy_with_logits(*a, pos_weight=T(W34[0])), (T(X34), T(Q34))),
    (nn.KLDivLoss(reduction="batchmean"), lambda *a: F.kl_div(*a, reduction="batchmean"), (T(X34), T(Q34))),
    (nn.PoissonNLLLoss(full=True), lambda *a: F.poisson_nll_loss(*a, full=True), (T(X34), T(Q34 * 3))),
    (nn.GaussianNLLLoss(), F.gaussian_nll_loss, (T(X34), T(Y34), T(W34))),
    (nn.CosineEmbeddingLoss(0.2), lambda *a: F.cosine_embedding_loss(*a, margin=0.2),
     (T(X34), T(Y34), lucid.tensor([1.0, -1.0, 1.0]))),
    (nn.MarginRankingLoss(0.5), lambda *a: F.margin_ranking_loss(*a, margin=0.5),
     (T(X34[0]), T(Y34[0]), lucid.tensor([1.0, -1.0, 1.0, 1.0]))),
    (nn.TripletMarginLoss(p=1, swap=True), lambda *a: F.triplet_margin_loss(*a, p=1, swap=True),
     (T(X34), T(Y34), T(P34))),
    (nn.SoftMarginLoss(), F.soft_margin_loss, (T(X34), T(np.sign(Y34)))),
    (nn.HingeEmbeddingLoss(2.0), lambda *a: F.hinge_embedding_loss(*a, margin=2.0), (T(X34), T(np.sign(Y34)))),
    (nn.MultiLabelSoftMarginLoss(), F.multilabel_soft_margin_loss, (T(X34), T(Q34))),
    (nn.CTCLoss(zero_infinity=True), lambda *a: F.ctc_loss(*a, zero_infinity=True),
     (T(CTC_LOGP), T(CTC_TARGETS), CTC_IN, CTC_TGT)),
]


@pytest.mark.parametrize("module, fn, args", MODULES, ids=[type(m[0]).__name__ for m in MODULES])
def test_module_equals_functional(module, fn, args):
    close(module(*args), fn(*args).numpy())


@pytest.mark.parametrize("name", ["L1Loss", "MSELoss", "SmoothL1Loss", "HuberLoss", "NLLLoss", "CrossEntropyLoss",
                                  "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss",
                                  "CosineEmbeddingLoss", "MarginRankingLoss", "TripletMarginLoss", "SoftMarginLoss",
                                  "HingeEmbeddingLoss", "MultiLabelSoftMarginLoss", "CTCLoss"])
def test_module_repr_and_defaults(name):
    module = getattr(nn, name)()
    assert repr(module) == f"{name}()"
    assert module.reduction == "mean"
    assert isinstance(module, nn.Module)


def test_module_options_and_buffers():
    ce = nn.CrossEntropyLoss(weight=lucid.ones(3))
    assert (ce.ignore_index, ce.label_smoothing) == (-100, 0.0)
    assert list(ce.state_dict()) == ["weight"] and list(nn.CrossEntropyLoss().state_dict()) == []
    assert ce.double().weight.dtype == lucid.float64  # a buffer: it follows the module's casts
    bce = nn.BCEWithLogitsLoss(weight=lucid.ones(3), pos_weight=lucid.ones(3) * 2)
    assert [n for n, _ in bce.named_buffers()] == ["weight", "pos_weight"]
    assert bce.pos_weight is bce._buffers["pos_weight"]
    t = nn.TripletMarginLoss()
    assert (t.margin, t.p, t.eps, t.swap) == (1.0, 2.0, 1e-6, False)
    assert nn.KLDivLoss().log_target is False and nn.SmoothL1Loss().beta == 1.0 and nn.HuberLoss().delta == 1.0
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        assert nn.MSELoss(size_average=False).reduction == "sum"


def test_module_trains_a_linear_classifier():
    # the module form in a small training loop: the loss goes down
    lucid.manual_seed(0)
    x = lucid.randn(32, 4)
    y = (x.sum(1) > 0).to(lucid.int64)
    w = lucid.zeros(4, 2, requires_grad=True)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.05)
    first = None
    for _ in range(30):
        loss = loss_fn(x @ w, y)
        first = first if first is not None else loss.item()
        loss.backward()
        w = (w - w.grad * 0.5).detach().requires_grad_()
    assert loss.item() < 0.5 * first


# ---------------------------------------------------------------------------------------------------- PyTorch oracle
def _oracle_cases():
    x45, t4 = f64(4, 5), np.array([1, -100, 4, 0])
    x3d, t3d = f64(2, 5, 3), np.array([[0, 4, -100], [2, 2, 1]])
    p45 = rng.dirichlet(np.ones(5), 4)
    a, b, c, q = f64(3, 4), f64(3, 4), f64(3, 4), rng.uniform(0.05, 0.95, (3, 4))
    sign = np.array([1.0, -1.0, 1.0])
    return {  # name: (function name, arrays (float64 ones get gradients), kwargs, kwargs arrays)
        "ce": ("cross_entropy", [x45, t4], dict(label_smoothing=0.15), dict(weight=W5)),
        "ce_3d": ("cross_entropy", [x3d, t3d], dict(label_smoothing=0.1), dict(weight=W5)),
        "ce_probs": ("cross_entropy", [x45, p45], dict(label_smoothing=0.2), dict(weight=W5)),
        "nll": ("nll_loss", [x45, t4], {}, dict(weight=W5)),
        "bce": ("binary_cross_entropy", [q, rng.uniform(0, 1, (3, 4))], {}, dict(weight=W34[0])),
        "bce_logits": ("binary_cross_entropy_with_logits", [a * 4, q], {}, dict(pos_weight=W34[1], weight=W34[0])),
        "kl": ("kl_div", [a, q], dict(reduction="batchmean"), {}),
        "smooth_l1": ("smooth_l1_loss", [a, b], dict(beta=0.7), {}),
        "huber": ("huber_loss", [a, b], dict(delta=0.6), dict(weight=W34)),
        "poisson": ("poisson_nll_loss", [a, q * 3], dict(full=True), {}),
        "gaussian": ("gaussian_nll_loss", [a, b, q[:, :1]], dict(full=True), {}),
        "cosine": ("cosine_embedding_loss", [a, b, sign], dict(margin=0.1), {}),
        "ranking": ("margin_ranking_loss", [a[0], b[0], np.array([1.0, -1, -1, 1])], dict(margin=0.2), {}),
        "triplet": ("triplet_margin_loss", [a, b, c], dict(p=3, swap=True, margin=0.8), {}),
        "soft_margin": ("soft_margin_loss", [a, np.sign(b)], {}, {}),
        "hinge": ("hinge_embedding_loss", [a, np.sign(b)], dict(margin=0.4), {}),
        "multilabel": ("multilabel_soft_margin_loss", [a, (b > 0) * 1.0], {}, dict(weight=W34[0])),
    }


ORACLE = _oracle_cases()


@pytest.mark.parametrize("name", ORACLE)
def test_against_torch(name):
    torch = pytest.importorskip("torch")
    fname, arrays, kwargs, kw_arrays = ORACLE[name]
    for reduction in REDUCTIONS:
        kw = dict(kwargs)
        if fname != "kl_div" or reduction != "mean":
            kw["reduction"] = kw.get("reduction", reduction) if fname == "kl_div" else reduction
        # gradients for the first input only (PyTorch has none for some targets)
        lx = [T(arrays[0]).requires_grad_()] + [T(a) for a in arrays[1:]]
        tx = [torch.tensor(arrays[0], requires_grad=True)] + [torch.tensor(a) for a in arrays[1:]]
        lkw = {k: T(np.asarray(v)) for k, v in kw_arrays.items()}
        tkw = {k: torch.tensor(np.asarray(v)) for k, v in kw_arrays.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lout = getattr(F, fname)(*lx, **kw, **lkw)
            tout = getattr(torch.nn.functional, fname)(*tx, **kw, **tkw)
        close(lout, tout.detach().numpy())
        (lgrad,) = lucid.autograd.grad(lout.sum(), [lx[0]])
        (tgrad,) = torch.autograd.grad(tout.sum(), [tx[0]])
        close(lgrad, tgrad.numpy())


def test_ctc_loss_against_torch():
    torch = pytest.importorskip("torch")
    logits = f64(6, 3, 4)
    targets, in_len, tgt_len = np.array([[1, 2, 2], [3, 1, 0], [2, 0, 0]]), [6, 4, 5], [3, 2, 0]
    for reduction in REDUCTIONS:
        lx, tx = T(logits).requires_grad_(), torch.tensor(logits, requires_grad=True)
        lout = F.ctc_loss(lx.log_softmax(2), T(targets), in_len, tgt_len, reduction=reduction)
        tout = torch.nn.functional.ctc_loss(tx.log_softmax(2), torch.tensor(targets), torch.tensor(in_len),
                                            torch.tensor(tgt_len), reduction=reduction)
        close(lout, tout.detach().numpy())
        # gradients of the logits (PyTorch's gradient of log_probs differs by exp(log_probs), which log_softmax's
        # backward removes)
        close(lucid.autograd.grad(lout.sum(), lx), torch.autograd.grad(tout.sum(), tx)[0].numpy())


def test_cross_entropy_is_log_softmax_then_nll_as_in_pytorch():
    x = lucid.randn(4, 3, requires_grad=True)
    loss = F.cross_entropy(x, lucid.tensor([0, 2, 1, 1]))
    assert loss.grad_fn.name() == "NllLossBackward0"
    assert loss.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"
    image = F.cross_entropy(lucid.randn(2, 3, 2, 2, requires_grad=True), lucid.zeros(2, 2, 2, dtype=lucid.int64))
    assert image.grad_fn.name() == "NllLoss2DBackward0"


def test_nll_loss_has_no_weight_derivative():
    w = lucid.ones(3, requires_grad=True)
    loss = F.nll_loss(lucid.randn(2, 3, requires_grad=True), lucid.tensor([0, 1]), w)
    with pytest.raises(RuntimeError, match="derivative for 'nll_loss' with respect to argument 1 is not implemented"):
        lucid.autograd.grad(loss, w)
