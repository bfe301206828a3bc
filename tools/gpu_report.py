"""OUTDIR/report.md from what tools/gpu_check.sh left in OUTDIR: status.tsv (stage, status, seconds), logs/*.log,
bench.md. Usage: ``python tools/gpu_report.py OUTDIR DEVICE``."""
from __future__ import annotations

import datetime
import os
import re
import sys

TEST_OUTCOMES = ("PASSED", "FAILED", "ERROR", "SKIPPED", "XFAIL", "XPASS")


def read(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def test_counts(log: str) -> tuple[dict, list]:
    """Outcome counts and the failed tests, from pytest -v lines (so a run cut off by its limit is counted too)."""
    counts = dict.fromkeys(TEST_OUTCOMES, 0)
    failed = []
    for m in re.finditer(r"^(tests/\S+::\S+(?: \S+)*?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b", log, re.M):
        counts[m.group(2)] += 1
        if m.group(2) in ("FAILED", "ERROR"):
            failed.append(m.group(1))
    return counts, failed


def summary(stage: str, log: str) -> str:
    """The line that says how a stage went."""
    if stage == "tests":
        counts, _ = test_counts(log)
        last = [ln for ln in log.splitlines() if re.match(r"^=+ .*(passed|failed|error).* =+$", ln)]
        return ", ".join(f"{n} {k.lower()}" for k, n in counts.items() if n) + (f" ({last[-1].strip('= ')})"
                                                                              if last else " (no final summary)")
    if stage.startswith("train_"):
        done = [ln for ln in log.splitlines() if "after" in ln and "steps" in ln]
        return done[-1].strip() if done else ""
    if stage == "env":
        return "; ".join(ln.strip() for ln in log.splitlines() if ln.startswith(("device", "float64", "gpu available",
                                                                                  "torch", "mlx ")))
    if stage == "bench":
        return "tables below (bench.md)" if "## Time per training step" in log or log else ""
    return log.strip().splitlines()[-1] if log.strip() else ""


def main(out: str, device: str) -> None:
    rows = [ln.split("\t") for ln in read(os.path.join(out, "status.tsv")).splitlines() if ln.strip()]
    logs = {name: read(os.path.join(out, "logs", f"{name}.log")) for name, *_ in rows}
    lines = ["# lucid GPU check", "",
             f"{datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}, device `{device}` "
             f"(`tools/gpu_check.sh`; logs in `logs/`)", "",
             "| stage | status | seconds | summary |", "|---|---|---|---|"]
    for name, status, seconds in rows:
        text = summary(name, logs[name]).replace("|", "\\|")
        lines.append(f"| {name} | {status} | {seconds} | {text} |")
    lines.append("")
    if "env" in logs:
        lines += ["## Environment", "", "```", logs["env"].strip(), "```", ""]
    if "tests" in logs:
        _, failed = test_counts(logs["tests"])
        if failed:
            lines += [f"## Failed tests ({len(failed)})", ""] + [f"- `{t}`" for t in failed[:200]] + [""]
        slow = re.search(r"=+ slowest \d+ durations =+\n(.*?)(?:\n\n|\n=)", logs["tests"], re.S)
        if slow:
            lines += ["## Slowest tests", "", "```", slow.group(1).strip(), "```", ""]
    for name, status, _ in rows:
        if status != "ok" and not status.startswith("skipped"):
            tail = "\n".join(logs[name].rstrip().splitlines()[-40:])
            lines += [f"## {name}: {status}, last lines of logs/{name}.log", "", "```", tail, "```", ""]
    bench = read(os.path.join(out, "bench.md"))
    if bench:
        lines += ["## Benchmark (bench.md)", "", bench.replace("# lucid benchmarks", "", 1).strip(), ""]
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "gpu")
