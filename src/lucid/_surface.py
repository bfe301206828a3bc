"""The Tensor's method surface, attached in one place.

``_tensor.py`` defines only what a Tensor needs to exist; every other method and property (``x.sin()``, ``x.sum``,
``x + y``, ``x.backward()``, ``x.T``) is attached here, by ``attach``, which the declarations call: an op declared
with ``defop(..., method=True)`` or ``declare(..., method=True)`` (ops/_core.py), and the handful of methods that
are no op (``autograd/tensor_methods.py``: ``backward``, the hooks). No other module assigns to ``Tensor``
(tests/test_tensor_surface.py checks); ``attached`` lists what was attached, and
tests/test_tensor_surface.py holds ``dir(Tensor)`` to a snapshot.
"""
from __future__ import annotations

import functools
import inspect

from . import _tensor_docs
from ._params import with_params
from ._tensor import Tensor

# name -> what was attached, in attaching order (the registry the snapshot test reads)
attached: dict = {}

_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}


def accepts_numpy_names(fn):
    """``fn`` also taking numpy's ``axis=`` for ``dim=`` and ``keepdims=`` for ``keepdim=``, as PyTorch's functions
    and Tensor methods do (``torch.cumprod(x, axis=0)``); ``fn`` itself when it has neither parameter."""
    done = getattr(fn, "_with_numpy_names", None)  # one wrapper per function: lucid.X is lucid.special.X
    if done is fn or getattr(done, "__wrapped__", None) is fn:  # (not one that functools.wraps copied from another)
        return done
    try:
        names = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    if "dim" not in names and "keepdim" not in names:
        return fn

    @functools.wraps(fn)
    def with_numpy_names(*args, **kwargs):
        if "axis" in kwargs or "keepdims" in kwargs:
            kwargs = {_NUMPY_NAMES.get(k, k): v for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    with_numpy_names._with_numpy_names = with_numpy_names
    fn._with_numpy_names = with_numpy_names
    return with_numpy_names


def attach(name: str, value, doc: str | None = None) -> None:
    """Make ``value`` (a function, a property, a constant) the Tensor attribute ``name``. A public method with a
    ``dim``/``keepdim`` parameter also takes numpy's names; ``doc`` replaces a function's docstring (the methods
    written as lambdas)."""
    doc = doc if doc is not None else _tensor_docs.DOCS.get(name)
    if doc is not None:
        value.__doc__ = doc
    if name in _tensor_docs.PARAMS and ":param" not in (value.__doc__ or ""):
        value.__doc__ = f"{(value.__doc__ or '').rstrip()}\n\n{_tensor_docs.PARAMS[name]}"
    if not name.startswith("_") and inspect.isfunction(value):
        value.__doc__ = with_params(value.__doc__, value)  # (lucid/_params.py)
        value = accepts_numpy_names(value)
    setattr(Tensor, name, value)
    attached[name] = value


def _document_class_body() -> None:
    """The docstrings of the Tensor's own properties and methods (``_tensor_docs``): set once, at import."""
    for name, doc in _tensor_docs.DOCS.items():
        if name in vars(Tensor):
            vars(Tensor)[name].__doc__ = doc
    for name, params in _tensor_docs.PARAMS.items():
        member = vars(Tensor).get(name)
        if inspect.isfunction(member) and ":param" not in (member.__doc__ or ""):
            member.__doc__ = f"{(member.__doc__ or '').rstrip()}\n\n{params}"


_document_class_body()
