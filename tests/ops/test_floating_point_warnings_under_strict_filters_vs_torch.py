"""NumPy's floating-point warnings stay silent under a program's own strict warning filters (compared with torch).

PyTorch computes ``inf * 0``, ``inf - inf`` or ``log(0)`` silently. NumPy warns, and tracegrad's import-time filter
ignores those warnings in its own code; but a filter installed later, such as ``simplefilter("error")`` or
pytest's ``filterwarnings = error``, comes first and made them exceptions inside tracegrad. Out-of-place operators
now run their kernel again with NumPy's warnings off (their kernels are pure): the same values, no exception.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import run_both

INF, NAN = float("inf"), float("nan")
ROW = [INF, -INF, NAN, 1.0, 0.0, -1.0, 1e38, -1e38]

PROGRAMS = {
    "x * 0": lambda lib, x: x * 0,
    "x - x": lambda lib, x: x - x,
    "x / x": lambda lib, x: x / x,
    "exp": lambda lib, x: x.exp(),
    "log": lambda lib, x: x.log(),
    "sqrt": lambda lib, x: x.sqrt(),
    "x // 0": lambda lib, x: x // 0,
    "hypot": lambda lib, x: lib.hypot(x, x),
    "where(x > 0, x, x * 0)": lambda lib, x: lib.where(x > 0, x, x * 0),
    "linear": lambda lib, x: lib.nn.functional.linear(x, lib.ones(3, 8), lib.ones(3)),
    "x @ x.T": lambda lib, x: x @ x.t(),
    "kron": lambda lib, x: lib.kron(x[:1, :4], x[:1, :4]),
    "smooth_l1_loss": lambda lib, x: lib.nn.functional.smooth_l1_loss(x, x * 0, reduction="none"),
    "huber_loss": lambda lib, x: lib.nn.functional.huber_loss(x, x * 0, reduction="none"),
    "pairwise_distance": lambda lib, x: lib.nn.functional.pairwise_distance(x, x),
    "cdist": lambda lib, x: lib.cdist(x, x),
    "dist": lambda lib, x: lib.dist(x, x * 0),
    "interpolate": lambda lib, x: lib.nn.functional.interpolate(x[None], scale_factor=2, mode="linear"),
    "lerp, backward": lambda lib, x: lib.autograd.grad(lib.lerp(x, x * 2, 0.5).sum(), x)[0],
    "hypot, backward": lambda lib, x: lib.autograd.grad(lib.hypot(x, x).sum(), x)[0],
    "x * 0, backward": lambda lib, x: lib.autograd.grad((x * x).sum(), x)[0],
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_no_exception_and_torchs_values_under_simplefilter_error(name):
    def program(lib):
        x = lib.tensor([ROW] * 4, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = PROGRAMS[name](lib, x)
        return np.asarray(out.detach().tolist(), dtype=np.float64)

    ours, theirs = run_both(program)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, equal_nan=True)
