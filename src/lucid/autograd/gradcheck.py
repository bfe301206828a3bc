"""gradcheck / gradgradcheck: compare the engine's Jacobians with central finite differences (PyTorch's API and
defaults). Use float64 inputs: on a GPU default device (which has no float64) the checks run on the CPU stream."""
from __future__ import annotations

import warnings

import mlx.core as mx
import numpy as np

from .._cpu_route import routed
from .._dtype import can_require_grad
from .._tensor import Tensor, _wrap
from .._threads import to_numpy
from .engine import grad
from .graph import Node, edge_of


class GradcheckError(RuntimeError):
    """Raised by gradcheck / gradgradcheck when a Jacobian does not match."""


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def _differentiable_outputs(out) -> list:
    return [o for o in _as_tuple(out) if isinstance(o, Tensor) and can_require_grad(o.dtype)]


def _numerical(func, inputs: tuple, idx: list, eps: float) -> list:
    """J[o][k]: (numel of output o) x (numel of input idx[k]) by central differences.

    The inputs themselves are perturbed (their value replaced, then restored; no version bump), as PyTorch does:
    a function that also reads an input through a closure or an alias sees the perturbation too."""
    base = [to_numpy(t._storage.data) if isinstance(t, Tensor) else None for t in inputs]

    expected = None  # (shape, dtype) of each output at the unperturbed inputs

    def run(i, flat_j, delta):
        st = saved = None
        if i >= 0:
            st = inputs[i]._storage
            saved = st.data
            a = base[i].copy()
            a.reshape(-1)[flat_j] += delta
            st.data = mx.array(a, dtype=saved.dtype)
        try:
            # grad mode stays on: gradgradcheck's function differentiates inside
            outs = [o._storage.data for o in _differentiable_outputs(func(*inputs))]
        finally:
            if st is not None:
                st.data = saved
        if expected is not None:  # finite differences are meaningless if the output's layout depends on values
            for (shape, dtype), o in zip(expected, outs):
                if o.shape != shape:
                    raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs are "
                                         f"perturbed by {eps}, but got: shapes {list(shape)} and {list(o.shape)}.")
                if o.dtype != dtype:
                    raise AssertionError(f"Expected `func` to return outputs with the same dtype when inputs are "
                                         f"perturbed by {eps}, but got: dtypes {dtype} and {o.dtype}.")
        return [to_numpy(o, dtype=np.float64).reshape(-1) for o in outs]

    unperturbed = run(-1, 0, 0.0)  # i = -1 perturbs nothing
    sizes = [o.size for o in unperturbed]
    expected = [(o.shape, o.dtype) for o in _differentiable_outputs(func(*inputs))]
    jac = [[np.zeros((m, base[i].size)) for i in idx] for m in sizes]
    for k, i in enumerate(idx):
        for j in range(base[i].size):
            for o, (p, m) in enumerate(zip(run(i, j, eps), run(i, j, -eps))):
                jac[o][k][:, j] = (p - m) / (2 * eps)
    return jac


def _analytical(outputs: list, rg_inputs: list, nondet_tol: float):
    """J[o][k] by one backward per output element; whether a zero seed gives zero gradients; whether repeating
    one backward gives the same gradients (within ``nondet_tol``)."""
    jac = [[np.zeros((o.numel(), t.numel())) for t in rg_inputs] for o in outputs]
    zero_ok = reentrant = True

    def row(o, seed):
        g = grad(o, rg_inputs, _wrap(mx.array(seed.reshape(o.shape), dtype=o.dtype)), retain_graph=True,
                 allow_unused=True)
        return [None if gi is None else (gi, to_numpy(gi._storage.data, dtype=np.float64).reshape(-1)) for gi in g]

    for o_i, o in enumerate(outputs):
        n = o.numel()
        for r in range(n):
            seed = np.zeros(n)
            seed[r] = 1.0
            for k, gi in enumerate(row(o, seed)):
                if gi is not None:
                    gi, flat = gi
                    if gi.dtype != rg_inputs[k].dtype or tuple(gi.shape) != tuple(rg_inputs[k].shape):
                        raise GradcheckError(f"Gradient has dtype {gi.dtype} and shape {tuple(gi.shape)} but input "
                                             f"{k} has {rg_inputs[k].dtype} {tuple(rg_inputs[k].shape)}")
                    jac[o_i][k][r] = flat
        if n:  # the last row once more: a nondeterministic backward gives a different answer (one extra walk)
            again = row(o, seed)
            reentrant &= all(np.all(np.abs(jac[o_i][k][n - 1] - (0 if gi is None else gi[1])) <= nondet_tol)
                             for k, gi in enumerate(again))
        # backward must be multiplied by grad_output: a zero seed gives zero gradients
        zero_ok &= all(gi is None or not np.any(gi[1]) for gi in row(o, np.zeros(n)))
    return jac, zero_ok, reentrant


class UndefinedGradBackward(Node):
    """Passes an undefined gradient (None) to its input whatever it receives (PyTorch's UndefinedGrad)."""

    __slots__ = ("next", "_meta")

    def __init__(self, t: Tensor):
        self._hooks = None
        self.next = [edge_of(t)]
        self._meta = (t._storage.data.shape, t._storage.data.dtype)

    def output_meta(self, nr):
        return self._meta

    def apply(self, grads, needed=None):
        return [None]

    def release(self):
        pass


def undefined_grad(t: Tensor) -> Tensor:
    """``t``'s value, but every gradient that reaches it goes on to ``t``'s graph as undefined."""
    return _wrap(t._storage.data, UndefinedGradBackward(t), True) if t.requires_grad else t


_UNDEFINED_MSG = ("Expected backward function to handle undefined output grads. Please look at \"Notes about "
                  "undefined output gradients\" in \"tools/autograd/derivatives.yaml\"")


def _warn_bc_breaking():
    warnings.warn("Backwards compatibility: New undefined gradient support checking feature is enabled by default, "
                  "but it may break existing callers of this function. If this is true for you, you can call this "
                  "function with \"check_undefined_grad=False\" to disable the feature", UserWarning, stacklevel=3)


def _check_undefined_grad(func, inputs: tuple, rg_inputs: list) -> None:
    """Every backward must accept undefined output gradients: with all of them undefined (then one at a time when
    there are several outputs) the input gradients must be None or zero, and nothing may raise (PyTorch's
    ``_test_undefined_backward_mode``)."""
    def check(outs):
        try:
            gs = grad(outs, rg_inputs, [_wrap(mx.zeros_like(o._storage.data)) for o in outs], allow_unused=True)
        except RuntimeError as e:
            _warn_bc_breaking()
            raise GradcheckError(_UNDEFINED_MSG) from e
        if any(g is not None and np.any(to_numpy(g._storage.data)) for g in gs):
            _warn_bc_breaking()
            raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are "
                                 "undefined or zero. Please look at \"Notes about undefined output gradients\" in "
                                 "\"tools/autograd/derivatives.yaml\"")

    def outputs():
        return [o for o in _differentiable_outputs(func(*inputs)) if o.requires_grad]

    check([undefined_grad(o) for o in outputs()])
    n = len(outputs())
    if n > 1:  # one undefined at a time
        for k in range(n):
            check([undefined_grad(o) if j == k else o for j, o in enumerate(outputs())])


def _fast_mismatch(func, inputs: tuple, idx: list, eps: float, rtol: float, atol: float):
    """PyTorch's fast mode: for each input ``i`` and output ``o``, ``v^T J u`` with random unit vectors ``u``
    (uniform [0, 1) entries, one per input) and ``v`` (one per output), by one backward per output and by central
    differences along ``u``. As in PyTorch, ``atol`` is scaled by ``sum(u) * sum(v)`` (the projection of a matrix
    of ``atol``s), which keeps float32 inputs' rounding within the tolerance. The message of the first mismatch,
    else None."""
    rng = np.random.default_rng(0)

    def unit(shape):
        r = rng.random(shape)
        return r / np.linalg.norm(r)

    base = {i: inputs[i]._storage.data for i in idx}
    us = {i: unit(tuple(inputs[i].shape)) for i in idx}
    outputs = _differentiable_outputs(func(*inputs))
    vs = [unit(tuple(o.shape)) for o in outputs]

    def at(i, delta):  # the outputs at inputs[i] + delta * u_i, as float64
        inputs[i]._storage.data = mx.array(to_numpy(base[i], dtype=np.float64) + delta * us[i], dtype=base[i].dtype)
        try:
            return [to_numpy(o._storage.data, dtype=np.float64) for o in _differentiable_outputs(func(*inputs))]
        finally:
            inputs[i]._storage.data = base[i]

    numerical = {i: [float(((p - m) / (2 * eps) * v).sum()) for p, m, v in zip(at(i, eps), at(i, -eps), vs)]
                 for i in idx}
    for o_i, (o, v) in enumerate(zip(outputs, vs)):
        gs = [None] * len(idx)
        if o.requires_grad:
            gs = grad(o, [inputs[i] for i in idx], _wrap(mx.array(v, dtype=o.dtype)), retain_graph=True,
                      allow_unused=True)
        for g, i in zip(gs, idx):
            analytical = 0.0 if g is None else float((to_numpy(g._storage.data, dtype=np.float64) * us[i]).sum())
            num = numerical[i][o_i]
            if not abs(analytical - num) <= atol * us[i].sum() * v.sum() + rtol * abs(num):
                return (f"Jacobian mismatch for output {o_i} with respect to input {i} (fast mode: v^T J u for "
                        f"random u, v),\nnumerical:{num}\nanalytical:{analytical}\n")
    return None


@routed
def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked=None) -> bool:
    """Check the gradients of ``func(*inputs)`` against central finite differences ``(f(x+eps)-f(x-eps))/2eps``
    with ``allclose(analytical, numerical, rtol, atol)``, for every input that requires grad (use float64).

    :param func: a function of ``inputs`` returning a Tensor or a tuple of Tensors.
    :param inputs: a Tensor or a tuple of arguments; the Tensors with ``requires_grad=True`` are checked.
    :param eps: the finite-difference step.
    :param atol: the absolute tolerance.
    :param rtol: the relative tolerance.
    :param raise_exception: raise ``GradcheckError`` on a mismatch (else return False).
    :param nondet_tol: the tolerance between two backward runs (for nondeterministic ops).
    :param check_undefined_grad: also check that backward handles undefined (zero) output gradients.
    :param check_grad_dtypes: also check that each gradient has its input's dtype.
    :param check_batched_grad: also check gradients computed with a batch of seeds (``is_grads_batched``).
    :param check_batched_forward_grad: accepted for PyTorch's signature (lucid has no batched forward AD).
    :param check_forward_ad: also check forward-mode products (``autograd.functional.jvp``) against the numerical
        Jacobian.
    :param check_backward_ad: check the reverse-mode gradients (the default).
    :param fast_mode: compare one random projection ``v^T J u`` per input and output instead of whole Jacobians
        (PyTorch's fast mode, for large inputs).
    :param masked: accepted for PyTorch's signature (no sparse masked semantics).
    :returns: True when the gradients match.

    >>> import lucid
    >>> x = lucid.randn(3, dtype=lucid.float64, requires_grad=True)
    >>> lucid.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (x,))
    True
    """
    inputs = _as_tuple(inputs)
    idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    for i in idx:
        if inputs[i].dtype != mx.float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex.", UserWarning, stacklevel=2)

    def fail(msg):
        if raise_exception:
            raise GradcheckError(msg)
        return False

    if fast_mode:  # PyTorch's fast mode: one random projection instead of whole Jacobians (large inputs)
        message = _fast_mismatch(func, inputs, idx, eps, rtol, atol)
        return fail(message) if message else True
    outputs = _differentiable_outputs(func(*inputs))
    rg_inputs = [inputs[i] for i in idx]
    outputs_with_graph = [o for o in outputs if o.requires_grad]
    numerical = _numerical(func, inputs, idx, eps)
    if not outputs_with_graph:  # nothing to differentiate: the function must then not depend on the inputs
        if any(np.any(j != 0) for per_out in numerical for j in per_out):
            return fail("Numerical gradient for function expected to be zero")
        return True
    analytical, zero_ok, reentrant = _analytical(outputs_with_graph, rg_inputs, nondet_tol)
    a_iter = iter(analytical)
    for o_i, o in enumerate(outputs):
        ana = next(a_iter) if o.requires_grad else [np.zeros((o.numel(), t.numel())) for t in rg_inputs]
        for k, i in enumerate(idx):
            num = numerical[o_i][k] if numerical else np.zeros_like(ana[k])
            if not np.allclose(ana[k], num, rtol=rtol, atol=atol):
                return fail(f"Jacobian mismatch for output {o_i} with respect to input {i},\n"
                            f"numerical:{num}\nanalytical:{ana[k]}\n")
    if not reentrant:
        return fail("Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
                    "times gives different values, although analytical gradient matches numerical gradient. "
                    f"The tolerance for nondeterminism was {nondet_tol}.")
    if not zero_ok:
        return fail("backward not multiplied by grad_output")
    if check_undefined_grad and check_backward_ad:
        try:
            _check_undefined_grad(func, inputs, rg_inputs)
        except GradcheckError:
            if raise_exception:
                raise
            return False
    return True


@routed
def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second derivatives: gradcheck of ``(inputs, v) -> autograd.grad(func(inputs), inputs, v,
    create_graph=True)`` with random grad_outputs ``v`` in [-1, 1] (PyTorch's construction).

    :param func: a function of ``inputs`` returning a Tensor or a tuple of Tensors.
    :param inputs: a Tensor or a tuple of arguments; the Tensors with ``requires_grad=True`` are checked.
    :param grad_outputs: the seeds ``v`` (one per output); default random in [-1, 1], fixed seed.
    :param eps: the finite-difference step.
    :param atol: the absolute tolerance.
    :param rtol: the relative tolerance.
    :param gen_non_contig_grad_outputs: accepted for PyTorch's signature (lucid tensors have no strides).
    :param raise_exception: raise ``GradcheckError`` on a mismatch (else return False).
    :param nondet_tol: the tolerance between two backward runs.
    :param check_undefined_grad: also check undefined (zero) output gradients.
    :param check_grad_dtypes: also check that each gradient has its input's dtype.
    :param check_batched_grad: also check with a batch of seeds.
    :param check_fwd_over_rev: also check forward-over-reverse products.
    :param check_rev_over_rev: check reverse-over-reverse (the default).
    :param fast_mode: check a random projection of the second derivatives (``gradcheck``'s fast mode).
    :param masked: accepted for PyTorch's signature.
    :returns: True when the second derivatives match.

    >>> import lucid
    >>> x = lucid.randn(3, dtype=lucid.float64, requires_grad=True)
    >>> lucid.autograd.gradgradcheck(lambda t: (t.tanh() ** 2).sum(), (x,))
    True
    """
    inputs = _as_tuple(inputs)
    idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    outputs = _differentiable_outputs(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_wrap(mx.array(rng.uniform(-1, 1, tuple(o.shape)), dtype=o.dtype), rg=True)
                             for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def first_derivative(*args):
        ins, vs = args[:n], args[n:]
        outs = _differentiable_outputs(func(*ins))
        pairs = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
        if not pairs:
            return ()
        gs = grad([p[0] for p in pairs], [ins[i] for i in idx], [p[1] for p in pairs], create_graph=True,
                  allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     fast_mode=fast_mode)


def _iter_tensors(x, only_requiring_grad: bool = False):
    """The tensors in a (nested) tuple/list, in order (PyTorch's helper of the same name, which its nn tests use)."""
    if isinstance(x, Tensor):
        if x.requires_grad or not only_requiring_grad:
            yield x
    elif isinstance(x, (list, tuple)):
        for e in x:
            yield from _iter_tensors(e, only_requiring_grad)


def _get_numerical_jacobian(fn, inputs, outputs=None, target=None, eps: float = 1e-3, is_forward_ad: bool = False):
    """PyTorch's finite-difference Jacobians: for each tensor of ``target`` (default ``inputs``) that requires grad,
    a tuple with one (numel of it) x (numel of the output) Jacobian per output of ``fn(*inputs)``. A target that
    is not among the inputs (a module's parameter) is perturbed in place, where ``fn`` reads it."""
    inputs = _as_tuple(inputs)
    result = []
    for t in _iter_tensors(inputs if target is None else target, True):
        jac = _numerical(lambda _: fn(*inputs), (t,), [0], eps)
        result.append(tuple(_wrap(mx.array(j[0].T, dtype=t.dtype)) for j in jac))
    return result
