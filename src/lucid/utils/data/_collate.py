"""Turning a list of samples into a batch (``default_collate``) or one sample into tensors (``default_convert``),
following PyTorch: tensors and numpy arrays are stacked along a new first dimension, Python floats become a
float64 tensor and ints an int64 tensor, strings stay a list, and dicts, namedtuples, tuples and lists are collated
field by field (a batch of tuples gives a list, as in PyTorch)."""
from __future__ import annotations

import collections.abc
import re

import numpy as np

from ... import _dtype
from ..._creation import from_numpy, tensor
from ..._tensor import Tensor
from ...ops.shape import stack

_STR_OR_OBJECT = re.compile(r"[SaUO]")  # numpy dtype codes that can't become tensors
_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def _is_numpy(x) -> bool:
    return isinstance(x, (np.ndarray, np.generic)) and not isinstance(x, (np.str_, np.bytes_))


def default_collate(batch: list):
    """Collate a list of samples into a batch (see the module docstring for the rules).

    :param batch: a list of samples: tensors are stacked along a new first dimension, numbers and numpy arrays
        become tensors, and tuples, lists and dicts are collated field by field.
    :returns: the batch.

    >>> import lucid
    >>> from lucid.utils.data import default_collate
    >>> default_collate([(lucid.tensor([1.0]), 0), (lucid.tensor([2.0]), 1)])
    [Tensor([[1.],
            [2.]]), Tensor([0, 1])]
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if _is_numpy(elem):
        if _STR_OR_OBJECT.search(elem.dtype.str) is not None:
            raise TypeError(_ERROR.format(elem.dtype))
        if isinstance(elem, np.ndarray):
            return default_collate([from_numpy(b) for b in batch])
        return from_numpy(np.array(batch))  # numpy scalars keep their dtype
    if isinstance(elem, float):
        return tensor(batch, dtype=_dtype.float64)
    if isinstance(elem, int):  # bools included: they give a bool tensor
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        return _rebuild(elem, collated, as_mapping=True)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(list(samples)) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(b) != size for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(samples)) for samples in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuild(elem, columns)
    raise TypeError(_ERROR.format(type(elem)))


def default_convert(data):
    """Convert one (unbatched) sample: numpy arrays and scalars become tensors, containers are walked, anything
    else (tensors, numbers, strings) is returned as it is.

    :param data: one sample.
    :returns: the sample with numpy arrays and numbers turned into tensors.
    """
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        if _STR_OR_OBJECT.search(data.dtype.str) is not None:
            return data
        return from_numpy(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return _rebuild(data, {key: default_convert(data[key]) for key in data}, as_mapping=True)
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild(data, [default_convert(d) for d in data])
    return data


def _rebuild(like, items, as_mapping: bool = False):
    """``items`` in the container type of ``like`` when that type can be built from them, else a plain
    dict/list (PyTorch's fallback for containers whose constructor takes other arguments)."""
    try:
        return type(like)(items)
    except TypeError:
        return dict(items) if as_mapping else list(items)
