"""What ``lucid.autocast`` does to each op: PyTorch's autocast op lists, as one table read at dispatch.

Inside ``lucid.autocast(device_type, dtype)`` an op on the *lower* list casts its floating inputs (float32,
float16, bfloat16; float64 and integers are left alone) to the low dtype, an op on the *fp32* list casts them to
float32, and a *promote* op casts them all to the widest of their dtypes. Every other op runs in its inputs' dtypes.

There are two columns, as in PyTorch: ``"cpu"`` follows PyTorch's CPU autocast (aten/src/ATen/autocast_mode.cpp,
the ``KERNEL_CPU`` registrations: on CPU softmax, layer_norm and the reductions keep their input's dtype), and
``"gpu"`` (``"cuda"``/``"mps"``) follows the lists PyTorch shares between CUDA and MPS (``AT_FORALL_LOWER_PRECISION_FP``,
``AT_FORALL_FP32``, ``AT_FORALL_FP32_SET_OPT_DTYPE``, ``AT_FORALL_PROMOTE`` in ATen/autocast_mode.h).

Names are PyTorch's op names as lucid dispatches them: a declared op (``defop``) is looked up under its own name
once, when it is declared; a composite function on a list (``linear``, the losses, ...) looks itself up as it
starts. A few lucid names differ from PyTorch's and are listed under lucid's name: ``convolution`` (every conv
and conv_transpose), ``_prelu_kernel`` (prelu), ``fft_c2c``/``fft_r2c``/``fft_c2r`` (every ``lucid.fft``
transform), ``linalg_cross`` (cross), ``vecdot`` (linalg_vecdot). ``einsum`` and ``tensordot`` are on lucid's CPU
lower list because PyTorch's CPU versions decompose into ``bmm``/``mm``, which are, so their results come out in
the low dtype there.
"""
from __future__ import annotations

LOWER, FP32, PROMOTE = 1, 2, 3  # 0: the op runs in its inputs' dtypes
CPU, GPU = 0, 1  # the column of POLICY that an autocast device type reads

_CPU_LOWER = """
    conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d convolution bmm mm vecdot baddbmm addmm
    addbmm linear matmul _prelu_kernel prelu scaled_dot_product_attention einsum tensordot
"""
_CPU_FP32 = """
    avg_pool3d binary_cross_entropy grid_sample polar prod quantile nanquantile stft cdist trace view_as_complex
    cholesky_inverse cholesky_solve linalg_inv linalg_cholesky linalg_solve linalg_solve_triangular linalg_pinv
    max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d adaptive_max_pool3d fractional_max_pool2d
    fractional_max_pool3d mse_loss cosine_embedding_loss nll_loss hinge_embedding_loss poisson_nll_loss
    smooth_l1_loss cross_entropy l1_loss huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss
    multi_margin_loss ctc_loss kl_div multilabel_margin_loss binary_cross_entropy_with_logits fft_c2c fft_r2c fft_c2r
    linalg_cond linalg_matrix_rank linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_householder_product
    linalg_tensorinv linalg_tensorsolve linalg_qr linalg_svd linalg_eig linalg_eigh linalg_lstsq
"""
_CPU_PROMOTE = "cat stack index_copy"

_GPU_LOWER = """
    conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d convolution _prelu_kernel prelu addmm
    addmv addr matmul einsum mm mv vecdot linear addbmm baddbmm bmm chain_matmul linalg_multi_dot lstm_cell gru_cell
    rnn_tanh_cell rnn_relu_cell scaled_dot_product_attention
"""
_GPU_FP32 = """
    acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow softplus layer_norm rms_norm
    group_norm norm nuclear_norm cosine_similarity poisson_nll_loss cosine_embedding_loss nll_loss
    hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss multilabel_margin_loss
    soft_margin_loss triplet_margin_loss multi_margin_loss binary_cross_entropy_with_logits dist pdist cdist renorm
    logsumexp interpolate prod softmax log_softmax cumprod cumsum vector_norm matrix_norm sum
"""
_GPU_PROMOTE = "addcdiv addcmul atan2 bilinear linalg_cross dot vdot grid_sample index_put tensordot scatter_add"


def _table() -> dict:
    table: dict = {}
    for column, lists in ((CPU, (_CPU_LOWER, _CPU_FP32, _CPU_PROMOTE)), (GPU, (_GPU_LOWER, _GPU_FP32, _GPU_PROMOTE))):
        for policy, names in zip((LOWER, FP32, PROMOTE), lists):
            for name in names.split():
                table.setdefault(name, [0, 0])[column] = policy
    return {name: tuple(p) for name, p in table.items()}


# op name -> (policy on CPU, policy on GPU)
POLICY: dict[str, tuple[int, int]] = _table()
