"""lucid.optim.swa_utils against torch.optim.swa_utils: same initial weights, same updates, same results."""
import numpy as np
import pytest

import lucid
from lucid.optim import swa_utils

torch = pytest.importorskip("torch")


def _pair(seed=0):
    """The same small model (Linear, BatchNorm1d, Linear) in lucid and torch, with the same weights."""
    lm = lucid.nn.Sequential(lucid.nn.Linear(3, 4), lucid.nn.BatchNorm1d(4), lucid.nn.Linear(4, 2))
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    _copy_into(lm, tm, seed)
    return lm, tm


def _copy_into(lm, tm, seed):
    rng = np.random.default_rng(seed)
    for (name, lp), (_, tp) in zip(lm.state_dict().items(), tm.state_dict().items()):
        if tp.is_floating_point():
            v = (np.abs(rng.standard_normal(tuple(tp.shape))) + 0.1).astype(np.float32)  # running_var > 0
            with torch.no_grad():
                tp.copy_(torch.from_numpy(v))
            with lucid.no_grad():
                lp.copy_(lucid.tensor(v))


def _close(lsd, tsd):
    assert list(lsd) == list(tsd)
    for k in tsd:
        np.testing.assert_allclose(np.asarray(lsd[k].numpy(), dtype=np.float64),
                                   tsd[k].double().numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema", "swa_fn", "swa_buffers"])
def test_averaged_model_matches_torch(kind):
    lm, tm = _pair()
    kw_l, kw_t = {}, {}
    if kind == "ema_multi":
        kw_l["multi_avg_fn"], kw_t["multi_avg_fn"] = (swa_utils.get_ema_multi_avg_fn(0.9),
                                                      torch.optim.swa_utils.get_ema_multi_avg_fn(0.9))
    elif kind == "ema":
        kw_l["avg_fn"], kw_t["avg_fn"] = swa_utils.get_ema_avg_fn(0.8), torch.optim.swa_utils.get_ema_avg_fn(0.8)
    elif kind == "swa_fn":
        kw_l["avg_fn"], kw_t["avg_fn"] = swa_utils.get_swa_avg_fn(), torch.optim.swa_utils.get_swa_avg_fn()
    elif kind == "swa_buffers":
        kw_l["use_buffers"] = kw_t["use_buffers"] = True
    la, ta = swa_utils.AveragedModel(lm, **kw_l), torch.optim.swa_utils.AveragedModel(tm, **kw_t)
    for step in range(4):
        _copy_into(lm, tm, seed=step + 1)
        x = np.random.default_rng(10 + step).standard_normal((5, 3)).astype(np.float32)
        lm(lucid.tensor(x)), tm(torch.from_numpy(x))  # moves the BatchNorm statistics (and its int64 counter)
        la.update_parameters(lm)
        ta.update_parameters(tm)
        _close(la.state_dict(), ta.state_dict())
    assert int(la.n_averaged.item()) == 4 and la.n_averaged.dtype == lucid.int64
    x = np.ones((2, 3), np.float32)
    la.eval(), ta.eval()
    np.testing.assert_allclose(la(lucid.tensor(x)).detach().numpy(), ta(torch.from_numpy(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_averaged_model_rejects_both_fns_and_checks_decay():
    lm, _ = _pair()
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        swa_utils.AveragedModel(lm, avg_fn=swa_utils.get_swa_avg_fn(), multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
    for fn in (swa_utils.get_ema_avg_fn, swa_utils.get_ema_multi_avg_fn):
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided"):
            fn(1.5)


def test_averaged_model_state_dict_round_trip():
    lm, _ = _pair()
    la = swa_utils.AveragedModel(lm)
    la.update_parameters(lm)
    lb = swa_utils.AveragedModel(lm)
    lb.load_state_dict(la.state_dict())
    assert int(lb.n_averaged.item()) == 1
    assert set(la.state_dict()) == {"n_averaged"} | {"module." + k for k in lm.state_dict()}


def test_update_bn_matches_torch():
    lm, tm = _pair()
    data = [np.random.default_rng(i).standard_normal((4, 3)).astype(np.float32) for i in range(3)]
    swa_utils.update_bn([(lucid.tensor(x), 0) for x in data], lm)
    torch.optim.swa_utils.update_bn([(torch.from_numpy(x), 0) for x in data], tm)
    _close(lm.state_dict(), tm.state_dict())
    assert lm[1].momentum == tm[1].momentum == 0.1 and lm.training


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 3])
def test_swalr_matches_torch(strategy, anneal_epochs):
    lw, tw = lucid.zeros(2, requires_grad=True), torch.zeros(2, requires_grad=True)
    lo = lucid.optim.SGD([{"params": [lw]}, {"params": [lucid.zeros(1, requires_grad=True)], "lr": 0.5}], lr=1.0)
    to = torch.optim.SGD([{"params": [tw]}, {"params": [torch.zeros(1, requires_grad=True)], "lr": 0.5}], lr=1.0)
    ls = swa_utils.SWALR(lo, swa_lr=[0.05, 0.1], anneal_epochs=anneal_epochs, anneal_strategy=strategy)
    ts = torch.optim.swa_utils.SWALR(to, swa_lr=[0.05, 0.1], anneal_epochs=anneal_epochs, anneal_strategy=strategy)
    for _ in range(6):
        np.testing.assert_allclose(ls.get_last_lr(), ts.get_last_lr(), rtol=1e-12)
        lo.step(), to.step()
        ls.step(), ts.step()
    sd = ls.state_dict()
    assert "anneal_func" not in sd and sd["_anneal_strategy"] == strategy
    ls2 = swa_utils.SWALR(lo, swa_lr=1.0, anneal_strategy="cos" if strategy == "linear" else "linear")
    ls2.load_state_dict(sd)
    assert ls2.anneal_func is getattr(swa_utils.SWALR, "_cosine_anneal" if strategy == "cos" else "_linear_anneal")


def test_swalr_rejects_bad_options():
    opt = lucid.optim.SGD([lucid.zeros(1, requires_grad=True)], lr=1.0)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got exp"):
        swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
        swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr must have the same length as optimizer.param_groups"):
        swa_utils.SWALR(opt, [0.1, 0.2])


def test_compat_torch_optim_swa_utils_is_lucids():
    from lucid.compat import torch as ctorch
    import importlib
    assert importlib.import_module(ctorch.__name__ + ".optim.swa_utils") is swa_utils
