"""Review of f7ae8c7 (acos of float32 and half computed in float64): a NaN input comes out as the same NaN, sign
and payload kept, as from torch's (MKL's) acos. NumPy's float64 ``arccos`` (glibc's) returns a NaN input negated,
which the float32 path now went through (``assert_same_bits`` lets any NaN match any NaN, so it did not show)."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

_NANS = {  # quiet NaNs of each sign, with and without payload, among ordinary values
    "float32": (np.uint32, [0x7FC00000, 0xFFC00000, 0x7FC00001, 0xFFC12345, 0x3F000000, 0x7F800000, 0xBF800000]),
    "float64": (np.uint64, [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF8000020000000, 0xFFF82468A0000000,
                            0x3FE0000000000000, 0x7FF0000000000000, 0xBFF0000000000000]),
    "float16": (np.uint16, [0x7E00, 0xFE00, 0x7E09, 0xFE01, 0x3800, 0x7C00, 0xBC00]),
}


# (Half of more than one element goes through torch's Vectorized<Half> loop, whose acos drops a NaN's sign: not
# matched, as before f7ae8c7.)
@pytest.mark.parametrize(("dtype", "size"), [(d, n) for d in sorted(_NANS) for n in (1, 7, 40) if d != "float16" or n == 1])
def test_acos_keeps_a_nan_input_as_torch(dtype, size):
    bits_type, bits = _NANS[dtype]
    x = np.resize(np.array(bits, bits_type), size).view(getattr(np, dtype))
    ours = tg.acos(tg.from_numpy(x.copy())).numpy().view(bits_type)
    theirs = torch.acos(torch.from_numpy(x.copy())).numpy().view(bits_type)
    assert [hex(b) for b in ours] == [hex(b) for b in theirs]
