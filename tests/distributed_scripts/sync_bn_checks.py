"""Run by test_distributed.py under `mlx.launch -n 2 --backend ring`: SyncBatchNorm on each rank's half of a batch
against BatchNorm on the whole batch (outputs, running statistics, input and parameter gradients of the summed
loss); writes OUT_DIR/rank<r>.json with the largest differences."""
import json
import sys
from pathlib import Path

import numpy as np

import lucid
import lucid.distributed as dist
from lucid import nn

dist.init_process_group(backend="ring")
rank, world = dist.get_rank(), dist.get_world_size()
assert world == 2, world
rng = np.random.default_rng(0)
data = rng.normal(2.0, 3.0, size=(8, 3, 5)).astype(np.float64)
target = rng.normal(size=(8, 3, 5)).astype(np.float64)
half = slice(rank * 4, (rank + 1) * 4)
results = {}

for momentum in (0.1, None):
    ref = nn.BatchNorm1d(3, momentum=momentum).double()
    model = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm1d(3, momentum=momentum))).double()
    sync = model[0]
    assert type(sync) is nn.SyncBatchNorm
    with lucid.no_grad():
        for m in (ref, sync):
            m.weight.copy_(lucid.tensor([0.5, 1.5, -1.0], dtype=lucid.float64))
            m.bias.copy_(lucid.tensor([0.1, -0.2, 0.3], dtype=lucid.float64))
    for step in range(2):
        x_all = lucid.tensor(data + step, requires_grad=True)
        x_half = lucid.tensor(data[half] + step, requires_grad=True)
        y_all, y_half = ref(x_all), sync(x_half)
        ((y_all - lucid.tensor(target)) ** 2).sum().backward()
        ((y_half - lucid.tensor(target[half])) ** 2).sum().backward()  # each rank's share of the same loss
        key = f"momentum={momentum} step={step}"
        results[key + " output"] = float(np.abs(y_half.detach().numpy() - y_all.detach().numpy()[half]).max())
        results[key + " input grad"] = float(np.abs(x_half.grad.numpy() - x_all.grad.numpy()[half]).max())
        for name in ("running_mean", "running_var"):
            results[key + " " + name] = float(np.abs(getattr(sync, name).numpy() - getattr(ref, name).numpy()).max())
        for name in ("weight", "bias"):  # the ranks' parameter gradients add up to the whole batch's (DDP sums them)
            g = getattr(sync, name).grad
            total = lucid.tensor(g.numpy())
            dist.all_reduce(total)
            results[key + " " + name + " grad"] = float(np.abs(total.numpy() - getattr(ref, name).grad.numpy()).max())
            getattr(sync, name).grad = None
            getattr(ref, name).grad = None
    assert int(sync.num_batches_tracked.item()) == 2
sync.eval()
x = lucid.tensor(data[half])
results["eval is plain BatchNorm"] = float(np.abs(sync(x).detach().numpy() - ref.eval()(x).detach().numpy()).max())
Path(sys.argv[1], f"rank{rank}.json").write_text(json.dumps(results))
