"""Corners where tracegrad and torch parted: ``F.linear`` with operands of several dtypes (torch adds the bias of a
non-contiguous input after matmul, in place, which promotes; its fused ``addmm`` refuses in its own order), and
mistaken calls refused in other words than torch's (methods torch writes in Python, C methods taking one argument,
functions its parser binds without an operator), and float64 values cast to float16 (torch rounds them to float
first)."""

from __future__ import annotations

import itertools

import pytest
from _lib import assert_same_bits, np, raised, tg, torch, value_or_error

# ---- linear with operands of several dtypes ------------------------------------------------------------------

_DTYPES = ("float32", "float64", "float16", "int64")

# inputs whose product's bits do not depend on the BLAS (small integers), in the layouts that pick torch's routes
_INPUTS = {
    "1-d": lambda lib, a: a[0, 0],
    "2-d": lambda lib, a: a[0],
    "3-d": lambda lib, a: a,
    "3-d transposed": lambda lib, a: a.transpose(0, 1),
    "2-d transposed": lambda lib, a: a[0].t().contiguous().t(),
    "4-d transposed": lambda lib, a: a.reshape(2, 2, 3, 5).transpose(1, 2),
}


def _linear_program(layout: str, x_dtype: str, w_dtype: str, b_dtype: str | None, requires_grad: bool):
    """``F.linear`` of integer-valued operands of the given dtypes; with ``requires_grad``, its float operands'
    gradients are appended to the result's values."""
    rng = np.random.default_rng(0)
    base, weight, bias = rng.integers(-4, 5, (4, 3, 5)), rng.integers(-3, 4, (2, 5)), rng.standard_normal(2) * 100

    def program(lib):
        x = _INPUTS[layout](lib, lib.tensor(base).to(getattr(lib, x_dtype)))
        w = lib.tensor(weight).to(getattr(lib, w_dtype))
        b = None if b_dtype is None else lib.tensor(bias).to(getattr(lib, b_dtype))
        floats = [t for t in (x, w, b) if t is not None and t.is_floating_point()]
        if requires_grad:
            for t in floats:
                t.requires_grad_(True)
        y = lib.nn.functional.linear(x, w, b)
        if not y.requires_grad:
            return y
        y.backward(lib.full_like(y, 2))  # (exact gradients: their bits do not depend on the BLAS either)
        return [y.detach(), *(t.grad for t in floats)]

    return program


def _outcome(program, lib):
    """The result's and gradients' dtypes, shapes and values (as float64 arrays), or the error."""
    try:
        results = program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    results = results if isinstance(results, list) else [results]
    return [(str(r.dtype).split(".")[-1], r.numpy().astype(np.float64)) for r in results]


@pytest.mark.parametrize("layout", _INPUTS)
@pytest.mark.parametrize("requires_grad", [False, True], ids=["plain", "requires_grad"])
def test_linear_of_operands_of_several_dtypes_promotes_or_refuses_as_torch_does(layout, requires_grad):
    mismatches = []
    for x_dtype, w_dtype, b_dtype in itertools.product(_DTYPES, _DTYPES, (*_DTYPES, None)):
        program = _linear_program(layout, x_dtype, w_dtype, b_dtype, requires_grad)
        ours, theirs = _outcome(program, tg), _outcome(program, torch)
        if isinstance(theirs, tuple) or isinstance(ours, tuple):
            same = ours == theirs
        else:
            same = len(ours) == len(theirs) and all(
                a[0] == b[0] and a[1].shape == b[1].shape and np.array_equal(a[1], b[1], equal_nan=True)
                for a, b in zip(ours, theirs))
        if not same:
            mismatches.append((x_dtype, w_dtype, b_dtype, ours if isinstance(ours, tuple) else "values",
                               theirs if isinstance(theirs, tuple) else "values"))
    assert not mismatches, mismatches[:5]


def test_the_bias_added_in_place_rounds_once_from_the_wider_sum():
    # float32 product + float64 bias: torch's in-place add sums in double and rounds once to float
    def program(lib):
        x = lib.arange(60.0).reshape(4, 3, 5).transpose(0, 1)  # not contiguous
        return lib.nn.functional.linear(x, lib.ones(2, 5), lib.tensor([1 / 3, 1e-9], dtype=lib.float64))

    ours, theirs = program(tg), program(torch)
    assert_same_bits(ours, theirs)


def test_nn_linear_takes_a_transposed_input_of_another_dtype_as_torch_does():
    def program(lib):
        lib.manual_seed(0)
        layer = lib.nn.Linear(5, 2).double()
        return layer(lib.ones(4, 3, 5).transpose(0, 1))

    assert value_or_error(program, tg) == value_or_error(program, torch)


LINEAR_REFUSALS = {
    # addmm checks dtypes before sizes, the bias's first; mm checks sizes first
    "addmm: sizes and bias dtype": lambda lib: lib.nn.functional.linear(
        lib.ones(3, 4), lib.ones(2, 5, dtype=lib.float64), lib.ones(2)),
    "mm: sizes and dtype": lambda lib: lib.nn.functional.linear(lib.ones(3, 4), lib.ones(2, 5, dtype=lib.float64)),
    "addmm: a 1-D weight": lambda lib: lib.nn.functional.linear(lib.ones(3, 5), lib.ones(5), lib.ones(3)),
    "addmm: a 1-D weight, a 0-d bias": lambda lib: lib.nn.functional.linear(lib.ones(3, 5), lib.ones(5),
                                                                             lib.ones(())),
    # a 2-D bias of a 3-D input, a 0-d bias of a 1-D one: added after matmul, in place
    "3-d input, 2-d float64 bias": lambda lib: lib.nn.functional.linear(
        lib.ones(3, 4, 5), lib.ones(2, 5), lib.ones(4, 2, dtype=lib.float64)),
    "3-d input, 2-d bias, float64 weight": lambda lib: lib.nn.functional.linear(
        lib.ones(3, 4, 5), lib.ones(2, 5, dtype=lib.float64), lib.ones(4, 2, dtype=lib.float64)),
    "1-d input, 0-d float64 bias": lambda lib: lib.nn.functional.linear(
        lib.ones(5), lib.ones(2, 5), lib.ones((), dtype=lib.float64)),
    "transposed input, complex bias": lambda lib: lib.nn.functional.linear(
        lib.ones(4, 3, 5).transpose(0, 1), lib.ones(2, 5), lib.tensor([1j, 2], dtype=lib.complex64)),
    "transposed input, bool bias": lambda lib: lib.nn.functional.linear(
        lib.ones(4, 3, 5).transpose(0, 1), lib.ones(2, 5), lib.tensor([True, False])),
    "transposed input, a bias broadcast beyond it": lambda lib: lib.nn.functional.linear(
        lib.ones(4, 3, 5).transpose(0, 1), lib.ones(2, 5), lib.ones(2, 3, 4, 2, dtype=lib.float64)),
}


@pytest.mark.parametrize("program", LINEAR_REFUSALS.values(), ids=LINEAR_REFUSALS.keys())
def test_linear_refuses_or_runs_in_the_order_torch_checks(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)


# ---- calls missing arguments: the words of torch's parser, of CPython and of torch's Python methods ------------


def _identity(value):
    return value


MISTAKEN_CALLS = {
    "x.unflatten(0)": lambda lib: lib.ones(4).unflatten(0),
    "x.unflatten()": lambda lib: lib.ones(4).unflatten(),
    "x.lstsq()": lambda lib: lib.ones(2, 2).lstsq(),
    "x.solve()": lambda lib: lib.ones(2, 2).solve(),
    "x.resize_as()": lambda lib: lib.ones(4).resize_as(),
    "x.dim_order(1)": lambda lib: lib.ones(4).dim_order(1),
    "x.is_shared(1)": lambda lib: lib.ones(4).is_shared(1),
    "x.storage_type(1)": lambda lib: lib.ones(4).storage_type(1),
    "x.as_subclass()": lambda lib: lib.ones(4).as_subclass(),
    "x.as_subclass(bogus=)": lambda lib: lib.ones(4).as_subclass(bogus=1),
    "x.as_subclass(1, 2)": lambda lib: lib.ones(4).as_subclass(1, 2),
    "x.as_subclass(x)": lambda lib: lib.ones(4).as_subclass(lib.ones(4)),
    "x.as_subclass(int)": lambda lib: lib.ones(4).as_subclass(int),
    "x.apply_()": lambda lib: lib.ones(4).apply_(),
    "getattr(x, 'apply_')()": lambda lib: getattr(lib.ones(4), "apply_")(),  # noqa: B009 - a bound method (CPython names its class)
    "parameter's getattr(x, 'apply_')()": lambda lib: getattr(lib.nn.Parameter(lib.ones(4)), "apply_")(),  # noqa: B009
    "x.apply_(f, 1)": lambda lib: lib.ones(4).apply_(_identity, 1),
    "x.apply_(callable=f)": lambda lib: lib.ones(4).apply_(callable=_identity),
    "torch.linalg.lstsq(a)": lambda lib: lib.linalg.lstsq(lib.ones(3, 3)),
    "torch.linalg.solve(a)": lambda lib: lib.linalg.solve(lib.ones(3, 3)),
    "x.resize_as_()": lambda lib: lib.ones(4).resize_as_(),
    "torch.get_autocast_dtype()": lambda lib: lib.get_autocast_dtype(),
    "torch.set_autocast_dtype()": lambda lib: lib.set_autocast_dtype(),
    "torch.set_autocast_dtype(x)": lambda lib: lib.set_autocast_dtype(lib.ones(1)),
    "torch.set_anomaly_enabled()": lambda lib: lib.set_anomaly_enabled(),
    "torch.set_anomaly_enabled(x)": lambda lib: lib.set_anomaly_enabled(lib.ones(2)),
    "torch.set_anomaly_enabled(1)": lambda lib: lib.set_anomaly_enabled(1),
    "torch.frombuffer()": lambda lib: lib.frombuffer(),
    "torch.frombuffer(b)": lambda lib: lib.frombuffer(bytearray(8)),
}


@pytest.mark.parametrize("program", MISTAKEN_CALLS.values(), ids=MISTAKEN_CALLS.keys())
def test_a_mistaken_call_is_refused_in_torchs_words(program):
    assert raised(tg, program) == raised(torch, program) is not None


def test_apply_and_as_subclass_still_run():
    class Sub(tg.Tensor):
        pass

    x = tg.ones(3)
    assert x.apply_(lambda v: v * 2).tolist() == [2.0, 2.0, 2.0]
    assert type(x.as_subclass(Sub)) is Sub and type(x.as_subclass(cls=Sub)) is Sub


# ---- float64 -> float16: torch rounds to float first (c10::Half is made from a float) -------------------------

# doubles just beyond a midpoint between two halves (by less than half a float's ulp), beyond half's largest finite
# value by less than that, and near its smallest subnormal: one rounding and two part ways on each
_NEAR_HALF_MIDPOINTS = [1 + 2**-11 + 2**-40, -(1 + 2**-11 + 2**-40), 3 + 3 * 2**-10 - 2**-40, 65504 + 16 - 2**-30,
                        2**-25 + 2**-50, 1 + 2**-11 - 2**-40, 0.1, -0.0]

HALF_FROM_DOUBLE = {
    ".half()": lambda lib: lib.tensor(_NEAR_HALF_MIDPOINTS, dtype=lib.float64).half(),
    ".to(float16)": lambda lib: lib.tensor(_NEAR_HALF_MIDPOINTS, dtype=lib.float64).to(lib.float16),
    ".type(float16) of a transpose": lambda lib: lib.tensor([_NEAR_HALF_MIDPOINTS] * 2, dtype=lib.float64).t().type(
        lib.float16),
    ".to(float16, channels_last)": lambda lib: lib.tensor(_NEAR_HALF_MIDPOINTS, dtype=lib.float64).reshape(
        2, 1, 2, 2).to(lib.float16, memory_format=lib.channels_last),
    "tensor(floats, dtype=float16)": lambda lib: lib.tensor(_NEAR_HALF_MIDPOINTS, dtype=lib.float16),
    "tensor(float64 array, dtype=float16)": lambda lib: lib.tensor(np.array(_NEAR_HALF_MIDPOINTS), dtype=lib.float16),
    "tensor(float64 array).half()": lambda lib: lib.tensor(np.array(_NEAR_HALF_MIDPOINTS)).half(),
    "as_tensor(float64 array, dtype=float16)": lambda lib: lib.as_tensor(np.array(_NEAR_HALF_MIDPOINTS),
                                                                           dtype=lib.float16),
    "new_tensor(floats)": lambda lib: lib.zeros(1, dtype=lib.float16).new_tensor(_NEAR_HALF_MIDPOINTS),
    "copy_ into half": lambda lib: lib.zeros(8, dtype=lib.float16).copy_(
        lib.tensor(_NEAR_HALF_MIDPOINTS, dtype=lib.float64)),
    "setitem of a float64 tensor": lambda lib: _assigned(lib, lib.tensor(_NEAR_HALF_MIDPOINTS, dtype=lib.float64)),
}


def _assigned(lib, values):
    out = lib.zeros(8, dtype=lib.float16)
    out[:] = values
    return out


@pytest.mark.parametrize("program", HALF_FROM_DOUBLE.values(), ids=HALF_FROM_DOUBLE.keys())
def test_a_double_cast_to_half_rounds_twice_as_torchs(program):
    with np.errstate(over="ignore"):
        assert_same_bits(program(tg), program(torch))
