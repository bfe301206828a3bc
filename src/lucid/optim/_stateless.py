"""``swap_in_optimizer_params_and_state`` (PyTorch 2.13's ``torch.optim``): run an optimizer, for the duration of a
``with`` block, on other parameter tensors and an ``optimizer.state_dict()``-shaped state, then restore the live
ones. The step writes the swapped-in state tensors in place (lucid's update rules store into the state tensors'
storage), so those writes reach the caller's dict; any other change (a state entry created by the step, an option
changed) is dropped on exit, as in PyTorch."""
from __future__ import annotations

import contextlib
from collections import defaultdict

from .._tensor import Tensor

_NAME = "swap_in_optimizer_params_and_state"


def _state_field(state) -> dict:
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter ids "
                           f"to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _groups_field(optimizer, groups) -> list:
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group dicts, "
                           f"got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than the live optimizer.")
    return groups


def _group_ids(idx: int, live: dict, group) -> list:
    """The packed parameter ids of one swapped-in group, checked against its live group."""
    if not isinstance(group, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = group.get("params")
    if not isinstance(ids, list) or not all(isinstance(i, int) for i in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries keyed "
                           "by packed parameter ids.")
    if len(live["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of params than the live "
                           "optimizer param group.")
    swapin_only = [k for k in group if k not in live]
    live_only = [k for k in live if k not in group]
    if swapin_only or live_only:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match the "
                           f"live optimizer group keys for group {idx}. Keys only in swap-in: {swapin_only}. Keys only "
                           f"in live: {live_only}.")
    return ids


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer, swapin_parameters: dict, swapin_optim_state: dict):
    """Within the block, ``optimizer`` works on ``swapin_parameters`` (its parameters' replacements, in
    ``param_groups`` order, e.g. ``dict(model.named_parameters())`` of another model) with the state and options of
    ``swapin_optim_state`` (an ``optimizer.state_dict()``); the live parameters, state and options come back on exit.
    The optimizer's own state must already exist."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _state_field(swapin_optim_state.get("state"))
    groups = _groups_field(optimizer, swapin_optim_state.get("param_groups"))
    flat = list(swapin_parameters.values())
    plan, offset, seen = [], 0, set()
    for idx, (live, group) in enumerate(zip(optimizer.param_groups, groups)):
        ids = _group_ids(idx, live, group)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match optimizer.param_groups "
                               "ordering.")
        plan.append((live, group, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter ids "
                           f"from param_groups[*]['params']; got extra keys {extra!r}.")
    live_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapped: defaultdict = defaultdict(dict)
        for live, group, params in plan:
            live["params"] = params
            live.update({k: v for k, v in group.items() if k != "params"})
            for p, pid in zip(params, group["params"]):
                swapped[p] = dict(state.get(pid, {}))
        optimizer.state = swapped
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots):
            group.clear()
            group.update(snapshot)
        optimizer.state = live_state
