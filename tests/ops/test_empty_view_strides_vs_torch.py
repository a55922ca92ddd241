"""Empty tensors report PyTorch's strides through views: an expand of a 0-d tensor or of size-1 dims to an empty
shape, and an ``as_strided`` with zero strides, keep their zero strides through every view of them (slices, ``t()``,
``unsqueeze``, ``narrow``, ``permute``, another expand, ``select``, ``unfold``, ``view_as_real``...), through
``contiguous()`` (an empty tensor is contiguous: itself), ``clone()`` and ``empty_like`` (``preserve_format``) and views
of those. Before, NumPy's views of them came out zero-strided and read as contiguous, as a NumPy kernel's empty
result is read."""

from __future__ import annotations

import pytest
from _lib import tg, torch

BASES = {
    "0-d expanded": lambda lib: lib.zeros(()).expand(0, 3),
    "(1, 3) expanded": lambda lib: lib.zeros(1, 3).expand(0, 3),
    "(3, 1) expanded": lambda lib: lib.zeros(3, 1).expand(3, 0),
    "as_strided (0, 0)": lambda lib: lib.as_strided(lib.zeros(5), (0, 3), (0, 0)),
    "as_strided (1, 0)": lambda lib: lib.as_strided(lib.zeros(5), (0, 3), (1, 0)),
    "as_strided (0, 1)": lambda lib: lib.as_strided(lib.zeros(5), (0, 3), (0, 1)),
    "as_strided of empty storage": lambda lib: lib.as_strided(lib.zeros(0), (0, 3), (0, 0)),
    "broadcast_to": lambda lib: lib.broadcast_to(lib.zeros(()), (0, 3)),
    "empty (0, 3)": lambda lib: lib.empty(0, 3),
    "empty (3, 0) transposed": lambda lib: lib.empty(3, 0).t(),
}

OPS = {
    "itself": lambda x: x, "slice": lambda x: x[:, 1:], "t": lambda x: x.t(), "unsqueeze(0)": lambda x: x.unsqueeze(0),
    "unsqueeze(1)": lambda x: x.unsqueeze(1), "unsqueeze(-1)": lambda x: x.unsqueeze(-1),
    "narrow": lambda x: x.narrow(-1, 1, 1) if x.shape[-1] else x.narrow(0, 0, 0),
    "permute": lambda x: x.permute(1, 0), "expand": lambda x: x.expand(2, *x.shape), "None": lambda x: x[None],
    "flatten": lambda x: x.flatten(), "reshape": lambda x: x.reshape(*reversed(x.shape)),
    "view same": lambda x: x.view(x.shape), "squeeze": lambda x: x.unsqueeze(0).squeeze(0),
    "select": lambda x: x.select(-1, 0) if x.shape[-1] else x.select(0, 0),
    "transpose": lambda x: x.transpose(0, 1), "movedim": lambda x: x.movedim(0, -1), "diagonal": lambda x: x.diagonal(),
    "unfold": lambda x: x.unfold(-1, 1, 1), "split": lambda x: x.split(1, -1)[0], "mT": lambda x: x.mT,
    "unbind": lambda x: x.unbind(-1)[0] if x.shape[-1] else x, "detach": lambda x: x.detach(),
    "view_as": lambda x: x.view_as(x), "as_strided same": lambda x: x.as_strided(x.shape, x.stride()),
    "contiguous": lambda x: x.contiguous(), "clone": lambda x: x.clone(),
    "clone contiguous_format": lambda x: x.clone(memory_format=_lib_of(x).contiguous_format),
    "empty_like": lambda x: _lib_of(x).empty_like(x), "double": lambda x: x.double(), "mul": lambda x: x * 2,
    "flip": lambda x: x.flip(0),
}


def _lib_of(x):
    return tg if isinstance(x, tg.Tensor) else torch


def _complex_of(x):
    return _lib_of(x).complex64


OPS["view_as_real"] = lambda x: _lib_of(x).view_as_real(x.to(_complex_of(x)))

# Two views in a row, and views of copies
CHAINS = ["slice", "t", "unsqueeze(0)", "unsqueeze(-1)", "permute", "expand", "select", "unfold", "clone",
          "contiguous", "empty_like", "view_as_real", "flip"]


def _layout(lib, build, *ops):
    try:
        x = build(lib)
        for op in ops:
            x = OPS[op](x)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    return tuple(x.shape), x.stride(), x.is_contiguous()


@pytest.mark.parametrize("base", BASES)
def test_views_of_empty_tensors_strided_as_torch(base):
    build = BASES[base]
    mismatches = [f"{op}: tracegrad {ours}, torch {theirs}" for op in OPS
                  if (ours := _layout(tg, build, op)) != (theirs := _layout(torch, build, op))]
    assert not mismatches


@pytest.mark.parametrize("base", BASES)
def test_chains_of_views_of_empty_tensors_strided_as_torch(base):
    build = BASES[base]
    mismatches = [f"{first} then {then}: tracegrad {ours}, torch {theirs}" for first in CHAINS for then in CHAINS
                  if (ours := _layout(tg, build, first, then)) != (theirs := _layout(torch, build, first, then))]
    assert not mismatches
