"""What a tensor's Python operators take as the other operand, as torch's do."""

from __future__ import annotations

import numbers

import numpy as np

from ._tensor import Tensor

_LARGEST_INT64 = 2**63 - 1


def is_operand(x) -> bool:
    """A tensor or a number. A NumPy array is refused (NotImplemented), as torch's operators refuse it, so Python
    hands the operation to NumPy, which computes it on the tensor's values and wraps its result back
    (``Tensor.__array_wrap__``): a tensor without a graph, as torch's. A NumPy uint64 beyond int64 is no integer to
    torch's parser: its TypeError is the operator's NotImplemented."""
    if x.__class__ is np.uint64 and x > _LARGEST_INT64:
        return False
    return isinstance(x, (Tensor, numbers.Number, np.generic))
