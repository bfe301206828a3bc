"""PyTorch's ``torch.nn.modules.utils``: the argument helpers that layer code written for PyTorch imports
(``_single``, ``_pair``, ``_triple``, ``_quadruple``, ``_ntuple``, ``_reverse_repeat_tuple``, ``_list_with_default``)
and ``consume_prefix_in_state_dict_if_present``, which makes a state_dict saved from a wrapped model
(``DistributedDataParallel``'s ``module.`` prefix) load into the bare one."""
from __future__ import annotations

from collections import abc
from itertools import repeat

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse"):
    """A function that turns an iterable into a tuple and repeats anything else ``n`` times (``_pair(3)`` is
    ``(3, 3)``, ``_pair((1, 2))`` is ``(1, 2)``)."""
    def parse(x) -> tuple:
        if isinstance(x, abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """The elements of ``t`` in reverse order, each repeated ``n`` times (a conv's padding, per dim, as ``F.pad``
    takes it: last dim first, both sides)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pooling's output size with each None replaced by the input's size there (``defaults``: the
    input's shape); an int is returned as it is."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [d if v is None else v for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict: dict, prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` that start with it, in place, and from the keys of its
    ``_metadata`` (where the wrapper's own entry, ``prefix`` without its dot, becomes the root's ``""``)."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata.keys()):
        # "" is the wrapper itself (kept); "module" the wrapped model; "module.x" its submodules
        if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
            metadata[key[len(prefix):]] = metadata.pop(key)
