"""The zoo's likelihood models, realnvp (a RealNVP flow through lucid.distributions) and ddpm (a DDPM on the
digits): their shapes and state_dict keys, their densities and schedules against closed forms written out in numpy
(the change-of-variables formula by finite differences; Ho et al.'s schedule and sampler step), bad arguments, and
``lucid train``/``sample``/``eval`` on them: exact resume, the figures, mistakes as one error line. Their learning
curves are in test_zoo_learns.py."""
import json
import sys

import numpy as np
import pytest

import lucid
from lucid.cli import main
from lucid.cli.recipes import RECIPES
from lucid.distributions import Independent, Normal, constraints
from lucid.models.ddpm import DDPM, NoiseMLP, ddpm, timestep_embedding
from lucid.models.realnvp import AffineCoupling, AffineCouplingTransform, RealNVP, realnvp

PNG = b"\x89PNG\r\n\x1a\n"


def keys_and_shapes(model) -> list:
    return [(k, tuple(v.shape)) for k, v in model.state_dict().items()]


def randomized(model, seed=0, std=0.5):
    """The model with every parameter drawn from N(0, std^2) (the zero-initialised last layers would hide bugs)."""
    lucid.manual_seed(seed)
    with lucid.no_grad():
        for p in model.parameters():
            p.copy_(lucid.randn(*p.shape) * std)
    return model


# ------------------------------------------------------------------------------------------------- realnvp
def test_realnvp_keys_and_shapes():
    model = realnvp(dim=3, hidden_dim=16, num_couplings=2)
    keys = []
    for i in range(2):
        c = f"couplings.{i}."
        keys += [(c + "scale", (3,)), (c + "net.0.weight", (16, 3)), (c + "net.0.bias", (16,)),
                 (c + "net.2.weight", (16, 16)), (c + "net.2.bias", (16,)), (c + "net.4.weight", (6, 16)),
                 (c + "net.4.bias", (6,))]
    # a module's own parameters come before its children's (PyTorch's order); the masks and the base
    # distribution follow from the arguments, so they are not in the state_dict
    assert keys_and_shapes(model) == keys
    assert [c.mask.tolist() for c in model.couplings] == [[1, 0, 1], [0, 1, 0]]
    x = lucid.randn(5, 3)
    assert model.log_prob(x).shape == (5,) and model(x).shape == (5,) and model.sample(7).shape == (7, 3)


def test_realnvp_starts_as_the_base_distribution():
    """The couplings' last layers start at zero: every layer is the identity and the density is N(0, I)'s."""
    model = realnvp()
    x = lucid.randn(6, 2)
    np.testing.assert_allclose(model.log_prob(x).detach().numpy(),
                               (-0.5 * (x.numpy() ** 2).sum(1) - np.log(2 * np.pi)), rtol=1e-6, atol=1e-6)


def test_realnvp_log_prob_is_the_change_of_variables_formula():
    """log p(x) = log N(f^-1(x); 0, I) + log |det d f^-1 / dx|, the Jacobian by central differences in float64."""
    model = randomized(RealNVP(dim=2, hidden_dim=16, num_couplings=4)).double()

    def inverse(points):
        z = lucid.tensor(points)
        with lucid.no_grad():
            for coupling in reversed(model.couplings):
                z, _ = coupling.inverse(z)
        return z.numpy()
    x = np.random.default_rng(0).normal(size=(4, 2))
    got = model.log_prob(lucid.tensor(x)).detach().numpy()
    h = 1e-6
    for i in range(len(x)):
        jac = np.stack([(inverse(x[i:i + 1] + e) - inverse(x[i:i + 1] - e))[0] / (2 * h) for e in np.eye(2) * h], 1)
        z = inverse(x[i:i + 1])[0]
        expected = -0.5 * z @ z - np.log(2 * np.pi) + np.log(abs(np.linalg.det(jac)))
        assert got[i] == pytest.approx(expected, abs=1e-7)


def test_coupling_transform_inverts_and_keeps_its_log_det():
    coupling = randomized(AffineCoupling(lucid.tensor([True, False, True]), hidden_dim=8))
    t = AffineCouplingTransform(coupling)
    assert t.bijective and t.domain is constraints.real_vector and t.codomain is constraints.real_vector
    assert t.event_dim == 1
    x = lucid.randn(4, 3)
    y = t(x)
    np.testing.assert_array_equal(y.detach().numpy()[:, [0, 2]], x.numpy()[:, [0, 2]])  # the kept features
    np.testing.assert_allclose(t.inv(y).detach().numpy(), x.numpy(), rtol=1e-5, atol=1e-6)
    kept = t.log_abs_det_jacobian(x, y).detach().numpy()
    fresh = t.log_abs_det_jacobian(x.clone(), y.clone()).detach().numpy()  # another pair: the layer runs again
    np.testing.assert_allclose(kept, fresh, rtol=1e-6)
    s, _ = coupling.log_scale_and_shift(coupling.mask * x)
    np.testing.assert_allclose(kept, s.sum(-1).detach().numpy(), rtol=1e-6)


def test_realnvp_trains_through_the_flow():
    """Maximum likelihood reaches every parameter; rsample of the flow carries gradients too."""
    model = randomized(realnvp(hidden_dim=8, num_couplings=2))
    (-model.log_prob(lucid.randn(16, 2)).mean()).backward()
    assert all(p.grad is not None and np.abs(p.grad.numpy()).sum() > 0 for p in model.parameters())
    flow = model.flow()
    assert isinstance(flow.base_dist, Independent) and isinstance(flow.base_dist.base_dist, Normal)
    assert flow.event_shape == (2,) and flow.batch_shape == () and flow.has_rsample
    assert flow.rsample((3,)).requires_grad


def test_realnvp_bad_arguments():
    with pytest.raises(ValueError, match="at least 2 features"):
        realnvp(dim=1)


# ------------------------------------------------------------------------------------------------- ddpm
def test_ddpm_keys_and_shapes():
    model = ddpm(input_dim=10, hidden_dim=12, time_dim=4, depth=1, timesteps=5)
    e = "eps_model."
    assert keys_and_shapes(model) == [
        (e + "time_mlp.0.weight", (4, 4)), (e + "time_mlp.0.bias", (4,)), (e + "time_mlp.2.weight", (4, 4)),
        (e + "time_mlp.2.bias", (4,)), (e + "inp.weight", (12, 10)), (e + "inp.bias", (12,)),
        (e + "blocks.0.norm.weight", (12,)), (e + "blocks.0.norm.bias", (12,)), (e + "blocks.0.fc1.weight", (12, 12)),
        (e + "blocks.0.fc1.bias", (12,)), (e + "blocks.0.temb.weight", (12, 4)), (e + "blocks.0.temb.bias", (12,)),
        (e + "blocks.0.fc2.weight", (12, 12)), (e + "blocks.0.fc2.bias", (12,)), (e + "out.0.weight", (12,)),
        (e + "out.0.bias", (12,)), (e + "out.2.weight", (10, 12)), (e + "out.2.bias", (10,))]
    x, t = lucid.randn(3, 10), lucid.tensor([0, 4, 2])
    assert model(x, t).shape == (3, 10) and model.loss(x).shape == ()
    samples = model.sample(6)
    assert samples.shape == (6, 10) and samples.min().item() >= -1 and samples.max().item() <= 1
    assert not samples.requires_grad


def test_ddpm_schedule_is_ho_et_als():
    model = DDPM(input_dim=4, hidden_dim=8, depth=1)  # 1000 steps, betas 1e-4 to 0.02
    betas = np.linspace(1e-4, 0.02, 1000)
    abar = np.cumprod(1 - betas)
    abar_prev = np.concatenate([[1.0], abar[:-1]])
    expected = {"betas": betas, "sqrt_abar": np.sqrt(abar), "sqrt_one_minus_abar": np.sqrt(1 - abar),
                "sqrt_recip_alphas": 1 / np.sqrt(1 - betas),
                "posterior_std": np.sqrt(betas * (1 - abar_prev) / (1 - abar))}
    for name, value in expected.items():
        np.testing.assert_allclose(getattr(model, name).numpy(), value, rtol=2e-6, atol=1e-9, err_msg=name)
    assert abar[-1] < 1e-4  # the last step is noise


def test_timestep_embedding_formula():
    t = np.array([0, 1, 7, 999])
    got = timestep_embedding(lucid.tensor(t), 6).numpy()
    freqs = 10000.0 ** (-np.arange(3) / 3)
    expected = np.concatenate([np.sin(t[:, None] * freqs), np.cos(t[:, None] * freqs)], 1)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_ddpm_loss_is_the_noise_prediction_error():
    model = randomized(ddpm(input_dim=5, hidden_dim=8, time_dim=4, depth=2, timesteps=10), std=0.3)
    rng = np.random.default_rng(0)
    x0, noise = rng.uniform(-1, 1, (6, 5)).astype(np.float32), rng.standard_normal((6, 5)).astype(np.float32)
    t = np.array([0, 9, 3, 3, 5, 1])
    abar = np.cumprod(1 - np.linspace(1e-4, 0.02, 10))
    xt = np.sqrt(abar[t])[:, None] * x0 + np.sqrt(1 - abar[t])[:, None] * noise
    predicted = model(lucid.tensor(xt.astype(np.float32)), lucid.tensor(t)).detach().numpy()
    got = model.loss(lucid.tensor(x0), lucid.tensor(t), lucid.tensor(noise)).item()
    assert got == pytest.approx(((predicted - noise) ** 2).mean(), rel=1e-5)


def test_ddpm_sample_is_ancestral_sampling():
    """Two steps of Algorithm 2 written out: x_1 ~ N(0, I), x_0 = (x_1 - b_1 / sqrt(1 - abar_1) eps(x_1, 1)) /
    sqrt(a_1) + sigma_1 z, then the last step without noise, clipped to [-1, 1]."""
    model = randomized(ddpm(input_dim=3, hidden_dim=8, time_dim=4, depth=1, timesteps=2, beta_start=0.1,
                            beta_end=0.5), std=0.3)
    lucid.manual_seed(5)
    got = model.sample(4).numpy()
    lucid.manual_seed(5)
    x = lucid.randn(4, 3)
    betas = np.array([0.1, 0.5])
    abar = np.cumprod(1 - betas)
    with lucid.no_grad():
        eps = model(x, lucid.tensor([1] * 4)).numpy()
        sigma = np.sqrt(betas[1] * (1 - abar[0]) / (1 - abar[1]))
        x = (x.numpy() - betas[1] / np.sqrt(1 - abar[1]) * eps) / np.sqrt(1 - betas[1]) \
            + sigma * lucid.randn(4, 3).numpy()
        eps = model(lucid.tensor(x.astype(np.float32)), lucid.tensor([0] * 4)).numpy()
    expected = np.clip((x - betas[0] / np.sqrt(1 - abar[0]) * eps) / np.sqrt(1 - betas[0]), -1, 1)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs, match", [
    (dict(time_dim=5), "even time_dim"), (dict(timesteps=0), "timesteps must be at least 1"),
    (dict(beta_start=0.0), "0 < beta_start <= beta_end < 1"), (dict(beta_start=0.1, beta_end=0.01), "beta_start"),
    (dict(beta_end=1.0), "beta_end < 1"),
])
def test_ddpm_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ddpm(**kwargs)
    with pytest.raises(ValueError, match="even"):
        timestep_embedding(lucid.tensor([1]), 3)
    with pytest.raises(ValueError, match="even"):
        NoiseMLP(time_dim=3)


# ------------------------------------------------------------------------------------------------- the command
@pytest.fixture
def no_figures(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)


@pytest.fixture
def few_samples(monkeypatch):
    """ddpm with a 10-step schedule scoring 100 generated digits (the recipe's: 100 steps, 1000 digits, 100,000
    network evaluations per score)."""
    recipe = RECIPES["ddpm"]
    small = {**recipe().default_config(), "timesteps": 10, "beta_start": 0.01, "beta_end": 0.5}
    monkeypatch.setattr(recipe, "default_config", lambda self: small)
    monkeypatch.setattr(recipe, "n_eval", 100)


def _train(*args):
    return main(["train", *args, "--quiet"])


def _weights(run):
    return {k: v.numpy() for k, v in lucid.load(run / "model.safetensors").items()}


@pytest.mark.parametrize("model", ["realnvp", "ddpm"])
def test_resume_continues_exactly(model, tmp_path, no_figures, few_samples):
    """4 steps, then resumed to 8, gives the weights and Adam state of 8 at once (ddpm: its learning-rate
    scheduler too)."""
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert _train(model, "--steps", "8", "--eval-every", "4", "--out", str(whole)) == 0
    assert _train(model, "--steps", "4", "--eval-every", "4", "--out", str(parts)) == 0
    assert _train(model, "--steps", "8", "--resume", str(parts)) == 0
    a, b = _weights(whole), _weights(parts)
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    sa, sb = (lucid.load(run / "optimizer.safetensors") for run in (whole, parts))
    assert sa["schedulers"] == sb["schedulers"]
    ea, eb = (s["optimizers"]["optimizer"]["state"] for s in (sa, sb))
    assert all(np.array_equal(ea[i][k].numpy(), eb[i][k].numpy()) for i in ea for k in ("exp_avg", "exp_avg_sq"))


def test_realnvp_writes_its_figure_and_evaluates(tmp_path, capsys):
    out = tmp_path / "realnvp"
    assert _train("realnvp", "--steps", "4", "--eval-every", "2", "--out", str(out)) == 0
    for name in ("density.png", "loss.png"):
        assert (out / name).read_bytes().startswith(PNG), name
    result = json.loads((out / "config.json").read_text())["result"]
    assert result["test_nll_gaussian_fit"] == pytest.approx(1.888, abs=0.01)  # the fixed data's baseline
    capsys.readouterr()
    assert main(["eval", "realnvp", "--from", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["test_nll"] == pytest.approx(result["test_nll"], rel=1e-5)


def test_ddpm_samples_digits(tmp_path, monkeypatch, few_samples):
    out = tmp_path / "ddpm"
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "matplotlib", None)  # trained without figures, to draw them from the checkpoint
        assert _train("ddpm", "--steps", "2", "--out", str(out)) == 0
    assert not (out / "samples.png").exists()
    assert main(["sample", "ddpm", "--from", str(out), "--num", "16"]) == 0
    assert (out / "samples.png").read_bytes().startswith(PNG)


@pytest.mark.parametrize("argv, message", [
    (["train", "realnvp", "--batch-size", "4001"], "--batch-size 4001 is larger than realnvp's training set"),
    (["train", "ddpm", "--batch-size", "5000"], "--batch-size 5000 is larger than ddpm's training set"),
    (["train", "realnvp", "--amp", "bf16"], "realnvp's training step does not support mixed precision"),
])
def test_a_mistake_is_one_error_line(argv, message, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"lucid {argv[0]}: error: " in err and message in err and "Traceback" not in err
    assert not (tmp_path / "run" / "config.json").exists()
