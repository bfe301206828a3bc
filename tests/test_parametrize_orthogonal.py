"""parametrizations.orthogonal against PyTorch (same starting weights give the same orthogonal weights for every map,
with and without trivialization), orthogonality after training steps, assignment, and PyTorch's errors. It needs
lucid.linalg.matrix_exp / householder_product (skipped on a tree that lacks them)."""
import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.nn.utils.parametrizations import orthogonal

torch = pytest.importorskip("torch")
if not (hasattr(lucid.linalg, "matrix_exp") and hasattr(lucid.linalg, "householder_product")):
    pytest.skip("lucid.linalg.matrix_exp / householder_product are not in this tree", allow_module_level=True)


def L(t):
    return lucid.tensor(t.detach().numpy())


def _pair(shape, **kwargs):
    tl = torch.nn.Linear(shape[1], shape[0]).double()
    ll = nn.Linear(shape[1], shape[0]).double()
    ll.load_state_dict({k: L(v) for k, v in tl.state_dict().items()})
    torch.nn.utils.parametrizations.orthogonal(tl, **kwargs)
    orthogonal(ll, **kwargs)
    return tl, ll


def _orthogonality(w):
    w = w.detach().numpy()
    gram = w.T @ w if w.shape[0] >= w.shape[1] else w @ w.T
    return np.abs(gram - np.eye(min(w.shape))).max()


@pytest.mark.parametrize("shape", [(5, 5), (6, 3), (3, 6)])
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("trivialization", [True, False])
def test_orthogonal_matches_torch(shape, orthogonal_map, trivialization):
    tl, ll = _pair(shape, orthogonal_map=orthogonal_map, use_trivialization=trivialization)
    assert sorted(ll.state_dict()) == sorted(tl.state_dict())
    assert _orthogonality(ll.weight) < 1e-12
    if not trivialization or shape[0] == shape[1]:  # (a non-square base is completed with random columns)
        np.testing.assert_allclose(ll.weight.detach().numpy(), tl.weight.detach().numpy(), atol=1e-12)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
def test_stays_orthogonal_while_training_and_takes_assignments(orthogonal_map):
    m = orthogonal(nn.Linear(4, 6).double(), orthogonal_map=orthogonal_map)
    opt = lucid.optim.SGD(m.parameters(), lr=0.1)
    x = lucid.randn(8, 4, dtype=lucid.float64)
    for _ in range(3):
        opt.zero_grad()
        m(x).pow(3).sum().backward()
        opt.step()
    assert _orthogonality(m.weight) < 1e-12
    q, _ = np.linalg.qr(np.random.default_rng(0).standard_normal((6, 4)))
    with lucid.no_grad():
        m.weight = lucid.tensor(q)
    np.testing.assert_allclose(m.weight.detach().numpy(), q, atol=1e-12)


def test_errors_are_torchs():
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a tensor of 1 dimensions."):
        orthogonal(nn.Linear(3, 3), "bias")
    with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", "cayley", "householder"'):
        orthogonal(nn.Linear(3, 3), orthogonal_map="qr")
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        orthogonal(nn.Linear(3, 3), "w")
    m = orthogonal(nn.Linear(3, 3))
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices of shape"):
        with lucid.no_grad():
            m.weight = lucid.zeros(2, 2)
