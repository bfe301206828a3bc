"""torchvision.models.mobilenet: MobileNetV2 and V3 under one module name, as torchvision gathers them."""
from .mobilenetv2 import MobileNet_V2_Weights, MobileNetV2, mobilenet_v2
from .mobilenetv3 import MobileNet_V3_Large_Weights, MobileNet_V3_Small_Weights, MobileNetV3, mobilenet_v3_large, \
    mobilenet_v3_small

__all__ = ["MobileNetV2", "MobileNet_V2_Weights", "mobilenet_v2", "MobileNetV3", "MobileNet_V3_Large_Weights",
           "MobileNet_V3_Small_Weights", "mobilenet_v3_large", "mobilenet_v3_small"]
