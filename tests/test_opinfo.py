"""Every op declared with ``defop`` (the registry ``lucid.ops._core.declared``), checked the same systematic way,
as PyTorch's OpInfo tests do: called as tests/opinfo_samples.py says (float64 leaves), each op's

- forward equals PyTorch's (the same call run in torch, when torch is installed);
- gradients equal float64 central finite differences (``lucid.autograd.gradcheck``), and so do its second
  derivatives (``gradgradcheck``, marked slow);
- raw VJP (``defop(raw=True)``: the fast backward walk runs it on MLX arrays) equals its VJP on Tensors;
- forward and VJP under ``lucid.func.vmap`` equal the per-sample results, or, for the ops MLX cannot batch
  (``RAISES_IN_VMAP``), vmap raises lucid's RuntimeError saying so rather than MLX's message;
- forward under ``lucid.compile`` equals the eager one.

The ops declared ``differentiable=False`` (``declared_nondiff``) have their forwards compared with PyTorch's, and
every in-place method a declaration's ``inplace=`` made writes what its op returns. An op
or check that cannot run says why in ``SKIP``/``NOT_RUN``/``NONDIFF_SKIP`` (tests/opinfo_samples.py); a call with no
PyTorch counterpart (lucid's private helpers) says so in its skip message. Second derivatives take ~50 s on two busy
cores, the rest ~35 s.
"""
import numpy as np
import pytest

import lucid
from lucid import _grad_mode as gm
from lucid.ops._core import declared, declared_nondiff, inplace_declared
from opinfo_samples import (INPLACE_ARGS, NONDIFF_CALLS, NONDIFF_SKIP, RAISES_IN_VMAP, SKIP, Maker, NoCounterpart,
                            _generic_calls, find_call, generic_calls, in_torch, not_run, public, seed_for)

F64 = lucid.float64
_OPS = [pytest.param(op, i, id=f"{op.__name__}-{op.node_class.__name__}") for i, op in enumerate(declared)]
_found: dict = {}


def _sample(op, i: int, check: str):
    """(call, f, leaves): ``f(*leaves)`` replays the call on the given leaves (float64), or skips saying why."""
    name = op.node_class.__name__
    if not_run(op):
        pytest.skip(not_run(op))
    reason = SKIP.get(name, {}).get(check)
    if reason:
        pytest.skip(reason)
    if i not in _found:
        _found[i] = find_call(op, i, dtype=F64)
    assert _found[i] is not None, f"no call records {name}: add one to CALLS in tests/opinfo_samples.py"
    call, _, _ = _found[i]
    T = Maker(i, F64)
    call(T)
    return call, (lambda *xs: call(Maker(i, F64, given=xs))), T.leaves


def _numpy(t):
    return np.array(t.detach().numpy()) if hasattr(t, "detach") else np.array(t)


def _close(a, b, rtol=1e-6, atol=1e-7):
    a, b = (x[0] if isinstance(x, tuple) and len(x) == 1 else x for x in (a, b))  # torch.autograd.grad's 1-tuple
    a, b = _numpy(a), _numpy(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def _detached(ts):
    return [t.detach() for t in ts]


@pytest.mark.parametrize("op, i", _OPS)
def test_forward_matches_pytorch(op, i):
    torch = pytest.importorskip("torch")
    call, f, leaves = _sample(op, i, "torch")
    try:
        expected = in_torch(call)(Maker(i, F64, lib=torch))
    except NoCounterpart as e:
        pytest.skip(f"no PyTorch counterpart: {e}")
    _close(f(*leaves), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op, i", _OPS)
def test_gradients_match_finite_differences(op, i):
    _, f, leaves = _sample(op, i, "gradcheck")
    assert lucid.autograd.gradcheck(f, leaves)


@pytest.mark.slow
@pytest.mark.parametrize("op, i", _OPS)
def test_second_derivatives_match_finite_differences(op, i):
    _, f, leaves = _sample(op, i, "gradgradcheck")
    assert lucid.autograd.gradgradcheck(f, leaves)


@pytest.mark.parametrize("op, i", [p for p in _OPS if p.values[0].node_class.raw])
def test_a_raw_vjp_on_arrays_equals_the_same_vjp_on_tensors(op, i):
    """``defop(raw=True)``'s contract: the node's VJPs, given MLX arrays while grad mode is None (what the fast walk
    does), compute what they compute on Tensors (float32 leaves, the dtype most training runs in)."""
    _, out, _ = find_call(op, i)
    node = out.grad_fn
    g = seed_for(out, i)
    with lucid.no_grad():
        on_tensors = node.apply([g])
    before = gm.state.grad
    gm.state.grad = None
    try:
        on_arrays = node.apply_raw([g.mlx])
    finally:
        gm.state.grad = before
    assert len(on_tensors) == len(on_arrays)
    for t, a in zip(on_tensors, on_arrays):
        assert (t is None) == (a is None)
        if t is not None:
            assert not isinstance(a, lucid.Tensor), f"{node.name()}: a raw VJP returned a Tensor"
            assert str(t.dtype) == str(lucid.tensor(a).dtype)
            np.testing.assert_array_equal(_numpy(t), np.array(a))


def _two_samples(op, i, check):
    call, f, leaves = _sample(op, i, check)
    T = Maker(i + 1000, F64)
    call(T)
    return f, _detached(leaves), _detached(T.leaves)


def _cannot_batch(op, check: str) -> bool:
    return check in RAISES_IN_VMAP.get(op.node_class.__name__, {})


def _lucids_vmap_error():
    """What vmap raises for an op it cannot batch: PyTorch's RuntimeError, in lucid's words, naming vmap."""
    return pytest.raises(RuntimeError, match=r"^vmap\(.*call the function once per sample")


def _vmapped(fn, *args, in_dims=0):
    """``lucid.func.vmap(fn, in_dims)(*args)``; an op that cannot be batched must say so in lucid's words, not
    MLX's."""
    try:
        return lucid.func.vmap(fn, in_dims)(*args)
    except Exception as e:  # noqa: BLE001
        assert not str(e).startswith("["), f"MLX's message leaked: {type(e).__name__}: {e}"
        raise


@pytest.mark.parametrize("op, i", _OPS)
def test_vmap_of_the_forward_equals_the_per_sample_results(op, i):
    f, xs, ys = _two_samples(op, i, "vmap")
    batched = [lucid.stack([x, y]) for x, y in zip(xs, ys)]
    if _cannot_batch(op, "vmap"):
        with _lucids_vmap_error():
            lucid.func.vmap(f)(*batched)
        return
    got = _vmapped(f, *batched)
    _close(got, lucid.stack([f(*xs), f(*ys)]))


@pytest.mark.parametrize("op, i", _OPS)
def test_vmap_with_the_first_input_not_batched(op, i):
    """``in_dims=(None, 0, ...)``: an input shared by the whole batch beside batched ones (MLX's batching rules see
    an unbatched operand: its bitwise ops lost the batch there)."""
    f, xs, ys = _two_samples(op, i, "vmap")
    if len(xs) < 2 or _cannot_batch(op, "vmap"):
        pytest.skip("one input" if len(xs) < 2 else "cannot batch (test_vmap_of_the_forward checks its error)")
    got = _vmapped(f, xs[0], *[lucid.stack([x, y]) for x, y in zip(xs[1:], ys[1:])],
                   in_dims=(None,) + (0,) * (len(xs) - 1))
    _close(got, lucid.stack([f(*xs), f(xs[0], *ys[1:])]))


@pytest.mark.parametrize("op, i", _OPS)
def test_vmap_of_the_vjp_equals_the_per_cotangent_results(op, i):
    _, f, leaves = _sample(op, i, "vmap_vjp")
    out = f(*leaves)
    gs = [seed_for(out, i), seed_for(out, i + 1)]

    def vjp(g):
        with lucid.enable_grad():
            return lucid.autograd.grad(f(*leaves), leaves, g, allow_unused=True)

    if _cannot_batch(op, "vmap_vjp"):
        with _lucids_vmap_error():
            lucid.func.vmap(vjp)(lucid.stack(gs))
        return
    got = _vmapped(vjp, lucid.stack(gs))
    per = [vjp(g) for g in gs]
    for k, leaf_grads in enumerate(zip(*per)):
        if leaf_grads[0] is not None:
            _close(got[k], lucid.stack(list(leaf_grads)))


@pytest.mark.parametrize("op, i", _OPS)
def test_compiled_forward_equals_the_eager_one(op, i):
    f, xs, _ = _two_samples(op, i, "compile")
    _close(lucid.compile(f)(*xs), f(*xs))


@pytest.mark.parametrize("op", [pytest.param(op, id=f"{op.__name__}-{k}") for k, op in enumerate(declared_nondiff)])
def test_forward_of_a_nondifferentiable_op_matches_pytorch(op):
    """The ops declared ``differentiable=False``: the first generic pattern that runs in both (or the table's call)."""
    torch = pytest.importorskip("torch")
    if op.__name__ in NONDIFF_SKIP:
        pytest.skip(NONDIFF_SKIP[op.__name__])
    fn = public(op) or op
    calls = [NONDIFF_CALLS[op.__name__]] if op.__name__ in NONDIFF_CALLS else generic_calls(fn)
    for call in calls:
        try:
            got = call(Maker(0, F64))
        except Exception:  # noqa: BLE001  (another pattern may fit)
            continue
        try:
            expected = in_torch(call)(Maker(0, F64, lib=torch))
        except NoCounterpart as e:
            pytest.skip(f"no PyTorch counterpart: {e}")
        except Exception:  # noqa: BLE001  (PyTorch's convention differs: another pattern may fit)
            continue
        _close(got, expected, rtol=1e-5, atol=1e-6)
        return
    pytest.fail(f"no call of {op.__name__} runs in lucid and PyTorch: add one to NONDIFF_CALLS in "
                "tests/opinfo_samples.py, or a reason to NONDIFF_SKIP")


@pytest.mark.parametrize("name", sorted(inplace_declared))
def test_an_inplace_method_writes_what_its_op_returns(name):
    """``inplace=`` of a declaration: ``x.<op>_(*rest)`` writes ``op(x, *rest)`` into ``x`` (cast to its dtype) and
    returns ``x``; the first generic argument pattern that the op takes with a result of ``x``'s shape."""
    op = inplace_declared[name]
    T = Maker(0, F64)
    for pattern in [lambda: INPLACE_ARGS[name](T)] if name in INPLACE_ARGS else _generic_calls(T):
        args = pattern()
        try:
            expected = op(*args)
        except Exception:  # noqa: BLE001  (another pattern may fit)
            continue
        x = args[0]
        if not isinstance(x, lucid.Tensor) or not isinstance(expected, lucid.Tensor) or expected.shape != x.shape:
            continue
        x = x.detach().clone()
        assert getattr(x, name)(*args[1:]) is x
        _close(x, expected.to(x.dtype))
        return
    pytest.fail(f"no generic pattern fits {name}: add its arguments to INPLACE_ARGS in tests/opinfo_samples.py")


def test_every_declared_op_has_a_sample_or_a_reason():
    missing = [op.node_class.__name__ for op in declared
               if not not_run(op) and find_call(op, 0) is None]
    assert not missing, missing
    unknown = (set(SKIP) | set(RAISES_IN_VMAP)) - {op.node_class.__name__ for op in declared}
    assert not unknown, f"SKIP names ops that are not declared: {unknown}"
