"""Normalization ops (lucid.nn.functional): forward values against numpy formulas, gradcheck + gradgradcheck in
float64, running-statistics updates (momentum, unbiased variance, in place), PyTorch's defaults and errors.

The main table is (name, lucid fn, numpy fn, shapes of the inputs): the first input is the data, the others are
weights and biases; every entry gets a forward test and a first- and second-derivative check in every input."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from helpers import check_grads, leaf, op_table_tests

EPS = 1e-5


# ---------------------------------------------------------------------------------------------------- numpy forms
def np_standardize(a, axes, eps=EPS):
    return (a - a.mean(axes, keepdims=True)) / np.sqrt(a.var(axes, keepdims=True) + eps)


def np_layer_norm(a, w=None, b=None, n=1, eps=EPS):
    y = np_standardize(a, tuple(range(a.ndim - n, a.ndim)), eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def per_channel(v, ndim):
    return v.reshape((-1,) + (1,) * (ndim - 2))


def np_batch_norm(a, w=None, b=None):
    y = np_standardize(a, (0,) + tuple(range(2, a.ndim)))
    return y * (1 if w is None else per_channel(w, a.ndim)) + (0 if b is None else per_channel(b, a.ndim))


def np_instance_norm(a, w=None, b=None):
    y = np_standardize(a, tuple(range(2, a.ndim)))
    return y * (1 if w is None else per_channel(w, a.ndim)) + (0 if b is None else per_channel(b, a.ndim))


def np_group_norm(a, groups, w=None, b=None, eps=EPS):
    y = np_standardize(a.reshape(a.shape[0], groups, -1), (2,), eps).reshape(a.shape)
    return y * (1 if w is None else per_channel(w, a.ndim)) + (0 if b is None else per_channel(b, a.ndim))


def np_rms_norm(a, w=None, n=1, eps=None):
    eps = np.finfo(a.dtype).eps if eps is None else eps
    axes = tuple(range(a.ndim - n, a.ndim))
    return a / np.sqrt((a * a).mean(axes, keepdims=True) + eps) * (1 if w is None else w)


def np_normalize(a, p=2.0, dim=1, eps=1e-12):
    n = np.sum(np.abs(a) ** p, axis=dim, keepdims=True) ** (1 / p)
    return a / np.maximum(n, eps)


def np_lrn(a, size, alpha=1e-4, beta=0.75, k=1.0):
    c = a.shape[1]
    sq = a * a
    div = np.zeros_like(a)
    for i in range(c):  # the window of channels centred on i: [i - size // 2, i + (size - 1) // 2]
        lo, hi = max(0, i - size // 2), min(c, i + (size - 1) // 2 + 1)
        div[:, i] = sq[:, lo:hi].sum(1)
    return a / (k + alpha * div / size) ** beta


# (name, fn(*tensors), numpy fn(*arrays), input shapes)
OPS = [
    ("layer_norm", lambda x: F.layer_norm(x, (4,)), np_layer_norm, [(3, 4)]),
    ("layer_norm_affine", lambda x, w, b: F.layer_norm(x, [4], w, b), np_layer_norm, [(2, 3, 4), (4,), (4,)]),
    ("layer_norm_2d_shape", lambda x, w, b: F.layer_norm(x, (3, 4), w, b, eps=1e-3),
     lambda a, w, b: np_layer_norm(a, w, b, n=2, eps=1e-3), [(2, 3, 4), (3, 4), (3, 4)]),
    ("layer_norm_weight_only", lambda x, w: F.layer_norm(x, 3, weight=w), np_layer_norm, [(2, 3), (3,)]),
    ("batch_norm_train_2d", lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), np_batch_norm,
     [(4, 3), (3,), (3,)]),
    ("batch_norm_train_4d", lambda x, w, b: F.batch_norm(x, None, None, w, b, True), np_batch_norm,
     [(2, 3, 2, 2), (3,), (3,)]),
    ("batch_norm_train_3d", lambda x: F.batch_norm(x, None, None, training=True), np_batch_norm, [(2, 2, 3)]),
    ("instance_norm", lambda x, w, b: F.instance_norm(x, weight=w, bias=b), np_instance_norm, [(2, 3, 4), (3,), (3,)]),
    ("instance_norm_4d", lambda x: F.instance_norm(x), np_instance_norm, [(2, 2, 2, 3)]),
    ("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), lambda a, w, b: np_group_norm(a, 2, w, b),
     [(2, 4, 3), (4,), (4,)]),
    ("group_norm_4d_one_group", lambda x: F.group_norm(x, 1), lambda a: np_group_norm(a, 1), [(2, 3, 2, 2)]),
    ("group_norm_per_channel", lambda x: F.group_norm(x, 3, eps=1e-3), lambda a: np_group_norm(a, 3, eps=1e-3),
     [(2, 3, 4)]),
    ("rms_norm", lambda x: F.rms_norm(x, [4]), np_rms_norm, [(3, 4)]),
    ("rms_norm_weight_eps", lambda x, w: F.rms_norm(x, (2, 3), w, eps=1e-2),
     lambda a, w: np_rms_norm(a, w, n=2, eps=1e-2), [(2, 2, 3), (2, 3)]),
    ("normalize", lambda x: F.normalize(x), np_normalize, [(3, 4)]),
    ("normalize_p1_dim0", lambda x: F.normalize(x, p=1, dim=0), lambda a: np_normalize(a, 1, 0), [(3, 4)]),
    ("normalize_p3_last", lambda x: F.normalize(x, 3.0, -1), lambda a: np_normalize(a, 3, -1), [(2, 2, 3)]),
    ("local_response_norm_3d", lambda x: F.local_response_norm(x, 3, alpha=0.5, k=2.0),
     lambda a: np_lrn(a, 3, alpha=0.5, k=2.0), [(2, 4, 3)]),
    ("local_response_norm_4d_even", lambda x: F.local_response_norm(x, 2, 0.3, 0.5, 1.5),
     lambda a: np_lrn(a, 2, 0.3, 0.5, 1.5), [(1, 5, 2, 2)]),
    ("local_response_norm_size1", lambda x: F.local_response_norm(x, 1, 1.0), lambda a: np_lrn(a, 1, 1.0),
     [(2, 3, 2)]),
]
test_forward_matches_numpy, test_gradients = op_table_tests(OPS)


def test_float32_forward():
    a = np.random.default_rng(0).uniform(-2, 2, (4, 3, 5)).astype(np.float32)
    x = lucid.tensor(a)
    np.testing.assert_allclose(F.layer_norm(x, (5,)).numpy(), np_layer_norm(a), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(F.batch_norm(x, None, None, training=True).numpy(), np_batch_norm(a), rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(F.group_norm(x, 3).numpy(), np_group_norm(a, 3), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(F.rms_norm(x, (5,)).numpy(), np_rms_norm(a), rtol=1e-5)
    assert F.layer_norm(x, (5,)).dtype == lucid.float32


# ---------------------------------------------------------------------------------------------------- batch_norm
def test_batch_norm_training_updates_running_stats_in_place():
    a = np.random.default_rng(1).uniform(-2, 2, (4, 3, 5))
    rm0, rv0 = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 0.5])
    rm, rv = lucid.tensor(rm0, dtype=lucid.float64), lucid.tensor(rv0, dtype=lucid.float64)
    x = lucid.tensor(a, dtype=lucid.float64, requires_grad=True)
    out = F.batch_norm(x, rm, rv, training=True, momentum=0.3)
    np.testing.assert_allclose(out.detach().numpy(), np_batch_norm(a), rtol=1e-10)  # batch stats, biased var
    np.testing.assert_allclose(rm.numpy(), 0.7 * rm0 + 0.3 * a.mean((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.7 * rv0 + 0.3 * a.var((0, 2), ddof=1), rtol=1e-12)  # unbiased
    assert rm._version == 2 and not rm.requires_grad and rm.grad_fn is None
    out.sum().backward()  # the running stats are not in the graph
    assert x.grad is not None


def test_batch_norm_running_stats_keep_their_dtype():
    rm, rv = lucid.zeros(2), lucid.ones(2)
    F.batch_norm(leaf(3, 2, requires_grad=False), rm, rv, training=True)
    assert rm.dtype == rv.dtype == lucid.float32


def test_batch_norm_eval_uses_running_stats():
    a = np.random.default_rng(2).uniform(-2, 2, (2, 3, 4))
    rm0, rv0 = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 0.5])
    w, b = np.array([1.0, 2.0, -1.0]), np.array([0.0, 0.5, 1.0])
    rm, rv = lucid.tensor(rm0, dtype=lucid.float64), lucid.tensor(rv0, dtype=lucid.float64)
    x = lucid.tensor(a, dtype=lucid.float64)
    out = F.batch_norm(x, rm, rv, lucid.tensor(w, dtype=lucid.float64), lucid.tensor(b, dtype=lucid.float64),
                       eps=1e-3)
    c = (slice(None), None)
    np.testing.assert_allclose(out.numpy(), (a - rm0[c]) / np.sqrt(rv0[c] + 1e-3) * w[c] + b[c], rtol=1e-12)
    assert rm.numpy().tolist() == rm0.tolist() and rm._version == 0  # untouched
    check_grads(lambda t, wt: F.batch_norm(t, rm, rv, wt, None), leaf(2, 3, 2), leaf(3, seed=1))


def test_batch_norm_training_one_value_per_channel_is_an_error():
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when training, got input size"):
        F.batch_norm(leaf(1, 3), None, None, training=True)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.batch_norm(leaf(1, 3, 1, 1), None, None, training=True)
    F.batch_norm(leaf(1, 3), lucid.zeros(3), lucid.ones(3))  # fine in evaluation


def test_batch_norm_errors():
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        F.batch_norm(leaf(2, 3), None, lucid.ones(3))
    with pytest.raises(RuntimeError, match="running_var must be defined in evaluation mode"):
        F.batch_norm(leaf(2, 3), lucid.zeros(3), None)
    with pytest.raises(RuntimeError, match="running_mean should contain 3 elements not 4"):
        F.batch_norm(leaf(2, 3), lucid.zeros(4), lucid.ones(3))
    with pytest.raises(RuntimeError, match="weight should contain 3 elements not 2"):
        F.batch_norm(leaf(2, 3), None, None, lucid.ones(2), training=True)


# ---------------------------------------------------------------------------------------------------- instance_norm
def test_instance_norm_running_stats_average_over_the_batch():
    a = np.random.default_rng(3).uniform(-2, 2, (3, 2, 5))
    rm, rv = lucid.zeros(2, dtype=lucid.float64), lucid.ones(2, dtype=lucid.float64)
    out = F.instance_norm(lucid.tensor(a, dtype=lucid.float64), rm, rv, momentum=0.2)
    np.testing.assert_allclose(out.numpy(), np_instance_norm(a), rtol=1e-10)
    np.testing.assert_allclose(rm.numpy(), 0.2 * a.mean(2).mean(0), rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.8 + 0.2 * a.var(2, ddof=1).mean(0), rtol=1e-12)


def test_instance_norm_with_running_stats_instead_of_input_stats():
    a = np.random.default_rng(4).uniform(-2, 2, (2, 2, 3))
    rm, rv = lucid.tensor([0.5, -0.5], dtype=lucid.float64), lucid.tensor([2.0, 0.5], dtype=lucid.float64)
    out = F.instance_norm(lucid.tensor(a, dtype=lucid.float64), rm, rv, use_input_stats=False)
    np.testing.assert_allclose(out.numpy(), (a - rm.numpy()[:, None]) / np.sqrt(rv.numpy()[:, None] + EPS))
    with pytest.raises(RuntimeError, match="Expected running_mean and running_var to be defined when "
                                           "use_input_stats is false"):
        F.instance_norm(leaf(2, 2, 3), use_input_stats=False)


def test_instance_norm_needs_more_than_one_spatial_element():
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training, got input size"):
        F.instance_norm(leaf(2, 3, 1))


# ---------------------------------------------------------------------------------------------------- layer/rms/group
def test_layer_norm_shape_errors():
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], but "
                                           r"got input of size\[2, 3\]"):
        F.layer_norm(leaf(2, 3), (4,))
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[2, 3\], expected input with shape "
                                           r"\[\*, 2, 3\], but got input of size\[3\]"):
        F.layer_norm(leaf(3), (2, 3))
    with pytest.raises(RuntimeError, match=r"Expected weight to be of same shape as normalized_shape, but got weight "
                                           r"of shape \[2\] and normalized_shape = \[3\]"):
        F.layer_norm(leaf(2, 3), (3,), leaf(2))
    with pytest.raises(RuntimeError, match=r"Expected bias to be of same shape as normalized_shape"):
        F.layer_norm(leaf(2, 3), (3,), None, leaf(3, 1))
    with pytest.raises(RuntimeError, match="Given normalized_shape"):
        F.rms_norm(leaf(2, 3), 2)


def test_layer_norm_output_has_zero_mean_unit_variance():
    out = F.layer_norm(leaf(5, 64, low=-3, high=7), [64], eps=0.0)
    np.testing.assert_allclose(out.detach().numpy().mean(1), 0, atol=1e-12)
    np.testing.assert_allclose(out.detach().numpy().var(1), 1, rtol=1e-12)


def test_rms_norm_default_eps_is_the_dtype_epsilon():
    a = np.full((2, 3), 1e-5)  # mean square 1e-10: eps = 1.19e-7 (float32) matters, 2.2e-16 (float64) hardly
    out64 = F.rms_norm(lucid.tensor(a, dtype=lucid.float64), (3,)).numpy()
    out32 = F.rms_norm(lucid.tensor(a, dtype=lucid.float32), (3,)).numpy()
    np.testing.assert_allclose(out64, a / np.sqrt(1e-10 + np.finfo(np.float64).eps), rtol=1e-12)
    np.testing.assert_allclose(out32, a / np.sqrt(1e-10 + np.finfo(np.float32).eps), rtol=1e-5)


@pytest.mark.parametrize("dtype", [lucid.float16, lucid.bfloat16])
def test_half_inputs_compute_in_float32_and_return_their_dtype(dtype):
    a = np.random.default_rng(6).uniform(100, 101, (4, 2, 6))  # a large mean: float16 sums would lose the spread
    x = lucid.tensor(a, dtype=dtype)
    a = x.float().numpy().astype(np.float64)
    cases = [(F.rms_norm(x, (6,)), np_rms_norm(a.astype(np.float32))),
             (F.layer_norm(x, (6,)), np_layer_norm(a)),
             (F.group_norm(x, 1), np_group_norm(a, 1)),
             (F.batch_norm(x, None, None, training=True), np_batch_norm(a))]
    for out, expected in cases:
        assert out.dtype == dtype
        np.testing.assert_allclose(out.float().numpy(), expected, rtol=1e-2, atol=2e-2)


def test_group_norm_errors():
    with pytest.raises(RuntimeError, match=r"Expected number of channels in input to be divisible by num_groups, but "
                                           r"got input of shape \[2, 5, 3\] and num_groups=2"):
        F.group_norm(leaf(2, 5, 3), 2)
    with pytest.raises(RuntimeError, match="Expected at least 2 dimensions for input tensor but received 1"):
        F.group_norm(leaf(4), 2)
    with pytest.raises(RuntimeError, match=r"Expected weight to be a vector of size equal to the number of channels "
                                           r"in input, but got weight of shape \[3\] and input of shape \[2, 4, 3\]"):
        F.group_norm(leaf(2, 4, 3), 2, leaf(3))


# ---------------------------------------------------------------------------------------------------- normalize, lrn
def test_normalize_clamps_small_norms_to_eps():
    x = lucid.tensor([[0.0, 0.0], [3.0, 4.0], [1e-14, 0.0]], dtype=lucid.float64, requires_grad=True)
    out = F.normalize(x, dim=1)
    np.testing.assert_allclose(out.detach().numpy(), [[0, 0], [0.6, 0.8], [1e-2, 0]], rtol=1e-12)
    out.sum().backward()  # below eps the norm is a constant: the gradient is 1 / eps
    np.testing.assert_allclose(x.grad.numpy()[[0, 2]], np.full((2, 2), 1e12), rtol=1e-12)


def test_local_response_norm_needs_3d_input():
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality input \(got 2 dimensions\)"):
        F.local_response_norm(leaf(2, 3), 2)


# ---------------------------------------------------------------------------------------------------- torch oracle
def test_against_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    a = np.random.default_rng(5).uniform(-2, 2, (2, 4, 3))
    w, b = np.linspace(0.5, 2, 4), np.linspace(-1, 1, 4)
    x, ta = lucid.tensor(a, dtype=lucid.float64), torch.tensor(a)
    lw, lb, tw, tb = (lucid.tensor(w, dtype=lucid.float64), lucid.tensor(b, dtype=lucid.float64),
                      torch.tensor(w), torch.tensor(b))
    pairs = [
        (F.group_norm(x, 2, lw, lb), tf.group_norm(ta, 2, tw, tb)),
        (F.instance_norm(x, weight=lw, bias=lb), tf.instance_norm(ta, weight=tw, bias=tb)),
        (F.batch_norm(x, None, None, lw, lb, True), tf.batch_norm(ta, None, None, tw, tb, True)),
        (F.layer_norm(x, (4, 3)), tf.layer_norm(ta, (4, 3))),
        (F.rms_norm(x, (3,)), tf.rms_norm(ta, (3,))),
        (F.normalize(x, 1.5, 2), tf.normalize(ta, 1.5, 2)),
        (F.local_response_norm(x, 3), tf.local_response_norm(ta, 3)),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("dtype, tol", [(lucid.float32, 1e-4), (lucid.float16, 2e-2)])
def test_layer_norm_fused_path_matches_float64(dtype, tol):
    """float32 and half inputs take MLX's fused kernel forward; value and gradients against the float64 path."""
    rng = np.random.default_rng(3)
    a, w, b, g = (rng.uniform(-2, 2, s) for s in ((3, 2, 5), (2, 5), (2, 5), (3, 2, 5)))
    results = []
    for dt in (lucid.float64, dtype):
        x, wt, bt = (lucid.tensor(v, dtype=dt, requires_grad=True) for v in (a, w, b))
        out = F.layer_norm(x, (2, 5), wt, bt)
        assert out.dtype == dt and out.grad_fn.name() == "NativeLayerNormBackward0"
        out.backward(lucid.tensor(g, dtype=dt))
        results.append([t.to(lucid.float64).numpy() for t in (out.detach(), x.grad, wt.grad, bt.grad)])
    for exact, fused in zip(*results):
        np.testing.assert_allclose(fused, exact, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------------------------------- batch_norm: one op
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 2), (3, 3, 2, 2)], ids=["1d", "2d", "3d"])
def test_batch_norm_is_one_op_with_exact_derivatives(training, shape):
    """One recorded node (PyTorch's NativeBatchNormBackward0) in both modes; its closed-form VJP is made of lucid
    ops, so gradcheck and gradgradcheck hold in float64 for the input, weight and bias."""
    rm, rv = lucid.tensor(np.linspace(-0.5, 0.5, 3)), lucid.tensor(np.linspace(0.5, 2, 3))
    x, w, b = leaf(*shape), leaf(3, seed=1, low=0.5, high=2), leaf(3, seed=2)
    out = F.batch_norm(x, rm.clone(), rv.clone(), w, b, training)
    assert out.grad_fn.name() == "NativeBatchNormBackward0"
    assert [type(e[0]).__name__ for e in out.grad_fn.next_functions if e[0] is not None] == ["AccumulateGrad"] * 3
    check_grads(lambda t, wt, bt: F.batch_norm(t, rm.clone(), rv.clone(), wt, bt, training), x, w, b)
    check_grads(lambda t: F.batch_norm(t, rm.clone(), rv.clone(), None, None, training), x)


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("affine", [True, False], ids=["affine", "plain"])
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 5), (2, 4, 3, 3)], ids=["1d", "2d", "3d"])
def test_batch_norm_values_grads_and_running_stats_match_torch(training, affine, shape):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    a, g = rng.uniform(-2, 3, shape), rng.uniform(-1, 1, shape)
    w, b = rng.uniform(0.5, 2, 4), rng.uniform(-1, 1, 4)
    rm0, rv0 = rng.uniform(-1, 1, 4), rng.uniform(0.5, 2, 4)
    got, want = [], []
    for lib, out_list in ((lucid, got), (torch, want)):
        fn = F if lib is lucid else torch.nn.functional
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        ws = [lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in (w, b)] if affine else [None, None]
        rm, rv = lib.tensor(rm0, dtype=lib.float64), lib.tensor(rv0, dtype=lib.float64)
        out = fn.batch_norm(x, rm, rv, *ws, training, 0.3, 1e-3)
        go = lib.tensor(g, dtype=lib.float64, requires_grad=True)
        grads = (lib.autograd.grad(out, [x] + [t for t in ws if t is not None], go, create_graph=True)
                 if lib is torch else lucid.autograd.grad(out, [x] + [t for t in ws if t is not None], go,
                                                          create_graph=True))
        # a second derivative: of the input gradient's weighted sum, with respect to the input and grad_output
        # (in evaluation the input gradient does not depend on the input: zeros)
        second = lib.autograd.grad((grads[0] * lib.tensor(a, dtype=lib.float64)).sum(), [x, go],
                                   allow_unused=True, materialize_grads=True)
        out_list += [out.detach(), rm, rv, *[t.detach() for t in grads], *second]
    for ours, theirs in zip(got, want):
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-11)


def test_batch_norm_half_input_keeps_its_dtype_with_float32_parameters():
    """As PyTorch: a half input with float32 weight and running statistics (autocast's BatchNorm) gives a half
    output and half input gradient; the statistics are computed in float32."""
    x = lucid.tensor(np.random.default_rng(1).uniform(-2, 2, (4, 3, 5)), dtype=lucid.bfloat16, requires_grad=True)
    w, b = lucid.ones(3, requires_grad=True), lucid.zeros(3, requires_grad=True)
    rm, rv = lucid.zeros(3), lucid.ones(3)
    for training in (True, False):
        out = F.batch_norm(x, rm, rv, w, b, training)
        assert out.dtype == lucid.bfloat16 and rm.dtype == lucid.float32
        gx, gw = lucid.autograd.grad(out.float().sum(), [x, w])
        assert gx.dtype == lucid.bfloat16 and gw.dtype == lucid.float32


def test_batch_norm_running_stats_may_not_require_grad():
    with pytest.raises(RuntimeError, match="not differentiable with respect to argument 'running_mean'"):
        F.batch_norm(leaf(2, 3), lucid.zeros(3, requires_grad=True), lucid.ones(3))
    with lucid.no_grad():
        F.batch_norm(leaf(2, 3), lucid.zeros(3, requires_grad=True), lucid.ones(3))
