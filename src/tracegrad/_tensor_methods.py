"""Attach operators to :class:`Tensor` as methods and Python operators.

Op modules export ``METHODS`` (method name -> callable taking the tensor first). Autograd methods
(``backward``, ``register_hook``, ``retain_grad``...) are defined here.
"""

from __future__ import annotations

import weakref

import numpy as np

from ._operands import is_operand as _is_operand
from ._state import STATE
from ._tensor import Tensor
from ._torch_function import DisableTorchFunction, refused_operand
from .autograd.node import RemovableHandle, set_retains_grad_hook
from .backend import dtypes as _dt
from .memory_format import contiguous_format, is_in_format, preserve_format


def _binary_method(fn, reflected: bool = False):
    name = getattr(fn, "__name__", None)
    if reflected:
        def method(self, other):
            if not _is_operand(other):
                return refused_operand(name, (self, other))
            return fn(_scalar_or_tensor(other, self), self)
    else:
        def method(self, other):
            if not _is_operand(other):
                return refused_operand(name, (self, other))
            return fn(self, other)
    return method


def _equal_dunder(self, other):
    """``t == other``: unlike the other operators, an array is compared elementwise (a bool tensor), as torch's
    ``==`` gives it (its ``!=`` refuses the array, so Python answers ``True``)."""
    from .ops import pointwise

    if isinstance(other, np.ndarray):
        from ._tensor import _wrap

        try:  # (eq itself refuses an array, as torch.eq does: the kernel gets the same array inside a tensor)
            return pointwise.eq(self, _wrap(other))
        except TypeError:  # (an array torch cannot read, of objects or strings: NotImplemented, as torch's ==)
            return NotImplemented
    if not _is_operand(other):
        return NotImplemented
    return pointwise.eq(self, other)


def _rmatmul(self, other):
    """``other @ self``: neither a number nor a NumPy array is taken (NumPy defers its ``@`` to the tensor's, so
    both end in Python's TypeError, as in PyTorch); a tensor, given by a direct call (``t.__rmatmul__(u)``), is
    ``matmul(other, self)``, as torch's."""
    if isinstance(other, Tensor):
        from .ops import linalg_core

        return linalg_core.matmul(other, self)
    return NotImplemented


def _scalar_or_tensor(value, like: Tensor):
    if isinstance(value, Tensor):
        return value
    from ._tensor import _wrap
    from .ops._util import result_dtype

    return _wrap(np.asarray(value, dtype=result_dtype(like._data, value)))


def install() -> None:
    from . import _tensor_layout, ops
    from .ops import binary, creation, indexing, pointwise, views

    _tensor_layout.install()
    _bind_modules()
    T = Tensor
    # Python operators
    T.__add__ = pointwise.add.dunder
    # Reflected operators build the same graph as PyTorch's: ``2 + x`` is add(x, 2), ``2 - x`` is
    # rsub(x, 2), ``2 / x`` is reciprocal(x) * 2.
    T.__radd__ = _binary_method(pointwise.add)
    T.__sub__ = pointwise.sub.dunder
    T.__rsub__ = _binary_method(_rsub_any)
    T.__mul__ = pointwise.mul.dunder
    T.__rmul__ = _binary_method(pointwise.mul)
    T.__truediv__ = pointwise.div.dunder
    T.__pow__ = _pow_dunder
    T.__rpow__ = _binary_method(binary.pow, reflected=True)
    T.__iadd__ = _binary_method(pointwise.add_)
    T.__isub__ = _binary_method(pointwise.sub_)
    T.__imul__ = _binary_method(pointwise.mul_)
    T.__itruediv__ = _binary_method(pointwise.div_)
    T.__div__, T.__idiv__ = T.__truediv__, T.__itruediv__  # (torch keeps Python 2's names too)
    T.__ipow__ = _binary_method(binary.pow_)
    T.__neg__ = lambda self: pointwise.neg(self)
    T.__abs__ = lambda self: self.abs()
    T.__pos__ = lambda self: self
    T.__eq__ = _equal_dunder
    T.__ne__ = _binary_method(pointwise.ne)
    T.__lt__ = _binary_method(pointwise.lt)
    T.__le__ = _binary_method(pointwise.le)
    T.__gt__ = _binary_method(pointwise.gt)
    T.__ge__ = _binary_method(pointwise.ge)
    T.__getitem__ = indexing.getitem
    T.__setitem__ = indexing.setitem
    T.__hash__ = lambda self: id(self)

    from .ops import linalg_core

    T.__matmul__ = linalg_core.matmul.dunder
    T.__rmatmul__ = _rmatmul

    # core methods
    for name, fn in {
        "add": pointwise.add, "add_": pointwise.add_, "sub": pointwise.sub, "sub_": pointwise.sub_,
        "mul": pointwise.mul, "mul_": pointwise.mul_, "div": pointwise.div, "div_": pointwise.div_,
        "neg": pointwise.neg, "neg_": pointwise.neg_,
        "exp": pointwise.exp, "exp_": pointwise.exp_, "log": pointwise.log, "log_": pointwise.log_,
        "sin": pointwise.sin, "sin_": pointwise.sin_, "cos": pointwise.cos, "cos_": pointwise.cos_,
        "tanh": pointwise.tanh, "tanh_": pointwise.tanh_, "sqrt": pointwise.sqrt, "sqrt_": pointwise.sqrt_,
        "sigmoid": pointwise.sigmoid, "sigmoid_": pointwise.sigmoid_,
        "eq": pointwise.eq, "ne": pointwise.ne, "lt": pointwise.lt, "le": pointwise.le, "gt": pointwise.gt,
        "ge": pointwise.ge, "logical_and": pointwise.logical_and, "logical_or": pointwise.logical_or,
        "logical_not": pointwise.logical_not, "logical_xor": pointwise.logical_xor,
        "clone": creation.clone, "copy_": creation.copy_, "fill_": creation.fill_, "zero_": creation.zero_,
        "detach": creation.detach, "detach_": creation.detach_, "new_zeros": creation.new_zeros,
        "view": _view_method, "reshape": _reshape_method, "transpose": views.transpose, "t": views.t,
        "permute": _permute_method, "expand": _expand_method, "select": views.select, "narrow": views.narrow,
        "squeeze": _squeeze_method, "unsqueeze": _unsqueeze_method, "diagonal": views.diagonal,
        "unbind": views.unbind, "chunk": views.chunk, "unfold": views.unfold,
        "as_strided": views.as_strided, "flatten": views.flatten, "movedim": views.movedim,
        "moveaxis": views.movedim, "swapaxes": views.transpose, "swapdims": views.transpose,
        "matmul": linalg_core.matmul, "mm": linalg_core.mm,
        "index_put_": _index_put_method(indexing.index_put_), "index_put": _index_put_method(indexing.index_put),
        "take": indexing.take, "where": binary.where_method,
        "view_as": lambda self, other: views.view(self, tuple(other.shape)),
        "reshape_as": lambda self, other: views.reshape(self, tuple(other.shape)),
        "expand_as": lambda self, other: views.expand(self, tuple(other.shape)),
        "contiguous": _contiguous,
        "backward": _backward, "register_hook": _register_hook, "retain_grad": _retain_grad,
        "register_post_accumulate_grad_hook": _register_post_accumulate_grad_hook,
        "to": _to, "type": _type, "new": _legacy_new, "untyped_storage": _untyped_storage, "storage": _typed_storage,
        "float": _caster("float32"), "double": _caster("float64"),
        "half": _caster("float16"), "bfloat16": _caster("bfloat16"), "long": _caster("int64"),
        "int": _caster("int32"), "bool": _caster("bool"),
        "byte": _caster("uint8"), "short": _caster("int16"), "char": _caster("int8"),
        "cpu": _cpu, "cuda": _cuda, "numpy": Tensor.numpy, "type_as": _type_as,
        "new_tensor": _new_tensor, "new_ones": _new_ones, "new_full": _new_full, "new_empty": _new_empty,
        "_is_view": Tensor._is_view, "as_subclass": _as_subclass,
    }.items():
        setattr(T, name, _as_method(fn))
    for name in ("as_strided_", "transpose_", "t_", "squeeze_", "unsqueeze_"):
        setattr(T, name, _as_method(getattr(views, name)))
    T.swapdims_ = T.swapaxes_ = T.transpose_
    for name in ("backward", "register_hook", "register_post_accumulate_grad_hook"):
        # (methods torch writes in Python too: Python's own argument errors name them ``Tensor.backward()``)
        getattr(T, name).__qualname__ = f"Tensor.{name}"
    # Op families installed last: a family may refine a core method (e.g. split with a list of sizes).
    for module in ops.MODULES:
        for name, fn in getattr(module, "METHODS", {}).items():
            setattr(Tensor, name, _as_method(fn))
    T.mT = property(lambda self: _matrix_transpose(self, "tensor.mT"))
    T.T = property(_reversed_dims)
    T.mH = property(lambda self: _matrix_transpose(self, "tensor.mH", conjugate=True))
    T.adjoint = lambda self: _matrix_transpose(self, "tensor.adjoint()", conjugate=True)
    T.H = property(_conjugate_transpose_2d)


def _reversed_dims(self):
    """``t.T``: the dims reversed; PyTorch deprecates it (with a warning) for anything but matrices, and it is
    the identity on 0-d tensors."""
    from ._warnings import warn_once_at_caller
    from .ops import views

    nd = self._data.ndim
    if nd == 0:
        warn_once_at_caller("T_0d", "Tensor.T is deprecated on 0-D tensors. This function is the identity in these "
                                    "cases.")
        return views.permute(self, ())
    if nd != 2:
        warn_once_at_caller("T_nd", "The use of `x.T` on tensors of dimension other than 2 to reverse their shape "
                                    "is deprecated and it will throw an error in a future release. Consider `x.mT` "
                                    "to transpose batches of matrices or `x.permute(*torch.arange(x.ndim - 1, -1, "
                                    "-1))` to reverse the dimensions of a tensor.")
    return views.permute(self, tuple(range(nd - 1, -1, -1)))


def _matrix_transpose(self, what: str, conjugate: bool = False):
    """``transpose(-2, -1)`` (TransposeBackward0, as in PyTorch), conjugated for ``mH``/``adjoint()``."""
    nd = self._data.ndim
    if nd == 0 and what in ("tensor.mT", "tensor.mH"):  # deprecated, and the identity (mH: conj) on 0-d tensors
        from ._warnings import warn_once_at_caller

        if what == "tensor.mT":
            warn_once_at_caller("mT_0d", "Tensor.mT is deprecated on 0-D tensors. This function is the identity in "
                                         "these cases.")
            return self
        warn_once_at_caller("mH_0d", "Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().")
        from .ops.unary import conj

        return conj(self)
    if nd < 2:
        raise RuntimeError(f"{what} is only supported on matrices or batches of matrices. Got {nd}-D tensor.")
    from .ops.unary import conj
    from .ops.views import transpose

    out = transpose(self, -2, -1)
    if conjugate:
        out = conj(out)  # a real tensor is returned as is
    return out


def _conjugate_transpose_2d(self):
    nd = self._data.ndim
    if nd != 2:
        hint = " For batches of matrices, consider using tensor.mH" if nd > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {nd}-D tensor.{hint}")
    return _matrix_transpose(self, "tensor.H", conjugate=True)


def _as_subclass(self, cls):
    """An alias of this tensor (AliasBackward0 in the graph, as in PyTorch) whose class is ``cls``."""
    if not isinstance(cls, type):
        from ._arg_parser import tp_name

        raise TypeError(f"cls must be a type (got {tp_name(cls)})")
    if not issubclass(cls, Tensor):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. "
                        "Make sure your class inherits from Tensor.")
    from .ops.views import alias

    if STATE.torch_function:
        with DisableTorchFunction():  # (torch's as_subclass is C++: no handler nor mode sees its alias)
            out = alias(self)
    else:
        out = alias(self)
    out.__class__ = cls
    return out


def _rsub_any(self, other):
    from .ops import pointwise

    return (pointwise.rsub if isinstance(other, Tensor) else pointwise.rsub_scalar)(self, other)


def _pow_dunder(self, *args, **kwargs):
    """``x ** y``: pow.Tensor_Tensor (PowBackward1) for a tensor exponent, pow.Tensor_Scalar (PowBackward0,
    one edge) for a number, as in PyTorch. torch's is its ``pow`` method behind a wrapper that makes a TypeError
    NotImplemented: any other call is ``pow``'s (``t.__pow__(exponent=2)``), and one it refuses is
    NotImplemented (``pow(x, y, m)``, so that Python names the three operands it cannot take; an explicit
    ``t.__pow__(2, None)`` too)."""
    from .ops import binary

    if len(args) != 1 or kwargs:
        try:
            return self.pow(*args, **kwargs)
        except TypeError:
            return NotImplemented
    other = args[0]
    if isinstance(other, Tensor):
        return binary._pow_tt(self, other)
    if not _is_operand(other):
        return NotImplemented
    return binary._pow_ts(self, other)


def _as_method(fn):
    if isinstance(fn, (type(_as_method), staticmethod, classmethod)):
        return fn

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = getattr(fn, "name", getattr(fn, "__name__", "method"))
    return method


# ---- shape methods accepting varargs --------------------------------------------------------------------------------

# (these and the casts below run for every ``x.view(...)``, ``x.to(...)``: the modules they use, which import this
# one, are bound once, at install)
_views = None
_creation = None
_dtype_class = None


def _bind_modules() -> None:
    global _views, _creation, _dtype_class
    from .backend.dtypes import dtype
    from .ops import creation, views

    _views, _creation, _dtype_class = views, creation, dtype


def _view_method(self, *shape):
    if len(shape) == 1 and isinstance(shape[0], _dtype_class):
        return _views.view_as_dtype(self, shape[0])
    return _views.call_plain(_views.view, self, _views.normalize_shape(shape))


def _reshape_method(self, *shape):
    return _views.reshape(self, _views.normalize_shape(shape))


def _permute_method(self, *dims):
    if not dims:
        raise TypeError('permute() missing 1 required positional arguments: "dims"')
    return _views.call_plain(_views.permute, self, _views.normalize_shape(dims))


def _expand_method(self, *sizes, implicit: bool = False):
    return _views.call_plain(_views.expand, self, _views.normalize_shape(sizes))


def _unsqueeze_method(self, *args, **kwargs):
    if len(args) == 1 and not kwargs and args[0].__class__ is int:
        return _views.call_plain(_views.unsqueeze, self, args[0])
    return _views.unsqueeze(self, *args, **kwargs)


def _squeeze_method(self, dim=None):
    from .ops import views

    return views.squeeze(self, dim)


def _index_put_method(op):
    from .ops.indexing import refuse_non_tensor_indices

    def method(self, indices, values, accumulate=False):
        refuse_non_tensor_indices(indices, 0)
        # (the index tensors themselves, as torch's function takes them: the node saves them, so writing into
        # one in place before the backward is refused)
        return op(self, indices, values, accumulate)

    return method


def _contiguous(self, memory_format=contiguous_format):
    if memory_format is None:
        from .memory_format import format_required

        raise format_required("contiguous")
    if is_in_format(self._data, memory_format):
        return self
    if memory_format is preserve_format:  # (asked of a tensor that is not contiguous only)
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    from .ops import creation

    return creation.clone(self, memory_format=memory_format)


# ---- dtype / device conversion ---------------------------------------------------------------------------------

def _to(self, *args, **kwargs):
    if not kwargs and len(args) == 1 and args[0].__class__ is _dtype_class:  # (x.to(dtype), the usual call)
        return _creation.to_dtype(self, args[0])
    from .backend.device import as_device, refuse_unsupported
    from .ops import creation

    device, dtype, copy, memory_format = _to_arguments(args, kwargs)
    if device is not None:
        dev = as_device(device)
        refuse_unsupported(dev, moving=True)
        if dev.type == "cuda":
            return _cuda(self)
        # (torch compares devices with their index: ``cpu:0`` is not the tensor's ``cpu``, so it copies)
        copy = copy or dev.index is not None
    if dtype is None and memory_format is None and not copy:
        return self
    return creation.to_dtype(self, dtype, copy=copy, memory_format=memory_format)


# ``to``'s three signatures, as torch's parser tries them: the positional parameters (``memory_format`` is
# keyword-only in all), and whether the first one must be given
_TO_SIGNATURES = ((("device", "dtype", "non_blocking", "copy"), False),
                  (("dtype", "non_blocking", "copy"), True),
                  (("tensor", "non_blocking", "copy"), True))


def _to_arguments(args: tuple, kwargs: dict) -> tuple:
    """``(device, dtype, copy, memory_format)`` of a ``to`` call, bound to the first of torch's signatures that
    takes it (``to(device, dtype, ...)``, ``to(dtype, ...)``, ``to(tensor, ...)``); a TypeError where none does,
    which the argument guard words as torch. A tensor (or a number, read as one) gives its dtype and device."""
    for names, first_required in _TO_SIGNATURES:
        bound = _bound_to(names, first_required, args, kwargs)
        if bound is not None:
            break
    else:
        raise TypeError("to() takes none of these argument combinations")
    memory_format = bound.get("memory_format")
    copy = bound.get("copy", False)
    if "tensor" in bound:
        other = bound["tensor"]
        if isinstance(other, Tensor):
            return other.device, other.dtype, copy, memory_format
        return None, _number_dtype(other), copy, memory_format
    dtype = bound.get("dtype")
    if dtype is not None and dtype.__class__ is not _dtype_class:
        from .backend.dtypes import to_dtype

        dtype = to_dtype(dtype)  # (a Python type: float, int, bool, complex)
    return bound.get("device"), dtype, copy, memory_format


def _number_dtype(value):
    """The dtype of the tensor torch's parser makes of a number given for ``to``'s tensor."""
    from .backend import dtypes

    if isinstance(value, np.generic) and not isinstance(value, (float, complex)):
        # (a NumPy scalar is read as a number: its integers as int64, any other, bools and complex64 too, as a
        # double; float64 and complex128 are Python's float and complex, read below)
        return dtypes.int64 if isinstance(value, np.integer) else dtypes.float64
    for kind, dtype in ((bool, dtypes.bool_), (int, dtypes.int64), (float, dtypes.float64)):
        if isinstance(value, kind):
            return dtype
    return dtypes.complex128


def _bound_to(names: tuple, first_required: bool, args: tuple, kwargs: dict) -> dict | None:
    """The values of one ``to`` signature's parameters, by name, or None where it does not take the call."""
    if len(args) > len(names):
        return None
    bound = dict(zip(names, args))
    for key, value in kwargs.items():
        if key in bound or (key not in names and key != "memory_format"):
            return None  # (given twice, or a keyword this signature lacks)
        bound[key] = value
    if first_required and names[0] not in bound:
        return None
    for key, value in bound.items():
        if not _TO_ACCEPTS[key](value, first_required and key == names[0]):
            return None
    return bound


def _is_bool(value) -> bool:
    return value.__class__ is bool  # (torch's parser refuses NumPy's bools for its bool parameters)


def _is_device(value) -> bool:
    from .backend.device import device

    return isinstance(value, (str, device)) or (isinstance(value, (int, np.integer)) and not _is_bool(value))


def _is_numpy_number(value) -> bool:
    """A NumPy scalar number, which torch's parser takes where it takes a number (as ``to``'s tensor)."""
    return isinstance(value, np.generic) and value.dtype.kind in "biufc"


def _is_dtype(value) -> bool:
    # (torch's parser takes its dtypes and Python's number types, not NumPy's)
    return value.__class__ is _dtype_class or value is float or value is int or value is bool or value is complex


def _is_memory_format(value) -> bool:
    from .memory_format import memory_format

    return value is None or isinstance(value, memory_format)


# parameter -> its test, given whether it is its signature's required first one (``to(dtype)``'s dtype takes no
# None, ``to(device, dtype)``'s optional one does)
_TO_ACCEPTS = {
    "device": lambda value, required: value is None or _is_device(value),
    "dtype": lambda value, required: _is_dtype(value) or (value is None and not required),
    "tensor": lambda value, required: isinstance(value, (Tensor, bool, int, float, complex)) or _is_numpy_number(value),
    "non_blocking": lambda value, required: _is_bool(value),
    "copy": lambda value, required: _is_bool(value),
    "memory_format": lambda value, required: _is_memory_format(value),
}


def _cpu(self, memory_format=preserve_format):
    """Already on the CPU: ``self``, unless another memory format is asked for (then ``to`` relays it out)."""
    if memory_format is preserve_format:
        return self
    return _to(self, memory_format=memory_format)


def _caster(name):
    target = None

    def cast(self, memory_format=None):
        nonlocal target
        if target is None:
            from .backend.dtypes import to_dtype

            target = to_dtype(name)
        if memory_format is None and self._data.dtype == target.np:
            return self  # (creation.to_dtype's answer when nothing changes)
        return _creation.to_dtype(self, target, memory_format=memory_format)

    return cast


def _type(self, dtype=None, non_blocking=False, *, memory_format=None, **kwargs):
    from ._legacy_types import legacy_type_dtype
    from .autograd.saved import type_string
    from .backend.dtypes import to_dtype
    from .ops import creation

    unknown = [k for k in kwargs if k != "async"]  # (``async`` is the old spelling of non_blocking)
    if unknown:
        raise TypeError(f"type() got an unexpected keyword argument '{unknown[0]}'")
    if dtype is None:
        return type_string(self)
    legacy = legacy_type_dtype(dtype)  # torch.FloatTensor, or "torch.FloatTensor"
    if legacy is None:
        legacy = _type_string_dtype(dtype)
    if legacy is None:
        _check_type_argument(dtype)
    target = legacy if legacy is not None else to_dtype(dtype)
    if memory_format is None:
        return creation.to_dtype(self, target)
    return self.to(target, memory_format=memory_format)  # (``to``'s guard words a refused format as torch)


def _type_string_dtype(name) -> _dt.dtype | None:
    """``type`` also takes the type string of a dtype without a legacy class ("torch.UInt32Tensor",
    "torch.ComplexFloatTensor"), as ``Tensor.type()`` spells it."""
    if not (isinstance(name, str) and name.startswith("torch.") and name.endswith("Tensor")):
        return None
    return _dt.by_scalar_type_name(name[6:-6])


def _check_type_argument(dtype) -> None:
    """``Tensor.type`` takes a torch dtype or a legacy type (class or "torch.FloatTensor"): any other string or
    class is refused by name, as torch refuses ``"float32"`` and ``float``."""
    from .backend.dtypes import dtype as dtype_cls

    if isinstance(dtype, dtype_cls):
        return
    if isinstance(dtype, str):
        raise ValueError(f"invalid type: '{dtype}'")
    if isinstance(dtype, type):
        module = "" if dtype.__module__ == "builtins" else f"{dtype.__module__}."
        raise ValueError(f"invalid type: '{module}{dtype.__qualname__}'")
    raise TypeError("dtype must be a type, str, or dtype object")


def _untyped_storage(self):
    from .storage import untyped_storage

    return untyped_storage(self)


def _typed_storage(self):
    from .storage import typed_storage

    return typed_storage(self)


def _legacy_new(self, *args, **kwargs):
    """``Tensor.new``: the legacy constructor in this tensor's dtype."""
    from ._legacy_types import legacy_new

    return legacy_new(self.dtype, args, kwargs)


def _type_as(self, other):
    from .ops import creation

    return creation.to_dtype(self, other.dtype)


def _cuda(self, device=None, non_blocking=False, **kwargs):
    from .cuda import _require

    _require()  # (raises on every machine until the CuPy back end serves tensors: see backend/cupy_backend.py)
    raise NotImplementedError("tracegrad: cuda tensors need the CuPy back end, which is not built yet")


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    from ._factories import checked_tensor, warn_copy_construct

    if isinstance(data, Tensor):
        warn_copy_construct("tensor.new_tensor", 4)  # (through the method's argument parser)
    return checked_tensor(data, dtype or self.dtype, device, requires_grad, False)


def _new_made_by(factory: str):
    """``Tensor.new_ones``/``new_empty``: the factory, with this tensor's dtype unless given (``requires_grad`` is an
    optional bool to torch's parser: None is False)."""
    def new(self, *size, dtype=None, requires_grad=False, device=None, pin_memory=False, **kw):
        from . import _factories

        return getattr(_factories, factory)(*size, dtype=dtype or self.dtype, requires_grad=requires_grad or False,
                                            device=device, pin_memory=pin_memory)
    return new


_new_ones, _new_empty = _new_made_by("ones"), _new_made_by("empty")


def _new_full(self, size, fill_value, dtype=None, requires_grad=False, device=None, pin_memory=False, **kw):
    from ._arg_parser import tp_name
    from ._factories import full

    if not isinstance(size, (tuple, list)):  # (named for this method, as torch's parser does)
        raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not {tp_name(size)}")

    return full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad, device=device,
                pin_memory=pin_memory)




# ---- autograd methods ------------------------------------------------------------------------------------------

def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    _autograd_api().backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def _autograd_api():
    """``autograd.api``, imported on first use and then kept (a function-level import runs the import
    machinery on every ``loss.backward()``)."""
    global _API
    if _API is None:
        from .autograd import api

        _API = api
    return _API


_API = None


def _register_hook(self, hook):
    """Run ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces it."""
    if not self._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._gfn is None and self._base is None or (self._gfn is None and not self._base._rg):
        hooks = self._hooks
        if hooks is None:
            hooks = self._hooks = {}
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle
    fn = self.grad_fn
    if fn is None:
        hooks = self._hooks
        if hooks is None:
            hooks = self._hooks = {}
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle
    return fn._register_tensor_pre_hook(self._output_nr, hook)


def _retain_grad(self):
    if not self._rg:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None:  # leaves always keep their grad
        return
    if self._retains_grad:
        return
    ref = weakref.ref(self)

    def retain_grad_hook(grad):
        t = ref()
        if t is None or grad is None:
            return
        from .ops import creation, pointwise

        if t._grad is None:  # PyTorch's retain_grad hook keeps a contiguous clone, whatever the gradient's layout
            copy = creation.clone(grad, memory_format=contiguous_format)
            t._grad = copy if STATE.grad_enabled else copy.detach()
        else:
            t._grad = pointwise.add(t._grad, grad)

    set_retains_grad_hook(self._gfn, self._output_nr, retain_grad_hook)
    self._retains_grad = True


def _register_post_accumulate_grad_hook(self, hook):
    if not self._rg:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self._gfn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    hooks = self._post_acc_hooks
    if hooks is None:
        hooks = self._post_acc_hooks = {}
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle
