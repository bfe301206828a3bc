"""Pooling's argument checks as PyTorch's: adaptive pools to an empty output (computed; their backward refuses),
negative and mis-sized output sizes, empty inputs, and fractional pooling's kernel and output sizes, each with
PyTorch's exception type and message. Without torch the expected outcomes written here are checked."""
import numpy as np
import pytest

import lucid

# (pool, input shape, output_size, lucid's outcome: the output's shape, or the exception type and message start)
BACKWARD = "{}_backward(): Expected grad_output to have non-zero size for non-batch dimensions, but grad_output has "
ADAPTIVE = [
    ("adaptive_avg_pool2d", (1, 4, 5, 3), 0, (RuntimeError, BACKWARD.format("adaptive_avg_pool2d")
                                              + "sizes [1, 4, 0, 0] with dimension 2 being empty")),
    ("adaptive_max_pool2d", (4, 5, 3), (0, 2), (RuntimeError, BACKWARD.format("adaptive_max_pool2d")
                                                + "sizes [4, 0, 2] with dimension 1 being empty")),
    ("adaptive_avg_pool3d", (1, 4, 5, 3), 0, (RuntimeError, BACKWARD.format("adaptive_avg_pool3d")
                                              + "sizes [1, 0, 0, 0] with dimension 1 being empty")),
    ("adaptive_max_pool3d", (1, 2, 3, 5, 3), (2, 0, 1), (RuntimeError, BACKWARD.format("adaptive_max_pool3d")
                                                         + "sizes [1, 2, 2, 0, 1] with dimension 3 being empty")),
    ("adaptive_avg_pool1d", (1, 6), 0, (RuntimeError, BACKWARD.format("adaptive_avg_pool2d")
                                        + "sizes [1, 1, 0] with dimension 2 being empty")),
    ("adaptive_max_pool1d", (0, 3, 5), 0, (RuntimeError, BACKWARD.format("adaptive_max_pool2d")
                                           + "sizes [0, 3, 1, 0] with dimension 3 being empty")),
    ("adaptive_avg_pool2d", (1, 0, 3, 3), 2, (RuntimeError, BACKWARD.format("adaptive_avg_pool2d")
                                              + "sizes [1, 0, 2, 2] with dimension 1 being empty")),
    ("adaptive_avg_pool2d", (0, 3, 4, 4), 2, (0, 3, 4, 4)),  # an empty batch has a gradient
    ("adaptive_max_pool2d", (0, 3, 4), 2, (0, 3, 4)),  # (unbatched: no channel)
    ("adaptive_avg_pool3d", (1, 0, 3, 3, 3), 1, (1, 0, 3, 3, 3)),  # the global mean
    ("adaptive_avg_pool3d", (1, 0, 3, 3, 3), 2, (RuntimeError, "adaptive_avg_pool3d(): Expected input to have non-zero "
                                                 "size for non-batch dimensions, but input has sizes [1, 0, 3, 3, 3] "
                                                 "with dimension 1 being empty")),
    ("adaptive_avg_pool2d", (1, 3, 4, 3), (-1, 3), (RuntimeError, "adaptive_avg_pool2d: elements of output_size "
                                                    "must be greater than or equal to 0 but received {-1, 3}")),
    ("adaptive_avg_pool3d", (1, 3, 4, 3, 3), (2, 3, -4), (RuntimeError, "adaptive_avg_pool3d: elements of output_size "
                                                          "must be greater than or equal to 0 but received {2, 3,-4}")),
    ("adaptive_avg_pool1d", (3, 4), -2, (RuntimeError, "adaptive_avg_pool2d: elements of output_size must be greater "
                                         "than or equal to 0 but received {1, -2}")),
    ("adaptive_max_pool2d", (3, 4, 3), (-3, -1), (RuntimeError, "Trying to create tensor with negative dimension -3: "
                                                  "[3, -3, -1]")),
    ("adaptive_max_pool1d", (2, 3, 4), -1, (RuntimeError, "Trying to create tensor with negative dimension -1: "
                                            "[2, 3, 1, -1]")),
    ("adaptive_avg_pool2d", (3, 4, 3), (2, 3, 4), (ValueError, "Input dimension should be at least 4")),
    ("adaptive_max_pool3d", (1, 3, 4, 3, 3), (2, 3), (RuntimeError, "adaptive_max_pool3d(): internal error: "
                                                      "output_size.size() must be 3")),
    ("adaptive_avg_pool3d", (1, 3, 4, 3, 3), (2, 3), (RuntimeError, "adaptive_avg_pool3d: output_size must be 3")),
    ("adaptive_max_pool1d", (1, 3, 4), (2, 3), (RuntimeError, "adaptive_max_pool1d() argument 'output_size' should "
                                                "contain one int (got 2)")),
]


def _outcome(lib, fn, shape, output_size):
    """The gradient's shape after ``fn(x, output_size).sum().backward()``, or (exception type, message)."""
    x = lib.zeros(shape, requires_grad=True)
    try:
        y = getattr(lib.nn.functional, fn)(x, output_size)
        y.sum().backward()
    except (RuntimeError, ValueError) as e:
        return type(e), str(e)
    return tuple(x.grad.shape)


@pytest.mark.parametrize("fn, shape, output_size, expected", ADAPTIVE)
def test_adaptive_pool_output_sizes(fn, shape, output_size, expected):
    got = _outcome(lucid, fn, shape, output_size)
    if isinstance(expected[0], type):
        assert got[0] is expected[0] and got[1].startswith(expected[1]), got
    else:
        assert got == expected
    torch = pytest.importorskip("torch")
    assert got == _outcome(torch, fn, shape, output_size)


def test_adaptive_pool_to_an_empty_output_computes_it():
    for fn, output_size in [("adaptive_avg_pool2d", (0, 3)), ("adaptive_max_pool2d", (2, 0))]:
        y = getattr(lucid.nn.functional, fn)(lucid.ones(1, 2, 4, 4, requires_grad=True), output_size)
        assert y.shape == (1, 2, *output_size) and y.requires_grad
    values, indices = lucid.nn.functional.adaptive_max_pool1d(lucid.ones(2, 5), 0, return_indices=True)
    assert values.shape == indices.shape == (2, 0) and indices.dtype == lucid.int64


def test_global_average_of_an_empty_dim_is_nan():
    y = lucid.nn.functional.adaptive_avg_pool2d(lucid.zeros(1, 2, 0, 3), 1)
    assert y.shape == (1, 2, 1, 1) and np.isnan(y.numpy()).all()


# ---------------------------------------------------------------------------------------------------- fractional
FRACTIONAL = [
    (2, (), 3, "fractional_max_pool2d: kernel_size must either be a single Int or tuple of Ints"),
    (2, (1,), 3, "fractional_max_pool2d: kernel_size must either be a single Int or tuple of Ints"),
    (2, 2, (3,), "fractional_max_pool2d: output_size must either be a single Int or tuple of Ints"),
    (2, 2, (), "fractional_max_pool2d: output_size must either be a single Int or tuple of Ints"),
    (3, (2,), 3, "fractional_max_pool3d: kernel_size must either be a single Int or tuple of three Ints"),
    (3, 2, (3, 2), "fractional_max_pool3d: output_size must either be a single Int or tuple of three Ints"),
]


@pytest.mark.parametrize("n, kernel_size, output_size, message", FRACTIONAL)
def test_fractional_pool_sizes(n, kernel_size, output_size, message):
    def call(lib):
        x, samples = lib.zeros((1, 2) + (7,) * n), lib.full((1, 2, n), 0.5)
        getattr(lib.nn.functional, f"fractional_max_pool{n}d")(x, kernel_size, output_size=output_size,
                                                              _random_samples=samples)

    with pytest.raises(RuntimeError, match=f"^{message}$"):
        call(lucid)
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match=f"^{message}$"):
        call(torch)
