"""Run by test_distributed.py under `mlx.launch -n 2 --backend ring`: collectives on PyTorch's timing.

Rank 1 all-reduces a metric it never reads, starts an async all_reduce it never waits for, and leaves at once:
``exit`` (sys.exit: the interpreter's exit waits for the collective) or ``destroy`` (destroy_process_group, then
os._exit, which skips the exit handlers: destroy_process_group must wait). Rank 0 joins the async collective a
second later and reads everything. With lazy collectives rank 1 would take part in nothing, and rank 0 would fail
with "[ring] connection to a peer was lost". Rank 0 writes OUT_DIR/rank0.json with what arrived."""
import json
import os
import sys
import time
from pathlib import Path

import lucid
import lucid.distributed as dist

out, mode = Path(sys.argv[1]), sys.argv[2]
dist.init_process_group(backend="ring")
rank = dist.get_rank()
metric = lucid.tensor([float(rank + 1)])
dist.all_reduce(metric)  # synchronous: it has run when the call returns
gathered = [lucid.zeros(2) for _ in range(2)]
dist.all_gather(gathered, lucid.full((2,), float(rank)))
top = lucid.tensor([3.0 - rank])
dist.broadcast(top, src=1)
if rank == 0:
    time.sleep(1.0)  # rank 1 has left by now
work = dist.all_reduce(lucid.tensor([10.0 * (rank + 1)]), op=dist.ReduceOp.MAX, async_op=True)
if rank == 1:
    assert not work.is_completed()
    if mode == "destroy":
        dist.destroy_process_group()
        os._exit(0)
    sys.exit(0)
assert work.wait() and work.is_completed() and work.is_success() and work.exception() is None
(out / "rank0.json").write_text(json.dumps(
    {"metric": metric.tolist(), "gathered": [g.tolist() for g in gathered], "broadcast": top.tolist(),
     "async": work.result()[0].tolist()}))
