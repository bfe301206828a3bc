"""Pretrained weights for torchvision's models, without a network: ``weights=`` takes a local checkpoint file (a
``.pt``/``.pth`` that ``torch.save`` wrote, or safetensors) or a weights name (``ResNet18_Weights.IMAGENET1K_V1``,
``"IMAGENET1K_V1"``, ``"DEFAULT"``), which loads the file torchvision would have downloaded from where torchvision
caches it (``$TORCH_HOME/hub/checkpoints``, by default ``~/.cache/torch/hub/checkpoints``). A missing file is a
FileNotFoundError that names the URL to fetch and the place to put it."""
from __future__ import annotations

import os
import re
import warnings
from enum import Enum
from functools import partial
from pathlib import Path

from ... import nn
from ._presets import ImageClassification


class Weights:
    """One published checkpoint: its URL, the number of classes it was trained for, and its preprocessing
    (``transforms()``: torchvision's ``ImageClassification`` preset with a 224 px crop and ``preset`` options)."""

    def __init__(self, url: str, num_classes: int = 1000, **preset) -> None:
        self.url = url
        self.meta = {"num_classes": num_classes}
        self.transforms = partial(ImageClassification, **{"crop_size": 224, **preset})

    @property
    def filename(self) -> str:
        return self.url.rsplit("/", 1)[-1]


class WeightsEnum(Enum):
    """torchvision's weights enums (``ResNet50_Weights.IMAGENET1K_V2``); ``DEFAULT`` names the recommended one."""

    @classmethod
    def verify(cls, obj):
        """``obj`` as a member of this enum: None stays None, a name (``"DEFAULT"``, ``"IMAGENET1K_V1"`` or
        ``"ResNet18_Weights.IMAGENET1K_V1"``) is looked up."""
        if obj is None or isinstance(obj, cls):
            return obj
        if isinstance(obj, str):
            name = obj.replace(cls.__name__ + ".", "")
            if name in cls.__members__:
                return cls.__members__[name]
            raise KeyError(f"{obj!r}: no such {cls.__name__} (expected one of {list(cls.__members__)}), and no "
                           "such checkpoint file")
        raise TypeError(f"Invalid Weight class provided; expected {cls.__name__} but received "
                        f"{obj.__class__.__name__}.")

    @property
    def url(self) -> str:
        return self.value.url

    @property
    def meta(self) -> dict:
        return self.value.meta

    @property
    def transforms(self):
        """The preprocessing these weights expect: ``weights.transforms()`` is the transform (a module)."""
        return self.value.transforms


def make_weights(name: str, default: str, **checkpoints: Weights) -> type[WeightsEnum]:
    """A weights enum of ``checkpoints`` whose ``DEFAULT`` is an alias of the member ``default``."""
    return WeightsEnum(name, [*checkpoints.items(), ("DEFAULT", checkpoints[default])], module=__name__)


def cache_dir() -> Path:
    """Where torchvision keeps downloaded checkpoints: ``$TORCH_HOME/hub/checkpoints``."""
    home = os.environ.get("TORCH_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "torch")
    return Path(home) / "hub" / "checkpoints"


def _read_checkpoint(path) -> dict:
    # PyTorch's file reader lives in lucid.compat.torch (pyproject lets this one import through)
    from ...compat.torch.serialization import load
    state = load(path, map_location="cpu", weights_only=True)
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]  # a training checkpoint {"state_dict": ..., "epoch": ...}
    if not isinstance(state, dict):
        raise TypeError(f"{os.fspath(path)}: expected a state_dict (a dict of tensors), got {type(state).__name__}")
    return state


def resolve(weights, enum: type[WeightsEnum]):
    """``weights`` as what to load: None, a checkpoint path, or a member of ``enum``; the path's file must exist."""
    if isinstance(weights, (str, os.PathLike)) and os.path.isfile(weights):
        return weights
    if isinstance(weights, os.PathLike) or (isinstance(weights, str) and (
            os.path.sep in weights or weights.endswith((".pt", ".pth", ".safetensors")))):
        raise FileNotFoundError(f"weights file {os.fspath(weights)!r} does not exist")
    return enum.verify(weights)


def overwrite_param(kwargs: dict, param: str, new_value) -> None:
    """torchvision's rule for what named weights fix (``num_classes``, ``groups``, ...): set it, and refuse a
    different value the caller gave."""
    if param in kwargs and kwargs[param] != new_value:
        raise ValueError(f"The parameter '{param}' expected value {new_value} but got {kwargs[param]} instead.")
    kwargs[param] = new_value


def _legacy_pretrained(weights, enum: type[WeightsEnum], kwargs: dict):
    """torchvision's reading of the pre-0.13 ``pretrained=`` flag (with its deprecation warnings):
    ``pretrained=True`` is the first ImageNet weights, ``False`` none."""
    pretrained = kwargs.pop("pretrained")
    warnings.warn("The parameter 'pretrained' is deprecated since 0.13 and may be removed in the future, please use "
                  "'weights' instead.")
    if not pretrained:
        return weights
    legacy = enum.IMAGENET1K_V1
    warnings.warn("Arguments other than a weight enum or `None` for 'weights' are deprecated since 0.13 and may be "
                  "removed in the future. The current behavior is equivalent to passing "
                  f"`weights={enum.__name__}.{legacy.name}`. You can also use `weights={enum.__name__}.DEFAULT` to "
                  "get the most up-to-date weights.")
    return legacy


def prepare(weights, enum: type[WeightsEnum], kwargs: dict):
    """``weights`` resolved (see ``resolve``; the legacy ``pretrained=`` too); named weights fix ``num_classes``
    to theirs."""
    if "pretrained" in kwargs:
        weights = _legacy_pretrained(weights, enum, kwargs)
    weights = resolve(weights, enum)
    if isinstance(weights, WeightsEnum):
        overwrite_param(kwargs, "num_classes", weights.meta["num_classes"])
    return weights


def load_weights(model: nn.Module, weights, remap=None) -> nn.Module:
    """Load ``weights`` (None, a checkpoint path or a weights enum member) into ``model``; ``remap(state_dict)``
    renames a published checkpoint's old keys."""
    if weights is None:
        return model
    if isinstance(weights, WeightsEnum):
        path = cache_dir() / weights.value.filename
        if not path.is_file():
            raise FileNotFoundError(
                f"{type(weights).__name__}.{weights.name}: lucid does not download weights. Fetch the checkpoint "
                f"with\n    curl -L --create-dirs -o {path} {weights.url}\n(or place the file there yourself, "
                f"or pass its path as weights=...)")
    else:
        path = weights
    state = _read_checkpoint(path)
    model.load_state_dict(remap(state) if remap is not None else state)
    return model


def remap_keys(state: dict, pattern: str, replace) -> dict:
    """``state`` with each key matching ``pattern`` rewritten by ``re.sub(pattern, replace, key)``."""
    regex = re.compile(pattern)
    return {regex.sub(replace, k): v for k, v in state.items()}
