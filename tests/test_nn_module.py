"""nn.Module, Parameter and the containers: registration and naming as in PyTorch, modes, dtype conversion,
state_dict save/load (every error message, and a failed load leaves the module untouched), forward and backward
hooks against closed forms, and repr strings exactly as PyTorch prints them."""
import copy
from collections import OrderedDict

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.nn import Parameter


class Lin(nn.Module):
    """A Linear stand-in (y = x W^T + b) so these tests do not depend on the layer files."""

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(lucid.randn(out_features, in_features))
        if bias:
            self.bias = Parameter(lucid.randn(out_features))
        else:
            self.register_parameter("bias", None)

    def forward(self, x):
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Norm(nn.Module):
    """Buffers of both kinds, like BatchNorm (running stats persistent, a scratch buffer not)."""

    def __init__(self, n):
        super().__init__()
        self.weight = Parameter(lucid.ones(n))
        self.register_buffer("running_mean", lucid.zeros(n))
        self.register_buffer("num_batches_tracked", lucid.tensor(0, dtype=lucid.int64))
        self.register_buffer("scratch", lucid.zeros(n), persistent=False)

    def forward(self, x):
        return (x - self.running_mean) * self.weight


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(Lin(4, 3), nn.ReLU() if hasattr(nn, "ReLU") else nn.Identity())
        self.norm = Norm(3)
        self.head = Lin(3, 2)

    def forward(self, x):
        return self.head(self.norm(self.features(x)))


def np_of(t):
    return t.detach().numpy()


# ---------------------------------------------------------------------------------------------------- Parameter
def test_parameter_is_a_leaf_tensor_sharing_storage():
    t = lucid.tensor([1.0, 2.0])
    p = Parameter(t)
    assert isinstance(p, lucid.Tensor) and isinstance(p, nn.parameter.Parameter)
    assert p.is_leaf and p.requires_grad and not t.requires_grad
    with lucid.no_grad():
        p.mul_(3)
    np.testing.assert_allclose(t.numpy(), [3.0, 6.0])  # same storage
    assert not Parameter(t, requires_grad=False).requires_grad
    assert Parameter().shape == (0,)


def test_parameter_from_a_non_leaf_is_a_leaf():
    x = lucid.ones(2, requires_grad=True)
    p = Parameter(x * 2)
    assert p.is_leaf and p.grad_fn is None


def test_parameter_repr():
    p = Parameter(lucid.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\nTensor([1., 2.], requires_grad=True)"


def test_parameter_integer_dtype_cannot_require_grad():
    with pytest.raises(RuntimeError, match="floating point"):
        Parameter(lucid.tensor([1, 2]))
    assert Parameter(lucid.tensor([1, 2]), requires_grad=False).dtype == lucid.int64


def test_ops_accept_parameters_and_return_tensors():
    p = Parameter(lucid.tensor([1.0, 2.0, 3.0]))
    y = (p * p).sum()
    assert type(y) is lucid.Tensor
    y.backward()
    np.testing.assert_allclose(p.grad.numpy(), [2.0, 4.0, 6.0])
    assert type(p.detach()) is lucid.Tensor


def test_parameter_deepcopy_is_independent():
    p = Parameter(lucid.tensor([1.0, 2.0]))
    p.tag = "decay"
    q = copy.deepcopy(p)
    assert isinstance(q, Parameter) and q.requires_grad and q.tag == "decay"
    with lucid.no_grad():
        p.add_(1)
    np.testing.assert_allclose(q.detach().numpy(), [1.0, 2.0])


# ---------------------------------------------------------------------------------------------------- registration
def test_named_parameters_buffers_modules_follow_pytorch_names_and_order():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "features.0.weight", "features.0.bias", "norm.weight", "head.weight", "head.bias"]
    assert [n for n, _ in net.named_buffers()] == ["norm.running_mean", "norm.num_batches_tracked", "norm.scratch"]
    assert [n for n, _ in net.named_modules()] == ["", "features", "features.0", "features.1", "norm", "head"]
    assert [n for n, _ in net.named_children()] == ["features", "norm", "head"]
    assert [n for n, _ in net.named_parameters(prefix="model")][0] == "model.features.0.weight"
    assert [n for n, _ in net.named_parameters(recurse=False)] == []
    assert [n for n, _ in net.head.named_parameters(recurse=False)] == ["weight", "bias"]
    assert len(list(net.parameters())) == 5 and len(list(net.buffers())) == 3
    assert list(net.modules())[0] is net


def test_shared_parameters_and_modules_are_listed_once():
    shared = Lin(2, 2)
    seq = nn.Sequential(shared, shared)
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert [n for n, _ in seq.named_parameters(remove_duplicate=False)] == ["0.weight", "0.bias", "1.weight",
                                                                            "1.bias"]
    assert [n for n, _ in seq.named_modules()] == ["", "0"]
    tied = Lin(2, 2)
    tied.other = tied.weight
    assert [n for n, _ in tied.named_parameters()] == ["weight", "bias"]
    assert list(tied.state_dict()) == ["weight", "bias", "other"]  # state_dict keeps every name, as PyTorch


def test_setattr_routes_by_kind_and_reassignment_changes_kind():
    m = nn.Module()
    m.p = Parameter(lucid.zeros(1))
    m.sub = nn.Identity()
    m.register_buffer("b", lucid.zeros(1))
    m.plain = 3
    assert list(m._parameters) == ["p"] and list(m._modules) == ["sub"] and list(m._buffers) == ["b"]
    assert m.plain == 3 and "plain" in m.__dict__
    m.b = lucid.ones(1)  # assigning a tensor to a buffer name replaces the buffer
    np.testing.assert_allclose(m.b.numpy(), [1.0])
    m.p = None
    assert m._parameters["p"] is None and m.p is None
    m.sub = Parameter(lucid.zeros(1))  # a module name that now holds a parameter
    assert "sub" not in m._modules and "sub" in m._parameters
    m.nb = nn.Buffer(lucid.zeros(2), persistent=False)
    assert "nb" in m._buffers and "nb" in m._non_persistent_buffers_set
    del m.b, m.sub, m.plain
    assert "b" not in m._buffers and "sub" not in m._parameters and not hasattr(m, "plain")


def test_registration_errors_match_pytorch():
    m = nn.Module()
    with pytest.raises(TypeError, match=r"cannot assign 'lucid.Tensor' as parameter 'w' \(lucid.nn.Parameter or "
                                        r"None expected\)"):
        m.w = Parameter(lucid.zeros(1))
        m.w = lucid.zeros(1)
    with pytest.raises(KeyError) as e:
        m.register_parameter("a.b", None)
    assert e.value.args[0] == 'parameter name can\'t contain "."'
    with pytest.raises(KeyError) as e:
        m.register_buffer("", None)
    assert e.value.args[0] == 'buffer name can\'t be empty string ""'
    m.x = 1
    with pytest.raises(KeyError) as e:
        m.register_buffer("x", lucid.zeros(1))
    assert e.value.args[0] == "attribute 'x' already exists"
    with pytest.raises(TypeError, match="cannot assign 'int' object to buffer 'y'"):
        m.register_buffer("y", 3)
    with pytest.raises(TypeError, match="cannot assign 'lucid.Tensor' object to parameter 'z'"):
        m.register_parameter("z", lucid.zeros(1))
    with pytest.raises(ValueError, match="Cannot assign non-leaf Tensor to parameter 'q'"):
        bad = Parameter(lucid.zeros(1))
        bad._node = (lucid.ones(1, requires_grad=True) * 2).grad_fn
        m.register_parameter("q", bad)
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("k", 5)
    with pytest.raises(KeyError) as e:
        m.add_module("a.b", nn.Identity())
    assert e.value.args[0] == 'module name can\'t contain ".", got: a.b'
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'nope'"):
        m.nope

    class Forgot(nn.Module):
        def __init__(self):
            self.w = Parameter(lucid.zeros(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Forgot()


def test_get_submodule_parameter_buffer():
    net = Net()
    assert net.get_submodule("features.0") is net.features[0]
    assert net.get_submodule("") is net
    assert net.get_parameter("head.bias") is net.head.bias
    assert net.get_buffer("norm.running_mean") is net.norm.running_mean
    with pytest.raises(AttributeError, match="Net has no attribute `nope`"):
        net.get_submodule("nope")
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        net.get_submodule("head.weight")
    with pytest.raises(AttributeError, match="`running_mean` is not an nn.Parameter"):
        net.get_parameter("norm.running_mean")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        net.get_buffer("norm.weight")


def test_forward_missing_raises():
    with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'):
        nn.Module()(1)


# ---------------------------------------------------------------------------------------------------- modes, grads
def test_train_eval_propagate_to_every_submodule():
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train(1)


def test_zero_grad_set_to_none_and_zero_fill():
    net = Lin(3, 2)
    net(lucid.randn(4, 3)).sum().backward()
    g = net.weight.grad
    net.zero_grad(set_to_none=False)
    assert net.weight.grad is g
    np.testing.assert_array_equal(g.numpy(), np.zeros((2, 3)))
    net.zero_grad()
    assert net.weight.grad is None and net.bias.grad is None


def test_requires_grad_():
    net = Net()
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    net.requires_grad_()
    assert all(p.requires_grad for p in net.parameters())


def test_to_dtype_keeps_parameter_objects_and_casts_grads():
    net = Net()
    net(lucid.randn(2, 4)).sum().backward()
    params = list(net.parameters())
    grad = net.head.weight.grad
    assert net.to(lucid.float64) is net
    assert [id(p) for p in net.parameters()] == [id(p) for p in params]
    assert all(p.dtype == lucid.float64 and isinstance(p, Parameter) and p.requires_grad for p in params)
    assert net.head.weight.grad is grad and grad.dtype == lucid.float64
    assert net.norm.running_mean.dtype == lucid.float64
    assert net.norm.num_batches_tracked.dtype == lucid.int64  # integer buffers keep their dtype
    out = net(lucid.randn(2, 4, dtype=lucid.float64))
    assert out.dtype == lucid.float64
    net.float()
    assert net.head.weight.dtype == lucid.float32 and net.norm.num_batches_tracked.dtype == lucid.int64
    net.half()
    assert net.head.bias.dtype == lucid.float16
    net.to(lucid.zeros(1, dtype=lucid.float32)).to("cpu").cpu()
    assert net.head.bias.dtype == lucid.float32
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes"):
        net.to(lucid.int32)


def test_apply_visits_children_first():
    net = Net()
    seen = []
    assert net.apply(lambda m: seen.append(type(m).__name__)) is net
    assert seen[-1] == "Net" and seen[0] == "Lin"


# ---------------------------------------------------------------------------------------------------- state_dict
def test_state_dict_keys_detached_and_ordered():
    net = Net()
    sd = net.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == ["features.0.weight", "features.0.bias", "norm.weight", "norm.running_mean",
                        "norm.num_batches_tracked", "head.weight", "head.bias"]
    assert all(not v.requires_grad and type(v) is lucid.Tensor for v in sd.values())
    assert sd._metadata[""]["version"] == 1 and "features.0" in sd._metadata
    kept = net.state_dict(keep_vars=True)
    assert kept["head.weight"] is net.head.weight
    assert list(net.head.state_dict(prefix="h.")) == ["h.weight", "h.bias"]


def test_state_dict_round_trip_gives_same_outputs():
    lucid.manual_seed(0)
    a, b = Net(), Net()
    x = lucid.randn(5, 4)
    assert not np.allclose(np_of(a(x)), np_of(b(x)))
    params_b = list(b.parameters())
    result = b.load_state_dict(copy.deepcopy(a.state_dict()))
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    np.testing.assert_allclose(np_of(a(x)), np_of(b(x)), rtol=1e-6)
    assert [id(p) for p in b.parameters()] == [id(p) for p in params_b]  # copied in place


def test_load_accepts_numpy_and_lists_and_keeps_dtype():
    net = Lin(2, 2)
    sd = {"weight": np.arange(4, dtype=np.float64).reshape(2, 2), "bias": [1.0, 2.0]}
    net.load_state_dict(sd)
    assert net.weight.dtype == lucid.float32 and net.weight.requires_grad
    np.testing.assert_allclose(np_of(net.weight), [[0, 1], [2, 3]])
    np.testing.assert_allclose(np_of(net.bias), [1, 2])


def _snapshot(m):
    return {k: v.numpy().copy() for k, v in m.state_dict().items()}


def _assert_untouched(m, snap, params):
    now = _snapshot(m)
    assert list(now) == list(snap)
    for k in snap:
        np.testing.assert_array_equal(now[k], snap[k])
    assert [id(p) for p in m.parameters()] == [id(p) for p in params]


def test_load_missing_key_error_and_module_untouched():
    net = Net()
    snap, params = _snapshot(net), list(net.parameters())
    sd = {k: v + 1 for k, v in net.state_dict().items()}
    del sd["head.bias"], sd["norm.running_mean"]
    with pytest.raises(RuntimeError) as e:
        net.load_state_dict(sd)
    assert str(e.value) == ('Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: '
                            '"norm.running_mean", "head.bias". ')
    _assert_untouched(net, snap, params)


def test_load_unexpected_key_error():
    net = Lin(2, 2)
    snap, params = _snapshot(net), list(net.parameters())
    sd = {"weight": np.zeros((2, 2)), "bias": np.zeros(2), "extra": np.zeros(1), "sub.weight": np.zeros(1)}
    with pytest.raises(RuntimeError) as e:
        net.load_state_dict(sd)
    assert str(e.value) == ('Error(s) in loading state_dict for Lin:\n\tUnexpected key(s) in state_dict: "extra", '
                            '"sub.weight". ')
    _assert_untouched(net, snap, params)


def test_load_size_mismatch_error_even_when_not_strict():
    net = Lin(2, 2)
    snap, params = _snapshot(net), list(net.parameters())
    sd = {"weight": np.zeros((3, 2)), "bias": np.zeros(2)}
    for strict in (True, False):
        with pytest.raises(RuntimeError) as e:
            net.load_state_dict(sd, strict=strict)
        assert str(e.value) == ("Error(s) in loading state_dict for Lin:\n\tsize mismatch for weight: copying a "
                                "param with shape [3, 2] from checkpoint, the shape in current model is [2, 2].")
        _assert_untouched(net, snap, params)


def test_load_all_errors_together_in_pytorch_order():
    net = Lin(2, 2)
    sd = {"weight": np.zeros((3, 2)), "extra": np.zeros(1)}
    with pytest.raises(RuntimeError) as e:
        net.load_state_dict(sd)
    assert str(e.value) == (
        'Error(s) in loading state_dict for Lin:\n\tMissing key(s) in state_dict: "bias". \n\t'
        'Unexpected key(s) in state_dict: "extra". \n\tsize mismatch for weight: copying a param with shape [3, 2] '
        'from checkpoint, the shape in current model is [2, 2].')


def test_load_non_tensor_value_error():
    net = Lin(2, 2)
    with pytest.raises(RuntimeError, match='While copying the parameter named "bias", expected lucid.Tensor or '
                                           "Tensor-like object from checkpoint but received <class 'str'>"):
        net.load_state_dict({"weight": np.zeros((2, 2)), "bias": "oops"})


def test_load_not_a_mapping():
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like, got <class 'list'>."):
        Lin(2, 2).load_state_dict([1, 2])


def test_load_non_strict_reports_keys_and_loads_the_rest():
    net = Net()
    sd = {"head.weight": np.ones((2, 3)), "bogus": np.zeros(1), "norm.other": np.zeros(1)}
    result = net.load_state_dict(sd, strict=False)
    assert result.unexpected_keys == ["bogus", "norm.other"]  # the root checks its keys first
    assert result.missing_keys == ["features.0.weight", "features.0.bias", "norm.weight", "norm.running_mean",
                                   "norm.num_batches_tracked", "head.bias"]
    assert repr(result).startswith("_IncompatibleKeys(missing_keys=['features.0.weight'")
    np.testing.assert_allclose(np_of(net.head.weight), np.ones((2, 3)))


def test_load_zero_dim_from_one_element_and_non_persistent_buffers_skipped():
    net = Norm(2)
    sd = net.state_dict()
    assert "scratch" not in sd
    sd["num_batches_tracked"] = np.array([7])
    net.load_state_dict(sd)
    assert net.num_batches_tracked.item() == 7 and net.num_batches_tracked.dtype == lucid.int64


def test_load_assign_replaces_parameters():
    net = Lin(2, 2)
    net.weight.requires_grad_(False)
    new_w = lucid.ones(2, 2, dtype=lucid.float64)
    net.load_state_dict({"weight": new_w, "bias": lucid.zeros(2)}, assign=True)
    assert isinstance(net.weight, Parameter) and net.weight.dtype == lucid.float64
    assert not net.weight.requires_grad and net.bias.requires_grad


def test_load_from_state_dict_override_and_hooks():
    class Versioned(Norm):
        _version = 2

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, *rest):
            if local_metadata.get("version", None) is None and prefix + "num_batches_tracked" not in state_dict:
                state_dict[prefix + "num_batches_tracked"] = lucid.tensor(0, dtype=lucid.int64)
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, *rest)

    outer = nn.Sequential(Versioned(2))
    old = {"0.weight": np.ones(2), "0.running_mean": np.full(2, 5.0)}  # an old checkpoint without the counter
    seen = []
    outer[0].register_load_state_dict_post_hook(lambda m, keys: seen.append(keys))
    outer.load_state_dict(old)
    np.testing.assert_allclose(np_of(outer[0].running_mean), [5.0, 5.0])
    assert len(seen) == 1 and seen[0].missing_keys == []
    assert outer.state_dict()._metadata["0"]["version"] == 2


def test_extra_state_round_trip():
    class WithExtra(nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 1

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]

    a, b = WithExtra(), WithExtra()
    a.value = 9
    sd = a.state_dict()
    assert list(sd) == ["_extra_state"]
    b.load_state_dict(sd)
    assert b.value == 9
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        b.load_state_dict({})


def test_state_dict_hooks():
    net = Lin(2, 2)
    net.register_state_dict_post_hook(lambda m, sd, prefix, meta: (sd.pop(prefix + "bias"), None)[1])
    net.register_state_dict_pre_hook(lambda m, prefix, keep_vars: seen.append(keep_vars))
    seen = []
    assert list(net.state_dict()) == ["weight"] and seen == [False]


# ---------------------------------------------------------------------------------------------------- forward hooks
def test_forward_pre_hook_and_forward_hook_can_replace_values():
    net = Lin(2, 2)
    x = lucid.randn(3, 2)
    expected = np_of(net(x * 2)) + 1
    h1 = net.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    h2 = net.register_forward_hook(lambda m, args, out: out + 1)
    np.testing.assert_allclose(np_of(net(x)), expected, rtol=1e-6)
    h1.remove()
    h2.remove()
    np.testing.assert_allclose(np_of(net(x)), np_of(x @ net.weight.T + net.bias), rtol=1e-6)


def test_forward_hooks_with_kwargs_order_and_prepend():
    class KW(nn.Module):
        def forward(self, x, scale=1.0):
            return x * scale

    m = KW()
    order = []
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"scale": 3.0}), with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: order.append(("kw", kwargs["scale"])), with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: order.append("first"), prepend=True)
    out = m(lucid.ones(2), scale=2.0)
    np.testing.assert_allclose(out.numpy(), [3.0, 3.0])
    assert order == ["first", ("kw", 3.0)]


def test_forward_hook_always_call_runs_when_forward_raises():
    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    seen = []
    m.register_forward_hook(lambda mod, args, out: seen.append("always"), always_call=True)
    m.register_forward_hook(lambda mod, args, out: seen.append("normal"))
    with pytest.raises(ValueError, match="boom"):
        m(lucid.ones(1))
    assert seen == ["always"]


def test_pre_hook_with_kwargs_bad_return():
    m = nn.Identity()
    m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple of \\(new_args, new_kwargs"):
        m(lucid.ones(1))


# ---------------------------------------------------------------------------------------------------- backward hooks
def _lin_data():
    lucid.manual_seed(1)
    net = Lin(3, 2)
    x = lucid.randn(4, 3, requires_grad=True)
    c = lucid.randn(4, 2)
    return net, x, c


def test_full_backward_hook_closed_form():
    # loss = sum(c * (x W^T + b)): grad_output = c, grad_input = c W
    net, x, c = _lin_data()
    calls = []
    net.register_full_backward_hook(lambda m, gi, go: calls.append((m, gi, go)))
    (net(x) * c).sum().backward()
    assert len(calls) == 1
    m, gi, go = calls[0]
    assert m is net and isinstance(gi, tuple) and isinstance(go, tuple) and len(gi) == 1 and len(go) == 1
    np.testing.assert_allclose(go[0].numpy(), c.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gi[0].numpy(), c.numpy() @ np_of(net.weight), rtol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), c.numpy() @ np_of(net.weight), rtol=1e-5)
    np.testing.assert_allclose(net.weight.grad.numpy(), c.numpy().T @ x.detach().numpy(), rtol=1e-5)


def test_full_backward_hook_can_replace_grad_input():
    net, x, c = _lin_data()
    net.register_full_backward_hook(lambda m, gi, go: (gi[0] * 10,))
    (net(x) * c).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 10 * c.numpy() @ np_of(net.weight), rtol=1e-5)
    np.testing.assert_allclose(net.weight.grad.numpy(), c.numpy().T @ x.detach().numpy(), rtol=1e-5)


def test_full_backward_hook_input_without_grad_gives_none():
    net, x, c = _lin_data()
    calls = []
    net.register_full_backward_hook(lambda m, gi, go: calls.append((gi, go)))
    with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are computed with respect to "
                                         "module outputs since no inputs require gradients"):
        (net(x.detach()) * c).sum().backward()
    assert len(calls) == 1 and calls[0][0] == (None,)
    np.testing.assert_allclose(calls[0][1][0].numpy(), c.numpy(), rtol=1e-6)


def test_full_backward_hook_two_inputs_one_constant():
    class Mul(nn.Module):
        def forward(self, a, b):
            return a * b

    m = Mul()
    a = lucid.tensor([1.0, 2.0], requires_grad=True)
    b = lucid.tensor([3.0, 4.0])
    calls = []
    m.register_full_backward_hook(lambda mod, gi, go: calls.append(gi))
    m(a, b).sum().backward()
    (ga, gb), = calls
    np.testing.assert_allclose(ga.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(gb.numpy(), [0.0, 0.0])  # PyTorch materializes zeros here


def test_full_backward_pre_hook_replaces_grad_output_and_order():
    net, x, c = _lin_data()
    order = []

    def pre(m, go):
        order.append("pre")
        return (go[0] * 2,)

    net.register_full_backward_pre_hook(pre)
    net.register_full_backward_hook(lambda m, gi, go: order.append("hook"))
    (net(x) * c).sum().backward()
    assert order == ["pre", "hook"]
    np.testing.assert_allclose(x.grad.numpy(), 2 * c.numpy() @ np_of(net.weight), rtol=1e-5)
    np.testing.assert_allclose(net.weight.grad.numpy(), 2 * c.numpy().T @ x.detach().numpy(), rtol=1e-5)


def test_backward_hook_fires_per_call_and_handle_removes():
    net, x, c = _lin_data()
    calls = []
    h = net.register_full_backward_hook(lambda m, gi, go: calls.append(gi[0].shape))
    y = net(x) + net(x[:2].sum(0, keepdim=True))
    y.sum().backward()
    assert sorted(calls) == [(1, 3), (4, 3)]
    h.remove()
    net(x).sum().backward()
    assert len(calls) == 2


def test_backward_hook_with_autograd_grad_and_no_grad_forward():
    net, x, c = _lin_data()
    calls = []
    net.register_full_backward_hook(lambda m, gi, go: calls.append(1))
    (gx,) = lucid.autograd.grad((net(x) * c).sum(), [x])
    np.testing.assert_allclose(gx.numpy(), c.numpy() @ np_of(net.weight), rtol=1e-5)
    assert calls == [1]
    with lucid.no_grad():
        out = net(x)
    assert not out.requires_grad


# ---------------------------------------------------------------------------------------------------- repr
def test_repr_nested_matches_pytorch():
    seq = nn.Sequential(Lin(2, 3), nn.Identity(), nn.Sequential(Lin(3, 1, bias=False)))
    assert repr(seq) == ("Sequential(\n"
                         "  (0): Lin(in_features=2, out_features=3, bias=True)\n"
                         "  (1): Identity()\n"
                         "  (2): Sequential(\n"
                         "    (0): Lin(in_features=3, out_features=1, bias=False)\n"
                         "  )\n"
                         ")")


def test_repr_multiline_extra_repr_and_children():
    class Both(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = nn.Identity()

        def extra_repr(self):
            return "a=1\nb=2"

    assert repr(Both()) == "Both(\n  a=1\n  b=2\n  (inner): Identity()\n)"
    assert repr(nn.Module()) == "Module()"


def test_repr_module_list_collapses_repeats():
    ml = nn.ModuleList([Lin(2, 2), Lin(2, 2), Lin(2, 2), Lin(2, 3), nn.Identity()])
    assert repr(ml) == ("ModuleList(\n"
                        "  (0-2): 3 x Lin(in_features=2, out_features=2, bias=True)\n"
                        "  (3): Lin(in_features=2, out_features=3, bias=True)\n"
                        "  (4): Identity()\n"
                        ")")
    assert repr(nn.ModuleList()) == "ModuleList()"
    nested = nn.ModuleList([nn.Sequential(nn.Identity())] * 2)
    assert repr(nested) == ("ModuleList(\n"
                            "  (0-1): 2 x Sequential(\n"
                            "    (0): Identity()\n"
                            "  )\n"
                            ")")


def test_repr_parameter_containers_flatten_unflatten():
    pl = nn.ParameterList([Parameter(lucid.zeros(2, 3)), lucid.zeros(4)])
    assert repr(pl) == ("ParameterList(\n"
                        "    (0): Parameter containing: [lucid.float32 of size 2x3]\n"
                        "    (1): Parameter containing: [lucid.float32 of size 4]\n"
                        ")")
    pd = nn.ParameterDict({"b": lucid.zeros(1, dtype=lucid.float64), "a": lucid.zeros(2)})
    assert repr(pd) == ("ParameterDict(\n"
                        "    (a): Parameter containing: [lucid.float32 of size 2]\n"
                        "    (b): Parameter containing: [lucid.float64 of size 1]\n"
                        ")")
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    assert repr(nn.Unflatten(1, (2, 5))) == "Unflatten(dim=1, unflattened_size=(2, 5))"


# ---------------------------------------------------------------------------------------------------- containers
def test_sequential_indexing_slicing_and_editing():
    a, b, c = Lin(2, 2), nn.Identity(), Lin(2, 2)
    seq = nn.Sequential(a, b, c)
    assert len(seq) == 3 and seq[0] is a and seq[-1] is c and list(seq) == [a, b, c]
    sub = seq[1:]
    assert isinstance(sub, nn.Sequential) and list(sub) == [b, c] and list(sub._modules) == ["1", "2"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]
    x = lucid.randn(3, 2)
    np.testing.assert_allclose(np_of(seq(x)), np_of(c(a(x))), rtol=1e-6)
    del seq[1]
    assert list(seq._modules) == ["0", "1"] and seq[1] is c
    seq.insert(1, b)
    assert list(seq) == [a, b, c]
    seq.append(nn.Identity()).extend([nn.Identity()])
    assert len(seq) == 5 and list(seq._modules) == ["0", "1", "2", "3", "4"]
    seq[0] = c
    assert seq[0] is c
    assert seq.pop(0) is c and len(seq) == 4
    assert len(seq + nn.Sequential(a)) == 5 and len(nn.Sequential(a) * 3) == 3


def test_sequential_ordered_dict_names():
    seq = nn.Sequential(OrderedDict([("fc", Lin(2, 2)), ("act", nn.Identity())]))
    assert [n for n, _ in seq.named_parameters()] == ["fc.weight", "fc.bias"]
    assert seq.fc is seq[0]
    assert list(seq[1:]._modules) == ["act"]


def test_module_list():
    layers = nn.ModuleList([Lin(2, 2) for _ in range(3)])
    assert len(layers) == 3 and [n for n, _ in layers.named_parameters()][-1] == "2.bias"
    layers.append(nn.Identity())
    layers.extend([nn.Identity()])
    layers.insert(0, nn.Identity())
    assert len(layers) == 6 and isinstance(layers[0], nn.Identity) and isinstance(layers[1], Lin)
    del layers[0]
    assert list(layers._modules) == [str(i) for i in range(5)] and isinstance(layers[0], Lin)
    assert isinstance(layers[1:3], nn.ModuleList) and len(layers[1:3]) == 2
    layers += nn.ModuleList([nn.Identity()])
    assert len(layers) == 6 and len(layers + layers) == 12
    with pytest.raises(TypeError, match="ModuleList.extend should be called with an iterable, but got int"):
        layers.extend(3)
    with pytest.raises(NotImplementedError):
        layers(1)


def test_module_dict():
    md = nn.ModuleDict({"b": Lin(1, 1), "a": nn.Identity()})
    assert list(md.keys()) == ["b", "a"] and "a" in md and len(md) == 2
    md["c"] = nn.Identity()
    md.update([("d", nn.Identity())])
    assert list(md) == ["b", "a", "c", "d"]
    assert isinstance(md.pop("b"), Lin) and "b" not in md
    assert [n for n, _ in md.named_modules()] == ["", "a", "c", "d"]
    with pytest.raises(ValueError, match="ModuleDict update sequence element #0 has length 1; 2 is required"):
        md.update([("x",)])
    md.clear()
    assert len(md) == 0


def test_parameter_list_and_dict():
    pl = nn.ParameterList([lucid.zeros(2), Parameter(lucid.ones(1))])
    assert all(isinstance(p, Parameter) for p in pl) and len(pl) == 2
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pl.append(lucid.zeros(3))
    assert pl[-1].shape == (3,) and len(pl[0:2]) == 2
    pd = nn.ParameterDict(OrderedDict([("z", lucid.zeros(1)), ("y", lucid.ones(1))]))
    assert list(pd.keys()) == ["z", "y"] and isinstance(pd["z"], Parameter)
    pd["x"] = Parameter(lucid.zeros(2))
    assert [n for n, _ in pd.named_parameters()] == ["z", "y", "x"]
    assert pd.get("nope") is None and pd.pop("z").shape == (1,) and "z" not in pd
    assert list(pd.state_dict()) == ["y", "x"]
    with pytest.raises(TypeError, match="not a string"):
        pd[1] = lucid.zeros(1)


def test_flatten_unflatten_identity():
    x = lucid.randn(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    assert nn.Unflatten(1, (3, 20))(nn.Flatten()(x)).shape == (2, 3, 20)
    assert nn.Identity(54, unused="x")(x) is x
    with pytest.raises(TypeError, match="unflattened_size must be tuple of ints, but found element of type float"):
        nn.Unflatten(1, (2.0, 3))


def test_deepcopy_module():
    net = Net()
    twin = copy.deepcopy(net)
    assert all(p is not q for p, q in zip(net.parameters(), twin.parameters()))
    x = lucid.randn(2, 4)
    np.testing.assert_allclose(np_of(net(x)), np_of(twin(x)), rtol=1e-6)
    with lucid.no_grad():
        twin.head.bias.add_(1)
    assert not np.allclose(np_of(net.head.bias), np_of(twin.head.bias))


# ---------------------------------------------------------------------------------------------------- PyTorch oracle
def test_pytorch_names_and_state_dict_load():
    torch = pytest.importorskip("torch")
    tnet = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 2))

    class LucidBN(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.weight, self.bias = Parameter(lucid.ones(n)), Parameter(lucid.zeros(n))
            self.register_buffer("running_mean", lucid.zeros(n))
            self.register_buffer("running_var", lucid.ones(n))
            self.register_buffer("num_batches_tracked", lucid.tensor(0, dtype=lucid.int64))

    lnet = nn.Sequential(Lin(4, 3), LucidBN(3), Lin(3, 2))
    assert list(lnet.state_dict()) == list(tnet.state_dict())
    assert [n for n, _ in lnet.named_parameters()] == [n for n, _ in tnet.named_parameters()]
    lnet.load_state_dict({k: v.numpy() for k, v in tnet.state_dict().items()})
    lnet.load_state_dict(tnet.state_dict())  # torch tensors directly
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    tl = tnet[0](torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(np_of(lnet[0](lucid.tensor(x))), tl, rtol=1e-5, atol=1e-6)


def test_pytorch_structure_names_and_reprs():
    torch = pytest.importorskip("torch")
    tnn = torch.nn
    Linear = type("Linear", (Lin,), {})  # prints like torch.nn.Linear

    def build(ns, linear):
        shared = linear(3, 3)
        return ns.Sequential(OrderedDict([
            ("stem", ns.Sequential(linear(2, 3), ns.Identity(), ns.Flatten(0, -1), ns.Unflatten(0, (1, 3)))),
            ("blocks", ns.ModuleList([shared, shared, linear(3, 3), linear(3, 4)])),
            ("heads", ns.ModuleDict({"b": linear(4, 1), "a": ns.Identity()})),
            ("extra", ns.ParameterList([ns.Parameter(torch.zeros(2, 2)) if ns is tnn else Parameter(lucid.zeros(2, 2))])),
        ]))

    t, m = build(tnn, tnn.Linear), build(nn, Linear)
    assert repr(m) == repr(t).replace("torch.", "lucid.")
    for fn in ("named_parameters", "named_buffers", "named_modules"):
        assert [n for n, _ in getattr(m, fn)()] == [n for n, _ in getattr(t, fn)()], fn
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in t.named_parameters(remove_duplicate=False)]
    assert list(m.state_dict()) == list(t.state_dict())
    assert list(m.state_dict()._metadata) == list(t.state_dict()._metadata)


def test_pytorch_backward_hook_values():
    torch = pytest.importorskip("torch")
    lucid_net, x, c = _lin_data()
    t_net = torch.nn.Linear(3, 2)
    t_net.load_state_dict({k: torch.tensor(v.numpy()) for k, v in lucid_net.state_dict().items()})
    got = {}
    for name, net, xx, cc in (("lucid", lucid_net, x, c),
                              ("torch", t_net, torch.tensor(x.detach().numpy(), requires_grad=True),
                               torch.tensor(c.numpy()))):
        net.register_full_backward_pre_hook(lambda m, go: (go[0] * 3,))
        net.register_full_backward_hook(lambda m, gi, go, name=name: got.__setitem__(name, (gi, go)))
        (net(xx) * cc).sum().backward()
        got[name] = tuple(np.asarray(t[0].detach().numpy()) for t in got[name]) + (xx.grad.numpy(),)
    for a, b in zip(got["lucid"], got["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
