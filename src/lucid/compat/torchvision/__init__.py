"""lucid.compat.torchvision: torchvision's namespace on ``lucid.vision`` (``import lucid.compat.torchvision as
torchvision``; under ``lucid run`` a program's ``import torchvision`` is this package).

So far it holds ``transforms`` (and ``transforms.functional``), ``models`` and ``ops``. Importing a torchvision
module lucid does not provide yet (``torchvision.datasets``, ``utils``, ``io``, ``transforms.v2``) raises a
ModuleNotFoundError saying so, rather than reaching a real torchvision (which needs the real PyTorch)."""
from lucid.vision import models, ops, transforms

from .._alias import AliasFinder as _AliasFinder
from .._alias import install as _install

__version__ = "0.28.0+lucid"  # the torchvision API version the transforms follow

__all__ = ["transforms", "models", "ops"]


class _VisionFinder(_AliasFinder):
    """``lucid.compat.torchvision.X`` is ``lucid.vision.X``; an X lucid.vision lacks is a clear error."""

    def find_spec(self, fullname, path=None, target=None):
        spec = super().find_spec(fullname, path, target)
        if spec is None and fullname.startswith(self.source + "."):
            name = "torchvision" + fullname[len(self.source):]
            # name=None: not "no such module" (which `from torchvision import X` would turn into a vaguer error)
            raise ModuleNotFoundError(f"{name} is not provided by lucid yet: lucid.vision has torchvision's "
                                      "transforms, models and ops (datasets, utils and io are to come)")
        return spec


_install(_VisionFinder(__name__, "lucid.vision"))
