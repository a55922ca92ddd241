"""L-BFGS (with an optional strong-Wolfe line search), following PyTorch's ``torch.optim.LBFGS``.

The step works on flat NumPy vectors. Scalars that PyTorch keeps as 0-d tensors (``t`` after the first
iteration, ``ro``, ``H_diag``, the directional derivatives) are NumPy scalars here, so they round like
PyTorch's (float32 for float32 parameters) and Python floats stay Python floats; the state keeps them as
tracegrad tensors, with the same keys and layout as PyTorch's.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._tensor import Tensor, _wrap
from .optimizer import Optimizer, array_options, as_real, check_lr, count_writes

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through two points with their slopes, clamped to ``bounds``."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search for a step satisfying the strong Wolfe conditions (Nocedal & Wright, algorithms 3.5/3.6)."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    # bracketing phase
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        # extrapolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

    if ls_iter == max_ls:  # reached the maximum number of iterations
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom phase: shrink the bracket until a point satisfies the conditions
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # keep the trial point away from the bracket's ends unless progress stalls
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new

    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def _loss_value(loss) -> float:
    """``float(loss)`` as PyTorch's step takes it under ``no_grad`` (where it does not warn about
    requires_grad)."""
    return float(loss.detach()) if isinstance(loss, Tensor) else float(loss)


def _from_state(value):
    """State entry → working value: a tensor's array (0-d ones as NumPy scalars), lists element-wise."""
    if isinstance(value, Tensor):
        return value._data[()] if value._data.ndim == 0 else value._data
    if isinstance(value, list):
        return [_from_state(v) for v in value]
    return value


def _version_of(value) -> int:
    return value._version if isinstance(value, Tensor) else 0


def _count_writes(value, times: int) -> None:
    """Give a state tensor, rewrapped each step, the version PyTorch's in-place writes left on its own."""
    if isinstance(value, Tensor):
        count_writes(value, times)


def _to_state(value):
    """Working value → state entry: arrays and NumPy scalars become tensors (PyTorch keeps tensors there)."""
    if isinstance(value, np.ndarray):
        return _wrap(value)
    if isinstance(value, np.generic):
        return _wrap(np.asarray(value))
    if isinstance(value, list):
        return [_to_state(v) for v in value]
    return value


class LBFGS(Optimizer):
    _step_switches_grad_mode = False  # (PyTorch's step is in torch.no_grad())

    def __init__(
        self,
        params,
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(
            lr=lr,
            max_iter=max_iter,
            max_eval=max_eval,
            tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change,
            history_size=history_size,
            line_search_fn=line_search_fn,
        )
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    # A complex parameter counts as its ``view_as_real`` pairs: PyTorch's flat gradient and direction are real
    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(2 * p.numel() if p.is_complex() else p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self) -> np.ndarray:
        return np.concatenate(
            [
                as_real(np.zeros(p._data.size, dtype=p._data.dtype) if p._grad is None else p._grad._data)
                .reshape(-1)
                for p in self._params
            ]
        )

    def _add_grad(self, step_size, update: np.ndarray) -> None:
        offset = 0
        alpha = float(step_size)
        for p in self._params:
            param = as_real(p._data)
            numel = param.size
            p._before_write()
            param += alpha * update[offset : offset + numel].reshape(param.shape)
            p._bump_version()
            offset += numel
        if offset != self._numel():
            raise AssertionError(f"Expected offset {offset} to equal {self._numel()}")

    def _clone_param(self) -> list[np.ndarray]:
        return [p._data.copy() for p in self._params]

    def _set_param(self, params_data: list[np.ndarray]) -> None:
        for p, pdata in zip(self._params, params_data, strict=True):
            p._before_write()
            p._data[...] = pdata
            p._bump_version()

    def _directional_evaluate(self, closure: Callable, x: list[np.ndarray], t, d: np.ndarray) -> tuple:
        self._add_grad(t, d)
        loss = _loss_value(self._closure_loss(closure))
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure: Callable):  # noqa: C901 - one loop, as in the reference algorithm
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(self.param_groups)}")
        group = array_options(self.param_groups[0])
        lr = group["lr"]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        def evaluate():
            # (no closure: calling it is torch's error, "'NoneType' object is not callable")
            return self._closure_loss(closure) if closure is not None else closure()

        # the state lives on the first parameter (there is one group)
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = evaluate()
        loss = _loss_value(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:  # already optimal
            return orig_loss

        d, t = _from_state(state.get("d")), _from_state(state.get("t"))
        old_dirs, old_stps = _from_state(state.get("old_dirs")), _from_state(state.get("old_stps"))
        ro, H_diag = _from_state(state.get("ro")), _from_state(state.get("H_diag"))
        prev_flat_grad, prev_loss = _from_state(state.get("prev_flat_grad")), state.get("prev_loss")
        # PyTorch's in-place writes to d (r.add_ per curvature pair) and prev_flat_grad (copy_, kept across steps)
        d_writes = _version_of(state.get("d"))
        prev_writes = _version_of(state.get("prev_flat_grad"))
        # the curvature pairs and H_diag are PyTorch's same tensors from step to step: their versions (1 after a
        # deepcopied state_dict is loaded) go on, those made here start at 0
        pair_writes = {key: [_version_of(v) for v in state.get(key) or []] for key in ("old_dirs", "old_stps", "ro")}
        h_writes = _version_of(state.get("H_diag"))
        if "al" in state:
            state["al"] = _from_state(state["al"])

        n_iter = 0
        opt_cond = False
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                d_writes = 0
                old_dirs, old_stps, ro = [], [], []
                pair_writes = {key: [] for key in pair_writes}
                H_diag = 1
            else:
                # update the curvature pairs, skipping ones that break positive definiteness
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                        for writes in pair_writes.values():
                            writes.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    for writes in pair_writes.values():
                        writes.append(0)
                    H_diag = ys / y.dot(y)
                    h_writes = 0
                # two-loop recursion for the approximate inverse Hessian times the gradient
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += (-al[i]) * old_dirs[i]
                d = r = q * H_diag
                d_writes = num_old
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
                prev_writes += 1
            prev_loss = loss

            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(evaluate, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    # re-evaluate unless this is the last iteration (the caller evaluates next step)
                    loss = _loss_value(evaluate())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break

        if "al" in state:
            state["al"] = _to_state(state["al"])
        for key, value in (
            ("d", d),
            ("t", t),
            ("old_dirs", old_dirs),
            ("old_stps", old_stps),
            ("ro", ro),
            ("H_diag", H_diag),
            ("prev_flat_grad", prev_flat_grad),
            ("prev_loss", prev_loss),
        ):
            state[key] = _to_state(value)
        _count_writes(state.get("d"), d_writes)
        _count_writes(state.get("prev_flat_grad"), prev_writes)
        _count_writes(state.get("H_diag"), h_writes)
        for key, writes in pair_writes.items():
            for value, times in zip(state.get(key) or [], writes):
                _count_writes(value, times)
        return orig_loss
