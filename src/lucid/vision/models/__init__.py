"""lucid.vision.models (``torchvision.models``): torchvision's classification models with its constructors,
module names and state_dict keys, so a torchvision checkpoint loads unchanged and gives torchvision's outputs.

``weights=`` takes None (random initialisation, torchvision's), a local checkpoint file, or a weights name
(``ResNet18_Weights.IMAGENET1K_V1``, ``"DEFAULT"``): lucid downloads nothing, so a name loads the file from
torchvision's cache directory (``~/.cache/torch/hub/checkpoints``) and a missing file raises FileNotFoundError
with the command that fetches it."""
from ._api import WeightsEnum
from .alexnet import AlexNet, AlexNet_Weights, alexnet
from .densenet import DenseNet, DenseNet121_Weights, densenet121
from .efficientnet import EfficientNet, EfficientNet_B0_Weights, efficientnet_b0
from .mobilenetv2 import MobileNet_V2_Weights, MobileNetV2, mobilenet_v2
from .mobilenetv3 import MobileNet_V3_Large_Weights, MobileNet_V3_Small_Weights, MobileNetV3, mobilenet_v3_large, \
    mobilenet_v3_small
from .resnet import ResNet, ResNet18_Weights, ResNet34_Weights, ResNet50_Weights, ResNet101_Weights, \
    ResNet152_Weights, ResNeXt50_32X4D_Weights, Wide_ResNet50_2_Weights, resnet18, resnet34, resnet50, resnet101, \
    resnet152, resnext50_32x4d, wide_resnet50_2
from .squeezenet import SqueezeNet, SqueezeNet1_0_Weights, SqueezeNet1_1_Weights, squeezenet1_0, squeezenet1_1
from .vgg import VGG, VGG11_BN_Weights, VGG11_Weights, VGG13_BN_Weights, VGG13_Weights, VGG16_BN_Weights, \
    VGG16_Weights, VGG19_BN_Weights, VGG19_Weights, vgg11, vgg11_bn, vgg13, vgg13_bn, vgg16, vgg16_bn, vgg19, \
    vgg19_bn
from .vision_transformer import VisionTransformer, ViT_B_16_Weights, vit_b_16

_BUILDERS = {f.__name__: f for f in (
    resnet18, resnet34, resnet50, resnet101, resnet152, resnext50_32x4d, wide_resnet50_2, vgg11, vgg11_bn, vgg13,
    vgg13_bn, vgg16, vgg16_bn, vgg19, vgg19_bn, mobilenet_v2, mobilenet_v3_small, mobilenet_v3_large,
    efficientnet_b0, densenet121, squeezenet1_0, squeezenet1_1, alexnet, vit_b_16)}


_WEIGHTS = {
    "resnet18": ResNet18_Weights, "resnet34": ResNet34_Weights, "resnet50": ResNet50_Weights,
    "resnet101": ResNet101_Weights, "resnet152": ResNet152_Weights, "resnext50_32x4d": ResNeXt50_32X4D_Weights,
    "wide_resnet50_2": Wide_ResNet50_2_Weights, "vgg11": VGG11_Weights, "vgg11_bn": VGG11_BN_Weights,
    "vgg13": VGG13_Weights, "vgg13_bn": VGG13_BN_Weights, "vgg16": VGG16_Weights, "vgg16_bn": VGG16_BN_Weights,
    "vgg19": VGG19_Weights, "vgg19_bn": VGG19_BN_Weights, "mobilenet_v2": MobileNet_V2_Weights,
    "mobilenet_v3_small": MobileNet_V3_Small_Weights, "mobilenet_v3_large": MobileNet_V3_Large_Weights,
    "efficientnet_b0": EfficientNet_B0_Weights, "densenet121": DenseNet121_Weights,
    "squeezenet1_0": SqueezeNet1_0_Weights, "squeezenet1_1": SqueezeNet1_1_Weights, "alexnet": AlexNet_Weights,
    "vit_b_16": ViT_B_16_Weights}


def list_models(module=None, include=None, exclude=None) -> list[str]:
    """The names of the models ``get_model`` builds, sorted (``include``/``exclude``: fnmatch patterns)."""
    import fnmatch

    names = sorted(_BUILDERS)
    if include is not None:
        pats = [include] if isinstance(include, str) else include
        names = [n for n in names if any(fnmatch.fnmatch(n, p) for p in pats)]
    if exclude is not None:
        pats = [exclude] if isinstance(exclude, str) else exclude
        names = [n for n in names if not any(fnmatch.fnmatch(n, p) for p in pats)]
    return names


def get_model_builder(name: str):
    """The constructor of the model ``name`` (``"resnet18"``)."""
    name = name.lower()
    if name not in _BUILDERS:
        raise ValueError(f"Unknown model {name}")
    return _BUILDERS[name]


def get_model(name: str, **config):
    """``get_model_builder(name)(**config)``: ``get_model("resnet50", weights=None, num_classes=10)``."""
    return get_model_builder(name)(**config)


def get_model_weights(name):
    """The weights enum of a model, by name (``"resnet50"``) or constructor: ``ResNet50_Weights``."""
    builder = get_model_builder(name) if isinstance(name, str) else name
    return _WEIGHTS[builder.__name__]


def get_weight(name: str) -> WeightsEnum:
    """The weights named ``"ResNet50_Weights.IMAGENET1K_V2"`` (an enum's name, a dot, a member)."""
    enum_name, _, member = name.partition(".")
    enum = next((e for e in _WEIGHTS.values() if e.__name__ == enum_name), None)
    if enum is None or not member:
        raise ValueError(f"Invalid weight name provided: '{name}'.")
    return enum.verify(member)


__all__ = [
    "WeightsEnum", "list_models", "get_model", "get_model_builder", "get_model_weights", "get_weight",
    "ResNet", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d", "wide_resnet50_2",
    "ResNet18_Weights", "ResNet34_Weights", "ResNet50_Weights", "ResNet101_Weights", "ResNet152_Weights",
    "ResNeXt50_32X4D_Weights", "Wide_ResNet50_2_Weights",
    "VGG", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn",
    "VGG11_Weights", "VGG11_BN_Weights", "VGG13_Weights", "VGG13_BN_Weights", "VGG16_Weights", "VGG16_BN_Weights",
    "VGG19_Weights", "VGG19_BN_Weights",
    "MobileNetV2", "mobilenet_v2", "MobileNet_V2_Weights", "MobileNetV3", "mobilenet_v3_small",
    "mobilenet_v3_large", "MobileNet_V3_Small_Weights", "MobileNet_V3_Large_Weights",
    "EfficientNet", "efficientnet_b0", "EfficientNet_B0_Weights", "DenseNet", "densenet121", "DenseNet121_Weights",
    "SqueezeNet", "squeezenet1_0", "squeezenet1_1", "SqueezeNet1_0_Weights", "SqueezeNet1_1_Weights",
    "AlexNet", "alexnet", "AlexNet_Weights", "VisionTransformer", "vit_b_16", "ViT_B_16_Weights"]
