"""Review of sets 39 and 40 (index_select's wording by torch's CPU path, float16 convolutions with a bias rounded
once), compared with torch:

- an out-of-range index into a 0-d tensor raised ``IndexError('tuple index out of range')`` from the new wording
  helper (it read ``a.shape[d]`` of a tensor without dims) where torch says 'index out of range in self';
- a float16 convolution given a bias of another dtype (``torch.convolution``, which takes any) added the bias in
  float, where torch's slow kernels copy it into the half output first, rounding it to half, then add the float
  sums and round once.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import np, tg, torch


def _outcome(lib, fn):
    try:
        return "ok", fn(lib).tolist()
    except Exception as e:  # noqa: BLE001 (the comparison is of the exception)
        return type(e).__name__, str(e).split("\n")[0]


@pytest.mark.parametrize("index", [[-1], [2], [5]])
@pytest.mark.parametrize("dim", [0, -1])
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_index_select_out_of_range_in_a_0d_tensor(index, dim, dtype):
    def fn(lib):
        return lib.index_select(lib.tensor(3.0), dim, lib.tensor(index, dtype=getattr(lib, dtype)))

    assert _outcome(tg, fn) == _outcome(torch, fn)


def _half_conv(lib, nd: int, dilation: int, bias_dtype: str) -> tuple:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 4) + (7,) * nd)
    w = rng.standard_normal((6, 4) + (3,) * nd)
    b = rng.standard_normal(6) * 3
    bias = lib.tensor(b).to(getattr(lib, bias_dtype))
    with warnings.catch_warnings():  # (a complex bias's warning: torch gives it once a process)
        warnings.simplefilter("ignore")
        y = lib.convolution(lib.tensor(x).half(), lib.tensor(w).half(), bias, [1] * nd, [0] * nd, [dilation] * nd,
                            False, [0] * nd, 1)
    return str(y.dtype), y.float().numpy()


@pytest.mark.parametrize("bias_dtype", ["float32", "float64", "bfloat16", "int64", "complex64"])
@pytest.mark.parametrize("dilation", [1, 2])
@pytest.mark.parametrize("nd", [1, 2])
def test_half_convolution_rounds_a_bias_of_another_dtype_to_half_first(nd, dilation, bias_dtype):
    dtype, ours = _half_conv(tg, nd, dilation, bias_dtype)
    t_dtype, theirs = _half_conv(torch, nd, dilation, bias_dtype)
    assert dtype == t_dtype
    np.testing.assert_array_equal(ours, theirs)
