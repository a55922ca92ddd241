"""Muon (momentum, then orthogonalisation by a Newton–Schulz iteration), following torch 2.13's single-tensor
update (``torch.optim._muon``) op for op, for 2-D parameters.

The momentum and the parameter's update run as tracegrad's tensor operations, which round as PyTorch's per-tensor
CPU kernels do (a half parameter, a gradient of another dtype). torch runs the Newton–Schulz iteration in bfloat16,
which tracegrad has no dtype for; its arithmetic is emulated: values are kept in float32 arrays rounded to bfloat16
(round to nearest even) wherever torch stores a bfloat16 tensor, and each operation computes in float32, as torch's
CPU kernels do, before that rounding. Its matrix products sum in the order of the kernel torch picks
(``_bf16_addmm``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor, _wrap
from ..autograd.grad_mode import no_grad
from ._multi_tensor import to_scalar
from .optimizer import Optimizer, checked_grads_of

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5

_F32 = np.float32
# ATen hands a bfloat16 product to oneDNN above this many multiply-adds (m * n * k), else to its own loops
_ONEDNN_MIN_WORK = 16 * 16 * 16
_DOT_LANES = 8  # the float lanes of ATen's bfloat16 dot product (its AVX2 Vectorized<float>)


def _bf16(x: np.ndarray | float) -> np.ndarray:
    """Values rounded to the nearest bfloat16 (ties to even) through float32, as c10's conversions go (a double is
    made a float first), kept as float32; NaN stays NaN."""
    a = np.asarray(x, dtype=_F32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16).astype(np.uint32)
    out = rounded.view(_F32)
    return np.where(np.isnan(a), a, out)


def _products(a: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    """The k outer products of ``a @ b``'s terms, exact in float32 (bfloat16 factors have 8 significant bits)."""
    return [np.multiply.outer(a[:, i], b[i, :]) for i in range(a.shape[1])]


def _sum_sequentially(terms: list[np.ndarray]) -> np.ndarray:
    acc = np.zeros_like(terms[0])
    for t in terms:
        acc += t
    return acc


def _sum_four_partials(terms: list[np.ndarray]) -> np.ndarray:
    """ATen's ``cpublas`` ``sum``: four partial sums over the terms in turn (a tail into the first), then folded in
    order."""
    partials = [np.zeros_like(terms[0]) for _ in range(4)]
    whole = len(terms) - len(terms) % 4
    for i, t in enumerate(terms[:whole]):
        partials[i % 4] += t
    for t in terms[whole:]:
        partials[0] += t
    return _sum_sequentially(partials)


def _halving_fold(lanes: list[np.ndarray]) -> np.ndarray:
    while len(lanes) > 1:
        half = len(lanes) // 2
        lanes = [lanes[i] + lanes[i + half] for i in range(half)]
    return lanes[0]


def _sum_vectorized_dot(terms: list[np.ndarray]) -> np.ndarray:
    """ATen's bfloat16 dot product in float arithmetic: blocks of 8 registers of float lanes, folded by halves;
    then chunks of two lanes' widths into one register, folded by halves; then the rest one by one."""
    lanes, width = _DOT_LANES, 2 * _DOT_LANES
    main = len(terms) - len(terms) % (8 * lanes)
    registers = [[np.zeros_like(terms[0]) for _ in range(lanes)] for _ in range(8)]
    for i, t in enumerate(terms[:main]):
        registers[(i % (8 * lanes)) // lanes][i % lanes] += t
    total = _halving_fold([_halving_fold(r) for r in registers]) if main else np.zeros_like(terms[0])
    tail_end = main + (len(terms) - main) // width * width
    tail = [np.zeros_like(terms[0]) for _ in range(lanes)]
    for i in range(main, tail_end):
        tail[(i - main) % lanes] += terms[i]
    total = total + _halving_fold(tail)
    for t in terms[tail_end:]:
        total = total + t
    return total


def _small_product_in_aten_order(a: np.ndarray, b: np.ndarray, a_rows: bool, b_rows: bool) -> np.ndarray:
    """``a @ b`` summed term by term in the order of ATen's own bfloat16 loops, which the layouts pick."""
    terms = _products(a, b)
    if a_rows == b_rows:  # (both as they are, or both transposed: its loops over four partial sums)
        return _sum_four_partials(terms)
    if a_rows:  # (the second transposed: a dot product of two rows)
        return _sum_vectorized_dot(terms)
    return _sum_sequentially(terms)


def _bf16_addmm(c: np.ndarray | None, a: np.ndarray, b: np.ndarray, a_rows: bool, b_rows: bool, beta: float = 0.0,
                alpha: float = 1.0) -> np.ndarray:
    """``beta * c + alpha * (a @ b)`` of bfloat16 matrices (``c`` None: a plain product) as torch's CPU kernels
    compute it: each dot product summed in float in the order of the kernel the sizes and the operands' layouts
    (``a_rows``, ``b_rows``: row-major) pick, then scaled and added in float and rounded to bfloat16 once."""
    m, k = a.shape
    if m * b.shape[1] * k > _ONEDNN_MIN_WORK:
        # oneDNN's order (pairs of terms through vdpbf16ps, then its blocking) is not reproduced exactly, and an
        # emulation term by term costs k products of the result's size: a float32 product instead, which can
        # differ from torch's in the last bfloat16 bit of a few elements
        dot = np.matmul(a, b)
    else:
        dot = _small_product_in_aten_order(a, b, a_rows, b_rows)
    out = _F32(alpha) * dot if alpha != 1 else dot
    if c is not None and beta != 0:
        out = _F32(beta) * c + out
    return _bf16(out)


def _zeropower_via_newtonschulz(grad: np.ndarray, ns_coefficients: tuple[float, float, float], ns_steps: int,
                                eps: float) -> np.ndarray:
    """An approximately orthogonal matrix with ``grad``'s singular vectors (bfloat16 values, float32 array)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    x = _bf16(grad)
    tall = grad.shape[0] > grad.shape[1]
    rows = not tall  # (torch transposes a tall matrix as a view: column-major until the first addmm makes one)
    if tall:
        x = x.T
    wide = x.astype(np.float64)
    norm = _bf16(np.float32(np.sqrt(np.sum(wide * wide))))
    x = _bf16(x / max(norm, _bf16(np.float32(eps))))
    for _ in range(ns_steps):
        gram = _bf16_addmm(None, x, x.T, rows, not rows)
        update = _bf16_addmm(gram, gram, gram, True, True, beta=b, alpha=c)
        x = _bf16_addmm(x, update, x, True, rows, beta=a)
        rows = True
    return x.T if tall else x


def _adjust_lr(lr: Any, adjust_lr_fn: str | None, param_shape: tuple[int, ...]) -> Any:
    rows, cols = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, rows / cols))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(rows, cols))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    _step_switches_grad_mode = False  # (PyTorch's step is in torch.no_grad())

    def __init__(
        self,
        params,
        lr: float | Tensor = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: tuple[float, float, float] = (DEFAULT_A, DEFAULT_B, DEFAULT_C),
        eps: float = EPS,
        ns_steps: int = DEFAULT_NS_STEPS,
        adjust_lr_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not lr >= 0.0:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not momentum >= 0.0:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not weight_decay >= 0.0:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum, "nesterov": nesterov,
                    "ns_coefficients": ns_coefficients, "eps": eps, "ns_steps": ns_steps,
                    "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a parameter with size: "
                                     f"{p.size()}")

    def _init_group_state(self, group: dict[str, Any]) -> None:
        """PyTorch's ``_init_group``: each parameter with a gradient checked, then given its momentum buffer."""
        for p, grad in checked_grads_of(group, "Muon"):
            state = self.state[p]
            if "momentum_buffer" not in state:
                state["momentum_buffer"] = grad.new_zeros(grad.shape)

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                self._init_group_state(group)
                for p in group["params"]:
                    if p._grad is not None:
                        _update(p, self.state[p]["momentum_buffer"], group)
        return loss


def _update(param: Tensor, buf: Tensor, group: dict[str, Any]) -> None:
    """PyTorch's ``_single_tensor_muon`` for one parameter (a tensor lr stays a tensor)."""
    lr, momentum = to_scalar(group["lr"]), group["momentum"]
    grad = param._grad
    if grad.ndim != 2:
        raise ValueError("Param gradient must be a 2D matrix")
    buf.lerp_(grad, 1 - momentum)
    update = grad.lerp(buf, momentum) if group["nesterov"] else buf
    ortho = _zeropower_via_newtonschulz(update._data, group["ns_coefficients"], group["ns_steps"], group["eps"])
    adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], tuple(param.shape))
    param.mul_(1 - lr * group["weight_decay"])
    param.add_(_wrap(ortho), alpha=-adjusted_lr)
