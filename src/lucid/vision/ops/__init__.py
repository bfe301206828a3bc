"""lucid.vision.ops (``torchvision.ops``): box operations (``box_area``, ``box_iou``, ``box_convert``,
``clip_boxes_to_image``, ``remove_small_boxes``, ``nms``, ``batched_nms``), ``roi_align`` and ``roi_pool``
(differentiable),
``sigmoid_focal_loss``, ``stochastic_depth`` and the layers torchvision's models are built from
(``Conv2dNormActivation``, ``SqueezeExcitation``, ``MLP``)."""
from .boxes import batched_nms, box_area, box_convert, box_iou, clip_boxes_to_image, nms, remove_small_boxes
from .focal_loss import sigmoid_focal_loss
from .misc import MLP, Conv2dNormActivation, SqueezeExcitation
from .roi_align import RoIAlign, roi_align
from .roi_pool import RoIPool, roi_pool
from .stochastic_depth import StochasticDepth, stochastic_depth

__all__ = ["nms", "batched_nms", "box_area", "box_iou", "box_convert", "clip_boxes_to_image", "remove_small_boxes",
           "roi_align", "RoIAlign", "roi_pool", "RoIPool", "sigmoid_focal_loss", "stochastic_depth", "StochasticDepth",
           "Conv2dNormActivation", "SqueezeExcitation", "MLP"]
