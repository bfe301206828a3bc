"""stft and istft (ops/signal.py) against torch: windows, center and pad modes, one-sided and two-sided, batches,
normalization, lengths; the round trip; gradients; errors."""
import warnings

import numpy as np
import pytest

import lucid
from helpers import leaf

torch = pytest.importorskip("torch")


def _t(x):
    return torch.from_numpy(np.array(x.detach().numpy()))


def _close(ours, theirs, **kw):
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy().astype(ours.detach().numpy().dtype),
                               **kw)


CASES = [dict(n_fft=16, window="hann"), dict(n_fft=16, hop_length=3, window="hann", normalized=True),
         dict(n_fft=16, win_length=12, window="hamming"), dict(n_fft=15, center=False, window="hann"),
         dict(n_fft=16, pad_mode="constant", window="hann"), dict(n_fft=8, onesided=False, window="hann"),
         dict(n_fft=16, win_length=10, center=False, align_to_window=True, window="hann"), dict(n_fft=16)]


def _kw(case, lib):
    kw = dict(case)
    win = kw.pop("window", None)
    if win is not None:
        wl = kw.get("win_length", kw["n_fft"])
        kw["window"] = getattr(lib, f"{win}_window")(wl, dtype=lib.float32)
    return kw


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("batched", [False, True])
def test_stft_matches_torch(case, batched):
    x = lucid.tensor(np.random.default_rng(0).normal(size=(3, 100) if batched else (100,)).astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = lucid.stft(x, return_complex=True, **_kw(case, lucid))
        theirs = torch.stft(_t(x), return_complex=True, **_kw(case, torch))
        _close(ours, theirs, rtol=1e-4, atol=1e-4)
        _close(lucid.stft(x, return_complex=False, **_kw(case, lucid)),
               torch.stft(_t(x), return_complex=False, **_kw(case, torch)), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", [dict(n_fft=16), dict(n_fft=16, hop_length=5, normalized=True),
                                  dict(n_fft=16, win_length=12), dict(n_fft=15, hop_length=4),
                                  dict(n_fft=16, length=90), dict(n_fft=16, length=130), dict(n_fft=8, onesided=False)])
def test_istft_matches_torch_and_inverts_stft(case):
    x = np.random.default_rng(1).normal(size=(2, 100)).astype(np.float32)
    n_fft, wl = case["n_fft"], case.get("win_length", case["n_fft"])
    skw = {k: v for k, v in case.items() if k in ("n_fft", "hop_length", "win_length", "center", "normalized",
                                                   "onesided")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = torch.stft(torch.tensor(x), window=torch.hann_window(wl), return_complex=True, **skw)
        theirs = torch.istft(spec, window=torch.hann_window(wl), **case)
        ours = lucid.istft(lucid.tensor(spec.numpy()), window=lucid.hann_window(wl), **case)
    _close(ours, theirs, rtol=1e-4, atol=1e-4)
    if case.get("center", True) and "length" in case and case["length"] <= 100:
        np.testing.assert_allclose(ours.numpy(), x[:, :case["length"]], atol=1e-4)
    del n_fft


def test_stft_istft_gradients_match_torch():
    x = leaf(60, seed=2)
    xf = lucid.tensor(x.detach().numpy().astype(np.float32), requires_grad=True)
    spec = lucid.stft(xf, 16, window=lucid.hann_window(16), return_complex=True)
    loss = lucid.view_as_real(spec).pow(2).sum()
    (g,) = (lucid.autograd.grad(loss, xf),)
    tx = _t(xf).requires_grad_()
    tspec = torch.stft(tx, 16, window=torch.hann_window(16), return_complex=True)
    torch.view_as_real(tspec).pow(2).sum().backward()
    _close(g, tx.grad, rtol=1e-4, atol=1e-3)
    s = lucid.tensor(tspec.detach().numpy(), requires_grad=True)
    y = lucid.istft(s, 16, window=lucid.hann_window(16))
    gs = lucid.autograd.grad((y * y).sum(), s)
    ts = tspec.detach().clone().requires_grad_()
    ty = torch.istft(ts, 16, window=torch.hann_window(16))
    (ty * ty).sum().backward()
    _close(gs, ts.grad, rtol=1e-3, atol=1e-4)


def test_stft_istft_errors():
    x = lucid.ones(100)
    with pytest.raises(RuntimeError, match="stft requires the return_complex parameter be given for real inputs"):
        lucid.stft(x, 16)
    for kw, match in ((dict(n_fft=200), "expected 0 < n_fft < 100, but got n_fft=200"),
                      (dict(n_fft=16, hop_length=0), "expected hop_length > 0, but got hop_length=0"),
                      (dict(n_fft=16, win_length=20), "expected 0 < win_length <= n_fft, but got win_length=20"),
                      (dict(n_fft=16, window=lucid.ones(12)), "expected a 1D window tensor of size equal to "
                                                              "win_length=16, but got window with size \\[12\\]"),
                      (dict(n_fft=16, align_to_window=True), "align_to_window should only be set when center = false")):
        with pytest.raises(RuntimeError, match=match):
            lucid.stft(x, center=kw.pop("center", kw["n_fft"] != 200), return_complex=True, **kw)
    with pytest.warns(UserWarning, match="A window was not provided"):
        lucid.stft(x, 16, return_complex=True)
    spec = lucid.stft(x, 16, window=lucid.hann_window(16), return_complex=True)
    with pytest.raises(RuntimeError, match="istft requires a complex-valued input"):
        lucid.istft(lucid.real(spec), 16)
    with pytest.raises(RuntimeError, match="match n_fft when onesided=False, but got 9"):
        lucid.istft(spec, 16, window=lucid.hann_window(16), onesided=False)
    with pytest.raises(RuntimeError, match="window overlap add min"):
        lucid.istft(spec, 16, window=lucid.hann_window(16), center=False).numpy()
