"""Raw-NumPy backward rules for the hottest operators, used only in a plain ``backward()``.

Every backward rule is written in dispatched tracegrad operators (``registry.OpDef.vjp``): that keeps it
differentiable, batchable and observable. In a plain ``backward()`` none of that can matter: no graph of
the gradient is recorded (grad mode is off), and nothing special is active (no transform, observer,
anomaly or inference mode: ``STATE.special`` is False). There a rule here computes the same gradient with
the very NumPy calls the dispatched rule would end in, on the arrays directly, skipping the per-operator
wrapping (about 1 µs an operator, which is most of the cost of a tiny node's backward).

A rule maps the incoming gradient's array to the input gradients' arrays. It returns None when it cannot
promise the dispatched rule's exact result (mixed or non-float dtypes, integer scalars, saved values with
pack/unpack hooks, stale versions, freed buffers); the node then runs its dispatched rule, which also raises
the proper errors. Rules never call user code before deciding, so falling back is unobservable.

``install`` gives each operator's node class an ``apply`` that tries its rule first.
"""

from __future__ import annotations

import numpy as np

from .._state import STATE
from .._tensor import Tensor, _new
from ..autograd.saved import SavedTensor, plain_array
from .nn_ops.activation import log_softmax
from .pointwise import _tanh_backward_kernel, add, cos, exp, mul, sin, sub, tanh
from .reductions import _sum_kernel
from .registry import OpDef, OpNode

_ndarray = np.ndarray
_asarray = np.asarray
_multiply, _negative, _sin, _cos, _exp = np.multiply, np.negative, np.sin, np.cos, np.exp
_new_tensor = _new


def _float_pair(g: np.ndarray, x) -> bool:
    # The dispatched ``g * f(x)`` calls the NumPy ufunc itself only for equal float dtypes.
    return x is not None and g.dtype is x.dtype and g.dtype.kind == "f"


def _needs2(node) -> tuple:
    """``node.needs_input_grad`` of a two-input node, without the property call."""
    needs = node._needs
    if needs is not None:
        return needs
    e0, e1 = node._edges
    return e0[0] is not None, e1[0] is not None


# ---- rules: (node, gradient array) -> input gradient array(s), or None to fall back -------------------------


def _sin_rule(node, gd: np.ndarray):
    x = plain_array(node._saved[0])
    if not _float_pair(gd, x):
        return None
    return _multiply(gd, _cos(x))  # g * cos(x)


def _cos_rule(node, gd: np.ndarray):
    x = plain_array(node._saved[0])
    if not _float_pair(gd, x):
        return None
    return _negative(_multiply(gd, _sin(x)))  # -(g * sin(x))


def _exp_rule(node, gd: np.ndarray):
    y = plain_array(node._saved[0])
    if not _float_pair(gd, y):
        return None
    return _multiply(gd, y)  # g * result


def _tanh_rule(node, gd: np.ndarray):
    y = plain_array(node._saved[0])
    if y is None:
        return None
    return _tanh_backward_kernel(gd, y)  # tanh_backward(g, y) runs its kernel whatever the dtypes


def _log_softmax_rule(node, gd: np.ndarray):
    y = plain_array(node._saved[0])
    if not _float_pair(gd, y):
        return None
    # sub(g, mul(exp(y), sum(g, dim, keepdim=True))): the kernels those operators run, in the same order
    total = _sum_kernel(gd, node._attrs[0], True, None)
    if total.__class__ is not _ndarray:
        total = _asarray(total)
    return sub.kernel(gd, _multiply(_exp(y), total), 1)


def _factor(gd: np.ndarray, saved):
    """The other operand of a product as the dispatched ``g * other`` would see it, or None (fall back)."""
    if saved.__class__ is SavedTensor:
        v = plain_array(saved)
        return v if _float_pair(gd, v) else None
    if saved.__class__ is float and gd.dtype.kind == "f":
        return saved
    return None


def _mul_rule(node, gd: np.ndarray):
    need_a, need_b = _needs2(node)
    sa, sb = node._saved
    b = _factor(gd, sb) if need_a else 0.0
    a = _factor(gd, sa) if need_b else 0.0
    if a is None or b is None:
        return None
    return (_multiply(gd, b) if need_a else None, _multiply(gd, a) if need_b else None)


# ---- node ``apply`` methods --------------------------------------------------------------------------------


def _wrap(data) -> Tensor:
    """A fresh tensor, as the dispatched operators return it under no_grad (ufuncs return NumPy scalars for
    0-d operands)."""
    out = _new_tensor(Tensor)
    out._data = data if data.__class__ is _ndarray else _asarray(data)
    out._rg = False
    out._gfn = None
    out._vc = None
    return out


def _unary_apply(rule):
    fallback = OpNode.apply
    state = STATE

    def apply(self, grads):
        g = grads[0]
        if g is not None and not state.grad_enabled and not state.special:
            data = rule(self, g._data)
            if data is not None:
                return [_wrap(data)]
        return fallback(self, grads)

    return apply


def _binary_apply(rule):
    fallback = OpNode.apply
    state = STATE

    def apply(self, grads):
        g = grads[0]
        if g is not None and not state.grad_enabled and not state.special:
            pair = rule(self, g._data)
            if pair is not None:
                a, b = pair
                return [None if a is None else _wrap(a), None if b is None else _wrap(b)]
        return fallback(self, grads)

    return apply


def _add_apply():
    fallback = OpNode.apply
    state = STATE

    def apply(self, grads):
        g = grads[0]
        if g is not None and not state.grad_enabled and not state.special and self._attrs[0] == 1:
            need_a, need_b = _needs2(self)
            return [g if need_a else None, g if need_b else None]  # the gradient itself, as the dispatched rule
        return fallback(self, grads)

    return apply


UNARY: dict[OpDef, object] = {sin: _sin_rule, cos: _cos_rule, exp: _exp_rule, tanh: _tanh_rule,
                               log_softmax: _log_softmax_rule}
BINARY: dict[OpDef, object] = {mul: _mul_rule}


def install() -> None:
    for op, rule in UNARY.items():
        op.node_class.apply = _unary_apply(rule)
    for op, rule in BINARY.items():
        op.node_class.apply = _binary_apply(rule)
    add.node_class.apply = _add_apply()
