"""Differences that the programs of ``tests/test_user_programs32_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``Tensor.renorm``'s gradient (a max-norm constraint or an L2-ball projection of a PGD perturbation that is
  differentiated through) was a few ulp off torch: PyTorch's renorm_backward groups its terms as
  ``maxnorm * invnorm * (grad - invnorm * nb)`` (tracegrad distributed the factor), and on CPU takes the norm and
  the sums in the accumulate type (float32's in float64), rounding only the result to the gradient's type.
- its forward in float16 and bfloat16 was an ulp off: PyTorch takes the norm and the scale in float32 and rounds
  the scale to the input's type before multiplying.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

# (p, dim, maxnorm): the L2 projection of a batch's rows, and the other norms renorm takes
_NORMS = [(2, 0, 0.5), (1, 1, 0.3), (0.5, 2, 1.0), (float("inf"), -1, 0.2), (3, 0, 100.0)]


def _renormed(lib, dtype: str, p, dim, maxnorm, zero_slice: bool = False, double_backward: bool = False) -> list:
    """renorm's result and the gradient of a weighted sum of it (and that gradient's own gradient), as tensors."""
    rng = np.random.default_rng(32)
    values = rng.standard_normal((3, 4, 2))
    if zero_slice:  # (a slice whose norm is 0: under maxnorm, its gradient passes through)
        values[1] = 0
    x = lib.tensor(values).to(getattr(lib, dtype)).requires_grad_()
    weight = lib.tensor(rng.standard_normal((3, 4, 2))).to(x.dtype)
    y = x.renorm(p, dim, maxnorm)
    grad, = lib.autograd.grad((y * weight).sum(), x, create_graph=double_backward)
    results = [y, grad]
    if double_backward:
        results += lib.autograd.grad((grad * grad).sum(), x)
    return results


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p, dim, maxnorm", _NORMS)
@pytest.mark.parametrize("zero_slice", [False, True])
def test_renorm_gradient_is_bit_for_bit(dtype, p, dim, maxnorm, zero_slice):
    for ours, theirs in zip(_renormed(tg, dtype, p, dim, maxnorm, zero_slice),
                            _renormed(torch, dtype, p, dim, maxnorm, zero_slice)):
        assert_same_bits(ours, theirs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_renorm_double_backward_is_bit_for_bit(dtype):
    for ours, theirs in zip(_renormed(tg, dtype, 2, 0, 0.5, double_backward=True),
                            _renormed(torch, dtype, 2, 0, 0.5, double_backward=True)):
        assert_same_bits(ours, theirs)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("p, dim, maxnorm", _NORMS)
def test_renorm_of_half_types_is_bit_for_bit(dtype, p, dim, maxnorm):
    ours = _renormed(tg, dtype, p, dim, maxnorm)
    theirs = _renormed(torch, dtype, p, dim, maxnorm)
    assert_same_bits(ours[0].float(), theirs[0].float())
    if dtype == "float16":  # (bfloat16's fractional-p gradient is still its own: see the program file's Left)
        assert_same_bits(ours[1].float(), theirs[1].float())


def test_renorm_in_place_of_a_pgd_perturbation_is_bit_for_bit():
    """The L2 projection a PGD loop writes in place: ``delta.renorm_(2, 0, eps)`` under no_grad."""
    rng = np.random.default_rng(33)
    values = (rng.standard_normal((5, 10)) * 0.4).astype(np.float32)
    deltas = []
    for lib in (tg, torch):
        delta = lib.tensor(values)
        with lib.no_grad():
            delta.renorm_(2, 0, 0.5)
        deltas.append(delta)
    assert_same_bits(*deltas)
