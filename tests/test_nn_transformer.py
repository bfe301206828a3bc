"""MultiheadAttention and the Transformer layers: PyTorch's parameter names, shapes and initialisation, forward
against attention written out in numpy (float64; PyTorch's mask conventions), gradients by finite differences, and
PyTorch as an optional oracle."""
import copy
import math
import warnings

import numpy as np
import pytest

import lucid
from lucid import nn
from lucid.nn import functional as F
from tests.helpers import check_grads, leaf

F64 = lucid.float64


def _np(t):
    return t.detach().numpy()


def _params(module, prefix=""):
    return {n[len(prefix):]: _np(p) for n, p in module.named_parameters() if n.startswith(prefix)}


# ---------------------------------------------------------------------------------------------------- numpy reference
def _float_mask(mask):
    return np.where(mask, -np.inf, 0.0) if mask.dtype == bool else mask


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def np_mha(q, k, v, p, num_heads, attn_mask=None, key_padding_mask=None, average=True, add_zero_attn=False):
    """Time-major q (L, N, E), k (S, N, kdim), v (S, N, vdim): (output (L, N, E), weights (N, [H,] L, S'))."""
    length, batch, embed = q.shape
    hd = embed // num_heads
    if "in_proj_weight" in p:
        w_q, w_k, w_v = np.split(p["in_proj_weight"], 3)
    else:
        w_q, w_k, w_v = p["q_proj_weight"], p["k_proj_weight"], p["v_proj_weight"]
    b_q, b_k, b_v = np.split(p["in_proj_bias"], 3) if "in_proj_bias" in p else (0, 0, 0)
    Q, K, V = q @ w_q.T + b_q, k @ w_k.T + b_k, v @ w_v.T + b_v
    add = np.zeros((batch, 1, length, k.shape[0]))  # everything added to the scores, (N, H|1, L, S)
    if attn_mask is not None:
        m = _float_mask(attn_mask)
        add = add + (m.reshape(batch, num_heads, length, -1) if m.ndim == 3 else m)
    if key_padding_mask is not None:
        add = add + _float_mask(key_padding_mask)[:, None, None, :]
    if "bias_k" in p:
        K = np.concatenate([K, np.broadcast_to(p["bias_k"], (1, batch, embed))])
        V = np.concatenate([V, np.broadcast_to(p["bias_v"], (1, batch, embed))])
        add = np.concatenate([add, np.zeros(add.shape[:-1] + (1,))], -1)

    def heads(x):  # (S, N, E) -> (N, H, S, hd)
        return x.reshape(x.shape[0], batch, num_heads, hd).transpose(1, 2, 0, 3)

    Qh, Kh, Vh = heads(Q), heads(K), heads(V)
    if add_zero_attn:
        Kh = np.concatenate([Kh, np.zeros(Kh.shape[:2] + (1, hd))], 2)
        Vh = np.concatenate([Vh, np.zeros(Vh.shape[:2] + (1, hd))], 2)
        add = np.concatenate([add, np.zeros(add.shape[:-1] + (1,))], -1)
    weights = _softmax(Qh @ Kh.swapaxes(-1, -2) / math.sqrt(hd) + add)
    out = (weights @ Vh).transpose(2, 0, 1, 3).reshape(length, batch, embed)
    out = out @ p["out_proj.weight"].T + p.get("out_proj.bias", 0)
    return out, (weights.mean(1) if average else weights)


def np_layer_norm(x, w, b, eps=1e-5):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _np_gelu(x):
    from math import erf
    return x * 0.5 * (1 + np.vectorize(erf)(x / math.sqrt(2)))


def np_encoder_layer(x, p, num_heads, norm_first, act=lambda y: np.maximum(y, 0), mask=None, kpm=None):
    def sa(y):
        return np_mha(y, y, y, {k[10:]: v for k, v in p.items() if k.startswith("self_attn.")}, num_heads, mask,
                      kpm)[0]

    def ff(y):
        return act(y @ p["linear1.weight"].T + p["linear1.bias"]) @ p["linear2.weight"].T + p["linear2.bias"]

    def ln(i, y):
        return np_layer_norm(y, p[f"norm{i}.weight"], p[f"norm{i}.bias"])

    if norm_first:
        x = x + sa(ln(1, x))
        return x + ff(ln(2, x))
    x = ln(1, x + sa(x))
    return ln(2, x + ff(x))


def np_decoder_layer(x, mem, p, num_heads, norm_first, tgt_mask=None, memory_kpm=None):
    def attn(prefix, y, m, mask, kpm):
        return np_mha(y, m, m, {k[len(prefix):]: v for k, v in p.items() if k.startswith(prefix)}, num_heads, mask,
                      kpm)[0]

    def ff(y):
        return np.maximum(y @ p["linear1.weight"].T + p["linear1.bias"], 0) @ p["linear2.weight"].T + p["linear2.bias"]

    def ln(i, y):
        return np_layer_norm(y, p[f"norm{i}.weight"], p[f"norm{i}.bias"])

    if norm_first:
        x = x + attn("self_attn.", ln(1, x), ln(1, x), tgt_mask, None)
        x = x + attn("multihead_attn.", ln(2, x), mem, None, memory_kpm)
        return x + ff(ln(3, x))
    x = ln(1, x + attn("self_attn.", x, x, tgt_mask, None))
    x = ln(2, x + attn("multihead_attn.", x, mem, None, memory_kpm))
    return ln(3, x + ff(x))


# ---------------------------------------------------------------------------------------------------- MHA parameters
def test_mha_parameter_names_and_shapes():
    def shapes(m):
        return [(n, tuple(p.shape)) for n, p in m.named_parameters()]

    assert shapes(nn.MultiheadAttention(8, 2)) == [("in_proj_weight", (24, 8)), ("in_proj_bias", (24,)),
                                                   ("out_proj.weight", (8, 8)), ("out_proj.bias", (8,))]
    assert shapes(nn.MultiheadAttention(8, 2, kdim=3, vdim=5, bias=False)) == [
        ("q_proj_weight", (8, 8)), ("k_proj_weight", (8, 3)), ("v_proj_weight", (8, 5)), ("out_proj.weight", (8, 8))]
    assert shapes(nn.MultiheadAttention(8, 2, add_bias_kv=True)) == [
        ("in_proj_weight", (24, 8)), ("in_proj_bias", (24,)), ("bias_k", (1, 1, 8)), ("bias_v", (1, 1, 8)),
        ("out_proj.weight", (8, 8)), ("out_proj.bias", (8,))]
    m = nn.MultiheadAttention(8, 2, kdim=3)
    assert m.in_proj_weight is None and m.bias_k is None and m.head_dim == 4
    assert isinstance(m.out_proj, nn.Linear)


def test_mha_initialisation_and_repr():
    m = nn.MultiheadAttention(16, 4, add_bias_kv=True)
    w = _np(m.in_proj_weight)
    bound = math.sqrt(6 / (16 + 48))  # xavier_uniform_ on the (3E, E) matrix
    assert np.all(np.abs(w) <= bound) and w.std() > bound / 3
    assert not np.any(_np(m.in_proj_bias)) and not np.any(_np(m.out_proj.bias))
    assert np.any(_np(m.bias_k)) and np.any(_np(m.bias_v))
    assert repr(nn.MultiheadAttention(4, 2)) == ("MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear("
                                                 "in_features=4, out_features=4, bias=True)\n)")


def test_mha_constructor_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        nn.MultiheadAttention(0, 1)


# ---------------------------------------------------------------------------------------------------- MHA forward
L, S, N, E, H = 4, 5, 3, 8, 2
RNG = np.random.default_rng(0)
BOOL_MASK = RNG.uniform(size=(L, S)) > 0.7
PADDING = np.array([[False] * 5, [False, False, False, True, True], [False, True, False, False, True]])
FLOAT_MASK = RNG.standard_normal((N * H, L, S))


@pytest.mark.parametrize("kwargs", [{}, dict(kdim=3, vdim=6), dict(add_bias_kv=True, add_zero_attn=True),
                                    dict(bias=False)])
@pytest.mark.parametrize("masks", [{}, dict(attn_mask=BOOL_MASK), dict(key_padding_mask=PADDING),
                                   dict(attn_mask=BOOL_MASK, key_padding_mask=PADDING),
                                   dict(attn_mask=FLOAT_MASK, key_padding_mask=np.where(PADDING, -1e9, 0.0))])
def test_mha_matches_numpy(kwargs, masks):
    m = nn.MultiheadAttention(E, H, dtype=F64, **kwargs)
    rng = np.random.default_rng(1)
    q = rng.standard_normal((L, N, E))
    k = rng.standard_normal((S, N, kwargs.get("kdim", E)))
    v = rng.standard_normal((S, N, kwargs.get("vdim", E)))
    lm = {name: lucid.tensor(value) for name, value in masks.items()}
    for average in (True, False):
        out, weights = m(lucid.tensor(q), lucid.tensor(k), lucid.tensor(v), average_attn_weights=average, **lm)
        ref_out, ref_w = np_mha(q, k, v, _params(m), H, masks.get("attn_mask"), masks.get("key_padding_mask"),
                                average, kwargs.get("add_zero_attn", False))
        np.testing.assert_allclose(_np(out), ref_out, atol=1e-12)
        np.testing.assert_allclose(_np(weights), ref_w, atol=1e-12)
    out, weights = m(lucid.tensor(q), lucid.tensor(k), lucid.tensor(v), need_weights=False, **lm)
    assert weights is None
    np.testing.assert_allclose(_np(out), ref_out, atol=1e-12)


def test_mha_self_attention_and_shared_key_value_paths():
    m = nn.MultiheadAttention(E, H, dtype=F64)
    x, mem = leaf(L, N, E, requires_grad=False), leaf(S, N, E, seed=1, requires_grad=False)
    p = _params(m)
    np.testing.assert_allclose(_np(m(x, x, x)[0]), np_mha(_np(x), _np(x), _np(x), p, H)[0], atol=1e-12)
    np.testing.assert_allclose(_np(m(x, mem, mem)[0]), np_mha(_np(x), _np(mem), _np(mem), p, H)[0], atol=1e-12)


def test_bool_mask_true_means_not_allowed():
    m = nn.MultiheadAttention(E, H)
    x = lucid.randn(L, N, E)
    _, w = m(x, x, x, attn_mask=lucid.tensor(np.triu(np.ones((L, L), bool), 1)),
             key_padding_mask=lucid.tensor(np.array([[False, False, True, False]] * N)))
    w = _np(w)
    assert np.all(w[:, np.triu_indices(L, 1)[0], np.triu_indices(L, 1)[1]] == 0)
    assert np.all(w[:, :, 2] == 0)
    np.testing.assert_allclose(w.sum(-1), 1, rtol=1e-5)


def test_mha_batch_first_and_unbatched():
    m = nn.MultiheadAttention(E, H, dtype=F64)
    mb = nn.MultiheadAttention(E, H, batch_first=True, dtype=F64)
    mb.load_state_dict(m.state_dict())
    q, k = leaf(L, N, E, requires_grad=False), leaf(S, N, E, seed=1, requires_grad=False)
    pad = lucid.tensor(PADDING)
    out, w = m(q, k, k, key_padding_mask=pad)
    out_b, w_b = mb(q.transpose(0, 1), k.transpose(0, 1), k.transpose(0, 1), key_padding_mask=pad)
    np.testing.assert_allclose(_np(out_b), _np(out).transpose(1, 0, 2), atol=1e-12)
    np.testing.assert_allclose(_np(w_b), _np(w), atol=1e-12)
    out_u, w_u = mb(q[:, 1], k[:, 1], k[:, 1], key_padding_mask=pad[1])  # batch_first is ignored when unbatched
    assert tuple(out_u.shape) == (L, E) and tuple(w_u.shape) == (L, S)
    np.testing.assert_allclose(_np(out_u), _np(out[:, 1]), atol=1e-12)
    np.testing.assert_allclose(_np(w_u), _np(w[1]), atol=1e-12)
    _, w_heads = mb(q[:, 1], k[:, 1], k[:, 1], average_attn_weights=False)
    assert tuple(w_heads.shape) == (H, L, S)


def test_is_causal_is_a_hint_for_the_causal_mask():
    m = nn.MultiheadAttention(E, H, dtype=F64)
    x = leaf(L, N, E, requires_grad=False)
    causal = nn.Transformer.generate_square_subsequent_mask(L, dtype=F64)
    ref = np_mha(_np(x), _np(x), _np(x), _params(m), H, _np(causal))[0]
    for need_weights in (True, False):
        out, _ = m(x, x, x, attn_mask=causal, is_causal=True, need_weights=need_weights)
        np.testing.assert_allclose(_np(out), ref, atol=1e-12)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)


def test_mha_mask_errors():
    m = nn.MultiheadAttention(E, H)
    x = lucid.randn(L, N, E)
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask are supported"):
        m(x, x, x, attn_mask=lucid.zeros(L, L, dtype=lucid.int32))
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is \\(3, 4\\), but should be \\(4, 4\\)"):
        m(x, x, x, attn_mask=lucid.zeros(3, L))
    with pytest.raises(RuntimeError, match="The shape of the 3D attn_mask"):
        m(x, x, x, attn_mask=lucid.zeros(N, L, L))
    with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D"):
        m(x, x[0], x[0])
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 8, but got 4"):
        y = lucid.randn(L, N, 4)
        m(y, y, y)


def test_mha_dropout_only_in_training():
    m = nn.MultiheadAttention(E, H, dropout=0.5, dtype=F64)
    x = leaf(L, N, E, requires_grad=False)
    m.eval()
    ref_out, ref_w = np_mha(_np(x), _np(x), _np(x), _params(m), H)
    out, w = m(x, x, x)
    np.testing.assert_allclose(_np(out), ref_out, atol=1e-12)
    np.testing.assert_allclose(_np(w), ref_w, atol=1e-12)
    m.train()
    _, w_heads = m(x, x, x, average_attn_weights=False)
    w_heads = _np(w_heads)
    assert np.any(w_heads == 0)  # dropped weights; the kept ones are scaled by 1 / (1 - p)
    full = np_mha(_np(x), _np(x), _np(x), _params(m), H, average=False)[1]
    kept = w_heads != 0
    np.testing.assert_allclose(w_heads[kept], 2 * full[kept], atol=1e-12)


def test_mha_gradcheck():
    m = nn.MultiheadAttention(4, 2, dtype=F64, kdim=3, vdim=2, add_bias_kv=True)
    q, k, v = leaf(2, 1, 4), leaf(3, 1, 3, seed=1), leaf(3, 1, 2, seed=2)
    mask = lucid.tensor(np.array([[0.0, -1.0, 0.5], [0.3, 0.0, -2.0]]))
    pad = lucid.tensor(np.array([[0.0, -math.inf, 0.0]]))

    def f(q, k, v):
        return m(q, k, v, attn_mask=mask, key_padding_mask=pad)

    check_grads(f, q, k, v, second=False)
    self_attn = nn.MultiheadAttention(4, 2, dtype=F64)
    x = leaf(2, 1, 4, seed=3)
    check_grads(lambda x: self_attn(x, x, x, need_weights=False)[0], x)


# ---------------------------------------------------------------------------------------------------- layers
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_matches_numpy(norm_first, activation):
    layer = nn.TransformerEncoderLayer(E, H, 16, activation=activation, norm_first=norm_first, dtype=F64).eval()
    x = leaf(L, N, E, requires_grad=False)
    pad = PADDING[:, :L]
    mask = np.triu(np.ones((L, L), bool), 1)
    out = layer(x, src_mask=lucid.tensor(mask), src_key_padding_mask=lucid.tensor(pad))
    act = (lambda y: np.maximum(y, 0)) if activation == "relu" else _np_gelu
    ref = np_encoder_layer(_np(x), _params(layer), H, norm_first, act, mask, pad)
    assert tuple(out.shape) == (L, N, E)
    np.testing.assert_allclose(_np(out), ref, atol=1e-10)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_numpy(norm_first):
    layer = nn.TransformerDecoderLayer(E, H, 16, norm_first=norm_first, batch_first=True, dtype=F64).eval()
    tgt, mem = leaf(N, L, E, requires_grad=False), leaf(N, S, E, seed=1, requires_grad=False)
    causal = nn.Transformer.generate_square_subsequent_mask(L, dtype=F64)
    out = layer(tgt, mem, tgt_mask=causal, memory_key_padding_mask=lucid.tensor(PADDING))
    ref = np_decoder_layer(_np(tgt).transpose(1, 0, 2), _np(mem).transpose(1, 0, 2), _params(layer), H, norm_first,
                           _np(causal), PADDING)
    assert tuple(out.shape) == (N, L, E)
    np.testing.assert_allclose(_np(out), ref.transpose(1, 0, 2), atol=1e-10)


def test_layer_submodules_and_activation_options():
    layer = nn.TransformerEncoderLayer(E, H, 16)
    assert list(layer._modules) == ["self_attn", "linear1", "dropout", "linear2", "norm1", "norm2", "dropout1",
                                    "dropout2"]
    assert layer.activation is F.relu and layer.dropout.p == 0.1 and layer.linear1.out_features == 16
    assert nn.TransformerEncoderLayer(E, H, activation="gelu").activation is F.gelu
    gelu = nn.GELU()
    assert nn.TransformerEncoderLayer(E, H, activation=gelu).activation is gelu  # a Module is a child
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(E, H, activation="tanh")
    dec = nn.TransformerDecoderLayer(E, H, 16, bias=False)
    assert list(dec._modules) == ["self_attn", "multihead_attn", "linear1", "dropout", "linear2", "norm1", "norm2",
                                  "norm3", "dropout1", "dropout2", "dropout3"]
    assert all("bias" not in n for n, _ in dec.named_parameters())


def test_layer_dropout_only_in_training():
    layer = nn.TransformerEncoderLayer(E, H, 16, dropout=0.5, dtype=F64)
    x = leaf(L, N, E, requires_grad=False)
    layer.eval()
    ref = np_encoder_layer(_np(x), _params(layer), H, False)
    np.testing.assert_allclose(_np(layer(x)), ref, atol=1e-10)
    np.testing.assert_allclose(_np(layer(x)), ref, atol=1e-10)
    layer.train()
    assert not np.allclose(_np(layer(x)), ref)


def test_encoder_layer_gradcheck():
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, dtype=F64)
    x = leaf(3, 1, 4)
    check_grads(lambda x: layer(x, src_key_padding_mask=lucid.tensor([[False, False, True]])), x, second=False)


# ---------------------------------------------------------------------------------------------------- stacks
def test_encoder_deep_copies_the_layer():
    layer = nn.TransformerEncoderLayer(E, H, 16)
    enc = nn.TransformerEncoder(layer, 3, norm=nn.LayerNorm(E))
    assert len(enc.layers) == 3 and enc.num_layers == 3
    params = [dict(m.named_parameters()) for m in enc.layers]
    for name, p in layer.named_parameters():
        for copy_params in params:
            assert copy_params[name] is not p
            np.testing.assert_array_equal(_np(copy_params[name]), _np(p))
    with lucid.no_grad():
        enc.layers[0].linear1.weight.mul_(0)
    assert np.any(_np(enc.layers[1].linear1.weight)) and np.any(_np(layer.linear1.weight))
    keys = list(enc.state_dict())
    assert keys[0] == "layers.0.self_attn.in_proj_weight" and keys[-1] == "norm.bias"
    assert len(list(enc.parameters())) == 3 * len(list(layer.parameters())) + 2


def test_deepcopy_of_attention_keeps_values_and_separates_parameters():
    m = nn.MultiheadAttention(E, H)
    m2 = copy.deepcopy(m)
    assert m2.in_proj_weight is not m.in_proj_weight and m2.in_proj_weight.requires_grad
    np.testing.assert_array_equal(_np(m2.out_proj.weight), _np(m.out_proj.weight))


def test_encoder_and_decoder_stacks_run_their_layers_in_order():
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(E, H, 16, dtype=F64), 2,
                                norm=nn.LayerNorm(E, dtype=F64)).eval()
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(E, H, 16, dtype=F64), 2,
                                norm=nn.LayerNorm(E, dtype=F64)).eval()
    src, tgt = leaf(S, N, E, requires_grad=False), leaf(L, N, E, seed=1, requires_grad=False)
    pad = lucid.tensor(PADDING)
    memory = enc(src, src_key_padding_mask=pad)
    want = src
    for layer in enc.layers:
        want = layer(want, src_key_padding_mask=pad)
    np.testing.assert_allclose(_np(memory), _np(enc.norm(want)), atol=1e-12)
    causal = nn.Transformer.generate_square_subsequent_mask(L, dtype=F64)
    out = dec(tgt, memory, tgt_mask=causal, memory_key_padding_mask=pad)
    want = tgt
    for layer in dec.layers:
        want = layer(want, memory, tgt_mask=causal, memory_key_padding_mask=pad)
    np.testing.assert_allclose(_np(out), _np(dec.norm(want)), atol=1e-12)


def test_generate_square_subsequent_mask():
    mask = _np(nn.Transformer.generate_square_subsequent_mask(3))
    np.testing.assert_array_equal(mask, [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])


def test_transformer_shapes_init_and_errors():
    model = nn.Transformer(E, H, 2, 1, 16, batch_first=True)
    assert len(model.encoder.layers) == 2 and len(model.decoder.layers) == 1
    assert isinstance(model.encoder.norm, nn.LayerNorm) and isinstance(model.decoder.norm, nn.LayerNorm)
    w = _np(model.encoder.layers[0].linear1.weight)  # xavier_uniform_ for every matrix
    assert np.all(np.abs(w) <= math.sqrt(6 / (E + 16)))
    out = model(lucid.randn(N, S, E), lucid.randn(N, L, E))
    assert tuple(out.shape) == (N, L, E)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        model(lucid.randn(N, S, E), lucid.randn(N + 1, L, E))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        model(lucid.randn(N, S, 4), lucid.randn(N, L, 4))


# ---------------------------------------------------------------------------------------------------- PyTorch oracle
def _load_from_torch(lucid_module, torch_module):
    lucid_module.load_state_dict({k: v.detach().numpy() for k, v in torch_module.state_dict().items()})


def test_mha_matches_pytorch_outputs_and_gradients():
    torch = pytest.importorskip("torch")
    tm = torch.nn.MultiheadAttention(E, H, kdim=3, vdim=6, add_bias_kv=True, dtype=torch.float64)
    lm = nn.MultiheadAttention(E, H, kdim=3, vdim=6, add_bias_kv=True, dtype=F64)
    assert repr(tm) == repr(lm)
    _load_from_torch(lm, tm)
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in ((L, N, E), (S, N, 3), (S, N, 6))]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    l_in = [lucid.tensor(a, requires_grad=True) for a in arrays]
    t_out, t_w = tm(*t_in, attn_mask=torch.tensor(BOOL_MASK), key_padding_mask=torch.tensor(PADDING))
    l_out, l_w = lm(*l_in, attn_mask=lucid.tensor(BOOL_MASK), key_padding_mask=lucid.tensor(PADDING))
    np.testing.assert_allclose(_np(l_out), t_out.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(_np(l_w), t_w.detach().numpy(), atol=1e-12)
    g = rng.standard_normal((L, N, E))
    ((t_out * torch.tensor(g)).sum() + t_w.square().sum()).backward()
    ((l_out * lucid.tensor(g)).sum() + l_w.square().sum()).backward()
    for t, lt in zip(t_in, l_in):
        np.testing.assert_allclose(_np(lt.grad), t.grad.numpy(), atol=1e-10)
    for (name, tp), lp in zip(tm.named_parameters(), lm.parameters()):
        np.testing.assert_allclose(_np(lp.grad), tp.grad.numpy(), atol=1e-10, err_msg=name)


@pytest.mark.parametrize("kwargs", [dict(), dict(norm_first=True, activation="gelu", batch_first=True)])
def test_transformer_matches_pytorch_outputs_and_gradients(kwargs):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch explains why its nested-tensor fast path is off
        tm = torch.nn.Transformer(E, H, 2, 2, 16, dropout=0.0, dtype=torch.float64, **kwargs)
    lm = nn.Transformer(E, H, 2, 2, 16, dropout=0.0, dtype=F64, **kwargs)
    assert [n for n, _ in tm.named_parameters()] == [n for n, _ in lm.named_parameters()]
    assert repr(tm) == repr(lm)
    _load_from_torch(lm, tm)
    rng = np.random.default_rng(3)
    batch_first = kwargs.get("batch_first", False)
    src = rng.standard_normal((N, S, E) if batch_first else (S, N, E))
    tgt = rng.standard_normal((N, L, E) if batch_first else (L, N, E))
    causal = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
    t_out = tm(torch.tensor(src), torch.tensor(tgt), tgt_mask=causal, src_key_padding_mask=torch.tensor(PADDING),
               memory_key_padding_mask=torch.tensor(PADDING))
    l_out = lm(lucid.tensor(src), lucid.tensor(tgt), tgt_mask=lucid.tensor(causal.numpy()),
               src_key_padding_mask=lucid.tensor(PADDING), memory_key_padding_mask=lucid.tensor(PADDING))
    np.testing.assert_allclose(_np(l_out), t_out.detach().numpy(), atol=1e-10)
    g = rng.standard_normal(tuple(t_out.shape))
    (t_out * torch.tensor(g)).sum().backward()
    (l_out * lucid.tensor(g)).sum().backward()
    for (name, tp), lp in zip(tm.named_parameters(), lm.parameters()):
        np.testing.assert_allclose(_np(lp.grad), tp.grad.numpy(), atol=1e-9, err_msg=name)
