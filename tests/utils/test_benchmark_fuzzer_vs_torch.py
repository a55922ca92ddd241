"""``torch.utils.benchmark``'s fuzzer against torch's: for the same seed and specification, ``Fuzzer.take`` yields
the same parameters (values and types), the same tensors (bits, shapes, strides) and the same tensor properties,
rejects as often and leaves the global generator in the same state; the specification checks raise torch's errors
(including 2.13's refusal of every normalised custom distribution); and the op fuzzers draw torch's parameters."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch


def bench(lib):
    return importlib.import_module(f"{lib.__name__}.utils.benchmark")


def comparable(value):
    """A drawn value or property as a comparable (type name, value), NumPy arrays as lists, dtypes' names."""
    if isinstance(value, np.ndarray):
        return "ndarray", str(value.dtype), value.tolist()
    if isinstance(value, tuple):
        return tuple(comparable(v) for v in value)
    return type(value).__name__, value


def taken(lib, make_fuzzer, n: int) -> tuple[list, list]:
    """``n`` steps of ``make_fuzzer(benchmark module, lib).take(n)``: the comparable steps and the tensors; then
    the rejection rate and a draw from the global generator (its state after the steps)."""
    fuzzer = make_fuzzer(bench(lib), lib)
    steps, tensors = [], []
    for step_tensors, properties, params in fuzzer.take(n):
        steps.append(({k: comparable(v) for k, v in params.items()},
                      {name: {k: comparable(v) for k, v in p.items()} for name, p in properties.items()},
                      {name: (tuple(t.shape), t.stride(), str(t.dtype)) for name, t in step_tensors.items()}))
        # (bfloat16 widened exactly, NumPy having no such dtype to compare bits in)
        tensors.extend(t.float() if t.dtype == lib.bfloat16 else t for t in step_tensors.values())
    steps.append(fuzzer.rejection_rate)
    tensors.append(lib.rand(3))
    return steps, tensors


def assert_same_takes(make_fuzzer, n: int = 4) -> None:
    (ours, our_tensors), (theirs, their_tensors) = taken(tg, make_fuzzer, n), taken(torch, make_fuzzer, n)
    assert ours == theirs
    for a, b in zip(our_tensors, their_tensors, strict=True):
        assert_same_bits(a, b)


def outcome(program, lib):
    """``program(benchmark module, lib)``'s value, or its error's type and message (``take`` run to its end)."""
    try:
        result = program(bench(lib), lib)
        return [params for _, _, params in result] if hasattr(result, "__next__") else result
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc).replace("tracegrad", "torch")


def assert_same_outcome(program) -> None:
    assert outcome(program, tg) == outcome(program, torch)


# --------------------------------------------------------------------------------------------------- take()

def mixed_spec(b, lib, seed):
    """Every kind of parameter, strict and not, a constraint, dimension counts, steps, size limits."""
    return b.Fuzzer(
        parameters=[b.FuzzedParameter("n", 1, 64, distribution="loguniform"),
                    [b.FuzzedParameter("m", 2, 9, distribution="uniform"),
                     b.FuzzedParameter("d", 1, 3, distribution="uniform", strict=True)],
                    b.FuzzedParameter("s", 1, 3, distribution="uniform"),
                    b.FuzzedParameter("u", 0.0, 1.0, distribution="uniform"),
                    b.FuzzedParameter("f", 2, 30.5, distribution="loguniform")],
        tensors=[b.FuzzedTensor("x", size=("n", "m", 5), steps=("s", 1, 2), dim_parameter="d", max_elements=200),
                 [b.FuzzedTensor("y", size=("m", "n"), dtype=lib.int32, probability_contiguous=0.2,
                                 roll_parameter="n")]],
        constraints=[lambda p: p["n"] != 3, lambda p: p["u"] > 0.1], seed=seed)


@pytest.mark.parametrize("seed", [0, 1, 7, 2 ** 31 + 5])
def test_take_mixed_specification(seed):
    assert_same_takes(lambda b, lib: mixed_spec(b, lib, seed))


DTYPES = ["float64", "float16", "bfloat16", "complex64", "int64", "int16", "uint8", "int8", "bool"]


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bool"])  # (bool: see ERRORS)
def test_take_each_dtype_three_dims_permuted(dtype):
    """A 3-d tensor never laid out contiguously (so permuted orders are drawn), with steps."""
    assert_same_takes(lambda b, lib: b.Fuzzer(
        parameters=[b.FuzzedParameter("k", 2, 6, distribution="uniform")],
        tensors=[b.FuzzedTensor("t", size=("k", 3, "k"), steps=(1, 2, 1), probability_contiguous=0.0,
                                dtype=getattr(lib, dtype), max_allocation_bytes=600)],
        seed=11), n=3)


@pytest.mark.parametrize("probability_contiguous", [0.0, 0.5, 1.0, float("nan")])
def test_take_probability_contiguous(probability_contiguous):
    assert_same_takes(lambda b, lib: b.Fuzzer(
        parameters=[b.FuzzedParameter("a", 1, 5, distribution="uniform"),
                    b.FuzzedParameter("b", 1, 5, distribution="uniform")],
        tensors=[b.FuzzedTensor("t", size=("a", "b", 2, 2), probability_contiguous=probability_contiguous),
                 b.FuzzedTensor("u", size=("b",), probability_contiguous=probability_contiguous)],
        seed=3), n=5)


def test_take_min_elements_and_allocation_bytes_force_rejections():
    assert_same_takes(lambda b, lib: b.Fuzzer(
        parameters=[b.FuzzedParameter("a", 1, 40, distribution="loguniform", strict=True),
                    b.FuzzedParameter("b", 1, 40, distribution="loguniform"),
                    b.FuzzedParameter("st", 1, 4, distribution="uniform")],
        tensors=[b.FuzzedTensor("t", size=("a", "b"), steps=("st",), min_elements=30, max_elements=300,
                                max_allocation_bytes=2000, dtype=lib.float64)],
        seed=5), n=5)


def test_take_tensor_constructor_gets_allocation_size_dtype_and_params():
    def make(b, lib):
        def constructor(size, dtype, **params):
            return lib.full(size, params["k"] + params["v"], dtype=dtype)
        return b.Fuzzer(parameters=[b.FuzzedParameter("k", 1, 4, distribution="uniform"),
                                    b.FuzzedParameter("v", -1.0, 1.0, distribution="uniform")],
                        tensors=[b.FuzzedTensor("t", size=("k", 2), steps=(2, "k"), tensor_constructor=constructor,
                                                dtype=lib.float64)],
                        seed=9)
    assert_same_takes(make)


def test_take_with_custom_distributions_and_aliases(monkeypatch):
    """Custom distributions (which 2.13's check refuses, so the check is bypassed in both libraries) with alias
    chains: the draws and resolution as in torch."""
    for lib in (tg, torch):
        monkeypatch.setattr(bench(lib).FuzzedParameter, "_check_distribution", lambda self, d: d)
    assert_same_takes(lambda b, lib: b.Fuzzer(
        parameters=[b.FuzzedParameter("base", 1, 8, distribution="uniform"),
                    b.FuzzedParameter("pick", distribution={b.ParameterAlias("base"): 0.5, 3: 0.25, "s": 0.25}),
                    b.FuzzedParameter("chain", distribution={b.ParameterAlias("pick"): 0.7, 1: 0.3}, strict=True)],
        tensors=[b.FuzzedTensor("t", size=("base", 2))],
        seed=4), n=6)


def test_alias_cycle_is_refused(monkeypatch):
    for lib in (tg, torch):
        monkeypatch.setattr(bench(lib).FuzzedParameter, "_check_distribution", lambda self, d: d)
    assert_same_outcome(lambda b, lib: b.Fuzzer(
        parameters=[b.FuzzedParameter("p", distribution={b.ParameterAlias("q"): 1.0}),
                    b.FuzzedParameter("q", distribution={b.ParameterAlias("p"): 1.0})],
        tensors=[], seed=0).take(1))


def test_take_is_lazy_and_seeds_only_when_iterated():
    def program(b, lib):
        lib.manual_seed(123)
        steps = b.Fuzzer(parameters=[b.FuzzedParameter("k", 1, 4, distribution="uniform")],
                         tensors=[b.FuzzedTensor("t", size=("k",))], seed=2).take(2)
        before = lib.rand(2).tolist()
        first = next(steps)
        return before, first[2], first[0]["t"].tolist(), lib.rand(2).tolist()
    assert_same_outcome(program)


def test_default_seed_and_public_attributes():
    def program(b, lib):
        fuzzer = b.Fuzzer(parameters=[], tensors=[b.FuzzedTensor("t", size=(2,))])
        spec = b.FuzzedParameter("p", 1, 2, distribution="uniform", strict=True)
        return (fuzzer.rejection_rate, type(fuzzer._seed).__name__, 0 <= fuzzer._seed < 2 ** 32,
                [tuple(t.shape) for t, _, _ in ((s[0]["t"], 0, 0) for s in fuzzer.take(2))],
                spec.name, spec.strict, repr(b.ParameterAlias("x")), b.ParameterAlias("x").alias_to,
                b.FuzzedTensor("t", size=(1,)).name, sorted(b.utils.fuzzer.__all__))
    assert_same_outcome(program)


def test_dtype_size_and_prod_helpers():
    def program(b, lib):
        helpers = b.utils.fuzzer
        return ([helpers.dtype_size(getattr(lib, d)) for d in DTYPES + ["float32", "complex128", "int32"]],
                helpers.prod((2 ** 40, 2 ** 40, 3)), helpers.prod((), base=5))
    assert_same_outcome(program)


# --------------------------------------------------------------------------------------------------- errors

ERRORS = {
    "unknown distribution": lambda b, lib: b.FuzzedParameter("p", 1, 2, distribution="normal"),
    "no distribution": lambda b, lib: b.FuzzedParameter("p", 1, 2),
    "negative probability": lambda b, lib: b.FuzzedParameter("p", distribution={1: -0.5, 2: 1.5}),
    "normalised dict (refused in 2.13)": lambda b, lib: b.FuzzedParameter("p", distribution={1: 0.5, 2: 0.5}),
    "nan probability": lambda b, lib: b.FuzzedParameter("p", distribution={1: float("nan")}),
    "dict with minval": lambda b, lib: b.FuzzedParameter("p", minval=1, distribution={1: 0.5}),
    "dict with maxval": lambda b, lib: b.FuzzedParameter("p", maxval=1, distribution={1: 0.5}),
    "unnormalised dict fails in numpy": lambda b, lib: b.Fuzzer(
        parameters=[b.FuzzedParameter("p", distribution={1: 0.5})], tensors=[], seed=0).take(1),
    "duplicate names": lambda b, lib: b.Fuzzer(
        parameters=[b.FuzzedParameter("x", 1, 2, distribution="uniform")], tensors=[b.FuzzedTensor("x", (1,))]),
    "not a list of specs": lambda b, lib: b.Fuzzer(parameters=[3], tensors=[]),
    "no valid parameters": lambda b, lib: b.Fuzzer(
        parameters=[b.FuzzedParameter("k", 1, 9, distribution="uniform")], tensors=[],
        constraints=[lambda p: p["k"] > 100], seed=1).take(1),
    "too many elements always": lambda b, lib: b.Fuzzer(
        parameters=[b.FuzzedParameter("k", 10, 20, distribution="uniform")],
        tensors=[b.FuzzedTensor("t", size=("k", "k"), max_elements=50)], seed=1).take(1),
    "negative size": lambda b, lib: b.Fuzzer(
        parameters=[b.FuzzedParameter("k", -3, -2, distribution="uniform")],
        tensors=[b.FuzzedTensor("t", size=("k", 2))], seed=1).take(1),
    "missing dim parameter": lambda b, lib: b.Fuzzer(
        parameters=[], tensors=[b.FuzzedTensor("t", size=(2,), dim_parameter="d")], seed=1).take(1),
    "loguniform without bounds": lambda b, lib: b.Fuzzer(
        parameters=[b.FuzzedParameter("k", distribution="loguniform")], tensors=[], seed=1).take(1),
    "bool tensor (randint(1, 127) out of range)": lambda b, lib: b.Fuzzer(
        parameters=[], tensors=[b.FuzzedTensor("t", size=(2,), dtype=lib.bool)], seed=1).take(1),
    "parameter named size": lambda b, lib: b.Fuzzer(
        parameters=[b.FuzzedParameter("size", 1, 2, distribution="uniform")],
        tensors=[b.FuzzedTensor("t", size=(2,))], seed=1).take(1),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_specification_errors(case):
    assert_same_outcome(ERRORS[case])


@pytest.mark.skipif(tg.cuda.is_available(), reason="the oracle is torch's CPU build")
def test_cuda_tensor_refused_without_cuda():
    assert_same_outcome(lambda b, lib: b.Fuzzer(
        parameters=[], tensors=[b.FuzzedTensor("t", size=(2,), cuda=True)], seed=0).take(1))


@pytest.mark.skipif(tg is torch, reason="a tracegrad refusal: torch has sparse tensors")
def test_sparse_tensor_spec_refused_in_words():
    with pytest.raises(NotImplementedError, match="tracegrad has no sparse tensors"):
        bench(tg).FuzzedSparseTensor("s", size=(4, 4))
    assert issubclass(bench(tg).FuzzedSparseTensor, bench(tg).FuzzedTensor)


# ----------------------------------------------------------------------------------------------- op fuzzers

OP_FUZZERS = {
    "unary": lambda b, lib, seed: importlib.import_module(
        f"{lib.__name__}.utils.benchmark.op_fuzzers.unary").UnaryOpFuzzer(seed),
    "binary": lambda b, lib, seed: importlib.import_module(
        f"{lib.__name__}.utils.benchmark.op_fuzzers.binary").BinaryOpFuzzer(seed, dtype=lib.float64),
    "spectral": lambda b, lib, seed: importlib.import_module(
        f"{lib.__name__}.utils.benchmark.op_fuzzers.spectral").SpectralOpFuzzer(seed=seed, probability_regular=0.5),
}


@pytest.mark.parametrize("name", list(OP_FUZZERS))
def test_op_fuzzer_construction_refused_as_in_2_13(name):
    assert_same_outcome(lambda b, lib: OP_FUZZERS[name](b, lib, 0))


@pytest.mark.parametrize("name", list(OP_FUZZERS))
def test_op_fuzzer_parameters_with_the_check_bypassed(name, monkeypatch):
    """Their specifications: the parameter sets drawn (the tensors, up to 2 GB, are not built)."""
    for lib in (tg, torch):
        monkeypatch.setattr(bench(lib).FuzzedParameter, "_check_distribution", lambda self, d: d)

    def program(b, lib):
        drawn = []
        for seed in (0, 1, 2):
            fuzzer = OP_FUZZERS[name](b, lib, seed)
            state = np.random.RandomState(seed)
            drawn.append([{k: comparable(v) for k, v in fuzzer._generate(state).items()} for _ in range(3)])
            drawn.append(fuzzer.rejection_rate)
        return drawn
    assert_same_outcome(program)
