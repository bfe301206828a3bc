"""lucid.compat.torchvision: torchvision's namespace on ``lucid.vision`` (``import lucid.compat.torchvision as
torchvision``; under ``lucid run`` a program's ``import torchvision`` is this package).

It holds ``transforms`` (and ``transforms.functional``), ``datasets``, ``models``, ``ops``, ``utils`` and
``io``. Importing a torchvision module lucid does not provide (``transforms.v2``, ``prototype``...) raises a
ModuleNotFoundError saying so, rather than reaching a real torchvision (which needs the real PyTorch)."""
from lucid.vision import datasets, io, models, ops, transforms, utils

from .._alias import AliasFinder as _AliasFinder
from .._alias import install as _install

__version__ = "0.28.0+lucid"  # the torchvision API version lucid.vision follows

__all__ = ["datasets", "io", "models", "ops", "transforms", "utils"]


class _VisionFinder(_AliasFinder):
    """``lucid.compat.torchvision.X`` is ``lucid.vision.X``; an X lucid.vision lacks is a clear error."""

    def find_spec(self, fullname, path=None, target=None):
        spec = super().find_spec(fullname, path, target)
        if spec is None and fullname.startswith(self.source + "."):
            name = "torchvision" + fullname[len(self.source):]
            # name=None: not "no such module" (which `from torchvision import X` would turn into a vaguer error)
            raise ModuleNotFoundError(f"{name} is not provided by lucid: lucid.vision has torchvision's transforms, "
                                      "datasets, models, ops, utils and io")
        return spec


_install(_VisionFinder(__name__, "lucid.vision"))
