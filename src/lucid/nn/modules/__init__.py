"""lucid.nn layers, one family per file (as in ``torch.nn.modules``). Each file lists its public classes in
``__all__``; add a ``from .<file> import *`` line here and the classes appear in ``lucid.nn``."""
from .module import Module  # noqa: F401
from .container import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .unpool import *  # noqa: F401,F403
from .loss_margin import *  # noqa: F401,F403
from .lazy import *  # noqa: F401,F403
from .syncbatchnorm import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from .crossmaplrn import *  # noqa: F401,F403

# each layer's device= and dtype= described once (lucid._params.LAYER_PARAMS), as ops share lucid._params.PARAMS
from ..._params import LAYER_PARAMS as _LAYER_PARAMS, describe_layers as _describe_layers  # noqa: E402

_describe_layers([v for v in list(globals().values()) if isinstance(v, type) and issubclass(v, Module)], _LAYER_PARAMS)
