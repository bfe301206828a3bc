"""Custom autograd.Function (pytorch-autograd-semantics.md §4)."""
import pytest

import lucid
from lucid.autograd import Function, grad, gradcheck, gradgradcheck
from lucid.autograd.function import once_differentiable
from helpers import leaf


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


class CubeOD(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


def test_forward_backward_and_node_name():
    x = lucid.tensor(2.0, requires_grad=True)
    y = Cube.apply(x)
    assert type(y.grad_fn).__name__ == "CubeBackward" and y.grad_fn.name() == "CubeBackward"
    y.backward()
    assert x.grad.item() == 12.0


def test_double_backward_through_function():
    x = lucid.tensor(2.0, requires_grad=True)
    g = grad(Cube.apply(x), x, create_graph=True)
    assert g.item() == 12.0 and grad(g, x).item() == 12.0
    assert gradcheck(Cube.apply, (leaf(3),)) and gradgradcheck(Cube.apply, (leaf(3),))


def test_forward_runs_without_grad_and_inputs_keep_requires_grad():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            seen.append((lucid.is_grad_enabled(), x.requires_grad))
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    Probe.apply(lucid.tensor(1.0, requires_grad=True))
    assert seen == [(False, True)]


def test_needs_input_grad_and_non_tensor_args():
    seen = []

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k, flag):
            seen.append(ctx.needs_input_grad)
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    x = lucid.tensor([1.0], requires_grad=True)
    Scale.apply(x, 2, True).sum().backward()
    assert seen == [(True, False, False)] and x.grad.tolist() == [2.0]


def test_wrong_number_of_gradients_errors_and_trailing_nones_ok():
    class F(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    a, b = lucid.tensor(1.0, requires_grad=True), lucid.tensor(2.0, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"function FBackward returned an incorrect number of gradients "
                                           r"\(expected 2, got 1\)"):
        F.apply(a, b).backward()

    class G(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g, None, None

    G.apply(a).backward()
    assert a.grad.item() == 1.0


def test_gradient_for_non_tensor_input_and_float_gradient_error():
    class GradForInt(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = lucid.tensor(1.0, requires_grad=True)
    with pytest.raises(RuntimeError, match="returned a gradient different than None at position 2, but the "
                                           "corresponding forward input was not a Variable"):
        GradForInt.apply(x, 3).backward()

    class Flt(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return 1.0

    with pytest.raises(RuntimeError, match=r"expected Variable or None \(got float\)"):
        Flt.apply(x).backward()


def test_returned_gradients_summed_over_broadcast_and_cast():
    class Bcast(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return lucid.ones(3, 2, dtype=lucid.float64)

    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    Bcast.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and x.grad.dtype == lucid.float32

    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return lucid.ones(3)

    with pytest.raises(RuntimeError, match=r"Function WrongShapeBackward returned an invalid gradient at index 0 - "
                                           r"got \[3\] but expected shape compatible with \[2\]"):
        WrongShape.apply(x).sum().backward()


def test_save_for_backward_type_error_and_freed_saved_tensors():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(3)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 0 is of type int"):
        Bad.apply(lucid.tensor(1.0, requires_grad=True))
    x = lucid.tensor(2.0, requires_grad=True)
    y = Cube.apply(x)
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_saved_output_modified_in_place_gives_version_error():
    class SaveOut(Function):
        @staticmethod
        def forward(ctx, x):
            out = x * 2
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out

    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    y = SaveOut.apply(x)
    y.add_(1)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
        y.sum().backward()


def test_mark_non_differentiable_and_materialized_zero_grads():
    seen = []

    class SortLike(Function):
        @staticmethod
        def forward(ctx, x):
            idx = lucid.tensor([1.0, 0.0])
            ctx.mark_non_differentiable(idx)
            return x * 1, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            seen.append(g_idx.tolist())
            return g

    x = lucid.tensor([1.0, 2.0], requires_grad=True)
    v, i = SortLike.apply(x)
    assert v.requires_grad and not i.requires_grad
    v.sum().backward()
    assert seen == [[0.0, 0.0]]


def test_set_materialize_grads_false_gives_none():
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 2

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(g2)
            return g1

    x = lucid.tensor([1.0], requires_grad=True)
    a, _ = Two.apply(x)
    a.sum().backward()
    assert seen == [None]


def test_outputs_under_no_grad_and_integer_outputs():
    with lucid.no_grad():
        y = Cube.apply(lucid.tensor(2.0, requires_grad=True))
    assert y.grad_fn is None

    class IntOut(Function):
        @staticmethod
        def forward(ctx, x):
            return x.long()

        @staticmethod
        def backward(ctx, g):
            return None

    assert not IntOut.apply(lucid.tensor(2.0, requires_grad=True)).requires_grad


def test_returning_input_gives_alias_with_node():
    class Ret(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = lucid.tensor([1.0], requires_grad=True)
    y = Ret.apply(x)
    assert y is not x and type(y.grad_fn).__name__ == "RetBackward"


def test_mark_dirty_returns_same_object():
    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    x = lucid.tensor([1.0], requires_grad=True)
    h = x * 1
    y = AddOneInPlace.apply(h)
    assert y is h and h.tolist() == [2.0]
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_once_differentiable():
    x = lucid.tensor(2.0, requires_grad=True)
    g = grad(CubeOD.apply(x), x, create_graph=True)
    assert g.item() == 12.0 and not g.requires_grad  # no incoming grad required grad: nothing to differentiate
    g = grad(CubeOD.apply(x) * x, x, create_graph=True)
    assert g.item() == 32.0
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        g.backward()


def test_once_differentiable_error_is_raised_by_grad_wrt_the_incoming_gradient():
    # deliberately unlike PyTorch, whose Error node leads to detached aliases of the results, so that
    # grad(..., go, allow_unused=True) there returns None instead of raising (README: how lucid differs)
    x = lucid.tensor(2.0, requires_grad=True)
    go = lucid.ones((), requires_grad=True)
    g = grad(CubeOD.apply(x), x, go, create_graph=True)
    assert g.grad_fn.name() == "<Error>"
    for allow_unused in (False, True):
        with pytest.raises(RuntimeError, match="@once_differentiable"):
            grad(g, go, allow_unused=allow_unused)
    assert grad(g, x, allow_unused=True) is None


def test_calling_instance_is_legacy_error():
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward method is deprecated"):
        Cube()(lucid.tensor(1.0))


class STE(Function):
    """Straight-through estimator: forward rounds, backward passes the gradient unchanged."""

    @staticmethod
    def forward(ctx, x):
        return x.round()

    @staticmethod
    def backward(ctx, g):
        return g * 1.0


class CubeJvp(Cube):
    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return t * 3 * x ** 2


class CubeVmap(Function):
    """Cube in the setup_context form, vmapped by the generated rule."""
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


class TimesTenBackward(Function):
    """x * y whose backward is scaled by 10, so a test sees which rule ran."""
    generate_vmap_rule = True

    @staticmethod
    def forward(x, y):
        return x * y

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return 10 * g * y, 10 * g * x


def test_function_vmap_defaults():
    assert Function.generate_vmap_rule is False and Cube.generate_vmap_rule is False and hasattr(Cube, "vmap")
    with pytest.raises(NotImplementedError, match="override the vmap staticmethod or set generate_vmap_rule=True"):
        Function.vmap(None, (0,), lucid.ones(2))


def test_function_generate_vmap_rule_vmaps_forward_and_backward():
    import lucid.func as func
    X, w = lucid.tensor([[1.0, 2.0], [3.0, 4.0]]), lucid.tensor([5.0, 7.0])
    assert func.vmap(TimesTenBackward.apply, in_dims=(0, None))(X, w).tolist() == [[5, 14], [15, 28]]
    assert func.vmap(CubeVmap.apply, in_dims=1)(X).tolist() == [[1, 27], [8, 64]]
    # the custom backward runs whichever transform is outside: per sample, and through the batched result
    assert func.vmap(func.grad(lambda x: TimesTenBackward.apply(x, w).sum()))(X).tolist() == [[50, 70], [50, 70]]
    # w is not batched: its gradient is summed over the batch
    assert func.grad(lambda v: func.vmap(TimesTenBackward.apply, in_dims=(0, None))(X, v).sum())(w).tolist() == \
        [40.0, 60.0]
    assert func.vmap(func.vmap(CubeVmap.apply))(X).tolist() == [[1, 8], [27, 64]]


def test_function_vmap_staticmethod_is_the_rule_under_vmap():
    import lucid.func as func
    seen = []

    class Shifted(Function):
        @staticmethod
        def forward(x):
            return x * 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 3

        @staticmethod
        def vmap(info, in_dims, x):
            seen.append((info.batch_size, info.randomness, in_dims))
            return x * 3 + 100, in_dims[0]

    X = lucid.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert func.vmap(Shifted.apply, in_dims=1, randomness="same")(X).tolist() == [[103, 112], [106, 115], [109, 118]]
    assert seen == [(3, "same", (1,))]
    assert Shifted.apply(X).tolist() == (X * 3).tolist()  # the rule only serves vmap


def test_function_without_vmap_rule_under_vmap_raises():
    import lucid.func as func
    X = lucid.ones(2, 3)
    with pytest.raises(RuntimeError, match="must override the setup_context staticmethod"):
        func.vmap(Cube.apply)(X)

    class NoRule(CubeVmap):
        generate_vmap_rule = False

    with pytest.raises(RuntimeError, match="You tried to vmap over NoRule, but it does not have vmap support"):
        func.vmap(NoRule.apply)(X)

    class Both(CubeVmap):
        @staticmethod
        def vmap(info, in_dims, x):
            return x, 0

    with pytest.raises(RuntimeError, match="has both generate_vmap_rule=True and an overridden vmap staticmethod"):
        func.vmap(Both.apply)(X)
    assert func.grad(lambda t: Cube.apply(t).sum())(X).tolist() == [[3.0] * 3] * 2  # grad alone needs no rule


def test_function_backward_is_used_inside_lucid_func_transforms():
    import lucid.func as func
    x = lucid.tensor([0.4, 1.6])
    assert func.grad(lambda t: STE.apply(t).sum())(x).tolist() == [1.0, 1.0]  # not round's zero gradient
    assert func.grad(func.grad(lambda t: Cube.apply(t).sum()))(lucid.tensor(2.0)).item() == 12.0
    assert func.vmap(func.grad(lambda t: CubeVmap.apply(t)))(lucid.tensor([1.0, 2.0])).tolist() == [3.0, 12.0]


def test_function_jvp_gives_the_forward_mode_rule():
    import lucid.func as func
    out, tangent = func.jvp(lambda t: CubeJvp.apply(t), (lucid.tensor(2.0),), (lucid.tensor(1.0),))
    assert out.item() == 8.0 and tangent.item() == 12.0
    # jacfwd vmaps its jvp: as in PyTorch, that needs the setup_context form (and a vmap rule)
    with pytest.raises(RuntimeError, match="it must override the setup_context staticmethod"):
        func.jacfwd(lambda t: CubeJvp.apply(t))(lucid.tensor([1.0, 2.0]))

    class CubeVmapJvp(CubeVmap):
        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return t * 3 * x ** 2

    assert func.jacfwd(lambda t: CubeVmapJvp.apply(t))(lucid.tensor([1.0, 2.0])).tolist() == [[3.0, 0.0], [0.0, 12.0]]


def test_materialize_non_diff_grads_false_leaves_non_differentiable_output_grads_none():
    seen = []

    class TwoOuts(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            aux = x.clone()
            ctx.mark_non_differentiable(aux)
            ctx._materialize_non_diff_grads = False
            return x.clone(), aux

        @staticmethod
        def backward(ctx, g, g_aux):
            seen.append(g_aux)
            return g

    x = lucid.tensor(1.0, requires_grad=True)
    TwoOuts.apply(x)[0].backward()
    assert seen == [None] and x.grad.item() == 1.0


def test_mark_dirty_rules_returned_inputs_only_and_one_output_for_a_view():
    class DirtyNotReturned(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a.clone(), a + b

        @staticmethod
        def backward(ctx, ga, gab):
            return ga, gab

    class DirtyNotInput(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            c = a * 3
            c.add_(1)
            ctx.mark_dirty(c)
            return c

        @staticmethod
        def backward(ctx, g):
            return 3 * g

    class DirtyViewTwoOutputs(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a, a + b

        @staticmethod
        def backward(ctx, ga, gab):
            return ga + gab, ga + gab

    a = lucid.ones(2, requires_grad=True)
    b = lucid.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="marked as dirty during the forward method were not returned"):
        DirtyNotReturned.apply(a.clone(), b)
    with pytest.warns(UserWarning, match="Only input Tensors should be given to ctx.mark_dirty"):
        DirtyNotInput.apply(a.clone())
    with pytest.raises(RuntimeError, match="modifies inplace an input that is a view of another Tensor"):
        DirtyViewTwoOutputs.apply(a.clone().view_as(a), b)
    c, d = DirtyViewTwoOutputs.apply(a.clone(), b)  # not a view: fine
    (c * d).sum().backward()
    assert a.grad is not None


def test_saved_variables_is_a_deprecated_name_for_saved_tensors():
    class Add(lucid.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a + b

        @staticmethod
        def backward(ctx, g):
            with pytest.warns(DeprecationWarning, match="'saved_variables' is deprecated"):
                a, b = ctx.saved_variables
            return g, g

    x = lucid.ones(2, requires_grad=True)
    Add.apply(x, x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
