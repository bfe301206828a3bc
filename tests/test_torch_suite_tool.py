"""The scope rules of tools/torch_suite.py (which PyTorch tests count): by name, by what the body uses, by -k."""
import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("torch_suite", Path(__file__).parents[1] / "tools" / "torch_suite.py")
ts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ts)


def test_names_out_of_scope():
    assert ts._in_scope("TestNN.test_Linear_no_batch_dim_mean")
    for tid in ("TestNN.test_pixel_shuffle_nhwc_cpu", "TestNN.test_linear_autograd_device_cpu_bias_weightCOO",
                "TestNN.test_linear_autograd_device_cpu_nobias_weightCSR", "TestNN.test_fb_fc_packed",
                "TestNNDeviceTypeCPU.test_embedding_bag_half_cpu_float16", "TestNN.test_conv_cudnn_nhwc"):
        assert not ts._in_scope(tid), tid


def test_bodies_that_use_torch_ao_or_torchscript(tmp_path):
    src = tmp_path / "test_x.py"
    src.write_text(
        "class T:\n"
        "    def test_qat(self):\n        m = torch.ao.nn.qat.Linear(5, 5)\n"
        "    def test_traced_loss(self):\n        f = torch.jit.trace(fn, (x,))\n"
        "    def test_plain(self):\n        torch.jit.is_scripting()\n"
        "    def helper(self):\n        torch.ao.quantization.get_default_qconfig()\n")
    names = ts._out_of_scope_by_source(str(src))
    assert names == {"test_qat", "test_traced_loss"}
    assert ts._named_by("test_traced_loss_cpu", names) and ts._named_by("test_qat_cpu_float32", names)
    assert not ts._named_by("test_traced_loss_default_parity_cpu", names)  # another test, not a device variant


def test_k_selects_by_regular_expression():
    assert ts._selected("TestNN.test_grid_sample_3d", "grid_sample")
    assert not ts._selected("TestNN.test_grid_sample_3d", "^grid")
    assert ts._selected("anything", None)
