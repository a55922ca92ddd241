"""Small gaps against torch 2.13: lazy modules through pickle, deepcopy and torch.save before their first forward;
sub's alpha negated (as torch's add(self, other, -alpha)) before its range check; leaky_relu with a NaN slope;
hardshrink's lambd and bfloat16 pow's exponent checked against the dtype; logit's odd eps; complex values given to
float parameters (nan_to_num)."""

from __future__ import annotations

import copy
import pickle
import re
import warnings

import numpy as np
import pytest

from tests._lib import saved_and_loaded, tg, torch, value_or_error

# ---- lazy modules: picklable before and after their dry run -------------------------------------------------

_LAZY_LAYERS = {
    "LazyLinear": (lambda lib: lib.nn.LazyLinear(3), (2, 4)),
    "LazyConv2d": (lambda lib: lib.nn.LazyConv2d(2, 3), (1, 2, 5, 5)),
    "LazyBatchNorm1d": (lambda lib: lib.nn.LazyBatchNorm1d(), (3, 4)),
}
_COPIES = {
    "pickle": lambda lib, m: pickle.loads(pickle.dumps(m)),
    "deepcopy": lambda lib, m: copy.deepcopy(m),
    "torch.save": lambda lib, m: saved_and_loaded(lib, m, weights_only=False),
}


def _copied_lazy_layer(lib, layer: str, how: str, initialized: bool) -> tuple:
    make, shape = _LAZY_LAYERS[layer]
    module = make(lib)
    if initialized:
        module(lib.ones(shape))
    copied = _COPIES[how](lib, module)
    before = type(copied).__name__
    result = copied(lib.ones(shape))
    return before, type(copied).__name__, tuple(result.shape), [tuple(p.shape) for p in copied.parameters()]


@pytest.mark.parametrize("initialized", [False, True], ids=["before forward", "after forward"])
@pytest.mark.parametrize("how", list(_COPIES))
@pytest.mark.parametrize("layer", list(_LAZY_LAYERS))
def test_lazy_module_copies_as_in_torch(layer, how, initialized):
    assert _copy_outcome(tg, layer, how, initialized) == _copy_outcome(torch, layer, how, initialized)


def _copy_outcome(lib, *copy_args):
    """``_copied_lazy_layer``'s result, or its error's type and message (a function's address left out: torch refuses to
    deep-copy an uninitialized buffer naming ``<function Tensor.__deepcopy__ at 0x...>``)."""
    try:
        return _copied_lazy_layer(lib, *copy_args)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, re.sub(" at 0x[0-9a-f]+>", ">", str(exc))


def _deep_copy_loaded(lib) -> tuple:
    """A deep copy's load-state-dict hook materializes the copy, not the original."""
    original = lib.nn.LazyLinear(3)
    copied = copy.deepcopy(original)
    copied.load_state_dict(lib.nn.Linear(4, 3).state_dict())
    return original.has_uninitialized_params(), tuple(copied.weight.shape)


def test_deep_copied_lazy_module_loads_into_itself():
    assert _deep_copy_loaded(tg) == _deep_copy_loaded(torch) == (True, (3, 4))


def _pickled_hook_calls(lib) -> list:
    """A user's load-state-dict pre-hook (a module-level function) pickles with its module and is called with the
    unpickled module."""
    module = lib.nn.Linear(2, 2)
    module.register_load_state_dict_pre_hook(_record_hook)
    revived = pickle.loads(pickle.dumps(module))
    _CALLS.clear()
    revived.load_state_dict(module.state_dict())
    return [(who is revived, keys) for who, keys in _CALLS]


_CALLS: list = []


def _record_hook(module, state_dict, prefix, *rest) -> None:
    _CALLS.append((module, sorted(state_dict)))


def test_load_state_dict_pre_hook_pickles_with_its_module():
    assert _pickled_hook_calls(tg) == _pickled_hook_calls(torch) == [(True, ["bias", "weight"])]


# ---- sub's alpha: torch computes add(self, other, -alpha) ---------------------------------------------------

_ALPHA_EDGES = {"int8": (128, -128), "int16": (2**15, -(2**15)), "int32": (2**31, -(2**31)),
                "int64": (2**63 - 1, -(2**63)), "uint8": (255, -255)}


_SUBTRACTIONS = {
    "sub": lambda lib, a, b, alpha: lib.sub(a, b, alpha=alpha),
    "sub number": lambda lib, a, b, alpha: lib.sub(a, 2, alpha=alpha),
    "sub_": lambda lib, a, b, alpha: a.sub_(b, alpha=alpha),
    "rsub": lambda lib, a, b, alpha: lib.rsub(a, b, alpha=alpha),
    "rsub number": lambda lib, a, b, alpha: lib.rsub(a, 2, alpha=alpha),
    "subtract positional": lambda lib, a, b, alpha: lib.subtract(a, 2, alpha),
}


def _subtracted(name: str, dtype: str, alpha):
    """A program computing subtraction ``name`` of two small tensors of ``dtype``."""
    def program(lib):
        a = lib.tensor([1, 2, -3], dtype=getattr(lib, dtype))
        b = lib.tensor([3, 1, 1], dtype=getattr(lib, dtype))
        return _SUBTRACTIONS[name](lib, a, b, alpha)

    return program


def _same_outcome(program) -> None:
    assert value_or_error(program, tg) == value_or_error(program, torch)


@pytest.mark.parametrize("name", list(_SUBTRACTIONS))
@pytest.mark.parametrize("dtype,alpha", [(d, a) for d, edges in _ALPHA_EDGES.items() for a in edges])
def test_integer_sub_checks_the_negated_alpha(dtype, alpha, name):
    _same_outcome(_subtracted(name, dtype, alpha))


@pytest.mark.parametrize("name", list(_SUBTRACTIONS))
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32", "float64", "complex64"])
def test_float_sub_negates_int64_min_alpha_as_torch(dtype, name):
    """-(-2**63) overflows to itself in torch's Scalar: the result has the sign of ``a + alpha * b``."""
    _same_outcome(_subtracted(name, dtype, -(2**63)))


# ---- leaky_relu with a NaN slope: positive elements kept ---------------------------------------------------

_FLOATS = ["float16", "bfloat16", "float32", "float64"]


def _leaky_relu_nan_slope(dtype: str):
    def program(lib):
        x = lib.tensor([-1.0, 0.0, 2.0, float("nan"), -0.0, 3.5], dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.nn.functional.leaky_relu(x, float("nan"))
        (grad,) = lib.autograd.grad(y.sum(), x)
        inplace = lib.nn.functional.leaky_relu(x.detach().clone(), float("nan"), inplace=True)
        return lib.stack([y.detach(), grad, inplace])

    return program


@pytest.mark.parametrize("dtype", _FLOATS)
def test_leaky_relu_with_nan_slope_keeps_positive_elements(dtype):
    _same_outcome(_leaky_relu_nan_slope(dtype))


# ---- hardshrink: lambd converted to the tensor's type, with c10's overflow check ------------------------------


@pytest.mark.parametrize("lambd", [1e5, 70000, 65520.0, 65504.0, 1e39, -1e39, float("inf"), float("nan")])
@pytest.mark.parametrize("dtype", _FLOATS)
@pytest.mark.parametrize("op", ["hardshrink", "hardshrink_backward", "softshrink_backward"])
def test_shrink_lambda_beyond_the_dtype_refused(op, dtype, lambd):
    def program(lib):
        x = lib.tensor([-1.0, 0.5, 2.0], dtype=getattr(lib, dtype))
        if op == "hardshrink":
            return lib.nn.functional.hardshrink(x, lambd)
        return getattr(lib.ops.aten, op)(x, x, lambd)

    _same_outcome(program)


# ---- pow of a bfloat16 tensor: the exponent checked before it is rounded to bfloat16 --------------------------


@pytest.mark.parametrize("exponent", [3.4e38, 1e39, -1e39, 1e300, 3.38953139e38, 3.3895e38, float("inf"), 2.5])
@pytest.mark.parametrize("form", ["pow", "**", "pow_"])
def test_bfloat16_pow_refuses_an_exponent_beyond_bfloat16(form, exponent):
    def program(lib):
        x = lib.tensor([0.5, 1.0, 2.0, -3.0], dtype=lib.bfloat16)
        if form == "pow_":
            return x.pow_(exponent)
        return x ** exponent if form == "**" else lib.pow(x, exponent)

    _same_outcome(program)


def test_bfloat16_numbers_of_other_operators_still_round_to_inf():
    """TensorIterator casts add's or eq's number unchecked; a number base of pow too."""
    def program(lib):
        x = lib.tensor([0.5, 1.0, 2.0], dtype=lib.bfloat16)
        return lib.stack([x + 1e39, (x == 1e39).to(x.dtype), lib.pow(1e39, x)])

    _same_outcome(program)


# ---- logit's eps: clamped as ATen's kernel clamps, checked against the dtype -----------------------------------

_LOGIT_INPUT = [0.0, 0.3, 1.0, 0.9999, -0.5, 1.5, float("nan"), 0.55, 0.45]
_ODD_EPS = [0.6, 1.0, 2.0, float("nan"), -0.5, 1e-6, 1e39, -1e39, float("inf")]


def _logit_outcome(lib, dtype: str, eps: float):
    """Where the logits are NaN and infinite, and their values; or the error."""
    try:
        x = lib.tensor(_LOGIT_INPUT, dtype=getattr(lib, dtype))
        y = lib.logit(x, eps).double()
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    return y.isnan().tolist(), y.isinf().tolist(), y.nan_to_num(0.0, 0.0, 0.0).numpy()


@pytest.mark.parametrize("eps", _ODD_EPS)
@pytest.mark.parametrize("dtype", _FLOATS)
def test_logit_with_odd_eps_as_torch(dtype, eps):
    ours, theirs = _logit_outcome(tg, dtype, eps), _logit_outcome(torch, dtype, eps)
    assert ours[:2] == theirs[:2]
    if ours[0] != "RuntimeError":
        # (float32 and float64 go through MKL's log in torch: an ulp apart; bfloat16 rounds x / (1 - x) first)
        assert np.allclose(ours[2], theirs[2], rtol=1e-2 if dtype == "bfloat16" else 1e-6)


@pytest.mark.parametrize("eps", [-0.5, float("nan"), 0.6])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logit_gradient_with_odd_eps_as_torch(dtype, eps):
    """A negative eps is no eps to the backward kernel too: NaN outside [0, 1]."""
    def program(lib):
        x = lib.tensor(_LOGIT_INPUT, dtype=getattr(lib, dtype), requires_grad=True)
        lib.logit(x, eps).sum().backward()
        return x.grad

    _same_outcome(program)


# ---- nan_to_num: float parameters read as torch's parser reads a double ------------------------------------

_NAN_TO_NUM_CALLS = {
    "numpy complex nan": lambda lib, x: lib.nan_to_num(x, nan=np.complex128(1 + 2j)),
    "numpy complex positional": lambda lib, x: x.nan_to_num(np.complex128(5 + 1j)),
    "complex tensor nan": lambda lib, x: lib.nan_to_num(x, nan=lib.tensor(1j)),
    "complex tensor real": lambda lib, x: lib.nan_to_num(x, nan=lib.tensor(1 + 0j)),
    "complex tensor neginf": lambda lib, x: lib.nan_to_num(x, neginf=lib.tensor(2j)),
    "complex tensor in place": lambda lib, x: x.nan_to_num_(posinf=lib.tensor(1j)),
    "complex input": lambda lib, x: lib.nan_to_num(x.to(lib.complex64), nan=np.complex128(1 + 2j)),
    "python complex": lambda lib, x: lib.nan_to_num(x, nan=1 + 2j),
    "logit eps numpy complex": lambda lib, x: lib.logit(x, np.complex128(0.1 + 1j)),
}


@pytest.mark.parametrize("call", list(_NAN_TO_NUM_CALLS))
def test_float_parameters_of_complex_values_as_torch(call):
    def program(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            return _NAN_TO_NUM_CALLS[call](lib, lib.tensor([float("nan"), float("inf"), -float("inf"), 0.5]))

    _same_outcome(program)


def test_numpy_complex_float_parameter_warns_as_torch():
    def warnings_of(lib) -> list:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nan_to_num(lib.tensor([float("nan")]), nan=np.complex128(1 + 2j))
        return [(w.category.__name__, str(w.message)) for w in caught]

    assert warnings_of(tg) == warnings_of(torch) != []
