"""``summary``: a model's layers as torchinfo prints them (layer tree, output shapes, parameter counts, trainable
or not, totals, a memory estimate), found by running one forward pass with hooks on every module.

The forward pass runs in eval mode under ``no_grad`` and, MLX being lazy, computes nothing: only shapes are read.
Conventions are torchinfo's: one row per module call, in call order, down to ``depth``; a module's "Param #" is its
own parameters (``--`` if they all belong to its children), or everything below it for a leaf or a module at the
depth limit, in parentheses when none of it is trainable; a module called again shows ``(recursive)``; the
forward/backward pass size is twice the output bytes of the leaf layers that have parameters. One difference:
the totals count each parameter once, also when it is shared (tied weights), so they equal
``sum(p.numel() for p in model.parameters())``.
"""
from __future__ import annotations

import html
import sys

from .._creation import rand
from .._dtype import get_default_dtype
from .._tensor import Tensor
from .._grad_mode import no_grad
from ..nn.modules.module import Module

_HEADERS = {"input_size": "Input Shape", "output_size": "Output Shape", "num_params": "Param #",
            "params_percent": "Param %", "trainable": "Trainable"}


def _tensors(value) -> list:
    """The tensors in a module's inputs or outputs (nested tuples, lists, dicts)."""
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    return []


def _shapes(value) -> str:
    shapes = [list(t.shape) for t in _tensors(value)]
    if not shapes:
        return "--"
    return str(shapes[0]) if len(shapes) == 1 else ", ".join(str(s) for s in shapes)


def _nbytes(value) -> int:
    return sum(t.numel() * t.element_size() for t in _tensors(value))


class LayerInfo:
    """One row: a call of ``module`` at ``depth`` in the module tree."""

    def __init__(self, module: Module, name: str, depth: int, recursive: bool):
        self.module = module
        self.class_name = type(module).__name__
        self.name = name  # its attribute path in the model ("layer1.0.conv1"); "" for the model itself
        self.depth = depth
        self.is_recursive = recursive
        self.is_leaf = not any(True for _ in module.children())
        params = list(module.parameters())
        self.num_params = sum(p.numel() for p in params)
        self.trainable_params = sum(p.numel() for p in params if p.requires_grad)
        self.own_params = sum(p.numel() for p in module.parameters(recurse=False))
        self.input_size = self.output_size = "--"
        self.output_bytes = 0

    @property
    def trainable(self) -> str:
        if self.num_params == 0:
            return "--"
        if self.trainable_params == 0:
            return "False"
        return "True" if self.trainable_params == self.num_params else "Partial"

    def shown_params(self, at_depth_limit: bool) -> int:
        """The count in the "Param #" column: everything below a leaf or a row at the depth limit, else its own."""
        return self.num_params if self.is_leaf or at_depth_limit else self.own_params


class ModelStatistics:
    """What ``summary`` returns: ``str()`` (and ``print``) gives the table; in Jupyter it shows as the same table.
    Attributes: ``summary_list`` (the rows, ``LayerInfo``), ``total_params``, ``trainable_params``,
    ``total_input`` / ``total_output_bytes`` / ``total_param_bytes`` (bytes)."""

    def __init__(self, rows: list, model: Module, input_bytes: int, depth: int, col_names: tuple):
        self.summary_list = rows
        self.depth = depth
        self.col_names = col_names
        params = list(model.parameters())  # each parameter once, shared ones too
        self.total_params = sum(p.numel() for p in params)
        self.trainable_params = sum(p.numel() for p in params if p.requires_grad)
        self.total_param_bytes = sum(p.numel() * p.element_size() for p in params)
        self.total_input = input_bytes
        # torchinfo's estimate: each leaf layer with parameters keeps its output for backward and gets a gradient
        # of the same size
        self.total_output_bytes = 2 * sum(r.output_bytes for r in rows if r.is_leaf and r.num_params)

    def _table(self) -> list:
        """The rows shown, as lists of cells (the layer column first)."""
        out = []
        for r in self.summary_list:
            if r.depth > self.depth:
                continue
            at_limit = r.depth == self.depth
            shown = r.shown_params(at_limit)
            if r.is_recursive and r.num_params:
                count = percent = "(recursive)"
            elif shown == 0:
                count, percent = "--", "--"
            else:
                count = f"{shown:,}" if (r.trainable_params or not (r.is_leaf or at_limit)) else f"({shown:,})"
                percent = f"{shown / self.total_params:.2%}" if self.total_params else "--"
            values = {"input_size": r.input_size, "output_size": r.output_size, "num_params": count,
                      "params_percent": percent, "trainable": r.trainable}
            prefix = "" if r.depth == 0 else "│    " * (r.depth - 1) + ("├─" if r.depth == 1 else "└─")
            label = f"{prefix}{r.class_name}" + (f" ({r.name})" if r.name else "") + f": {r.depth}"
            out.append([label] + [values[c] for c in self.col_names])
        return out

    def __str__(self) -> str:
        header = ["Layer (type (name): depth)"] + [_HEADERS[c] for c in self.col_names]
        rows = self._table()
        widths = [max(len(row[i]) for row in rows + [header]) + 2 for i in range(len(header))]
        widths = [max(widths[0], 40)] + [max(w, 16) for w in widths[1:]]

        def line(cells):
            return "".join(f"{c:<{w}}" for c, w in zip(cells, widths)).rstrip()

        rule = "=" * sum(widths)
        mb = 1e6
        total = self.total_input + self.total_output_bytes + self.total_param_bytes
        return "\n".join([
            rule, line(header), rule, *(line(r) for r in rows), rule,
            f"Total params: {self.total_params:,}",
            f"Trainable params: {self.trainable_params:,}",
            f"Non-trainable params: {self.total_params - self.trainable_params:,}",
            rule,
            f"Input size (MB): {self.total_input / mb:0.2f}",
            f"Forward/backward pass size (MB): {self.total_output_bytes / mb:0.2f}",
            f"Params size (MB): {self.total_param_bytes / mb:0.2f}",
            f"Estimated Total Size (MB): {total / mb:0.2f}",
            rule])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(str(self))}</pre>"


def _example_inputs(input_size, dtypes) -> list:
    """Random inputs of the given shapes (a shape, or a list of shapes: one per positional argument)."""
    sizes = [input_size] if all(isinstance(s, int) for s in input_size) else list(input_size)
    for s in sizes:
        if not isinstance(s, (tuple, list)) or not all(isinstance(d, int) and d >= 0 for d in s):
            raise ValueError(f"summary(): input_size must be a shape or a list of shapes, got {input_size!r}")
    dtypes = list(dtypes) if dtypes is not None else [get_default_dtype()] * len(sizes)
    if len(dtypes) != len(sizes):
        raise ValueError(f"summary(): {len(sizes)} input sizes but {len(dtypes)} dtypes")
    return [rand(*s).to(d) for s, d in zip(sizes, dtypes)]  # integer dtypes: zeros (valid class/token ids)


def summary(model: Module, input_size=None, input_data=None, *, dtypes=None, depth: int = 3,
            col_names=("output_size", "num_params", "trainable"), verbose: int | None = None) -> ModelStatistics:
    """A torchinfo-style summary of ``model``: one forward pass on ``input_data`` (a Tensor, a list/tuple of
    positional arguments, or a dict of keyword arguments) or on random inputs of ``input_size`` (a shape such as
    ``(1, 3, 32, 32)``, or a list of shapes; ``dtypes`` gives their dtypes, e.g. ``[lucid.int64]`` for token ids)::

        print(lucid.summary(lucid.models.resnet18(num_classes=10), input_size=(1, 3, 32, 32)))

    ``depth`` limits the rows to that depth of the module tree; ``col_names`` picks the columns among
    "input_size", "output_size", "num_params", "params_percent", "trainable". As in torchinfo, the table is printed
    when ``verbose`` is 1 (the default outside an interactive session) and not when it is 0 (the default in Jupyter
    and the REPL, where the returned object shows itself)."""
    if not isinstance(model, Module):
        raise TypeError(f"summary() expects an nn.Module, not {type(model).__name__}")
    if (input_size is None) == (input_data is None):
        raise ValueError("summary() needs exactly one of input_size and input_data")
    for c in col_names:
        if c not in _HEADERS:
            raise ValueError(f"summary(): unknown column {c!r}; choose among {', '.join(_HEADERS)}")
    if input_data is None:
        args, kwargs = _example_inputs(input_size, dtypes), {}
    elif isinstance(input_data, dict):
        args, kwargs = [], dict(input_data)
    elif isinstance(input_data, (tuple, list)):
        args, kwargs = list(input_data), {}
    else:
        args, kwargs = [input_data], {}

    names = {}
    by_name = {}
    for name, m in model.named_modules():
        names.setdefault(id(m), name)
        by_name[name] = m
    rows: list = []
    open_rows: dict = {}  # id(module) -> its rows still waiting for their output (a module may call itself)
    seen: set = set()
    last_at_depth: dict = {}  # depth -> the module of the latest row there (rows deeper than it belong to it)

    def add_row(module, name: str) -> LayerInfo:
        depth = 0 if name == "" else name.count(".") + 1
        row = LayerInfo(module, name, depth, id(module) in seen)
        seen.add(id(module))
        rows.append(row)
        last_at_depth[depth] = module
        for d in [d for d in last_at_depth if d > depth]:
            del last_at_depth[d]
        return row

    def before(module, inputs):
        name = names[id(module)]
        parts = name.split(".") if name else []
        for depth in range(1, len(parts)):  # containers that are never called themselves (ModuleList, ModuleDict)
            ancestor = by_name[".".join(parts[:depth])]
            if last_at_depth.get(depth) is not ancestor:
                add_row(ancestor, ".".join(parts[:depth]))
        row = add_row(module, name)
        row.input_size = _shapes(inputs)
        open_rows.setdefault(id(module), []).append(row)

    def after(module, inputs, output):
        row = open_rows[id(module)].pop()
        row.output_size = _shapes(output)
        row.output_bytes = _nbytes(output)

    modes = [(m, m.training) for m in model.modules()]
    handles = []
    try:
        for m in model.modules():
            handles.append(m.register_forward_pre_hook(before))
            handles.append(m.register_forward_hook(after))
        model.eval()
        with no_grad():
            model(*args, **kwargs)
    finally:
        for h in handles:
            h.remove()
        for m, training in modes:
            m.training = training
    stats = ModelStatistics(rows, model, _nbytes(args) + _nbytes(kwargs), depth, tuple(col_names))
    if verbose is None:
        verbose = 0 if hasattr(sys, "ps1") or "ipykernel" in sys.modules else 1
    if verbose:
        print(stats)
    return stats


__all__ = ["summary", "ModelStatistics", "LayerInfo"]
