"""``Optimizer``: parameter groups, per-parameter state, state_dict round trips and step hooks.

Updates are written straight into the parameters' NumPy storage (PyTorch runs ``step`` under ``no_grad``);
each written parameter's version counter is bumped like an in-place operation would.
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from itertools import chain
from typing import Any

import numpy as np

import tracegrad as _tg

from .._state import STATE
from .._tensor import Tensor, _wrap
from ..autograd.grad_mode import enable_grad, set_grad_enabled
from ..autograd.node import RemovableHandle
from ..backend.dtypes import float64, from_numpy_dtype, get_default_dtype
from ..ops.aten_vec import as_caller, quietly_for_caller
from ..ops.complex_ops import _view_as_real_kernel
from . import _watched
from ._multi_tensor import grouped_by_dtype

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Singleton marking a hyper-parameter without a default (``lr`` of some optimizers)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()

_global_pre_hooks: dict = OrderedDict()
_global_post_hooks: dict = OrderedDict()


def register_optimizer_step_pre_hook(hook: Callable) -> RemovableHandle:
    handle = RemovableHandle(_global_pre_hooks)
    _global_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook: Callable) -> RemovableHandle:
    handle = RemovableHandle(_global_post_hooks)
    _global_post_hooks[handle.id] = hook
    return handle


_HALF = np.dtype(np.float16)


def updates_need_tensor_ops(group: dict[str, Any]) -> bool:
    """Whether the (not fused) single-tensor update of ``group`` must run as tensor operations, which are PyTorch's
    own, rather than as the NumPy updates, which follow them for parameters and gradients of one float, double or
    complex dtype: where a parameter is half (each of PyTorch's ops computes in float and reads its numbers its own
    way, rounding once) or has a gradient of another dtype (set through ``.grad.data``: each op promotes or refuses
    it in its own way)."""
    if group.get("fused"):
        return False
    for p in group["params"]:
        g = p._grad
        if g is None:
            continue
        dtype, grad_dtype = p._data.dtype, g._data.dtype
        if dtype is _HALF or (grad_dtype is not dtype and grad_dtype != dtype):
            return True
    return False


def _typename(obj) -> str:
    from ..nn.modules.module import typename

    return typename(obj)


def _hooked_step(func: Callable) -> Callable:
    """Wrap a subclass's ``step`` to run step hooks. (Only an LR scheduler's own wrapper records that a step
    happened, as torch's: steps taken before the scheduler was made do not count.)"""

    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        # (the hooks see, and may replace, the whole call's arguments, the optimizer first, as torch's)
        if STATE.torch_function:  # (a handler watches: it sees torch's profiler calls around the step)
            return _watched.hooked_step(self, func, (self, *args), kwargs,
                                        functools.partial(_run_pre_hooks, self, func),
                                        functools.partial(_run_post_hooks, self))
        if not (
            _global_pre_hooks
            or self._optimizer_step_pre_hooks
            or _global_post_hooks
            or self._optimizer_step_post_hooks
        ):
            return func(self, *args, **kwargs)
        args, kwargs = _run_pre_hooks(self, func, (self, *args), kwargs)
        out = func(*args, **kwargs)
        _run_post_hooks(self, args, kwargs)
        return out

    wrapper.hooked = True
    return wrapper


def _quiet_update(func: Callable, reads_self_from_args: bool) -> Callable:
    """A built-in optimizer's ``step`` with NumPy's floating-point warnings off. PyTorch's update turns an inf
    gradient into inf or NaN parameters and state silently, where NumPy warns; tracegrad's import-time filter
    hides that, but a filter a program installs later (``simplefilter("error")``) would make it an exception
    midway through the update. The closure still runs under the caller's own error state (``_closure_loss``).

    ``reads_self_from_args``: PyTorch's ``_use_grad_for_differentiable`` wrapper reads
    ``args[0].defaults["differentiable"]`` first, so a step pre hook that returns arguments without the optimizer
    meets an IndexError there, or an AttributeError naming ``defaults`` where something else comes first."""

    @functools.wraps(func)
    def quiet_step(*args, **kwargs):
        if reads_self_from_args:
            _differentiable_default(args[0])
        return quietly_for_caller(func, *args, **kwargs)

    return quiet_step


def _differentiable_default(optimizer) -> Any:
    return optimizer.defaults["differentiable"]


def _run_pre_hooks(optimizer, func: Callable, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The global then the optimizer's step pre-hooks; the arguments the step gets (a hook may replace them)."""
    for pre in chain(_global_pre_hooks.values(), optimizer._optimizer_step_pre_hooks.values()):
        result = pre(optimizer, args, kwargs)
        if result is not None:
            if isinstance(result, tuple) and len(result) == 2:
                args, kwargs = result
            else:
                raise RuntimeError(f"{func} must return None or a tuple of (new_args, new_kwargs), but got {result}.")
    return args, kwargs


def _run_post_hooks(optimizer, args: tuple, kwargs: dict) -> None:
    for post in chain(optimizer._optimizer_step_post_hooks.values(), _global_post_hooks.values()):
        post(optimizer, args, kwargs)


class Optimizer:
    """Base class of the optimizers. Subclasses implement ``step``."""

    # How PyTorch's update refuses options on CPU (``_refusals``): the names its capturable device check gives the
    # tensors and whether its device list has "xla", in the single-tensor and in the foreach update (``None``: the
    # same names); whether the foreach update asserts ``not differentiable``, and whether after that device check.
    _capturable_what: str = "params and state_steps"
    _capturable_xla: bool = True
    _foreach_capturable_what: str | None = None
    _foreach_capturable_xla: bool = False
    _foreach_refuses_autograd: bool = True
    _foreach_capturable_first: bool = False
    # Whether PyTorch's optimizer has a ``capturable`` option at all, and a ``fused`` one (a loaded group's
    # ``fused`` key makes its scalar states float32 only where it has: the others ignore that key)
    _has_capturable: bool = True
    _has_fused: bool = False
    # The states PyTorch views as real for a complex parameter, and whether its single-tensor update does so before
    # its first write: real state loaded for a complex parameter is refused there
    _states_viewed_as_real: tuple[str, ...] = ()
    _views_states_first: bool = False
    # Group options that newer versions added, filled in where a loaded state_dict or pickle lacks them: each
    # optimizer's ``__setstate__`` in PyTorch sets these defaults (``group.setdefault``), in its own list.
    _group_defaults_on_load: tuple[tuple[str, Any], ...] = ()
    # Whether PyTorch's ``step`` is wrapped in ``_use_grad_for_differentiable`` (False: in ``torch.no_grad()``)
    _step_switches_grad_mode: bool = True
    # The per-parameter states PyTorch keeps as 0-d tensors and its ``__setstate__`` turns from numbers (a
    # checkpoint of an older PyTorch, or written by hand) into tensors on load
    _scalar_state_keys: tuple[str, ...] = ()

    def __init__(self, params, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self._optimizer_step_pre_hooks: dict = OrderedDict()
        self._optimizer_step_post_hooks: dict = OrderedDict()
        self._optimizer_state_dict_pre_hooks: dict = OrderedDict()
        self._optimizer_state_dict_post_hooks: dict = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks: dict = OrderedDict()
        self._optimizer_load_state_dict_post_hooks: dict = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, but "
                "got " + _typename(params)
            )
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # PyTorch's single-tensor update as tensor operations, for a ``differentiable`` group (its update runs under
    # autograd, so gradients flow through the steps): called as ``(param, grad, state, group)`` for each parameter
    # with a gradient, ``grad`` negated where ``maximize``, the group's options as given (tensors stay tensors).
    # None: the NumPy update serves that option too.
    _differentiable_update = None

    def _single_tensor_in_tensor_ops(self, group: dict[str, Any]) -> bool:
        """Whether the single-tensor step of ``group`` runs as tensor operations (``_step_differentiable``): where
        the group is ``differentiable``, and where the optimizer's defaults are, whose ``step`` runs under autograd
        (PyTorch's ``_use_grad_for_differentiable`` reads ``defaults``), recording a group's update whatever its own
        ``differentiable`` says; and where a parameter is half or has a gradient of another dtype
        (``updates_need_tensor_ops``)."""
        if self._differentiable_update is None:
            return False
        return bool(group["differentiable"] or self.defaults.get("differentiable")) or updates_need_tensor_ops(group)

    def _step_differentiable(self, group: dict[str, Any]) -> None:
        """PyTorch's single-tensor step of ``group`` in tensor operations (``_differentiable_update``, which follows
        its ``differentiable`` branches where the group is so): every state made first (its ``_init_group``), then
        each parameter's update, with autograd as ``defaults["differentiable"]`` says (PyTorch's
        ``_use_grad_for_differentiable``)."""
        self._init_group_state(group)
        with set_grad_enabled(bool(self.defaults.get("differentiable"))):
            options = self._single_tensor_options(group)
            for p in group["params"]:
                if p._grad is not None:
                    grad = -p._grad if group["maximize"] else p._grad
                    self._differentiable_update(p, grad, self.state[p], options)

    def _single_tensor_options(self, group: dict[str, Any]) -> dict[str, Any]:
        """The options ``_differentiable_update`` gets: the group's as they are, or as the single-tensor update
        converts them once before its loop (Adam's ``_to_scalar`` of ``lr`` and the betas)."""
        return group

    # PyTorch's foreach update (its ``_multi_tensor_*``): called as ``(params, grads, states, group)`` for each
    # dtype's parameters with a gradient, ``states`` their state tensors as lists by key, the group's options as
    # given (tensors stay tensors). None: the optimizer's single-tensor update serves the foreach option too.
    _foreach_update = None

    def _step_foreach(self, group: dict[str, Any]) -> None:
        """PyTorch's foreach step of ``group``: every state made first (its ``_init_group``), then one update of
        all the parameters with a gradient per dtype, with autograd as ``defaults["differentiable"]`` says. The
        grouping refuses a state entry of another dtype than its parameter's (loaded: load_state_dict casts only
        floating parameters' state) once the state is made, as PyTorch's."""
        self._init_group_state(group)
        with set_grad_enabled(bool(self.defaults.get("differentiable"))):
            self._foreach_updates(group, [p for p in group["params"] if p._grad is not None])

    def _foreach_updates(self, group: dict[str, Any], params: list) -> None:
        """The foreach update of ``params``, the group's parameters with a gradient, their state made."""
        if not params:
            return
        keys = list(self.state[params[0]])
        state_lists = [[self.state[p][key] for p in params] for key in keys]
        for same_dtype, grads, *states in grouped_by_dtype(params, [p._grad for p in params], *state_lists):
            self._foreach_update(same_dtype, grads, dict(zip(keys, states)), group)

    def _init_group_state(self, group: dict[str, Any]) -> None:
        """Create the state of ``group``'s parameters that have a gradient, as PyTorch does before refusing."""

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            if cls.__module__.partition(".")[0] == __name__.partition(".")[0]:  # (tracegrad's own: not a user's)
                step = _quiet_update(step, cls._step_switches_grad_mode)
            cls.step = _hooked_step(step)  # (the hooks outside: they are the user's code)

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for group in self.__dict__.get("param_groups", ()):
            for key, value in self._group_defaults_on_load:
                group.setdefault(key, value)
            self._scalar_states_as_tensors(group)
        for name in (
            "_optimizer_step_pre_hooks",
            "_optimizer_step_post_hooks",
            "_optimizer_state_dict_pre_hooks",
            "_optimizer_state_dict_post_hooks",
            "_optimizer_load_state_dict_pre_hooks",
            "_optimizer_load_state_dict_post_hooks",
        ):
            if name not in self.__dict__:
                self.__dict__[name] = OrderedDict()
        self.defaults.setdefault("differentiable", False)  # (as torch's: a step reads it first)

    def _scalar_states_as_tensors(self, group: dict[str, Any]) -> None:
        """``group``'s scalar states given as numbers made 0-d tensors of the scalar dtype (float32 for a fused
        group), as each PyTorch optimizer's ``__setstate__`` does: a loaded old checkpoint then steps. The step
        goes through ``float()`` first; ASGD's ``eta``/``mu`` and NAdam's ``mu_product`` go to ``torch.tensor`` as
        they are (its errors for None or a string)."""
        if not self._scalar_state_keys:
            return
        dtype = from_numpy_dtype(scalar_dtype(self._has_fused and bool(group.get("fused"))))
        for p in group["params"]:
            p_state = self.state.get(p, ())
            if len(p_state) == 0:
                continue
            for key in self._scalar_state_keys:
                value = p_state[key]
                if not isinstance(value, Tensor):
                    p_state[key] = _tg.tensor(float(value) if key == "step" else value, dtype=dtype)

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            text += "\n"
            text += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"

    # ---- groups --------------------------------------------------------------------------------------------

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering of "
                "tensors in sets will change between runs. Please use a list instead."
            )
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are missing"
                )
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is " + _typename(p)
                )
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    f"parameter group didn't specify a value of required optimization parameter {name}"
                )
            param_group.setdefault(name, default)
        ids = [id(p) for p in tensors]
        if len(ids) != len(set(ids)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                "an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. cannot add param group "
                    f"{which} to the optimizer"
                )
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- gradients -----------------------------------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        if STATE.torch_function:  # (a handler watches: torch's calls, one by one)
            _watched.zero_grad(self, set_to_none)
            return
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g._gfn is not None:
                        g.detach_()
                    else:
                        g._rg = False
                    g._before_write()
                    g._data[...] = 0
                    g._bump_version()

    def step(self, closure: Callable | None = None):
        raise NotImplementedError

    @staticmethod
    def _closure_loss(closure: Callable | None) -> Any:
        """``closure()`` with gradients on, under NumPy's error state where ``step`` was called (the user's code,
        not the quiet update's: ``_quiet_update``)."""
        if closure is None:
            return None
        with enable_grad():
            return as_caller(closure)

    def _real_params_with_grad(self, group: dict[str, Any]) -> list:
        """The group's parameters that have a gradient, refusing complex ones as torch's optimizers without
        complex support do (Adafactor, Muon)."""
        params = []
        for p in group["params"]:
            if p._grad is None:
                continue
            if p.is_complex():
                raise RuntimeError(f"{type(self).__name__} does not support complex parameters")
            params.append(p)
        return params

    # ---- state dict ----------------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping: dict[int, int] = {}
        start = 0

        def pack(group: dict) -> dict:
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start) if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        result = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            out = hook(self, result)
            if out is not None:
                result = out
        return result

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            out = hook(self, state_dict)
            if out is not None:
                state_dict = out
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError(
                "loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                "group"
            )
        id_map = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in groups),
            )
        )

        def cast(param: Tensor, value, key=None):
            if isinstance(value, Tensor):
                if key != "step" and param.is_floating_point() and value.dtype is not param.dtype:
                    return value.to(param.dtype)
                return value
            if isinstance(value, dict):
                return {k: cast(param, v, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v) for v in value)
            return value

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v
        new_groups = []
        for g, ng in zip(groups, saved_groups):
            ng["params"] = g["params"]
            if "param_names" in g and "param_names" not in ng:
                ng["param_names"] = g["param_names"]
            new_groups.append(ng)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # ---- hooks ---------------------------------------------------------------------------------------------

    def register_step_pre_hook(self, hook: Callable) -> RemovableHandle:
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook: Callable) -> RemovableHandle:
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        return _register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        return _register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        return _register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        return _register(self._optimizer_load_state_dict_post_hooks, hook, prepend)


def _register(hooks: dict, hook: Callable, prepend: bool) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


# ---- helpers for the update rules --------------------------------------------------------------------------


def scalar_dtype(fused: bool = False) -> np.dtype:
    """PyTorch's ``_get_scalar_dtype``: the dtype of the optimizers' scalar state tensors (step counts, ASGD's eta
    and mu, NAdam's mu product), float64 while that is the default dtype, else (and always for a fused update)
    float32."""
    if not fused and get_default_dtype() is float64:
        return np.dtype(np.float64)
    return np.dtype(np.float32)


def step_tensor(fused: bool = False) -> Tensor:
    """The per-parameter step count, a 0-d tensor of ``scalar_dtype`` as in PyTorch's state."""
    return _wrap(np.zeros((), dtype=scalar_dtype(fused)))


def array_options(group: dict[str, Any]) -> dict[str, Any]:
    """The group as the updates' NumPy arithmetic reads it: tensor options (``lr``, ``eps``, a tensor in ``betas``...)
    as their arrays (with its ``__array_priority__`` NumPy would defer its operators to the tensor, which refuses
    arrays), a one-element float64 tensor as a Python float. The group itself when it holds no tensor option."""
    if not _has_tensor_option(group):
        return group

    def as_array(value):
        if isinstance(value, Tensor):
            return _as_operand(value._data)
        return tuple(as_array(v) for v in value) if value.__class__ is tuple else value

    return {key: value if key == "params" else as_array(value) for key, value in group.items()}


def _as_operand(data: np.ndarray) -> Any:
    """A tensor option's array as NumPy must see it to compute as PyTorch does. A 0-d tensor does not widen the
    dtype of a tensor with dimensions (a float64 lr leaves a float32 update in float32), and a float64 one computes
    with numbers in float64: a Python float does both in NumPy, where a float64 array would make the update
    float64. A float32 array keeps float32 arithmetic with numbers, as a float32 tensor does. A one-element array
    is made 0-d: PyTorch's updates take such an option as a scalar (``_to_scalar``, a ``Scalar`` argument), so an
    lr of shape (1, 1) neither widens a parameter's update nor fails against a 0-d parameter."""
    if data.size != 1:
        return data
    if data.dtype == np.float64:
        return float(data.reshape(()))
    return data.reshape(())


_PLAIN_OPTION_TYPES = frozenset({float, int, bool, type(None), str})


def _has_tensor_option(group: dict[str, Any]) -> bool:
    """Whether an option of ``group`` (not its params) is a tensor or a tuple holding one. A loop with the usual
    numbers, flags and None recognised by their class first: this runs once per group per step."""
    plain = _PLAIN_OPTION_TYPES
    for key, value in group.items():
        cls = value.__class__
        if cls in plain or key == "params":
            continue
        if isinstance(value, Tensor) or (cls is tuple and any(isinstance(v, Tensor) for v in value)):
            return True
    return False


def count_writes(t: Tensor, times: int) -> None:
    """Advance ``t``'s version by ``times``: PyTorch bumps it once per in-place op, and its update runs several on
    a tensor (``mul_`` then ``addcmul_`` is two) where ours writes the NumPy array once."""
    t._version_counter()[0] += times


def as_real(a: np.ndarray) -> np.ndarray:
    """``a`` as PyTorch's optimizers update it: a complex parameter, its gradient and its state through their
    ``view_as_real`` (pairs of independent reals: ``exp_avg_sq`` holds each part's square, not the complex square,
    and square roots, maxima and signs are taken part by part); a real array as it is. (A NumPy scalar, which
    arithmetic on a 0-d array gives, becomes an array first: strides over a scalar would read past its copy.)"""
    if a.dtype.kind != "c":
        return a
    return _view_as_real_kernel(a if a.__class__ is np.ndarray else np.asarray(a))


def state_as_real(p: Tensor, state: dict[str, Any], key: str) -> np.ndarray:
    """A state tensor as ``as_real`` gives it, for parameter ``p``: PyTorch views every state of a complex parameter
    as real, and refuses one that is not complex (load_state_dict casts state to floating parameters' dtype only,
    so real state loaded for a complex parameter stays real)."""
    a = state[key]._data
    if a.dtype.kind != "c" and p._data.dtype.kind == "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return as_real(a)


def zeros_state(p: Tensor) -> Tensor:
    return _wrap(np.zeros_like(p._data))


def check_tensor_lr(lr) -> None:
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")


def check_lr(lr) -> None:
    """PyTorch's learning-rate checks, a tensor's size first (else the comparison would raise)."""
    check_tensor_lr(lr)
    check_hparam(lr, "learning rate")


def check_hparam(value, name: str, low_inclusive: float = 0.0) -> None:
    if not low_inclusive <= value:
        raise ValueError(f"Invalid {name}: {value}")


def grads_of(group: dict) -> Iterable[tuple[Tensor, np.ndarray]]:
    for p in group["params"]:
        g = p._grad
        if g is not None:
            yield p, g._data


def checked_grads_of(group: dict, optimizer_name: str) -> Iterable[tuple[Tensor, Tensor]]:
    """Each parameter with a gradient, and the gradient, in order, refused as the newer optimizers' ``_init_group``
    refuses them (a complex parameter, a sparse gradient) when reached: state the caller made for the ones before
    stays made, as in PyTorch."""
    for p in group["params"]:
        grad = p._grad
        if grad is None:
            continue
        if p.is_complex():
            raise RuntimeError(f"{optimizer_name} does not support complex parameters")
        if grad.is_sparse:
            raise RuntimeError(f"{optimizer_name} does not support sparse gradients")
        yield p, grad
