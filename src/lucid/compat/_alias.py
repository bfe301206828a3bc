"""Module aliasing: ``import a.b.c`` served by an existing module ``x.b.c``.

One meta-path finder per alias. It serves the module object itself (not a copy), so ``torch.nn.Module`` *is*
``lucid.nn.Module`` and isinstance checks, pickles and registries see one class.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys


class _ExistingModuleLoader(importlib.abc.Loader):
    """Hands the import system an already-imported module under a second name."""

    def __init__(self, module, alias_name: str):
        self.module = module
        self.alias_name = alias_name
        self.spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # the import system stamped the alias spec on the module; the module keeps its own (reload, pickling by
        # module name and multiprocessing look it up under its real name)
        module.__spec__ = self.spec
        if hasattr(module, "__path__"):
            share_shadowed_submodules(module, self.alias_name)


def share_shadowed_submodules(package, alias: str) -> None:
    """Register under ``alias`` the loaded submodules of ``package`` whose attribute name the package rebinds to
    something else (``autograd.gradcheck``: the module, and the function ``from .gradcheck import gradcheck``).
    Importing such a submodule afresh under the alias would make the import system set the package's attribute to
    the module (``from torch.autograd.gradcheck import X`` turning ``torch.autograd.gradcheck`` into a module);
    found in ``sys.modules``, it is not loaded again and the attribute stays."""
    prefix = package.__name__ + "."
    for name, sub in list(sys.modules.items()):
        child = name[len(prefix):]
        if name.startswith(prefix) and "." not in child and getattr(package, child, sub) is not sub:
            sys.modules.setdefault(f"{alias}.{child}", sub)


class AliasFinder(importlib.abc.MetaPathFinder):
    """Resolve ``source`` and ``source.*`` to ``target`` and ``target.*``.

    A module of the source package's own (a file under a parent that is really the source's, not an alias) wins:
    ``lucid.compat.torch.nn.parallel`` is compat's file, ``lucid.compat.torch.nn.init`` is ``lucid.nn.init``. Under
    an aliased parent every child is aliased too, or the path finder would load the target's file a second time
    under the alias name (``lucid.compat.torch.optim.lr_scheduler`` from ``lucid/optim/``: duplicate classes)."""

    def __init__(self, source: str, target: str):
        self.source, self.target = source, target

    def target_name(self, fullname: str) -> str | None:
        if fullname == self.source:
            return self.target
        if fullname.startswith(self.source + "."):
            return self.target + fullname[len(self.source):]
        return None

    def find_spec(self, fullname, path=None, target=None):
        name = self.target_name(fullname)
        if name is None:
            return None
        parent = fullname.rpartition(".")[0]
        parent_module = sys.modules.get(parent)
        if (parent_module is not None and parent_module.__name__ == parent
                and importlib.machinery.PathFinder.find_spec(fullname, path) is not None):
            return None  # the source package's own module
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name is not None and (name == e.name or name.startswith(e.name + ".")):  # no such module (not a failing import inside one)
                return None
            raise
        is_package = hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(fullname, _ExistingModuleLoader(module, fullname), is_package=is_package)


def install(finder: AliasFinder) -> None:
    """Put the finder first: before the path finder, which would otherwise load files under alias names."""
    if finder not in sys.meta_path:
        sys.meta_path.insert(0, finder)
    _name_the_face()


def uninstall(finder: AliasFinder) -> None:
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)
    _name_the_face()


def _name_the_face() -> None:
    """While ``torch`` is lucid, shapes print as ``torch.Size([...])`` (in reprs and error messages), as the
    program's own name for them, and tensors and dtypes as PyTorch prints them (``_torch_repr``); otherwise as
    ``lucid.Size([...])``, ``Tensor([...])``, ``mlx.core.float32``."""
    from .._tensor import Size
    from . import _torch_repr
    torch_is_lucid = any(isinstance(f, AliasFinder) and f.source == "torch" for f in sys.meta_path)
    Size.face = "torch" if torch_is_lucid else "lucid"
    (_torch_repr.install if torch_is_lucid else _torch_repr.uninstall)()
