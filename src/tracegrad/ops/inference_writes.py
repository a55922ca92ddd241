"""How many counted writes torch's CPU kernel makes into a new result, for inference tensors alone outside inference
mode, where that number depends on the arguments (``OpDef.inference_writes`` as a function of the bound arguments;
the fixed numbers are ``variants._INFERENCE_RESULT_WRITES``).

torch's autograd kernel, which would leave an inner ``copy_``/``fill_``/``out=`` call or an in-place step uncounted,
does not run for inference tensors: so ``diag`` leaves its result at version 2 for a vector, at 1 for a matrix.
Each count here was measured on torch 2.13 (tests/ops/test_result_versions_vs_torch.py)."""

from __future__ import annotations

import math

from .._tensor import Tensor

_HALF_PRECISION = ("float16", "bfloat16")


def _reduced_dims(data, dim) -> set[int]:
    """The dims of ``data`` a reduction's ``dim`` argument names (all of them for None or an empty list)."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return set(range(data.ndim))
    return {d % max(data.ndim, 1) for d in ((dim,) if isinstance(dim, int) else dim)}


def _variance_writes(args: tuple, takes_sqrt: bool) -> int:
    """var/std (std_var_out): a complex input's result is the sum of its parts' variances written through ``add``'s
    out= overload (std then takes a ``sqrt_``); an empty input's is filled with NaN; one reduced to a single value of
    float or double is filled with the all-at-once result (half precision goes through the reduction kernel)."""
    data = args[0]._data
    if data.dtype.kind == "c":
        return 2 if takes_sqrt else 1
    if data.size == 0:
        return 1
    kept = [n for d, n in enumerate(data.shape) if d not in _reduced_dims(data, args[1])]
    return int(math.prod(kept) <= 1 and data.dtype.name not in _HALF_PRECISION)


def _var_writes(args: tuple) -> int:
    return _variance_writes(args, takes_sqrt=False)


def _std_writes(args: tuple) -> int:
    return _variance_writes(args, takes_sqrt=True)


def _diag_writes(args: tuple) -> int:
    """Two writes into a vector's diagonal matrix (zeros, then the diagonal), one into a matrix's diagonal."""
    return 2 if args[0]._data.ndim == 1 else 1


def _flip_writes(data, dims) -> int:
    """flip returns ``self.clone()`` where nothing moves: an empty tensor, or only dims of size 1 (or none) flipped."""
    if data.ndim == 0 or data.size == 0:
        return 1
    return int(all(data.shape[d % data.ndim] <= 1 for d in dims))


def _flip_op_writes(args: tuple) -> int:
    return _flip_writes(args[0]._data, args[1])


def _rot90_writes(args: tuple) -> int:
    """rot90: a clone for k % 4 == 0, a flip of both dims for 2, else a flip of one dim then a ``transpose_``."""
    self, k, dims = args
    turns = k % 4
    if turns == 0:
        return 1
    if turns == 2:
        return _flip_writes(self._data, dims)
    return 1 + _flip_writes(self._data, (dims[1] if turns == 1 else dims[0],))


def _constant_pad_writes(args: tuple) -> int:
    """constant_pad_nd: without a positive pad, a narrowed ``clone``; with one, a ``fill_`` then a ``copy_``."""
    return 2 if any(p > 0 for p in args[1]) else 1


def _kept_dim_writes(args: tuple, zero_dim: int) -> int:
    """max.dim/min.dim/mode/aminmax: each result is written twice unless the reduced dim is kept (computed with it
    kept, then squeezed in place), never with keepdim; a 0-d input's, ``zero_dim`` times."""
    self, dim, keepdim = args
    if self._data.ndim == 0:
        return zero_dim
    return 0 if keepdim else 2


def _max_min_writes(args: tuple) -> int:
    return _kept_dim_writes(args, zero_dim=1)


def _mode_writes(args: tuple) -> int:
    return _kept_dim_writes(args, zero_dim=2)


def _aminmax_writes(args: tuple) -> int:
    return 1 if args[1] is None else _kept_dim_writes(args, zero_dim=1)


def _arg_reduction_writes(args: tuple) -> int:
    """argmax/argmin along a dim of size 1: the result is filled with zeros rather than reduced."""
    data, dim = args[0]._data, args[1]
    return int(dim is not None and data.ndim > 0 and data.shape[dim % data.ndim] == 1)


_BY_ARGUMENTS = {
    "var.correction": _var_writes, "std.correction": _std_writes, "diag": _diag_writes, "flip": _flip_op_writes,
    "rot90": _rot90_writes, "constant_pad_nd": _constant_pad_writes, "max.dim": _max_min_writes,
    "min.dim": _max_min_writes, "mode": _mode_writes, "aminmax": _aminmax_writes, "argmax": _arg_reduction_writes,
    "argmin": _arg_reduction_writes}


def install(registry: dict) -> None:
    """Give the operators above their counts."""
    for key, count in _BY_ARGUMENTS.items():
        registry[key].inference_writes = count


def counted_writes(result: Tensor, writes: int) -> Tensor:
    """``result`` at version ``writes``: for a composite operator whose in-place steps torch counts whatever the
    mode (``one_hot``'s ``scatter_``), except inside inference mode, where its result is an inference tensor."""
    if writes and not result._inference:
        result._vc = [writes]
    return result
