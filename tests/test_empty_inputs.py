"""Zero-size batches, channels and spatial dims through the layers, as in PyTorch: the same output shapes, or
PyTorch's exception where PyTorch refuses. Each case also states its expected shape or error in closed form, so the
file checks something without torch; with torch installed the same expression is run through torch as the oracle.
Some of these used to kill the interpreter inside MLX (an empty interpolate or reflection pad), others raised."""
import pytest

import lucid
import lucid.nn.functional as LF

# (name, expression over T (the library) and F (its functional), expected shape or (exception type, message start))
CASES = [
    ("interp_nearest", "F.interpolate(T.randn(0, 2, 4, 4), scale_factor=2, mode='nearest')", (0, 2, 8, 8)),
    ("interp_nearest_exact", "F.interpolate(T.randn(0, 2, 4, 4), scale_factor=2, mode='nearest-exact')", (0, 2, 8, 8)),
    ("interp_linear", "F.interpolate(T.randn(0, 2, 4), scale_factor=2, mode='linear')", (0, 2, 8)),
    ("interp_bilinear", "F.interpolate(T.randn(0, 2, 4, 4), scale_factor=2, mode='bilinear')", (0, 2, 8, 8)),
    ("interp_bilinear_aa", "F.interpolate(T.randn(0, 2, 4, 4), size=(2, 2), mode='bilinear', antialias=True)",
     (0, 2, 2, 2)),
    ("interp_bicubic", "F.interpolate(T.randn(0, 2, 4, 4), scale_factor=2, mode='bicubic')", (0, 2, 8, 8)),
    ("interp_bicubic_aa", "F.interpolate(T.randn(0, 2, 4, 4), size=(2, 2), mode='bicubic', antialias=True)",
     (0, 2, 2, 2)),
    ("interp_trilinear", "F.interpolate(T.randn(0, 2, 4, 4, 4), scale_factor=2, mode='trilinear')", (0, 2, 8, 8, 8)),
    ("interp_area", "F.interpolate(T.randn(0, 2, 4, 4), size=(2, 2), mode='area')", (0, 2, 2, 2)),
    ("interp_out0", "F.interpolate(T.randn(2, 2, 4, 4), size=(0, 3), mode='nearest')",
     (RuntimeError, "Input and output sizes should be greater than 0, but got input (H: 4, W: 4) output (H: 0, W: 3)")),
    ("interp_in0", "F.interpolate(T.randn(2, 2, 0, 4), size=(3, 3), mode='bilinear')",
     (RuntimeError, "Input and output sizes should be greater than 0, but got input (H: 0, W: 4) output (H: 3, W: 3)")),
    ("interp_linear_out0", "F.interpolate(T.randn(1, 1, 4), size=(0,), mode='linear')",
     (RuntimeError, "Input and output sizes should be greater than 0, but got input (W: 4) and output (W: 0)")),
    ("reflpad1", "T.nn.ReflectionPad1d(2)(T.randn(0, 2, 4))", (0, 2, 8)),
    ("reflpad2", "T.nn.ReflectionPad2d(2)(T.randn(0, 2, 4, 4))", (0, 2, 8, 8)),
    ("reflpad3", "T.nn.ReflectionPad3d(1)(T.randn(0, 2, 4, 4, 4))", (0, 2, 6, 6, 6)),
    ("replpad1", "T.nn.ReplicationPad1d(2)(T.randn(0, 2, 4))", (0, 2, 8)),
    ("replpad2", "T.nn.ReplicationPad2d(2)(T.randn(0, 2, 4, 4))", (0, 2, 8, 8)),
    ("replpad3", "T.nn.ReplicationPad3d(1)(T.randn(0, 2, 4, 4, 4))", (0, 2, 6, 6, 6)),
    ("circpad2", "F.pad(T.randn(0, 2, 4, 4), (1, 1, 1, 1), mode='circular')", (0, 2, 6, 6)),
    ("constpad", "F.pad(T.randn(0, 2, 4, 4), (1, 1, 1, 1))", (0, 2, 6, 6)),
    ("maxpool2", "F.max_pool2d(T.randn(0, 2, 4, 4), 2)", (0, 2, 2, 2)),
    ("maxpool2_idx", "F.max_pool2d(T.randn(0, 2, 4, 4), 3, 1, return_indices=True)[1]", (0, 2, 2, 2)),
    ("avgpool1", "F.avg_pool1d(T.randn(0, 2, 4), 2)", (0, 2, 2)),
    ("avgpool2", "F.avg_pool2d(T.randn(0, 2, 4, 4), 2)", (0, 2, 2, 2)),
    ("maxpool3", "F.max_pool3d(T.randn(0, 2, 4, 4, 4), 2)", (0, 2, 2, 2, 2)),
    ("adavg2", "F.adaptive_avg_pool2d(T.randn(0, 2, 4, 4), 2)", (0, 2, 2, 2)),
    ("adavg2_c0", "F.adaptive_avg_pool2d(T.randn(1, 0, 2, 3), 2)", (1, 0, 2, 2)),
    ("admax2", "F.adaptive_max_pool2d(T.randn(0, 2, 4, 4), 3)", (0, 2, 3, 3)),
    ("admax2_idx", "F.adaptive_max_pool2d(T.randn(0, 2, 4, 4), 3, return_indices=True)[1]", (0, 2, 3, 3)),
    ("admax2_c0", "F.adaptive_max_pool2d(T.randn(1, 0, 2, 3), 2)",
     (RuntimeError, "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, but "
                    "input has sizes [1, 0, 2, 3] with dimension 1 being empty")),
    ("adavg1_sp0", "F.adaptive_avg_pool1d(T.randn(1, 2, 0), 2)",
     (RuntimeError, "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but "
                    "input has sizes [1, 2, 1, 0] with dimension 3 being empty")),
    ("adavg2_sp0", "F.adaptive_avg_pool2d(T.randn(1, 2, 0, 4), 2)",
     (RuntimeError, "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, but "
                    "input has sizes [1, 2, 0, 4] with dimension 2 being empty")),
    ("admax3_sp0", "F.adaptive_max_pool3d(T.randn(1, 2, 3, 0, 3), 2)",
     (RuntimeError, "adaptive_max_pool3d(): Expected input to have non-zero size for non-batch dimensions, but "
                    "input has sizes [1, 2, 3, 0, 3] with dimension 3 being empty")),
    ("maxpool1_c0", "F.max_pool1d(T.randn(1, 0, 4), 2)",
     (RuntimeError, "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but "
                    "got:[1, 0, 4]")),
    ("avgpool1_c0", "F.avg_pool1d(T.randn(1, 0, 4), 2)",
     (RuntimeError, "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                    "got:[1, 0, 1, 4]")),
    ("maxpool2_c0", "F.max_pool2d(T.randn(1, 0, 4, 4), 2)",
     (RuntimeError, "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                    "got:[1, 0, 4, 4]")),
    ("avgpool2_sp0", "F.avg_pool2d(T.randn(1, 2, 0, 4), 2)",
     (RuntimeError, "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                    "got:[1, 2, 0, 4]")),
    ("maxpool3_sp0", "F.max_pool3d(T.randn(1, 2, 4, 0, 4), 2)",
     (RuntimeError, "max_pool3d_with_indices_out_cpu_template(): Expected input's non-batch dimensions to have "
                    "positive length, but input has a shape of [1, 2, 4, 0, 4] and non-batch dimension 0 has length "
                    "zero!")),
    ("avgpool3_unbatched_sp0", "F.avg_pool3d(T.randn(2, 4, 4, 0), 2)",
     (RuntimeError, "avg_pool3d(): Expected input's non-batch dimensions to have positive length, but input has a "
                    "shape of [2, 4, 4, 0] and non-batch dimension 0 has length zero!")),
    ("interp_c0", "F.interpolate(T.randn(2, 0, 4, 4), scale_factor=2, mode='bilinear')",
     (RuntimeError, "Non-empty 4D data tensor expected but got a tensor with sizes [2, 0, 4, 4]")),
    ("interp_linear_c0", "F.interpolate(T.randn(2, 0, 4), scale_factor=2, mode='linear')",
     (RuntimeError, "Non-empty 3D data tensor expected but got a tensor with sizes [2, 0, 4]")),
    ("interp_area_c0", "F.interpolate(T.randn(2, 0, 4, 4), size=(2, 2), mode='area')", (2, 0, 2, 2)),
    ("reflpad2_sp0", "T.nn.ReflectionPad2d(1)(T.randn(1, 2, 0, 4))",
     (RuntimeError, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions "
                    "for input, but got: [1, 2, 0, 4]")),
    ("replpad1_c0", "T.nn.ReplicationPad1d(1)(T.randn(1, 0, 4))",
     (RuntimeError, "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions "
                    "for input, but got: [1, 0, 4]")),
    ("replpad3_sp0", "T.nn.ReplicationPad3d(1)(T.randn(1, 2, 4, 0, 4))",
     (RuntimeError, "Expected 4D or 5D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions "
                    "for input, but got: [1, 2, 4, 0, 4]")),
    ("reflpad_unbatched_c0", "F.pad(T.randn(0, 3), (1, 1), mode='reflect')",
     (RuntimeError, "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions "
                    "for input, but got: [0, 3]")),
    ("conv2d_in0", "F.conv2d(T.randn(1, 0, 5, 5), T.randn(3, 0, 3, 3))", (1, 0, 3, 3)),
    ("conv2d_in0_strided", "F.conv2d(T.randn(1, 0, 5, 5), T.randn(3, 0, 3, 3), stride=2, padding=1)", (1, 0, 3, 3)),
    ("conv3d_batch0_in0", "F.conv3d(T.randn(0, 0, 3, 3, 3), T.randn(3, 0, 1, 1, 1))", (0, 0, 3, 3, 3)),
    ("conv2d_out0", "F.conv2d(T.randn(1, 2, 5, 5), T.randn(0, 2, 3, 3))",
     (RuntimeError, "Given groups=1, expected weight to be at least 1 at dimension 0, but got weight of size "
                    "[0, 2, 3, 3] instead")),
    ("conv_transpose2d_in0", "F.conv_transpose2d(T.randn(1, 0, 5, 5), T.randn(0, 3, 3, 3))",
     (RuntimeError, "Given groups=1, expected weight to be at least 1 at dimension 0, but got weight of size "
                    "[0, 3, 3, 3] instead")),
    ("unfold_c0", "F.unfold(T.randn(1, 0, 5, 5), 3)",
     (RuntimeError, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions "
                    "for input, but got: [1, 0, 5, 5]")),
    ("fold_c0", "F.fold(T.randn(1, 0, 9), (5, 5), 3)",
     (RuntimeError, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                    "dimensions for input, but got: [1, 0, 9]")),
    ("fold_blocks0", "F.fold(T.randn(1, 18, 0), (5, 5), 3)",
     (RuntimeError, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                    "dimensions for input, but got: [1, 18, 0]")),
    # PyTorch itself fails on an empty batch with a key padding mask (its mask reshape); lucid raises the same
    ("mha_batch0_key_padding", "T.nn.MultiheadAttention(8, 2, batch_first=True)(T.randn(0, 3, 8), T.randn(0, 4, 8), "
                               "T.randn(0, 4, 8), key_padding_mask=T.zeros(0, 4, dtype=T.bool), need_weights=False)[0]",
     (RuntimeError, "cannot reshape tensor of 0 elements into shape [0, 2, -1, 4] because the unspecified "
                    "dimension size -1 can be any value and is ambiguous")),
    ("mha_batch0_masks", "T.nn.MultiheadAttention(8, 2, batch_first=True)(T.randn(0, 3, 8), T.randn(0, 4, 8), "
                         "T.randn(0, 4, 8), key_padding_mask=T.zeros(0, 4, dtype=T.bool), "
                         "attn_mask=T.zeros(3, 4, dtype=T.bool), need_weights=False)[0]",
     (RuntimeError, "cannot reshape tensor of 0 elements into shape [0, 2, -1, 4] because the unspecified "
                    "dimension size -1 can be any value and is ambiguous")),
    ("conv1d", "T.nn.Conv1d(2, 3, 3)(T.randn(0, 2, 5))", (0, 3, 3)),
    ("conv2d", "T.nn.Conv2d(2, 3, 3)(T.randn(0, 2, 5, 5))", (0, 3, 3, 3)),
    ("conv3d", "T.nn.Conv3d(2, 3, 3)(T.randn(0, 2, 5, 5, 5))", (0, 3, 3, 3, 3)),
    ("conv_transpose2d", "T.nn.ConvTranspose2d(2, 3, 3)(T.randn(0, 2, 5, 5))", (0, 3, 7, 7)),
    ("conv2d_groups", "T.nn.Conv2d(4, 4, 3, groups=2)(T.randn(0, 4, 5, 5))", (0, 4, 3, 3)),
    ("unfold", "F.unfold(T.randn(0, 2, 5, 5), 3)", (0, 18, 9)),
    ("fold", "F.fold(T.randn(0, 18, 9), (5, 5), 3)", (0, 2, 5, 5)),
    ("grid_sample", "F.grid_sample(T.randn(0, 2, 4, 4), T.randn(0, 3, 3, 2), align_corners=False)", (0, 2, 3, 3)),
    ("grid_sample_nearest", "F.grid_sample(T.randn(0, 2, 4, 4), T.randn(0, 3, 3, 2), mode='nearest', "
                            "align_corners=False)", (0, 2, 3, 3)),
    ("grid_sample_bicubic", "F.grid_sample(T.randn(0, 2, 4, 4), T.randn(0, 3, 3, 2), mode='bicubic', "
                            "align_corners=False)", (0, 2, 3, 3)),
    ("grid_sample_3d", "F.grid_sample(T.randn(0, 2, 4, 4, 4), T.randn(0, 3, 3, 3, 3), align_corners=False)",
     (0, 2, 3, 3, 3)),
    ("grid_sample_empty_grid", "F.grid_sample(T.randn(1, 2, 4, 4), T.randn(1, 0, 3, 2), align_corners=False)",
     (1, 2, 0, 3)),
    ("group_norm", "T.nn.GroupNorm(2, 4)(T.randn(0, 4, 3))", (0, 4, 3)),
    ("group_norm_sp0", "T.nn.GroupNorm(2, 4)(T.randn(2, 4, 0))", (2, 4, 0)),
    ("batch_norm1d", "T.nn.BatchNorm1d(3)(T.randn(0, 3))", (0, 3)),
    ("batch_norm2d", "T.nn.BatchNorm2d(3)(T.randn(0, 3, 4, 4))", (0, 3, 4, 4)),
    ("batch_norm_eval", "T.nn.BatchNorm2d(3).eval()(T.randn(0, 3, 4, 4))", (0, 3, 4, 4)),
    ("instance_norm", "T.nn.InstanceNorm2d(3)(T.randn(0, 3, 4, 4))", (0, 3, 4, 4)),
    ("layer_norm", "T.nn.LayerNorm(4)(T.randn(0, 4))", (0, 4)),
    ("mha", "T.nn.MultiheadAttention(8, 2)(T.randn(0, 2, 8), T.randn(0, 2, 8), T.randn(0, 2, 8))[0]", (0, 2, 8)),
    ("mha_batch0", "T.nn.MultiheadAttention(8, 2, batch_first=True)(T.randn(0, 3, 8), T.randn(0, 3, 8), "
                   "T.randn(0, 3, 8))[0]", (0, 3, 8)),
    ("transformer_encoder_layer", "T.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)(T.randn(0, 2, 8))", (0, 2, 8)),
    ("transformer_encoder_layer_bf", "T.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)("
                                     "T.randn(0, 3, 8))", (0, 3, 8)),
    ("transformer_decoder_layer", "T.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0)(T.randn(0, 2, 8), "
                                  "T.randn(3, 2, 8))", (0, 2, 8)),
    ("transformer", "T.nn.Transformer(8, 2, 1, 1, 16, dropout=0.0)(T.randn(0, 2, 8), T.randn(3, 2, 8))", (3, 2, 8)),
    ("embedding", "T.nn.Embedding(5, 3)(T.zeros(0, 4, dtype=T.long))", (0, 4, 3)),
    ("embedding_bag", "T.nn.EmbeddingBag(5, 3)(T.zeros(0, 4, dtype=T.long))", (0, 3)),
    ("embedding_bag_offsets", "T.nn.EmbeddingBag(5, 3)(T.zeros(0, dtype=T.long), T.zeros(2, dtype=T.long))",
     (2, 3)),
    ("pixel_shuffle", "F.pixel_shuffle(T.randn(0, 4, 2, 2), 2)", (0, 1, 4, 4)),
    ("local_response_norm", "F.local_response_norm(T.randn(0, 4, 3, 3), 2)", (0, 4, 3, 3)),
]


def _run(lib, functional, expr):
    """The expression's shape, or the exception it raised as (type name, message)."""
    try:
        return tuple(eval(expr, {"T": lib, "F": functional}).shape)
    except Exception as e:  # noqa: BLE001 - the exception is the result being compared
        return type(e).__name__, str(e)


@pytest.mark.parametrize("name,expr,expected", CASES, ids=[c[0] for c in CASES])
def test_empty_input_closed_form(name, expr, expected):
    got = _run(lucid, LF, expr)
    if isinstance(expected[0], type):
        assert got[0] == expected[0].__name__ and got[1].startswith(expected[1]), got
    else:
        assert got == expected


@pytest.mark.parametrize("name,expr,expected", CASES, ids=[c[0] for c in CASES])
def test_empty_input_matches_torch(name, expr, expected):
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF
    want = _run(torch, TF, expr)
    got = _run(lucid, LF, expr)
    if isinstance(want[0], str):  # PyTorch raises: the same type and message
        assert got[0] == want[0] and got[1].startswith(want[1].split("\n")[0][:80]), (got, want)
    else:
        assert got == want


def test_empty_batch_backward():
    """Gradients flow through empty batches with the input's shape (zero-size, nothing to crash on)."""
    x = lucid.randn(0, 2, 5, 5, requires_grad=True)
    y = LF.interpolate(LF.max_pool2d(lucid.nn.ReflectionPad2d(1)(x), 2), scale_factor=2, mode="bilinear")
    (lucid.nn.Conv2d(2, 3, 3)(y).sum() + LF.group_norm(x, 2).sum()).backward()
    assert tuple(x.grad.shape) == (0, 2, 5, 5)


@pytest.mark.parametrize("expr", [
    "F.interpolate(x, scale_factor=2, mode='nearest')", "F.interpolate(x, scale_factor=2, mode='bilinear')",
    "F.interpolate(x, size=(3, 3), mode='bicubic', antialias=True)", "F.interpolate(x, size=(2, 2), mode='area')",
    "F.interpolate(x, scale_factor=2, mode='nearest-exact')", "T.nn.ReplicationPad2d(2)(x)", "F.unfold(x, 3)",
    "F.grid_sample(x, T.zeros(0, 3, 3, 2), align_corners=False)", "F.adaptive_max_pool2d(x, 3)",
    "F.pad(x, (1, 1, 1, 1), mode='circular')"])
def test_empty_batch_backward_per_layer(expr):
    x = lucid.randn(0, 2, 5, 5, requires_grad=True)
    eval(expr, {"T": lucid, "F": LF, "x": x}).sum().backward()
    assert tuple(x.grad.shape) == (0, 2, 5, 5)


@pytest.mark.parametrize("layer", ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d"])
def test_batch_norm_empty_batch_keeps_running_stats(layer):
    """PyTorch: an empty batch leaves the running statistics as they were (lucid used to make them NaN) and gives
    the affine parameters zero gradients (lucid's backward divided by the zero count)."""
    m = getattr(lucid.nn, layer)(3)
    shape = {"BatchNorm1d": (0, 3), "BatchNorm2d": (0, 3, 4, 4), "BatchNorm3d": (0, 3, 2, 2, 2)}[layer]
    x = lucid.randn(*shape, requires_grad=True)
    m(x).sum().backward()
    assert m.running_mean.tolist() == [0.0] * 3 and m.running_var.tolist() == [1.0] * 3
    assert m.num_batches_tracked.item() == 1
    assert m.weight.grad.tolist() == [0.0] * 3 and m.bias.grad.tolist() == [0.0] * 3
    assert tuple(x.grad.shape) == shape
