"""Shared machinery of the element-wise optimizers (Adadelta, Adamax, ASGD, NAdam, RAdam, Rprop).

Each of them runs PyTorch's single-tensor update: state is created lazily per parameter, then one NumPy update
rule runs per parameter that has a gradient. Subclasses supply ``_init_state`` and ``_update``, which advances
each tensor's version after each of PyTorch's in-place ops on it (so a step that fails part-way leaves PyTorch's
versions).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ._fused import lerp_  # noqa: F401 (the optimizers import it from here)
from ._refusals import refuse_at_step, refuse_real_states
from .optimizer import Optimizer, array_options, as_real

__all__ = ["PerParamOptimizer", "lerp_", "decay_in_place"]


def decay_in_place(p: Tensor, factor: float) -> None:
    """Decoupled weight decay: ``p *= factor`` as its own in-place write (its own version bump), into a complex
    parameter's ``view_as_real`` (as NAdam and RAdam, which view before decaying)."""
    p._before_write()
    decayed = as_real(p._data)
    decayed *= factor
    p._bump_version()


class PerParamOptimizer(Optimizer):
    """An optimizer whose step updates each parameter independently of the others."""
    _group_defaults_on_load = (("foreach", None), ("maximize", False), ("differentiable", False), ("capturable", False))
    def _init_state(self, p: Tensor, group: dict[str, Any], state: dict[str, Any]) -> None:
        raise NotImplementedError

    def _update(self, p: Tensor, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        raise NotImplementedError

    def __init_subclass__(cls, **kwargs) -> None:
        # PyTorch's Adadelta, Adamax... each define their own ``step``: its name is in Python's errors for wrong
        # arguments ("Rprop.step() got an unexpected keyword argument 'foo'") and in the step hooks' messages
        if cls.step is PerParamOptimizer.step:
            cls.step = _step_named_for(cls)
        super().__init_subclass__(**kwargs)

    def _init_group_state(self, group: dict[str, Any]) -> None:
        for p in group["params"]:
            if p._grad is not None and len(self.state[p]) == 0:
                self._init_state(p, group, self.state[p])

    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            refuse_at_step(self, group)
            if group["foreach"] and self._foreach_update is not None:
                self._step_foreach(group)
                continue
            # (under differentiable defaults every group runs as tensor operations, under autograd)
            if self._single_tensor_in_tensor_ops(group):
                self._step_differentiable(group)
                continue
            options = array_options(group)
            for p in group["params"]:
                if p._grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    self._init_state(p, group, state)  # (from the options as given: tensors as PyTorch reads them)
                if self._views_states_first:
                    refuse_real_states(self, p)
                grad = p._grad._data
                if group["maximize"]:
                    grad = -grad
                self._update(p, grad, state, options)
        return loss


def _step_named_for(cls: type) -> Callable:
    """``PerParamOptimizer.step`` itself (not its hook and quiet wrappers, which ``Optimizer.__init_subclass__``
    puts around the copy) as a function of ``cls``: its code's qualified name and its module are ``cls``'s."""
    step = inspect.unwrap(PerParamOptimizer.step)
    code = step.__code__.replace(co_qualname=f"{cls.__qualname__}.{step.__name__}")
    named = types.FunctionType(code, step.__globals__, step.__name__, step.__defaults__, step.__closure__)
    named.__qualname__ = code.co_qualname
    named.__module__ = cls.__module__
    named.__doc__ = step.__doc__
    named.__kwdefaults__ = step.__kwdefaults__
    return named

