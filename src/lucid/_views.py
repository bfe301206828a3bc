"""Views as in PyTorch, on immutable MLX arrays.

A view (``x[0]``, ``x.view(-1)``, ``x.t()``, ``x.narrow(...)``, ``x.diagonal()``, the pieces of ``split``) is its
own tensor with its own array, so the model has three parts:

- **Writes go to the base.** A view remembers how it was taken (``ViewInfo``): its base tensor, ``fn(base) ->
  view`` and ``write_back(base, value) -> new base``, both written with lucid ops, so a write through a view is
  recorded (PyTorch's ``CopySlices``) and differentiable. An in-place op on a view computes the view's new value
  and writes ``write_back(base, new)`` into the base, up to the root: the first tensor of the chain that is not a
  view, whose storage holds the data.
- **Every write to a root storage re-derives the live views of it, eagerly.** The root storage keeps a list of weak
  references to the views taken of it (``LiveViews``, in creation order, so a view of a view comes after its base).
  After any write to that storage (an in-place op, an optimizer step, ``.grad`` accumulation, a write through
  ``.data`` or ``detach()``), each live view gets its value again from the root, and — when the write changed the
  root's history — a view created with grad mode on also gets its grad_fn again: ``fn(base)`` recorded on the base's
  new history (PyTorch regenerates the view's grad_fn the same way, ``AsStridedBackward0`` there, the view op's
  own node here). The eager choice keeps the hot path untouched: every op reads ``t._storage.data`` and ``t._node``
  directly, and those are always current, so a tensor that is neither a view nor a base costs nothing more than
  one ``views = None`` slot, and a view costs nothing when it is read. The price is paid only by writes to a
  storage that has live views: one lucid op per live view (MLX is lazy: nothing is computed until read).
- **One version counter per family.** A view's storage is a ``SharedStorage`` whose ``version`` is the root
  storage's counter, as in PyTorch, so saved views notice writes to their base and the other way round (a node
  holding a view's storage after the view died notices them too). ``x.data = y`` keeps ``x``'s counter the same way.

**In-place shape changes** (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``) change only the tensor they are
called on (PyTorch changes only its strides), so they rewrite paths rather than data (``shape_changed``): a view's
path gets the step ``(compute, write back through inverse)``, and the views taken of the tensor before (and views of
those) get ``t``'s new path, then ``(inverse, write back through compute)``, then their own steps as before. Every
view's path thus starts with its base's, and ``own_steps`` (the steps from a view's base to it, used to regraph it
and to write it back into its base) is the rest of its path.

``detach()`` and ``.data`` of a view are views too (``alias``): they share the root's memory and counter but no
history; a write through them reaches the root without being recorded, as in PyTorch, and they keep only the root
storage alive (not the base tensor and its graph).
"""
from __future__ import annotations

import re
import weakref

from . import _grad_mode as gm, _meta


class Storage:
    """The array of a tensor (shared by ``detach()``, ``.data`` and ``Parameter(t)``), its version counter, and
    the live views taken of it (None until there is one). ``address``: unset until ``data_ptr()`` asks for one
    (lucid.ops.storage)."""

    __slots__ = ("data", "version", "views", "address")


class SharedStorage(Storage):
    """A storage whose version counter is another's (``counter``, a plain Storage): a view's (its root's) and a
    tensor's after ``x.data = y``. Only views pay for the property."""

    __slots__ = ("counter",)

    @property
    def version(self) -> int:
        return self.counter.version

    @version.setter
    def version(self, v: int) -> None:
        self.counter.version = v


def counter_of(st: Storage) -> Storage:
    return st.counter if type(st) is SharedStorage else st


class ViewInfo:
    """How a view was taken. ``steps``: the ``(fn, write_back)`` pairs from the root storage down to this view
    (one per view op of a view of a view), so that its value can be derived from the root's data alone."""

    __slots__ = ("base", "root", "steps", "grad", "alias", "error")

    def __init__(self, base, root: Storage, steps: tuple, grad: bool, alias: bool, error):
        self.base = base  # the tensor it was taken of (None for an alias: it keeps only the root storage alive)
        self.root = root  # the storage that holds the data
        self.steps = steps
        self.grad = grad  # taken with grad mode on: its grad_fn follows writes to the base
        self.alias = alias  # detach() / .data of a view: no history, writes are not recorded
        self.error = error  # why an in-place write through it is refused (the outputs of split/unbind/chunk)


class LiveViews:
    """Weak references to the views of one storage, in creation order. Dead entries are dropped when the views are
    re-derived and when the list has doubled since it was last pruned (so a base whose views come and go, such as a
    weight and its ``w.t()`` taken every step, keeps a bounded list)."""

    __slots__ = ("refs", "limit")

    def __init__(self):
        self.refs: list = []
        self.limit = 16

    def add(self, view) -> None:
        refs = self.refs
        refs.append(weakref.ref(view))
        if len(refs) > self.limit:
            self.prune()

    def prune(self) -> list:
        """The live views; dead references dropped."""
        live = []
        refs = []
        for r in self.refs:
            v = r()
            if v is not None:
                live.append(v)
                refs.append(r)
        self.refs = refs
        self.limit = max(16, 2 * len(refs))
        return live


def info_of(t):
    ex = t._extra
    return None if ex is None else ex.view_of


def make_view(view, base, fn, write_back, error=None, alias: bool = False):
    """Make ``view`` (the result of ``fn(base)``) a view of ``base``; with ``alias``, ``view`` is ``base.detach()``
    of a view ``base`` and takes the same place in the same root (``fn``, ``write_back`` unused)."""
    b = info_of(base)
    if alias:
        root, steps = b.root, b.steps
    elif b is None:
        root, steps = base._storage, ((fn, write_back),)
    else:
        root, steps = b.root, b.steps + ((fn, write_back),)
    st = object.__new__(SharedStorage)
    st.data = view._storage.data
    st.views = None
    st.counter = counter_of(root)
    view._storage = st
    view._ex().view_of = ViewInfo(None if alias else base, root, steps, gm.state.grad and not alias, alias, error)
    views = root.views
    if views is None:
        views = root.views = LiveViews()
    views.add(view)
    return view


def derive(root_data, steps, wrap):
    """The value of a view from its root's data (lucid ops on a tensor without history: nothing is recorded)."""
    t = wrap(root_data)
    for fn, _ in steps:
        t = fn(t)
    return t


def write_into(b, steps, new):
    """``b`` with ``new`` written into the view that ``steps`` take of it (lucid ops: recorded with grad on)."""
    values = [b]
    for fn, _ in steps[:-1]:
        values.append(fn(values[-1]))
    v = new
    for (_, write_back), p in zip(reversed(steps), reversed(values)):
        v = write_back(p, v)
    return v


def write_through(root_data, steps, new, wrap):
    """The root's new data after writing ``new`` into the view that ``steps`` take (unrecorded)."""
    return write_into(wrap(root_data), steps, new)._storage.data


def write_alias(t, info, new, bump: bool, wrap) -> None:
    """A write of ``new`` through the alias ``t`` (``detach()``/``.data`` of a view, a tensor after ``set_``): the
    root's memory changes without history, the root's version goes up (and ``t``'s own, when ``set_`` left it one),
    and ``t`` takes the write's history when ``new`` has one, as PyTorch records the write on the tensor written."""
    root = info.root
    with gm.no_grad():
        arr = write_through(root.data, info.steps, new, wrap)
        root.data = _meta.written(root.data, arr) if _meta.used[0] else arr  # a meta root stays meta
    if bump:
        root.version += 1
        own = counter_of(t._storage)
        if own is not counter_of(root):
            own.version += 1
    if root.views is not None:
        refresh(root, False, wrap)
    if new._node is not None:
        rebind_grad_fn(t, new._node, new._output_nr, True)
        new._node.rebind_output(t._storage)


def make_alias(t, root: Storage, steps: tuple, data) -> None:
    """``t`` (``set_``) reads and writes the place ``steps`` take in the root storage ``root`` (its value now:
    ``data``), as an alias without history that keeps its own version counter, as a PyTorch tensor does."""
    st = object.__new__(SharedStorage)
    st.data = data
    st.views = None
    st.counter = counter_of(t._storage)
    t._storage = st
    t._ex().view_of = ViewInfo(None, root, steps, False, True, None)
    if root.views is None:
        root.views = LiveViews()
    root.views.add(t)


def new_memory(t, old: Storage, wrap) -> None:
    """``t`` is about to leave its storage ``old`` for other memory (``x.data = y``, ``set_``): an alias stops
    following its root, and the views taken of ``t`` so far keep the old memory (they write into it from now on)."""
    info = info_of(t)
    if info is not None and info.alias:
        leave(t, wrap)
    if old.views is not None:
        stand_in = wrap(old.data)
        stand_in._storage = old
        for v in old.views.prune():
            vi = v._extra.view_of
            if vi.base is t:
                vi.base = stand_in


# Tensor._extra.inference_view of a view taken in inference mode whose base (or another view of it) was then
# written with grad recording: its history is ambiguous, and PyTorch refuses to give its grad_fn
REBASED_INFERENCE_VIEW = 2


def refresh(st: Storage, regraph: bool, wrap) -> None:
    """``st`` was just written: give each live view of it its new value, and with ``regraph`` (the write changed
    the history of the tensor written) its new grad_fn."""
    for v in st.views.prune():
        info = v._extra.view_of
        base = info.base
        if regraph and v._extra.inference_view and base._requires_grad:
            v._extra.inference_view = REBASED_INFERENCE_VIEW  # PyTorch refuses its grad_fn from now on
        if regraph and info.grad and (base._requires_grad or v._node is not None):
            r = from_base(info, base)  # recorded: the view's history now goes through the base's new one
            rebind_grad_fn(v, r._node, r._output_nr, r._requires_grad)
        else:
            r = derive(st.data, info.steps, wrap)
        v._storage.data = r._storage.data


def own_steps(info) -> tuple:
    """The steps from a view's base to the view: one per view op, one more per in-place shape change since (a
    view's path starts with its base's: ``shape_changed`` keeps it so)."""
    b = info_of(info.base)
    return info.steps if b is None else info.steps[len(b.steps):]


def from_base(info, b):
    """The view's value taken of ``b``, its base's value (recorded with grad on)."""
    for fn, _ in own_steps(info):
        b = fn(b)
    return b


def into_base(info, b, new):
    """``b``, its base's value, with ``new`` written into the view (recorded with grad on)."""
    return write_into(b, own_steps(info), new)


def fresh_value(view):
    """A grad view's current value taken afresh from its autograd root (recorded): an in-place op on the view
    starts from it, so the gradient of the old value flows straight to the base's history (as PyTorch's
    CopySlices does) and not through the view's old grad_fn, whose hooks then do not fire."""
    info = view._extra.view_of
    base = info.base
    b = info_of(base)
    if b is not None and b.grad:
        return from_base(info, fresh_value(base))
    # the nodes recorded here keep an alias of the root, not the root itself: the write being recorded gives the
    # root a grad_fn that leads to these nodes, and through the root itself they would close a reference cycle
    # (freed only by the cyclic GC, with the graph and its saved values)
    return from_base(info, _history_alias(base) if b is None else base)


def _history_alias(t):
    """A tensor that shares ``t``'s storage (value, version counter) and its place in the graph now, but not its
    later place, nor its hooks or view bookkeeping."""
    a = object.__new__(type(t))
    a._storage, a._node, a._requires_grad, a._output_nr = t._storage, t._node, t._requires_grad, t._output_nr
    a._grad = a._accum = a._extra = None
    return a


def own_output(st: Storage) -> Storage:
    """A storage for a node that made the value now in ``st`` and is no longer the grad_fn of its tensor: it
    keeps that value and its shape (a later ``t_()`` of the tensor changes neither) and shares ``st``'s version
    counter, so a node that saved its output still notices later writes."""
    own = object.__new__(SharedStorage)
    own.data = st.data
    own.views = None
    own.counter = counter_of(st)
    return own


def rebind_grad_fn(t, fn, nr: int, rg: bool) -> None:
    """Give ``t`` a new place in the graph; ``retain_grad()`` moves with it, as in PyTorch."""
    old_fn, old_nr = t._node, t._output_nr
    if old_fn is not None and getattr(old_fn, "out_st", None) is t._storage:
        old_fn.out_st = own_output(t._storage)  # its out_v stays: it still notices the writes since
    t._node, t._output_nr, t._requires_grad = fn, nr, rg
    ex = t._extra
    if ex is None or not ex.retains_grad:
        return
    if old_fn is not None and old_fn._hooks is not None:
        ref = old_fn._hooks.retain.get(old_nr)
        if ref is not None and ref() is t:
            del old_fn._hooks.retain[old_nr]
    if fn is not None:
        fn.hooks().retain[nr] = weakref.ref(t)


_UNSAVE_BUDGET = 32  # nodes looked at per in-place write: y.op_(f(y)) has f's few nodes right below the write's


def unsave(t, fn, stop, snapshot) -> None:
    """Break the cycle of ``y.op_(f(y))``: a node of ``f`` saved the Tensor ``y``, and ``y`` now has the write's
    node ``fn`` above that node as its grad_fn, so only the cyclic GC could free them. The nodes below ``fn`` (up to
    ``stop``, ``y``'s grad_fn before the write, and at most a budget of them) get ``snapshot()`` in place of ``y``: a
    Tensor on ``y``'s storage (same value and version counter, so an in-place error is still raised where one is
    due) in ``y``'s place in the graph before the write, as PyTorch's SavedVariable unpacks it."""
    snap = None
    seen = {stop}
    todo = [fn]
    while todo and len(seen) <= _UNSAVE_BUDGET:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        for attr in ("args", "_saved"):  # OpNode's saved arguments, a custom Function's save_for_backward
            held = getattr(n, attr, None)
            if type(held) is tuple and any(a is t for a in held):
                if snap is None:
                    snap = snapshot()
                setattr(n, attr, tuple(snap if a is t else a for a in held))
        todo.extend(e[0] for e in n.next if e is not None)


def root_tensor(t):
    """PyTorch's ``_base``: the tensor a view was (ultimately) taken of; None for a tensor that is no view."""
    info = info_of(t)
    if info is None or info.alias:
        return None
    while True:
        b = info_of(info.base)
        if b is None or b.alias:
            return info.base
        info = b


def shape_changed(t, compute, inverse, recorded: bool) -> None:
    """``t`` (a root, a view or an alias) has just taken the shape of ``compute(old)`` in place, its values
    unchanged; ``inverse`` undoes ``compute``. A view's path from its root gets the step ``(compute, write back
    through inverse)``. The views taken of ``t`` before (and views of those) keep their shape and place, as in
    PyTorch, where only ``t``'s strides change: their paths go through ``t``'s new path, then back through
    ``inverse``, then on as before, so that each view's path still starts with its base's. ``recorded``: the change
    was recorded in ``t``'s history (then a view taken of it in inference mode has an ambiguous one)."""
    info = info_of(t)
    if info is None:  # t's storage is a root: every view of it derives from the reshaped data
        root, path, depth, family = t._storage, (), 0, None
    else:
        root, depth = info.root, len(info.steps)
        info.steps = path = info.steps + ((compute, lambda b, v: inverse(v)),)
        family = {id(t)}  # t and the views taken of it, directly or not
    if root.views is None:
        return
    back = ((inverse, lambda b, v: compute(v)),)
    for v in root.views.prune():  # creation order: a view's base comes before it
        vi = v._extra.view_of
        if family is not None:
            if vi.base is None or id(vi.base) not in family:
                continue
            family.add(id(v))
        vi.steps = path + back + vi.steps[depth:]
        if recorded and v._extra.inference_view:
            v._extra.inference_view = REBASED_INFERENCE_VIEW


def leave(t, wrap) -> None:
    """``t`` stops being a view (``out=`` gave it new memory): it leaves its root's live views, and the views taken
    of it so far stay where they are, as views of an alias of its old place (no history, as after ``x.data = y``)."""
    info = info_of(t)
    if info is None:
        return
    views = info.root.views
    stand_in = None
    for v in views.prune():
        vi = v._extra.view_of
        if vi.base is t:
            if stand_in is None:
                stand_in = make_view(wrap(t._storage.data), t, None, None, alias=True)
            vi.base = stand_in
    t._extra.view_of = None
    views.refs = [r for r in views.refs if r() is not t]


# ---------------------------------------------------------------------------------------------------- view modes
# PyTorch's error for a write into a tensor several of whose elements are one memory location (an expanded one)
OVERLAP_MESSAGE = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
                   "location. Please clone() the tensor before performing the operation.")

_INFERENCE_VIEW_MESSAGE = (
    "A view was created in inference mode and is being modified inplace in normal mode. Given that this use case is "
    "ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace "
    "either both inside the inference_mode block (if you don't want the inplace to be tracked) or both outside (if "
    "you want the inplace to be tracked).")


def _custom_view_error(fn_view) -> None:
    """An in-place write that would be recorded, into a view that a custom Function returned: the write would
    replace that Function's backward by the view's, so PyTorch forbids it."""
    if isinstance(fn_view, str):
        raise RuntimeError(fn_view)
    if fn_view is True:
        first = "A view was created in no_grad mode and is being modified inplace with grad mode enabled."
    else:
        first = f"Output {fn_view[1]} of {fn_view[0]} is a view and is being modified inplace."
    raise RuntimeError(first + " This view was created inside a custom Function (or because an input was returned "
                       "as-is) and the autograd logic to handle view+inplace would override the custom backward "
                       "associated with the custom Function, leading to incorrect gradients. This behavior is "
                       "forbidden. You can fix this by cloning the output of the custom Function.")


_NO_GRAD_VIEW_ADVICE = (
    " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both "
    "the view and the inplace either both inside the {} block (if you don't want the inplace to be tracked) or both "
    "outside (if you want the inplace to be tracked).")


def _check_view_mode(t) -> None:
    """PyTorch's creation-mode rule for a write with grad mode on: a view taken in no_grad or inference mode, or a
    view of such a view, may not be written in place when the write would require grad (the tensor or a base it was
    taken of requires grad), since whether that write belongs in the graph is ambiguous."""
    rg = t._requires_grad
    fn_view = t._extra.fn_view
    if fn_view is not None:  # a custom Function's output or an off-graph unbind piece: their own messages
        if type(fn_view) is not tuple and (rg or t._extra.view_of.base._requires_grad):
            _custom_view_error(fn_view)
        return  # (a recorded Function's view is refused once the write is known to be recorded)
    cur = t
    while True:
        ex = cur._extra
        view = ex.view_of if ex is not None else None
        if view is None or view.alias:
            return
        base = view.base
        rg = rg or base._requires_grad
        if not view.grad:  # taken with grad mode off
            break
        cur = base
    if not rg:
        return
    inference = ex.inference_view
    mode, block = ("inference mode", "inference_mode") if inference else ("no_grad mode", "no_grad")
    action = "in normal mode" if inference else "with grad mode enabled"
    if cur is t or t._node is None:
        if inference:
            raise RuntimeError(_INFERENCE_VIEW_MESSAGE)
        first = f"A view was created in {mode} and is being modified inplace {action}."
    else:
        name = re.sub(r"Backward\d*$", "", t._node.name())
        first = (f"Output {t._output_nr} of {name} is a view of a view which was created in {mode} and is being modified "
                 f"inplace {action}.")
    raise RuntimeError(first + _NO_GRAD_VIEW_ADVICE.format(block))
