"""SyncBatchNorm in one process (plain BatchNorm: no process group, or a world of one), its errors and
convert_sync_batchnorm; the 2-process statistics are checked by test_distributed.py (sync_bn_checks.py)."""
import numpy as np
import pytest

import lucid
import lucid.distributed as dist
import lucid.nn as nn


def test_without_a_process_group_it_is_batch_norm():
    x = lucid.randn(6, 3, 4, 5, dtype=lucid.float64)
    sync, ref = nn.SyncBatchNorm(3).double(), nn.BatchNorm2d(3).double()
    np.testing.assert_allclose(sync(x).detach().numpy(), ref(x).detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sync.running_var.numpy(), ref.running_var.numpy(), rtol=1e-12)
    dist.init_process_group()  # a world of one rank: nothing to synchronize
    try:
        np.testing.assert_allclose(sync(x).detach().numpy(), ref(x).detach().numpy(), rtol=1e-12, atol=1e-12)
    finally:
        dist.destroy_process_group()


def test_errors_and_torch_layout():
    with pytest.raises(ValueError, match="expected at least 2D input \\(got 1D input\\)"):
        nn.SyncBatchNorm(3)(lucid.randn(3))
    with pytest.raises(ValueError, match="SyncBatchNorm number of input channels should be non-zero"):
        nn.SyncBatchNorm(0)(lucid.randn(2, 0, 3))
    torch = pytest.importorskip("torch")
    assert repr(nn.SyncBatchNorm(3, momentum=None)) == repr(torch.nn.SyncBatchNorm(3, momentum=None))
    assert list(nn.SyncBatchNorm(3).state_dict()) == list(torch.nn.SyncBatchNorm(3).state_dict())


def test_convert_sync_batchnorm_replaces_every_batch_norm_sharing_its_tensors():
    model = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.Sequential(nn.BatchNorm1d(4, affine=False)))
    model[1].eval()
    weight, mean = model[1].weight, model[1].running_mean
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert type(converted[1]) is nn.SyncBatchNorm and type(converted[2][0]) is nn.SyncBatchNorm
    assert converted[1].weight is weight and converted[1].running_mean is mean and not converted[1].training
    assert converted[2][0].weight is None and type(converted[0]) is nn.Conv2d
    assert type(nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(2))) is nn.SyncBatchNorm
