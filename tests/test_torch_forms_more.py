"""The top-level forms of ops/torch_forms.py, amp/settings.py, distributions/draws.py and compat's exception types,
against torch."""
import warnings

import numpy as np
import pytest

import lucid
import lucid.compat.torch as lt

torch = pytest.importorskip("torch")


def _same_error(ours, theirs):
    with pytest.raises(Exception) as t:
        theirs()
    with pytest.raises(type(t.value)) as o:
        ours()
    assert str(o.value) == str(t.value)


def test_feature_dropouts_and_inplace_dropouts():
    lucid.manual_seed(0)
    x = lucid.ones(8, 16, 3)
    y = lucid.feature_dropout(x, 0.5, True)
    kept = y.numpy()
    assert set(np.unique(kept)) <= {0.0, 2.0}
    assert (kept == kept[:, :, :1]).all()  # whole channels
    z = lucid.feature_alpha_dropout(x, 0.5, True).numpy()
    assert (z == z[:, :, :1]).all() and len(np.unique(z)) == 2
    assert lucid.feature_dropout(x, 0.5, False) is x
    w = lucid.ones(4)
    assert lucid.dropout_(w, 0.5, False) is w
    v = lucid.ones(1000)
    lucid.dropout_(v, 0.5, True)
    assert set(np.unique(v.numpy())) == {0.0, 2.0}
    _same_error(lambda: lucid.feature_dropout(lucid.ones(3), 0.5, True),
                lambda: torch.feature_dropout(torch.ones(3), 0.5, True))


def test_asarray_frombuffer_empty_strided():
    x = lucid.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert lucid.asarray(x) is x
        assert lucid.asarray(x, copy=True).requires_grad
    assert not lucid.asarray(x, requires_grad=False).requires_grad
    _same_error(lambda: lucid.asarray(x, dtype=lucid.float64, copy=False, requires_grad=False),
                lambda: torch.asarray(torch.ones(2), dtype=torch.float64, copy=False))
    assert lucid.asarray(np.ones(2)).dtype == lucid.float64
    a = lucid.asarray([1, 2.5], requires_grad=True)
    assert a.requires_grad and a.tolist() == [1.0, 2.5]
    buf = bytearray(b"abcdefgh")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert lucid.frombuffer(buf, dtype=lucid.int16, count=3, offset=1).tolist() == \
            torch.frombuffer(buf, dtype=torch.int16, count=3, offset=1).tolist()
        assert lucid.frombuffer(buf, dtype=lucid.float32).tolist() == torch.frombuffer(buf, dtype=torch.float32).tolist()
        for kw in ({"dtype": "int8"}, {"dtype": "int32", "offset": 5}, {"dtype": "int32", "offset": 1},
                   {"dtype": "int16", "count": 5}):
            data = b"" if kw == {"dtype": "int8"} else bytearray(b"abcdefg" if kw.get("offset") == 1 else b"abcdefgh")
            args = {k: v for k, v in kw.items() if k != "dtype"}
            _same_error(lambda: lucid.frombuffer(data, dtype=getattr(lucid, kw["dtype"]), **args),
                        lambda: torch.frombuffer(data, dtype=getattr(torch, kw["dtype"]), **args))
    assert lucid.empty_strided((2, 3), (3, 1)).shape == (2, 3)
    assert lucid.ones(2, dtype=lucid.float64).new_empty_strided((2, 3), (3, 1)).dtype == lucid.float64
    _same_error(lambda: lucid.empty_strided((2, 3), (1,)), lambda: torch.empty_strided((2, 3), (1,)))


def test_autocast_setters_drive_the_ops():
    assert lt.is_autocast_cache_enabled() and not lt.is_autocast_enabled("cpu")
    lt.set_autocast_enabled("cpu", True)
    try:
        assert lt.is_autocast_enabled("cpu")
        assert lt.mm(lt.ones(2, 2), lt.ones(2, 2)).dtype == lt.bfloat16
        lt.set_autocast_dtype("cpu", lt.float16)
        assert lt.mm(lt.ones(2, 2), lt.ones(2, 2)).dtype == lt.float16
    finally:
        lt.set_autocast_enabled("cpu", False)
        lt.set_autocast_dtype("cpu", lt.bfloat16)
    assert lt.mm(lt.ones(2, 2), lt.ones(2, 2)).dtype == lt.float32
    with pytest.warns(DeprecationWarning, match="is_autocast_enabled\\('cpu'\\)"):
        assert lt.is_autocast_cpu_enabled() is False
    with pytest.warns(DeprecationWarning):
        assert lt.get_autocast_cpu_dtype() == lt.bfloat16
    lt.set_autocast_cache_enabled(False)
    try:
        assert not lt.is_autocast_cache_enabled()
        with lt.autocast("cpu") as region:
            assert region._cache_enabled is False
    finally:
        lt.set_autocast_cache_enabled(True)


def test_poisson_binomial_statistics_and_errors():
    lucid.manual_seed(1)
    rates = lucid.full((20000,), 4.0)
    draws = lucid.poisson(rates).numpy()
    assert abs(draws.mean() - 4.0) < 0.1 and abs(draws.var() - 4.0) < 0.25
    b = lucid.binomial(lucid.full((20000,), 30.0), lucid.tensor([0.2])).numpy()
    assert b.shape == (20000,) and abs(b.mean() - 6.0) < 0.1 and b.max() <= 30
    _same_error(lambda: lucid.poisson(lucid.tensor([1, 2])), lambda: torch.poisson(torch.tensor([1, 2])))
    _same_error(lambda: lucid.binomial(lucid.tensor([1, 2]), lucid.tensor([0.5, 0.5])),
                lambda: torch.binomial(torch.tensor([1, 2]), torch.tensor([0.5, 0.5])))
    with pytest.raises(RuntimeError, match="invalid Poisson rate"):
        lucid.poisson(lucid.tensor([-1.0])).numpy()


def test_default_generator_is_the_global_generator():
    g = lt.default_generator
    assert isinstance(g, lt.Generator)
    g.manual_seed(7)
    assert lt.initial_seed() == 7 == g.initial_seed()
    a = lt.rand(3)
    g.manual_seed(7)
    assert lt.rand(3).tolist() == a.tolist()
    state = g.get_state()
    b = lt.rand(2, generator=g)
    g.set_state(state)
    assert lt.rand(2).tolist() == b.tolist()


def test_compat_exception_types_and_top_level_aliases():
    assert issubclass(lt.OutOfMemoryError, RuntimeError) and issubclass(lt.AcceleratorError, RuntimeError)
    assert not issubclass(lt.FatalError, RuntimeError)
    assert lt.GradScaler is lucid.amp.GradScaler and lt.vmap is lucid.func.vmap


def test_pool_forms_with_indices_match_torch():
    x = lucid.tensor(np.random.default_rng(0).normal(size=(2, 3, 9)).astype(np.float32))
    tx = torch.tensor(x.numpy())
    for ours, theirs in ((lucid.adaptive_max_pool1d(x, 4), torch.adaptive_max_pool1d(tx, 4)),
                         (lucid.max_pool1d_with_indices(x, 3, 2, 1), torch.max_pool1d_with_indices(tx, 3, 2, 1))):
        assert len(ours) == 2
        np.testing.assert_array_equal(ours[0].numpy(), theirs[0].numpy())
        np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())


def test_make_tensor_ranges_dtypes_and_errors():
    from lucid.compat.torch.testing import make_tensor
    lucid.manual_seed(0)
    f = make_tensor(1000, dtype=lt.float32, device="cpu", low=-2, high=3)
    assert f.dtype == lt.float32 and f.shape == (1000,) and -2 <= f.min().item() and f.max().item() < 3
    i = make_tensor((50, 4), dtype=lt.int8, device="cpu")
    assert i.dtype == lt.int8 and -9 <= i.min().item() and i.max().item() <= 9
    u = make_tensor(500, dtype=lt.uint8, device="cpu", exclude_zero=True)
    assert u.min().item() >= 1 and u.max().item() <= 9
    b = make_tensor(200, dtype=lt.bool, device="cpu")
    assert b.dtype == lt.bool and 0 < b.sum().item() < 200
    g = make_tensor(2, 3, dtype=lt.float64, device="cpu", requires_grad=True, noncontiguous=True)
    assert g.requires_grad and g.shape == (2, 3)
    c = make_tensor(3, dtype=lt.complex64, device="cpu")
    assert c.dtype == lt.complex64
    for kw in (dict(dtype=lt.int32, low=3, high=1), dict(dtype=lt.int32, requires_grad=True),
               dict(dtype=lt.float32, low=float("nan"))):
        with pytest.raises(ValueError) as ours:
            make_tensor(2, device="cpu", **kw)
        with pytest.raises(ValueError) as theirs:
            torch.testing.make_tensor(2, device="cpu", **{k: getattr(torch, str(v).split(".")[-1])
                                                          if k == "dtype" else v for k, v in kw.items()})
        assert str(ours.value).split(",")[0].replace("lucid", "torch") == str(theirs.value).split(",")[0]


def test_func_ensembles_batch_norm_and_functionalize():
    lucid.manual_seed(0)
    models = [lucid.nn.Linear(3, 2) for _ in range(4)]
    params, buffers = lt.func.stack_module_state(models)
    assert params["weight"].shape == (4, 2, 3) and params["weight"].requires_grad and params["weight"].grad_fn is None
    x = lucid.randn(5, 3)
    out = lt.func.vmap(lambda p, b, x: lt.func.functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None))(
        params, buffers, x)
    for k, m in enumerate(models):
        np.testing.assert_allclose(out[k].numpy(), m(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0"):
        lt.func.stack_module_state([])
    with pytest.raises(RuntimeError, match="same class"):
        lt.func.stack_module_state([lucid.nn.Linear(3, 2), lucid.nn.Tanh()])
    net = lucid.nn.Sequential(lucid.nn.Linear(3, 3), lucid.nn.BatchNorm1d(3))
    assert lt.func.replace_all_batch_norm_modules_(net) is net
    assert net[1].running_mean is None and net[1].running_var is None and not net[1].track_running_stats
    t = lucid.ones(3)
    assert lt.func.debug_unwrap(t) is t

    def f(a):
        b = a.clone()
        b.add_(1.0)
        a.mul_(2.0)
        return b * 3

    y = lucid.ones(2)
    assert lt.func.functionalize(f)(y).tolist() == [6.0, 6.0] and y.tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="received invalid argument for remove=foo"):
        lt.func.functionalize(f, remove="foo")


def test_multithreading_switch_and_tensor_name():
    with lt.autograd.set_multithreading_enabled(False):
        x = lucid.ones(2, requires_grad=True)
        (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    assert lucid.ones(2).name is None
    with pytest.raises(AttributeError):
        lucid.ones(2).name = "x"


@pytest.mark.parametrize("pattern, lengths", [
    ("b h w c -> b h w c", {}), ("b h w c -> (b h) w c", {}), ("b h w c -> h (b w) c", {}),
    ("b h w c -> b (c h w)", {}), ("b (h1 h) (w1 w) c -> (b h1 w1) h w c", dict(h1=2, w1=2)),
    ("b (h h1) (w w1) c -> b h w (c h1 w1)", dict(h1=2, w1=2)), ("... c -> c ...", {}),
    ("b ... c -> (b c) ... 1", {}), ("b ... -> b (...)", {})])
def test_rearrange_matches_torch(pattern, lengths):
    x = np.random.default_rng(0).normal(size=(4, 6, 4, 3)).astype(np.float32)
    ours = lt.func.rearrange(lucid.tensor(x), pattern, **lengths)
    theirs = torch.func.rearrange(torch.tensor(x), pattern, **lengths)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_rearrange_stacks_lists_differentiates_and_refuses_bad_patterns():
    assert tuple(lt.func.rearrange([lucid.ones(2), lucid.zeros(2)], "n d -> d n").shape) == (2, 2)
    w = lucid.ones(2, 3, requires_grad=True)
    (lt.func.rearrange(w, "a b -> b a") * lucid.arange(6.0).reshape(3, 2)).sum().backward()
    assert w.grad.tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    x = lucid.ones(2, 3, 4)
    for pattern, kw, match in (("a b c -> a b d", {}, "Identifiers only on one side"),
                               ("a b -> a b", {}, "Number of dimensions in pattern \\(2\\)"),
                               ("a (b x) c -> a b x c", {}, "cannot infer the sizes of two dimensions"),
                               ("a (b x) c -> a b x c", dict(x=2), "does not evenly fit"),
                               ("a b c -> a b c a", {}, "duplicate dimension 'a'"),
                               ("a b c -> a b (c 2)", {}, "unnamed axes of size 1"),
                               ("a b c -> a b c", dict(q=3), "Identifiers not found")):
        with pytest.raises(ValueError, match=match):
            lt.func.rearrange(x, pattern, **kw)
