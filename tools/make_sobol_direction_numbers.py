"""Writes ``src/tracegrad/ops/sobol_direction_numbers.npz``, the table ``torch.quasirandom.SobolEngine`` starts from.

The numbers are S. Joe and F. Y. Kuo's direction numbers for 21201 dimensions (``new-joe-kuo-6.21201``, search
criterion D(6), https://web.maths.unsw.edu.au/~fkuo/sobol/, published under a BSD-style licence), the table
PyTorch compiles into ``SobolEngineOpsUtils.cpp`` (``poly`` and ``initsobolstate``). This script reads them from
SciPy's copy of the same table (``scipy/stats/_sobol_direction_numbers.npz``, BSD-3-Clause, arrays ``poly`` and
``vinit``), a build-time source only, and checks every dimension against torch's own ``sobolstate`` before writing.

Usage: ``python tools/make_sobol_direction_numbers.py PATH/TO/_sobol_direction_numbers.npz`` (SciPy's file, e.g.
unzipped from a SciPy wheel), with torch importable.

The file is packed to the bits the numbers carry: ``poly`` is increasing and odd, so it is kept as half of each
step (``poly_half_steps``, uint8); for a polynomial of degree m a dimension has m initial numbers, the i-th odd and
below 2**(i+1), so ``column_i`` packs the i bits of ``vinit[d, i] >> 1`` of each dimension d >= 1 whose degree
exceeds i (column 0 is always 1). ``tracegrad.ops.sobol`` unpacks it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

MAXBIT = 30
OUT = Path(__file__).resolve().parents[1] / "src" / "tracegrad" / "ops" / "sobol_direction_numbers.npz"


def degrees(poly: np.ndarray) -> np.ndarray:
    return np.array([int(p).bit_length() - 1 for p in poly])


def packed_columns(vinit: np.ndarray, degree: np.ndarray) -> dict[str, np.ndarray]:
    columns = {}
    for i in range(1, vinit.shape[1]):
        values = vinit[1:][degree[1:] > i, i] >> 1
        bits = (values[:, None] >> np.arange(i - 1, -1, -1)) & 1
        columns[f"column_{i}"] = np.packbits(bits.astype(np.uint8).ravel())
    return columns


def check_against_torch(poly: np.ndarray, vinit: np.ndarray) -> None:
    import torch

    sys.path.insert(0, str(OUT.parents[2]))
    from tracegrad.ops.sobol import _direction_numbers, initial_state

    unpacked_poly, unpacked_vinit = _direction_numbers.__wrapped__()
    assert np.array_equal(unpacked_poly, poly)
    used = np.arange(vinit.shape[1])[None, :] < degrees(poly)[:, None]
    assert np.array_equal(np.where(used, vinit, 0)[1:], unpacked_vinit[1:])
    expected = torch.quasirandom.SobolEngine(21201).sobolstate.numpy()
    assert np.array_equal(initial_state(21201), expected), "the table does not give torch's sobolstate"


def main(scipy_npz: str) -> None:
    table = np.load(scipy_npz)
    poly, vinit = table["poly"].astype(np.int64), table["vinit"].astype(np.int64)
    degree = degrees(poly)
    assert poly[0] == 1 and (np.diff(poly) > 0).all() and (poly % 2 == 1).all()
    assert (vinit[1:, 0] == 1).all()
    half_steps = np.diff(poly) // 2
    assert half_steps.max() < 256
    np.savez_compressed(OUT, poly_half_steps=half_steps.astype(np.uint8), **packed_columns(vinit, degree))
    check_against_torch(poly, vinit)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes); all 21201 dimensions match torch's sobolstate")


if __name__ == "__main__":
    main(sys.argv[1])
