"""lucid.nn: neural-network building blocks with PyTorch's API: ``Module``, ``Parameter``, containers and layers
(``lucid.nn.modules``), ``functional``, ``init`` and ``utils``."""
from . import functional  # noqa: F401
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
from .modules import *  # noqa: F401,F403
from .modules import Module  # noqa: F401
from . import grad, init, utils  # noqa: F401,E402
# torch.nn.modules.utils (_pair & co., consume_prefix_in_state_dict_if_present), imported after the star import above
# so that lucid.nn.utils stays nn.utils
from .modules import utils as _modules_utils  # noqa: F401,E402
