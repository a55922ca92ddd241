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

``install`` gives each operator's node class the rule (``_array_rule``, which the engine's array loop calls) and
an ``apply`` that tries it first.
"""

from __future__ import annotations

import math

import numpy as np

from .._state import STATE
from .._strides import pointwise_result as _laid_out
from .._strides import zero_strides_kept
from .._tensor import Tensor, _new
from ..autograd.array_chain import as_tensors
from ..autograd.saved import SavedTensor, plain_array
from ..autograd.views import make_view
from .creation import _fill_scalar, _fill_tensor, _full_like_kernel, copy_, zero_
from .nn_ops.activation import log_softmax, log_softmax_backward_data, relu, threshold_backward
from .nn_ops.linear import addmm_node_op, linear_backward, mm_node_op, weight_t
from .nn_ops.loss import _nll_loss_1d2d, _nll_loss_nd, nll_loss_backward
from .pointwise import _tanh_backward_kernel, add, cos, div, exp, mul, sin, tanh
from .reductions_extra import _count, _mean_dim, _mean_full, _sum_full, keepdim_shape
from .registry import OpDef, OpNode
from .views import expand

_ndarray = np.ndarray
_asarray = np.asarray
_multiply, _negative, _sin, _cos, _subtract = np.multiply, np.negative, np.sin, np.cos, np.subtract
_broadcast_to, _prod = np.broadcast_to, math.prod
_div_kernel, _div_defaults = div.kernel, div.trailing_defaults


def _readonly_one(dtype) -> np.ndarray:
    one = np.ones((), dtype)
    one.flags.writeable = False
    return one


_ONES = {np.dtype(t): _readonly_one(t) for t in (np.float32, np.float64)}  # 0-d ones (_tanh_rule)


# (``plain_array(saved, gd)``: the saved array only if it has ``gd``'s float dtype, the case in which the
# dispatched ``g * f(x)`` calls the NumPy ufunc itself.)


def _needs2(node) -> tuple:
    """``node.needs_input_grad`` of a two-input node, without the property call."""
    needs = node._needs
    if needs is not None:
        return needs
    e0, e1 = node._edges
    return e0[0] is not None, e1[0] is not None


# ---- rules: (node, gradient array) -> one gradient array (or None) per edge, or None to fall back ----------


def _sin_rule(node, gd: np.ndarray):
    x = plain_array(node._saved[0], gd)
    if x is None:
        return None
    c = _cos(x)
    if gd.ndim < 2:  # (below 2 dims every layout is contiguous: no need to lay the results out)
        return (_multiply(gd, c),)  # g * cos(x)
    c = _laid_out(c, x)
    return (_laid_out(_multiply(gd, c), gd, c),)


def _cos_rule(node, gd: np.ndarray):
    x = plain_array(node._saved[0], gd)
    if x is None:
        return None
    s = _negative(_sin(x))
    if gd.ndim < 2:
        return (_multiply(gd, s),)  # g * -sin(x)
    s = _laid_out(s, x)  # (neg keeps sin's layout)
    return (_laid_out(_multiply(gd, s), gd, s),)


def _exp_rule(node, gd: np.ndarray):
    y = plain_array(node._saved[0], gd)
    if y is None:
        return None
    r = _multiply(gd, y)  # g * result
    return (r if r.ndim < 2 else _laid_out(r, gd, y),)


def _tanh_rule(node, gd: np.ndarray):
    y = plain_array(node._saved[0])
    if y is None:
        return None
    one = _ONES.get(y.dtype)
    if one is not None:
        # The kernel's ``g * (1 - y * y)``, the same ufuncs on the same values; a 0-d one of y's dtype gives
        # ``1 - y * y`` the dtype the Python 1 gives it, without NumPy's handling of a Python scalar (~250 ns).
        r = _multiply(gd, _subtract(one, _multiply(y, y)))
    else:
        r = _tanh_backward_kernel(gd, y)  # tanh_backward(g, y) runs its kernel whatever the dtypes
    return (r if r.ndim < 2 else _laid_out(r, gd, y),)


def _relu_rule(node, gd: np.ndarray):
    y = plain_array(node._saved[0])
    if y is None:
        return None
    r = threshold_backward.kernel(gd, y, 0)  # what run_op(threshold_backward, g, result, 0) runs
    return (r if r.ndim < 2 else _laid_out(r, y, gd),)  # (threshold_backward iterates self first)


def _log_softmax_rule(node, gd: np.ndarray):
    y = plain_array(node._saved[0], gd)
    if y is None or not gd.ndim:  # (a 0-d input: the dispatched rule, whose ufuncs return arrays)
        return None
    return (log_softmax_backward_data.kernel(gd, y, node._attrs[0], y.dtype),)  # (the dispatched rule's kernel)


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_EXACT_INT = 2 ** 53  # (an int up to this converts exactly to double, so NumPy and PyTorch read the same float)


def _number_factor(s, gd: np.ndarray):
    """A Python-number operand of ``mul`` as the dispatched ``g * s`` reads it, where ``np.multiply(gd, s)`` has its
    bits: a float, or an int exactly convertible to double, with a float32/float64 gradient (PyTorch's kernel reads
    the number in the gradient's dtype, as NumPy's weak scalar does). A half gradient reads it in float (the
    dispatched kernel's ``number_read_in_float``), and bools, complex numbers and integer gradients promote: None."""
    dt = gd.dtype
    if dt is not _F32 and dt is not _F64:
        return None
    c = s.__class__
    return s if c is float or (c is int and -_EXACT_INT <= s <= _EXACT_INT) else None


def _mul_rule(node, gd: np.ndarray):
    needs = node._needs
    if needs is None:
        e0, e1 = node._edges
        need_a, need_b = e0[0] is not None, e1[0] is not None
    else:
        need_a, need_b = needs
    sa, sb = node._saved
    # Each factor as the dispatched ``g * other`` would see it: a saved array of ``gd``'s float dtype (from a
    # SavedTensor or a record, autograd/saved.py), or a Python number (``_number_factor``); else None (fall back).
    if need_b:
        a = plain_array(sa, gd) if sa.__class__ is SavedTensor or sa.__class__ is tuple else _number_factor(sa, gd)
        if a is None:
            return None
        if not need_a:
            ga = _multiply(gd, a)
            return (None, ga if ga.ndim < 2 else _laid_out(ga, gd, a))  # (PyTorch's layout for mul's result)
    b = plain_array(sb, gd) if sb.__class__ is SavedTensor or sb.__class__ is tuple else _number_factor(sb, gd)
    if b is None:
        return None
    gb = _multiply(gd, b)
    if gb.ndim < 2:  # (below 2 dims every layout is contiguous)
        return (gb, _multiply(gd, a) if need_b else None)
    return (_laid_out(gb, gd, b), _laid_out(_multiply(gd, a), gd, a) if need_b else None)


def _add_rule(node, gd: np.ndarray):
    dt = gd.dtype
    if node._attrs[0] != 1 or (dt is not _F32 and dt is not _F64 and dt.kind == "c"):
        return None  # (a complex gradient: a real input takes its real part, the dispatched rule's handle_r_to_c)
    needs = node._needs  # (_needs2, inlined)
    if needs is None:
        e0, e1 = node._edges
        return (gd if e0[0] is not None else None, gd if e1[0] is not None else None)
    need_a, need_b = needs
    return (gd if need_a else None, gd if need_b else None)  # the gradient itself, as the dispatched rule


def _mean_full_rule(node, gd: np.ndarray):
    # div(expand(g, sizes), numel): the kernel div's fast path runs for a number divisor
    shape = node._in_meta[0][0]
    return (_div_kernel(_broadcast_to(gd, shape), _prod(shape), *_div_defaults),)


def _mean_dim_rule(node, gd: np.ndarray):
    # div(unsqueeze(g, reduced dims...).expand(sizes), count), as _mean_vjp
    shape = node._in_meta[0][0]
    dim, keepdim = node._attrs
    if not keepdim and shape:
        gd = gd.reshape(keepdim_shape(shape, dim))
    return (_div_kernel(_broadcast_to(gd, shape), _count(shape, dim), *_div_defaults),)


def _arrays(saved: tuple):
    """The arrays of saved values that may be absent (None stays None), or None if one must be unpacked."""
    out = []
    for v in saved:
        if v is not None:
            v = plain_array(v)
            if v is None:
                return None
        out.append(v)
    return out


def _linear_rule(node, gd: np.ndarray):
    # AddmmBackward0 of the fused linear: _addmm_vjp's plain branch (bias, input, weight.t() gradients)
    needs = node._needs
    if needs is None:
        e = node._edges
        needs = (e[0][0] is not None, e[1][0] is not None, e[2][0] is not None)
    arrays = _arrays(node._saved)
    if arrays is None:
        return None
    bias_rows = needs[0] and len(node._in_meta[0][0]) == 1 and gd.ndim == 2
    gb, gx, gwt = linear_backward.kernel(gd, arrays[0], arrays[1], bias_rows, needs[1], needs[2])
    return ((gb if bias_rows else gd) if needs[0] else None, gx if needs[1] else None,
            gwt if needs[2] else None)


def _mm_rule(node, gd: np.ndarray):
    # MmBackward0 of the fused linear without bias: _mm_vjp's plain branch
    need_x, need_w = _needs2(node)
    arrays = _arrays(node._saved)
    if arrays is None:
        return None
    _, gx, gwt = linear_backward.kernel(gd, arrays[0], arrays[1], False, need_x, need_w)
    return (gx if need_x else None, gwt if need_w else None)


def _weight_t_rule(node, gd: np.ndarray):
    return (weight_t.kernel(gd),)  # run_op(weight_t, g)


def _nll_rule(node, gd: np.ndarray):
    arrays = _arrays(node._saved)
    if arrays is None:
        return None
    reduction, ignore_index = node._attrs
    # run_op(nll_loss_backward, g, input, target, weight, reduction, ignore_index)
    return (nll_loss_backward.kernel(gd, arrays[0], arrays[1], arrays[2], reduction, ignore_index),)


def _zeros_rule(node, gd: np.ndarray):
    """The in-place nodes whose input gradient is ``zeros_like(g)`` (FillBackward2, ZeroBackward0)."""
    return (_full_like_kernel(gd, 0),)


def _copy_rule(node, gd: np.ndarray):
    """CopyBackwards: ``zeros_like(g)`` for the overwritten self, ``g`` itself for the source."""
    need_self, need_src = _needs2(node)
    if need_src and node._in_meta[1][1] != gd.dtype:  # (the dispatched rule casts to the source's dtype)
        return None
    return (_full_like_kernel(gd, 0) if need_self else None, gd if need_src else None)


def _fill_tensor_rule(node, gd: np.ndarray):
    """FillBackward3 where the value needs no gradient (its ``g.sum()`` is left to the dispatched rule)."""
    need_self, need_value = _needs2(node)
    if need_value:
        return None
    return (_full_like_kernel(gd, 0) if need_self else None, None)


# ---- node ``apply`` methods --------------------------------------------------------------------------------


def _apply_with(rule):
    """A node ``apply`` that tries ``rule`` in a plain backward and runs the dispatched rule otherwise (the
    engine's array loop, ``autograd/array_chain.py``, calls ``rule`` directly)."""
    fallback = OpNode.apply
    state = STATE

    def apply(self, grads):
        g = grads[0]
        if g is not None and not state.grad_enabled and not state.special:
            res = rule(self, g._data)
            if res is not None:
                return as_tensors(res, g)
        return fallback(self, grads)

    return apply


def _sum_full_apply():
    """SumBackward0's ``apply``: in a plain backward, the dispatched ``expand(g, self_sym_sizes)`` without the
    dispatch. Not an array rule: its result is a view of the incoming gradient, which a hook or a custom
    Function's backward further down can see, so it is made here as the view tensor ``expand`` returns."""
    fallback = OpNode.apply
    state = STATE

    def apply(self, grads):
        g = grads[0]
        if g is None or state.grad_enabled or state.special:
            return fallback(self, grads)
        shape = self._in_meta[0][0]
        gd = g._data
        if gd.ndim == 0:
            # np.broadcast_to's result, made directly (its Python-level checks cost ~1.6 µs): every element
            # reads the one value, and it is read-only as broadcast_to's is
            data = _ndarray(shape, gd.dtype, gd, 0, (0,) * len(shape))
            data.flags.writeable = False
            if 0 in shape:  # (an empty expand keeps its zero strides: see views._expanded_view)
                zero_strides_kept(data)
        else:
            data = _broadcast_to(gd, shape)
        out = _new(Tensor)
        out._data = data
        out._rg = False
        out._gfn = None
        out._vc = None
        make_view(out, g, expand, (g, shape, False), 0)
        return (out,)

    return apply


RULES: dict[OpDef, object] = {sin: _sin_rule, cos: _cos_rule, exp: _exp_rule, tanh: _tanh_rule, relu: _relu_rule,
                              log_softmax: _log_softmax_rule, mul: _mul_rule, add: _add_rule,
                              addmm_node_op: _linear_rule, mm_node_op: _mm_rule, weight_t: _weight_t_rule,
                              _nll_loss_1d2d: _nll_rule, _nll_loss_nd: _nll_rule,
                              _mean_full: _mean_full_rule, _mean_dim: _mean_dim_rule,
                              # (the in-place nodes of writes into views, which CopySlices runs: y[0] = 5)
                              _fill_scalar: _zeros_rule, zero_: _zeros_rule, copy_: _copy_rule,
                              _fill_tensor: _fill_tensor_rule}


# Elementwise ops whose rule, given a gradient of the output's shape and dtype, returns one of the input's shape
# and dtype (input and output agree, and the rule multiplies by a saved array of that dtype): the array loop
# need not check their gradient against the input's metadata.
KEEPS_META = (sin, cos, exp, tanh, relu)


def install() -> None:
    for op, rule in RULES.items():
        # the array loop (autograd/array_chain.py) relies on it: a node with a rule takes one gradient (its one
        # differentiable output; nll_loss's total_weight is not)
        assert op.n_returns - op.trailing_nondiff == 1 and not op.returns_list, op.name
        op.node_class._array_rule = staticmethod(rule)
        op.node_class.apply = _apply_with(rule)
    _sum_full.node_class.apply = _sum_full_apply()
    for op in KEEPS_META:
        op.node_class._keeps_meta = True
