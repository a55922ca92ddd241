"""Small gaps against torch 2.13: lazy modules through pickle, deepcopy and torch.save before their first forward;
sub's alpha negated (as torch's add(self, other, -alpha)) before its range check."""

from __future__ import annotations

import copy
import pickle
import re

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
