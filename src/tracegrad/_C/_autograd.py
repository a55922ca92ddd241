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


def __getattr__(name: str):
    # ``torch._C._autograd.SavedTensor``: the class of ``grad_fn._raw_saved_<name>`` (imported lazily: this
    # module loads before the autograd package).
    if name == "SavedTensor":
        from ..autograd.saved import SavedTensor

        return SavedTensor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
