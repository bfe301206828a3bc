"""grid_sample as PyTorch's: its argument checks in PyTorch's order and words, the grid's gradient at the bounds
of border and reflection padding (zero there, as PyTorch's clip), and ATen's forms (``torch.grid_sampler``,
``grid_sampler_2d``/``_3d``, the ``GRID_SAMPLE_*_MODES`` tables of nn.functional)."""
import numpy as np
import pytest

import lucid
import lucid.nn.functional as F


def _errors(lib):
    e, F_ = lib.empty, lib.nn.functional
    x, grid = e(1, 1, 2, 2), e(1, 1, 1, 2)
    return [  # (call, PyTorch's exception type, message)
        (lambda: F_.grid_sample(x[0], grid, align_corners=False), RuntimeError,
         "grid_sampler(): expected grid to have size 1 in last dimension, but got grid with sizes [1, 1, 1, 2]"),
        (lambda: F_.grid_sample(x, e(1, 1, 1, 1, 3), align_corners=False), RuntimeError,
         "grid_sampler(): expected grid to have size 2 in last dimension, but got grid with sizes [1, 1, 1, 1, 3]"),
        (lambda: F_.grid_sample(e(2, 1, 0, 2), e(1, 1, 1, 3), align_corners=False), RuntimeError,
         "grid_sampler(): expected grid and input to have same batch size, but got input with sizes [2, 1, 0, 2] "
         "and grid with sizes [1, 1, 1, 3]"),
        (lambda: F_.grid_sample(e(1, 1, 0, 2), grid, align_corners=False), RuntimeError,
         "grid_sampler(): expected input to have non-empty spatial dimensions, but input has sizes [1, 1, 0, 2] "
         "with dimension 2 being empty"),
        (lambda: F_.grid_sample(x, e(1, 1, 1, 1, 2), align_corners=False), RuntimeError,
         "grid_sampler(): expected 4D input and grid with same number of dimensions, but got input with sizes "
         "[1, 1, 2, 2] and grid with sizes [1, 1, 1, 1, 2]"),
        (lambda: F_.grid_sample(e(1, 1, 2), e(1, 1, 1), align_corners=False), RuntimeError,
         "grid_sampler(): expected 5D input and grid with same number of dimensions, but got input with sizes "
         "[1, 1, 2] and grid with sizes [1, 1, 1]"),
        (lambda: F_.grid_sample(e(1, 1, 2, 2, 2), e(1, 1, 1, 1, 3), mode="bicubic", align_corners=False),
         RuntimeError,
         "grid_sampler(): bicubic interpolation only supports 4D input"),
        (lambda: F_.grid_sample(x, grid.double(), align_corners=False), RuntimeError,
         "expected scalar type Float but found Double"),
        (lambda: F_.grid_sample(x.int(), grid, align_corners=False), NotImplementedError,
         "\"grid_sampler_2d_cpu_kernel_impl\" not implemented for 'Int'"),
        (lambda: F_.grid_sample(x, grid, mode="garbage"), ValueError,
         "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: 'garbage'"),
        (lambda: lib.grid_sampler_3d(x, grid, 0, 0, False), RuntimeError,
         "grid_sampler(): expected 5D input and grid with same number of dimensions, but got input with sizes "
         "[1, 1, 2, 2] and grid with sizes [1, 1, 1, 2]"),
    ]


@pytest.mark.parametrize("k", range(len(_errors(lucid))))
def test_errors_as_pytorch(k):
    call, kind, message = _errors(lucid)[k]
    with pytest.raises(kind) as info:
        call()
    assert str(info.value) == message
    torch = pytest.importorskip("torch")
    call, _, _ = _errors(torch)[k]
    with pytest.raises(kind) as info:
        call()
    assert str(info.value) == message


@pytest.mark.parametrize("padding_mode", ["border", "reflection"])
@pytest.mark.parametrize("align_corners", [True, False])
def test_the_grid_gets_no_gradient_at_the_padding_bounds(padding_mode, align_corners):
    """Points on (and beyond) the bounds, where PyTorch's clip passes no gradient; in between they move."""
    points = [[[1.0, 1.0], [1.0, -1.0], [0.8, 0.8], [0.8, -0.8]], [[-1.0, -1.0], [-1.0, 1.0], [-0.8, -0.8],
                                                                   [-0.8, 0.8]]]
    x = lucid.arange(0.0, 5).expand(1, 1, 5, 5)
    grid = lucid.tensor(points).view(1, 2, 4, 2).requires_grad_()
    F.grid_sample(x, grid, padding_mode=padding_mode, align_corners=align_corners).sum().backward()
    # x grows by 1 per column: d out / d grid_x is (W - 1) / 2 inside, 0 on the bounds; out is constant in y
    inside = 2.0 if align_corners else 0.0  # without align_corners 0.8 unnormalizes to the border
    expected = np.array([[[0, 0], [0, 0], [inside, 0], [inside, 0]], [[0, 0], [0, 0], [inside, 0], [inside, 0]]])
    np.testing.assert_allclose(grid.grad.numpy().reshape(2, 4, 2), expected, atol=1e-6)
    torch = pytest.importorskip("torch")
    tgrid = torch.tensor(points).view(1, 2, 4, 2).requires_grad_()
    torch.nn.functional.grid_sample(torch.arange(0.0, 5).expand(1, 1, 5, 5), tgrid, padding_mode=padding_mode,
                                    align_corners=align_corners).sum().backward()
    np.testing.assert_allclose(grid.grad.numpy(), tgrid.grad.numpy(), atol=1e-6)


def test_aten_forms():
    x = lucid.tensor(np.random.default_rng(0).normal(size=(2, 3, 4, 5)))
    grid = lucid.tensor(np.random.default_rng(1).uniform(-1.2, 1.2, size=(2, 3, 2, 2)))
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == {"bilinear": 0, "nearest": 1, "bicubic": 2}
    assert F.GRID_SAMPLE_PADDING_MODES == {"zeros": 0, "border": 1, "reflection": 2}
    for mode, m in F.GRID_SAMPLE_INTERPOLATION_MODES.items():
        for padding_mode, p in F.GRID_SAMPLE_PADDING_MODES.items():
            expected = F.grid_sample(x, grid, mode, padding_mode, align_corners=True).numpy()
            for sampler in (lucid.grid_sampler, lucid.grid_sampler_2d):
                np.testing.assert_array_equal(sampler(x, grid, m, p, True).numpy(), expected)
    import lucid.compat.torch as torch_api
    np.testing.assert_array_equal(torch_api._grid_sampler_2d_cpu_fallback(x, grid, 0, 0, False).numpy(),
                                  F.grid_sample(x, grid, align_corners=False).numpy())
    with pytest.raises(RuntimeError, match="expected interpolation_mode to be one of"):
        lucid.grid_sampler(x, grid, 3, 0, False)


@pytest.mark.parametrize("dims", [2, 3])
def test_nearest_keeps_the_grid_on_the_graph_with_a_zero_gradient(dims):
    """As PyTorch: the output of a grid that requires grad does too (the input need not), its gradient is 0."""
    x = lucid.ones((1, 2) + (3,) * dims)
    grid = lucid.tensor(np.random.default_rng(2).uniform(-1, 1, size=(1,) + (2,) * dims + (dims,)),
                        dtype=lucid.float32, requires_grad=True)
    out = F.grid_sample(x, grid, mode="nearest", align_corners=False)
    assert out.requires_grad
    out.sum().backward()
    np.testing.assert_array_equal(grid.grad.numpy(), np.zeros(grid.shape))
