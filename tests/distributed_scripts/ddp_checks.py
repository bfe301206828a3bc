"""Run by test_distributed.py under `mlx.launch -n 2 --backend ring`: every rank checks DDP against a single-process
reference it computes itself, and writes OUT_DIR/rank<r>.json when all checks passed."""
import json
import sys
from pathlib import Path

import numpy as np

import lucid
import lucid.distributed as dist
from lucid import nn
from lucid.nn.parallel import DistributedDataParallel as DDP
from lucid.utils.data import DistributedSampler

dist.init_process_group(backend="ring")
rank, world = dist.get_rank(), dist.get_world_size()
assert world == 2, world
results = {}


def model(seed):
    lucid.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))


def gathered(t):
    out = [lucid.zeros_like(t) for _ in range(world)]
    dist.all_gather(out, t)
    return out


# the data: the whole batch on every rank; each rank trains on its half
rng = np.random.default_rng(0)
x, y = lucid.tensor(rng.normal(size=(16, 4)).astype(np.float32)), lucid.tensor(rng.normal(size=(16, 1)).astype(np.float32))
half = slice(rank * 8, (rank + 1) * 8)
loss_fn = nn.MSELoss()


def params(m):
    return np.concatenate([p.detach().numpy().ravel() for p in m.parameters()])


# 1. 20 DDP steps on half batches == 20 single-process steps on the whole batch
ref = model(0)
opt = lucid.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
for _ in range(20):
    opt.zero_grad()
    loss_fn(ref(x), y).backward()
    opt.step()
ddp = DDP(model(rank + 1))  # different seeds: the wrap must broadcast rank 0's weights ... which are seed 1's
start = model(1)
assert np.array_equal(params(ddp.module), params(start)), "parameters not broadcast from rank 0"
ddp.module.load_state_dict(model(0).state_dict())
opt = lucid.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
for _ in range(20):
    opt.zero_grad()
    loss_fn(ddp(x[half]), y[half]).backward()
    opt.step()
results["ddp_vs_single_max_diff"] = float(np.abs(params(ddp.module) - params(ref)).max())
assert results["ddp_vs_single_max_diff"] < 1e-5, results

# 2. no_sync accumulation over 2 micro-batches == one step on the whole batch (mean of the 4 micro-batch losses)
ref = model(0)
opt = lucid.optim.SGD(ref.parameters(), lr=0.1)
sum(loss_fn(ref(x[i:i + 4]), y[i:i + 4]) for i in range(0, 16, 4)).div(2).backward()
opt.step()
ddp = DDP(model(0))
opt = lucid.optim.SGD(ddp.parameters(), lr=0.1)
micro = [slice(rank * 8, rank * 8 + 4), slice(rank * 8 + 4, rank * 8 + 8)]
with ddp.no_sync():
    loss_fn(ddp(x[micro[0]]), y[micro[0]]).backward()
g0, g1 = gathered(ddp.module[0].weight.grad)
assert not np.allclose(g0.numpy(), g1.numpy()), "no_sync communicated"
loss_fn(ddp(x[micro[1]]), y[micro[1]]).backward()
opt.step()
results["no_sync_max_diff"] = float(np.abs(params(ddp.module) - params(ref)).max())
assert results["no_sync_max_diff"] < 1e-6, results

# 3. a lucid.compile'd DDP step (the all-reduce inside the compiled graph) == the eager DDP step
def train(compiled):
    ddp = DDP(model(0))
    opt = lucid.optim.Adam(ddp.parameters(), lr=0.01)

    def step(xb, yb):
        opt.zero_grad()
        loss = loss_fn(ddp(xb), yb)
        loss.backward()
        opt.step()
        return loss
    fn = lucid.compile(step, state=[ddp, opt]) if compiled else step
    for _ in range(6):
        fn(x[half], y[half])
    return params(ddp.module)
results["compiled_vs_eager_max_diff"] = float(np.abs(train(True) - train(False)).max())
assert results["compiled_vs_eager_max_diff"] < 1e-6, results

# 4. DistributedSampler: the ranks' shares partition the dataset (padded to equal counts, or cut with drop_last)
for n, drop_last in [(10, False), (11, False), (11, True)]:
    s = DistributedSampler(range(n), shuffle=True, seed=3, drop_last=drop_last)
    s.set_epoch(2)
    mine = lucid.tensor(list(s))
    shares = [t.tolist() for t in gathered(mine)]
    everything = sorted(sum(shares, []))
    if drop_last:
        assert len(set(everything)) == len(everything) == n - n % world, (n, shares)
    else:
        assert set(everything) == set(range(n)) and len(everything) == -(-n // world) * world, (n, shares)

# 5. the collectives
t = lucid.tensor([1.0, -2.0]) * (rank + 1)
dist.all_reduce(t, op=dist.ReduceOp.AVG)
assert t.tolist() == [1.5, -3.0], t
t = lucid.tensor([rank, 5 - rank])
dist.all_reduce(t, op=dist.ReduceOp.MAX)
assert t.tolist() == [1, 5], t
t = lucid.full((3,), float(rank))
dist.broadcast(t, src=1)
assert t.tolist() == [1.0] * 3, t
dist.barrier()

Path(sys.argv[1], f"rank{rank}.json").write_text(json.dumps(results))
print(f"rank {rank}: all checks passed {results}", flush=True)
