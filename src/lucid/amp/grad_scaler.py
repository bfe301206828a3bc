"""``lucid.amp.GradScaler``: dynamic loss scaling with PyTorch's semantics (torch.amp.GradScaler).

float16 has a small range: small gradients underflow to zero. The scaler multiplies the loss by a scale before
backward, divides the gradients by it before the optimizer's step (``unscale_``, which the user may call early
to clip the true gradients), skips the step when a gradient is inf or NaN, and adjusts the scale (``update``):
``backoff_factor`` times after a skipped step, ``growth_factor`` times after ``growth_interval`` clean steps in
a row. bfloat16 has float32's range and needs no scaler.

The scale and the step counter are lazy MLX scalars: scaling, unscaling and the inf check add ops to the graph,
and ``step`` reads the found-inf flag once to decide whether to step (PyTorch synchronises there too).
"""
from __future__ import annotations

import enum

import mlx.core as mx

from .._threads import item
from .._tensor import Tensor, _wrap
from ..autograd.grad_mode import no_grad


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict:
    return {"stage": OptState.READY, "found_inf": None}


class GradScaler:
    """``GradScaler(device="cpu", init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)``; typical use::

        with lucid.autocast("cpu", dtype=lucid.float16):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)          # optional: to clip the unscaled gradients
        scaler.step(optimizer)              # skipped if a gradient is inf/NaN
        scaler.update()

    ``device`` is accepted for PyTorch's signature; MLX arrays live in unified memory, so it changes nothing.

    :param device: accepted for PyTorch's signature (MLX memory is unified).
    :param init_scale: the first scale factor.
    :param growth_factor: multiplies the scale after ``growth_interval`` steps without inf/NaN gradients.
    :param backoff_factor: multiplies the scale after a step with inf/NaN gradients (which is skipped).
    :param growth_interval: steps without inf/NaN before the scale grows.
    :param enabled: False makes every method a pass-through (``scale`` returns its argument).
    """

    def __init__(self, device: str = "cpu", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True):
        self._device = device
        self._enabled = bool(enabled)
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._scale: mx.array | None = None  # made at the first scale(), as in PyTorch
        self._growth_tracker: mx.array | None = None
        self._per_optimizer_states: dict = {}

    # ------------------------------------------------------------------------------------------------ scaling
    def _lazy_init_scale_growth_tracker(self) -> None:
        self._scale = mx.array(self._init_scale, mx.float32)
        self._growth_tracker = mx.array(self._init_growth_tracker, mx.int32)

    def _check_scale(self, funcname: str) -> None:
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate your script did not "
                                 "use scaler.scale(loss or outputs) earlier in the iteration.")

    def scale(self, outputs):
        """``outputs`` (a Tensor, or lists/tuples of them) times the current scale; unchanged when disabled."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._lazy_init_scale_growth_tracker()
        if isinstance(outputs, Tensor):
            return outputs * _wrap(self._scale.astype(outputs.dtype) if outputs.dtype != mx.float32 else self._scale)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer) -> dict:
        return self._per_optimizer_states.setdefault(id(optimizer), _fresh_state())

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by the scale, in place, and note whether any is inf/NaN. Once per
        optimizer between two ``update()`` calls."""
        if not self._enabled:
            return
        self._check_scale("unscale_")
        state = self._state(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = mx.reciprocal(self._scale)  # exact for the powers of two the scale normally is
        found_inf = None
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype == mx.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    a = g._st.data
                    bad = mx.logical_not(mx.all(mx.isfinite(a)))
                    found_inf = bad if found_inf is None else mx.logical_or(found_inf, bad)
                    g.mul_(_wrap(inv_scale.astype(a.dtype)))
        state["found_inf"] = found_inf
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` unless a gradient is inf/NaN (unscaling first if ``unscale_`` was not called);
        returns what the step returned, or None when skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale("step")
        state = self._state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not item(state["found_inf"]):  # the one read of the step
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Set the scale for the next iteration: ``new_scale`` if given (a float or a 1-element float32 Tensor),
        else backed off after a skipped step or grown after ``growth_interval`` clean ones."""
        if not self._enabled:
            return
        self._check_scale("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1 or new_scale.dtype != mx.float32 or new_scale.requires_grad:
                    raise AssertionError("new_scale should be a float or a 1-element lucid.FloatTensor with "
                                         "requires_grad=False.")
                self._scale = new_scale._st.data.reshape(())
            else:
                self._scale = mx.array(float(new_scale), mx.float32)
        else:
            infs = [s["found_inf"] for s in self._per_optimizer_states.values() if s["found_inf"] is not None]
            if not infs:
                raise AssertionError("No inf checks were recorded prior to update.")
            found = infs[0]
            for f in infs[1:]:
                found = mx.logical_or(found, f)
            self._scale, self._growth_tracker = _updated_scale(self._scale, self._growth_tracker, found,
                                                               self._growth_factor, self._backoff_factor,
                                                               self._growth_interval)
        self._per_optimizer_states = {}

    # ------------------------------------------------------------------------------------------------ accessors
    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(item(self._scale))

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(item(self._growth_tracker))

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """PyTorch's keys: scale, growth_factor, backoff_factor, growth_interval, _growth_tracker ({} when
        disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._scale is not None:
            self._scale = mx.array(self._init_scale, mx.float32)
        if self._growth_tracker is not None:
            self._growth_tracker = mx.array(self._init_growth_tracker, mx.int32)


def _updated_scale(scale, tracker, found_inf, growth_factor: float, backoff_factor: float, interval: int):
    """PyTorch's _amp_update_scale_, lazily: back off and reset the count after an inf; else count the clean step
    and grow (if the grown scale is finite) when the count reaches ``interval``, resetting it."""
    successful = tracker + 1
    grow = successful == interval
    grown = scale * growth_factor
    grown = mx.where(mx.isfinite(grown), grown, scale)
    new_scale = mx.where(found_inf, scale * backoff_factor, mx.where(grow, grown, scale))
    new_tracker = mx.where(mx.logical_or(found_inf, grow), mx.array(0, mx.int32), successful)
    return new_scale.astype(mx.float32), new_tracker.astype(mx.int32)
