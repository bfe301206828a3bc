"""Tests run on the CPU device: float64 (needed by gradcheck) exists only there."""
import mlx.core as mx
import numpy as np
import pytest

mx.set_default_device(mx.cpu)


@pytest.fixture(autouse=True)
def _seed():
    np.random.seed(0)
    mx.random.seed(0)
