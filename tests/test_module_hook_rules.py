"""Module hook rules PyTorch's test_module_hooks checks, run the same way on lucid and on torch (when installed):
what a state_dict post-hook may return, what a full backward hook may return when no input requires grad, the
warning for an output that is neither a Tensor nor a tuple, and the in-place error naming BackwardHookFunction."""
import warnings
from collections import OrderedDict

import pytest

import lucid

torch = pytest.importorskip("torch")
LIBS = pytest.mark.parametrize("m", [lucid, torch], ids=["lucid", "torch"])


@LIBS
def test_public_state_dict_post_hook_must_return_none_and_private_one_replaces_the_dict(m):
    def empty(module, state_dict, prefix, local_metadata):
        return OrderedDict()

    net = m.nn.Sequential(m.nn.Linear(2, 2))
    handle = net._register_state_dict_hook(empty)
    assert len(net.state_dict()) == 0
    handle.remove()
    net[0]._register_state_dict_hook(empty)  # a submodule's result is ignored, as in PyTorch
    assert list(net.state_dict()) == ["0.weight", "0.bias"]

    def public(module, state_dict, prefix, local_metadata):
        return OrderedDict()

    net = m.nn.Linear(2, 2)
    net.register_state_dict_post_hook(public)
    with pytest.raises(RuntimeError, match="^state_dict post-hook must return None$"):
        net.state_dict()
    with pytest.raises(RuntimeError, match="previously registered via register_state_dict_post_hook"):
        net._register_state_dict_hook(public)


@LIBS
def test_full_backward_hook_without_input_grads_may_only_return_nones(m):
    lin = m.nn.Linear(2, 3)
    returned = [None]
    seen = []

    def hook(module, grad_input, grad_output):
        seen.append((grad_input, tuple(g.shape for g in grad_output)))
        return returned[0]

    lin.register_full_backward_hook(hook)
    x = m.rand(1, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Full backward hook is firing when ... no inputs require gradients"
        lin(x).sum().backward()
        returned[0] = (None,)
        lin(x).sum().backward()
        assert seen == [((None,), ((1, 3),))] * 2
        returned[0] = x
        with pytest.raises(RuntimeError, match="^Backward hook for Modules where no input requires gradient should "
                                               "always return None or None for all gradients.$"):
            lin(x).sum().backward()


@LIBS
def test_an_output_that_is_no_tensor_or_tuple_is_warned_about_and_not_hooked(m):
    class DictOut(m.nn.Module):
        def forward(self, d):
            return {"x": d["x"] * 2}

    calls = []
    net = DictOut()
    net.register_full_backward_pre_hook(lambda mod, go: calls.append("pre"))
    net.register_full_backward_hook(lambda mod, gi, go: calls.append("hook"))
    x = m.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        net({"x": x})["x"].sum().backward()
    assert [str(x.message) for x in w] == ["For backward hooks to be called, module output should be a Tensor or a "
                                           "tuple of Tensors but received <class 'dict'>"]
    assert calls == [] and x.grad.tolist() == [2.0, 2.0]


@LIBS
def test_writing_an_input_passed_through_the_hook_node_names_backward_hook_function(m):
    class AddOne(m.nn.Module):
        def forward(self, inp):
            inp += 1
            return inp.clone()

    net = AddOne()
    net.register_full_backward_hook(lambda mod, gi, go: None)
    with pytest.raises(RuntimeError, match="^Output 0 of BackwardHookFunction is a view and is being modified "
                                           "inplace. This view was created inside a custom Function"):
        net(m.rand(3, requires_grad=True).clone())
