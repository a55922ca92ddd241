"""Scalar arguments beyond a floating tensor's range, and clamp's Scalar kernels on bool, compared with torch.

- a Python int converted to half (``Scalar::to<c10::Half>``, checked) was let by where the kernel reads the number in
  the tensor's own type: ``clamp(half, 70000)`` gave inf, ``clamp(half, -2**63)`` left the tensor as it was,
  ``add(half, half, alpha=70000)`` gave inf; torch refuses "value cannot be converted to type c10::Half without
  overflow";
- a bfloat16 tensor's clamp bounds, alpha, hardtanh limits and threshold's value were checked against float (the
  kernels run on float32 copies): 3.4e38, beyond bfloat16's largest, gave inf, and a larger number was refused
  naming float where torch names c10::BFloat16;
- ``clamp(bool_tensor, True)`` (and clamp_min/clamp_max with a bool bound) computed; the Scalar kernels' dispatch
  has no Bool: '"clamp_min_scalar_cpu" not implemented for 'Bool''.
"""

from __future__ import annotations

import pytest
from _lib import tg, torch, value_or_error


def _t(lib, dtype: str):
    return lib.tensor([1, 2, 3], dtype=getattr(lib, dtype))


PROGRAMS = {
    "clamp-half-int": lambda t: t.clamp(_t(t, "half"), 70000),
    "clamp-half-int-min-int64": lambda t: t.clamp(_t(t, "half"), -(2**63)),
    "clamp-half-max-int": lambda t: t.clamp(_t(t, "half"), max=2**31),
    "clamp_min-half-int": lambda t: t.clamp_min(_t(t, "half"), 70000),
    "clamp_max-half-int": lambda t: t.clamp_max(_t(t, "half"), 70000),
    "clamp_-half-int": lambda t: _t(t, "half").clamp_(70000),
    "clamp-half-int-fits": lambda t: t.clamp(_t(t, "half"), 65504),
    "clamp-half-empty": lambda t: t.clamp(_t(t, "half")[:0], 70000),
    "add-half-alpha-int": lambda t: t.add(_t(t, "half"), _t(t, "half"), alpha=70000),
    "sub-half-alpha-int": lambda t: t.sub(_t(t, "half"), _t(t, "half"), alpha=2**40),
    "hardtanh-half-int": lambda t: t.nn.functional.hardtanh(_t(t, "half"), -1, 70000),
    "where-half-int-unchecked": lambda t: t.where(t.tensor([True, False, True]), _t(t, "half"), 70000),
    "clamp-bfloat16-beyond": lambda t: t.clamp(_t(t, "bfloat16"), 3.4e38),
    "clamp-bfloat16-far-beyond": lambda t: t.clamp(_t(t, "bfloat16"), max=1e39),
    "clamp_max-bfloat16-beyond": lambda t: t.clamp_max(_t(t, "bfloat16"), 3.4e38),
    "clamp-bfloat16-largest": lambda t: t.clamp(_t(t, "bfloat16"), max=3.3895e38),
    "add-bfloat16-alpha-beyond": lambda t: t.add(_t(t, "bfloat16"), _t(t, "bfloat16"), alpha=3.4e38),
    "hardtanh-bfloat16-beyond": lambda t: t.nn.functional.hardtanh(_t(t, "bfloat16"), -1.0, 3.4e38),
    "threshold-bfloat16-value-beyond": lambda t: t.nn.functional.threshold(_t(t, "bfloat16"), 1, 3.4e38),
    "threshold-bfloat16-value-far-beyond": lambda t: t.nn.functional.threshold(_t(t, "bfloat16"), 1, 1e300),
    "threshold-bfloat16-bound-opmath": lambda t: t.nn.functional.threshold(_t(t, "bfloat16"), 3.4e38, 1),
    "where-bfloat16-beyond": lambda t: t.where(t.tensor([True, False, True]), _t(t, "bfloat16"), 3.4e38),
    "clamp-bool-true": lambda t: t.clamp(_t(t, "bool"), True),
    "clamp-bool-both": lambda t: t.clamp(_t(t, "bool"), True, True),
    "clamp-bool-max": lambda t: t.clamp(_t(t, "bool"), max=False),
    "clamp_min-bool": lambda t: t.clamp_min(_t(t, "bool"), True),
    "clamp_max-bool": lambda t: t.clamp_max(_t(t, "bool"), True),
    "clamp_-bool": lambda t: _t(t, "bool").clamp_(True),
    "clamp-bool-empty": lambda t: t.clamp(_t(t, "bool")[:0], True),
    "clamp-bool-int-promotes": lambda t: t.clamp(_t(t, "bool"), 1),
    "clamp-bool-tensor-bound": lambda t: t.clamp(_t(t, "bool"), t.tensor(True)),
    "clamp_min-bool-tensor-bound": lambda t: t.clamp_min(_t(t, "bool"), t.tensor([True, False, True])),
}


@pytest.mark.parametrize("program", PROGRAMS.values(), ids=PROGRAMS.keys())
def test_scalar_bounds_as_torch(program):
    assert value_or_error(program, tg) == value_or_error(program, torch)
