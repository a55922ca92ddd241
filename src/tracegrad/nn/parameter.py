"""``Parameter`` (a leaf Tensor that modules register) and ``Buffer`` (a tensor marked as module state)."""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _init_from, _wrap
from ..backend.dtypes import DEFAULT


class Parameter(Tensor):
    """A Tensor subclass sharing storage with ``data``, detached from its history, that requires grad."""

    _is_param = True

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        self = object.__new__(cls)
        if data is None:
            _init_from(self, np.zeros((0,), dtype=DEFAULT.value.np))
        else:
            if not isinstance(data, Tensor):
                raise TypeError(
                    f"Parameter.__new__(): argument 'data' must be Tensor, not {type(data).__name__}"
                )
            _init_from(self, data._data)
            self._vc = data._version_counter()  # the storage is shared, so is the version counter
        if requires_grad:
            self.requires_grad_(True)
        return self

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything happens in __new__ (Tensor.__init__ is the legacy constructor)

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (np.array(self._data), self._rg))

    def __deepcopy__(self, memo):
        # Like PyTorch: a fresh Parameter over a copy of the data (the .grad is not copied).
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(_wrap(self._data.copy()), self._rg)
        memo[id(self)] = result
        return result


def _rebuild_parameter(data, requires_grad):
    return Parameter(_wrap(data), requires_grad)


class _BufferMeta(type):
    def __instancecheck__(cls, instance) -> bool:
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return type.__instancecheck__(cls, instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor as a buffer when assigned to a module attribute (``persistent`` decides state_dict)."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            data = Tensor()
        t = data.detach()
        t._is_buffer = True
        t.persistent = persistent
        return t
