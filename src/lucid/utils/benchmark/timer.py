"""``Timer``: PyTorch's ``torch.utils.benchmark.Timer`` for lucid.

MLX is lazy: ``x @ y`` only records the product, and it is computed when something reads it. A timer that ran the
statement and read the clock would time the recording. So each run of the statement here ends by evaluating
(``mx.eval``, which blocks until the work is done) what it computed: the value of each of its expression
statements and each name it assigns, and the tensors it can have changed through its namespace (its globals and
the names ``setup`` defined) - tensors and their gradients, modules' parameters, buffers and gradients,
optimizers' state, and tensors held in lists, tuples and dicts there. Then the clock is read. What PyTorch's
timer spends synchronizing a GPU, this one spends on that evaluation.
"""
from __future__ import annotations

import ast
import sys
import textwrap
import timeit
import types

import mlx.core as mx

from ..._tensor import Tensor
from . import common

__all__ = ["Timer"]

_SYNC = "__lucid_benchmark_eval__"


def _is_module(obj) -> bool:
    """An nn.Module, by its methods (lucid.nn imports lucid.distributed, which imports lucid.utils: no import)."""
    return (not isinstance(obj, (type, types.ModuleType)) and callable(getattr(obj, "parameters", None))
            and callable(getattr(obj, "buffers", None)) and isinstance(getattr(obj, "_modules", None), dict))


def _arrays(obj, out: list) -> None:
    """The MLX arrays of a tensor (and its gradient), a module, an optimizer, or a container of tensors."""
    if isinstance(obj, Tensor):
        out.append(obj.mlx)
        if (obj.is_leaf or obj.retains_grad) and obj.grad is not None:  # (a non-leaf has none: no warning)
            out.append(obj.grad.mlx)
    elif _is_module(obj):
        for t in (*obj.parameters(), *obj.buffers()):
            _arrays(t, out)
    elif isinstance(getattr(obj, "param_groups", None), list) and isinstance(getattr(obj, "state", None), dict):
        for state in obj.state.values():  # an optimizer's (lucid.optim sits beside lucid.utils: not imported)
            _arrays(state, out)
    elif isinstance(obj, dict):
        for v in obj.values():
            if isinstance(v, Tensor):
                _arrays(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            if isinstance(v, Tensor):
                _arrays(v, out)
    elif isinstance(obj, mx.array):
        out.append(obj)


def _evaluate(*values, namespaces=()) -> None:
    arrays: list = []
    for v in values:
        _arrays(v, out=arrays)
    for namespace in namespaces:
        for name, v in namespace.items():
            if not name.startswith("__"):
                _arrays(v, arrays)
    mx.eval(arrays)


def _assigned_names(target) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for t in target.elts for n in _assigned_names(t)]
    return []


def _with_evaluation(stmt: str) -> str:
    """``stmt`` rewritten so that each run evaluates what it computed (see the module's docstring)."""
    tree = ast.parse(stmt)
    body = []
    for node in tree.body:
        if isinstance(node, ast.Expr):
            node = ast.Expr(ast.Call(ast.Name(_SYNC, ast.Load()), [node.value], []))
            body.append(node)
            continue
        body.append(node)
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
        names = [n for t in targets for n in _assigned_names(t)]
        if names:
            body.append(ast.Expr(ast.Call(ast.Name(_SYNC, ast.Load()), [ast.Name(n, ast.Load()) for n in names], [])))
    namespaces = ast.List([ast.Call(ast.Name("locals", ast.Load()), [], []),
                           ast.Call(ast.Name("globals", ast.Load()), [], [])], ast.Load())
    body.append(ast.Expr(ast.Call(ast.Name(_SYNC, ast.Load()), [], [ast.keyword("namespaces", namespaces)])))
    return ast.unparse(ast.fix_missing_locations(ast.Module(body, [])))


class Timer:
    """Times ``stmt`` (Python source) after ``setup``, with ``globals`` as its namespace (plus ``lucid``, and
    ``torch`` when lucid.compat.torch is loaded). ``label``, ``sub_label``, ``description`` and ``env`` name the
    measurement for ``Compare``; ``num_threads`` is recorded (MLX manages its own CPU threads)."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "", timer=timeit.default_timer,
                 globals: dict | None = None, label: str | None = None, sub_label: str | None = None,
                 description: str | None = None, env: str | None = None, num_threads: int = 1,
                 language="python"):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in ("python", "py") and getattr(language, "value", None) != "python":
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply be "
                             "moved to `setup`.")
        self._globals = dict(globals or {})
        self._globals.setdefault("lucid", sys.modules["lucid"])
        if "lucid.compat.torch" in sys.modules:  # PyTorch's timer gives the statement `torch`
            self._globals.setdefault("torch", sys.modules["lucid.compat.torch"])
        self._globals[_SYNC] = _evaluate
        stmt, setup = (self._clean(s) for s in (stmt, setup))
        self._timer = timeit.Timer(stmt=_with_evaluation(stmt), setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                          sub_label=sub_label, description=description, env=env,
                                          num_threads=num_threads)

    @staticmethod
    def _clean(code: str) -> str:
        code = textwrap.dedent(code)
        return (code[1:] if code and code[0] == "\n" else code).rstrip()

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """Run ``stmt`` ``number`` times (after a warm-up of ``number // 100`` runs, at least 2): one measurement."""
        self._timeit(number=max(int(number // 100), 2))
        return common.Measurement(number_per_run=number, raw_times=[self._timeit(number=number)],
                                  task_spec=self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1):
        """timeit's ``repeat``: replaced by ``blocked_autorange`` (PyTorch's error)."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        """timeit's ``autorange``: replaced by ``blocked_autorange`` (PyTorch's error)."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _estimate_block_size(self, min_run_time: float) -> int:
        """Runs per measurement: grown tenfold until the timer's own overhead is under 0.01% of a block (and a
        block takes a thousandth of ``min_run_time``), or a block alone takes ``min_run_time``."""
        overhead = sorted(self._timeit(0) for _ in range(5))[2]
        number = 1
        while True:
            taken = self._timeit(number)
            if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) or taken > min_run_time \
                    or number * 10 > 2147483647:
                return number
            number *= 10

    def _measurement_loop(self, number: int, stop, min_run_time: float, max_run_time: float | None,
                          callback) -> list[float]:
        total, times, can_stop = 0.0, [], False
        while total < min_run_time or not can_stop:
            spent = self._timeit(number)
            times.append(spent)
            total += spent
            if callback:
                callback(number, spent)
            can_stop = stop(times)
            if max_run_time and total > max_run_time:
                break
        return times

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> common.Measurement:
        """Blocks of runs (the block size chosen so the timer's overhead is negligible) until ``min_run_time``
        seconds are spent: one measurement per block. ``callback(number, time)`` is called after each block."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda times: True, min_run_time, None, callback)
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback=None) -> common.Measurement:
        """Blocks of runs until their IQR / median is under ``threshold`` (with more than 3 blocks and
        ``min_run_time`` spent) or ``max_run_time`` is spent."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times: list[float]) -> bool:
            return len(times) > 3 and common.Measurement(number, times, self._task_spec).meets_confidence(threshold)

        times = self._measurement_loop(number, stop, min_run_time, max_run_time, callback)
        return common.Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)
