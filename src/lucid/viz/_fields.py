"""What a backward node saved, under the names PyTorch's ``grad_fn`` gives it (its ``_saved_*`` fields): the tensors
``draw_graph(show_saved=True)`` draws as orange boxes and the attributes ``show_attrs=True`` lists in the node's box.

A lucid node keeps its op's own arguments (``node.args``, ``node.kwargs``), which are not always PyTorch's: a
``Linear`` records one ``AddmmBackward0`` of (bias, input, weight), a reduction keeps its dims normalized, a loss keeps
its targets as an array. ``FIELDS`` says, per node, which argument is which of PyTorch's fields; what it does not
name is not shown, so nothing is shown under a name PyTorch would not use.
"""
from __future__ import annotations

import mlx.core as mx

from .._tensor import Tensor
from ..autograd.function import FunctionCtx
from ..ops._core import OpNode

def _convolution(args) -> tuple[dict, dict]:
    """PyTorch's convolution fields from lucid's ``(x, w[, bias], stride, lo, hi, dilation, input_dilation, groups,
    transposed)`` (ops/conv.py): a transposed convolution is recorded as the convolution its input gradient is, with
    the stride as input dilation, the padding as ``dilation * (k - 1) - padding`` and the kernel's channels swapped."""
    w = args[1]
    stride, lo, hi, dilation, input_dilation, groups, transposed = args[-7:]
    k = tuple(w.shape[2:])
    fields = {"dilation": dilation, "groups": groups, "transposed": transposed,
              "bias_sym_sizes_opt": (args[2].shape[0],) if len(args) == 10 and args[2] is not None else (0,)}
    if not transposed:
        fields.update(stride=stride, padding=lo, output_padding=(0,) * len(k))
        return fields, {}
    fields.update(stride=input_dilation, padding=tuple(d * (n - 1) - a for d, n, a in zip(dilation, k, lo)),
                  output_padding=tuple(b - a for a, b in zip(lo, hi)))
    return fields, {"weight": (w.shape[1] * groups, w.shape[0] // groups) + k}


def _layer_norm(args) -> tuple[dict, dict]:
    """lucid's layer_norm keeps the normalized axes; PyTorch the trailing shape they cover."""
    x, axes = args[0], args[3]
    return {"normalized_shape": tuple(x.shape[len(x.shape) - len(axes):])}, {}


# node name (or ``name module``, for the node of an op declared in that lucid module): (PyTorch's field for each
# positional argument, "-" for one PyTorch does not keep; {lucid keyword: field}; the fields PyTorch derives from an
# argument's shape — ``<field>_sym_sizes``, ``_sym_numel``, ``_sym_argsize_0``, and ``_sym_strides``, kept only for an
# argument that requires grad — or always holds the same value, ``alpha=1``; or a function of the arguments giving
# ({field: value}, {saved tensor: its shape in PyTorch})). A field ending in ``[0]`` takes the first entry of lucid's
# tuple (PyTorch keeps one dim where lucid keeps a tuple); one ending in ``^T`` holds the transpose of lucid's
# argument (PyTorch's linear multiplies by ``weight.t()``, a view: mat2 is that view, lucid keeps the weight).
# A node not listed shows its saved tensors as ``self``, ``other``..., the names of PyTorch's unary and binary ops.
_MM = "self_sym_sizes self_sym_strides mat2_sym_sizes mat2_sym_strides"
_ADDMM = "mat1_sym_sizes mat1_sym_strides mat2_sym_sizes mat2_sym_strides"
FIELDS: dict = {
    "AddBackward0": ("- -", {}, "alpha=1"),
    "SubBackward0": ("- -", {}, "alpha=1"),
    "MulBackward0": ("self other", {}, ""),
    "DivBackward0": ("self other", {}, ""),
    "MmBackward0": ("self mat2", {}, _MM),
    "MmBackward0 nn_basic": ("self mat2^T", {}, _MM),  # F.linear without a bias: (input, weight)
    "BmmBackward0": ("self mat2", {}, ""),
    "AddmmBackward0 nn_basic": ("- mat1 mat2^T", {}, "alpha=1 beta=1 " + _ADDMM),  # F.linear: (bias, input, weight)
    "AddmmBackward0": ("- mat1 mat2 beta alpha", {}, _ADDMM),
    "SumBackward0": ("- - -", {}, "self_sym_sizes"),
    "SumBackward1": ("- dim keepdim", {}, "self_sym_sizes"),
    "MeanBackward0": ("- - -", {}, "self_sym_numel self_sym_sizes"),
    "MeanBackward1": ("- dim keepdim", {}, "self_sym_numel self_sym_sizes"),
    "PowBackward0": ("self exponent", {}, ""),
    "PowBackward1": ("self exponent", {}, ""),
    "SoftmaxBackward0": ("- dim[0]", {}, ""),
    "LogSoftmaxBackward0": ("- dim[0]", {}, ""),
    "GeluBackward0": ("self approximate -", {}, ""),
    "ConvolutionBackward0": ("input weight", {}, _convolution),
    "NllLossBackward0": ("self weight", {"safe": "target", "reduction": "reduction"}, ""),
    "NllLoss2DBackward0": ("self weight", {"safe": "target", "reduction": "reduction"}, ""),
    "NativeLayerNormBackward0": ("input weight bias - -", {}, _layer_norm),
    "ViewBackward0": ("- -", {}, "self_sym_sizes"),
    "UnsqueezeBackward0": ("- -", {}, ""),
    "ExpandBackward0": ("- -", {}, "self_sym_sizes"),
    "TransposeBackward0": ("- dim0 dim1", {}, ""),
    "PermuteBackward0": ("- dims", {}, ""),
    "IndexBackward0": ("- indices", {}, "self_sym_sizes"),
    "GatherBackward0": ("self index dim", {}, ""),
    "CatBackward0": ("", {"dim": "dim"}, ""),
    "MaxBackward1": ("self - -", {}, ""),
    "MaxPool1DWithIndicesBackward0": ("self kernel_size result1", {}, ""),
    "MaxPool2DWithIndicesBackward0": ("self kernel_size result1", {}, ""),
    "MaxPool3DWithIndicesBackward0": ("self kernel_size result1", {}, ""),
    # the pools that return their indices (ops/pool_nodes.py's max_pool_values): x and the indices, PyTorch's result1
    "MaxPool1DWithIndicesBackward0 pool_nodes": ("self result1", {}, ""),
    "MaxPool2DWithIndicesBackward0 pool_nodes": ("self result1", {}, ""),
    "MaxPool3DWithIndicesBackward0 pool_nodes": ("self result1", {}, ""),
    "AdaptiveMaxPool1DBackward0": ("self result1", {}, ""),
    "AdaptiveMaxPool2DBackward0": ("self result1", {}, ""),
    "AdaptiveMaxPool3DBackward0": ("self result1", {}, ""),
    "FractionalMaxPool2DBackward0": ("self result1", {}, ""),
    "FractionalMaxPool3DBackward0": ("self result1", {}, ""),
    "EmbeddingBackward0": ("weight indices -", {}, "weight_sym_argsize_0"),
    "ClampBackward1": ("self min max", {}, ""),
    "WhereBackward0": ("condition self other", {}, ""),
    "ClampBackward0": ("self min max", {}, ""),
    "LerpBackward0": ("self end weight", {}, ""),
    "LerpBackward1": ("self end weight", {}, ""),
    "BaddbmmBackward0": ("- batch1 batch2 beta alpha", {}, ""),
    "AddmvBackward0": ("- mat vec beta alpha", {}, ""),
    "AddrBackward0": ("- vec1 vec2 beta alpha", {}, ""),
    "StdBackward0": ("self dim - keepdim", {}, ""),
    "LogsumexpBackward0": ("self dim keepdim", {}, ""),
    "StackBackward0": ("", {"dim": "dim"}, ""),
    "CumsumBackward0": ("- dim -", {}, ""),
    # (lucid's statistics arguments are the batch's in training, the running ones in evaluation: not named)
    "NativeBatchNormBackward0": ("input weight - - - training eps", {}, ""),
    "LeakyReluBackward0": ("self negative_slope", {}, ""),
    "HardtanhBackward0": ("self min_val max_val", {}, ""),
    "LinalgVectorNormBackward0": ("self - dim keepdim", {}, ""),
    "SliceBackward0": ("- -", {}, "self_sym_sizes"),
    "SelectBackward0": ("- -", {}, "self_sym_sizes"),
    "SqueezeBackward0": ("- -", {}, "self_sym_sizes"),
    "SqueezeBackward1": ("- -", {}, "self_sym_sizes"),
}
_REDUCTION = {"none": 0, "mean": 1, "sum": 2}  # PyTorch keeps the enum's value


def _fields(node):
    """(positional fields, {keyword: field}, derived fields) of ``node``; None for a node the table does not list."""
    name = node.name()
    vjp = node.vjp_all or node.vjps[0]
    module = getattr(vjp, "__module__", "").rpartition(".")[2]
    spec = FIELDS.get(f"{name} {module}") or FIELDS.get(name)
    if spec is None:
        return None
    names, kw, extra = spec
    return tuple(None if n == "-" else n for n in names.split()), kw, extra if callable(extra) else extra.split()


def _is_array(v) -> bool:
    return isinstance(v, (Tensor, mx.array))


def _shape_field(kind: str, shape: tuple, transposed: bool, requires_grad: bool) -> object:
    if kind == "sizes":
        return shape[::-1] if transposed else shape
    if kind == "argsize_0":
        return shape[0]
    if kind == "numel":
        n = 1
        for s in shape:
            n *= s
        return n
    if not requires_grad:  # PyTorch keeps an argument's strides only for its own gradient
        return ()
    strides, n = [], 1  # contiguous strides: lucid's tensors are laid out as PyTorch's contiguous ones
    for s in reversed(shape):
        strides.append(n)
        n *= s
    return tuple(strides) if transposed else tuple(reversed(strides))


def saved(node) -> tuple[list, dict]:
    """([(field, shape)] of the tensors ``node`` keeps for its backward, {field: value} of the other values it keeps),
    PyTorch's ``_saved_*`` fields without their prefix. Saved tensors are gone once a backward released them."""
    if isinstance(node, FunctionCtx):  # a custom Function's ctx.save_for_backward: named by position
        return ([] if node._released else
                [(f"saved[{i}]", t.shape) for i, t in enumerate(node._saved) if t is not None]), {}
    if not isinstance(node, OpNode):
        return [], {}
    tensors, attrs = [], {}
    live = node.out_st is not None  # a backward (without retain_graph) has released what was saved
    args = node.args
    if args is not None:
        fields = _fields(node)
        # a node the table does not list: its tensors as PyTorch's unary and binary ops name them (self, other, then
        # tensor2, tensor3... as addcmul's), its keywords under their own names (lucid's are PyTorch's), nothing else
        names, kw, extra = fields or (("self", "other") + tuple(f"tensor{i}" for i in range(2, len(args))), None, ())
        shapes = {}  # {saved tensor: its shape in PyTorch}, where lucid keeps it in another form
        if callable(extra):
            attrs, shapes = extra(args)
        kept = node.save_needs  # None: every tensor argument; else those whose gradient needs it (PyTorch's mm
        # keeps mat2 only when mat1 requires grad)
        # {field: (argument's position, argument, held transposed)}; PyTorch's self_sym_sizes is the first
        by_field = {"self": (0, args[0], False)} if args else {}  # argument's, named or not
        for i, (name, a) in enumerate(zip(names, args)):
            if name is None:
                continue
            one = name.endswith("[0]")
            transposed = name.endswith("^T")
            name = name.removesuffix("[0]").removesuffix("^T")
            by_field[name] = (i, a, transposed)
            if isinstance(a, Tensor):
                if not (node.save_args and live):
                    continue
                if kept is None or any(node.next[j] is not None for j in kept.get(i, ())):
                    tensors.append((name, shapes.get(name, a.shape[::-1] if transposed else a.shape)))
                elif kept:  # not needed, so not kept: PyTorch's field holds None (a mm's mat2 when mat1 needs no grad)
                    attrs[name] = None
            elif isinstance(a, mx.array) or isinstance(a, tuple) and a and all(_is_array(x) for x in a):
                if live and fields:  # index arrays: kept by the node, as PyTorch keeps its index tensors
                    tensors += [(name, a.shape)] if isinstance(a, mx.array) else [
                        (f"{name}[{j}]", x.shape) for j, x in enumerate(a)]
            elif fields and not hasattr(a, "shape"):  # (a released argument keeps only its shape: autograd.graph.Meta)
                attrs[name] = a[0] if one and isinstance(a, tuple) else a
        for k, v in node.kwargs.items():
            name = k if kw is None else kw.get(k)
            if name is None:
                continue
            if _is_array(v):
                if live:
                    tensors.append((name, v.shape))
            else:
                attrs[name] = _REDUCTION.get(v, v) if name == "reduction" else v
        for e in () if callable(extra) else extra:
            if "=" in e:
                name, value = e.split("=")
                attrs[name] = int(value)
                continue
            field, _, kind = e.rpartition("_sym_")
            i, a, transposed = by_field.get(field, (0, None, False))
            if hasattr(a, "shape"):
                attrs[e] = _shape_field(kind, tuple(a.shape), transposed, node.next[i] is not None)
    if node.save_ans and live:
        tensors.append(("result", node.out_st.data.shape))
    return tensors, attrs


def attrs_label(name: str, tensors: list, attrs: dict, max_attr_chars: int) -> str:
    """The node's box with ``show_attrs``: its name over a rule, then one ``field: value`` line per saved field in
    alphabetical order (tensors as ``[saved tensor]``), values cut to ``max_attr_chars`` with ``...``, as torchviz."""
    rows = {field: str(v) for field, v in attrs.items()}
    for field, _ in tensors:
        base, bracket, _ = field.partition("[")
        rows[base] = "[saved tensors]" if bracket else "[saved tensor]"
    if not rows:
        return name
    width = min(max(len(v) for v in rows.values()), max(max_attr_chars, 3))
    key_width = max(len(k) for k in rows)
    lines = [name, "-" * max(key_width + width + 2, len(name))]
    for k in sorted(rows):
        v = rows[k]
        if len(v) > width:
            v = v[:width - 3] + "..."
        lines.append(f"{k:<{key_width}}: {v:>{width}}")
    return "\n".join(lines)
