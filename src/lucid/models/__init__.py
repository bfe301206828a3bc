"""lucid.models: the model zoo. Every model uses PyTorch's parameter names and layouts, so the state_dict of the
PyTorch model it follows loads unchanged. ``lucid train MODEL`` trains each one (see ``lucid models``)."""
from . import maml, pinn

__all__ = ["maml", "pinn"]
