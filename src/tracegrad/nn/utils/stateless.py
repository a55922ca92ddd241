"""``torch.nn.utils.stateless``: call a module with some of its parameters and buffers replaced.

``functional_call(module, {"weight": w}, args)`` swaps the given tensors into the module for one call, then puts
the originals back (also when the call raises). The tensors are used as they are, so gradients of the output
reach them, not the module's own parameters. With ``tie_weights`` a value given for one of several tied names
(shared tensors) replaces all of them; ``strict`` requires exactly the module's names. torch deprecates this
entry point in favour of ``torch.func.functional_call``, with a FutureWarning.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from ..._tensor import Tensor
from ..modules.module import Module
from ._named_member_accessor import NamedMemberAccessor

__all__ = ["functional_call"]


def _untie_named_tensors_map(module: Module, parameters_and_buffers: dict[str, Tensor]) -> dict[str, Tensor]:
    """The given mapping extended to every name tied to a given one (refusing different values for tied names)."""
    all_named: dict[str, Tensor] = {}
    all_named.update(module.named_parameters(remove_duplicate=False))
    all_named.update(module.named_buffers(remove_duplicate=False))
    names_of: dict[int, set[str]] = {}
    for name, tensor in all_named.items():
        names_of.setdefault(id(tensor), set()).add(name)
    tied: dict[str, set[str]] = {}
    for names in names_of.values():
        if len(names) > 1:
            for name in names:
                tied[name] = names
    given = set(parameters_and_buffers)
    given_tied = {name for name in given if name in tied}
    for name in given_tied:
        names = tied[name]
        values = {id(parameters_and_buffers[n]) for n in names if n in parameters_and_buffers}
        if len(names & given_tied) > 1 and len(values) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             "Consider using tie_weights=False")
    untied = parameters_and_buffers.copy()
    for name in given_tied:
        for tied_name in tied[name]:
            untied[tied_name] = parameters_and_buffers[name]
    return untied


@contextlib.contextmanager
def _reparametrize_module(module: Module, parameters_and_buffers: dict[str, Tensor], tie_weights: bool = False,
                          strict: bool = False, stack_weights: bool = False) -> Iterator[None]:
    untied = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    accessor = NamedMemberAccessor(module)
    if strict:
        missing, unexpected = accessor.check_keys(untied)
        messages = []
        if unexpected:
            messages.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            messages.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if messages:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                                "\n\t".join(messages)))
    originals: dict[str, Any] = {}
    try:
        originals, _ = accessor.swap_tensors_dict(untied, allow_missing=True)
        yield
    finally:
        if stack_weights:
            originals = dict(reversed(originals.items()))
        swapped_out, _ = accessor.swap_tensors_dict(originals, allow_missing=True)
        # a tensor the module replaced during the call (by assignment) comes back to the caller's dict
        parameters_and_buffers.update({k: swapped_out[k] for k in parameters_and_buffers if k in swapped_out})


def _functional_call(module: Module, parameters_and_buffers: dict[str, Tensor], args: Any = None,
                     kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True, strict: bool = False) -> Any:
    from ..parallel import DataParallel

    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def functional_call(module: Module, parameters_and_buffers: dict[str, Tensor], args: Any = None,
                    kwargs: dict[str, Any] | None = None, *, tie_weights: bool = True, strict: bool = False) -> Any:
    """``module(*args, **kwargs)`` with ``parameters_and_buffers`` standing in for the module's own tensors."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
