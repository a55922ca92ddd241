"""Review of set 31's NumPy reading (23ea6de): torch.asarray of an empty array cast to bfloat16 keeps the
array's strides (the bfloat16 rounding of a float kernel's empty result had laid it out anew: ``x.to(bfloat16)``
of an empty tensor too), and torch.from_numpy is a C function of exactly one positional argument (the read-only
warning's switch had become a public second parameter) naming a NumPy scalar's type module-qualified."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch, value_or_error

_EMPTY_LAYOUTS = {
    "asarray_numpy": lambda t: t.asarray(np.zeros((0, 3), np.float32), dtype=t.bfloat16),
    "to_transposed": lambda t: t.zeros(0, 3).t().to(t.bfloat16),
    "to_permuted": lambda t: t.zeros(2, 0, 3).permute(2, 0, 1).to(t.bfloat16),
    "to_expanded": lambda t: t.zeros(0, 3).expand(2, 0, 3).to(t.bfloat16),
    "as_tensor_numpy": lambda t: t.as_tensor(np.zeros((2, 0), np.float64), dtype=t.bfloat16),
}


@pytest.mark.parametrize("name", sorted(_EMPTY_LAYOUTS))
def test_empty_bfloat16_cast_keeps_strides(name):
    program = _EMPTY_LAYOUTS[name]
    assert program(tg).stride() == program(torch).stride()


_FROM_NUMPY_CALLS = {
    "two_positional": lambda t: t.from_numpy(np.zeros(2, np.float32), False),
    "keyword": lambda t: t.from_numpy(np.zeros(2, np.float32), warn_not_writable=False),
    "none": lambda t: t.from_numpy(),
    "by_name": lambda t: t.from_numpy(array=np.zeros(2)),
    "numpy_scalar": lambda t: t.from_numpy(np.float32(1)),
    "numpy_bool": lambda t: t.from_numpy(np.bool_(True)),
    "array": lambda t: t.from_numpy(np.arange(3.0)),
}


@pytest.mark.parametrize("name", sorted(_FROM_NUMPY_CALLS))
def test_from_numpy_arguments(name):
    program = _FROM_NUMPY_CALLS[name]
    assert value_or_error(program, tg) == value_or_error(program, torch)
