"""Reductions (with dim / keepdim / full forms), scans, and sorting-like operators."""

from __future__ import annotations

from .core import COMPLEX, FLOATS, FLOATS_INT, Arr, DType, Maker, OpInfo, SampleInput, is_complex, is_inexact

_NO_FULL_OUT = {"out": "the full-reduction overload has no out= variant"}


def _sum_samples(m: Maker):
    yield SampleInput("full", (m(3, 4),), skips=_NO_FULL_OUT)
    yield SampleInput("noncontig_dim_keepdim", (m(4, 3, layout="T"),), {"dim": 1, "keepdim": True})
    dt = ("complex128" if is_complex(m.dtype) else "float64") if is_inexact(m.dtype) else "int32"
    yield SampleInput("strided_dims_dtype", (m(2, 3, 4, layout="strided"), (0, -1)), {"dtype": DType(dt)})


def _mean_samples(m: Maker):
    yield SampleInput("full", (m(3, 4),), skips=_NO_FULL_OUT)
    yield SampleInput("noncontig_dim_keepdim", (m(4, 3, layout="T"), 0), {"keepdim": True})
    yield SampleInput("strided_dims", (m(2, 3, 4, layout="strided"),), {"dim": (-1, 0)})


def _prod_samples(m: Maker):
    yield SampleInput("full", (m(3, 4, low=0.5, high=1.5) if is_inexact(m.dtype) else m(2, 3, low=-3, high=4),),
                      skips=_NO_FULL_OUT)
    yield SampleInput("noncontig_dim_keepdim", (m(4, 3, layout="T"), 1), {"keepdim": True})
    # a single zero in a reduced slice: the gradient formula prod/x breaks there
    v = m.values((3, 4))
    v[1, 2] = 0
    yield SampleInput("with_zero_dim", (Arr(v), 1))


def _max_samples(m: Maker):
    kw = dict(distinct=True)
    yield SampleInput("full", (m(3, 4, **kw),))
    yield SampleInput("noncontig_dim_keepdim", (m(4, 3, layout="T", **kw), 1), {"keepdim": True})
    yield SampleInput("strided_dim", (m(2, 3, 4, layout="strided", **kw),), {"dim": -3})


def _amax_samples(m: Maker):
    kw = dict(distinct=True)
    yield SampleInput("full", (m(3, 4, **kw),))
    yield SampleInput("noncontig_dim_keepdim", (m(4, 3, layout="T", **kw), 1), {"keepdim": True})
    yield SampleInput("strided_dims", (m(2, 3, 4, layout="strided", **kw),), {"dim": (0, 2)})


def _var_samples(m: Maker):
    yield SampleInput("full", (m(3, 4),))
    yield SampleInput("noncontig_dim_keepdim_correction0", (m(4, 3, layout="T"),),
                      {"dim": 1, "keepdim": True, "correction": 0})
    yield SampleInput("strided_dims_correction2", (m(2, 3, 4, layout="strided"),), {"dim": (0, 2), "correction": 2})


def _norm_samples(m: Maker):
    yield SampleInput("fro", (m(3, 4),))
    yield SampleInput("noncontig_p1_dim_keepdim", (m(4, 3, layout="T"),), {"p": 1, "dim": 1, "keepdim": True})
    yield SampleInput("strided_p3_dims", (m(2, 3, 4, layout="strided"),), {"p": 3, "dim": (0, 2)})


def _logsumexp_samples(m: Maker):
    yield SampleInput("dim", (m(3, 4), 1))
    yield SampleInput("noncontig_dims_keepdim", (m(4, 3, layout="T"), (0, 1)), {"keepdim": True})
    yield SampleInput("large_values", (m(2, 5, low=50.0, high=100.0, layout="strided"), -1))


def _cum_samples(prod: bool):
    def gen(m: Maker):
        yield SampleInput("dim0", (m(3, 4), 0))
        yield SampleInput("noncontig_dim_neg", (m(4, 3, layout="T"),), {"dim": -1})
        if prod and is_inexact(m.dtype):
            v = m.values((3, 4))
            v[1, 1] = 0  # cumprod's gradient past a zero needs its own formula
            yield SampleInput("with_zero", (Arr(v), 1))
        elif is_inexact(m.dtype):
            wide = "complex128" if is_complex(m.dtype) else "float64"
            yield SampleInput("dtype", (m(3, 4), 1), {"dtype": DType(wide)})
        else:
            yield SampleInput("int32_promotes", (m(3, 4, dtype="int32"), 1))
    return gen


def _arg_samples(m: Maker):
    kw = dict(distinct=True)
    yield SampleInput("full", (m(3, 4, **kw),))
    yield SampleInput("noncontig_dim_keepdim", (m(4, 3, layout="T", **kw),), {"dim": 0, "keepdim": True})
    yield SampleInput("strided_dim", (m(2, 5, layout="strided", **kw), -1))


def _all_any_samples(m: Maker):
    def vals(*shape, layout="contig"):
        if m.dtype == "bool":
            return Arr(m.rng.rand(*shape) < 0.7, layout)
        v = (m.rng.rand(*shape) < 0.7) * m.rng.randint(1, 4, size=shape)
        if is_complex(m.dtype):  # some nonzero values purely imaginary (true as well)
            v = v * m.rng.choice([1, 1j, 1 + 1j], size=shape)
        return Arr(v.astype(m.dtype), layout)

    yield SampleInput("full", (vals(3, 4),), skips=_NO_FULL_OUT)
    yield SampleInput("noncontig_dim_keepdim", (vals(4, 3, layout="T"), 1), {"keepdim": True})
    yield SampleInput("strided_dims", (vals(2, 3, 4, layout="strided"),), {"dim": (0, 2)})


def _median_samples(m: Maker):
    kw = dict(distinct=True)
    yield SampleInput("full_even_count", (m(3, 4, **kw),), skips=_NO_FULL_OUT)
    yield SampleInput("noncontig_dim_keepdim", (m(4, 3, layout="T", **kw), 0), {"keepdim": True})
    yield SampleInput("strided_dim", (m(3, 5, layout="strided", **kw),), {"dim": -1})


def _sort_samples(m: Maker):
    kw = dict(distinct=True)
    yield SampleInput("last_dim", (m(3, 4, **kw),))
    yield SampleInput("noncontig_dim0_descending", (m(4, 3, layout="T", **kw),), {"dim": 0, "descending": True})
    yield SampleInput("strided_stable", (m(2, 5, layout="strided", **kw),), {"stable": True, "dim": 1})


def _topk_samples(m: Maker):
    kw = dict(distinct=True)
    yield SampleInput("k2", (m(3, 4, **kw), 2))
    yield SampleInput("noncontig_dim0_smallest", (m(4, 3, layout="T", **kw), 3), {"dim": 0, "largest": False})
    yield SampleInput("strided_k1", (m(2, 5, layout="strided", **kw), 1), {"sorted": True})


def _kthvalue_samples(m: Maker):
    kw = dict(distinct=True)
    yield SampleInput("k2", (m(3, 4, **kw), 2))
    yield SampleInput("noncontig_dim0_keepdim", (m(4, 3, layout="T", **kw), 3), {"dim": 0, "keepdim": True})
    yield SampleInput("strided_k1", (m(2, 5, layout="strided", **kw), 1))


def _logcumsumexp_samples(m: Maker):
    yield SampleInput("dim0", (m(3, 4), 0))
    yield SampleInput("noncontig_dim_neg", (m(4, 3, layout="T"), -1))
    yield SampleInput("wide_range", (m(2, 5, low=-8.0, high=8.0, layout="strided"), 1))


def _red(name: str, gen, dtypes=FLOATS, out: bool = True, differentiable: bool = True, method: bool = True,
         **kw) -> OpInfo:
    return OpInfo(name, gen, dtypes=dtypes, supports_out=out, differentiable=differentiable,
                  aliases=(f"Tensor.{name}",) if method else (), **kw)


# complex runs where torch reduces complex input (not the orderings: max/min/amax/amin/arg*/median/sort/topk/
# kthvalue refuse it)
F_C = FLOATS + COMPLEX
FI_C = FLOATS_INT + COMPLEX
ALL_ANY_DTYPES = ("float32", "float64", "int64", "uint8", "bool", "complex128")
REDUCTION_OPS = [
    _red("sum", _sum_samples, FLOATS_INT + ("int32", "bool") + COMPLEX),
    _red("mean", _mean_samples, F_C),
    _red("prod", _prod_samples, FI_C),
    _red("max", _max_samples, FLOATS_INT, notes="full form returns a tensor, dim form (values, indices)"),
    _red("min", _max_samples, FLOATS_INT),
    _red("amax", _amax_samples, FLOATS_INT),
    _red("amin", _amax_samples, FLOATS_INT),
    _red("var", _var_samples, F_C, notes="complex input: real variance of |x - mean|"),
    _red("std", _var_samples, F_C),
    _red("var_mean", _var_samples, F_C, out=False, method=False),
    _red("norm", _norm_samples, F_C),
    _red("logsumexp", _logsumexp_samples, F_C, notes="complex input: shifted by the largest real part, so the "
         "imaginary part of the result is the principal value"),
    _red("cumsum", _cum_samples(prod=False), FI_C, inplace="Tensor.cumsum_"),
    _red("logcumsumexp", _logcumsumexp_samples, F_C),
    _red("cumprod", _cum_samples(prod=True), FI_C, inplace="Tensor.cumprod_"),
    _red("argmax", _arg_samples, FLOATS_INT, differentiable=False),
    _red("argmin", _arg_samples, FLOATS_INT, differentiable=False),
    _red("all", _all_any_samples, ALL_ANY_DTYPES, differentiable=False),
    _red("any", _all_any_samples, ALL_ANY_DTYPES, differentiable=False),
    _red("median", _median_samples, FLOATS_INT, notes="even count: the lower of the two middle values"),
    _red("sort", _sort_samples, FLOATS_INT),
    _red("topk", _topk_samples, FLOATS_INT),
    _red("kthvalue", _kthvalue_samples, FLOATS_INT),
]

OPS = REDUCTION_OPS
