"""The ``lucid`` command, run in-process through ``lucid.cli.main``: listing, training outputs, exact resume
(also after Ctrl-C), sampling and evaluating, and bad input."""
import csv
import json
import os
import signal
import sys

import numpy as np
import pytest

import lucid
from lucid.cli import main
from lucid.cli.recipes import RECIPES

PNG = b"\x89PNG\r\n\x1a\n"
ZOO = ["mlp", "lenet5", "resnet18", "vit", "gpt", "lstm_lm", "vae", "dcgan", "maml", "pinn"]


def _is_png(path):
    data = path.read_bytes()
    return data.startswith(PNG) and data.endswith(b"IEND\xaeB`\x82")


def _weights(run):
    return {k: v.numpy() for k, v in lucid.load(run / "model.safetensors").items()}


def _train(*args):
    return main(["train", *args, "--quiet"])


def test_models_lists_the_ten_models(capsys):
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
