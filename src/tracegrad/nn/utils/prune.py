"""``torch.nn.utils.prune``: masking a module's parameter, as PyTorch's pruning tutorial does.

Pruning ``name`` re-parametrizes it: the parameter moves to ``name + "_orig"``, a buffer ``name + "_mask"``
holds the mask, and a forward pre-hook (the pruning method itself) recomputes ``name = mask * orig`` before each
forward. Pruning the same tensor again stacks the methods in a :class:`PruningContainer`, whose new mask only
touches what the previous masks kept. ``remove`` makes the pruning permanent.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from typing import Any

import tracegrad as _tg

from ..._tensor import Tensor
from ..modules.module import Module
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """A way of computing a mask; an instance is also the forward pre-hook that applies it."""

    _tensor_name: str | None
    PRUNING_TYPE: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The new mask for ``t``, given the mask of earlier pruning ``default_mask``."""

    def apply_mask(self, module: Module) -> Tensor:
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args, importance_scores: Tensor | None = None, **kwargs):
        """Prune ``module.<name>`` with a new ``cls(*args, **kwargs)`` (stacked on any earlier pruning)."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif importance_scores.shape != orig.shape:
            raise AssertionError(f"importance_scores should have the same shape as parameter {name} of {module}, "
                                 f"got {importance_scores.shape} vs {orig.shape}")
        first = not isinstance(method, PruningContainer)
        if first:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = _tg.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(memory_format=_tg.contiguous_format)
        try:
            module.register_buffer(name + "_mask", method.compute_mask(importance_scores, default_mask=default_mask))
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # put the parameter back as it was
                module.register_parameter(name, getattr(module, name + "_orig"))
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None, importance_scores: Tensor | None = None) -> Tensor:
        """``t`` masked by this method (the module-free form)."""
        if importance_scores is None:
            importance_scores = t
        elif importance_scores.shape != t.shape:
            raise AssertionError("importance_scores should have the same shape as tensor t, "
                                 f"got {importance_scores.shape} vs {t.shape}")
        default_mask = default_mask if default_mask is not None else _tg.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``name`` becomes a plain parameter holding the masked values."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls, module: Module, name: str, *args, **kwargs) -> BasePruningMethod:
    """A new method for ``name``, put into a container with the one already pruning it (whose hook is dropped:
    the container becomes the hook)."""
    found = [(k, hook) for k, hook in module._forward_pre_hooks.items()
             if isinstance(hook, BasePruningMethod) and hook._tensor_name == name]
    if len(found) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of module {module}. "
                             "Use a PruningContainer.")
    for k, _ in found:
        del module._forward_pre_hooks[k]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if not found:
        return method
    old = found[0][1]
    if not isinstance(old, PruningContainer):
        old = PruningContainer(old)
    old.add_pruning_method(method)
    return old


class PruningContainer(BasePruningMethod):
    """Pruning methods applied one after the other to the same tensor."""

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod | None) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named '{self._tensor_name}' to "
                             f"PruningContainer {self}. Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, computed only on the part of ``t`` the earlier masks kept."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kept = _kept_slice(method, t, default_mask)
        partial = method.compute_mask(t[kept], default_mask=default_mask[kept])
        new_mask[kept] = partial.to(dtype=new_mask.dtype)
        return new_mask


def _kept_slice(method: BasePruningMethod, t: Tensor, mask: Tensor):
    """What of ``t`` a new method acts on: the unpruned entries (unstructured), the unpruned channels along its
    ``dim`` (structured), or all of it (global)."""
    if method.PRUNING_TYPE == "unstructured":
        return mask == 1
    if method.PRUNING_TYPE == "global":
        return (slice(None),) * len(t.shape)
    if method.PRUNING_TYPE != "structured":
        raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
    if not hasattr(method, "dim"):
        raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to have the attribute `dim` defined.')
    n_dims = t.dim()
    dim = method.dim + n_dims if method.dim < 0 else method.dim
    if dim < 0:
        raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
    slc = [slice(None)] * n_dims
    slc[dim] = mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
    return tuple(slc)


class Identity(BasePruningMethod):
    """Prunes nothing (an all-ones mask)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str):  # type: ignore[override]
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes entries chosen at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        # (torch prunes the top-k of one rand_like draw; the same call picks the same entries where draws tie)
        return _unstructured_mask(t, default_mask, self.amount,
                                  lambda k: _tg.topk(_tg.rand_like(t).view(-1), k=k).indices)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float):  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the entries of smallest magnitude."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: int | float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return _unstructured_mask(t, default_mask, self.amount,
                                  lambda k: _tg.topk(_tg.abs(t).view(-1), k=k, largest=False).indices)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float,  # type: ignore[override]
              importance_scores: Tensor | None = None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _unstructured_mask(t: Tensor, default_mask: Tensor, amount: int | float,
                       flat_indices_to_prune: Callable[[int], Tensor]) -> Tensor:
    """``default_mask`` with the ``amount`` entries of ``t`` that ``flat_indices_to_prune(k)`` names zeroed
    (``amount`` an int: that many entries; a float: that share of them)."""
    nparams_toprune = _compute_nparams_toprune(amount, t.nelement())
    _validate_pruning_amount(nparams_toprune, t.nelement())
    mask = default_mask.clone(memory_format=_tg.contiguous_format)
    if nparams_toprune != 0:  # (topk of nothing is skipped, as torch skips it)
        mask.view(-1)[flat_indices_to_prune(nparams_toprune)] = 0
    return mask


class RandomStructured(BasePruningMethod):
    """Prunes channels along ``dim`` chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        nchannels, nparams_toprune = _structured_counts(t, self.amount, self.dim)
        if nparams_toprune == 0:  # (torch draws nothing then: the generator's stream is left as it was)
            return default_mask
        prob = _tg.rand(nchannels)
        kept = prob > _tg.kthvalue(prob, k=nparams_toprune).values
        return _channel_mask(t, self.dim, kept, default_mask)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float, dim: int = -1):  # type: ignore[override]
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the channels along ``dim`` of smallest L``n`` norm."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount: int | float, n: Any, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        nchannels, nparams_toprune = _structured_counts(t, self.amount, self.dim)
        # (the norms are taken even when nothing is pruned, so a norm torch refuses, 'fro' over three dims say,
        # is refused then too)
        kept = _tg.topk(_compute_norm(t, self.n, self.dim), k=nchannels - nparams_toprune, largest=True).indices
        if nparams_toprune == 0:
            return default_mask
        return _channel_mask(t, self.dim, kept, default_mask)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float, n: Any, dim: int,  # type: ignore[override]
              importance_scores: Tensor | None = None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


def _structured_counts(t: Tensor, amount: int | float, dim: int) -> tuple[int, int]:
    """(the number of channels of ``t`` along ``dim``, how many of them ``amount`` prunes), checked."""
    _validate_structured_pruning(t)
    _validate_pruning_dim(t, dim)
    nchannels = t.shape[dim]
    nparams_toprune = _compute_nparams_toprune(amount, nchannels)
    _validate_pruning_amount(nparams_toprune, nchannels)
    return nchannels, nparams_toprune


def _channel_mask(t: Tensor, dim: int, kept: Tensor, default_mask: Tensor) -> Tensor:
    """A mask like ``t`` keeping the channels along ``dim`` that ``kept`` selects (booleans or indices), and only
    where ``default_mask`` kept them."""
    slc = [slice(None)] * len(t.shape)
    slc[dim] = kept
    mask = _tg.zeros_like(t)
    mask[tuple(slc)] = 1
    mask *= default_mask.to(dtype=mask.dtype)
    return mask


class CustomFromMask(BasePruningMethod):
    """Prunes with a given mask."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match self.mask shape "
                                 f"{self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor):  # type: ignore[override]
        return super().apply(module, name, mask=mask)


def identity(module: Module, name: str) -> Module:
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: int | float) -> Module:
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: int | float, importance_scores: Tensor | None = None
                    ) -> Module:
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: int | float, dim: int) -> Module:
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: int | float, n: Any, dim: int,
                  importance_scores: Tensor | None = None) -> Module:
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Iterable, pruning_method: type, importance_scores: dict | None = None,
                        **kwargs) -> None:
    """Prune ``(module, name)`` pairs together, as if their tensors were one vector."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((module, name), getattr(module, name))
                                   for module, name in parameters])
    default_mask = parameters_to_vector([getattr(module, name + "_mask", _tg.ones_like(getattr(module, name)))
                                         for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. Found method '
                        f"{pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        custom_from_mask(module, name, mask=final_mask[pointer:pointer + param.numel()].view_as(param))
        pointer += param.numel()


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module: Module) -> bool:
    return any(isinstance(hook, BasePruningMethod)
               for _, sub in module.named_modules() for hook in sub._forward_pre_hooks.values())


def _validate_pruning_amount_init(amount) -> None:
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0
            or not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _validate_pruning_amount(amount, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={tensor_size}")


def _validate_structured_pruning(t: Tensor) -> None:
    if len(t.shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. Found tensor of shape "
                         f"{t.shape} with {len(t.shape)} dims")


def _compute_nparams_toprune(amount, tensor_size: int) -> int:
    return amount if isinstance(amount, numbers.Integral) else round(amount * tensor_size)


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t: Tensor, n: Any, dim: int) -> Tensor:
    dims = list(range(t.dim()))
    dims.remove(dims[dim])
    return _tg.norm(t, p=n, dim=dims)
