"""lucid.func.vmap over convolutions' weights: per-sample gradients (vmap of grad) and Jacobians of convolutions
equal the loop of single-sample gradients and PyTorch's torch.func; model ensembles with stack_module_state; and
what MLX cannot batch fails with lucid's own message naming the ops."""
import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.func import functional_call, grad, jacrev, stack_module_state, vmap

RNG = np.random.default_rng(0)

# (conv function, input shape per sample, weight shape, options)
CONVS = [
    (F.conv2d, (1, 7, 7), (3, 1, 3, 3), {}),
    (F.conv2d, (2, 8, 8), (4, 2, 3, 3), {"stride": 2, "padding": 1}),
    (F.conv2d, (4, 7, 7), (4, 2, 3, 3), {"groups": 2, "dilation": 2}),
    (F.conv1d, (2, 9), (3, 2, 4), {"stride": 3}),
    (F.conv3d, (1, 5, 5, 5), (2, 1, 2, 2, 2), {"padding": 1}),
    (F.conv_transpose2d, (2, 4, 4), (2, 3, 3, 3), {"stride": 2}),
]
IDS = [f"{f.__name__}-{'-'.join(f'{k}{v}' for k, v in kw.items())}" for f, _, _, kw in CONVS]


def _loss(conv, kw):
    def loss(w, x):
        return (conv(x.unsqueeze(0), w, **kw) ** 2).mean()
    return loss


@pytest.mark.parametrize("dtype", [lucid.float32, lucid.float64])
@pytest.mark.parametrize("conv, xshape, wshape, kw", CONVS, ids=IDS)
def test_per_sample_weight_gradients_equal_the_loop(conv, xshape, wshape, kw, dtype):
    x = lucid.tensor(RNG.normal(size=(4, *xshape)), dtype=dtype)
    w = lucid.tensor(RNG.normal(size=wshape), dtype=dtype)
    loss = _loss(conv, kw)
    batched = vmap(grad(loss), in_dims=(None, 0))(w, x)
    loop = []
    for i in range(4):
        wi = w.detach().requires_grad_()
        loss(wi, x[i]).backward()
        loop.append(wi.grad.numpy())
    tol = 1e-12 if dtype == lucid.float64 else 1e-5
    np.testing.assert_allclose(batched.numpy(), np.stack(loop), rtol=tol, atol=tol)


@pytest.mark.slow  # torch.func's first call imports functorch (seconds)
@pytest.mark.parametrize("conv, xshape, wshape, kw", CONVS[:3], ids=IDS[:3])
def test_per_sample_gradients_match_torch_func(conv, xshape, wshape, kw):
    torch = pytest.importorskip("torch")
    x = RNG.normal(size=(3, *xshape)).astype(np.float32)
    w = RNG.normal(size=wshape).astype(np.float32)
    tconv = getattr(torch.nn.functional, conv.__name__)

    def tloss(w, x):
        return (tconv(x.unsqueeze(0), w, **kw) ** 2).mean()

    ref = torch.func.vmap(torch.func.grad(tloss), in_dims=(None, 0))(torch.tensor(w), torch.tensor(x))
    mine = vmap(grad(_loss(conv, kw)), in_dims=(None, 0))(lucid.tensor(w), lucid.tensor(x))
    np.testing.assert_allclose(mine.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)


def test_jacobian_of_a_convolution_in_its_weight():
    x = lucid.tensor(RNG.normal(size=(1, 1, 5, 5)))
    w = lucid.tensor(RNG.normal(size=(2, 1, 3, 3)))
    J = jacrev(lambda w: F.conv2d(x, w).sum((0, 2, 3)))(w)
    expected = np.zeros((2, 2, 1, 3, 3))
    windows = np.lib.stride_tricks.sliding_window_view(x.numpy()[0, 0], (3, 3)).sum((0, 1))
    expected[0, 0, 0], expected[1, 1, 0] = windows, windows  # d(sum of out channel o)/dw[o] = the summed windows
    np.testing.assert_allclose(J.numpy(), expected, rtol=1e-5)


class _CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3)
        self.bn = nn.BatchNorm2d(3)
        self.fc = nn.Linear(3 * 4 * 4, 2)

    def forward(self, x):
        return self.fc(F.relu(self.bn(self.conv(x))).flatten(1))


def test_model_ensemble_with_stack_module_state():
    lucid.manual_seed(0)
    models = [_CNN().eval() for _ in range(3)]
    params, buffers = stack_module_state(models)
    assert params["conv.weight"].shape == (3, 3, 1, 3, 3) and params["conv.weight"].is_leaf
    assert params["conv.weight"].requires_grad and not buffers["bn.running_mean"].requires_grad
    x = lucid.randn(4, 1, 6, 6)
    out = vmap(lambda p, b, x: functional_call(models[0], (p, b), (x,)), in_dims=(0, 0, None))(params, buffers, x)
    for i, m in enumerate(models):
        np.testing.assert_allclose(out[i].numpy(), m(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0"):
        stack_module_state([])
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        stack_module_state([_CNN(), _CNN().eval()])
    with pytest.raises(RuntimeError, match="same class"):
        stack_module_state([_CNN().eval(), nn.Linear(2, 2).eval()])


def test_what_mlx_cannot_batch_or_differentiate_fails_with_lucids_message():
    A, b = lucid.randn(3, 4, 4), lucid.randn(3, 4)
    with pytest.raises(RuntimeError, match=r"cannot be vmapped: it calls the LU factorization: linalg.solve.*LUF"):
        vmap(lucid.linalg.solve)(A, b)
    with pytest.raises(RuntimeError, match=r"the QR factorization: linalg.qr.*QRF"):
        vmap(lambda a: lucid.linalg.qr(a)[0])(A)
    S = A[0] @ A[0].mT + 4 * lucid.eye(4)  # MLX has no derivative for Cholesky: lucid's message, naming the ops
    with pytest.raises(RuntimeError, match=r"calls the Cholesky factorization: linalg.cholesky.*no vjp rule"):
        grad(lambda s: lucid.linalg.cholesky(s).sum())(S)


def test_values_needed_while_traced_fail_with_lucids_message():
    with pytest.raises(RuntimeError, match="needs values while it is traced"):
        vmap(lambda x: lucid.unique(x))(lucid.randn(3, 4))


def test_grad_through_sort_max_and_median_under_func():
    x = lucid.tensor(RNG.normal(size=(3, 5)))
    for f in (lambda t: lucid.sort(t, 1)[0][:, -2:].sum(), lambda t: (t.max(1)[0] ** 2).sum(),
              lambda t: t.median(1)[0].sum(), lambda t: lucid.cummax(t, 1)[0].sum()):
        xr = x.detach().requires_grad_()
        f(xr).backward()
        np.testing.assert_allclose(grad(f)(x).numpy(), xr.grad.numpy())
        per_row = vmap(grad(lambda r: f(r.unsqueeze(0))))(x)  # and per sample
        np.testing.assert_allclose(per_row.numpy(), xr.grad.numpy())
