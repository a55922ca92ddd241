"""``t[mask] = v`` (and ``index_put_`` through a lone mask) with one value ``v`` that requires grad, as torch records
it: torch writes the value with masked_fill_ inside index_put_, whatever its dtype, and records IndexPutBackward0 with
an edge straight to ``v`` (no ToCopyBackward0). So an integer or bool ``t`` requires grad (and any gradient reaching it
fails torch's engine assert, ``isDifferentiableType(grad.scalar_type())``), and a complex ``t``'s gradient reaches a
real ``v`` complex, which validate_outputs refuses; a mask of several dims is saved as given. Before, tracegrad cast ``v`` to ``t``'s dtype first: an integer
``t`` recorded nothing, and a complex ``t`` gave a real ``v`` the real part of its gradient."""

from __future__ import annotations

import pytest
from _lib import tg, torch

WRITES = {
    "setitem": lambda t, v, m: t.__setitem__(m, v),
    "setitem of (1, 1) value": lambda t, v, m: t.__setitem__(m, v.reshape(1, 1)),
    "index_put_": lambda t, v, m: t.index_put_((m,), v),
    "setitem into a view": lambda t, v, m: t.view(3, 1).__setitem__(m, v),
    "setitem through a 2-d mask": lambda t, v, m: t.view(3, 1).__setitem__(m.view(3, 1), v),
}

TARGETS = ["int64", "int32", "bool", "uint8", "float16", "float64", "complex64", "complex128"]
VALUES = ["float32", "float64", "complex64"]


def _outcome(lib, target: str, value: str, write: str) -> list:
    """What the write records, and the gradients asked for through it (each, or the error)."""
    t = lib.zeros(3, dtype=getattr(lib, target))
    v = lib.tensor(2.5 + (1j if value.startswith("complex") else 0), dtype=getattr(lib, value), requires_grad=True)
    try:
        WRITES[write](t, v, lib.tensor([True, False, True]))
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return [type(exc).__name__, str(exc)]
    fn = t.grad_fn
    seen = [str(t.dtype).replace("tracegrad", "torch"), t.tolist(), t.requires_grad, t.is_leaf, t._version,
            type(fn).__name__ if fn else None]
    if fn is None:
        return seen
    seen.append([type(f).__name__ if f else None for f, _ in fn.next_functions])
    if hasattr(fn, "_saved_indices"):  # (the mask as given, however many dims it has)
        seen.append([(str(i.dtype).replace("tracegrad", "torch"), tuple(i.shape)) for i in fn._saved_indices])
    asks = {"root of t's dtype": lambda: lib.autograd.grad(t, v, lib.ones(3, dtype=t.dtype), retain_graph=True),
            "root of float32": lambda: lib.autograd.grad(t, v, lib.ones(3), retain_graph=True),
            "through .double()": lambda: lib.autograd.grad(t.double().sum(), v, retain_graph=True)}
    for name, ask in asks.items():
        try:
            (g,) = ask()
            seen.append((name, str(g.dtype).replace("tracegrad", "torch"), g.tolist()))
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            seen.append((name, type(exc).__name__, str(exc)))
    return seen


@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("target", TARGETS)
def test_value_written_through_a_mask_recorded_as_torch(target, write):
    mismatches = [f"{value}: tracegrad {ours}, torch {theirs}" for value in VALUES
                  if (ours := _outcome(tg, target, value, write)) != (theirs := _outcome(torch, target, value, write))]
    assert not mismatches
