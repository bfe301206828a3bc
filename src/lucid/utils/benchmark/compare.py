"""``Compare``: many Measurements as tables, as PyTorch's ``torch.utils.benchmark.Compare`` prints them - one table
per ``label``, a row per ``sub_label`` (or statement) grouped by thread count, a column per ``description``, each
cell the median in one unit for the table; optionally digits trimmed to the significant ones, cells colored
against the best of their column (or row) and high-variance cells flagged."""
from __future__ import annotations

import collections
import enum
import math

from . import common

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(m: common.Measurement, scale: float) -> int:
    return math.ceil(math.log10(m.median / scale))


class _Column:
    """How one column's numbers are formatted: as many integer digits as its largest needs and, when trimming,
    as many decimals as its least precise measurement supports."""

    def __init__(self, results: list, scale: float, trim: bool, highlight_warnings: bool):
        present = [m for m in results if m is not None]
        self.highlight = highlight_warnings and any(m.has_warnings for m in present)
        self.trim = trim
        digits = [_leading_digits(m, scale) for m in present]
        decimals = min(max(m.significant_figures - d, 0) for m, d in zip(present, digits)) if trim else 1
        width = max(digits) + decimals + (1 if decimals else 0)
        self.template = f"{{:>{width}.{decimals}f}}{{:>{7 if self.highlight else 0}}}"

    def format(self, value: float | None, sigfigs: int, spread: float | None) -> str:
        if value is None:
            return " " * len(self.format(1, sigfigs, None))
        if self.trim:
            value = common.trim_sigfig(value, sigfigs)
        return self.template.format(value, f" (! {spread * 100:.0f}%)" if self.highlight and spread is not None
                                    else "")


def _color(segment: str, value: float, best: float) -> str:
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + segment + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + segment + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + segment + TERMINATE * 2
    if value >= best * 2:
        return BAD + segment + TERMINATE * 2
    return segment


class _Table:
    """The table of one label."""

    def __init__(self, results: list, colorize: Colorize, trim: bool, highlight_warnings: bool):
        self.results, self.colorize, self.highlight_warnings = results, colorize, highlight_warnings
        self.label = results[0].label
        self.unit, self.scale = common.select_unit(min(m.median for m in results))
        row_keys = common.ordered_unique((m.num_threads, m.env, m.as_row_name) for m in results)
        row_keys.sort(key=lambda key: key[:2])  # by threads and env; statements keep their order
        self.columns = common.ordered_unique(m.description for m in results)
        self.row_keys = row_keys
        cells = {((m.num_threads, m.env, m.as_row_name), m.description): m for m in results}
        self.rows = [[cells.get((key, col)) for col in self.columns] for key in row_keys]
        self.groups = [key[0] for key in row_keys]  # rows of one thread count are compared in colorize
        self.formats = [_Column([row[j] for row in self.rows], self.scale, trim, highlight_warnings)
                        for j in range(len(self.columns))]

    def _best(self, i: int) -> list:
        row = self.rows[i]
        if self.colorize == Colorize.ROWWISE:
            return [min(m.median for m in row if m is not None)] * len(row)
        if self.colorize == Colorize.COLUMNWISE:
            same = [r for r, g in zip(self.rows, self.groups) if g == self.groups[i]]
            return [min((r[j].median for r in same if r[j] is not None), default=None) for j in range(len(row))]
        return [None] * len(row)

    def render(self) -> str:
        envs = {m.env for m in self.results}
        env_width = max(len(e) for e in envs) if len(envs) > 1 else 0
        lines = [[""] + [c if c is not None else "" for c in self.columns]]
        previous = (None, "")
        for (threads, env, name), row in zip(self.row_keys, self.rows):
            shown_env = f"({env})" if len(envs) > 1 and (threads, env) != previous else ""
            previous = (threads, env)
            lines.append(["  " + shown_env.ljust(env_width + 4) + name] + [
                fmt.format(None if m is None else m.median / self.scale, 1 if m is None else m.significant_figures,
                           m.iqr / m.median if m is not None and m.has_warnings else None)
                for m, fmt in zip(row, self.formats)])
        widths = [max(len(line[j]) for line in lines) for j in range(len(lines[0]))]
        header = "  |  ".join(cell.center(w) for cell, w in zip(lines[0], widths))
        out, last_threads = [header], None
        for i, (line, (threads, _, _)) in enumerate(zip(lines[1:], self.row_keys)):
            if threads != last_threads:
                out.append(f"{threads} threads: ".ljust(len(header), "-"))
                last_threads = threads
            cells = [line[0].ljust(widths[0])]
            for cell, width, m, best in zip(line[1:], widths[1:], self.rows[i], self._best(i)):
                cell = cell.center(width)
                cells.append(_color(cell, m.median, best) if m is not None and best is not None else cell)
            out.append("  |  ".join(cells))
        warned = self.highlight_warnings and any(m.has_warnings for m in self.results)
        note = "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n" if warned else ""
        title = f"[{(' ' + (self.label or '') + ' ').center(len(header) - 2, '-')}]"
        return "\n".join([title, *out, "", f"Times are in {common.unit_to_english(self.unit)}s ({self.unit}).",
                          note])


class Compare:
    """Tables of many Measurements (``Compare(results).print()``); replicates of one task are merged first."""

    def __init__(self, results: list):
        self._results: list[common.Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results) -> None:
        """Add Measurements to those already held."""
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Show only the digits each column's measurements support."""
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Color each cell against the best of its column (or of its row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Flag the cells whose measurement has a high spread (IQR / median)."""
        self._highlight_warnings = True

    def print(self) -> None:
        """Print the tables."""
        print(str(self))

    def _render(self) -> list[str]:
        by_label: dict = collections.defaultdict(list)
        for m in common.Measurement.merge(self._results):
            by_label[m.label].append(m)
        return [_Table(group, self._colorize, self._trim_significant_figures, self._highlight_warnings).render()
                for group in by_label.values()]
