"""float32 and float16 ``pow`` as PyTorch's x86 CPU kernels compute it, bit for bit.

Both pow kernels are ``cpu_kernel_vec`` loops built for AVX-512 too (``aten_loops``): whole blocks of two vectors
take Sleef's ``powf_u10`` (``sleef_pow``), the leftover elements of each run the scalar code. A number exponent
(other than those PyTorch replaces by products, square roots and reciprocals) goes into the vector code rounded
to float and into the scalar code as the double it is: ``std::pow(float, double)``, a double power rounded to
float. Two tensors take glibc's ``powf`` in the scalar code. A correctly rounded power (the old route) differed
from Sleef's in some 2% of elements and from glibc's powf in some 1%.

Half takes the float kernels (``Vectorized<Half>::pow`` widens to float vectors, the scalar code's
``std::pow(Half, Half)`` is ``powf``), its number exponent rounded to half, each result rounded once to half; its
blocks hold twice as many elements as float's.
"""

from __future__ import annotations

import numpy as np

from ..aten_loops import float_kernel
from .glibc_powf import glibc_powf, pow_to_float
from .sleef_pow import sleef_powf

_F32 = np.float32
_HALF = np.dtype(np.float16)


def pow_tensor_scalar(x: np.ndarray, exponent: float | int) -> np.ndarray:
    """PyTorch's float32 or float16 tensor to the power of a number (not one of the replaced exponents). Half
    takes the number rounded to half, and the float kernels of the widened elements, rounded once to half."""
    if x.dtype == _HALF:
        in_float = _F32(np.float16(exponent))

        def scalar_code(v: np.ndarray) -> np.ndarray:
            return glibc_powf(v, in_float)  # (std::pow(Half, Half))
    else:
        in_float = _F32(exponent)

        def scalar_code(v: np.ndarray) -> np.ndarray:
            return pow_to_float(v, exponent)  # (std::pow(float, double))

    return float_kernel(lambda v, vector: sleef_powf(v, in_float) if vector else scalar_code(v), (x,))


def pow_tensor_tensor(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """PyTorch's float32 (or float16: in float, rounded once) tensor to the power of a tensor of its dtype (either
    may be broadcast)."""
    return float_kernel(lambda a, b, vector: (sleef_powf if vector else glibc_powf)(a, b), (base, exponent))
