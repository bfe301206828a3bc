"""torch.jit: TorchScript has no MLX counterpart. ``script``/``trace``/``load`` raise when called; the decorators
that only annotate (``ignore``, ``unused``, ``export``) return what they decorate. For speed, ``lucid.compile``
compiles a training step."""
from lucid._unsupported import unsupported as _unsupported

_WHY = "TorchScript has no MLX counterpart (run the module eagerly; lucid.compile compiles a whole training step)"
script = _unsupported("torch.jit.script", _WHY)
trace = _unsupported("torch.jit.trace", _WHY)
trace_module = _unsupported("torch.jit.trace_module", _WHY)
load = _unsupported("torch.jit.load", _WHY)
save = _unsupported("torch.jit.save", _WHY)
freeze = _unsupported("torch.jit.freeze", _WHY)


def _returns_its_argument(fn=None, **kwargs):
    return fn if fn is not None else (lambda f: f)


ignore = unused = export = _returns_its_argument


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False
