"""How tensors and storages travel between processes: registered with ``multiprocessing``'s ``ForkingPickler``
(which its queues, pipes and spawned ``Process`` arguments use), as torch registers its own.

A tensor travels as its storage's shared-memory segment (its storage moved there first when it is not yet
shared, as torch moves it) with its place in it, its requires_grad flag and its class where that is a Parameter:
the receiver's tensor uses the same memory. Autograd does not cross processes: a non-leaf that requires grad is
refused in torch's words.
"""

from __future__ import annotations

from multiprocessing.reduction import ForkingPickler

import numpy as np

from .._shared_memory import segment_of, share_memory_of, share_storage_memory
from .._strides import data_address
from .._tensor import Tensor, _wrap, warn_unserialized_hooks
from ..storage import TypedStorage, UntypedStorage, _memory_owner, view_in_storage

_NON_LEAF_REFUSAL = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not "
                     "support crossing process boundaries.  If you just want to transfer the data, call detach() on "
                     "the tensor before serializing (e.g., putting it on the queue).")


def _place_in_segment(data: np.ndarray) -> tuple:
    """The segment ``data`` (in shared memory) lies in, and ``data``'s byte offset there."""
    root = _memory_owner(data)
    return segment_of(root), (data_address(data) - data_address(root) if root.size else 0)


def reduce_tensor(tensor: Tensor):
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(_NON_LEAF_REFUSAL)
    if not isinstance(tensor._data, np.ndarray):  # (another device's memory: pickled as a copy)
        return tensor.__reduce_ex__(2)
    warn_unserialized_hooks(tensor)
    share_memory_of((tensor,))
    data = tensor._data
    segment, offset = _place_in_segment(data)
    return rebuild_tensor, (type(tensor), segment, offset, data.shape, data.strides, data.dtype,
                            tensor.requires_grad)


def rebuild_tensor(cls: type, memory: np.ndarray, offset: int, shape: tuple, strides: tuple, dtype: np.dtype,
                   requires_grad: bool) -> Tensor:
    """A tensor over a received shared buffer; a Parameter where one was sent, else a plain tensor (as torch's)."""
    from ..nn.parameter import Parameter

    tensor = _wrap(view_in_storage(memory, offset, shape, dtype, strides))
    if cls is Parameter:
        return Parameter(tensor, requires_grad=requires_grad)
    tensor.requires_grad = requires_grad
    return tensor


def reduce_storage(storage: UntypedStorage):
    share_storage_memory(storage)
    segment, offset = _place_in_segment(storage._bytes)
    return rebuild_storage, (segment, offset, storage.nbytes())


def rebuild_storage(memory: np.ndarray, offset: int, nbytes: int) -> UntypedStorage:
    if offset == 0 and nbytes == memory.nbytes:
        return UntypedStorage._of(memory)
    return UntypedStorage._over(memory[offset:offset + nbytes])


def reduce_typed_storage(storage: TypedStorage):
    return TypedStorage, (storage.untyped(), storage.dtype)


def init_reductions() -> None:
    """Register the reductions (torch does so when it is imported: plain ``multiprocessing`` queues share too)."""
    from ..nn.parameter import Parameter

    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
    ForkingPickler.register(UntypedStorage, reduce_storage)
    ForkingPickler.register(TypedStorage, reduce_typed_storage)
