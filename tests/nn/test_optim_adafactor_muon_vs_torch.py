"""torch.optim.Adafactor and torch.optim.Muon against torch, bit for bit, step by step: parameters and state (values,
dtypes, versions) over several steps of float32, float64 and float16 parameters of one, two and three dimensions,
each option (maximize, weight decay, a tensor lr, beta2_decay, the eps pair, d, foreach; Nesterov momentum, each
learning-rate adjustment), gradients of another dtype than their parameter, and a step that fails part-way (the
errors for bad arguments: test_adafactor_vs_torch.py, test_muon_vs_torch.py); and half ``rsqrt``, whose scalar
loop (the elements after the last whole vector block) divides by the square root rounded to half.

Before: Adafactor's NumPy update computed norms from float64 sums and decayed, added and scaled otherwise than
torch's ops (an ulp off here and there even in float32), Muon's NumPy lerps and update rounded half parameters per
product, and its Newton–Schulz products summed in NumPy's order rather than that of torch's bfloat16 kernels.
Muon's matrices stay below the size where torch hands bfloat16 products to oneDNN (whose order is the processor's).
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, raised, tg, torch

ADAFACTOR_SHAPES = [(5, 7), (9,), (2, 3, 4), ()]
MUON_SHAPES = [(4, 6), (7, 3), (5, 5), (8, 16)]


def _params(lib, shapes: list, dtype: str) -> list:
    # (float32 starting values: a float64 array cast to half rounds once in tracegrad, through float in torch)
    rng = np.random.default_rng(0)
    return [lib.tensor(rng.standard_normal(s).astype(np.float32)).to(getattr(lib, dtype)).requires_grad_()
            for s in shapes]


def _options(lib, options: dict) -> dict:
    """The options, a string lr made the 0-d tensor it names."""
    lr = options.get("lr")
    return {**options, "lr": lib.tensor(float(lr))} if isinstance(lr, str) else options


def _stepped(lib, name: str, shapes: list, options: dict, dtype: str, grad_dtype: str | None = None, steps: int = 3):
    """``steps`` steps with fresh gradients (in ``grad_dtype``, through ``.grad.data``, where given)."""
    params = _params(lib, shapes, dtype)
    optimizer = getattr(lib.optim, name)(params, **_options(lib, options))
    rng = np.random.default_rng(1)
    for i in range(steps):
        for p in params:
            g = (rng.standard_normal(tuple(p.shape)) * (i + 1)).astype(np.float32)
            p.grad = lib.tensor(g).to(p.dtype)
            if grad_dtype is not None:
                p.grad.data = lib.tensor(g).to(getattr(lib, grad_dtype))
        optimizer.step()
    return params, optimizer


def _assert_same_params_and_state(ours: tuple, theirs: tuple) -> None:
    (params, optimizer), (t_params, t_optimizer) = ours, theirs
    for p, t_p in zip(params, t_params):
        assert_same_bits(p, t_p)
        assert p._version == t_p._version
        state, t_state = optimizer.state[p], t_optimizer.state[t_p]
        assert list(state) == list(t_state)
        for key, value in t_state.items():
            assert_same_bits(state[key], value)
            assert state[key]._version == value._version, key
    groups = optimizer.state_dict()["param_groups"], t_optimizer.state_dict()["param_groups"]
    assert [sorted(g) for g in groups[0]] == [sorted(g) for g in groups[1]]


def _assert_same_steps(name: str, shapes: list, options: dict, dtype: str, grad_dtype: str | None = None) -> None:
    _assert_same_params_and_state(_stepped(tg, name, shapes, options, dtype, grad_dtype),
                                  _stepped(torch, name, shapes, options, dtype, grad_dtype))


@pytest.mark.parametrize("length", [7, 32, 33, 70])
def test_half_rsqrt_rounds_the_square_root_to_half_in_the_scalar_loop(length):
    values = np.linspace(0.01, 300.0, length, dtype=np.float32)
    ours, theirs = tg.tensor(values).half(), torch.tensor(values).half()
    assert_same_bits(ours.rsqrt(), theirs.rsqrt())
    assert_same_bits(ours.rsqrt_(), theirs.rsqrt_())


# ---- Adafactor ---------------------------------------------------------------------------------------------------

ADAFACTOR_OPTIONS = [
    {},
    {"weight_decay": 0.1, "maximize": True},
    {"lr": "0.05", "weight_decay": 0.2},  # a tensor lr
    {"lr": 0.3, "d": 1.5, "eps": (1e-4, 1e-2), "beta2_decay": -0.5},
    {"lr": 2.0, "eps": (1e-30, 0.0)},
]


@pytest.mark.parametrize("foreach", [False, True], ids=["single", "foreach"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("options", ADAFACTOR_OPTIONS, ids=str)
def test_adafactor_steps_as_torchs(options, dtype, foreach):
    _assert_same_steps("Adafactor", ADAFACTOR_SHAPES, {**options, "foreach": foreach}, dtype)


@pytest.mark.parametrize("foreach", [False, True], ids=["single", "foreach"])
def test_adafactor_mixed_dtypes_take_eps_from_the_first(foreach):
    """eps1 from the first parameter's dtype (single tensor) or the first dtype group's (foreach), for all."""
    def stepped(lib):
        params = [lib.tensor(np.linspace(-1, 1, 12, dtype=np.float32)).reshape(3, 4).to(lib.float64),
                  lib.tensor(np.linspace(-2, 1, 5, dtype=np.float32)).half(), lib.ones(2, 2)]
        for p in params:
            p.requires_grad_()
        optimizer = lib.optim.Adafactor(params, lr=1.0, eps=(None, 0.0), foreach=foreach)
        for i in range(3):
            for p in params:
                p.grad = lib.full_like(p, 1e-4 * (i + 1))
            optimizer.step()
        return params, optimizer

    _assert_same_params_and_state(stepped(tg), stepped(torch))


@pytest.mark.parametrize("foreach", [False, True], ids=["single", "foreach"])
@pytest.mark.parametrize("dtype, grad_dtype", [("float32", "float16"), ("float32", "float64"), ("float16", "float32"),
                                               ("float64", "float32")])
def test_adafactor_grad_of_another_dtype_steps_or_fails_as_torchs(dtype, grad_dtype, foreach):
    program = lambda lib: _stepped(lib, "Adafactor", ADAFACTOR_SHAPES, {"foreach": foreach}, dtype, grad_dtype)
    outcome = raised(tg, program)
    assert outcome == raised(torch, program)
    if outcome is None:
        _assert_same_params_and_state(program(tg), program(torch))


@pytest.mark.parametrize("foreach", [False, True], ids=["single", "foreach"])
def test_adafactor_step_failing_part_way_leaves_torchs_state(foreach):
    """A complex gradient on the second parameter: the first has stepped (single tensor) or all steps counted."""
    def program(lib, outcome: list):
        params, optimizer = _stepped(lib, "Adafactor", [(3, 4), (5,)], {"foreach": foreach}, "float32", steps=1)
        params[1].grad.data = lib.ones(5, dtype=lib.complex64)
        outcome.append(raised(lib, lambda _: optimizer.step()))
        return params, optimizer

    ours, theirs = [], []
    _assert_same_params_and_state(program(tg, ours), program(torch, theirs))
    assert ours == theirs and ours[0] is not None


def test_adafactor_complex_parameter_refused_after_the_state_before_it():
    def program(lib, outcome: list):
        params = [lib.ones(2, 3, requires_grad=True), lib.ones(2, dtype=lib.complex64, requires_grad=True)]
        optimizer = lib.optim.Adafactor(params)
        for p in params:
            p.grad = lib.ones_like(p)
        outcome.append(raised(lib, lambda _: optimizer.step()))
        return params[:1], optimizer

    ours, theirs = [], []
    _assert_same_params_and_state(program(tg, ours), program(torch, theirs))
    assert ours == theirs and ours[0] is not None


# ---- Muon --------------------------------------------------------------------------------------------------------

MUON_OPTIONS = [
    {},
    {"lr": 0.02, "nesterov": False, "weight_decay": 0.0},
    {"lr": 0.05, "adjust_lr_fn": "match_rms_adamw", "momentum": 0.3},
    {"lr": "0.01", "adjust_lr_fn": "original", "weight_decay": 0.5, "ns_steps": 3},  # a tensor lr
    {"lr": 0.03, "ns_coefficients": (2.0, -1.5, 0.5), "eps": 1e-3},
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("options", MUON_OPTIONS, ids=str)
def test_muon_steps_as_torchs(options, dtype):
    _assert_same_steps("Muon", MUON_SHAPES, options, dtype)


@pytest.mark.parametrize("dtype, grad_dtype", [("float32", "float16"), ("float32", "float64"), ("float16", "float32"),
                                               ("float32", "complex64")])
def test_muon_grad_of_another_dtype_steps_or_fails_as_torchs(dtype, grad_dtype):
    program = lambda lib: _stepped(lib, "Muon", MUON_SHAPES, {}, dtype, grad_dtype, steps=2)
    outcome = raised(tg, program)
    assert outcome == raised(torch, program)
    if outcome is None:
        _assert_same_params_and_state(program(tg), program(torch))


def test_muon_step_failing_part_way_leaves_torchs_state():
    """A 1-d gradient (through ``.grad.data``) on the second parameter: the first has stepped."""
    def program(lib, outcome: list):
        params, optimizer = _stepped(lib, "Muon", MUON_SHAPES[:2], {}, "float32", steps=1)
        params[0].grad = lib.ones_like(params[0])
        params[1].grad.data = lib.ones(3)
        outcome.append(raised(lib, lambda _: optimizer.step()))
        return params, optimizer

    ours, theirs = [], []
    _assert_same_params_and_state(program(tg, ours), program(torch, theirs))
    assert ours == theirs and ours[0] is not None
