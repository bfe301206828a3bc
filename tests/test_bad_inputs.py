"""Bad input raises PyTorch's exception type with a message naming the problem, and changes nothing.

Each case asserts the type and the key phrase of the message (PyTorch's wording, checked against torch where it is
installed) and that tensors, parameters and ``.grad`` are left as they were. Expected values come from closed forms
or torch, never from lucid itself.
"""
import math
import re

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is an optional oracle")
HUGE = (10**5, 10**5, 100)  # 4e12 bytes of float32: more than any machine this runs on; MLX used to segfault


def same_error(lucid_call, torch_call):
    """Both raise the same exception type; returns (lucid's, torch's) messages."""
    with pytest.raises(Exception) as lu:
        lucid_call()
    with pytest.raises(Exception) as to:
        torch_call()
    assert type(lu.value) is type(to.value), (lu.value, to.value)
    return str(lu.value), str(to.value)


# ---------------------------------------------------------------------------------------------------- allocation
@pytest.mark.parametrize("make", [
    lambda: lucid.zeros(*HUGE), lambda: lucid.ones(HUGE), lambda: lucid.empty(*HUGE), lambda: lucid.full(HUGE, 2.0),
    lambda: lucid.rand(*HUGE), lambda: lucid.randn(*HUGE), lambda: lucid.randint(0, 5, HUGE),
    lambda: lucid.normal(0.0, 1.0, HUGE), lambda: lucid.eye(10**7), lambda: lucid.arange(10**13),
    lambda: lucid.linspace(0, 1, 10**13), lambda: lucid.logspace(0, 1, 10**13), lambda: lucid.randperm(10**13),
    lambda: lucid.zeros_like(lucid.ones(1, 1, 1).expand(*HUGE)), lambda: lucid.ones(10).repeat(10**12),
    lambda: lucid.ones(10).tile(10**12), lambda: F.pad(lucid.ones(2), (10**13, 0)),
], ids=["zeros", "ones", "empty", "full", "rand", "randn", "randint", "normal", "eye", "arange", "linspace",
        "logspace", "randperm", "zeros_like", "repeat", "tile", "pad"])
def test_allocation_larger_than_the_machine_raises_runtime_error_naming_the_bytes(make):
    with pytest.raises(RuntimeError, match=r"can't allocate memory: you tried to allocate \d+ bytes"):
        make()


def test_allocation_error_names_the_exact_byte_count():
    with pytest.raises(RuntimeError, match=f"allocate {4 * 10**12} bytes"):
        lucid.zeros(*HUGE)
    with pytest.raises(RuntimeError, match=f"allocate {8 * 10**12} bytes"):
        lucid.zeros(10**12, dtype=lucid.float64)


def test_dimension_beyond_mlx_int32_limit_raises_instead_of_overflow_error():
    # 2 GiB of int8 fits in memory, but MLX keeps each dimension in an int32
    with pytest.raises(RuntimeError, match="2147483648.*too large"):
        lucid.zeros(2**31, dtype=lucid.int8)
    with pytest.raises(RuntimeError, match="too large"):
        lucid.ones(1).expand(2**40)


def test_a_huge_broadcast_view_is_still_allowed():
    # expand allocates nothing (PyTorch allows it too); reducing it works without materializing
    x = lucid.ones(1, 1).expand(10**6, 10**6)
    assert tuple(x.shape) == (10**6, 10**6)


@pytest.mark.parametrize("make, shape", [
    (lambda: lucid.zeros(-1), [-1]), (lambda: lucid.ones(2, -3), [2, -3]), (lambda: lucid.full((-1,), 1.0), [-1]),
    (lambda: lucid.rand(-1), [-1]), (lambda: lucid.randn(3, -2), [3, -2]), (lambda: lucid.randint(0, 4, (-3,)), [-3]),
    (lambda: lucid.randperm(-1), [-1]), (lambda: lucid.empty(-5), [-5]),
])
def test_negative_size_raises_pytorch_message(make, shape):
    first = next(s for s in shape if s < 0)
    with pytest.raises(RuntimeError, match=re.escape(f"Trying to create tensor with negative dimension {first}: "
                                                     f"{shape}")):
        make()


def test_negative_steps_and_eye_sizes():
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        lucid.linspace(0, 1, -1)
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        lucid.eye(-1)
    with pytest.raises(RuntimeError, match="m must be greater or equal to 0, got -2"):
        lucid.eye(3, -2)


def test_negative_padding_beyond_the_size_raises():
    with pytest.raises(RuntimeError, match="negative dimension"):
        F.pad(lucid.ones(2, 3), (-5, -5))


def test_valid_factories_are_unchanged():
    np.testing.assert_array_equal(lucid.arange(5, 0, -2).numpy(), [5, 3, 1])
    np.testing.assert_allclose(lucid.arange(0, 1, 0.25).numpy(), [0, 0.25, 0.5, 0.75])
    np.testing.assert_array_equal(lucid.eye(2, 3).numpy(), np.eye(2, 3))
    np.testing.assert_allclose(lucid.linspace(0, 1, 3).numpy(), [0, 0.5, 1])
    assert lucid.arange(3, 3).numel() == 0 and lucid.zeros(0, 4).numel() == 0
    assert sorted(lucid.randperm(5).tolist()) == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------------------------------------------- arguments
def test_randint_with_empty_range_raises():
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=5 >= to=5"):
        lucid.randint(5, 5, (3,))
    with pytest.raises(RuntimeError, match="from=0 >= to=0"):
        lucid.randint(0, (3,))


def test_arange_step_zero_and_wrong_sign():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        lucid.arange(0, 10, 0)
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        lucid.arange(0, 10, -1)


@pytest.mark.parametrize("op", [
    lambda x: x // 0, lambda x: x % 0, lambda x: lucid.floor_divide(x, 0), lambda x: lucid.remainder(x, 0),
    lambda x: lucid.fmod(x, 0), lambda x: lucid.div(x, 0, rounding_mode="floor"),
    lambda x: lucid.div(x, 0, rounding_mode="trunc"), lambda x: x.floor_divide_(0), lambda x: x.remainder_(0),
], ids=["floordiv", "mod", "floor_divide", "remainder", "fmod", "div_floor", "div_trunc", "floor_divide_",
        "remainder_"])
def test_integer_division_by_python_zero_raises_and_leaves_the_tensor(op):
    x = lucid.tensor([7, -3])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        op(x)
    assert x.tolist() == [7, -3] and x._version == 0


_BY_TENSOR = [
    ("floordiv", "floor_divide", lambda x, z: x // z), ("rfloordiv", "floor_divide", lambda x, z: 7 // z),
    ("mod", "remainder", lambda x, z: x % z), ("rmod", "remainder", lambda x, z: 7 % z),
    ("remainder", "remainder", lambda x, z: lucid.remainder(x, z)), ("fmod", "fmod", lambda x, z: lucid.fmod(x, z)),
    ("div_floor", "div", lambda x, z: lucid.div(x, z, rounding_mode="floor")),
    ("div_trunc", "div", lambda x, z: lucid.div(x, z, rounding_mode="trunc")),
    ("bool_divisor", "floor_divide", lambda x, z: x // (z != 0)),
    ("uint8", "floor_divide", lambda x, z: x.to(lucid.uint8) // z.to(lucid.uint8)),
]


@pytest.mark.parametrize("op", [c[2] for c in _BY_TENSOR[:-2]] + [lambda x, z: x // lucid.tensor([True, False])],
                         ids=[c[0] for c in _BY_TENSOR[:-2]] + ["bool_divisor"])
def test_integer_division_by_a_tensor_of_host_zeros_raises_at_once(op):
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        op(lucid.tensor([7, -3]), lucid.tensor([2, 0]))  # PyTorch: RuntimeError('ZeroDivisionError')


@pytest.mark.parametrize("name, op", [c[1:] for c in _BY_TENSOR], ids=[c[0] for c in _BY_TENSOR])
def test_integer_division_by_a_computed_zero_raises_at_the_next_evaluation(name, op):
    """The divisor's values are not on the host (computed lazily): the error comes where values are computed,
    naming the op and this line (as the deferred index checks do)."""
    z = lucid.tensor([3, 1]) - 1  # [2, 0], computed by MLX
    out = op(lucid.tensor([7, -3]), z)
    line = op.__code__.co_firstlineno  # the user's line that called the op: the lambda's
    with pytest.raises(RuntimeError, match=rf"^ZeroDivisionError \(in {name}, called at .*test_bad_inputs.py, "
                                           rf"line {line};"):
        out.tolist()
    assert (lucid.tensor([7, -3]) // (lucid.tensor([3, 2]) - 1)).tolist() == [3, -3]  # no zero: no error


@pytest.mark.parametrize("op", [lambda x, z: x.floor_divide_(z), lambda x, z: x.remainder_(z),
                                lambda x, z: x.fmod_(z), lambda x, z: x.div_(z, rounding_mode="trunc"),
                                lambda x, z: x.__ifloordiv__(z), lambda x, z: x.__imod__(z)],
                         ids=["floor_divide_", "remainder_", "fmod_", "div_trunc", "ifloordiv", "imod"])
def test_in_place_integer_division_by_a_computed_zero_leaves_the_tensor(op):
    x = lucid.tensor([7, -3])
    op(x, lucid.tensor([3, 1]) - 1)
    with pytest.raises(RuntimeError, match="^ZeroDivisionError "):
        x.tolist()
    assert x.tolist() == [7, -3]
    with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
        op(x, lucid.tensor([0, 1]))


def test_float_division_by_zero_is_ieee_as_in_pytorch():
    assert (lucid.tensor([1.0, -2.0]) // 0).tolist() == [math.inf, -math.inf]
    assert (lucid.tensor([1, 2]) / 0).tolist() == [math.inf, math.inf]
    assert (lucid.tensor([7, -7]) // 2).tolist() == [3, -4] and (lucid.tensor([7, -7]) % -3).tolist() == [-2, -1]


@pytest.mark.parametrize("dtype, name", [(lucid.float64, "Double"), (lucid.int64, "Long"), (lucid.float16, "Half")])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_rejects_input_of_another_dtype(dtype, name, bias):
    layer = nn.Linear(3, 2, bias=bias)
    before = layer.weight.detach().numpy().copy()
    for shape in ((4, 3), (3,), (2, 4, 3)):
        with pytest.raises(RuntimeError, match=f"mat1 and mat2 must have the same dtype, but got {name} and Float"):
            layer(lucid.ones(*shape, dtype=dtype))
    np.testing.assert_array_equal(layer.weight.detach().numpy(), before)
    assert layer.weight.grad is None


def test_linear_rejects_bias_of_another_dtype():
    with pytest.raises(RuntimeError, match="self and mat2 must have the same dtype, but got Double and Float"):
        F.linear(lucid.ones(2, 3), lucid.ones(2, 3), lucid.ones(2, dtype=lucid.float64))


def test_conv_rejects_input_of_another_dtype():
    with pytest.raises(RuntimeError, match=r"Input type \(double\) and weight type \(float\) should be the same"):
        nn.Conv2d(1, 1, 3)(lucid.ones(1, 1, 5, 5, dtype=lucid.float64))
    with pytest.raises(RuntimeError, match=r"Input type \(float\) and bias type \(double\) should be the same"):
        F.conv1d(lucid.ones(1, 1, 5), lucid.ones(1, 1, 3), lucid.ones(1, dtype=lucid.float64))


@needs_torch
def test_argument_errors_match_torch():
    cases = [
        (lambda: lucid.randint(5, 5, (3,)), lambda: torch.randint(5, 5, (3,))),
        (lambda: lucid.arange(0, 10, 0), lambda: torch.arange(0, 10, 0)),
        (lambda: lucid.tensor([1, 2]) // 0, lambda: torch.tensor([1, 2]) // 0),
        (lambda: lucid.ones(-1), lambda: torch.ones(-1)),
        (lambda: nn.Linear(3, 2)(lucid.ones(4, 3, dtype=lucid.float64)),
         lambda: torch.nn.Linear(3, 2)(torch.ones(4, 3, dtype=torch.float64))),
        (lambda: float(lucid.ones(3)), lambda: float(torch.ones(3))),
    ]
    for lu, to in cases:
        a, b = same_error(lu, to)
        assert a.startswith(b), (a, b)


# ---------------------------------------------------------------------------------------------------- binary_cross_entropy
@pytest.mark.parametrize("bad", [1.5, -0.5, math.nan])
def test_binary_cross_entropy_rejects_probabilities_outside_0_1(bad):
    p = lucid.tensor([0.5, bad], requires_grad=True)
    t = lucid.tensor([1.0, 0.0])
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(p, t)
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        F.binary_cross_entropy(t, lucid.tensor([0.5, bad]))
    assert p.grad is None and p.tolist()[0] == 0.5


def test_binary_cross_entropy_at_0_and_1_matches_pytorch_closed_form():
    # PyTorch: loss = -(t max(log p, -100) + (1 - t) max(log(1 - p), -100));
    # d/dp = (p - t) / max(p (1 - p), 1e-12); d/dt = log(1 - p) - log(p) (unclamped)
    pv = np.array([0.0, 1.0, 0.0, 1.0, 0.25])
    tv = np.array([1.0, 1.0, 0.0, 0.0, 0.5])
    p = lucid.tensor(pv, dtype=lucid.float64, requires_grad=True)
    t = lucid.tensor(tv, dtype=lucid.float64, requires_grad=True)
    loss = F.binary_cross_entropy(p, t, reduction="none")
    with np.errstate(divide="ignore"):
        expected = -(tv * np.maximum(np.log(pv), -100) + (1 - tv) * np.maximum(np.log1p(-pv), -100))
        dt = np.log1p(-pv) - np.log(pv)
    np.testing.assert_allclose(loss.detach().numpy(), expected, rtol=1e-12)
    gp, gt = lucid.autograd.grad(loss.sum(), [p, t])
    np.testing.assert_allclose(gp.numpy(), (pv - tv) / np.maximum(pv * (1 - pv), 1e-12), rtol=1e-12)
    np.testing.assert_array_equal(gt.numpy()[:4], dt[:4])  # +-inf at the ends, as PyTorch
    np.testing.assert_allclose(gt.numpy()[4], dt[4], rtol=1e-12)


def test_binary_cross_entropy_interior_gradient_by_finite_differences():
    rng = np.random.default_rng(1)
    pv, tv, h = rng.uniform(0.05, 0.95, 6), rng.uniform(0, 1, 6), 1e-6

    def f(p, t):
        return float(F.binary_cross_entropy(lucid.tensor(p, dtype=lucid.float64),
                                            lucid.tensor(t, dtype=lucid.float64)).item())

    p = lucid.tensor(pv, dtype=lucid.float64, requires_grad=True)
    t = lucid.tensor(tv, dtype=lucid.float64, requires_grad=True)
    F.binary_cross_entropy(p, t).backward()
    for arr, grad, other in ((pv, p.grad, tv), (tv, t.grad, pv)):
        fd = []
        for i in range(6):
            e = np.zeros(6)
            e[i] = h
            fd.append((f(arr + e, other) - f(arr - e, other)) / (2 * h) if arr is pv
                      else (f(other, arr + e) - f(other, arr - e)) / (2 * h))
        np.testing.assert_allclose(grad.numpy(), fd, rtol=1e-6)


@needs_torch
def test_binary_cross_entropy_matches_torch_at_the_boundary():
    pv, tv = [0.0, 1.0, 0.0, 1.0, 0.3, 1e-30, 1 - 1e-7], [1.0, 1.0, 0.0, 0.0, 0.6, 1.0, 0.0]
    p = lucid.tensor(pv, requires_grad=True)
    tp = torch.tensor(pv, requires_grad=True)
    loss = F.binary_cross_entropy(p, lucid.tensor(tv))
    tloss = torch.nn.functional.binary_cross_entropy(tp, torch.tensor(tv))
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(loss.item(), tloss.item(), rtol=1e-6)
    np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-6)


def test_binary_cross_entropy_inside_lucid_compile_skips_the_value_check():
    p = lucid.tensor([0.2, 0.7])
    t = lucid.tensor([0.0, 1.0])
    step = lucid.compile(lambda a, b: F.binary_cross_entropy(a, b))
    expected = -(np.log(0.8) + np.log(0.7)) / 2
    np.testing.assert_allclose(step(p, t).item(), expected, rtol=1e-6)


# ---------------------------------------------------------------------------------------------------- exception types
A, B = (2, 3), (4, 5)
BROADCAST_OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "pow": lambda a, b: a ** b, "floordiv": lambda a, b: a // b, "mod": lambda a, b: a % b,
    "eq": lambda a, b: a == b, "lt": lambda a, b: a < b, "maximum": lambda a, b: lucid.maximum(a, b),
    "where": lambda a, b: lucid.where(a > 0, a, b), "atan2": lambda a, b: lucid.atan2(a, b),
    "logical_and": lambda a, b: lucid.logical_and(a, b), "hypot": lambda a, b: lucid.hypot(a, b),
    "xlogy": lambda a, b: lucid.xlogy(a, b), "isclose": lambda a, b: lucid.isclose(a, b),
    "allclose": lambda a, b: lucid.allclose(a, b), "add_": lambda a, b: a.add_(b), "mul_": lambda a, b: a.mul_(b),
    "copy_": lambda a, b: a.copy_(b), "broadcast_tensors": lambda a, b: lucid.broadcast_tensors(a, b),
    "mse_loss": lambda a, b: F.mse_loss(a, b), "l1_loss": lambda a, b: F.l1_loss(a, b),
    "cosine_similarity": lambda a, b: F.cosine_similarity(a, b),
    "normal": lambda a, b: lucid.normal(a, b),
}


@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.parametrize("name", sorted(BROADCAST_OPS))
def test_broadcast_mismatch_is_runtime_error_in_pytorch_words(name):
    a = lucid.ones(*A, requires_grad=name not in ("add_", "mul_", "copy_"))
    b = lucid.ones(*B)
    if name in ("add_", "mul_", "copy_"):
        a = a.detach()
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(\d\) must match the size of tensor b \(\d\) at "
                                           r"non-singleton dimension \d") as e:
        BROADCAST_OPS[name](a, b)
    assert "[broadcast_shapes]" not in str(e.value)  # MLX's text is only the cause
    np.testing.assert_array_equal(a.detach().numpy(), np.ones(A))
    assert a._version == 0 and a.grad is None


@needs_torch
@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.parametrize("name", sorted(BROADCAST_OPS))
def test_broadcast_mismatch_matches_torch(name):
    op = BROADCAST_OPS[name]
    tops = {"isclose": torch.isclose, "allclose": torch.allclose, "maximum": torch.maximum, "atan2": torch.atan2,
            "logical_and": torch.logical_and, "hypot": torch.hypot, "xlogy": torch.xlogy,
            "broadcast_tensors": torch.broadcast_tensors, "mse_loss": torch.nn.functional.mse_loss,
            "l1_loss": torch.nn.functional.l1_loss, "cosine_similarity": torch.nn.functional.cosine_similarity,
            "normal": torch.normal, "where": lambda a, b: torch.where(a > 0, a, b)}
    top = tops.get(name, op)
    a, b = same_error(lambda: op(lucid.ones(*A), lucid.ones(*B)), lambda: top(torch.ones(*A), torch.ones(*B)))
    assert a == b or name in ("normal",), (a, b)


def test_broadcast_mismatch_message_names_the_first_mismatch_from_the_right():
    with pytest.raises(RuntimeError, match=r"tensor a \(3\) must match the size of tensor b \(4\) at non-singleton "
                                           r"dimension 0"):
        lucid.ones(3) + lucid.ones(4)
    with pytest.raises(RuntimeError, match=r"tensor a \(2\) must match the size of tensor b \(5\) at non-singleton "
                                           r"dimension 1"):
        lucid.ones(7, 2, 1) + lucid.ones(5, 3)


def test_broadcast_errors_keep_mlx_text_as_the_cause():
    with pytest.raises(RuntimeError) as e:
        lucid.ones(3) * lucid.ones(4)
    assert isinstance(e.value.__cause__, ValueError) and "broadcast" in str(e.value.__cause__)


@pytest.mark.parametrize("op, phrase", [
    (lambda: lucid.ones(2, 3) @ lucid.ones(4, 5), "cannot be multiplied"),
    (lambda: lucid.ones(2, 3).reshape(5), r"shape '\[5\]' is invalid for input of size 6"),
    (lambda: lucid.ones(2, 3).view(4, 2), "is invalid for input of size 6"),
    (lambda: lucid.ones(2, 3).expand(4, 4), "expanded size"),
    (lambda: lucid.cat([lucid.ones(2, 3), lucid.ones(4, 5)]), "Sizes of tensors must match except in dimension 0"),
    (lambda: lucid.stack([lucid.ones(2, 3), lucid.ones(4, 5)]), "stack expects each tensor to be equal size"),
    (lambda: F.linear(lucid.ones(2, 3), lucid.ones(2, 5)), "cannot be multiplied"),
    (lambda: F.conv2d(lucid.ones(1, 3, 5, 5), lucid.ones(2, 4, 3, 3)), "channels"),
    (lambda: lucid.ones(2, 3).clone().fill_(lucid.ones(2)), "fill_ only supports 0-dimension value tensor"),
    (lambda: lucid.ones(2, 3).masked_fill(lucid.ones(4, 5) > 0, 0.0), "must match"),
])
def test_shape_mismatches_are_runtime_errors(op, phrase):
    with pytest.raises(RuntimeError, match=phrase):
        op()


@pytest.mark.parametrize("convert", [float, int])
def test_float_and_int_of_many_elements_raise_value_error_as_pytorch(convert):
    # matplotlib's contourf catches only ValueError / TypeError around float()
    with pytest.raises(ValueError, match="only one element tensors can be converted to Python scalars"):
        convert(lucid.ones(3))
    assert convert(lucid.tensor([2.0])) == 2


def test_item_and_bool_of_many_elements_stay_runtime_errors_as_pytorch():
    with pytest.raises(RuntimeError, match="a Tensor with 3 elements cannot be converted to Scalar"):
        lucid.ones(3).item()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(lucid.ones(3))


def test_lucid_own_value_errors_inside_an_op_pass_unchanged():
    # a bad argument value that PyTorch reports as ValueError is not turned into RuntimeError
    with pytest.raises(ValueError, match="rounding_mode"):
        lucid.div(lucid.ones(2), 2, rounding_mode="bad")


# ---------------------------------------------------------------------------------------------------- saved tensors
def _second_backward_after_step(model, x):
    opt = lucid.optim.SGD(model.parameters(), lr=0.1)
    loss = model(x).sum()
    loss.backward(retain_graph=True)
    first = [p.grad.numpy().copy() for p in model.parameters()]
    opt.step()
    loss.backward()
    return first, [p.grad.numpy() for p in model.parameters()]


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (2, 4, 3), (3,)])
def test_linear_on_data_survives_optimizer_step_between_two_backwards(bias, shape):
    # PyTorch's addmm keeps the input (for the weight's gradient) but neither the weight (the input needs no
    # gradient) nor the bias (no gradient reads it): the second backward works and accumulates the same gradients
    lucid.manual_seed(0)
    first, second = _second_backward_after_step(nn.Linear(3, 2, bias=bias), lucid.ones(*shape))
    for a, b in zip(first, second):
        np.testing.assert_allclose(b, 2 * a, rtol=1e-6)


def test_linear_whose_input_needs_a_gradient_still_detects_the_modified_weight():
    # the input's gradient reads the weight: PyTorch raises, and so does lucid
    lucid.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _second_backward_after_step(model, lucid.ones(4, 3))


def test_conv_keeps_its_weight_but_not_its_bias():
    # PyTorch's convolution saves input and weight whatever requires grad: a modified weight raises...
    conv = nn.Conv2d(1, 2, 3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _second_backward_after_step(conv, lucid.ones(1, 1, 5, 5))
    # ...but a bias written in place does not, since no gradient reads it
    conv = nn.Conv2d(1, 2, 3)
    loss = conv(lucid.ones(1, 1, 5, 5)).sum()
    loss.backward(retain_graph=True)
    with lucid.no_grad():
        conv.bias.add_(1.0)
    loss.backward()
    np.testing.assert_allclose(conv.bias.grad.numpy(), [18.0, 18.0])  # 9 outputs each, twice


@needs_torch
@pytest.mark.parametrize("which", ["linear", "linear_nobias", "mlp", "conv"])
def test_second_backward_after_step_matches_torch(which):
    def build(L):
        if which == "mlp":
            return L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(), L.nn.Linear(4, 2)), L.ones(4, 3)
        if which == "conv":
            return L.nn.Conv2d(1, 2, 3), L.ones(1, 1, 5, 5)
        return L.nn.Linear(3, 2, bias=which == "linear"), L.ones(4, 3)

    def outcome(L):
        model, x = build(L)
        opt = L.optim.SGD(model.parameters(), lr=0.1)
        loss = model(x).sum()
        loss.backward(retain_graph=True)
        opt.step()
        try:
            loss.backward()
            return "ok"
        except RuntimeError as e:
            return "modified by an inplace operation" in str(e)

    assert outcome(lucid) == outcome(torch)


# ---------------------------------------------------------------------------------------------------- empty batch
@pytest.mark.parametrize("target", ["index", "probs"])
@pytest.mark.parametrize("reduction, expected", [("mean", math.nan), ("sum", 0.0), ("none", None)])
def test_cross_entropy_on_an_empty_batch_is_pytorch_value(target, reduction, expected):
    x = lucid.zeros(0, 3, requires_grad=True)
    t = lucid.zeros(0, dtype=lucid.int64) if target == "index" else lucid.zeros(0, 3)
    loss = F.cross_entropy(x, t, reduction=reduction)
    if expected is None:
        assert tuple(loss.shape) == (0,)
    elif math.isnan(expected):
        assert math.isnan(loss.item())
    else:
        assert loss.item() == 0.0
    loss.sum().backward()
    assert tuple(x.grad.shape) == (0, 3)


@pytest.mark.parametrize("kwargs", [{"label_smoothing": 0.1}, {"weight": "w"}])
def test_cross_entropy_on_an_empty_batch_with_options(kwargs):
    kwargs = {k: lucid.ones(3) if v == "w" else v for k, v in kwargs.items()}
    assert math.isnan(F.cross_entropy(lucid.zeros(0, 3), lucid.zeros(0, dtype=lucid.int64), **kwargs).item())
    assert math.isnan(F.cross_entropy(lucid.zeros(0, 3, 2, 2), lucid.zeros(0, 2, 2, dtype=lucid.int64)).item())


def test_logsumexp_of_empty_input_is_minus_inf_as_pytorch():
    assert lucid.logsumexp(lucid.zeros(0), 0).item() == -math.inf
    assert tuple(lucid.logsumexp(lucid.zeros(0, 3), 1).shape) == (0,)
    assert tuple(F.log_softmax(lucid.zeros(0, 3), 1).shape) == (0, 3)


@needs_torch
def test_cross_entropy_on_an_empty_batch_matches_torch():
    for reduction in ("mean", "sum", "none"):
        lu = F.cross_entropy(lucid.zeros(0, 3), lucid.zeros(0, dtype=lucid.int64), reduction=reduction)
        to = torch.nn.functional.cross_entropy(torch.zeros(0, 3), torch.zeros(0, dtype=torch.long),
                                               reduction=reduction)
        np.testing.assert_array_equal(lu.numpy(), to.numpy())
