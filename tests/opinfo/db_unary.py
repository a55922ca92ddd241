"""Pointwise unary (and small pointwise n-ary) operators."""

from __future__ import annotations

import numpy as np

from .core import COMPLEX, FLOATS, FLOATS_INT, Arr, Maker, OpInfo, SampleInput, is_complex, is_floating, is_inexact


def unary_samples(low: float = -2.0, high: float = 2.0, exclude_zero: bool = False,
                  int_low: int = -5, int_high: int = 6, complex_range: tuple[float, float] | None = None,
                  **kwargs) -> callable:
    """A 2-D contiguous tensor, a transposed (non-contiguous) one and a 0-d one. ``complex_range`` replaces
    ``(low, high)`` (for both parts) in complex runs whose domain differs (poles and branch cuts off the real
    axis)."""

    def gen(m: Maker):
        if is_complex(m.dtype) and complex_range is not None:
            kw = dict(low=complex_range[0], high=complex_range[1], exclude_zero=exclude_zero)
        elif is_inexact(m.dtype):
            kw = dict(low=low, high=high, exclude_zero=exclude_zero)
        else:
            kw = dict(low=int_low, high=int_high, exclude_zero=exclude_zero)
        yield SampleInput("3x4", (m(3, 4, **kw),), dict(kwargs))
        yield SampleInput("noncontig_T_4x3", (m(4, 3, layout="T", **kw),), dict(kwargs))
        yield SampleInput("0d", (m(**kw),), dict(kwargs))

    return gen


def _unary(name: str, dtypes=FLOATS, *, inplace: bool = True, aliases: tuple[str, ...] = (),
           domain: str = "", differentiable: bool = True, **sample_kw) -> OpInfo:
    return OpInfo(
        name,
        unary_samples(**sample_kw),
        dtypes=dtypes,
        differentiable=differentiable,
        inplace=f"Tensor.{name}_" if inplace else None,
        supports_out=True,
        aliases=(f"Tensor.{name}",) + aliases,
        domain=domain,
    )


# Integer inputs of transcendental ops promote to the default float dtype: worth one int64 run each. Complex
# runs (complex64 and complex128) where torch accepts complex input; the complex domains keep the samples away
# from branch cuts and poles (log/sqrt: right half-plane; asin/acos: |Re z| < 1; atan: |Im z| < 1, away from the
# branch points ±i; tanh: |Im z| < π/2).
FI_C = FLOATS_INT + COMPLEX
F_C = FLOATS + COMPLEX
UNARY_OPS = [
    _unary("neg", FI_C + ("int32",), aliases=("negative",)),
    _unary("abs", FI_C, aliases=("absolute",), exclude_zero=True, domain="|x| >= 0.25 (kink at 0)"),
    _unary("exp", FI_C),
    _unary("exp2", FI_C),
    _unary("expm1", FI_C),
    _unary("log", FI_C, low=0.1, high=3.0, int_low=1, domain="x > 0 (complex: both parts > 0)"),
    _unary("log1p", FI_C, low=-0.9, high=2.0, int_low=0, domain="x > -1 (complex: Re x > -1)"),
    _unary("sinc", FI_C, inplace=True),
    _unary("lgamma", FLOATS_INT, inplace=False, low=0.3, high=4.0, int_low=1, domain="x > 0 (away from the poles)"),
    _unary("digamma", FLOATS_INT, inplace=False, low=0.3, high=4.0, int_low=1, domain="x > 0 (away from the poles)"),
    _unary("log2", F_C, low=0.1, high=3.0, domain="x > 0"),
    _unary("log10", F_C, low=0.1, high=3.0, domain="x > 0"),
    _unary("sqrt", FI_C, low=0.1, high=3.0, int_low=0, domain="x > 0 (gradient at 0 is inf)"),
    _unary("rsqrt", F_C, low=0.1, high=3.0, domain="x > 0"),
    _unary("sin", FI_C),
    _unary("cos", FI_C),
    _unary("tan", F_C, low=-1.2, high=1.2, domain="|x| < pi/2"),
    _unary("asin", F_C, low=-0.95, high=0.95, aliases=("arcsin",), domain="|x| < 1"),
    _unary("acos", F_C, low=-0.95, high=0.95, aliases=("arccos",), domain="|x| < 1"),
    _unary("atan", FI_C, aliases=("arctan",), complex_range=(-0.8, 0.8)),
    _unary("sinh", F_C),
    _unary("cosh", F_C),
    _unary("tanh", FI_C, complex_range=(-1.2, 1.2)),
    _unary("sigmoid", FI_C),
    _unary("erf", FLOATS_INT),
    _unary("erfc", FLOATS),
    _unary("sign", FLOATS_INT),
    _unary("floor", FLOATS_INT),
    _unary("ceil", FLOATS_INT),
    _unary("trunc", FLOATS_INT, aliases=("fix",)),
    _unary("frac", FLOATS),
    _unary("reciprocal", FI_C, exclude_zero=True, domain="|x| >= 0.25"),
    _unary("square", FI_C),
]


def _polygamma_samples(m: Maker):
    yield SampleInput("n1_3x4", (1, m(3, 4, low=0.3, high=4.0)))
    yield SampleInput("n2_noncontig", (2, m(4, 3, low=0.5, high=3.0, layout="T")))


def _logit_samples(m: Maker):
    yield SampleInput("3x4", (m(3, 4, low=0.05, high=0.95),))
    yield SampleInput("noncontig_T_eps", (m(4, 3, low=0.05, high=0.95, layout="T"),), {"eps": 0.1})
    yield SampleInput("strided_eps0", (m(5, low=0.05, high=0.95, layout="strided"),), {"eps": 0.0})


def _round_samples(m: Maker):
    yield SampleInput("3x4", (m(3, 4, low=-5, high=5),))
    yield SampleInput("noncontig_T", (m(4, 3, low=-5, high=5, layout="T"),))
    if is_floating(m.dtype):  # decimals is only defined for floating inputs
        yield SampleInput("decimals2", (m(3, 4, low=-5, high=5),), {"decimals": 2})


def _nan_to_num_samples(m: Maker):
    v = m.values((3, 4))
    v[0, 0], v[1, 2], v[2, 3] = np.nan, np.inf, -np.inf
    if is_complex(m.dtype):  # non-finite imaginary parts (replaced part by part)
        v[0, 1], v[2, 0] = complex(0.5, np.nan), complex(-np.inf, np.inf)
    yield SampleInput("default", (Arr(v),))
    w = m.values((4, 3))
    w[0, 1], w[2, 0], w[3, 2] = np.nan, np.inf, -np.inf
    if is_complex(m.dtype):
        w[1, 1], w[3, 0] = complex(np.nan, -np.inf), complex(1.5, np.inf)
    yield SampleInput("noncontig_T_values", (Arr(w, "T"),), {"nan": 0.5, "posinf": 10.0, "neginf": -10.0})
    yield SampleInput("finite", (m(2, 3),), {"nan": 1.0})


def _pow_samples(m: Maker):
    if is_inexact(m.dtype):
        yield SampleInput("tensor_scalar", (m(3, 4, low=0.5, high=2.0), 2.5))
        yield SampleInput("bcast_noncontig", (m(4, 3, low=0.5, high=2.0, layout="T"), m(3, low=-1.5, high=1.5)))
        yield SampleInput("scalar_base", (1.7, m(2, 3, layout="strided")))
    else:
        # int ** int stays int; int ** float promotes; negative int exponents are an error in torch
        yield SampleInput("int_int", (m(3, 4, low=-3, high=4), 3))
        yield SampleInput("int_tensor_exp", (m(3, 4, low=1, high=4), m(4, low=0, high=3)))
        yield SampleInput("int_float_exp", (m(2, 3, low=1, high=5), 0.5))


def _clamp_samples(m: Maker):
    if is_floating(m.dtype):
        yield SampleInput("scalars", (m(3, 4),), {"min": -0.5, "max": 0.7})
        yield SampleInput("tensor_bounds_bcast", (m(4, 3, layout="T"),),
                          {"min": m(3, low=-1.5, high=-0.2), "max": m(4, 1, low=0.2, high=1.5)})
        yield SampleInput("max_only", (m(2, 5, layout="strided"),), {"max": 0.3})
    else:
        yield SampleInput("scalars", (m(3, 4),), {"min": -2, "max": 3})
        yield SampleInput("min_only", (m(4, 3, layout="T"),), {"min": 0})
        yield SampleInput("float_bound_int_input", (m(2, 3),), {"min": 0.5})


def _lerp_samples(m: Maker):
    yield SampleInput("scalar_weight", (m(3, 4), m(3, 4), 0.3))
    yield SampleInput("tensor_weight_bcast", (m(4, 3, layout="T"), m(3), m(4, 1, low=0.0, high=1.0)))
    yield SampleInput("strided", (m(2, 3, layout="strided"), m(2, 3), 1.5))


def _addc_samples(div: bool):
    def gen(m: Maker):
        kw = dict(exclude_zero=True)
        yield SampleInput("default", (m(3, 4), m(3, 4), m(3, 4, **kw)))
        v = (0.5 - 0.25j if is_complex(m.dtype) else 0.5) if is_inexact(m.dtype) else 2
        yield SampleInput("bcast_noncontig_value", (m(4, 3, layout="T"), m(3), m(4, 1, **kw)), {"value": v})
        yield SampleInput("bcast_tensor_args", (m(3), m(2, 1), m(2, 3, layout="strided", **kw)), {"value": -v})
    return gen


def _where_samples(m: Maker):
    yield SampleInput("bcast", (m.mask(3, 4), m(3, 4), m(4)))
    yield SampleInput("noncontig", (m.mask(4, 3, layout="T"), m(4, 3, layout="T"), m(4, 3, layout="strided")))
    other = 0.5 if is_inexact(m.dtype) else 2.5  # int tensor with a float scalar promotes to float32
    yield SampleInput("scalar_other", (m.mask(2, 3), m(2, 3), other),
                      skips={"out": "torch.where has no out= overload with a scalar other"})


POINTWISE_OPS = [
    OpInfo("polygamma", _polygamma_samples, domain="x > 0 (away from the poles)"),
    OpInfo("logit", _logit_samples, inplace="Tensor.logit_", supports_out=True, aliases=("Tensor.logit",),
           domain="x in (0, 1) away from the eps clamp edges"),
    OpInfo("round", _round_samples, dtypes=FLOATS_INT, inplace="Tensor.round_", supports_out=True,
           aliases=("Tensor.round",)),
    # (complex64 only: torch computes nan_to_num of complex input but refuses to differentiate it)
    OpInfo("nan_to_num", _nan_to_num_samples, dtypes=FLOATS + ("complex64",), inplace="Tensor.nan_to_num_",
           supports_out=True, aliases=("Tensor.nan_to_num",), domain="samples contain nan/inf/-inf"),
    OpInfo("pow", _pow_samples, dtypes=FI_C, inplace="Tensor.pow_", supports_out=True,
           domain="positive base for non-integer exponents (complex: both parts positive)"),
    OpInfo("clamp", _clamp_samples, dtypes=FLOATS_INT, inplace="Tensor.clamp_", supports_out=True,
           aliases=("Tensor.clamp", "clip")),
    OpInfo("lerp", _lerp_samples, dtypes=F_C, inplace="Tensor.lerp_", supports_out=True, aliases=("Tensor.lerp",)),
    OpInfo("addcmul", _addc_samples(div=False), dtypes=FI_C, inplace="Tensor.addcmul_",
           supports_out=True, aliases=("Tensor.addcmul",)),
    OpInfo("addcdiv", _addc_samples(div=True), dtypes=F_C, inplace="Tensor.addcdiv_", supports_out=True,
           aliases=("Tensor.addcdiv",), domain="tensor2 away from 0"),
    OpInfo("where", _where_samples, dtypes=FI_C, supports_out=True,
           notes="condition is bool, so never differentiable"),
]

def _special(name: str, dtypes=FLOATS, domain: str = "", **sample_kw) -> OpInfo:
    """A ``torch.special`` function of one tensor (no method, no in-place form)."""
    return OpInfo(f"special.{name}", unary_samples(**sample_kw), dtypes=dtypes, supports_out=True, domain=domain)


def _xlog1py_samples(m: Maker):
    yield SampleInput("bcast", (m(3, 4), m(4, low=-0.9, high=2.0)))
    yield SampleInput("noncontig_T", (m(4, 3, layout="T"), m(4, 3, low=-0.9, high=2.0, layout="T")))
    yield SampleInput("scalar_other", (m(2, 3, layout="strided"), 0.5))


def _zeta_samples(m: Maker):
    yield SampleInput("bcast", (m(3, 4, low=1.5, high=4.0), m(4, low=0.5, high=3.0)))
    yield SampleInput("noncontig_T", (m(4, 3, low=2.0, high=5.0, layout="T"), m(4, 3, low=1.0, high=4.0)))


def _multigammaln_samples(m: Maker):
    yield SampleInput("p1", (m(3, 4, low=0.5, high=4.0), 1))
    yield SampleInput("p3_noncontig", (m(4, 3, low=1.5, high=4.0, layout="T"), 3))


SPECIAL_OPS = [
    _special("entr", low=0.1, high=3.0, domain="x > 0 (the gradient is -inf at 0)"),
    _special("ndtr", FLOATS_INT),
    _special("log_ndtr", FLOATS_INT, low=-6.0, high=3.0),
    _special("ndtri", low=0.05, high=0.95, domain="0 < p < 1"),
    _special("erfcx", FLOATS_INT, low=-3.0, high=3.0),
    _special("i0e", FLOATS_INT, low=-4.0, high=4.0),
    _special("i1", FLOATS_INT, low=-4.0, high=4.0),
    _special("i1e", FLOATS_INT, low=-4.0, high=4.0),
    OpInfo("i0", unary_samples(low=-4.0, high=4.0), dtypes=FLOATS_INT, inplace="Tensor.i0_", supports_out=True,
           aliases=("Tensor.i0", "special.i0")),
    OpInfo("special.xlog1py", _xlog1py_samples, supports_out=True, domain="other > -1"),
    OpInfo("special.zeta", _zeta_samples, nondiff_args=frozenset({0}), supports_out=True,
           domain="x > 1, q > 0; PyTorch has no derivative for x", supports_gradgrad=False,
           gradgrad_skip_reason="the gradient of zeta(x, q) in q needs zeta's derivative in x, which PyTorch "
                                "does not implement"),
    OpInfo("special.multigammaln", _multigammaln_samples, supports_out=True, aliases=("mvlgamma",),
           domain="x > (p - 1) / 2"),
]

OPS = UNARY_OPS + POINTWISE_OPS + SPECIAL_OPS
