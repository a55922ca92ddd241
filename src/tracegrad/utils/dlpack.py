"""``torch.utils.dlpack``: exchanging tensors with other libraries through DLPack, without copying.

A tracegrad tensor's memory is a NumPy array, so NumPy's DLPack support does the work: ``Tensor.__dlpack__``
exports the array (after torch's refusal of a tensor that requires grad), and ``from_dlpack`` imports with
``numpy.from_dlpack`` and wraps the array, so writes on either side show through on the other.

NumPy's DLPack knows no bfloat16 (kDLBfloat, code 4): a bfloat16 array travels as its 16-bit words, exported as a
uint16 view whose capsule's DLTensor then says kDLBfloat, and imported from a capsule whose DLTensor is made to say
kDLUInt first, its uint16 array then viewed as bfloat16 (:func:`_retyped`).
"""

from __future__ import annotations

import ctypes
import enum
from typing import Any

import numpy as np

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    """Device codes of the DLPack specification (dlpack.h), as torch lists them."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


_INVALID_CAPSULE = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only "
                    "once, so you might have already constructed a tensor from it once.")


class _Capsule:
    """Hands a legacy capsule (from ``to_dlpack``) to ``numpy.from_dlpack``, which only takes producers."""

    def __init__(self, capsule: Any) -> None:
        self._capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (int(DLDeviceType.kDLCPU), 0)


class _Writable:
    """NumPy marks what it imports from a legacy capsule read-only (that format has no read-only flag); torch's
    capsules are writable, so the memory is seen again through a writable array interface, keeping the
    imported array (and the producer's deleter) alive."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array
        interface = dict(array.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


_KDL_UINT, _KDL_BFLOAT = 1, 4  # (DLDataTypeCode)
_CAPSULE_NAME = ctypes.pythonapi.PyCapsule_GetName
_CAPSULE_NAME.restype, _CAPSULE_NAME.argtypes = ctypes.c_char_p, [ctypes.py_object]
_CAPSULE_POINTER = ctypes.pythonapi.PyCapsule_GetPointer
_CAPSULE_POINTER.restype, _CAPSULE_POINTER.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
# where a capsule's DLDataType (uint8 code, uint8 bits, uint16 lanes) lies: DLTensor's data pointer, DLDevice and
# ndim come first (20 bytes), and DLManagedTensorVersioned puts its version, manager_ctx, deleter and flags
# (32 bytes) before its DLTensor; DLManagedTensor begins with it
_DTYPE_OFFSETS = {b"dltensor": 20, b"dltensor_versioned": 52}


def _dtype_field(capsule: Any):
    """A live capsule's DLDataType code and bits, as two writable bytes (None for a consumed capsule)."""
    name = _CAPSULE_NAME(capsule)
    if name not in _DTYPE_OFFSETS:
        return None
    return (ctypes.c_uint8 * 2).from_address(_CAPSULE_POINTER(capsule, name) + _DTYPE_OFFSETS[name])


def _retyped(capsule: Any, code: int, new_code: int) -> bool:
    """Make a capsule of 16-bit elements of DLDataTypeCode ``code`` say ``new_code``; whether it did."""
    field = _dtype_field(capsule)
    if field is None or (field[0], field[1]) != (code, 16):
        return False
    field[0] = new_code
    return True


def _bfloat16_capsule(array: np.ndarray, **kwargs: Any) -> Any:
    """The capsule of a bfloat16 array: its uint16 view's, saying kDLBfloat."""
    capsule = array.view(np.uint16).__dlpack__(**kwargs)
    _retyped(capsule, _KDL_UINT, _KDL_BFLOAT)
    return capsule


def _export(array: np.ndarray, **kwargs: Any) -> Any:
    from ..backend import dtypes

    if array.dtype is dtypes.bfloat16.np:
        return _bfloat16_capsule(array, **kwargs)
    return array.__dlpack__(**kwargs)


def _import_capsule(capsule: Any) -> np.ndarray:
    """A legacy or versioned capsule's array (writable, as torch's), bfloat16 included."""
    bfloat16 = _retyped(capsule, _KDL_BFLOAT, _KDL_UINT)
    try:
        array = np.asarray(_Writable(np.from_dlpack(_Capsule(capsule))))
    except (TypeError, ValueError, BufferError, RuntimeError) as exc:
        raise RuntimeError(_INVALID_CAPSULE) from exc
    if bfloat16:
        from ..backend import dtypes

        array = array.view(dtypes.bfloat16_in_use().np)
    return array


def _is_capsule(obj: Any) -> bool:
    return type(obj).__name__ == "PyCapsule"


def _check_device(device: Any) -> None:
    """Only the CPU can receive: a tracegrad tensor from DLPack always lives in host memory."""
    if device is None:
        return
    from ..backend.device import device as _device

    if isinstance(device, str):
        device = _device(device)
    if not isinstance(device, _device):
        raise AssertionError(f"from_dlpack: unsupported device type: {type(device)}")
    if device.type != "cpu":
        raise BufferError(f"Cannot pack tensors on {device.type}")


def from_dlpack(ext_tensor: Any, *, device: Any = None, copy: bool | None = None):
    """A tensor sharing ``ext_tensor``'s memory (an object with ``__dlpack__``, or a capsule from
    ``to_dlpack``). ``copy=True`` copies; ``copy=False`` refuses where sharing is impossible."""
    from .._tensor import Tensor, _wrap
    from ..backend import dtypes

    _check_device(device)
    if isinstance(ext_tensor, Tensor):
        ext_tensor.__dlpack__()  # torch's refusals (requires grad) apply to our own tensors too
        array = ext_tensor._data
        array = array.copy() if copy else array
    elif hasattr(ext_tensor, "__dlpack__"):
        kwargs = {} if copy is None else {"copy": copy}
        try:
            array = np.from_dlpack(ext_tensor, **kwargs)
        except RuntimeError as exc:  # (NumPy's "Unsupported dtype in DLTensor.": bfloat16's capsule is taken here)
            capsule = ext_tensor.__dlpack__()
            field = _dtype_field(capsule)
            if field is None or (field[0], field[1]) != (_KDL_BFLOAT, 16):
                raise exc from None
            array = _import_capsule(capsule)
            array = array.copy() if copy else array
    elif _is_capsule(ext_tensor):
        array = _import_capsule(ext_tensor)
        if copy:
            array = array.copy()
    else:
        raise RuntimeError(_INVALID_CAPSULE)
    dtypes.from_numpy_dtype(array.dtype)  # dtypes tracegrad lacks are refused here
    return _wrap(array)


def to_dlpack(tensor: Any) -> Any:
    """The legacy capsule form of ``Tensor.__dlpack__``; as torch's, it does not check requires_grad."""
    return _export(tensor._data)


def tensor_dlpack(self: Any, *, stream: Any = -1, max_version: tuple[int, int] | None = None,
                  dl_device: tuple | None = None, copy: bool | None = None) -> Any:
    """``Tensor.__dlpack__``: a DLPack capsule of the tensor's memory."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if stream not in (-1, None):
        raise AssertionError("stream should be None on cpu.")
    kwargs: dict[str, Any] = {}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    return _export(self._data, **kwargs)


def tensor_dlpack_device(self: Any) -> tuple[DLDeviceType, int]:
    """``Tensor.__dlpack_device__``: where the memory is, as its array reports it ((kDLCPU, 0) for NumPy)."""
    code, index = self._data.__dlpack_device__()
    return (DLDeviceType(code), index)
