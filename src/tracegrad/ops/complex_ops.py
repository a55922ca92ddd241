"""Complex numbers as pairs of reals: ``view_as_real`` / ``view_as_complex`` (views that change the dtype),
``complex(real, imag)``, and ``real`` / ``imag``, which are, as in PyTorch, ``view_as_real(x).select(-1, k)``
(so their ``grad_fn`` is ``SelectBackward0`` over ``ViewAsRealBackward0``).

A view that changes the dtype cannot be described by strides over its base's elements, so autograd replays
its view chain (``view_changes_dtype``) instead of using ``as_strided`` (see ``autograd/views.py``).
"""

from __future__ import annotations

import numpy as np

from .._strides import (
    element_strides,
    offset_in,
    storage_offset_of,
    storage_root,
    strided_empty,
    strided_view,
    torch_byte_strides,
)
from .._tensor import Tensor
from ..backend.dtypes import scalar_type_name
from .registry import defop

_REAL_OF = {np.dtype(np.complex64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.float64)}
_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}


def _name(dt: np.dtype) -> str:
    return scalar_type_name(dt)


# ---- view_as_real / view_as_complex -----------------------------------------------------------------------


def _view_as_real_kernel(a):
    if a.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    real = a.real  # a view with the real dtype and the complex strides
    strides = a.strides if a.size else torch_byte_strides(a)  # (an empty array's: see there)
    # (over the storage, so that an empty result's zero strides read as the view's: _strides.zero_strides_meant)
    return strided_view(real, a.shape + (2,), strides + (real.itemsize,))


def _view_as_real_vjp(ctx, g):
    return view_as_complex(g.contiguous())


view_as_real = defop("view_as_real(Tensor(a) self) -> Tensor(a)", _view_as_real_kernel, vjp=_view_as_real_vjp)
view_as_real.view_changes_dtype = True


def _view_as_complex_kernel(a):
    if a.dtype not in _COMPLEX_OF:
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {_name(a.dtype)}")
    if a.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if a.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    # (PyTorch's strides and offset, an empty tensor's included: NumPy gives a fresh empty array zero strides)
    strides = element_strides(a)
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(st % 2 and n != 1 for st, n in zip(strides[:-1], a.shape)):  # (a dim of size 1: its stride floored)
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if storage_offset_of(a) % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    if a.size == 0:  # (no element to alias: an empty view with the halved strides, at the halved offset)
        return _empty_view_in_storage(a, tuple(st // 2 for st in strides[:-1]), _COMPLEX_OF[a.dtype])
    return a.view(_COMPLEX_OF[a.dtype])[..., 0]


def _empty_view_in_storage(a: np.ndarray, strides: tuple, dtype: np.dtype) -> np.ndarray:
    """An empty array of ``a``'s shape but its last dim, with ``dtype`` and these element strides, over ``a``'s
    storage where it starts (so its storage offset is ``a``'s, in its own elements); over an owner of no memory
    where ``a``'s storage is none."""
    root = storage_root(a)
    shape = a.shape[:-1]
    if root is not a and root.flags.c_contiguous:
        try:
            return np.ndarray(shape, dtype, root, offset_in(root, a), tuple(st * dtype.itemsize for st in strides))
        except (TypeError, ValueError):  # (an offset beyond the storage's end)
            pass
    return strided_empty(shape, strides, dtype)


def _view_as_complex_vjp(ctx, g):
    return view_as_real(g.contiguous())


view_as_complex = defop("view_as_complex(Tensor(a) self) -> Tensor(a)", _view_as_complex_kernel,
                        vjp=_view_as_complex_vjp)
view_as_complex.view_changes_dtype = True


# ---- complex(real, imag) --------------------------------------------------------------------------------


def _complex_kernel(re, im):
    if re.dtype not in _COMPLEX_OF or im.dtype not in _COMPLEX_OF:
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_name(re.dtype)} and {_name(im.dtype)}")
    if re.dtype != im.dtype:
        raise RuntimeError(f"Expected object of scalar type {_name(re.dtype)} but got scalar type "
                           f"{_name(im.dtype)} for second argument")
    shape = np.broadcast_shapes(re.shape, im.shape)
    out = np.empty(shape, dtype=_COMPLEX_OF[re.dtype])
    out.real = re
    out.imag = im
    return out


def _complex_vjp(ctx, g):
    need = ctx.needs_input_grad
    return (real(g) if need[0] else None, imag(g) if need[1] else None)


def _complex_jvp(args, outs, tangents):
    from .creation import zeros_like

    tr, ti = tangents
    return _complex_op(tr if tr is not None else zeros_like(args[0]),
                       ti if ti is not None else zeros_like(args[1]))


_complex_op = defop("complex(Tensor real, Tensor imag) -> Tensor", _complex_kernel, vjp=_complex_vjp,
                    jvp=_complex_jvp)


def complex(real: Tensor, imag: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A001 (PyTorch's name)
    if out is not None:
        return _complex_op(real, imag, out=out)
    return _complex_op(real, imag)


# ---- real / imag ---------------------------------------------------------------------------------------


def real(input: Tensor) -> Tensor:
    """The real part, a view of a complex tensor; a real tensor is returned as is."""
    if input._data.dtype.kind != "c":
        return input
    from .views import select

    return select(view_as_real(input), -1, 0)


def imag(input: Tensor) -> Tensor:
    """The imaginary part, a view; only for complex tensors."""
    if input._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    from .views import select

    return select(view_as_real(input), -1, 1)


def input_is_real(ctx, i: int) -> bool:
    """Whether the node's differentiable input ``i`` (one that needs a gradient) has a real dtype."""
    meta = ctx._in_meta[i]
    return meta is not None and meta[1].kind != "c"


def real_for_real_input(ctx, i: int, grad: Tensor | None) -> Tensor | None:
    """PyTorch's ``handle_r_to_c`` in a backward formula: a complex gradient of the node's differentiable input
    ``i`` is cut to its real part where that input is real (the engine refuses a complex gradient for a real
    input; only the formulas that call handle_r_to_c take the real part)."""
    if grad is None or grad._data.dtype.kind != "c" or not input_is_real(ctx, i):
        return grad
    return real(grad)


def real_part_for_real_inputs(ctx, grad: Tensor) -> Tensor | None:
    """The real part of a complex gradient where a real input needs its share of it (PyTorch's cat and
    block_diag backward take it once, before slicing out each real input's part); None where none does."""
    if grad._data.dtype.kind != "c":
        return None
    need = ctx.needs_input_grad
    if any(need[i] and input_is_real(ctx, i) for i in range(len(need))):
        return real(grad)
    return None


PUBLIC = {"view_as_real": view_as_real, "view_as_complex": view_as_complex, "complex": complex, "real": real,
          "imag": imag}
