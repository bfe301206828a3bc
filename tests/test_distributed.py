"""lucid.distributed, DistributedDataParallel and DistributedSampler.

The multi-process checks launch 2 processes on this machine with MLX's launcher (`mlx.launch -n 2 --backend ring`,
over loopback); each launch takes a few seconds. The rest runs in this process, where init_process_group() without
a launcher gives a world of one."""
import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import lucid
import lucid.distributed as dist
from lucid import nn
from lucid.nn.parallel import DistributedDataParallel as DDP
from lucid.utils.data import DistributedSampler

SCRIPTS = Path(__file__).parent / "distributed_scripts"
LAUNCH = Path(sys.executable).with_name("mlx.launch")
LAUNCH = str(LAUNCH) if LAUNCH.exists() else shutil.which("mlx.launch")
TIMEOUT = 120


@pytest.fixture
def world_of_one():
    dist.init_process_group()
    yield
    dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(script: str, *args) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``script`` on 2 ranks with mlx.launch; the lucid under test is the one this process imported."""
    if LAUNCH is None:
        pytest.skip("mlx.launch is not installed")
    env = {**__import__("os").environ, "PYTHONPATH": str(Path(lucid.__file__).parents[1])}
    cmd = [LAUNCH, "-n", "2", "--backend", "ring", "-p", str(_free_port()), "--python", sys.executable,
           str(SCRIPTS / script), *map(str, args)]
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    return done, time.perf_counter() - started


# ------------------------------------------------------------------------------------- 2 processes, mlx.launch
@pytest.mark.slow
def test_ddp_on_two_processes_matches_one_process(tmp_path):
    """ddp_checks.py: 20 DDP steps on half batches == 20 steps on the whole batch; no_sync accumulation == one big
    step; a lucid.compile'd DDP step == the eager one; the sampler's shares partition the data; the collectives."""
    done, _ = launch("ddp_checks.py", tmp_path)
    for rank in range(2):
        report = tmp_path / f"rank{rank}.json"
        assert report.exists(), f"rank {rank} did not pass its checks:\n{done.stdout}\n{done.stderr}"
        assert max(json.loads(report.read_text()).values()) < 1e-5


@pytest.mark.slow
def test_a_rank_that_raises_ends_the_job_with_its_error():
    done, seconds = launch("rank_fails.py")
    out = done.stdout + done.stderr
    assert "ValueError: rank 1 failed on purpose" in out
    assert "Node with rank 1 exited with code 1" in out  # mlx.launch stops the other rank (its own status is 0)
    assert seconds < 60


@pytest.mark.slow
@pytest.mark.parametrize("leaving", ["exit", "destroy"])
def test_collectives_run_at_the_call_as_pytorchs_do(tmp_path, leaving):
    """collective_timing.py: rank 1 all-reduces, all-gathers and broadcasts without reading the results, starts an
    async all_reduce it never waits for, and leaves (sys.exit, or destroy_process_group then os._exit) while rank 0
    goes on: rank 0 gets every result."""
    done, _ = launch("collective_timing.py", tmp_path, leaving)
    report = tmp_path / "rank0.json"
    assert report.exists(), f"rank 0 did not finish:\n{done.stdout}\n{done.stderr}"
    assert json.loads(report.read_text()) == {"metric": [3.0], "gathered": [[0.0, 0.0], [1.0, 1.0]],
                                              "broadcast": [2.0], "async": [20.0]}


# --------------------------------------------------------------------------------------------- in this process
def test_calls_before_init_raise_pytorchs_error():
    assert not dist.is_initialized() and dist.is_available()
    for call in (dist.get_rank, dist.get_world_size, dist.barrier, lambda: dist.all_reduce(lucid.ones(2))):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            call()
    with pytest.raises(AssertionError, match="Process group cannot be None"):
        dist.destroy_process_group()


def test_init_without_a_launcher_is_a_world_of_one(world_of_one):
    assert dist.is_initialized() and (dist.get_rank(), dist.get_world_size()) == (0, 1)
    with pytest.raises(ValueError, match="trying to initialize the default process group twice!"):
        dist.init_process_group()
    t = lucid.tensor([1.0, 2.0])
    work = dist.all_reduce(t, op=dist.ReduceOp.AVG, async_op=True)
    assert work.wait() and t.tolist() == [1.0, 2.0]
    out = [lucid.zeros(2)]
    dist.all_gather(out, t)
    assert out[0].tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="tensor_list must be a list of 1 tensors"):
        dist.all_gather([lucid.zeros(2)] * 2, t)
    with pytest.raises(ValueError, match="Invalid src rank 1"):
        dist.broadcast(t, src=1)


def test_async_work_is_pytorchs_work(world_of_one):
    t = lucid.tensor([1.0, 2.0])
    work = dist.all_reduce(t, async_op=True)
    assert not work.is_completed() and work.exception() is None
    assert work.wait() and work.is_completed() and work.is_success() and work.result() == [t]
    work.synchronize()
    with pytest.raises(RuntimeError, match="sourceRank"):
        work.source_rank()
    assert dist.all_reduce(t) is None and dist.barrier() is None and dist.barrier(async_op=True).wait()


def test_a_named_backend_without_a_launcher_says_how_to_launch():
    with pytest.raises(RuntimeError, match="mlx.launch -n N --backend ring"):
        dist.init_process_group(backend="ring")
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group(backend="tcp")
    assert not dist.is_initialized()


def test_ddp_wraps_with_pytorchs_state_dict_keys_and_no_sync(world_of_one):
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    ddp = DDP(model)
    assert ddp.module is model
    assert list(ddp.state_dict()) == ["module." + k for k in model.state_dict()]
    x = lucid.randn(5, 3)
    ddp(x).sum().backward()
    g = model[0].weight.grad.numpy().copy()
    with ddp.no_sync():
        assert not ddp.require_backward_grad_sync
        ddp(x).sum().backward()
    assert ddp.require_backward_grad_sync
    np.testing.assert_allclose(model[0].weight.grad.numpy(), 2 * g, rtol=1e-6)


def test_ddp_names_parameters_that_got_no_gradient(world_of_one):
    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(2, 1), nn.Linear(2, 1)

        def forward(self, x):
            return self.a(x)
    ddp = DDP(TwoHeads())
    ddp(lucid.ones(1, 2)).sum().backward()
    with pytest.raises(RuntimeError, match=r"find_unused_parameters=True.*b\.weight, b\.bias"):
        ddp(lucid.ones(1, 2))
    ddp = DDP(TwoHeads(), find_unused_parameters=True)
    for _ in range(2):
        ddp(lucid.ones(1, 2)).sum().backward()
    assert ddp.module.b.weight.grad is None and ddp.module.a.weight.grad.tolist() == [[2.0, 2.0]]


SAMPLER_CASES = [(10, 3, True, False), (10, 3, True, True), (11, 4, False, False), (11, 4, False, True),
                 (7, 2, True, False), (3, 5, False, False), (12, 4, True, True)]


@pytest.mark.parametrize("n, replicas, shuffle, drop_last", SAMPLER_CASES)
def test_distributed_sampler_matches_pytorchs(n, replicas, shuffle, drop_last):
    torch = pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler
    order = list(range(n))
    if shuffle:  # lucid's shuffle stream differs from torch's: compare through lucid's own permutation
        from lucid.utils.data._generator import Generator, randperm
        order = randperm(n, Generator().manual_seed(5 + 1))
    for rank in range(replicas):
        mine = DistributedSampler(range(n), replicas, rank, shuffle=shuffle, seed=5, drop_last=drop_last)
        mine.set_epoch(1)
        ref = TorchSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(mine) == [order[i] for i in ref] and len(mine) == len(ref)
    with pytest.raises(ValueError, match=r"Invalid rank 4, rank should be in the interval \[0, 3\]"):
        DistributedSampler(range(n), 4, 4)
    del torch


def test_distributed_sampler_shuffles_per_epoch_and_defaults_to_the_group(world_of_one):
    s = DistributedSampler(range(50), seed=1)
    assert (s.num_replicas, s.rank) == (1, 0)
    first = list(s)
    assert first == list(s) and sorted(first) == list(range(50))
    s.set_epoch(1)
    assert list(s) != first


def test_lucid_train_distributed_alone_is_a_world_of_one(tmp_path):
    from lucid.cli import main
    try:
        assert main(["train", "mlp", "--steps", "2", "--eval-every", "2", "--distributed", "--quiet",
                     "--out", str(tmp_path)]) == 0
        assert dist.get_world_size() == 1 and (tmp_path / "model.safetensors").exists()
    finally:
        dist.destroy_process_group()


@pytest.mark.slow
def test_sync_batch_norm_on_two_processes_equals_batch_norm_on_the_whole_batch(tmp_path):
    """sync_bn_checks.py: SyncBatchNorm on half batches == BatchNorm on the whole batch (outputs, running stats,
    input gradients, summed parameter gradients), with momentum and cumulative averages; eval is plain BatchNorm."""
    done, _ = launch("sync_bn_checks.py", tmp_path)
    for rank in range(2):
        report = tmp_path / f"rank{rank}.json"
        assert report.exists(), f"rank {rank} failed:\n{done.stdout}\n{done.stderr}"
        errors = json.loads(report.read_text())
        assert max(errors.values()) < 1e-10, errors
