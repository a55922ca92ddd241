"""Pointwise operators of ``ops/unary.py`` and ``ops/binary.py`` against PyTorch.

Every check runs the same program with tracegrad and torch on identical NumPy inputs and compares
values and dtypes, gradients (with a random cotangent), second derivatives (``create_graph=True``),
backward node names, in-place behaviour and error types and messages. The special functions
(``erf``, ``erfc``, ``erfinv``, ``igamma``) are also checked for float64 accuracy on wide ranges.
"""

from __future__ import annotations

import math

import pytest
from _lib import assert_close, np, run_both, tg, torch

NAN, INF = math.nan, math.inf
RNG = np.random.default_rng(1234)


def _lib_tensor(lib, value, requires_grad=False):
    if isinstance(value, np.ndarray):
        t = lib.tensor(value)
        return t.requires_grad_(True) if requires_grad and value.dtype.kind == "f" else t
    return value


def run(fn, *args, requires_grad=False):
    """fn(lib, *tensors) in both libraries: (ours, theirs)."""
    return tuple(fn(lib, *[_lib_tensor(lib, a, requires_grad) for a in args]) for lib in (tg, torch))


def same(fn, *args, rtol=1e-6, atol=1e-7):
    """Values, shapes and dtypes agree."""
    ours, theirs = run(fn, *args)
    assert_close(ours, theirs, rtol=rtol, atol=atol, check_dtype=True)
    return ours


def same_error(fn, *args):
    """Both libraries raise the same exception type with the same message."""
    with pytest.raises(Exception) as want:
        fn(torch, *[_lib_tensor(torch, a) for a in args])
    with pytest.raises(want.type) as got:
        fn(tg, *[_lib_tensor(tg, a) for a in args])
    assert str(got.value) == str(want.value)


def _dense(t):
    # torch returns "zero tensors" for some second derivatives; make them ordinary zeros to compare
    if isinstance(t, torch.Tensor) and t._is_zerotensor():
        return torch.zeros(t.shape, dtype=t.dtype)
    return t


def grads(fn, *args, second=False):
    """Outputs and input gradients for a fixed random cotangent (and second derivatives if ``second``)."""
    per_lib = []
    for lib in (tg, torch):
        ts = [_lib_tensor(lib, a, requires_grad=True) for a in args]
        diff = [t for t in ts if isinstance(t, lib.Tensor) and t.requires_grad]
        out = fn(lib, *ts)
        cot = lib.tensor(np.random.default_rng(7).standard_normal(tuple(out.shape)))
        gs = lib.autograd.grad(out, diff, cot.to(out.dtype), create_graph=second, allow_unused=True)
        result = [out, *gs]
        if second:
            weight = [None if g is None else lib.tensor(np.random.default_rng(9).standard_normal(tuple(g.shape)))
                      for g in gs]
            total = sum((g * w).sum() for g, w in zip(gs, weight) if g is not None and g.requires_grad)
            if isinstance(total, lib.Tensor):
                result += list(lib.autograd.grad(total, diff, allow_unused=True))
        per_lib.append([_dense(r) for r in result])
    return per_lib


def same_grads(fn, *args, second=False, rtol=1e-7, atol=1e-9):
    ours, theirs = grads(fn, *args, second=second)
    assert_close(ours, theirs, rtol=rtol, atol=atol, check_dtype=True)


def f64(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, size=shape)


def f32(*shape, low=-2.0, high=2.0):
    return f64(*shape, low=low, high=high).astype(np.float32)


def ints(*shape, low=-5, high=6, dtype=np.int64):
    return RNG.integers(low, high, size=shape).astype(dtype)


SPECIAL = np.array([0.0, -0.0, 0.5, -1.5, 2.5, NAN, INF, -INF, 1e-30, 3.0])
BOOLS = np.array([True, False, True])


# ---- unary: values and dtypes --------------------------------------------------------------------------------

UNARY = ["abs", "absolute", "exp2", "expm1", "log1p", "log2", "log10", "rsqrt", "tan", "asin", "acos", "atan",
         "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh",
         "logit", "erf", "erfc", "erfinv", "sign", "sgn", "floor", "ceil", "round", "trunc", "fix", "reciprocal",
         "square", "nan_to_num", "deg2rad", "rad2deg", "positive", "bitwise_not", "isnan", "isinf",
         "isfinite", "isposinf", "isneginf", "signbit", "angle", "conj", "frac", "negative"]


def _dtype_cases():
    return {"float32": SPECIAL.astype(np.float32), "float64": SPECIAL, "int64": np.array([-3, 0, 2, 7]),
            "int32": np.array([-3, 0, 2], dtype=np.int32), "uint8": np.array([0, 3, 250], dtype=np.uint8),
            "bool": BOOLS}


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
def test_unary_values_and_dtypes(name, dtype):
    x = _dtype_cases()[dtype]
    fn = lambda lib, t: getattr(lib, name)(t)
    try:
        fn(torch, torch.tensor(x))
    except (RuntimeError, NotImplementedError, TypeError):
        same_error(fn, x)
        return
    same(fn, x)
    method = getattr(torch.Tensor, name, None)
    if method is not None and name not in ("positive",):
        same(lambda lib, t: getattr(t, name)(), x)


@pytest.mark.parametrize("name", ["sin", "exp", "abs", "erf", "erfinv", "logit", "floor", "sign"])
def test_unary_zero_dim_and_noncontiguous(name):
    same(lambda lib, t: getattr(lib, name)(t), np.array(0.3))
    same(lambda lib, t: getattr(lib, name)(t.t()), f64(3, 4, low=-0.9, high=0.9))
    same(lambda lib, t: getattr(lib, name)(t[::2]), f32(6, low=-0.9, high=0.9))


def test_unary_specific_semantics():
    same(lambda lib, t: lib.round(t), np.array([0.5, 1.5, 2.5, -0.5, -2.5]))  # half to even
    same(lambda lib, t: lib.round(t, decimals=2), f64(5) * 100)
    same(lambda lib, t: lib.round(t, decimals=-2), np.array([1234.5678, -151.0, 49.9], dtype=np.float32))
    same_error(lambda lib, t: lib.round(t, decimals=1), np.array([1, 2]))
    same(lambda lib, t: lib.logit(t, eps=0.1), np.array([0.0, 0.05, 0.5, 0.99, 1.0]))
    same(lambda lib, t: lib.logit(t, 0.25), np.array([0.0, 0.05, 0.5, 0.99, 1.0], dtype=np.float32))
    same(lambda lib, t: lib.nan_to_num(t, nan=1.5, posinf=9.0, neginf=-9.0), SPECIAL)
    same(lambda lib, t: lib.nan_to_num(t, posinf=2.0), SPECIAL.astype(np.float32))
    same(lambda lib, t: lib.sign(t), np.array([NAN, -0.0, 0.0, -INF]))
    same(lambda lib, t: lib.signbit(t), np.array([-0.0, 0.0, -NAN, NAN, -1.0]))
    same(lambda lib, t: lib.angle(t), np.array([-1.0, 0.0, 2.0, NAN]))
    same(lambda lib, t: lib.relu(t), np.array([-1, 0, 3]))
    same(lambda lib, t: lib.erfinv(t), np.array([-1.0, 1.0, 1.5, -0.0, 1 - 1e-15, NAN]))


def test_positive_and_conj_return_input():
    for lib in (tg, torch):
        x = lib.tensor([1.0, -2.0])
        assert lib.positive(x) is x
        assert lib.conj(x) is x and x.conj() is x and x.resolve_conj() is x
        assert not x.is_conj()


# ---- special functions: float64 accuracy ------------------------------------------------------------------------


def test_erf_erfc_accuracy():
    x = np.concatenate([np.linspace(-6, 6, 2001), np.linspace(-0.01, 0.01, 101), [26.5, -27.0, 5.9, 1.0, -1.0]])
    for name in ("erf", "erfc"):
        for values in (x, x[::20]):  # the vectorized path and the small-array path
            ours = getattr(tg, name)(tg.tensor(values)).numpy()
            theirs = getattr(torch, name)(torch.tensor(values)).numpy()
            np.testing.assert_allclose(ours, theirs, rtol=5e-15, atol=0)


def test_erfinv_accuracy():
    y = np.concatenate([np.linspace(-0.999, 0.999, 2001), 1 - np.logspace(-15, -1, 60), [1e-300, -1e-12]])
    for values in (y, y[::30]):
        ours = tg.erfinv(tg.tensor(values)).numpy()
        theirs = torch.erfinv(torch.tensor(values)).numpy()
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=0)
    # round trip through our own erf
    np.testing.assert_allclose(tg.erf(tg.erfinv(tg.tensor(y[:2001]))).numpy(), y[:2001], rtol=1e-14, atol=1e-16)


def test_igamma_values():
    a = np.concatenate([10 ** RNG.uniform(-2, 2.5, 300), [0.0, 0.0, 1.0, 1.0, -1.0, 1.0, INF, 2.0, NAN, INF, 0.0]])
    x = np.concatenate([a[:300] * 10 ** RNG.uniform(-1, 1, 300), [0.0, 1.0, 0.0, INF, 1.0, -1.0, 1.0, INF, 1.0, INF,
                                                                   INF]])
    for name in ("igamma", "igammac"):
        same(lambda lib, s, o, name=name: getattr(lib, name)(s, o), a, x, rtol=1e-8, atol=1e-13)
    same(lambda lib, s, o: lib.igamma(s, o), f32(3, 4, low=0.1, high=3), f32(4, low=0.1, high=3), rtol=1e-5)
    same_error(lambda lib, s, o: lib.igamma(s, o), np.array([1, 2]), np.array([1, 2]))
    same_error(lambda lib, s: lib.igamma(s, 2.0), f64(3))


# ---- unary: gradients ----------------------------------------------------------------------------------------------

UNARY_GRAD = {  # name -> input range avoiding the edges of the domain
    "abs": (-2, 2), "exp2": (-2, 2), "expm1": (-2, 2), "log1p": (-0.9, 2), "log2": (0.1, 3), "log10": (0.1, 3),
    "rsqrt": (0.2, 3), "tan": (-1.2, 1.2), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atan": (-3, 3),
    "sinh": (-2, 2), "cosh": (-2, 2), "asinh": (-3, 3), "acosh": (1.1, 3), "atanh": (-0.9, 0.9),
    "logit": (0.05, 0.95), "erf": (-3, 3), "erfc": (-3, 3), "erfinv": (-0.95, 0.95), "sign": (-2, 2),
    "sgn": (-2, 2), "floor": (-2, 2), "ceil": (-2, 2), "round": (-2, 2), "trunc": (-2, 2), "frac": (-2, 2),
    "reciprocal": (0.3, 2), "square": (-2, 2), "nan_to_num": (-2, 2), "deg2rad": (-2, 2),
    "rad2deg": (-2, 2), "angle": (-2, 2),
}


@pytest.mark.parametrize("name", sorted(UNARY_GRAD))
def test_unary_grad_and_double_grad(name):
    low, high = UNARY_GRAD[name]
    x = f64(3, 4, low=low, high=high)
    fn = lambda lib, t: getattr(lib, name)(t)
    same_grads(fn, x, second=True)
    if not hasattr(torch.Tensor, name + "_"):
        return
    inplace = lambda lib, t: getattr(t.clone(), name + "_")()
    if name in ("asinh", "acosh", "atanh"):  # PyTorch has no derivative for these in-place forms
        def backward(lib, t):  # PyTorch raises at backward time, after recording the in-place node
            leaf = t.requires_grad_(True)
            return lib.autograd.grad(inplace(lib, leaf).sum(), leaf)

        same_error(backward, x)
    else:
        same_grads(inplace, x)  # the in-place form records the same rule


def test_gradient_conventions_at_kinks():
    # abs'(0) = 0, relu'(0) = 0, sign' = 0, rounding ops 0, clamp passes the gradient on [min, max] inclusive
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    for fn in (lambda lib, t: lib.abs(t), lambda lib, t: lib.relu(t), lambda lib, t: lib.sign(t),
               lambda lib, t: lib.clamp(t, 0.0, 1.0), lambda lib, t: lib.clamp(t, min=0.5),
               lambda lib, t: lib.clamp_max(t, 1.0), lambda lib, t: lib.clamp(t, 2.0, 1.0),
               lambda lib, t: lib.nan_to_num(t * lib.tensor([INF, 1.0, NAN, 1.0, -INF], dtype=lib.float64)),
               lambda lib, t: lib.logit(t * 0.5, eps=0.25), lambda lib, t: lib.logit(t - 0.5)):
        same_grads(fn, x)


def test_clamp_forms():
    x, lo, hi = f64(4, 3), f64(3, low=-1.5, high=-0.2), f64(4, 1, low=0.2, high=1.5)
    same_grads(lambda lib, t, a, b: lib.clamp(t, a, b), x, lo, hi, second=True)
    same_grads(lambda lib, t, a, b: lib.clamp(t, b, a), x, lo, hi)  # min > max everywhere: max wins
    same_grads(lambda lib, t, a: lib.clamp_min(t, a), x, lo)
    same_grads(lambda lib, t, b: lib.clamp_max(t, b), x, hi)
    same_grads(lambda lib, t, b: lib.clip(t, max=b), x, hi)
    same_grads(lambda lib, t, a: t.clone().clamp_(min=a), x, lo)
    same(lambda lib, t: lib.clamp(t, 0.5), np.array([1, -2, 3]))  # int input, float bound: float32
    same(lambda lib, t: lib.clamp(t, 0, 1), BOOLS)
    same(lambda lib, t: lib.clamp(t, NAN, 0.5), np.array([2.0, 1.0]))
    same(lambda lib, t: lib.clamp(t, 0.0, 0.5), np.array([NAN, 1.0]))
    same(lambda lib, t: lib.clamp(t, min=lib.tensor(0.5)), np.array([1, -2, 3]))
    same_error(lambda lib, t: lib.clamp(t), x)
    same_error(lambda lib, t: t.clamp_(0.5), np.array([1, 2]))
    ours, theirs = run(lambda lib, t, a: (lib.clamp(t, -1, 1), lib.clamp(t, a), lib.clamp_min(t, 0),
                                          lib.clamp_min(t, a)), x, lo, requires_grad=True)
    assert [type(o.grad_fn).__name__ for o in ours] == [type(o.grad_fn).__name__ for o in theirs]
    assert ours[0].grad_fn._saved_min == -1 and ours[0].grad_fn._saved_max == 1


# ---- binary: values and dtypes ---------------------------------------------------------------------------------

BINARY = {
    "remainder": (-3, 3), "fmod": (-3, 3), "maximum": (-2, 2), "minimum": (-2, 2), "fmax": (-2, 2),
    "fmin": (-2, 2), "atan2": (-2, 2), "arctan2": (-2, 2), "hypot": (-2, 2), "copysign": (-2, 2),
    "xlogy": (0.1, 3), "floor_divide": (-3, 3), "true_divide": (-3, 3), "float_power": (0.2, 2),
    "bitwise_and": None, "bitwise_or": None, "bitwise_xor": None, "bitwise_left_shift": None,
    "bitwise_right_shift": None, "igamma": (0.2, 3), "igammac": (0.2, 3), "greater": (-2, 2),
    "greater_equal": (-2, 2), "less": (-2, 2), "less_equal": (-2, 2), "not_equal": (-2, 2), "multiply": (-2, 2),
    "subtract": (-2, 2), "divide": (-3, 3), "pow": (0.2, 2),
}


def _binary_inputs(dtype):
    if dtype == "float64":
        return f64(2, 1, 4, low=0.3, high=2.5) * RNG.choice([-1, 1], (2, 1, 4)), f64(3, 1, low=0.3, high=2.5)
    if dtype == "float32":
        return f32(2, 1, 4, low=0.3, high=2.5), f32(3, 1, low=0.3, high=2.5) * -1
    if dtype == "int64":
        return ints(2, 1, 4), ints(3, 1, low=1, high=6) * np.array([[1], [-1], [1]])
    if dtype == "uint8":
        return ints(2, 1, 4, low=0, high=255, dtype=np.uint8), ints(3, 1, low=1, high=7, dtype=np.uint8)
    return RNG.random((2, 1, 4)) < 0.5, RNG.random((3, 1)) < 0.5


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool"])
def test_binary_values_and_dtypes(name, dtype):
    a, b = _binary_inputs(dtype)
    fn = lambda lib, s, o: getattr(lib, name)(s, o)
    try:
        fn(torch, torch.tensor(a), torch.tensor(b))
    except (RuntimeError, NotImplementedError, TypeError):
        same_error(fn, a, b)
        return
    rtol = 1e-12 if dtype == "float64" else 1e-6
    same(fn, a, b, rtol=rtol)
    if name != "pow":  # Tensor.pow is installed by _tensor_methods from pointwise.pow (see the report)
        same(lambda lib, s, o: getattr(s, name)(o), a, b, rtol=rtol)


@pytest.mark.parametrize("name", ["remainder", "fmod", "copysign", "xlogy", "bitwise_and", "bitwise_or",
                                  "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "floor_divide",
                                  "pow", "float_power", "div"])
@pytest.mark.parametrize("scalar", [2, -3, 2.5, True])
def test_binary_python_scalar_other(name, scalar):
    for x in (f32(3, 4), ints(3, 4), ints(3, low=0, high=200, dtype=np.uint8), BOOLS):
        fn = lambda lib, s: getattr(lib, name)(s, scalar)
        try:
            fn(torch, torch.tensor(x))
        except (RuntimeError, NotImplementedError, TypeError):
            same_error(fn, x)
            continue
        same(fn, x, rtol=1e-5)


@pytest.mark.parametrize("name", ["remainder", "xlogy", "pow", "float_power", "bitwise_left_shift", "bitwise_and"])
def test_binary_python_scalar_self(name):
    bitwise = name.startswith("bitwise")
    for x in (f64(3, 4, low=0.5, high=2), ints(3, 4, low=1, high=5)):
        if bitwise and x.dtype.kind == "f":
            same_error(lambda lib, o: getattr(lib, name)(2, o), x)
            continue
        same(lambda lib, o: getattr(lib, name)(2, o), x)
        if not bitwise:
            same(lambda lib, o: getattr(lib, name)(1.5, o), x)


def test_division_semantics():
    a = np.array([7.0, -7.0, 7.0, -7.0, 0.3, 1.0, -1.0, 0.0, -4.0])
    b = np.array([2.0, 2.0, -2.0, -2.0, 0.1, 0.0, 0.0, 0.0, 2.0])
    for mode in (None, "trunc", "floor"):
        same(lambda lib, s, o, mode=mode: lib.div(s, o, rounding_mode=mode), a, b)
        same(lambda lib, s, o, mode=mode: lib.divide(s, o, rounding_mode=mode), a.astype(np.float32),
             b.astype(np.float32))
    same(lambda lib, s, o: (lib.remainder(s, o), lib.fmod(s, o), lib.floor_divide(s, o)), a, b)
    ia, ib = np.array([7, -7, 7, -7, -(2 ** 63)]), np.array([2, 2, -2, -2, -1])
    same(lambda lib, s, o: lib.div(s, o, rounding_mode="floor"), ia, ib)  # INT_MIN // -1 wraps
    same(lambda lib, s, o: lib.div(s, o, rounding_mode="trunc"), ia[:4], ib[:4])  # torch traps on INT_MIN / -1
    same(lambda lib, s, o: (lib.remainder(s, o), lib.fmod(s, o), lib.floor_divide(s, o)), ia[:4], ib[:4])
    for fn in (lambda lib, s: lib.div(s, 0, rounding_mode="floor"), lambda lib, s: lib.remainder(s, 0),
               lambda lib, s: lib.fmod(s, lib.tensor([0, 1, 1])), lambda lib, s: lib.floor_divide(s, 0),
               lambda lib, s: lib.div(s, 2, rounding_mode="round"),
               lambda lib, s: lib.div(s > 0, s > 0, rounding_mode="floor"), lambda lib, s: lib.fmod(s > 0, s > 0)):
        same_error(fn, np.array([1, -2, 3]))
    same(lambda lib, s: lib.remainder(s > 0, 2), np.array([1, -2, 3]))


def test_python_operators():
    x, i, u = f64(3, 4, low=0.5, high=3), ints(3, 4, low=1, high=9), ints(3, 4, low=0, high=255, dtype=np.uint8)
    ops = [lambda lib, a, b: a // b, lambda lib, a, b: a % b, lambda lib, a, b: 7 // a, lambda lib, a, b: 7 % a,
           lambda lib, a, b: 2.5 // a, lambda lib, a, b: a // 2.5, lambda lib, a, b: -a % 3]
    bit_ops = [lambda lib, a, b: a & b, lambda lib, a, b: a | b, lambda lib, a, b: a ^ b, lambda lib, a, b: ~a,
               lambda lib, a, b: a << 3, lambda lib, a, b: a >> 1, lambda lib, a, b: 1 << a, lambda lib, a, b: 5 & a,
               lambda lib, a, b: 3 | a, lambda lib, a, b: 6 ^ a, lambda lib, a, b: 256 >> a]
    for op in ops:
        same(op, x, x[::-1].copy())
        same(op, i, i[::-1].copy())
    for k, op in enumerate(bit_ops):
        same(op, i, i[::-1].copy())
        same(op, u, u[::-1].copy())
        if k < 4 or 6 < k < 10:  # shifts are not defined for bool tensors
            same(op, BOOLS, BOOLS[::-1].copy())
    same_error(lambda lib, a: ~a, x)
    same_error(lambda lib, a: +a, BOOLS)
    for lib in (tg, torch):
        t = lib.tensor([1.0])
        assert +t is t
    same_error(lambda lib, a: a & 1, x)
    same_error(lambda lib, a: a << 1, x)
    for op in (lambda lib, a, b: a.__ifloordiv__(b), lambda lib, a, b: a.__imod__(b), lambda lib, a, b: a.__iand__(b),
               lambda lib, a, b: a.__ior__(b), lambda lib, a, b: a.__ixor__(b), lambda lib, a, b: a.__ilshift__(2),
               lambda lib, a, b: a.__irshift__(1)):
        same(lambda lib, a, b, op=op: (op(lib, a, b), a), i, i[::-1].copy())
    assert tg.tensor([1.0]).__and__("x") is NotImplemented


def test_shift_edge_cases():
    same(lambda lib, a, b: (a << b, a >> b), np.array([5, -7, 3, -1]), np.array([-1, 64, 63, 200]))
    same(lambda lib, a, b: (a << b, a >> b), np.array([5, 7, 3], dtype=np.uint8), np.array([1, 8, 7], dtype=np.uint8))
    same(lambda lib, a: (a << 40, a >> 40), np.array([5, -7], dtype=np.int32))
    same(lambda lib, a: a << 1, BOOLS)
    same_error(lambda lib, a: a << a, BOOLS)
    same(lambda lib, a: (a & -1, a | 300), np.array([5, 200], dtype=np.uint8))


def test_pow_overloads():
    x, e = f64(3, 4, low=0.5, high=2), f64(4, low=-1.5, high=1.5)
    ours, theirs = run(lambda lib, a, b: (lib.pow(a, 2), lib.pow(a, b), lib.pow(2.0, b), lib.float_power(a, 2),
                                          lib.float_power(a, b), lib.float_power(2, b), lib.square(a)),
                       x, e, requires_grad=True)
    assert [type(o.grad_fn).__name__ for o in ours] == [type(o.grad_fn).__name__ for o in theirs]
    assert ours[0].grad_fn._saved_exponent == 2 and ours[2].grad_fn._saved_self == 2.0
    for fn in (lambda lib, a, b: lib.pow(a, 2.5), lambda lib, a, b: lib.pow(a, b), lambda lib, a, b: lib.pow(1.7, b),
               lambda lib, a, b: lib.pow(a, 0), lambda lib, a, b: lib.float_power(a, b),
               lambda lib, a, b: lib.float_power(a.float(), 3), lambda lib, a, b: lib.square(a)):
        same_grads(fn, x, e, second=True)
    same_grads(lambda lib, a, b: lib.pow(a, b), np.array([0.0, 0.0, 2.0, 0.0]), np.array([0.0, 2.0, 0.0, -1.0]))
    same_grads(lambda lib, b: lib.pow(0.0, b), np.array([0.0, 2.0, -1.0]))
    same_grads(lambda lib, b: lib.pow(-2.0, b), np.array([1.0, 2.0]))
    i = np.array([5, -7, 3, 1, -1, 0])
    same(lambda lib, a: (lib.pow(a, 2), lib.pow(a, 0.5), lib.pow(2, -a), lib.pow(a, -lib.tensor([2, 2, 2, 3, 3, 1])),
                         lib.square(a), lib.float_power(a, 2)), i)
    same(lambda lib, a: lib.square(a), BOOLS)
    same(lambda lib, a: (2 ** a, 2.5 ** a, a.pow(2), a.pow(a)), i)
    ours, theirs = run(lambda lib, a, b: (2 ** a, a.pow(2), a.pow(b), a.float_power(2)), x, e, requires_grad=True)
    assert [type(o.grad_fn).__name__ for o in ours] == [type(o.grad_fn).__name__ for o in theirs]
    same_error(lambda lib, a: lib.pow(a, -2), i)
    same_error(lambda lib, a: a.clone().float_power_(2), f32(3))
    same_error(lambda lib, a: a.clone().float_power_(2), i)
    same(lambda lib, a: a.clone().float_power_(2), f64(3))


def test_lerp_addcmul_addcdiv():
    a, b, w = f64(4, 3), f64(3), f64(4, 1, low=0, high=1)
    for fn in (lambda lib, s, e, t: lib.lerp(s, e, 0.3), lambda lib, s, e, t: lib.lerp(s, e, 0.7),
               lambda lib, s, e, t: lib.lerp(s, e, t), lambda lib, s, e, t: lib.lerp(s, e, 2),
               lambda lib, s, e, t: lib.addcmul(s, e, t, value=0.5), lambda lib, s, e, t: lib.addcdiv(s, e, t + 2),
               lambda lib, s, e, t: lib.addcdiv(s, e, t + 2, value=-2)):
        same_grads(fn, a, b, w, second=True)
    same(lambda lib, s, e: (lib.lerp(s, e, 0.0), lib.lerp(s, e, 1.0)), f32(5), f32(5))
    same(lambda lib, s, e: lib.lerp(s, e, lib.tensor(0.5, dtype=lib.float64)), f32(3), f32(3))
    i = ints(3, 4)
    same(lambda lib, s: (lib.addcmul(s, s, s, value=2), lib.addcmul(s, s, s, value=2.5),
                         lib.addcmul(s, s, s, value=True)), i)
    same(lambda lib, s, f: lib.addcmul(s, f, f), i, f32(3, 4))
    same_error(lambda lib, s: lib.addcdiv(s, s, s), i)
    same_error(lambda lib, s: lib.lerp(s, s, 0.5), i)
    same_error(lambda lib, s, e: lib.lerp(s, e, 0.5), f32(3), f64(3))
    same_error(lambda lib, s, e, t: lib.lerp(s, e, t), f32(3), f32(3), f64(3))
    ours, theirs = run(lambda lib, s, e, t: (lib.lerp(s, e, 0.5), lib.lerp(s, e, t), lib.addcmul(s, e, t)),
                       a, b, w, requires_grad=True)
    assert [type(o.grad_fn).__name__ for o in ours] == [type(o.grad_fn).__name__ for o in theirs]


# ---- binary: gradients -------------------------------------------------------------------------------------------

BINARY_GRAD = {
    "remainder": lambda lib, a, b: lib.remainder(a, b), "fmod": lambda lib, a, b: lib.fmod(a, b),
    "remainder_scalar": lambda lib, a, b: lib.remainder(a, 1.5), "fmod_scalar": lambda lib, a, b: lib.fmod(a, -1.5),
    "maximum": lambda lib, a, b: lib.maximum(a, b), "minimum": lambda lib, a, b: lib.minimum(a, b),
    "fmax": lambda lib, a, b: lib.fmax(a, b), "fmin": lambda lib, a, b: lib.fmin(a, b),
    "atan2": lambda lib, a, b: lib.atan2(a, b), "hypot": lambda lib, a, b: lib.hypot(a, b),
    "copysign": lambda lib, a, b: lib.copysign(a, b), "copysign_scalar": lambda lib, a, b: lib.copysign(a, -2),
    "xlogy": lambda lib, a, b: lib.xlogy(a, b.abs()), "xlogy_scalar_self": lambda lib, a, b: lib.xlogy(2, b.abs()),
    "xlogy_scalar_other": lambda lib, a, b: lib.xlogy(a, 3.0),
    "div_trunc": lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
    "igamma_other": lambda lib, a, b: lib.igamma(a.detach().abs() + 0.5, b.abs()),
    "igammac_other": lambda lib, a, b: lib.igammac(a.detach().abs() + 0.5, b.abs()),
}


@pytest.mark.parametrize("name", sorted(BINARY_GRAD))
def test_binary_grad_and_double_grad(name):
    a = f64(2, 1, 4, low=0.3, high=2.5) * RNG.choice([-1, 1], (2, 1, 4))
    b = f64(3, 1, low=0.3, high=2.5) * RNG.choice([-1, 1], (3, 1))
    same_grads(BINARY_GRAD[name], a, b, second=True)


def test_extrema_ties_and_nan():
    a, b = np.array([1.0, 2.0, NAN, 1.0, NAN]), np.array([1.0, 3.0, 1.0, NAN, NAN])
    for name in ("maximum", "minimum", "fmax", "fmin"):
        same_grads(lambda lib, s, o, name=name: getattr(lib, name)(s, o), a, b)  # ties split in half for maximum/minimum
    same(lambda lib, s, o: lib.maximum(s, o), np.array([True, False]), np.array([False, False]))
    same(lambda lib, s, o: lib.maximum(s, o), ints(4), f32(4))
    same_error(lambda lib, s: lib.maximum(s, 2.0), a)
    same_error(lambda lib, s: lib.atan2(s, 2.0), a)


def test_xlogy_special_values():
    x = np.array([0.0, 0.0, 0.0, 1.0, 2.0, 0.0])
    y = np.array([NAN, 0.0, INF, 0.0, -1.0, 2.0])
    same(lambda lib, s, o: lib.xlogy(s, o), x, y)
    same(lambda lib, s, o: lib.xlogy(s, o), np.array([1, 0, 2]), np.array([True, False, True]))


def test_in_place_forms():
    x, y = f64(3, 4), f64(4, low=0.5, high=2)
    for name, args in [("remainder_", (y,)), ("fmod_", (1.5,)), ("atan2_", (y,)), ("hypot_", (y,)),
                       ("copysign_", (y,)), ("lerp_", (y, 0.25)), ("addcmul_", (y, y)), ("addcdiv_", (y, y)),
                       ("xlogy_", (y,)), ("clamp_", (-0.5, 0.5)), ("float_power_", (2,)), ("pow_", (y,)),
                       ("true_divide_", (y,)), ("divide_", (y,))]:
        def fn(lib, s, o, name=name, args=args):
            real = tuple(o if a is y else a for a in args)
            t = s.clone()
            out = getattr(t, name)(*real)
            assert out is t
            return out
        same_grads(fn, x, y)
    i = ints(3, 4)
    for name, args in [("remainder_", (3,)), ("floor_divide_", (2,)), ("bitwise_and_", (6,)),
                       ("bitwise_left_shift_", (2,)), ("eq_", (1,)), ("ge_", (0,)), ("logical_and_", (i,)),
                       ("logical_not_", ()), ("bitwise_not_", ()), ("abs_", ()), ("sign_", ()), ("clamp_min_", (0,))]:
        same(lambda lib, s, name=name, args=args: getattr(s, name)(*[lib.tensor(a) if isinstance(a, np.ndarray)
                                                                      else a for a in args]), i)
    same(lambda lib, s, o: (s.clone().eq_(o), s.clone().lt_(o), s.clone().not_equal_(o)), x, y)
    for fn in (lambda lib, s: s.atan2_(s), lambda lib, s: s.copysign_(s), lambda lib, s: s.exp2_(),
               lambda lib, s: s.bitwise_and_(lib.ones(2, 1, 1, dtype=lib.int64)),
               lambda lib, s: s.remainder_(lib.ones(2, 3, 4, dtype=lib.int64)), lambda lib, s: s.clamp_(0.5)):
        same_error(fn, i)
    same_error(lambda lib, s: s.abs_(), BOOLS)


def test_in_place_version_and_graph():
    for lib in (tg, torch):
        x = lib.tensor(f64(3), requires_grad=True)
        y = x * 1
        v = y._version
        y.clamp_(-0.5, 0.5).erf_()
        assert y._version == v + 2 and type(y.grad_fn).__name__ == "ErfBackward0"
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            x.abs_()


def test_out_argument():
    x, y = f64(3, 4), f64(4, low=0.5, high=2)
    for fn in (lambda lib, s, o, out: lib.remainder(s, o, out=out), lambda lib, s, o, out: lib.erf(s, out=out),
               lambda lib, s, o, out: lib.clamp(s, -0.5, 0.5, out=out),
               lambda lib, s, o, out: lib.div(s, o, rounding_mode="floor", out=out),
               lambda lib, s, o, out: lib.pow(s, 2, out=out), lambda lib, s, o, out: lib.lerp(s, o, 0.5, out=out),
               lambda lib, s, o, out: lib.round(s, decimals=1, out=out)):
        def program(lib, s, o, fn=fn):
            out = lib.empty(3, 4, dtype=lib.float64)
            return fn(lib, s, o, out) is out, out

        ours, theirs = run(program, x, y)
        assert ours[0] and theirs[0]
        assert_close(ours[1], theirs[1], rtol=1e-12, atol=1e-12, check_dtype=True)


# ---- no derivative / errors ---------------------------------------------------------------------------------------


def test_igamma_derivative_wrt_input_not_implemented():
    a = tg.tensor([1.5, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match=r"^the derivative for 'igamma: input' is not implemented\.$"):
        tg.igamma(a, tg.tensor([1.0, 1.0])).sum().backward()
    with pytest.raises(NotImplementedError, match="the derivative for 'igammac: input' is not implemented"):
        tg.igammac(a, tg.tensor([1.0, 1.0])).sum().backward()


def test_not_implemented_nodes():
    for fn in (lambda lib, a: lib.floor_divide(a, 2), lambda lib, a: a // 2, lambda lib, a: 2 % a,
               lambda lib, a: lib.remainder(3.0, a)):
        names, messages = [], []
        for lib in (tg, torch):
            a = lib.tensor([1.5, -2.5], requires_grad=True)
            out = fn(lib, a)
            names.append(type(out.grad_fn).__name__)
            with pytest.raises(RuntimeError) as err:
                out.sum().backward()
            messages.append(str(err.value))
        assert names[0] == names[1] and messages[0] == messages[1]


def test_sub_bool_errors_and_where_condition():
    b = BOOLS
    for fn in (lambda lib, s: lib.sub(s, s), lambda lib, s: lib.sub(s, True), lambda lib, s: lib.sub(s, 1),
               lambda lib, s: lib.rsub(s, 1.5), lambda lib, s: lib.subtract(s.long(), s)):
        same_error(fn, b)
    same_error(lambda lib, x: lib.where(x, x, x), f64(3))
    same(lambda lib, x: lib.where(x > 0, x, 0.0), f64(3, 4))
    same(lambda lib, x: lib.where(x > 0, 1.0, 0), f32(3, 4))
    same(lambda lib, x: lib.where(x > 0), f64(3, 4))
    was = tg.is_warn_always_enabled()
    tg.set_warn_always(True)  # (torch gives it once per process: another test may have had it first)
    try:
        with pytest.warns(UserWarning, match="uint8 condition"):
            tg.where(tg.tensor([1, 0], dtype=tg.uint8), tg.tensor([1.0, 2.0]), tg.tensor([3.0, 4.0]))
    finally:
        tg.set_warn_always(was)


def test_isclose_allclose_equal():
    a = np.array([1.0, NAN, INF, -INF, 1.0, 1e-9])
    b = np.array([1.0 + 1e-6, NAN, INF, INF, 1.1, 0.0])
    same(lambda lib, s, o: (lib.isclose(s, o), lib.isclose(s, o, equal_nan=True), lib.isclose(s, o, 0.2, 0),
                            lib.isclose(s, o, rtol=0, atol=0)), a, b)
    same(lambda lib, s, o: lib.isclose(s, o), a.astype(np.float32), b.astype(np.float32))
    same(lambda lib, s, o: lib.isclose(s, o, rtol=0.01, atol=0), np.array([100, 101, -5]), np.array([100, 100, 5]))
    same(lambda lib, s: lib.isclose(s, s), BOOLS)
    same_error(lambda lib, s, o: lib.isclose(s, o), np.array([1, 2]), np.array([1.0, 2.0]))
    same_error(lambda lib, s, o: lib.isclose(s, o, rtol=-1), a, b)
    same_error(lambda lib, s: lib.isclose(s, 1.0), a)
    for lib in (tg, torch):
        x = lib.tensor([1.0, 2.0])
        assert lib.allclose(x, x + 1e-9) is True and x.allclose(x + 1) is False
        assert lib.equal(x, x.clone()) is True and lib.equal(x, x[:1]) is False
        assert lib.equal(lib.tensor([1, 2]), lib.tensor([1.0, 2.0])) is True
        assert lib.equal(lib.tensor([NAN]), lib.tensor([NAN])) is False


def test_double_backward_through_mixed_graph():
    # a chain of several new ops, differentiated twice
    x, y = f64(5, low=0.3, high=0.9), f64(5, low=0.3, high=0.9)
    fn = lambda lib, a, b: (lib.erf(a) * lib.atan2(a, b) + lib.lerp(a, b, b) * lib.expm1(b)
                            - lib.xlogy(a, b) + lib.hypot(a, b).rsqrt() + lib.logit(a))
    same_grads(fn, x, y, second=True)


def test_angle_gradient_as_torchs():
    """angle's gradient: grad * z / |z|^2 * i for complex z (0 at z = 0), zero for real input; and its own
    gradient (create_graph) agrees with torch."""

    def program(lib):
        z = lib.tensor([1 + 2j, -3j, 0j, -0.5 + 0.25j], dtype=lib.complex128, requires_grad=True)
        (g,) = lib.autograd.grad(z.angle().sum(), z, create_graph=True)
        (gg,) = lib.autograd.grad((g.abs() ** 2).sum(), z)
        x = lib.tensor([-1.0, 0.0, 2.0], requires_grad=True)
        x.angle().sum().backward()
        return np.array(g.tolist()), np.array(gg.tolist()), np.array(x.grad.tolist())

    for a, b in zip(*run_both(program)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)  # (NaN at z = 0 in both second-order values)
