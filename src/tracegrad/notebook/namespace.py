"""Which tensors with a grad_fn did a cell create or change in the user namespace?

After each cell the live feed asks :meth:`NamespaceWatcher.changed` for the names bound to a tensor whose
``grad_fn`` is new: a new name, a name rebound to another tensor, or the same tensor after an in-place op
(which gives it a new grad_fn). Identity is kept through weak references, so the watcher never keeps a
graph (and its saved tensors) alive, and a dead object never passes for a live one.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from .._tensor import Tensor


def leaf_labels(namespace: Mapping[str, Any], limit: int = 10_000) -> dict[str, Tensor]:
    """Names for the leaves a graph may reach, as the user would write them: public tensors that require
    grad (``x``) and the parameters of public modules (``model.0.weight``), so a drawn AccumulateGrad says
    which parameter it feeds instead of only its shape."""
    from ..nn.modules.module import Module

    labels: dict[str, Tensor] = {}
    for name, value in list(namespace.items()):
        if name.startswith("_"):
            continue
        if isinstance(value, Tensor) and value.requires_grad and value.grad_fn is None:
            labels[name] = value
        elif isinstance(value, Module):
            for pname, param in value.named_parameters():
                labels.setdefault(f"{name}.{pname}", param)
                if len(labels) >= limit:
                    return labels
    return labels


def _ref(obj: Any) -> weakref.ref | None:
    try:
        return weakref.ref(obj)
    except TypeError:  # a grad_fn type without weak reference support: compare by id only
        return None


class NamespaceWatcher:
    """Remembers, per public name, which tensor and which grad_fn it was bound to after the last cell."""

    def __init__(self, max_roots: int = 8) -> None:
        self.max_roots = max_roots
        self._seen: dict[str, tuple[weakref.ref | None, weakref.ref | None, int, int]] = {}

    def reset(self, namespace: Mapping[str, Any]) -> None:
        """Take the current bindings as seen, without reporting them (live mode just turned on)."""
        self._seen = {name: self._fingerprint(tensor) for name, tensor in self._tracked(namespace)}

    def changed(self, namespace: Mapping[str, Any]) -> tuple[dict[str, Tensor], int]:
        """The tensors that are new or changed since the last call, at most ``max_roots`` of them (the most
        recently bound last), and how many more were left out."""
        seen: dict[str, tuple[weakref.ref | None, weakref.ref | None, int, int]] = {}
        changed: dict[str, Tensor] = {}
        for name, tensor in self._tracked(namespace):
            old = self._seen.get(name)
            seen[name] = fingerprint = old if old is not None and self._same(old, tensor) else self._fingerprint(tensor)
            if fingerprint is not old:
                changed[name] = tensor
        self._seen = seen
        names = list(changed)
        kept = names[-self.max_roots:] if self.max_roots else []
        return {name: changed[name] for name in kept}, len(names) - len(kept)

    @staticmethod
    def _tracked(namespace: Mapping[str, Any]):
        for name, value in list(namespace.items()):
            if not name.startswith("_") and isinstance(value, Tensor) and value.grad_fn is not None:
                yield name, value

    @staticmethod
    def _fingerprint(tensor: Tensor) -> tuple[weakref.ref | None, weakref.ref | None, int, int]:
        grad_fn = tensor.grad_fn
        return _ref(tensor), _ref(grad_fn), id(tensor), id(grad_fn)

    @staticmethod
    def _same(old: tuple[weakref.ref | None, weakref.ref | None, int, int], tensor: Tensor) -> bool:
        tensor_ref, grad_fn_ref, tensor_id, grad_fn_id = old
        grad_fn = tensor.grad_fn
        same_tensor = tensor_ref() is tensor if tensor_ref is not None else tensor_id == id(tensor)
        same_grad_fn = grad_fn_ref() is grad_fn if grad_fn_ref is not None else grad_fn_id == id(grad_fn)
        return same_tensor and same_grad_fn
