"""SparseAdam (``torch.optim.SparseAdam``): the lazy Adam for sparse gradients. Only the entries a gradient holds
are updated, moments included; every other entry of the parameter and of its moments stays as it was.

lucid's autograd makes dense gradients (``nn.Embedding(sparse=True)`` included), so the sparse gradients this steps
on are sparse COO tensors assigned to ``.grad`` by hand. The gradient is scattered to a dense array (repeated
indices add up, as PyTorch's coalescing does) beside the mask of the entries it holds, and the update is applied
where the mask is set: nothing is read back to the host.
"""
from __future__ import annotations

import mlx.core as mx

from .._threads import compiled_on_main_thread
from .._tensor import Tensor
from .optimizer import Hyper, Optimizer, _assign, _float_arg, _new_state, _zeros_like

__all__ = ["SparseAdam"]


@compiled_on_main_thread
def sparse_adam_update(x, g, held, m, v, one_minus_beta1, one_minus_beta2, eps, neg_step_size, *, maximize):
    """Where ``held``: m <- m + (1 - beta1)(g - m); v <- v + (1 - beta2)(g^2 - v);
    x <- x - step_size * m / (sqrt(v) + eps), step_size = lr sqrt(1 - beta2^t) / (1 - beta1^t). Elsewhere nothing
    changes. Returns ``(x, m, v)``."""
    if maximize:
        g = -g
    m2 = m + one_minus_beta1 * (g - m)
    v2 = v + one_minus_beta2 * (g * g - v)
    x2 = x + neg_step_size * m2 / (mx.sqrt(v2) + eps)
    return mx.where(held, x2, x), mx.where(held, m2, m), mx.where(held, v2, v)


class SparseAdam(Optimizer):
    r"""Adam for sparse gradients (``torch.optim.SparseAdam``): each step updates only the entries present in the
    gradient (a sparse COO tensor), with PyTorch's rule and state (``step``, a Python int, ``exp_avg`` and
    ``exp_avg_sq``). A dense gradient raises PyTorch's error (use Adam).

    :param params: an iterable of parameters, of ``(name, parameter)`` pairs, or of dicts (param groups, each with
        its own options).
    :param lr: the learning rate (a float, or a 1-element Tensor).
    :param betas: the decay rates of the running averages of the gradient and of its square.
    :param eps: added to the denominator for numerical stability.
    :param maximize: maximize the objective (step along the gradient).
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8, maximize: bool = False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        lr = _float_arg("lr", lr)
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))
        for what, test in (("Sparse", lambda p: p.is_sparse), ("Complex", lambda p: p.is_complex())):
            found = [[i, j] for i, group in enumerate(self.param_groups) for j, p in enumerate(group["params"])
                     if test(p)]
            if found:
                raise ValueError(f"{what} params at indices {found}: SparseAdam "
                                 + ("requires dense parameter tensors" if what == "Sparse"
                                    else "does not support complex parameters"))

    def _step_group(self, group: dict) -> None:
        hyper, staged = Hyper(group), self._staged
        for p in group["params"]:
            g = p._grad
            if g is None:
                continue
            if isinstance(g, Tensor):
                raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
            x = p._storage.data
            if tuple(g.shape) != x.shape or g.dtype != x.dtype:
                self._bad_grad(group, p, x, g)
            s = self.state.get(p)
            if not s:  # first step of this parameter: its state is new, and stored only at the commit
                s = _new_state(self.state, p, {}, staged)
                m = _new_state(s, "exp_avg", _zeros_like(p), staged)
                v = _new_state(s, "exp_avg_sq", _zeros_like(p), staged)
                t = 1
            else:
                m, v, t = s["exp_avg"], s["exp_avg_sq"], s["step"] + 1
            _new_state(s, "step", t, staged)
            (beta1, beta2), c, dt = hyper.betas, self._const, x.dtype
            dense = g.to_dense()._storage.data
            held = g._with_values(g._values().new_ones(g._values().shape)).to_dense()._storage.data > 0
            out = sparse_adam_update(x, dense, held, m._storage.data, v._storage.data, c(1 - beta1, dt),
                                     c(1 - beta2, dt), c(hyper.eps, dt),
                                     c(-hyper.lr * (1 - beta2 ** t) ** 0.5 / (1 - beta1 ** t), dt),
                                     maximize=hyper.maximize)
            _assign(p, out[0], staged)
            _assign(m, out[1], staged)
            _assign(v, out[2], staged)
