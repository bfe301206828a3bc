"""torch.nn._reduction: the reduction names as PyTorch's legacy enum (helpers that test code and old loss code
import from ``torch.nn._reduction``)."""
import warnings

from lucid.ops.loss import _legacy_reduction


def get_enum(reduction: str) -> int:
    """'none' -> 0, 'mean' -> 1, 'sum' -> 2 ('elementwise_mean' is 'mean', with PyTorch's deprecation warning)."""
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.")
        reduction = "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return ("none", "mean", "sum").index(reduction)


def legacy_get_string(size_average, reduce, emit_warning: bool = True) -> str:
    """The reduction the deprecated ``size_average``/``reduce`` pair means."""
    if emit_warning:
        return _legacy_reduction(size_average, reduce)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _legacy_reduction(size_average, reduce)


def legacy_get_enum(size_average, reduce, emit_warning: bool = True) -> int:
    return get_enum(legacy_get_string(size_average, reduce, emit_warning))
