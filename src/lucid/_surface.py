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
    if doc is not None:
        value.__doc__ = doc
    if not name.startswith("_") and inspect.isfunction(value):
        value = accepts_numpy_names(value)
    setattr(Tensor, name, value)
    attached[name] = value
