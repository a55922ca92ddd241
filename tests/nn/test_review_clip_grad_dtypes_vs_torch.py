"""Review of clip_grad_norm_/get_total_norm/clip_grads_with_norm_ without a mode (nn/utils/clip_grad.py's NumPy
path), against torch, bit for bit: parameters of mixed dtypes (the per-tensor norms are stacked in the order of
torch's dtype groups, which is the order of the total's sum), float16/bfloat16/0-d gradients scaled by a coefficient
of another dtype (``mul_``'s rules: a float16 gradient reads it in float, a 0-d one computes in the promoted dtype),
``max_norm / t`` as torch's ``t.reciprocal() * max_norm``, bfloat16 norms computed in float, and the errors of
the operators torch's code calls (a float total, a non-tensor, an integer gradient, an inference-mode gradient)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _lib import bits_or_error, tg, torch


def _gradients(lib, dtypes: list[str], shapes: list[tuple], transposed: bool = False) -> list:
    rng = np.random.default_rng(17)
    params = []
    for dtype, shape in [(d, shapes[0]) for d in dtypes] + [(dtypes[0], s) for s in shapes[1:]]:
        p = lib.zeros(shape, dtype=getattr(lib, dtype), requires_grad=True)
        values = rng.standard_normal(shape[::-1] if transposed else shape).astype(np.float32) * 3
        grad = lib.tensor(values).to(getattr(lib, dtype))
        p.grad = grad.t() if transposed else grad
        params.append(p)
    return params


_DTYPES = [["float16", "float32", "float16", "float64"], ["float64", "float16", "float32"], ["bfloat16"],
           ["bfloat16", "float16"], ["float32", "float64", "float32"]]


@pytest.mark.parametrize("dtypes", _DTYPES, ids="-".join)
@pytest.mark.parametrize("shapes", [[(7, 13), (5,)], [(), (40, 3)]], ids=str)
@pytest.mark.parametrize("norm_type", [0, 1, 2, math.inf, -math.inf, 0.5, 3])
@pytest.mark.parametrize("foreach", [None, False])
def test_clip_grad_norm_of_mixed_dtypes(dtypes, shapes, norm_type, foreach):
    def program(lib):
        params = _gradients(lib, dtypes, shapes, transposed=len(shapes[0]) == 2)
        total = lib.nn.utils.clip_grad_norm_(params, 0.3, norm_type, foreach=foreach)
        alone = lib.nn.utils.get_total_norm([p.grad for p in params], norm_type, foreach=foreach)
        return [total, alone, *(p.grad for p in params), [p.grad._version for p in params]]

    assert bits_or_error(program, tg) == bits_or_error(program, torch)


@pytest.mark.parametrize("grad_dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("total_dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(), (33,)], ids=str)
def test_clip_grads_with_norm_coefficient_dtypes(grad_dtype, total_dtype, shape):
    """The coefficient ``clamp(max_norm / (total + 1e-6), max=1)`` in the total's dtype, times each gradient."""
    def program(lib):
        [p] = _gradients(lib, [grad_dtype], [shape])
        lib.nn.utils.clip_grads_with_norm_([p], 0.7, lib.tensor(3.3, dtype=getattr(lib, total_dtype)))
        return p.grad

    assert bits_or_error(program, tg) == bits_or_error(program, torch)


def _inference_gradient(lib):
    with lib.inference_mode():
        grad = lib.tensor([3.0, 4.0])
    p = lib.zeros(2, requires_grad=True)
    p.grad = grad
    return lib.nn.utils.clip_grad_norm_([p], 0.5)


@pytest.mark.parametrize("program", [
    lambda lib: lib.nn.utils.clip_grads_with_norm_(_gradients(lib, ["float32"], [(2,)]), 1.0, 3.0),
    lambda lib: lib.nn.utils.clip_grads_with_norm_([lib.zeros(2)], "abc", lib.tensor(1.0)),
    lambda lib: lib.nn.utils.clip_grads_with_norm_(_gradients(lib, ["float32"], [(2,)]), 0.3, lib.tensor([3.0, 1.0])),
    lambda lib: lib.nn.utils.get_total_norm([lib.ones(2), 3.0]),
    lambda lib: lib.nn.utils.get_total_norm([lib.ones(2), None]),
    lambda lib: lib.nn.utils.get_total_norm([lib.ones(2, dtype=lib.int64)]),
    _inference_gradient,
], ids=["float-total", "no-gradients-bad-max-norm", "1-d-total", "non-tensor", "none", "integer", "inference"])
def test_clip_refusals(program):
    assert bits_or_error(program, tg) == bits_or_error(program, torch)


def test_clip_grads_with_norm_integer_total():
    """An int64 total: ``total + 1e-6`` is float32, then ``reciprocal() * max_norm``."""
    def program(lib):
        params = _gradients(lib, ["float32"], [(5,)])
        lib.nn.utils.clip_grads_with_norm_(params, 0.3, lib.tensor(3))
        return params[0].grad

    assert bits_or_error(program, tg) == bits_or_error(program, torch)
