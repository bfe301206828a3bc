"""Stochastic Weight Averaging and exponential moving averages of a model (``torch.optim.swa_utils``).

``AveragedModel`` keeps a copy of a model whose parameters (and, with ``use_buffers=True``, buffers) are a running
average of the model's; ``SWALR`` anneals each param group's learning rate to a fixed ``swa_lr``; ``update_bn``
recomputes BatchNorm statistics for the averaged weights with one pass over the data. The averaging functions have
PyTorch's two forms: one tensor at a time (``avg_fn(averaged, current, num_averaged) -> new averaged``) and a list
at a time, updating in place (``multi_avg_fn(averaged_list, current_list, num_averaged)``).
"""
from __future__ import annotations

import itertools
import math
from copy import deepcopy

from .. import _creation
from .._dtype import int64
from .._grad_mode import no_grad
from .._tensor import Tensor
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ._scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def _check_decay(decay) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """An exponential moving average over lists, in place: ``ema <- decay * ema + (1 - decay) * current``.

    :param decay: the EMA decay, in [0, 1].
    :returns: a ``multi_avg_fn`` for ``AveragedModel``.
    """
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.lerp_(p_model, 1 - decay)
            else:  # integer buffers (use_buffers=True): lerp is for floating point
                for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """The equal-weight running mean over lists, in place: ``avg <- avg + (current - avg) / (num_averaged + 1)``."""

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            if averaged_param_list[0].is_floating_point() or averaged_param_list[0].is_complex():
                weight = 1 / (num_averaged + 1)
                for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                    p_avg.lerp_(p_model, weight.to(p_avg.dtype) if isinstance(weight, Tensor) else weight)
            else:
                for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                    # PyTorch's addcdiv of an integer tensor by (n + 1): a true division, written back cast
                    p_avg.copy_(p_avg + (p_model - p_avg) / (num_averaged + 1))

    return swa_update


def get_ema_avg_fn(decay=0.999):
    """An exponential moving average, one tensor at a time: returns ``decay * ema + (1 - decay) * current``.

    :param decay: the EMA decay, in [0, 1].
    :returns: an ``avg_fn`` for ``AveragedModel``.
    """
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """The equal-weight running mean, one tensor at a time: returns ``avg + (current - avg) / (num_averaged + 1)``."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` (``self.module``) whose parameters are averaged over the models passed to
    ``update_parameters`` (``torch.optim.swa_utils.AveragedModel``).

    :param model: the model to average (deep-copied).
    :param device: where to keep the copy (None: where the model is).
    :param avg_fn: ``avg_fn(averaged, current, num_averaged) -> Tensor``, one tensor at a time.
    :param multi_avg_fn: ``multi_avg_fn(averaged_list, current_list, num_averaged)``, updating the lists in place.
        With neither, the equal-weight mean (SWA).
    :param use_buffers: average the buffers too (else they are copied from the model at each update).

    The buffer ``n_averaged`` (int64) counts the updates; ``state_dict`` holds ``module.*`` and ``n_averaged``.

    """

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _creation.tensor(0, dtype=int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s parameters (and buffers with ``use_buffers``) into this copy; the first update copies
        them."""
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        averaged, current = [], []
        # a host read per update (once an epoch, typically), as in PyTorch: the first update copies
        first = bool(self.n_averaged == 0)
        with no_grad():
            for p_avg, p_model in zip(self_param, model_param):
                p_model = p_model.detach().to(p_avg.device)
                averaged.append(p_avg.detach())
                current.append(p_model)
                if first:
                    p_avg.detach().copy_(p_model)
            if not first:
                if self.avg_fn is not None:
                    for p_avg, p_model in zip(averaged, current, strict=True):
                        p_avg.copy_(self.avg_fn(p_avg, p_model, self.n_averaged))
                else:
                    multi = self.multi_avg_fn or get_swa_multi_avg_fn()
                    # PyTorch calls the list function once per (device, dtype) group
                    groups: dict = {}
                    for p_avg, p_model in zip(averaged, current):
                        pair = groups.setdefault(p_avg.dtype, ([], []))
                        pair[0].append(p_avg)
                        pair[1].append(p_model)
                    for avg_list, cur_list in groups.values():
                        multi(avg_list, cur_list, self.n_averaged)
            if not self.use_buffers:
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.detach().copy_(b_model.detach().to(b_swa.device))
            self.n_averaged += 1


def update_bn(loader, model: Module, device=None) -> None:
    """Recompute the running statistics of ``model``'s BatchNorm layers with one pass over ``loader`` (each item an
    input, or a list/tuple whose first element is the input), as a cumulative average (momentum None).

    :param loader: an iterable of inputs (or of lists/tuples whose first element is the input).
    :param model: the model whose BatchNorm statistics are recomputed.
    :param device: accepted for PyTorch's signature.
    """
    with no_grad():
        momenta = {}
        for module in model.modules():
            if isinstance(module, _BatchNorm):
                module.reset_running_stats()
                momenta[module] = module.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for module in momenta:
            module.momentum = None
        for inp in loader:
            if isinstance(inp, (list, tuple)):
                inp = inp[0]
            if device is not None:
                inp = inp.to(device)
            model(inp)
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each param group's learning rate to ``swa_lr`` over ``anneal_epochs`` epochs, then hold it
    (``torch.optim.swa_utils.SWALR``).

    :param optimizer: the wrapped optimizer.
    :param swa_lr: the final learning rate, for all groups or one per group (stored as ``group["swa_lr"]``).
    :param anneal_epochs: epochs of annealing (an int >= 0).
    :param anneal_strategy: ``"cos"`` or ``"linear"``.
    :param last_epoch: the index of the last epoch.
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list:
        # the group's lr is what the previous step set: undo that step's blend to recover the rate being annealed
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs, strict=True)]

    def _set_anneal_func(self, anneal_strategy) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict:
        """Every attribute except the optimizer and the anneal function (restored from its name)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
