"""The global Module hooks (``torch.nn.modules.module.register_module_*``), the legacy
``Module.register_backward_hook``, ``RemovableHandle.id``, load_state_dict post-hooks that decide a strict load, and
``Module.call_super_init``. Each scenario runs on PyTorch and on lucid.compat.torch and the records must agree."""
import warnings

import numpy as np
import pytest

import lucid.compat.torch as ltorch
from lucid.nn.modules import _global_hooks

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _fresh_global_state():
    yield
    # a global backward hook fixes the kind (full or legacy) for the process, as in PyTorch: reset both
    _global_hooks.state.is_full_backward_hook = None
    torch.nn.modules.module._global_is_full_backward_hook = None


def _both(scenario):
    """The scenario's record on PyTorch and on lucid, which must be equal."""
    expected, got = scenario(torch), scenario(ltorch)
    assert got == expected
    return got


def _shapes(grads):
    return [None if g is None else tuple(g.shape) for g in grads]


def test_global_call_hooks_run_before_the_modules_own_in_pytorchs_order():
    def scenario(t):
        mm, log = t.nn.modules.module, []
        handles = [
            mm.register_module_forward_pre_hook(lambda m, a: log.append(("global pre", type(m).__name__))),
            mm.register_module_forward_hook(lambda m, a, o: log.append(("global fwd", type(m).__name__))),
            mm.register_module_full_backward_pre_hook(lambda m, go: log.append(("global bw pre", _shapes(go)))),
            mm.register_module_full_backward_hook(lambda m, gi, go: log.append(("global bw", _shapes(gi)))),
        ]
        lin = t.nn.Linear(3, 2)
        lin.register_forward_pre_hook(lambda m, a: log.append(("pre",)))
        lin.register_forward_hook(lambda m, a, o: log.append(("fwd",)))
        lin.register_full_backward_pre_hook(lambda m, go: log.append(("bw pre",)))
        lin.register_full_backward_hook(lambda m, gi, go: log.append(("bw",)))
        seq = t.nn.Sequential(lin)
        seq(t.ones(4, 3, requires_grad=True)).sum().backward()
        for h in handles:
            h.remove()
        seq(t.ones(4, 3))  # the global hooks are gone; the module's stay
        return log

    log = _both(scenario)
    assert log[:2] == [("global pre", "Sequential"), ("global pre", "Linear")]
    assert not _global_hooks.state.active


def test_global_forward_hooks_take_kwargs_replace_values_and_always_call():
    def scenario(t):
        mm, log = t.nn.modules.module, []
        h1 = mm.register_module_forward_pre_hook(lambda m, a: (a[0] * 2,))
        h2 = mm.register_module_forward_hook(lambda m, a, k, o: log.append(sorted(k)) or o + 1, with_kwargs=True)
        h3 = mm.register_module_forward_hook(lambda m, a, o: log.append(("always", o is None)), always_call=True)

        class Fails(t.nn.Module):
            def forward(self, x, scale=1.0):
                if scale < 0:
                    raise ValueError("negative")
                return x * scale

        out = Fails()(t.ones(2), scale=3.0)
        log.append(out.tolist())
        with pytest.raises(ValueError):
            Fails()(t.ones(2), scale=-1.0)
        for h in (h1, h2, h3):
            h.remove()
        log.append(Fails()(t.ones(2)).tolist())
        return log

    assert _both(scenario)[-1] == [1.0, 1.0]


def test_registration_hooks_see_and_may_replace_every_registration():
    def scenario(t):
        mm, log = t.nn.modules.module, []
        handles = [
            mm.register_module_buffer_registration_hook(lambda m, n, b: log.append(("buffer", n))),
            mm.register_module_module_registration_hook(lambda m, n, c: log.append(("module", n))),
            mm.register_module_parameter_registration_hook(lambda m, n, p: log.append(("param", n))),
            mm.register_module_buffer_registration_hook(lambda m, n, b: t.zeros(1) if n == "swap" else None),
        ]
        s = t.nn.Sequential(t.nn.Linear(1, 1), t.nn.BatchNorm1d(2))
        s.register_buffer("none", None)
        s.register_parameter("no_param", None)  # PyTorch runs no hook for a None parameter
        s.p = t.nn.Parameter(t.ones(1))
        s.child = t.nn.ReLU()
        s.child = None
        s.add_module("other", t.nn.Tanh())
        s.register_buffer("swap", t.ones(3))
        log.append(s.swap.tolist())
        for h in handles:
            h.remove()
        t.nn.Linear(1, 1)
        return log

    _both(scenario)


def test_global_backward_hooks_are_full_or_legacy_not_both():
    def scenario(t):
        mm, log = t.nn.modules.module, []
        h = mm.register_module_full_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError) as e:
            mm.register_module_backward_hook(lambda *a: None)
        log.append(str(e.value))
        h.remove()
        with pytest.raises(RuntimeError):  # the kind stays chosen after the hook is removed, as in PyTorch
            mm.register_module_backward_hook(lambda *a: None)
        return log

    _both(scenario)


def test_legacy_backward_hook_is_a_hook_on_the_output_node():
    def scenario(t):
        log = []

        class Exp(t.nn.Module):
            def forward(self, x):
                return x.exp()

        m = Exp()
        m.register_backward_hook(lambda mod, gi, go: log.append((_shapes(gi), _shapes(go))) or (gi[0] * 3,))
        x = t.zeros(2, 3, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m(x).sum().backward()
        log.append(x.grad.tolist())
        log.append([str(w.message) for w in caught if w.category is FutureWarning])
        with pytest.raises(RuntimeError) as e:
            m.register_full_backward_hook(lambda *a: None)
        log.append(str(e.value))
        return log

    log = _both(scenario)
    assert log[1] == [[3.0] * 3] * 2  # exp'(0) = 1, tripled by the hook


def test_legacy_backward_hook_warns_where_its_gradients_are_partial():
    def scenario(t):
        lin = t.nn.Linear(3, 2)
        lin.register_backward_hook(lambda *a: None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lin(t.ones(4, 3, requires_grad=True)).sum().backward()
        return [str(w.message) for w in caught if w.category is FutureWarning]

    assert "multiple autograd Nodes" in _both(scenario)[0]


def test_removable_handle_id_is_the_hook_key():
    def scenario(t):
        m = t.nn.Linear(1, 1)
        h1 = m.register_forward_hook(lambda *a: None, with_kwargs=True, always_call=True)
        h2 = m.register_forward_pre_hook(lambda *a: None)
        record = [isinstance(h1.id, int), h2.id > h1.id, h1.id in m._forward_hooks,
                  h1.id in m._forward_hooks_with_kwargs]
        h1.remove()
        record += [h1.id in m._forward_hooks, h1.id in m._forward_hooks_with_kwargs,
                   h1.id in m._forward_hooks_always_called]
        return record

    assert _both(scenario) == [True, True, True, True, False, False, False]


def test_load_state_dict_post_hooks_decide_a_strict_load():
    def scenario(t):
        log = []
        outer = t.nn.Sequential(t.nn.Linear(2, 2))
        outer[0].register_load_state_dict_post_hook(lambda m, k: log.append("inner"))
        outer.register_load_state_dict_post_hook(lambda m, k: log.append("outer") or k.missing_keys.append("x"))
        with pytest.raises(RuntimeError) as e:
            outer.load_state_dict(outer.state_dict())
        log.append(str(e.value))
        log.append(repr(outer.load_state_dict(outer.state_dict(), strict=False)))
        clears = t.nn.Linear(2, 2)
        clears.register_load_state_dict_post_hook(lambda m, k: k.missing_keys.clear())
        log.append(repr(clears.load_state_dict({"weight": t.full((2, 2), 5.0)})))
        log.append(clears.weight.tolist())
        returns = t.nn.Linear(2, 2)
        returns.register_load_state_dict_post_hook(lambda m, k: k)
        with pytest.raises(AssertionError) as e:
            returns.load_state_dict(returns.state_dict())
        log.append(str(e.value))
        return log

    assert _both(scenario)[:2] == ["inner", "outer"]


def test_strict_load_without_post_hooks_still_leaves_the_module_untouched():
    m = ltorch.nn.Linear(2, 2)
    before = m.weight.tolist()
    with pytest.raises(RuntimeError, match="Missing key"):
        m.load_state_dict({"weight": ltorch.zeros(2, 2)})
    assert m.weight.tolist() == before


def test_call_super_init_passes_arguments_to_the_next_class():
    def scenario(t):
        class Mixin:
            def __init__(self, *args, **kwargs):
                self.got = (args, kwargs)
                super().__init__()

        class Cooperative(t.nn.Module, Mixin):
            call_super_init = True

        class Plain(t.nn.Module, Mixin):
            pass

        record = [t.nn.Module.call_super_init, Cooperative(1, b=2).got, hasattr(Plain(), "got")]
        with pytest.raises(TypeError) as e:
            Plain(1)
        return record + [str(e.value)]

    assert _both(scenario)[1] == ((1,), {"b": 2})


def test_no_global_hook_means_one_false_flag():
    assert _global_hooks.state.active is False
    h = ltorch.nn.modules.module.register_module_full_backward_pre_hook(lambda *a: None)
    assert _global_hooks.state.active is True
    h.remove()
    assert _global_hooks.state.active is False
    np.testing.assert_array_equal(ltorch.nn.Linear(1, 1)(ltorch.ones(1, 1)).shape, (1, 1))
