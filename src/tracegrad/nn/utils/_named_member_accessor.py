"""Read, replace and restore a module's tensors by dotted name ("layer.0.weight"), as torch's
``NamedMemberAccessor`` does for ``functional_call``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..._tensor import Tensor
from ..modules.module import Module

__all__ = ["NamedMemberAccessor", "set_tensor", "swap_tensor", "swap_submodule"]

_MISSING: Any = object()  # "no such attribute", distinct from None


def _check_name(name: str, what: str = "tensor") -> None:
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')


def set_tensor(module: Module, name: str, tensor: Tensor | None) -> None:
    if not isinstance(module, Module):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")
    if not isinstance(tensor, Tensor) and tensor is not None:
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    _check_name(name)
    if name in module._parameters:
        module._parameters[name] = tensor
    elif name in module._buffers:
        module._buffers[name] = tensor
    else:
        setattr(module, name, tensor)


def swap_tensor(module: Module, name: str, tensor: Any, allow_missing: bool = False) -> Any:
    """Put ``tensor`` in place of ``module.name`` (``_MISSING`` deletes it); return what was there. A parameter
    slot takes a plain tensor as it is (no Parameter wrapping), so gradients reach the tensor given."""
    if not isinstance(module, Module):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")
    if tensor is not _MISSING and not isinstance(tensor, Tensor) and tensor is not None:
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    _check_name(name)
    if name in module._parameters:
        original = module._parameters[name]
        if tensor is not _MISSING:
            module._parameters[name] = tensor
        else:
            del module._parameters[name]
    elif name in module._buffers:
        original = module._buffers[name]
        if tensor is not _MISSING:
            module._buffers[name] = tensor
        else:
            del module._buffers[name]
    else:
        if hasattr(module, name):
            original = getattr(module, name)
        else:
            if not allow_missing:
                raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
            original = _MISSING
        if original is not _MISSING and not isinstance(original, Tensor) and original is not None:
            raise TypeError(f"attribute `{name}`: {original} is not an instance of torch.Tensor")
        if tensor is not _MISSING:
            setattr(module, name, tensor)
        elif hasattr(module, name):
            delattr(module, name)
    return original


def swap_submodule(module: Module, name: str, submodule: Module) -> Module:
    if not isinstance(module, Module):
        raise TypeError(f"{module} is not an instance of torch.nn.Module")
    if not isinstance(submodule, Module):
        raise TypeError(f"{submodule} is not an instance of torch.nn.Module")
    _check_name(name, "submodule")
    if name not in module._modules:
        raise KeyError(f"submodule {name} does not exist")
    original = module._modules[name]
    if not isinstance(original, Module):
        raise TypeError(f"{name} attribute is not an instance of torch.nn.Module")
    module._modules[name] = submodule
    return original


class NamedMemberAccessor:
    """Dotted-name access to the tensors of ``module`` and its submodules (submodules looked up once)."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.memo: dict[str, Module] = {}

    def get_submodule(self, name: str) -> Module:
        if not name:
            return self.module
        if name in self.memo:
            return self.memo[name]
        prefix, dot, attr = name.rpartition(".")
        parent = self.get_submodule(prefix) if dot else self.module
        try:
            submodule = getattr(parent, attr)
        except AttributeError as ex:
            raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from ex
        if not isinstance(submodule, Module):
            raise TypeError(f"submodule `{name}`: {submodule} is not an instance of torch.nn.Module")
        self.memo[name] = submodule
        return submodule

    def swap_submodule(self, path: str, value: Module) -> Module:
        prefix, _, attr = path.rpartition(".")
        return swap_submodule(self.get_submodule(prefix), attr, value)

    def get_tensor(self, name: str) -> Tensor:
        prefix, _, attr = name.rpartition(".")
        submodule = self.get_submodule(prefix)
        try:
            tensor = getattr(submodule, attr)
        except AttributeError as ex:
            raise AttributeError(f"{submodule._get_name()} has no attribute `{name}`") from ex
        if not isinstance(tensor, Tensor) and tensor is not None:
            raise TypeError(f"{tensor} is not an instance of torch.Tensor")
        return tensor

    def set_tensor(self, name: str, value: Tensor) -> None:
        prefix, _, attr = name.rpartition(".")
        set_tensor(self.get_submodule(prefix), attr, value)

    def del_tensor(self, name: str) -> None:
        prefix, _, attr = name.rpartition(".")
        submodule = self.get_submodule(prefix)
        try:
            delattr(submodule, attr)
        except AttributeError as ex:
            raise AttributeError(f"{submodule._get_name()} has no attribute `{name}`") from ex

    def swap_tensor(self, name: str, value: Any, allow_missing: bool = False) -> Any:
        prefix, _, attr = name.rpartition(".")
        return swap_tensor(self.get_submodule(prefix), attr, value, allow_missing=allow_missing)

    def get_tensors(self, names: Iterable[str]) -> list[Tensor]:
        return [self.get_tensor(name) for name in names]

    def set_tensors(self, names: Iterable[str], values: Iterable[Tensor]) -> None:
        names, values = list(names), list(values)
        if len(names) != len(values):
            raise AssertionError(f"names and values must have the same length, got {len(names)} names and "
                                 f"{len(values)} values")
        for name, value in zip(names, values, strict=True):
            self.set_tensor(name, value)

    def set_tensors_dict(self, named_tensors: dict[str, Tensor]) -> None:
        for name, value in named_tensors.items():
            self.set_tensor(name, value)

    def del_tensors(self, names: Iterable[str]) -> None:
        for name in names:
            self.del_tensor(name)

    def swap_tensors(self, names: Iterable[str], values: Iterable[Tensor], allow_missing: bool = False) -> list:
        names, values = list(names), list(values)
        if len(names) != len(values):
            raise AssertionError(f"names and values must have the same length, got {len(names)} names and "
                                 f"{len(values)} values")
        return [self.swap_tensor(name, value, allow_missing=allow_missing)
                for name, value in zip(names, values, strict=True)]

    def swap_tensors_dict(self, named_tensors: dict[str, Tensor],
                          allow_missing: bool = False) -> tuple[dict[str, Any], list[str]]:
        """Swap every named tensor in; on any failure, put back the ones already swapped."""
        originals: dict[str, Any] = {}
        missing: list[str] = []
        try:
            for name, tensor in named_tensors.items():
                original = self.swap_tensor(name, tensor, allow_missing=True)
                if original is _MISSING:
                    missing.append(name)
                originals[name] = original
        except Exception:
            for name, original in originals.items():
                self.swap_tensor(name, original, allow_missing=True)
            raise
        if missing and not allow_missing:
            for name, original in originals.items():
                self.swap_tensor(name, original, allow_missing=True)
            raise RuntimeError(f"Missing key(s): {', '.join(map(repr, missing))}.")
        return originals, missing

    def check_keys(self, keys: Iterable[str]) -> tuple[list[str], list[str]]:
        """(missing, unexpected) names, each sorted."""
        keys = set(keys)
        valid = {name for name, _ in self.named_tensors(remove_duplicate=False)}
        return sorted(valid - keys), sorted(keys - valid)

    def named_parameters(self, remove_duplicate: bool = True) -> Iterable[tuple[str, Tensor]]:
        yield from self.module.named_parameters(remove_duplicate=remove_duplicate)

    def named_buffers(self, remove_duplicate: bool = True) -> Iterable[tuple[str, Tensor]]:
        yield from self.module.named_buffers(remove_duplicate=remove_duplicate)

    def named_tensors(self, remove_duplicate: bool = True) -> Iterable[tuple[str, Tensor]]:
        yield from self.module.named_parameters(remove_duplicate=remove_duplicate)
        yield from self.module.named_buffers(remove_duplicate=remove_duplicate)

    def named_modules(self, remove_duplicate: bool = True) -> Iterable[tuple[str, Module]]:
        yield from self.module.named_modules(remove_duplicate=remove_duplicate)
