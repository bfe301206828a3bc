"""``draw_graph``: the autograd graph behind a tensor as a ``graphviz.Digraph`` (what torchviz's ``make_dot`` draws
for PyTorch, with its colours).

One grey box per backward node, named as ``grad_fn`` names it (``MulBackward0``, ``AddmmBackward0``), with arrows
in the forward direction, as torchviz draws them: from the nodes of an op's inputs to the op's node, inputs at the
top, the result at the bottom. Leaves that require grad are blue boxes with their parameter name (from
``params``) and shape; the result is green; with ``show_saved=True`` the tensors a node keeps for its backward are
orange boxes tied to it by a plain line, and with ``show_attrs=True`` a node's box lists its other saved values,
both named as PyTorch's ``grad_fn._saved_*`` fields (``_fields.py``). torchviz draws a leaf and its
``AccumulateGrad`` node as two boxes; here the blue box stands for both.
"""
from __future__ import annotations

import functools

from .._tensor import Tensor
from ..autograd.function import FunctionCtx
from ..autograd.graph import AccumulateGrad
from ._fields import attrs_label, saved

_INSTALL_DOT = (
    "Rendering needs Graphviz's `dot` program, which is not installed (the graph's DOT text is in `.source`). "
    "Install it with `apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS) or "
    "`conda install graphviz`.")
_NODE_ATTR = dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1", height="0.2",
                  fontname="monospace")


def _graphviz():
    try:
        import graphviz
    except ImportError as e:
        raise ImportError("lucid.viz.draw_graph needs the graphviz Python package: pip install graphviz (or "
                          "pip install 'lucid-mlx[viz]'); to render, also Graphviz's `dot` program "
                          "(apt-get install graphviz, brew install graphviz)") from e
    return graphviz


@functools.lru_cache(maxsize=None)
def _digraph_class():
    """``graphviz.Digraph`` whose rendering (``render``, ``pipe``, ``view``, the notebook display) says how to install
    ``dot`` when it is missing."""
    graphviz = _graphviz()

    class Digraph(graphviz.Digraph):
        def _explained(self, method, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except graphviz.ExecutableNotFound as e:
                if _INSTALL_DOT in str(e):  # already explained (the notebook display renders through pipe)
                    raise
                err = graphviz.ExecutableNotFound(("dot",))  # the same type, so callers catching it still do
                err.args = (f"{e}. {_INSTALL_DOT}",)
                raise err from e

        def render(self, *args, **kwargs):
            return self._explained(graphviz.Digraph.render, *args, **kwargs)

        def pipe(self, *args, **kwargs):
            return self._explained(graphviz.Digraph.pipe, *args, **kwargs)

        def view(self, *args, **kwargs):
            return self._explained(graphviz.Digraph.view, *args, **kwargs)

        def _repr_mimebundle_(self, *args, **kwargs):
            return self._explained(graphviz.Digraph._repr_mimebundle_, *args, **kwargs)

    Digraph.__module__ = __name__
    return Digraph


def _shape(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


def draw_graph(tensor, params: dict | None = None, show_attrs: bool = False, show_saved: bool = False,
               max_attr_chars: int = 50):
    """The autograd graph that produced ``tensor``, as torchviz's ``make_dot`` draws PyTorch's: a
    ``graphviz.Digraph``, which Jupyter renders inline; ``.render("graph", format="png")`` writes a file and ``.source``
    is the DOT text (available without Graphviz's ``dot`` program, which rendering needs). Needs the ``graphviz``
    Python package (``pip install graphviz``).

    :param tensor: the result, or a tuple/list of results (each drawn green).
    :param params: ``{name: tensor}`` (e.g. ``dict(model.named_parameters())``): the names of the leaves, drawn blue
        with their shapes. Nodes are named as ``grad_fn`` names them (``AddmmBackward0``).
    :param show_attrs: list in each node's box what it saved for backward under PyTorch's ``_saved_*`` field names
        (``dim``, ``keepdim``, ``alpha``, ``self_sym_sizes``..., saved tensors as ``[saved tensor]``).
    :param show_saved: draw the tensors each node saved for backward (orange), named by PyTorch's field (``mat1``,
        ``mat2``, ``self``, ``other``, ``result``...).
    :param max_attr_chars: with ``show_attrs``, the most characters of a value shown (longer ones end in ``...``).

    >>> x = lucid.tensor([1.0, 2.0], requires_grad=True)
    >>> dot = lucid.viz.draw_graph((x * x.exp()).sum(), show_attrs=True)
    >>> print(dot.source)
    digraph {
    ...MulBackward0
    ---------------------
    other: [saved tensor]
    self : [saved tensor]"]
    ...
    """
    roots = tuple(tensor) if isinstance(tensor, (tuple, list)) else (tensor,)
    for t in roots:
        if not isinstance(t, Tensor):
            raise TypeError(f"draw_graph() expects a Tensor or a tuple of Tensors, not {type(t).__name__}")
    names = {}
    for name, p in (params or {}).items():
        if not isinstance(p, Tensor):
            raise TypeError(f"draw_graph(): params[{name!r}] is a {type(p).__name__}, not a Tensor")
        names[id(p)] = name
    dot = _digraph_class()(node_attr=_NODE_ATTR, graph_attr=dict(size="12,12"))

    def leaf_label(t) -> str:
        name = names.get(id(t), "")
        return f"{name}\n{_shape(t.shape)}" if name else _shape(t.shape)

    seen = set()
    todo = []  # nodes still to draw: an explicit stack, as graphs can be far deeper than Python's recursion limit
    for t in roots:
        if id(t) in seen:
            continue
        seen.add(id(t))
        fn = t.grad_fn
        if fn is None:  # a leaf: blue if it requires grad (its own AccumulateGrad), else a lone green box
            dot.node(str(id(t)), leaf_label(t), fillcolor="lightblue" if t.requires_grad else "darkolivegreen1")
            continue
        dot.node(str(id(t)), _shape(t.shape), fillcolor="darkolivegreen1")
        dot.edge(str(id(fn)), str(id(t)))
        todo.append(fn)
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            dot.node(str(id(node)), leaf_label(node.variable), fillcolor="lightblue")
            continue
        tensors, attrs = saved(node) if show_attrs or show_saved else ((), {})
        if show_attrs:  # (a custom Function's node has no _saved_* fields in PyTorch: its box is its name)
            fields = () if isinstance(node, FunctionCtx) else tensors
            dot.node(str(id(node)), attrs_label(node.name(), fields, attrs, max_attr_chars))
        else:
            dot.node(str(id(node)), node.name())
        if show_saved:
            for i, (label, shape) in enumerate(tensors):
                key = f"{id(node)}.saved{i}"
                dot.node(key, f"{label}\n{_shape(shape)}", fillcolor="orange")
                dot.edge(str(id(node)), key, dir="none")
        for edge in node.next:
            if edge is not None:
                dot.edge(str(id(edge[0])), str(id(node)))
                todo.append(edge[0])
    # as torchviz: a bigger drawing for a bigger graph, so that a large one is not shrunk to illegibility
    size = max(12.0, len(dot.body) * 0.15)
    dot.graph_attr.update(size=f"{size:g},{size:g}")
    return dot
