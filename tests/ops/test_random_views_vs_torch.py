"""Random chains of shape and view operations, by tracegrad and by torch: the same shapes, strides, contiguity,
storage offsets, view relations, graph nodes, values, gradients, errors and warnings.

Each case is a seeded tensor (1 to 3 dims, a non-leaf) and one to four of: reshape, view, permute, transpose,
t, T, mT, flatten, unflatten, squeeze, unsqueeze, expand, expand_as, view_as, repeat, tile, narrow, movedim,
swapaxes, roll, flip, split, chunk, contiguous, diagonal, unfold, select, slicing, as_strided and ravel, with
arguments drawn for the tensor at hand (some of them invalid, which both must refuse the same way).

Strides are compared in full, those of size-1 dims included (torch's ``view`` rule gives them values NumPy's
reshape does not; ``result_layouts.view_strides`` follows torch's).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import tg, torch, warning_texts

N_CASES = 600
_OPS = ("reshape", "view", "permute", "transpose", "t", "T", "mT", "flatten", "unflatten", "squeeze", "unsqueeze",
        "expand", "expand_as", "view_as", "repeat", "tile", "narrow", "movedim", "swapaxes", "roll", "flip",
        "split", "chunk", "contiguous", "diagonal", "unfold", "select", "slice", "as_strided", "ravel")


def _case(seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 4, int(rng.integers(1, 4))))
    return shape, [(str(rng.choice(_OPS)), int(rng.integers(0, 1 << 30))) for _ in range(int(rng.integers(1, 5)))]


def _apply(lib, t, op: str, seed: int):
    rng = np.random.default_rng(seed)
    nd, shape = t.dim(), tuple(t.shape)
    d = int(rng.integers(-nd, nd)) if nd else 0
    other = int(rng.integers(-nd, nd)) if nd else 0
    if op == "reshape":
        n = t.numel()
        options = [(n,), (1, n), (n, 1), (-1,)] + ([tuple(reversed(shape))] if nd else [])
        return t.reshape(options[int(rng.integers(len(options)))])
    table = {
        "view": lambda: t.view(-1), "t": lambda: t.t(), "T": lambda: t.T, "mT": lambda: t.mT,
        "permute": lambda: t.permute(*[int(i) for i in rng.permutation(nd)]) if nd else t.permute(),
        "transpose": lambda: t.transpose(d, other), "flatten": lambda: t.flatten(d),
        "unflatten": lambda: t.unflatten(d, (1, shape[d])) if nd else t,
        "squeeze": lambda: t.squeeze(d) if nd and rng.integers(2) else t.squeeze(),
        "unsqueeze": lambda: t.unsqueeze(int(rng.integers(-nd - 1, nd + 1))),
        "expand": lambda: t.expand(2, *shape), "expand_as": lambda: t.expand_as(lib.ones((2,) + shape)),
        "view_as": lambda: t.view_as(lib.ones(shape)), "repeat": lambda: t.repeat(*([2] + [1] * nd)),
        "tile": lambda: t.tile((2,)), "narrow": lambda: t.narrow(d, 0, 1) if nd else t,
        "movedim": lambda: t.movedim(d, other) if nd else t, "swapaxes": lambda: t.swapaxes(0, -1) if nd else t,
        "roll": lambda: t.roll(1, d) if nd else t.roll(1), "flip": lambda: t.flip(d) if nd else t.flip(0),
        "split": lambda: t.split(1, d)[-1] if nd else t, "chunk": lambda: t.chunk(2, d)[0] if nd else t,
        "contiguous": lambda: t.contiguous(), "diagonal": lambda: t.diagonal(0, 0, -1) if nd >= 2 else t,
        "unfold": lambda: t.unfold(d, 1, 1) if nd else t, "select": lambda: t.select(d, -1) if nd else t,
        "slice": lambda: t[..., ::2] if nd else t, "as_strided": lambda: t.as_strided((1,), (1,)),
        "ravel": lambda: t.ravel(),
    }
    return table[op]()


def _run(lib, case: tuple) -> tuple:
    shape, steps = case
    x = lib.tensor((np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 1).tolist(), dtype=lib.float64,
                   requires_grad=True)
    log: list = []
    always = lib.is_warn_always_enabled()
    lib.set_warn_always(True)  # (warn-once warnings compared as if each were the process's first)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            root = t = x * 1
            for op, seed in steps:
                t = _apply(lib, t, op, seed)
                log.append((op, tuple(t.shape), tuple(t.stride()),
                            t.is_contiguous(), None if t._base is None else t._base is root,
                            t.grad_fn.name() if t.grad_fn else None, t.storage_offset()))
            log.append(("values", t.detach().reshape(-1).tolist()))
            (t * lib.arange(t.numel(), dtype=lib.float64).reshape(t.shape)).sum().backward()
            log.append(("grad", x.grad.reshape(-1).tolist()))
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            log.append(("error", type(exc).__name__, str(exc).split("\n")[0]))
        finally:
            lib.set_warn_always(always)
    return log, warning_texts(caught)


@pytest.mark.parametrize("seed", range(N_CASES))
def test_random_view_chain_as_in_torch(seed):
    case = _case(seed)
    assert _run(tg, case) == _run(torch, case)


def test_cases_use_every_operation():
    assert {op for seed in range(N_CASES) for op, _ in _case(seed)[1]} == set(_OPS)
