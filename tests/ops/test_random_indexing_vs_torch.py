"""Random indexing expressions, read and written, by tracegrad and by torch: the same shapes, values, gradients,
graph nodes, and errors.

Each case is a seeded tensor (1 to 3 dims) and a key mixing integers, slices (with steps, some negative, which
torch refuses), ``None``, ``...``, lists, integer tensors and boolean masks; then one of: read it and backward,
assign a number, a tensor, a tensor of another (broadcastable or not) shape, ``+=``, an in-place update of the
result (a copy when the key is advanced), or assign through a view.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

N_CASES = 600
_PARTS = ("int", "slice", "none", "ellipsis", "list", "tensor", "bool")
_MODES = ("get", "set_scalar", "set_tensor", "inplace_view", "iadd", "set_shaped", "view_then_set")


def _key_parts(rng, shape: tuple) -> list[tuple]:
    parts: list[tuple] = []
    used = 0
    for _ in range(int(rng.integers(1, len(shape) + 2))):
        kind = str(rng.choice(_PARTS, p=[0.25, 0.3, 0.08, 0.07, 0.12, 0.1, 0.08]))
        if used >= len(shape) or (kind == "ellipsis" and any(p[0] == "ellipsis" for p in parts)):
            kind = "none"
        if kind == "int":
            d = shape[used]
            parts.append((kind, int(rng.integers(-d, d))))
            used += 1
        elif kind == "slice":
            d = shape[used]
            start = int(rng.integers(-d - 1, d + 1)) if rng.integers(2) else None
            stop = int(rng.integers(-d - 1, d + 1)) if rng.integers(2) else None
            step = int(rng.choice([-1, 1, 2])) if rng.integers(2) else None
            parts.append((kind, start, stop, step))
            used += 1
        elif kind == "none":
            parts.append((kind,))
        elif kind == "ellipsis":
            parts.append((kind,))
            used = len(shape)
        elif kind in ("list", "tensor"):
            d = shape[used]
            parts.append((kind, [int(v) for v in rng.integers(-d, d, int(rng.integers(1, 4)))]))
            used += 1
        else:
            parts.append((kind, [bool(v) for v in rng.integers(0, 2, shape[used])]))
            used += 1
    return parts


def _key(lib, parts: list[tuple]) -> tuple:
    build = {"int": lambda p: p[1], "slice": lambda p: slice(p[1], p[2], p[3]), "none": lambda p: None,
             "ellipsis": lambda p: Ellipsis, "list": lambda p: p[1], "tensor": lambda p: lib.tensor(p[1]),
             "bool": lambda p: lib.tensor(p[1])}
    return tuple(build[p[0]](p) for p in parts)


def _case(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 5, int(rng.integers(1, 4))))
    return {"shape": shape, "parts": _key_parts(rng, shape), "mode": str(rng.choice(_MODES)),
            "value": float(rng.integers(1, 9)),
            "value_shape": tuple(int(v) for v in rng.integers(1, 3, int(rng.integers(0, 3))))}


def _weighted_sum(lib, t):
    return (t * lib.arange(t.numel(), dtype=lib.float64).reshape(t.shape)).sum()


def _run(lib, case: dict) -> list:
    shape, mode = case["shape"], case["mode"]
    x = lib.tensor((np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 1).tolist(), dtype=lib.float64,
                   requires_grad=True)
    log: list = []
    try:
        key = _key(lib, case["parts"])
        if mode == "get":
            y = x[key]
            log.append(("shape", tuple(y.shape), y.grad_fn.name() if y.grad_fn else None))
            _weighted_sum(lib, y).backward()
        else:
            z = x * 1
            if mode == "set_scalar":
                z[key] = 7.0
            elif mode == "set_tensor":
                z[key] = lib.tensor(case["value"], dtype=lib.float64, requires_grad=True) * 2
            elif mode == "set_shaped":
                z[key] = lib.ones(case["value_shape"], dtype=lib.float64, requires_grad=True) * 3
            elif mode == "iadd":
                z[key] += 5.0
            elif mode == "view_then_set":
                z.view(-1).view(shape)[key] = 2.0
            else:
                z[key].mul_(3)  # a copy when the key is advanced: z unchanged, as in torch
            log.append(("z", z.detach().reshape(-1).tolist(), z.grad_fn.name()))
            _weighted_sum(lib, z).backward()
        log.append(("grad", x.grad.reshape(-1).tolist()))
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        log.append(("error", type(exc).__name__, str(exc).split("\n")[0]))
    return log


@pytest.mark.parametrize("seed", range(N_CASES))
def test_random_indexing_as_in_torch(seed):
    case = _case(seed)
    assert _run(tg, case) == _run(torch, case)


def test_cases_cover_every_part_and_mode():
    cases = [_case(seed) for seed in range(N_CASES)]
    assert {p[0] for c in cases for p in c["parts"]} == set(_PARTS)
    assert {c["mode"] for c in cases} == set(_MODES)
