"""How much of PyTorch's public surface ``lucid.compat.torch`` has, namespace by namespace (skipped without torch).

Every public name of each PyTorch namespace below is either present in lucid's, excluded by a rule of EXCLUDED
(each with its reason: what no CPU/Apple-GPU program can use, or what has no MLX counterpart), or listed in TODO
("missing, to do"). The test fails on a missing name that is in neither, and when a namespace's in-scope coverage
drops below its FLOOR (a ratchet: after adding names, ``tools/torch_surface_refresh.py`` raises FLOOR and shortens
TODO). Run with ``-s`` to see the percentages.
"""
import importlib
import re
import types

import pytest

torch = pytest.importorskip("torch")
import lucid.compat.torch as lt  # noqa: E402

NAMESPACES = ["", "nn", "nn.functional", "nn.init", "optim", "optim.lr_scheduler", "linalg", "fft", "special",
              "autograd", "func", "utils.data", "distributions", "nn.utils", "amp", "testing", "Tensor"]

# (pattern on the name, reason): names PyTorch exports that are out of scope for lucid
EXCLUDED = [
    (r"_copy$", "*_copy variants: view-free copies for compiler backends"),
    (r"^(quantize|quantized|dequantize|q_|qint|quint|fake_quantize|choose_qparams|int_repr|qscheme|"
     r"fused_moving_avg_obs|fbgemm_|is_quantized|empty_quantized)", "quantized tensors"),
    (r"(Storage$|storage|^is_storage$|^from_file$|^set_$|^is_set_to$|^share_memory_$|^is_shared$|data_ptr$)",
     "storages"),
    (r"^(cudnn_|miopen_|mkldnn_|is_vulkan|xpu$|mtia$|ipu$|maia$|cuda$|is_xla|is_ipu|is_maia|is_mtia|is_mkldnn|"
     r"to_mkldnn|record_stream|Stream$|Event$|pin_memory|is_pinned|is_meta|get_autocast_(ipu|xla|gpu)_dtype|"
     r"(set|is)_autocast_(ipu|xla)_(dtype|enabled)|set_autocast_gpu_dtype|get_device_module|has_(mkl|lapack|"
     r"openmp|spectral)$|init_num_threads|set_flush_denormal|is_distributed|empty_permuted|dim_order|"
     r"convert_conv[23]d_weight_memory_format)", "other device kinds and backend switches"),
    (r"^(sym_|Sym)", "symbolic shapes (compiler internals)"),
    (r"(sparse_(csr|csc|bsr|bsc|compressed)|crow_indices|ccol_indices|col_indices|row_indices|to_sparse_(csr|csc|"
     r"bsr|bsc)|is_sparse_csr|saddmm|sspaddmm|hspmm|dsmm|hsmm|smm$|resize_as_sparse_|sparse_resize)",
     "compressed sparse layouts (no MLX counterpart; COO is in scope)"),
    (r"^(float8_|float4_|uint[1-7]$|int[1-7]$|bits|complex32$|chalf$|complex128$|cdouble$)", "dtypes MLX lacks"),
    (r"^(native_|batch_norm_(backward|elemt|gather|stats|update)|grid_sampler|affine_grid_generator|conv_tbc|"
     r"convolution$|constant_pad_nd|norm_except_dim|frobenius_norm|nuclear_norm|embedding_renorm_|"
     r"thread_safe_generator|slice_inverse|hash_tensor|nonzero_static|unsafe_|split_with_sizes$|"
     r"scaled_|grouped_mm|has_torch_function|handle_torch_function|boolean_dispatch|to_padded_tensor|"
     r"autocast_(increment|decrement)_nesting|clear_autocast_cache|const_data_ptr|grad_dtype|module_load|"
     r"as_subclass|map_$|map2_$|apply_$|reinforce$|enforce_grad_layout_policy|is_nested|NestedIOFunction)",
     "dispatcher, ATen and tensor-subclass internals"),
    (r"^(symeig|lstsq|solve|eig|matrix_rank|set_default_tensor_type|row_stack|range|clip_grad_norm|"
     r"upsample_bilinear|upsample_nearest|NLLLoss2d|Container|variable|assert_allclose|"
     r"constant|dirac|eye|kaiming_normal|kaiming_uniform|normal|orthogonal|sparse|uniform|xavier_normal|"
     r"xavier_uniform)$", "deprecated in PyTorch (raising, or warning in favour of a name lucid has)"),
    (r"^(DataChunk|DFIterDataPipe|IterDataPipe|MapDataPipe|functional_datapipe|guaranteed_datapipes_determinism|"
     r"non_deterministic|runtime_validation|runtime_validation_disabled|argument_validation)$",
     "torch.utils.data's DataPipes (deprecated, being removed from PyTorch)"),
    (r"(_notes$|^(BroadcastingList\d|Callable|Optional|TYPE_CHECKING|DType|GRID_SAMPLE_\w+|assert_int_or_pair|"
     r"common_types|factory_kwargs|LinearCrossEntropyOptions|SwizzleType|ScalingType|AVG|SUM|"
     r"AggregationType|FileCheck|export|fork|wait|cpp|parse_ir|parse_schema|parse_type_comment|"
     r"merge_type_from_type_comment|unify_type_list|import_ir_module\w*|layout|memory_format|newaxis)$)",
     "module-level helpers, typing names, JIT and export entry points"),
]


def excluded(name, obj):
    """The reason ``name`` is out of scope, or None."""
    if isinstance(obj, types.ModuleType):
        return "a module (its names are counted in its own namespace, or out of scope)"
    if isinstance(obj, type) and (obj.__module__.startswith("torch._C") or type(obj).__name__ == "pybind11_type"):
        return "a C-level type (JIT, dispatcher, futures, streams)"
    for pattern, reason in EXCLUDED:
        if re.search(pattern, name):
            return reason
    return None


def public_names(ns):
    """(torch's namespace object, lucid's) and torch's public names in it."""
    if ns == "Tensor":
        return torch.Tensor, lt.Tensor, sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
    mod = importlib.import_module("torch" + (f".{ns}" if ns else ""))
    ours = importlib.import_module("lucid.compat.torch" + (f".{ns}" if ns else ""))
    names = getattr(mod, "__all__", None) or dir(mod)
    return mod, ours, sorted({n for n in names if not n.startswith("_")})


def coverage(ns):
    """(present, in-scope total, the in-scope names lucid lacks)."""
    theirs, ours, names = public_names(ns)
    missing = [n for n in names if not hasattr(ours, n) and not excluded(n, getattr(theirs, n, None))]
    present = sum(hasattr(ours, n) for n in names)
    return present, present + len(missing), missing


# The in-scope coverage each namespace had when last measured (percent); a namespace may only go up.
FLOOR = {
    '': 99.6,
    'nn': 100.0,
    'nn.functional': 100.0,
    'nn.init': 100.0,
    'optim': 100.0,
    'optim.lr_scheduler': 100.0,
    'linalg': 100.0,
    'fft': 100.0,
    'special': 100.0,
    'autograd': 100.0,
    'func': 100.0,
    'utils.data': 100.0,
    'distributions': 100.0,
    'nn.utils': 100.0,
    'amp': 100.0,
    'testing': 100.0,
    'Tensor': 98.5,
    'overall': 99.4,
}

# Missing, to do: in-scope names lucid does not have yet.
TODO = {
    '': """
        JITException bit
    """.split(),
    'Tensor': """
        coalesce dense_dim index indices is_coalesced sparse_dim sparse_mask values
    """.split(),
}


@pytest.mark.parametrize("ns", NAMESPACES)
def test_every_missing_name_is_excluded_with_a_reason_or_listed_to_do(ns):
    _, _, missing = coverage(ns)
    unlisted = sorted(set(missing) - set(TODO.get(ns, ())))
    assert not unlisted, f"torch.{ns or '<top>'}: add to lucid, to EXCLUDED with a reason, or to TODO: {unlisted}"


@pytest.mark.parametrize("ns", NAMESPACES)
def test_coverage_only_goes_up(ns):
    present, total, _ = coverage(ns)
    percent = 100.0 * present / total
    print(f"torch.{ns or '<top>'}: {present}/{total} = {percent:.1f}%")
    assert percent >= FLOOR[ns] - 1e-9, f"torch.{ns or '<top>'} coverage fell to {percent:.1f}% (< {FLOOR[ns]}%)"


def test_overall_coverage():
    counts = [coverage(ns)[:2] for ns in NAMESPACES]
    present, total = sum(c[0] for c in counts), sum(c[1] for c in counts)
    print(f"in scope overall: {present}/{total} = {100.0 * present / total:.1f}%")
    assert 100.0 * present / total >= FLOOR["overall"] - 1e-9
