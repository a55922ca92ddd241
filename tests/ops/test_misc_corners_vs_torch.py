"""Corners met by users where tracegrad differed from torch 2.13: operators on inference tensors outside inference
mode (refusals, result versions), sorting an inference Parameter, logical in-place ops on tensors requiring grad,
type promotion with a complex 0-dim tensor."""

from __future__ import annotations

import pytest

from tests._lib import tg, torch, value_or_error


def _outcome(program, lib):
    """What a program gives, comparable across libraries: the result's dtype, shape, whether it requires grad, its
    node's name and its version, or the error's type and message."""
    try:
        r = program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    r = r[0] if isinstance(r, tuple) else r
    node = None if r.grad_fn is None else r.grad_fn.name()
    return str(r.dtype).replace("tracegrad", "torch"), tuple(r.shape), r.requires_grad, node, r._version


def _inference(lib, requires_grad: bool = False, parameter: bool = False):
    """A tensor made under inference_mode (a Parameter, or a tensor made to require grad there)."""
    with lib.inference_mode():
        x = lib.linspace(0.5, 2.0, 6).reshape(2, 3)
        if parameter:
            return lib.nn.Parameter(x)
        return x.requires_grad_(requires_grad)


# ---- numbers meeting an inference tensor that requires grad -----------------------------------------------------
# (torch's autograd kernel of a ``(Scalar, Tensor)`` overload does not run for inference tensors alone; its CPU kernel
# then calls the Tensor overload with the number wrapped in a normal tensor, whose autograd kernel saves the
# inference tensor (refused), or writes through an out= overload, whose check refuses)

NUMBER_FIRST = {
    "2 ** w": lambda w, lib: 2 ** w,
    "1 ** w": lambda w, lib: 1 ** w,
    "w.__rpow__(2)": lambda w, lib: w.__rpow__(2),
    "torch.pow(2.5, w)": lambda w, lib: lib.pow(2.5, w),
    "2 % w": lambda w, lib: 2 % w,
    "torch.remainder(2, w)": lambda w, lib: lib.remainder(2, w),
    "torch.xlogy(2, w)": lambda w, lib: lib.xlogy(2, w),
    "special.xlog1py(2, w)": lambda w, lib: lib.special.xlog1py(2, w),
    "special.zeta(2, w)": lambda w, lib: lib.special.zeta(2, w),
    "2 - w": lambda w, lib: 2 - w,
    "2 / w": lambda w, lib: 2 / w,
    "2 * w": lambda w, lib: 2 * w,
    "2 // w": lambda w, lib: 2 // w,
}


@pytest.mark.parametrize("made", ["requires_grad", "parameter", "plain"])
@pytest.mark.parametrize("name", NUMBER_FIRST)
def test_numbers_first_with_an_inference_tensor(name, made):
    def program(lib):
        w = _inference(lib, requires_grad=made == "requires_grad", parameter=made == "parameter")
        return NUMBER_FIRST[name](w, lib)

    assert _outcome(program, tg) == _outcome(program, torch)


# ---- versions of results computed from inference tensors --------------------------------------------------------
# (the writes of a CPU kernel's inner copy_/fill_/out= calls are counted when the autograd kernel does not run)

RESULTS = {
    "abs": lambda x, lib: x.abs(),
    "deg2rad": lambda x, lib: x.deg2rad(),
    "2 ** x": lambda x, lib: 2 ** x,
    "sum": lambda x, lib: x.sum(),
    "sum(0)": lambda x, lib: x.sum(0),
    "nansum": lambda x, lib: x.nansum(),
    "mean": lambda x, lib: x.mean(),
    "mean(0)": lambda x, lib: x.mean(0),
    "prod": lambda x, lib: x.prod(),
    "max": lambda x, lib: x.max(),
    "max(0)": lambda x, lib: x.max(0),
    "min(1) indices": lambda x, lib: x.min(1)[1],
    "amax": lambda x, lib: x.amax(0),
    "sort": lambda x, lib: x.sort(),
    "sort indices": lambda x, lib: x.sort(1, descending=True)[1],
    "cummax": lambda x, lib: x.cummax(0),
    "logsumexp": lambda x, lib: x.logsumexp(1),
    "logical_not": lambda x, lib: x.logical_not(),
    "nonzero": lambda x, lib: x.nonzero(),
    "any": lambda x, lib: (x > 1).any(),
    "any(1)": lambda x, lib: x.any(1),
    "all(0, keepdim)": lambda x, lib: x.all(0, keepdim=True),
    "amin": lambda x, lib: x.amin(0),
    "min": lambda x, lib: x.min(),
    "prod(1)": lambda x, lib: x.prod(1),
    "median(0)": lambda x, lib: x.median(0),
    "mode": lambda x, lib: x.mode(1),
    "histc": lambda x, lib: x.histc(4),
    "repeat": lambda x, lib: x.repeat(2, 1),
    "masked_fill": lambda x, lib: x.masked_fill(x > 1, 0.0),
    "select_scatter": lambda x, lib: lib.select_scatter(x, x[0], 0, 1),
    "isclose": lambda x, lib: x.isclose(x),
    "complex": lambda x, lib: lib.complex(x, x),
    "sin (no write)": lambda x, lib: x.sin(),
    "x * x (no write)": lambda x, lib: x * x,
    "topk (no write)": lambda x, lib: x.topk(2)[0],
}


@pytest.mark.parametrize("name", RESULTS)
def test_versions_of_results_of_inference_tensors(name):
    def program(lib):
        return RESULTS[name](_inference(lib), lib)

    assert _outcome(program, tg) == _outcome(program, torch)


def test_versions_of_results_of_inference_tensors_with_a_normal_one():
    def program(lib):  # (a normal tensor among the inputs: the autograd kernel runs, nothing is counted)
        x = _inference(lib)
        return [lib.isclose(x, x.clone())._version, lib.complex(x, lib.ones(2, 3))._version]

    assert program(tg) == program(torch)


def test_versions_of_results_made_inside_inference_mode_are_not_counted():
    def program(lib):
        x = _inference(lib)
        with lib.inference_mode():
            s, m = x.sum(), x.mean()
        return s.is_inference(), m.is_inference()

    assert program(tg) == program(torch)


@pytest.mark.parametrize("kwargs", [{}, {"equal_nan": True}, {"rtol": 0, "atol": 0}, {"rtol": 0, "atol": 0,
                                                                                     "equal_nan": True}])
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
def test_version_of_isclose(dtype, kwargs):
    def program(lib):  # (ATen's composite writes its comparison in place once or twice)
        x = lib.ones(3, dtype=getattr(lib, dtype))
        return lib.isclose(x, x, **kwargs)._version, x.isclose(x, **kwargs)._version

    assert program(tg) == program(torch)


# ---- sorting an inference Parameter ------------------------------------------------------------------------------
# (sort's CPU kernel copies self into its values with a recorded copy_ before sorting them; kthvalue writes through
# its out= overload, which refuses)

SORTS = {
    "sort": lambda p, lib: lib.sort(p),
    "sort indices": lambda p, lib: lib.sort(p)[1],
    "sort(stable=True, descending=True)": lambda p, lib: p.sort(stable=True, descending=True),
    "msort": lambda p, lib: p.msort(),
    "argsort": lambda p, lib: p.argsort(),
    "kthvalue": lambda p, lib: p.kthvalue(1),
    "topk": lambda p, lib: p.topk(1),
}


@pytest.mark.parametrize("name", SORTS)
def test_sorting_an_inference_parameter(name):
    def program(lib):
        return SORTS[name](_inference(lib, parameter=True), lib)

    assert _outcome(program, tg) == _outcome(program, torch)


def test_gradient_through_the_sort_of_an_inference_parameter():
    def program(lib):  # (the gradient goes through the recorded copy: unsorted)
        p = _inference(lib, parameter=True).flip(1).detach()
        with lib.inference_mode():
            p = lib.nn.Parameter(p)
        values = lib.sort(p)[0]
        (values * lib.arange(3.0)).sum().backward()
        return values.tolist(), p.grad.tolist()

    assert program(tg) == program(torch)


# ---- logical in-place ops on tensors that require grad -----------------------------------------------------------
# (torch writes them through the out= overload of a non-differentiable operator: no node, no leaf check)

LOGICAL_INPLACE = {
    "logical_not_": lambda t, lib: t.logical_not_(),
    "logical_and_": lambda t, lib: t.logical_and_(lib.tensor([True, False, True])),
    "logical_or_": lambda t, lib: t.logical_or_(lib.tensor([True, False, False])),
    "logical_xor_": lambda t, lib: t.logical_xor_(lib.tensor([True, False, False])),
    "logical_and_ with self": lambda t, lib: t.logical_and_(t),
    "eq_ (recorded)": lambda t, lib: t.eq_(1.0),
}


@pytest.mark.parametrize("target", ["non-leaf", "leaf", "view", "other requires grad"])
@pytest.mark.parametrize("name", LOGICAL_INPLACE)
def test_logical_inplace_on_tensors_requiring_grad(name, target):
    def program(lib):
        w = lib.tensor([1.0, 0.0, 2.0], requires_grad=True)
        t = {"non-leaf": lambda: w * 1, "leaf": lambda: w, "view": lambda: (w * 1)[:3],
             "other requires grad": lambda: lib.zeros(3)}[target]()
        r = LOGICAL_INPLACE[name](t, lib) if target != "other requires grad" else t.logical_or_(w)
        return r

    assert _outcome(program, tg) == _outcome(program, torch)


def test_backward_through_a_logical_inplace_op():
    def program(lib):  # (the target keeps its history: the gradient of w * 2)
        w = lib.tensor([1.0, 0.0, 2.0], requires_grad=True)
        z = w * 2
        z.logical_not_()
        z.sum().backward()
        return z.tolist(), w.grad.tolist(), w.logical_not_().tolist(), w.grad_fn, w.is_leaf

    assert program(tg) == program(torch)


# ---- a complex 0-dim tensor meeting a floating tensor ------------------------------------------------------------
# (it lifts the result to the complex type of the tensor's precision: float32 + complex128 0-dim → complex64)

PROMOTING = {
    "add": lambda x, s, lib: x + s,
    "mul": lambda x, s, lib: s * x,
    "where": lambda x, s, lib: lib.where(lib.tensor([True, False, True]), x, s),
    "sub_": lambda x, s, lib: (x.to(lib.complex64) if x.dtype == lib.float32 else x).sub_(s),
    "cat (promotes all alike)": lambda x, s, lib: lib.cat([x, s.reshape(1)]),
    "result_type": lambda x, s, lib: lib.empty(0, dtype=lib.result_type(x, s)),
}


@pytest.mark.parametrize("scalar", ["complex64", "complex128", "float64", "int64", "bool"])
@pytest.mark.parametrize("tensor", ["float32", "float64", "int32", "complex64"])
@pytest.mark.parametrize("name", PROMOTING)
def test_promotion_with_a_zero_dim_tensor(name, tensor, scalar):
    def program(lib):
        x = lib.tensor([0.5, 1.5, 2.25], dtype=getattr(lib, tensor))
        s = lib.tensor(1.25 + 0.5j if scalar.startswith("complex") else 1, dtype=getattr(lib, scalar))
        return PROMOTING[name](x, s, lib)

    assert value_or_error(program, tg) == value_or_error(program, torch)
