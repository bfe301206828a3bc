"""``lucid.utils.tensorboard`` (``torch.utils.tensorboard``): ``SummaryWriter`` writes TensorBoard event files.

It needs the ``tensorboard`` package (``pip install tensorboard``, or lucid's extra ``lucid-mlx[tensorboard]``), as
PyTorch's does; without it, importing this module raises ``ModuleNotFoundError`` saying so."""
try:
    import tensorboard  # noqa: F401
except ModuleNotFoundError as e:
    if e.name != "tensorboard":
        raise
    raise ModuleNotFoundError("TensorBoard logging requires the tensorboard package: pip install tensorboard "
                              "(or pip install 'lucid-mlx[tensorboard]')", name="tensorboard") from None

from .writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "SummaryWriter"]
