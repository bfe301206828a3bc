"""Module state and conversions as in PyTorch: ``Module.to``'s argument forms, extra state that is not a dict,
spectral_norm's state_dict version and the conversion of older state dicts, ``torch.nn.modules.utils`` and the
DataParallel replica. Compared with PyTorch where it is installed."""
from collections import OrderedDict
from copy import deepcopy

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.nn.modules import utils as lutils


def _torch():
    return pytest.importorskip("torch")


def _to_calls(m):
    cpu = m.device("cpu")
    return [
        ((cpu, True), {}), ((m.long,), {}), ((None, True), {}), ((cpu, m.long, True), {}),
        ((cpu,), dict(dtype=m.long, non_blocking=True)), (([],), {}), (({},), dict(non_blocking=True)),
        ((m.tensor(3, dtype=m.long),), dict(non_blocking=True)),
        ((cpu, m.tensor(3, dtype=m.long)), dict(non_blocking=True)),
        ((cpu, m.float64, True), {}), ((m.float64,), {}), ((m.zeros(1, dtype=m.float64), False), {}),
        ((), dict(device="cpu", dtype=m.float32)),
    ]


def test_module_to_accepts_and_refuses_what_pytorch_does():
    torch = _torch()
    for (targs, tkw), (largs, lkw) in zip(_to_calls(torch), _to_calls(lucid)):
        tnet, lnet = torch.nn.Linear(3, 3), nn.Linear(3, 3)
        try:
            tnet.to(*targs, **tkw)
            expected = None
        except Exception as e:  # noqa: BLE001  (whatever PyTorch raises, lucid raises the same type)
            expected = type(e)
        if expected is None:
            lnet.to(*largs, **lkw)
            assert str(lnet.weight.dtype).split(".")[-1] == str(tnet.weight.dtype).split(".")[-1]
        else:
            with pytest.raises(expected):
                lnet.to(*largs, **lkw)


class _Extra(nn.Module):
    def __init__(self, foo):
        super().__init__()
        self.foo = foo

    def get_extra_state(self):
        return self.foo

    def set_extra_state(self, state):
        self.foo = state


@pytest.mark.parametrize("state", ["something", 5, "module"])
def test_extra_state_of_any_kind_round_trips(state):
    state = _Extra(3) if state == "module" else state  # a module as extra state becomes a submodule when set
    m, m2 = _Extra(state), _Extra("something else")
    m2.load_state_dict(m.state_dict())
    assert list(m.state_dict()) == list(m2.state_dict())
    assert (m2.foo.foo == 3) if isinstance(state, nn.Module) else m2.foo == state


def _spectral(module_lib, utils, seed):
    module_lib.manual_seed(seed)
    return utils.spectral_norm(module_lib.nn.Linear(3, 5))


def test_spectral_norm_state_dict_records_its_version():
    torch = _torch()
    tsd, lsd = _spectral(torch, torch.nn.utils, 0).state_dict(), _spectral(lucid, nn.utils, 0).state_dict()
    assert lsd._metadata[""]["spectral_norm"] == tsd._metadata[""]["spectral_norm"] == {"weight.version": 1}
    assert set(lsd) == set(tsd) == {"weight_orig", "bias", "weight_u", "weight_v"}


def _old_format(sd, weight):
    """A state_dict as spectral_norm saved it before version 1: no v, the normalized weight as ``weight``."""
    old = deepcopy(sd)
    del old._metadata[""]["spectral_norm"]
    del old["weight_v"]
    old["weight"] = weight
    return old


def test_spectral_norm_loads_a_pre_version_1_state_dict_as_pytorch():
    torch = _torch()
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    snm = _spectral(lucid, nn.utils, 1)
    for _ in range(3):
        snm(lucid.tensor(x))
    old = _old_format(snm.state_dict(), snm.weight.detach().clone())
    tsnm = torch.nn.utils.spectral_norm(torch.nn.Linear(3, 5))
    told = OrderedDict((k, torch.tensor(v.numpy())) for k, v in old.items())
    told._metadata = deepcopy(old._metadata)
    tsnm.load_state_dict(told)
    fresh = nn.utils.spectral_norm(nn.Linear(3, 5))
    fresh.load_state_dict(old)
    np.testing.assert_allclose(fresh.weight_v.numpy(), tsnm.weight_v.numpy(), rtol=1e-4, atol=1e-5)
    with lucid.no_grad():
        for training in (False, True):
            snm.train(training)
            fresh.train(training)
            np.testing.assert_allclose(fresh(lucid.tensor(x)).numpy(), snm(lucid.tensor(x)).numpy(), rtol=1e-4,
                                       atol=1e-5)


def test_spectral_norm_pre_version_1_state_dict_missing_keys():
    snm = _spectral(lucid, nn.utils, 0)
    old = _old_format(snm.state_dict(), snm.weight.detach().clone())
    del old["weight_u"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "weight_u"'):
        snm.load_state_dict(old)
    removed = nn.utils.remove_spectral_norm(snm)
    assert not removed._state_dict_hooks and not removed._load_state_dict_pre_hooks
    assert "spectral_norm" not in removed.state_dict()._metadata[""]


def test_modules_utils_match_pytorch():
    torch = _torch()
    from torch.nn.modules import utils as tutils
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for v in (3, (1, 2), [4, 5, 6]):
            assert getattr(lutils, name)(v) == getattr(tutils, name)(v)
    assert lutils._reverse_repeat_tuple((1, 2, 3), 2) == tutils._reverse_repeat_tuple((1, 2, 3), 2)
    assert lutils._list_with_default([None, 3], (1, 2, 5, 6)) == tutils._list_with_default([None, 3], (1, 2, 5, 6))
    assert lutils._list_with_default(7, (1, 2)) == 7
    with pytest.raises(ValueError, match="Input dimension should be at least 3"):
        lutils._list_with_default([None, 3], (5, 6))


def test_consume_prefix_in_state_dict_if_present():
    torch = _torch()
    net = nn.Sequential(nn.Linear(2, 2))
    tnet = torch.nn.Sequential(torch.nn.Linear(2, 2))
    wrapped, twrapped = nn.Sequential(), torch.nn.Sequential()
    wrapped.module, twrapped.module = net, tnet
    sd, tsd = wrapped.state_dict(), twrapped.state_dict()
    lutils.consume_prefix_in_state_dict_if_present(sd, "module.")
    torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(tsd, "module.")
    assert list(sd) == list(tsd) and list(sd._metadata) == list(tsd._metadata)
    net.load_state_dict(sd)


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_replica_for_data_parallel_takes_views_of_the_parameters(kind):
    params = [nn.Parameter(lucid.randn(2, 2)) for _ in range(2)]
    container = nn.ParameterList(params) if kind == "list" else nn.ParameterDict({"a": params[0], "b": params[1]})
    replica = container._replicate_for_data_parallel()
    assert type(replica) is type(container) and replica._is_replica and not replica._parameters
    for n, p in container.named_parameters():
        setattr(replica, n, p.view_as(p))
    pairs = zip(container, replica) if kind == "list" else zip(container.values(), replica.values())
    for p, p2 in pairs:
        np.testing.assert_array_equal(p.detach().numpy(), p2.detach().numpy())
        assert p2.grad_fn is not None and p2._base is p
    assert list(container.parameters()) == params  # the original keeps its own
