"""Sample calls for every op declared with ``defop`` (``lucid.ops._core.declared``, the registry): how to call each
so that it records its own backward node. ``tests/test_opinfo.py`` (forward against PyTorch, gradients against
finite differences, second order, raw VJP, vmap, compile) and ``tests/test_engine_reference.py`` (the two backward
walks) run every declared op through them.

A call is a function of a ``Maker`` ``T``: ``T(3, 4)`` is a new leaf (seeded values in (0.1, 0.9), inside the
domain of log, sqrt, asin, atanh, logit ...). Most ops need no entry: ``find_call`` tries the generic argument
patterns (``_generic_calls``) on the op itself. An op they miss gets an entry in ``CALLS`` (by its node's name) or
``EXTRA``; an op no call reaches, one in ``NOT_RUN`` with the reason. The same call runs in PyTorch: ``in_torch``
rebinds its names ``lucid`` and ``F`` to ``torch`` and ``torch.nn.functional`` (a call that reaches into lucid's
private modules has no PyTorch counterpart and says so).
"""
import types

import mlx.core as mx
import numpy as np

import lucid
import lucid.compat.torch as _compat_torch
import lucid.nn.functional as F
from lucid.distributions import _sampling
from lucid.ops import conv as _conv, fft as _fft, scan as _scan, unpool as _unpool


class NoCounterpart(Exception):
    """The call uses something PyTorch does not have (a private module of lucid, an op with no torch name)."""


class Maker:
    """Makes the leaves of one call: float32 by default (``dtype``), in ``lib`` (lucid, or torch for the same call
    in PyTorch). ``given``: return these tensors, in order, instead of new leaves (the values are still drawn, so
    the rest of the call sees the same random stream): a call replayed as a function of its leaves."""

    def __init__(self, seed: int, dtype=None, lib=lucid, given=None):
        self.rng = np.random.default_rng(seed)
        self.leaves = []
        self.dtype, self.lib = dtype, lib
        self.given = None if given is None else iter(given)

    def __call__(self, *shape, dtype=None):
        values = self.rng.uniform(0.1, 0.9, shape)
        dtype = dtype or self.dtype or lucid.float32
        if self.given is not None:
            t = next(self.given)
        elif self.lib is lucid:
            t = lucid.tensor(values, dtype=dtype, requires_grad=True)
        else:
            t = self.lib.tensor(values, dtype=getattr(self.lib, str(dtype).split(".")[-1]), requires_grad=True)
        self.leaves.append(t)
        return t

    def square(self):
        return self.__call__(3, 3) * 0.1 + self.lib.eye(3)

    def op(self, op):
        """``op`` itself, or in PyTorch the function of its name, for an op that lucid exports under that name (an
        internal op, such as ``_mT`` declared as "transpose", may have another calling convention)."""
        if self.lib is lucid:
            return op
        if public(op) is not op:
            raise NoCounterpart(f"lucid's {op.__name__} op is internal, called as lucid.{op.__name__} is not")
        for ours, theirs in ((lucid, self.lib), (lucid.special, self.lib.special), (F, self.lib.nn.functional)):
            if getattr(ours, op.__name__, None) is op and hasattr(theirs, op.__name__):
                return getattr(theirs, op.__name__)
        raise NoCounterpart(f"torch has no {op.__name__}")


def public(op):
    """The public function of ``op``'s name (lucid.X, lucid.special.X, F.X), or None."""
    for ns in (lucid, lucid.special, F):
        f = getattr(ns, op.__name__, None)
        if f is not None:
            return f
    return None


def _generic_calls(T):
    """Argument patterns tried in turn on an op whose calling convention the table does not give."""
    idx = T.lib.tensor([0, 2])
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


def _seeded():
    g = lucid.Generator()
    g.manual_seed(0)
    return g


def _written(x, row):
    """``x`` with its row 1 written in place through a view: the write records CopySlices."""
    y = x * 1
    y[1] = row
    return y


def _fractional(pool, x):
    """Fractional max pooling of ``x`` to 3 per dim with fixed window offsets (the same in PyTorch)."""
    samples = x.new_tensor([[[0.3, 0.7, 0.5][:x.ndim - 2]] * x.shape[1]])
    return pool(x, 2, output_size=3, _random_samples=samples)


def _spd_cholesky(a):
    return lucid.linalg.cholesky(a @ a.mT)


def _second_order(T, fn, shape):
    """A node that only a backward with create_graph records (the derivative of a derivative)."""
    w = T(*shape)
    return lucid.autograd.grad((fn(w) * 0.5).sum(), w, create_graph=True)


def _masked_softmax(x, dim):
    """``torch._masked_softmax`` with a mask of ``x``'s (3, 4) shape, no row masked whole (that row would be NaN);
    lucid's lives in lucid.compat.torch (``in_torch`` binds the name ``lucid`` to torch itself)."""
    ns = _compat_torch if lucid.__name__ == "lucid" else lucid
    mask = lucid.tensor([[True, False, False, True], [False, False, False, False], [False, True, True, False]])
    return ns._masked_softmax(x, mask, dim, 2)


# The ops whose calling convention the generic patterns miss: a call that records the op's node (EXTRA: more
# calls for node names that several declarations share, e.g. addmm and linear's AddmmBackward0).
CALLS = {
    "AddmmBackward0": lambda T: lucid.addmm(T(3, 5), T(3, 4), T(4, 5)),
    # (the op under max_unpool1d/2d/3d: values written at flat indices of a zero plane; the public forms reshape)
    "MaxUnpoolBackward0": lambda T: _unpool._unpool(T(6), lucid.tensor([0, 3, 5, 7, 2, 4]), 8),
    "ScatterReduceBackward0": lambda T: lucid.scatter_reduce(T(3, 4), 0, lucid.tensor([[0, 1, 2, 0], [2, 2, 0, 1]]),
                                                             T(2, 4), "amax", include_self=False),
    "IndexReduceBackward0": lambda T: lucid.index_reduce(T(3, 4), 0, lucid.tensor([0, 2, 0]), T(3, 4), "prod"),
    "AddmvBackward0": lambda T: lucid.addmv(T(3), T(3, 4), T(4)),
    "AddrBackward0": lambda T: lucid.addr(T(3, 4), T(3), T(4)),
    "BaddbmmBackward0": lambda T: lucid.baddbmm(T(2, 3, 5), T(2, 3, 4), T(2, 4, 5)),
    "NativeBatchNormBackward0": lambda T: F.batch_norm(T(4, 3), None, None, T(3), T(3), training=True),
    "CatBackward0": lambda T: lucid.cat([T(2, 3), T(1, 3)]),
    "CeluBackward0": lambda T: F.celu(T(3, 4) - 0.5),
    "CeluBackward1": lambda T: F.celu_(T(3, 4) - 0.5, 0.7),
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
    "EluBackward1": lambda T: F.elu_(T(3, 4) - 0.5, 0.7),
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
    "AdaptiveMaxPool1DBackward0": lambda T: F.adaptive_max_pool1d(T(1, 2, 7), 3),
    "AdaptiveMaxPool2DBackward0": lambda T: F.adaptive_max_pool2d(T(1, 2, 5, 4), (2, 3)),
    "AdaptiveMaxPool3DBackward0": lambda T: F.adaptive_max_pool3d(T(1, 1, 4, 3, 5), 2),
    "FractionalMaxPool2DBackward0": lambda T: _fractional(F.fractional_max_pool2d, T(1, 2, 6, 5)),
    "FractionalMaxPool3DBackward0": lambda T: _fractional(F.fractional_max_pool3d, T(1, 1, 5, 5, 6)),
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
    "SortBackward1": lambda T: lucid.sort(T(3, 4), dim=1, stable=True)[0],
    # the public calls of ops the generic patterns reach only in their internal form
    "LerpBackward0": lambda T: lucid.lerp(T(3, 4), T(3, 4), 0.3),
    "LerpBackward1": lambda T: lucid.lerp(T(3, 4), T(3, 4), T(3, 4)),
    "RollBackward0": lambda T: lucid.roll(T(3, 4), 1, 0),
    "ProdBackward0": lambda T: lucid.prod(T(3, 4)),
    "ProdBackward1": lambda T: lucid.prod(T(3, 4), 1),
    "MaxBackward1": lambda T: lucid.max(T(3, 4)),
    "MinBackward1": lambda T: lucid.min(T(3, 4)),
    "IndexSelectBackward0": lambda T: lucid.index_select(T(3, 4), 1, lucid.tensor([0, 2])),
    "MaskedFillBackward0": lambda T: lucid.masked_fill(T(3, 4), lucid.tensor([True, False, True, False]), 0.5),
    "IndexAddBackward0": lambda T: lucid.index_add(T(3, 4), 1, lucid.tensor([0, 2]), T(3, 2)),
    "IndexCopyBackward0": lambda T: lucid.index_copy(T(3, 4), 1, lucid.tensor([0, 2]), T(3, 2)),
    "IndexFillBackward0": lambda T: lucid.index_fill(T(3, 4), 1, lucid.tensor([0, 2]), 0.5),
    "TakeBackward0": lambda T: lucid.take(T(3, 4), lucid.tensor([0, 5, 11])),
    "DotBackward0": lambda T: lucid.dot(T(4), T(4)),
    "BmmBackward0": lambda T: lucid.bmm(T(2, 3, 4), T(2, 4, 5)),
    "CumsumBackward0": lambda T: lucid.cumsum(T(3, 4), 1),
    "MedianBackward0": lambda T: lucid.median(T(3, 4)),
    "NanmedianBackward0": lambda T: lucid.nanmedian(T(3, 4)),
    "ImagBackward0": lambda T: lucid.imag(lucid.complex(T(3, 4), T(3, 4))),
    "MatrixPowerBackward0": lambda T: lucid.matrix_power(T.square(), 0),
    "LogitBackward0": lambda T: lucid.logit(T(3, 4), 0.2),
    "RemainderBackward0": lambda T: lucid.remainder(T(3, 4), 0.3),
    "FillBackward0": lambda T: (T(3, 4) * 1).fill_(0.5),
    "ZeroBackward0": lambda T: (T(3, 4) * 1).zero_(),
    "CopyBackwards": lambda T: (T(3, 4) * 1).copy_(T(4)),
    "XlogyBackward1": lambda T: lucid.xlogy(0.5, T(3, 4)),
    "XlogyBackward2": lambda T: lucid.xlogy(T(3, 4), 0.5),
    "FmodBackward0": lambda T: lucid.fmod(T(3, 4), 0.3),
    "CopysignBackward1": lambda T: lucid.copysign(T(3, 4), -1.0),
    "SelectBackward0": lambda T: T(3, 4)[1],
    "SliceBackward0": lambda T: T(3, 4)[:, 1:3],
    "AliasBackward0": lambda T: T(3, 4)[...],
    "CopySlices": lambda T: _written(T(3, 4), T(4)),
    "FlipBackward0": lambda T: lucid.flip(T(3, 4), (0,)),
    "SoftplusBackward0": lambda T: F.softplus(T(3, 4) - 0.5, 2.0),
    "GeluBackward0": lambda T: F.gelu(T(3, 4) - 0.5),
    "SiluBackward0": lambda T: F.silu(T(3, 4) - 0.5),
    "MishBackward0": lambda T: F.mish(T(3, 4) - 0.5),
    "LogSigmoidBackward0": lambda T: F.logsigmoid(T(3, 4) - 0.5),
    "LeakyReluBackward0": lambda T: F.leaky_relu(T(3, 4) - 0.45, 0.1),
    "LeakyReluBackward1": lambda T: F.leaky_relu_(T(3, 4) - 0.45, 0.1),
    "MaskedSoftmaxBackward0": lambda T: _masked_softmax(T(3, 4), 1),
    "RreluWithNoiseBackward1": lambda T: F.rrelu_(T(3, 4) - 0.45, 0.1, 0.3),
    "HardtanhBackward0": lambda T: F.hardtanh(T(3, 4) * 4 - 2),
    "HardsigmoidBackward0": lambda T: F.hardsigmoid(T(3, 4) * 8 - 4),
    "HardswishBackward0": lambda T: F.hardswish(T(3, 4) * 8 - 4),
    "SoftshrinkBackward0": lambda T: F.softshrink(T(3, 4) - 0.45, 0.2),
    "PreluKernelBackward0": lambda T: F.prelu(T(3, 4) - 0.45, T(1)),
    "GluBackward0": lambda T: F.glu(T(3, 4)),
    "IndexBackward0": lambda T: T(3, 4)[lucid.tensor([0, 2])],
    "BinaryCrossEntropyBackward0": lambda T: F.binary_cross_entropy(T(3, 4), T(3, 4), reduction="none"),
    "LinalgInvExBackward0": lambda T: lucid.linalg.inv(T.square()),
    "LinalgSolveExBackward0": lambda T: lucid.linalg.solve(T.square(), T(3, 2)),
    "LinalgDetBackward0": lambda T: lucid.linalg.det(T.square()),
    "AcoshBackward0": lambda T: lucid.acosh(T(3, 4) + 1.5),
    "LinalgCholeskyExBackward0": lambda T: _spd_cholesky(T.square()),
    "StackBackward0": lambda T: lucid.stack([T(3), T(3)]),
    "StdBackward0": lambda T: lucid.std(T(3, 4), 1),
    "VarBackward0": lambda T: lucid.var(T(3, 4), 1),
    # (float32 -> float64, or float64 -> float32 for the float64 leaves of test_opinfo)
    "ToCopyBackward0": lambda T: T(3, 4).to(lucid.float32 if T.dtype else lucid.float64),
    "TopkBackward0": lambda T: lucid.topk(T(3, 4), 2)[0],
    "PolygammaBackward0": lambda T: lucid.polygamma(1, T(3, 4)),
    # (seeded: the same draw at every call, so that the sample is a function of the concentration)
    "StandardGammaBackward0": lambda T: _sampling.standard_gamma(T(3, 4) + 1.0, generator=_seeded()),
    # zeta and the incomplete gammas have no derivative in their first argument (as in PyTorch): a constant there
    "SpecialZetaBackward0": lambda T: lucid.special.zeta(lucid.full((3, 4), 2.5), T(3, 4)),
    "IgammaBackward0": lambda T: lucid.igamma(lucid.full((3, 4), 1.5), T(3, 4)),
    "IgammacBackward0": lambda T: lucid.igammac(lucid.full((3, 4), 1.5), T(3, 4)),
}
_IDX = mx.array([[0], [2], [1]])
EXTRA = [
    lambda T: T(3, 4).transpose(0, 1),
    lambda T: T(3, 4).t(),
    lambda T: lucid.index_put(T(3, 4), (lucid.tensor([0, 2]),), T(2, 4)),
    lambda T: F.conv2d(T(1, 0, 5, 5), T(3, 0, 3, 3), T(3)),  # over no input channels: its own op (zero gradients)
    lambda T: lucid.index_put(T(3, 4), (lucid.tensor([0, 2]),), T(2, 4), accumulate=True),
    lambda T: lucid.mm(T(3, 4), T(4, 5)),
    lambda T: T(2, 3, 4).mT,
    lambda T: F.linear(T(3, 4), T(5, 4)),
    lambda T: 2.0 ** T(3, 4),
    lambda T: lucid.where(T(3, 4) > 0.5, T(3, 4), T(3, 4)),
    lambda T: T(3, 4)[None],
    lambda T: T(2, 3).repeat(2, 2),
    lambda T: _conv.gather_axis(T(3, 4), lucid.tensor([0, 2]), 1),
    # max pooling over overlapping windows: the values op that gathers at the indices (the tiles' op above)
    lambda T: F.max_pool1d(T(1, 2, 7), 3, 2, 1),
    lambda T: F.max_pool2d(T(1, 2, 5, 4), 3, 2, 1),
    lambda T: F.max_pool3d(T(1, 1, 4, 5, 4), 3, 2, 1),
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
    "SyncBatchNormAllSumBackward0": "SyncBatchNorm's all-reduce of its statistics across processes (the identity in "
                                    "one): tests/test_nn_syncbn.py checks it against BatchNorm and PyTorch, and "
                                    "tests/test_distributed.py on 2 processes",
    "StandardGammaGradBackward0": "the Gamma draw's reparameterization gradient has no derivative of its own (as in "
                                  "PyTorch): its backward raises by design",
    # (by op name: its nodes are named as the adaptive pools' own, which run)
    "adaptive_pool_empty_output": "an adaptive pool to an empty output: its backward raises by design (as in "
                                  "PyTorch); tests/test_pool_args.py compares the error with PyTorch's",
}


def not_run(op):
    """Why ``op`` is not run (NOT_RUN names its node or, for a node name shared with ops that run, the op), or None."""
    return NOT_RUN.get(op.__name__) or NOT_RUN.get(op.node_class.__name__)


def _einsum_chain(n: int):
    """A call of einsum with ``n`` operands: the chain product ab,bc,cd,... (or a transpose for one operand)."""
    letters = "abcdefghij"[:n + 1]
    eq = "ab->ba" if n == 1 else ",".join(letters[i:i + 2] for i in range(n)) + f"->{letters[0]}{letters[n]}"
    return lambda T: lucid.einsum(eq, *[T(3 + i % 2, 3 + (i + 1) % 2) for i in range(n)])


def _pattern(op, make_patterns, k: int):
    """The call ``op(*pattern k)``."""
    return lambda T: T.op(op)(*make_patterns(T)[k]())


def generic_calls(fn) -> list:
    """The calls ``fn(*pattern)``, one per generic pattern."""
    return [_pattern(fn, _generic_calls, k) for k in range(len(_generic_calls(Maker(0))))]


def seed_for(out, seed: int):
    """A seeded output gradient (cotangent) for ``out``."""
    rng = np.random.default_rng(seed + 1000)
    return lucid.tensor(rng.uniform(-1, 1, tuple(out.shape)), dtype=out.dtype)


def find_call(op, seed: int, mixed: bool = False, dtype=None):
    """A call that records ``op``'s node, with the output and leaves of one run: (call, out, leaves), or None if no
    pattern fits (a pattern fits when the op records its node and a backward through it runs: pow's tensor-scalar
    form accepts a tensor exponent in its forward, not in its VJP). ``mixed``: the mixed-dtype patterns only."""
    name = op.node_class.__name__
    calls = [CALLS[name]] if name in CALLS else []
    if name == "EinsumBackward0":  # one einsum op per operand count, declared on first use (by any test)
        calls = [_einsum_chain(len(op.node_class.vjps))]
    for call in [] if mixed else calls + EXTRA:
        T = Maker(seed, dtype)
        out = call(T)
        if type(out.grad_fn) is op.node_class:
            return call, out, T.leaves
    patterns = _mixed_calls if mixed else _generic_calls
    # the public function of the op's name first (PyTorch has its counterpart), then the op itself
    fns = [f for f in (public(op), op) if f is not None]
    for k in range(len(patterns(Maker(seed)))):
        for fn in [] if mixed else fns[:-1]:
            found = _try(_pattern(fn, patterns, k), op, seed, dtype)
            if found is not None:
                return found
        found = _try(_pattern(op, patterns, k), op, seed, dtype)
        if found is not None:
            return found
    return None


def _try(call, op, seed: int, dtype):
    """(call, out, leaves) if ``call`` records ``op``'s node and a backward through it runs, else None."""
    T = Maker(seed, dtype)
    try:
        out = call(T)
    except Exception:  # noqa: BLE001  (another pattern may fit)
        return None
    if isinstance(out, lucid.Tensor) and type(out.grad_fn) is op.node_class:
        try:
            lucid.autograd.grad(out, T.leaves, seed_for(out, seed), retain_graph=True, allow_unused=True)
        except Exception:  # noqa: BLE001
            return None
        return call, out, T.leaves
    return None


class _Private:
    """A private module of lucid, seen from PyTorch: any use has no counterpart."""

    def __init__(self, name: str):
        self.name = name

    def __getattr__(self, attr):
        raise NoCounterpart(f"lucid's private {self.name}.{attr}")


def in_torch(call):
    """``call`` with its names ``lucid`` and ``F`` bound to torch (and this module's helpers rebound likewise)."""
    import torch
    names = dict(globals(), lucid=torch, F=torch.nn.functional, mx=_Private("mx"), _conv=_Private("ops.conv"),
                 _fft=_Private("ops.fft"), _scan=_Private("ops.scan"), _sampling=_Private("distributions._sampling"))
    for n, v in globals().items():
        if isinstance(v, types.FunctionType) and v.__module__ == __name__ and n not in ("in_torch",):
            names[n] = types.FunctionType(v.__code__, names, v.__name__, v.__defaults__, v.__closure__)
    return types.FunctionType(call.__code__, names, call.__name__, call.__defaults__, call.__closure__)


# The checks of tests/test_opinfo.py an op cannot take, and why: {node name: {check: reason}}. The checks: "torch"
# (forward against PyTorch), "gradcheck", "gradgradcheck", "vmap" (forward), "vmap_vjp", "compile".
_F32_OUT = "a float32 result: finite differences at float32 resolution cannot check it"
_C64 = "complex64 (MLX has no complex128): finite differences at float32 resolution cannot check it"
_NO_DERIVATIVE = "no derivative, as in PyTorch: its backward raises"
_INSIDE = "the sample differentiates inside the call (a node that only a double backward records)"
SKIP: dict = {
    "ToCopyBackward0": {"gradcheck": _F32_OUT, "gradgradcheck": _F32_OUT},
    **{name: {"gradcheck": _C64, "gradgradcheck": _C64} for name in (
        "ComplexBackward0", "ImagBackward0", "RealBackward0", "ConjBackward0", "FftC2cBackward0", "FftR2cBackward0",
        "FftC2rBackward0")},
    "StandardGammaBackward0": {check: "a random draw: its gradient is the implicit one (the CDF held fixed), which "
                               "finite differences of a seeded draw do not give (they hold the sampler's normal draw "
                               "fixed); test_distributions_continuous checks it against the CDF"
                               for check in ("gradcheck", "gradgradcheck")},
    **{name: {"gradcheck": _NO_DERIVATIVE, "gradgradcheck": _NO_DERIVATIVE, "vmap_vjp": _NO_DERIVATIVE} for name in (
        "Unique2Backward0", "UniqueDimBackward0", "UniqueConsecutiveBackward0")},
    "MaxUnpoolBackward0": {"torch": "the flat-index write under F.max_unpool1d/2d/3d has no PyTorch op of its own: "
                                    "tests/test_nn_unpool.py compares the public forms with PyTorch's"},
    **{name: {"vmap": _INSIDE, "vmap_vjp": _INSIDE, "compile": _INSIDE} for name in (
        "EmbeddingBackwardBackward0", "ConvolutionBackwardBackward0")},
}

# The ops that lucid.func.vmap cannot batch, {node name: {check: why}}: there vmap must raise lucid's RuntimeError
# saying so (not MLX's message). The checks: "vmap" (the forward), "vmap_vjp".
_LU = "MLX's LU factorization has no batching rule"
RAISES_IN_VMAP: dict = {
    "LinalgMatrixExpBackward0": {"vmap": _LU + " (the Pade approximant is solved with it)", "vmap_vjp": _LU},
    "LinalgSolveExBackward0": {"vmap": _LU},
    **{name: {"vmap": "the result's shape depends on the values"} for name in (
        "Unique2Backward0", "UniqueDimBackward0", "UniqueConsecutiveBackward0")},
}


# ------------------------------------------------------------------------------------------------- not differentiable
# The ops declared differentiable=False (lucid.ops._core.declared_nondiff) that the generic patterns do not call as
# PyTorch does, by name, and those with no PyTorch counterpart to compare with (NONDIFF_SKIP, with the reason).
def _ints(T, *shape):
    return T.lib.tensor(T.rng.integers(0, 8, shape))


NONDIFF_CALLS = {
    **{name: (lambda name: lambda T: getattr(lucid, name)(_ints(T, 3, 4), _ints(T, 3, 4)))(name)
       for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm")},
    **{name: (lambda name: lambda T: getattr(lucid, name)(_ints(T, 3, 4), _ints(T, 3, 4) % 5))(name)
       for name in ("bitwise_left_shift", "bitwise_right_shift")},
    "bitwise_not": lambda T: lucid.bitwise_not(_ints(T, 3, 4)),
    "histc": lambda T: lucid.histc(T(3, 4), 5, 0.0, 1.0),
    "allclose": lambda T: lucid.tensor(lucid.allclose(T(3, 4), T(3, 4) * 1.0000001)),
    **{name: (lambda name: lambda T: getattr(lucid.special, name)(T(3, 4) * 2 - 1, 3))(name) for name in (
        "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
        "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
        "legendre_polynomial_p")},
}
NONDIFF_SKIP = {
    "to": "the cast behind Tensor.to (integer and bool targets), which has no function of its own in PyTorch",
}


# ---------------------------------------------------------------------------------------------------- in-place forms
# Arguments for the in-place methods (lucid.ops._core.inplace_declared) that the generic patterns do not fit.
_IDX2 = [[0], [2], [1]]
INPLACE_ARGS = {
    "addmv_": lambda T: (T(3), T(3, 4), T(4)),
    "addr_": lambda T: (T(3, 4), T(3), T(4)),
    "baddbmm_": lambda T: (T(2, 3, 5), T(2, 3, 4), T(2, 4, 5)),
    **{name: (lambda T: (_ints(T, 3, 4), _ints(T, 3, 4))) for name in ("bitwise_and_", "bitwise_or_", "bitwise_xor_")},
    "bitwise_not_": lambda T: (_ints(T, 3, 4),),
    "index_add_": lambda T: (T(3, 4), 1, lucid.tensor([0, 2]), T(3, 2)),
    "index_copy_": lambda T: (T(3, 4), 1, lucid.tensor([0, 2]), T(3, 2)),
    "index_fill_": lambda T: (T(3, 4), 1, lucid.tensor([0, 2]), 0.5),
    "masked_fill_": lambda T: (T(3, 4), lucid.tensor([True, False, True, False]), 0.5),
    "scatter_": lambda T: (T(3, 4), 1, lucid.tensor(_IDX2), T(3, 1)),
    "scatter_add_": lambda T: (T(3, 4), 1, lucid.tensor(_IDX2), T(3, 1)),
    **{name: (lambda T: (_ints(T, 3, 4), _ints(T, 3, 4))) for name in ("gcd_", "lcm_")},
    **{name: (lambda T: (_ints(T, 3, 4), _ints(T, 3, 4) % 5)) for name in ("bitwise_left_shift_",
                                                                           "bitwise_right_shift_")},
    "renorm_": lambda T: (T(3, 4), 2, 0, 0.5),
    "scatter_reduce_": lambda T: (T(3, 4), 1, lucid.tensor(_IDX2), T(3, 1), "amax"),
    "index_reduce_": lambda T: (T(3, 4), 1, lucid.tensor([0, 2]), T(3, 2), "prod"),
    "masked_scatter_": lambda T: (T(3, 4), lucid.tensor([True, False, True, False]), T(3, 4)),
    "put_": lambda T: (T(3, 4), lucid.tensor([0, 5, 11]), T(3)),
}
