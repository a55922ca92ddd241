"""``nn.init``'s functions and ``nn.utils``'s gradient clipping and parameter vectors given what is not a tensor (a
NumPy array, a list, an int, None, a string), against torch: the same error, naming the attribute torch's Python
reads first (``uniform_``, ``fill_``, ``ndimension``, ``grad``, ``device``...), where tracegrad named its private
ones (``_data``, ``_before_write``, ``_grad``). And the parameter vectors as torch's Python makes them: a view of each
parameter (a non-contiguous one refused), the parameters' data made views of the vector in its dtype."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from _lib import tg, torch

NON_TENSORS = {"array": lambda: np.ones((3, 3)), "list": lambda: [1.0, 2.0], "int": lambda: 3, "None": lambda: None}

INITS = {"uniform_": (), "normal_": (), "trunc_normal_": (), "constant_": (1.0,), "ones_": (), "zeros_": (),
         "eye_": (), "dirac_": (), "xavier_uniform_": (), "xavier_normal_": (), "kaiming_uniform_": (),
         "kaiming_normal_": (), "orthogonal_": (), "sparse_": (0.5,)}


def _error(program) -> tuple[str, str] | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            program()
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            return type(exc).__name__, re.sub(r"0x[0-9a-f]+", "0x?", str(exc))
    return None


@pytest.mark.parametrize("kind", list(NON_TENSORS))
@pytest.mark.parametrize("name", list(INITS))
def test_init_of_a_non_tensor_as_torch(name, kind):
    def program(lib):
        return lambda: getattr(lib.nn.init, name)(NON_TENSORS[kind](), *INITS[name])
    assert _error(program(tg)) == _error(program(torch))


GRADIENT_UTILS = {
    "clip_grad_norm_": lambda L, p: L.nn.utils.clip_grad_norm_(p, 1.0),
    "clip_grad_value_": lambda L, p: L.nn.utils.clip_grad_value_(p, 1.0),
    "clip_grads_with_norm_": lambda L, p: L.nn.utils.clip_grads_with_norm_(p, 1.0, L.tensor(2.0)),
    "parameters_to_vector": lambda L, p: L.nn.utils.parameters_to_vector(p),
    "vector_to_parameters": lambda L, p: L.nn.utils.vector_to_parameters(L.ones(3), p),
}
PARAMETERS = {"array": lambda L: np.ones(3), "list of arrays": lambda L: [np.ones(3)], "string": lambda L: "ab",
              "list of a tensor and an int": lambda L: [L.ones(2, requires_grad=True), 3]}


@pytest.mark.parametrize("parameters", list(PARAMETERS))
@pytest.mark.parametrize("name", list(GRADIENT_UTILS))
def test_gradient_utilities_given_non_tensors_as_torch(name, parameters):
    def program(lib):
        return lambda: GRADIENT_UTILS[name](lib, PARAMETERS[parameters](lib))
    assert _error(program(tg)) == _error(program(torch))


def test_total_norm_reads_the_first_device():
    assert _error(lambda: tg.nn.utils.get_total_norm("ab")) == _error(lambda: torch.nn.utils.get_total_norm("ab"))


def test_clip_grad_norm_warns_for_an_empty_generator():
    messages = []
    for lib in (tg, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)
        messages.append([(w.category, str(w.message), w.filename) for w in caught])
    assert messages[0] == messages[1] and messages[0]


def _vector_round_trip(lib) -> tuple:
    p, q = lib.nn.Parameter(lib.zeros(3)), lib.nn.Parameter(lib.zeros(2, 2))
    vec = lib.arange(7, dtype=lib.float64)
    lib.nn.utils.vector_to_parameters(vec, [p, q])
    vec[0] = 10.0  # (each parameter's data is a view of the vector)
    return str(p.dtype), p.tolist(), q.tolist(), p._version, q.requires_grad


def test_vector_to_parameters_makes_views_of_the_vector_as_torch():
    assert _vector_round_trip(tg) == _vector_round_trip(torch)


VECTOR_MISTAKES = {
    "a transposed parameter": lambda L: L.nn.utils.parameters_to_vector([L.ones(2, 3).t()]),
    "too short a vector": lambda L: L.nn.utils.vector_to_parameters(L.ones(3), [L.ones(2), L.ones(2)]),
    "no parameters": lambda L: L.nn.utils.parameters_to_vector([]),
}


@pytest.mark.parametrize("case", list(VECTOR_MISTAKES))
def test_parameter_vector_mistakes_as_torch(case):
    assert _error(lambda: VECTOR_MISTAKES[case](tg)) == _error(lambda: VECTOR_MISTAKES[case](torch))
