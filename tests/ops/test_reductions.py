"""Reductions, scans and sorting ops (ops/reductions_extra.py) against torch: values, dtypes, gradients,
double backward, error messages."""

from __future__ import annotations

import pytest
from _lib import assert_close, np, raised, tg, torch

RNG = np.random.default_rng(0)


def _arr(*shape, dtype="float64", low=-2.0, high=2.0):
    if dtype in ("float32", "float64"):
        return RNG.uniform(low, high, size=shape).astype(dtype)
    if dtype == "bool":
        return RNG.random(size=shape) < 0.5
    return RNG.integers(-3, 4, size=shape).astype(dtype)


def _distinct(*shape):
    return RNG.permutation(int(np.prod(shape))).reshape(shape).astype("float64") / 3.0 - 1.0


def _outs(out):
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in _outs(o)]
    return [out]


def compare(fn, *arrays, grad=True, rtol=1e-6, atol=1e-8, gradgrad=False):
    """Run ``fn(lib, *tensors)`` in both libraries: outputs (with dtype) and input gradients agree."""
    results = {}
    for lib in (tg, torch):
        ts = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        out = fn(lib, *ts)
        outs = _outs(out)
        grads = None
        diff = [t for t in ts if t.requires_grad]
        float_outs = [o for o in outs if o.requires_grad]
        if grad and diff and float_outs:
            cot = [lib.tensor(np.linspace(-1, 1, o.numel()).reshape(tuple(o.shape)), dtype=o.dtype)
                   for o in float_outs]
            grads = lib.autograd.grad(float_outs, diff, cot, allow_unused=True, create_graph=gradgrad)
            if gradgrad:
                total = sum((g * g).sum() for g in grads if g is not None)
                second = lib.autograd.grad(total, diff, allow_unused=True) if total.requires_grad \
                    else [None] * len(diff)
                grads = list(grads) + list(second)
        results[lib] = (outs, grads)
    (o1, g1), (o2, g2) = results[tg], results[torch]
    assert_close(o1, o2, rtol=rtol, atol=atol, check_dtype=True)
    if grad:
        assert (g1 is None) == (g2 is None)
        if g1 is not None:
            assert_close(list(g1), list(g2), rtol=rtol, atol=atol, check_dtype=True)


def raises_like(fn, *arrays):
    """Both libraries raise the same exception type with the same message."""
    errs = []
    for lib in (tg, torch):
        ts = [lib.tensor(a) for a in arrays]
        with pytest.raises(Exception) as info:
            fn(lib, *ts)
        errs.append(info.value)
    assert str(errs[0]) == str(errs[1])
    assert isinstance(errs[0], type(errs[1])) or type(errs[1]).__name__ in type(errs[0]).__name__ or \
        isinstance(errs[0], RuntimeError) and isinstance(errs[1], RuntimeError)


# ---------------------------------------------------------------------------------------------- sum / mean


@pytest.mark.parametrize("case", [
    lambda L, x: L.sum(x), lambda L, x: x.sum(1), lambda L, x: x.sum([0, 2], keepdim=True),
    lambda L, x: x.sum((-1,)), lambda L, x: L.sum(x, dim=1, dtype=L.float32), lambda L, x: x.mean(),
    lambda L, x: x.mean([0, 1]), lambda L, x: L.mean(x, -1, True), lambda L, x: x.sum(dim=()),
    lambda L, x: L.nansum(x, 1), lambda L, x: L.nanmean(x, (0, 2)),
])
def test_sum_mean(case):
    compare(case, _arr(2, 3, 4), gradgrad=True)


def test_sum_dtypes_and_names():
    for dt in ("bool", "int32", "int64", "uint8"):
        compare(lambda L, x: (L.sum(x), x.sum(0), x.sum(0, dtype=L.float64), L.nansum(x)), _arr(3, 4, dtype=dt))
    compare(lambda L, x: (x.mean(dtype=L.float64), x.mean(0, dtype=L.float32)), _arr(3, 4, dtype="int64"))
    x = tg.randn(3, 4, requires_grad=True)
    assert x.sum().grad_fn.name() == "SumBackward0" and x.sum(0).grad_fn.name() == "SumBackward1"
    assert x.mean().grad_fn.name() == "MeanBackward0" and x.mean(0).grad_fn.name() == "MeanBackward1"
    raises_like(lambda L, x: x.mean(), _arr(3, dtype="int64"))
    raises_like(lambda L, x: x.mean(dtype=L.int64), _arr(3))


def test_nan_reductions():
    v = _arr(3, 4)
    v[0, 1] = v[2, 3] = np.nan
    compare(lambda L, x: (L.nansum(x), L.nansum(x, 1), L.nanmean(x, 0)), v)
    raises_like(lambda L, x: L.nanmean(x), _arr(3, dtype="int64"))


# ---------------------------------------------------------------------------------------------- prod


@pytest.mark.parametrize("zeros", [[], [(1, 2)], [(1, 2), (1, 0)], [(0, 0), (2, 3)]])
def test_prod_with_zeros(zeros):
    v = _arr(3, 4)
    for ij in zeros:
        v[ij] = 0.0
    compare(lambda L, x: (L.prod(x), x.prod(1), x.prod(0, keepdim=True)), v, gradgrad=True)


def test_prod_dtypes():
    compare(lambda L, x: (L.prod(x), x.prod(1), x.prod(0, dtype=L.float64)), _arr(2, 3, dtype="int32"))
    compare(lambda L, x: L.prod(x), _arr(5, dtype="bool"))
    compare(lambda L, x: (x.prod(), x.prod(0)), np.array(2.5))
    x = tg.randn(3, requires_grad=True)
    assert x.prod().grad_fn.name() == "ProdBackward0" and x.prod(0).grad_fn.name() == "ProdBackward1"


# ---------------------------------------------------------------------------------------------- max / min / amax


def test_max_min_forms():
    x = _distinct(3, 4, 2)
    compare(lambda L, x: (L.max(x), L.min(x)), x)
    compare(lambda L, x: (x.max(1), L.min(x, -1, keepdim=True)), x)
    compare(lambda L, x: (x.max(dim=0).values, x.max(dim=0).indices), x)
    compare(lambda L, x, y: (L.max(x, y), L.min(x, other=y)), _arr(3, 4), _arr(3, 4))
    r = tg.max(tg.tensor(x), 1)
    assert type(r).__name__ == "max" and r.__match_args__ == ("values", "indices")
    t = tg.randn(3, requires_grad=True)
    assert t.max().grad_fn.name() == "MaxBackward1" and t.max(0)[0].grad_fn.name() == "MaxBackward0"
    assert not t.max(0)[1].requires_grad


def test_max_ties_and_nan():
    v = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    compare(lambda L, x: (L.max(x), L.amax(x, 1), L.amin(x), x.amax((0, 1)), L.aminmax(x)), v, gradgrad=True)
    w = np.array([1.0, np.nan, 2.0])
    compare(lambda L, x: (L.max(x), x.max(0), L.amax(x), L.argmax(x)), w)


def test_max_int_and_errors():
    compare(lambda L, x: (L.max(x), x.max(1), L.amax(x, 0), L.aminmax(x, dim=1)), _arr(3, 4, dtype="int64"))
    compare(lambda L, x: (L.max(x), L.amax(x)), _arr(5, dtype="bool"))
    raises_like(lambda L, x: x.max(), np.zeros((0,)))
    raises_like(lambda L, x: x.max(1), np.zeros((2, 0)))


# ---------------------------------------------------------------------------------------------- arg / all / any


def test_arg_reductions():
    x = _distinct(3, 4)
    compare(lambda L, x: (L.argmax(x), x.argmin(), x.argmax(1), L.argmin(x, 0, True), x.argmax(keepdim=True)), x)
    raises_like(lambda L, x: x.argmax(), np.array([True, False]))
    compare(lambda L, x: L.count_nonzero(x), np.array([[0.0, 1.0], [2.0, 0.0]]))
    compare(lambda L, x: (L.count_nonzero(x, 0), L.count_nonzero(x, (0, 1))), np.array([[0.0, 1.0], [2.0, 0.0]]))


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool"])
def test_all_any(dtype):
    v = (RNG.random((3, 4)) < 0.6).astype(dtype)
    compare(lambda L, x: (L.all(x), x.any(), x.all(1), L.any(x, 0, True), x.all((0, 1))), v)


# ---------------------------------------------------------------------------------------------- var / std


@pytest.mark.parametrize("case", [
    lambda L, x: (L.var(x), L.std(x)),
    lambda L, x: (x.var(1), x.std(1, keepdim=True)),
    lambda L, x: (L.var(x, [0, 2], correction=0), L.std(x, dim=(0, 2), correction=2)),
    lambda L, x: (x.var(False), x.std(0, False, True)),
    lambda L, x: L.var_mean(x, [0, 2]),
    lambda L, x: L.std_mean(x, 1, keepdim=True),
    lambda L, x: L.var_mean(x, correction=0),
])
def test_var_std(case):
    compare(case, _arr(3, 4, 2), gradgrad=True)


def test_var_errors_and_names():
    raises_like(lambda L, x: x.var(), _arr(3, dtype="int64"))
    x = tg.randn(3, 4, requires_grad=True)
    assert x.var().grad_fn.name() == "VarBackward0" and tg.std_mean(x)[0].grad_fn.name() == "StdMeanBackward0"
    assert type(tg.var_mean(x)) is tuple


def test_std_of_constant_has_zero_grad():
    compare(lambda L, x: x.std(1), np.ones((2, 3)))


# ---------------------------------------------------------------------------------------------- norm / logsumexp


@pytest.mark.parametrize("case", [
    lambda L, x: x.norm(), lambda L, x: L.norm(x, p=1, dim=1), lambda L, x: L.norm(x, 3, (0, 2), keepdim=True),
    lambda L, x: x.norm(float("inf"), 1), lambda L, x: x.norm(p="fro", dim=(0, 1)),
    lambda L, x: L.norm(x[0], "nuc"), lambda L, x: x.norm(0.5, 2), lambda L, x: x.norm(1.5),
])
def test_norm(case):
    compare(case, _arr(3, 4, 2))


def test_norm_at_zero_and_names():
    compare(lambda L, x: (x.norm(), x.norm(1), x.norm(3)), np.zeros(3))
    assert tg.randn(3, requires_grad=True).norm().grad_fn.name() == "LinalgVectorNormBackward0"


def test_logsumexp():
    compare(lambda L, x: (L.logsumexp(x, 1), x.logsumexp((0, 1), keepdim=True)), _arr(3, 4), gradgrad=True)
    compare(lambda L, x: L.logsumexp(x, -1), _arr(2, 5, low=500.0, high=900.0))
    compare(lambda L, x: L.logsumexp(x, 0), np.array([-np.inf, -np.inf]))
    compare(lambda L, x: L.logsumexp(x, 0), _arr(4, dtype="int64"))


# ---------------------------------------------------------------------------------------------- scans


def test_cumsum_cumprod():
    compare(lambda L, x: (x.cumsum(0), L.cumsum(x, -1, dtype=L.float32), L.cumprod(x, 1)), _arr(3, 4),
            gradgrad=True)
    compare(lambda L, x: (x.cumsum(0), x.cumprod(1)), _arr(3, 4, dtype="int32"))
    compare(lambda L, x: x.cumsum(0), _arr(4, dtype="bool"))


@pytest.mark.parametrize("zeros", [[(1,)], [(1,), (3,)], [(0,)], [(4,)]])
def test_cumprod_with_zeros(zeros):
    v = _arr(5)
    for ij in zeros:
        v[ij] = 0.0
    compare(lambda L, x: x.cumprod(0), v, gradgrad=True)


def test_scan_inplace_and_cummax():
    compare(lambda L, x: x.clone().cumsum_(1), _arr(3, 4))
    compare(lambda L, x: x.clone().cumprod_(0), _arr(3, 4))
    v = np.array([[1.0, 3.0, 2.0, 3.0, 0.5], [0.0, -1.0, 4.0, 4.0, 5.0]])
    compare(lambda L, x: (L.cummax(x, 1), x.cummin(1)), v)


# ---------------------------------------------------------------------------------------------- sort family


def test_sort_topk_kthvalue():
    x = _distinct(3, 5)
    compare(lambda L, x: (x.sort(), L.sort(x, 0, descending=True), L.sort(x, stable=True, dim=1)), x,
            gradgrad=True)
    compare(lambda L, x: (x.topk(2), L.topk(x, 3, dim=0, largest=False), x.topk(1, sorted=True)), x)
    compare(lambda L, x: (x.kthvalue(2), L.kthvalue(x, 3, 0, True)), x)
    compare(lambda L, x: (L.argsort(x), x.argsort(0, descending=True), L.msort(x)), x)


def test_sort_stable_ties_and_ints():
    v = np.array([2.0, 1.0, 2.0, 1.0, np.nan, 3.0])
    compare(lambda L, x: (L.sort(x, stable=True), L.sort(x, descending=True, stable=True)), v)
    compare(lambda L, x: (x.sort(), x.topk(2), x.kthvalue(1)), _arr(3, 4, dtype="int64") * 10
            + np.arange(4))
    raises_like(lambda L, x: x.topk(4), _arr(3))
    raises_like(lambda L, x: x.kthvalue(4), _arr(3))


def test_median():
    x = _distinct(3, 4)
    compare(lambda L, x: (L.median(x), x.median(0), L.median(x, -1, keepdim=True)), x, gradgrad=True)
    compare(lambda L, x: (L.median(x), x.median(1)), _arr(3, 5, dtype="int64") * 10 + np.arange(5))
    compare(lambda L, x: (x.median(), x.median(0)), np.array([3.0, np.nan, 1.0]))
    compare(lambda L, x: x.median(), np.array([1.0, 2.0, 2.0, 5.0]))
    t = tg.randn(4, requires_grad=True)
    assert t.median().grad_fn.name() == "MedianBackward0" and t.median(0)[0].grad_fn.name() == "MedianBackward1"


def test_zero_dim_inputs():
    s = np.array(1.5)
    compare(lambda L, x: (x.max(0), x.sort(), x.cumsum(0), x.sum(0), x.prod(0), x.argmax(0), x.logsumexp(0)), s)


def test_gradcheck_selected():
    x = tg.tensor(_distinct(3, 4), requires_grad=True)
    for fn in (lambda x: x.prod(1), lambda x: x.max(1)[0], lambda x: x.var(0), lambda x: x.cumprod(1),
               lambda x: x.logsumexp(0), lambda x: x.sort(1)[0], lambda x: x.norm(3, 1), lambda x: x.amax(0)):
        assert tg.autograd.gradcheck(fn, (x,))
        assert tg.autograd.gradgradcheck(fn, (x,))


def test_out_variants():
    x = tg.tensor(_distinct(3, 4))
    want = torch.tensor(_distinct(3, 4) * 0 + x.numpy())
    out = tg.empty(3, dtype=tg.float64)
    assert tg.sum(x, 1, out=out) is out
    assert_close(out, want.sum(1))
    vals, idx = tg.empty(3, dtype=tg.float64), tg.empty(3, dtype=tg.int64)
    res = tg.max(x, 1, out=(vals, idx))
    assert res[0] is vals and res[1] is idx
    assert_close(res, want.max(1))
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        tg.sum(x.requires_grad_(), 1, out=out)


@pytest.mark.parametrize("program", [
    lambda L: L.amax(L.ones(0)), lambda L: L.amin(L.ones(0, 3)), lambda L: L.amax(L.ones(0, 3), 0),
    lambda L: L.amax(L.ones(0, 3), (0, 1)), lambda L: L.amin(L.ones(0), ()),
], ids=["amax_full", "amin_full_2d", "amax_empty_dim", "amax_all_dims", "amin_empty_tuple"])
def test_amax_amin_of_empty_input_refused_as_torch(program):
    assert raised(tg, program) == raised(torch, program) is not None
