"""What every learning-rate scheduler is (``LRScheduler``: ``step``, ``get_last_lr``, ``state_dict``) and the helpers
the schedules in ``lucid.optim.lr_scheduler`` share; the public names are there."""
from __future__ import annotations

import warnings
import weakref

from .optimizer import Optimizer


EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. Please use "
    "`scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from None, the closed "
    "form is used instead of the new chainable form, where available. Please open an issue if you are unable to "
    "replicate your use case: https://github.com/pytorch/pytorch/issues/new/choose.")


def _format_param(name: str, optimizer: Optimizer, param) -> list:
    """One value per param group: a list of them as given, or one value repeated."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has {len(param)} "
                             f"values, param_groups has {len(optimizer.param_groups)}.")
        return list(param)
    return [param] * len(optimizer.param_groups)


def _group_values(optimizer: Optimizer, key: str) -> list:
    return [group[key] for group in optimizer.param_groups]


def _check_optimizer(optimizer) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


# ``optimizer.step`` functions set on the instance before a scheduler was made: PyTorch wraps whatever ``step`` is
# there when the scheduler is made, and warns only about a ``step`` replaced after that (which its wrapper misses)
_accepted_steps = weakref.WeakSet()


def _instance_step(optimizer):
    """The function of an ``optimizer.step`` set on the instance (a user's override), else None."""
    step = optimizer.__dict__.get("step")
    return None if step is None else getattr(step, "__func__", step)


class LRScheduler:
    """Base class of the schedulers: subclasses implement ``get_lr`` (and may override ``step``).

    :param optimizer: the optimizer whose learning rates this scheduler sets.
    :param last_epoch: index of the last epoch; -1 (default) starts the schedule (and records each group's
        ``initial_lr``); other values resume it and need ``initial_lr`` in every group.
    """

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler "
                                   "with last_epoch >= 0.\nThis typically happens when:\n1. You're trying to resume "
                                   "training from a checkpoint but haven't properly loaded the optimizer state\n2. "
                                   "You're using last_epoch >= 0 for a fresh training run (not recommended)")
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        if _instance_step(optimizer) is not None:
            _accepted_steps.add(_instance_step(optimizer))
        self._initial_step()

    def _initial_step(self) -> None:
        """Count no steps yet and set the rates of epoch 0 (``last_epoch + 1``)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self) -> dict:
        """Every attribute except the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list:
        """The learning rates this scheduler set last, one per param group."""
        return self._last_lr

    def get_lr(self) -> list:
        """The next learning rate of each param group (called by ``step``)."""
        raise NotImplementedError

    def _warn_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                          UserWarning, stacklevel=3)

    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule by one epoch (or jump to ``epoch``, deprecated: closed form where available).
        Call it after ``optimizer.step()``."""
        override = _instance_step(self.optimizer)
        if self._step_count == 1 and override is not None and override not in _accepted_steps:
            warnings.warn("Seems like `optimizer.step()` has been overridden after learning rate scheduler "
                          "initialization. Please, make sure to call `optimizer.step()` before `lr_scheduler.step()`. "
                          "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                          UserWarning, stacklevel=2)
        elif self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
                          "later, you should call them in the opposite order: `optimizer.step()` before "
                          "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value "
                          "of the learning rate schedule. See more details at "
                          "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate", UserWarning,
                          stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            self._set_lrs(self.get_lr)
        else:
            self.last_epoch = epoch
            self._set_lrs(getattr(self, "_get_closed_form_lr", self.get_lr))

    def _set_lrs(self, compute) -> None:
        """Write the rates ``compute()`` returns into the param groups (``get_lr`` called from here is silent)."""
        self._get_lr_called_within_step = True
        try:
            values = compute()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = _group_values(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """Old name of ``LRScheduler``, kept for code that subclasses it."""
