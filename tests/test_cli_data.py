"""``lucid train MODEL --data ROOT``: the image classifiers train on dataset files in torchvision's layout (MNIST
family IDX files, CIFAR's python pickles), sized to the data, and ``lucid eval`` reads the same files back."""
import json

import numpy as np
import pytest

from helpers import idx_bytes
from lucid.cli import main
from test_vision_datasets import write_cifar


def write_learnable_mnist(root, name="MNIST", n=(400, 100)):
    """MNIST-format files whose class is where a bright 6x6 block sits (learnable in a few dozen steps)."""
    raw = root / name / "raw"
    raw.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for split, count in zip(("train", "t10k"), n):
        labels = rng.integers(0, 10, count).astype(np.uint8)
        images = rng.integers(0, 40, (count, 28, 28)).astype(np.uint8)
        for i, k in enumerate(labels):
            r, c = divmod(int(k), 5)
            images[i, 4 + 12 * r:10 + 12 * r, 1 + 5 * c:7 + 5 * c] = 255
        (raw / f"{split}-images-idx3-ubyte").write_bytes(idx_bytes(images))
        (raw / f"{split}-labels-idx1-ubyte").write_bytes(idx_bytes(labels))


@pytest.mark.slow
def test_mlp_trains_on_mnist_files_and_eval_reads_them(tmp_path, capsys):
    write_learnable_mnist(tmp_path / "data")
    out = tmp_path / "run"
    assert main(["train", "mlp", "--data", str(tmp_path / "data"), "--steps", "40", "--batch-size", "32",
                 "--out", str(out), "--quiet"]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["model_config"] == {"in_features": 784, "hidden": [128, 64], "num_classes": 10}
    assert config["args"]["data"] == str(tmp_path / "data") and config["args"]["dataset"] == "mnist"
    assert config["data"].startswith("mnist from") and "400 train, 100 test" in config["data"]
    assert config["result"]["test_acc"] >= 0.9
    capsys.readouterr()
    assert main(["eval", "mlp", "--from", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["test_acc"] == pytest.approx(config["result"]["test_acc"])


def test_lenet5_on_cifar_files_is_sized_to_the_images(tmp_path):
    write_cifar(tmp_path / "data", n=8)
    out = tmp_path / "run"
    assert main(["train", "lenet5", "--data", str(tmp_path / "data"), "--steps", "2", "--batch-size", "8", "--out",
                 str(out), "--quiet"]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["model_config"] == {"num_classes": 10, "in_channels": 3, "input_size": 32}
    assert config["args"]["dataset"] == "cifar10"


def test_data_errors_say_what_to_place(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["train", "lenet5", "--data", str(tmp_path / "empty"), "--steps", "1", "--quiet",
                 "--out", str(tmp_path / "a")]) == 2
    assert "MNIST/raw/train-images-idx3-ubyte" in capsys.readouterr().err
    (tmp_path / "half" / "MNIST" / "raw").mkdir(parents=True)
    assert main(["train", "lenet5", "--data", str(tmp_path / "half"), "--steps", "1", "--quiet",
                 "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "Dataset not found" in err and "t10k-labels-idx1-ubyte" in err
    assert main(["train", "gpt", "--data", str(tmp_path), "--steps", "1", "--quiet",
                 "--out", str(tmp_path / "c")]) == 2
    assert "the image classifiers (mlp, lenet5, resnet18, vit) take --data" in capsys.readouterr().err
