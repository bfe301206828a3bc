"""nn layers ported programs use: the padding layers, Fold/Unfold, grid_sample/affine_grid, EmbeddingBag,
weight_norm/spectral_norm and packed sequences. Values against PyTorch when installed (numpy where simple),
gradients by gradcheck + gradgradcheck in float64."""
import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from helpers import check_grads, leaf

RNG = np.random.default_rng(0)

PADS = [("ReflectionPad1d", (2, 1), (2, 3, 5)), ("ReflectionPad2d", 1, (1, 2, 3, 4)),
        ("ReflectionPad3d", (1, 0, 1, 1, 0, 1), (1, 1, 3, 3, 3)), ("ReplicationPad1d", 3, (2, 4)),
        ("ReplicationPad2d", (0, 2, 1, 0), (1, 2, 3, 3)), ("ReplicationPad3d", 1, (1, 1, 2, 2, 2)),
        ("ZeroPad1d", (1, 2), (2, 3)), ("ZeroPad2d", (1, 0, 2, 1), (1, 1, 2, 2)), ("ZeroPad3d", 1, (1, 1, 1, 2, 2)),
        ("ConstantPad1d", 2, (1, 3)), ("ConstantPad2d", (1, 1, 0, 2), (1, 2, 2)),
        ("ConstantPad3d", (0, 1, 1, 0, 1, 0), (1, 1, 2, 2, 2)), ("CircularPad2d", 1, (1, 1, 3, 3))]


@pytest.mark.parametrize("name, padding, shape", PADS, ids=[p[0] for p in PADS])
def test_padding_layers_match_pytorch(name, padding, shape):
    torch = pytest.importorskip("torch")
    args = (padding, 1.5) if name.startswith("Constant") else (padding,)
    a = RNG.normal(size=shape)
    out = getattr(nn, name)(*args)(lucid.tensor(a)).numpy()
    ref = getattr(torch.nn, name)(*args)(torch.tensor(a)).numpy()
    np.testing.assert_allclose(out, ref)


def test_padding_layer_gradients_and_repr():
    check_grads(nn.ReflectionPad2d((1, 2, 0, 1)), leaf(1, 1, 3, 4))
    check_grads(nn.ReplicationPad1d(2), leaf(2, 3))
    assert repr(nn.ConstantPad2d(1, 0.5)) == "ConstantPad2d(padding=(1, 1, 1, 1), value=0.5)"
    assert repr(nn.ZeroPad2d((1, 2, 3, 4))) == "ZeroPad2d(padding=(1, 2, 3, 4))"
    with pytest.raises(ValueError, match="4 entries"):
        nn.ReflectionPad2d((1, 2))


def test_fold_unfold_modules():
    x = leaf(2, 3, 5, 4)
    unfold = nn.Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=(1, 2))
    cols = unfold(x)
    fold = nn.Fold(output_size=(5, 4), kernel_size=(2, 3), padding=1, stride=(1, 2))
    assert fold(cols).shape == x.shape
    check_grads(lambda t: fold(unfold(t)), leaf(1, 1, 5, 4))
    torch = pytest.importorskip("torch")
    ref = torch.nn.Unfold((2, 3), padding=1, stride=(1, 2))(torch.tensor(x.detach().numpy()))
    np.testing.assert_allclose(cols.detach().numpy(), ref.numpy())
    ref_fold = torch.nn.Fold((5, 4), (2, 3), padding=1, stride=(1, 2))(ref)
    np.testing.assert_allclose(fold(cols).detach().numpy(), ref_fold.numpy())


GRID_CASES = [(mode, pad, align) for mode in ("bilinear", "nearest") for pad in ("zeros", "border", "reflection")
              for align in (False, True)]


@pytest.mark.parametrize("mode, padding_mode, align_corners", GRID_CASES, ids=str)
@pytest.mark.parametrize("dims", [2, 3])
def test_grid_sample_matches_pytorch(mode, padding_mode, align_corners, dims):
    torch = pytest.importorskip("torch")
    shape = (2, 3, 4, 5) if dims == 2 else (2, 2, 3, 4, 5)
    a = RNG.normal(size=shape)
    g = RNG.uniform(-1.4, 1.4, size=(2, 3, 4, dims) if dims == 2 else (2, 2, 3, 2, dims))
    x, grid = lucid.tensor(a, requires_grad=True), lucid.tensor(g, requires_grad=True)
    out = F.grid_sample(x, grid, mode, padding_mode, align_corners)
    tx, tg = torch.tensor(a, requires_grad=True), torch.tensor(g, requires_grad=True)
    ref = torch.nn.functional.grid_sample(tx, tg, mode, padding_mode, align_corners)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = RNG.normal(size=ref.shape)
    (out * lucid.tensor(w)).sum().backward()
    (ref * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grid.grad.numpy(), tg.grad.numpy(), rtol=1e-8, atol=1e-10)  # (nearest: zeros)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_gradcheck(padding_mode):
    x = leaf(1, 2, 3, 4)
    grid = leaf(1, 2, 3, 2, low=-1.2, high=1.2, seed=1)
    check_grads(lambda a, g: F.grid_sample(a, g, padding_mode=padding_mode, align_corners=False), x, grid)


def test_affine_grid_matches_pytorch_and_is_differentiable():
    torch = pytest.importorskip("torch")
    for size, shape in (((2, 3, 4, 5), (2, 2, 3)), ((1, 1, 2, 3, 4), (1, 3, 4))):
        theta = RNG.normal(size=shape)
        for align in (False, True):
            out = F.affine_grid(lucid.tensor(theta), size, align_corners=align)
            ref = torch.nn.functional.affine_grid(torch.tensor(theta), size, align_corners=align)
            np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-10, atol=1e-12)
    check_grads(lambda t: F.affine_grid(t, (1, 1, 3, 4), align_corners=False), leaf(1, 2, 3))
    with pytest.warns(UserWarning, match="align_corners"):
        F.affine_grid(lucid.tensor(RNG.normal(size=(1, 2, 3))), (1, 1, 2, 2))
    with pytest.raises(ValueError, match="affine matrices"):
        F.affine_grid(lucid.zeros(1, 3, 3), (1, 1, 2, 2), align_corners=False)


def test_grid_sample_errors():
    x = lucid.zeros(1, 1, 2, 2)
    with pytest.raises(ValueError, match="padding_mode"):
        F.grid_sample(x, lucid.zeros(1, 1, 1, 2), padding_mode="wrap", align_corners=False)
    with pytest.raises(RuntimeError, match="size 2 in last dimension"):
        F.grid_sample(x, lucid.zeros(1, 1, 1, 3), align_corners=False)


BAG_CASES = [("sum", False, None, False), ("mean", False, None, False), ("max", False, None, False),
             ("sum", True, None, False), ("mean", False, 2, False), ("max", False, 2, True), ("sum", False, 2, True)]


@pytest.mark.parametrize("mode, weighted, padding_idx, last", BAG_CASES, ids=str)
@pytest.mark.parametrize("layout", ["1d", "2d"])
def test_embedding_bag_matches_pytorch(mode, weighted, padding_idx, last, layout):
    torch = pytest.importorskip("torch")
    w = RNG.normal(size=(6, 3))
    if layout == "2d":
        if last:
            pytest.skip("include_last_offset needs offsets")
        idx, offsets = np.array([[1, 2, 2, 5], [0, 2, 4, 4]]), None
    else:
        idx, offsets = np.array([1, 2, 2, 5, 0, 2, 4, 3]), np.array([0, 3, 3, 6] + ([8] if last else []))
    psw = RNG.uniform(0.5, 1.5, idx.shape) if weighted else None

    def run(lib):
        weight = lib.tensor(w, requires_grad=True)
        sample_w = None if psw is None else lib.tensor(psw, requires_grad=True)
        out = lib.nn.functional.embedding_bag(lib.tensor(idx), weight, None if offsets is None else lib.tensor(offsets),
                                              mode=mode, per_sample_weights=sample_w, include_last_offset=last,
                                              padding_idx=padding_idx)
        (out * lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(tuple(out.shape)))).sum().backward()
        grads = [weight.grad.numpy()] + ([] if sample_w is None else [sample_w.grad.numpy()])
        return [out.detach().numpy()] + grads

    for mine, ref in zip(run(lucid), run(torch)):
        np.testing.assert_allclose(mine, ref, rtol=1e-12, atol=1e-12)


def test_embedding_bag_module_gradcheck_and_errors():
    bag = nn.EmbeddingBag(5, 2, mode="sum").double()
    idx, offsets = lucid.tensor([0, 4, 4, 1]), lucid.tensor([0, 2])
    check_grads(lambda w, s: F.embedding_bag(idx, w, offsets, mode="sum", per_sample_weights=s),
                leaf(5, 2), leaf(4, seed=1))
    assert bag(idx, offsets).shape == (2, 2)
    assert repr(nn.EmbeddingBag(5, 2)) == "EmbeddingBag(5, 2, mode='mean')"
    with pytest.raises(RuntimeError, match="found idx to be 5"):  # PyTorch's type and message
        bag(lucid.tensor([0, 5]), lucid.tensor([0]))
    with pytest.raises(RuntimeError, match="found idx to be 5"):  # a 2-D input's check is deferred to evaluation
        bag(lucid.tensor([[0, 5]])).tolist()
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        bag(idx, lucid.tensor([1, 2]))
    with pytest.raises(ValueError, match="offsets has to be None"):
        bag(idx.reshape(2, 2), offsets)
    with pytest.raises(NotImplementedError, match="only supported for mode='sum'"):
        F.embedding_bag(idx, bag.weight, offsets, mode="mean", per_sample_weights=lucid.ones(4))


def _copy_params(src, dst):
    import torch
    with torch.no_grad():
        for name, p in dst.named_parameters():
            p.copy_(torch.tensor(dict(src.named_parameters())[name].detach().numpy()))


def test_weight_norm_matches_pytorch():
    torch = pytest.importorskip("torch")
    lin = nn.utils.weight_norm(nn.Linear(4, 3).double())
    assert sorted(n for n, _ in lin.named_parameters()) == ["bias", "weight_g", "weight_v"]
    tlin = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3).double())
    _copy_params(lin, tlin)
    x = RNG.normal(size=(5, 4))
    out, ref = lin(lucid.tensor(x)), tlin(torch.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(lin.weight_g.grad.numpy(), tlin.weight_g.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(lin.weight_v.grad.numpy(), tlin.weight_v.grad.numpy(), rtol=1e-10)
    conv = nn.utils.weight_norm(nn.Conv2d(2, 3, 3), dim=None)
    assert conv.weight_g.shape == ()
    nn.utils.remove_weight_norm(lin)
    assert sorted(n for n, _ in lin.named_parameters()) == ["bias", "weight"]
    np.testing.assert_allclose(lin(lucid.tensor(x)).detach().numpy(), ref.detach().numpy(), rtol=1e-12)


def test_spectral_norm_normalises_the_largest_singular_value():
    lucid.manual_seed(0)
    lin = nn.utils.spectral_norm(nn.Linear(6, 4).double(), n_power_iterations=30)
    assert sorted(lin.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    x = lucid.tensor(RNG.normal(size=(2, 6)))
    lin(x)
    sigma = np.linalg.svd(lin.weight.detach().numpy(), compute_uv=False)[0]
    assert abs(sigma - 1) < 1e-4  # power iteration converges at the ratio of the top two singular values
    lin(x).sum().backward()
    assert lin.weight_orig.grad is not None
    nn.utils.remove_spectral_norm(lin)
    assert "weight" in dict(lin.named_parameters())


@pytest.mark.parametrize("kind, bidirectional", [("LSTM", False), ("GRU", True), ("RNN", False), ("LSTM", True)])
def test_packed_sequences_through_rnns_match_pytorch(kind, bidirectional):
    torch = pytest.importorskip("torch")
    from lucid.nn.utils import rnn as R
    lengths = [3, 5, 2]
    seqs = [RNG.normal(size=(n, 4)) for n in lengths]
    mine = getattr(nn, kind)(4, 3, num_layers=2, bidirectional=bidirectional).double()
    ref = getattr(torch.nn, kind)(4, 3, num_layers=2, bidirectional=bidirectional).double()
    _copy_params(mine, ref)
    leaves = [lucid.tensor(s, requires_grad=True) for s in seqs]
    tleaves = [torch.tensor(s, requires_grad=True) for s in seqs]
    packed = R.pack_sequence(leaves, enforce_sorted=False)
    tpacked = torch.nn.utils.rnn.pack_sequence(tleaves, enforce_sorted=False)
    np.testing.assert_array_equal(packed.batch_sizes.numpy(), tpacked.batch_sizes.numpy())
    np.testing.assert_allclose(packed.data.detach().numpy(), tpacked.data.detach().numpy())
    out, hidden = mine(packed)
    tout, thidden = ref(tpacked)
    padded, lens = R.pad_packed_sequence(out, batch_first=True)
    tpadded, tlens = torch.nn.utils.rnn.pad_packed_sequence(tout, batch_first=True)
    np.testing.assert_array_equal(lens.numpy(), tlens.numpy())
    np.testing.assert_allclose(padded.detach().numpy(), tpadded.detach().numpy(), rtol=1e-10, atol=1e-12)
    h, th = (hidden[0], thidden[0]) if kind == "LSTM" else (hidden, thidden)
    np.testing.assert_allclose(h.detach().numpy(), th.detach().numpy(), rtol=1e-10, atol=1e-12)
    (padded.sum() + h.sum()).backward()
    (tpadded.sum() + th.sum()).backward()
    for a, b in zip(leaves, tleaves):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_pad_sequence_and_pack_round_trip():
    from lucid.nn.utils import rnn as R
    seqs = [lucid.tensor([1.0, 2.0, 3.0]), lucid.tensor([4.0]), lucid.tensor([5.0, 6.0])]
    np.testing.assert_array_equal(R.pad_sequence(seqs, batch_first=True, padding_value=-1).numpy(),
                                  [[1, 2, 3], [4, -1, -1], [5, 6, -1]])
    np.testing.assert_array_equal(R.pad_sequence(seqs, padding_side="left").numpy(),
                                  [[1, 0, 0], [2, 0, 5], [3, 4, 6]])
    back = R.unpack_sequence(R.pack_sequence(seqs, enforce_sorted=False))
    for a, b in zip(back, seqs):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    padded = R.pad_sequence(seqs)
    packed = R.pack_padded_sequence(padded, [3, 1, 2], enforce_sorted=False)
    out, lengths = R.pad_packed_sequence(packed, total_length=4)
    assert out.shape == (4, 3) and lengths.tolist() == [3, 1, 2]
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        R.pack_padded_sequence(padded, [1, 3, 2])
    check_grads(lambda t: R.pad_packed_sequence(R.pack_padded_sequence(t, [3, 1], batch_first=True),
                                                batch_first=True)[0], leaf(2, 3, 2))
