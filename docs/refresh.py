"""Every number, table and figure the README and the docs quote, made from runs: ``python -m docs.refresh``.

    python -m docs.refresh                  # everything: all zoo models (about 30 min on 2 cores), the surface count
    python -m docs.refresh zoo mlp lenet5   # these zoo models only (the others keep their last measurement)
    python -m docs.refresh surface          # PyTorch-surface coverage (needs torch installed)
    python -m docs.refresh render           # only rewrite the generated blocks from docs/measurements.json

Each zoo model is trained as a user trains it (``python -m lucid train MODEL`` in a fresh process, default options)
into a temporary folder; its result, steps, training and total time, the load average and the machine and date go
to ``docs/measurements.json``, and its figure to ``docs/zoo/``. The README's and docs' generated blocks, between
``<!-- refresh:NAME -->`` and ``<!-- /refresh:NAME -->``, are then rendered from that file. tests/test_refresh.py
checks that every block is what the file renders and every figure is the one recorded, so a number edited by hand,
or a measurement not rendered, fails the tests. Benchmark numbers are not copied anywhere: bench/RESULTS.md, which
``python -m bench`` writes with its machine and date, is the one place they live.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MEASUREMENTS = ROOT / "docs" / "measurements.json"
FIGURES = ROOT / "docs" / "zoo"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# What the zoo table says of each model: its data, and its result phrased from the keys of its evaluate() dict.
ZOO = {
    "mlp": ("bundled digits", "test accuracy {test_acc:.3f}"),
    "lenet5": ("bundled digits", "test accuracy {test_acc:.3f}"),
    "resnet18": ("generated shapes", "test accuracy {test_acc:.2f} (chance 0.17)"),
    "vit": ("generated shapes", "test accuracy {test_acc:.2f} (chance 0.17)"),
    "gpt": ("tiny Shakespeare", "validation loss {test_loss:.2f} nats/char (perplexity {test_ppl:.1f})"),
    "lstm_lm": ("tiny Shakespeare", "validation loss {test_loss:.2f} nats/char (perplexity {test_ppl:.1f})"),
    "vae": ("bundled digits", "test negative ELBO {test_neg_elbo:.1f} nats/digit"),
    "dcgan": ("bundled digits", "pixel Fréchet distance to the test digits {test_pixel_fd:.2f}"),
    "realnvp": ("generated two-moons",
                "test negative log-likelihood {test_nll:.2f} nats/point (a Gaussian fit: {test_nll_gaussian_fit:.2f})"),
    "ddpm": ("bundled digits", "pixel Fréchet distance to the test digits {test_pixel_fd:.2f}"),
    "maml": ("generated sine tasks", "query MSE {test_mse_0step:.2f} before, {test_mse_1step:.2f} after one "
             "adaptation step ({test_mse_10step:.2f} after ten)"),
    "pinn": ("Poisson's equation, unit square", "relative L2 error {test_rel_l2:.1e} vs the exact solution"),
}


# ------------------------------------------------------------------------------------------------------ measuring
def machine() -> dict:
    """What the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import mlx.core as mx
    from lucid import _blas, __version__
    return {"cpu": cpu, "cores": os.cpu_count(), "system": f"{platform.system()} {platform.release()}",
            "python": platform.python_version(), "mlx": mx.__version__, "lucid": __version__,
            "blas": _blas.describe()}


def run_model(name: str, out: Path, extra: list[str] = ()) -> dict:
    """Train one zoo model with ``lucid train`` in a fresh process; its measurement (the run stays in ``out``)."""
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "lucid", "train", name, "--quiet", "--out", str(out), *extra],
                   check=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    total = time.perf_counter() - start
    config = json.loads((out / "config.json").read_text())
    return {"steps": config["step"], "train_time_s": config["train_time_s"], "total_s": round(total, 1),
            "load": [round(load_before, 1), round(os.getloadavg()[0], 1)], "result": config["result"],
            "date": datetime.date.today().isoformat()}


def refresh_zoo(names: list[str], data: dict) -> None:
    from lucid.cli.recipes import RECIPES
    for name in names or list(ZOO):
        print(f"docs.refresh: training {name} ...", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            record = run_model(name, Path(tmp) / name)
            figure = RECIPES[name].figure
            if figure.endswith(".png"):
                target = FIGURES / f"{name}_{figure}"
                shutil.copyfile(Path(tmp) / name / figure, target)
                record["figure"] = {"file": target.name, "sha256": sha256(target)}
        data.setdefault("zoo", {})[name] = {**record, "machine": machine()}
        save(data)  # after each model: a long refresh stopped half-way keeps what it measured


def refresh_surface(data: dict) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    import test_torch_surface as surface
    rows = {}
    for ns in surface.NAMESPACES:
        present, total, _ = surface.coverage(ns)
        rows[ns or "<top>"] = [present, total]
    data["surface"] = {"namespaces": rows, "date": datetime.date.today().isoformat(), "machine": machine()}
    save(data)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load() -> dict:
    return json.loads(MEASUREMENTS.read_text()) if MEASUREMENTS.exists() else {}


def save(data: dict) -> None:
    MEASUREMENTS.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


# ------------------------------------------------------------------------------------------------------ rendering
def _where(record: dict) -> str:
    m = record["machine"]
    blas = " ".join(m["blas"].split()[:2])  # "OpenBLAS 0.3.21", "reference BLAS" ...
    return f"{m['cpu']}, {m['cores']} cores, {m['system'].split()[0]}, Python {m['python']}, MLX {m['mlx']}, {blas}"


def render_zoo_table(data: dict) -> str:
    zoo = data.get("zoo", {})
    lines = ["| model | data | command | result reached | time (load average) |", "|---|---|---|---|---|"]
    for name, (what, result) in ZOO.items():
        r = zoo.get(name)
        if r is None:
            continue
        time_text = (f"{r['steps']} steps, {r['train_time_s']:.0f} s training, {r['total_s']:.0f} s in all "
                     f"({r['load'][0]:g}-{r['load'][1]:g})")
        lines.append(f"| {name} | {what} | `lucid train {name}` | {result.format(**r['result'])} | {time_text} |")
    dates = sorted({r["date"] for r in zoo.values()})
    machines = sorted({_where(r) for r in zoo.values()})
    span = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    lines.append("")
    lines.append(f"Measured by `python -m docs.refresh` ({span}; {'; '.join(machines)}), each model trained with "
                 "`lucid train MODEL` and no options; timings move with the machine's load, results do not.")
    return "\n".join(lines)


def render_quickstart(data: dict) -> str:
    r = data["zoo"]["mlp"]
    return (f"`mlp: test_acc {r['result']['test_acc']:.4f} after {r['steps']} steps "
            f"({r['train_time_s']} s training); outputs in runs/mlp`")


def render_surface(data: dict) -> str:
    # in one order whatever the file's (the torch namespace first, the Tensor methods last, the rest by name)
    rows = dict(sorted(data["surface"]["namespaces"].items(), key=lambda kv: (kv[0] != "<top>", kv[0] == "Tensor",
                                                                            kv[0])))
    present = sum(p for p, _ in rows.values())
    total = sum(t for _, t in rows.values())
    head = (f"Of the in-scope names lucid has {100 * present / total:.1f}% ({present} of {total}; counted "
            f"{data['surface']['date']} by `python -m docs.refresh surface`):")
    cells = [f"`{'torch' if ns == '<top>' else 'Tensor methods' if ns == 'Tensor' else ns}` | "
             f"{100 * p / t:.0f}% ({p}/{t})" for ns, (p, t) in rows.items()]
    cells += [" | "] * (-len(cells) % 3)
    table = ["| namespace | coverage | namespace | coverage | namespace | coverage |", "|---|---|---|---|---|---|"]
    table += ["| " + " | ".join(cells[i:i + 3]) + " |" for i in range(0, len(cells), 3)]
    return head + "\n\n" + "\n".join(table)


BLOCKS = {"zoo": render_zoo_table, "quickstart": render_quickstart, "surface": render_surface}
_BLOCK = re.compile(r"(<!-- refresh:(\w+) -->)(.*?)(<!-- /refresh:\2 -->)", re.S)


def blocks(text: str):
    """(name, content) of each generated block in a page."""
    return [(m.group(2), m.group(3)) for m in _BLOCK.finditer(text)]


def rendered(name: str, content: str, data: dict) -> str:
    """A block's content as the measurements render it (inline blocks stay inline)."""
    body = BLOCKS[name](data)
    return body if "\n" not in content else f"\n{body}\n"


def render(data: dict) -> list[Path]:
    """Rewrite every generated block from ``data``; the pages changed."""
    changed = []
    for page in PAGES:
        text = page.read_text()
        new = _BLOCK.sub(lambda m: m.group(1) + rendered(m.group(2), m.group(3), data) + m.group(4), text)
        if new != text:
            page.write_text(new)
            changed.append(page)
    return changed


def main(argv: list[str]) -> int:
    what, names = (argv[0], argv[1:]) if argv else ("all", [])
    if what not in ("all", "zoo", "surface", "render"):
        print(__doc__)
        return 2
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        print(f"docs.refresh: not zoo models: {', '.join(unknown)} (one of: {', '.join(ZOO)})", file=sys.stderr)
        return 2
    data = load()
    if what in ("all", "zoo"):
        refresh_zoo(names, data)
    if what in ("all", "surface"):
        refresh_surface(data)
    for page in render(data):
        print(f"docs.refresh: rewrote {page.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
