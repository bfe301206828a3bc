"""What the arguments that mean the same in every op mean, written once: ``ops._core.declare`` appends a
``:param name:`` line for each argument of an op's signature found here that its docstring does not describe
itself (so ``help(lucid.sum)``, the API reference and the Tensor methods list them). Only names with one meaning
across PyTorch's API are here; an op whose argument means something else describes it in its own docstring."""
from __future__ import annotations

import inspect
import re

PARAMS = {
    "input": "the input tensor.",
    "other": "the second operand: a tensor (broadcast against ``input``) or a number.",
    "out": "a tensor to write the result into (it takes the result's shape and dtype); the result is also returned.",
    "dim": "the dimension (or dimensions) to work along; negative counts from the end.",
    "keepdim": "keep each reduced dimension with size 1.",
    "dtype": "the result's dtype (default: from the inputs, by PyTorch's promotion).",
    "alpha": "the multiplier of the second operand.",
    "size_average": "deprecated (use ``reduction``): False means 'sum'.",
    "reduce": "deprecated (use ``reduction``): False means 'none'.",
    "reduction": "'mean' (default), 'sum' or 'none' (the per-element losses).",
    "target": "the target (the values the input is compared with).",
    "inplace": "write the result into the input, as PyTorch's in-place ops do.",
    "kernel_size": "the window's size (an int, or one per spatial dim).",
    "stride": "the window's step (an int, or one per spatial dim).",
    "padding": "the implicit padding on both sides of each spatial dim.",
    "dilation": "the spacing between window elements.",
    "output_size": "the output's spatial size (an int, or one per spatial dim).",
    "return_indices": "also return the indices of the maxima.",
    "ceil_mode": "round the output size up instead of down.",
    "count_include_pad": "count the zero padding in the averages' denominators.",
    "groups": "split the channels into this many independent groups.",
    "eps": "a small value added for numerical stability.",
    "generator": "the ``lucid.Generator`` to draw from (default: lucid's global one).",
    "training": "apply the training-mode behaviour (dropout masks, batch statistics).",
    "device": "where the result lives (default: lucid's default device).",
    "requires_grad": "whether the result requires grad.",
    "layout": "accepted for PyTorch's signature (strided only).",
    "pin_memory": "accepted for PyTorch's signature (MLX memory is unified).",
    "memory_format": "accepted for PyTorch's signature (lucid tensors have no strides).",
    "rounding_mode": "None (true division), 'trunc' or 'floor'.",
    "dim0": "one of the two dimensions.",
    "dim1": "the other dimension (with ``dim0``), or the first of the two (with ``dim2``).",
    "dim2": "the second of the two dimensions.",
    "upper": "use the upper triangle (else the lower).",
    "diagonal": "which diagonal: 0 the main one, > 0 above it, < 0 below.",
    "mask": "a boolean tensor broadcast against the input.",
    "ignore_index": "a target value that contributes nothing (nor to the mean's denominator).",
    "margin": "the margin.",
    "align_corners": "for the linear modes, align the corner pixels' centres.",
    "min": "the lower bound (None: none).",
    "max": "the upper bound (None: none).",
    "indices_or_sections": "the number of equal parts, or the indices at which to split.",
    "correction": "the difference between the sample size and the divisor (1: Bessel's correction).",
    "unbiased": "deprecated (use ``correction``): True means ``correction=1``.",
    "accumulate": "add the values at repeated indices instead of writing them.",
    "include_self": "include the input's own values in the reduction.",
    "batch1": "the first batch of matrices, (b, n, m).",
    "batch2": "the second batch of matrices, (b, m, p).",
    "mat1": "the first matrix, (n, m).",
    "mat2": "the second matrix, (m, p).",
    "vec": "the vector.",
    "vec1": "the first vector.",
    "vec2": "the second vector.",
    "tensor1": "the first tensor of the product.",
    "tensor2": "the second tensor of the product.",
    "input1": "the first input.",
    "input2": "the second input.",
    "output_padding": "added to one side of the output's spatial dims.",
    "norm_type": "the order of the norm.",
    "storage_offset": "the offset of the first element in the input's elements.",
    "descending": "sort from largest to smallest.",
    "stable": "keep the order of equal elements.",
    "largest": "the largest elements (else the smallest).",
    "sorted": "return the elements sorted.",
    "start_dim": "the first dimension.",
    "end_dim": "the last dimension.",
    "offset": "the diagonal's offset from the main diagonal.",
    "exponent": "the exponent.",
    "start": "the first value.",
    "end": "the end value.",
    "steps": "the number of values.",
    "shifts": "by how many places to shift (one per dim in ``dims``).",
    "dims": "the dimensions.",
    "decimals": "the number of decimal places.",
    "approximate": "'none' (the exact erf form) or 'tanh'.",
    "negative_slope": "the slope for x < 0.",
    "lambd": "the threshold (>= 0).",
    "threshold": "the threshold.",
    "mean": "the mean.",
    "std": "the standard deviation.",
    "index": "the indices, an int64 tensor (out-of-range indices raise IndexError).",
    "src": "the values to write.",
    "indices": "the index tensors, one per indexed dimension.",
    "values": "the values.",
    "rtol": "the relative tolerance.",
    "atol": "the absolute tolerance.",
    "equal_nan": "count NaNs in the same places as equal.",
    "fill_value": "the value to fill with.",
    "bins": "the number of bins.",
    "n_fft": "the size of each Fourier transform.",
    "hop_length": "the distance between frames (default ``n_fft // 4``).",
    "win_length": "the window's length (default ``n_fft``).",
    "window": "the window applied to each frame (default: ones).",
    "center": "pad the signal so that frame t is centred at ``t * hop_length``.",
    "normalized": "scale by ``1 / sqrt(n_fft)``.",
    "onesided": "keep only the non-negative frequencies (real signals).",
    "length": "the output signal's length.",
    "return_complex": "return a complex tensor (else real and imaginary parts in a last dimension of 2).",
    "pad_mode": "how the signal is padded when ``center``: 'reflect', 'constant', 'replicate' or 'circular'.",
    "align_to_window": "align the frames to the window's centre (PyTorch's option, with its semantics).",
    "nan": "what NaN becomes.",
    "posinf": "what +inf becomes (default: the dtype's largest value).",
    "neginf": "what -inf becomes (default: the dtype's smallest value).",
    "q": "the quantile(s), in [0, 1].",
    "interpolation": "'linear', 'lower', 'higher', 'midpoint' or 'nearest'.",
    "num_samples": "the number of draws per row.",
    "replacement": "draw with replacement.",
    "as_tuple": "return one index tensor per dimension.",
    "repeats": "how many times to repeat each element (an int or a tensor).",
    "split_size_or_sections": "the size of each chunk, or a list of sizes.",
    "return_inverse": "also return where each element went in the output.",
    "return_counts": "also return each unique element's count.",
    "sizes": "the shape the dimension is split into.",
    "condition": "a boolean tensor: where True take ``input``, else ``other``.",
    "chunks": "the number of chunks.",
    "prepend": "values put before ``input`` along ``dim`` first.",
    "append": "values put after ``input`` along ``dim`` first.",
    "minlength": "the least length of the result.",
    "weights": "a weight per element (else each counts 1).",
    "compute_uv": "also compute the singular vectors.",
    "some": "the reduced decomposition (else the complete one).",
    "unitriangular": "assume a unit diagonal.",
    "rcond": "singular values below ``rcond`` times the largest count as zero.",
    "sparse_grad": "accepted for PyTorch's signature (gradients are dense).",
    "data": "the values (anything ``lucid.tensor`` accepts).",
    "non_blocking": "accepted for PyTorch's signature (MLX memory is unified).",
    "step": "the step between selected elements.",
    "from_": "the lowest value.",
    "to": "one past the highest value.",
    "size": "the shape, a sequence of ints.",
    "A": "the (batch of) square matrices, (*, n, n).",
}

# The arguments every layer with parameters takes, described once: nn.modules appends them to each layer class's
# docstring (with_params on the class and its __init__).
LAYER_PARAMS = {
    "device": "where the parameters are made (default: lucid's default device).",
    "dtype": "the parameters' dtype (default: the default dtype, float32).",
}


def with_params(doc: str | None, fn, params: dict | None = None) -> str | None:
    """``doc`` with a ``:param`` line for each of ``fn``'s arguments in ``params`` (default ``PARAMS``) that it does
    not describe yet."""
    params = PARAMS if params is None else params
    try:
        names = [p.name for p in inspect.signature(fn).parameters.values()
                 if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in ("self", "cls")]
    except (TypeError, ValueError):
        names = list(params) if params is not PARAMS else []
    doc = doc or ""
    missing = [n for n in names if n in params and not re.search(rf":param {re.escape(n)}:", doc)]
    if not missing:
        return doc or None
    # indented as the docstring's own lines after the first (a source docstring keeps its indentation)
    rest = [line for line in doc.splitlines()[1:] if line.strip()]
    indent = min((len(line) - len(line.lstrip()) for line in rest), default=0)
    lines = "\n".join(f"{' ' * indent}:param {n}: {params[n]}" for n in missing)
    if not doc.strip():
        return lines
    doc_lines = doc.splitlines()
    own = [i for i, line in enumerate(doc_lines) if line.strip().startswith(":param")]
    if own:  # right after the docstring's own :param lines (their last one may run over several lines)
        end = own[-1] + 1
        while end < len(doc_lines) and doc_lines[end].strip() and not doc_lines[end].strip().startswith(">>>"):
            end += 1
        return "\n".join(doc_lines[:end] + [lines] + doc_lines[end:]) + ("\n" if doc.endswith("\n") else "")
    example = next((i for i, line in enumerate(doc_lines) if line.strip().startswith(">>>")), None)
    if example is not None:  # else as a paragraph of their own, before the example
        return "\n".join(doc_lines[:example] + [lines, ""] + doc_lines[example:]) + ("\n" if doc.endswith("\n") else "")
    return f"{doc.rstrip()}\n\n{lines}\n{' ' * indent}"  # or at the end


def describe_layers(classes, params: dict) -> None:
    """``with_params`` on each layer class's docstring, for the arguments of its ``__init__`` in ``params``: the
    arguments a family of layers shares are described once, beside the family."""
    for cls in classes:
        cls.__doc__ = with_params(cls.__doc__, cls.__init__, params)


def describe_all(namespace: dict) -> None:
    """``with_params`` on every public function of a namespace (a module's ``globals()``): the functions a module
    only gathers (``lucid.nn.functional``) get the same argument lines as declared ops."""
    for name, value in list(namespace.items()):
        if not name.startswith("_") and inspect.isfunction(value):
            value.__doc__ = with_params(value.__doc__, value)
