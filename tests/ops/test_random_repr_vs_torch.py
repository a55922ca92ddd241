"""``repr`` and ``str`` of random tensors, by tracegrad and by torch: the same text, character for character.

Each case draws a shape (0 to 3 dims, some empty, some over the 1000-element summarization threshold), a dtype
(float32/64/16, int64/32/8, uint8, bool), values of some kind (short decimals, integers, large, tiny, mixed
magnitudes, NaN and infinities, negative zeros, big integers) and whether the tensor has a grad_fn. What a user
sees in a notebook cell is this text.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

N_CASES = 600
_DTYPES = ("float32", "float64", "float16", "int64", "int32", "uint8", "bool", "int8")
_KINDS = ("small", "ints", "large", "tiny", "mixed", "nan", "neg0", "huge_int")


def _values(rng, kind: str, n: int) -> np.ndarray:
    if kind == "small":
        return rng.uniform(-2, 2, n).round(int(rng.integers(0, 6)))
    if kind == "ints":
        return rng.integers(-20, 20, n).astype(float)
    if kind in ("large", "tiny"):
        return rng.uniform(-1, 1, n) * 10.0 ** (int(rng.integers(3, 12)) * (1 if kind == "large" else -1))
    if kind == "mixed":
        return rng.uniform(-1, 1, n) * 10.0 ** rng.integers(-6, 8, n)
    if kind == "nan":
        special = np.where(rng.integers(0, 3, n) == 0, np.inf * rng.choice([1, -1], n), rng.uniform(-5, 5, n).round(2))
        return np.where(rng.integers(0, 3, n) == 0, np.nan, special)
    if kind == "neg0":
        return np.where(rng.integers(0, 2, n) == 0, -0.0, rng.uniform(-1, 1, n).round(1))
    return rng.integers(-10 ** 6, 10 ** 6, n).astype(float)


def _case(seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(0 if rng.integers(8) == 0 else 1, 5, int(rng.integers(0, 4))))
    if rng.integers(10) == 0:  # past the threshold: summarized with "..."
        shape = (int(rng.integers(1001, 1500)),) if rng.integers(2) else (40, 30)
    dtype = str(rng.choice(_DTYPES))
    kind = str(rng.choice(_KINDS))
    data = _values(rng, kind, int(np.prod(shape)) if shape else 1).reshape(shape)
    if dtype in ("int64", "int32", "int8", "uint8"):
        data = np.nan_to_num(data, nan=0, posinf=0, neginf=0)
        data = np.clip(data, -100, 100) if dtype == "int8" else np.abs(data) % 256 if dtype == "uint8" else data
        data = data.astype(np.int64)
    if dtype == "bool":
        data = data > 0
    return data, dtype, bool(rng.integers(2)) and dtype.startswith("float")


def _text(lib, case: tuple):
    data, dtype, with_grad_fn = case
    try:
        t = lib.tensor(data.tolist() if data.ndim else data.item(), dtype=getattr(lib, dtype),
                       requires_grad=with_grad_fn)
        if with_grad_fn:
            t = t * 1
        return repr(t), str(t)
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("seed", range(N_CASES))
def test_repr_as_in_torch(seed):
    case = _case(seed)
    assert _text(tg, case) == _text(torch, case)


def test_cases_cover_dtypes_kinds_and_summaries():
    cases = [_case(seed) for seed in range(N_CASES)]
    assert {c[1] for c in cases} == set(_DTYPES)
    assert any(c[0].size > 1000 for c in cases) and any(c[0].size == 0 for c in cases)
