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


# The Python types torch's parser reads as a dtype (as ``x.to(float)`` does): float is double, not the default.
_PYTHON_TYPES = {float: _dt.float64, int: _dt.int64, bool: _dt.bool_, complex: _dt.float64}

def _parsed_type(name: str, args: tuple, kwargs: dict, optional: bool):
    """The ``type`` argument as torch's parser takes it, its errors in its words: signatures ``(torch.dtype type)``,
    and ``()`` where ``optional`` (finfo's default dtype, None here)."""
    if len(args) == 1 and not kwargs and isinstance(args[0], _dt.dtype):
        return args[0]  # (the common call, which the parser takes as it is)
    if len(args) == 1 and not kwargs and isinstance(args[0], type) and args[0] in _PYTHON_TYPES:
        return _PYTHON_TYPES[args[0]]
    from ._arg_parser import PyParam, PySignature, bind

    sigs = (PySignature(name, (PyParam("type", "SCALARTYPE"),)),)
    if optional:
        sigs += (PySignature(name, ()),)
    return bind(sigs, args, kwargs)[1].get("type")


def _refuse_pickling(self, protocol: int) -> None:
    """torch's finfo and iinfo are C types without a reduction: pickle, copy and deepcopy refuse them, naming the
    type as CPython does (its C name from protocol 2 on, its bare name through copyreg below it)."""
    name = f"torch.{type(self).__name__}" if protocol >= 2 else type(self).__name__
    raise TypeError(f"cannot pickle {name!r} object")




def _same_type(self, other):
    """torch's finfo/iinfo compare equal when they describe the same (real) dtype; no order between them."""
    if type(other) is not type(self):
        return NotImplemented
    return self._type is other._type


class finfo:
    """Limits of a floating-point dtype (the default dtype when none is given; a complex dtype's real part)."""

    __module__ = "tracegrad"  # (torch's C type prints as <class 'torch.finfo'>)
    __reduce_ex__ = _refuse_pickling

    def __init__(self, *args, **kwargs) -> None:  # (torch's: ``(torch.dtype type)`` or ``()``)
        d = _parsed_type("finfo", args, kwargs, optional=True)
        if d is None:
            d = _dt.DEFAULT.value
        if not isinstance(d, _dt.dtype) or not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        info = _limits(d)
        self._type = info.dtype
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = str(info.dtype)

    __eq__ = _same_type
    __hash__ = None  # (torch's are unhashable)

    def __repr__(self) -> str:
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, max={_g(self.max)}, eps={_g(self.eps)}, "
                f"smallest_normal={_g(self.smallest_normal)}, tiny={_g(self.tiny)}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype."""

    __module__ = "tracegrad"  # (torch's C type prints as <class 'torch.iinfo'>)
    __reduce_ex__ = _refuse_pickling

    def __init__(self, *args, **kwargs) -> None:  # (torch's: ``(torch.dtype type)``)
        d = _parsed_type("iinfo", args, kwargs, optional=False)
        if d is _dt.bool_:  # (a dtype torch's iinfo names, where another non-integer one gets the hint below)
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if not isinstance(d, _dt.dtype) or d.np.kind not in "iu":
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(d.np)
        self._type = info.dtype
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = str(info.dtype)

    __eq__ = _same_type
    __hash__ = None  # (torch's are unhashable)

    def __repr__(self) -> str:
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"
