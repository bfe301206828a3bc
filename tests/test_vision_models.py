"""lucid.vision.models against torchvision's: the same state_dict keys and shapes for every model, and - from
the same weights (torchvision's initialisation with its norm statistics and zero-initialised layers perturbed, so
every layer matters) - the same outputs in eval mode. Checkpoints load from files and from torchvision's cache."""
import numpy as np
import pytest

import lucid
import lucid.compat.torch as ltorch
from helpers import torchvision_or_skip
from lucid.vision import models

LIGHT = ["resnet18", "resnet34", "resnet50", "resnext50_32x4d", "mobilenet_v2", "mobilenet_v3_small",
         "mobilenet_v3_large", "efficientnet_b0", "densenet121", "squeezenet1_0", "squeezenet1_1", "alexnet"]
HEAVY = ["resnet101", "resnet152", "wide_resnet50_2", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn",
         "vgg19", "vgg19_bn", "vit_b_16"]  # hundreds of MB of random initialisation each


def _tv():
    return torchvision_or_skip().models


def _keys_and_shapes(state) -> list:
    return [(k, tuple(v.shape)) for k, v in state.items()]


@pytest.mark.parametrize("name", LIGHT + [pytest.param(n, marks=pytest.mark.slow) for n in HEAVY])
def test_state_dict_keys_and_shapes_are_torchvisions(name):
    import torch
    with torch.device("meta"):  # shapes only: nothing is initialised
        theirs = getattr(_tv(), name)(num_classes=7)
    ours = getattr(models, name)(num_classes=7)
    assert _keys_and_shapes(ours.state_dict()) == _keys_and_shapes(theirs.state_dict())
    assert type(ours).__name__ == type(theirs).__name__


def _perturbed(state, seed=0) -> dict:
    """torchvision's initial state with batch-norm statistics and affine parameters drawn around their initial
    values and zero-initialised tensors (biases, ViT's head) given small random values."""
    rng = np.random.default_rng(seed)
    out = {}
    for k, v in state.items():
        a = v.numpy().copy()
        if a.dtype.kind == "f":
            if k.endswith("running_var"):
                a = rng.uniform(0.5, 1.5, a.shape)
            elif k.endswith("running_mean") or not a.any():
                a = rng.normal(0, 0.1, a.shape)
            elif a.ndim == 1 and (a == 1).all():  # norm weights
                a = rng.uniform(0.5, 1.5, a.shape)
            a = a.astype(np.float32)
        out[k] = a
    return out


def _compare(theirs, ours, size, seed=0, rtol=1e-4):
    import torch
    state = _perturbed(theirs.state_dict(), seed)
    theirs.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    ours.load_state_dict({k: lucid.tensor(v) for k, v in state.items()})
    theirs.eval(), ours.eval()
    x = np.random.default_rng(seed + 1).standard_normal((2, 3, size, size)).astype(np.float32)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x)).numpy()
    with lucid.no_grad():
        got = ours(lucid.tensor(x)).numpy()
    assert got.shape == expected.shape
    scale = np.abs(expected).max()
    assert scale > 1e-3  # the perturbation reaches the output
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("name, size", [
    ("resnet18", 32), ("squeezenet1_1", 48), ("mobilenet_v2", 32), ("mobilenet_v3_small", 32),
    pytest.param("alexnet", 64, marks=pytest.mark.slow),
    pytest.param("resnet50", 32, marks=pytest.mark.slow), pytest.param("resnext50_32x4d", 32, marks=pytest.mark.slow),
    pytest.param("mobilenet_v3_large", 32, marks=pytest.mark.slow),
    pytest.param("efficientnet_b0", 32, marks=pytest.mark.slow),
    pytest.param("densenet121", 32, marks=pytest.mark.slow), pytest.param("vgg11_bn", 32, marks=pytest.mark.slow),
    pytest.param("squeezenet1_0", 48, marks=pytest.mark.slow)])
def test_outputs_are_torchvisions_from_the_same_weights(name, size):
    _compare(getattr(_tv(), name)(num_classes=10), getattr(models, name)(num_classes=10), size)


def test_small_vision_transformer_densenet_and_efficientnet_outputs_are_torchvisions():
    """The classes of vit_b_16, densenet121 and efficientnet_b0 at sizes that run in a moment."""
    tv = _tv()
    from torchvision.models import efficientnet as tv_eff

    from lucid.vision.models import efficientnet as eff
    vit = dict(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=24, num_classes=5)
    _compare(tv.VisionTransformer(**vit), models.VisionTransformer(**vit), 32)
    vit_rep = dict(vit, representation_size=12)
    _compare(tv.VisionTransformer(**vit_rep), models.VisionTransformer(**vit_rep), 32, seed=3)
    dense = dict(growth_rate=8, block_config=(2, 2, 2, 2), num_init_features=16, num_classes=5)
    _compare(tv.DenseNet(**dense), models.DenseNet(**dense), 32)
    setting = [(1, 3, 1, 16, 8, 1), (6, 5, 2, 8, 16, 2)]
    _compare(tv_eff.EfficientNet([tv_eff.MBConvConfig(*s, 1.0, 1.0) for s in setting], 0.2, num_classes=5),
             eff.EfficientNet([eff.MBConvConfig(*s, 1.0, 1.0) for s in setting], 0.2, num_classes=5), 32)


@pytest.mark.parametrize("block", ["BasicBlock", pytest.param("Bottleneck", marks=pytest.mark.slow)])
def test_training_mode_outputs_and_gradients_are_torchvisions(block):
    """Batch statistics in training mode, the running statistics they leave, and every parameter's gradient (a
    one-block-per-stage ResNet: the same classes as the published ones)."""
    import torch
    from torchvision.models import resnet as tv_resnet

    from lucid.vision.models import resnet
    theirs = tv_resnet.ResNet(getattr(tv_resnet, block), [1, 1, 1, 1], num_classes=4)
    ours = resnet.ResNet(getattr(resnet, block), [1, 1, 1, 1], num_classes=4)
    ours.load_state_dict({k: lucid.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 3, 16, 16)).astype(np.float32)
    target = np.array([0, 1, 2, 3])
    torch.nn.functional.cross_entropy(theirs(torch.from_numpy(x)), torch.from_numpy(target)).backward()
    lucid.nn.functional.cross_entropy(ours(lucid.tensor(x)), lucid.tensor(target)).backward()
    for (k, p), q in zip(theirs.named_parameters(), ours.parameters()):
        g = p.grad.numpy()
        np.testing.assert_allclose(q.grad.numpy(), g, rtol=1e-3, atol=1e-3 * np.abs(g).max(), err_msg=k)
    for k, v in theirs.state_dict().items():
        if "running" in k:
            np.testing.assert_allclose(ours.state_dict()[k].numpy(), v.numpy(), rtol=1e-4, atol=1e-6, err_msg=k)


def test_weights_from_a_torchvision_checkpoint_file(tmp_path):
    """A state_dict saved by real PyTorch's torch.save loads by path and gives torchvision's outputs."""
    import torch
    theirs = _tv().squeezenet1_1(num_classes=6).eval()
    torch.save(theirs.state_dict(), tmp_path / "squeeze.pth")
    ours = models.squeezenet1_1(weights=str(tmp_path / "squeeze.pth"), num_classes=6).eval()
    x = np.random.default_rng(0).standard_normal((1, 3, 40, 40)).astype(np.float32)
    with torch.no_grad():
        expected = theirs(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(ours(lucid.tensor(x)).detach().numpy(), expected, rtol=1e-4, atol=1e-6)
    ours = models.squeezenet1_1(weights=tmp_path / "squeeze.pth", num_classes=6)  # a Path too
    with pytest.raises(RuntimeError, match="size mismatch"):
        models.squeezenet1_1(weights=tmp_path / "squeeze.pth")  # 1000 classes: the classifier does not fit
    with pytest.raises(FileNotFoundError, match="does not exist"):
        models.resnet18(weights=str(tmp_path / "missing.pth"))


def test_named_weights_load_from_torchvisions_cache_and_say_how_to_get_them(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    with pytest.raises(FileNotFoundError) as e:
        models.resnet18(weights=models.ResNet18_Weights.DEFAULT)
    message = str(e.value)
    assert "https://download.pytorch.org/models/resnet18-f37072fd.pth" in message
    assert str(tmp_path / "hub" / "checkpoints" / "resnet18-f37072fd.pth") in message and "curl" in message
    source = models.resnet18()
    path = tmp_path / "hub" / "checkpoints" / "resnet18-f37072fd.pth"
    path.parent.mkdir(parents=True)
    ltorch.save(source.state_dict(), path)
    for weights in (models.ResNet18_Weights.IMAGENET1K_V1, "DEFAULT", "IMAGENET1K_V1",
                    "ResNet18_Weights.IMAGENET1K_V1"):
        loaded = models.resnet18(weights=weights)
        assert np.array_equal(loaded.fc.weight.detach().numpy(), source.fc.weight.detach().numpy())
    assert models.ResNet50_Weights.DEFAULT is models.ResNet50_Weights.IMAGENET1K_V2
    with pytest.raises(ValueError, match="The parameter 'num_classes' expected value 1000 but got 10 instead."):
        models.resnet18(weights="DEFAULT", num_classes=10)
    with pytest.raises(KeyError, match="no such ResNet18_Weights"):
        models.resnet18(weights="IMAGENET1K_V9")
    with pytest.raises(TypeError, match="expected ResNet18_Weights but received ResNet34_Weights"):
        models.resnet18(weights=models.ResNet34_Weights.DEFAULT)


def test_published_checkpoints_old_key_names_load(tmp_path):
    """DenseNet's published file predates its layer names ('norm.1'); ViT's older MLP names ('linear_1')."""
    source = models.densenet121(num_classes=3)
    old = {k.replace("norm1.", "norm.1.").replace("conv2.", "conv.2."): v for k, v in source.state_dict().items()
           if not k.endswith("num_batches_tracked")}  # (the file predates that buffer too)
    assert any("denselayer1.norm.1.weight" in k for k in old)
    ltorch.save(old, tmp_path / "dense.pth")
    loaded = models.densenet121(weights=tmp_path / "dense.pth", num_classes=3)
    key = "features.denseblock1.denselayer1.conv2.weight"
    assert np.array_equal(loaded.state_dict()[key].numpy(), source.state_dict()[key].numpy())
    vit = models.VisionTransformer(16, 8, 1, 1, 8, 12, num_classes=2)
    state = {k.replace("mlp.0.", "mlp.linear_1.").replace("mlp.3.", "mlp.linear_2."): v
             for k, v in vit.state_dict().items()}
    assert "encoder.layers.encoder_layer_0.mlp.linear_1.weight" in state
    other = models.VisionTransformer(16, 8, 1, 1, 8, 12, num_classes=2)
    other.load_state_dict(state)
    assert np.array_equal(other.encoder.layers[0].mlp[3].weight.detach().numpy(),
                          vit.encoder.layers[0].mlp[3].weight.detach().numpy())


def test_constructor_errors_and_registry():
    with pytest.raises(ValueError, match="Unsupported SqueezeNet version 2_0: 1_0 or 1_1 expected"):
        models.SqueezeNet("2_0")
    with pytest.raises(RuntimeError, match="Wrong image height! Expected 32 but got 16!"):
        models.vit_b_16(image_size=32)(lucid.zeros(1, 3, 16, 32))
    with pytest.raises(ValueError, match="stride should be 1 or 2 instead of 3"):
        models.mobilenetv2.InvertedResidual(4, 4, 3, 1)
    with pytest.raises(ValueError, match="The parameter 'groups' expected value 32 but got 8 instead."):
        models.resnext50_32x4d(groups=8)
    assert "resnet18" in models.list_models() and models.list_models(include="vgg1[19]") == ["vgg11", "vgg19"]
    assert isinstance(models.get_model("mobilenet_v3_small", num_classes=3), models.MobileNetV3)
    with pytest.raises(ValueError, match="Unknown model foo"):
        models.get_model("foo")


def test_forward_and_backward_evaluate_nothing(monkeypatch):
    """The models record lazy MLX operations only (batch-norm statistics, stochastic depth's draws and dropout
    included): a training step's forward and backward evaluate nothing before the optimizer's step."""
    import mlx.core as mx

    from lucid._pending import evaluate_pending
    from lucid.vision.models import efficientnet as eff
    built = [models.resnet18(num_classes=3), models.mobilenet_v3_small(num_classes=3),
             eff.EfficientNet([eff.MBConvConfig(1, 3, 1, 16, 8, 1), eff.MBConvConfig(6, 5, 2, 8, 8, 3)], 0.2,
                              stochastic_depth_prob=0.5, num_classes=3),
             models.DenseNet(8, (2, 2), 16, num_classes=3, drop_rate=0.2), models.squeezenet1_1(num_classes=3),
             models.VisionTransformer(32, 8, 1, 2, 16, 24, dropout=0.1, num_classes=3)]
    x = lucid.randn(2, 3, 32, 32)
    for m in built:
        for p in m.parameters():
            p.sum().item()  # the initialisation, evaluated before counting
    x.sum().item()
    for m in built:
        calls = []
        with monkeypatch.context() as patch:
            patch.setattr(mx, "eval", lambda *a: calls.append("eval"))
            patch.setattr(mx, "async_eval", lambda *a: calls.append("async_eval"))
            m.train()
            m(x).square().mean().backward()
        assert calls == [], type(m).__name__
        evaluate_pending()  # what the optimizer's step would evaluate


@pytest.mark.parametrize("weights", ["ResNet50_Weights.IMAGENET1K_V2", "EfficientNet_B0_Weights.DEFAULT",
                                     "ResNet18_Weights.DEFAULT"])
def test_weights_transforms_are_torchvisions_preset(weights):
    """``weights.transforms()``: the preprocessing torchvision publishes with the weights, on PIL images and
    uint8 tensors."""
    import torch
    Image = pytest.importorskip("PIL.Image")
    tv = _tv()
    enum, member = weights.split(".")
    theirs, ours = getattr(getattr(tv, enum), member).transforms(), getattr(getattr(models, enum), member).transforms()
    pixels = np.random.default_rng(0).integers(0, 256, (250, 300, 3), dtype=np.uint8)
    got = ours(Image.fromarray(pixels))
    np.testing.assert_allclose(got.numpy(), theirs(Image.fromarray(pixels)).numpy(), rtol=1e-5, atol=1e-5)
    assert tuple(got.shape) == (3, 224, 224) and got.dtype == lucid.float32
    chw = pixels.transpose(2, 0, 1).copy()
    np.testing.assert_allclose(ours(lucid.tensor(chw)).numpy(), theirs(torch.from_numpy(chw)).numpy(), atol=2e-2)


def test_legacy_pretrained_flag_and_weight_lookups(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    with pytest.warns(UserWarning, match="The parameter 'pretrained' is deprecated since 0.13"):
        model = models.alexnet(pretrained=False, num_classes=3)
    assert model.classifier[-1].out_features == 3
    with pytest.warns(UserWarning, match=r"equivalent to passing `weights=ResNet50_Weights.IMAGENET1K_V1`"):
        with pytest.raises(FileNotFoundError, match="resnet50-0676ba61.pth"):
            models.resnet50(pretrained=True)
    assert models.get_weight("ResNet50_Weights.IMAGENET1K_V2") is models.ResNet50_Weights.IMAGENET1K_V2
    assert models.get_model_weights("vit_b_16") is models.ViT_B_16_Weights
    assert models.get_model_weights(models.resnet18) is models.ResNet18_Weights
    with pytest.raises(ValueError, match="Invalid weight name provided: 'Foo.BAR'."):
        models.get_weight("Foo.BAR")
    tv = _tv()
    for name in models.list_models():  # the same published files as torchvision's
        assert models.get_model_weights(name).DEFAULT.url == tv.get_model_weights(name).DEFAULT.url, name
