"""A run directory's checkpoint: written as one set, read back checked.

The checkpoint is ``model.safetensors`` (and ``NAME.safetensors`` for a recipe's other modules),
``optimizer.safetensors``, ``metrics.csv`` and ``config.json``. Its files must come from the same step: weights of
step 4 beside the optimizer state of step 2 would resume into a run that no uninterrupted run matches. So a
checkpoint is written whole into a staging folder beside the old one (``.checkpoint.partial``), which one atomic
rename turns into ``.checkpoint.ready``: that rename is the moment the new checkpoint exists. The files are then
moved into the run directory and the folder removed. A stop before the rename (a second Ctrl-C, a crash) leaves the
old set untouched and a partial folder that the next checkpoint deletes; a stop after it leaves a complete ready
folder, whose moves every reader of the run (``read_config``) finishes first.

``config.json``, the set's manifest, records the step and a SHA-256 of every safetensors file; resuming refuses a
directory whose files disagree with it (files copied together from different checkpoints by hand).
"""
from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import shutil
from pathlib import Path

import lucid

from .recipes.base import UsageError

STAGING = ".checkpoint.partial"
READY = ".checkpoint.ready"


def weights_file(module_name: str) -> str:
    return "model.safetensors" if module_name == "model" else f"{module_name}.safetensors"


# ---------------------------------------------------------------------------------------------------- writing
def write_checkpoint(run: Path, files: dict, config: dict) -> None:
    """Write the checkpoint: ``files`` maps each file name to ``write(path)``; ``config`` becomes config.json with
    the files' digests. Either every file is replaced or none is."""
    finish_checkpoint(run)
    staging = run / STAGING
    if staging.exists():  # what an interrupted checkpoint left: never part of any set
        shutil.rmtree(staging)
    staging.mkdir()
    try:
        for name, write in files.items():
            write(staging / name)
        digests = {name: digest(staging / name) for name in files if name.endswith(".safetensors")}
        (staging / "config.json").write_text(json.dumps({**config, "files": digests}, indent=2) + "\n")
        os.replace(staging, run / READY)  # the commit: one rename
    except BaseException:  # a second Ctrl-C included: the previous checkpoint stays the run's
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finish_checkpoint(run)


def finish_checkpoint(run: Path) -> None:
    """Move a committed checkpoint's files into ``run`` (config.json last); picks up where a stopped move left
    off."""
    ready = run / READY
    if not ready.is_dir():
        return
    for name in sorted(os.listdir(ready), key=lambda n: n == "config.json"):
        os.replace(ready / name, run / name)
    ready.rmdir()


def write_metrics(path: Path, rows: list[dict]) -> None:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else r[k]) for k in keys})


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def ensure_writable(out: Path) -> None:
    """Create ``out`` and prove a file can be written there, before any training."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".lucid-write-test"
        probe.write_text("ok")
        probe.unlink()
    except OSError as e:
        raise UsageError(f"cannot write to --out {out}: {e.strerror or e}") from None


# ---------------------------------------------------------------------------------------------------- reading
# config.json's training arguments: what each must be (the command line's own rules), for a file edited by hand
_ARGS = {
    "steps": ("an integer >= 1", lambda v: _is_int(v) and v >= 1),
    "batch_size": ("an integer >= 1", lambda v: _is_int(v) and v >= 1),
    "eval_every": ("null or an integer >= 1", lambda v: v is None or _is_int(v) and v >= 1),
    "lr": ("a finite number > 0", lambda v: _is_number(v) and math.isfinite(v) and v > 0),
    "seed": ("an integer in [0, 2**64)", lambda v: _is_int(v) and 0 <= v < 1 << 64),
    "compile": ("true or false", lambda v: isinstance(v, bool)),
    "amp": ('null, "bf16" or "fp16"', lambda v: v in (None, "bf16", "fp16")),
    "device": ('null, "cpu" or "gpu"', lambda v: v in (None, "cpu", "gpu")),
}


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def read_config(run: Path) -> dict:
    """``run``'s config.json, checked: a JSON object with the model's name, its constructor arguments and the
    training arguments (each as the command line would accept it)."""
    try:
        finish_checkpoint(run)
    except OSError as e:
        raise UsageError(f"{run}: cannot complete its last checkpoint ({e.strerror or e})") from None
    path = run / "config.json"
    if not path.is_file():
        raise UsageError(f"{run} is not a lucid run directory (no config.json; a run is written by lucid train)")
    try:
        config = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise UsageError(f"{path} is not a readable JSON file ({e}); the run's configuration is lost: train "
                         f"again into another --out") from None

    def bad(what: str):
        return UsageError(f"{path} is damaged: {what} (lucid train writes it; train again into another --out)")
    if not isinstance(config, dict):
        raise bad(f"expected a JSON object, found {type(config).__name__}")
    from .recipes import RECIPES
    if not isinstance(config.get("model"), str) or config["model"] not in RECIPES:
        raise bad(f'"model" is {config.get("model")!r}, not one of the zoo\'s models')
    if not isinstance(config.get("files", {}), dict):
        raise bad('"files" is not a JSON object')
    for key, kind in (("model_config", dict), ("args", dict), ("result", dict)):
        if not isinstance(config.setdefault(key, {}), kind):
            raise bad(f'"{key}" is not a JSON object')
    if not _is_int(config.get("step")) or config["step"] < 0:
        raise bad(f'"step" is {config.get("step")!r}, not an integer >= 0')
    if not _is_number(config.get("train_time_s", 0.0)) or not all(map(_is_number, config["result"].values())):
        raise bad('"train_time_s" and the values of "result" must be numbers')
    defaults = RECIPES[config["model"]]().default_config() if config["model_config"] else {}
    for key, value in config["model_config"].items():
        if key not in defaults or not _same_kind(value, defaults[key]):
            raise bad(f'"model_config" has {key}={value!r}; {config["model"]} takes '
                      + ", ".join(f"{k} ({type(v).__name__})" for k, v in defaults.items()))
    for key, value in config["args"].items():
        if key in _ARGS and not _ARGS[key][1](value):
            raise bad(f'"args" has {key}={value!r}, expected {_ARGS[key][0]}')
    return config


def _same_kind(value, default) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, float):
        return _is_number(value)
    if isinstance(default, list):
        return isinstance(value, list) and (not default or all(_same_kind(v, default[0]) for v in value))
    return default is None or type(value) is type(default)


def build(recipe) -> dict:
    """``recipe.build()``; a constructor argument it refuses (from a config.json edited by hand) is a UsageError."""
    try:
        return recipe.build()
    except (AssertionError, RuntimeError, TypeError, ValueError, ZeroDivisionError) as e:
        raise UsageError(f"cannot build {recipe.name} from the model_config of config.json, {recipe.config}: "
                         f"{type(e).__name__}: {e}") from None


def read_metrics(run: Path, up_to_step: int) -> list[dict]:
    """metrics.csv's rows up to ``up_to_step`` (none if the file is absent)."""
    path = run / "metrics.csv"
    if not path.is_file():
        return []
    try:
        with open(path, newline="") as f:
            rows = [{k: (None if v == "" else float(v)) for k, v in r.items()} for r in csv.DictReader(f)]
        for r in rows:
            r["step"] = int(r["step"])
    except (OSError, UnicodeDecodeError, csv.Error, KeyError, TypeError, ValueError) as e:
        raise UsageError(f"{path} is damaged ({type(e).__name__}: {e}); delete it to resume without the "
                         f"earlier rows") from None
    return [r for r in rows if r["step"] <= up_to_step]


def read_file(path: Path, what: str):
    """``lucid.load(path)``, or a UsageError naming the file and its problem (missing, truncated, corrupt)."""
    if not path.is_file():
        raise UsageError(f"cannot {what}: {path} is missing")
    try:
        return lucid.load(path)
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot {what}: {e}") from None


def load_weights(modules: dict, run: Path, model_name: str, saved_name: str) -> None:
    """Load every module's safetensors file from ``run`` (strict), naming the mismatched keys on failure."""
    for name, module in modules.items():
        state = read_file(run / weights_file(name), f"load {model_name} from {run}")
        try:
            module.load_state_dict(state)
        except RuntimeError as e:
            origin = f" (a checkpoint of {saved_name!r})" if saved_name != model_name else ""
            raise UsageError(f"cannot load {model_name} from {run}{origin}: {e}") from None


def read_training_state(run: Path, saved: dict, optimizers: dict, schedulers: dict) -> dict:
    """optimizer.safetensors, checked: its keys, and its step is config.json's."""
    path = run / "optimizer.safetensors"
    state = read_file(path, f"resume from {run}")
    names = {"optimizers": optimizers, "schedulers": schedulers}
    missing = [k for k in ("step", "rng_state", *names) if not isinstance(state, dict) or k not in state]
    missing += [f"{k}.{n}" for k, need in names.items() if k not in missing
                for n in need if not isinstance(state[k], dict) or n not in state[k]]
    if missing:
        raise UsageError(f"cannot resume from {run}: {path} lacks {', '.join(missing)} (it was not written by "
                         f"lucid train for this model)")
    rng, current = state["rng_state"], lucid.get_rng_state()
    if not isinstance(rng, lucid.Tensor) or rng.shape != current.shape or rng.dtype != current.dtype:
        raise UsageError(f"cannot resume from {run}: {path}'s rng_state is not lucid's generator state")
    if state["step"] != saved["step"]:
        raise UsageError(f"cannot resume from {run}: {path.name} is at step {state['step']} but config.json at "
                         f"step {saved['step']}; the files come from different checkpoints (start again, or into "
                         f"another --out)")
    return state


def check_set(run: Path, saved: dict) -> None:
    """Every safetensors file of ``run`` is the one config.json's checkpoint wrote (runs written before lucid
    recorded the digests are taken as they are)."""
    for name, expected in saved.get("files", {}).items():
        if (run / name).is_file() and digest(run / name) != expected:
            raise UsageError(f"cannot resume from {run}: {name} is not the file of the checkpoint of step "
                             f"{saved['step']} that config.json describes (replaced or changed since): the files "
                             f"come from different checkpoints (start again, or into another --out)")
