"""The reference engine (autograd/reference.py: the walk as a plain loop on Tensors) against the fast walk
(engine._fast_walk: MLX arrays between raw nodes, a shortcut for hook-free leaves).

Every op declared with ``defop`` (ops._core.declared), called as tests/opinfo_samples.py says, runs through both
walks and must give bit-identical gradients: for ops declared ``raw`` this compares the VJP run on MLX arrays with
the same VJP run on Tensors, the contract ``defop``'s docstring states (tests/test_opinfo.py also calls a raw node's
VJP both ways directly). Random graphs with hooks, retain_grad, existing ``.grad`` tensors, in-place
writes and freed saved tensors must give the same gradients, the same hook calls in the same order, the same errors,
the same ``.grad`` objects kept or replaced, and free the same tensors at the same points of the walk.
"""
import gc
import weakref

import numpy as np
import pytest

import lucid
from lucid.autograd import engine
from lucid.ops._core import declared
from opinfo_samples import find_call, not_run, seed_for


def _record(op, seed: int, mixed: bool = False):
    """(the output, the leaves) of a call that records ``op``'s node (tests/opinfo_samples.py), or None."""
    found = find_call(op, seed, mixed)
    return None if found is None else found[1:]


def _arrays(ts):
    return [None if t is None else (str(t.dtype), np.array(t.detach().numpy())) for t in ts]


def _same(a, b) -> bool:
    """Bit-identical: same None-ness, dtype, shape and values (NaN equal to NaN)."""
    if (a is None) != (b is None):
        return False
    return a is None or (a[0] == b[0] and a[1].shape == b[1].shape and np.array_equal(a[1], b[1], equal_nan=True))


_OPS = [pytest.param(op, i, id=f"{op.__name__}-{op.node_class.__name__}") for i, op in enumerate(declared)]


@pytest.mark.parametrize("op, i", _OPS)
def test_every_declared_op_gets_the_same_gradients_from_both_walks(op, i):
    if not_run(op):
        pytest.skip(not_run(op))
    recorded = _record(op, i)
    assert recorded is not None, f"no call records {op.node_class.__name__}: add one to CALLS"
    _compare_walks(op, i, *recorded)


@pytest.mark.parametrize("op, i", [p for p in _OPS if p.values[0].node_class.raw])
def test_raw_ops_with_mixed_dtypes_get_the_same_gradients_from_both_walks(op, i):
    recorded = _record(op, i, mixed=True)
    if recorded is None:
        pytest.skip("takes no float32 tensor with a 0-d float64 one")
    _compare_walks(op, i, *recorded)


def _compare_walks(op, i, out, leaves):
    seed = seed_for(out, i)
    results = {}
    for ref in (False, True):
        with engine.use_reference(ref):
            try:
                got = lucid.autograd.grad(out, leaves, seed, retain_graph=True, allow_unused=True)
                for t in leaves:
                    t.grad = None
                out.backward(seed, retain_graph=True)
                results[ref] = _arrays(got) + _arrays([t.grad for t in leaves])
            except RuntimeError as e:  # the same error (unique has no derivative, as in PyTorch)
                results[ref] = [("error", str(e))]
    assert len(results[False]) == len(results[True])
    for k, (a, b) in enumerate(zip(results[False], results[True])):
        assert a == b if a is not None and a[0] == "error" else _same(a, b), (op.node_class.__name__, k, a, b)


# ---------------------------------------------------------------------------------------------------- random graphs
class Square(lucid.autograd.Function):
    """A custom Function: a node that runs on Tensors only, in both walks."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * g * x


_UNARY = [lucid.sin, lucid.exp, lucid.tanh, lucid.sigmoid, lambda x: x.relu(), lambda x: -x, lambda x: x * x,
          lambda x: x * 0.5 + 1, Square.apply, lambda x: x.sum(1, keepdim=True), lambda x: x.t().reshape(3, 4),
          lambda x: x.mean(0) + x, lambda x: lucid.where(x > 0.5, x, x * 2)]
_BINARY = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, lambda a, b: a / (b.abs() + 1),
           lambda a, b: a @ b.t() @ b / 4, lambda a, b: lucid.maximum(a, b)]


def _graph(seed: int, log: list):
    """A random graph over three leaves (one broadcast, one with an existing .grad), with hooks that log what they
    see, including which intermediate tensors are still alive (weakly referenced) at that point of the walk."""
    rng = np.random.default_rng(seed)
    leaves = [lucid.tensor(rng.uniform(0.1, 0.9, s), dtype=lucid.float32, requires_grad=True) for s in ((3, 4), (4,), (3, 4))]
    leaves[2].grad = lucid.zeros(3, 4)
    alive = []  # weakrefs to every intermediate

    def snapshot():
        return tuple(r() is not None for r in alive)

    def tensor_hook(k, scale):
        def hook(g):
            log.append(("tensor", k, g.detach().numpy().tobytes(), snapshot()))
            return g * scale if scale != 1 else None
        return hook

    pool = [leaves[0], leaves[2]]  # every intermediate is (3, 4); leaves[1] (4,) is broadcast by the binary ops
    b = None
    for k in range(int(rng.integers(4, 12))):
        a = pool[int(rng.integers(len(pool)))]
        if rng.random() < 0.35:
            j = int(rng.integers(len(_BINARY)))
            b = pool[int(rng.integers(len(pool)))] if j == 4 or rng.random() < 0.5 else leaves[1]
            y = _BINARY[j](a, b)
        else:
            y = _UNARY[int(rng.integers(len(_UNARY)))](a)
        r = rng.random()
        if r < 0.25:
            y.register_hook(tensor_hook(k, float(rng.choice([1, 2]))))
        elif r < 0.35:
            y.retain_grad()
        elif r < 0.45 and y.grad_fn is not None:
            y.grad_fn.register_prehook(lambda gs, k=k: log.append(("pre", k, snapshot())))
            y.grad_fn.register_hook(lambda gi, go, k=k: log.append(("post", k, len(gi), snapshot())))
        alive.append(weakref.ref(y))
        pool.append(y)
        del y
    for i, t in enumerate(leaves[:2]):
        t.register_hook(tensor_hook(100 + i, 1))
    root = sum(p.sum() for p in pool[2:])
    retained = [t for t in pool[2:] if t._extra is not None and t._extra.retains_grad]
    del pool, a, b  # the intermediates live on only in the graph (saved by the nodes that need them)
    return leaves, root, retained, snapshot, rng


def _run(seed: int, reference: bool):
    log: list = []
    leaves, root, retained, snapshot, rng = _graph(seed, log)
    mode = int(rng.integers(4))
    old_grads = [t.grad for t in leaves]
    if rng.random() < 0.15:
        with lucid.no_grad():
            leaves[0].add_(1.0)  # a saved leaf written in place: the walk must raise (if it reads it)
    gc.collect()
    with engine.use_reference(reference):
        try:
            if mode == 0:
                root.backward()
            elif mode == 1:
                root.backward(inputs=[leaves[0], leaves[2]])
            elif mode == 2:
                log.append(("grad", _arrays(lucid.autograd.grad(root, leaves, allow_unused=True))))
            else:
                root.backward(retain_graph=True)
                log.append(("after first", snapshot()))
                root.backward()
            log.append(("end", snapshot()))
            root.backward()  # the graph was freed: a second walk raises (or, if nothing was saved, runs again)
        except RuntimeError as e:
            log.append(("error", str(e)))
    log.append(("grads", _arrays([t.grad for t in leaves]), _arrays([t.grad for t in retained]),
                [t.grad is g for t, g in zip(leaves, old_grads)]))
    return log


@pytest.mark.parametrize("seed", range(60))
def test_random_graphs_walk_the_same_in_both_engines(seed):
    fast, reference = _run(seed, False), _run(seed, True)
    assert len(fast) == len(reference)
    for a, b in zip(fast, reference):
        if a[0] in ("grads", "grad"):
            flat_a = [x for part in a[1:] for x in (part if isinstance(part, list) else [part])]
            flat_b = [x for part in b[1:] for x in (part if isinstance(part, list) else [part])]
            for x, y in zip(flat_a, flat_b):
                assert _same(x, y) if isinstance(x, tuple) or x is None else x == y
        else:
            assert a == b
