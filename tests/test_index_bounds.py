"""Out-of-range indices never reach MLX and always raise PyTorch's error (lucid._checks).

Each op that consumes indices is tried with indices too large and too negative, given three ways: on the host (a
list), as a tensor made from host data (its values are known: the error is raised at the call), and as a tensor
computed lazily (``* 1``: no values yet, so the error comes at the next evaluation and names the op and this file's
line). The messages are PyTorch 2.13's.
"""
import os
import subprocess
import sys
import textwrap

import mlx.core as mx
import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid import _checks

HERE = os.path.basename(__file__)


def host(v):
    return list(v)


def known(v):
    return lucid.tensor(list(v))


def lazy(v):
    return lucid.tensor(list(v)) * 1  # computed by MLX: values not known until evaluated


X = lucid.arange(12.0).reshape(3, 4)  # size 3 along dim 0, 4 along dim 1


def _setitem(idx):
    y = X.clone()
    y[idx] = 7.0
    return y


# (name, call(index) -> Tensor, size of the indexed dim, whether negative entries in [-size, 0) are valid,
#  exception type, message for a bad value v)
OPS = [
    ("x[index]", lambda i: X[i], 3, True, IndexError, "index {v} is out of bounds for dimension 0 with size 3"),
    ("x[:, index]", lambda i: X[:, i], 4, True, IndexError, "index {v} is out of bounds for dimension 1 with size 4"),
    ("x[index] = value", _setitem, 3, True, IndexError, "index {v} is out of bounds for dimension 0 with size 3"),
    ("index_put_", lambda i: X.clone().index_put_((_t(i),), lucid.tensor(1.0)), 3, True, IndexError,
     "index {v} is out of bounds for dimension 0 with size 3"),
    ("index_put_ accumulate", lambda i: X.clone().index_put_((_t(i),), lucid.tensor(1.0), accumulate=True), 3, True,
     IndexError, "index {v} is out of bounds for dimension 0 with size 3"),
    ("index_select", lambda i: X.index_select(1, _t(i)), 4, False, IndexError, "index out of range in self"),
    ("index_add", lambda i: X.index_add(0, i, lucid.ones(2, 4)), 3, False, IndexError, "index out of range in self"),
    ("index_copy", lambda i: X.index_copy(0, i, lucid.ones(2, 4)), 3, False, IndexError,
     "index_copy_(): index {v} is out of bounds for dimension 0 with size 3"),
    ("index_fill", lambda i: X.index_fill(0, i, 1.0), 3, True, IndexError,
     "index {v} is out of bounds for dimension 0 with size 3"),
    ("gather", lambda i: X.gather(1, _col(i)), 4, False, RuntimeError,
     "index {v} is out of bounds for dimension 1 with size 4"),
    ("scatter", lambda i: X.scatter(1, _col(i), lucid.ones(3, 4)), 4, False, RuntimeError,
     "index {v} is out of bounds for dimension 1 with size 4"),
    ("scatter value", lambda i: X.scatter(1, _col(i), value=2.0), 4, False, RuntimeError,
     "index {v} is out of bounds for dimension 1 with size 4"),
    ("scatter_add", lambda i: X.scatter_add(1, _col(i), lucid.ones(3, 4)), 4, False, RuntimeError,
     "index {v} is out of bounds for dimension 1 with size 4"),
    ("take", lambda i: X.take(i), 12, True, IndexError,
     "out of range: tried to access index {v} on a tensor of 12 elements."),
    ("take_along_dim", lambda i: X.take_along_dim(_col(i), 1), 4, True, RuntimeError,
     "index {v} is out of bounds for dimension 1 with size 4"),
    ("embedding", lambda i: F.embedding(_t(i), X), 3, False, IndexError, "index out of range in self"),
    ("nn.Embedding", lambda i: _EMB(_t(i)), 3, False, IndexError, "index out of range in self"),
    ("one_hot", lambda i: F.one_hot(_t(i), num_classes=3), 3, False, RuntimeError, None),
    ("cross_entropy", lambda i: F.cross_entropy(lucid.zeros(2, 3), _t(i)), 3, False, IndexError,
     "Target {v} is out of bounds."),
    ("cross_entropy smoothing", lambda i: F.cross_entropy(lucid.zeros(2, 3), _t(i), label_smoothing=0.1), 3, False,
     IndexError, "Target {v} is out of bounds."),
    ("nll_loss", lambda i: F.nll_loss(lucid.zeros(2, 3), _t(i)), 3, False, IndexError, "Target {v} is out of bounds."),
    ("nll_loss 2d", lambda i: F.nll_loss(lucid.zeros(2, 3, 1), _reshaped(_t(i), (2, 1))), 3, False, IndexError,
     "Target {v} is out of bounds."),
]
_EMB = nn.Embedding(3, 4)


def _t(i):
    return i if isinstance(i, lucid.Tensor) else lucid.tensor(i)


def _col(i):
    """A (1, 2) index for the along-dim ops (the index is no larger than the input in the other dims)."""
    return _reshaped(i, (1, -1)) if isinstance(i, lucid.Tensor) else [list(i)]


def _reshaped(i, shape):
    """``i.reshape(shape)``, still known on the host if ``i`` was (a test helper: lucid forgets that on reshape)."""
    out = i.reshape(shape)
    if _checks.is_known(i.mlx):
        _checks.mark_known(out.mlx)
    return out


def _message(template, v):
    if template is None:  # one_hot's two messages
        return "Class values must be non-negative." if v < 0 else "Class values must be smaller than num_classes."
    return template.format(v=v)


def _bad_values(size, negative):
    return [size, 10 ** 9, (-size - 1) if negative else -1, -10 ** 9]


CASES = [(name, call, size, negative, exc, msg, v) for name, call, size, negative, exc, msg in OPS
         for v in _bad_values(size, negative)]
IDS = [f"{c[0]}-{c[6]}" for c in CASES]


@pytest.mark.parametrize("name,call,size,negative,exc,msg,bad", CASES, ids=IDS)
@pytest.mark.parametrize("make", [host, known], ids=["list", "tensor"])
def test_known_indices_raise_at_once(name, call, size, negative, exc, msg, bad, make):
    if make is host and name in ("embedding", "nn.Embedding", "one_hot", "cross_entropy", "cross_entropy smoothing",
                                 "nll_loss", "index_put_", "index_put_ accumulate", "index_select"):
        make = known  # these take only tensors
    with pytest.raises(exc, match=_escape(_message(msg, bad))):
        call(make([1, bad]))
    assert not _checks.has_pending()


@pytest.mark.parametrize("name,call,size,negative,exc,msg,bad", CASES, ids=IDS)
def test_lazy_indices_raise_at_the_next_evaluation(name, call, size, negative, exc, msg, bad):
    out = call(lazy([1, bad]))  # nothing is known yet: MLX gets a safe index, the check is pending
    assert _checks.has_pending()
    with pytest.raises(exc, match=_escape(_message(msg, bad))) as info:
        out.sum().item() if out.numel() != 1 else out.item()
    text = str(info.value)
    assert f"called at {__file__}, line" in text and "lazy" in text
    assert not _checks.has_pending()


@pytest.mark.parametrize("name,call,size,negative,exc,msg", OPS, ids=[o[0] for o in OPS])
def test_valid_indices_give_the_right_values_known_or_lazy(name, call, size, negative, exc, msg):
    good = [size - 1, -size] if negative else [size - 1, 0]
    expected = np.asarray(call(known(good)).detach())
    got = np.asarray(call(lazy(good)).detach())
    np.testing.assert_array_equal(got, expected)
    assert not _checks.has_pending()


def _escape(message):
    import re
    return re.escape(message)


# ---------------------------------------------------------------------------------------------------- the cases
def test_the_reported_crashes_and_garbage_now_raise_in_a_fresh_process():
    """The cases that segfaulted or returned garbage (run in a child process: a crash must not take pytest down)."""
    code = textwrap.dedent("""
        import lucid, lucid.nn as nn, lucid.nn.functional as F
        def check(f, exc, phrase):
            try:
                r = f()
                r.sum().item() if hasattr(r, "sum") else r
            except exc as e:
                assert phrase in str(e), (phrase, str(e))
                print("ok", phrase)
            else:
                raise AssertionError("no error for " + phrase)
        t = lucid.arange(3.)
        check(lambda: t[lucid.tensor([10**9])], IndexError, "index 1000000000 is out of bounds")
        check(lambda: t[lucid.tensor([10**9]) * 1], IndexError, "index 1000000000 is out of bounds")
        def put(i):
            u = t.clone(); u[i] = 7; return u
        check(lambda: put(lucid.tensor([10**6])), IndexError, "index 1000000 is out of bounds")
        check(lambda: put(lucid.tensor([10**6]) + 0), IndexError, "index 1000000 is out of bounds")
        check(lambda: nn.Embedding(10, 4)(lucid.tensor([10**8])), IndexError, "index out of range in self")
        check(lambda: nn.Embedding(10, 4)(lucid.tensor([10**8]) * 1), IndexError, "index out of range in self")
        check(lambda: t[lucid.tensor([5])], IndexError, "index 5 is out of bounds for dimension 0 with size 3")
        check(lambda: nn.Embedding(10, 4)(lucid.tensor(12)), IndexError, "index out of range in self")
        check(lambda: t.gather(0, lucid.tensor([7])), RuntimeError, "index 7 is out of bounds")
        check(lambda: F.one_hot(lucid.tensor([5]), num_classes=3), RuntimeError, "Class values must be smaller")
        check(lambda: F.cross_entropy(lucid.zeros(2, 3), lucid.tensor([5, 0])), IndexError,
              "Target 5 is out of bounds.")
        check(lambda: F.nll_loss(lucid.zeros(2, 3), lucid.tensor([-5, 0])), IndexError, "Target -5 is out of bounds.")
        big = lucid.zeros(5, 4)
        big.index_add_(0, lucid.tensor([10**7]) * 1, lucid.ones(1, 4))
        check(lambda: big, IndexError, "index out of range in self")
        s = lucid.zeros(4)
        s.scatter_(0, lucid.tensor([-10**7]) * 1, lucid.ones(1))
        check(lambda: s, RuntimeError, "index -10000000 is out of bounds")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.count("ok") == 14


def test_ignore_index_is_not_out_of_range():
    logits = lucid.zeros(3, 4)
    for make in (known, lazy):
        np.testing.assert_allclose(F.cross_entropy(logits, make([-100, 2, 1])).item(), np.log(4), rtol=1e-6)
        np.testing.assert_allclose(F.nll_loss(logits, make([7, 2, 7]), ignore_index=7).item(), 0.0)
        with pytest.raises(IndexError, match="Target -100 is out of bounds."):
            F.cross_entropy(logits, make([-100, 2, 7]), ignore_index=7).item()


# ---------------------------------------------------------------------------------------------------- nothing changes
def test_a_write_with_a_bad_lazy_index_changes_nothing():
    y = lucid.arange(4.0)
    y[lazy([1, 9])] = 7.0  # index 1 is fine, 9 is not: all or nothing
    with pytest.raises(IndexError, match="index 9 is out of bounds"):
        print(y)
    np.testing.assert_array_equal(y.numpy(), [0, 1, 2, 3])
    z = lucid.zeros(3, 2)
    z.index_add_(0, lazy([0, -1]), lucid.ones(2, 2))
    z.scatter_(1, lazy([[0, 5]]), lucid.ones(1, 2))
    with pytest.raises(IndexError, match="index out of range in self"):  # the first failed check, in program order
        z.numpy()
    np.testing.assert_array_equal(z.numpy(), np.zeros((3, 2)))


def test_backward_raises_before_any_grad_changes():
    emb = nn.Embedding(5, 2)
    emb.weight.grad = lucid.ones(5, 2)
    loss = emb(lazy([1, 9])).sum()
    with pytest.raises(IndexError, match="index out of range in self") as info:
        loss.backward()
    assert "in embedding" in str(info.value)
    np.testing.assert_array_equal(emb.weight.grad.numpy(), np.ones((5, 2)))


def test_optimizer_step_raises_before_parameters_or_state_change():
    model = nn.Linear(3, 2)
    opt = lucid.optim.Adam(model.parameters(), lr=0.1)
    model(lucid.randn(4, 3)).sum().backward()
    opt.step()
    before = [p.detach().numpy().copy() for p in model.parameters()]
    state = {k: v for k, v in opt.state[model.weight].items()}
    _ = lucid.arange(3.0)[lazy([3])]  # a bad index nobody has looked at yet
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        opt.step()
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.detach().numpy(), b)
    assert opt.state[model.weight]["step"].item() == state["step"].item()


def test_save_raises_before_the_file_is_written(tmp_path):
    path = tmp_path / "w.safetensors"
    lucid.save({"a": lucid.ones(2)}, path)
    data = path.read_bytes()
    out = lucid.arange(3.0)[lazy([-4])]
    with pytest.raises(IndexError, match="index -4 is out of bounds"):
        lucid.save({"a": out}, path)
    assert path.read_bytes() == data


def test_a_compiled_step_checks_its_indices_and_changes_nothing():
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3))
    opt = lucid.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y * 1)  # the targets are computed inside: a deferred check in the trace
        loss.backward()
        opt.step()
        return loss

    compiled = lucid.compile(step)
    x = lucid.randn(2, 4)
    for _ in range(3):  # eager, trace, replay
        compiled(x, lucid.tensor([0, 2]))
    before = [p.detach().numpy().copy() for p in model.parameters()]
    with pytest.raises(IndexError, match="Target 3 is out of bounds") as info:
        compiled(x, lucid.tensor([0, 3]))
    assert "in cross_entropy" in str(info.value)
    for p, b in zip(model.parameters(), before):
        np.testing.assert_array_equal(p.detach().numpy(), b)
    compiled(x, lucid.tensor([1, 2]))  # and it goes on working


# ---------------------------------------------------------------------------------------------------- bookkeeping
def test_pending_checks_stay_bounded_when_nothing_is_ever_read():
    t = lucid.arange(10.0)
    for _ in range(_checks._MAX_PENDING + 10):
        t[lazy([1])]
    assert len(_checks._state.pending) < _checks._MAX_PENDING
    t[lazy([1])].item()
    assert not _checks.has_pending()


def test_a_printed_index_tensor_is_known_from_then_on():
    idx = lazy([5])
    repr(idx)  # its values are computed now
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        lucid.arange(3.0)[idx]  # raised at the call: nothing is deferred
    assert not _checks.has_pending()


def test_checks_inside_a_raw_mlx_transform_never_break_a_later_evaluation():
    def f(a):
        return lucid.arange(3.0)[lucid.Tensor(a) if False else lucid.from_mlx(a)].mlx

    mx.compile(f)(mx.array([1]))  # a check on a traced index: its flag cannot be evaluated later
    assert lucid.tensor([1.0, 2.0]).sum().item() == 3.0


def test_binary_cross_entropy_range_is_checked_at_once_or_at_the_next_evaluation():
    t = lucid.tensor([0.0, 1.0])
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(lucid.tensor([0.5, 1.5]), t)  # on the host: at once
    p = lucid.tensor([0.5, 0.25], requires_grad=True)
    loss = F.binary_cross_entropy(p * 3, t)  # 0.75 is fine, 1.5 is not: known only once computed
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1") as info:
        loss.backward()
    assert "in binary_cross_entropy" in str(info.value) and p.grad is None
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        F.binary_cross_entropy(lucid.tensor([0.5, 0.5]), t * 2).item()
