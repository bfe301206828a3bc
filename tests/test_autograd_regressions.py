"""Regression tests for the autograd bugs of issue 10 (each reproduced against PyTorch 2.13 first): one test per
behaviour, named after it. The expected values are PyTorch's, written out; gradients are checked against closed
forms or float64 finite differences (gradcheck)."""
import math

import numpy as np
import pytest

import lucid
from lucid.autograd import Function, grad, gradcheck, gradgradcheck
from lucid.autograd.function import once_differentiable

from helpers import check_grads


def f64(values, requires_grad=True):
    return lucid.tensor(values, dtype=lucid.float64, requires_grad=requires_grad)


# ---------------------------------------------------------------------------------------------------- boundary points
def test_pow_with_zero_exponent_tensor_has_zero_gradient_at_zero_base():
    # 0 ** 0: d/dx = y x**(y-1) = 0 * inf in the naive formula; PyTorch gives 0
    for exponent in (lucid.zeros(10), 0):
        x = lucid.zeros(10, requires_grad=True)
        x.pow(exponent).sum().backward()
        assert x.grad.tolist() == [0.0] * 10
    x = lucid.zeros(4, 4, requires_grad=True)
    x.pow(lucid.zeros(4, 4)).sum().backward()
    assert x.grad.abs().sum().item() == 0


def test_pow_zero_base_zero_exponent_second_derivative_is_finite():
    x, y = f64([0.0]), f64([0.0])
    gx, gy = grad(x.pow(y).sum(), [x, y], create_graph=True)
    assert gx.tolist() == [0.0] and gy.tolist() == [0.0]
    assert grad(gx.sum(), [x, y], allow_unused=True, materialize_grads=True)[1].tolist() == [0.0]


def test_pow_mixed_second_derivative_at_zero_exponent_is_exact():
    # d2/dxdy x**y at y = 0 is 1/x; only 0**0 is masked (PyTorch masks every y == 0 and gets 0 here)
    x, y = f64([2.0, 0.5]), f64([0.0, 0.0])
    check_grads(lambda a, b: a.pow(b), x, y)
    (gx,) = grad(x.pow(y).sum(), [x], create_graph=True)
    assert grad(gx.sum(), [y])[0].tolist() == [0.5, 2.0]


def test_scalar_zero_base_pow_gradient_is_zero_where_exponent_nonnegative():
    x = f64([0.0, 1.0, 2.0, -1.0])
    (g,) = grad(lucid.pow(0.0, x).sum(), [x])
    assert g.tolist()[:3] == [0.0, 0.0, 0.0] and g.tolist()[3] == -math.inf


def test_scalar_negative_base_pow_gradient_is_nan():
    x = f64([1.0, 2.0])
    (g,) = grad(lucid.pow(-2.0, x).sum(), [x])
    assert all(math.isnan(v) for v in g.tolist())


def test_atan2_gradient_at_origin_is_zero():
    y, x = f64([0.0, 1.0]), f64([0.0, 2.0])
    gy, gx = grad(lucid.atan2(y, x).sum(), [y, x])
    # d/dy = x / (x^2 + y^2), d/dx = -y / (x^2 + y^2); 0 at the origin (PyTorch)
    assert gy.tolist() == [0.0, 2.0 / 5.0] and gx.tolist() == [0.0, -1.0 / 5.0]


def test_std_of_constant_input_has_zero_gradient():
    x = f64([[3.0, 3.0, 3.0], [1.0, 2.0, 4.0]])
    (g,) = grad(x.std(1).sum(), [x])
    row = np.array([1.0, 2.0, 4.0])
    expected = (row - row.mean()) / (2 * row.std(ddof=1))
    np.testing.assert_allclose(g.detach().numpy(), [[0.0, 0.0, 0.0], expected], rtol=1e-12)


@pytest.mark.parametrize("name, fn, at, expected", [
    ("sqrt at 0", lambda x: x.sqrt(), 0.0, math.inf),
    ("xlogy x=0 y=0", lambda x: lucid.xlogy(x, 0.0), 0.0, 0.0),
    ("xlogy of y at 0", lambda x: lucid.xlogy(0.0, x), 0.0, math.nan),
    ("2-norm at 0", lambda x: lucid.stack([x, x * 0]).norm(), 0.0, 0.0),
    ("3-norm at 0", lambda x: lucid.stack([x, x * 0]).norm(3), 0.0, 0.0),
    ("1-norm at 0", lambda x: lucid.stack([x, x * 0]).norm(1), 0.0, 0.0),
    ("sinc at 0", lambda x: lucid.sinc(x), 0.0, 0.0),
    ("pow 0.5 at 0", lambda x: x ** 0.5, 0.0, math.inf),
    ("where-masked log", lambda x: lucid.where(x > 0, x.clamp_min(1e-30).log(), 0.0), 0.0, 0.0),
    ("relu at 0", lambda x: lucid.relu(x), 0.0, 0.0),
    ("abs at 0", lambda x: x.abs(), 0.0, 0.0),
    ("prod with a zero", lambda x: lucid.stack([x, x * 0 + 3]).prod(), 0.0, 3.0),
])
def test_boundary_gradient_matches_pytorch(name, fn, at, expected):
    # PyTorch 2.13's values at these points, written out (compared with torch itself below when installed)
    x = f64(at)
    (g,) = grad(fn(x), [x])
    if math.isnan(expected):
        assert math.isnan(g.item())
    else:
        assert g.item() == expected


_BOUNDARY_UNARY = {
    "sqrt": lambda L, x: L.sqrt(x), "rsqrt": lambda L, x: L.rsqrt(x), "log": lambda L, x: L.log(x),
    "abs": lambda L, x: L.abs(x), "sinc": lambda L, x: L.sinc(x), "pow0": lambda L, x: L.pow(x, 0),
    "pow2": lambda L, x: L.pow(x, 2), "pow-1": lambda L, x: L.pow(x, -1), "pow1.5": lambda L, x: L.pow(x, 1.5),
    "rpow0": lambda L, x: L.pow(0.0, x), "rpow2": lambda L, x: L.pow(2.0, x),
    "xlogy x": lambda L, x: L.xlogy(x, 0.0), "xlogy y": lambda L, x: L.xlogy(2.0, x),
    "norm2": lambda L, x: L.norm(L.stack([x, x * 0])), "norm1": lambda L, x: L.norm(L.stack([x, x * 0]), 1),
    "norm3": lambda L, x: L.norm(L.stack([x, x * 0]), 3), "norminf": lambda L, x: L.norm(L.stack([x, x * 0]), math.inf),
    "std": lambda L, x: L.std(L.stack([x, x])), "var": lambda L, x: L.var(L.stack([x, x])),
    "normalize": lambda L, x: L.nn.functional.normalize(L.stack([x, x * 0]).reshape(1, 2)),
    "logsumexp": lambda L, x: L.logsumexp(L.stack([x, x * 0]), 0),
    "prod0": lambda L, x: L.prod(L.stack([x, x * 0, x * 0 + 2])), "cumprod": lambda L, x: L.cumprod(L.stack([x, x]), 0),
    "clamp": lambda L, x: L.clamp(x, 0, 1), "atan2 origin": lambda L, x: L.atan2(x, x * 0),
    "hypot origin": lambda L, x: L.hypot(x, x * 0), "relu": lambda L, x: L.relu(x),
    "kl_div": lambda L, x: L.nn.functional.kl_div(x * 0, x, reduction="sum"),
    "mish": lambda L, x: L.nn.functional.mish(x), "silu": lambda L, x: L.nn.functional.silu(x),
}
_BOUNDARY_BINARY = {
    "pow": lambda L, x, y: L.pow(x, y), "xlogy": lambda L, x, y: L.xlogy(x, y), "div": lambda L, x, y: x / y,
    "atan2": lambda L, x, y: L.atan2(x, y), "hypot": lambda L, x, y: L.hypot(x, y),
    "maximum": lambda L, x, y: L.maximum(x, y), "fmax": lambda L, x, y: L.fmax(x, y),
    "where sqrt": lambda L, x, y: L.where(x > 0, L.sqrt(x), y), "clamp min=y": lambda L, x, y: L.clamp(x, min=y),
}
_POINTS = [0.0, 1.0, -1.0, 0.5, 2.0]


def _first_derivatives(L, fn, values):
    xs = [L.tensor(v, dtype=L.float64, requires_grad=True) for v in values]
    gs = L.autograd.grad(fn(L, *xs).sum(), xs, allow_unused=True)
    return [0.0 if g is None else float(g) for g in gs]


@pytest.mark.parametrize("name", sorted(_BOUNDARY_UNARY) + sorted(_BOUNDARY_BINARY))
def test_boundary_first_derivatives_match_torch(name):
    torch = pytest.importorskip("torch")
    fn, arity = (_BOUNDARY_UNARY[name], 1) if name in _BOUNDARY_UNARY else (_BOUNDARY_BINARY[name], 2)
    points = [[p] for p in _POINTS] if arity == 1 else [[p, q] for p in _POINTS for q in _POINTS]
    for values in points:
        expected = _first_derivatives(torch, fn, values)
        got = _first_derivatives(lucid, fn, values)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, err_msg=f"{name} at {values}")


# ---------------------------------------------------------------------------------------------------- retain_grad
def test_retained_grad_of_a_tensor_modified_in_place_is_that_of_its_latest_version():
    a = lucid.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.sum().backward()
    assert a.grad.tolist() == [1.0]

    a = lucid.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.mul_(2)
    a.sum().backward()
    assert a.grad.tolist() == [1.0]


def test_retained_grad_moves_with_in_place_on_one_output_of_many():
    b = lucid.tensor([[1.0, 2.0], [4.0, 8.0]], requires_grad=True)
    var, mean = lucid.var_mean(b, dim=0)
    var.retain_grad()
    mean.retain_grad()
    var.mul_(2)
    (var + mean).sum().backward()
    assert var.grad.tolist() == [1.0, 1.0] and mean.grad.tolist() == [1.0, 1.0]


# ---------------------------------------------------------------------------------------------------- hook order
def test_tensor_hooks_of_a_leaf_run_before_its_accumulate_grad_prehook():
    x = lucid.tensor(1.0, requires_grad=True)
    y = x * 1
    acc = y.grad_fn.next_functions[0][0]
    x.register_hook(lambda g: g * 3)
    acc.register_prehook(lambda gs: (gs[0] - 1.3,))
    y.backward()
    assert abs(x.grad.item() - 1.7) < 1e-6  # (1 * 3) - 1.3, not (1 - 1.3) * 3


def test_prehook_ordering_tensor_hooks_before_node_prehooks():
    log = []

    def hook1(g):
        log.append(1)
        return g * 3

    def hook2(gs):
        log.append(2)
        return tuple(g * 2 for g in gs)

    a = lucid.tensor(1.0, requires_grad=True)
    b = a.clone()
    b.grad_fn.register_prehook(hook2)
    b.register_hook(hook1)
    b.grad_fn.register_prehook(hook2)
    acc = b.grad_fn.next_functions[0][0]
    a.register_hook(hook1)
    acc.register_prehook(hook2)
    a.register_hook(hook1)

    b.sum().backward(retain_graph=True)
    assert log == [1, 2, 2, 1, 1, 2]
    assert a.grad.item() == 3 * 2 * 2 * 3 * 3 * 2

    log.clear()  # grad() runs a leaf's tensor hooks but does not run its AccumulateGrad node
    grad(b.sum(), inputs=(a,), retain_graph=True)
    assert log == [1, 2, 2, 1, 1]

    log.clear()  # backward(inputs=(b,)) runs b's node (hooks and all); retain_grad sees only the tensor hooks
    b.sum().backward(inputs=(b,))
    assert log == [1, 2, 2]
    assert b.grad.item() == 3


def test_accumulate_grad_hooks_observe_tensor_hook_changes():
    a = lucid.tensor(1.0, requires_grad=True)
    seen = {}
    b = a.clone()
    acc = b.grad_fn.next_functions[0][0]
    acc.register_hook(lambda grad_inputs, grad_outputs: seen.update(post=(grad_inputs, grad_outputs[0].item())))
    acc.register_prehook(lambda grad_outputs: seen.update(pre=grad_outputs[0].item()))
    a.register_hook(lambda g: g * 2)
    b.backward()
    assert seen == {"pre": 2.0, "post": ((), 2.0)}


def test_grad_runs_tensor_hooks_of_an_input_but_not_its_node_hooks():
    a = lucid.tensor(1.0, requires_grad=True)
    b = a * 2
    c = b * 2
    counts = {"tensor": 0, "pre": 0, "post": 0}

    def bump(key):
        def hook(*_):
            counts[key] += 1
        return hook

    a.register_hook(bump("tensor"))
    b.register_hook(bump("tensor"))
    acc = b.grad_fn.next_functions[0][0]
    for node in (acc, b.grad_fn):
        node.register_hook(bump("post"))
        node.register_prehook(bump("pre"))

    def run(f):
        counts.update(tensor=0, pre=0, post=0)
        f()
        return counts["tensor"], counts["pre"], counts["post"]

    assert run(lambda: grad(c, inputs=(b,), retain_graph=True)) == (1, 0, 0)
    assert run(lambda: grad(c, inputs=(a, b), retain_graph=True)) == (2, 1, 1)
    assert run(lambda: c.backward(retain_graph=True)) == (2, 2, 2)
    assert run(lambda: c.backward(inputs=(a, b), retain_graph=True)) == (2, 2, 2)


def test_full_backward_hook_does_not_fire_again_in_double_backward():
    x = lucid.rand(1, requires_grad=True)
    y = lucid.rand_like(x)
    loss = lucid.nn.MSELoss()
    calls = []
    loss.register_full_backward_hook(lambda module, grad_input, grad_output: calls.append(1))
    f = loss(x, y)
    (gx,) = grad(f, [x], create_graph=True)
    assert len(calls) == 1
    (ggx,) = grad(gx, [x])
    assert len(calls) == 1
    assert abs(ggx.item() - 2.0) < 1e-6  # d2/dx2 (x - y)^2 = 2


# ---------------------------------------------------------------------------------------------------- grad modes
def test_inference_mode_false_inside_inference_mode_turns_it_off_and_grad_on():
    with lucid.inference_mode():
        with lucid.inference_mode(False):
            assert lucid.is_grad_enabled() and not lucid.is_inference_mode_enabled()
            assert not lucid.ones(2).is_inference()
        assert not lucid.is_grad_enabled() and lucid.is_inference_mode_enabled()
    with lucid.no_grad():
        with lucid.inference_mode(False):
            assert lucid.is_grad_enabled()

    @lucid.inference_mode(False)
    def modes():
        return lucid.is_grad_enabled(), lucid.is_inference_mode_enabled()

    with lucid.inference_mode():
        assert modes() == (True, False)


# ---------------------------------------------------------------------------------------------------- custom Function
class _NonTensorOutputs(Function):
    @staticmethod
    def forward(ctx, t1, t2, scale, t3):
        t4 = (t1 + t2 * t3) * scale
        t5 = (t1 * t2 + t3) * scale
        ctx.scale = scale
        ctx.save_for_backward(t1, t2, t3)
        return scale, t4, None, True, t5, "bar", t1

    @staticmethod
    @once_differentiable
    def backward(ctx, *grads):
        assert len(grads) == 7
        assert grads[0] is None and grads[2] is None and grads[3] is None and grads[5] is None
        s = ctx.scale
        t1, t2, t3 = ctx.saved_tensors
        return (grads[1] * s + grads[4] * t2 * s + grads[6], grads[1] * t3 * s + grads[4] * t1 * s, None,
                grads[1] * t2 * s + grads[4] * s)


def test_function_with_non_tensor_outputs_backpropagates():
    t1, t2, t3 = f64([0.1, 0.7]), f64([0.4, 0.2]), f64([0.5, 0.9], requires_grad=False)
    res = _NonTensorOutputs.apply(t1, t2, 3, t3)
    assert res[0] == 3 and res[2] is None and res[3] is True and res[5] == "bar"
    lucid.autograd.backward([res[1].sum(), res[4].sum(), res[6].sum()])
    # d/dt1 = 3 + 3 t2 + 1, d/dt2 = 3 t3 + 3 t1
    np.testing.assert_allclose(t1.grad.numpy(), [3 + 1.2 + 1, 3 + 0.6 + 1])
    np.testing.assert_allclose(t2.grad.numpy(), [1.5 + 0.3, 2.7 + 2.1])
    assert t3.grad is None

    def tensor_outputs(a, b, c):
        res = _NonTensorOutputs.apply(a, b, 3, c)
        return res[1], res[4], res[6]

    assert gradcheck(tensor_outputs, (t1, t2, t3))


def test_setup_context_receives_forward_default_arguments():
    class Pow(Function):
        @staticmethod
        def forward(x, y=3):
            return lucid.pow(x, y)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x)
            ctx.y = y

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.y * lucid.pow(x, ctx.y - 1), None

    class PowClassmethod(Function):
        @classmethod
        def forward(cls, x, y=3):
            return lucid.pow(x, y)

        @classmethod
        def setup_context(cls, ctx, inputs, output):
            x, y = inputs
            ctx.save_for_backward(x)
            ctx.y = y

        @classmethod
        def backward(cls, ctx, g):
            (x,) = ctx.saved_tensors
            return g * ctx.y * lucid.pow(x, ctx.y - 1), None

    for fn in (Pow, PowClassmethod):
        x = lucid.tensor(2.0, requires_grad=True)
        y = fn.apply(x)
        assert y.item() == 8.0 and grad(y, x).item() == 12.0
        assert fn.apply(x, y=2).item() == 4.0


class _Alias(Function):
    @staticmethod
    def forward(ctx, x):
        return x[:]

    @staticmethod
    def backward(ctx, g):
        return g


class _Identity(Function):
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g


def test_in_place_write_to_a_view_returned_by_a_custom_function_is_rejected():
    x = lucid.randn(2, requires_grad=True).clone()
    for fn in (_Alias, _Identity):
        out = fn.apply(x)
        before = out.tolist()
        with pytest.raises(RuntimeError, match=f"Output 0 of {fn.__name__} is a view and is being modified inplace. "
                                               "This view was created inside a custom Function"):
            out.add_(1)
        assert out.tolist() == before and out._version == 0  # nothing was written
    a, b = lucid.rand(2), lucid.rand(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and is being modified inplace"):
        _Alias.apply(a).add_(b)
    with pytest.raises(RuntimeError, match="This view was created inside a custom Function"):
        _Identity.apply(a).copy_(b)
    _Alias.apply(a).add_(1)  # nothing that requires grad: allowed
    with lucid.no_grad():
        _Alias.apply(x).add_(1)  # not recorded: allowed


def test_in_place_write_to_a_new_tensor_returned_by_a_custom_function_is_allowed():
    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = Double.apply(x)
    y.add_(1)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


# ---------------------------------------------------------------------------------------------------- saved tensors
def test_mul_by_a_constant_does_not_check_the_version_of_the_other_operand():
    # `x * c` with c not requiring grad needs only c for backward: x may be written in place (PyTorch saves
    # only what the needed gradients read)
    mu = lucid.ones(1, requires_grad=True)
    x = lucid.empty(1)
    loss = 0
    for i in range(3):
        x.detach_()
        x.copy_(mu + i)
        loss = loss + (x * lucid.tensor([float(i)])).sum()
    loss.backward()
    assert mu.grad.tolist() == [3.0]  # 0 + 1 + 2


def test_mul_still_checks_the_operand_its_gradient_reads():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    c = lucid.tensor([3.0, 4.0])
    y = x * c
    c.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    h = x * 1
    z = h / c
    c.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_div_does_not_check_the_numerator_when_only_it_requires_grad():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    z = h / lucid.tensor([2.0, 4.0])
    h.add_(1)
    z.sum().backward()
    assert x.grad.tolist() == [0.5, 0.25]


def test_detach_in_place_of_a_saved_tensor_is_detected():
    a = lucid.tensor(1.0, requires_grad=True).clone()
    b = a.sin()
    a.detach_()
    with pytest.raises(RuntimeError, match="Trying to use a saved tensor that has been detached in-place"):
        b.backward()
    a = lucid.tensor(1.0, requires_grad=True).clone()
    b = a.exp()  # exp saves its output, not a
    a.detach_()
    b.backward()


def test_numpy_of_a_tensor_that_requires_grad_is_allowed_under_no_grad():
    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    with lucid.no_grad():
        assert x.numpy().tolist() == [1.0, 2.0]


@pytest.mark.parametrize("assign", [
    lambda y: y.__setitem__(1, 2.0),
    lambda y: y.__setitem__((slice(None), 1), 3.0),
    lambda y: y.__setitem__(([0, 4], [2, 2]), 2.0),
    lambda y: y.__setitem__(y > 2.5, 0.0),
    lambda y: y.__setitem__(1, lucid.full((5,), 7.0, requires_grad=True)),
], ids=["int", "slice", "advanced", "mask", "tensor-value"])
def test_second_backward_through_index_assignment_without_retain_graph_raises(assign):
    x = lucid.ones(5, 5, requires_grad=True)
    y = x + 2
    assign(y)
    y.backward(lucid.ones(5, 5))
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward(lucid.ones(5, 5))


@pytest.mark.parametrize("take", [
    lambda x: x[[0, 2]], lambda x: x.index_select(0, lucid.tensor([0])),
    lambda x: lucid.gather(x, 0, lucid.tensor([0])), lambda x: x[x > 0.5],
], ids=["index", "index_select", "gather", "mask"])
def test_second_backward_through_an_indexing_op_without_retain_graph_raises(take):
    x = lucid.ones(5, requires_grad=True)
    y = take(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_second_backward_through_a_basic_slice_is_allowed():
    x = lucid.ones(5, requires_grad=True)
    y = x[1:3].sum()  # PyTorch's SliceBackward0 saves no tensor
    y.backward()
    y.backward()
    assert x.grad.tolist() == [0.0, 2.0, 2.0, 0.0, 0.0]


def test_index_assignment_with_retain_graph_backpropagates_twice():
    x = lucid.ones(3, requires_grad=True)
    y = x * 1
    y[0] = 5.0
    y.backward(lucid.ones(3), retain_graph=True)
    y.backward(lucid.ones(3))
    assert x.grad.tolist() == [0.0, 2.0, 2.0]


def test_set_data_to_an_integer_tensor_on_a_tensor_that_requires_grad_is_rejected():
    a = lucid.tensor(1.0, requires_grad=True)
    a.data = lucid.tensor(2.0)
    assert a.item() == 2.0 and a.requires_grad
    with pytest.raises(RuntimeError, match="must be floating point or complex dtype"):
        a.data = lucid.tensor(3, dtype=lucid.int64)
    assert a.item() == 2.0 and a.dtype == lucid.float32
    with pytest.raises(TypeError):
        a.data = None
    b = lucid.tensor(1.0)
    b.data = lucid.tensor(3, dtype=lucid.int64)  # fine when it does not require grad
    assert b.dtype == lucid.int64


def test_attribute_deletion_clears_grad_and_refuses_the_rest():
    # PyTorch: `del x.grad` clears it; deleting .data, .requires_grad, ._grad_fn or ._backward_hooks is refused
    x = lucid.ones(2, requires_grad=True)
    (x * 2).sum().backward()
    del x.grad
    assert x.grad is None
    for name, message in (("data", "Deleting tensor data is not allowed"), ("requires_grad", "must be a bool"),
                          ("_grad_fn", "Deletion of _grad_fn not allowed"),
                          ("_backward_hooks", "Deletion of _backwards_hooks not allowed")):
        with pytest.raises(RuntimeError, match=message):
            delattr(x, name)
    assert x.requires_grad and x._backward_hooks is None
    x.register_hook(lambda g: g)
    assert len(x._backward_hooks) == 1
    y = x * 2
    assert y._grad_fn is y.grad_fn and y._backward_hooks is None
    # assigning the dict replaces the hooks (PyTorch code sets an empty OrderedDict)
    calls = []
    y._backward_hooks = {"a": lambda g: calls.append("y")}
    x._backward_hooks = {}
    y.sum().backward()
    assert calls == ["y"] and x.grad.tolist() == [2.0, 2.0]


# ---------------------------------------------------------------------------------------------------- gradcheck
def test_gradcheck_perturbs_the_inputs_themselves():
    # a function that also reads its input through a closure: f(x) = x * x, gradient 2x
    x = f64([0.3, -1.2, 2.0])
    assert gradcheck(lambda inp: inp * x, (x,))
    assert gradgradcheck(lambda inp: inp * x * x, (x,))
    assert x.tolist() == [0.3, -1.2, 2.0] and x._version == 0  # restored, and no version bump


def test_gradcheck_still_fails_a_wrong_gradient():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g  # should be 2 x g

    assert not gradcheck(Wrong.apply, (f64([0.3, 1.5]),), raise_exception=False)


def test_gradcheck_catches_a_nondeterministic_backward_unless_nondet_tol_allows_it():
    class Jitter(Function):
        @staticmethod
        def forward(ctx, x, jitter):
            ctx.jitter = jitter
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g * (1 + lucid.rand_like(g) * ctx.jitter), None

    x = f64([0.3, 1.5])
    assert gradcheck(lambda t: Jitter.apply(t, 0.0), (x,))
    with pytest.raises(RuntimeError, match="Backward is not reentrant"):
        gradcheck(lambda t: Jitter.apply(t, 1e-6), (x,))
    assert gradcheck(lambda t: Jitter.apply(t, 1e-6), (x,), nondet_tol=1e-5)


def test_gradcheck_rejects_outputs_whose_shape_or_dtype_depends_on_the_values():
    def grows(x):
        return lucid.cat([x, x]) if bool((x >= 1).all()) else x

    def casts(x):
        return x.to(lucid.float32) if bool((x >= 1).all()) else x

    with pytest.raises(AssertionError, match="same shape when inputs are perturbed"):
        gradcheck(grows, (f64([1.0]),))
    with pytest.raises(AssertionError, match="same dtype when inputs are perturbed"):
        gradcheck(casts, (f64([1.0]),))


def test_gradcheck_without_differentiable_outputs_expects_a_zero_numerical_gradient():
    x = f64([1.0])
    with pytest.raises(RuntimeError, match="Numerical gradient for function expected to be zero"):
        gradcheck(lambda t: t.detach() * 2, (x,))
    assert not gradcheck(lambda t: t.detach() * 2, (x,), raise_exception=False)
    assert gradcheck(lambda t: (), (x,))


def test_unique_values_require_grad_but_inverse_and_counts_do_not():
    x = lucid.tensor([1.0, 2.0, 2.0, 3.0], requires_grad=True)
    for values, inverse, counts in (lucid.unique(x, return_inverse=True, return_counts=True),
                                    lucid.unique(x, return_inverse=True, return_counts=True, dim=0),
                                    lucid.unique_consecutive(x, return_inverse=True, return_counts=True)):
        assert values.requires_grad and not inverse.requires_grad and not counts.requires_grad
        with pytest.raises(RuntimeError, match="not implemented"):
            values.sum().backward()
    assert not lucid.unique(x.detach()).requires_grad


def test_tensor_pickles_with_every_protocol_keeping_values_dtype_and_requires_grad():
    import pickle
    x = lucid.randn(3, 2, requires_grad=True)
    y = lucid.tensor([1, 2], dtype=lucid.int32)
    z = lucid.ones(2, dtype=lucid.bfloat16)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        xc, yc, zc = pickle.loads(pickle.dumps([x, y, z], protocol=protocol))
        assert xc.tolist() == x.tolist() and xc.requires_grad and xc.is_leaf
        assert yc.dtype == lucid.int32 and yc.tolist() == [1, 2] and not yc.requires_grad
        assert zc.dtype == lucid.bfloat16 and zc.tolist() == [1.0, 1.0]


def test_grad_mode_decorating_a_class_is_deprecated_and_covers_construction_only():
    import warnings
    seen = []
    with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
        @lucid.no_grad()
        class Foo:
            def __init__(self):
                seen.append(lucid.is_grad_enabled())

            def method(self):
                seen.append(lucid.is_grad_enabled())

    Foo().method()
    assert seen == [False, True]
    with warnings.catch_warnings():
        warnings.simplefilter("error")

        @lucid.no_grad()
        def f():
            return lucid.is_grad_enabled()

        assert f() is False


def test_deeply_reentrant_backward_does_not_hit_the_recursion_limit():
    import sys

    class Countdown(Function):  # each backward runs a whole backward of the next step
        @staticmethod
        def forward(ctx, x):
            with lucid.enable_grad():
                ctx.x = x.detach().requires_grad_(True) - 1
            return ctx.x.detach()

        @staticmethod
        def backward(ctx, g):
            if ctx.x.item() >= 0:
                with lucid.enable_grad():
                    Countdown.apply(ctx.x).sum().backward()
            return g

    levels = sys.getrecursionlimit()  # several Python frames per level: far past the limit in one thread
    v = lucid.tensor(float(levels), requires_grad=True)
    Countdown.apply(v).sum().backward()
    assert v.grad.item() == 1.0
    assert lucid.is_grad_enabled()
