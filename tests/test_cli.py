"""The ``lucid`` command, run in-process through ``lucid.cli.main``: listing, training outputs, exact resume
(also after Ctrl-C), sampling and evaluating, and bad input."""
import csv
import io
import json
import os
import shutil
import signal
import sys

import numpy as np
import pytest

import lucid
from lucid.cli import main
from lucid.cli.recipes import RECIPES

PNG = b"\x89PNG\r\n\x1a\n"
ZOO = ["mlp", "lenet5", "resnet18", "vit", "gpt", "lstm_lm", "vae", "dcgan", "realnvp", "ddpm", "maml", "pinn"]


def _is_png(path):
    data = path.read_bytes()
    return data.startswith(PNG) and data.endswith(b"IEND\xaeB`\x82")


def _weights(run):
    return {k: v.numpy() for k, v in lucid.load(run / "model.safetensors").items()}


def _train(*args):
    return main(["train", *args, "--quiet"])


def test_models_lists_the_twelve_models(capsys):
    assert main(["models"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == ZOO
    assert all(len(line.split()) > 3 for line in lines)  # a name and a description


def test_train_writes_every_output(tmp_path, capsys):
    out = tmp_path / "mlp"
    assert _train("mlp", "--steps", "40", "--eval-every", "20", "--out", str(out)) == 0
    for name in ("model.safetensors", "optimizer.safetensors", "config.json", "metrics.csv"):
        assert (out / name).is_file(), name
    assert _is_png(out / "loss.png") and _is_png(out / "predictions.png")
    config = json.loads((out / "config.json").read_text())
    assert config["model"] == "mlp" and config["step"] == 40 and config["args"]["steps"] == 40
    assert 0.0 <= config["result"]["test_acc"] <= 1.0
    with open(out / "metrics.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["step"]) for r in rows] == list(range(2, 41, 2))
    assert rows[-1]["test_acc"] != "" and float(rows[-1]["train_loss"]) < float(rows[0]["train_loss"])
    state = lucid.load(out / "optimizer.safetensors")
    assert state["step"] == 40 and set(state) == {"step", "optimizers", "schedulers", "rng_state"}
    assert "test_acc" in capsys.readouterr().out


def test_train_by_epochs(tmp_path):
    out = tmp_path / "mlp"
    assert _train("mlp", "--epochs", "1", "--out", str(out)) == 0
    assert json.loads((out / "config.json").read_text())["step"] == 1437 // 32  # 80% of 1797 digits, batch 32


@pytest.mark.parametrize("model,figure", [("maml", "adaptation.png"), ("pinn", "solution.png")])
def test_scientific_models_write_their_figures(tmp_path, model, figure):
    out = tmp_path / model
    assert _train(model, "--steps", "4", "--eval-every", "2", "--out", str(out)) == 0
    assert _is_png(out / figure) and _is_png(out / "loss.png")


def test_resume_continues_exactly(tmp_path):
    """N steps, then resumed to N+M, gives the parameters, optimizer state and metrics of N+M at once (the mlp
    has dropout, so the RNG state matters; the data order crosses an epoch boundary)."""
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert _train("mlp", "--steps", "60", "--eval-every", "25", "--out", str(whole)) == 0
    assert _train("mlp", "--steps", "35", "--eval-every", "25", "--out", str(parts)) == 0
    assert _train("mlp", "--steps", "60", "--resume", str(parts)) == 0
    a, b = _weights(whole), _weights(parts)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    sa, sb = (lucid.load(run / "optimizer.safetensors")["optimizers"]["optimizer"]["state"] for run in (whole, parts))
    assert all(np.array_equal(sa[i][k].numpy(), sb[i][k].numpy()) for i in sa for k in ("exp_avg", "exp_avg_sq"))
    # metrics.csv rows (but their times) agree, except the first run's extra row at its end (step 35) and the row
    # after it (step 36: the mean training loss of one step instead of two)
    with open(whole / "metrics.csv") as f, open(parts / "metrics.csv") as g:
        rows_a, rows_b = ([{k: v for k, v in r.items() if k != "time_s"} for r in csv.DictReader(h)
                           if int(r["step"]) not in (35, 36)] for h in (f, g))
    assert rows_a == rows_b and len(rows_a) == 30


def test_resume_under_amp_fp16_restores_the_grad_scaler(tmp_path):
    """--amp fp16: 6 steps, then resumed to 12, gives the weights and the GradScaler state (scale, growth tracker)
    of 12 steps at once; a fresh scaler on resume would count its growth interval from 0 again."""
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert _train("mlp", "--amp", "fp16", "--steps", "12", "--eval-every", "100", "--out", str(whole)) == 0
    assert _train("mlp", "--amp", "fp16", "--steps", "6", "--eval-every", "100", "--out", str(parts)) == 0
    assert lucid.load(parts / "optimizer.safetensors")["scaler"]["_growth_tracker"] == 6
    assert _train("mlp", "--steps", "12", "--resume", str(parts)) == 0  # --amp fp16 comes from the run's config
    a, b = _weights(whole), _weights(parts)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    sa, sb = (lucid.load(run / "optimizer.safetensors")["scaler"] for run in (whole, parts))
    assert sa == sb and sa["_growth_tracker"] == 12


def test_ctrl_c_writes_a_checkpoint_that_resumes_exactly(tmp_path, monkeypatch, capsys):
    """SIGINT during step 7 of a 12-step PINN run (a learning-rate scheduler) stops after that step with a
    checkpoint; resuming finishes the run with the parameters of an uninterrupted one."""
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert _train("pinn", "--steps", "12", "--eval-every", "100", "--out", str(whole)) == 0

    original = RECIPES["pinn"].train_step
    calls = []

    def interrupted_step(self, *batch):
        calls.append(1)
        if len(calls) == 7:
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends; the handler lets this step finish
        return original(self, *batch)
    monkeypatch.setattr(RECIPES["pinn"], "train_step", interrupted_step)
    assert _train("pinn", "--steps", "12", "--eval-every", "100", "--out", str(parts)) == 130
    assert "Interrupted at step 7/12" in capsys.readouterr().err
    assert json.loads((parts / "config.json").read_text())["step"] == 7
    monkeypatch.setattr(RECIPES["pinn"], "train_step", original)
    assert _train("pinn", "--resume", str(parts)) == 0
    a, b = _weights(whole), _weights(parts)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_compiled_training_learns(tmp_path):
    out = tmp_path / "mlp"
    assert _train("mlp", "--steps", "300", "--compile", "--eval-every", "300", "--out", str(out)) == 0
    assert json.loads((out / "config.json").read_text())["result"]["test_acc"] > 0.9


def test_eval_reports_the_checkpoints_metric(tmp_path, capsys):
    out = tmp_path / "mlp"
    assert _train("mlp", "--steps", "30", "--out", str(out)) == 0
    capsys.readouterr()
    assert main(["eval", "mlp", "--from", str(out)]) == 0
    reported = json.loads(capsys.readouterr().out)
    assert reported["test_acc"] == pytest.approx(json.loads((out / "config.json").read_text())["result"]["test_acc"])


def test_sample_generates_text_and_images(tmp_path, capsys):
    lm, vae = tmp_path / "gpt", tmp_path / "vae"
    assert _train("gpt", "--steps", "2", "--out", str(lm)) == 0
    assert (lm / "samples.txt").read_text().count("\n") > 2
    capsys.readouterr()
    assert main(["sample", "gpt", "--from", str(lm), "--prompt", "ROMEO:", "--length", "20", "--top-k", "5"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("ROMEO:") and len(text.rstrip("\n")) >= 26
    assert main(["sample", "gpt", "--from", str(lm), "--prompt", "\u00e9"]) == 2
    assert "outside the vocabulary" in capsys.readouterr().err
    assert main(["sample", "gpt", "--from", str(lm), "--prompt", ""]) == 2
    assert "lucid sample: error: --prompt is empty" in capsys.readouterr().err
    assert _train("vae", "--steps", "2", "--out", str(vae)) == 0
    (vae / "samples.png").unlink()
    assert main(["sample", "vae", "--from", str(vae), "--num", "16"]) == 0
    assert _is_png(vae / "samples.png")
    assert main(["sample", "vae", "--from", str(lm)]) == 2  # a gpt run
    assert "holds a 'gpt' run, not 'vae'" in capsys.readouterr().err


def test_unknown_model_lists_the_valid_ones(capsys):
    assert main(["train", "alexnet"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'alexnet'" in err and all(f"'{name}'" in err for name in ZOO)
    assert "Traceback" not in err


def test_resume_from_another_models_checkpoint_names_the_keys(tmp_path, capsys):
    out = tmp_path / "mlp"
    assert _train("mlp", "--steps", "2", "--out", str(out)) == 0
    before = (out / "model.safetensors").read_bytes()
    capsys.readouterr()
    assert _train("lenet5", "--resume", str(out)) == 2
    err = capsys.readouterr().err
    assert "a checkpoint of 'mlp'" in err
    assert 'Missing key(s) in state_dict: "conv1.weight"' in err and 'Unexpected key(s) in state_dict: "1.weight"' in err
    assert (out / "model.safetensors").read_bytes() == before  # nothing overwritten


def test_resume_from_a_directory_without_a_run(tmp_path, capsys):
    assert _train("mlp", "--resume", str(tmp_path)) == 2
    assert "not a lucid run directory" in capsys.readouterr().err


def test_unwritable_out_fails_before_training(tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setattr(RECIPES["mlp"], "load_data", lambda self: pytest.fail("training started"))
    assert _train("mlp", "--out", str(blocker / "run")) == 2
    assert "cannot write to --out" in capsys.readouterr().err


def test_training_without_matplotlib_says_how_to_get_figures(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    out = tmp_path / "mlp"
    assert _train("mlp", "--steps", "10", "--out", str(out)) == 0
    assert (out / "model.safetensors").is_file() and not (out / "loss.png").exists()
    assert "pip install 'lucid-mlx[zoo]'" in capsys.readouterr().err


def test_info_names_the_blas(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "mlx" in out and "BLAS" in out


# ---------------------------------------------------------------------------------- checkpoints are one set
def _config(run):
    return json.loads((run / "config.json").read_text())


def _optimizer_state(run):
    state = lucid.load(run / "optimizer.safetensors")["optimizers"]["optimizer"]["state"]
    return {(i, k): v.numpy() for i in state for k, v in state[i].items() if k != "step"}


def _same_checkpoint(a, b):
    wa, wb, sa, sb = _weights(a), _weights(b), _optimizer_state(a), _optimizer_state(b)
    return wa.keys() == wb.keys() and all(np.array_equal(wa[k], wb[k]) for k in wa) \
        and sa.keys() == sb.keys() and all(np.array_equal(sa[k], sb[k]) for k in sa)


@pytest.fixture
def no_figures(monkeypatch):
    """Runs without matplotlib (drawing the figures takes most of a tiny run's time; the checkpoint is the same)."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)


@pytest.fixture(scope="module")
def mlp_runs(tmp_path_factory):
    """Two mlp runs with the same options: to step 2 and to step 4 (checkpoints at every 2nd step)."""
    root = tmp_path_factory.mktemp("runs")
    with pytest.MonkeyPatch.context() as m:
        m.setitem(sys.modules, "matplotlib", None)
        for steps in (2, 4):
            assert _train("mlp", "--steps", str(steps), "--eval-every", "2", "--out", str(root / f"step{steps}")) == 0
    return root


def _copy(run, to):
    shutil.copytree(run, to)
    return to


def test_a_second_ctrl_c_while_writing_a_checkpoint_keeps_the_previous_set(tmp_path, monkeypatch, capsys,
                                                                            mlp_runs, no_figures):
    """KeyboardInterrupt after the new model.safetensors was written, before the optimizer state: the run keeps
    the whole step-2 checkpoint (the step-4 weights never replace it), and resuming gives the 4-step run."""
    out = tmp_path / "mlp"
    save, calls = lucid.save, []

    def interrupted_save(obj, f):
        calls.append(str(f))
        if len(calls) == 4:  # the second checkpoint's optimizer file (its model file is call 3)
            raise KeyboardInterrupt
        save(obj, f)
    monkeypatch.setattr(lucid, "save", interrupted_save)
    assert _train("mlp", "--steps", "4", "--eval-every", "2", "--out", str(out)) == 130
    assert "keeps its last complete checkpoint" in capsys.readouterr().err
    monkeypatch.setattr(lucid, "save", save)
    assert calls[2].endswith("model.safetensors") and calls[3].endswith("optimizer.safetensors")
    assert _config(out)["step"] == 2 and _same_checkpoint(out, mlp_runs / "step2")
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []  # the partial set is gone
    assert _train("mlp", "--resume", str(out), "--steps", "4") == 0
    assert _same_checkpoint(out, mlp_runs / "step4")


def test_a_checkpoint_stopped_after_its_commit_is_completed_when_read(tmp_path, mlp_runs, no_figures):
    """A stop after the commit (the rename of the staging folder) while its files were moved into place: the new
    model.safetensors is in the run, the rest still in .checkpoint.ready. Reading the run finishes the moves, so
    resuming continues from step 4 (a mixed set is never seen)."""
    from lucid.cli.runs import READY
    out = _copy(mlp_runs / "step2", tmp_path / "mlp")
    ready = _copy(mlp_runs / "step4", out / READY)
    for name in ("loss.png", "predictions.png"):  # not part of a checkpoint
        (ready / name).unlink(missing_ok=True)
    (ready / "model.safetensors").replace(out / "model.safetensors")
    assert _train("mlp", "--resume", str(out), "--steps", "4") == 0  # already at its end: nothing to train
    assert not ready.exists() and _config(out)["step"] == 4 and _same_checkpoint(out, mlp_runs / "step4")


def test_resume_refuses_files_of_different_checkpoints(tmp_path, capsys, mlp_runs):
    newer = mlp_runs / "step4"
    weights = _copy(mlp_runs / "step2", tmp_path / "weights")
    (weights / "model.safetensors").write_bytes((newer / "model.safetensors").read_bytes())
    optimizer = _copy(mlp_runs / "step2", tmp_path / "optimizer")
    (optimizer / "optimizer.safetensors").write_bytes((newer / "optimizer.safetensors").read_bytes())
    capsys.readouterr()
    assert _train("mlp", "--resume", str(weights), "--steps", "6") == 2
    err = capsys.readouterr().err
    assert err.startswith("lucid train: error: ") and "model.safetensors is not the file of the checkpoint of " \
        "step 2" in err and "different checkpoints" in err
    assert _train("mlp", "--resume", str(optimizer), "--steps", "6") == 2
    assert "optimizer.safetensors is at step 4 but config.json at step 2" in capsys.readouterr().err
    assert _config(weights)["step"] == _config(optimizer)["step"] == 2  # nothing written


def test_train_refuses_an_out_that_holds_another_models_run(tmp_path, capsys, mlp_runs, no_figures):
    out = _copy(mlp_runs / "step2", tmp_path / "mlp")
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    capsys.readouterr()
    assert _train("lenet5", "--steps", "2", "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert f"lucid train: error: --out {out} holds a run of 'mlp'" in err
    assert "choose another --out" in err and "remove the folder" in err and f"lucid train mlp --resume {out}" in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert _train("mlp", "--steps", "2", "--out", str(out)) == 0  # the same model starts its run again


# ---------------------------------------------------------------------------------- mistakes: one error line
@pytest.mark.parametrize("argv, message", [
    (["train", "mlp", "--steps", "1e30"], "argument --steps: expected an integer >= 1, got '1e30'"),
    (["train", "mlp", "--epochs", "0"], "argument --epochs: expected an integer >= 1, got '0'"),
    (["train", "mlp", "--batch-size", "1.5"], "argument --batch-size: expected an integer >= 1, got '1.5'"),
    (["train", "mlp", "--eval-every", "-2"], "argument --eval-every: expected an integer >= 1, got '-2'"),
    (["train", "mlp", "--lr", "inf"], "argument --lr: expected a finite number > 0, got 'inf'"),
    (["train", "mlp", "--lr", "nan"], "argument --lr: expected a finite number > 0, got 'nan'"),
    (["train", "mlp", "--seed", str(2 ** 64)], "argument --seed: expected an integer in [-2**63, 2**64)"),
    (["train", "mlp", "--seed", "1.0"], "argument --seed: expected an integer in [-2**63, 2**64)"),
    (["train", "mlp", "--batch-size", "5000"], "--batch-size 5000 is larger than mlp's training set"),
    (["train", "vae", "--batch-size", "5000"], "--batch-size 5000 is larger than vae's training set"),
    (["sample", "gpt", "--from", ".", "--temperature", "inf"], "argument --temperature: expected a finite number"),
    (["sample", "gpt", "--from", ".", "--length", "0"], "argument --length: expected an integer >= 1"),
    (["run", "no_such_script.py"], "no such script: 'no_such_script.py'"),
    (["train", "pinn", "--lr", "1e30", "--steps", "20", "--quiet"], "the training loss became inf at step 2; try a "
     "smaller --lr"),
])
def test_a_mistake_on_the_command_line_is_one_error_line(argv, message, tmp_path, capsys):
    assert main([*argv, *(["--out", str(tmp_path / "run")] if argv[0] == "train" else [])]) == 2
    err = capsys.readouterr().err
    assert f"lucid {argv[0]}: error: " in err and message in err and "Traceback" not in err
    assert not (tmp_path / "run" / "config.json").exists()


def test_a_negative_seed_is_accepted_as_pytorch_does(tmp_path, no_figures):
    """torch.manual_seed(-1) seeds with 2**64 - 1: so does --seed -1 (data split, initialisation, batches)."""
    a, b = tmp_path / "a", tmp_path / "b"
    assert _train("mlp", "--steps", "2", "--seed", "-1", "--out", str(a)) == 0
    assert _train("mlp", "--steps", "2", "--seed", str(2 ** 64 - 1), "--out", str(b)) == 0
    assert _config(a)["args"]["seed"] == 2 ** 64 - 1 and _same_checkpoint(a, b)


def _damage(run, name, content):
    path = run / name
    if content is None:
        path.unlink()
    elif callable(content):
        path.write_bytes(content(path.read_bytes()))
    else:
        path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())


def _optimizer_without_keys(raw):
    buffer = io.BytesIO()
    lucid.save({"step": 2}, buffer)
    return buffer.getvalue()


DAMAGED = [
    ("config.json", b"{not json", "config.json is not a readable JSON file"),
    ("config.json", [1, 2], "config.json is damaged: expected a JSON object, found list"),
    ("config.json", {"model": "mlp", "args": [], "step": 2}, 'config.json is damaged: "args" is not a JSON object'),
    ("config.json", {"model": "mlp", "args": {"lr": "fast"}, "step": 2},
     "config.json is damaged: \"args\" has lr='fast', expected a finite number > 0"),
    ("config.json", {"model": "mlp", "model_config": {"hidden": "wide"}, "step": 2},
     "config.json is damaged: \"model_config\" has hidden='wide'"),
    ("config.json", {"model": "alexnet", "step": 2}, "config.json is damaged: \"model\" is 'alexnet'"),
    ("config.json", {"model": ["mlp"], "step": 2}, "config.json is damaged: \"model\" is ['mlp']"),
    ("config.json", {"model": "mlp", "step": 2, "result": {"test_acc": "high"}},
     'config.json is damaged: "train_time_s" and the values of "result" must be numbers'),
    ("config.json", {"model": "mlp", "model_config": {"hidden": [-3]}, "step": 2},
     "cannot build mlp from the model_config of config.json"),
    ("model.safetensors", None, "model.safetensors is missing"),
    ("model.safetensors", lambda raw: raw[:100], "model.safetensors: header length"),
    ("optimizer.safetensors", None, "optimizer.safetensors is missing"),
    ("optimizer.safetensors", lambda raw: raw[:-8], "truncated"),
    ("optimizer.safetensors", _optimizer_without_keys, "optimizer.safetensors lacks rng_state, optimizers, schedulers"),
    ("metrics.csv", b"step,train_loss\n2,low\n", "metrics.csv is damaged (ValueError"),
]


@pytest.mark.parametrize("command, name, content, message", [
    (command, *case) for case in DAMAGED for command in ("resume", "eval")
    if command == "resume" or case[0] in ("config.json", "model.safetensors")])  # eval reads only these
def test_a_damaged_run_directory_is_named_without_a_traceback(command, name, content, message, tmp_path, capsys,
                                                              mlp_runs):
    run = _copy(mlp_runs / "step2", tmp_path / "mlp")
    _damage(run, name, content)
    argv = ["train", "mlp", "--resume", str(run), "--steps", "4", "--quiet"] if command == "resume" \
        else ["eval", "mlp", "--from", str(run)]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"lucid {argv[0]}: error: ") and message in err, err


def test_resume_continues_with_the_options_the_run_was_started_with(tmp_path, monkeypatch, no_figures):
    """--compile, --lr, --batch-size and --eval-every of the first command hold on --resume (given again, an
    option wins: --no-compile)."""
    out = tmp_path / "mlp"
    compiled = []
    compile_ = lucid.compile
    monkeypatch.setattr(lucid, "compile", lambda *a, **k: compiled.append(1) or compile_(*a, **k))
    assert _train("mlp", "--steps", "2", "--compile", "--lr", "0.01", "--batch-size", "16", "--eval-every", "2",
                  "--out", str(out)) == 0
    assert _train("mlp", "--resume", str(out), "--steps", "4") == 0
    assert len(compiled) == 2
    assert {k: _config(out)["args"][k] for k in ("compile", "lr", "batch_size", "eval_every")} == \
        {"compile": True, "lr": 0.01, "batch_size": 16, "eval_every": 2}
    assert _train("mlp", "--resume", str(out), "--steps", "6", "--no-compile") == 0
    assert len(compiled) == 2 and _config(out)["args"]["compile"] is False
