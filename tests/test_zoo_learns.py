"""Every zoo model learns (issue 11): a shortened ``lucid train`` run, in-process, reaches a metric well beyond
chance or the initial loss. Asserts on metrics only, never on time. (mlp is in test_cli.py, maml and pinn in
test_maml_pinn.py.) resnet18 and vit stay at chance for the first ~100 steps of their recipes (32x32 shapes,
about 0.15 s a step on 2 quiet cores), longer than a test can afford, so their tests train smaller configurations of
the same models with a plain loop on 16x16 shapes instead."""
import csv
import json
import math
import sys

import pytest

import lucid
import lucid.nn.functional as F
from lucid import models
from lucid.cli import main
from lucid.cli.recipes.classifiers import ViT

pytestmark = pytest.mark.cpu_kernels("the thresholds were measured (seeds 0-2) on MLX's CPU kernels")

UNIFORM = math.log(65)  # nats/char of uniform guessing over tiny Shakespeare's 65 characters


def _run(tmp_path, model, *args):
    out = tmp_path / model
    assert main(["train", model, *args, "--out", str(out), "--quiet"]) == 0
    result = json.loads((out / "config.json").read_text())["result"]
    with open(out / "metrics.csv") as f:
        evals = [r for r in csv.DictReader(f) if r.get(next(iter(result)), "") != ""]
    return result, [{k: float(r[k]) for k in result} for r in evals]


def test_lenet5_beats_chance(tmp_path):
    # measured (seeds 0-2): 0.86-0.89 after 150 steps; chance is 0.1
    result, _ = _run(tmp_path, "lenet5", "--steps", "150", "--eval-every", "150")
    assert result["test_acc"] >= 0.6


def test_vae_elbo_improves(tmp_path):
    # measured (seeds 0-2): test negative ELBO 31.4-31.9 at step 20, 25.7-26.1 at step 200 (initial training loss 45 = 64 ln 2 + KL)
    result, evals = _run(tmp_path, "vae", "--steps", "200", "--eval-every", "20")
    first = evals[0]
    assert result["test_neg_elbo"] < first["test_neg_elbo"] - 3.0 and result["test_neg_elbo"] < 29.0
    assert result["test_pixel_fd"] < 0.6 * first["test_pixel_fd"]  # measured 0.43-0.48 (seeds 0-2)


@pytest.mark.parametrize("model,args", [
    # measured (validation nats/char after 40 steps, seeds 0-1): gpt 3.23-3.34, lstm_lm 3.37-3.39; uniform guessing scores 4.17
    ("gpt", ["--steps", "40", "--batch-size", "8", "--lr", "6e-3"]),
    ("lstm_lm", ["--steps", "40", "--batch-size", "8"]),
])
def test_char_lm_beats_uniform(tmp_path, model, args):
    result, _ = _run(tmp_path, model, *args, "--eval-every", "40")
    assert result["test_loss"] < UNIFORM - 0.5
    assert result["test_ppl"] == pytest.approx(math.exp(result["test_loss"]), rel=1e-4)


def test_dcgan_pixel_fd_improves(tmp_path):
    # measured: pixel FD 11.0 at step 20 (seeds 0, 1); 8.8 at step 60 (seed 1), 9.4 at 50 and 8.9 at 75 (seed 0);
    # uniform noise scores 10
    result, evals = _run(tmp_path, "dcgan", "--steps", "60", "--eval-every", "20")
    assert result["test_pixel_fd"] < evals[0]["test_pixel_fd"] - 1.0
    assert result["test_pixel_fd"] < 10.0


@pytest.fixture
def no_figures(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)


@pytest.mark.slow
def test_realnvp_beats_a_gaussian_fit(tmp_path, no_figures):
    # measured (test NLL in nats per point, seeds 0, 1): 1.30, 1.47 at step 100; 0.81, 0.98 at step 300 (6-23 s of
    # training on 2 shared cores); the maximum-likelihood Gaussian scores 1.89 (the flow starts as N(0, I): 2.3)
    result, evals = _run(tmp_path, "realnvp", "--steps", "300", "--eval-every", "100")
    assert result["test_nll"] < evals[0]["test_nll"] - 0.2
    assert result["test_nll"] < result["test_nll_gaussian_fit"] - 0.6


@pytest.mark.slow
def test_ddpm_generates_digits(tmp_path, no_figures):
    # measured (seeds 0, 1): pixel FD 13.4 at step 200, 3.4 and 3.3 at step 400 (the mean digit repeated scores 4.8,
    # uniform noise 10); test denoising loss 0.16, 0.15 (the first steps' training loss: 0.8). One evaluation
    # (1000 digits of 100 denoising steps each), to keep it short (30-55 s on 2 shared cores).
    result, _ = _run(tmp_path, "ddpm", "--steps", "400", "--eval-every", "400")
    assert result["test_pixel_fd"] < 4.5 and result["test_loss"] < 0.25


def _shapes_accuracy(model, optimizer, steps, batch_size=64, size=16, seed=0, n_test=500, warmup=0,
                     decay=False):
    """Train ``model`` for ``steps`` steps on a fresh batch of ``make_shapes`` every step, each image standardised
    per channel as the vit recipe does (``ViT.standardise``: without it the random colours and background gradient
    dominate, and a resnet18 stays at chance for 200 steps too), the learning rate rising linearly over the first
    ``warmup`` steps (and with ``decay`` falling linearly to 0 at the end); returns the accuracy on ``n_test`` other
    images."""
    def rate(step):
        return min(1.0, (step + 1) / max(warmup, 1), (steps - step) / (steps - warmup) if decay else 1.0)
    scheduler = lucid.optim.lr_scheduler.LambdaLR(optimizer, rate)
    for step in range(steps):
        x, y = lucid.datasets.make_shapes(batch_size, size=size, seed=(seed, step))
        optimizer.zero_grad()
        F.cross_entropy(model(ViT.standardise(x)), y).backward()
        optimizer.step()
        scheduler.step()
    x, y = lucid.datasets.make_shapes(n_test, size=size, seed=(seed, 1 << 40))
    model.eval()
    with lucid.no_grad():
        predicted = model(ViT.standardise(x)).argmax(1)
    return (predicted == y).float().mean().item()


@pytest.mark.slow
def test_resnet18_beats_chance_on_shapes():
    # width 8 (the same keys and structure, 0.18 M parameters), torchvision's stem (16 px -> 4 px at layer1), batch
    # norm in train mode, Adam at a constant rate, batch 64.
    # measured (500 test images): 0.44, 0.37, 0.42 after 200 steps (seeds 0, 1, 2; 20-50 s on 2 shared cores); without
    # standardising (at batch 32) it stayed at 0.19 for 200 steps (seed 0); chance 1/6
    lucid.manual_seed(0)
    model = models.resnet18(num_classes=6, width=8)
    assert _shapes_accuracy(model, lucid.optim.Adam(model.parameters(), lr=3e-3), steps=200) >= 0.3


@pytest.mark.slow
def test_vit_beats_chance_on_shapes():
    # 8x8 patches of 16x16 images (4 tokens and the class token), 2 blocks of width 64; AdamW with a 30-step warmup
    # as in the vit recipe, then a linear decay to 0 (the accuracy of a ViT swings by +-0.05 between nearby steps
    # here; the decay settles it), batch 64.
    # measured (500 test images): 0.36, 0.38, 0.36 after 400 steps (seeds 0, 1, 2; 20-60 s on 2 shared cores);
    # at a constant rate 0.36, 0.38, 0.28 after 300; chance 1/6. 4x4 patches, one block or width 128 learnt no
    # faster per second.
    lucid.manual_seed(0)
    model = models.vit(image_size=16, patch_size=8, num_classes=6, dim=64, depth=2, heads=4, mlp_dim=128)
    optimizer = lucid.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.05)
    assert _shapes_accuracy(model, optimizer, steps=400, warmup=30, decay=True) >= 0.3
