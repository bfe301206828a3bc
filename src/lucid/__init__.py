"""lucid: PyTorch-style autograd on MLX arrays."""
from . import _blas
_blas.load()  # first: a fast BLAS must be in the process before mlx.core binds its BLAS calls (Linux)
import math as _math  # noqa: E402
from . import autograd  # noqa: E402  (attaches Tensor.backward and the hook methods; lucid.ops attach the ops below)
from . import _dtype
from ._creation import (arange, as_tensor, empty, empty_like, eye, from_dlpack, from_mlx, from_numpy, full, full_like, linspace,
                        logspace, manual_seed, normal, ones, ones_like, rand, rand_like, randint, randint_like, randn,
                        randn_like, randperm, seed, tensor, zeros, zeros_like)
from ._creation import (bartlett_window, blackman_window, hamming_window, hann_window, kaiser_window,  # noqa: F401
                        scalar_tensor, tril_indices, triu_indices)
from ._random import get_rng_state, initial_seed, set_rng_state
from ._dtype import can_cast, finfo, get_default_dtype, iinfo, promote_types, set_default_dtype  # noqa: F401
from ._dtype import (bfloat16, bool, cfloat, complex64, device, double, float, float16, float32, float64,
                     get_default_device, half, int, int8, int16, int32, int64, long, set_default_device, short,
                     uint8, uint16, uint32, uint64)
from ._tensor import Size, Tensor, is_inference
from ._legacy import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor, HalfTensor,
                      IntTensor, LongTensor, ShortTensor)
from .autograd import enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad, set_grad_enabled
from .ops.elementwise import *  # noqa: F401,F403
from .ops.reduce import *  # noqa: F401,F403
from .ops.shape import *  # noqa: F401,F403
from .ops.shape_inplace import select  # noqa: F401
from .ops.linalg import *  # noqa: F401,F403
from .ops.index import *  # noqa: F401,F403
from .ops.scan import *  # noqa: F401,F403
from .ops.decomp import (cholesky_solve, det, inv as inverse, legacy_cholesky as cholesky, legacy_qr as qr,  # noqa: F401
                         legacy_svd as svd, lobpcg, logdet, matrix_power, pinverse, slogdet)
from .ops.linalg_lu import lu_unpack, torch_lu as lu, torch_lu_solve as lu_solve  # noqa: F401
from .ops.linalg_extra import cholesky_inverse, matrix_exp, triangular_solve  # noqa: F401
from .ops.householder import geqrf, orgqr, ormqr  # noqa: F401
from .ops.tensor_api import *  # noqa: F401,F403
from .ops.storage import *  # noqa: F401,F403  (UntypedStorage, TypedStorage, is_storage)
from .ops.composites import *  # noqa: F401,F403  (ravel, column_stack, rot90, tensor_split, nansum, ...)
from .ops.aten_forms import *  # noqa: F401,F403  (torch.conv2d, torch.dropout, ..., absolute, addcmul, sgn, ...)
from .ops.stats import *  # noqa: F401,F403
from .ops.numeric import *  # noqa: F401,F403  (gcd, lcm, shifts, frexp, nextafter, angle, polar, logcumsumexp, ...)
from .ops.scatter_reduce import *  # noqa: F401,F403  (scatter_reduce, index_reduce, masked_scatter, put, ...)
from .ops.quantile import *  # noqa: F401,F403  (quantile, nanquantile, mode)
from .ops.histogram import *  # noqa: F401,F403  (histogram, histogramdd, gradient)
from .ops.strided import *  # noqa: F401,F403  (as_strided, as_strided_, as_strided_scatter)
from .ops.signal import *  # noqa: F401,F403  (stft, istft)
from .ops.torch_forms import *  # noqa: F401,F403  (dropout_, feature_dropout, asarray, frombuffer, empty_strided)
from .ops.sets import *  # noqa: F401,F403
from .ops.fft import *  # noqa: F401,F403  (real, imag, conj, complex, view_as_real/complex; lucid.fft below)
from .ops.special_fns import *  # noqa: F401,F403  (lgamma, digamma, polygamma, mvlgamma, igamma, i0, logit, ...)
from .ops.activation import (celu, celu_, hardshrink, prelu, rrelu, rrelu_, selu, selu_, threshold,  # noqa: F401
                              threshold_)
from .ops.embedding_bag import embedding_bag_with_aux as embedding_bag  # noqa: F401,E402  (PyTorch's 4-tuple form)
from .ops.inplace_forms import *  # noqa: F401,F403,E402  (last of the ops: torch.relu_(x), torch.zero_(x), ...)
from . import fft, linalg, nn, special, utils  # noqa: E402
from . import sparse  # noqa: E402  (sparse COO tensors; also sets Tensor.to_sparse, .layout, .is_sparse)
from .sparse import layout, sparse_coo, sparse_coo_tensor, spmm, strided  # noqa: E402,F401
from .nn._torch_forms import (ctc_loss, gru, gru_cell, lstm, lstm_cell, rnn_relu, rnn_relu_cell,  # noqa: E402,F401
                              rnn_tanh, rnn_tanh_cell)
from . import optim  # noqa: E402
from . import distributions  # noqa: E402
from ._compile import compile  # noqa: E402,A001
from . import func  # noqa: E402
from . import datasets  # noqa: E402
from . import distributed  # noqa: E402
from . import amp  # noqa: E402
from . import accelerator, backends, cuda, mps  # noqa: E402  (torch.cuda & co.: lucid's GPU, where MLX has one)
from .amp import autocast, get_autocast_dtype, is_autocast_enabled  # noqa: E402
from .amp.settings import *  # noqa: E402,F401,F403  (set_autocast_enabled, set_autocast_dtype, ...)
from .nn import parallel as _nn_parallel  # noqa: E402,F401  (lucid.nn.parallel: DDP sits on lucid.distributed)
# nn.SyncBatchNorm sums its statistics over the ranks with lucid.distributed's collective (nn is the lower layer)
nn.modules.syncbatchnorm.register_collective(distributed.sync_batch_norm_collective)
from .serialization import load, save  # noqa: E402
from .utils.data import Generator  # noqa: E402
from .utils.data._generator import default_generator  # noqa: E402
from . import random  # noqa: E402  (torch.random: seeds, states, fork_rng)
from .distributions.draws import binomial, poisson  # noqa: E402
from .func import vmap  # noqa: E402
from . import viz  # noqa: E402  (graphviz itself is imported only when draw_graph is called)
from .viz import summary  # noqa: E402
from ._info import __version__, show_config  # noqa: E402

dtype = _dtype.Dtype


def _accept_out() -> None:
    """PyTorch's ``out=`` on the common functions of the ``lucid`` namespace. Declared ops take it themselves; the
    others are wrapped here, in the namespace only: Tensor methods, operators and lucid's internal calls are untouched."""
    from .ops._core import accepts_out
    g = globals()
    for name in ("add", "sub", "subtract", "div", "divide", "true_divide", "pow", "clamp", "clip", "lerp", "where",
                 "sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "std", "var", "logsumexp", "norm",
                 "cumsum", "cumprod", "softmax", "log_softmax", "matmul", "mm", "bmm", "mv", "dot", "outer", "addmm",
                 "cat", "concat", "concatenate", "stack", "hstack", "vstack", "zeros", "ones", "full", "arange",
                 "eq", "ne", "lt", "le", "gt", "ge", "remainder", "floor_divide", "fmod", "atan2", "clamp_min",
                 "clamp_max", "isclose", "logical_and", "logical_or", "logical_not", "logical_xor", "tril", "triu",
                 "addmv", "baddbmm", "cross", "kron", "diag", "round", "xlogy", "absolute", "deg2rad", "rad2deg",
                 "addcmul", "addcdiv", "heaviside", "sgn", "signbit"):
        if name in g:
            g[name] = accepts_out(g[name])


_accept_out()


def _accept_numpy_names() -> None:
    """numpy's ``axis=``/``keepdims=`` for ``dim=``/``keepdim=`` on the functions of the ``lucid`` namespace, as
    PyTorch's (its nn.functional, a Python layer, takes only ``dim``, and so does lucid's; the Tensor methods take
    them from ``lucid._surface.attach``)."""
    import inspect
    from ._surface import accepts_numpy_names
    for g in (globals(), vars(special)):  # torch.special's functions are ATen's too (and the same objects)
        for name in [n for n in g if not n.startswith("_")]:
            if inspect.isfunction(g[name]):
                g[name] = accepts_numpy_names(g[name])


_accept_numpy_names()
inf, nan, pi, e = _math.inf, _math.nan, _math.pi, _math.e

from ._params import describe_all as _describe_all  # noqa: E402

_describe_all(globals())  # the arguments every op means the same by (lucid/_params.py)
