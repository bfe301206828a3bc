"""Learning-rate schedulers with PyTorch's API and arithmetic (``torch.optim.lr_scheduler``).

A scheduler rewrites ``group["lr"]`` (a Python float) in its optimizer's param groups each time ``step()`` is called;
``get_last_lr()`` returns the rates it set last. The chainable schedulers compute the new rate from the current one
(so several can act on one optimizer, e.g. in ``ChainedScheduler``); ``step(epoch)`` uses the closed form where one
exists. Nothing here touches arrays: schedules are plain Python arithmetic.
"""
from __future__ import annotations

import math
import types
import warnings
from bisect import bisect_right
from collections import Counter

from ._scheduler import (EPOCH_DEPRECATION_WARNING, LRScheduler, _check_optimizer, _format_param,  # noqa: F401
                         _group_values, _LRScheduler)  # (_LRScheduler: the old public name)
from .optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "SequentialLR", "PolynomialLR", "CosineAnnealingLR", "ChainedScheduler",
           "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR"]

class _LambdaScheduler(LRScheduler):
    """Shared by LambdaLR and MultiplicativeLR: one function of the epoch per group. Only callable objects (not
    plain functions or lambdas) have their ``__dict__`` saved in ``state_dict``."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1):
        self.optimizer = optimizer
        if not isinstance(lr_lambda, (list, tuple)):
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        else:
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict:
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class LambdaLR(_LambdaScheduler):
    """lr = initial_lr * lr_lambda(epoch), one lambda per group or one for all.

    :param optimizer: the optimizer whose param groups' ``lr`` this sets.
    :param lr_lambda: a function of the epoch, or a list of them (one per param group).
    :param last_epoch: the index of the last epoch when resuming (-1: start fresh, setting ``initial_lr``).

    >>> import lucid
    >>> opt = lucid.optim.SGD([lucid.nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> sched = lucid.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5 ** e)
    >>> lrs = []
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.5, 0.25, 0.125]
    """

    def get_lr(self):
        self._warn_outside_step()
        return [base_lr * lmbda(self.last_epoch) for lmbda, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """lr = lr * lr_lambda(epoch) at each step after the first.

    :param optimizer: the optimizer whose param groups' ``lr`` this sets.
    :param lr_lambda: a function of the epoch giving the factor, or a list of them (one per param group).
    :param last_epoch: the index of the last epoch when resuming (-1: start fresh, setting ``initial_lr``).
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1):
        lambdas = lr_lambda if isinstance(lr_lambda, (list, tuple)) else [lr_lambda]
        for fn in lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, lr_lambda, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * lmbda(self.last_epoch)
                for lmbda, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """Multiply the rates by ``gamma`` every ``step_size`` epochs: lr = initial_lr * gamma ** (epoch // step_size).

    :param optimizer: the optimizer whose param groups' ``lr`` this sets.
    :param step_size: epochs between decays.
    :param gamma: the decay factor.
    :param last_epoch: the index of the last epoch when resuming (-1: start fresh, setting ``initial_lr``).

    >>> import lucid
    >>> opt = lucid.optim.SGD([lucid.nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> sched = lucid.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [1.0, 0.1, 0.1, 0.01]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the rates by ``gamma`` at each milestone (by gamma ** k for a milestone listed k times).

    :param optimizer: the optimizer whose param groups' ``lr`` this sets.
    :param milestones: the epochs at which to decay (increasing).
    :param gamma: the decay factor.
    :param last_epoch: the index of the last epoch when resuming (-1: start fresh, setting ``initial_lr``).

    >>> import lucid
    >>> opt = lucid.optim.SGD([lucid.nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> sched = lucid.optim.lr_scheduler.MultiStepLR(opt, milestones=[1, 3], gamma=0.5)
    >>> lrs = []
    >>> for _ in range(4):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self.last_epoch not in self.milestones:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch] for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch) for base_lr in self.base_lrs]


class ConstantLR(LRScheduler):
    """lr = initial_lr * factor until epoch ``total_iters``, then initial_lr.

    :param optimizer: the optimizer whose param groups' ``lr`` this sets.
    :param factor: the factor before ``total_iters``, in (0, 1].
    :param total_iters: the epoch at which the factor ends.
    :param last_epoch: the index of the last epoch when resuming (-1: start fresh, setting ``initial_lr``).
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """The factor on initial_lr moves linearly from ``start_factor`` to ``end_factor`` over ``total_iters``
    epochs, then stays.

    :param optimizer: the optimizer whose param groups' ``lr`` this sets.
    :param start_factor: the factor at epoch 0, in (0, 1].
    :param end_factor: the factor from ``total_iters`` on, in [0, 1].
    :param total_iters: the epochs of the ramp.
    :param last_epoch: the index of the last epoch when resuming (-1: start fresh, setting ``initial_lr``).

    >>> import lucid
    >>> opt = lucid.optim.SGD([lucid.nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> sched = lucid.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
    >>> lrs = []
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.5, 0.75, 1.0]
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [group["lr"] * ratio for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (self.start_factor + (self.end_factor - self.start_factor)
                           * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = initial_lr * gamma ** epoch.

    :param optimizer: the optimizer whose param groups' ``lr`` this sets.
    :param gamma: the decay factor per epoch.
    :param last_epoch: the index of the last epoch when resuming (-1: start fresh, setting ``initial_lr``).
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self._is_initial:  # resuming must not move the rate one step ahead of itself
            return _group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = initial_lr * (1 - min(epoch, total_iters) / total_iters) ** power.

    :param optimizer: the optimizer whose param groups' ``lr`` this sets.
    :param total_iters: the epochs over which the rate decays to 0.
    :param power: the polynomial's power.
    :param last_epoch: the index of the last epoch when resuming (-1: start fresh, setting ``initial_lr``).
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1):
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return _group_values(self.optimizer, "lr")
        decay = ((1.0 - self.last_epoch / self.total_iters)
                 / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * decay for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    r"""Cosine annealing from initial_lr to ``eta_min`` over ``T_max`` epochs (and back up after, periodically),
    computed recursively as PyTorch does:
    ``lr_{t+1} = eta_min + (lr_t - eta_min) * (1 + cos(pi (t+1) / T_max)) / (1 + cos(pi t / T_max))``, which
    follows the closed form ``eta_min + (initial_lr - eta_min) (1 + cos(pi t / T_max)) / 2`` when nothing else
    changes the rate.

    :param optimizer: the optimizer whose param groups' ``lr`` this sets.
    :param T_max: the half period, in epochs.
    :param eta_min: the lowest rate.
    :param last_epoch: the index of the last epoch when resuming (-1: start fresh, setting ``initial_lr``).

    >>> import lucid
    >>> opt = lucid.optim.SGD([lucid.nn.Parameter(lucid.zeros(1))], lr=1.0)
    >>> sched = lucid.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
    >>> lrs = []
    >>> for _ in range(2):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 4))
    >>> lrs
    [0.5, 0.0]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        if self._is_initial:
            return _group_values(self.optimizer, "lr")
        if self._step_count == 1 and self.last_epoch > 0:  # resumed: start from the closed form
            return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(self.last_epoch * math.pi / self.T_max))
                    / 2 for base_lr in self.base_lrs]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:  # at the bottom: the ratio would be 0/0
            return [group["lr"] + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base_lr, group in zip(self.base_lrs, self.optimizer.param_groups)]
        ratio = ((1 + math.cos(math.pi * self.last_epoch / self.T_max))
                 / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)))
        return [ratio * (group["lr"] - self.eta_min) + self.eta_min for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


def _check_schedulers(owner: str, optimizer, schedulers) -> None:
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{owner} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{owner} does not support `ReduceLROnPlateau` scheduler as it requires additional kwargs "
                             f"to be specified when calling `step`, but got one at index {i} in the given schedulers "
                             "sequence.")
        if optimizer is not scheduler.optimizer:
            raise ValueError(f"{owner} expects all schedulers to belong to the same optimizer, but got scheduler "
                             f"{scheduler.__class__.__name__} at index {i} has {scheduler.optimizer}, which is "
                             f"different from {optimizer.__class__.__name__}.")


class _Composite(LRScheduler):
    """State-dict handling shared by SequentialLR and ChainedScheduler: the inner schedulers' states nest."""

    def state_dict(self) -> dict:
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        inner = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for scheduler, saved in zip(self._schedulers, inner):
            scheduler.load_state_dict(saved)


class SequentialLR(_Composite):
    """Run ``schedulers[i]`` between ``milestones[i-1]`` and ``milestones[i]``; each one starts from its own epoch
    0 when its turn comes.

    :param optimizer: the optimizer whose param groups' ``lr`` this sets.
    :param schedulers: the schedulers, in order (all of ``optimizer``).
    :param milestones: the epochs at which the next scheduler takes over (one fewer than the schedulers).
    :param last_epoch: the index of the last epoch when resuming (-1: start fresh, setting ``initial_lr``).
    """

    def __init__(self, optimizer: Optimizer, schedulers: list, milestones: list, last_epoch: int = -1):
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler, but got no scheduler.")
        _check_schedulers(self.__class__.__name__, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:  # undo what the inner schedulers' construction did
            group["lr"] = group["initial_lr"]
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None) -> None:
        """Take back the initial step each inner scheduler made when it was constructed."""
        scheds = self if sched is None else sched
        if hasattr(scheds, "_schedulers"):
            for s in scheds._schedulers:
                self.recursive_undo(s)
        elif hasattr(scheds, "last_epoch"):
            scheds.last_epoch -= 1

    def step(self) -> None:
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    """Step every scheduler of the chain at each ``step()``; their effects compose.

    :param schedulers: the schedulers to step together.
    :param optimizer: their optimizer (default: the first scheduler's).
    """

    def __init__(self, schedulers, optimizer: Optimizer | None = None):
        if len(schedulers) < 1:
            raise ValueError(f"{self.__class__.__name__} expects at least one scheduler to be chained, but got no "
                             "scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self.__class__.__name__, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(schedulers[-1].optimizer, "lr")

    def step(self) -> None:
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")


class ReduceLROnPlateau(LRScheduler):
    """Multiply the rates by ``factor`` when a metric has not improved for more than ``patience`` epochs.

    ``step(metric)`` takes a Python number or a 0-d Tensor (its value is read: this is where the training loop looks
    at the metric). Improvement means ``< best * (1 - threshold)`` (mode "min", threshold_mode "rel"), ``< best -
    threshold`` ("abs"), and the mirror images for mode "max". After a reduction, ``cooldown`` epochs pass before bad
    epochs count again; rates never go below ``min_lr`` and changes smaller than ``eps`` are skipped.

    :param optimizer: the optimizer whose param groups' ``lr`` this sets.
    :param mode: 'min' (the metric should fall) or 'max' (rise).
    :param factor: the factor applied to the rates (< 1).
    :param patience: epochs without improvement tolerated before reducing.
    :param threshold: what counts as an improvement (relative or absolute, by ``threshold_mode``).
    :param threshold_mode: 'rel' or 'abs'.
    :param cooldown: epochs to wait after a reduction before counting again.
    :param min_lr: a lower bound on the rates (a number, or one per param group).
    :param eps: a reduction smaller than this is skipped.
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0, min_lr=0,
                 eps: float = 1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = _group_values(optimizer, "lr")
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None) -> None:
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = _group_values(self.optimizer, "lr")

    def _reduce_lr(self, epoch) -> None:
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError("The number of param groups in the `optimizer` "
                                   f"({len(self.optimizer.param_groups)}) differs from when `ReduceLROnPlateau` was "
                                   f"initialized ({len(self.min_lrs)}), "
                                   "usually due to a new param group being added to the optimizer. Please modify the "
                                   "`min_lrs` field to match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, group in enumerate(self.optimizer.param_groups):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, self.min_lrs[i])
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min" and self.threshold_mode == "abs":
            return a < best - self.threshold
        if self.mode == "max" and self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode)


from ._cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR  # noqa: E402  (re-exported)
