"""Storages, data_ptr, storage_offset and set_ (lucid.ops.storage) against PyTorch: which tensors share memory and
where they start in it, what a storage reports, and set_'s aliasing, checks and autograd rules."""
import re
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn as nn

torch = pytest.importorskip("torch")
LIBS = pytest.mark.parametrize("m", [lucid, torch], ids=["lucid", "torch"])

# tensors taken of x (a (3, 4) float32 arange): views, aliases and copies
TAKEN = {
    "itself": lambda m, x: x, "view(-1)": lambda m, x: x.view(-1), "x[0]": lambda m, x: x[0],
    "x[2]": lambda m, x: x[2], "t()": lambda m, x: x.t(), "t()[1]": lambda m, x: x.t()[1],
    "x[:, 3]": lambda m, x: x[:, 3], "x[1:, 2:]": lambda m, x: x[1:, 2:], "diagonal": lambda m, x: x.diagonal(),
    "narrow": lambda m, x: x.narrow(1, 1, 2), "unsqueeze": lambda m, x: x.unsqueeze(0)[0, 1],
    "detach of a view": lambda m, x: x[1].detach(), "data": lambda m, x: x.data, "detach": lambda m, x: x.detach(),
    "Parameter": lambda m, x: m.nn.Parameter(x), "split piece": lambda m, x: x.split(1)[2],
    "as_strided": lambda m, x: m.as_strided(x, (2, 2), (1, 4), 5), "view of a view": lambda m, x: x[1:].view(8)[3:],
    "clone": lambda m, x: x.clone(), "x + 0": lambda m, x: x + 0,
}


def _arange(m):
    """A (3, 4) tensor that is no view (lucid's Parameter(t) of a view t shares t's memory but not its root's)."""
    return m.tensor(np.arange(12.0).reshape(3, 4), dtype=m.float32)


def _layout(m, take):
    """(shares x's storage, offset in elements, data_ptr distance from x in bytes, storage size in elements)."""
    x = _arange(m)
    y = take(m, x)
    shares = y.untyped_storage() == x.untyped_storage()
    return shares, y.storage_offset(), y.data_ptr() - x.data_ptr() if shares else None, len(y.untyped_storage())


@pytest.mark.parametrize("name", list(TAKEN))
def test_storage_sharing_and_offsets_match_torch(name):
    assert _layout(lucid, TAKEN[name]) == _layout(torch, TAKEN[name])


@LIBS
def test_data_ptr_differs_between_storages_and_is_zero_when_empty(m):
    x, y = _arange(m), _arange(m)
    assert x.data_ptr() != y.data_ptr() and x.clone().data_ptr() != x.data_ptr()
    assert m.empty(0).data_ptr() == 0 and m.empty(0).untyped_storage().data_ptr() == 0
    assert x.data_ptr() == x.untyped_storage().data_ptr() == x[0].storage().data_ptr()


@LIBS
def test_state_dict_values_share_storage_with_the_parameters_and_buffers(m):
    net = m.nn.Sequential(m.nn.Linear(3, 2), m.nn.BatchNorm1d(2))
    for key, value in net.state_dict().items():
        owner = net.get_submodule(key.rsplit(".", 1)[0])
        assert value.data_ptr() == getattr(owner, key.rsplit(".", 1)[1]).data_ptr(), key


@LIBS
def test_spectral_norm_weight_shares_weight_orig_storage(m):
    lin = m.nn.utils.spectral_norm(m.nn.Linear(4, 3))
    assert lin.weight.data_ptr() == lin.weight_orig.data_ptr()


def _describe(m):
    x = _arange(m).double()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage is deprecated
        typed = x[1].storage()
    untyped = x[2].untyped_storage()
    with pytest.raises(IndexError) as err:
        typed[12]
    return (typed.size(), len(typed), typed.nbytes(), typed.element_size(), typed.tolist(), typed[-1], typed[3],
            str(typed.dtype).rsplit(".", 1)[1], untyped.size(), untyped.nbytes(), untyped.element_size(),
            untyped.tolist()[8:16], untyped[15], typed.untyped() == untyped, typed.is_shared(), untyped.is_shared(),
            x.is_shared(), m.is_storage(typed), m.is_storage(untyped), m.is_storage(x), str(err.value),
            typed.data_ptr() == untyped.data_ptr(), repr(typed).split("\n")[:12])


def test_storages_report_what_torch_reports():
    assert _describe(lucid) == _describe(torch)


def test_typed_storage_repr_ends_with_its_description():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = repr(lucid.ones(2).storage())
    assert text.endswith("[lucid.TypedStorage(dtype=mlx.core.float32, device=cpu) of size 2]")


# ---------------------------------------------------------------------------------------------------- set_
def _aliasing(m):
    x = _arange(m)
    y = m.zeros(1)
    assert y.set_(x) is y
    same = (y.shape, y.data_ptr() == x.data_ptr())
    y.mul_(2)
    x[0, 0] = 7.0
    z = m.zeros(1).set_(x[1])
    z.add_(1)
    w = m.zeros(1).set_(x.untyped_storage(), 2, (2, 2), (1, 4))
    e = m.zeros(3).set_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = m.zeros(1).set_(x.storage())
    return (same, y.tolist(), x.tolist(), z.tolist(), z.storage_offset(), z.data_ptr() - x.data_ptr(), w.tolist(),
            tuple(e.shape), e.untyped_storage().nbytes(), tuple(whole.shape), z._base is None)


def test_set_aliases_the_source_memory_as_torch():
    assert _aliasing(lucid) == _aliasing(torch)


def _views_keep_old_memory(m):
    x = _arange(m)
    v = x[0]
    x.set_(m.ones(2))
    v.add_(1)
    return x.tolist(), v.tolist()


def test_views_taken_before_set_keep_the_old_memory():
    assert _views_keep_old_memory(lucid) == _views_keep_old_memory(torch)


def _errors(m):
    out = []
    for call in (lambda: m.ones(2, requires_grad=True).set_(m.ones(3)),
                 lambda: m.zeros(2).set_(m.zeros(2, dtype=m.int64)),
                 lambda: m.zeros(2, dtype=m.float64).set_(m.zeros(2, dtype=m.int32)),
                 lambda: m.zeros(2).set_(m.zeros(2, dtype=m.int64).storage()),
                 lambda: m.zeros(2).set_(m.zeros(6).storage(), -1, (2,)),
                 lambda: m.zeros(2).set_(m.zeros(6).storage(), 0, (2, 2), (1,)),
                 lambda: m.zeros(2).set_(3)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as err:
                call()
        out.append((type(err.value).__name__, str(err.value).split(":")[0] if err.type is TypeError else
                    str(err.value)))
    return out


def test_set_errors_match_torch():
    assert _errors(lucid) == _errors(torch)


def test_set_refuses_what_lucid_cannot_model():
    x = lucid.zeros(6)
    with pytest.raises(RuntimeError, match=re.escape("requiring a storage size of 40 are out of bounds for storage "
                                                     "of size 24")):
        lucid.zeros(2).set_(x, 7, (3,), (1,))  # PyTorch would enlarge x's storage
    with pytest.raises(RuntimeError, match="lucid does not read a storage of mlx.core.int32 elements as "
                                           "mlx.core.float32"):
        lucid.zeros(2).set_(lucid.zeros(2, dtype=lucid.int32).untyped_storage())
    assert x.tolist() == [0.0] * 6


def _autograd(m):
    b = m.randn(3, requires_grad=True)
    c = m.zeros(2).set_(b)
    with pytest.raises(RuntimeError) as err:
        c.sum().backward()
    d = (b * 2).set_(m.randn(4))
    a = m.ones(2, requires_grad=True)
    with m.no_grad():
        a.set_(m.randn(3))
    w = m.ones(3, requires_grad=True)
    x = m.ones(3)
    y = w * x  # saves x
    x.set_(m.zeros(3))
    with pytest.raises(RuntimeError) as modified:
        y.sum().backward()
    return (c.requires_grad, c.is_leaf, str(err.value), d.requires_grad, d.is_leaf, a.requires_grad, a.is_leaf,
            tuple(a.shape), str(modified.value).split(";")[0].split(":")[0])


def test_set_autograd_rules_match_torch():
    assert _autograd(lucid) == _autograd(torch)


def test_set_keeps_the_values_a_module_update_needs():
    # the pattern nn.utils.parametrize uses: a parameter takes a new value in place, its object kept
    lin = nn.Linear(3, 3)
    weight = lin.weight
    new = lucid.tensor(np.eye(3, dtype=np.float32))
    with lucid.no_grad():
        lin.weight.set_(new)
    assert lin.weight is weight and weight.is_leaf and weight.requires_grad
    np.testing.assert_array_equal(weight.detach().numpy(), np.eye(3))


def _versions(m):
    b, c = m.zeros(3), m.zeros(2)
    before = c._version
    c.set_(b)
    after = (c._version, b._version)
    b.add_(1)
    return before, after, (c._version, b._version), c.tolist()


def test_set_keeps_the_tensor_version_counter_as_torch():
    assert _versions(lucid) == _versions(torch)


def _alias_write_history(m):
    x = m.tensor(np.arange(6.0).reshape(2, 3))
    d = x[1].detach()  # an alias of x's memory, as a tensor set_ to part of a storage is
    w = m.tensor([1.0, 2.0, 3.0], dtype=m.float64, requires_grad=True)
    d.mul_(w * 2)
    (d * d).sum().backward()
    e = m.zeros(1, dtype=m.float64).set_(x[0])
    e.data = m.ones(2, dtype=m.float64)  # new memory: e stops following x
    x.add_(1)
    return d.requires_grad, d.grad_fn.name(), w.grad.tolist(), x.tolist(), e.tolist()


def test_a_recorded_write_through_an_alias_gives_it_the_history_as_torch():
    assert _alias_write_history(lucid) == _alias_write_history(torch)


def _new_storages(m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        typed = m.TypedStorage(3, dtype=m.float64)
        given = m.TypedStorage([1.0, 2.5], dtype=m.float64)
    untyped = m.UntypedStorage(5)
    t = m.zeros(1, dtype=m.float64).set_(given)
    t.mul_(2)
    return (typed.size(), str(typed.dtype).rsplit(".", 1)[1], untyped.nbytes(), given.tolist(), t.tolist(),
            m.zeros(1, dtype=m.float64).set_(typed).shape[0])


def test_new_storages_as_torch():
    assert _new_storages(lucid) == _new_storages(torch)


def _set_to_itself_and_to_its_own_part(m):
    x = _arange(m)
    x.set_(x)
    x.add_(1)
    y = _arange(m)
    v = y[0]
    y.set_(y[1])
    y.mul_(10)
    with m.inference_mode():
        i = m.ones(2)
    with pytest.raises(RuntimeError) as err, m.no_grad():
        i.set_(m.zeros(3))
    return x.tolist(), y.tolist(), v.tolist(), str(err.value)


def test_set_to_itself_to_its_own_part_and_on_an_inference_tensor_as_torch():
    assert _set_to_itself_and_to_its_own_part(lucid) == _set_to_itself_and_to_its_own_part(torch)
