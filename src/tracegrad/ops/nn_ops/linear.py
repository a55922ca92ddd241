"""``linear`` and ``bilinear``.

``linear(x, W, b)`` is PyTorch's ``addmm(b, x, W.t())``: the graph has an ``AddmmBackward0`` node whose
third edge goes through a ``TBackward0`` node to ``W``. On the eager fast path both nodes are built by hand
around a single ``x @ W.T + b`` kernel (no view bookkeeping), and the backward computes only the requested
gradients. The weight gradient is produced directly in ``W``'s row-major layout, so ``TBackward0`` hands it
on without a copy and ``AccumulateGrad`` can adopt the buffer.
"""

from __future__ import annotations

import math
import string
import sys
import weakref

import numpy as np

from ..._events import emit as _emit_event
from ..._state import STATE, next_sequence_nr
from ..._tensor import Tensor, _new
from ...autograd.edges import NO_EDGE, gradient_edge
from ...autograd.node_meta import ONLY, RECORD, meta_forms
from ...autograd.saved import save_input, stale_input, version_error
from ...backend.dtypes import bfloat16, cpp_type_name, scalar_type_name
from .. import aten_sum
from .._util import unsupported
from ..aten_vec import FP_SIGNALS, quietly
from ..linalg import ADDMM_META, dim_size
from ..linalg_core import MM_META, matmul, matrix_product, mm, mm_mat1_backward, mm_mat2_backward
from ..pointwise import add, add_
from ..reductions import sum as sum_op
from ..registry import defop, not_implemented
from ..views import reshape, t, view
from ._common import new_output, run_op

# ---- matrix products with a transposed operand (closed under differentiation) ------------------------------


def _mm_nt_kernel(a, b):
    return np.matmul(a, b.T)


def _mm_nt_vjp(ctx, g):  # out = a @ b.T
    a, b = ctx.saved_tensors
    need = ctx.needs_input_grad
    return (mm(g, b.conj()) if need[0] else None, mm_tn(g, a.conj()) if need[1] else None)  # (conj: complex)


mm_nt = defop(
    "_nn_mm_nt(Tensor self, Tensor other) -> Tensor",
    _mm_nt_kernel,
    vjp=_mm_nt_vjp,
    saves=("self", "other"),
    node_name="MmBackward0",
)


def _mm_tn_kernel(a, b):
    # a.T @ b, computed as (b.T @ a).T: the result's transpose is a fresh row-major array (see weight_t)
    return np.matmul(b.T, a).T


def _mm_tn_vjp(ctx, g):  # out = a.T @ b
    a, b = ctx.saved_tensors
    need = ctx.needs_input_grad
    return (mm_nt(b.conj(), g) if need[0] else None, mm(a.conj(), g) if need[1] else None)


mm_tn = defop(
    "_nn_mm_tn(Tensor self, Tensor other) -> Tensor",
    _mm_tn_kernel,
    vjp=_mm_tn_vjp,
    saves=("self", "other"),
    node_name="MmBackward0",
)

# References to a transposed gradient's buffer when only the engine holds it: the view's ``base``, the
# transposed view's ``base``, the local name and getrefcount's argument.
_PRIVATE_BUFFER_REFS = 4


def _weight_t_kernel(a):
    r = a.T
    base = r.base
    # Same shape and strides as a C-contiguous base means r spans exactly that buffer.
    if (
        base is not None
        and base.shape == r.shape
        and base.strides == r.strides
        and base.dtype == r.dtype
        and base.flags.c_contiguous
        and sys.getrefcount(base) <= _PRIVATE_BUFFER_REFS
    ):
        return base  # nobody else sees this buffer: hand it on (the same array, without the view)
    return r  # (PyTorch's TBackward0 returns grad.t(): a transposed view, laid out so)


weight_t = defop(
    "_nn_weight_t(Tensor self) -> Tensor",
    _weight_t_kernel,
    vjp=lambda ctx, g: run_op(weight_t, g),
    node_name="TBackward0",
    public_name="t",
)


# ---- the fused nodes ---------------------------------------------------------------------------------------
# Their third (second) edge is the TBackward0 node of the weight; the rule returns the gradient of W.t().


def _bias_grad(g: np.ndarray) -> np.ndarray:
    """The bias's gradient, ``g.sum(0)``, with the sum operator's kernel (PyTorch's order of additions): a usual
    float matrix straight to its column sums, past the sum operator's general dispatch."""
    dt = g.dtype
    if (dt is _F32 or dt is _F64) and g.ndim == 2 and g.shape[0] > 1 and g.shape[1] > 1 and g.flags.c_contiguous:
        return aten_sum.column_sums(g)
    return aten_sum.sum_as_aten(g, (0,), False) if aten_sum.supports(dt) else g.sum(axis=0)


def _linear_backward_kernel(g, x, w, need_bias, need_input, need_weight):
    """All requested gradients of ``x @ w.T + b`` in one kernel (bias, input, weight.t())."""
    empty = _EMPTY
    if g.dtype.kind == "c":  # (complex: the gradients take conjugated operands; either may not be kept)
        x, w = (None if x is None else np.conj(x)), (None if w is None else np.conj(w))
    gb = _bias_grad(g) if need_bias else empty
    # mm_mat1_backward and mm_mat2_backward for x @ w.t(): a column-major matrix gets a column-major gradient
    # (the product order differs, not the values). mat2 = w.t() is column-major when w is row-major: the usual
    # case, whose W-shaped gradient rows weight_t hands on. (The node keeps x only when w needs a gradient, and
    # w only when x does: a matrix not kept is taken to be laid out as usual, x row-major and w too.)
    if need_input:
        gx = matrix_product(w.T, g.T).T if x is not None and _column_major(x) else matrix_product(g, w)
    else:
        gx = empty
    if need_weight:
        gwt = matrix_product(g.T, x).T if w is None or _column_major(w.T) else matrix_product(x.T, g)
    else:
        gwt = empty
    return gb, gx, gwt


def _column_major(a: np.ndarray) -> bool:
    """PyTorch's test in mm's backward formulas: ``strides[0] == 1 and strides[1] == sizes[0]``."""
    return a.ndim == 2 and a.strides[0] == a.itemsize and a.strides[1] == a.shape[0] * a.itemsize


_EMPTY = np.empty(0, dtype=np.float32)
_HALF = np.dtype(np.float16)
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_BOOL = np.dtype(np.bool_)

# Used only while no graph of the gradient is recorded (plain ``backward()``); with ``create_graph`` the
# rules below compose differentiable operators instead.
linear_backward = defop(
    "_nn_linear_backward(Tensor grad_output, Tensor? input, Tensor? weight, bool need_bias, bool need_input, "
    "bool need_weight) -> (Tensor, Tensor, Tensor)",
    _linear_backward_kernel,
    vjp=not_implemented("_nn_linear_backward"),
    differentiable=(),
)


def _linear_input_grads(ctx, g, x_slot: int):
    """The graph of PyTorch's mm_mat1_backward / mm_mat2_backward for ``x @ mat2`` with ``mat2 = weight.t()``,
    each picking its formula by its matrix's layout (``g.mm(mat2.t())`` and ``g.t().mm(x).t()`` usually)."""
    x, w = _saved_input_and_weight(ctx)
    need = ctx.needs_input_grad
    gx = gwt = None
    if need[x_slot]:
        mat2 = _weight_transposed(w, ctx._edges[x_slot + 1][0])
        gx = mm_mat1_backward(g, mat2, x is not None and _column_major(x._data))
    if need[x_slot + 1]:
        gwt = mm_mat2_backward(g, x, w is None or _column_major(w._data.T))
    return gx, gwt


def _saved_input_and_weight(node) -> tuple:
    """``node.saved_tensors`` (the input, the weight), a weight written in place since the forward reported as
    PyTorch reports the ``mat2`` it saves (``_stale_weight_error``)."""
    try:
        return node.saved_tensors
    except RuntimeError:
        x_saved, w_saved = node._saved
        error = _stale_weight_error(w_saved) if stale_input(x_saved) is None else None  # (the input unpacks first)
        if error is None:
            raise
        raise error from None


def _stale_weight_error(saved) -> RuntimeError | None:
    """The error for a saved weight written in place since the forward, as PyTorch raises it for its saved ``mat2 =
    weight.t()``: the transposed shape and, where the weight requires grad, the grad_fn a view is given once its base
    is written (output 0 of AsStridedBackward0); None for a weight that unpacks or fails some other way."""
    stale = stale_input(saved)
    if stale is None:
        return None
    w, current, expected = stale
    where = ", which is output 0 of AsStrided," if w.requires_grad else ""
    return version_error(w._data.shape[::-1], w._data.dtype, where, current, expected)


def _save_weight(weight: Tensor) -> tuple:
    """The fused node's record of the weight (``save_input``'s, on its path of no hooks and nothing special), kept for
    PyTorch's saved ``mat2 = weight.t()``: a view whose grad_fn (the forward's TBackward0) no ``weight.detach_()``
    removes, so the record is not checked for one (``w = p * 1; out = F.linear(x, w); w.detach_()`` backpropagates
    to ``x`` and ``p``)."""
    vc = weight._vc
    if vc is None:
        vc = weight._vc = [0]
    return (weight, vc, vc[0], False)


def _weight_transposed(w: Tensor, tnode) -> Tensor:
    """PyTorch's saved ``mat2``: ``weight.t()`` as recorded in the forward, its grad_fn the forward's
    TBackward0 node (the fused node keeps the weight itself and the node, not the transposed tensor)."""
    out = _new(Tensor)
    out._data = w._data.T
    out._vc = None
    out._base = None
    out._output_nr = 0
    out._gfn = tnode
    out._rg = tnode is not None
    return out


def _addmm_vjp(ctx, g):
    need = ctx.needs_input_grad
    bias_rows = need[0] and len(ctx._in_meta[0][0]) == 1 and g._data.ndim == 2
    if not STATE.grad_enabled:
        x, w = _saved_input_and_weight(ctx)
        if not STATE.special:
            return _linear_backward_plain(g, x, w, bias_rows, need)
        gb, gx, gwt = run_op(linear_backward, g, x, w, bias_rows, need[1], need[2])
        return (
            (gb if bias_rows else g) if need[0] else None,
            gx if need[1] else None,
            gwt if need[2] else None,
        )
    gx, gwt = _linear_input_grads(ctx, g, 1)
    return _addmm_bias_grad(ctx, g) if need[0] else None, gx, gwt


def _addmm_bias_grad(ctx, g: Tensor) -> Tensor:
    """The gradient of linear's bias. Recording (create_graph), a row bias's is left to the engine's sum_to, which
    PyTorch's graph shows (SumBackward1 then ViewBackward0); a plain backward sums the rows here."""
    if STATE.grad_enabled or len(ctx._in_meta[0][0]) != 1 or g._data.ndim != 2:
        return g
    return sum_op(g, (0,), False, None)


def _mm_vjp(ctx, g):
    need = ctx.needs_input_grad
    if not STATE.grad_enabled:
        x, w = _saved_input_and_weight(ctx)
        if not STATE.special:
            return _linear_backward_plain(g, x, w, False, (False,) + need)[1:]
        _, gx, gwt = run_op(linear_backward, g, x, w, False, need[0], need[1])
        return gx if need[0] else None, gwt if need[1] else None
    return _linear_input_grads(ctx, g, 0)


def _linear_backward_plain(g, x, w, bias_rows: bool, need: tuple) -> tuple:
    """``run_op(linear_backward, ...)`` in a plain backward, wrapping only the gradients that are returned
    (the bias gradient is ``g`` itself unless a row vector bias was broadcast)."""
    gb, gx, gwt = linear_backward.kernel(g._data, None if x is None else x._data, None if w is None else w._data,
                                         bias_rows, need[1], need[2])
    return (
        ((new_output(gb) if bias_rows else g) if need[0] else None),
        new_output(gx) if need[1] else None,
        new_output(gwt) if need[2] else None,
    )


def _addmm_kernel(b, x, w, beta=1, alpha=1):
    out = np.matmul(x, w.T)
    out += b
    return out


addmm_node_op = defop(
    "_nn_linear_addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    _addmm_kernel,
    vjp=_addmm_vjp,
    saves=("mat1", "mat2"),
    attrs=("beta", "alpha"),
    node_name="AddmmBackward0",
    public_name="linear",
    meta=ADDMM_META,
)
mm_node_op = defop(
    "_nn_linear_mm(Tensor self, Tensor mat2) -> Tensor",
    lambda x, w: np.matmul(x, w.T),
    vjp=_mm_vjp,
    saves=("self", "mat2"),
    node_name="MmBackward0",
    public_name="linear",
    meta=MM_META,
)


def _show_saved_weight_transposed(node_class) -> None:
    """PyTorch's linear saves ``weight.t()`` as ``mat2``. The fused nodes keep the weight itself (their
    kernels read its transpose for free), so ``_saved_mat2`` (and the viz snapshots, through
    ``_shown_transposed``) show it transposed, with the shape and strides PyTorch reports."""
    stored = node_class.__dict__["_saved_mat2"]

    def saved_mat2(node):
        try:
            w = stored.fget(node)
        except RuntimeError:
            error = _stale_weight_error(node._saved[1])
            if error is None:
                raise
            raise error from None
        return None if w is None else _shown_weight_t(node, w)

    node_class._saved_mat2 = property(saved_mat2)
    node_class._shown_transposed = ("mat2",)


def _shown_weight_t(node, w: Tensor) -> Tensor:
    """PyTorch's saved ``mat2``, the ``weight.t()`` its forward made: the same object read after read (while anyone
    holds it: the node keeps it weakly, as it keeps the weight itself), a view of the weight whose grad_fn is the
    forward's TBackward0 (the node's last edge)."""
    ref = node.__dict__.get("_shown_mat2")
    shown = ref() if ref is not None else None
    if shown is None:
        enabled, STATE.grad_enabled = STATE.grad_enabled, False  # (no node, no sequence number: made in the forward)
        try:
            shown = t(w)
        finally:
            STATE.grad_enabled = enabled
        shown.__dict__.pop("_creation_meta", None)  # (nor a view made in no_grad mode)
        tnode = node._edges[-1][0]
        if tnode is not None:
            shown._gfn = tnode
            shown._rg = True
        node.__dict__["_shown_mat2"] = weakref.ref(shown)
    return shown


_show_saved_weight_transposed(addmm_node_op.node_class)
_show_saved_weight_transposed(mm_node_op.node_class)


def _type(a) -> str:
    return scalar_type_name(a.dtype)


def _shape_error(x, w) -> RuntimeError:
    return RuntimeError(
        f"mat1 and mat2 shapes cannot be multiplied ({x.shape[0]}x{x.shape[1]} and {w.shape[1]}x{w.shape[0]})"
    )


def _linear_failed(error: RuntimeError, input: Tensor, weight: Tensor, bias: Tensor | None) -> RuntimeError:
    """``error``, after taking the sequence numbers PyTorch's ``addmm(bias, input, weight.t())`` has taken when
    its kernel raises: ``weight.t()``'s node, then the product's."""
    if STATE.grad_enabled:
        needs = [t._rg or (t._base is not None and t._base._rg) for t in (input, weight, bias) if t is not None]
        if needs[1]:
            next_sequence_nr()
        if any(needs):
            next_sequence_nr()
    return error


def _product(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``_linear_2d``'s product, again (written out there: the hottest function of an MLP makes no helper call)."""
    return matrix_product(x, w.T) if x.dtype is not _HALF else np.matmul(x.astype(np.float32), w.T.astype(np.float32))


def _linear_2d(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    # The hottest function of an MLP: straight-line code, no helper calls on the common path.
    x = input._data
    w = weight._data
    if x.shape[1] != w.shape[1]:
        raise _linear_failed(_shape_error(x, w), input, weight, bias)
    # (half and bfloat16: PyTorch's gemm sums in float and adds the bias before its one rounding)
    try:
        if x.dtype is _HALF or x.dtype is bfloat16.np:
            out = np.matmul(x.astype(np.float32), w.T.astype(np.float32))
        elif x.dtype is _BOOL:  # (PyTorch's CPU gemm is not dispatched over bool)
            raise unsupported("addmm_impl_cpu_", x.dtype)
        else:
            out = matrix_product(x, w.T)
    except FP_SIGNALS:  # (a strict filter's: run again quietly, see aten_vec.quietly)
        out = quietly(_product, x, w)
    if bias is not None:
        try:
            out += bias._data if bias._data.dtype is not bfloat16.np else bias._data.astype(np.float32)
        except FP_SIGNALS:  # (the same; NumPy warns after it has written the sum into ``out``)
            pass
        except ValueError:
            b = bias._data
            raise _linear_failed(RuntimeError(
                f"The expanded size of the tensor ({out.shape[1]}) must match the existing size "
                f"({b.shape[-1]}) at non-singleton dimension 1.  Target sizes: {list(out.shape)}.  "
                f"Tensor sizes: {list(b.shape)}"), input, weight, bias) from None
    if out.dtype is not x.dtype:  # (half: the float sum rounded once, inf beyond its range as in PyTorch)
        out = quietly(out.astype, x.dtype)
    result = _new(Tensor)
    result._data = out
    result._rg = False
    result._gfn = None
    result._vc = None
    if not STATE.grad_enabled:
        return result
    # (a view made under no_grad of a tensor that requires grad requires grad too, as in PyTorch)
    x_rg = input._rg or (input._base is not None and input._base._rg)
    w_rg = weight._rg or (weight._base is not None and weight._base._rg)
    b_rg = bias is not None and (bias._rg or (bias._base is not None and bias._base._rg))
    if not (x_rg or w_rg or b_rg):
        return result
    if STATE.inference_seen and input._inference and weight._inference and (bias is None or bias._inference):
        return result  # (torch's autograd kernel does not run for inference tensors alone)
    if w_rg:
        tnode = _new(weight_t.node_class)  # TBackward0: sequence number before the addmm node, as in PyTorch
        tnode._seq = next_sequence_nr()
        tnode._edges = (gradient_edge(weight),)
        tnode._in_meta = meta_forms(w.shape, w.dtype)[ONLY]  # (shared records: autograd/node_meta.py)
        tnode._attrs = ()
        tnode._saved = ()
        t_forms = meta_forms(w.shape[::-1], w.dtype)
        t_edge, t_meta = (tnode, 0), t_forms[RECORD]
        tnode._out_meta = t_forms[ONLY]
    else:
        t_edge = t_meta = None
    # save only what the requested gradients read, like PyTorch (None in the other slot)
    saved = (save_input(input) if w_rg else None, _save_weight(weight) if x_rg else None)
    x_edge = gradient_edge(input) if x_rg else NO_EDGE
    x_meta = meta_forms(x.shape, x.dtype)[RECORD] if x_rg else None
    if bias is not None:
        node = _new(addmm_node_op.node_class)
        node._seq = next_sequence_nr()
        node._edges = (gradient_edge(bias) if b_rg else NO_EDGE, x_edge, t_edge or NO_EDGE)
        node._in_meta = ((meta_forms(bias._data.shape, bias._data.dtype)[RECORD] if b_rg else None), x_meta, t_meta)
        node._attrs = (1, 1)
    else:
        node = _new(mm_node_op.node_class)
        node._seq = next_sequence_nr()
        node._edges = (x_edge, t_edge or NO_EDGE)
        node._in_meta = (x_meta, t_meta)
        node._attrs = ()
    node._saved = saved
    node._out_meta = meta_forms(out.shape, out.dtype)[ONLY]
    result._gfn = node
    result._rg = True
    if STATE.observed:
        if w_rg:
            _emit_event("node_created", node=tnode, op="t")
        _emit_event("node_created", node=node, op="linear")
    return result


def _adds_bias_in_addmm(x: np.ndarray, b: np.ndarray) -> bool:
    """Whether PyTorch's linear adds the bias inside one ``addmm``: for a 2-D input, or a contiguous one with a 1-D
    bias (viewed as 2-D, ``_flatten_nd_linear``). Otherwise it adds it to matmul's result in place, which
    promotes: a float64 or integer bias then joins a float32 product."""
    return x.ndim == 2 or (b.ndim == 1 and x.flags.c_contiguous)


def _refuse_mixed_operands(input: Tensor, weight: Tensor, bias: Tensor | None) -> None:
    """Operands of several dtypes, or a weight that is not a matrix: PyTorch's error where the product it takes
    refuses them before multiplying (``addmm`` checks dtypes first, the bias's first; ``mm`` checks the sizes
    first). matmul's other routes (``bmm``, ``mv``) and the in-place bias addition check their own."""
    x, w = input._data, weight._data
    if w.ndim > 2:
        return  # (``weight.t()`` refuses it first)
    if bias is not None and _adds_bias_in_addmm(x, bias._data):
        b = bias._data
        if b.dtype != w.dtype:
            error = RuntimeError(f"self and mat2 must have the same dtype, but got {_type(b)} and {_type(w)}")
        elif x.dtype != w.dtype:
            error = RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_type(x)} and {_type(w)}")
        elif w.ndim != 2:
            error = RuntimeError(f"mat2 must be a matrix, got {w.ndim}-D tensor")
        else:
            return
    elif bias is None and x.ndim == 2 and w.ndim == 2 and x.dtype != w.dtype:
        error = _shape_error(x, w) if x.shape[1] != w.shape[1] else RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {cpp_type_name(x.dtype)} != "
            f"{cpp_type_name(w.dtype)}")
    else:
        return
    raise _linear_failed(error, input, weight, bias)


def _addmm_kernel_std(b, x, mat2, beta=1, alpha=1):
    if x.shape[-1] != mat2.shape[0]:  # (in the kernel: after the saved inputs are packed, as torch's)
        from ..linalg_core import _shape_error as mm_shape_error

        raise mm_shape_error(x, mat2)
    dt = b.dtype if isinstance(b, np.ndarray) else x.dtype
    out = np.matmul(x, mat2)
    out += b
    return out.astype(dt, copy=False)


def _addmm_vjp_std(ctx, g):
    x, mat2 = ctx.saved_tensors
    need = ctx.needs_input_grad
    gb = _addmm_bias_grad(ctx, g) if need[0] else None
    gx = mm_nt(g, mat2.conj()) if need[1] else None  # g @ mat2^H
    gm = mm_tn(x.conj(), g) if need[2] else None  # x^H @ g
    return gb, gx, gm


def _addmm_jvp_std(args, outs, tangents):
    """bias_t + input_t @ mat2 + input @ mat2_t, the product's terms formed with zeros for a missing tangent
    (as PyTorch's addmm, see ``dense_product_terms``)."""
    from .._jvp import dense_product_terms, plus, self_term

    first, second = dense_product_terms(args[1:], tangents[1:], mm)
    return plus(plus(self_term(tangents, args), first), second)  # (in PyTorch's order: (bias_t + input_t @ mat2) + ...)


# ``linear`` while something special (observer, anomaly mode) or a saved-tensor hook is active: the same graph as
# the fast path, AddmmBackward0 -> TBackward0 -> weight, built from dispatched operators, saving weight.t() itself.
addmm = defop(
    "_nn_addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    _addmm_kernel_std,
    vjp=_addmm_vjp_std,
    saves=("mat1", "mat2"),
    save_if={"mat1": "mat2", "mat2": "mat1"},
    attrs=("beta", "alpha"),
    node_name="AddmmBackward0",
    public_name="linear",
    meta=ADDMM_META,
    jvp=_addmm_jvp_std,
)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``."""
    x = input._data
    w = weight._data
    if x.ndim == 0 or w.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {x.ndim}D and {w.ndim}D")
    if w.ndim == 2 and x.dtype == w.dtype and (bias is None or bias._data.dtype == w.dtype):
        # (nothing special: no transform either). Saved-tensor hooks must be handed PyTorch's mat2, weight.t(),
        # which the fused node does not hold: they take the dispatched addmm below.
        if x.ndim == 2 and not STATE.special and not STATE.saved_hooks:
            return _linear_2d(input, weight, bias)
    else:
        _refuse_mixed_operands(input, weight, bias)
    if STATE.profiler is not None:
        return STATE.profiler.composite("aten::linear", (input, weight, bias), _linear_general)
    return _linear_general(input, weight, bias)


def _linear_general(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """``linear`` off its fast path: under transforms, observers or the profiler, and for inputs not 2-D."""
    x = input._data
    w = weight._data
    # (a forward-AD level alone keeps PyTorch's addmm/mm: their tangents' formulas are PyTorch's, and so are the
    # output's and the tangent's graphs; a transform interpreter composes batchable operators instead)
    if w.ndim == 2 and x.ndim >= 1 and not STATE.stack:
        if x.ndim == 2:
            if not STATE.special and not STATE.saved_hooks:
                return _linear_2d(input, weight, bias)
            return addmm(bias, input, t(weight)) if bias is not None else mm(input, t(weight))
        if bias is not None and bias._data.ndim == 1 and x.flags.c_contiguous:
            # PyTorch's _flatten_nd_linear: view as 2-D, the fused addmm, view back
            lead = x.shape[:-1]
            flat = view(input, (math.prod(lead), x.shape[-1]))
            if flat._data.shape[1] != w.shape[1]:
                raise _linear_failed(_shape_error(flat._data, w), flat, weight, bias)
            return view(_linear_general(flat, weight, bias), lead + (w.shape[0],))
    # Otherwise PyTorch computes matmul(input, weight.t()) and adds the bias in place: out of place where the bias
    # has a tangent at forward-AD level 0 (``bias->_fw_grad(0).defined()``) or is a transform's tensor
    # (``isTensorSubclassLike``), and here also when the product is a view, which PyTorch's in-place squeeze avoids
    out = matmul(input, t(weight))
    if bias is None:
        return out
    if STATE.stack or out._base is not None or _has_first_level_tangent(bias):
        return add(out, bias)
    return add_(out, bias)


def _has_first_level_tangent(t: Tensor) -> bool:
    if not STATE.fw_grad_levels:
        return False
    from ...autograd.forward_ad import get_tangent

    return get_tangent(t, 0) is not None


# ---- _trilinear (bilinear's operator) ------------------------------------------------------------------------


def _trilinear_kernel(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    """``(i1.unsqueeze(expand1) * i2.unsqueeze(expand2) * i3.unsqueeze(expand3)).sum(sumdim)``: each input
    spans the dims it is not expanded in; one einsum over the letters of those dims."""
    total = i1.ndim + len(expand1)
    letters = string.ascii_letters[:total]
    terms = ["".join(c for d, c in enumerate(letters) if d not in expand) for expand in (expand1, expand2, expand3)]
    out = "".join(c for d, c in enumerate(letters) if d not in sumdim)
    # contiguous, whatever order einsum chose: PyTorch accumulates into a fresh ``zeros`` of the (keepdim) output
    # size and squeezes the summed dims away
    return np.ascontiguousarray(np.einsum(f"{terms[0]},{terms[1]},{terms[2]}->{out}", i1, i2, i3, optimize=True))


def _trilinear_vjp(ctx, g):
    # PyTorch's _trilinear_backward: each gradient is a _trilinear of g with the other two inputs
    i1, i2, i3 = ctx.saved_tensors
    e1, e2, e3, sumdim = ctx.attrs
    need = ctx.needs_input_grad
    return (trilinear(g, i2, i3, sumdim, e2, e3, e1) if need[0] else None,
            trilinear(i1, g, i3, e1, sumdim, e3, e2) if need[1] else None,
            trilinear(i1, i2, g, e1, e2, sumdim, e3) if need[2] else None)


def _trilinear_jvp(args, outs, tangents):
    """derivatives.yaml: ``_trilinear(i1_t, i2_p, i3_p, ...) + _trilinear(i1_p, i2_t, i3_p, ...)
    + _trilinear(i1_p, i2_p, i3_t, ...)``, a missing tangent's term formed with zeros (as a zero tensor reaches
    _trilinear's products)."""
    from ..creation import zeros_like

    if all(t is None for t in tangents):
        return None
    primals, rest = args[:3], args[3:]
    terms = []
    for i, tangent in enumerate(tangents):
        operands = list(primals)
        operands[i] = zeros_like(primals[i]) if tangent is None else tangent
        terms.append(trilinear(*operands, *rest))
    return add(add(terms[0], terms[1]), terms[2])


trilinear = defop(
    "_trilinear(Tensor i1, Tensor i2, Tensor i3, int[] expand1, int[] expand2, int[] expand3, int[] sumdim, "
    "int unroll_dim=1) -> Tensor",
    _trilinear_kernel,
    vjp=_trilinear_vjp,
    jvp=_trilinear_jvp,
    saves=("i1", "i2", "i3"),
    save_if={"i1": ("i2", "i3"), "i2": ("i1", "i3"), "i3": ("i1", "i2")},  # (each read by the others' gradients)
    attrs=("expand1", "expand2", "expand3", "sumdim"),
    complex_grad=False,  # (a real-only derivative in PyTorch)
)


def _bilinear_check(x1: np.ndarray, x2: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> None:
    """PyTorch's checks in its order: dtypes, then sizes read with ``size()`` (a weight of fewer than 3 dims is an
    IndexError there; one of more fails later, in ``_trilinear``)."""
    if not x1.dtype == x2.dtype == w.dtype or (b is not None and b.dtype != w.dtype):
        arrays = {"input1": x1, "input2": x2, "weight": w, **({} if b is None else {"bias": b})}
        got = ", ".join(f"{name}: {cpp_type_name(a.dtype)}" for name, a in arrays.items())
        raise RuntimeError(f"All tensors must have the same dtype, got {got}")
    if x1.ndim != x2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {x1.ndim} and {x2.ndim}")
    if x1.shape[:-1] != x2.shape[:-1]:
        i = next(i for i, (n1, n2) in enumerate(zip(x1.shape, x2.shape)) if n1 != n2)
        raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got {x1.shape[i]} and "
                           f"{x2.shape[i]}")
    for which, x, d in (("input1", x1, 1), ("input2", x2, 2)):
        if dim_size(x, -1) != dim_size(w, d):
            raise RuntimeError(f"bilinear(): {which} size does not match weight size: got {x.shape[-1]} but "
                               f"expected {w.shape[d]}")
    if b is not None and dim_size(b, 0) != w.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {b.shape[0]} but expected "
                           f"{w.shape[0]}")
    if w.ndim != 3:
        raise RuntimeError("number of dimensions must match")  # (_trilinear's, given the 4-D batch of W)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]``, through ``_trilinear``."""
    w, x1 = weight._data, input1._data
    _bilinear_check(x1, input2._data, w, None if bias is None else bias._data)
    out_f, in1, in2 = w.shape
    # as PyTorch's bilinear: flatten the batch, one _trilinear over (batch, out, in1, in2), reshape back
    a = reshape(input1, (-1, in1))
    b = reshape(input2, (-1, in2))
    y = reshape(trilinear(a, weight, b, [1, 3], [0], [1, 2], [2, 3]), x1.shape[:-1] + (out_f,))
    return add(y, bias) if bias is not None else y
