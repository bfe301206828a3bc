"""lucid.autograd.functional: Jacobians, Hessians and vector products of a whole function (PyTorch's
``torch.autograd.functional``), computed with lucid's reverse-mode engine, so they work for every lucid op,
including those whose derivative only lucid knows (linalg inv, cholesky, ...).

    jacobian(f, x)            J with shape out.shape + in.shape (nested J[i][j] for tuple outputs / inputs)
    hessian(f, x)             H with shape in.shape + in.shape of a function with one-element output
    vjp(f, x, v)   -> (f(x), v^T J)        jvp(f, x, v) -> (f(x), J v)
    vhp(f, x, v)   -> (f(x), v^T H)        hvp(f, x, v) -> (f(x), H v)

Inputs and outputs are a Tensor or a tuple of Tensors. Results are detached unless ``create_graph=True``;
non-strict mode gives zeros for inputs an output does not depend on, ``strict=True`` raises instead.

Forward-mode products are exact, with no finite differences: the "double-vjp trick". For a cotangent ``u``,
``g(u) = J^T u`` is linear in ``u``, so the vjp of ``g`` with respect to ``u`` along ``v`` is ``J v``. We record
``g`` with ``create_graph=True`` (every lucid op's VJP is itself made of lucid ops) and run a second backward
through it. The same trick gives ``hvp`` and ``jacobian(strategy="forward-mode")``.
"""
from __future__ import annotations

import mlx.core as mx

from .. import _cpu_route
from .._tensor import Tensor, _size_str, _wrap
from .. import _grad_mode as gm
from .engine import grad as _engine_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


# ---------------------------------------------------------------------------------------------------- arguments
def _as_tuple(x, arg_name: str, fn_name: str) -> tuple:
    """(was it a tuple, the Tensors as a tuple); anything but a Tensor or a tuple of Tensors is a TypeError."""
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"the {where} has type {type(el)}.")
    return is_tuple, items


def _untuple(res, to_unpack):
    """Undo ``_as_tuple`` on a result: ``to_unpack`` is one flag, or (outputs were a tuple, inputs were a tuple)
    for the nested J[i][j] of a Jacobian."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _prepare(tensors: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh Tensor objects for the user function. With create_graph, inputs that require grad stay connected
    (so the result can be differentiated with respect to them); the others are detached leaves."""
    return tuple(t.view_as(t) if create_graph and t._rg else t.detach().requires_grad_(need_graph)
                 for t in tensors)


def _finish(res, create_graph: bool):
    """Detach results (possibly nested tuples) unless the caller asked for a graph."""
    if create_graph:
        return res
    return tuple(r.detach() if isinstance(r, Tensor) else _finish(r, False) for r in res)


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if tuple(a.shape) != tuple(b.shape):
            prefix = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {_size_str(b.shape)} but got "
                               f"{_size_str(a.shape)}.")


def _prepare_v(v, reference: tuple, is_reference_tuple: bool, fn_name: str, create_graph: bool, none_message: str):
    """The vector of a product, checked against ``reference`` (the outputs for vjp, the inputs otherwise)."""
    if v is None:
        if len(reference) != 1 or reference[0].numel() != 1:
            raise RuntimeError(none_message)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _prepare(v, create_graph, need_graph=False)
    _validate_v(v, reference, is_reference_tuple)
    return v


_V_NONE_OUTPUT = ("The vector v can only be None if the user-provided function returns a single Tensor with a "
                  "single element.")
_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is a single Tensor "
                 "with a single element.")


def _check_requires_grad(tensors: tuple, kind: str, strict: bool) -> None:
    """Strict mode: every output (kind "outputs") or first derivative ("jacobian") must depend on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode.")
        if t._rg:
            continue
        if kind == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided function with respect "
                f"to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                "would be violated by a linear function for example).")
        if kind == "grad_inputs":
            raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                               "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs must "
                           "be computed in a differentiable manner from the input when running in strict mode.")


def _single_output(outputs: tuple, is_tuple: bool, fn_name: str) -> None:
    if is_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")


# ---------------------------------------------------------------------------------------------------- engine calls
def _grads(outputs: tuple, inputs: tuple, grad_outputs=None, create_graph: bool = False, retain_graph=None,
           is_grads_batched: bool = False) -> tuple:
    """``autograd.grad`` that skips outputs which are None or need no grad, and gives None for unreached
    inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o._rg]
    if not kept or (is_grads_batched and kept[0][1].shape[0] == 0):  # nothing to differentiate, or no seeds
        return (None,) * len(inputs)
    outs, seeds = zip(*kept)
    return _engine_grad(outs, inputs, seeds, retain_graph=retain_graph, create_graph=create_graph,
                        allow_unused=True, is_grads_batched=is_grads_batched)


_STAGE_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in "
                  "strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed "
                   "in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    """None (an independent input) becomes zeros of the reference's shape, or an error in strict mode."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STAGE_MESSAGES[stage].format(i=i))
            g = _wrap(mx.zeros_like(refs[i]._st.data))
        elif strict and create_graph and not g._rg:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _standard_basis(tensors: tuple) -> tuple:
    """The rows of the identity over all elements of ``tensors`` (N = their total size), cut per tensor: entry j
    has shape (N, *tensors[j].shape), so row k is the k-th one-hot vector of the concatenated elements."""
    sizes = [t.numel() for t in tensors]
    n = sum(sizes)
    eye = mx.eye(n)
    res, start = [], 0
    for t, size in zip(tensors, sizes):
        res.append(_wrap(eye[:, start:start + size].astype(t.dtype).reshape((n,) + tuple(t.shape))))
        start += size
    return tuple(res)


def _split_rows(batched: Tensor, sizes: list) -> list:
    """Cut dim 0 of a batch of products into one piece per tensor of the basis."""
    res, start = [], 0
    for size in sizes:
        res.append(batched.narrow(0, start, size))
        start += size
    return res


# ---------------------------------------------------------------------------------------------------- products
@_cpu_route.float64_args
def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), v^T J)``: the vector-Jacobian product, with ``v`` shaped like the outputs (None for a
    one-element output). The product has the inputs' structure.

    :param func: a function of the input Tensors returning a Tensor or a tuple of Tensors.
    :param inputs: a Tensor or a tuple of Tensors, the point at which to differentiate.
    :param v: the vector, shaped like the outputs (None for a one-element output).
    :param create_graph: record the computation, so the results are differentiable.
    :param strict: raise when an output does not depend on an input (else its part is zeros).
    :returns: ``(outputs, vjp)``, ``vjp`` shaped like the inputs.

    >>> import lucid
    >>> out, vjp = lucid.autograd.functional.vjp(lambda x: x ** 2, lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 1.0]))
    >>> vjp
    Tensor([2., 4.])
    """
    with gm.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, "vjp", create_graph, _V_NONE_OUTPUT)
    with gm.set_grad_enabled(create_graph or gm.is_grad_enabled()):
        res = _grads(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(res, inputs, strict, create_graph, "back")
    return (_untuple(_finish(outputs, create_graph), is_outputs_tuple),
            _untuple(_finish(res, create_graph), is_inputs_tuple))


@_cpu_route.float64_args
def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), J v)``: the Jacobian-vector product, with ``v`` shaped like the inputs (None for a
    one-element input). Exact, by the double-vjp trick (module docstring). The product has the outputs'
    structure.

    :param func: a function of the input Tensors returning a Tensor or a tuple of Tensors.
    :param inputs: a Tensor or a tuple of Tensors, the point at which to differentiate.
    :param v: the vector, shaped like the inputs (None for a one-element input).
    :param create_graph: record the computation, so the results are differentiable.
    :param strict: raise when an output does not depend on an input (else its part is zeros).
    :returns: ``(outputs, jvp)``, ``jvp`` shaped like the outputs.

    >>> import lucid
    >>> out, jvp = lucid.autograd.functional.jvp(lambda x: x ** 2, lucid.tensor([1.0, 2.0]), lucid.tensor([1.0, 0.0]))
    >>> jvp
    Tensor([2., 0.])
    """
    with gm.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, "jvp", create_graph, _V_NONE_INPUT)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # g(u) = J^T u is linear in u, so the value of u never shows in d<g, v>/du = J v: zeros will do
        u = tuple(_wrap(mx.zeros_like(o._st.data), rg=True) for o in outputs)
        g = _grads(outputs, inputs, u, create_graph=True)
        _check_requires_grad(g, "grad_inputs", strict)
    with gm.set_grad_enabled(create_graph or gm.is_grad_enabled()):
        res = _grads(g, u, v, create_graph=create_graph)
        res = _fill_in_zeros(res, outputs, strict, create_graph, "back_trick")
    return (_untuple(_finish(outputs, create_graph), is_outputs_tuple),
            _untuple(_finish(res, create_graph), is_outputs_tuple))


def _first_derivative(func, inputs, v, create_graph: bool, strict: bool, fn_name: str):
    """Shared start of vhp and hvp: prepared inputs and v, the one-element output and its gradient (recorded)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    v = _prepare_v(v, inputs, is_inputs_tuple, fn_name, create_graph, _V_NONE_INPUT)
    is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    _single_output(outputs, is_outputs_tuple, fn_name)
    jac = _grads(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


@_cpu_route.float64_args
def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), v^T H)`` for a function with a one-element output; ``v`` is shaped like the inputs.

    :param func: a function of the input Tensors returning a Tensor or a tuple of Tensors.
    :param inputs: a Tensor or a tuple of Tensors, the point at which to differentiate.
    :param v: the vector, shaped like the inputs (None for a one-element input).
    :param create_graph: record the computation, so the results are differentiable.
    :param strict: raise when an output does not depend on an input (else its part is zeros).
    :returns: ``(output, vhp)``, ``vhp`` shaped like the inputs.

    >>> import lucid
    >>> f, x = (lambda t: (t ** 3).sum()), lucid.tensor([1.0, 2.0])
    >>> out, vhp = lucid.autograd.functional.vhp(f, x, lucid.tensor([1.0, 1.0]))
    >>> vhp
    Tensor([ 6., 12.])
    """
    with gm.enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _first_derivative(
            func, inputs, v, create_graph, strict, "vhp")
    with gm.set_grad_enabled(create_graph or gm.is_grad_enabled()):
        res = _grads(jac, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(res, inputs, strict, create_graph, "double_back")
    return (_untuple(_finish(outputs, create_graph), is_outputs_tuple),
            _untuple(_finish(res, create_graph), is_inputs_tuple))


@_cpu_route.float64_args
def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(*inputs), H v)`` for a function with a one-element output, by the double-vjp trick on the
    gradient (equal to vhp for twice continuously differentiable functions, where H is symmetric).

    :param func: a function of the input Tensors returning a Tensor or a tuple of Tensors.
    :param inputs: a Tensor or a tuple of Tensors, the point at which to differentiate.
    :param v: the vector, shaped like the inputs (None for a one-element input).
    :param create_graph: record the computation, so the results are differentiable.
    :param strict: raise when an output does not depend on an input (else its part is zeros).
    :returns: ``(output, hvp)``, ``hvp`` shaped like the inputs.

    >>> import lucid
    >>> f, x = (lambda t: (t ** 3).sum()), lucid.tensor([1.0, 2.0])
    >>> out, hvp = lucid.autograd.functional.hvp(f, x, lucid.tensor([1.0, 0.0]))
    >>> hvp
    Tensor([6., 0.])
    """
    with gm.enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _first_derivative(
            func, inputs, v, create_graph, strict, "hvp")
        u = tuple(_wrap(mx.zeros_like(t._st.data), rg=True) for t in inputs)
        double_back = _grads(jac, inputs, u, create_graph=True)
    with gm.set_grad_enabled(create_graph or gm.is_grad_enabled()):
        res = _grads(double_back, u, v, create_graph=create_graph)
        res = _fill_in_zeros(res, inputs, strict, create_graph, "double_back_trick")
    return (_untuple(_finish(outputs, create_graph), is_outputs_tuple),
            _untuple(_finish(res, create_graph), is_inputs_tuple))


# ---------------------------------------------------------------------------------------------------- jacobian
_STRATEGY_MESSAGE = ('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function has '
                     'more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, prefer to use '
                     '"reverse-mode".')


@_cpu_route.float64_args
def jacobian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
             strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: entry [i][j] has shape ``outputs[i].shape + inputs[j].shape``
    (a single Tensor when both are single Tensors).

    reverse-mode: one backward per output element, or one batched backward (``vectorize=True``).
    forward-mode (needs ``vectorize=True``): one exact Jacobian-vector product per input element (double-vjp
    trick); cheaper when there are more outputs than inputs.

    :param func: a function of the input Tensors returning a Tensor or a tuple of Tensors.
    :param inputs: a Tensor or a tuple of Tensors, the point at which to differentiate.
    :param create_graph: record the computation, so the results are differentiable.
    :param strict: raise when an output does not depend on an input (else its part is zeros).
    :param vectorize: compute all rows in one batched backward (``is_grads_batched``) instead of a loop.
    :param strategy: "reverse-mode" (default) or "forward-mode" (needs ``vectorize=True``).
    :returns: the Jacobian: a Tensor, or nested tuples ``[i][j]`` for tuples of outputs and inputs.

    >>> import lucid
    >>> lucid.autograd.functional.jacobian(lambda x: x ** 2, lucid.tensor([1.0, 3.0]))
    Tensor([[2., 0.],
            [0., 6.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(_STRATEGY_MESSAGE)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('lucid.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)

    with gm.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize:
            if strict:
                raise RuntimeError("lucid.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                                   "supported together. Please either set `strict=False` or `vectorize=False`.")
            jac = _jacrev_vectorized(outputs, inputs, create_graph)
        else:
            jac = tuple(_jacrev_rows(i, out, inputs, create_graph, strict) for i, out in enumerate(outputs))
    return _untuple(_finish(jac, create_graph), (is_outputs_tuple, is_inputs_tuple))


def _jacrev_rows(i: int, out: Tensor, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """J[i][:] by one backward per element of output i (seeded with the one-hot vectors of its elements)."""
    from .engine import stack_op as stack  # (set by lucid.ops.shape)
    n = out.numel()
    eye = mx.eye(n, dtype=out.dtype).reshape((n,) + tuple(out.shape))
    rows: tuple = tuple([] for _ in inputs)
    for k in range(n):
        vj = _grads((out,), inputs, (_wrap(eye[k]),), create_graph=create_graph, retain_graph=True)
        for j, (g, inp) in enumerate(zip(vj, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. "
                                       "This is not allowed in strict mode.")
                g = _wrap(mx.zeros_like(inp._st.data))
            elif strict and create_graph and not g._rg:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. This "
                                   "is not allowed in strict mode when create_graph=True.")
            rows[j].append(g)
    return tuple(stack(r).reshape(tuple(out.shape) + tuple(inp.shape)) if r else
                 _wrap(mx.zeros(tuple(out.shape) + tuple(inp.shape), inp.dtype)) for r, inp in zip(rows, inputs))


def _jacrev_vectorized(outputs: tuple, inputs: tuple, create_graph: bool) -> tuple:
    """All of J in one batched backward: the seeds are the one-hot vectors of all output elements."""
    sizes = [o.numel() for o in outputs]
    per_input = _grads(outputs, inputs, _standard_basis(outputs), create_graph=create_graph, is_grads_batched=True)
    jac = [[None] * len(inputs) for _ in outputs]
    for j, (rows, inp) in enumerate(zip(per_input, inputs)):
        if rows is None:
            rows = _wrap(mx.zeros((sum(sizes),) + tuple(inp.shape), inp.dtype))
        for i, (piece, out) in enumerate(zip(_split_rows(rows, sizes), outputs)):
            jac[i][j] = piece.reshape(tuple(out.shape) + tuple(inp.shape))
    return tuple(tuple(row) for row in jac)


def _jacfwd(func, inputs, strict: bool, vectorize: bool):
    """The Jacobian column by column: J e_k for every input element k, all in one batched double-vjp."""
    if strict:
        raise RuntimeError('lucid.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or '
                           '`strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    with gm.enable_grad():
        inputs = tuple(t.detach().requires_grad_(True) for t in inputs)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        u = tuple(_wrap(mx.zeros_like(o._st.data), rg=True) for o in outputs)
        g = _grads(outputs, inputs, u, create_graph=True)
        columns = _grads(g, u, _standard_basis(inputs), is_grads_batched=True)  # per output: (N_in, *out.shape)
    sizes = [t.numel() for t in inputs]
    jac = []
    for cols, out in zip(columns, outputs):
        if cols is None:
            cols = _wrap(mx.zeros((sum(sizes),) + tuple(out.shape), out.dtype))
        jac.append(tuple(piece.movedim(0, -1).reshape(tuple(out.shape) + tuple(inp.shape))
                         for piece, inp in zip(_split_rows(cols, sizes), inputs)))
    return _untuple(_finish(tuple(jac), False), (is_outputs_tuple, is_inputs_tuple))


@_cpu_route.float64_args
def hessian(func, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a function with a one-element output: entry [i][j] has shape
    ``inputs[i].shape + inputs[j].shape`` (a single Tensor for a single input). It is the Jacobian of the
    gradient; ``outer_jacobian_strategy="forward-mode"`` (with ``vectorize=True``) takes that outer Jacobian
    by exact forward-over-reverse products.

    :param func: a function of the input Tensors returning a Tensor or a tuple of Tensors.
    :param inputs: a Tensor or a tuple of Tensors, the point at which to differentiate.
    :param create_graph: record the computation, so the results are differentiable.
    :param strict: raise when an output does not depend on an input (else its part is zeros).
    :param vectorize: compute the rows in batched backwards instead of a loop.
    :param outer_jacobian_strategy: "reverse-mode" (default) or "forward-mode" (needs ``vectorize=True``).
    :returns: the Hessian: a Tensor, or nested tuples ``[i][j]`` for a tuple of inputs.

    >>> import lucid
    >>> lucid.autograd.functional.hessian(lambda x: (x ** 3).sum(), lucid.tensor([1.0, 2.0]))
    Tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        is_out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        _single_output(outs, is_out_tuple, "hessian")
        return out.reshape(())

    def gradient(*inp):
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _untuple(res, (is_inputs_tuple, is_inputs_tuple))
