"""gradcheck's and gradgradcheck's random numbers are PyTorch's.

- Fast mode projects the Jacobians on random unit vectors drawn, as torch draws them, by ``rand`` from a fresh
  generator (its default seed): the same numbers, so a fast-mode failure prints torch's numbers (as numbers: torch's
  message formats a 0-d tensor) and a borderline check passes or fails alike.
- gradgradcheck's grad_outputs (``make_tensor`` in [-1, 1)) and the batched-gradient check's grad_outputs
  (``randn_like``) come from the user's generator, as torch's do: after the check the user's next random numbers
  are torch's (tracegrad drew them from a generator of its own, so a program's later draws differed).
"""

from __future__ import annotations

import re
import warnings

import pytest
from _lib import tg, torch


def _failing_function(lib):
    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x

    return Bad.apply


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("shape", [(2,), (3, 2)])
def test_mismatch_message_as_in_torch(fast_mode, shape):
    messages = []
    for lib in (torch, tg):
        n = shape[0] * shape[-1] if len(shape) > 1 else shape[0]
        x = lib.arange(1.0, 1.0 + n, dtype=lib.float64).reshape(shape).requires_grad_()
        with pytest.raises(Exception) as info:
            lib.autograd.gradcheck(_failing_function(lib), (x,), fast_mode=fast_mode)
        messages.append(re.sub(r"\d+\.\d{6,}", _ten_digits, str(info.value)))
    assert messages[1] == messages[0]


def _ten_digits(match) -> str:
    """A long number to 10 significant digits: fast mode's dot products may differ in their last bits."""
    return f"{float(match.group()):.10g}"


def _draws_after(lib, check) -> list:
    lib.manual_seed(7)
    x = lib.tensor([[0.5, 1.5], [2.0, -1.0]], dtype=lib.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        passed = check(lib, x)
    return [passed, lib.randn(3).tolist(), lib.rand(2).tolist()]


CHECKS = {
    "gradgradcheck": lambda L, x: L.autograd.gradgradcheck(lambda a: (a ** 3).sin(), (x,)),
    "gradgradcheck non-contiguous": lambda L, x: L.autograd.gradgradcheck(lambda a: (a ** 3).sin(), (x,),
                                                                          gen_non_contig_grad_outputs=True),
    "gradgradcheck of two outputs": lambda L, x: L.autograd.gradgradcheck(lambda a: (a.exp(), a.sum() * 2), (x,)),
    "batched gradcheck": lambda L, x: L.autograd.gradcheck(lambda a: a.exp() * 2, (x,), check_batched_grad=True),
    "fast gradcheck": lambda L, x: L.autograd.gradcheck(lambda a: a.exp(), (x,), fast_mode=True),
    "fast gradgradcheck": lambda L, x: L.autograd.gradgradcheck(lambda a: a.sin() * a, (x,), fast_mode=True),
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_user_generator_after_the_check_as_in_torch(name):
    assert _draws_after(tg, CHECKS[name]) == _draws_after(torch, CHECKS[name])
