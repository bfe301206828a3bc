"""lucid.func: composable function transforms (PyTorch's ``torch.func``), built on MLX's own transforms.

    grad(f)(x)                     df/dx of a scalar function (``argnums`` picks the arguments, ``has_aux``)
    grad_and_value(f)(x)           (df/dx, f(x))
    vjp(f, *primals)               (f(*primals), vjp_fn); vjp_fn(cotangents) gives one vjp per primal
    jvp(f, primals, tangents)      (f(*primals), J tangents)
    linearize(f, *primals)         (f(*primals), jvp_fn)
    jacrev(f), jacfwd(f)           Jacobians, shape out.shape + in.shape, by reverse / forward mode
    hessian(f)                     jacfwd(jacrev(f))
    vmap(f, in_dims, out_dims)     f mapped over a batch dimension
    functional_call(obj, params, args)   call obj with some attributes (dotted names) swapped for others
    stack_module_state(models)     the models' parameters and buffers stacked (ensembles: vmap of functional_call)

How it works: at the boundary of a transform, Tensors are unwrapped to their MLX arrays; inside, MLX's arrays
(tracers, under vmap) are wrapped as lucid Tensors and the user's function runs under ``lucid.no_grad()``, so
lucid records nothing and the MLX transform (``mx.value_and_grad``, ``mx.vjp``, ``mx.jvp``, ``mx.vmap``)
differentiates or batches the MLX calls that lucid's ops make. Results come back as plain Tensors (no grad_fn).
Transforms nest freely: ``vmap(grad(f))`` gives per-sample gradients, ``jacfwd(jacrev(f))`` the Hessian.

Arguments and results may be pytrees: Tensors inside tuples, lists and dicts (other values pass through).

Caveat: derivatives here are MLX's, not lucid's. Ops for which lucid has its own rule because MLX has none
(the VJPs of ``linalg.inv``, ``cholesky``, ``qr``, ``svd``; the JVPs of convolution and scatter) do not
differentiate under these transforms. ``lucid.autograd.functional`` (jacobian, hessian, vjp, jvp, hvp) uses
lucid's engine and works for every op. ``randomness`` of vmap is accepted for compatibility, but random ops
inside vmap draw the same values for the whole batch (PyTorch's "same").
"""
from __future__ import annotations

import functools
import re

import mlx.core as mx

from . import _cpu_route
from ._tensor import Tensor, _wrap
from . import _grad_mode as gm
from .autograd.function import in_mlx_transform
from .ops.shape import permute, reshape, stack

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state"]


# ---------------------------------------------------------------------------------------------------- pytrees
def _leaves(tree) -> list:
    """The Tensors of a pytree (tuples, lists, dicts), depth first, in order."""
    if isinstance(tree, Tensor):
        return [tree]
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in _leaves(t)]
    if isinstance(tree, dict):
        return [leaf for t in tree.values() for leaf in _leaves(t)]
    return []


def _unflatten(tree, values):
    """``tree`` with its Tensors replaced, in order, by ``values`` (an iterable)."""
    it = iter(values)

    def build(t):
        if isinstance(t, Tensor):
            return next(it)
        if isinstance(t, tuple) and hasattr(t, "_fields"):  # namedtuple
            return type(t)(*(build(x) for x in t))
        if isinstance(t, (tuple, list)):
            return type(t)(build(x) for x in t)
        if isinstance(t, dict):
            return {k: build(v) for k, v in t.items()}
        return t

    return build(tree)


def _structure(tree) -> str:
    """A short description of a pytree, for error messages: Tensors print as *."""
    if isinstance(tree, Tensor):
        return "*"
    if isinstance(tree, tuple):
        return "(" + ", ".join(_structure(t) for t in tree) + ("," if len(tree) == 1 else "") + ")"
    if isinstance(tree, list):
        return "[" + ", ".join(_structure(t) for t in tree) + "]"
    if isinstance(tree, dict):
        return "{" + ", ".join(f"{k!r}: {_structure(v)}" for k, v in tree.items()) + "}"
    return repr(tree)


def _check_all_tensors(tree) -> None:
    """Differentiated arguments must be Tensors or pytrees of Tensors."""
    if isinstance(tree, (tuple, list)):
        for t in tree:
            _check_all_tensors(t)
    elif isinstance(tree, dict):
        for t in tree.values():
            _check_all_tensors(t)
    elif not isinstance(tree, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(tree)}")


def _arrays(tree) -> list:
    return [t._st.data for t in _leaves(tree)]


def _tensors(tree, arrays):
    """``tree`` with its Tensors replaced by fresh Tensors around ``arrays``."""
    return _unflatten(tree, (_wrap(a) for a in arrays))


# ---------------------------------------------------------------------------------------------------- the boundary
def _argnums(argnums, num_args: int, api: str) -> tuple:
    """Validated argnums as a tuple of non-negative ints."""
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        nums = argnums
    else:
        nums = (argnums,)
    res = []
    for a in nums:
        if not isinstance(a, int) or isinstance(a, bool):
            raise RuntimeError(f"argnum must be int, got: {type(a)}")
        if not -num_args <= a < num_args:
            raise RuntimeError(f"{api}: Got argnum={a}, but only {num_args} positional inputs")
        res.append(a % num_args)
    return tuple(res)


class _Traced:
    """The user's function seen as an MLX function of the flat arrays of the differentiated arguments.

    Calling it rebuilds those arguments as Tensors around the given arrays (the others are passed as they are),
    runs ``func`` under no_grad and returns the flat arrays of its result (of its first element with has_aux).
    The last result's structure (``out``) and aux (``aux``) stay on the object: their Tensors may wrap tracers,
    so only the structure and non-Tensor values may be used outside the transform.
    """

    def __init__(self, func, args: tuple, kwargs: dict, argnums: tuple, has_aux: bool = False, api: str = ""):
        self.func, self.args, self.kwargs, self.argnums = func, args, kwargs, argnums
        self.has_aux, self.api = has_aux, api
        self.vmap = None  # the randomness of the mx.vmap its calls run under (jacrev, jacfwd), if any
        diff = tuple(args[i] for i in argnums)
        _check_all_tensors(diff)
        self.primals = _arrays(diff)
        self.out = self.aux = None

    def call(self, arrays) -> tuple:
        """(the result, its aux) of ``func`` at ``arrays``, as Tensors."""
        args = list(self.args)
        it = iter(arrays)
        for i in self.argnums:
            args[i] = _unflatten(args[i], (_wrap(a) for a in it))
        with gm.no_grad(), in_mlx_transform(vmap=self.vmap):
            out = self.func(*args, **self.kwargs)
        aux = None
        if self.has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError(f"{self.api}: output of function f should be a tuple: (output, aux) if has_aux "
                                   "is True")
            out, aux = out
        self.out, self.aux = out, aux
        return out, aux

    def __call__(self, *arrays) -> list:
        return _arrays(self.call(arrays)[0])

    def forward(self) -> tuple:
        """Run once at the primals (outside any new transform): the output arrays, structure and aux."""
        outs = self(*self.primals)
        return outs, self.out, self.aux

    def per_argnum(self, values, argnums):
        """Values, one per flat primal, arranged like the differentiated arguments (a tuple if argnums is)."""
        it = iter(values)
        res = tuple(_unflatten(self.args[i], it) for i in self.argnums)
        return res if isinstance(argnums, tuple) else res[0]


# ---------------------------------------------------------------------------------------------------- grad
def grad_and_value(func, argnums=0, has_aux: bool = False):
    """A function returning ``(gradient, value)`` of the scalar function ``func`` (``(gradient, (value, aux))``
    with has_aux). The gradient has the structure of ``args[argnums]`` (a tuple for tuple argnums)."""
    api = "grad_and_value(f)(*args)"

    @_cpu_route.float64_args
    def wrapper(*args, **kwargs):
        traced = _Traced(func, args, kwargs, _argnums(argnums, len(args), api), has_aux, api)

        def scalar(arrays):
            out, aux = traced.call(arrays)
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(out)}")
            if out.ndim != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor with "
                                   f"{out.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            return out._st.data, _arrays(aux)

        (value, aux_arrays), grads = _transformed(api, lambda: mx.value_and_grad(scalar)(traced.primals))
        g = traced.per_argnum([_wrap(a) for a in grads], argnums)
        if has_aux:
            return g, (_wrap(value), _tensors(traced.aux, aux_arrays))
        return g, _wrap(value)

    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """A function returning the gradient of the scalar function ``func`` with respect to ``args[argnums]``
    (``(gradient, aux)`` with has_aux). ``vmap(grad(loss))`` gives per-sample gradients."""
    inner = grad_and_value(func, argnums, has_aux)

    @_cpu_route.float64_args
    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


# ---------------------------------------------------------------------------------------------------- vjp, jvp
def vjp(func, *primals, has_aux: bool = False):
    """``(func(*primals), vjp_fn)`` (and aux with has_aux). ``vjp_fn(cotangents)``, with cotangents shaped like
    the output, returns a tuple with one vector-Jacobian product per primal."""
    api = "vjp(f, *primals)"
    traced = _Traced(func, primals, {}, tuple(range(len(primals))), has_aux, api)
    _, out, aux = traced.forward()
    output, aux = _tensors(out, _arrays(out)), _tensors(aux, _arrays(aux))

    def vjp_fn(cotangents):
        if _structure(cotangents) != _structure(output):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function. cotangents: {_structure(cotangents)}, primal output: "
                               f"{_structure(output)}")
        _, grads = _transformed(api, lambda: mx.vjp(traced, traced.primals, _arrays(cotangents)))
        return traced.per_argnum([_wrap(a) for a in grads], tuple(range(len(primals))))

    return (output, vjp_fn, aux) if has_aux else (output, vjp_fn)


def _check_tangents(primals, tangents, api: str) -> None:
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    if _structure(primals) != _structure(tangents):
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python structure. For example, "
                           "if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{_structure(primals)} and tangents with structure {_structure(tangents)}")
    if not _leaves(primals):
        raise RuntimeError(f"{api}: Expected primals to be a non-empty list of Tensors")
    for p, t in zip(_leaves(primals), _leaves(tangents)):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"{api}: Expected tangents to have the same shape as primals, got "
                               f"{list(t.shape)} and {list(p.shape)}")


def jvp(func, primals: tuple, tangents: tuple, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J tangents)`` by MLX forward mode (and aux with has_aux). ``strict`` is accepted for
    compatibility."""
    api = "jvp(f, primals, tangents)"
    _check_tangents(primals, tangents, api)
    traced = _Traced(func, primals, {}, tuple(range(len(primals))), has_aux, api)
    outs, jvps = _transformed(api, lambda: mx.jvp(traced, traced.primals, _arrays(tangents)))
    res = (_tensors(traced.out, outs), _tensors(traced.out, jvps))
    return res + (_tensors(traced.aux, _arrays(traced.aux)),) if has_aux else res


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product at ``primals``."""
    traced = _Traced(func, primals, {}, tuple(range(len(primals))))
    _, out, _ = traced.forward()
    output = _tensors(out, _arrays(out))

    def jvp_fn(*tangents):
        _check_tangents(primals, tangents, "linearize(f, *primals)")
        _, jvps = _transformed("linearize(f, *primals)",
                               lambda: mx.jvp(traced, traced.primals, _arrays(tangents)))
        return _tensors(output, jvps)

    return output, jvp_fn


# ---------------------------------------------------------------------------------------------------- jacobians
def _basis(arrays: list) -> list:
    """The rows of the identity over all elements of ``arrays`` (N in all), cut per array: (N, *shape)."""
    n = sum(a.size for a in arrays)
    eye = mx.eye(n)
    res, start = [], 0
    for a in arrays:
        res.append(eye[:, start:start + a.size].astype(a.dtype).reshape((n,) + a.shape))
        start += a.size
    return res


def _offsets(arrays: list) -> list:
    res, start = [], 0
    for a in arrays:
        res.append((start, start + a.size))
        start += a.size
    return res


def _jacobian(func, argnums, has_aux: bool, api: str, forward: bool):
    """jacrev (one vjp per output element) or jacfwd (one jvp per input element), each batched with mx.vmap.
    The result has the output's structure, with each output Tensor replaced by the structure of
    ``args[argnums]`` holding blocks of shape out.shape + in.shape."""

    @_cpu_route.float64_args
    def wrapper(*args, **kwargs):
        traced = _Traced(func, args, kwargs, _argnums(argnums, len(args), api), has_aux, api)
        outs, out, aux = traced.forward()
        ins = traced.primals
        traced.vmap = "same"
        if forward:
            products = _transformed(api, lambda: mx.vmap(lambda *t: mx.jvp(traced, ins, list(t))[1])(
                *_basis(ins)))  # per output (N_in, ...)
            blocks = [[mx.moveaxis(p[s:e], 0, -1).reshape(o.shape + i.shape) for i, (s, e) in
                       zip(ins, _offsets(ins))] for o, p in zip(outs, products)]
        else:
            products = _transformed(api, lambda: mx.vmap(lambda *c: mx.vjp(traced, ins, list(c))[1])(
                *_basis(outs)))  # per input (N_out, ...)
            blocks = [[p[s:e].reshape(o.shape + i.shape) for i, p in zip(ins, products)]
                      for o, (s, e) in zip(outs, _offsets(outs))]
        jac = _unflatten(out, (traced.per_argnum([_wrap(b) for b in row], argnums) for row in blocks))
        return (jac, _tensors(aux, _arrays(aux))) if has_aux else jac

    return wrapper


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None):
    """A function returning the Jacobian of ``func`` by reverse mode (vmap of vjp over the output elements).
    ``chunk_size`` is accepted for compatibility (MLX batches the whole basis at once)."""
    return _jacobian(func, argnums, has_aux, "jacrev(f, argnums)", forward=False)


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """A function returning the Jacobian of ``func`` by forward mode (vmap of jvp over the input elements)."""
    _check_randomness(randomness)
    return _jacobian(func, argnums, has_aux, "jacfwd(f, argnums)", forward=True)


def hessian(func, argnums=0):
    """A function returning the Hessian of the scalar function ``func``: ``jacfwd(jacrev(func))``."""
    return jacfwd(jacrev(func, argnums), argnums)


# ---------------------------------------------------------------------------------------------------- vmap
def _check_randomness(randomness: str) -> None:
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")


def _leaf_dims(dims, arg, api: str) -> list:
    """The in_dim of every Tensor of ``arg``: ``dims`` is an int or None for all of them, or a pytree like arg."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(_leaves(arg))
    if isinstance(arg, Tensor) or type(dims) is not type(arg) or len(dims) != len(arg):
        raise ValueError(f"{api}: in_dims is not compatible with the structure of `inputs`. in_dims has structure "
                         f"{_structure(dims)} but inputs has structure {_structure(arg)}.")
    items = zip(dims.values(), arg.values()) if isinstance(arg, dict) else zip(dims, arg)
    return [d for sub_dims, sub in items for d in _leaf_dims(sub_dims, sub, api)]


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """``func`` mapped over dim ``in_dims`` of its inputs, its outputs stacked along ``out_dims``.

    in_dims: an int (every argument), or a tuple with one entry per positional argument: an int, None (not
    mapped) or a pytree of those matching the argument. out_dims: an int, or one per output. Keyword arguments
    are not mapped. ``chunk_size`` is accepted for compatibility.
    """
    _check_randomness(randomness)

    @_cpu_route.float64_args
    def wrapper(*args, **kwargs):
        api = f"vmap({getattr(func, '__name__', 'f')}, in_dims={in_dims}, ...)(<inputs>)"
        if isinstance(in_dims, tuple):
            if len(in_dims) != len(args):
                raise ValueError(f"{api}: in_dims is not compatible with the structure of `inputs`. in_dims has "
                                 f"structure {_structure(in_dims)} but inputs has structure {_structure(args)}.")
            dims = [d for ds, a in zip(in_dims, args) for d in _leaf_dims(ds, a, api)]
        elif in_dims is None or isinstance(in_dims, int):
            dims = [in_dims] * len(_leaves(args))
        else:
            raise ValueError(f"{api}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                             f"structure of inputs, got: {type(in_dims)}.")
        leaves = _leaves(args)
        mapped = [(t, d) for t, d in zip(leaves, dims) if d is not None]
        if not mapped:
            raise ValueError(f"{api}: at least one input must be a Tensor with an in_dim that is not None")
        for t, d in mapped:
            if not -t.ndim <= d < t.ndim:
                raise ValueError(f"{api}: Got in_dim={d} for an input but the input is of type Tensor with "
                                 f"{t.ndim} dims. We cannot vmap over dim {d} for that Tensor.")
        mapped = [(t, d % t.ndim) for t, d in mapped]
        sizes = [t.shape[d] for t, d in mapped]
        if len(set(sizes)) > 1:
            raise ValueError(f"{api}: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        box = []

        def batched(*arrays):
            it = iter(arrays)
            new = [_wrap(next(it)) if d is not None else t for t, d in zip(leaves, dims)]
            with gm.no_grad(), in_mlx_transform(vmap=randomness):
                out = func(*_unflatten(args, new), **kwargs)
            box[:] = [out]
            return _arrays(out)

        outs = _transformed(api, lambda: mx.vmap(batched, in_axes=tuple(d for _, d in mapped))(
            *[t._st.data for t, _ in mapped]))
        out = box[0]
        odims = _out_dims(out_dims, out, api)
        return _unflatten(out, (_wrap(a if d == 0 else mx.moveaxis(a, 0, d)) for a, d in zip(outs, odims)))

    return wrapper


# MLX primitives without a batching rule or a derivative (MLX 0.32), and the lucid ops that reach them
_LU = "the LU factorization: linalg.solve, solve_ex, inv, inv_ex, det, slogdet, logdet, lu, lu_factor, lu_factor_ex"
_REACHED_BY = {
    "LUF": _LU,
    "QRF": "the QR factorization: linalg.qr, torch.qr",
    "AsStrided": "as_strided views (Tensor.as_strided, torch.as_strided)",
    "Cholesky": "the Cholesky factorization: linalg.cholesky, cholesky_ex, torch.cholesky",
    "Inverse": "MLX's triangular inverse: linalg.solve_triangular, triangular_solve, cholesky_solve, lu_solve, "
               "cholesky_inverse",
    "SVD": "the SVD: linalg.svd, svdvals, pinv, matrix_norm (2, -2, 'nuc'), cond, matrix_rank",
    "Eigh": "the symmetric eigendecomposition: linalg.eigh, eigvalsh",
    "Eig": "the eigendecomposition: linalg.eig, eigvals",
}
_NO_RULE = re.compile(r"\[Primitive::(vmap|vjp|jvp)\] Not implemented for (\w+)")


def _transformed(api: str, run):
    """``run()`` (an MLX transform), with MLX's "no rule for this primitive" errors turned into lucid's own, naming
    the lucid ops that reach the primitive."""
    try:
        return run()
    except ValueError as e:
        if str(e).startswith("[eval] Attempting to eval an array during function transformations"):
            raise RuntimeError(f"{api}: this function needs values while it is traced (an op whose output shape "
                               "depends on its input's values, such as unique, nonzero or masked_select, or a "
                               "Python read such as .item()); transforms cannot batch or differentiate that "
                               "(PyTorch's vmap refuses dynamic shapes too)"
                               + ("; call the function once per sample instead" if api.startswith("vmap") else "")
                               ) from None
        found = _NO_RULE.search(str(e))
        if found is None:
            raise
        rule, prim = found.groups()
        ops = _REACHED_BY.get(prim, f"an op built on MLX's {prim}")
        if rule == "vmap":
            raise RuntimeError(f"{api}: this function cannot be vmapped: it calls {ops}, which MLX cannot batch "
                               f"(its primitive {prim} has no vmap rule); call the function once per sample instead, "
                               "or loop over the batch in Python for that part") from None
        raise RuntimeError(f"{api}: this function calls {ops}, which MLX cannot differentiate (its primitive {prim} "
                           f"has no {rule} rule; lucid.func differentiates with MLX's rules). lucid.autograd.grad "
                           "and lucid.autograd.functional use lucid's own rule for it.") from None


def _out_dims(out_dims, out, api: str) -> list:
    """The out_dim of every Tensor of the output."""
    if isinstance(out_dims, int):
        return [out_dims] * len(_leaves(out))
    if not isinstance(out_dims, tuple) or not isinstance(out, tuple) or len(out_dims) != len(out):
        raise ValueError(f"{api}: out_dims is not compatible with the structure of `outputs`. out_dims has "
                         f"structure {_structure(out_dims)} but outputs has structure {_structure(out)}.")
    return [d for ds, o in zip(out_dims, out) for d in _out_dims(ds, o, api)]


# ---------------------------------------------------------------------------------------------------- functional_call
def _owner(obj, dotted: str) -> tuple:
    """(the object holding the last name of a dotted path, that name)."""
    *path, name = dotted.split(".")
    for p in path:
        obj = getattr(obj, p)
    return obj, name


def _swap(obj, name: str, value):
    """Put ``value`` at ``obj.name`` and return a function that undoes it. Registries of parameters and buffers
    (``_parameters`` / ``_buffers`` dicts, as in PyTorch's Module) are written directly, so a plain Tensor may
    stand in for a parameter."""
    for registry in ("_parameters", "_buffers"):
        d = getattr(obj, "__dict__", {}).get(registry)
        if isinstance(d, dict) and name in d:
            old = d[name]
            d[name] = value
            return lambda: d.__setitem__(name, old)
    if hasattr(obj, name):
        old = getattr(obj, name)
        setattr(obj, name, value)
        return lambda: setattr(obj, name, old)
    setattr(obj, name, value)
    return lambda: delattr(obj, name)


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights: bool = True,
                    strict: bool = False):
    """``module(*args, **kwargs)`` with the attributes named by the dict keys (dotted paths such as
    ``"layer.weight"``) temporarily replaced by the dict values; everything is restored afterwards, also when
    the call raises. ``grad(lambda p: loss(functional_call(model, p, (x,))))(params)`` differentiates with
    respect to a dict of parameters. ``strict=True`` requires every key to name an existing attribute.
    ``tie_weights`` is accepted for compatibility (each key is swapped on its own)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        repeated = list(dict.fromkeys(k for k in keys if keys.count(k) > 1))
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                             "ambiguous")
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    owners = {k: _owner(module, k) for k in values}
    if strict:
        unexpected = [k for k, (o, n) in owners.items() if not hasattr(o, n)]
        if unexpected:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\tUnexpected key(s): "
                               + ", ".join(repr(k) for k in unexpected) + ".")
    undo = []
    try:
        for k, (o, n) in owners.items():
            undo.append(_swap(o, n, values[k]))
        return module(*args, **(kwargs or {}))
    finally:
        for restore in reversed(undo):
            restore()


# ---------------------------------------------------------------------------------------------------- ensembles
def _stacked_leaf(tensors: list, name: str) -> Tensor:
    """The tensors stacked into a new leaf (requiring grad if all of them do; mixed flags are refused)."""
    flags = {t.requires_grad for t in tensors}
    if len(flags) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    with gm.no_grad():
        out = stack(tensors)
    return out.requires_grad_() if flags == {True} else out


def stack_module_state(models) -> tuple:
    """``(params, buffers)``: dicts from each parameter (buffer) name of ``models`` (modules of one class, all in
    training or all in eval mode) to the stack of the models' tensors; the stacked parameters are new leaves, for
    an optimizer, and ``vmap(functional_call)`` runs the ensemble."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = [dict(m.named_parameters()) for m in models]
    buffers = [dict(m.named_buffers()) for m in models]
    return ({k: _stacked_leaf([p[k] for p in params], k) for k in params[0]},
            {k: _stacked_leaf([b[k] for b in buffers], k) for k in buffers[0]})


def replace_all_batch_norm_modules_(root):
    """Make every batch norm module in ``root`` (itself included) use batch statistics only: its running mean and
    variance and its batch count become None and ``track_running_stats`` False (what ``vmap`` over a model with
    batch norm needs). Returns ``root``, changed in place."""
    from .nn.modules.batchnorm import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root


def debug_unwrap(tensor, *, recurse: bool = True):
    """The tensor under a transform's wrapper, for debugging. lucid's transforms wrap no tensors (inside them a
    Tensor holds MLX's traced array directly), so this is ``tensor`` itself."""
    return tensor


_REMOVE_OPTIONS = ("mutations", "mutations_and_views")


def functionalize(func, *, remove: str = "mutations"):
    """``func`` with its in-place operations replaced by out-of-place ones (and, with
    ``remove="mutations_and_views"``, its views by copies), same results, input mutations included. lucid's tensors
    already hold immutable MLX arrays: an in-place op computes a new array and rebinds the tensor, and a view is a
    computed tensor written back on change, so ``func`` is already in that form; the returned function calls it."""
    if remove not in _REMOVE_OPTIONS:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. Valid options "
            "are:\n     remove='mutations': all inplace and out= operators will be removed from the program, and "
            "replaced with their out-of-place variants.\n     remove='mutations_and_views': In addition to the "
            "above, all aliasing operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n")

    @functools.wraps(func)
    def functionalized(*args, **kwargs):
        return func(*args, **kwargs)

    return functionalized


__all__ += ["replace_all_batch_norm_modules_", "debug_unwrap", "functionalize"]


# ---------------------------------------------------------------------------------------------------- rearrange
def _parse_side(side: str) -> list:
    """One side of an einops pattern as a list of groups (lists of axis names; "..." for the ellipsis, "1" for a
    unit axis); a bare name is a group of one."""
    groups, current = [], None
    for token in side.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            if current is not None:
                raise ValueError("Axis composition is one-level (brackets inside brackets not allowed)")
            current = []
        elif token == ")":
            if current is None:
                raise ValueError("Brackets are not balanced")
            groups.append(current)
            current = None
        else:
            if token.isdigit() and token != "1":
                raise ValueError("rearrange only supports unnamed axes of size 1")
            if not (token.isdigit() or token == "..." or token.isidentifier()):
                raise ValueError(f"Invalid axis identifier: {token}")
            (groups.append((token,)) if current is None else current.append(token))  # a bare axis: a tuple
    if current is not None:
        raise ValueError("Brackets are not balanced")
    return groups


def rearrange(tensor, pattern: str, **axes_lengths) -> Tensor:
    """einops' ``rearrange``: reorder, split, merge, add and remove axes as a pattern says, e.g.
    ``"b (h1 h) w c -> (b h1) h w c"`` with ``h1=2`` (a list of tensors is stacked first). Axes in parentheses
    are merged (right side) or split (left side; all but one of their lengths given as keywords); ``...`` stands
    for the axes the pattern does not name; ``1`` and ``()`` are axes of length 1."""
    if isinstance(tensor, (list, tuple)):
        tensor = stack(list(tensor))
    if pattern.count("->") != 1:
        raise ValueError("Pattern must contain a single '->' separating the left and right sides")
    left, right = (_parse_side(s) for s in pattern.split("->"))
    names_left = [a for g in left for a in g if a != "1"]
    names_right = [a for g in right for a in g if a != "1"]
    for names in (names_left, names_right):
        dup = {a for a in names if names.count(a) > 1 and a != "..."}
        if dup:
            raise ValueError(f"Indexing expression contains duplicate dimension '{sorted(dup)[0]}'")
    if set(names_left) != set(names_right):
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on both): "
                         f"{set(names_left) ^ set(names_right)}")
    unknown = set(axes_lengths) - set(names_left)
    if unknown:
        raise ValueError(f"Identifiers not found in rearrange expression: {unknown}")
    shape = list(tensor.shape)
    if "..." in names_left:
        at = next(i for i, g in enumerate(left) if "..." in g)
        if left[at] != ("...",):
            raise ValueError("Ellipsis inside parenthesis in the left side is not allowed")
        extra = len(shape) - (len(left) - 1)
        if extra < 0:
            raise ValueError(f"Number of dimensions in pattern ({len(left) - 1}) must be at most the number of "
                             f"dimensions in the tensor ({len(shape)})")
        dots = [f"...{i}" for i in range(extra)]
        left = left[:at] + [[d] for d in dots] + left[at + 1:]
        # a bare "..." on the right is as many axes; inside parentheses it merges them into the group
        right = [grp for g in right for grp in ([[d] for d in dots] if g == ("...",) else
                                                [[d for a in g for d in (dots if a == "..." else [a])]])]
    if len(left) != len(shape):
        raise ValueError(f"Number of dimensions in pattern ({len(left)}) must be equal to the number of dimensions in "
                         f"the tensor ({len(shape)})")
    sizes = dict(axes_lengths)
    for group, n in zip(left, shape):
        axes = [a for a in group if a != "1"]
        missing = [a for a in axes if a not in sizes]
        known = 1
        for a in axes:
            known *= sizes.get(a, 1)
        if len(missing) > 1:
            raise ValueError(f"cannot infer the sizes of two dimensions at once {missing[0]} and {missing[1]}")
        if missing:
            if known == 0 or n % known:
                raise ValueError(f"inferred dimension does not evenly fit into larger dimension: {n} vs {known}")
            sizes[missing[0]] = n // known
        elif known != n:
            raise ValueError(f"shape mismatch: {n} != {known} for the axes {group}")
    flat_left = [a for g in left for a in g if a != "1"]
    flat_right = [a for g in right for a in g if a != "1"]
    x = reshape(tensor, [sizes[a] for a in flat_left])
    order = [flat_left.index(a) for a in flat_right]
    if order != sorted(order):
        x = permute(x, order)
    out_shape = []
    for g in right:
        n = 1
        for a in g:
            n *= 1 if a == "1" else sizes[a]
        out_shape.append(n)
    return reshape(x, out_shape)


__all__ += ["rearrange"]
