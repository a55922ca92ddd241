"""``torch.special``'s orthogonal polynomials: Chebyshev (T, U, V, W and their shifted forms on [0, 1]),
Hermite (physicists' H and probabilists' He), Laguerre and Legendre, each ``f(x, n)``.

They follow PyTorch's CPU kernels (ATen's Math.h) rule for rule, so that special points agree to the bit:
``n`` is cast to the computation dtype and truncated toward zero (NaN, infinite and out-of-range degrees
act as negative ones, giving 0), the edges x = ±1 (x = 0 or 1 for the shifted forms) have closed forms, the
Chebyshev kinds switch to their trigonometric form for larger degrees inside (-1, 1), Hermite degrees above
a per-dtype limit give NaN, and everything else runs the three-term recurrence in the input's dtype
(float32 stays float32, as PyTorch's kernel rounds each step). The recurrence is vectorised over the elements;
its Python loop runs over degrees only, leaving out elements that are done or already NaN.

None is differentiable in PyTorch: the results never require grad.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._tensor import Tensor
from ..backend.dtypes import scalar_type_name
from ._util import default_float, result_dtype
from .registry import defop
from .unary import call


def float_kernel_dtype(kernel_name: str, *operands) -> np.dtype:
    """The dtype PyTorch computes these functions in: the operands' result type, integers and bools promoted
    to the default float; half, bfloat16 and complex have no CPU kernel."""
    dt = result_dtype(*operands)
    if dt.kind in "biu":
        dt = default_float()
    if dt not in (np.float32, np.float64):
        raise NotImplementedError(f"\"{kernel_name}_cpu\" not implemented for '{scalar_type_name(dt)}'")
    return np.dtype(dt)


def _degrees(n, dt: np.dtype) -> np.ndarray:
    """static_cast<int64_t>(n) after n is converted to the kernel's dtype; where the cast is undefined (NaN,
    infinite, beyond int64) x86 yields INT64_MIN, i.e. a negative degree."""
    n = np.asarray(n).astype(dt)
    ok = np.isfinite(n) & (np.abs(n) < 2.0**63)
    return np.where(ok, np.trunc(np.where(ok, n, -1.0)), -1.0).astype(np.int64)


def _recurrence(x: np.ndarray, deg: np.ndarray, p0: np.ndarray, q0: np.ndarray,
                step: Callable[[np.ndarray, int, np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """q after deg - 1 steps of (p, q) <- (q, step(x, j, q, p)), j = 1, 2, ...; elements with deg <= 1 keep q0.

    An element leaves the loop once its steps are done or its value is NaN (PyTorch stops there too, and NaN
    would stay NaN), so the loop is as long as the largest degree still in play."""
    shape = q0.shape
    x, deg, p0, q0 = x.ravel(), deg.ravel(), p0.ravel(), q0.ravel()
    out = q0.copy()
    idx = np.flatnonzero(deg > 1)
    xs, ds, ps, qs = x[idx], deg[idx], p0[idx], q0[idx]
    j = 1
    while idx.size:
        ps, qs = qs, step(xs, j, qs, ps)
        j += 1
        done = (ds <= j) | np.isnan(qs)
        if done.any():
            out[idx[done]] = qs[done]
            keep = ~done
            idx, xs, ds, ps, qs = idx[keep], xs[keep], ds[keep], ps[keep], qs[keep]
    return out.reshape(shape)


def _parity_sign(deg: np.ndarray) -> np.ndarray:
    return np.where(deg % 2 == 0, 1, -1)


# ---- Chebyshev ---------------------------------------------------------------------------------------------


def _chebyshev(kind: str, y: np.ndarray, deg: np.ndarray, plus: np.ndarray, minus: np.ndarray, trig_above: int,
               shifted: bool) -> np.ndarray:
    """One of the four kinds at y (x itself, or 2x - 1 for the shifted forms); ``plus``/``minus`` mark the
    inputs PyTorch tests as the edges y = 1 / y = -1 (for the shifted forms x == 1 / x == 0 exactly)."""
    dt = y.dtype.type
    one = dt(1.0)
    n = deg.astype(y.dtype)  # (int64 * T is computed in T in the C++ kernel)
    sign = _parity_sign(deg)
    odd_n = 2 * deg + 1  # 2n + 1, V's and W's values at their edges
    if kind == "t":
        at_plus, at_minus = np.ones_like(deg), sign
        first = y
    elif kind == "u":
        at_plus, at_minus = deg + 1, sign * (deg + 1)
        first = y + y
    elif kind == "v":
        at_plus, at_minus = np.ones_like(deg), sign * odd_n
        first = y + y - one
    else:
        at_plus, at_minus = odd_n, sign
        first = y + y + one
    theta = np.arccos(y)
    if kind == "t":
        trig = np.cos(n * theta)
    elif kind == "u":
        s = np.sin(theta)
        trig = np.where(s != 0, np.sin((n + one) * theta) / s, (n + one) * np.cos((n + one) * theta) / y)
    elif kind == "v":
        trig = np.where(np.sin(theta / dt(2.0)) != one,
                        np.cos((n + dt(0.5)) * theta) / np.cos(theta / dt(2.0)), sign * odd_n)
    else:
        # (the unshifted kernel tells the y > 0 end apart here, the shifted one does not)
        fallback = sign if shifted else np.where(y > 0, odd_n, sign)
        trig = np.where(np.cos(theta / dt(2.0)) != one,
                        np.sin((n + dt(0.5)) * theta) / np.sin(theta / dt(2.0)), fallback)
    use_trig = (deg > trig_above) & (np.abs(y) < one)
    closed = (deg < 0) | plus | minus | use_trig | (deg <= 1)
    rec = _recurrence(y, np.where(closed, 0, deg), np.ones_like(y), first,
                      lambda v, j, q, p: (v + v) * q - p)
    out = np.where(deg == 1, first, rec)
    out = np.where(deg == 0, one, out)
    out = np.where(use_trig, trig, out)
    out = np.where(minus, at_minus, out)
    out = np.where(plus, at_plus, out)
    return np.where(deg < 0, dt(0.0), out).astype(y.dtype)


def _chebyshev_at(kind: str, shifted: bool) -> tuple[str, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
    name = f"{'shifted_' if shifted else ''}chebyshev_polynomial_{kind}"
    trig_above = {"t": 6, "u": 6, "v": 6, "w": 4}[kind] if shifted else {"t": 6, "u": 8, "v": 8, "w": 8}[kind]

    def fn(x, deg):
        if shifted:
            return _chebyshev(kind, x + x - x.dtype.type(1.0), deg, x == 1, x == 0, trig_above, True)
        return _chebyshev(kind, x, deg, x == 1, x == -1, trig_above, False)

    return name, fn


# ---- Hermite, Laguerre, Legendre ---------------------------------------------------------------------------

_HERMITE_LIMIT = {np.dtype(np.float32): 128, np.dtype(np.float64): 512}  # PyTorch's getHermitianLimit


def _hermite(x: np.ndarray, deg: np.ndarray, physicists: bool) -> np.ndarray:
    dt = x.dtype.type
    first = x + x if physicists else x
    if physicists:  # H_{j+1} = 2x H_j - 2j H_{j-1}

        def step(v, j, q, p):
            return (v + v) * q - dt(2 * j) * p
    else:  # He_{j+1} = x He_j - j He_{j-1}

        def step(v, j, q, p):
            return v * q - dt(j) * p

    too_high = deg > _HERMITE_LIMIT[x.dtype]
    rec = _recurrence(x, np.where(too_high, 0, deg), np.ones_like(x), first, step)
    out = np.where(too_high, dt(np.nan), rec)
    out = np.where(deg == 1, first, out)
    out = np.where(deg == 0, dt(1.0), out)
    return np.where(deg < 0, dt(0.0), out).astype(x.dtype)


def _laguerre(x: np.ndarray, deg: np.ndarray) -> np.ndarray:
    dt = x.dtype.type
    one = dt(1.0)

    def step(v, j, q, p):  # L_{j+1} = ((2j + 1 - x) L_j - j L_{j-1}) / (j + 1)
        return ((dt(2 * j) + (one - v)) * q - dt(j) * p) / dt(j + 1)

    rec = _recurrence(x, deg, np.ones_like(x), one - x, step)
    out = np.where((x == 0) | (deg == 0), one, rec)
    return np.where(deg < 0, dt(0.0), out).astype(x.dtype)


def _legendre(x: np.ndarray, deg: np.ndarray) -> np.ndarray:
    dt = x.dtype.type

    def step(v, j, q, p):  # P_{j+1} = ((2j + 1) x P_j - j P_{j-1}) / (j + 1)
        return (dt(2 * j + 1) * v * q - dt(j) * p) / dt(j + 1)

    edge = np.abs(x) == 1
    rec = _recurrence(x, np.where(edge, 0, deg), np.ones_like(x), x.copy(), step)
    out = np.where(deg == 0, dt(1.0), rec)
    out = np.where(edge, np.where((x > 0) | (deg % 2 == 0), dt(1.0), dt(-1.0)), out)
    return np.where(deg < 0, dt(0.0), out).astype(x.dtype)


def _kernel(name: str, fn: Callable[[np.ndarray, np.ndarray], np.ndarray]):
    """The kernel of ``fn(x, degrees)``: the operands broadcast, in the dtype PyTorch computes in."""

    def kernel(x, n):
        dt = float_kernel_dtype(name, x, n)
        x, deg = np.broadcast_arrays(np.asarray(x).astype(dt), _degrees(n, dt))
        with np.errstate(all="ignore"):
            return fn(np.ascontiguousarray(x), np.ascontiguousarray(deg))

    return name, kernel


# ---- operators ---------------------------------------------------------------------------------------------


def _polynomial(name: str, kernel) -> Callable[..., Tensor]:
    """PyTorch's three overloads of ``special_<name>`` (either argument may be a number, which does not
    promote) and the public function choosing among them; no derivative: results never require grad."""
    both = defop(f"special_{name}(Tensor x, Tensor n) -> Tensor", kernel, differentiable=())
    number_x = defop(f"special_{name}.x_scalar(Scalar x, Tensor n) -> Tensor", kernel, differentiable=())
    number_n = defop(f"special_{name}.n_scalar(Tensor x, Scalar n) -> Tensor", kernel, differentiable=())

    def polynomial(x: Tensor | float, n: Tensor | float, *, out: Tensor | None = None) -> Tensor:
        if not isinstance(x, Tensor):
            if not isinstance(n, Tensor):
                raise TypeError(f"special_{name}() received an invalid combination of arguments - got "
                                f"({type(x).__name__}, {type(n).__name__}), but expected one of:\n"
                                " * (Tensor x, Tensor n, *, Tensor out = None)\n"
                                " * (Number x, Tensor n, *, Tensor out = None)\n"
                                " * (Tensor x, Number n, *, Tensor out = None)\n")
            return call(number_x, out, x, n)
        return call(both if isinstance(n, Tensor) else number_n, out, x, n)

    polynomial.__name__ = polynomial.__qualname__ = name
    polynomial.__doc__ = f"``torch.special.{name}(x, n)`` (n truncated to an integer, as PyTorch's)."
    return polynomial


chebyshev_polynomial_t = _polynomial(*_kernel(*_chebyshev_at("t", False)))
chebyshev_polynomial_u = _polynomial(*_kernel(*_chebyshev_at("u", False)))
chebyshev_polynomial_v = _polynomial(*_kernel(*_chebyshev_at("v", False)))
chebyshev_polynomial_w = _polynomial(*_kernel(*_chebyshev_at("w", False)))
shifted_chebyshev_polynomial_t = _polynomial(*_kernel(*_chebyshev_at("t", True)))
shifted_chebyshev_polynomial_u = _polynomial(*_kernel(*_chebyshev_at("u", True)))
shifted_chebyshev_polynomial_v = _polynomial(*_kernel(*_chebyshev_at("v", True)))
shifted_chebyshev_polynomial_w = _polynomial(*_kernel(*_chebyshev_at("w", True)))
hermite_polynomial_h = _polynomial(*_kernel("hermite_polynomial_h", lambda x, d: _hermite(x, d, True)))
hermite_polynomial_he = _polynomial(*_kernel("hermite_polynomial_he", lambda x, d: _hermite(x, d, False)))
laguerre_polynomial_l = _polynomial(*_kernel("laguerre_polynomial_l", _laguerre))
legendre_polynomial_p = _polynomial(*_kernel("legendre_polynomial_p", _legendre))

PUBLIC: dict = {}
METHODS: dict = {}
