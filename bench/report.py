"""Turn the measurements into markdown tables, a targets table (the issue's targets, met or not), and a chart."""
from __future__ import annotations

from .harness import IMPLEMENTATIONS, UNCHECKED, WorkloadResult
from .timing import Stat, paired_ratio

NAMES = {"lucid": "lucid eager", "mlx": "MLX eager", "lucid.compile": "lucid.compile", "mx.compile": "mx.compile",
         "torch": "PyTorch eager", "compiled model": "lucid eager loop, lucid.compile(model)"}
COMPILED_TARGET = 1.0
COMPILED_TORCH_TARGET = 1.0  # issue 21: a small program under lucid.compile at most PyTorch's eager time
CHECKS_TARGET = 1.03  # issue 9: index bounds checks cost at most 3% of a step
REDUCTIONS_TARGET = 1.02  # issue 19: accurate float reductions cost at most 2% of a step
PEAK_TARGET = 1.1
RECORDING_TARGET_US = 1.5
FLAT_TARGET = 1.5    # per-node cost of lucid's backward walk at the longest chain / at the shortest
GROWTH_TARGET = 1.2  # lucid / mx.grad (paired, fwd+bwd) at the longest chain over the same at the shortest


class Notes:
    """Errors and warnings collected while formatting, printed as numbered notes under the tables."""

    def __init__(self):
        self.items: list[str] = []

    def add(self, text: str) -> str:
        self.items.append(text)
        return f"[{len(self.items)}]"

    def markdown(self) -> str:
        return "\n".join(f"{i}. {t}" for i, t in enumerate(self.items, 1))


def _ratio(a, b) -> str:
    r = paired_ratio(a, b) if a and b else None
    return "—" if r is None else f"{r.median:.2f}× ({r.q1:.2f}–{r.q3:.2f})"


def _mb(n: int) -> str:
    return f"{n / 2 ** 20:.2f}"


def timing_table(results: list[WorkloadResult], notes: Notes) -> str:
    impls = [i for i in IMPLEMENTATIONS if any(i in r.samples or i in r.errors for r in results)]
    cm = "compiled model" in impls  # the small programs: the eager loop around lucid.compile(model)
    out = ["| workload | " + " | ".join(f"{NAMES[i]} ms" for i in impls)
           + " | lucid / MLX eager | lucid.compile / mx.compile | lucid / PyTorch eager |"
           + (" compiled model / PyTorch eager |" if cm else "") + " same result |",
           "|---|" + "---:|" * len(impls) + "---:|---:|---:|" + ("---:|" if cm else "") + "---|"]
    for r in results:
        cells = []
        for i in impls:
            if i in r.samples:
                cells.append(Stat(r.samples[i]).fmt(1e3, 3 if Stat(r.samples[i]).median < 1e-3 else 2))
            elif i in r.errors:
                cells.append("error " + notes.add(f"{NAMES[i]} on {r.title}: `{r.errors[i]}`"))
            else:
                cells.append("—")
        bad = {i: d for i, d in r.mismatch.items() if not r.agree.get(i, True)}
        if bad:
            same = "WARNING " + notes.add(f"{r.title}: results differ from lucid eager's over the first steps: "
                                          + ", ".join(f"{NAMES[i]} max relative difference {d:.1e}"
                                                      for i, d in bad.items()))
        elif r.mismatch:
            same = f"yes (≤{max(r.mismatch.values()):.0e})"
        else:
            same = "not checked"
        out.append(f"| {r.title} | " + " | ".join(cells) + f" | {_ratio(r.samples.get('lucid'), r.samples.get('mlx'))}"
                   f" | {_ratio(r.samples.get('lucid.compile'), r.samples.get('mx.compile'))}"
                   f" | {_ratio(r.samples.get('lucid'), r.samples.get('torch'))} |"
                   + (f" {_ratio(r.samples.get('compiled model'), r.samples.get('torch'))} |" if cm else "")
                   + f" {same} |")
    return "\n".join(out)


def checks_table(results: list[WorkloadResult]) -> str:
    """The cost of lucid's index bounds checks: each step with the checks / the same step without them."""
    out = ["| workload | time in the checks per eager step | share of the step | lucid eager, checks on / off | "
           "lucid.compile, checks on / off |", "|---|---:|---:|---:|---:|"]
    for r in results:
        if any(u in r.samples for u in UNCHECKED):
            share = _check_share(r)
            out.append(f"| {r.title} | {r.extra.get('check_s', 0) * 1e6:.1f} µs | "
                       f"{'—' if share is None else f'{share:.2%}'} | "
                       f"{_ratio(r.samples.get('lucid'), r.samples.get(UNCHECKED[0]))} | "
                       f"{_ratio(r.samples.get('lucid.compile'), r.samples.get(UNCHECKED[1]))} |")
    return "\n".join(out)


def _check_share(r: WorkloadResult) -> float | None:
    """The checks' own time per step (timed from inside) over lucid eager's median step."""
    if "check_s" not in r.extra or not r.samples.get("lucid"):
        return None
    return r.extra["check_s"] / Stat(r.samples["lucid"]).median


def memory_table(peaks: dict, titles: dict, notes: Notes) -> str:
    out = ["| workload | lucid eager MiB | MLX eager MiB | lucid / MLX | lucid.compile MiB | mx.compile MiB | "
           "lucid.compile / mx.compile | rise during the step, lucid / MLX MiB |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for key, p in peaks.items():
        def cell(name, field="peak"):
            v = p.get(name)
            if isinstance(v, str):
                return "error " + notes.add(f"peak memory of {NAMES[name]} on {titles[key]}: `{v}`")
            return "—" if v is None else _mb(v[field])
        out.append(f"| {titles[key]} | {cell('lucid')} | {cell('mlx')} | {_peak_ratio(p, 'lucid', 'mlx')} | "
                   f"{cell('lucid.compile')} | {cell('mx.compile')} | {_peak_ratio(p, 'lucid.compile', 'mx.compile')}"
                   f" | {cell('lucid', 'rise')} / {cell('mlx', 'rise')} |")
    return "\n".join(out)


def _peak_ratio_value(p: dict, a: str, b: str) -> float | None:
    if isinstance(p.get(a), dict) and isinstance(p.get(b), dict):
        return p[a]["peak"] / p[b]["peak"]
    return None


def _peak_ratio(p, a, b) -> str:
    r = _peak_ratio_value(p, a, b)
    return "—" if r is None else f"{r:.2f}×"


def after_backward_table(after: dict, titles: dict, notes: Notes) -> str:
    out = ["| workload | active before forward MiB | after backward + eval of grads + del MiB | after gc.collect() MiB "
           "| difference bytes | peak during MiB | grads MiB | returned |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for key, m in after.items():
        if isinstance(m, str):
            out.append(f"| {titles[key]} | error {notes.add(f'active memory on {titles[key]}: `{m}`')} |"
                       + " |" * 6)
            continue
        diff = m["after"] - m["before"]
        out.append(f"| {titles[key]} | {_mb(m['before'])} | {_mb(m['after'])} | {_mb(m['after_gc'])} | {diff:+,} | "
                   f"{_mb(m['peak'])} | {_mb(m['grads'])} | {'yes' if diff <= 0 else 'no'} |")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------- targets
def _short(title: str) -> str:
    """A workload's name without its details (the part before the first comma outside parentheses)."""
    depth = 0
    for i, c in enumerate(title):
        depth += (c == "(") - (c == ")")
        if c == "," and depth == 0:
            return title[:i]
    return title


def _met(ok: bool | None) -> str:
    return "—" if ok is None else ("met" if ok else "**not met**")


def targets_table(results: list[WorkloadResult], eager_targets: dict, peaks: dict, titles: dict,
                  recording: dict | None, flat: dict | None, after: dict, reductions: dict | None = None,
                  torch_targets: dict | None = None) -> str:
    """``recording``: µs over MLX per op, keys "build" and "eval"; ``flat``: per-node growth from the shortest to the
    longest chain of "lucid" (fwd+bwd), "mx.grad" and "walk" (lucid's engine alone), the paired ratio lucid / mx.grad
    at both ("ratio_first", "ratio_last"), and the two lengths; ``reductions``: bench/reductions.py's measure();
    ``torch_targets``: per workload, the bound on lucid eager / PyTorch eager (lucid.compile's of the whole step, and
    the eager loop's around a compiled model, are ≤ 1.0×)."""
    rows = []
    for r in results:
        target = (torch_targets or {}).get(r.key)
        if target is None or not r.samples.get("torch"):
            continue
        for impl, bound in (("lucid", target), ("lucid.compile", COMPILED_TORCH_TARGET),
                            ("compiled model", COMPILED_TORCH_TARGET)):
            a, b = r.samples.get(impl), r.samples["torch"]
            ratio = paired_ratio(a, b) if a else None
            rows.append((f"{NAMES[impl]} / PyTorch eager ≤ {bound:.1f}×: {_short(r.title)}",
                         _ratio(a, b) if ratio else "error: " + r.errors.get(impl, "not run"),
                         _met(None if ratio is None else ratio.median <= bound)))
    for r in results:
        target = eager_targets.get(r.key)
        if target is None:
            continue
        a, b = r.samples.get("lucid"), r.samples.get("mlx")
        ratio = paired_ratio(a, b) if a and b else None
        rows.append((f"eager lucid / MLX ≤ {target:.2f}×: {_short(r.title)}", _ratio(a, b),
                     _met(None if ratio is None else ratio.median <= target)))
    for r in results:
        a, b = r.samples.get("lucid.compile"), r.samples.get("mx.compile")
        ratio = paired_ratio(a, b) if a and b else None
        measured = _ratio(a, b) if ratio else "error: " + r.errors.get("lucid.compile", r.errors.get("mx.compile",
                                                                                                      "not run"))
        rows.append((f"lucid.compile / mx.compile ≤ {COMPILED_TARGET:.1f}×: {_short(r.title)}", measured,
                     _met(None if ratio is None else ratio.median <= COMPILED_TARGET)))
    for r in results:
        share = _check_share(r)
        if share is not None:
            rows.append((f"index bounds checks ≤ 3% of a step (time inside the checks / lucid eager step; the "
                         f"with/without ratios are in their table): {_short(r.title)}", f"{share:.2%}",
                         _met(share <= CHECKS_TARGET - 1)))
    for key, p in peaks.items():
        for a, b in (("lucid", "mlx"), ("lucid.compile", "mx.compile")):
            r = _peak_ratio_value(p, a, b)
            rows.append((f"peak memory {NAMES[a]} / {NAMES[b]} ≤ {PEAK_TARGET}×: {_short(titles[key])}",
                         "—" if r is None else f"{r:.2f}×", _met(None if r is None else r <= PEAK_TARGET)))
    if recording is not None:
        rows.append((f"recording an op ≤ {RECORDING_TARGET_US} µs over the MLX call (chain of 10³ ops, graph build "
                     "only; with eval in parentheses)", f"{recording['build']:+.2f} µs ({recording['eval']:+.2f} µs)",
                     _met(recording["build"] <= RECORDING_TARGET_US)))
    if flat:
        span = f"N = {flat['last']:,} / N = {flat['first']:,}"
        rows.append((f"backward time per node flat: lucid's backward walk per node, {span} ≤ {FLAT_TARGET}×",
                     f"{flat['walk']:.2f}×", _met(flat["walk"] <= FLAT_TARGET)))
        rows.append((f"lucid fwd+bwd per node grows no faster than mx.grad's: (lucid / mx.grad at "
                     f"N = {flat['last']:,}) / (lucid / mx.grad at N = {flat['first']:,}) ≤ {GROWTH_TARGET} "
                     f"(fwd+bwd per node itself: lucid {flat['lucid']:.2f}×, mx.grad {flat['mx.grad']:.2f}×)",
                     f"{flat['ratio_last']:.2f}× / {flat['ratio_first']:.2f}× = "
                     f"{flat['ratio_last'] / flat['ratio_first']:.2f}",
                     _met(flat["ratio_last"] / flat["ratio_first"] <= GROWTH_TARGET)))
    for r in (reductions or {}).get("workloads", {}).values():
        inside = r["inside_s"] / Stat(r["samples"]["on"]).median
        rows.append((f"accurate reductions ≤ 2% of a step (time inside lucid._sums / lucid eager step, "
                     f"{r['blocked']} of {r['calls']} reductions blocked; the on/off ratios are in their table): "
                     f"{_short(r['title'])}", f"{inside:.2%}", _met(inside <= REDUCTIONS_TARGET - 1)))
    for title, r in (reductions or {}).get("sums", {}).items():
        rows.append((f"accurate reductions: lucid's sum / mx.sum, {title}", _ratio(r["samples"]["lucid"],
                     r["samples"]["mx.sum"]), "(measured)"))
    for key, m in after.items():
        if isinstance(m, dict):
            rows.append((f"active memory after backward (retain_graph=False) = before forward: {_short(titles[key])}",
                         f"{_mb(m['before'])} → {_mb(m['after'])} MiB", _met(m["after"] <= m["before"])))
    return "\n".join(["| target | measured (median, IQR) | |", "|---|---:|---|"]
                     + [f"| {t} | {m} | {ok} |" for t, m, ok in rows])


# ---------------------------------------------------------------------------------------------------- chart
def chart(results: list[WorkloadResult], chain_rows: list[dict] | None, path: str) -> bool:
    """Time per step relative to MLX eager (left) and backward µs per node against chain length (right)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, axes = plt.subplots(1, 2 if chain_rows else 1, figsize=(13 if chain_rows else 8, 4.5), squeeze=False)
    ax = axes[0][0]
    shown = [r for r in results if r.samples.get("mlx")]
    impls = [i for i in IMPLEMENTATIONS if any(i in r.samples for r in shown)]
    width = 0.8 / max(len(impls), 1)
    for j, impl in enumerate(impls):
        xs, ys = [], []
        for k, r in enumerate(shown):
            if r.samples.get(impl):
                xs.append(k + (j - (len(impls) - 1) / 2) * width)
                ys.append(paired_ratio(r.samples[impl], r.samples["mlx"]).median)
        ax.bar(xs, ys, width, label=NAMES[impl])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(shown)))
    ax.set_xticklabels([r.key for r in shown])
    ax.set_ylabel("time per step / MLX eager's")
    ax.set_title("Training steps and HVP, relative to MLX eager (lower is faster)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    if chain_rows:
        ax = axes[0][1]
        ns = [r["n"] for r in chain_rows]
        for key, label in (("lucid", "lucid fwd+bwd"), ("mx.grad", "mx.grad"), ("walk", "lucid backward walk"),
                           ("torch", "PyTorch fwd+bwd")):
            if all(r.get(key) for r in chain_rows):
                ax.plot(ns, [Stat(r[key]).median * 1e6 for r in chain_rows], marker="o", label=label)
        ax.set_xscale("log")
        ax.set_xlabel("nodes in the chain")
        ax.set_ylabel("µs per node")
        ax.set_ylim(bottom=0)
        ax.set_title("Backward over a chain of elementwise ops")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
