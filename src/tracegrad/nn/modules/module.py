"""``Module``: the base class of every layer, with PyTorch's registration, traversal, state and hook
semantics."""

from __future__ import annotations

import functools
import itertools
import types
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ... import _torch_function
from ..._events import MODULE_CALLS, is_own_file
from ..._events import emit as _emit_event
from ..._state import STATE
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...autograd.node import RemovableHandle
from ..parameter import Buffer, Parameter
from ._backward_hook import BackwardHook

__all__ = ["Module", "typename", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_backward_hook",
           "register_module_full_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook", "register_module_parameter_registration_hook"]

# Hooks common to every module (PyTorch's global module hooks, for debugging and profiling): they run before
# each module's own hooks of the same kind.
_global_forward_pre_hooks: dict = OrderedDict()
_global_forward_hooks: dict = OrderedDict()
_global_forward_hooks_always_called: dict = OrderedDict()
_global_forward_hooks_with_kwargs: dict = OrderedDict()
_global_backward_pre_hooks: dict = OrderedDict()
_global_backward_hooks: dict = OrderedDict()
_global_is_full_backward_hook: bool | None = None  # set by the first global backward hook, never reset
_global_buffer_registration_hooks: dict = OrderedDict()
_global_module_registration_hooks: dict = OrderedDict()
_global_parameter_registration_hooks: dict = OrderedDict()
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"
# (torch warns on every Module.to(<complex dtype>))
_COMPLEX_MODULE_WARNING = (
    "Complex modules are a new feature under active development whose design may change, and some modules might "
    "not work as expected when using complex tensors as parameters or buffers. Please file an issue at "
    "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml if a complex module does not work as "
    "expected."
)


def own_methods(classes: tuple, *names: str) -> None:
    """Give each class its own copy of the methods ``names`` it inherits (the same code), named after it: torch's
    classes define theirs, and Python names a function's class in its errors (``ReLU.__init__() takes from 1 to
    2 positional arguments...``, ``Sigmoid.forward() takes 2 positional arguments...``). A user's subclass
    inherits the copy, as it would torch's method."""
    for cls in classes:
        for name in names:
            if name in vars(cls):
                continue
            inherited = getattr(cls, name)
            method = types.FunctionType(inherited.__code__, inherited.__globals__, name, inherited.__defaults__,
                                        inherited.__closure__)
            method.__kwdefaults__ = inherited.__kwdefaults__
            method.__doc__ = inherited.__doc__
            method.__qualname__ = f"{cls.__name__}.{name}"
            setattr(cls, name, method)


def typename(obj) -> str:
    """PyTorch's ``torch.typename``: ``torch.FloatTensor`` for tensors, the qualified name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, args)`` before every module's forward, before the module's own pre-hooks."""
    return _add_hook(_global_forward_pre_hooks, hook, False)


def register_module_forward_hook(hook: Callable, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output)`` (``hook(module, args, kwargs, output)`` with ``with_kwargs``) after every
    module's forward, before the module's own forward hooks."""
    handle = _add_hook(_global_forward_hooks, hook, False, _global_forward_hooks_always_called)
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def _set_global_backward_hook_kind(full: bool) -> None:
    """Global backward hooks are all full or all regular (torch refuses a mix)."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    _global_is_full_backward_hook = full


def register_module_backward_hook(hook: Callable) -> RemovableHandle:
    """The deprecated global non-full backward hook (on each module output's grad_fn)."""
    _set_global_backward_hook_kind(False)
    return _add_hook(_global_backward_hooks, hook, False)


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, grad_output)`` for every module, before the module's own backward pre-hooks."""
    return _add_hook(_global_backward_pre_hooks, hook, False)


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, grad_input, grad_output)`` for every module, before the module's own backward hooks."""
    _set_global_backward_hook_kind(True)
    return _add_hook(_global_backward_hooks, hook, False)


def register_module_buffer_registration_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, name, buffer)`` on every ``register_buffer``; a non-None result replaces the buffer."""
    return _add_hook(_global_buffer_registration_hooks, hook, False)


def register_module_module_registration_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, name, submodule)`` on every submodule registration; a non-None result replaces it."""
    return _add_hook(_global_module_registration_hooks, hook, False)


def register_module_parameter_registration_hook(hook: Callable) -> RemovableHandle:
    """``hook(module, name, param)`` on every ``register_parameter``; a non-None result replaces it."""
    return _add_hook(_global_parameter_registration_hooks, hook, False)


def _registered(hooks: dict, module, name: str, value):
    """``value`` after the global registration hooks (each may return a replacement)."""
    for hook in list(hooks.values()):
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    first = lines.pop(0)
    return first + "\n" + "\n".join((" " * spaces) + line if line.strip() else "" for line in lines)


class _WrappedHook:
    """torch's wrapper of a state-dict pre-hook: called with its module first when it has one, which it holds weakly
    (the module holds the hook); a pickle of the module carries the hook with the module itself (a closure over the
    module would not pickle)."""

    def __init__(self, hook: Callable, module: Module | None = None) -> None:
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = False
        if module is not None:
            self.module = weakref.ref(module)
            self.with_module = True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)

    def __getstate__(self) -> dict:
        state = {"hook": self.hook, "with_module": self.with_module}
        if self.with_module:
            state["module"] = self.module()
        return state

    def __setstate__(self, state: dict) -> None:
        self.hook = state["hook"]
        self.with_module = state["with_module"]
        if self.with_module:
            if state["module"] is None:
                raise RuntimeError("You are trying to revive the hook of a dead Module!")
            self.module = weakref.ref(state["module"])


def _add_hook(hooks: dict, hook, prepend: bool, *extra: dict) -> RemovableHandle:
    handle = RemovableHandle(hooks, *extra)
    if prepend:
        items = list(hooks.items())
        hooks.clear()
        hooks[handle.id] = hook
        hooks.update(items)
    else:
        hooks[handle.id] = hook
    return handle


def _parse_to(args: tuple, kwargs: dict) -> tuple:
    """``(device, dtype, memory_format)`` of a ``Module.to`` call, as torch's ``_parse_to``: Tensor.to's signatures
    (a call none takes refused in their words; a tensor or a number gives its dtype, a Python type its dtype),
    then a ``copy`` given at all refused, even False (a module is converted in place)."""
    from ..._arg_parser import argument_error
    from ..._tensor_methods import _TO_SIGNATURES, _bound_to, _to_arguments

    error = argument_error("to", args, kwargs, method=True)
    if error is not None:
        raise error
    bound = next((b for names, first in _TO_SIGNATURES if (b := _bound_to(names, first, args, kwargs)) is not None),
                 {})
    if "copy" in bound:
        raise RuntimeError(".to() does not accept copy argument")
    device, dtype, _copy, memory_format = _to_arguments(args, kwargs)
    return device, dtype, memory_format


class Module:
    """Base class for all neural network modules."""

    dump_patches: bool = False
    _version: int = 1
    training: bool
    call_super_init: bool = False

    def __init__(self, *args, **kwargs) -> None:
        if self.call_super_init is False and bool(kwargs):
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'"
            )
        if self.call_super_init is False and bool(args):
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were given"
            )
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    def forward(self, *input):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # ---- registration -----------------------------------------------------------------------------------

    def _check_new_member(self, kind: str, store: str, name) -> None:
        """register_buffer/register_parameter's checks of ``name`` before it goes into ``self.<store>``."""
        if store not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in getattr(self, store):
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        self._check_new_member("buffer", "_buffers", name)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{typename(tensor)}' object to buffer '{name}' (torch Tensor or None "
                "required)"
            )
        if _global_buffer_registration_hooks:
            tensor = _registered(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        self._check_new_member("parameter", "_parameters", name)
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{typename(param)}' object to parameter '{name}' (torch.nn.Parameter or "
                "None required)"
            )
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        else:
            if _global_parameter_registration_hooks:
                param = _registered(_global_parameter_registration_hooks, self, name, param)
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        if _global_module_registration_hooks:
            module = _registered(_global_module_registration_hooks, self, name, module)
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    def get_extra_state(self) -> Any:
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state: Any) -> None:
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    # ---- attribute protocol --------------------------------------------------------------------------------

    def __getattr__(self, name: str):
        d = self.__dict__
        if "_parameters" in d:
            params = d["_parameters"]
            if name in params:
                return params[name]
        if "_buffers" in d:
            buffers = d["_buffers"]
            if name in buffers:
                return buffers[name]
        if "_modules" in d:
            modules = d["_modules"]
            if name in modules:
                return modules[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__

        def remove_from(*containers) -> None:
            for c in containers:
                if name in c:
                    if isinstance(c, dict):
                        del c[name]
                    else:
                        c.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as parameter '{name}' (torch.nn.Parameter or None "
                    "expected)"
                )
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            if _global_module_registration_hooks:
                value = _registered(_global_module_registration_hooks, self, name, value)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as child module '{name}' (torch.nn.Module or None "
                    "expected)"
                )
            if _global_module_registration_hooks:
                value = _registered(_global_module_registration_hooks, self, name, value)
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{typename(value)}' as buffer '{name}' (torch.nn.Buffer, torch.Tensor "
                    "or None expected)"
                )
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = (
            list(dir(self.__class__))
            + list(self.__dict__)
            + list(self._parameters)
            + list(self._modules)
            + list(self._buffers)
        )
        return sorted(k for k in keys if not k[0].isdigit())

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    # ---- traversal -----------------------------------------------------------------------------------------

    def _named_members(
        self, get_members, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ):
        memo = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members(
            lambda m: m._parameters.items(), prefix=prefix, recurse=recurse, remove_duplicate=remove_duplicate
        )

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members(
            lambda m: m._buffers.items(), prefix=prefix, recurse=recurse, remove_duplicate=remove_duplicate
        )

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True):
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                sub_prefix = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    # ---- modes, gradients, conversion ----------------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        if STATE.torch_function:  # (a handler watches: it sees torch's ``p.grad`` reads and writes)
            from ...optim._watched import module_zero_grad

            module_zero_grad(self, set_to_none)
            return
        for p in self.parameters():
            if p._grad is not None:
                if set_to_none:
                    p._grad = None
                else:
                    g = p._grad
                    if g._grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def apply(self, fn: Callable[[Module], None]) -> Module:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            param.data = applied  # keep the Parameter object (optimizers hold it), swap its storage
            if param._grad is not None:
                with no_grad():
                    param._grad = fn(param._grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to_empty(self, *, device, recurse: bool = True) -> Module:
        """Parameters and buffers (of the submodules too, with ``recurse``) replaced by uninitialized ones on
        ``device``, as torch's ``empty_like(t, device=device)`` (a device tracegrad lacks refused as it refuses)."""
        from ...ops.creation import empty_like

        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def to(self, *args, **kwargs) -> Module:
        from ...backend.device import as_device, refuse_unsupported
        from ...backend.device import device as device_cls
        from ...backend.dtypes import to_dtype

        device, dtype, memory_format = _parse_to(args, kwargs)
        if isinstance(device, str):
            device = device_cls(device)  # a malformed device string is refused before any conversion
        if dtype is not None:
            dtype = to_dtype(dtype)
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError(
                    f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                    f"dtype={dtype}"
                )
            if dtype.is_complex:
                warnings.warn(_COMPLEX_MODULE_WARNING, stacklevel=2)

        def convert(t: Tensor) -> Tensor:
            out = t
            if device is not None and str(device).startswith("cuda"):
                out = out.cuda()
            elif device is not None:  # (refused as each tensor's .to(device) refuses it: a module without any is not)
                refuse_unsupported(as_device(device), moving=True)
            new_dtype = dtype if dtype is not None and (t.is_floating_point() or t.is_complex()) else None
            # (as torch: a memory format reaches the 4-d and 5-d parameters and buffers only)
            new_format = memory_format if memory_format is not None and t.dim() in (4, 5) else None
            if new_format is not None:
                out = out.to(new_dtype, memory_format=new_format)
            elif new_dtype is not None:
                out = out.to(new_dtype)
            return out

        return self._apply(convert)

    def float(self) -> Module:
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> Module:
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> Module:
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self) -> Module:
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def type(self, dst_type) -> Module:
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self) -> Module:
        return self

    def cuda(self, device=None) -> Module:
        return self._apply(lambda t: t.cuda(device))

    def share_memory(self) -> Module:
        """Moves the parameters, their grads and the buffers (of every submodule) into shared memory, in place
        (torch's ``_apply(lambda t: t.share_memory_())``, done in one pass over the objects: see _shared_memory.py)."""
        from ..._shared_memory import share_memory_of

        share_memory_of(_tensors_to_share(self))
        return self

    # ---- state dict ----------------------------------------------------------------------------------------

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix: str = "", keep_vars: bool = False):
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict "
                "for details.",
                FutureWarning,
                stacklevel=2,
            )
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        return _add_hook(self._state_dict_pre_hooks, hook, False)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        return _add_hook(self._state_dict_hooks, hook, False)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        return _add_hook(self._load_state_dict_pre_hooks, _WrappedHook(hook, self), False)

    def _register_state_dict_hook(self, hook: Callable) -> RemovableHandle:
        """PyTorch's private form of ``register_state_dict_post_hook`` (may return a new state dict)."""
        return _add_hook(self._state_dict_hooks, hook, False)

    def _register_load_state_dict_pre_hook(self, hook: Callable, with_module: bool = False) -> RemovableHandle:
        """PyTorch's private pre-hook: called as ``hook(state_dict, prefix, ...)`` (``module`` first when
        ``with_module``)."""
        return _add_hook(self._load_state_dict_pre_hooks, _WrappedHook(hook, self if with_module else None), False)

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        return _add_hook(self._load_state_dict_post_hooks, hook, False)

    def _load_from_state_dict(
        self,
        state_dict: dict,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing_keys: list,
        unexpected_keys: list,
        error_msgs: list,
    ) -> None:
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {
            k: v for k, v in itertools.chain(self._parameters.items(), persistent.items()) if v is not None
        }
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                    f"object from checkpoint but received {type(value)}"
                )
                continue
            if param.ndim == 0 and value.ndim == 1 and value.shape[0] == 1:
                value = value[0]
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {param.shape}."
                )
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter) and not isinstance(value, Parameter):
                            value = Parameter(value, requires_grad=param.requires_grad)
                        elif isinstance(param, Parameter):
                            value.requires_grad_(param.requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as ex:  # noqa: BLE001 - reported like PyTorch, with the exception's args
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model are '
                    f"{param.size()} and whose dimensions in the checkpoint are {value.size()}, an "
                    f"exception occurred : {ex.args}."
                )
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    parts = key[len(prefix) :].split(".", 1)
                    if len(parts) > 1:
                        if parts[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif parts[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping, strict: bool = True, assign: bool = False):
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module: Module, local_state: dict, prefix: str = "") -> None:
            # (the caller's metadata itself, as torch: `assign` stays recorded in the state dict loaded)
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(
                local_state, prefix, local_metadata, True, missing, unexpected, errors
            )
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(
                        child,
                        {k: v for k, v in local_state.items() if k.startswith(child_prefix)},
                        child_prefix,
                    )
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be modified, "
                        "it should be done inplace."
                    )

        load(self, state_dict)
        load = None  # (break the load -> load reference cycle, as torch does)
        if strict:
            if unexpected:
                errors.insert(
                    0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected))
                )
            if missing:
                errors.insert(
                    0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing))
                )
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    self.__class__.__name__, "\n\t".join(errors)
                )
            )
        return _IncompatibleKeys(missing, unexpected)

    # ---- hooks ---------------------------------------------------------------------------------------------

    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        handle = _add_hook(self._forward_pre_hooks, hook, prepend, self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False
    ) -> RemovableHandle:
        handle = _add_hook(
            self._forward_hooks,
            hook,
            prepend,
            self._forward_hooks_with_kwargs,
            self._forward_hooks_always_called,
        )
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        if self._is_full_backward_hook is False:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single Module. "
                "Please use only one of them."
            )
        self._is_full_backward_hook = True
        return _add_hook(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """The old node-level hook: ``hook(module, grad_input, grad_output)`` on the output's grad_fn."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single Module. "
                "Please use only one of them."
            )
        self._is_full_backward_hook = False
        return _add_hook(self._backward_hooks, hook, False)

    def _call_impl(self, *args, **kwargs):
        if STATE.torch_function and _torch_function.forward_needs_general_path(args, kwargs):
            # (its forward's fast internals, unlike torch's calls of torch.nn.functional, are not routed)
            with _torch_function.GeneralPath():
                return self._call_impl(*args, **kwargs)
        d = self.__dict__
        if not (
            d["_forward_hooks"]
            or d["_forward_pre_hooks"]
            or d["_backward_hooks"]
            or d["_backward_pre_hooks"]
            or _global_forward_hooks
            or _global_forward_pre_hooks
            or _global_backward_hooks
            or _global_backward_pre_hooks
        ):
            if STATE.observed:
                return _observed_forward(self, args, kwargs)
            return self.forward(*args, **kwargs)
        result = None
        called_always = set()
        try:
            pre_bw_hooks = self._get_backward_pre_hooks()
            full_hooks, old_hooks = self._get_backward_hooks()
            for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
                if STATE.observed:
                    _emit_module_hook("module_forward_pre", self, hook)
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    out = hook(self, args, kwargs)
                    if out is not None:
                        if isinstance(out, tuple) and len(out) == 2:
                            args, kwargs = out
                        else:
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                f"but got {out}."
                            )
                else:
                    out = hook(self, args)
                    if out is not None:
                        args = out if isinstance(out, tuple) else (out,)
            bw_hook = None
            if full_hooks or pre_bw_hooks:
                bw_hook = BackwardHook(self, full_hooks, pre_bw_hooks)
                args = bw_hook.setup_input_hook(args)
            result = _observed_forward(self, args, kwargs) if STATE.observed else self.forward(*args, **kwargs)
            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if (
                    hook_id in self._forward_hooks_always_called
                    or hook_id in _global_forward_hooks_always_called
                ):
                    called_always.add(hook_id)
                if STATE.observed:
                    _emit_module_hook("module_forward", self, hook)
                if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                    out = hook(self, args, kwargs, result)
                else:
                    out = hook(self, args, result)
                if out is not None:
                    result = out
            if bw_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn(
                        "For backward hooks to be called, module output should be a Tensor or a tuple of "
                        f"Tensors but received {type(result)}",
                        stacklevel=2,
                    )
                result = bw_hook.setup_output_hook(result)
            if old_hooks:
                var = result
                while not isinstance(var, Tensor):
                    var = (
                        next(v for v in var.values() if isinstance(v, Tensor))
                        if isinstance(var, dict)
                        else var[0]
                    )
                grad_fn = var.grad_fn
                if grad_fn is not None:
                    for hook in old_hooks:
                        # (named after the user's hook, as torch's _WrappedHook, for the hook errors)
                        grad_fn.register_hook(functools.update_wrapper(functools.partial(_old_style_hook, hook, self),
                                                                       hook))
                    self._maybe_warn_non_full_backward_hook(args, result, grad_fn)
            return result
        except Exception:
            # (PyTorch calls the global ones without kwargs, whatever they were registered with)
            for hook_id, hook in _global_forward_hooks.items():
                if hook_id in _global_forward_hooks_always_called and hook_id not in called_always:
                    try:
                        out = hook(self, args, result)
                        if out is not None:
                            result = out
                    except Exception as e:  # noqa: BLE001
                        warnings.warn(
                            "global module forward hook with ``always_call=True`` raised an exception that was "
                            f"silenced as another error was raised in forward: {e}",
                            stacklevel=2,
                        )
            for hook_id, hook in self._forward_hooks.items():
                if hook_id in self._forward_hooks_always_called and hook_id not in called_always:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            out = hook(self, args, kwargs, result)
                        else:
                            out = hook(self, args, result)
                        if out is not None:
                            result = out
                    except Exception as e:  # noqa: BLE001
                        warnings.warn(
                            "module forward hook with ``always_call=True`` raised an exception that was "
                            f"silenced as another error was raised in forward: {e}",
                            stacklevel=2,
                        )
            raise

    __call__ = _call_impl

    def _get_backward_hooks(self) -> tuple[list, list]:
        """(full, non-full) backward hooks for a call: the global ones first, then the module's own."""
        full: list = []
        non_full: list = []
        if _global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        if _global_is_full_backward_hook is False:
            non_full += _global_backward_hooks.values()
        if self._is_full_backward_hook is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _get_backward_pre_hooks(self) -> list:
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    def _maybe_warn_non_full_backward_hook(self, inputs, result, grad_fn) -> None:
        """PyTorch's FutureWarnings for a non-full backward hook whose grad_input or grad_output will be
        incomplete: the module's forward is more than the one node the hook is attached to."""
        if not isinstance(result, Tensor):
            if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
                warnings.warn(
                    "Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
                    "Tensors is deprecated and will be removed in future versions. This hook will be missing "
                    "some of the grad_output. Please use register_full_backward_hook to get the documented "
                    "behavior.", FutureWarning, stacklevel=2)
                return
        else:
            result = (result,)
        if not isinstance(inputs, Tensor):
            if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
                warnings.warn(
                    "Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
                    "tuple of Tensors is deprecated and will be removed in future versions. This hook will be "
                    "missing some of the grad_input. Please use register_full_backward_hook to get the "
                    "documented behavior.", FutureWarning, stacklevel=2)
                return
        else:
            inputs = (inputs,)
        out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
        if len(out_grad_fn) == 0 or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
            warnings.warn(
                "Using a non-full backward hook when outputs are nested in python data structure is deprecated "
                "and will be removed in future versions. This hook will be missing some grad_output.",
                FutureWarning, stacklevel=2)
        elif len(out_grad_fn) > 1:
            warnings.warn(
                "Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                "deprecated and will be removed in future versions. This hook will be missing some grad_output. "
                "Please use register_full_backward_hook to get the documented behavior.",
                FutureWarning, stacklevel=2)
        else:
            inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
            next_functions = {n[0] for n in grad_fn.next_functions}
            if inputs_grad_fn != next_functions:
                warnings.warn(
                    "Using a non-full backward hook when the forward contains multiple autograd Nodes is "
                    "deprecated and will be removed in future versions. This hook will be missing some "
                    "grad_input. Please use register_full_backward_hook to get the documented behavior.",
                    FutureWarning, stacklevel=2)

    # ---- printing ------------------------------------------------------------------------------------------

    def _get_name(self) -> str:
        return self.__class__.__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


def _observed_forward(module: Module, args: tuple, kwargs: dict):
    """``module.forward(*args, **kwargs)`` while someone observes: the call sits on ``MODULE_CALLS`` meanwhile.

    A tracegrad module called from another one's forward was called by tracegrad code only, so it inherits
    the caller's note (for source tracking: the user's line that called the model)."""
    if "forward" in module.__dict__:
        own = False  # assigned on the instance: the user's function
    else:
        cls = type(module)
        own = cls.__dict__.get("_tg_own_forward")
        if own is None:
            own = _own_forward(cls)
    parent = MODULE_CALLS[-1] if MODULE_CALLS else None
    MODULE_CALLS.append([own, parent[1] if own and parent is not None and parent[0] else None])
    try:
        return module.forward(*args, **kwargs)
    finally:
        MODULE_CALLS.pop()


def _own_forward(cls: type) -> bool:
    """Whether ``cls.forward`` is tracegrad's own code, worked out once and kept on the class."""
    code = getattr(cls.forward, "__code__", None)
    own = code is not None and is_own_file(code.co_filename)
    type.__setattr__(cls, "_tg_own_forward", own)
    return own


def _emit_module_hook(kind: str, module, hook) -> None:
    _emit_event("hook", kind=kind, node=None, hook=hook, output_nr=None, tensor=None, module=module)


def _old_style_hook(hook, module, grad_input, grad_output):
    result = hook(module, grad_input, grad_output)
    return result


def _tensors_to_share(module: Module) -> list:
    """What ``share_memory`` moves: every parameter, its grad and every buffer of ``module`` and its submodules."""
    tensors = []
    for each in module.modules():
        for param in each._parameters.values():
            if param is not None:
                tensors.append(param)
                if param._grad is not None:
                    tensors.append(param._grad)
        tensors.extend(buf for buf in each._buffers.values() if buf is not None)
    return tensors
