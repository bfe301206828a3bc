"""Tests run on the CPU device: float64 (needed by gradcheck) exists only there.

They run on the reference BLAS bundled with mlx[cpu] on every Linux machine, OpenBLAS installed or not, so that the
suite computes the same numbers everywhere (the training tests' thresholds were measured so); the processes they
start inherit the setting. test_blas.py checks, in fresh processes without it, that ``import lucid`` loads OpenBLAS.
"""
import os

os.environ["LUCID_BLAS"] = "reference"  # before lucid or mlx.core is imported

import mlx.core as mx  # noqa: E402
import numpy as np
import pytest

mx.set_default_device(mx.cpu)


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    mx.random.seed(0)
