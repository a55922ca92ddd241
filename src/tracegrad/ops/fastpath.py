"""Straight-line eager paths for pointwise operators.

Most operator calls in real programs are small elementwise ops, and in Python the per-call overhead
dominates their cost. These closures do what ``OpDef._eager`` + ``_record`` do for the common case
(plain tensors or Python numbers, no transform, no observer, no anomaly or inference mode), with every
constant bound in the closure, and fall back to the general path for everything else. They become the
``__call__`` of a per-operator subclass (and the Tensor's operator methods), so a call costs one Python
frame. They must behave exactly like the general path: the generic OpInfo tests run both.
"""

from __future__ import annotations

import weakref
from types import FunctionType

import numpy as np

from .._arg_parser import refuse_as_torch, tp_name
from .._events import emit as _emit_event
from .._state import STATE, next_sequence_nr
from .._strides import pointwise_result
from .._tensor import Tensor, _new
from .._torch_function import NOT_HANDLED, handle_refused, refused_operand
from ..autograd.accumulate import AccumulateGrad
from ..autograd.edges import NO_EDGE, gradient_edge
from ..autograd.node_meta import F32_FORMS, meta_forms
from ..autograd.saved import SavedTensor, save_fresh_output, save_input, save_input_pair
from ..backend.dtypes import bfloat16 as _BFLOAT16
from . import barebones_unsigned, bfloat16_in_float
from ._util import autograd_dtype_refused, translate_value_error
from .aten_vec import FP_SIGNALS, quietly
from .result_layouts import SWAPPED_OPERANDS, operand_positions

_ndarray = np.ndarray
_asarray = np.asarray
_make_saved = SavedTensor._make
_edge = gradient_edge
_AccumulateGrad = AccumulateGrad
_next, _sequence = next, STATE._seq  # (``next_sequence_nr()``: the builtin's call is the cheaper one)
_weakref = weakref.ref
_save_input = save_input
_save_pair = save_input_pair
_save_output = save_fresh_output
_pointwise_result = pointwise_result
# What a Python operator takes (a NumPy array is NumPy's to compute: see _tensor_methods._is_operand)
_OPERANDS = (Tensor, int, float, complex, bool, np.generic)
_LARGEST_INT64 = 2**63 - 1  # (a NumPy uint64 beyond it is no integer to torch's parser)
# The usual float dtypes, tested by identity before reading ``.kind`` (a getter call on every read).
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_NO_ARG = object()  # (no positional argument)


def _own_code(fn):
    """``fn`` with a private copy of its code object. CPython specializes attribute access per code object
    and per receiver type; the closures of different operators store into different node classes, so
    sharing one code object would leave those stores unspecialized (polymorphic)."""
    return FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def _save_plan(op) -> tuple:
    """(is_output, index, condition index or -1, slot) per saved value, in the order PyTorch saves them
    (``OpDef.pack_order``); ``slot`` is its place in the node's saved values."""
    order = op.pack_order or range(len(op.save_spec))
    return tuple((op.save_spec[k][0] == "out", op.save_spec[k][1], op.save_conditions[k], k) for k in order)


def _saved_values(plan: tuple, full: tuple, out: Tensor) -> tuple:
    saved = [None] * len(plan)
    for is_out, idx, cond, slot in plan:
        if cond >= 0:
            c = full[cond]
            if c.__class__ is not Tensor or not c._rg:
                continue
        if is_out:
            saved[slot] = _make_saved(out, True)
        else:
            v = full[idx]
            saved[slot] = _make_saved(v) if isinstance(v, Tensor) else v
    return tuple(saved)


def _requires_grad(value) -> bool:
    return value.__class__ is Tensor and (value._rg or (value._base is not None and value._base._rg))


def _kernel_failed(op, plan: tuple, operands: tuple, arrays: tuple, exc: Exception) -> Exception:
    """The error to raise for a kernel that failed, after doing what PyTorch has done by then: made the node
    (taking a sequence number) and packed its saved inputs (calling pack hooks), both left unused."""
    if op.node_before_kernel and STATE.grad_enabled and any(_requires_grad(v) for v in operands):
        next_sequence_nr()
        for is_out, idx, cond, _ in plan:
            if not is_out and (cond < 0 or _requires_grad(operands[cond])) and operands[idx].__class__ is Tensor:
                _make_saved(operands[idx])
    return translate_value_error(exc, arrays) if isinstance(exc, ValueError) else exc


# PyTorch's backward formulas are C++, where ``grad * 2`` is ``mul.Scalar`` (MulBackward1) rather than the
# ``mul.Tensor`` of Python's ``t * 2``. While a built-in formula records (``STATE.in_formula``, set by
# ``OpNode.apply`` under create_graph), a number operand selects the op's ``.Scalar`` overload from this table,
# which ops/scalar_overloads.py fills.
SCALAR_OVERLOADS: dict = {}


def formula_scalar(op, general, a: Tensor, number):
    """``op(a, number)`` inside a built-in backward formula: the ``.Scalar`` overload where PyTorch has one."""
    overload = SCALAR_OVERLOADS.get(op)
    return overload(a, number) if overload is not None else general(op, a, number)


def _without_history(out: Tensor, differentiable: bool) -> Tensor:
    """``out``, an integer or bool result of an input that requires grad, left without history; refused where the
    operator has a derivative, as PyTorch's set_history refuses it (``long_t * 2`` for a ``long_t`` that requires
    grad), rather than silently cut from the graph."""
    if differentiable:
        _next(_sequence)  # (PyTorch's node, made before the kernel, took its number)
        raise autograd_dtype_refused(out._data.dtype)
    out._gfn = None
    out._rg = False
    return out


def _count_inference_writes(op, a: Tensor, out: Tensor) -> Tensor:
    """``out`` at the version torch's CPU kernel leaves it for an inference tensor ``a``
    (``OpDef.inference_writes``)."""
    if op.inference_writes:
        from .registry import inference_version

        out._vc = inference_version(op, (a,))
    return out


def unary(op):
    """``op(a)`` for a Tensor ``a``; the returned function is the op's ``__call__``."""
    from .registry import OpDef

    general = OpDef.__call__
    ufunc, kernel, node_class, name = op.ufunc, op.kernel, op.node_class, op.name
    plan = _save_plan(op)
    if op.n_params != 1 or op.is_inplace or op.attr_idx:
        def call_general(self, *args, **kwargs):
            return general(op, *args, **kwargs)

        return call_general
    # What the node keeps, decided once: the input (sin), the output (exp), nothing, or the general plan.
    differentiable = op.node_before_kernel  # (it has a derivative: an integer result is refused)
    saves_input = plan == ((False, 0, -1, 0),)
    saves_output = plan == ((True, 0, -1, 0),)
    state = STATE
    f32_forms, forms_of = F32_FORMS, meta_forms  # (closure cells: cheaper reads than globals)

    # (``a`` positional-only and apart from ``args``: a one-argument call makes no tuple of its arguments)
    def call(self, a=_NO_ARG, /, *args, **kwargs):
        if args or kwargs or a is _NO_ARG or state.special:
            return general(op, *((a,) + args if a is not _NO_ARG else args), **kwargs)
        if a.__class__ is not Tensor:
            if not isinstance(a, Tensor):  # (PyTorch's parser: a number or a list is not a tensor)
                handled = handle_refused(op, (a,), None)
                if handled is not NOT_HANDLED:
                    return handled
                raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {tp_name(a)}")
            return general(op, a)
        ad = a._data
        adt = ad.dtype
        direct = ufunc is not None and (adt is _F32 or adt is _F64 or adt.kind == "f")
        try:
            data = ufunc(ad) if direct else kernel(ad)
        except FP_SIGNALS:  # (a strict filter's: run again quietly, see aten_vec.quietly)
            data = quietly(ufunc if direct else kernel, ad)
        except Exception as exc:
            raise _kernel_failed(op, plan, (a,), (ad,), exc) from None
        if data.__class__ is not _ndarray:
            data = _asarray(data)
        if data.ndim > 1 and not ad.flags.c_contiguous:  # (else NumPy's layout is PyTorch's: _strides.py)
            data = _pointwise_result(data, ad)
        out = _new(Tensor)
        out._data = data
        out._vc = None
        out._base = None  # (written for fast reads by the next operator: see _tensor._share_hot_keys)
        out._output_nr = 0
        dt = data.dtype
        if (a._rg or (a._base is not None and a._base._rg)) and state.grad_enabled:
            if not (dt is _F32 or dt is _F64 or dt.kind in "fc" or dt is _BFLOAT16.np):
                return _without_history(out, differentiable)
            fa = a._gfn
            # (torch's autograd kernel does not run for an inference tensor; see _State.inference_seen)
            if state.inference_seen and fa is None and a._inference:
                special = op.without_autograd_kernel  # (but a CPU kernel's inner out= call's check may: abs's)
                done = None if special is None else special((a,))
                return _without_history(_count_inference_writes(op, a, out), False) if done is None else done
            node = _new(node_class)
            node._seq = _next(_sequence)
            forms = f32_forms.get(ad.shape) if adt is _F32 else None  # (shared records: node_meta)
            if forms is None:
                forms = forms_of(ad.shape, adt)
            meta = forms[1]  # (ONLY)
            if a._base is not None:
                node._edges = (_edge(a),)
            elif fa is not None:
                node._edges = ((fa, a._output_nr),)
            else:  # (a leaf: its live accumulator's edge, or a new accumulator's, as gradient_edge finds it)
                ref = a._acc_ref
                acc = ref() if ref is not None else None
                if acc is None:  # (edges.new_grad_accumulator, unrolled: each graph reaching a leaf makes one)
                    acc = _new(_AccumulateGrad)
                    acc.variable = a
                    acc._in_meta = meta
                    a._acc_ref = _weakref(acc)
                node._edges = ((acc, 0),)
            node._in_meta = meta
            node._attrs = ()
            node._out_meta = meta if dt is adt else forms_of(data.shape, dt)[1]
            out._gfn = node
            out._rg = True
            if saves_input:
                if state.saved_hooks or a._inference:
                    node._saved = (_save_input(a),)
                else:  # (save_input's record, unrolled)
                    vc = a._vc
                    if vc is None:
                        vc = a._vc = [0]
                    node._saved = ((a, vc, vc[0], a._gfn is not None),)
            elif saves_output:
                if state.saved_hooks:
                    node._saved = (_save_output(out),)
                else:  # (save_fresh_output's record, unrolled)
                    vc = out._vc = [0]
                    node._saved = ((data, vc),)
            else:
                node._saved = _saved_values(plan, (a,), out) if plan else ()
            if state.observed:  # only node observers get here (any other observer turns this path off)
                _emit_event("node_created", node=node, op=name)
        else:
            out._gfn = None
            out._rg = False
            if state.inference_seen and a._inference:
                _count_inference_writes(op, a, out)
        return out

    barebones_unsigned.fast_path_kernel(op, call)
    bfloat16_in_float.fast_path_kernel(op, call)
    return _own_code(call)


def binary(op, dunder: bool = False, ufunc=None, matrices=None):
    """``op(a, b)`` for a Tensor ``a`` and a Tensor or Python number ``b``; the returned function is the op's
    ``__call__``. With ``dunder``, the Python operator method instead (``NotImplemented`` for operands it
    does not understand). ``ufunc`` replaces the op's plain NumPy function. ``matrices(a, b)``, if given, is
    called instead for anything but two 2-D tensors (``a @ b``: the fast path is ``mm``'s, the rest matmul's)."""
    from .registry import OpDef

    general = OpDef.__call__
    if matrices is not None:
        def general(op, a, b):  # noqa: F811 - every other call goes to ``matrices``
            return matrices(a, b)
    ufunc = op.ufunc if ufunc is None else ufunc
    kernel, node_class, name = op.kernel, op.node_class, op.name
    trailing, default_attrs = op.trailing_defaults, op.default_attrs
    plan = _save_plan(op)
    state = STATE
    # ``name.Scalar`` overloads (``pow(Tensor self, Scalar exponent)``) have a single edge, as in PyTorch.
    scalar_other = op.diff_idx == (0,)
    guarded = scalar_other or matrices is not None  # (one test on the hot path for both)
    numbers = matrices is None  # may ``b`` be a Python number?
    differentiable = op.node_before_kernel  # (it has a derivative: an integer result is refused)
    cross_saves = plan == ((False, 1, 0, 1), (False, 0, 1, 0))  # (saved second first: see pack_order)
    # attrs that name the operands themselves (pow's ``exponent``) are read per call
    attr_idx = tuple(i for i in op.attr_idx if isinstance(i, int))
    attrs_from_operands = any(i < 2 for i in attr_idx)
    # mm's node records its operands' strides (OpDef.stride_edges); that test sits behind the one for values of
    # the call, which mul's path already made, so mul pays nothing for it
    records_strides = op.stride_edges == (0, 1)
    assert not op.stride_edges or (records_strides and not attrs_from_operands), op.name
    per_call = attrs_from_operands or records_strides
    # A pointwise result is laid out as PyTorch's TensorIterator lays it out (mm's is always contiguous).
    # ``pow(x, 2)`` is a unary kernel with a parameter; ``rsub`` computes ``b - a``.
    pointwise = op.iterates
    one_operand = len(operand_positions(op.schema)) == 1
    swapped = op.name in SWAPPED_OPERANDS
    f32_forms, forms_of = F32_FORMS, meta_forms  # (closure cells: cheaper reads than globals)

    def slow(a, b):
        if dunder and (not isinstance(b, _OPERANDS) or (b.__class__ is np.uint64 and b > _LARGEST_INT64)):
            # (torch's operators answer NotImplemented where its parser raises TypeError, after a duck type's
            # __torch_function__)
            return refused_operand(name if matrices is None else "matmul", (a, b))
        if state.in_formula and (b.__class__ is float or b.__class__ is int or b.__class__ is complex) and (
                a.__class__ is Tensor):
            return formula_scalar(op, general, a, b)
        return general(op, a, b)

    def call(self, /, *args, **kwargs):
        if kwargs or len(args) != 2:
            return general(op, *args, **kwargs)
        try:
            return run(args[0], args[1])
        except Exception:  # (``matrices`` is not guarded as OpDef.__call__ is)
            refuse_as_torch(op.schema.name, args, kwargs)
            raise

    def run(a, b):
        if a.__class__ is not Tensor or state.special:
            return slow(a, b)
        bc = b.__class__
        ad = a._data
        adt = ad.dtype
        if bc is Tensor:
            bd = b._data
            if guarded and (scalar_other or ad.ndim != 2 or bd.ndim != 2):
                return slow(a, b)
            brg = b._rg or (b._base is not None and b._base._rg)
            # Same float dtypes: NumPy's ufunc gives PyTorch's result dtype (integer division does not).
            bdt = bd.dtype  # (read once: each NumPy attribute is a getter call)
            direct = ufunc is not None and adt is bdt and (adt is _F32 or adt is _F64 or adt.kind == "f")
        elif bc is float and numbers:
            if state.in_formula:
                return formula_scalar(op, general, a, b)
            bd = b
            brg = False
            # (not half: PyTorch reads some numbers in float there, see _util.number_read_in_float)
            direct = ufunc is not None and (adt is _F32 or adt is _F64)
        elif bc is int and numbers:
            if state.in_formula or b >= 18446744073709551616 or b < -9223372036854775808:  # (cheaper than chained)
                return formula_scalar(op, general, a, b) if state.in_formula else slow(a, b)  # (beyond: refused)
            bd = b
            brg = False
            direct = False
        else:
            return slow(a, b)
        try:
            data = ufunc(ad, bd) if direct else kernel(ad, bd, *trailing)
        except FP_SIGNALS:  # (a strict filter's: run again quietly, see aten_vec.quietly)
            data = quietly(ufunc, ad, bd) if direct else quietly(kernel, ad, bd, *trailing)
        except Exception as exc:  # NumPy's error for mismatched shapes (in PyTorch's words), or the kernel's own
            if not (direct and isinstance(exc, ValueError)):
                raise _kernel_failed(op, plan, (a, b) + trailing, (ad, bd), exc) from None
            try:
                data = kernel(ad, bd, *trailing)
            except Exception as inner:
                raise _kernel_failed(op, plan, (a, b) + trailing, (ad, bd), inner) from None
        if data.__class__ is not _ndarray:
            data = _asarray(data)
        if pointwise and data.ndim > 1 and not (  # (C-contiguous operands of one shape: NumPy's layout is PyTorch's)
                bc is Tensor and ad.flags.c_contiguous and bd.flags.c_contiguous and ad.shape == bd.shape):
            data = _pointwise_result(data, ad) if one_operand else _pointwise_result(data, ad, bd, swapped)
        out = _new(Tensor)
        out._data = data
        out._vc = None
        out._base = None  # (written for fast reads by the next operator: see _tensor._share_hot_keys)
        out._output_nr = 0
        arg = a._rg or (a._base is not None and a._base._rg)
        dt = data.dtype
        if (arg or brg) and state.grad_enabled:
            if not (dt is _F32 or dt is _F64 or dt.kind in "fc" or dt is _BFLOAT16.np):
                return _without_history(out, differentiable)
            # (torch's autograd kernel does not run for inference tensors alone, a number at a Scalar parameter not
            # counted: ``pow(inference, 2)``; one at a Tensor parameter is a normal tensor, ``inference * 2`` records)
            if state.inference_seen and a._gfn is None and a._inference and (
                    b._inference if bc is Tensor else scalar_other):
                special = op.without_autograd_kernel  # (rsub's records as sub; an inner out= call's check refuses)
                done = None if special is None else special((a, b) + trailing)
                return _without_history(out, False) if done is None else done
            node = _new(node_class)
            node._seq = _next(_sequence)
            # (shared metadata records, node_meta; an input of the output's shape and dtype shares its forms)
            out_shape = data.shape
            out_forms = f32_forms.get(out_shape) if dt is _F32 else None
            if out_forms is None:
                out_forms = forms_of(out_shape, dt)
            a_forms = None
            if not arg:
                ea = NO_EDGE
            else:
                a_forms = out_forms if adt is dt and ad.shape == out_shape else forms_of(ad.shape, adt)
                fa = a._gfn
                if a._base is not None:
                    ea = _edge(a)
                elif fa is not None:
                    ea = (fa, a._output_nr)
                else:  # (a leaf: its live accumulator's edge, or a new accumulator's, as gradient_edge finds it)
                    ref = a._acc_ref
                    acc = ref() if ref is not None else None
                    if acc is None:  # (edges.new_grad_accumulator, unrolled: each graph reaching a leaf makes one)
                        acc = _new(_AccumulateGrad)
                        acc.variable = a
                        acc._in_meta = a_forms[1]
                        a._acc_ref = _weakref(acc)
                    ea = (acc, 0)
            if brg:
                b_forms = out_forms if bdt is dt and bd.shape == out_shape else forms_of(bd.shape, bdt)
                fb = b._gfn
                if b._base is not None:
                    eb = _edge(b)
                elif fb is not None:
                    eb = (fb, b._output_nr)
                else:
                    ref = b._acc_ref
                    acc = ref() if ref is not None else None
                    if acc is None:
                        acc = _new(_AccumulateGrad)
                        acc.variable = b
                        acc._in_meta = b_forms[1]
                        b._acc_ref = _weakref(acc)
                    eb = (acc, 0)
                node._edges = (ea, eb)
                if a_forms is None:
                    node._in_meta = b_forms[3]  # (SECOND_OF_TWO: literal indices, the hot path's cheapest)
                else:
                    node._in_meta = a_forms[4] if a_forms is b_forms else (a_forms[0], b_forms[0])  # (BOTH_OF_TWO)
            elif scalar_other:
                node._edges = (ea,)
                node._in_meta = a_forms[1]  # (ONLY)
            else:
                node._edges = (ea, NO_EDGE)
                node._in_meta = a_forms[2]  # (FIRST_OF_TWO)
            if not per_call:
                node._attrs = default_attrs
            elif records_strides:  # (mm: ``b`` is a Tensor, its kernel refuses a number)
                node._strides = (ad.strides, bd.strides)
                node._attrs = default_attrs
            else:
                node._attrs = tuple([((a, b) + trailing)[i] for i in attr_idx])
            node._out_meta = out_forms[1]  # (ONLY)
            out._gfn = node
            out._rg = True
            if cross_saves:
                # mul/matmul: each operand is kept only if the other one needs a gradient (the second first,
                # as PyTorch saves a node's inputs sorted by name: ``other`` before ``self``)
                if arg and brg:
                    if a._inference or b._inference or state.saved_hooks:
                        node._saved = _save_pair(a, b)
                    else:  # (save_input_pair's records, unrolled: b's version counter made first)
                        vb = b._vc
                        if vb is None:
                            vb = b._vc = [0]
                        va = a._vc
                        if va is None:
                            va = a._vc = [0]
                        node._saved = ((a, va, va[0], a._gfn is not None), (b, vb, vb[0], b._gfn is not None))
                else:
                    sb = (_save_input(b) if bc is Tensor else b) if arg else None
                    node._saved = (_save_input(a) if brg else None, sb)
            elif plan:
                node._saved = _saved_values(plan, (a, b) + trailing, out)
            else:
                node._saved = ()
            if state.observed:  # only node observers get here (any other observer turns this path off)
                _emit_event("node_created", node=node, op=name)
        else:
            out._gfn = None
            out._rg = False
        return out

    run = _own_code(run)  # (``call`` reads it from its cell, so it calls the copy too)
    barebones_unsigned.fast_path_kernel(op, run)
    bfloat16_in_float.fast_path_kernel(op, run)
    return run if dunder else call
