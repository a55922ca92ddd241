"""``Parameter`` (a leaf Tensor that modules register) and ``Buffer`` (a tensor marked as module state)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from .._state import STATE
from .._strides import copy_preserving_layout
from .._tensor import (
    Tensor,
    _init_from,
    _wrap,
    set_user_state,
    unpickled_array,
    user_state,
)
from .._torch_function import _disabled_torch_function_impl
from ..backend.dtypes import DEFAULT


class _ParameterMeta(type(Tensor)):
    """``isinstance(t, Parameter)`` also holds for a user's Tensor subclass instance made a parameter (torch marks
    it ``_is_param`` and keeps its class)."""

    def __instancecheck__(cls, instance) -> bool:
        if cls is Parameter and getattr(instance, "_is_param", False) and isinstance(instance, Tensor):
            return True
        return super().__instancecheck__(instance)


class Parameter(Tensor, metaclass=_ParameterMeta):
    """A Tensor subclass sharing storage with ``data``, detached from its history, that requires grad."""

    _is_param = True
    # (opted out of the __torch_function__ protocol, as torch's: operators on a Parameter give plain Tensors)
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if isinstance(data, Tensor) and type(data) is not Tensor and type(data) is not Parameter:
            return _custom_parameter(data, requires_grad)
        self = object.__new__(cls)
        if data is None:
            _init_from(self, np.zeros((0,), dtype=DEFAULT.value.np))
        else:
            if not isinstance(data, Tensor):  # (torch goes on to call data.detach(), which is what fails)
                kind = type(data)
                name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
                raise AttributeError(f"'{name}' object has no attribute 'detach'")
            _init_from(self, data._data)
            self._vc = data._version_counter()  # the storage is shared, so is the version counter
            if data._inference:  # (torch's is over data.detach(): an inference tensor too, see creation.detach)
                self._inference = True
                self._tracks_version = not STATE.inference
        if requires_grad:
            if not (self.dtype.is_floating_point or self.dtype.is_complex):  # (torch's _make_subclass words it so)
                raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
            self.requires_grad_(True)
        return self

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything happens in __new__ (Tensor.__init__ is the legacy constructor)

    def __reduce_ex__(self, protocol):
        # As torch's, its ``.data``: a tensor over its storage with a version counter of its own, so that
        # ``copy.copy`` shares the storage at version 0 and pickle rebuilds it at version 1 (``set_``'s write).
        # (No warning for its backward hooks, unlike a Tensor's: the data tensor has none.)
        state = user_state(self)
        data = self.data
        return (_rebuild_parameter, (data, self._rg, state) if state else (data, self._rg))

    def __deepcopy__(self, memo):
        # Like PyTorch: a fresh Parameter over a clone of the data, laid out as it (preserve_format); neither the
        # .grad nor the attributes set on it are copied.
        if id(self) in memo:
            return memo[id(self)]
        data = self._data
        clone = copy_preserving_layout(data) if isinstance(data, np.ndarray) else data.copy()
        result = type(self)(_wrap(clone), self._rg)
        memo[id(self)] = result
        return result


def _rebuild_parameter(data, requires_grad, state=None):
    # (``data``: the parameter's ``.data`` tensor; files and pickles made before hold its array)
    if not isinstance(data, Tensor):
        data = _wrap(unpickled_array(data))
        data._vc = [1]  # (torch's: rebuilt with set_, a write, and the parameter shares its counter)
    param = Parameter(data, requires_grad)
    param._hooks = OrderedDict()  # (torch's rebuilt tensors have an empty ``_backward_hooks``)
    set_user_state(param, state)
    return param


class _BufferMeta(type):
    def __instancecheck__(cls, instance) -> bool:
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return type.__instancecheck__(cls, instance)


def _custom_parameter(data: Tensor, requires_grad: bool) -> Tensor:
    """torch's path for a Tensor subclass: its own ``detach()`` made to require grad, of the same class, marked."""
    t = data.detach().requires_grad_(requires_grad)
    if type(t) is not type(data):
        raise RuntimeError(
            f"Creating a Parameter from an instance of type {type(data).__name__} requires that detach() returns an "
            f"instance of the same type, but return type {type(t).__name__} was found instead. To use the type as a "
            "Parameter, please correct the detach() semantics defined by its __torch_dispatch__() implementation.")
    t._is_param = True
    return t


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor as a buffer when assigned to a module attribute (``persistent`` decides state_dict)."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = Tensor()
        t = data.detach()
        t._is_buffer = True
        t.persistent = persistent
        return t


# ---- uninitialized parameters and buffers (lazy modules) --------------------------------------------------------

_SHAPE_OF_UNINITIALIZED = (
    "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
    "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call `forward` to "
    "initialize the parameters before accessing their attributes.")


def _use_of_uninitialized(what: str, owner: str) -> ValueError:
    return ValueError(
        f"Attempted to use an uninitialized parameter in {what}. This error happens when you are using a "
        f"`LazyModule` or explicitly manipulating `torch.nn.parameter.{owner}` objects. When using LazyModules Call "
        "`forward` with a dummy batch to initialize the parameters before calling torch functions")


class _UninitializedStorage:
    """The storage of an uninitialized tensor: it answers the metadata questions (an empty 1-D array of its
    dtype, as PyTorch's ``size()`` reports) and refuses everything else with PyTorch's error, NumPy's attempts
    to read it included, so no operator can compute with a parameter that has no shape yet."""

    __slots__ = ("dtype", "owner")
    shape = (0,)
    ndim = 1
    size = 0
    nbytes = 0
    base = None

    def __init__(self, dtype, owner: str) -> None:
        self.dtype = dtype
        self.owner = owner

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def __len__(self) -> int:
        return 0

    def __array__(self, *args, **kwargs):
        raise _use_of_uninitialized("<function asarray>", self.owner)

    def __getattr__(self, name: str):
        raise _use_of_uninitialized(f"<attribute '{name}'>", object.__getattribute__(self, "owner"))


def _uninitialized_storage(dtype, owner: str) -> _UninitializedStorage:
    return _UninitializedStorage(np.dtype((dtype or DEFAULT.value).np), owner)


class UninitializedTensorMixin:
    """What uninitialized parameters and buffers share: no shape until :meth:`materialize` gives them one (and
    turns them into ``cls_to_become``)."""

    cls_to_become: type

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor ``shape`` (and optionally a dtype), with uninitialized values, and turn it into an
        ordinary Parameter or Tensor."""
        from .._runtime import fill_uninitialized
        from ..backend.dtypes import to_dtype

        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        np_dtype = to_dtype(dtype).np if dtype is not None else self._data.dtype
        # (torch allocates with empty: zeros here, as tracegrad's empty, or its fill under deterministic algorithms)
        self._data = fill_uninitialized(np.zeros(shape, dtype=np_dtype))
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(_SHAPE_OF_UNINITIALIZED)

    def numel(self) -> int:
        raise _use_of_uninitialized("<method 'numel' of 'torch._C.TensorBase' objects>", type(self).__name__)

    def dim(self) -> int:
        raise _use_of_uninitialized("<method 'dim' of 'torch._C.TensorBase' objects>", type(self).__name__)

    def detach(self):
        raise _use_of_uninitialized("<method 'detach' of 'torch._C.TensorBase' objects>", type(self).__name__)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol):
        return (type(self), (self.requires_grad, None, self.dtype))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape a lazy module infers from its first input."""

    cls_to_become = Parameter

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, None, self.dtype)
        return memo[id(self)]

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        self = object.__new__(cls)
        _init_from(self, _uninitialized_storage(dtype, cls.__name__))
        if requires_grad:
            self._rg = True
        return self

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape a lazy module infers from its first input."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None, persistent: bool = True):
        self = object.__new__(cls)
        _init_from(self, _uninitialized_storage(dtype, cls.__name__))
        self._rg = requires_grad
        self._is_buffer = True
        self.persistent = persistent
        return self

    def __init__(self, requires_grad: bool = False, device=None, dtype=None, persistent: bool = True) -> None:
        pass

    def __deepcopy__(self, memo):
        # (torch's has no deepcopy of its own: Tensor's, which its __torch_function__ refuses, so a LazyBatchNorm
        # cannot be deep-copied before its first forward, though it pickles)
        raise _use_of_uninitialized(repr(Tensor.__deepcopy__), type(self).__name__)


def is_lazy(param) -> bool:
    """Whether ``param`` is still uninitialized (a lazy module has not seen its first input yet)."""
    return isinstance(param, UninitializedTensorMixin)
