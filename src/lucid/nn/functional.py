"""lucid.nn.functional: PyTorch's functional neural-network ops. Each is declared once in ``lucid.ops``; this
module only gathers them under PyTorch's names."""
from ..ops.activation import *  # noqa: F401,F403
from ..ops.conv import *  # noqa: F401,F403
from ..ops.embedding_bag import embedding_bag  # noqa: F401
from ..ops.elementwise import sigmoid, tanh  # noqa: F401  (relu comes from ops.activation: it takes inplace=)
from ..ops.loss import *  # noqa: F401,F403
from ..ops.nn_basic import *  # noqa: F401,F403
from ..ops.norm import *  # noqa: F401,F403
from ..ops.pool import *  # noqa: F401,F403
from ..ops.sampling import affine_grid, grid_sample  # noqa: F401
from ..ops.sampling import GRID_SAMPLE_INTERPOLATION_MODES, GRID_SAMPLE_PADDING_MODES  # noqa: F401
from ..ops.attention import multi_head_attention_forward  # noqa: F401,E402
from ..ops.composites import pdist  # noqa: F401,E402
from ..ops.unpool import *  # noqa: F401,F403,E402
from ..ops.loss_margin import *  # noqa: F401,F403,E402
from .._tensor import Tensor  # noqa: F401,E402  (PyTorch exports torch.Tensor as nn.functional.Tensor)
from ..ops.aten_forms import conv_tbc  # noqa: F401,E402
from . import grad  # noqa: F401,E402  (PyTorch's nn.functional re-exports the nn.grad module)

from .._params import describe_all as _describe_all  # noqa: E402

_describe_all(globals())  # the arguments every op means the same by (lucid/_params.py)
