"""Basic nn ops (lucid.nn.functional): linear, bilinear, dropouts, embedding, one_hot, scaled_dot_product_attention,
cosine_similarity, pairwise_distance. Forward values against numpy formulas, gradcheck + gradgradcheck in float64,
and PyTorch's semantics (node names, dropout scaling and seeding, embedding accumulation / padding_idx / max_norm,
attention masks) and error messages."""
import math
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from helpers import check_grads, leaf, op_table_tests


def np_softmax(a):
    e = np.exp(a - a.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_attention(q, k, v, bias=None, scale=None):
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(q.shape[-1]) if scale is None else scale)
    return np_softmax(s if bias is None else s + bias) @ v


def np_cosine(a, b, dim=1, eps=1e-8):
    a, b = np.broadcast_arrays(a, b)
    na = np.maximum(np.linalg.norm(a, axis=dim, keepdims=True), eps)
    nb = np.maximum(np.linalg.norm(b, axis=dim, keepdims=True), eps)
    return np.sum(a / na * (b / nb), axis=dim)


def seeded(fn, seed=0):
    """fn with lucid's generator reset first: the same dropout mask on every call."""
    def run(*args):
        lucid.manual_seed(seed)
        return fn(*args)
    return run


IDX = lucid.tensor([[0, 2, 2], [4, 0, 2]])
CAUSAL = np.where(np.tril(np.ones((3, 4), bool)), 0.0, -np.inf)
BOOL_MASK = np.array([[True, False, True, True], [False, True, True, False], [True, True, True, True]])
FLOAT_MASK = np.random.default_rng(7).uniform(-1, 1, (2, 1, 3, 4))

# (name, fn(*tensors), numpy fn(*arrays), input shapes)
OPS = [
    ("linear_2d_bias", F.linear, lambda x, w, b: x @ w.T + b, [(3, 4), (5, 4), (5,)]),
    ("linear_2d", F.linear, lambda x, w: x @ w.T, [(3, 4), (5, 4)]),
    ("linear_2d_broadcast_bias", F.linear, lambda x, w, b: x @ w.T + b, [(3, 4), (5, 4), (1, 5)]),
    ("linear_3d_bias", F.linear, lambda x, w, b: x @ w.T + b, [(2, 3, 4), (5, 4), (5,)]),
    ("linear_1d_bias", F.linear, lambda x, w, b: x @ w.T + b, [(4,), (2, 4), (2,)]),
    ("bilinear", F.bilinear, lambda x1, x2, w, b: np.einsum("ni,oij,nj->no", x1, w, x2) + b,
     [(3, 2), (3, 4), (5, 2, 4), (5,)]),
    ("bilinear_3d_nobias", F.bilinear, lambda x1, x2, w: np.einsum("abi,oij,abj->abo", x1, w, x2),
     [(2, 2, 3), (2, 2, 2), (2, 3, 2)]),
    ("embedding", lambda w: F.embedding(IDX, w), lambda w: w[IDX.numpy()], [(5, 3)]),
    ("embedding_3d_index", lambda w: F.embedding(IDX.reshape(1, 2, 3), w), lambda w: w[IDX.numpy()][None], [(5, 3)]),
    ("sdpa", F.scaled_dot_product_attention, np_attention, [(2, 3, 4), (2, 4, 4), (2, 4, 2)]),
    ("sdpa_causal", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     lambda q, k, v: np_attention(q, k, v, CAUSAL), [(1, 2, 3, 2), (1, 2, 4, 2), (1, 2, 4, 3)]),
    ("sdpa_bool_mask_scale", lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, lucid.tensor(BOOL_MASK), scale=0.7),
     lambda q, k, v: np_attention(q, k, v, np.where(BOOL_MASK, 0.0, -np.inf), 0.7), [(2, 3, 2), (2, 4, 2), (2, 4, 2)]),
    ("sdpa_float_mask", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m),
     np_attention, [(2, 2, 3, 2), (2, 2, 4, 2), (2, 2, 4, 2), (2, 1, 3, 4)]),
    ("sdpa_gqa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
     lambda q, k, v: np_attention(q, np.repeat(k, 2, -3), np.repeat(v, 2, -3)), [(1, 4, 2, 2), (1, 2, 3, 2),
                                                                               (1, 2, 3, 2)]),
    ("cosine_similarity", F.cosine_similarity, np_cosine, [(3, 4), (3, 4)]),
    ("cosine_similarity_broadcast_dim0", lambda a, b: F.cosine_similarity(a, b, 0),
     lambda a, b: np_cosine(a, b, 0), [(3, 1), (3, 4)]),
    ("cosine_similarity_last", lambda a, b: F.cosine_similarity(a, b, dim=-1), lambda a, b: np_cosine(a, b, -1),
     [(2, 2, 3), (2, 3)]),
    ("pairwise_distance", F.pairwise_distance, lambda a, b: np.linalg.norm(a - b + 1e-6, axis=-1),
     [(3, 4), (3, 4)]),
    ("pairwise_distance_p1_keepdim", lambda a, b: F.pairwise_distance(a, b, 1, keepdim=True),
     lambda a, b: np.abs(a - b + 1e-6).sum(-1, keepdims=True), [(2, 3), (3,)]),
    ("pairwise_distance_p3", lambda a, b: F.pairwise_distance(a, b, p=3.0, eps=0.1),
     lambda a, b: (np.abs(a - b + 0.1) ** 3).sum(-1) ** (1 / 3), [(4,), (4,)]),
]
test_forward_matches_numpy, test_gradients = op_table_tests(OPS)


# ---------------------------------------------------------------------------------------------------- linear
@pytest.mark.parametrize("shape, bias, name", [((3, 4), True, "AddmmBackward0"), ((3, 4), False, "MmBackward0"),
                                               ((2, 3, 4), True, "ViewBackward0")])
def test_linear_node_names(shape, bias, name):
    out = F.linear(leaf(*shape), leaf(5, 4), leaf(5) if bias else None)
    assert type(out.grad_fn).__name__ == name


def test_linear_weight_is_out_by_in_and_errors_name_the_product():
    x, w = leaf(3, 4), leaf(5, 4)
    assert F.linear(x, w).shape == (3, 5)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(3x4 and 3x5\)"):
        F.linear(x, leaf(5, 3), leaf(5))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(6x4 and 3x5\)"):
        F.linear(leaf(2, 3, 4), leaf(5, 3))


def test_linear_float32_and_batched_weight_gradient():
    x, w = lucid.randn(4, 3, 6, requires_grad=True), lucid.randn(2, 6, requires_grad=True)
    F.linear(x, w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.broadcast_to(x.detach().numpy().sum((0, 1)), (2, 6)), rtol=1e-5)


def test_bilinear_errors():
    with pytest.raises(RuntimeError, match="bilinear\\(\\): input dimensions do not match: got 2 and 1"):
        F.bilinear(leaf(2, 3), leaf(4), leaf(5, 3, 4))
    with pytest.raises(RuntimeError, match="input batch dimensions do not match: got 2 and 3"):
        F.bilinear(leaf(2, 3), leaf(3, 4), leaf(5, 3, 4))
    with pytest.raises(RuntimeError, match="input1 size does not match weight size: got 3 but expected 2"):
        F.bilinear(leaf(2, 3), leaf(2, 4), leaf(5, 2, 4))
    with pytest.raises(RuntimeError, match="input2 size does not match weight size: got 4 but expected 3"):
        F.bilinear(leaf(2, 3), leaf(2, 4), leaf(5, 3, 3))
    with pytest.raises(RuntimeError, match="bias size does not match weight size: got 4 but expected 5"):
        F.bilinear(leaf(2, 3), leaf(2, 4), leaf(5, 3, 4), leaf(4))


# ---------------------------------------------------------------------------------------------------- dropout
def test_dropout_statistics_and_scaling():
    lucid.manual_seed(0)
    out = F.dropout(lucid.ones(200, 500), p=0.3).numpy()
    np.testing.assert_allclose(np.unique(out), [0.0, 1 / 0.7], rtol=1e-6)
    assert abs((out == 0).mean() - 0.3) < 0.01  # 1e5 draws: the standard error is 0.0015
    assert abs(out.mean() - 1.0) < 0.02


def test_dropout_is_reproducible_under_manual_seed():
    x = lucid.randn(50, 40)
    lucid.manual_seed(123)
    a = F.dropout(x).numpy()
    b = F.dropout(x).numpy()
    lucid.manual_seed(123)
    assert np.array_equal(F.dropout(x).numpy(), a) and not np.array_equal(a, b)


def test_dropout_identity_cases_return_the_input():
    x = leaf(3, 4)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert F.dropout2d(leaf(2, 3, 2, 2), training=False).shape == (2, 3, 2, 2)
    assert F.alpha_dropout(x, 0.5) is x  # PyTorch's default: training=False


def test_dropout_p1_gives_zeros_with_a_zero_gradient():
    x = leaf(3, 4)
    out = F.dropout(x, 1.0)
    assert out.detach().numpy().tolist() == np.zeros((3, 4)).tolist()
    out.sum().backward()
    assert x.grad.numpy().tolist() == np.zeros((3, 4)).tolist()


@pytest.mark.parametrize("fn", [F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout,
                                F.feature_alpha_dropout])
@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_probability_out_of_range(fn, p):
    with pytest.raises(ValueError, match=f"dropout probability has to be between 0 and 1, but got {p}"):
        fn(leaf(2, 3, 4, 2, 2), p)


def test_dropout_inplace_writes_the_input():
    x = lucid.ones(40, 50)
    lucid.manual_seed(1)
    out = F.dropout(x, 0.5, inplace=True)
    assert out is x and x._version == 1 and (x.numpy() == 0).any() and set(np.unique(x.numpy())) == {0.0, 2.0}


def test_dropout_gradient_is_the_mask():
    x = leaf(4, 5)
    out = seeded(lambda t: F.dropout(t, 0.4))(x)
    out.backward(lucid.ones(4, 5, dtype=lucid.float64))
    mask = out.detach().numpy() / x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), mask, rtol=1e-12)
    assert set(np.round(np.unique(mask), 12).tolist()) <= {0.0, round(1 / 0.6, 12)}
    assert type(out.grad_fn).__name__ == "MulBackward0"  # PyTorch's CPU dropout is input * noise too


@pytest.mark.parametrize("fn, shape", [(lambda t: F.dropout(t, 0.4), (3, 4)),
                                       (lambda t: F.dropout2d(t, 0.5), (2, 3, 2, 2)),
                                       (lambda t: F.alpha_dropout(t, 0.3, True), (3, 4)),
                                       (lambda t: F.feature_alpha_dropout(t, 0.3, True), (2, 3, 2))])
def test_dropout_gradcheck_with_a_fixed_mask(fn, shape):
    check_grads(seeded(fn), leaf(*shape))


@pytest.mark.parametrize("fn, shape, channel_dims", [(F.dropout1d, (4, 6, 8), 2), (F.dropout1d, (6, 8), 1),
                                                     (F.dropout2d, (4, 6, 3, 3), 2), (F.dropout3d, (2, 6, 2, 2, 2), 2),
                                                     (F.dropout3d, (6, 2, 2, 3), 1),
                                                     (lambda t, p: F.feature_alpha_dropout(t, p, True), (4, 6, 5), 2)])
def test_channel_dropout_zeros_whole_channels(fn, shape, channel_dims):
    lucid.manual_seed(3)
    out = fn(lucid.ones(*shape), 0.5).numpy()
    per_channel = out.reshape(shape[:channel_dims] + (-1,))
    assert (per_channel == per_channel[..., :1]).all()  # one draw per channel
    assert len(np.unique(per_channel[..., 0])) == 2


def test_channel_dropout_dims():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"):
        F.dropout1d(leaf(2, 3, 4, 5))
    with pytest.warns(UserWarning, match="dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                                         "1D dropout behavior is desired"):
        F.dropout2d(leaf(2, 3, 4))
    with pytest.warns(UserWarning, match="dropout3d: Received a 3-D input to dropout3d, which is deprecated"):
        F.dropout3d(leaf(2, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.dropout2d(leaf(2, 3, 4, 4))


def test_alpha_dropout_keeps_mean_and_variance():
    lucid.manual_seed(0)
    x = lucid.randn(400, 500, dtype=lucid.float64)
    out = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(out.mean()) < 0.01 and abs(out.var() - 1.0) < 0.02
    alpha, p = 1.7580993408473766, 0.2
    a = 1 / math.sqrt((alpha ** 2 * p + 1) * (1 - p))
    dropped = np.isclose(out, alpha * a * (p - 1))  # selu's saturation -alpha, mapped by a * v + alpha * a * p
    assert abs(dropped.mean() - p) < 0.01
    kept = ~dropped
    np.testing.assert_allclose(out[kept], x.numpy()[kept] * a + alpha * a * p, rtol=1e-12)


def test_sdpa_dropout_drops_attention_weights():
    q, k = leaf(1, 3, 2), leaf(1, 4, 2, seed=1)
    v = lucid.eye(4, dtype=lucid.float64).reshape(1, 4, 4)  # the output is the attention matrix itself
    lucid.manual_seed(5)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.5).detach().numpy()
    full = np_attention(q.detach().numpy(), k.detach().numpy(), v.numpy())
    kept = out != 0
    assert kept.any() and not kept.all()
    np.testing.assert_allclose(out[kept], full[kept] * 2, rtol=1e-12)
    check_grads(seeded(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, dropout_p=0.5)),
                q, k, leaf(1, 4, 2, seed=2))


# ---------------------------------------------------------------------------------------------------- embedding
def test_embedding_repeated_indices_accumulate_and_padding_row_gets_none():
    w = leaf(5, 3)
    out = F.embedding(lucid.tensor([[0, 2, 2], [4, 2, 1]]), w, padding_idx=1)
    assert type(out.grad_fn).__name__ == "EmbeddingBackward0"
    np.testing.assert_array_equal(out.detach().numpy()[1, 2], w.detach().numpy()[1])  # the forward keeps the row
    out.backward(lucid.ones(2, 3, 3, dtype=lucid.float64))
    assert w.grad.dtype == lucid.float64
    np.testing.assert_array_equal(w.grad.numpy(), [[1] * 3, [0] * 3, [3] * 3, [0] * 3, [1] * 3])


def test_embedding_negative_padding_idx_and_freq_scaling():
    w = leaf(4, 2)
    out = F.embedding(lucid.tensor([3, 0, 0, 0, 2, 2]), w, padding_idx=-1, scale_grad_by_freq=True)
    out.backward(lucid.ones(6, 2, dtype=lucid.float64))
    np.testing.assert_allclose(w.grad.numpy(), [[1, 1], [0, 0], [1, 1], [0, 0]], rtol=1e-12)


def test_embedding_max_norm_renormalizes_used_rows_in_place():
    a = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0], [1.0, 0.0]])
    w = lucid.tensor(a, dtype=lucid.float64, requires_grad=True)
    out = F.embedding(lucid.tensor([[0, 1], [0, 3]]), w, max_norm=2.0)
    expected = a.copy()
    expected[0] *= 2.0 / (5.0 + 1e-7)  # used and over the limit; row 2 is over it but unused
    np.testing.assert_allclose(w.detach().numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(out.detach().numpy(), expected[[[0, 1], [0, 3]]], rtol=1e-12)
    assert w.is_leaf and w._version == 1
    out.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [[2, 2], [1, 1], [0, 0], [1, 1]])
    w1 = lucid.tensor(a, dtype=lucid.float64)
    F.embedding(lucid.tensor([2]), w1, max_norm=4.0, norm_type=1.0)
    np.testing.assert_allclose(w1.numpy()[2], a[2] * 4.0 / (14.0 + 1e-7), rtol=1e-12)


def test_embedding_of_a_scalar_index_and_int32_indices():
    w = leaf(3, 2)
    np.testing.assert_array_equal(F.embedding(lucid.tensor(1), w).detach().numpy(), w.detach().numpy()[1])
    idx = lucid.tensor([2, 0], dtype=lucid.int32)
    np.testing.assert_array_equal(F.embedding(idx, w).detach().numpy(), w.detach().numpy()[[2, 0]])


def test_embedding_backward_is_differentiable_again():
    w = leaf(4, 2)
    idx = lucid.tensor([1, 1, 3])
    g = leaf(3, 2, seed=4)
    gw = lucid.autograd.grad(F.embedding(idx, w, padding_idx=3), w, g, create_graph=True)
    np.testing.assert_allclose(gw.detach().numpy(), [[0, 0], g.detach().numpy()[:2].sum(0), [0, 0], [0, 0]])
    check_grads(lambda t: lucid.autograd.grad(F.embedding(idx, w, padding_idx=3), w, t, create_graph=True), g)


def test_embedding_errors():
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have one of the following "
                                           "scalar types: Long, Int; but got float32"):
        F.embedding(lucid.tensor([0.0, 1.0]), leaf(3, 2))
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(lucid.tensor([0]), leaf(3, 2), padding_idx=3)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(lucid.tensor([0]), leaf(3, 2), padding_idx=-4)
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        F.embedding(lucid.tensor([0]), leaf(3))


# ---------------------------------------------------------------------------------------------------- one_hot
def test_one_hot():
    out = F.one_hot(lucid.tensor([[0, 3], [1, 1]]))
    assert out.dtype == lucid.int64 and out.shape == (2, 2, 4) and not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), np.eye(4, dtype=np.int64)[[[0, 3], [1, 1]]])
    np.testing.assert_array_equal(F.one_hot(lucid.tensor([2, 0]), num_classes=5).numpy(),
                                  np.eye(5, dtype=np.int64)[[2, 0]])
    assert F.one_hot(lucid.tensor(2), 3).tolist() == [0, 0, 1]
    assert F.one_hot(lucid.zeros(0, dtype=lucid.int64), 3).shape == (0, 3)


def test_one_hot_errors():
    with pytest.raises(RuntimeError, match="one_hot is only applicable to index tensor of type LongTensor."):
        F.one_hot(lucid.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        F.one_hot(lucid.tensor([1, -1]))
    with pytest.raises(RuntimeError, match="Can not infer total number of classes from empty tensor."):
        F.one_hot(lucid.zeros(0, dtype=lucid.int64))


# ---------------------------------------------------------------------------------------------------- attention
def test_sdpa_row_with_nothing_taking_part_gives_zeros_and_finite_gradients():
    mask = lucid.tensor([[True, True], [False, False], [True, False]])
    q, k, v = leaf(3, 2), leaf(2, 2, seed=1), leaf(2, 2, seed=2)
    out = F.scaled_dot_product_attention(q, k, v, mask)
    assert out.detach().numpy()[1].tolist() == [0.0, 0.0]
    np.testing.assert_allclose(out.detach().numpy()[2], v.detach().numpy()[0], rtol=1e-12)
    out.sum().backward()
    assert all(np.isfinite(t.grad.numpy()).all() for t in (q, k, v))
    float_mask = lucid.tensor([[0.0, -math.inf], [-math.inf, -math.inf], [0.5, 0.0]], dtype=lucid.float64)
    out = F.scaled_dot_product_attention(q, k, v, float_mask).detach().numpy()
    assert out[1].tolist() == [0.0, 0.0] and np.isfinite(out).all()
    check_grads(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, mask), q, k, v)


def test_sdpa_causal_with_longer_source():
    q, k, v = leaf(2, 2), leaf(3, 2, seed=1), leaf(3, 1, seed=2)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True).detach().numpy()
    mask = np.where(np.tril(np.ones((2, 3), bool)), 0.0, -np.inf)  # top-left aligned, as PyTorch
    np.testing.assert_allclose(out, np_attention(q.detach().numpy(), k.detach().numpy(), v.detach().numpy(), mask))
    np.testing.assert_allclose(out[0], v.detach().numpy()[0], rtol=1e-12)


def test_sdpa_float32_mask_with_float64_query():
    q, k = leaf(2, 3, 2), leaf(2, 4, 2, seed=1)
    m = lucid.tensor(FLOAT_MASK[0, 0], dtype=lucid.float32)
    out = F.scaled_dot_product_attention(q, k, k, m)
    a, b = q.detach().numpy(), k.detach().numpy()
    assert out.dtype == lucid.float64
    np.testing.assert_allclose(out.detach().numpy(), np_attention(a, b, b, m.numpy().astype(np.float64)), rtol=1e-10)


def test_sdpa_errors():
    q = leaf(1, 3, 2)
    with pytest.raises(RuntimeError, match="_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                                           "is_causal=True"):
        F.scaled_dot_product_attention(q, q, q, lucid.ones(3, 3, dtype=lucid.bool), is_causal=True)
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same dtype, but got "
                                           "query.dtype: float64 key.dtype: float32 and value.dtype: float64"):
        F.scaled_dot_product_attention(q, q.float(), q)
    with pytest.raises(RuntimeError, match="Expected attn_mask dtype to be bool or float or to match query dtype, but "
                                           "got attn_mask.dtype: int64"):
        F.scaled_dot_product_attention(q, q, q, lucid.ones(3, 3, dtype=lucid.int64))
    with pytest.raises(RuntimeError, match="Expected query, key, and value to all be  at least 2 dimensional"):
        F.scaled_dot_product_attention(leaf(2), leaf(2), leaf(2))
    with pytest.raises(RuntimeError, match="Number of heads in key and value must divide the number of heads in"):
        F.scaled_dot_product_attention(leaf(3, 2, 2), leaf(2, 2, 2), leaf(2, 2, 2), enable_gqa=True)


# ---------------------------------------------------------------------------------------------------- similarity
def test_cosine_similarity_of_zero_vectors_is_zero_and_clamps_only_the_value():
    x1 = lucid.tensor([[0.0, 0.0], [1.0, 2.0]], dtype=lucid.float64, requires_grad=True)
    x2 = lucid.tensor([[1.0, 1.0], [2.0, 4.0]], dtype=lucid.float64)
    out = F.cosine_similarity(x1, x2)
    np.testing.assert_allclose(out.detach().numpy(), [0.0, 1.0], atol=1e-15)
    out.sum().backward()
    # row 0: d/dx1 of (x1 / max(|x1|, eps)) . x2_hat at x1 = 0 is x2_hat / eps (the norm's own gradient is 0 there)
    np.testing.assert_allclose(x1.grad.numpy()[0], np.full(2, 1 / math.sqrt(2) / 1e-8), rtol=1e-10)
    assert F.cosine_similarity(lucid.tensor([[1, 2]]), lucid.tensor([[2, 4]])).dtype == lucid.float32


def test_against_torch():
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    rng = np.random.default_rng(9)
    q, k, v = rng.normal(size=(2, 2, 3, 4)), rng.normal(size=(2, 2, 5, 4)), rng.normal(size=(2, 2, 5, 3))
    w, b = rng.normal(size=(6, 4)), rng.normal(size=6)
    L, T = (lambda a: lucid.tensor(a, dtype=lucid.float64)), torch.tensor
    pairs = [
        (F.scaled_dot_product_attention(L(q), L(k), L(v), is_causal=True),
         tf.scaled_dot_product_attention(T(q), T(k), T(v), is_causal=True)),
        (F.scaled_dot_product_attention(L(q), L(k), L(v), lucid.tensor(BOOL_MASK[:, :1].repeat(5, 1))),
         tf.scaled_dot_product_attention(T(q), T(k), T(v), torch.tensor(BOOL_MASK[:, :1].repeat(5, 1)))),
        (F.linear(L(q), L(w), L(b)), tf.linear(T(q), T(w), T(b))),
        (F.cosine_similarity(L(q), L(k[:, :, :3]), -1), tf.cosine_similarity(T(q), T(k[:, :, :3]), -1)),
        (F.pairwise_distance(L(q), L(k[:, :, :3])), tf.pairwise_distance(T(q), T(k[:, :, :3]))),
    ]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)
