"""bfloat16 computed in float, as PyTorch's CPU kernels compute it.

A bfloat16 tensor holds an ml_dtypes ``bfloat16`` array (backend/dtypes.py). ATen's CPU kernels compute bfloat16 in
float (its "opmath" type) and round each result once, and reductions accumulate in float; tracegrad's kernels are
written for NumPy's own dtypes (a bfloat16 array's kind is "V"). So, once bfloat16 comes into being
(:func:`activate`; until then, and in a program that never makes one, the kernels run as they are), every operator's
kernel is wrapped: with no bfloat16 array among its arguments and no ``dtype=torch.bfloat16``, the wrapper steps
aside at once; otherwise it runs the float32 kernel on float32 copies and rounds (to nearest even) the float32
results whose dtype PyTorch's promotion makes bfloat16. Inputs a kernel writes into (an in-place operator's
``self``, batch norm's running statistics, ``out=``) get the rounded values written back.

Views are not wrapped: they return a part of their input, whatever its dtype, and must share its memory. Operators
that only move data (bfloat16_bit_moves.py) run on int16 views instead, keeping every NaN's bits as torch does.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable

import numpy as np

from .._strides import element_strides, strided_empty
from ..backend import dtypes as _dt
from . import bfloat16_bit_moves
from .aten_vec import has_nan

_ndarray = np.ndarray
_F32 = np.dtype(np.float32)
_F32_SCALAR = np.float32

_active = False
_FAST_PATH_CELLS: list = []  # (operator, closure cell): a fast path's copy of its operator's kernel
_DECLARED: list = []  # every operator declared before activation
_IN_FLIGHT = [0]  # how many kernels now compute a bfloat16 result on float32 copies (nested calls count)
FLOAT_COPIES: list = []  # float32 copies of bfloat16 arrays given to the kernels now running (nested calls stack)


def _is_bf16(value) -> bool:
    return value.__class__ is _ndarray and value.dtype is _dt.bfloat16.np


def _holds_bf16(value) -> bool:
    if value.__class__ is _ndarray:
        return value.dtype is _dt.bfloat16.np
    if value.__class__ is list or value.__class__ is tuple:
        return any(_is_bf16(v) for v in value)
    return value is _dt.bfloat16 or value is _dt.bfloat16.np


def _in_float(value):
    """An argument as the float32 kernel takes it: bfloat16 arrays (alone or in a list) as float32 copies,
    ``dtype=torch.bfloat16`` (or its NumPy dtype) as float32."""
    if value.__class__ is _ndarray:
        if value.dtype is not _dt.bfloat16.np:
            return value
        copy = value.astype(_F32)
        FLOAT_COPIES.append(copy)  # (so that a kernel's dtype checks still see it as bfloat16: seen_dtype)
        return copy
    if value.__class__ is list or value.__class__ is tuple:
        return value.__class__(_in_float(v) for v in value)
    if value is _dt.bfloat16:
        return _dt.float32
    return _F32 if value is _dt.bfloat16.np else value


def _promotes_to_bf16(args) -> bool:
    """Whether the arrays among ``args`` promote (as PyTorch does, 0-d ones as 0-dim tensors) to bfloat16, or a
    ``dtype=torch.bfloat16`` asks for it. Another dtype asked for wins over the operands (``x.float()``)."""
    dims: list[_dt.dtype] = []
    zeros: list[_dt.dtype] = []
    asked = None
    for value in args:
        values = value if value.__class__ is list or value.__class__ is tuple else (value,)
        for v in values:
            if v.__class__ is _ndarray:
                (dims if v.ndim else zeros).append(_dt.from_numpy_dtype(v.dtype))
            elif v.__class__ is _dt.dtype or isinstance(v, np.dtype):
                asked = v
    if asked is not None:
        return asked is _dt.bfloat16 or asked is _dt.bfloat16.np
    return _dt.result_type_of(dims, zeros, []) is _dt.bfloat16


def _rounded(result):
    """A float32 kernel's result rounded to bfloat16: arrays, and the NumPy float32 scalars that NumPy's operations
    on 0-d arrays give (``a + b`` of two 0-dim tensors)."""
    if result.__class__ is _ndarray or result.__class__ is _F32_SCALAR:
        if result.dtype is not _F32:
            return result
        if result.size == 0 and result.ndim:  # (NumPy's astype lays an empty array out anew: keep its strides)
            return strided_empty(result.shape, element_strides(result), np.dtype(_dt.bfloat16.np))
        return result.astype(_dt.bfloat16.np)
    if result.__class__ is tuple or result.__class__ is list:
        return result.__class__(_rounded(r) for r in result)
    return result


def _write_back(original, computed) -> None:
    """Write a kernel's float32 copy of an input back into the bfloat16 input it stands for."""
    if original.__class__ is _ndarray:
        if original is not computed and original.dtype is _dt.bfloat16.np:
            original[...] = computed.astype(original.dtype) if computed.dtype is _F32 else computed
    elif original.__class__ is list or original.__class__ is tuple:
        for o, c in zip(original, computed):
            _write_back(o, c)


# Binary operators whose CPU kernels take a number (or a 0-dim tensor of another dtype) beside a bfloat16 tensor
# as a bfloat16 value: TensorIterator casts it to the common dtype. (mul, div, lerp, addcmul... keep it in float,
# their "opmath" scalar, and so do the parameters of activations: they are not here.)
_SCALARS_ROUNDED = frozenset({
    "add", "sub", "subtract", "rsub", "remainder", "fmod", "pow", "atan2", "arctan2", "eq", "ne", "lt", "le", "gt",
    "ge", "greater", "greater_equal", "less", "less_equal", "not_equal", "fmax", "fmin", "hypot", "copysign",
    "maximum", "minimum"})
_NUMBERS = (float, int, np.floating, np.integer)


def _as_bfloat16_number(value):
    """A number or 0-d array given beside a bfloat16 operand, as the bfloat16 value TensorIterator casts it to
    (through float, as c10's conversion from double)."""
    if isinstance(value, _NUMBERS) and value.__class__ is not bool:
        return np.asarray(np.float32(value)).astype(_dt.bfloat16.np)
    if value.__class__ is _ndarray and value.ndim == 0 and value.dtype.kind in "fiu":
        return value.astype(_F32).astype(_dt.bfloat16.np)
    return value


def _to_bfloat16(array: np.ndarray) -> np.ndarray:
    """``array`` converted to bfloat16 as c10 converts: through float (a float64 value is rounded twice)."""
    return array.astype(_F32).astype(_dt.bfloat16.np)


def _is_integral_array(value) -> bool:
    return value.__class__ is _ndarray and value.dtype.kind in "biu"


def _as_bfloat16_tensor(value, first: bool):
    """An integer or bool tensor given beside a bfloat16 one to an operator TensorIterator runs, as the bfloat16
    copy it casts the tensor to when their common dtype is bfloat16 (through float, as c10's conversion). A 0-d one
    is cast only given ``first`` (``tensor(257) * bf16`` multiplies by 256); elsewhere it is left to ``scalars``
    (mul and div read one given second as a float, uncast)."""
    if _is_integral_array(value) and (value.ndim or first):
        return _to_bfloat16(value)
    return value


# Reductions and scans whose CPU kernels, asked for a bfloat16 result (``dtype=`` or a bfloat16 ``out=``), first
# convert a real input to bfloat16 (``self.to(dtype)``: sum(float32 x, dtype=bfloat16) sums x's bfloat16 values,
# in float; an int64 one too). mean is not here: it reads the input as it is and rounds only its result.
# The in-place operators that write a comparison's truth into a self of any dtype (an arithmetic one into an
# integer self is refused: its bfloat16 result can't be cast into it).
_COMPARISONS = frozenset({
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal", "logical_and",
    "logical_or", "logical_xor"})
_CASTS_INPUT_TO_BFLOAT16 = frozenset({"sum", "nansum", "prod", "cumsum", "cumprod"})


def _input_as_bfloat16(value):
    """A real input (floating but bfloat16, integer or bool) of a :data:`_CASTS_INPUT_TO_BFLOAT16` operator, as its
    bfloat16 copy."""
    if value.__class__ is _ndarray and value.dtype.kind in "fiub":
        return _to_bfloat16(value)
    return value


# Operators whose kernel converts its number to bfloat16 with c10's overflow check (``Scalar::to``), where
# TensorIterator casts the other operators' numbers silently: x ** 1e39 is refused, x + 1e39 is inf.
_NUMBERS_CHECKED = frozenset({"pow.Tensor_Scalar"})


def _as_checked_bfloat16_number(value):
    """``_as_bfloat16_number``, a float beyond bfloat16's range refused first (rounding would make it inf)."""
    if isinstance(value, (float, np.floating)):
        from .scalar_fill import check_scalar_parameter  # (scalar_fill imports this module)

        check_scalar_parameter(float(value), _dt.bfloat16.np)
    return _as_bfloat16_number(value)


def _on_float_copies(kernel: Callable, args: tuple, kwargs: dict) -> tuple:
    """``kernel`` run on float32 copies of its bfloat16 arguments, the copies noted in ``FLOAT_COPIES`` while it runs
    (nested calls stack theirs): ``(the positional copies, the result)``."""
    copies_before = len(FLOAT_COPIES)
    try:
        floats = tuple(_in_float(a) for a in args)
        return floats, kernel(*floats, **{k: _in_float(v) for k, v in kwargs.items()})
    finally:
        del FLOAT_COPIES[copies_before:]


def in_float(kernel: Callable, written: tuple[int, ...], inplace: bool, constants: frozenset = frozenset(),
             scalars: frozenset = frozenset(), nan_bits: str | None = None,
             cast_tensors: frozenset = frozenset(), as_number: Callable = _as_bfloat16_number,
             casts_input: bool = False, compares_in_place: bool = False) -> Callable:
    """``kernel`` computing bfloat16 arguments in float32; ``written``: the positions of the arguments it writes
    into; an ``inplace`` kernel returns its first argument; ``constants``: the positions and names of its ``Any``
    parameters, whose arrays (adaptive pooling's float64 matrices) are no operands: they take no part in the
    result's dtype; ``scalars``: the positions and names of the operands that a number given there is rounded to
    bfloat16 in, where the result is bfloat16; ``nan_bits``: how ATen's kernel rounds a NaN (``_NAN_BITS``);
    ``cast_tensors``: the positions and names of the tensor operands TensorIterator casts to the common dtype, where
    an integer or bool tensor is rounded to bfloat16 first (``lt(int64 [257], bfloat16 [256])`` is False in float,
    but torch compares 256 with 256); ``as_number``: how a number at ``scalars`` is rounded; ``casts_input``: the
    kernel converts its real first argument to a bfloat16 result's dtype first (:data:`_CASTS_INPUT_TO_BFLOAT16`);
    ``compares_in_place``: an in-place comparison (:data:`_COMPARISONS`), whose integer ``self`` is compared as its
    bfloat16 copy."""

    def run(*args, **kwargs):
        if not (any(_holds_bf16(a) for a in args) or any(_holds_bf16(v) for v in kwargs.values())):
            return kernel(*args, **kwargs)
        operands = [a for i, a in enumerate(args) if i not in constants]
        rounds = _promotes_to_bf16((*operands, *(v for k, v in kwargs.items() if k not in constants)))
        if rounds and scalars:
            args = tuple(as_number(a) if i in scalars else a for i, a in enumerate(args))
            kwargs = {k: as_number(v) if k in scalars else v for k, v in kwargs.items()}
        if rounds and cast_tensors:
            args = tuple(_as_bfloat16_tensor(a, i == 0) if i in cast_tensors else a for i, a in enumerate(args))
            kwargs = {k: _as_bfloat16_tensor(v, False) if k in cast_tensors else v for k, v in kwargs.items()}
        integral_self = None
        if rounds and compares_in_place and _is_integral_array(args[0]):
            # (an integer self compared in place with bfloat16, ``int_t.eq_(bf16)``: TensorIterator compares
            # self's bfloat16 copy and writes the result back into self's own dtype)
            integral_self, args = args[0], (_to_bfloat16(args[0]), *args[1:])
        if rounds and casts_input:
            args = (_input_as_bfloat16(args[0]), *args[1:])
        _IN_FLIGHT[0] += rounds
        try:
            floats, result = _on_float_copies(kernel, args, kwargs)
        except Exception as error:
            if inplace:  # (what torch's loop had written before the bad argument stays written)
                _write_back(args[0], getattr(error, "written_before", args[0]))
            raise
        finally:
            _IN_FLIGHT[0] -= rounds
        for i in written:
            if i < len(args):
                _write_back(args[i], floats[i])
        if inplace and result is floats[0]:
            # (a cast's target decides: copy_ of float32 into bfloat16 promotes to float32, yet rounds)
            if nan_bits is not None and (rounds or nan_bits == "cast" and _is_bf16(args[0])):
                _set_nan_bits(args[0], floats[0], args, nan_bits)
            if integral_self is not None:
                integral_self[...] = floats[0]
                return integral_self
            return args[0]
        if not rounds:
            return result
        rounded = _rounded(result)
        return rounded if nan_bits is None else _with_nan_bits(rounded, result, args, nan_bits)

    run.computes_bfloat16_in_float = True
    return run


# How ATen's bfloat16 kernels round a NaN back from float: c10's scalar conversion gives 0x7fc0 whatever the NaN;
# the AVX2 vector conversion (cvtfp32_bf16) gives 0xffff. ml_dtypes' rounding keeps the sign (0xffc0). The vml
# kernels ("vector") map every element through vector code, a partial last vector too; ``cpu_kernel_vec``'s AVX2 build
# ("blocks") runs vector code on blocks of two vectors (32 elements) and scalar code on each run's tail; a
# ``cpu_kernel`` ("scalar", keyed by its overload's name where the operator's other overloads differ) only scalar
# code. Other
# kernels are left as they are: a known gap for them (AVX-512 builds take 64 elements a block, reductions...).
_NAN_BITS = {
    **dict.fromkeys(("acos", "asin", "atan", "ceil", "cos", "erf", "erfc", "erfinv", "exp", "expm1", "floor", "i0",
                     "lgamma", "log", "log10", "log1p", "log2", "sin", "sqrt", "round", "tan", "tanh", "trunc",
                     "logit"), "vector"),
    "round.decimals": "scalar",
    **dict.fromkeys(("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "rsqrt", "frac",
                     "deg2rad", "rad2deg"), "blocks"),
    # casts into bfloat16 (x.to(torch.bfloat16), copy_): by the source's dtype (_cast_nan_pattern)
    **dict.fromkeys(("_to_copy", "copy"), "cast"),
}
_VECTOR_NAN, _SCALAR_NAN = np.uint16(0xFFFF), np.uint16(bfloat16_bit_moves.C10_NAN)
_BF16_BLOCK = 32  # (two AVX2 vectors of bfloat16)


def _nan_bits_of(op_name: str, overload: str) -> str | None:
    name = op_name.rstrip("_")
    return _NAN_BITS.get(f"{name}.{overload}", _NAN_BITS.get(name))


def _with_nan_bits(rounded, result, operands: tuple, rule: str):
    """``rounded`` (``result`` rounded to bfloat16) with the NaN bits ATen's kernel gives, by ``rule``: an array's
    set in place; a NumPy scalar (an operation on 0-d arrays) replaced."""
    if rounded.__class__ is _ndarray:
        _set_nan_bits(rounded, result, operands, rule)
    elif result.__class__ is _F32_SCALAR and math.isnan(result):
        array = np.array(rounded)
        _set_nan_bits(array, np.array(result), operands, rule)
        return array[()]
    return rounded


def _set_nan_bits(rounded: np.ndarray, result: np.ndarray, operands: tuple, rule: str) -> None:
    """Give the NaNs of ``rounded`` (``result``, float32, rounded to bfloat16) the bits ATen's kernel gives them, by
    ``rule``; ``operands``: the kernel's arguments as given (not their float32 copies, which are compacted: an
    operand's strides decide where ATen's loop runs scalar code)."""
    if result.__class__ is not _ndarray or result.dtype is not _F32 or not has_nan(result):
        return  # (the common case: no NaN, one dot product tells)
    nan = np.isnan(result)
    bits = rounded.view(np.uint16)
    if rule == "cast":
        bits[nan] = _cast_nan_pattern(rounded, operands)[nan]
        return
    if rule != "blocks":
        bits[nan] = _VECTOR_NAN if rule == "vector" else _SCALAR_NAN
        return
    from .aten_loops import vector_and_scalar

    arrays = tuple(a for a in operands if a.__class__ is _ndarray and a.ndim) or (result,)
    try:
        pattern = vector_and_scalar(_nan_pattern, arrays, _BF16_BLOCK, out_like=rounded)
    except ValueError:  # (arguments that do not broadcast to the result: not a pointwise loop's operands)
        return
    bits[nan] = pattern[nan]


_F64_CAST_BLOCK = 16  # (ATen's double-to-bfloat16 copy loop: one Vectorized<BFloat16> a step)


def cast_nans(out: np.ndarray, source: np.ndarray) -> np.ndarray:
    """``out`` (``source`` copied into bfloat16 by NumPy, laid out as torch lays out the copy) with each NaN as
    ATen's copy loop makes it (:func:`_cast_nan_pattern`): for the casts outside an operator, torch.tensor and
    torch.as_tensor of an array or tensor with a ``dtype``. A complex source gives its real part."""
    if out.dtype is not _dt.bfloat16.np or source.dtype.kind not in "fc":
        return out
    nan = np.isnan(source.real)
    if nan.any():
        out.view(np.uint16)[nan] = _cast_nan_pattern(out, (source,))[nan]
    return out


def _cast_nan_pattern(out: np.ndarray, operands: tuple) -> np.ndarray:
    """The NaN bits of ATen's CPU copy into the bfloat16 ``out`` from the first float operand among ``operands``
    (the source), element by element. The copy runs vector code only along an inner run contiguous in both
    (a strided or broadcast source, or a 0-d result, takes scalar code throughout): float32 converts the whole run
    in vectors, its last partial one too; float64 whole blocks of 16 from each run's start (and thread's range),
    its tail in scalar code; float16 converts element by element, in scalar code."""
    source = next((a for a in operands if a.__class__ is _ndarray and a.dtype.kind == "f"), None)
    scalar = np.full(out.shape, _SCALAR_NAN)
    if source is None or source.itemsize == 2 or out.ndim == 0:
        return scalar
    from .aten_loops import GRAIN_SIZE, iteration_order, vector_and_scalar

    wide = np.broadcast_to(source, out.shape)
    order, run = iteration_order(out, (wide,))
    if out.size > 1 and (run == 1 or wide.strides[order[-1]] == 0):
        return scalar
    if source.itemsize == 4:
        return np.full(out.shape, _VECTOR_NAN)
    return vector_and_scalar(_nan_pattern, (wide,), _F64_CAST_BLOCK, out_like=out, grain=GRAIN_SIZE)


def _nan_pattern(*operands: np.ndarray, vector: bool) -> np.ndarray:
    shape = np.broadcast_shapes(*(o.shape for o in operands))
    return np.full(shape, _VECTOR_NAN if vector else _SCALAR_NAN)


# Normalizations whose CPU kernels take float32 parameters beside a bfloat16 input (ATen's mixed_data_type.h): the
# positions of the parameters (weight, bias, running statistics). Such a call's normalized output is bfloat16 and
# its statistics float32; the parameters are checked as given, before the float32 copies hide their dtypes.
_FLOAT_PARAMETERS = {
    "_nn_layer_norm": (2, 3),
    "_nn_group_norm": (1, 2),
    "_nn_batch_norm_train": (1, 2, 3, 4),
    "_nn_batch_norm_eval": (1, 2, 3, 4),
}


def with_float_parameters(kernel: Callable, parameters: tuple[int, ...], computed: Callable) -> Callable:
    """A normalization's ``computed`` (its kernel computing bfloat16 in float) that first checks the parameters at
    ``parameters`` against the input as ATen does and, for a bfloat16 input with float32 parameters, rounds only
    the normalized output (the first)."""
    from .nn_ops._common import check_mixed_dtype

    def run(*args):
        if not any(_holds_bf16(a) for a in args):
            return kernel(*args)
        if not check_mixed_dtype(args[0], *(args[i] for i in parameters if i < len(args))):
            return computed(*args)
        _, result = _on_float_copies(kernel, args, {})
        return (_rounded(result[0]), *result[1:])

    run.computes_bfloat16_in_float = True
    return run


# ---- operators torch refuses bfloat16 to --------------------------------------------------------------------

Refusal = str | Callable[[tuple], Exception | None]


def _refusal_of(entry: Refusal, args: tuple) -> Exception | None:
    """The error of a :data:`REFUSED` entry for a call with ``args`` (None: the call computes)."""
    if entry.__class__ is str:
        return _bfloat16_refusal(entry)
    return entry(args)


def _bfloat16_refusal(kernel_name: str) -> Exception:
    return NotImplementedError(f"\"{kernel_name}\" not implemented for 'BFloat16'")


def _complex_refusal(args: tuple) -> Exception:
    names = " and ".join(_dt.scalar_type_name(a.dtype) for a in args[:2])
    return RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {names}")


def _binomial_refusal(count, prob) -> Exception:
    """binomial's TensorIterator refuses a prob of another dtype than count before its dispatch refuses bfloat16."""
    if count.dtype != prob.dtype:
        return RuntimeError(f"Found dtype {_dt.scalar_type_name(prob.dtype)} but expected "
                            f"{_dt.scalar_type_name(count.dtype)}")
    return _bfloat16_refusal("binomial_cpu")


def _solve_triangular_refusal(a) -> Exception | None:
    """solve_triangular copies B into a result of A's dtype: only a bfloat16 A is refused (a bfloat16 B beside
    another A is computed)."""
    return _bfloat16_refusal("triangular_solve_cpu") if _holds_bf16(a) else None


def _polynomials() -> tuple[str, ...]:
    families = (("chebyshev", "tuvw"), ("shifted_chebyshev", "tuvw"), ("hermite", ("h", "he")), ("laguerre", "l"),
                ("legendre", "p"))
    return tuple(f"{family}_polynomial_{n}" for family, ns in families for n in ns)


# The operators whose CPU kernels torch 2.13 has no BFloat16 instantiation for, learnt by calling torch on every
# operator of the test database and public function: registered operator name -> the kernel name in torch's
# ``"<name>" not implemented for 'BFloat16'`` (ATen's dispatch names, not the operators'), or a function of the
# arguments giving torch's own refusal (None: computed, as where ATen returns an empty result before dispatching).
# A pointwise operator (TensorIterator's) is refused only where its operands promote to bfloat16 (``zeta(bf16,
# float32)`` computes in float32); any other one wherever a bfloat16 operand is given. (cdist's Euclidean distances
# through matrix products, ``_euclidean_dist``, are computed, as torch computes them.) The kernels whose dtype check
# sits among their argument checks (cdist, pdist, pinv, lstsq, lu) make it themselves, reading ``seen_dtype``.
REFUSED: dict[str, Refusal] = {
    # linear algebra (LAPACK has no bfloat16; the others refuse it in their kernels, as float16)
    "linalg_lu": "lu_cpu", "linalg_lu_factor_ex": "lu_cpu", "triangular_solve": "triangular_solve_cpu",
    "linalg_solve_triangular": lambda args: _solve_triangular_refusal(args[0]),
    "cholesky_inverse": "cholesky_inverse_out_cpu",
    "ormqr": "ormqr_cpu", "geqrf": "geqrf_cpu", "linalg_ldl_factor_ex": "ldl_factor_kernel_cpu",
    # distances, pooling, losses
    "_pdist_backward": "pdist_backward",
    "avg_pool3d": "avg_pool3d_out_frame", "_ctc_loss": "ctc_loss_cpu",
    "multi_margin_loss": "multi_margin_loss_cpu_kernel",
    "multilabel_margin_loss_forward": "multilabel_margin_loss_forward_out_frame",
    # special functions, random draws, complex numbers made of two real tensors
    **{f"special_{name}": f"{name}_cpu" for name in (
        "erfcx", "log_ndtr", "ndtri", "zeta", "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
        "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
        "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0", *_polynomials())},
    "binomial": lambda args: _binomial_refusal(*args[:2]), "complex": _complex_refusal, "polar": _complex_refusal,
    "_sobol_engine_draw": "_sobol_engine_draw",
    # Fourier transforms (reached with bfloat16 through stft; torch.fft's functions refuse it before)
    **dict.fromkeys(("_fft_r2c", "_fft_c2c", "_fft_c2r"),
                    lambda args: RuntimeError("MKL FFT doesn't support tensors of type: BFloat16")),
}
# Operators that check their operands' own dtypes (not the promoted one) before their arguments. The others check
# their arguments first (the kernel runs on float32 copies) and are refused after, a numerical failure (a singular
# matrix) included.
REFUSED_BEFORE_ARGUMENTS = frozenset({"_ctc_loss", "complex", "polar"})


def refusing(kernel: Callable, computed: Callable, entry: Refusal, pointwise: bool,
             before_arguments: bool) -> Callable:
    """``computed`` (``kernel`` computing bfloat16 in float) refusing a bfloat16 call as torch's operator with no
    BFloat16 kernel does (``entry``: its :data:`REFUSED` entry); a ``pointwise`` operator whose operands promote
    to another dtype computes, unless refused ``before_arguments`` (:data:`REFUSED_BEFORE_ARGUMENTS`)."""

    def run(*args, **kwargs):
        if not (any(_holds_bf16(a) for a in args) or any(_holds_bf16(v) for v in kwargs.values())):
            return kernel(*args, **kwargs)
        promotes = not pointwise or before_arguments or _promotes_to_bf16((*args, *kwargs.values()))
        refusal = _refusal_of(entry, args) if promotes else None
        if refusal is None:
            return computed(*args, **kwargs)
        if not before_arguments:
            from .linalg import LinAlgError

            with contextlib.suppress(LinAlgError):  # (the kernel's own argument checks; nothing written back)
                _on_float_copies(kernel, args, kwargs)
        raise refusal

    run.computes_bfloat16_in_float = True
    return run


def computes_bfloat16(kernel: Callable) -> Callable:
    """Mark ``kernel`` as computing bfloat16 itself (on ml_dtypes' arrays): it is not wrapped. For the kernels
    whose float32 result would not round back to torch's (nextafter steps one bfloat16 ulp, not a float one)."""
    kernel.computes_bfloat16_in_float = True
    return kernel


def _wrap(op) -> None:
    if op.is_view or op.kernel is None or getattr(op.kernel, "computes_bfloat16_in_float", False):
        return
    op.kernel = _in_float_kernel(op, op.kernel)


def _in_float_kernel(op, kernel: Callable) -> Callable:
    params = op.schema.params
    written = tuple(i for i, p in enumerate(params) if p.is_write)
    constants = frozenset(key for i, p in enumerate(params) if p.type.startswith("Any") for key in (i, p.name))
    scalars = frozenset()
    if op.name.split(".")[0].rstrip("_") in _SCALARS_ROUNDED:
        scalars = frozenset(key for i, p in enumerate(params) if p.type in ("Tensor", "Scalar")
                            and p.name != "alpha" and i not in written and not (op.is_inplace and i == 0)
                            for key in (i, p.name))
    functional_name = op.name[:-1] if op.is_inplace else op.name
    from .result_layouts import follows_tensor_iterator

    cast_tensors = frozenset()
    if follows_tensor_iterator(functional_name):  # (where's condition is no operand of the common dtype)
        cast_tensors = frozenset(key for i, p in enumerate(params) if p.type in ("Tensor", "Tensor?")
                                 and p.name != "condition" and i not in written for key in (i, p.name))
    checked = f"{op.name.rstrip('_')}.{op.schema.overload}" in _NUMBERS_CHECKED
    computed = in_float(kernel, written, op.is_inplace, constants, scalars, _nan_bits_of(op.name, op.schema.overload),
                        cast_tensors, _as_checked_bfloat16_number if checked else _as_bfloat16_number,
                        functional_name in _CASTS_INPUT_TO_BFLOAT16, op.is_inplace and functional_name in _COMPARISONS)
    if bfloat16_bit_moves.moves_bits(op):
        return bfloat16_bit_moves.bit_moving(op, kernel, computed, _holds_bf16, _promotes_to_bf16)
    parameters = _FLOAT_PARAMETERS.get(op.name)
    if parameters is not None:
        return with_float_parameters(kernel, parameters, computed)
    refusal = REFUSED.get(functional_name)
    if refusal is None:
        return computed
    return refusing(kernel, computed, refusal, follows_tensor_iterator(functional_name),
                    functional_name in REFUSED_BEFORE_ARGUMENTS)


def declare(op) -> None:
    """Note an operator as it is declared (OpDef.__init__): its kernel computes bfloat16 in float from
    activation on (at once if bfloat16 is already in use)."""
    if _active:
        _wrap(op)
    else:
        _DECLARED.append(op)


def fast_path_kernel(op, function: Callable) -> None:
    """A fast path (ops/fastpath.py) keeps its operator's kernel in a closure cell named ``kernel``: that cell gets
    the wrapped kernel at activation."""
    if not _active:
        cell = function.__closure__[function.__code__.co_freevars.index("kernel")]
        _FAST_PATH_CELLS.append((op, cell))


def restored_kernel(op, kernel: Callable) -> Callable:
    """An operator's kernel put back after a temporary replacement (utils/_python_dispatch.py): wrapped if bfloat16
    came into being in the meantime."""
    if not _active or op.is_view or getattr(kernel, "computes_bfloat16_in_float", False):
        return kernel
    return _in_float_kernel(op, kernel)


def activate() -> None:
    """bfloat16 is in use: every operator but the views gets its float-computing kernel, fast paths included."""
    global _active
    if _active:
        return
    _active = True
    for op in _DECLARED:
        _wrap(op)
    _DECLARED.clear()
    for op, cell in _FAST_PATH_CELLS:
        cell.cell_contents = op.kernel
    _FAST_PATH_CELLS.clear()


def is_active() -> bool:
    return _active


def finfo(np_dtype: np.dtype):
    """NumPy's finfo of a floating dtype; ml_dtypes' of bfloat16 (which NumPy's refuses), for a bfloat16 array or a
    float32 copy standing for one (nan_to_num's default limits, logcumsumexp's lowest gradient)."""
    if np_dtype is _dt.bfloat16.np or stands_for_bfloat16(np_dtype):
        import ml_dtypes

        return ml_dtypes.finfo(_dt.bfloat16.np)
    return np.finfo(np_dtype)


def as_seen(np_dtype: np.dtype) -> np.dtype:
    """The dtype a kernel's array stands for: bfloat16 for a float32 copy of a bfloat16 operand (the dtype its
    error messages name)."""
    return _dt.bfloat16.np if stands_for_bfloat16(np_dtype) else np_dtype


def rounded_in_float(values, storage: np.dtype | None = None) -> np.ndarray:
    """float32 ``values`` rounded (to nearest even) to ``storage``'s (default bfloat16's), kept in float32: a
    kernel's intermediate that torch keeps in a reduced type."""
    return np.asarray(values).astype(_dt.bfloat16.np if storage is None else storage).astype(_F32)


def seen_dtype(array: np.ndarray) -> np.dtype:
    """The dtype a kernel's argument stands for: bfloat16 for a float32 copy of a bfloat16 operand (or a view of
    one), its own otherwise. The matrix products' checks read it so: torch refuses a bfloat16 operand beside a
    float32 one, which the copies would hide (and names bfloat16 beside float16 or float64)."""
    if not FLOAT_COPIES or array.dtype is not _F32:
        return array.dtype
    while array is not None:
        if any(array is copy for copy in FLOAT_COPIES):
            return _dt.bfloat16.np
        array = array.base
    return _F32


def stands_for_bfloat16(np_dtype: np.dtype) -> bool:
    """Whether a kernel's float32 array stands for bfloat16 (it runs on float32 copies of bfloat16 operands, for a
    bfloat16 result): a kernel's own dtype checks (refuse_half, linalg's low-precision refusal) read it so, as
    torch's kernels, which have no BFloat16 instantiation, refuse it."""
    return _IN_FLIGHT[0] > 0 and np_dtype is _F32
