"""How a number argument is read, each the same program on tracegrad and torch with the same outcome: values,
dtype and shape, or error type and message.

- A NumPy scalar is read as torch's argument parser reads it: an integer as a Python int, float64 and
  complex128 as the Python float and complex they are, any other as a double: ``np.True_`` is 1.0 (an integer
  tensor plus ``np.True_`` is float32; tracegrad kept the integer dtype, or refused a bool in ``sub``) and
  ``np.complex64(1j)`` is its real part, with NumPy's ComplexWarning (tracegrad made the result complex).
- A Python int that fits neither int64 nor uint64 is refused by torch's parser with CPython's OverflowError
  (tracegrad computed with it as a float, or raised NumPy's words); a ``float`` parameter reads it as a double.
- softshrink's lambda is checked against the dtype's range (inf and NaN refused), CELU's zero alpha and
  addcmul of bools are refused, in torch's words.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from _lib import tg, torch, value_or_error


def _outcome(program, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the ComplexWarning is compared on its own below)
        return value_or_error(program, lib)


def _same(program) -> None:
    assert _outcome(program, tg) == _outcome(program, torch)


def _x(L, dtype: str):
    if dtype == "bool":
        return L.tensor([True, False, True, False])
    return L.tensor([0.0, 1.0, -2.0, 3.0]).to(getattr(L, dtype))


OPERATIONS = {
    "add": lambda L, t, v: t.add(v),
    "add_": lambda L, t, v: t.clone().add_(v),
    "add out=": lambda L, t, v: L.add(t, v, out=L.empty_like(t)),
    "sub": lambda L, t, v: t.sub(v),
    "rsub": lambda L, t, v: L.rsub(t, v),
    "t - v": lambda L, t, v: t - v,
    "mul": lambda L, t, v: t.mul(v),
    "t * v": lambda L, t, v: t * v,
    "div": lambda L, t, v: t.div(v),
    "pow": lambda L, t, v: t.pow(v),
    "eq": lambda L, t, v: t.eq(v),
    "clamp": lambda L, t, v: t.clamp(max=v),
    "fill_": lambda L, t, v: t.clone().fill_(v),
    "masked_fill": lambda L, t, v: t.masked_fill(L.tensor([True, False, True, False]), v),
    "where": lambda L, t, v: L.where(L.tensor([True, False, True, False]), t, v),
    "sub alpha": lambda L, t, v: t.sub(t, alpha=v),
    "full_like": lambda L, t, v: L.full_like(t, v),
}
NUMPY_NUMBERS = [np.True_, np.False_, np.complex64(1j), np.complex64(2 + 0j), np.float32(2.5), np.float16(1.5),
                 np.int64(3), np.int8(-2), np.uint8(200), np.float64(0.25), np.complex128(1j)]
BIG_INTS = [2**63 - 1, 2**64, 2**70, -(2**63), -(2**63) - 1, -(2**70)]
DTYPES = ["float32", "float64", "float16", "int64", "int32", "uint8", "bool", "complex64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("number", NUMPY_NUMBERS, ids=repr)
@pytest.mark.parametrize("name", list(OPERATIONS))
def test_numpy_scalars_read_as_torch_reads_them(name, number, dtype):
    if dtype == "float16" and isinstance(number, complex) and name not in ("clamp", "fill_", "masked_fill", "eq"):
        pytest.skip("half with a complex number is torch's complex32, a dtype tracegrad lacks (NumPy has none)")
    if name == "pow" and dtype == "complex64":
        pytest.skip("complex powers: the sign of a zero imaginary part differs (listed in the notes)")
    _same(lambda L: OPERATIONS[name](L, _x(L, dtype), number))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("number", BIG_INTS)
@pytest.mark.parametrize("name", [n for n in OPERATIONS if n not in ("rsub", "sub", "t - v")] + ["v * t", "full"])
def test_ints_beyond_int64_and_uint64(name, number, dtype):
    extra = {"v * t": lambda L, t, v: v * t, "full": lambda L, t, v: L.full((2,), v)}
    program = extra.get(name) or OPERATIONS[name]
    if (dtype == "bool" and name == "add" and 2**63 <= number < 2**64) or (name == "sub alpha" and number == 2**63 - 1):
        pytest.skip("a uint64 Scalar: torch refuses its promotion or wraps it (not emulated)")
    if name == "sub alpha" and dtype == "bool":
        pytest.skip("tracegrad's sub refuses a bool tensor before reading alpha (torch's parser reads it first)")
    _same(lambda L: program(L, _x(L, dtype), number))


def test_a_float_parameter_reads_any_int():
    _same(lambda L: L.ones(3).logit(2**70))


def test_complex64_scalar_warns_as_in_torch():
    for lib in (tg, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = lib.ones(2) * np.complex64(1j)
        assert result.tolist() == [0.0, 0.0]
        assert [(w.category.__name__, w.filename) for w in caught] == [("ComplexWarning", __file__)]


@pytest.mark.parametrize(("lambd", "dtype"), itertools.product(
    [0.5, 0.0, -1, -0.5, float("inf"), float("nan"), 1e10, 1e300, 65504.0, 70000.0],
    ["float32", "float64", "float16"]))
def test_softshrink_lambda_range(lambd, dtype):
    _same(lambda L: L.nn.functional.softshrink(L.tensor([-2.0, 0.25, 3.0]).to(getattr(L, dtype)), lambd))


LIMITS = {
    "isclose rtol NaN": lambda L: L.isclose(L.ones(2), L.ones(2), rtol=float("nan")),
    "isclose atol NaN": lambda L: L.isclose(L.ones(2), L.ones(2), atol=float("nan")),
    "allclose rtol NaN": lambda L: L.tensor(L.allclose(L.ones(2), L.ones(2), rtol=float("nan"))),
    "hardtanh uint8, negative limit": lambda L: L.nn.functional.hardtanh(L.ones(2, dtype=L.uint8), -1.0, 2.5),
    "hardtanh uint8, limit 300": lambda L: L.nn.functional.hardtanh(L.arange(5, dtype=L.uint8), 0.5, 300),
    "hardtanh int32, limit 1e300": lambda L: L.nn.functional.hardtanh(L.ones(2, dtype=L.int32), -1.0, 1e300),
    "hardtanh int32, limit -2**40": lambda L: L.nn.functional.hardtanh(L.arange(5, dtype=L.int32), -2**40, 3),
    "hardtanh int64, float limits cut": lambda L: L.nn.functional.hardtanh(L.arange(5, dtype=L.int64), 1.7, 3.2),
    "hardtanh_ int8": lambda L: L.nn.functional.hardtanh_(L.arange(5, dtype=L.int8), -1, 3.9),
    "relu6 int8": lambda L: L.nn.functional.relu6(L.arange(8, dtype=L.int8) * 3),
    "histc of bools": lambda L: L.histc(L.tensor([True, False]), 4, 0, 1),
    "dist of two bool tensors": lambda L: L.tensor([True, False]).dist(L.tensor([True, True])),
    "dist of a bool tensor": lambda L: L.tensor([True, False]).dist(L.ones(2)),
    "hardtanh float16, int limit 70000": lambda L: L.nn.functional.hardtanh(L.ones(2, dtype=L.float16), 0, 70000),
    "hardtanh float16, int limit -65520": lambda L: L.nn.functional.hardtanh(L.ones(2, dtype=L.float16), -65520, 1),
    "hardtanh float16, int limits 65504": lambda L: L.nn.functional.hardtanh(L.ones(2, dtype=L.float16), -65504,
                                                                            65504),
    "Hardtanh float16, int limits": lambda L: L.nn.Hardtanh(-70000, 70000)(L.ones(2, dtype=L.float16)),
}


@pytest.mark.parametrize("name", list(LIMITS))
def test_limits_and_dtypes_in_torch_words(name):
    _same(LIMITS[name])


@pytest.mark.parametrize("program", [
    lambda L: L.nn.functional.celu(L.ones(2), 0.0),
    lambda L: L.celu(L.ones(2), 0),
    lambda L: L.tensor([True, False]).addcmul(L.tensor([True, True]), L.tensor([False, True])),
    lambda L: L.tensor([True, False]).addcmul(L.tensor([True, True]), L.tensor([False, True]), value=2),
], ids=["celu alpha 0.0", "celu alpha 0", "addcmul bool", "addcmul bool value 2"])
def test_refusals_in_torch_words(program):
    _same(program)


# ---- reviewers' finds (stop 21, r1) --------------------------------------------------------------------------


@pytest.mark.parametrize("program", [
    # a NumPy uint64 beyond int64 is no integer to torch's parser: TypeError (a ``float`` parameter reads it)
    lambda L: L.ones(2).mul(np.uint64(2**63)),
    lambda L: L.ones(2).mul(np.uint64(2**63 - 1)),
    lambda L: L.ones(2, dtype=L.int64).add(L.ones(2, dtype=L.int64), alpha=np.uint64(2**63)),
    lambda L: L.pow(np.uint64(2**63), L.ones(2)),
    lambda L: L.ones(2).lt(np.uint64(2**64 - 1)),
    lambda L: L.ones(2).mul(np.uint64(2**63), out=L.ones(2)),
    lambda L: L.cdist(L.ones(2, 2), L.ones(2, 2), p=np.uint64(2**63)),
    lambda L: L.nn.functional.layer_norm(L.ones(2, 2), (2,), eps=np.uint64(2**63)),
    # its operators answer NotImplemented: NumPy's reflected operator computes, or Python's TypeError
    lambda L: L.ones(2, dtype=L.int64) + np.uint64(2**63),
    lambda L: L.ones(2) * np.uint64(2**63),
    lambda L: np.uint64(2**63) - L.ones(2),
    lambda L: np.uint64(2**63) * L.ones(2),
    # several unreadable numbers: the last one's error, as torch's bindings unpack them (GCC's order)
    lambda L: L.ones(2).clamp(np.uint64(2**63), 2**70),
    lambda L: L.ones(2).clamp(2**70, np.uint64(2**63)),
    lambda L: L.ones(2).clamp(-2**70, 2**70),
    lambda L: L.ones(2).clamp(min=2**70, max=-2**70),
    lambda L: L.nn.functional.hardtanh(L.ones(2), -2**64, 2**64),
    lambda L: L.nn.functional.softplus(L.ones(2), -2**70, 2**70),
    lambda L: L.ones(2).add(np.uint64(2**63), alpha=2**70),
    lambda L: L.ones(2).sub(2**70, alpha=-2**70),
], ids=lambda p: "")
def test_unreadable_numbers_refused_as_torch(program):
    assert _array_or_outcome(program, tg) == _array_or_outcome(program, torch)


def _array_or_outcome(program, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = program(lib)
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            return type(exc).__name__, str(exc)
    if isinstance(result, np.ndarray):  # (NumPy's reflected operator's result)
        return "ndarray", str(result.dtype), result.tolist()
    return str(result.dtype).replace("tracegrad", "torch"), tuple(result.shape), repr(result.tolist())


@pytest.mark.parametrize("op", ["+", "-", "*", "/r", "-r", "*r", "+r"])
def test_uint64_beyond_int64_operators(op):
    def program(L):
        t, v = L.ones(2, dtype=L.int64), np.uint64(2**63)
        return {"+": lambda: t + v, "-": lambda: t - v, "*": lambda: t * v, "/r": lambda: t / v,
                "-r": lambda: v - t, "*r": lambda: v * t, "+r": lambda: v + t}[op]()

    assert _array_or_outcome(program, tg) == _array_or_outcome(program, torch)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_numbers_read_alike_under_a_transform_interpreter():
    from tracegrad.dispatch import Interpreter, dispatch

    class Pass(Interpreter):
        def process(self, op, args, kwargs):
            with self.lower():
                return dispatch(op, args, kwargs)

    def program(L):
        xi, xh = L.tensor([1, 2]), L.tensor([1.0, 2.0], dtype=L.float16)
        return [(r.dtype, r.tolist()) for r in (xi.add(np.True_), xh.mul(np.complex64(1 + 2j)),
                                                xi.mul(np.float32(0.5)))]

    eager = program(tg)
    with Pass():
        transformed = program(tg)
    assert transformed == eager
    assert [(str(d).replace("tracegrad", "torch"), v) for d, v in eager] == [
        (str(d), v) for d, v in program(torch)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "bool"])
@pytest.mark.parametrize("value", [2**70, -2**70, 2**64, 2**62 + 1, 300, 2**1100, np.uint64(2**63), np.float32(0.1),
                                   np.True_, 1j, 2.7, -2.7, float(2**63)], ids=repr)
def test_pad_reads_its_value_as_a_double(value, dtype):
    # (F.pad's ``value`` is a ``float?``: 2**70 pads a float tensor, 2**62 + 1 rounds, a complex is refused)
    _same(lambda L: L.nn.functional.pad(L.zeros(2).to(getattr(L, dtype)), (1, 1), value=value))


@pytest.mark.parametrize("dtype", ["float16", "float32", "int64", "int8", "uint8", "bool"])
@pytest.mark.parametrize("value", [300, 300.0, -1, 1e5, 1e300, 1j, 2 + 0j, float("nan"), 2**63, 2**64 - 1, 2.7,
                                   float(2**63)], ids=repr)
@pytest.mark.parametrize("pad", [(1, 1), (0, 0)])
def test_constant_pad_converts_its_value_as_scalar_to(pad, value, dtype):
    _same(lambda L: L.constant_pad_nd(L.zeros(2).to(getattr(L, dtype)), pad, value))


@pytest.mark.parametrize("value", [float(2**63), -float(2**63), float(2**63) * 1.0000001, 2147483647.5, 127.9, -128.9,
                                   255.5, -0.5], ids=repr)
@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8"])
def test_float_into_integers_bounded_as_c10_bounds_it(dtype, value):
    # (c10 compares in double: 2**63 passes into int64, as its smallest value)
    _same(lambda L: L.ones(2, dtype=getattr(L, dtype)).fill_(value))
    _same(lambda L: L.full((2,), value, dtype=getattr(L, dtype)))


def test_bool_subtraction_of_memory_mapped_tensors(tmp_path):
    def program(L):
        data = np.memmap(tmp_path / f"{L.__name__}.bin", dtype=np.bool_, mode="w+", shape=(3,))
        t = L.from_numpy(data)
        outcomes = []
        for f in (lambda: t - t, lambda: L.tensor([True, False, True]) - t, lambda: t - True, lambda: L.rsub(t, t)):
            try:
                f()
            except RuntimeError as exc:
                outcomes.append(str(exc))
        return outcomes

    assert program(tg) == program(torch)


@pytest.mark.parametrize("program", [
    # C++ ``double`` parameters read any int as a double (tracegrad passed the int on to a Scalar, which refuses
    # it beyond uint64), and an int margin makes an integer input's loss float
    lambda L: L.nn.functional.pairwise_distance(L.ones(2, 2), L.ones(2, 2), p=2**70),
    lambda L: L.nn.functional.pairwise_distance(L.ones(2, 2), L.ones(2, 2), eps=2**64),
    lambda L: L.nn.functional.pairwise_distance(L.ones(2, 2), L.zeros(2, 2), p=np.uint64(2**63)),
    lambda L: L.nn.functional.pairwise_distance(L.tensor([[1, 2]]), L.tensor([[0, 0]]), p=2**70),
    lambda L: L.nn.functional.hinge_embedding_loss(L.ones(2), L.ones(2), margin=2**64),
    lambda L: L.nn.functional.hinge_embedding_loss(L.ones(2), L.ones(2), margin=np.uint64(2**63)),
    lambda L: L.nn.functional.hinge_embedding_loss(L.tensor([1, 2]), L.tensor([1, -1]), margin=1),
    lambda L: L.nn.functional.cosine_embedding_loss(L.ones(2, 2), L.ones(2, 2), L.tensor([1, -1]), margin=2**70),
    lambda L: L.nn.functional.triplet_margin_loss(L.ones(2, 2), L.ones(2, 2), L.zeros(2, 2), margin=2**70),
    lambda L: L.nn.functional.triplet_margin_loss(L.ones(2, 2), L.ones(2, 2), L.zeros(2, 2), eps=2**70),
    lambda L: L.nn.functional.triplet_margin_loss(L.ones(2, 2), L.ones(2, 2), L.zeros(2, 2), margin=2**1100),
    lambda L: L.nn.functional.poisson_nll_loss(L.ones(2), L.ones(2), log_input=False, eps=2**70),
    lambda L: L.nn.functional.rms_norm(L.ones(2, 2), (2,), eps=2**70),
    lambda L: L.nn.functional.rms_norm(L.ones(2, 2), (2,), eps=2**1100),
    lambda L: L.nn.functional.rms_norm(L.ones(2, 2), (2,), eps=np.float32(0.1)),
], ids=lambda p: "")
def test_double_parameters_read_any_int(program):
    _same(program)


@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("program", [
    # the factories read NumPy numbers as the operators do (tracegrad's arange took np.float32(0.5) for an int:
    # a zero step; full kept np.True_ a bool)
    lambda L: L.full((2,), np.True_),
    lambda L: L.full((2,), np.complex64(1 + 1j)),
    lambda L: L.full((2,), np.complex128(1 + 1j)),
    lambda L: L.full((2,), np.float16(1.5)),
    lambda L: L.full((2,), np.uint64(2**64 - 1)),
    lambda L: L.full((2,), np.int8(5)),
    lambda L: L.full((2,), np.float32(0.1), dtype=L.float64),
    lambda L: L.arange(np.float32(0.1), 1, np.float32(0.3)),
    lambda L: L.arange(np.float32(0.5), 2),
    lambda L: L.arange(np.float32(2.5)),
    lambda L: L.arange(0, 2, np.float32(0.5)),
    lambda L: L.arange(np.int64(0), np.int64(4), np.int64(2)),
    lambda L: L.arange(np.int8(4)),
    lambda L: L.arange(np.True_, 3),
    lambda L: L.arange(np.uint64(2**63)),
    lambda L: L.arange(0, 2**64, 2**62, dtype=L.float64),
    lambda L: L.arange(-2**70, 2**70, 2**69, dtype=L.float64),
], ids=lambda p: "")
def test_factories_read_numpy_numbers_as_torch(program):
    _same(program)
