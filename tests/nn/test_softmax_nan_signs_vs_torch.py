"""The sign of the NaNs that softmax / log_softmax give (float32 and float64, forward and backward), bit for bit
as torch: Sleef's log keeps a NaN's sign (log_softmax of a row holding +inf: torch's -nan everywhere), and the
fused backward step ``g - exp(y) * sum(g)`` negates no NaN (log_softmax backward of an all -inf row: -nan)."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

from tracegrad.ops.aten_vec import aten_float_lanes

_LANES = {"AVX512": 16, "AVX2": 8, "DEFAULT": 0}
EXACT = _LANES.get(torch.backends.cpu.get_cpu_capability()) == aten_float_lanes() > 0
pytestmark = [pytest.mark.usefixtures("one_thread"),
              pytest.mark.skipif(not EXACT, reason="tracegrad and torch pick different vector widths here")]


def _bits(t) -> list:
    a = np.ascontiguousarray(t.detach().numpy())
    return a.view(np.uint64 if a.dtype == np.float64 else np.uint32).tolist()


def _rows(kind: str, shape: tuple) -> np.ndarray:
    x = np.random.default_rng(3).standard_normal(shape) * 3
    if kind == "posinf":
        x.reshape(-1)[::4] = np.inf
    elif kind == "allneginf":
        x[...] = -np.inf
    else:
        x.reshape(-1)[::3] = -np.inf
    return x


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("kind", ("posinf", "allneginf", "neginf"))
@pytest.mark.parametrize("shape", ((3,), (5,), (4, 9), (2, 3, 17), (6, 130)))
@pytest.mark.parametrize("name", ("softmax", "log_softmax"))
def test_nan_signs(name: str, shape: tuple, kind: str, dtype: str) -> None:
    x = _rows(kind, shape).astype(dtype)
    grad = np.random.default_rng(4).standard_normal(shape).astype(dtype)
    for dim in range(len(shape)):
        results = []
        for lib in (tg, torch):
            leaf = lib.from_numpy(x.copy()).requires_grad_()
            y = getattr(lib, name)(leaf, dim)
            y.backward(lib.from_numpy(grad.copy()))
            results.append((_bits(y), _bits(leaf.grad)))
        assert results[0][0] == results[1][0], f"{name} {shape} dim={dim} forward"
        assert results[0][1] == results[1][1], f"{name} {shape} dim={dim} backward"


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_sleef_log_keeps_the_sign_of_a_nan(dtype: str) -> None:
    from tracegrad.ops.nn_ops.sleef_double import sleef_log, sleef_log_reference
    from tracegrad.ops.nn_ops.sleef_float import sleef_logf, sleef_logf_exact

    x = np.array([np.copysign(np.nan, -1), np.nan, -1.0, -np.inf, 0.0, -0.0, np.inf, 2.0] * 4, dtype)
    expected = np.ascontiguousarray(torch.log(torch.from_numpy(x.copy())).numpy())
    fns = (sleef_log, sleef_log_reference) if dtype == "float64" else (sleef_logf, sleef_logf_exact)
    for fn in fns:
        assert fn(x).tobytes() == expected.tobytes(), fn.__name__
