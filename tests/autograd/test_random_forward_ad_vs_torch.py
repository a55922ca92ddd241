"""Random small forward-mode programs, run by tracegrad and by torch: every intermediate's primal and tangent are
the same (NaN where torch's is NaN).

Each program is a seeded list of steps run inside ``forward_ad.dual_level()``: leaves with or without a tangent,
pointwise and binary operators, views, reductions, ``cat``, ``where``, matrix products, in-place updates of fresh
copies and of views of them (where a view that gains a tangent gives its base one, as in PyTorch).
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

N_PROGRAMS = 500
_UNARY = ("sin", "exp", "tanh", "sigmoid", "neg", "cos", "abs", "relu", "square", "sqrt_abs")
_BINARY = ("add", "mul", "sub", "div", "maximum", "atan2")
_REDUCTIONS = ("sum", "mean", "prod", "norm", "logsumexp", "max", "std")
_STEPS = ("unary", "binary", "view", "inplace", "inplace_view", "reduce", "cat", "where", "mm")


def _program(seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    n_leaves = int(rng.integers(1, 3))
    steps: list[tuple] = [("leaf", rng.uniform(-1, 1, 4).tolist(),
                           rng.uniform(-1, 1, 4).tolist() if rng.integers(3) else None) for _ in range(n_leaves)]
    count = n_leaves
    for _ in range(int(rng.integers(2, 9))):
        kind = str(rng.choice(_STEPS))
        i, j = int(rng.integers(count)), int(rng.integers(count))
        if kind == "unary":
            steps.append((kind, str(rng.choice(_UNARY)), i))
        elif kind == "binary":
            steps.append((kind, str(rng.choice(_BINARY)), i, j))
        elif kind == "view":
            steps.append((kind, str(rng.choice(["transpose", "flip", "index", "unsqueeze"])), i))
        elif kind == "reduce":
            steps.append((kind, str(rng.choice(_REDUCTIONS)), i))
        else:
            steps.append((kind, i, j))
        count += 1
    return steps


_UNARY_FNS = {"relu": lambda L, x: L.relu(x), "sqrt_abs": lambda L, x: x.abs().sqrt(),
              "square": lambda L, x: x.square()}
_VIEWS = {"transpose": lambda t: t.view(2, 2).t().reshape(4), "flip": lambda t: t.flip(0),
          "index": lambda t: t[[3, 1, 2, 0]], "unsqueeze": lambda t: t.unsqueeze(0).squeeze(0)}
_REDUCE_FNS = {"sum": lambda x: x.sum(), "mean": lambda x: x.mean(), "prod": lambda x: x.prod(),
               "norm": lambda x: x.norm(), "logsumexp": lambda x: x.logsumexp(0), "max": lambda x: x.max(),
               "std": lambda x: x.std()}


def _step(lib, tensors: list, step: tuple):
    kind = step[0]
    if kind == "unary":
        fn = _UNARY_FNS.get(step[1])
        x = tensors[step[2]]
        return fn(lib, x) if fn else getattr(lib, step[1])(x)
    if kind == "binary":
        return getattr(lib, step[1])(tensors[step[2]], tensors[step[3]])
    if kind == "view":
        return _VIEWS[step[1]](tensors[step[2]])
    if kind == "reduce":
        return _REDUCE_FNS[step[1]](tensors[step[2]]) * lib.ones(4, dtype=lib.float64)
    a, b = tensors[step[1]], tensors[step[2]]
    if kind == "inplace":
        out = a.clone()
        out.mul_(b)
        return out
    if kind == "inplace_view":  # a view of a copy gains (or updates) a tangent
        out = a.clone()
        out[1:3].add_(b[:2])
        return out
    if kind == "cat":
        return lib.cat([a[:2], b[2:]])
    if kind == "where":
        return lib.where(a > 0, a, b)
    return (a.view(2, 2) @ b.view(2, 2)).reshape(4)


def _run(lib, steps: list[tuple]) -> list:
    fw = lib.autograd.forward_ad
    log: list = []

    def values(t):
        return None if t is None else np.asarray(t.reshape(-1).tolist(), dtype=float)

    with fw.dual_level():
        tensors: list = []
        for step in steps:
            if step[0] == "leaf":
                primal = lib.tensor(step[1], dtype=lib.float64)
                tensors.append(fw.make_dual(primal, lib.tensor(step[2], dtype=lib.float64))
                               if step[2] is not None else primal)
                continue
            try:
                tensors.append(_step(lib, tensors, step))
            except RuntimeError as exc:
                log.append(("error", str(exc).split("\n")[0]))
                tensors.append(tensors[0])
        for t in tensors:
            primal, tangent = fw.unpack_dual(t)
            log.append((values(primal), values(tangent)))
    return log


def _assert_same(ours: list, theirs: list) -> None:
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(a[0], str) or isinstance(b[0], str):  # an error: the same one
            assert a == b
            continue
        for x, y in zip(a, b):
            assert (x is None) == (y is None)
            if x is not None:
                np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("seed", range(N_PROGRAMS))
def test_random_forward_program_as_in_torch(seed):
    steps = _program(seed)
    with np.errstate(all="ignore"):
        _assert_same(_run(tg, steps), _run(torch, steps))


def test_a_view_that_gains_a_tangent_gives_its_base_one():
    def tangents(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            dual = fw.make_dual(lib.tensor([1.0, 2.0, 3.0, 4.0]), lib.ones(4))
            base = lib.tensor([10.0, 20.0, 30.0, 40.0])
            sibling = base[2:]  # made before the base had a tangent
            base[1:3].add_(dual[:2])
            return fw.unpack_dual(base).tangent.tolist(), fw.unpack_dual(sibling).tangent.tolist()

    assert tangents(tg) == tangents(torch) == ([0.0, 1.0, 1.0, 0.0], [1.0, 0.0])


def test_std_of_a_constant_has_a_zero_tangent_and_atan2_at_the_origin_a_nan_one():
    def tangents(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.full((4,), 0.5, dtype=lib.float64), lib.ones(4, dtype=lib.float64))
            zero = fw.make_dual(lib.zeros(1, dtype=lib.float64), lib.ones(1, dtype=lib.float64))
            return (fw.unpack_dual(x.std()).tangent.item(),
                    str(fw.unpack_dual(lib.atan2(zero, zero)).tangent.item()))

    assert tangents(tg) == tangents(torch) == (0.0, "nan")


def test_programs_exercise_every_kind_of_step():
    seen = {step[0] for seed in range(N_PROGRAMS) for step in _program(seed)}
    assert seen == set(_STEPS) | {"leaf"}
