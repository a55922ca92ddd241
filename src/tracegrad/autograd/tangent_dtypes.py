"""The dtype of a forward-mode tangent where an input's tangent has another dtype than its primal.

``make_dual`` takes a tangent of any floating or complex dtype. PyTorch's tangent of a result is then the formula of
its ``derivatives.yaml`` entry evaluated with ordinary type promotion, an input without tangent taking part as zeros of
its own dtype (a Python number as a wrapped number), and ``_set_fw_grad`` copies a tangent whose layout differs from
the result's (the lazily conjugated complex tangent of an ``auto_element_wise`` formula, which ends with ``.conj()``;
a real view of a complex one) into a tensor of the result's dtype. tracegrad's rules compute the right values but
not always in that dtype (a rule reading the tangent alone where PyTorch's formula mixes in the input, a derived rule
working in the output's dtype), so the kind of each operator's formula is listed here, read off derivatives.yaml.

Only tangents of mixed dtypes consult this table: where every tangent has its input's dtype, the tangent takes the
output's dtype, as every PyTorch formula then gives.
"""

from __future__ import annotations

import numpy as np

# auto_element_wise, its backward formula reading the input or result (relu's threshold_backward(grad, result, 0)):
# a real tangent promoted with the output's dtype; a complex one lazily conjugated, so copied into the output's dtype
ELEMENT_WISE = "element_wise"
# auto_element_wise reading grad alone (neg's grad.neg()), or a formula of the tangent alone (frac's self_t): the
# tangent's dtype, a complex one copied into the output's dtype where the formula ends with .conj()
ELEMENT_WISE_OF_TANGENT = "element_wise_of_tangent"
# an explicit formula mixing the tangent with the input or result, without a final .conj() (mul's
# other_t * self_p + self_t * other_p, with a number too: d * 2 is mul.Tensor with a wrapped number)
MIXED = "mixed"
# an explicit formula summing every input's tangent, zeros of an input's own dtype where it has none
# (add's self_t + maybe_multiply(other_t, alpha))
SUM_OF_TANGENTS = "sum_of_tangents"
# a formula whose last step gives the output's dtype (cumprod's .to(self_p.scalar_type()), a backward kernel writing
# in the input's dtype as mse_loss_backward, sgn_backward's zeros of a real input)
OUTPUT = "output"
# auto_linear (or the operator itself applied to self_t): the operator runs on the tangents, zeros of an input's
# dtype where it has none
LINEAR = "linear"
# a value-selecting operator (sort, topk, max.dim): its values' tangent is its input's tangent gathered at its
# indices (gather_with_keepdimed_indices(self_t, dim, indices, keepdim)), in the tangent's dtype
SELECTED = "selected"
# an explicit formula of the tangent alone written out in tangent_formulas.py (max pooling's gather of self_t at its
# flat indices, nansum's where(self_p.isnan(), 0, self_t).sum(...)), in the tangent's dtype
FORMULA = "formula"

FORMULA_KIND: dict[str, str | tuple[str | None, ...]] = {
    # one kind per output: var_mean's variance is var's at::real(...) of the tangent, a real view of a complex one
    # (copied into the output's dtype); its mean, mean(self_t), is the rule's own
    "var_mean": (ELEMENT_WISE, None),
    **dict.fromkeys((
        "abs", "_nn_abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "celu", "cos", "cosh", "digamma", "elu",
        "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "i0",
        "leaky_relu", "lgamma", "log", "log10", "log1p", "log2", "logit", "mish", "polygamma", "pow.Scalar",
        "pow.Tensor_Scalar", "prod", "reciprocal", "relu", "rsqrt", "selu", "sigmoid", "silu", "sin", "sinc", "sinh",
        "softplus", "softshrink", "sqrt", "tan", "tanh", "threshold", "var", "mvlgamma", "rrelu_with_noise"),
        ELEMENT_WISE),
    **dict.fromkeys(("neg", "deg2rad", "rad2deg", "conj_physical", "nan_to_num", "rsub.Scalar"),
                    ELEMENT_WISE_OF_TANGENT),
    # (fmod's and remainder's self_t - other_t * self_p.div(other_p, rounding_mode=...))
    # (renorm_jvp and logaddexp's formula mix self_t with self_p; ldexp is self * 2**other)
    **dict.fromkeys(("mul", "div", "_log_softmax", "fmod", "remainder", "renorm", "logaddexp", "ldexp"), MIXED),
    # (x.fmod(2.5), x.remainder(2.5) run the .Tensor overloads with a wrapped number, whose zero tangent changes no
    # dtype: the tangent's own, as torch gives it; frac's formula is self_t, a sum of one tangent)
    **dict.fromkeys(("add", "sub", "rsub", "addcdiv", "addcmul", "fmax", "fmin", "fmod.Scalar", "remainder.Scalar",
                     "frac"), SUM_OF_TANGENTS),
    # (div with a rounding mode: result.new_zeros(...), whatever the tangents; an entry of its own, else div's MIXED)
    **dict.fromkeys(("cumprod", "sgn", "mse_loss", "smooth_l1_loss", "div.Tensor_mode", "div.Scalar_mode"), OUTPUT),
    # (index_add's and scatter_add's formulas, index_add(self_t, dim, index, source_t), refuse tangents of two dtypes
    # as their kernels do)
    **dict.fromkeys(("flip", "roll", "repeat", "tril", "triu", "trace", "index_select", "gather", "where",
                     "constant_pad_nd", "stack", "_nn_nll_loss", "rot90", "take", "masked_select", "diag_embed",
                     "narrow_copy", "index", "block_diag", "index_add", "scatter_add", "avg_pool2d", "avg_pool3d",
                     "_adaptive_avg_pool2d", "_adaptive_avg_pool3d",
                     *(f"_{mode}_pad{k}d" for mode in ("reflection", "replication") for k in (1, 2, 3)),
                     *(f"_nn_upsample{mode}backward0" for mode in (
                         "nearest1d", "nearest2d", "nearest3d", "nearestexact1d", "nearestexact2d", "nearestexact3d",
                         "linear1d", "bilinear2d", "bicubic2d", "trilinear3d"))), LINEAR),
    **dict.fromkeys(("sort", "sort.stable", "topk", "max.dim", "min.dim", "kthvalue", "cummax", "cummin",
                     "median.dim", "nanmedian.dim", "mode"), SELECTED),
    **dict.fromkeys(("max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool2d",
                     "adaptive_max_pool3d", "nansum", "aminmax"), FORMULA),
}


# LINEAR operators whose formula fixes an argument: constant_pad_nd(self_t, pad, 0) pads the tangent with zeros
LINEAR_FIXED_ARGS: dict[str, dict[int, object]] = {"constant_pad_nd": {2: 0}}


def formula_names(schema, inplace: bool) -> tuple[str, str]:
    """(overload's name, name) of the entry of the operator of ``schema``: an in-place operator's is its functional
    form's, as PyTorch's in-place formula is the functional one followed by ``self_t.copy_(...)``."""
    if not inplace:
        return schema.full_name, schema.name
    name = schema.name[:-1]
    return name + schema.full_name[len(schema.name) + 1:], name


def formula_kind(schema, inplace: bool = False) -> str | tuple[str | None, ...] | None:
    """The kind of the forward formula of the operator of ``schema`` (its overload's entry, else its name's; a tuple:
    one per output), or None where tracegrad's rule already gives PyTorch's dtype."""
    full_name, name = formula_names(schema, inplace)
    kind = FORMULA_KIND.get(full_name)
    return kind if kind is not None else FORMULA_KIND.get(name)


def tangent_dtype(kind: str, tangent: np.dtype, out: np.dtype, zeros: list) -> np.dtype | None:
    """The dtype of PyTorch's tangent of a result of dtype ``out`` from input tangents promoting to ``tangent``, for a
    formula of ``kind``; ``zeros``: the primals (arrays' dtypes or numbers) of the inputs without tangent. None: the
    rule's own dtype stands."""
    if kind == OUTPUT:
        return out
    if kind == ELEMENT_WISE:
        # (a complex formula's final .conj() leaves a conjugate view, copied into the output's dtype)
        return out if tangent.kind == "c" or out.kind == "c" else np.promote_types(tangent, out)
    if kind == ELEMENT_WISE_OF_TANGENT:
        return out if tangent.kind == "c" else tangent
    if kind == MIXED:
        return np.promote_types(tangent, out)
    if kind == SUM_OF_TANGENTS:
        for z in zeros:
            tangent = _promoted_with_zeros_of(tangent, z)
        return tangent
    return None


def _promoted_with_zeros_of(dtype: np.dtype, primal) -> np.dtype:
    """``dtype`` promoted with zeros like ``primal``: a tensor's dtype, or a number wrapped as PyTorch wraps it
    (which changes the category alone: a complex number makes a real dtype complex)."""
    if isinstance(primal, np.dtype):
        return np.promote_types(dtype, primal)
    if isinstance(primal, complex) and dtype.kind != "c":
        return np.promote_types(dtype, np.complex64)
    return dtype


# Operators whose formula runs a backward kernel that refuses the tangent's dtype: (only a complex tangent is refused,
# the error's type, its message with {tangent}: the tangent's scalar type, {primal}: the input's). Every input's
# tangent goes through such a kernel but binary_cross_entropy's target's, whose binary_cross_entropy_target_backward
# refuses a complex tangent alone, in other words (TARGET_REFUSALS)
_REAL_ONLY = "\"{kernel}\" not implemented for '{{tangent}}'"
_SAME_DTYPE = "Found dtype {found} but expected {expected}"
REFUSALS: dict[str, tuple[bool, type, str]] = {
    **{name: (True, NotImplementedError, _REAL_ONLY.format(kernel=kernel)) for name, kernel in (
        ("relu", "threshold_cpu"), ("threshold", "threshold_cpu"), ("elu", "elu_backward_cpu"),
        ("celu", "elu_backward_cpu"),
        ("hardshrink", "shrink_backward_cpu"), ("softshrink", "shrink_backward_cpu"),
        ("hardsigmoid", "hardsigmoid_backward"), ("hardswish", "hardswish_backward_cpu"),
        ("hardtanh", "hardshrink_backward_cpu"), ("leaky_relu", "leaky_relu_backward_cpu"),
        ("softplus", "softplus_backward_cpu"), ("selu", "elu_backward_cpu"),
        ("rrelu_with_noise", "leaky_relu_backward_cpu"))},
    "binary_cross_entropy": (False, RuntimeError, _SAME_DTYPE.format(found="{primal}", expected="{tangent}")),
    **dict.fromkeys(("glu", "huber_loss", "log_sigmoid_forward"),
                    (False, RuntimeError, _SAME_DTYPE.format(found="{tangent}", expected="{primal}"))),
    **dict.fromkeys(("mse_loss", "smooth_l1_loss", "soft_margin_loss"), (
        True, RuntimeError, "result type {tangent} can't be cast to the desired output type {primal}")),
}


TARGET_REFUSALS: dict[str, tuple[bool, type, str]] = {
    "binary_cross_entropy": (True, RuntimeError, "result type {tangent} can't be cast to the desired output type "
                                                 "{primal}")}

# Operators whose backward kernel refuses only with some arguments: rrelu_with_noise_backward multiplies by the noise
# (any dtype) when training with upper > lower, and runs leaky_relu_backward otherwise
_REFUSED_WHEN = {"rrelu_with_noise": lambda args: not (args[4] and args[3] - args[2] > 1e-6)}


def check_formula_runs(schema, args: tuple, primals: list, tangents: list, inplace: bool = False) -> None:
    """PyTorch's error where the forward formula of the operator of ``schema`` called with ``args`` runs a backward
    kernel that refuses one of ``tangents`` (dtypes, None where an input has none) whose dtype is not its primal's.
    The formula sums one kernel call per input, which (as GCC evaluates the operands of a C++ call) run right to
    left: the last input's refusal is the one raised."""
    full_name, name = formula_names(schema, inplace)
    name = full_name if full_name in REFUSALS else name
    refused_when = _REFUSED_WHEN.get(name)
    if name not in REFUSALS or (refused_when is not None and not refused_when(args)):
        return
    for i in reversed(range(len(tangents))):
        primal, tangent = primals[i], tangents[i]
        refusal = TARGET_REFUSALS.get(name) if i else None
        complex_only, error, message = refusal or REFUSALS[name]
        if tangent is None or tangent == primal or (complex_only and tangent.kind != "c"):
            continue
        from ..backend.dtypes import scalar_type_name

        raise error(message.format(tangent=scalar_type_name(tangent), primal=scalar_type_name(primal)))


# Operators whose formula takes the real part of its value for a real input (``handle_r_to_c``: abs's, pow_backward):
# their in-place form, whose formula is otherwise copied into self's complex tangent whole, drops the imaginary part
REAL_PART_FORMULAS = frozenset({"abs", "pow", "square"})
