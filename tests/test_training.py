"""Training on the bundled digits reaches the stated accuracy (the README's main job, and a LeNet-style CNN)."""
import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("train_digits",
                                               Path(__file__).parent.parent / "examples" / "train_digits.py")
train_digits = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(train_digits)


@pytest.mark.parametrize("model, epochs", [("mlp", 20), ("lenet", 8)])
def test_digits_test_accuracy_at_least_95_percent(model, epochs):
    assert train_digits.train(model, epochs=epochs, seed=0, verbose=False) >= 0.95
