"""The cyclical schedules of ``torch.optim.lr_scheduler``: ``CyclicLR``, ``OneCycleLR`` (whose momentum or beta1
cycles inversely to the rate) and ``CosineAnnealingWarmRestarts``; ``lr_scheduler`` re-exports them."""
from __future__ import annotations

import math
import types
from functools import partial

from ._scheduler import LRScheduler, _check_optimizer, _format_param
from .optimizer import Optimizer


def _set_momentum(group: dict, momentum: float, use_beta1: bool) -> None:
    """Cycle the momentum of SGD-like optimizers, or beta1 of Adam-like ones."""
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _init_momentum_cycle(sched, optimizer: Optimizer, base_momentum, max_momentum, last_epoch: int) -> None:
    """Shared by CyclicLR and OneCycleLR: momentum runs inversely to the learning rate."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    sched.use_beta1 = "betas" in optimizer.defaults
    sched.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
    sched.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for m_momentum, b_momentum, group in zip(sched.max_momentums, sched.base_momentums, optimizer.param_groups):
            _set_momentum(group, m_momentum, sched.use_beta1)
            group["max_momentum"] = m_momentum
            group["base_momentum"] = b_momentum


class CyclicLR(LRScheduler):
    """Cyclical learning rates (Smith 2017): the rate goes from ``base_lr`` up to ``max_lr`` in ``step_size_up``
    steps and back down in ``step_size_down``; "triangular2" halves the amplitude each cycle, "exp_range" scales it
    by ``gamma ** iteration``; a custom ``scale_fn`` overrides ``mode``. With ``cycle_momentum`` the momentum (or
    beta1) runs inversely between ``max_momentum`` and ``base_momentum``. Step it after every batch.

    :param optimizer: the optimizer whose param groups' ``lr`` this sets.
    :param base_lr: the lower rate of the cycle (a number or one per group).
    :param max_lr: the upper rate of the cycle (a number or one per group).
    :param step_size_up: steps of the rising half.
    :param step_size_down: steps of the falling half (default ``step_size_up``).
    :param mode: 'triangular', 'triangular2' or 'exp_range'.
    :param gamma: the 'exp_range' factor per iteration.
    :param scale_fn: a custom amplitude scaling (overrides ``mode``).
    :param scale_mode: whether ``scale_fn`` takes the 'cycle' or the 'iterations'.
    :param cycle_momentum: cycle the momentum (or beta1) inversely to the rate.
    :param base_momentum: the lower momentum.
    :param max_momentum: the upper momentum.
    :param last_epoch: the index of the last epoch when resuming (-1: start fresh, setting ``initial_lr``).
    """

    def __init__(self, optimizer: Optimizer, base_lr, max_lr, step_size_up: int = 2000, step_size_down=None,
                 mode: str = "triangular", gamma: float = 1.0, scale_fn=None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum=0.8, max_momentum=0.9, last_epoch: int = -1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _init_momentum_cycle(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x: float) -> float:
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x: float) -> float:
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma: float, x: float) -> float:
        return gamma ** x

    def get_lr(self):
        self._warn_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base_lr + (max_lr - base_lr) * scale_factor * scale
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, base_m, max_m in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(group, max_m - (max_m - base_m) * scale_factor * scale, self.use_beta1)
        return lrs

    def state_dict(self) -> dict:
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)  # a bound method / partial: rebuilt on load
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = None
        if fn is not None and not isinstance(fn, types.FunctionType):
            state["_scale_fn_custom"] = fn.__dict__.copy()
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter): cosine annealing from initial_lr to ``eta_min`` over ``T_i`` epochs, then a
    restart with ``T_i *= T_mult``. ``step(epoch)`` accepts fractional epochs (call it per batch with
    ``epoch + i / iters``).

    :param optimizer: the optimizer whose param groups' ``lr`` this sets.
    :param T_0: the epochs of the first period.
    :param T_mult: the factor on the period after each restart (an int >= 1).
    :param eta_min: the lowest rate.
    :param last_epoch: the index of the last epoch when resuming (-1: start fresh, setting ``initial_lr``).
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0, last_epoch: int = -1):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_outside_step()
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch=None) -> None:
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._set_lrs(self.get_lr)


class OneCycleLR(LRScheduler):
    """The 1cycle policy (Smith & Topin): warm up from ``max_lr / div_factor`` to ``max_lr`` over ``pct_start`` of
    ``total_steps``, then anneal (cosine or linear) to ``initial_lr / final_div_factor``; ``three_phase`` comes back
    down to the initial rate symmetrically before the final annealing. Momentum (or beta1) cycles inversely. Step it
    after every batch; stepping past ``total_steps`` is an error.

    :param optimizer: the optimizer whose param groups' ``lr`` this sets.
    :param max_lr: the peak rate (a number or one per group).
    :param total_steps: the cycle's steps (or give ``epochs`` and ``steps_per_epoch``).
    :param epochs: with ``steps_per_epoch``, the cycle's length.
    :param steps_per_epoch: with ``epochs``, the cycle's length.
    :param pct_start: the share of the cycle spent warming up.
    :param anneal_strategy: 'cos' or 'linear'.
    :param cycle_momentum: cycle the momentum (or beta1) inversely to the rate.
    :param base_momentum: the lower momentum.
    :param max_momentum: the upper momentum.
    :param div_factor: the initial rate is ``max_lr / div_factor``.
    :param final_div_factor: the final rate is ``initial_lr / final_div_factor``.
    :param three_phase: come back down to the initial rate before the final annealing.
    :param last_epoch: the index of the last epoch when resuming (-1: start fresh, setting ``initial_lr``).
    """

    def __init__(self, optimizer: Optimizer, max_lr, total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False, last_epoch: int = -1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")

        warmup = dict(end_step=float(pct_start * self.total_steps) - 1, start_lr="initial_lr", end_lr="max_lr",
                      start_momentum="max_momentum", end_momentum="base_momentum")
        if three_phase:
            self._schedule_phases = [
                warmup,
                dict(end_step=float(2 * pct_start * self.total_steps) - 2, start_lr="max_lr", end_lr="initial_lr",
                     start_momentum="base_momentum", end_momentum="max_momentum"),
                dict(end_step=self.total_steps - 1, start_lr="initial_lr", end_lr="min_lr",
                     start_momentum="max_momentum", end_momentum="max_momentum"),
            ]
        else:
            self._schedule_phases = [
                warmup,
                dict(end_step=self.total_steps - 1, start_lr="max_lr", end_lr="min_lr",
                     start_momentum="base_momentum", end_momentum="max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy

        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for max_lr_i, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = max_lr_i / div_factor
                group["max_lr"] = max_lr_i
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _init_momentum_cycle(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return self._annealing_cos(start, end, pct)
        return self._annealing_linear(start, end, pct)

    @staticmethod
    def _annealing_cos(start: float, end: float, pct: float) -> float:
        """Cosine from ``start`` (pct 0) to ``end`` (pct 1)."""
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start: float, end: float, pct: float) -> float:
        return (end - start) * pct + start

    def get_lr(self):
        self._warn_outside_step()
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total steps is "
                             f"{self.total_steps}")
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal_func(group[phase["start_momentum"]], group[phase["end_momentum"]],
                                                     pct)
                        _set_momentum(group, momentum, self.use_beta1)
                    break
                start_step = phase["end_step"]
        return lrs
