"""``torch.finfo`` and ``torch.iinfo``: the numerical limits of a floating-point or integer dtype."""

from __future__ import annotations

import numpy as np

from .backend import dtypes as _dt

__all__ = ["finfo", "iinfo"]


def _g(value: float) -> str:
    return f"{value:g}"  # (PyTorch prints six significant digits)


def _limits(d: _dt.dtype):
    """NumPy's finfo of a floating dtype, ml_dtypes' for bfloat16 (whose NumPy dtype NumPy's does not know)."""
    if d is _dt.bfloat16:
        import ml_dtypes

        return ml_dtypes.finfo(_dt.bfloat16_in_use().np)
    return np.finfo(d.np)


def _refuse_pickling(self, protocol: int) -> None:
    """torch's finfo and iinfo are C types without a reduction: pickle, copy and deepcopy refuse them, naming the
    type as CPython does (its C name from protocol 2 on, its bare name through copyreg below it)."""
    name = f"torch.{type(self).__name__}" if protocol >= 2 else type(self).__name__
    raise TypeError(f"cannot pickle {name!r} object")


class finfo:
    """Limits of a floating-point dtype (the default dtype when none is given; a complex dtype's real part)."""

    __module__ = "tracegrad"  # (torch's C type prints as <class 'torch.finfo'>)
    __reduce_ex__ = _refuse_pickling

    def __init__(self, type: _dt.dtype | None = None) -> None:  # noqa: A002 - PyTorch's argument name
        d = _dt.DEFAULT.value if type is None else type
        if not isinstance(d, _dt.dtype) or not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        info = _limits(d)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = str(info.dtype)

    def __repr__(self) -> str:
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, max={_g(self.max)}, eps={_g(self.eps)}, "
                f"smallest_normal={_g(self.smallest_normal)}, tiny={_g(self.tiny)}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype."""

    __module__ = "tracegrad"  # (torch's C type prints as <class 'torch.iinfo'>)
    __reduce_ex__ = _refuse_pickling

    def __init__(self, type: _dt.dtype) -> None:  # noqa: A002 - PyTorch's argument name
        if type is _dt.bool_:  # (a dtype torch's iinfo names, where another non-integer one gets the hint below)
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if not isinstance(type, _dt.dtype) or type.np.kind not in "iu":
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = str(info.dtype)

    def __repr__(self) -> str:
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"
