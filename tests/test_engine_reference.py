"""The reference engine (autograd/reference.py: the walk as a plain loop on Tensors) against the fast walk
(engine._fast_walk: MLX arrays between raw nodes, a shortcut for hook-free leaves).

Every op declared with ``defop`` (ops._core.declared) runs through both walks and must give bit-identical
gradients: for ops declared ``raw`` this compares the VJP run on MLX arrays with the same VJP run on Tensors, the
contract ``defop``'s docstring states. Random graphs with hooks, retain_grad, existing ``.grad`` tensors, in-place
writes and freed saved tensors must give the same gradients, the same hook calls in the same order, the same errors,
the same ``.grad`` objects kept or replaced, and free the same tensors at the same points of the walk.
"""
import gc
import weakref

import mlx.core as mx
import numpy as np
import pytest

import lucid
from lucid.distributions import _sampling
import lucid.nn.functional as F
from lucid import _grad_mode as gm
from lucid.autograd import engine
from lucid.ops import conv as _conv, fft as _fft, scan as _scan
from lucid.ops._core import declared


class Maker:
    """Leaves with seeded values in (0.1, 0.9): inside the domain of log, sqrt, asin, atanh, logit ..."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.leaves = []

    def __call__(self, *shape, dtype=lucid.float32):
        t = lucid.tensor(self.rng.uniform(0.1, 0.9, shape), dtype=dtype, requires_grad=True)
        self.leaves.append(t)
        return t

    def square(self):
        return self.__call__(3, 3) * 0.1 + lucid.eye(3)


def _generic_calls(T):
    """Argument patterns tried in turn on an op whose calling convention the test does not know."""
    idx = lucid.tensor([0, 2])
    return [lambda: (T(3, 4),), lambda: (T(3, 4), T(3, 4)), lambda: (T(3, 4), 0.7), lambda: (T(3, 4), 1),
            lambda: (T(3, 4), (1,)), lambda: (T(3, 4), 1, False), lambda: (T(3, 4), (1,), False),
            lambda: (T.square(),), lambda: (T.square(), T.square()), lambda: (T(3, 4), T(3, 4), T(3, 4)),
            lambda: (T(4), T(4)), lambda: (T(3, 4), T(4, 5)), lambda: (T(2, 3, 4), T(2, 4, 5)),
            lambda: (T(5), T(3, 4), T(4, 5)), lambda: (T(3, 5), T(3, 4), T(4, 5)), lambda: (T(3, 4), idx),
            lambda: (T(3, 4), 1, idx), lambda: ([T(3, 4), T(3, 4)],), lambda: ([T(3, 4), T(3, 4)], 0)]


def _mixed_calls(T):
    """A 0-d float64 operand with a float32 tensor: PyTorch's promotion keeps float32 where MLX's would widen, so a
    raw VJP written with MLX operators instead of lucid ops gives other bits (the contract in defop's docstring)."""
    return [lambda: (T(3, 4), T(dtype=lucid.float64)), lambda: (T(dtype=lucid.float64), T(3, 4)),
            lambda: (T(3, 4) > 0.5, T(3, 4), T(dtype=lucid.float64))]


def _second_order(T, fn, shape):
    """A node that only a backward with create_graph records (the derivative of a derivative)."""
    w = T(*shape)
    return lucid.autograd.grad((fn(w) * 0.5).sum(), w, create_graph=True)


# The ops whose calling convention the generic patterns miss: a call that records the op's node (EXTRA: more
# calls for node names that several declarations share, e.g. addmm and linear's AddmmBackward0).
CALLS = {
    "AddmmBackward0": lambda T: lucid.addmm(T(3, 5), T(3, 4), T(4, 5)),
    "ScatterReduceBackward0": lambda T: lucid.scatter_reduce(T(3, 4), 0, lucid.tensor([[0, 1, 2, 0], [2, 2, 0, 1]]),
                                                             T(2, 4), "amax", include_self=False),
    "IndexReduceBackward0": lambda T: lucid.index_reduce(T(3, 4), 0, lucid.tensor([0, 2, 0]), T(3, 4), "prod"),
    "AddmvBackward0": lambda T: lucid.addmv(T(3), T(3, 4), T(4)),
    "AddrBackward0": lambda T: lucid.addr(T(3, 4), T(3), T(4)),
    "BaddbmmBackward0": lambda T: lucid.baddbmm(T(2, 3, 5), T(2, 3, 4), T(2, 4, 5)),
    "NativeBatchNormBackward0": lambda T: F.batch_norm(T(4, 3), None, None, T(3), T(3), training=True),
    "CatBackward0": lambda T: lucid.cat([T(2, 3), T(1, 3)]),
    "CeluBackward0": lambda T: F.celu(T(3, 4) - 0.5),
    "ConstantPadNdBackward0": lambda T: F.pad(T(3, 4), (1, 2)),
    "ConvolutionBackward0": lambda T: F.conv2d(T(1, 2, 5, 5), T(3, 2, 3, 3), T(3)),
    "ConvolutionBackwardBackward0": lambda T: _second_order(T, lambda w: F.conv2d(T(1, 2, 5, 5), w), (3, 2, 3, 3)),
    "CummaxBackward0": lambda T: lucid.cummax(T(3, 4), 1)[0],
    "CumminBackward0": lambda T: lucid.cummin(T(3, 4), 1)[0],
    "DiagEmbedBackward0": lambda T: lucid.diag_embed(T(2, 3)),
    "DiagonalBackward0": lambda T: lucid.diagonal(T(3, 4)),
    "DiagonalScatterBackward0": lambda T: lucid.diagonal_scatter(T(3, 3), T(3)),
    "DivBackward2": lambda T: lucid.div(T(3, 4) * 5, T(3, 4), rounding_mode="floor"),
    "EluBackward0": lambda T: F.elu(T(3, 4) - 0.5),
    "EmbeddingBackwardBackward0": lambda T: _second_order(
        T, lambda w: F.embedding(lucid.tensor([0, 2, 2]), w) * T(3, 3), (5, 3)),
    "ExpandBackward0": lambda T: T(3, 1).expand(3, 4),
    "FftC2cBackward0": lambda T: lucid.fft.fft(T(8).to(lucid.complex64)),
    "FftC2rBackward0": lambda T: lucid.fft.irfft(lucid.fft.rfft(T(8))),
    "FftR2cBackward0": lambda T: lucid.fft.rfft(T(8)),
    "FftResizeBackward0": lambda T: _fft._resize(T(8), (0,), (10,)),
    "GatherBackward0": lambda T: lucid.gather(T(3, 4), 1, lucid.tensor([[0, 1], [2, 3], [1, 1]])),
    "KthvalueBackward0": lambda T: lucid.kthvalue(T(3, 4), 2, 1)[0],
    "NativeLayerNormBackward0": lambda T: F.layer_norm(T(3, 4), (4,), T(4), T(4)),
    "LinalgCrossBackward0": lambda T: lucid.cross(T(2, 3), T(2, 3), dim=1),
    "LinalgPinvBackward0": lambda T: lucid.linalg.pinv(T(3, 4)),
    "LinalgSolveTriangularBackward0": lambda T: lucid.linalg.solve_triangular(
        lucid.triu(T(3, 3)) + lucid.eye(3), T(3, 2), upper=True),
    "MaxBackward0": lambda T: lucid.max(T(3, 4), 1)[0],
    "MinBackward0": lambda T: lucid.min(T(3, 4), 1)[0],
    "MaxPool1DWithIndicesBackward0": lambda T: F.max_pool1d(T(1, 2, 6), 2),
    "MaxPool2DWithIndicesBackward0": lambda T: F.max_pool2d(T(1, 2, 4, 4), 2),
    "MaxPool3DWithIndicesBackward0": lambda T: F.max_pool3d(T(1, 1, 4, 4, 4), 2),
    "MedianBackward1": lambda T: lucid.median(T(3, 4), 1)[0],
    "NanmedianBackward1": lambda T: lucid.nanmedian(T(3, 4), 1)[0],
    "NanToNumBackward0": lambda T: lucid.nan_to_num(T(3, 4)),
    "NllLossBackward0": lambda T: F.nll_loss(T(3, 4), lucid.tensor([0, 3, 1])),
    "NllLoss2DBackward0": lambda T: F.nll_loss(T(2, 4, 3, 3), lucid.tensor(T.rng.integers(0, 4, (2, 3, 3)))),
    "LinalgVectorNormBackward0": lambda T: lucid.linalg.vector_norm(T(3, 4)),
    "PermuteBackward0": lambda T: T(2, 3, 4).permute(2, 0, 1),
    "SqueezeBackward0": lambda T: T(3, 1, 4).squeeze(),
    "SqueezeBackward1": lambda T: T(3, 1, 4).squeeze(1),
    "SqueezeBackward2": lambda T: T(3, 1, 1).squeeze((1, 2)),
    "UnsqueezeBackward0": lambda T: T(3, 4).unsqueeze(1),
    "ViewBackward0": lambda T: T(3, 4).view(12),
    "ScatterBackward0": lambda T: lucid.scatter(T(3, 4), 1, lucid.tensor([[0], [2], [1]]), T(3, 1)),
    "ScatterBackward1": lambda T: lucid.scatter(T(3, 4), 1, lucid.tensor([[0], [2], [1]]), 0.5),
    "ScatterAddBackward0": lambda T: lucid.scatter_add(T(3, 4), 1, lucid.tensor([[0], [2], [1]]), T(3, 1)),
    "ScatterAddAxisBackward0": lambda T: _conv.scatter_add_axis(T(3, 2), lucid.tensor([0, 2]), 1, 4),
    "SortBackward0": lambda T: lucid.sort(T(3, 4), 1)[0],
    "SortBackward1": lambda T: lucid.sort(T(3, 4), 1, stable=True)[0],
    "StackBackward0": lambda T: lucid.stack([T(3), T(3)]),
    "StdBackward0": lambda T: lucid.std(T(3, 4), 1),
    "VarBackward0": lambda T: lucid.var(T(3, 4), 1),
    "ToCopyBackward0": lambda T: T(3, 4).to(lucid.float64),
    "TopkBackward0": lambda T: lucid.topk(T(3, 4), 2)[0],
    "PolygammaBackward0": lambda T: lucid.polygamma(1, T(3, 4)),
    "StandardGammaBackward0": lambda T: _sampling.standard_gamma(T(3, 4) + 1.0),
    # zeta and the incomplete gammas have no derivative in their first argument (as in PyTorch): a constant there
    "SpecialZetaBackward0": lambda T: lucid.special.zeta(lucid.full((3, 4), 2.5), T(3, 4)),
    "IgammaBackward0": lambda T: lucid.igamma(lucid.full((3, 4), 1.5), T(3, 4)),
    "IgammacBackward0": lambda T: lucid.igammac(lucid.full((3, 4), 1.5), T(3, 4)),
}
_IDX = mx.array([[0], [2], [1]])
EXTRA = [
    lambda T: 2.0 ** T(3, 4),
    lambda T: lucid.where(T(3, 4) > 0.5, T(3, 4), T(3, 4)),
    lambda T: T(3, 4)[None],
    lambda T: T(2, 3).repeat(2, 2),
    lambda T: _conv.gather_axis(T(3, 4), lucid.tensor([0, 2]), 1),
    lambda T: F.conv2d(T(1, 2, 5, 5), T(3, 2, 3, 3)),
    lambda T: lucid.mv(T(3, 4), T(4)),
    lambda T: lucid.linalg.slogdet(T.square())[1],
    lambda T: lucid.linalg.cholesky(T.square() @ T.square().t()),
    lambda T: F.linear(T(3, 4), T(5, 4), T(5)),
    lambda T: F.embedding(lucid.tensor([0, 2]), T(5, 3)),
    lambda T: _scan._gather(T(3, 4), _IDX, 1, True),
    lambda T: _scan._scatter(T(3, 1), _IDX, 1, 4),
    lambda T: lucid.unique(T(3, 4)),
    lambda T: lucid.unique(T(3, 4), dim=0),
    lambda T: lucid.unique_consecutive(T(3, 4)),
]
# Declared ops whose backward is not reached through these cases, and why.
NOT_RUN = {
    "NotImplemented": "scatter_add with a reduce= that has no derivative: its backward raises by design",
    "NextafterBackward0": "nextafter has no derivative (as in PyTorch): its backward raises by design",
    "StandardGammaGradBackward0": "the Gamma draw's reparameterization gradient has no derivative of its own (as in "
                                  "PyTorch): its backward raises by design",
}


def _einsum_chain(n: int):
    """A call of einsum with ``n`` operands: the chain product ab,bc,cd,... (or a transpose for one operand)."""
    letters = "abcdefghij"[:n + 1]
    eq = "ab->ba" if n == 1 else ",".join(letters[i:i + 2] for i in range(n)) + f"->{letters[0]}{letters[n]}"
    return lambda T: lucid.einsum(eq, *[T(3 + i % 2, 3 + (i + 1) % 2) for i in range(n)])


def _record(op, seed: int, mixed: bool = False):
    """Call ``op`` so that it records its node: (the output, the leaves), or None if no pattern fits (a pattern fits
    when the op records its node and a backward through it runs: pow's tensor-scalar form accepts a tensor exponent
    in its forward, not in its VJP)."""
    name = op.node_class.__name__
    T = Maker(seed)
    calls = [CALLS[name]] if name in CALLS else []
    if name == "EinsumBackward0":  # one einsum op per operand count, declared on first use (by any test)
        calls = [_einsum_chain(len(op.node_class.vjps))]
    for call in [] if mixed else calls + EXTRA:
        T.leaves.clear()
        out = call(T)
        if type(out.grad_fn) is op.node_class:
            return out, T.leaves
    for make in _mixed_calls(T) if mixed else _generic_calls(T):
        T.leaves.clear()
        try:
            out = op(*make())
        except Exception:  # noqa: BLE001  (another pattern may fit)
            continue
        if isinstance(out, lucid.Tensor) and type(out.grad_fn) is op.node_class:
            try:
                lucid.autograd.grad(out, T.leaves, _seed_for(out, seed), retain_graph=True, allow_unused=True)
            except Exception:  # noqa: BLE001
                continue
            return out, T.leaves
    return None


def _arrays(ts):
    return [None if t is None else (str(t.dtype), np.array(t.detach().numpy())) for t in ts]


def _same(a, b) -> bool:
    """Bit-identical: same None-ness, dtype, shape and values (NaN equal to NaN)."""
    if (a is None) != (b is None):
        return False
    return a is None or (a[0] == b[0] and a[1].shape == b[1].shape and np.array_equal(a[1], b[1], equal_nan=True))


def _seed_for(out, seed: int):
    rng = np.random.default_rng(seed + 1000)
    g = rng.uniform(-1, 1, tuple(out.shape))
    return lucid.tensor(g, dtype=out.dtype) if out.dtype.is_complex else lucid.tensor(g, dtype=out.dtype)


_OPS = [pytest.param(op, i, id=f"{op.__name__}-{op.node_class.__name__}") for i, op in enumerate(declared)]


@pytest.mark.parametrize("op, i", _OPS)
def test_every_declared_op_gets_the_same_gradients_from_both_walks(op, i):
    if op.node_class.__name__ in NOT_RUN:
        pytest.skip(NOT_RUN[op.node_class.__name__])
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
    seed = _seed_for(out, i)
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


@pytest.mark.parametrize("op, i", [p for p in _OPS if p.values[0].node_class.raw])
def test_a_raw_vjp_on_arrays_equals_the_same_vjp_on_tensors(op, i):
    """``defop(raw=True)``'s contract: the node's VJPs, given MLX arrays while grad mode is None (what the fast walk
    does), compute what they compute on Tensors."""
    out, leaves = _record(op, i)
    node = out.grad_fn
    g = _seed_for(out, i)
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
            assert _same(_arrays([t])[0], (str(lucid.tensor(a).dtype), np.array(a)))


def test_every_declared_op_is_covered():
    missing = [op.node_class.__name__ for op in declared
               if op.node_class.__name__ not in NOT_RUN and _record(op, 0) is None]
    assert not missing, missing


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
