"""Lazy modules: UninitializedParameter/UninitializedBuffer, initialisation at the first call (in place, so an
optimizer built before holds the same objects), the class each becomes, state_dict/load_state_dict of uninitialized
and initialized state, copies and pickles; reprs and errors as PyTorch's."""
import copy
import pickle

import numpy as np
import pytest

import lucid
import lucid.nn as nn

_SHAPE = "Can't access the shape of an uninitialized parameter or buffer"


@pytest.mark.parametrize("name, args, x, becomes, weight", [
    ("LazyConv1d", (4, 3), (2, 6, 9), "Conv1d", (4, 6, 3)),
    ("LazyConv2d", (4, 3), (2, 6, 7, 7), "Conv2d", (4, 6, 3, 3)),
    ("LazyConv3d", (4, 2), (6, 5, 5, 5), "Conv3d", (4, 6, 2, 2, 2)),
    ("LazyConvTranspose1d", (4, 3), (2, 6, 9), "ConvTranspose1d", (6, 4, 3)),
    ("LazyConvTranspose2d", (4, 3), (2, 6, 5, 5), "ConvTranspose2d", (6, 4, 3, 3)),
    ("LazyConvTranspose3d", (4, 2), (2, 6, 3, 3, 3), "ConvTranspose3d", (6, 4, 2, 2, 2)),
    ("LazyLinear", (4,), (2, 3, 6), "Linear", (4, 6)),
    ("LazyBatchNorm1d", (), (4, 6), "BatchNorm1d", (6,)),
    ("LazyBatchNorm2d", (), (4, 6, 3, 3), "BatchNorm2d", (6,)),
    ("LazyBatchNorm3d", (), (4, 6, 2, 2, 2), "BatchNorm3d", (6,)),
    ("LazyInstanceNorm1d", (), (4, 6, 5), "InstanceNorm1d", None),
    ("LazyInstanceNorm2d", (), (4, 6, 3, 3), "InstanceNorm2d", None),
    ("LazyInstanceNorm3d", (), (4, 6, 2, 2, 2), "InstanceNorm3d", None),
])
def test_lazy_module_initializes_in_place_and_becomes_its_eager_class(name, args, x, becomes, weight):
    m = getattr(nn, name)(*args)
    params = list(m.parameters())
    assert all(isinstance(p, nn.UninitializedParameter) for p in params)
    y = m(lucid.randn(*x))
    assert type(m) is getattr(nn, becomes)
    assert [id(p) for p in m.parameters()] == [id(p) for p in params]  # the same objects, now Parameters
    assert all(type(p) is nn.Parameter for p in params)
    if weight is not None:
        assert m.weight.shape == weight
    y.sum().backward()
    assert all(p.grad is not None for p in params)
    torch = pytest.importorskip("torch")
    t = getattr(torch.nn, name)(*args)
    assert repr(getattr(nn, name)(*args)) == repr(t)
    t(torch.randn(*x))
    assert repr(m) == repr(t) and list(m.state_dict()) == list(t.state_dict())


def test_uninitialized_tensors_refuse_their_shape_and_print_as_torch():
    m = nn.LazyConv2d(4, 3)
    assert repr(m.weight) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match=_SHAPE):
        m.weight.shape
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"):
        m(lucid.randn(3, 3))
    assert type(m) is nn.LazyConv2d  # still lazy after the refused call
    b = nn.LazyBatchNorm1d()
    assert isinstance(b.running_mean, nn.UninitializedBuffer) and repr(b.running_mean) == "<UninitializedBuffer>"
    assert nn.UninitializedParameter(dtype=lucid.float64).dtype == lucid.float64
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv1d(4, 3, groups=2)(lucid.randn(1, 3, 5))


def test_an_optimizer_built_before_the_first_call_trains_the_materialized_parameters():
    m = nn.LazyLinear(2)
    opt = lucid.optim.SGD(m.parameters(), lr=0.5)
    x = lucid.randn(8, 3)
    m(x).pow(2).sum().backward()
    before = m.weight.detach().numpy().copy()
    grad = m.weight.grad.numpy()
    opt.step()
    np.testing.assert_allclose(m.weight.detach().numpy(), before - 0.5 * grad, rtol=1e-6)


def test_state_dicts_of_lazy_modules():
    lazy = nn.Sequential(nn.LazyLinear(3), nn.LazyBatchNorm1d())
    sd = lazy.state_dict()
    assert isinstance(sd["0.weight"], nn.UninitializedParameter)
    assert isinstance(sd["1.running_mean"], nn.UninitializedBuffer)
    other = nn.Sequential(nn.LazyLinear(3), nn.LazyBatchNorm1d())
    assert not other.load_state_dict(sd).missing_keys  # lazy into lazy: keys match, nothing is copied
    assert isinstance(other[0].weight, nn.UninitializedParameter)
    done = nn.Sequential(nn.Linear(5, 3), nn.BatchNorm1d(3))
    other.load_state_dict(done.state_dict())  # initialized into lazy: materialized to the checkpoint's shapes
    assert type(other[0]) is nn.LazyLinear and other[0].weight.shape == (3, 5)
    np.testing.assert_array_equal(other[0].weight.detach().numpy(), done[0].weight.detach().numpy())
    other(lucid.randn(4, 5))  # the first call keeps the loaded values
    assert type(other[0]) is nn.Linear and other[0].in_features == 5
    np.testing.assert_array_equal(other[0].weight.detach().numpy(), done[0].weight.detach().numpy())
    with pytest.raises(AssertionError, match="in_features inferred from input: 4 is not equal"):
        fresh = nn.LazyLinear(3)
        fresh.load_state_dict(nn.Linear(5, 3).state_dict())
        fresh(lucid.randn(1, 4))
    with pytest.raises(RuntimeError, match=_SHAPE):
        nn.Linear(3, 3).load_state_dict(nn.LazyLinear(3).state_dict())


def test_lazy_modules_copy_and_pickle_uninitialized():
    for m in (copy.deepcopy(nn.LazyLinear(3)), pickle.loads(pickle.dumps(nn.LazyBatchNorm2d()))):
        assert any(isinstance(p, (nn.UninitializedParameter, nn.UninitializedBuffer))
                   for p in list(m.parameters()) + list(m.buffers()))
    m = pickle.loads(pickle.dumps(nn.LazyConv2d(2, 1)))
    assert m(lucid.randn(1, 3, 4, 4)).shape == (1, 2, 4, 4)


def test_optimizers_hold_uninitialized_parameters_until_materialized():
    from lucid.nn.modules.lazy import LazyModuleMixin

    class LazyModule(LazyModuleMixin, nn.Module):
        pass

    for cls in (lucid.optim.Adam, lucid.optim.SGD, lucid.optim.RMSprop, lucid.optim.Adagrad):
        m = LazyModule()
        m.register_parameter("test_param", nn.UninitializedParameter())
        if cls is lucid.optim.Adagrad:  # its state is made at once, from the parameter's shape
            with pytest.raises(ValueError, match="uninitialized parameter"):
                cls(m.parameters())
            continue
        opt = cls(m.parameters(), lr=0.1)
        m.test_param.materialize(10)
        assert type(opt.param_groups[0]["params"][0]) is nn.Parameter
        m.test_param.grad = lucid.ones(10)
        opt.step()
    m = LazyModule()
    m.register_parameter("test_param", nn.UninitializedParameter())
    m.half()
    m.test_param.materialize(10)
    assert m.test_param.dtype == lucid.float16
    for norm in (nn.utils.weight_norm, nn.utils.spectral_norm):
        with pytest.raises(ValueError, match="can't have uninitialized parameters"):
            norm(nn.LazyLinear(7))
