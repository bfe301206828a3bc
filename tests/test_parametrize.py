"""nn.utils.parametrize (register_parametrization, remove_parametrizations, is_parametrized, cached) and
nn.utils.parametrizations.weight_norm/spectral_norm: PyTorch's semantics and state_dict keys. Values, gradients
and keys against PyTorch when installed; float64 gradcheck otherwise."""
import copy
import pickle

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from helpers import check_grads, leaf
from lucid.nn.utils import parametrizations, parametrize

RNG = np.random.default_rng(0)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(0, 1)

    def right_inverse(self, A):
        return A.triu()


class Double(nn.Module):
    def forward(self, X):
        return 2 * X

    def right_inverse(self, A):
        return A / 2


class RankOne(nn.Module):
    def forward(self, x, y):
        return x.unsqueeze(-1) @ y.unsqueeze(-2)

    def right_inverse(self, Z):
        return Z[:, 0], Z[0, :] / Z[0, 0]


def _to_lucid(state):
    return {k: lucid.tensor(v.detach().numpy()) for k, v in state.items()}


def test_register_parametrization_makes_a_property_on_a_class_of_its_own():
    lin, other = nn.Linear(3, 3), nn.Linear(3, 3)
    weight = lin.weight
    parametrize.register_parametrization(lin, "weight", Symmetric())
    assert type(lin).__name__ == "ParametrizedLinear" and isinstance(lin, nn.Linear)
    assert parametrize.type_before_parametrizations(lin) is nn.Linear and type(other) is nn.Linear
    assert parametrize.is_parametrized(lin) and parametrize.is_parametrized(lin, "weight")
    assert not parametrize.is_parametrized(lin, "bias") and not parametrize.is_parametrized(other)
    assert lin.parametrizations.weight.original is weight  # the same Parameter: an optimizer keeps working
    w = lin.weight.detach().numpy()
    np.testing.assert_allclose(w, w.T)
    np.testing.assert_allclose(np.triu(w), np.triu(weight.detach().numpy()))
    assert sorted(lin.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert sorted(n for n, _ in lin.named_parameters()) == ["bias", "parametrizations.weight.original"]
    x = lucid.randn(2, 3)
    np.testing.assert_allclose(lin(x).detach().numpy(), x.numpy() @ w.T + lin.bias.detach().numpy(), rtol=1e-5)


def test_assigning_calls_right_inverse_and_chains_apply_in_order():
    lin = nn.Linear(2, 2, bias=False)
    parametrize.register_parametrization(lin, "weight", Symmetric())
    parametrize.register_parametrization(lin, "weight", Double())
    assert len(lin.parametrizations.weight) == 2
    a = np.array([[1.0, 2.0], [2.0, 3.0]], dtype=np.float32)
    lin.weight = lucid.tensor(a)  # right_inverse last to first: Double's, then Symmetric's
    np.testing.assert_allclose(lin.parametrizations.weight.original.detach().numpy(), np.triu(a) / 2)
    np.testing.assert_allclose(lin.weight.detach().numpy(), a)


def test_gradients_flow_to_the_original():
    lin = nn.Linear(3, 3).double()
    parametrize.register_parametrization(lin, "weight", Symmetric())
    x = leaf(4, 3)
    lin(x).pow(2).sum().backward()
    g = lin.parametrizations.weight.original.grad.numpy()
    w, xn = lin.weight.detach().numpy(), x.detach().numpy()
    gw = 2 * (xn @ w.T + lin.bias.detach().numpy()).T @ xn  # d/dW of sum((x W^T + b)^2)
    np.testing.assert_allclose(g, np.triu(gw) + np.tril(gw, -1).T, rtol=1e-10)
    check_grads(lambda t: Symmetric()(t) * 3.0, leaf(3, 3))


def test_several_originals_and_removal():
    lin = nn.Linear(3, 4)
    parametrize.register_parametrization(lin, "weight", RankOne())
    assert sorted(lin.state_dict()) == ["bias", "parametrizations.weight.original0",
                                        "parametrizations.weight.original1"]
    assert np.linalg.matrix_rank(lin.weight.detach().numpy()) == 1
    with pytest.raises(ValueError, match="in terms of a sequence of tensors"):
        parametrize.remove_parametrizations(lin, "weight", leave_parametrized=False)
    w = lin.weight.detach().numpy()
    parametrize.remove_parametrizations(lin, "weight")
    assert type(lin) is nn.Linear and not hasattr(lin, "parametrizations")
    assert isinstance(lin.weight, nn.Parameter) and sorted(lin.state_dict()) == ["bias", "weight"]
    np.testing.assert_allclose(lin.weight.detach().numpy(), w)


def test_remove_keeps_the_parameter_object():
    lin = nn.Linear(2, 2)
    weight, w = lin.weight, lin.weight.detach().numpy().copy()
    parametrize.register_parametrization(lin, "weight", Double())
    parametrize.register_parametrization(lin, "bias", Double())
    np.testing.assert_allclose(weight.detach().numpy(), w / 2)  # right_inverse at registration: weight unchanged
    np.testing.assert_allclose(lin.weight.detach().numpy(), w)
    parametrize.remove_parametrizations(lin, "weight")
    assert lin.weight is weight and type(lin).__name__ == "ParametrizedLinear"  # bias still parametrized
    np.testing.assert_allclose(lin.weight.detach().numpy(), w)
    original = lin.parametrizations.bias.original.detach().numpy()
    parametrize.remove_parametrizations(lin, "bias", leave_parametrized=False)
    assert type(lin) is nn.Linear
    np.testing.assert_allclose(lin.bias.detach().numpy(), original)


def test_buffers_can_be_parametrized():
    m = nn.BatchNorm1d(3)
    parametrize.register_parametrization(m, "running_var", Double())
    assert "parametrizations.running_var.original" in m.state_dict()
    np.testing.assert_allclose(m.parametrizations.running_var.original.numpy(), np.full(3, 0.5))
    np.testing.assert_allclose(m.running_var.numpy(), np.ones(3))


def test_registration_errors():
    lin = nn.Linear(2, 3)

    class Shrink(nn.Module):
        def forward(self, x):
            return x[:1]

    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(lin, "weight", Shrink())
    assert type(lin) is nn.Linear and isinstance(lin.weight, nn.Parameter)  # nothing changed
    parametrize.register_parametrization(lin, "weight", Shrink(), unsafe=True)
    assert lin.weight.shape == (1, 2)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametrized element"):
        parametrize.register_parametrization(lin, "nothing", Double())
    with pytest.raises(ValueError, match="does not have a parametrization on bias"):
        parametrize.remove_parametrizations(lin, "bias")
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        lin.weight = lucid.zeros(1, 2)
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(lin)


def test_cached_computes_once_per_block():
    calls = []

    class Counting(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 1.0

    lin = nn.Linear(2, 2)
    parametrize.register_parametrization(lin, "weight", Counting())
    calls.clear()
    with parametrize.cached():
        a, b = lin.weight, lin.weight
        assert a is b
    lin.weight
    assert len(calls) == 2


def test_deepcopy_keeps_the_parametrization():
    lin = nn.Linear(2, 2)
    parametrize.register_parametrization(lin, "weight", Double())
    twin = copy.deepcopy(lin)
    assert type(twin) is type(lin) and twin.parametrizations.weight.original is not lin.parametrizations.weight.original
    np.testing.assert_allclose(twin.weight.detach().numpy(), lin.weight.detach().numpy())


def test_weight_norm_parametrization_matches_pytorch():
    torch = pytest.importorskip("torch")
    lin = parametrizations.weight_norm(nn.Linear(4, 3).double())
    ref = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 3).double())
    assert sorted(lin.state_dict()) == sorted(ref.state_dict()) == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    lin.load_state_dict(_to_lucid(ref.state_dict()))
    x = RNG.normal(size=(5, 4))
    out, expected = lin(lucid.tensor(x)), ref(torch.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    out.pow(2).sum().backward()
    expected.pow(2).sum().backward()
    for i in (0, 1):
        got = getattr(lin.parametrizations.weight, f"original{i}").grad.numpy()
        np.testing.assert_allclose(got, getattr(ref.parametrizations.weight, f"original{i}").grad.numpy(),
                                   rtol=1e-10)
    # a state_dict of the hook form (weight_g/weight_v) loads, as in PyTorch
    old = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3).double())
    lin.load_state_dict(_to_lucid(old.state_dict()))
    np.testing.assert_allclose(lin(lucid.tensor(x)).detach().numpy(), old(torch.tensor(x)).detach().numpy(),
                               rtol=1e-12)
    conv = parametrizations.weight_norm(nn.Conv2d(2, 3, 3), dim=None)
    assert conv.parametrizations.weight.original0.shape == ()


def test_weight_norm_parametrization_gradcheck():
    wn = parametrizations._WeightNorm(0)
    check_grads(lambda g, v: wn(g, v), leaf(3, 1, seed=1, low=0.5), leaf(3, 4, seed=2))
    lin = parametrizations.weight_norm(nn.Linear(4, 3).double())
    np.testing.assert_allclose(np.linalg.norm(lin.weight.detach().numpy(), axis=1),
                               lin.parametrizations.weight.original0.detach().numpy()[:, 0], rtol=1e-12)


@pytest.mark.parametrize("make", [lambda nn: nn.Conv2d(2, 3, 3), lambda nn: nn.ConvTranspose2d(2, 3, 3),
                                  lambda nn: nn.Linear(5, 4)], ids=["conv", "conv_transpose", "linear"])
def test_spectral_norm_parametrization_matches_pytorch(make):
    torch = pytest.importorskip("torch")
    m = parametrizations.spectral_norm(make(nn).double())
    ref = torch.nn.utils.parametrizations.spectral_norm(make(torch.nn).double())
    assert sorted(m.state_dict()) == sorted(ref.state_dict()) == [
        "bias", "parametrizations.weight.0._u", "parametrizations.weight.0._v", "parametrizations.weight.original"]
    m.load_state_dict(_to_lucid(ref.state_dict()))
    shape = (2, 5) if isinstance(m, nn.Linear) else (2, 2, 5, 5)
    x = RNG.normal(size=shape)
    for training in (True, False):  # training advances the power iteration; eval does not
        m.train(training)
        ref.train(training)
        out, expected = m(lucid.tensor(x)), ref(torch.tensor(x))
        np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), rtol=1e-10, atol=1e-12)
        out.pow(2).sum().backward()
        expected.pow(2).sum().backward()
        np.testing.assert_allclose(m.parametrizations.weight.original.grad.numpy(),
                                   ref.parametrizations.weight.original.grad.numpy(), rtol=1e-9, atol=1e-12)
        for b in ("_u", "_v"):
            np.testing.assert_allclose(getattr(m.parametrizations.weight[0], b).numpy(),
                                       getattr(ref.parametrizations.weight[0], b).numpy(), rtol=1e-10, atol=1e-12)


def test_spectral_norm_parametrization_normalises_and_gradchecks():
    lucid.manual_seed(0)
    lin = parametrizations.spectral_norm(nn.Linear(6, 4).double(), n_power_iterations=30)
    lin.eval()
    assert abs(np.linalg.svd(lin.weight.detach().numpy(), compute_uv=False)[0] - 1) < 1e-6
    sn = lin.parametrizations.weight[0]
    check_grads(lambda w: sn(w), leaf(4, 6, seed=3))  # eval: u, v fixed, sigma = u . W v
    with pytest.raises(ValueError, match="no parameter or buffer with name 'kernel'"):
        parametrizations.spectral_norm(nn.Linear(2, 2), "kernel")
    with pytest.raises(ValueError, match="n_power_iterations"):
        parametrizations.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)


def test_reachable_as_torch_nn_utils_parametrize(tmp_path):
    from lucid.compat.run import run_script
    script = tmp_path / "probe.py"
    script.write_text("import torch\n"
                      "import torch.nn.utils.parametrize as P\n"
                      "from torch.nn.utils.parametrizations import spectral_norm, weight_norm\n"
                      "m = weight_norm(torch.nn.Linear(3, 2))\n"
                      "assert P.is_parametrized(m, 'weight') and type(m).__name__ == 'ParametrizedLinear'\n"
                      "assert 'parametrizations.weight.original1' in m.state_dict()\n"
                      "spectral_norm(torch.nn.Conv2d(1, 2, 3))(torch.zeros(1, 1, 4, 4))\n")
    run_script(script)
