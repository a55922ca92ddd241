"""The state operators behind ``torch.quasirandom.SobolEngine`` (ATen's ``SobolEngineOps.cpp``).

A Sobol engine keeps ``sobolstate`` (one row of 30 direction numbers per dimension, int64) and ``quasi`` (the last
point drawn, as 30-bit integers). Drawing the point after index ``k`` XORs into ``quasi`` the column of
``sobolstate`` at the position of ``k``'s rightmost zero bit. The direction numbers start from Joe and Kuo's table
(``sobol_direction_numbers.npz``, written by ``tools/make_sobol_direction_numbers.py``, which says where it comes
from and how it is packed).
"""

from __future__ import annotations

import functools
import operator
from pathlib import Path

import numpy as np

from ..backend import dtypes as _dt
from ._util import unsupported
from .registry import defop_without_derivative

MAXBIT = 30
MAXDIM = 21201
_TABLE = Path(__file__).with_name("sobol_direction_numbers.npz")
_LONG = np.dtype(np.int64)


@functools.cache
def _direction_numbers() -> tuple[np.ndarray, np.ndarray]:
    """Joe and Kuo's primitive polynomials (``poly``, one per dimension) and initial direction numbers
    (``initsobolstate``: ``vinit[d, i]`` for ``i`` below the degree of ``poly[d]``, zero beyond)."""
    with np.load(_TABLE) as table:
        poly = np.concatenate(([1], 1 + 2 * np.cumsum(table["poly_half_steps"], dtype=np.int64)))
        degree = _bit_length(poly) - 1
        vinit = np.zeros((MAXDIM, degree.max()), dtype=np.int64)
        vinit[1:, 0] = 1
        for i in range(1, vinit.shape[1]):
            rows = np.flatnonzero(degree > i)
            rows = rows[rows > 0]
            bits = np.unpackbits(table[f"column_{i}"])[: rows.size * i].reshape(rows.size, i)
            vinit[rows, i] = 2 * (bits.astype(np.int64) @ (1 << np.arange(i - 1, -1, -1))) + 1
    return poly, vinit


def _bit_length(values: np.ndarray) -> np.ndarray:
    """Bits needed to write each positive value (``frexp``'s exponent is exact below 2**53)."""
    return np.frexp(values.astype(np.float64))[1].astype(np.int64)


def initial_state(dimension: int) -> np.ndarray:
    """The first ``dimension`` rows of ``sobolstate``: row 0 all ones, each other row its initial direction numbers
    continued by Bratley and Fox's recurrence on its polynomial, then column ``j`` scaled by 2**(MAXBIT-1-j)."""
    poly, vinit = _direction_numbers()
    poly, vinit = poly[:dimension], vinit[:dimension]
    degree = _bit_length(poly) - 1
    state = np.zeros((dimension, MAXBIT), dtype=np.int64)
    state[:, : vinit.shape[1]] = vinit
    state[0] = 1
    rows = np.arange(dimension)
    for j in range(1, MAXBIT):
        continued = (degree <= j) & (rows > 0)
        m, p = degree[continued], poly[continued]
        newv = state[continued, j - m]
        for k in range(min(j, m.max(initial=0))):
            # term k: 2**(k+1) * v[j-k-1] where bit m-1-k of the polynomial is set (k < m)
            taken = (k < m) & ((p >> np.maximum(m - 1 - k, 0)) & 1).astype(bool)
            newv ^= np.where(taken, state[continued, j - k - 1] << (k + 1), 0)
        state[continued, j] = newv
    return state << np.arange(MAXBIT - 1, -1, -1)


def _check_long(tensor: np.ndarray, name: str) -> None:
    if tensor.dtype != _LONG:
        raise RuntimeError(f"{name} needs to be of type Long")


def _counts(n, num_generated) -> tuple[int, int]:
    """The step counts as Python ints: the parser lets an integer 0-d tensor through for an ``int`` (as torch's
    does), and an engine's ``num_generated`` is one after ``draw``/``fast_forward`` of a tensor count."""
    return operator.index(n), operator.index(num_generated)


def _rightmost_zeros(start: int, n: int) -> np.ndarray:
    """ATen's ``rightmost_zero`` of ``start, start+1, ..., start+n-1``: the number of trailing one bits (0 for a
    negative index, whose C++ remainder by 2 is never 1)."""
    index = np.arange(start, start + n, dtype=np.int64)
    trailing_ones = _bit_length(index ^ (index + 1)) - 1
    return np.where(index < 0, 0, trailing_ones)


def _columns_xored(start: int, n: int) -> np.ndarray:
    """Which columns of ``sobolstate`` (bool per bit position) steps ``start..start+n-1`` XOR in an odd number of
    times. Negative steps each take column 0; from index ``a`` to ``b`` the rest flip the bits of the Gray codes'
    difference ``g(a) ^ g(b)`` (``g(k) = k ^ (k >> 1)``), whatever the number of steps."""
    negative = min(max(-start, 0), max(n, 0))
    first, end = max(start, 0), start + n
    flipped = negative % 2
    if end > first:
        flipped ^= (first ^ (first >> 1)) ^ (end ^ (end >> 1))
    return ((flipped >> np.arange(MAXBIT)) & 1).astype(bool)


def _draw_kernel(quasi, n, sobolstate, dimension, num_generated, dtype=None):
    _check_long(sobolstate, "sobolstate")
    _check_long(quasi, "quasi")
    n, num_generated = _counts(n, num_generated)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}, {dimension}]")
    result_dtype = _dt.float32.np if dtype is None else dtype.np
    if dtype not in (None, _dt.float32, _dt.float64):  # (AT_DISPATCH_FLOATING_TYPES)
        raise unsupported("_sobol_engine_draw", dtype)
    steps = sobolstate[:dimension, _rightmost_zeros(num_generated, n)].T
    points = np.bitwise_xor.accumulate(steps, axis=0) ^ quasi[:dimension]
    wquasi = quasi.copy()
    if n:
        wquasi[:dimension] = points[-1]
    # (each point converted to the result's dtype, rounded there, then scaled by the float 2**-30)
    result = points.astype(result_dtype) * result_dtype.type(2.0**-MAXBIT)
    return result.reshape(n, dimension), wquasi


def _ff_kernel(quasi, n, sobolstate, dimension, num_generated):
    _check_long(sobolstate, "sobolstate")
    _check_long(quasi, "quasi")
    n, num_generated = _counts(n, num_generated)
    columns = sobolstate[:dimension, _columns_xored(num_generated, n)]
    quasi[:dimension] ^= np.bitwise_xor.reduce(columns, axis=1)
    return quasi


def _parity(values: np.ndarray) -> np.ndarray:
    """The parity of the low MAXBIT bits of each value."""
    values = values & ((1 << MAXBIT) - 1)
    for shift in (16, 8, 4, 2, 1):
        values ^= values >> shift
    return values & 1


def _scramble_kernel(sobolstate, ltm, dimension):
    """Each direction number multiplied (over GF(2)) by its dimension's lower triangular matrix, made unit
    diagonal: bit ``MAXBIT-1-p`` of the result is the parity of row ``p`` (read as a number whose column ``k`` is
    bit ``size-1-k``) ANDed with the number."""
    _check_long(sobolstate, "sobolstate")
    _check_ltm(ltm)
    unit = ltm.copy()
    size = unit.shape[-1]
    np.einsum("...ii->...i", unit)[...] = 1
    # (the weights 2**(size-1-k) and their products in ltm's dtype, wrapping in a narrow one as ATen's pow and mul
    # do, summed in int64)
    column_weights = (1 << np.arange(size - 1, -1, -1)).astype(unit.dtype)
    rows = (unit * column_weights).sum(-1, dtype=np.int64)
    weights = 1 << np.arange(MAXBIT - 1, -1, -1)
    for first in range(0, dimension, 1024):  # (in blocks: 30x30 products per dimension)
        block = slice(first, min(first + 1024, dimension))
        products = _parity(rows[block, None, :MAXBIT] & sobolstate[block, :, None])
        sobolstate[block] = products @ weights
    return sobolstate


def _check_ltm(ltm: np.ndarray) -> None:
    """ATen's refusals of ``ltm``: its row weights are ``pow(2, arange(..., ltm.options()))`` (no Bool or complex
    arange), summed into a tensor read as int64 (a floating ``ltm`` keeps its dtype there; an integer one sums
    to int64)."""
    name = _dt.scalar_type_name(ltm)
    if name == "Bool" or name.startswith("Complex"):
        raise unsupported("arange_cpu", ltm)
    if name in ("Half", "BFloat16", "Float", "Double"):
        raise RuntimeError(f"expected scalar type Long but found {name}")


def _initialize_state_kernel(sobolstate, dimension):
    _check_long(sobolstate, "sobolstate")
    sobolstate[:dimension] = initial_state(dimension)
    return sobolstate


_sobol_engine_draw = defop_without_derivative(
    "_sobol_engine_draw(Tensor quasi, int n, Tensor sobolstate, int dimension, int num_generated, "
    "ScalarType? dtype) -> (Tensor, Tensor)", _draw_kernel)
_sobol_engine_ff_ = defop_without_derivative(
    "_sobol_engine_ff_(Tensor(a!) self, int n, Tensor sobolstate, int dimension, int num_generated) -> Tensor(a!)",
    _ff_kernel)
_sobol_engine_scramble_ = defop_without_derivative(
    "_sobol_engine_scramble_(Tensor(a!) self, Tensor ltm, int dimension) -> Tensor(a!)", _scramble_kernel)
_sobol_engine_initialize_state_ = defop_without_derivative(
    "_sobol_engine_initialize_state_(Tensor(a!) self, int dimension) -> Tensor(a!)", _initialize_state_kernel)

PUBLIC = {
    "_sobol_engine_draw": _sobol_engine_draw,
    "_sobol_engine_ff_": _sobol_engine_ff_,
    "_sobol_engine_scramble_": _sobol_engine_scramble_,
    "_sobol_engine_initialize_state_": _sobol_engine_initialize_state_,
}
METHODS: dict = {}
