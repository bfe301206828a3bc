"""lucid.nn layers, one family per file (as in ``torch.nn.modules``). Each file lists its public classes in
``__all__``; add a ``from .<file> import *`` line here and the classes appear in ``lucid.nn``."""
from .module import Module  # noqa: F401
from .container import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
