"""sigmoid, SiLU and GLU on float32 and float16 as PyTorch's x86 CPU kernels compute them, bit for bit.

Both are ``cpu_kernel_vec`` kernels built for AVX-512 too: whole blocks of two vectors take ``1 / (1 + exp(-x))``
with Sleef's ``expf_u10``, the leftover elements of each run the same formula with glibc's ``expf``
(``aten_loops``). NumPy's ``exp`` is neither: it gave PyTorch's sigmoid for 84% of float32 inputs. The gradients
use the same sigmoid: SiLU's backward recomputes it, sigmoid's reads the result (``pointwise``).

Half precision takes the same float formulas (its vector code widens each ``Vectorized<Half>`` to two float
vectors, its scalar code casts to float) and rounds once, but its blocks are two ``Vectorized<Half>``: twice as
many elements as float's. The split shows in glu and SiLU's backward, whose sigmoid is multiplied before the
rounding; sigmoid and SiLU of every half value round to the same half either way.
"""

from __future__ import annotations

import numpy as np

from ..._strides import empty_strided, torch_strides
from ..aten_loops import float_kernel
from ..aten_vec import fma32
from .glibc_float_math import exp_float
from .sleef_float import sleef_expf

_F32 = np.float32
_ONE = _F32(1)


def _one_plus_exp_neg(x: np.ndarray, vector: bool) -> np.ndarray:
    """1 + exp(-x) in float: Sleef's exp in the vector code, glibc's in the scalar loop (inf far below 0)."""
    e = sleef_expf(np.negative(x)) if vector else exp_float(np.negative(x))
    e += _ONE
    return e


def _sigmoid(x: np.ndarray, vector: bool) -> np.ndarray:
    e = _one_plus_exp_neg(x, vector)
    return np.divide(_ONE, e, out=e)


def _silu(x: np.ndarray, vector: bool) -> np.ndarray:
    e = _one_plus_exp_neg(x, vector)
    return np.divide(x, e, out=e)


def _silu_backward(g: np.ndarray, x: np.ndarray, vector: bool) -> np.ndarray:
    """``dy * s * (1 + x * (1 - s))`` with s the sigmoid, left to right, ``x * (1 - s) + 1`` fused (the
    compiler contracts it)."""
    s = _sigmoid(x, vector)
    factor = fma32(x, np.subtract(_ONE, s), _ONE)
    out = np.multiply(g, s)
    out *= factor
    return out


def _glu(first: np.ndarray, second: np.ndarray, vector: bool) -> np.ndarray:
    return first * _sigmoid(second, vector)


def sigmoid_float(x: np.ndarray, out_like: np.ndarray | None = None) -> np.ndarray:
    """PyTorch's sigmoid of a float32 or float16 array (written into an output laid out as ``out_like``, if
    given)."""
    return float_kernel(_sigmoid, (x,), out_like=out_like)


def glu_float(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """PyTorch's ``glu`` kernel, ``a * (1 / (1 + exp(-b)))``, of the two float32 or float16 halves, iterated as
    its output is laid out: by TensorIterator over the halves (a transposed input's runs span its columns)."""
    out_like = empty_strided(first.shape, torch_strides(first.shape, (first, second)), first.dtype)
    return float_kernel(_glu, (first, second), out_like=out_like)


def silu_float(x: np.ndarray) -> np.ndarray:
    """PyTorch's SiLU of a float32 or float16 array."""
    return float_kernel(_silu, (x,))


def silu_backward_float(g: np.ndarray, x: np.ndarray) -> np.ndarray:
    """PyTorch's fused ``silu_backward`` of float32 or float16 arrays (the gradient's layout follows ``g``)."""
    return float_kernel(_silu_backward, (g, x))
