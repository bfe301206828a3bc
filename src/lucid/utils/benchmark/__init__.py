"""``lucid.utils.benchmark`` (``torch.utils.benchmark``): ``Timer`` measures a statement, ``Measurement`` holds
the times and their statistics, ``Compare`` prints many as tables. The timer evaluates what each run computed
before it reads the clock (MLX is lazy: see ``timer.py``), so the times are those of the work, not of recording
it."""
from .common import Measurement, TaskSpec, select_unit, trim_sigfig  # noqa: F401
from .compare import Colorize, Compare  # noqa: F401
from .timer import Timer  # noqa: F401

__all__ = ["Colorize", "Compare", "Measurement", "TaskSpec", "Timer", "select_unit", "trim_sigfig"]
