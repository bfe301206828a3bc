"""lucid.nn.utils: gradient clipping, flattening parameters into one vector, weight_norm/spectral_norm (the hook
form here; the parametrization form in ``parametrizations``, on ``parametrize``) and ``rnn`` (padded and packed
sequences), with PyTorch's names."""
from .clip_grad import clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .weight_norm import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm  # noqa: F401
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,  # noqa: F401,E402
                     fuse_linear_bn_weights, skip_init)
from . import parametrizations, parametrize, rnn  # noqa: F401,E402

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm", "parameters_to_vector",
           "vector_to_parameters", "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "rnn",
           "parametrize", "parametrizations", "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "skip_init"]
