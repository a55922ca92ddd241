"""Tensor methods kept for old code: ``cfloat()``/``cdouble()``, ``storage_type()``, the deprecated out-of-place
``resize``/``resize_as``, the removed ``reinforce``, and DLPack export (``__dlpack__``, ``__dlpack_device__``).
"""

from __future__ import annotations

import operator
import warnings
from functools import reduce
from typing import Any

from ._tensor import Tensor
from .autograd.function import Function

__all__ = ["install"]


def _cast_to(name: str):
    def cast(self: Tensor, memory_format: Any = None) -> Tensor:
        from .backend.dtypes import to_dtype
        from .ops import creation

        return creation.to_dtype(self, to_dtype(name), memory_format=memory_format)

    cast.__name__ = {"complex64": "cfloat", "complex128": "cdouble"}[name]
    return cast


def storage_type(self: Tensor) -> type:
    """The legacy storage class of the tensor's dtype (``torch.FloatStorage``), after the TypedStorage
    deprecation warning torch gives here."""
    from ._legacy_storages import legacy_storage_class
    from .storage import typed_storage

    return legacy_storage_class(typed_storage(self).dtype)


_REINFORCE_REMOVED = """reinforce() was removed.
Use torch.distributions instead.
See https://pytorch.org/docs/main/distributions.html

Instead of:

probs = policy_network(state)
action = probs.multinomial()
next_state, reward = env.step(action)
action.reinforce(reward)
action.backward()

Use:

probs = policy_network(state)
# NOTE: categorical is equivalent to what used to be called multinomial
m = torch.distributions.Categorical(probs)
action = m.sample()
next_state, reward = env.step(action)
loss = -m.log_prob(action) * reward
loss.backward()
"""


def reinforce(self: Tensor, reward: Any) -> None:
    raise RuntimeError(_REINFORCE_REMOVED)


reinforce.__qualname__ = "Tensor.reinforce"  # (Python's missing-argument message names it)


class Resize(Function):
    """torch.autograd._functions.Resize: a reshape that keeps the element count (node ``ResizeBackward``)."""

    @staticmethod
    def forward(ctx, tensor: Tensor, sizes: tuple) -> Tensor:
        numel = reduce(operator.mul, sizes, 1)  # (a tuple argument repeats: torch's message shows it)
        if tensor.numel() != numel:
            raise RuntimeError(
                f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements in total), but the given "
                f"tensor has a size of {'x'.join(map(str, tensor.size()))} ({tensor.numel()} elements). "
                "autograd's resize can only change the shape of a given tensor, while preserving the number of "
                "elements. "
            )
        ctx.input_sizes = tensor.size()
        # a contiguous input is aliased (the result is a view of it), as torch's tensor.new(tensor) does
        return tensor.view(*sizes) if tensor.is_contiguous() else tensor.contiguous().view(*sizes)

    @staticmethod
    def backward(ctx, grad_output: Tensor):
        return grad_output.contiguous().view(ctx.input_sizes), None


def resize(self: Tensor, *sizes: Any) -> Tensor:
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return Resize.apply(self, sizes)


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return Resize.apply(self, tensor.size())


def install() -> None:
    from .utils.dlpack import tensor_dlpack, tensor_dlpack_device

    Tensor.cfloat = _cast_to("complex64")
    Tensor.cdouble = _cast_to("complex128")
    Tensor.storage_type = storage_type
    Tensor.reinforce = reinforce
    Tensor.resize = resize
    Tensor.resize_as = resize_as
    Tensor.__dlpack__ = tensor_dlpack
    Tensor.__dlpack_device__ = tensor_dlpack_device
    for name in WRITTEN_IN_PYTHON_BY_TORCH:
        method = getattr(Tensor, name)
        method.__name__, method.__qualname__ = name, f"Tensor.{name}"


# Tensor methods torch writes in Python (torch/_tensor.py): Python's own argument errors name them
# ``Tensor.unflatten()``, where tracegrad's functions had names of their own (``_unflatten_method``)
WRITTEN_IN_PYTHON_BY_TORCH = ("dim_order", "eig", "is_shared", "lstsq", "resize", "resize_as", "share_memory_",
                              "solve", "storage", "storage_type", "symeig", "unflatten")


# Tensor's special methods whose ``__name__`` torch's C++ bindings give another name (the rest keep their own)
_TORCH_DUNDER_NAMES = {"__abs__": "abs", "__neg__": "neg", "__pos__": "positive", "__pow__": "pow",
                       "__ipow__": "pow_", "__itruediv__": "__idiv__", "__rtruediv__": "__rdiv__"}


def name_special_methods_as_torch() -> None:
    """Give Tensor's operator methods torch's names (``Tensor.__add__.__name__`` is ``'__add__'``, not the name of
    the closure that implements it): handlers and modes that log ``func.__name__`` see torch's names."""
    import types

    for name, method in list(vars(Tensor).items()):
        if not (name.startswith("__") and name.endswith("__") and isinstance(method, types.FunctionType)):
            continue
        wanted = _TORCH_DUNDER_NAMES.get(name, name)
        # (a function that is also a method under its own name keeps it: ``__div__`` is ``__truediv__``)
        shared = name not in _TORCH_DUNDER_NAMES and vars(Tensor).get(method.__name__) is method
        if method.__name__ != wanted and not shared:
            method.__name__ = wanted
            # (the qualified name pickle looks the function up by: torch's ``__neg__`` is its ``neg``, tracegrad's
            # is a function of its own, which ``Tensor.neg`` would not find, so it keeps the name it is stored under)
            held = vars(Tensor).get(wanted) is method
            method.__qualname__ = f"Tensor.{wanted if held else name}"
