"""What a tensor answers about devices and layouts it can never have here (PyTorch's CPU build answers the same):
``is_mps``, ``is_nested``, ``is_sparse_csr``... are False, a strided tensor's ``sparse_dim()`` is 0 and its
``to_dense()`` is itself, and the sparse-only methods refuse it with PyTorch's errors. Library code checks these
flags; without them it fails with an AttributeError instead of taking its dense CPU branch."""

from __future__ import annotations

import warnings

from ._tensor import Tensor

_NEVER = ("is_mps", "is_xpu", "is_ipu", "is_mtia", "is_maia", "is_vulkan", "is_xla", "is_mkldnn", "is_nested",
          "is_sparse_csr")

# sparse-only methods: PyTorch's message names the layout each expects
_SPARSE_ONLY = {"is_coalesced": "sparse coordinate tensor", "coalesce": "sparse coordinate tensor",
                "indices": "sparse coordinate tensor", "values": "sparse tensor"}


def _refuse(name: str, expected: str):
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected {expected} layout but got Strided")

    method.__name__ = name
    return method


def _to_dense(self: Tensor, dtype=None, *, masked_grad=None) -> Tensor:
    """A strided tensor is already dense: itself (or a cast copy for another dtype)."""
    return self if dtype is None or dtype == self.dtype else self.to(dtype)


def _volatile(self: Tensor) -> bool:
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def _set_volatile(self: Tensor, *value) -> None:
    """Setting (or deleting) ``volatile`` is accepted with a warning, as torch's setter does."""
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.", UserWarning,
                  stacklevel=2)


def install() -> None:
    for flag in _NEVER:
        setattr(Tensor, flag, property(lambda self: False))
    for name, expected in _SPARSE_ONLY.items():
        setattr(Tensor, name, _refuse(name, expected))
    Tensor.name = property(lambda self: None)  # (named tensors: none here)
    Tensor.volatile = property(_volatile, _set_volatile, _set_volatile)
    Tensor.const_data_ptr = Tensor.data_ptr
    Tensor.sparse_dim = lambda self: 0
    Tensor.dense_dim = lambda self: self.ndim
    Tensor.to_dense = _to_dense
    Tensor.is_distributed = lambda self: False
