"""PyTorch's top-level functional forms (ATen argument orders), numpy spellings and composite elementwise names,
against torch."""
import numpy as np
import pytest

import lucid
from helpers import check_grads, leaf

torch = pytest.importorskip("torch")


def _t(x):
    return torch.from_numpy(np.asarray(x.detach().numpy()))


def _close(ours, theirs, **kw):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), **kw)


def test_aliases_are_the_functional_functions():
    F = lucid.nn.functional
    for name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                 "layer_norm", "group_norm", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "pixel_shuffle",
                 "pixel_unshuffle", "cosine_similarity", "pairwise_distance", "adaptive_avg_pool1d"):
        ours = getattr(lucid, name)  # (wrapped to take numpy's axis= where it has a dim, as torch.X does)
        assert getattr(ours, "__wrapped__", ours) is getattr(F, name), name


def test_numpy_spellings_axis_and_keepdims():
    x = leaf(3, 4, requires_grad=False)
    tx = _t(x)
    _close(lucid.cumprod(x, axis=0), torch.cumprod(tx, axis=0))
    _close(lucid.sum(x, axis=1, keepdims=True), torch.sum(tx, axis=1, keepdims=True))
    _close(x.mean(axis=0), tx.mean(axis=0))
    _close(x.argmax(axis=1, keepdims=True), tx.argmax(axis=1, keepdims=True))
    _close(lucid.cat([x, x], axis=1), torch.cat([tx, tx], axis=1))
    _close(lucid.max(x, axis=0).values, torch.max(tx, axis=0).values)
    _close(lucid.cosine_similarity(x, x, axis=0), torch.cosine_similarity(tx, tx, axis=0))
    with pytest.raises(TypeError):  # nn.functional is a Python layer in PyTorch: dim only
        lucid.nn.functional.softmax(x, axis=0)


@pytest.mark.filterwarnings("error")
def test_aten_orders_match_torch():
    x = leaf(4, 3, 5, requires_grad=False)
    w, b, rm, rv = leaf(3, seed=1), leaf(3, seed=2), leaf(3, seed=3, requires_grad=False).abs(), \
        leaf(3, seed=4, requires_grad=False).abs() + 0.5
    args = [(_t(a) if isinstance(a, lucid.Tensor) else a) for a in (x, w, b, rm, rv)]
    _close(lucid.batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5, True),
           torch.batch_norm(*args, False, 0.1, 1e-5, True), rtol=1e-10)
    _close(lucid.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, True),
           torch.instance_norm(args[0], args[1], args[2], None, None, True, 0.1, 1e-5, True), rtol=1e-9, atol=1e-12)
    table, idx = leaf(6, 3), lucid.tensor([[0, 2], [5, 2]])
    _close(lucid.embedding(table, idx, 2), torch.embedding(_t(table), _t(idx), 2))
    assert lucid.dropout(x, 0.5, False) is x or np.array_equal(lucid.dropout(x, 0.5, False).numpy(), x.numpy())
    assert np.array_equal(lucid.dropout(x, 1.0, True).numpy(), np.zeros((4, 3, 5)))
    logp, p = leaf(4, 3).log_softmax(1), leaf(4, 3, seed=5).softmax(1)
    for red in (0, 1, 2):
        _close(lucid.kl_div(logp, p, red), torch.kl_div(_t(logp), _t(p), red), rtol=1e-10)
        _close(lucid.binary_cross_entropy_with_logits(x, x.sigmoid(), None, None, red),
               torch.binary_cross_entropy_with_logits(_t(x), _t(x).sigmoid(), None, None, red), rtol=1e-10)
    with pytest.raises(RuntimeError, match="not a valid value for reduction"):
        lucid.kl_div(logp, p, 3)


@pytest.mark.parametrize("name", ["absolute", "deg2rad", "rad2deg", "sgn", "signbit"])
def test_unary_matches_torch(name):
    for x in (lucid.tensor([-2.5, -0.0, 0.0, 1.5, float("inf")]), lucid.tensor([-3, 0, 4])):
        ours, theirs = getattr(lucid, name)(x), getattr(torch, name)(_t(x))
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        _close(ours, theirs, rtol=1e-6)
    if name != "signbit":
        y = lucid.tensor([-2.0, 3.0])
        getattr(y, name + "_")()
        _close(y, getattr(torch, name)(torch.tensor([-2.0, 3.0])))


def test_sgn_of_complex_is_the_unit_phase():
    z = lucid.tensor(np.array([3 + 4j, 0j, -2j], dtype=np.complex64))
    _close(lucid.sgn(z), torch.sgn(torch.from_numpy(z.numpy())), rtol=1e-6)


def test_addcmul_addcdiv_values_and_gradients():
    a, b, c = leaf(3, 4), leaf(3, 4, seed=1), leaf(4, seed=2, low=1, high=2)
    _close(lucid.addcmul(a, b, c, value=0.5), torch.addcmul(_t(a), _t(b), _t(c), value=0.5), rtol=1e-12)
    _close(lucid.addcdiv(a, b, c, value=-2), torch.addcdiv(_t(a), _t(b), _t(c), value=-2), rtol=1e-12)
    check_grads(lambda a, b, c: lucid.addcmul(a, b, c, value=0.5), a, b, c)
    check_grads(lambda a, b, c: lucid.addcdiv(a, b, c, value=-2), a, b, c)
    y = a.detach().clone()
    y.addcmul_(b.detach(), c.detach(), value=2)
    _close(y, torch.addcmul(_t(a), _t(b), _t(c), value=2), rtol=1e-12)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        lucid.addcdiv(a, lucid.tensor([1, 2, 3, 4]), lucid.tensor([1, 2, 3, 4]))


def test_heaviside_matches_torch():
    x, v = lucid.tensor([-1.0, 0.0, 2.0]), lucid.tensor([0.5])
    _close(lucid.heaviside(x, v), torch.heaviside(_t(x), _t(v)))
    with pytest.raises(RuntimeError, match="different dtypes"):
        lucid.heaviside(x, lucid.tensor([1]))


def test_numpy_spelled_in_place_methods():
    x = lucid.tensor([1.0, -2.0])
    x.multiply_(3).subtract_(1).divide_(2).absolute_()
    _close(x, torch.tensor([1.0, -2.0]).multiply(3).subtract(1).divide(2).absolute())


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("shape", [(), (5,), (2, 5), (3, 4, 5), (2, 3, 4, 5)])
def test_functional_softmax_without_dim_takes_pytorchs_implicit_dim_and_warns(name, shape):
    x = leaf(*shape)
    with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name} has been deprecated") as rec:
        ours = getattr(lucid.nn.functional, name)(x)
    assert rec[0].filename == __file__  # the warning points at the caller
    with pytest.warns(UserWarning):
        theirs = getattr(torch.nn.functional, name)(_t(x))
    _close(ours, theirs, rtol=1e-12)
    module = {"softmax": lucid.nn.Softmax, "log_softmax": lucid.nn.LogSoftmax, "softmin": lucid.nn.Softmin}[name]
    with pytest.warns(UserWarning, match="Implicit dimension choice"):
        _close(module()(x), theirs, rtol=1e-12)


def test_softmin_with_dim_and_dtype_matches_torch():
    x = leaf(3, 4)
    _close(lucid.nn.functional.softmin(x, 0), torch.nn.functional.softmin(_t(x), 0), rtol=1e-12)
    assert lucid.nn.functional.softmin(x.float(), 1, dtype=lucid.float64).dtype == lucid.float64
    check_grads(lambda x: lucid.nn.functional.softmin(x, 1), x)


@pytest.mark.parametrize("args", [(3, 4), (5,), (), ([1, 2],), ([[1, 2], [3, 4]],), ((2, 3),), ("size", 2, 1),
                                  ("numpy",)])
def test_legacy_tensor_constructor_is_pytorchs(args):
    def build(lib):
        if args and args[0] == "size":
            return lib.Tensor(lib.Size(args[1:]))
        if args == ("numpy",):
            return lib.Tensor(np.array([1, 2, 3]))
        return lib.Tensor(*args)
    ours, theirs = build(lucid), build(torch)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype == lucid.float32
    if theirs.numel() and not (args and isinstance(args[0], (int, str))):  # sized ones: uninitialised in PyTorch
        _close(ours, theirs)
    with pytest.raises(TypeError, match=r"new\(\): data must be a sequence \(got float\)"):
        lucid.Tensor(2.5)
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        lucid.Tensor(-1)


def test_legacy_typed_constructors_and_new():
    assert lucid.FloatTensor(2, 3).shape == (2, 3) and lucid.LongTensor(4).dtype == lucid.int64
    x = lucid.ones(2, dtype=lucid.float64)
    y = x.new(3, 2)
    assert y.shape == (3, 2) and y.dtype == lucid.float64
    assert x.new([1, 2]).dtype == lucid.float64


@pytest.mark.parametrize("name, args", [("lt_", (2.0,)), ("ge_", (2.0,)), ("eq_", (3.0,)), ("not_equal_", (1.0,)),
                                        ("logical_and_", ("zeros",)), ("logical_not_", ()), ("tan_", ()),
                                        ("rsqrt_", ()),
                                        ("log2_", ()), ("log10_", ()), ("true_divide_", (4.0,)), ("clip_", (1.5, 2.5)),
                                        ("fix_", ()), ("ldexp_", (None,))])
def test_in_place_methods_match_torch(name, args):
    base = np.array([1.0, 2.5, 3.0])
    ours, theirs = lucid.tensor(base), torch.tensor(base)
    if args == (None,):
        args_l, args_t = (lucid.tensor([1.0, 2.0, -1.0]),), (torch.tensor([1.0, 2.0, -1.0]),)
    elif args == ("zeros",):
        args_l, args_t = (lucid.tensor([0.0, 1.0, 0.0]),), (torch.tensor([0.0, 1.0, 0.0]),)
    else:
        args_l = args_t = args
    assert getattr(ours, name)(*args_l) is ours
    getattr(theirs, name)(*args_t)
    assert ours.dtype == lucid.float64
    _close(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("name, args", [("relu_", ()), ("zero_", ()), ("clamp_", (0.0, 1.0)), ("fill_", (2.0,)),
                                        ("sigmoid_", ()), ("exp2_", ()), ("xlogy_", ("twos",)), ("nan_to_num_", ())])
def test_top_level_in_place_functions_match_torch(name, args):
    base = np.array([-1.5, 0.25, 3.0])
    ours, theirs = lucid.tensor(base), torch.tensor(base)
    if args == ("twos",):
        args = (lucid.full((3,), 2.0, dtype=lucid.float64), torch.full((3,), 2.0, dtype=torch.float64))
        assert getattr(lucid, name)(ours, args[0]) is ours
        getattr(torch, name)(theirs, args[1])
    else:
        assert getattr(lucid, name)(ours, *args) is ours
        getattr(torch, name)(theirs, *args)
    _close(ours, theirs, rtol=1e-12)


@pytest.mark.parametrize("red", [0, 1, 2])
def test_aten_losses_take_an_integer_reduction(red):
    a, b, y = leaf(4, 3, requires_grad=False), leaf(4, 3, seed=1, requires_grad=False), lucid.tensor([1, -1, 1, -1])
    ta, tb, ty = _t(a), _t(b), _t(y)
    _close(lucid.cosine_embedding_loss(a, b, y, 0.1, red), torch.cosine_embedding_loss(ta, tb, ty, 0.1, red),
           rtol=1e-10)
    _close(lucid.hinge_embedding_loss(a[:, 0], y.double(), 0.5, red),
           torch.hinge_embedding_loss(ta[:, 0], ty.double(), 0.5, red), rtol=1e-10)
    _close(lucid.margin_ranking_loss(a[:, 0], b[:, 0], y.double(), 0.2, red),
           torch.margin_ranking_loss(ta[:, 0], tb[:, 0], ty.double(), 0.2, red), rtol=1e-10)
    _close(lucid.poisson_nll_loss(a, b.abs(), True, True, 1e-8, red),
           torch.poisson_nll_loss(ta, tb.abs(), True, True, 1e-8, red), rtol=1e-10)
    _close(lucid.triplet_margin_loss(a, b, a.flip(0), 1.0, 2, 1e-6, True, red),
           torch.triplet_margin_loss(ta, tb, ta.flip(0), 1.0, 2, 1e-6, True, red), rtol=1e-10)
    assert np.array_equal(lucid.alpha_dropout(a, 0.5, False).numpy(), a.numpy())


def test_channel_shuffle_and_distance_layers_match_torch():
    x = leaf(2, 6, 3, requires_grad=False)
    tx = _t(x)
    _close(lucid.nn.functional.channel_shuffle(x, 3), torch.nn.functional.channel_shuffle(tx, 3))
    _close(lucid.channel_shuffle(x, 2), torch.channel_shuffle(tx, 2))
    _close(lucid.nn.ChannelShuffle(3)(x), torch.nn.ChannelShuffle(3)(tx))
    assert repr(lucid.nn.ChannelShuffle(3)) == repr(torch.nn.ChannelShuffle(3))
    for bad in ((x[0, 0], 2), (x, 0), (x, 4)):
        with pytest.raises(RuntimeError) as want:
            torch.nn.functional.channel_shuffle(_t(bad[0]), bad[1])
        with pytest.raises(RuntimeError) as got:
            lucid.nn.functional.channel_shuffle(*bad)
        assert str(got.value) == str(want.value)
    check_grads(lambda t: lucid.nn.functional.channel_shuffle(t, 2), leaf(1, 4, 2))
    a, b = leaf(4, 5, requires_grad=False), leaf(4, 5, seed=1, requires_grad=False)
    _close(lucid.nn.CosineSimilarity(0)(a, b), torch.nn.CosineSimilarity(0)(_t(a), _t(b)), rtol=1e-10)
    _close(lucid.nn.PairwiseDistance(1.0, keepdim=True)(a, b),
           torch.nn.PairwiseDistance(1.0, keepdim=True)(_t(a), _t(b)), rtol=1e-10)
