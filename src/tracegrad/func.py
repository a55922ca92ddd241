"""``torch.func``: for now only ``functional_call``, which needs no function transform. The transforms (``vmap``,
``grad``, ``jacrev``...) are absent, not approximated: they are a later issue."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._tensor import Tensor
from .nn.modules.module import Module
from .nn.utils.stateless import _functional_call

__all__ = ["functional_call"]


def _merged(parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]]) -> dict[str, Tensor]:
    """One mapping from a dict (the very dict, which the call may write back to) or a sequence of dicts that share
    no key."""
    if isinstance(parameter_and_buffer_dicts, dict):
        return parameter_and_buffer_dicts
    if not isinstance(parameter_and_buffer_dicts, Sequence):
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
        raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
    counts: dict[str, int] = {}
    for d in parameter_and_buffer_dicts:
        for key in d:
            counts[key] = counts.get(key, 0) + 1
    repeated = [key for key, n in counts.items() if n > 1]
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}


def functional_call(module: Module, parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
                    args: Any = None, kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True,
                    strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with the given tensors standing in for the module's own parameters and buffers,
    given as one dict or several (e.g. ``(params, buffers)``)."""
    return _functional_call(module, _merged(parameter_and_buffer_dicts), args, kwargs, tie_weights=tie_weights,
                            strict=strict)
