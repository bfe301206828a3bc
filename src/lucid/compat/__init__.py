"""lucid.compat: PyTorch's API on lucid, for running PyTorch programs unchanged.

``lucid.compat.torch`` is PyTorch's namespace (``import lucid.compat.torch as torch``) and ``lucid.compat.run``
runs a script with ``import torch`` resolved to it. Nothing in lucid imports this package: it sits above everything.
"""
