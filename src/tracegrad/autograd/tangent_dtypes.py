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

FORMULA_KIND: dict[str, str] = {
    **dict.fromkeys((
        "abs", "_nn_abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "celu", "cos", "cosh", "digamma", "elu",
        "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "i0",
        "leaky_relu", "lgamma", "log", "log10", "log1p", "log2", "logit", "mish", "polygamma", "pow.Scalar",
        "pow.Tensor_Scalar", "prod", "reciprocal", "relu", "rsqrt", "selu", "sigmoid", "silu", "sin", "sinc", "sinh",
        "softplus", "softshrink", "sqrt", "tan", "tanh", "threshold", "var"), ELEMENT_WISE),
    **dict.fromkeys(("neg", "deg2rad", "rad2deg", "conj_physical", "nan_to_num", "rsub.Scalar"),
                    ELEMENT_WISE_OF_TANGENT),
    # (fmod's and remainder's self_t - other_t * self_p.div(other_p, rounding_mode=...))
    **dict.fromkeys(("mul", "div", "_log_softmax", "fmod", "remainder"), MIXED),
    # (x.fmod(2.5), x.remainder(2.5) run the .Tensor overloads with a wrapped number, whose zero tangent changes no
    # dtype: the tangent's own, as torch gives it)
    **dict.fromkeys(("add", "sub", "rsub", "addcdiv", "addcmul", "fmax", "fmin", "fmod.Scalar", "remainder.Scalar"),
                    SUM_OF_TANGENTS),
    # (div with a rounding mode: result.new_zeros(...), whatever the tangents; an entry of its own, else div's MIXED)
    **dict.fromkeys(("cumprod", "sgn", "mse_loss", "smooth_l1_loss", "div.Tensor_mode", "div.Scalar_mode"), OUTPUT),
    **dict.fromkeys(("flip", "roll", "repeat", "tril", "triu", "trace", "index_select", "gather", "where",
                     "constant_pad_nd", "stack", "_nn_nll_loss"), LINEAR),
    **dict.fromkeys(("sort", "sort.stable", "topk", "max.dim", "min.dim", "kthvalue", "cummax", "cummin",
                     "median.dim", "nanmedian.dim", "mode"), SELECTED),
}


# LINEAR operators whose formula fixes an argument: constant_pad_nd(self_t, pad, 0) pads the tangent with zeros
LINEAR_FIXED_ARGS: dict[str, dict[int, object]] = {"constant_pad_nd": {2: 0}}


def formula_kind(schema) -> str | None:
    """The kind of the forward formula of the operator of ``schema`` (its overload's entry, else its name's), or None
    where tracegrad's rule already gives PyTorch's dtype."""
    kind = FORMULA_KIND.get(schema.full_name)
    return kind if kind is not None else FORMULA_KIND.get(schema.name)


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
# tangent goes through such a kernel but binary_cross_entropy's target's (binary_cross_entropy_target_backward takes
# any dtype): SELF_ONLY
_REAL_ONLY = "\"{kernel}\" not implemented for '{{tangent}}'"
_SAME_DTYPE = "Found dtype {found} but expected {expected}"
REFUSALS: dict[str, tuple[bool, type, str]] = {
    **{name: (True, NotImplementedError, _REAL_ONLY.format(kernel=kernel)) for name, kernel in (
        ("relu", "threshold_cpu"), ("threshold", "threshold_cpu"), ("elu", "elu_backward_cpu"),
        ("celu", "elu_backward_cpu"),
        ("hardshrink", "shrink_backward_cpu"), ("softshrink", "shrink_backward_cpu"),
        ("hardsigmoid", "hardsigmoid_backward"), ("hardswish", "hardswish_backward_cpu"),
        ("hardtanh", "hardshrink_backward_cpu"), ("leaky_relu", "leaky_relu_backward_cpu"),
        ("softplus", "softplus_backward_cpu"))},
    "binary_cross_entropy": (False, RuntimeError, _SAME_DTYPE.format(found="{primal}", expected="{tangent}")),
    **dict.fromkeys(("glu", "huber_loss", "log_sigmoid_forward"),
                    (False, RuntimeError, _SAME_DTYPE.format(found="{tangent}", expected="{primal}"))),
    **dict.fromkeys(("mse_loss", "smooth_l1_loss"), (
        True, RuntimeError, "result type {tangent} can't be cast to the desired output type {primal}")),
}


SELF_ONLY = frozenset({"binary_cross_entropy"})


def check_formula_runs(schema, primals: list, tangents: list) -> None:
    """PyTorch's error where the forward formula of the operator of ``schema`` runs a backward kernel that refuses
    the first of ``tangents`` (dtypes, None where an input has none) whose dtype is not its primal's."""
    name = schema.full_name if schema.full_name in REFUSALS else schema.name
    refusal = REFUSALS.get(name)
    if refusal is None:
        return
    complex_only, error, message = refusal
    for i, (primal, tangent) in enumerate(zip(primals, tangents)):
        if tangent is None or tangent == primal or (i and name in SELF_ONLY):
            continue
        if complex_only and tangent.kind != "c":
            return
        from ..backend.dtypes import scalar_type_name

        raise error(message.format(tangent=scalar_type_name(tangent), primal=scalar_type_name(primal)))
