"""Run a PyTorch program unchanged on lucid: ``python -m lucid.compat.run script.py [args...]``.

``run_script(path, argv)`` executes the script as ``__main__`` (``sys.argv`` is ``[path, *argv]``, the script's
folder first on ``sys.path``, as ``python script.py`` does) with ``import torch`` and every ``import torch.X``
resolved to ``lucid.compat.torch`` (and ``import torchvision`` to ``lucid.compat.torchvision``). Afterwards
``sys.argv``, ``sys.path`` and ``sys.modules`` are as they were: a real PyTorch (or torchvision) imported before
the run is hidden during it and back after it."""
from __future__ import annotations

import contextlib
import os
import runpy
import sys

from ._alias import AliasFinder, install, uninstall


_ALIASES = {"torch": "lucid.compat.torch", "torchvision": "lucid.compat.torchvision"}


def _is_aliased(name: str) -> bool:
    return any(name == alias or name.startswith(alias + ".") for alias in _ALIASES)


@contextlib.contextmanager
def torch_is_lucid():
    """Within the block, ``torch`` and ``torch.*`` are lucid.compat.torch and its submodules, ``torchvision`` and
    ``torchvision.*`` lucid.compat.torchvision and its submodules."""
    import lucid.compat.torch  # noqa: F401  (imported before the real torch modules are hidden)
    import lucid.compat.torchvision  # noqa: F401
    hidden = {name: sys.modules.pop(name) for name in [n for n in sys.modules if _is_aliased(n)]}
    finders = [AliasFinder(alias, target) for alias, target in _ALIASES.items()]
    for finder in finders:
        install(finder)
    try:
        yield
    finally:
        for finder in finders:
            uninstall(finder)
        for name in [n for n in sys.modules if _is_aliased(n)]:
            del sys.modules[name]
        sys.modules.update(hidden)


def run_script(path: str | os.PathLike, argv=()) -> None:
    """Run the PyTorch script at ``path`` with arguments ``argv`` on lucid. A ``SystemExit`` from the script
    (``sys.exit``, argparse errors) propagates, as it would end ``python script.py``."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"lucid run: no such script: {path!r}")
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [path, *map(str, argv)]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        with torch_is_lucid():
            runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv[:] = saved_argv
        sys.path[:] = saved_path


def main(args=None) -> int:
    args = sys.argv[1:] if args is None else list(args)
    if not args or args[0] in ("-h", "--help"):
        print("usage: python -m lucid.compat.run script.py [args...]\n\nRuns a PyTorch program with `import torch` "
              "resolved to lucid.compat.torch (PyTorch's API on lucid and MLX).")
        return 0 if args else 2
    run_script(args[0], args[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
