"""Random in-place updates through chains of views, by tracegrad and by torch: the same graph nodes, versions,
gradients, errors and warnings.

Each case starts from a leaf (requiring grad or not), a non-leaf, or a non-leaf made under ``no_grad``; takes
one to three views (the view operations of ``tests/ops/test_random_views_vs_torch.py``, plus ``unbind``,
``detach`` and a view made under ``no_grad``); writes into the last one in place (``mul_``, ``add_``, ``zero_``,
``copy_``, ``clamp_``, ``sin_``, ``fill_``, or ``[...] =``), then backward from the base, the view, another view
of the base, or both. This is where PyTorch's view rules live: CopySlices, the leaf and no_grad-view errors,
multi-output views, and writes into expanded (overlapping) memory.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from _lib import tg, torch, warning_texts

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
from test_random_views_vs_torch import _apply  # noqa: E402 - the view operations, drawn the same way

N_CASES = 600
_VIEWS = ("view", "permute", "transpose", "t", "flatten", "unflatten", "squeeze", "unsqueeze", "expand", "narrow",
          "movedim", "split", "chunk", "diagonal", "unfold", "select", "slice", "as_strided", "unbind", "detach",
          "view_nograd")
_INPLACE = ("mul_", "add_", "zero_", "copy_", "clamp_", "sin_", "fill_", "setitem")
_STARTS = ("leaf", "nonleaf", "leaf_nograd", "nograd_nonleaf")
_TARGETS = ("base", "view", "other_view", "both")


def _case(seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(2, 4, int(rng.integers(1, 4))))
    chain = [(str(rng.choice(_VIEWS)), int(rng.integers(0, 1 << 30))) for _ in range(int(rng.integers(1, 4)))]
    return shape, str(rng.choice(_STARTS)), chain, str(rng.choice(_INPLACE)), str(rng.choice(_TARGETS))


def _view(lib, t, name: str, seed: int):
    if name == "unbind":
        return t.unbind(0)[0] if t.dim() else t
    if name == "detach":
        return t.detach()
    if name == "view_nograd":
        with lib.no_grad():
            return t.view(-1)
    return _apply(lib, t, name, seed)


def _write(lib, t, op: str, w) -> None:
    if op == "mul_":
        t.mul_(w)
    elif op == "add_":
        t.add_(w)
    elif op == "zero_":
        t.zero_()
    elif op == "copy_":
        t.copy_(w.expand(t.shape) * 3)
    elif op == "clamp_":
        t.clamp_(0, 3)
    elif op == "sin_":
        t.sin_()
    elif op == "fill_":
        t.fill_(w)
    else:
        t[...] = w * 5


def _run(lib, case: tuple) -> tuple:
    shape, start, chain, op, target = case
    log: list = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            x = lib.tensor((np.arange(np.prod(shape), dtype=np.float64).reshape(shape) + 1).tolist(),
                           dtype=lib.float64, requires_grad=start != "leaf_nograd")
            if start == "nonleaf":
                base = x * 1
            elif start == "nograd_nonleaf":
                with lib.no_grad():
                    base = x * 1
            else:
                base = x
            t = base
            for name, seed in chain:
                t = _view(lib, t, name, seed)
                log.append((name, tuple(t.shape), t.grad_fn.name() if t.grad_fn else None, t.requires_grad,
                            t.is_leaf))
            w = lib.tensor(2.0, dtype=lib.float64, requires_grad=True)
            _write(lib, t, op, w)
            log.append(("after", t.grad_fn.name() if t.grad_fn else None,
                        base.grad_fn.name() if base.grad_fn else None, t._version, base._version))
            root = {"base": lambda: base, "view": lambda: t, "other_view": lambda: base.reshape(-1),
                    "both": lambda: base.sum() + t.sum()}[target]()
            root.sum().backward()
            log.append(("grads", None if x.grad is None else x.grad.reshape(-1).tolist(),
                        None if w.grad is None else w.grad.item()))
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            log.append(("error", type(exc).__name__, str(exc).split("\n")[0]))
    return log, warning_texts(caught)


@pytest.mark.parametrize("seed", range(N_CASES))
def test_random_inplace_through_views_as_in_torch(seed):
    case = _case(seed)
    assert _run(tg, case) == _run(torch, case)


def test_cases_cover_every_start_view_write_and_target():
    cases = [_case(seed) for seed in range(N_CASES)]
    assert {c[1] for c in cases} == set(_STARTS)
    assert {name for c in cases for name, _ in c[2]} == set(_VIEWS)
    assert {c[3] for c in cases} == set(_INPLACE) and {c[4] for c in cases} == set(_TARGETS)
