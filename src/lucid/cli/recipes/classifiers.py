"""Image classifiers: mlp and lenet5 on the bundled 8x8 digits, resnet18 (small-input stem) and vit on generated
32x32 shapes. Cross-entropy, Adam (a decaying rate on the shapes; vit has its own recipe), test accuracy; the figure is a grid of test images with
their predictions (predictions.png)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import lucid
import lucid.nn.functional as F

from ... import models
from .. import figures
from . import base
from .base import Recipe


class Classifier(Recipe):
    """With ``data_root`` set (``lucid train MODEL --data ROOT``), trains on the dataset files there (files.py)
    instead of the recipe's own data, the model sized to its images and classes."""
    metric = "test_acc"
    figure = "predictions.png"
    class_names: list[str] = []
    accepts_data = True
    data_root: str | None = None
    dataset: str | None = None

    def load_files(self) -> None:
        from . import files
        self.dataset = files.find(self.data_root, self.dataset)
        self.x_train, self.y_train, x_test, self.y_test, self.class_names = files.load(self.data_root, self.dataset)
        self.x_test = x_test.to(lucid.float32) / 255.0
        self.config = files.fit_config(self.config, tuple(self.x_test.shape[1:]), len(self.class_names))
        self.data = f"{self.dataset} from {self.data_root} ({len(self.y_train)} train, {len(self.y_test)} test)"
        self.train_examples = len(self.y_train)
        self.steps_per_epoch = len(self.y_train) // self.batch_size

    def images_and_labels(self) -> tuple:
        """All examples: images (n, C, H, W) in [0, 1], int64 labels (n,)."""
        raise NotImplementedError

    def load_data(self) -> None:
        if self.data_root is not None:
            return self.load_files()
        images, labels = self.images_and_labels()
        train, test = base.split(len(labels), 0.8, self.seed)
        self.x_train, self.y_train = images[lucid.tensor(train)], labels[lucid.tensor(train)]
        self.x_test, self.y_test = images[lucid.tensor(test)], labels[lucid.tensor(test)]
        self.train_examples = len(train)
        self.steps_per_epoch = len(train) // self.batch_size

    def batch(self, step: int) -> tuple:
        idx = lucid.tensor(self.epoch_indices(step, len(self.y_train)))
        x = self.x_train[idx]
        return (x.to(lucid.float32) / 255.0 if x.dtype == lucid.uint8 else x), self.y_train[idx]

    def loss(self, x, y):
        return F.cross_entropy(self.model(x), y)

    def train_step(self, x, y) -> dict:
        return self.simple_step(self.loss, x, y)

    def evaluate(self) -> dict[str, float]:
        acc, self._predicted = base.accuracy(self.model, self.x_test, self.y_test)
        return {"test_acc": acc}

    def draw(self, plt, out: Path, n: int = 32) -> None:
        acc = self.evaluate()["test_acc"]
        true = self.y_test.numpy()
        wrong = (self._predicted != true).nonzero()[0]
        # the mistakes first (at most half the grid), then the first correct test images
        shown = np.concatenate([wrong[:n // 2], (self._predicted == true).nonzero()[0]])[:n]
        figures.predictions(plt, self.x_test[lucid.tensor(shown)].numpy(), self._predicted[shown].tolist(),
                            true[shown].tolist(), self.class_names, out / self.figure,
                            f"lucid train {self.name}: test accuracy {acc:.3f} ({len(wrong)} of {len(true)} wrong)\n"
                            f"{n} test images captioned with the prediction; mistakes first, in red: predicted (true)")


class DigitsClassifier(Classifier):
    data = "bundled digits (1797 8x8, 80/20 split)"
    class_names = [str(d) for d in range(10)]
    lr = 3e-3
    batch_size = 32
    eval_every = 200

    def images_and_labels(self) -> tuple:
        digits = lucid.datasets.load_digits()
        return digits.images.reshape(-1, 1, 8, 8) / 16.0, digits.target  # pixel values are 0..16


class MLP(DigitsClassifier):
    name = "mlp"
    summary = "multilayer perceptron 64-128-64-10 on the bundled 8x8 digits"
    target = "test accuracy >= 0.95"
    steps = 1000

    def default_config(self) -> dict:
        return {"in_features": 64, "hidden": [128, 64], "num_classes": 10}

    def build(self) -> dict:
        return {"model": models.mlp(**self.config)}


class LeNet5(DigitsClassifier):
    name = "lenet5"
    summary = "LeNet-5 (conv1, conv2, fc1-fc3) on the bundled 8x8 digits"
    target = "test accuracy >= 0.95"
    steps = 1000

    def default_config(self) -> dict:
        return {"num_classes": 10, "in_channels": 1, "input_size": 8}

    def build(self) -> dict:
        return {"model": models.lenet5(**self.config)}


class ShapesClassifier(Classifier):
    """Trains on an endless stream: every step draws a fresh batch of shapes from ``(seed, step)`` (on a fixed
    set of a few thousand images these models memorise it and stay below 0.5 test accuracy); the test images are
    a fixed draw of their own."""
    data = "generated shapes (make_shapes: 6 classes, 32x32 RGB; a fresh batch every step, 1000 test images)"
    class_names = lucid.datasets.SHAPE_CLASSES
    lr = 3e-3
    half_life = 250
    batch_size = 64
    eval_every = 100
    n_test = 1000
    images_per_epoch = 6400  # a nominal epoch for --epochs (the stream has no end)

    def load_data(self) -> None:
        if self.data_root is not None:
            return self.load_files()
        self.x_test, self.y_test = lucid.datasets.make_shapes(self.n_test, size=32, seed=(self.seed, 1 << 40))
        self.steps_per_epoch = self.images_per_epoch // self.batch_size

    def batch(self, step: int) -> tuple:
        if self.data_root is not None:
            return super().batch(step)
        return lucid.datasets.make_shapes(self.batch_size, size=32, seed=(self.seed, step))

    def make_schedulers(self, optimizers: dict) -> dict:
        # the rate halves every half_life steps: a function of the step only, as resuming needs
        gamma = 0.5 ** (1 / self.half_life)
        return {"scheduler": lucid.optim.lr_scheduler.ExponentialLR(optimizers["optimizer"], gamma)}


class ResNet18(ShapesClassifier):
    name = "resnet18"
    summary = "ResNet-18 (torchvision's layers and keys, width 16) on generated 32x32 shapes"
    target = "test accuracy >= 0.6 (chance 1/6)"
    steps = 800

    def default_config(self) -> dict:
        return {"num_classes": 6, "small_input": False, "in_channels": 3, "width": 16}

    def build(self) -> dict:
        return {"model": models.resnet18(**self.config)}


class ViT(ShapesClassifier):
    """A ViT has no convolutional prior, so on this stream it needs help to learn within the budget: each image is
    standardised per channel (mean 0, std 1 over its pixels: the random colours and background gradient no longer
    dominate the patch embeddings), 8x8 patches (16 tokens: 2.5x faster per step than 4x4 patches, and they learn
    no slower here), AdamW with weight decay 0.05 after a 50-step linear warmup, and label smoothing 0.1. With the
    shared recipe (Adam 1e-3, raw pixels) it stayed at chance."""
    name = "vit"
    summary = "Vision Transformer (8x8 patches, class token, pre-norm, depth 4) on generated 32x32 shapes"
    target = "test accuracy >= 0.45 (chance 1/6)"
    steps = 600
    batch_size = 64
    lr = 2e-3
    warmup = 50
    half_life = 400
    weight_decay = 0.05
    label_smoothing = 0.1

    def default_config(self) -> dict:
        return {"image_size": 32, "patch_size": 8, "num_classes": 6, "dim": 64, "depth": 4, "heads": 4,
                "mlp_dim": 128, "channels": 3}

    def build(self) -> dict:
        return {"model": models.vit(**self.config)}

    @staticmethod
    def standardise(x):
        """Each image's channels to mean 0 and standard deviation 1 over its pixels."""
        return (x - x.mean(dim=(2, 3), keepdim=True)) / (x.std(dim=(2, 3), keepdim=True) + 1e-3)

    def make_optimizers(self, modules: dict, lr: float) -> dict:
        return {"optimizer": lucid.optim.AdamW(modules["model"].parameters(), lr=lr,
                                               weight_decay=self.weight_decay)}

    def make_schedulers(self, optimizers: dict) -> dict:
        # linear warmup, then the rate halves every half_life steps (a function of the step only)
        warmup, half_life = self.warmup, self.half_life
        return {"scheduler": lucid.optim.lr_scheduler.LambdaLR(
            optimizers["optimizer"],
            lambda step: (step + 1) / warmup if step < warmup else 0.5 ** ((step - warmup) / half_life))}

    def loss(self, x, y):
        return F.cross_entropy(self.model(self.standardise(x)), y, label_smoothing=self.label_smoothing)

    def evaluate(self) -> dict[str, float]:
        acc, self._predicted = base.accuracy(self.model, self.standardise(self.x_test), self.y_test)
        return {"test_acc": acc}


RECIPES = [MLP, LeNet5, ResNet18, ViT]
