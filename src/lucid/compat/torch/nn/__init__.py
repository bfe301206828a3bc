"""torch.nn: lucid.nn's modules, functional, init and utils (the same objects), plus ``nn.parallel``."""
from lucid.nn import *  # noqa: F401,F403
from lucid.nn import Buffer, Module, Parameter, functional, init, utils  # noqa: F401
from . import parallel  # noqa: F401
from .parallel import DataParallel  # noqa: F401  (torch.nn.DataParallel, as in PyTorch)
