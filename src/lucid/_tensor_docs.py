"""The docstrings of the Tensor's own attributes (its properties and the methods of its class body), kept here so
that ``_tensor.py`` stays about the Tensor's machinery; ``_surface`` sets them at import. Each says what PyTorch's
says the attribute is, in lucid's words."""
from __future__ import annotations

DOCS = {
    "shape": "The tensor's shape, a ``lucid.Size`` (a tuple of ints): ``t.shape[0]``, ``t.shape == (2, 3)``.\n\n"
             ">>> import lucid\n>>> lucid.zeros(2, 3).shape\nlucid.Size([2, 3])",
    "ndim": "The number of dimensions (``len(t.shape)``).",
    "dtype": "The element type: ``lucid.float32``, ``lucid.int64``, ... (MLX's dtype objects).\n\n"
             ">>> import lucid\n>>> lucid.tensor([1, 2]).dtype\nmlx.core.int64",
    "device": "Where the tensor's ops run: lucid's default device (``gpu`` on Apple Silicon, ``cpu`` with "
              "``mlx[cpu]``); memory is unified, so a tensor is never copied between devices.",
    "is_cuda": "True when the tensor's device is lucid's GPU and MLX runs on CUDA (an ``mlx[cuda]`` build).",
    "requires_grad": "Whether operations on this tensor are recorded for backward. Settable on leaves (floating "
                     "point dtypes only); a result requires grad when any input does (outside ``no_grad``).",
    "is_leaf": "True for tensors not made by a recorded op: user-made tensors and parameters, and every tensor that "
               "does not require grad. Only leaves get ``.grad`` from backward (others need ``retain_grad()``).",
    "grad_fn": "The backward node of the op that made this tensor (``MulBackward0`` ...), or None for a leaf.",
    "output_nr": "Which output of its ``grad_fn`` this tensor is (0 for single-output ops).",
    "grad": "The gradient accumulated by ``backward()`` for this leaf (None until then); assign None to clear it. "
            "A non-leaf has one only after ``retain_grad()`` (reading it otherwise warns, as in PyTorch).\n\n"
            ">>> import lucid\n>>> w = lucid.tensor([1.0, 2.0], requires_grad=True)\n>>> (w * w).sum().backward()\n"
            ">>> w.grad\nTensor([2., 4.])",
    "retains_grad": "Whether ``retain_grad()`` was called on this non-leaf.",
    "T": "The tensor with its dimensions reversed (deprecated in PyTorch beyond 2-D; ``mT`` for matrices).",
    "mT": "The batch of matrices with their last two dimensions swapped.",
    "itemsize": "The size of one element in bytes.",
    "nbytes": "The tensor's size in bytes (``numel() * itemsize``).",
    "is_mps": "True when the tensor's device is a Metal GPU (an Apple Silicon Mac).",
    "is_xpu": "False (lucid has no Intel GPU device).",
}

# the arguments of Tensor methods whose meaning is their own (the common ones are in lucid/_params.py); the same
# function objects are lucid's functions, so ``help(lucid.addmm)`` shows them too
PARAMS = {
    "size": {"dim": "a dimension: its size is returned instead of the whole shape."},
    "requires_grad_": {"requires_grad": "whether to record operations on this tensor."},
    "zero_grad": {"set_to_none": "set ``.grad`` to None (default) instead of filling it with zeros."},
    "register_hook": {"hook": "``hook(grad)``, returning None or a replacement gradient; returns a handle whose "
                              "``remove()`` unregisters it."},
    "register_post_accumulate_grad_hook": {"hook": "``hook(tensor)``, called with this leaf; returns a handle whose "
                                                   "``remove()`` unregisters it."},
    "to": {"args": "a dtype, a device, a device and a dtype, or another tensor (its dtype).",
           "dtype": "the dtype to cast to.", "device": "the device (lucid's one device accepts its names).",
           "copy": "return a copy even when nothing changes.",
           "non_blocking": "accepted for PyTorch's signature."},
    **{n: {"beta": "the multiplier of ``input`` (the added term)."} for n in ("addbmm", "addbmm_", "addmm", "addmm_", "addr", "addr_", "baddbmm", "baddbmm_")},
    **{n: {"mat": "the matrix, (n, m).", "beta": "the multiplier of ``input`` (the added term)."} for n in ("addmv", "addmv_")},
    **{n: {"value": "the multiplier of the product (or quotient) of ``tensor1`` and ``tensor2``."}
       for n in ("addcdiv", "addcdiv_", "addcmul", "addcmul_")},
    **{n: {"p": "the probability of a one (default: the input's values)."} for n in ("bernoulli", "bernoulli_")},
    "cauchy_": {"median": "the location of the Cauchy distribution.", "sigma": "its scale."},
    "cholesky_inverse": {"L": "unused by the method form: ``self`` is the Cholesky factor."},
    "cholesky_solve": {"B": "the right-hand sides.", "L": "the Cholesky factor of the matrix."},
    "cov": {"fweights": "integer frequency weights, one per observation.",
            "aweights": "observation weights, one per observation."},
    "diff": {"n": "how many times to difference."},
    "dist": {"p": "the norm's order."},
    "dot": {"tensor": "the other vector."},
    "fill_": {"value": "the value every element becomes."},
    "fill_diagonal_": {"wrap": "for a tall matrix, restart the diagonal after every N + 1 rows."},
    "geometric_": {"p": "the probability of success of each trial."},
    "histogram": {"range": "(min, max) of the bins (default: the data's).", "weight": "a weight per element.",
                  "density": "normalize to a probability density."},
    **{n: {"source": "the values added at the indices."} for n in ("index_add", "index_add_")},
    **{n: {"source": "the values copied to the indices."} for n in ("index_copy", "index_copy_")},
    **{n: {"source": "the values reduced into the indices."} for n in ("index_reduce", "index_reduce_")},
    **{n: {"value": "the value written at the indices."} for n in ("index_fill", "index_fill_")},
    **{n: {"value": "the value written where ``mask`` is True."} for n in ("masked_fill", "masked_fill_")},
    **{n: {"source": "the values written, in order, where ``mask`` is True."}
       for n in ("masked_scatter", "masked_scatter_")},
    **{n: {"source": "the values written at the flat indices."} for n in ("put", "put_")},
    **{n: {"value": "a scalar written at the indices (instead of ``src``)."} for n in ("scatter", "scatter_")},
    **{n: {"source": "the dimension(s) to move.", "destination": "where they go."} for n in ("moveaxis", "movedim")},
    "kthvalue": {"k": "which smallest value (1 is the smallest)."},
    "topk": {"k": "how many values."},
    "rot90": {"k": "how many quarter turns (counter-clockwise from the first of ``dims`` to the second)."},
    **{n: {"weight": "the interpolation weight (a number or a tensor)."} for n in ("lerp", "lerp_")},
    "lu": {"pivot": "partial pivoting (only True: MLX's LU pivots).",
           "get_infos": "also return the factorization's info (0: success)."},
    "lu_solve": {"b": "unused by the method form: ``self`` is the right-hand side.",
                 "LU_data": "the LU factors, from ``lu``.", "LU_pivots": "the pivots, from ``lu``."},
    "matrix_power": {"n": "the power (negative: of the inverse)."},
    **{n: {"p": "the dimension of the multivariate gamma."} for n in ("mvlgamma", "mvlgamma_")},
    "norm": {"p": "the norm's order ('fro', 'nuc', a number, inf)."},
    "orgqr": {"tau": "the Householder coefficients, from ``geqrf``."},
    "ormqr": {"tau": "the Householder coefficients, from ``geqrf``.", "left": "multiply from the left.",
              "transpose": "multiply by Q's transpose."},
    **{n: {"n": "the order of the derivative of the digamma function."} for n in ("polygamma", "polygamma_")},
    **{n: {"p": "the norm's order.", "maxnorm": "the largest norm a sub-tensor may keep."}
       for n in ("renorm", "renorm_")},
    "split": {"tensor": "unused by the method form: ``self`` is split."},
    "to_dense": {"masked_grad": "accepted for PyTorch's signature."},
    "to_sparse": {"sparse_dim": "how many leading dimensions are sparse.", "blocksize": "not supported (None).",
                  "dense_dim": "how many trailing dimensions stay dense."},
    "triangular_solve": {"b": "unused by the method form.", "transpose": "solve with the matrix's transpose."},
    "unfold": {"dimension": "the dimension to slide along."},
}
