"""``lucid.utils.benchmark`` (``torch.utils.benchmark``): Timer's results have the right shape and really run the
work (MLX is lazy), Measurement's statistics follow from its times, and - where PyTorch is installed - Measurement
and Compare print what PyTorch's print for the same times. No assertion depends on how fast anything runs."""
import numpy as np
import pytest

import lucid
from lucid.utils import benchmark

SPECS = [("add", "x + y", "small", "n=1"), ("add", "x + y", "small", "n=8"), ("add", "x.add(y)", "method", "n=1"),
         ("mul", "x * y", None, "n=1")]


def _times(seed: int, n: int, scale: float) -> list[float]:
    return list(scale * (1 + 0.05 * np.random.default_rng(seed).standard_normal(n)))


def _measurements(lib):
    common = lib.utils.benchmark.utils.common if hasattr(lib.utils.benchmark, "utils") else benchmark
    out = []
    for i, (label, stmt, sub_label, description) in enumerate(SPECS):
        spec = common.TaskSpec(stmt=stmt, setup="x = 1", label=label, sub_label=sub_label, description=description,
                               num_threads=1 + i % 2)
        out.append(common.Measurement(number_per_run=10, raw_times=_times(i, 7 + i, 10 ** -(3 + i)),
                                      task_spec=spec))
    return out


def test_measurement_statistics_follow_from_times():
    m = benchmark.Measurement(number_per_run=4, raw_times=[4.0, 8.0, 12.0, 40.0, 16.0],
                              task_spec=benchmark.TaskSpec(stmt="f()", setup="pass"))
    assert m.times == [1.0, 2.0, 3.0, 10.0, 4.0]
    assert m.median == 3.0 and m.mean == 4.0 and m.iqr == 4.0 - 2.0
    assert m.has_warnings and not m.meets_confidence(0.1)
    assert m.stmt == "f()" and m.num_threads == 1 and m.title == "f()"  # the TaskSpec's fields read through
    assert 1 <= m.significant_figures <= 4
    steady = benchmark.Measurement(1, [1e-3] * 8, benchmark.TaskSpec(stmt="f()", setup="pass"))
    assert steady.iqr == 0 and steady.significant_figures == 4 and not steady.has_warnings


def test_timer_results_have_the_requested_shape():
    x = lucid.randn(16, 16)
    timer = benchmark.Timer("y = x @ x\ny.sum()", setup="z = 1", globals={"x": x}, label="mm", sub_label="16",
                            description="float32", num_threads=2)
    m = timer.timeit(3)
    assert m.number_per_run == 3 and len(m.raw_times) == 1 and m.times == [m.raw_times[0] / 3]
    assert (m.label, m.sub_label, m.description, m.num_threads, m.setup) == ("mm", "16", "float32", 2, "z = 1")
    assert m.stmt == "y = x @ x\ny.sum()"  # as given: the evaluation added to it is the timer's own
    calls = []
    m = timer.blocked_autorange(callback=lambda number, t: calls.append((number, t)), min_run_time=0.01)
    assert len(m.raw_times) == len(calls) >= 1 and all(n == m.number_per_run for n, _ in calls)
    assert [t for _, t in calls] == m.raw_times and sum(m.raw_times) >= 0.01
    m = timer.adaptive_autorange(min_run_time=0.001, max_run_time=0.05)
    assert len(m.raw_times) >= 1 and m.median > 0 and m.mean == pytest.approx(np.mean(m.times))
    for wrong, message in ((dict(stmt=lambda: 0), "only a `str` stmt"), (dict(global_setup="#include <x>"),
                                                                           "C\\+\\+ only")):
        with pytest.raises(ValueError, match=message):
            benchmark.Timer(**wrong)


def test_each_run_evaluates_what_it_computed(monkeypatch):
    """MLX records ``x @ x`` and computes it when read: each run must end by evaluating its results, the names it
    assigns and the tensors its namespace holds (a module's gradients after backward, an optimizer's state)."""
    import mlx.core as mx

    from lucid.utils.benchmark import timer as timer_module
    evaluated = []
    real_eval = mx.eval

    def spy(arrays):
        evaluated.append([id(a) for a in arrays])
        real_eval(arrays)
    monkeypatch.setattr(timer_module.mx, "eval", spy)
    model = lucid.nn.Linear(3, 2)
    opt = lucid.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = lucid.randn(4, 3)
    stmt = "opt.zero_grad()\nloss = model(x).square().sum()\nloss.backward()\nopt.step()"
    benchmark.Timer(stmt, globals={"model": model, "opt": opt, "x": x}).timeit(2)
    last = set(evaluated[-1])  # the end of the last run: the namespace's tensors
    assert {id(p.mlx) for p in model.parameters()} <= last and {id(p.grad.mlx) for p in model.parameters()} <= last
    assert {id(s["momentum_buffer"].mlx) for s in opt.state.values()} <= last
    evaluated.clear()
    benchmark.Timer("x + x", globals={"x": x}).timeit(5)
    assert len(evaluated) == 2 * (2 + 5)  # per run (warm-up 2, then 5): the expression's value, then the namespace


def test_measurement_repr_and_compare_print_as_pytorchs():
    real = pytest.importorskip("torch")
    import torch.utils.benchmark  # noqa: F401
    ours, theirs = _measurements(lucid), _measurements(real)
    for a, b in zip(ours, theirs):
        assert repr(a).splitlines()[1:] == repr(b).splitlines()[1:]
        assert (a.median, a.mean, a.iqr, a.significant_figures, a.has_warnings) == pytest.approx(
            (b.median, b.mean, b.iqr, b.significant_figures, b.has_warnings))
    for configure in ((), ("trim_significant_figures",), ("colorize",), ("trim_significant_figures", "colorize",
                                                                         "highlight_warnings")):
        tables = []
        for lib, ms in ((benchmark, ours), (real.utils.benchmark, theirs)):
            compare = lib.Compare(ms)
            for name in configure:
                getattr(compare, name)()
            tables.append(str(compare))
        assert tables[0] == tables[1], configure
    compare = benchmark.Compare(ours)
    compare.colorize(rowwise=True)
    table = str(compare)
    theirs_compare = real.utils.benchmark.Compare(theirs)
    theirs_compare.colorize(rowwise=True)
    assert table == str(theirs_compare)


def test_compare_prints_a_table_per_label_a_row_per_sub_label_and_a_column_per_description(capsys):
    benchmark.Compare(_measurements(lucid)).print()
    out = capsys.readouterr().out
    assert out.count("Times are in") == 2 and "[" in out and " add " in out and " mul " in out
    header = next(line for line in out.splitlines() if "n=1" in line)
    assert "n=8" in header
    rows = [line for line in out.splitlines() if "|" in line and "n=1" not in line]
    assert [r.split("|")[0].strip() for r in rows] == ["small", "method", "small", "x * y"]  # 1 thread, then 2
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        benchmark.Compare([1.0])


def test_merge_pools_replicates_of_one_task():
    spec = benchmark.TaskSpec(stmt="f()", setup="pass")
    merged = benchmark.Measurement.merge([benchmark.Measurement(2, [2.0, 4.0], spec),
                                          benchmark.Measurement(1, [3.0], spec)])
    assert len(merged) == 1 and merged[0].times == [1.0, 2.0, 3.0] and merged[0].number_per_run == 1


def test_under_the_torch_name():
    import lucid.compat.torch.utils.benchmark as torch_benchmark
    assert torch_benchmark.Timer is benchmark.Timer
    m = torch_benchmark.Timer("torch.ones(2) + 1").timeit(2)  # the statement sees `torch`, as PyTorch's
    assert m.number_per_run == 2
