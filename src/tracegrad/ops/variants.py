"""Derived operator variants (seed 003): the ``out=`` form of every functional operator."""

from __future__ import annotations

import math

import numpy as np

from .._state import STATE
from .._strides import contiguous_as_torch
from .._tensor import Tensor
from ..backend.dtypes import BAREBONES_UNSIGNED_CHARS, is_differentiable_np, is_floating_np, kind_of, scalar_type_name
from ..return_types import out_return
from ._util import default_float, unsupported


def _requires_grad_anywhere(op, bound: tuple) -> bool:
    for i in op.tensor_idx:
        a = bound[i]
        if isinstance(a, Tensor) and a._rg:
            return True
    for i in op.list_idx:
        for t in bound[i] or ():
            if isinstance(t, Tensor) and t._rg:
                return True
    return False


def out_with_grad_error(name: str) -> RuntimeError:
    """PyTorch's refusal of ``name(..., out=...)`` when an argument requires grad (``name`` as the operator
    that refuses: ``aten::`` in front for its autograd fallback)."""
    return RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                        "but one of the arguments requires grad.")


# Operators whose CPU kernel writes its result through an ``out=`` call (key: the operator; value: the one that
# refuses). For inference tensors alone, one requiring grad, torch's autograd kernel does not run, but the inner
# out= call's does, and refuses (``w.mean()`` for a parameter made under inference_mode).
_WRITES_THROUGH_OUT = {"mean": "sum", "mean.dim": "sum", "abs": "abs", "logsumexp": "logsumexp",
                       "nan_to_num": "nan_to_num", "deg2rad": "deg2rad", "rad2deg": "rad2deg", "cummax": "cummax",
                       "hardtanh": "hardtanh", "frexp": "frexp", "geqrf": "geqrf",
                       "cholesky_inverse": "cholesky_inverse", "kthvalue": "kthvalue"}
# isinf and isfinite of a float tensor compare ``self.abs()`` with inf (a complex one goes through real and imag)
_THROUGH_ABS_OF_FLOATS = ("isinf", "isfinite")
# var and std reach ``self.mean()`` (std_var_all_cpu) where they reduce a non-empty float or double tensor to one value
_ALL_AT_ONCE_VARIANCES = ("var.correction", "std.correction")


def _refused_inner_out_call(name: str, applies=lambda args: True):
    def refuse(args: tuple):
        if applies(args):
            raise out_with_grad_error(name)
        return None  # (the caller goes on: the result has no history)

    return refuse


def _reduces_to_one_value(args: tuple) -> bool:
    """Whether ``var``/``std`` of ``args`` takes ATen's all-at-once CPU path: a float or double input, not empty,
    reduced to at most one value."""
    data, dim = args[0]._data, args[1]
    if data.dtype.kind != "f" or data.itemsize < 4 or data.size == 0:
        return False
    if dim is None:
        return True
    reduced = {d % data.ndim for d in ((dim,) if isinstance(dim, int) else dim)} if data.ndim else set()
    kept = [n for d, n in enumerate(data.shape) if d not in reduced]
    return math.prod(kept) <= 1


# How many counted writes torch's CPU kernel makes into its new result(s) for inference tensors alone, outside
# inference mode (``OpDef.inference_writes``): an inner out= call (sum's ``sum_out``), a ``copy_`` or ``fill_``
# into an ``empty`` (sort's values, ``repeat``), or both (mean's ``sum_out`` then ``div_``: 2), counted because
# the autograd kernel, whose guard would leave them uncounted, does not run. (Operators whose count depends on their
# arguments, var's or diag's, are in ops/inference_writes.py.)
_INFERENCE_RESULT_WRITES = {
    "abs": 1, "deg2rad": 1, "rad2deg": 1, "nan_to_num": 1, "logsumexp": 1, "cummax": 1, "cummin": 1,
    "hardtanh": 1, "frexp": 1, "sum": 1, "sum.dim_IntList": 1, "nansum": 1, "prod": 1, "max": 1, "amax": 1,
    "sort": 1, "sort.stable": 1, "logical_not": 1, "nonzero": 1, "any": 1, "all": 1, "dot": 1, "vdot": 1,
    "median.dim": 1, "nanmedian.dim": 1, "kthvalue": 1, "bincount": 1, "repeat": 1, "renorm": 1, "polar": 1,
    "complex": 1,
    "pow.Scalar": 1, "amin": 1, "min": 1, "prod.dim_int": 1, "any.dims": 1, "all.dims": 1,
    "mean": 2, "mean.dim": 2, "histc": 2,
    "select_scatter": 2, "slice_scatter": 2, "masked_scatter": 2, "masked_fill.Scalar": 2, "diag_embed": 2,
    "diagonal_copy": 1}


def install_inner_out_refusals(registry: dict) -> None:
    """Make the operators above refuse inference tensors requiring grad, and count their results' writes, as torch
    does."""
    for key, writes in _INFERENCE_RESULT_WRITES.items():
        registry[key].inference_writes = writes
    for key, refusing in _WRITES_THROUGH_OUT.items():
        registry[key].without_autograd_kernel = _refused_inner_out_call(refusing)
    for key in _THROUGH_ABS_OF_FLOATS:
        registry[key].without_autograd_kernel = _refused_inner_out_call(
            "abs", lambda args: kind_of(args[0]._data.dtype) == "f")
    # (pow.Scalar's CPU kernel fills a base of 1's result itself and writes any other through pow's out= overload)
    registry["pow.Scalar"].without_autograd_kernel = _refused_inner_out_call("pow", lambda args: args[0] != 1)
    for key in _ALL_AT_ONCE_VARIANCES:
        registry[key].without_autograd_kernel = _refused_inner_out_call("sum", _reduces_to_one_value)


def check_out_count(expected: int, out, name: str) -> None:
    """torch's argument parser's check of ``out=`` for ``expected`` results of the function ``name``, before
    anything runs: one result takes a Tensor, never a tuple or list; several take a tuple (or list) of exactly that
    many (checked after parsing, hence its own words). A tensor where a tuple is expected is the parser's to refuse."""
    if out.__class__ is not tuple and out.__class__ is not list and not isinstance(out, (tuple, list)):
        return
    if expected == 1:
        from .._arg_parser import tp_name

        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {tp_name(out)}")
    if len(out) != expected:
        raise TypeError(f"expected tuple of {expected} elements but got {len(out)}")


def write_out(op, bound: tuple, out):
    """Run ``op`` and store its result(s) in ``out`` (a tensor or a tuple of tensors); return ``out`` (as the
    ``<name>_out`` return type where the operator returns a named one)."""
    from .registry import NoDerivativeOp

    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if not op.returns_list:
        check_out_count(op.n_returns, out, op.schema.name)
    # PyTorch refuses out= with an input requiring grad only for operators with a derivative: one without
    # (torch's autograd fallback) gives ``out`` a NotImplemented node, a non-differentiable one no history.
    # (an out= that requires grad counts too, except for a non-differentiable operator, which never checks)
    no_derivative = isinstance(op, NoDerivativeOp) or op.name in OUT_WITHOUT_DERIVATIVE
    if STATE.grad_enabled and op.vjp is not None and (
            any(o._rg for o in outs) or not no_derivative and _requires_grad_anywhere(op, bound)):
        raise out_with_grad_error(f"{'aten::' if no_derivative else ''}{out_op_name(op.name)}")
    if STATE.fw_grad_levels and no_derivative:  # (the autograd fallback refuses before the kernel's checks)
        from ..autograd.forward_ad import refuse_fallback_tangents

        refuse_fallback_tangents(op.name, _out_inputs(op, bound) + list(outs))
    _check_out_dtype(op, bound, outs[0])
    check_outs_before_kernel = getattr(op, "check_outs_before_kernel", None)  # (structured kernels' meta checks)
    if check_outs_before_kernel is not None:
        check_outs_before_kernel(bound, outs)
    if op.name in _COPIED_INTO_RESIZED_OUT:
        _check_linalg_compatible_dtype(op.name, bound[0], outs[0])
    _check_out_overlap(op, bound, outs)
    if op.name in _COMPUTED_IN_OUT_DTYPE and isinstance(outs[0], Tensor):
        _refuse_out_dtype_after_resize(op, bound, outs[0])
        accumulating = _accumulating_in_out_dtype(op, bound, outs[0])
        if accumulating is not None:
            bound = accumulating
    prev, levels = STATE.grad_enabled, STATE.fw_grad_levels
    # (torch's out= functions compute no tangent, so none of a functional form's refusals: a tangent is refused
    # after the write, below)
    STATE.grad_enabled, STATE.fw_grad_levels = False, []
    try:
        result = op._eager(bound)
    finally:
        STATE.grad_enabled, STATE.fw_grad_levels = prev, levels
    results = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if len(results) != len(outs):
        raise RuntimeError(f"{op.name}(): expected {len(results)} output tensors in out=, got {len(outs)}")
    if op.name in ("cat", "stack"):  # (torch's stack into an out= of another dtype is a cat of the unsqueezed)
        _check_cat_out(results[0], outs[0])
    if op.name == "stack":  # (an out= it resizes is laid out otherwise than its result: result_layouts.py)
        from .result_layouts import stack_out_layout

        results[0]._data = stack_out_layout(results[0]._data, bound[1])
    if op.name in _COPIED_INTO_RESIZED_OUT:
        for r in results:
            r._data = contiguous_as_torch(r._data)
    _check_strict_out_dtypes(op, results, outs)
    if op.name in _OWN_OUT_RESIZES:
        _OWN_OUT_RESIZES[op.name](bound, outs, results)
    for dst, src in zip(outs, results):
        _store(dst, src)
    inputs = _out_inputs(op, bound)
    if no_derivative:
        give_not_implemented_history(op.name, outs, inputs)
    if STATE.fw_grad_levels:
        from ..autograd.forward_ad import refuse_out_tangents

        refuse_out_tangents(out_op_name(op.name), inputs + list(outs))
    return out_return(result, outs, out)


# Operators whose out= kernel checks out's dtype with ATen's checkLinalgCompatibleDtype, runs the functional
# operator, then resize_output and copy_: an out it resizes is contiguous, whatever the layout of the result
# (the legacy cholesky's is column-major).
_COPIED_INTO_RESIZED_OUT = frozenset({"cholesky"})


def _resize_silently(bound: tuple, outs: tuple, results: tuple) -> None:
    """An out= kernel that calls ``resize_`` itself rather than ``resize_output``: no deprecation warning."""
    for dst, src in zip(outs, results):
        if dst._data.shape != src._data.shape:
            dst._data = resized_out(dst._data, src._data)


def _resize_at_keepdim_shape(bound: tuple, outs: tuple, results: tuple) -> None:
    """ATen's ``_reduction_with_indices_allocate_or_resize_output``: without keepdim, an out= one dim short is
    unsqueezed at the reduced dim, resized (with its warning) to the keepdim shape, then squeezed there; so the
    warning names both shapes with the reduced dim kept, and an out already of the keepdim shape is taken as is."""
    source, dim, keepdim = bound[0]._data, bound[2], bound[3]
    if keepdim or source.ndim == 0:
        return
    dim %= source.ndim
    kept_shape = source.shape[:dim] + (1,) + source.shape[dim + 1:]
    for dst, src in zip(outs, results):
        data = dst._data
        if data.ndim == source.ndim - 1:
            data = np.expand_dims(data, dim)
        if data.shape != kept_shape:
            warn_out_resized(data, kept_shape)
            data = resized_out(data, src._data.reshape(kept_shape))
        dst._data = np.squeeze(data, dim)


def _resize_as_compare_base_kernel(bound: tuple, outs: tuple, results: tuple) -> None:
    """ATen's ``compare_base_kernel_core`` (mode's CPU kernel): without keepdim, every out= of at least ``dim``
    dims is unsqueezed at the reduced dim (not only one a dim short), resized (with its warning) to the keepdim
    shape, then squeezed there. A 0-d input is first answered by ``_dimreduce_return_trivial_no_ident``, which
    resizes its outs to 0-d silently; an empty one by the plain ``resize_output`` of ``_store``."""
    source, dim, keepdim = bound[0]._data, bound[1], bound[2]
    if source.ndim == 0:
        _resize_silently(bound, outs, results)
        return
    if source.size == 0:
        return
    dim %= source.ndim
    kept_shape = source.shape[:dim] + (1,) + source.shape[dim + 1:]
    for dst, src in zip(outs, results):
        data = dst._data
        if not keepdim and data.ndim >= dim:
            data = np.expand_dims(data, dim)
        if data.shape != kept_shape:
            warn_out_resized(data, kept_shape)
            data = resized_out(data, src._data.reshape(kept_shape))
        dst._data = data if keepdim else np.squeeze(data, dim)


# Operators whose out= kernel resizes its outputs otherwise than the plain ``resize_output`` of ``_store``
_OWN_OUT_RESIZES = {"narrow_copy": _resize_silently, "kthvalue": _resize_at_keepdim_shape,
                    "mode": _resize_as_compare_base_kernel}


def _check_linalg_compatible_dtype(name: str, source: Tensor, dst) -> None:
    """ATen's checkLinalgCompatibleDtype: ``dst`` must hold ``source``'s dtype safely, in ``name``'s words."""
    from .pointwise import _can_cast_like_torch

    if isinstance(dst, Tensor) and not _can_cast_like_torch(source._data.dtype, dst._data.dtype):
        raise RuntimeError(f"{name}: Expected result to be safely castable from {scalar_type_name(source._data.dtype)} "
                           f"dtype, but got result with dtype {scalar_type_name(dst._data.dtype)}")


# Operators PyTorch implements as a composite whose out= form ends in another operator's out= kernel, which is
# the one that refuses autograd (and tangents) in its own name: linalg.inv(out=) is linalg_inv_ex's.
_OUT_OP_NAMES = {"linalg_inv": "linalg_inv_ex", "linalg_cholesky": "linalg_cholesky_ex",
                 "linalg_svdvals": "_linalg_svd", "linalg_svd": "_linalg_svd", "linalg_eigh": "_linalg_eigh"}


def out_op_name(name: str) -> str:
    """The operator whose out= kernel refuses autograd for ``name(..., out=...)``."""
    return _OUT_OP_NAMES.get(name, name)


def _out_inputs(op, bound: tuple) -> list:
    """The tensor inputs of an out= call (its ``Tensor[]`` ones flattened)."""
    return [bound[i] for i in op.tensor_idx] + [t for i in op.list_idx for t in bound[i] or ()]


# Operators whose out= variant PyTorch generates without a derivative formula (its autograd fallback answers):
# an input requiring grad gives ``out`` a NotImplemented node instead of the out= error.
OUT_WITHOUT_DERIVATIVE = frozenset({"slice_scatter", "select_scatter", "diagonal_scatter", "as_strided_scatter",
                                    "conj_physical"})


def give_not_implemented_history(name: str, outs, inputs) -> None:
    """PyTorch's autograd fallback after an operator without a formula wrote ``outs``: its floating outputs share
    one ``NotImplemented`` node (no sequence number, output ``k`` its ``k``-th) whose edges lead to the inputs
    that require grad."""
    from ..autograd.edges import gradient_edge
    from ..autograd.node import UINT64_MAX, Error

    needing = [t for t in inputs if isinstance(t, Tensor) and (t._rg or (t._base is not None and t._base._rg))]
    if not (STATE.grad_enabled and needing):
        return
    node = Error.__new__(Error)
    node._name = "torch::autograd::NotImplemented"
    node._message, node._exc = f"derivative for aten::{name} is not implemented", RuntimeError
    node._edges = tuple(gradient_edge(t) for t in needing)
    node._in_meta = tuple((t._data.shape, t._data.dtype) for t in needing)
    node._seq = UINT64_MAX
    for k, dst in enumerate(outs):
        if is_differentiable_np(dst._data.dtype):
            dst._gfn, dst._output_nr, dst._rg = node, k, True


def copy_out(results: tuple, outs: tuple) -> None:
    """``out=`` of a composite PyTorch implements as "compute, then ``out.copy_(result)``": under grad mode a
    result with history is copied in with autograd (``out`` gets a CopyBackwards node; a leaf ``out`` that
    requires grad is refused), anything else is stored as an out= operator stores it."""
    from ..autograd.forward_ad import has_tangent

    for dst, src in zip(outs, results):
        # (a copy_ with a tangent in or out carries it: forward AD's copy_ formula)
        if STATE.grad_enabled and (src.requires_grad or dst.requires_grad) or has_tangent(src) or has_tangent(dst):
            if tuple(dst.shape) != tuple(src.shape):
                from ..autograd.grad_mode import no_grad

                with no_grad():
                    _store(dst, src)  # (the resize and its warning)
            dst.copy_(src)
        else:
            _store(dst, src)


def _check_out_dtype(op, bound: tuple, dst) -> None:
    """An operator's ``dtype=`` names its result's dtype, so torch refuses an ``out=`` of another dtype (it
    would otherwise be a silent cast into ``out``)."""
    if "dtype" not in op.param_names or not isinstance(dst, Tensor):
        return
    dtype = bound[op.param_names.index("dtype")]
    if dtype is not None:
        check_out_dtype(op.name, dtype, dst)


# Reductions and scans whose out= kernel computes in out's dtype when no ``dtype=`` is given (ATen's
# ``infer_dtype_from_optional``/``get_dtype_from_result``/``cum_meta_function``): sum(x, 0, out=<float64>) of float32
# values adds in double, cumsum into a bool out is refused as the kernel's dispatch refuses Bool.
_COMPUTED_IN_OUT_DTYPE = frozenset({"sum", "prod", "cumsum", "cumprod", "nansum", "mean"})
# those of them whose kernel refuses a barebones unsigned out -> torch's kernel name in the refusal (nansum of
# integers is their sum)
_ACCUMULATE_IN_OUT_DTYPE = {"sum": "sum_cpu", "prod": "prod_out_cpu", "cumsum": "cumsum_out_cpu",
                            "cumprod": "cumprod_out_cpu", "nansum": "sum_cpu"}


def _accumulating_in_out_dtype(op, bound: tuple, dst: Tensor) -> tuple | None:
    """``bound`` with ``dtype=`` out's dtype for a reduction that computes in it (so the functional operator
    converts and accumulates as torch's out= kernel does); None where ``dtype=`` is given (it must then be out's,
    ``_check_out_dtype``) or the operator computes in its own result dtype and casts into out (mean of an
    integral input, which the functional mean refuses before either)."""
    position = op.param_names.index("dtype")
    if bound[position] is not None:
        return None
    if op.name == "mean" and not is_differentiable_np(bound[0]._data.dtype):
        return None
    return bound[:position] + (dst.dtype,) + bound[position + 1:]


def _refuse_out_dtype_after_resize(op, bound: tuple, dst: Tensor) -> None:
    """Raise torch's refusal of an out= dtype that the functional form, given it as ``dtype=``, accepts, where
    there is one. Torch's meta function has resized out by then (with its warning)."""
    source, have = bound[0]._data, dst._data.dtype
    position = op.param_names.index("dtype")
    if op.name == "mean":
        _refuse_mean_out_dtype(op, bound, dst)
        return
    kernel = _refusing_kernel(op.name, source, have)
    if kernel is None or not source.size:  # (an empty input's result is filled, with no dispatch)
        return
    prev = STATE.grad_enabled
    STATE.grad_enabled = False
    try:  # (the result's shape, computed in the operator's own dtype, which it accepts)
        result = op._eager(bound[:position] + (None,) + bound[position + 1:])
    finally:
        STATE.grad_enabled = prev
    if dst._data.shape != result._data.shape:
        warn_out_resized(dst._data, result._data.shape)
        dst._data = resized_out(dst._data, result._data)
    raise unsupported(kernel, have)


def _refusing_kernel(name: str, source: np.ndarray, have: np.dtype) -> str | None:
    """The kernel whose dispatch on out's dtype ``have`` refuses it: a barebones unsigned one (nansum of
    integers is their sum), nansum's integral, bool or complex out of floating values (its out= kernel dispatches
    over floating types only), and a scan's bool out of a tensor of at least one dim (a 0-d one is copied)."""
    if name == "nansum" and is_floating_np(source.dtype) and not is_floating_np(have):
        return "nansum_cpu"
    if have.char in BAREBONES_UNSIGNED_CHARS:
        return _ACCUMULATE_IN_OUT_DTYPE.get(name)
    if name in ("cumsum", "cumprod") and have == np.bool_ and source.ndim:
        return _ACCUMULATE_IN_OUT_DTYPE[name]
    return None


def _refuse_mean_out_dtype(op, bound: tuple, dst: Tensor) -> None:
    """mean's out= refusals: without a dim (``mean.dtype_out``, a composite) out must hold the input's dtype,
    before anything is resized; then the kernel sums into an integral or bool out (``at::sum_out(result,
    ...).div_(n)``) and the in-place division refuses the true quotient, of the default dtype. (A ``dtype=``
    given is out's, ``_check_out_dtype``; an integral one, as an integral input, the functional mean refuses.)"""
    source, have = bound[0]._data.dtype, dst._data.dtype
    if "dim" not in op.param_names and source != have:
        from .pointwise import _can_cast_like_torch

        if not _can_cast_like_torch(source, have):
            raise RuntimeError(f"mean.dtype_out(): input types can't be cast to the desired output type "
                               f"{scalar_type_name(have)}")
    if have.kind in "biu" and is_differentiable_np(source) and bound[op.param_names.index("dtype")] is None:
        _sum_into(op, bound, dst)
        raise RuntimeError(f"result type {scalar_type_name(default_float())} can't be cast to the desired output "
                           f"type {scalar_type_name(have)}")


def _sum_into(op, bound: tuple, dst: Tensor) -> None:
    """``torch.sum(self, dim, keepdim, out=dst)`` for a mean's arguments (``mean(Tensor self, *, dtype)`` has
    neither dim nor keepdim)."""
    from .reductions_extra import sum as sum_

    arguments = dict(zip(op.param_names, bound))
    sum_(arguments["self"], arguments.get("dim"), arguments.get("keepdim", False), out=dst)


def check_out_dtype(name: str, dtype, dst: Tensor) -> None:
    """torch's refusal of an ``out=`` whose dtype is not the ``dtype=`` of operator ``name``, in its words."""
    from ..backend.dtypes import to_dtype

    want, have = to_dtype(dtype).np, dst._data.dtype
    if want == have:
        return
    if name == "nansum":
        raise RuntimeError(f"nansum: provided dtype must match dtype of result. Got {scalar_type_name(have)} and "
                           f"{scalar_type_name(want)}.")
    if name in ("linalg_norm", "linalg_matrix_norm"):
        raise RuntimeError(f"{name.replace('_', '.', 1)} expected out tensor dtype {scalar_type_name(want)} but "
                           f"got: {scalar_type_name(have)}")
    raise RuntimeError(_expected_dtype(want, have, 0))


def _expected_dtype(want: np.dtype, have: np.dtype, output: int) -> str:
    from ..backend.dtypes import cpp_type_name

    return f"Expected out tensor to have dtype {cpp_type_name(want)}, but got {cpp_type_name(have)} instead"


def _frexp_words(want: np.dtype, have: np.dtype, output: int) -> str:
    """frexp's own checks: the mantissa of self's dtype, then an int32 exponent (both named as C++ types)."""
    from ..backend.dtypes import cpp_type_name

    if output == 0:
        return f"torch.frexp() expects mantissa to have dtype {cpp_type_name(want)} but got {cpp_type_name(have)}"
    return f"torch.frexp() expects exponent to have int dtype but got {cpp_type_name(have)}"


def _names(want: np.dtype, have: np.dtype) -> tuple[str, str]:
    from ..backend.dtypes import scalar_type_name

    return scalar_type_name(want), scalar_type_name(have)


def _median_words(want: np.dtype, have: np.dtype, output: int) -> str:
    from ..backend.dtypes import tensor_type_string

    if output:
        return (f"Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                f"{tensor_type_string(have)} instead (while checking arguments for median)")
    return (f"Expected tensor for 'values' to have the same type as tensor for argument #2 'self'; but type "
            f"{tensor_type_string(have)} does not equal {tensor_type_string(want)} (while checking arguments for "
            "median)")


def _kthvalue_words(want: np.dtype, have: np.dtype, output: int) -> str:
    return "output indices must be of scalar type Long" if output else "output values must be of same type as input"


def _same_scalar_type(name: str):
    return lambda want, have, output: f"{name}(): self and result must have the same scalar type"


# Operators (name.overload) whose out= tensors must already have the results' dtypes: torch checks them
# instead of casting into them, in each operator's words (want: the result's dtype, have: out's, output: which
# result, 0 for the values, 1 for the indices).
_STRICT_OUT_DTYPE = {
    **dict.fromkeys(("linalg_vector_norm", "linalg_cholesky", "linalg_cholesky_ex", "sort", "sort.stable", "topk",
                     "max.dim", "min.dim", "aminmax", "linalg_cross", "linalg_inv_ex", "tril", "triu", "diag",
                     "diagonal_copy", "renorm", "linalg_svdvals", "mm", "bmm", "addmm", "baddbmm", "addmv", "mv",
                     "gather"), _expected_dtype),
    "where.self": lambda want, have, output: "Expected out type to be {} but got {}".format(*_names(want, have)),
    **{name: _same_scalar_type(name) for name in ("index_select", "masked_select")},
    "take": lambda want, have, output: "take(): self and out expected to have the same dtype, but got self.dtype = "
                                       "{} and out.dtype = {}".format(*_names(want, have)),
    **dict.fromkeys(("amax", "amin"), lambda want, have, output: "Expected the dtype for input and out to match, "
                    "but got {} for input's dtype and {} for out's dtype.".format(*_names(want, have))),
    **dict.fromkeys(("cummax", "cummin", "logcumsumexp"),
                    lambda want, have, output: "expected scalar_type {} but found {}".format(*_names(want, have))),
    # (its kernel solves in out, of A's dtype, in place)
    "linalg_solve_triangular":
        lambda want, have, output: "expected scalar type {} but found {}".format(*_names(want, have)),
    "kthvalue": _kthvalue_words,
    "frexp.Tensor": _frexp_words,
    "mode": lambda want, have, output: "expected scalar type '{}' but got '{}' for {} output".format(
        *_names(want, have), "indices" if output else "values"),
    **dict.fromkeys(("median.dim", "nanmedian.dim"), _median_words),
    # (the Scalar overloads run a unary TensorIterator over self cast to the result type, all dtypes the same)
    **dict.fromkeys(("clamp", "clamp_min", "clamp_max"),
                    lambda want, have, output: "Found dtype {1} but expected {0}".format(*_names(want, have))),
}


def _check_strict_out_dtypes(op, results: tuple, outs: tuple) -> None:
    overload = getattr(op.schema, "overload", "")
    words = _STRICT_OUT_DTYPE.get(f"{op.name}.{overload}" if overload else op.name)
    if words is None:
        return
    for output, (dst, src) in enumerate(zip(outs, results)):
        if isinstance(dst, Tensor) and dst._data.dtype != src._data.dtype:
            raise RuntimeError(words(src._data.dtype, dst._data.dtype, output))


def _check_cat_out(result: Tensor, dst: Tensor) -> None:
    """cat checks its out= dtype itself, with a TypeError in its own words."""
    from ..backend.dtypes import scalar_type_name
    from .pointwise import _can_cast_like_torch

    if not isinstance(dst, Tensor):
        return
    if result._data.dtype != dst._data.dtype and not _can_cast_like_torch(result._data.dtype, dst._data.dtype):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{scalar_type_name(dst._data.dtype)}")


def _check_out_overlap(op, bound: tuple, outs: tuple) -> None:
    """PyTorch's refusal of an ``out=`` tensor sharing memory with an input (see mem_overlap.py)."""
    from .mem_overlap import check_overlap, out_check
    from .registry import BinaryPointwiseOp, UnaryPointwiseOp

    check = out_check(op.name, isinstance(op, (UnaryPointwiseOp, BinaryPointwiseOp)))
    inputs = [v._data if isinstance(v, Tensor) else [t._data for t in v if isinstance(t, Tensor)]
              for v in bound if isinstance(v, (Tensor, list, tuple))]
    for dst in outs:
        if isinstance(dst, Tensor):
            check_overlap(check, dst._data, inputs)


def warn_out_resized(out: np.ndarray, shape: tuple) -> None:
    """torch's ``resize_output`` warning for an ``out=`` tensor of elements resized to ``shape``, shown at the
    user's line as torch's C++ warnings are (the call reaches here by several depths of tracegrad's code)."""
    if out.size != 0:
        from .._warnings import warn_at_caller

        warn_at_caller(
            f"An output with one or more elements was resized since it had shape {list(out.shape)}, which does not "
            f"match the required output shape {list(shape)}. This behavior is deprecated, and in a future PyTorch "
            "release outputs will not be resized unless they have zero elements. You can explicitly reuse an out "
            "tensor t by resizing it, inplace, to zero elements with t.resize_(0).", UserWarning)


def resized_out(out: np.ndarray, result: np.ndarray) -> np.ndarray:
    """``out``'s memory resized to ``result``'s shape and layout (dense, in ``result``'s order of strides), as
    torch resizes an ``out=`` tensor: over the same storage from its offset, so views of it and a larger buffer
    under it see the result, grown only where too small (``laid_out_over_storage``)."""
    from .._strides import element_strides
    from ..storage import laid_out_over_storage

    strides = element_strides(np.empty_like(result, dtype=out.dtype))  # (order 'K': result's layout, made dense)
    return laid_out_over_storage(out, result.shape, strides)


def _store(dst: Tensor, src: Tensor) -> None:
    from ..backend.dtypes import scalar_type_name, through_float_for_half
    from .pointwise import _can_cast_like_torch
    from .registry import check_no_internal_overlap

    check_no_internal_overlap(dst._data)
    dst._before_write()
    data = src._data
    if data.dtype != dst._data.dtype and not _can_cast_like_torch(data.dtype, dst._data.dtype):
        raise RuntimeError(f"result type {scalar_type_name(data.dtype)} can't be cast to the "
                           f"desired output type {scalar_type_name(dst._data.dtype)}")
    if dst._data.shape != data.shape:
        warn_out_resized(dst._data, data.shape)
        dst._data = resized_out(dst._data, data)
    np.copyto(dst._data, through_float_for_half(data, dst._data.dtype), casting="unsafe")
    from ..autograd.views import bump_after_write

    bump_after_write(dst)
