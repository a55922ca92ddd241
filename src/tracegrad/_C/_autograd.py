"""``torch._C._autograd`` private helpers used by tests and tooling."""

from __future__ import annotations


def _unsafe_set_version_counter(tensors, versions) -> None:
    from .._tensor import Tensor

    if isinstance(tensors, Tensor):
        tensors, versions = (tensors,), (versions,)
    for t, v in zip(tensors, versions):
        if int(v) < 0:
            raise RuntimeError(f"Cannot set a version_counter to a value below 0: {int(v)}")
        t._version_counter()[0] = int(v)
