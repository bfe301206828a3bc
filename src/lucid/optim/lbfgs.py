"""L-BFGS — PyTorch's ``torch.optim.LBFGS``, the same algorithm step for step (after Nocedal & Wright and
minFunc): a two-loop recursion over the last ``history_size`` curvature pairs, a first step scaled by
``min(1, 1/|g|_1) * lr``, and optionally the strong-Wolfe line search with cubic interpolation.

L-BFGS needs values on the host by nature: it compares the loss and directional derivatives with tolerances to
decide what to do next, as PyTorch's implementation does (each comparison is a sync there too). The history's
vectors and scalars stay lazy MLX arrays; the end of ``step()`` evaluates them with the parameters, so memory stays
bounded over many steps.
"""
from __future__ import annotations

import math

from .. import _threads
from .._tensor import Tensor, take_pending_evals
from .._grad_mode import enable_grad, no_grad
from ..ops.shape import cat
from .optimizer import Optimizer, _float_arg

__all__ = ["LBFGS"]


def _div(a: float, b: float) -> float:
    """``a / b`` with IEEE semantics, as PyTorch's LBFGS gets from its 0-d tensors: a zero divisor gives a signed
    infinity (or NaN for 0/0) instead of ZeroDivisionError. Reached on flat or linear functions (a zero gradient
    with ``tolerance_grad < 0``, a constant slope in the line search), where the bounds then clip the step."""
    if b != 0:
        return a / b
    if a == 0 or a != a:
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None) -> float:
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to ``bounds`` (default: the
    interval between x1 and x2); the interval's midpoint when the cubic has no minimum."""
    xmin_bound, xmax_bound = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * _div(f1 - f2, x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = math.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * _div(g2 + d2 - d1, g2 - g1 + 2 * d2)
        else:
            min_pos = x1 - (x1 - x2) * _div(g1 + d2 - d1, g1 - g2 + 2 * d2)
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _dot(a: Tensor, b: Tensor) -> float:
    return a.dot(b).item()


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search along ``d`` from step ``t`` for a step satisfying the strong Wolfe conditions (sufficient
    decrease with ``c1``, curvature with ``c2``): bracketing, then zoom. ``obj_func(x, t, d) -> (loss, flat_grad)``
    evaluates at ``x + t d``. Returns (loss, flat_grad, t, number of evaluations)."""
    d_norm = d.abs().max().item()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f, bracket_g = [t_prev, t], [f_prev, f_new], [g_prev, g_new]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f, bracket_g = [t_prev, t], [f_prev, f_new], [g_prev, g_new]
            bracket_gtd = [gtd_prev, gtd_new]
            break
        # extrapolate: the cubic's minimum, kept between 1.01 t and 10 t
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:  # reached the limit without a bracket (zoom is then skipped)
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until a point satisfies the conditions
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # a point too close to the bracket's ends makes little progress: move it 10% of the bracket inside
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos], bracket_g[high_pos] = t, f_new, g_new
            bracket_gtd[high_pos] = gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos], bracket_g[low_pos] = t, f_new, g_new
            bracket_gtd[low_pos] = gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    """L-BFGS (``torch.optim.LBFGS``). ``step(closure)`` needs a closure that clears the gradients, computes the
    loss, calls ``backward()`` and returns the loss; it may be called up to ``max_eval`` times per step.

    :param params: the parameters (one group).
    :param lr: step length multiplier (default 1).
    :param max_iter: iterations per ``step`` (default 20).
    :param max_eval: closure evaluations per ``step`` (default ``max_iter * 5 // 4``).
    :param tolerance_grad: stop when the largest gradient entry is at most this (default 1e-7).
    :param tolerance_change: stop when the step or the change of the loss is below this (default 1e-9).
    :param history_size: curvature pairs kept (default 100).
    :param line_search_fn: None (fixed step ``lr``) or ``"strong_wolfe"``.

    One parameter group only (as in PyTorch). The state (``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``,
    ``H_diag``, ``prev_flat_grad``, ``prev_loss``, ``al``, ``func_evals``, ``n_iter``) is kept under the first
    parameter, with PyTorch's names, so ``state_dict`` / ``load_state_dict`` carry it.
    """

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None):
        lr = _float_arg("lr", lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> Tensor:
        views = [p.new_zeros(p.numel()) if p.grad is None else p.grad.reshape(-1) for p in self._params]
        return cat(views, 0)

    def _add_grad(self, step_size: float, update: Tensor) -> None:
        offset = 0
        for p in self._params:
            numel = p.numel()
            p.add_(update[offset:offset + numel].reshape(p.shape), alpha=step_size)
            offset += numel
        assert offset == self._numel()

    def _clone_param(self) -> list:
        return [p.clone() for p in self._params]

    def _set_param(self, params_data: list) -> None:
        for p, pdata in zip(self._params, params_data):
            p.copy_(pdata)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):
        """Run up to ``max_iter`` iterations; returns the loss the closure gave at the start."""
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        def evaluate():
            with enable_grad():
                return closure()

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max().item() <= tolerance_grad:  # already optimal
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:  # steepest descent
                d = flat_grad.neg()
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:  # the L-BFGS direction: update the memory, then the two-loop recursion
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys.item() > 1e-10:  # keep only pairs with positive curvature
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q = q - al[i] * old_dirs[i]
                r = q * H_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r = r + (al[i] - be_i) * old_stps[i]
                d = r
            prev_flat_grad = flat_grad.clone()
            prev_loss = loss
            # the step length: the first one scaled by the gradient's size
            t = min(1.0, _div(1.0, flat_grad.abs().sum().item())) * lr if state["n_iter"] == 1 else lr
            gtd = _dot(flat_grad, d)  # the directional derivative
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(evaluate, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max().item() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:  # re-evaluate (not in the last iteration: step() gives the loss before)
                    loss = float(evaluate())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max().item() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max().item() <= tolerance_change:  # the step is too small
                break
            if abs(loss - prev_loss) < tolerance_change:  # the loss no longer changes
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        # one evaluation for the parameters and the history: the lazy chains end here (memory stays bounded)
        history = [v._st.data for v in [d, prev_flat_grad, *old_dirs, *old_stps, *ro, *(state.get("al") or ())]
                   if isinstance(v, Tensor)]
        if isinstance(H_diag, Tensor):
            history.append(H_diag._st.data)
        _threads.evaluate([history, take_pending_evals()])
        return orig_loss
