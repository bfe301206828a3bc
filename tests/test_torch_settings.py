"""compat.torch's global getters and setters and typename, against torch's behaviour."""
import pytest

import lucid
import lucid.compat.torch as lt

torch = pytest.importorskip("torch")


def test_initial_seed_is_the_manual_seed():
    state = lucid.get_rng_state()
    try:
        for s in (0, 1234, -1):
            lucid.manual_seed(s)
            torch_state = torch.get_rng_state()
            torch.manual_seed(s)
            assert lucid.initial_seed() == torch.initial_seed() == lt.initial_seed()
            torch.set_rng_state(torch_state)
    finally:
        lucid.set_rng_state(state)


def test_deterministic_debug_mode_round_trips_as_torchs():
    try:
        for mode, expected in ((0, 0), (1, 1), (2, 2), ("default", 0), ("warn", 1), ("error", 2)):
            lt.set_deterministic_debug_mode(mode)
            assert lt.get_deterministic_debug_mode() == expected
            assert lt.are_deterministic_algorithms_enabled() == (expected != 0)
            assert lt.is_deterministic_algorithms_warn_only_enabled() == (expected == 1)
        with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
            lt.set_deterministic_debug_mode(3)
    finally:
        lt.set_deterministic_debug_mode(0)


def test_anomaly_switch_and_threads():
    try:
        lt.set_anomaly_enabled(True, check_nan=False)
        assert lt.is_anomaly_enabled() and not lt.is_anomaly_check_nan_enabled()
    finally:
        lt.set_anomaly_enabled(False)
    assert not lt.is_anomaly_enabled()
    lt.set_num_interop_threads(2)
    assert lt.get_num_interop_threads() >= 1


def test_typename_matches_torch():
    assert lt.typename(lt.ones(1)) == torch.typename(torch.ones(1)) == "torch.FloatTensor"
    assert lt.typename(lt.ones(1, dtype=lt.int64)) == torch.typename(torch.ones(1, dtype=torch.int64))
    assert lt.typename(3) == torch.typename(3) == "int"
    assert lt.typename(lt.nn.Linear(1, 1)).endswith(".Linear")


def test_amp_custom_fwd_bwd_decorate_a_function_that_trains():
    class Square(lt.autograd.Function):
        @staticmethod
        @lt.amp.custom_fwd(device_type="cpu", cast_inputs=lt.float32)
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @lt.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = lt.tensor([1.0, -3.0], requires_grad=True)
    Square.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, -6.0]
    with pytest.raises(ValueError) as want:
        torch.amp.custom_fwd(device_type=None)
    with pytest.raises(ValueError) as got:
        lt.amp.custom_fwd(device_type=None)
    assert str(got.value) == str(want.value)


def test_custom_fwd_casts_inputs_inside_autocast_and_turns_it_off():
    seen = {}

    class Probe(lt.autograd.Function):
        @staticmethod
        @lt.amp.custom_fwd(device_type="cpu", cast_inputs=lt.float32)
        def forward(ctx, x):
            seen["dtype"], seen["autocast"] = x.dtype, lt.is_autocast_enabled("cpu")
            return x * 2

        @staticmethod
        @lt.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            return g * 2

    x = lt.tensor([1.0, 2.0], dtype=lt.bfloat16, requires_grad=True)
    with lt.autocast("cpu"):
        Probe.apply(x)
    assert seen == {"dtype": lt.float32, "autocast": False}


def test_cond_takes_the_branch_of_its_predicate_with_gradients():
    x = lt.tensor([1.0, 2.0], requires_grad=True)
    y = lt.cond(x.sum() > 0, lambda a: a * 3, lambda a: a - 1, (x,))
    y.sum().backward()
    assert y.tolist() == [3.0, 6.0] and x.grad.tolist() == [3.0, 3.0]
    assert lt.cond(False, lambda a: a + 1, lambda a: a - 1, [x.detach()]).tolist() == [0.0, 1.0]
    with pytest.raises(RuntimeError, match="Expected pred to be bool or single-element tensor"):
        lt.cond(lt.tensor([True, False]), lambda a: a, lambda a: a, (x,))
