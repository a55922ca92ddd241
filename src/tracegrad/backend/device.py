"""Devices: ``cpu`` runs on NumPy; ``cuda`` is served by the CuPy back end when CuPy and a GPU exist."""

from __future__ import annotations

import re

import numpy as np

# Every device type torch knows, in the order its parser lists them. A torch.device of any of them can be made
# (as in torch); only cpu and cuda (with CuPy and a GPU) hold tensors here, and the others (meta included) are
# refused where a tensor would be put on them (refuse_unsupported).
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia",
                "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::([1-9]\d*|0))?")
_BACKEND_NAMES = {"lazy": "Lazy", "vulkan": "Vulkan", "privateuseone": "PrivateUse1", "mkldnn": "MkldnnCPU"}


class device:
    """A device like PyTorch's ``torch.device('cpu')`` or ``torch.device('cuda', 0)``."""

    __module__ = "tracegrad"  # (torch's C type prints as <class 'torch.device'>)
    __slots__ = ("type", "index")

    def __init__(self, type: str | device, index: int | None = None) -> None:  # noqa: A002 - PyTorch's name
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, np.integer):  # (a NumPy integer is an index as Python's int is)
            type = int(type)
        if isinstance(type, int) and not isinstance(type, bool):  # torch.device(0) is the first accelerator
            from . import cupy_backend

            # (torch checks the index's sign before it looks for an accelerator)
            if type >= 0 and not cupy_backend.available():
                raise RuntimeError("Cannot access accelerator device when none is available.")
            type, index = "cuda", type
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        match = _DEVICE_STRING.fullmatch(type)
        if match is None:
            raise RuntimeError(f"Invalid device string: '{type}'")
        type = match.group(1)
        if match.group(2) is not None:
            index = int(match.group(2))
        if type not in DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of device string: "
                               f"{type}")
        self.type = type
        self.index = index

    def __reduce__(self) -> tuple:  # (as torch's: a slotted class pickles at protocols 0 and 1 too)
        return device, (self.type,) if self.index is None else (self.type, self.index)

    def __repr__(self) -> str:
        return f"device(type='{self.type}'" + (f", index={self.index})" if self.index is not None else ")")

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        # (a device equals devices only, as torch's: ``x.device == 'cpu'`` is False there, so here too)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def _unordered(self, other) -> bool:
        """torch's devices have no order: ``<`` between two of them is refused in its words."""
        if not isinstance(other, device):
            return NotImplemented
        raise TypeError("comparison not implemented")

    __lt__ = __le__ = __gt__ = __ge__ = _unordered

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __enter__(self) -> device:
        """``with torch.device(d):`` makes ``d`` the default device of factory calls inside (torch 2.x)."""
        outer = DEFAULT_DEVICE.device
        DEFAULT_DEVICE.set(self)  # (may refuse: then there is no block to leave)
        DEFAULT_DEVICE.outer.append(outer)
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        DEFAULT_DEVICE.set(DEFAULT_DEVICE.outer.pop())


CPU = device("cpu")


class _DefaultDevice:
    """Where a factory (``zeros``, ``tensor``, ``rand``, ...) given no device puts its tensor: the CPU, or what
    ``set_default_device`` or an enclosing ``with torch.device(...)`` chose. ``for_factories`` is None for the CPU,
    so the factories' usual path checks one attribute."""

    def __init__(self) -> None:
        self.device = CPU
        self.for_factories: device | None = None
        self.outer: list[device] = []  # the defaults of the enclosing with-blocks

    def set(self, d: device) -> None:
        if d.type == "meta":  # (refused at once: factories would otherwise be silently wrong for a whole block)
            raise NotImplementedError(NO_META)
        if d.type == "cuda":
            from . import cupy_backend

            if cupy_backend.available():  # (the CuPy back end is reached through explicit devices only)
                raise NotImplementedError("tracegrad: a cuda default device is not supported; pass device= "
                                          "explicitly")
        self.device = d
        self.for_factories = None if d.type == "cpu" else d


DEFAULT_DEVICE = _DefaultDevice()


NO_META = ("tracegrad has no 'meta' device: its tensors always hold their values (torch's meta tensors have only a "
           "shape, dtype and strides), so a tensor made or moved there would be a CPU tensor in disguise; make it on "
           "the CPU instead")

# Devices torch's CPU build refuses in the words of the module that would initialize them, whether a tensor is
# made there or moved there.
_UNBUILT_BACKENDS = {
    "xpu": (AssertionError, "Torch not compiled with XPU enabled"),
    "mtia": (AssertionError, "Torch not compiled with MTIA enabled. Ensure you have `import "
                             "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include "
                             "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!"),
    "hpu": (ModuleNotFoundError, "No module named 'torch.hpu'"),
    "privateuseone": (ModuleNotFoundError, "No module named 'torch.privateuseone'"),
}


def refuse_unsupported(d: device, moving: bool) -> None:
    """A device torch's CPU build has no kernels for: moving a tensor there (``.to``) or making one there (a
    factory) fails with torch's words (a factory's message is cut before torch's list of C++ registrations).
    The meta device, which torch has, is refused too: tracegrad cannot make tensors without data."""
    if d.type in ("cpu", "cuda"):
        return
    if d.type == "meta":
        raise NotImplementedError(NO_META)
    if d.type in _UNBUILT_BACKENDS:
        error, message = _UNBUILT_BACKENDS[d.type]
        raise error(message)
    if moving:
        raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")
    backend = _BACKEND_NAMES.get(d.type, d.type.upper())
    raise NotImplementedError(
        f"Could not run 'aten::empty.memory_format' with arguments from the '{backend}' backend. This could be "
        "because the operator doesn't exist for this backend, or was omitted during the selective/custom build "
        "process (if using custom build). If you are a Facebook employee using PyTorch on mobile, please visit "
        "https://fburl.com/ptmfixes for possible resolutions.")


def as_device(d) -> device:
    if d is None:
        return CPU
    if isinstance(d, device):
        return d
    return device(d)  # (an int is the accelerator of that index)
