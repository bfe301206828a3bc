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

_HEADERS = {"kernel_size": "Kernel Shape", "input_size": "Input Shape", "output_size": "Output Shape",
            "num_params": "Param #", "params_percent": "Param %", "mult_adds": "Mult-Adds", "trainable": "Trainable"}
_ROW_SETTINGS = ("depth", "var_names", "ascii_only", "hide_recursive_layers")


def _prod(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


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
        self.var_name = name.rsplit(".", 1)[-1] if name else self.class_name
        self.depth_index = 0  # its number among the rows at its depth, in call order (torchinfo's "1-2")
        k = getattr(module, "kernel_size", None)
        self.kernel_size = list(k) if isinstance(k, (tuple, list)) else k
        self.input_size = self.output_size = "--"
        self.output_shape: list = []  # the first output tensor's shape
        self.output_bytes = 0
        self.macs = 0

    def calculate_macs(self) -> None:
        """torchinfo's multiply-accumulate count, from the parameters and the output shape (batch included)."""
        out = self.output_shape
        if not out:
            return
        for name, p in self.module.named_parameters():
            if name in ("weight", "bias"):  # a convolution's count leaves out the channels
                self.macs += p.numel() * _prod(out[:1] + out[2:]) if "Conv" in self.class_name else out[0] * p.numel()
            elif "weight" in name or "bias" in name:  # RNNs' weight_ih_l0 ...
                self.macs += _prod(out[:2]) * p.numel()

    def inner_rows(self, start: str) -> list:
        """verbose=2: a row per parameter (its kernel shape, its count)."""
        rows = []
        for name, p in self.module.named_parameters():
            if self.depth == 0 and "." in name:  # the model's own row lists only its own parameters
                continue
            shape = list(p.shape)
            if name == "weight" and len(shape) > 1:
                shape[0], shape[1] = shape[1], shape[0]  # torchinfo shows [in, out, k, k]
            rows.append((f"{start}{name}", {"kernel_size": str(shape), "num_params": f"├─{p.numel():,}"}))
        if rows:
            rows[-1][1]["num_params"] = "└─" + rows[-1][1]["num_params"][2:]
        return rows

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
    """What ``summary`` returns: ``str()`` (and ``print``) gives the table; in Jupyter it shows as an HTML table.
    Attributes: ``summary_list`` (the rows, ``LayerInfo``), ``total_params``, ``trainable_params``,
    ``total_mult_adds``, ``total_input`` / ``total_output_bytes`` / ``total_param_bytes`` (bytes)."""

    def __init__(self, rows: list, model: Module, input_bytes: int, depth: int, col_names: tuple,
                 col_width: int = 25, row_settings: tuple = ("depth", "var_names"), verbose: int = 1):
        self.summary_list = rows
        self.depth = depth
        self.col_names = col_names
        self.col_width = col_width
        self.row_settings = tuple(row_settings)
        self.verbose = verbose
        params = list(model.parameters())  # each parameter once, shared ones too
        self.total_params = sum(p.numel() for p in params)
        self.trainable_params = sum(p.numel() for p in params if p.requires_grad)
        self.total_param_bytes = sum(p.numel() * p.element_size() for p in params)
        self.total_input = input_bytes
        # torchinfo's estimate: each leaf layer with parameters keeps its output for backward and gets a gradient
        # of the same size
        self.total_output_bytes = 2 * sum(r.output_bytes for r in rows if r.is_leaf and r.num_params)
        self.total_mult_adds = sum(r.macs for r in rows if r.is_leaf)

    def _label(self, r) -> str:
        name = r.class_name
        if "var_names" in self.row_settings:
            name += f" ({r.var_name})"
        if "depth" in self.row_settings and r.depth > 0:
            name += f": {r.depth}-{r.depth_index}"
        return name

    def _start(self, depth: int) -> str:
        ascii_only = "ascii_only" in self.row_settings
        if depth == 0:
            return ""
        if depth == 1:
            return "+ " if ascii_only else "├─"
        return ("|    " if ascii_only else "│    ") * (depth - 1) + ("+ " if ascii_only else "└─")

    def _table(self) -> list:
        """The rows shown, as (layer cell, {column: cell}) (the parameter rows of ``verbose=2`` included)."""
        out = []
        for i, r in enumerate(self.summary_list):
            if r.depth > self.depth or ("hide_recursive_layers" in self.row_settings and r.is_recursive):
                continue
            at_limit = r.depth == self.depth
            shown = r.shown_params(at_limit)
            if r.is_recursive and r.num_params:
                count = percent = "(recursive)"
            elif shown == 0:
                count, percent = "--", "     --"  # torchinfo's percentages are right-aligned in 7 characters
            else:
                count = f"{shown:,}" if (r.trainable_params or not (r.is_leaf or at_limit)) else f"({shown:,})"
                percent = f"{shown / self.total_params:>7.2%}" if self.total_params else "     --"
            if r.is_leaf:
                macs = r.macs
            elif at_limit:  # everything below it
                below = []
                for c in self.summary_list[i + 1:]:
                    if c.depth <= r.depth:
                        break
                    below.append(c)
                macs = sum(c.macs for c in below if c.is_leaf)
            else:
                macs = 0
            values = {"kernel_size": str(r.kernel_size) if r.kernel_size else "--", "input_size": r.input_size,
                      "output_size": r.output_size, "num_params": count, "params_percent": percent,
                      "mult_adds": f"{macs:,}" if macs > 0 else "--", "trainable": r.trainable}
            out.append((self._start(r.depth) + self._label(r), values))
            if self.verbose == 2:
                out += r.inner_rows(self._start(r.depth + 1))
        return out

    def __str__(self) -> str:
        rows = self._table()
        # torchinfo's layout: the layer column 40 wide (wider, in steps of 5, for long names), then col_width each
        name_width = 40
        longest = max([r.depth * 5 + 1 + len(self._label(r)) for r in self.summary_list] + [0])
        if longest >= name_width:
            name_width = -(-longest // 5) * 5

        def line(name, values):
            return (f"{name:<{name_width}} " + "".join(f"{values.get(c, ''):<{self.col_width}} "
                                                       for c in self.col_names)).rstrip()

        header = "Layer (type" + (" (var_name)" if "var_names" in self.row_settings else "") + \
            (":depth-idx" if "depth" in self.row_settings else "") + ")"
        rule = "=" * (name_width + len(self.col_names) * self.col_width)
        mb = 1e6
        total = self.total_input + self.total_output_bytes + self.total_param_bytes
        macs = self.total_mult_adds
        unit, scaled = ("T", macs / 1e12) if macs >= 1e12 else ("G", macs / 1e9) if macs >= 1e9 else ("M", macs / 1e6)
        return "\n".join([
            rule, line(header, _HEADERS), rule, *(line(n, v) for n, v in rows), rule,
            f"Total params: {self.total_params:,}",
            f"Trainable params: {self.trainable_params:,}",
            f"Non-trainable params: {self.total_params - self.trainable_params:,}",
            f"Total mult-adds ({unit}): {scaled:,.2f}",
            rule,
            f"Input size (MB): {self.total_input / mb:0.2f}",
            f"Forward/backward pass size (MB): {self.total_output_bytes / mb:0.2f}",
            f"Params size (MB): {self.total_param_bytes / mb:0.2f}",
            f"Estimated Total Size (MB): {total / mb:0.2f}",
            rule])

    __repr__ = __str__

    def _repr_html_(self) -> str:
        """An HTML table (its columns stay aligned in any font, in Jupyter and in nbconvert's HTML), then the
        totals."""
        cell = 'style="text-align:left; font-family:monospace; white-space:pre; padding:0 1em 0 0"'
        head = "".join(f"<th {cell}>{html.escape(_HEADERS[c])}</th>" for c in self.col_names)
        body = "".join(f"<tr><td {cell}>{html.escape(n)}</td>" +
                       "".join(f"<td {cell}>{html.escape(v.get(c, ''))}</td>" for c in self.col_names) + "</tr>"
                       for n, v in self._table())
        totals = str(self).split("\n")
        first_total = next(i for i, t in enumerate(totals) if t.startswith("Total params"))
        return (f"<table><thead><tr><th {cell}>Layer</th>{head}</tr></thead><tbody>{body}</tbody></table>"
                f"<pre>{html.escape(chr(10).join(t for t in totals[first_total:] if not t.startswith('=')))}</pre>")


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


def summary(model: Module, input_size=None, input_data=None, *, col_names=("output_size", "num_params", "trainable"),
            col_width: int = 25, depth: int = 3, dtypes=None, mode: str | None = None, row_settings=None,
            verbose: int | None = None, **kwargs) -> ModelStatistics:
    """A torchinfo-style summary of ``model``, from one forward pass with hooks on every module.

    :param model: the ``nn.Module``.
    :param input_size: a shape such as ``(1, 3, 32, 32)``, or a list of shapes (one per positional argument):
        random inputs of those shapes are made (``dtypes`` gives their dtypes, e.g. ``[lucid.int64]`` for token ids).
    :param input_data: the inputs themselves: a Tensor, a list/tuple of positional arguments, or a dict of keyword
        arguments (exactly one of ``input_size`` and ``input_data``).
    :param col_names: the columns, among "kernel_size", "input_size", "output_size", "num_params",
        "params_percent", "mult_adds", "trainable".
    :param col_width: each column's width in characters (torchinfo's 25).
    :param depth: rows down to this depth of the module tree; a row at the limit counts everything below it.
    :param mode: "eval" (the default) or "train": the mode the forward pass runs in (the model's own modes are
        restored after it).
    :param row_settings: among "depth" (``: depth-index`` after the name), "var_names" (the attribute name in
        brackets), "ascii_only" and "hide_recursive_layers"; default ``("depth", "var_names")`` (torchinfo's is
        ``("depth",)``).
    :param verbose: 0 prints nothing, 1 prints the table, 2 adds a row per parameter; default 1 outside an
        interactive session and 0 in Jupyter and the REPL, where the returned object shows itself.
    :param kwargs: passed to the model's forward with the inputs.
    :returns: a ``ModelStatistics``: ``str()`` is the table; ``total_params``, ``trainable_params``,
        ``total_mult_adds`` and the byte counts are attributes.

    >>> import lucid
    >>> stats = lucid.summary(lucid.nn.Linear(64, 10), input_size=(2, 64), verbose=0)
    >>> stats.total_params, stats.total_mult_adds
    (650, 1300)
    """
    if not isinstance(model, Module):
        raise TypeError(f"summary() expects an nn.Module, not {type(model).__name__}")
    if (input_size is None) == (input_data is None):
        raise ValueError("summary() needs exactly one of input_size and input_data")
    for c in col_names:
        if c not in _HEADERS:
            raise ValueError(f"summary(): unknown column {c!r}; choose among {', '.join(_HEADERS)}")
    row_settings = ("depth", "var_names") if row_settings is None else tuple(row_settings)
    for r in row_settings:
        if r not in _ROW_SETTINGS:
            raise ValueError(f"summary(): unknown row setting {r!r}; choose among {', '.join(_ROW_SETTINGS)}")
    if mode not in (None, "eval", "train"):
        raise ValueError(f"summary(): mode must be 'train' or 'eval', got {mode!r}")
    if input_data is None:
        args, kwargs = _example_inputs(input_size, dtypes), dict(kwargs)
    elif isinstance(input_data, dict):
        args, kwargs = [], {**input_data, **kwargs}
    elif isinstance(input_data, (tuple, list)):
        args, kwargs = list(input_data), dict(kwargs)
    else:
        args, kwargs = [input_data], dict(kwargs)

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
        tensors = _tensors(output)
        row.output_shape = list(tensors[0].shape) if tensors else []
        row.calculate_macs()

    modes = [(m, m.training) for m in model.modules()]
    handles = []
    try:
        for m in model.modules():
            handles.append(m.register_forward_pre_hook(before))
            handles.append(m.register_forward_hook(after))
        model.train(mode == "train")
        with no_grad():
            model(*args, **kwargs)
    finally:
        for h in handles:
            h.remove()
        for m, training in modes:
            m.training = training
    counts: dict = {}
    for row in rows:  # torchinfo numbers the rows at each depth in call order
        counts[row.depth] = row.depth_index = counts.get(row.depth, 0) + 1
    if verbose is None:
        verbose = 0 if hasattr(sys, "ps1") or "ipykernel" in sys.modules else 1
    stats = ModelStatistics(rows, model, _nbytes(args) + _nbytes(kwargs), depth, tuple(col_names), col_width,
                            row_settings, verbose)
    if verbose:
        print(stats)
    return stats


__all__ = ["summary", "ModelStatistics", "LayerInfo"]
