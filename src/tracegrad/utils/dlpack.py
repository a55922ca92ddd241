"""``torch.utils.dlpack``: exchanging tensors with other libraries through DLPack, without copying.

A tracegrad tensor's memory is a NumPy array, so NumPy's DLPack support does the work: ``Tensor.__dlpack__``
exports the array (after torch's refusal of a tensor that requires grad), and ``from_dlpack`` imports with
``numpy.from_dlpack`` and wraps the array, so writes on either side show through on the other.
"""

from __future__ import annotations

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
        array = np.from_dlpack(ext_tensor, **kwargs)
    elif _is_capsule(ext_tensor):
        try:
            array = np.asarray(_Writable(np.from_dlpack(_Capsule(ext_tensor))))
        except (TypeError, ValueError, BufferError, RuntimeError) as exc:
            raise RuntimeError(_INVALID_CAPSULE) from exc
        if copy:
            array = array.copy()
    else:
        raise RuntimeError(_INVALID_CAPSULE)
    dtypes.from_numpy_dtype(array.dtype)  # dtypes tracegrad lacks are refused here
    return _wrap(array)


def to_dlpack(tensor: Any) -> Any:
    """The legacy capsule form of ``Tensor.__dlpack__``; as torch's, it does not check requires_grad."""
    return tensor._data.__dlpack__()


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
    return self._data.__dlpack__(**kwargs)


def tensor_dlpack_device(self: Any) -> tuple[DLDeviceType, int]:
    """``Tensor.__dlpack_device__``: where the memory is, as its array reports it ((kDLCPU, 0) for NumPy)."""
    code, index = self._data.__dlpack_device__()
    return (DLDeviceType(code), index)
