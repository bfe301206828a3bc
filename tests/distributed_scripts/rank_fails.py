"""Run by test_distributed.py: rank 1 raises while rank 0 waits for it in an all_reduce."""
import lucid
import lucid.distributed as dist

dist.init_process_group(backend="ring")
if dist.get_rank() == 1:
    raise ValueError("rank 1 failed on purpose")
t = lucid.ones(3)
dist.all_reduce(t)
print(t.tolist())
