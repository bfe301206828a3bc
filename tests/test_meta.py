"""The meta device (lucid._meta): tensors with a shape, a dtype and requires_grad but no values, as PyTorch's
``device="meta"``; a model built there gets memory with ``Module.to_empty`` or ``load_state_dict(assign=True)``.
Checked against PyTorch where it is installed (shapes, dtypes, error types and messages)."""
import pickle
import warnings
from copy import deepcopy

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid import _meta
from lucid.compat._torch_repr import tensor_repr


def _torch():
    return pytest.importorskip("torch")


def test_factories_and_context_make_meta_tensors():
    w = lucid.randn(4, 3, device="meta", requires_grad=True)
    assert w.is_meta and w.device == lucid.device("meta") and w.device.type == "meta"
    assert w.shape == (4, 3) and w.dtype == lucid.float32 and w.requires_grad and w.is_leaf
    assert not lucid.randn(2).is_meta
    with lucid.device("meta"):
        assert lucid.get_default_device().type == "meta"
        z, t = lucid.zeros(2, dtype=lucid.float64), lucid.tensor([1, 2])
        assert z.is_meta and z.dtype == lucid.float64 and t.is_meta and t.dtype == lucid.int64
    assert lucid.get_default_device().type != "meta" and not lucid.zeros(2).is_meta


def test_a_placeholder_costs_one_element_whatever_the_shape():
    # MLX keeps a broadcast as one element: a meta tensor of a billion elements allocates nothing more
    w = lucid.empty(1 << 15, 1 << 15, device="meta")
    a = w.mlx
    assert a.shape == (1 << 15, 1 << 15) and _meta.is_meta(a)
    y = (w @ w).sum(0)  # nothing computed: the result is a placeholder too
    assert y.is_meta and y.shape == (1 << 15,)


@pytest.mark.parametrize("fn", [
    lambda m, w, x: x @ w,
    lambda m, w, x: (x @ w).relu().sum(-1),
    lambda m, w, x: m.nn.functional.linear(x, w.t(), None),
    lambda m, w, x: m.cat([x @ w, x @ w], dim=1),
    lambda m, w, x: w.double()[1:, :2].reshape(-1),
    lambda m, w, x: (w > 0).long().argmax(0),
], ids=["matmul", "chain", "linear", "cat", "cast-slice-view", "nondiff"])
def test_ops_give_meta_results_of_torch_shape_and_dtype(fn):
    torch = _torch()
    lw, lx = lucid.randn(10, 3, device="meta"), lucid.randn(5, 10)
    tw, tx = torch.randn(10, 3, device="meta"), torch.randn(5, 10, device="meta")
    out, ref = fn(lucid, lw, lx), fn(torch, tw, tx)
    assert out.is_meta and ref.is_meta
    assert tuple(out.shape) == tuple(ref.shape) and str(out.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]


@pytest.mark.parametrize("fn", [
    lambda m, w: w.max(1), lambda m, w: w.min(0, keepdim=True), lambda m, w: w.split(2, 1), lambda m, w: w.unbind(0),
    lambda m, w: w.chunk(2), lambda m, w: m.var_mean(w, 1), lambda m, w: m.std_mean(w, 0, keepdim=True),
    lambda m, w: w.sort(1), lambda m, w: w.topk(2), lambda m, w: w.kthvalue(2, 0), lambda m, w: w.median(1),
    lambda m, w: w.cummax(1), lambda m, w: (w.argsort(0),),
], ids=["max", "min", "split", "unbind", "chunk", "var_mean", "std_mean", "sort", "topk", "kthvalue", "median",
        "cummax", "argsort"])
def test_multi_output_ops_give_meta_pieces(fn):
    torch = _torch()
    outs, refs = fn(lucid, lucid.zeros(3, 4, device="meta")), fn(torch, torch.zeros(3, 4, device="meta"))
    assert len(outs) == len(refs)
    for o, r in zip(outs, refs):
        assert o.is_meta and r.is_meta and tuple(o.shape) == tuple(r.shape)


@pytest.mark.parametrize("opt", ["SGD", "Adam", "AdamW", "RMSprop", "Muon"])
def test_optimizer_step_keeps_meta_parameters_and_state_meta(opt):
    w = lucid.zeros(3, 2, device="meta", requires_grad=True)
    o = getattr(lucid.optim, opt)([w], lr=0.1, **({"momentum": 0.9} if opt == "SGD" else {}))
    for _ in range(2):
        (lucid.randn(4, 3) @ w).sum().backward()
        o.step()
    assert w.is_meta and w.shape == (3, 2)
    assert all(v.is_meta for v in o.state[w].values() if isinstance(v, lucid.Tensor) and v.ndim)


def test_reading_values_raises_as_pytorch():
    torch = _torch()
    for make in (lambda m: m.zeros(2, 3, device="meta"), lambda m: m.zeros((), device="meta")):
        t, r = make(lucid), make(torch)
        for read in (lambda x: x.tolist(), lambda x: x.numpy(), lambda x: float(x), lambda x: bool(x),
                     lambda x: x.item(), lambda x: x.cpu(), lambda x: x.to("cpu")):
            with pytest.raises(Exception) as expected:
                read(r)
            with pytest.raises(type(expected.value)) as got:
                read(t)
            assert str(got.value) == str(expected.value)


def test_printing_and_pickling():
    torch = _torch()
    for dtype in ("float32", "float64", "int64"):
        t = lucid.zeros(2, 3, device="meta", dtype=getattr(lucid, dtype), requires_grad=dtype != "int64")
        r = torch.zeros(2, 3, device="meta", dtype=getattr(torch, dtype), requires_grad=dtype != "int64")
        assert tensor_repr(t) == repr(r)  # (the torch face: ``lucid run``'s printer)
        assert repr(t).startswith("Tensor(..., device='meta', size=(2, 3)")
        back = pickle.loads(pickle.dumps(t))
        assert back.is_meta and back.shape == t.shape and back.dtype == t.dtype
        assert back.requires_grad == t.requires_grad
    assert f"{lucid.zeros((), device='meta')}" == "Tensor(..., device='meta', size=())"


def test_inplace_writes_keep_meta_and_meta_values_cannot_be_written_into_real_tensors():
    torch = _torch()
    w = lucid.empty(3, 4, device="meta")
    nn.init.kaiming_uniform_(w)
    w.copy_(lucid.ones(3, 4))
    w.add_(1)
    assert w.is_meta and w.shape == (3, 4)
    real, treal = lucid.zeros(3, 4), torch.zeros(3, 4)
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        treal.copy_(torch.empty(3, 4, device="meta"))
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        real.copy_(w)
    np.testing.assert_array_equal(real.numpy(), np.zeros((3, 4), np.float32))  # left untouched


def test_backward_through_meta_gives_meta_grads():
    w = lucid.randn(10, 1, device="meta", requires_grad=True)
    for _ in range(2):  # the first .grad, then the accumulation
        (lucid.randn(5, 10) @ w).sum().backward()
        assert w.grad.is_meta and w.grad.shape == (10, 1)


def test_like_and_new_follow_the_input_device():
    m = lucid.zeros(2, device="meta")
    assert lucid.zeros_like(m).is_meta and m.new_zeros(3).is_meta and lucid.rand_like(m).is_meta
    assert not lucid.empty_like(m, device="cpu").is_meta
    with lucid.device("meta"):
        assert not lucid.zeros_like(lucid.tensor(1.0, device="cpu")).is_meta
    assert lucid.zeros(2).to("meta").is_meta


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 5)
        self.bn = nn.BatchNorm1d(5)

    def forward(self, x):
        return self.bn(self.fc(x))


def test_meta_module_load_state_dict_assign_trains_as_the_original():
    lucid.manual_seed(0)
    net = _Net()
    sd = deepcopy(net.state_dict())
    with lucid.device("meta"):
        meta = _Net()
    assert all(p.is_meta for p in meta.parameters()) and meta.bn.num_batches_tracked.is_meta
    y = meta(lucid.randn(4, 3))
    assert y.is_meta and y.shape == (4, 5)
    meta.load_state_dict(sd, assign=True)
    assert not any(t.is_meta for t in [*meta.parameters(), *meta.buffers()])
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in meta.parameters())
    x = lucid.randn(4, 3)
    np.testing.assert_array_equal(meta(x).detach().numpy(), net(x).detach().numpy())


def test_load_into_meta_parameters_warns_and_changes_nothing():
    torch = _torch()
    with torch.device("meta"):
        tm = torch.nn.Linear(3, 5)
    sd = tm.state_dict()
    sd["weight"] = torch.zeros(5, 3)
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        tm.load_state_dict(sd)
    with lucid.device("meta"):
        m = nn.Linear(3, 5)
    lsd = m.state_dict()
    lsd["weight"] = lucid.zeros(5, 3)
    with pytest.warns(UserWarning) as lw:
        m.load_state_dict(lsd)
    assert [str(w.message) for w in lw] == [str(w.message) for w in tw]
    assert m.weight.is_meta


def test_batchnorm_meta_counter_is_replaced_when_missing():
    with lucid.device("meta"):
        bn = nn.BatchNorm2d(3)
    bn.load_state_dict({}, assign=True, strict=False)
    assert not bn.num_batches_tracked.is_meta and bn.num_batches_tracked.item() == 0


@pytest.mark.parametrize("recurse", [True, False])
def test_to_empty_gives_memory_keeping_parameters(recurse):
    with lucid.device("meta"):
        net = nn.Sequential(nn.Linear(3, 4), nn.Sequential(nn.Linear(4, 2)))
        net.register_buffer("buf", lucid.ones(2))
    weight = net[0].weight
    net[1].to_empty(device="cpu", recurse=recurse)
    assert not net[1][0].weight.is_meta if recurse else net[1][0].weight.is_meta
    assert net[0].weight.is_meta and net.buf.is_meta
    net.to_empty(device="cpu")
    assert net[0].weight is weight and not weight.is_meta and weight.requires_grad and not net.buf.is_meta
    assert net(lucid.randn(2, 3)).shape == (2, 2)
    net.to_empty(device="meta")
    assert weight.is_meta


def test_module_to_moves_to_meta_but_not_out_of_it():
    torch = _torch()
    net = nn.Linear(2, 2).to("meta")
    assert net.weight.is_meta
    with pytest.raises(NotImplementedError) as expected:
        torch.nn.Linear(2, 2, device="meta").to("cpu")
    with pytest.raises(NotImplementedError) as got:
        net.to("cpu")
    assert str(got.value) == str(expected.value).replace("torch.", "lucid.")
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        torch.nn.Linear(2, 2, device="meta").cpu()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        net.cpu()
    real = nn.Linear(2, 2)
    weight = real.weight
    assert real.cpu() is real and real.weight is weight


def test_device_strings():
    torch = _torch()
    assert str(lucid.device("meta")) == str(torch.device("meta")) == "meta"
    with pytest.raises(RuntimeError, match="Expected one of cpu, gpu, mps, cuda or meta device type"):
        lucid.device("tpu")
