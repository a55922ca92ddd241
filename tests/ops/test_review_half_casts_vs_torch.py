"""float64 -> float16 casts beyond those of f23f172, compared with torch (c10::Half is made from a float, so a
double just past a midpoint between two halves rounds to the midpoint in float and then ties to even):

- ``.half()``/``.to(float16)`` of an expanded or empty float64 tensor kept torch's layout before f23f172 and lost it
  there (the float32 copy of the values was laid out anew);
- a Python float written into a half tensor (``fill_``, ``full``, ``x[i] = v``, ``x + v``, ``where``, ``clamp``,
  comparisons), a 0-d float64 tensor written so (``x[:] = t``), ``out=`` of float16 for a float64 result, and
  ``torch.asarray(float64 array, dtype=float16)`` rounded once, as NumPy's cast.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

# just past midpoints between halves (by 1e-15 relative: float32 rounds them onto the midpoint), and just past
# 65504 + 16 (inf in torch), just past half of the smallest subnormal (0 in torch)
_VALUES = [m * (1 + 1e-15) * s for m in (1 + 2.0**-11, 1024.5, 3 + 2.0**-10 * 1.5) for s in (1, -1)]
_VALUES += [65520.00000001, 2.0**-25 * (1 + 1e-12), float("nan"), -0.0]
_A = np.array(_VALUES)


def _set(z, index, value):
    z[index] = value
    return z


_WRITES = {
    "fill_": lambda lib: lib.stack([lib.zeros(1, dtype=lib.float16).fill_(v) for v in _VALUES]),
    "full": lambda lib: lib.stack([lib.full((1,), v, dtype=lib.float16) for v in _VALUES]),
    "setitem_number": lambda lib: lib.stack([_set(lib.zeros(1, dtype=lib.float16), 0, v) for v in _VALUES]),
    "setitem_0d_tensor": lambda lib: lib.stack([_set(lib.zeros(2, dtype=lib.float16), slice(None),
                                                     lib.tensor(v, dtype=lib.float64)) for v in _VALUES]),
    "add_number": lambda lib: lib.stack([lib.zeros(1, dtype=lib.float16) + v for v in _VALUES]),
    "add_0d_float64": lambda lib: lib.stack([lib.zeros(1, dtype=lib.float16) + lib.tensor(v, dtype=lib.float64)
                                             for v in _VALUES]),
    "where_number": lambda lib: lib.stack([lib.where(lib.tensor([True]), v, lib.zeros(1, dtype=lib.float16))
                                           for v in _VALUES]),
    "clamp_max": lambda lib: lib.stack([lib.full((1,), 6e4, dtype=lib.float16).clamp(max=v) for v in _VALUES[:6]]),
    "ge_number": lambda lib: lib.stack([lib.full((1,), 1.0009765625, dtype=lib.float16) >= v for v in _VALUES]),
    "out_add": lambda lib: lib.add(lib.tensor(_A), 0.0, out=lib.empty(len(_VALUES), dtype=lib.float16)),
    "out_cat": lambda lib: lib.cat([lib.tensor(_A)], out=lib.empty(len(_VALUES), dtype=lib.float16)),
    "asarray_float64_array": lambda lib: lib.asarray(_A, dtype=lib.float16),
}


@pytest.mark.parametrize("case", list(_WRITES))
def test_float64_value_written_into_half(case):
    ours, theirs = _WRITES[case](tg), _WRITES[case](torch)
    assert ours.dtype == getattr(tg, str(theirs.dtype).split(".")[1])
    np.testing.assert_array_equal(ours.numpy().view(np.uint8), theirs.numpy().view(np.uint8))


_LAYOUTS = {
    "expanded_row": lambda lib: lib.tensor(_A).expand(3, len(_VALUES)),
    "expanded_column": lambda lib: lib.tensor(_A)[:, None].expand(len(_VALUES), 2),
    "empty_from_numpy": lambda lib: lib.tensor(np.zeros((0, 3))),
    "empty_transposed": lambda lib: lib.zeros(0, 3, dtype=lib.float64).t(),
    "expanded_number": lambda lib: lib.tensor(_A[:1]).expand(3),
}


@pytest.mark.parametrize("cast", ["half", "to"])
@pytest.mark.parametrize("case", list(_LAYOUTS))
def test_half_of_float64_keeps_torch_layout(case, cast):
    def run(lib):
        x = _LAYOUTS[case](lib)
        return x.half() if cast == "half" else x.to(lib.float16)

    ours, theirs = run(tg), run(torch)
    assert (ours.shape, ours.stride()) == (theirs.shape, theirs.stride())
    np.testing.assert_array_equal(np.ascontiguousarray(ours.numpy()).view(np.uint8),
                                  np.ascontiguousarray(theirs.numpy()).view(np.uint8))
