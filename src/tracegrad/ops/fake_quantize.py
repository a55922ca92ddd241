"""Fake quantization (quantization-aware training): ``torch.fake_quantize_per_tensor_affine``,
``torch.fake_quantize_per_channel_affine`` and their learnable forms, as ATen's CPU kernels compute them
(FakeQuantPerTensorAffine.cpp, FakeQuantPerChannelAffine.cpp, QuantizedOpKernels.cpp).

The public functions are composites, as in ATen: they call the ``*_cachemask`` operators, whose node
(``FakeQuantizePerTensorAffineCachemaskBackward0``...) saves the mask of the values inside the clamp, and keep the
first output. The arithmetic follows the C++ types step by step: the inverse scale is ``1.0f / scale`` in float, the
product with the input is in the input's type (float for half and bfloat16), ``zero_point`` is added in that type,
and a value that overflows an int64 (NaN, inf) converts to INT64_MIN as x86's conversion gives it.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor, _wrap
from ..autograd.forward_ad import not_implemented_jvp
from ..backend import dtypes as _dt
from ._util import broadcast_mismatch, wrap_dim
from .aten_sum import sum_as_aten
from .aten_vec import fma32
from .bfloat16_bit_moves import c10_nans
from .bfloat16_in_float import computes_bfloat16
from .nn_ops._common import check_float  # (ATen dispatches on float, double, half and bfloat16)
from .nn_ops.loss import check_nondifferentiable
from .pointwise import mul
from .registry import defop, defop_without_derivative
from .scalar_fill import scalar_for

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_INT64_MIN = np.int64(-(2**63))


def _bfloat16_too(kernel):
    """These kernels take bfloat16 arrays themselves: ATen computes them in float and stores the output in the
    input's dtype, whatever the scale's (bfloat16_in_float's promotion would make it float32)."""
    return computes_bfloat16(kernel)


def _float_if_bfloat16_input(dy, x, scale, zero_point) -> tuple:
    """The learnable backward kernels' operands: all four ``.to(ScalarType::Float)`` where the input ``X`` is
    bfloat16 (whatever their own dtypes: a double scale too), all as they are otherwise (then checked as float)."""
    operands = (dy, x, scale, zero_point)
    return tuple(a.astype(_F32) for a in operands) if x.dtype == _dt.bfloat16.np else operands

# (ATen's line continuation keeps the next line's indentation inside the message)
_RANGE_ORDER = "`quant_min` should be less than or         equal to `quant_max`."
_ZERO_POINT_RANGE = "`zero_point` must be between `quant_min` and `quant_max`."
_AXIS_RANGE = "`axis` must be between 0 and number of dimensions of input"


# ---- shared arithmetic -------------------------------------------------------------------------------------


def _check_quant_range(quant_min: int, quant_max: int) -> None:
    if quant_min > quant_max:
        raise RuntimeError(_RANGE_ORDER)


def _opmath(x: np.ndarray) -> np.dtype:
    """The type ``input * inv_scale`` has in C++: double for double, float for the others."""
    return _F64 if x.dtype == _F64 else _F32


def _to_int64(v: np.ndarray) -> np.ndarray:
    """``static_cast<int64_t>`` / ``lrintf`` of whole floats on x86: NaN and values out of range give INT64_MIN."""
    with np.errstate(invalid="ignore"):
        fits = np.abs(v) < 2.0**63
    return np.where(fits, v, -(2.0**63)).astype(np.int64)


def _in_range(q: np.ndarray, quant_min: int, quant_max: int) -> np.ndarray:
    return (q >= quant_min) & (q <= quant_max)


def _clamped(q: np.ndarray, quant_min: int, quant_max: int) -> np.ndarray:
    """``std::fmin(std::fmax(q, quant_min), quant_max)`` of integers: computed in double, as the overloads promote."""
    return np.clip(q.astype(_F64), float(quant_min), float(quant_max))


def _to_result(values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A double computed value stored in the input's type (through float for half, as c10::Half converts)."""
    if x.dtype == _F64:
        return values
    return _stored_as(values.astype(_F32), x.dtype)


def _stored_as(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """float32 ``values`` stored in ``dtype`` by the kernels' scalar loops: a bfloat16 NaN as c10 converts one
    (0x7fc0, whatever the float NaN's sign: 0 * inf gives x86's negative one)."""
    stored = values.astype(dtype, copy=False)
    return c10_nans(stored, values) if dtype == _dt.bfloat16.np else stored


# ---- per tensor ----------------------------------------------------------------------------------------------


def _per_tensor_values(x: np.ndarray, scale: float, zero_point: int, quant_min: int, quant_max: int):
    """``_fake_quantize_tensor_helper``: (output, mask) for a float scale and an integer zero point."""
    check_float(x, "fake_quantize_tensor_cachemask_kernel_type_handling")
    compute = _opmath(x).type
    scale32 = np.float32(scale)
    with np.errstate(all="ignore"):
        inv_scale = np.float32(1.0) / scale32
        q = np.rint(x.astype(compute, copy=False) * compute(inv_scale)) + compute(zero_point)
        mask = _in_range(q, compute(quant_min), compute(quant_max))
        # (fmax/fmin take NaN to quant_min, inf to a bound; (qval - z_point) * sc is int64 times float, in float)
        qval = np.clip(np.fmax(q.astype(_F64), float(quant_min)), None, float(quant_max)).astype(np.int64)
        out = (qval - zero_point).astype(_F32) * scale32
    return _stored_as(out, x.dtype), mask


@_bfloat16_too
def _per_tensor_cachemask_kernel(x, scale, zero_point, quant_min, quant_max):
    _check_quant_range(quant_min, quant_max)
    if not quant_min <= zero_point <= quant_max:
        raise RuntimeError(_ZERO_POINT_RANGE)
    return _per_tensor_values(x, scale, zero_point, quant_min, quant_max)


def _item(a: np.ndarray):
    if a.size != 1:
        raise RuntimeError(f"a Tensor with {a.size} elements cannot be converted to Scalar")
    return a.reshape(()).item()


@_bfloat16_too
def _tensor_qparams_kernel(x, scale, zero_point, fake_quant_enabled, quant_min, quant_max):
    """``.item()`` of each 0-d parameter, converted checked as c10's ``toInt()``/``toFloat()`` (a float zero point
    truncated; one beyond int32, NaN, or a scale beyond float's range refused); no zero point check."""
    _check_quant_range(quant_min, quant_max)
    zero_point_value = int(scalar_for(_item(zero_point), np.dtype(np.int32)))
    scale_value = float(scalar_for(_item(scale), _F32))
    if not int(_item(fake_quant_enabled)):
        check_float(x, "fake_quantize_tensor_cachemask_kernel_type_handling")
        return x.copy(), np.ones(x.shape, dtype=bool)
    return _per_tensor_values(x, scale_value, zero_point_value, quant_min, quant_max)


def cachemask_backward(grad: Tensor, mask: Tensor) -> Tensor:
    """``fake_quantize_per_{tensor,channel}_affine_cachemask_backward``: ``grad * mask`` (composite in ATen)."""
    if grad._data.size != mask._data.size:
        raise RuntimeError(f"`mask` and `dY` are not the same size: `mask` is size {mask._data.size} and `dY` is "
                           f"size {grad._data.size}")
    if not grad._data.size:
        return grad
    return mul(grad, mask)


def _cachemask_vjp(ctx, g, _g_mask=None):
    (mask,) = ctx.saved_tensors
    return cachemask_backward(g, mask)


fake_quantize_per_tensor_affine_cachemask = defop(
    "fake_quantize_per_tensor_affine_cachemask(Tensor self, float scale, int zero_point, int quant_min, "
    "int quant_max) -> (Tensor output, Tensor mask)",
    _per_tensor_cachemask_kernel,
    jvp=not_implemented_jvp("fake_quantize_per_tensor_affine_cachemask"),
    vjp=_cachemask_vjp,
    saves=("result1",),
    nondiff_outputs=(1,),
)

_tensor_qparams_cachemask = defop(
    "_fake_quantize_per_tensor_affine_cachemask_tensor_qparams(Tensor self, Tensor scale, Tensor zero_point, "
    "Tensor fake_quant_enabled, int quant_min, int quant_max) -> (Tensor output, Tensor mask)",
    _tensor_qparams_kernel,
    jvp=not_implemented_jvp("_fake_quantize_per_tensor_affine_cachemask_tensor_qparams"),
    vjp=_cachemask_vjp,
    saves=("result1",),
    differentiable=("self",),
    nondiff_outputs=(1,),
    node_name="FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0",
)


def _fake_quantize_per_tensor_affine_cachemask_tensor_qparams(input: Tensor, scale: Tensor, zero_point: Tensor,
                                                              fake_quant_enabled: Tensor, quant_min: int,
                                                              quant_max: int) -> tuple:
    """``torch._fake_quantize_per_tensor_affine_cachemask_tensor_qparams``: refuses a scale or zero point that
    requires grad before the kernel runs, as torch's autograd kernel does."""
    for name, t in (("scale", scale), ("zero_point", zero_point)):
        check_nondifferentiable("_fake_quantize_per_tensor_affine_cachemask_tensor_qparams", name, t)
    return _tensor_qparams_cachemask(input, scale, zero_point, fake_quant_enabled, quant_min, quant_max)


def fake_quantize_per_tensor_affine(input: Tensor, scale, zero_point, quant_min: int, quant_max: int) -> Tensor:
    """Both of torch's overloads: a float scale and int zero point, or tensor ones (fake quantization enabled)."""
    if isinstance(scale, Tensor) or isinstance(zero_point, Tensor):
        if not (isinstance(scale, Tensor) and isinstance(zero_point, Tensor)):
            raise TypeError("fake_quantize_per_tensor_affine() received an invalid combination of arguments")
        enabled = _wrap(np.ones(1, dtype=np.int64))
        return _fake_quantize_per_tensor_affine_cachemask_tensor_qparams(input, scale, zero_point, enabled, quant_min,
                                                                         quant_max)[0]
    return fake_quantize_per_tensor_affine_cachemask(input, scale, zero_point, quant_min, quant_max)[0]


# ---- per channel ---------------------------------------------------------------------------------------------


def _channel_shaped(a: np.ndarray, ndim: int, axis: int) -> np.ndarray:
    """A per-channel vector viewed as (1, ..., C, ..., 1) along ``axis``."""
    shape = [1] * ndim
    shape[axis] = a.shape[0]
    return a.reshape(shape)


def _check_channel_params(x, scale, zero_point, axis: int) -> None:
    if scale.ndim != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.ndim != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.size != zero_point.size:
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if scale.size != x.shape[wrap_dim(axis, x.ndim)]:  # (``self.size(axis)``, a negative axis wrapped)
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input tensor")


def _per_channel_values(x, scale, zero_point, axis, quant_min, quant_max):
    """``_fake_quant_per_channel_cachemask_cpu_helper``: an int32 zero point is added after the rounding, a float
    one before it (``lrintf``)."""
    check_float(x, "fake_quantize_channel_cachemask_cpu_type_handling")
    compute = _opmath(x).type
    scale32 = _channel_shaped(scale, x.ndim, axis).astype(_F32, copy=False)
    zp = _channel_shaped(zero_point, x.ndim, axis)
    with np.errstate(all="ignore"):
        scaled = x.astype(compute, copy=False) * (np.float32(1.0) / scale32).astype(compute, copy=False)
        if zp.dtype.kind == "i":
            q = _to_int64(zp.astype(compute) + np.rint(scaled))
        else:  # (``lrintf(zero_point + self * inv_scale)``: the sum rounded to float first)
            q = _to_int64(np.rint((zp.astype(compute) + scaled).astype(_F32, copy=False)))
        mask = _in_range(q, quant_min, quant_max)
        out = (_clamped(q, quant_min, quant_max) - zp.astype(_F64)) * scale32.astype(_F64)
    return _to_result(out, x), mask


@_bfloat16_too
def _per_channel_cachemask_kernel(x, scale, zero_point, axis, quant_min, quant_max):
    if scale.dtype != _F32 and scale.dtype != _dt.bfloat16.np:
        raise RuntimeError(f"Scale must be Float or BFloat16, found {_dt.scalar_type_name(scale.dtype)}")
    if zero_point.dtype not in (np.dtype(np.int32), _F32, np.dtype(np.float16)):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found {_dt.scalar_type_name(zero_point.dtype)}")
    _check_channel_params(x, scale, zero_point, axis)
    _check_quant_range(quant_min, quant_max)
    if zero_point.dtype.kind == "i" and zero_point.size and (
            zero_point.min() < quant_min or zero_point.max() > quant_max):
        raise RuntimeError(_ZERO_POINT_RANGE)
    if not 0 <= axis <= x.ndim:
        raise RuntimeError(_AXIS_RANGE)
    return _per_channel_values(x, scale, zero_point, axis, quant_min, quant_max)


fake_quantize_per_channel_affine_cachemask = defop(
    "fake_quantize_per_channel_affine_cachemask(Tensor self, Tensor scale, Tensor zero_point, int axis, "
    "int quant_min, int quant_max) -> (Tensor output, Tensor mask)",
    _per_channel_cachemask_kernel,
    jvp=not_implemented_jvp("fake_quantize_per_channel_affine_cachemask"),
    vjp=_cachemask_vjp,
    saves=("result1",),
    differentiable=("self",),
    nondiff_outputs=(1,),
)


def fake_quantize_per_channel_affine(input: Tensor, scale: Tensor, zero_point: Tensor, axis: int, quant_min: int,
                                     quant_max: int) -> Tensor:
    for name, t in (("scale", scale), ("zero_point", zero_point)):
        check_nondifferentiable("fake_quantize_per_channel_affine_cachemask", name, t)
    return fake_quantize_per_channel_affine_cachemask(input, scale, zero_point, axis, quant_min, quant_max)[0]


# ---- learnable: forward ----------------------------------------------------------------------------------------


def _forward_zero_point(zero_point: np.ndarray, quant_min: int, quant_max: int) -> int:
    """``_get_zero_point_from_tensor(..., is_forward=true)``: the first element rounded in float, clamped."""
    if zero_point.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    value = np.rint(np.float32(zero_point.reshape(-1)[0]))
    return int(min(max(value, np.float32(quant_min)), np.float32(quant_max)))


def _first_scale(scale: np.ndarray) -> float:
    if scale.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    return float(np.float32(scale.reshape(-1)[0]))


@_bfloat16_too
def _learnable_per_tensor_kernel(x, scale, zero_point, quant_min, quant_max, grad_factor=1.0):
    scale_value = _first_scale(scale)
    zero_point_value = _forward_zero_point(zero_point, quant_min, quant_max)
    return _per_tensor_cachemask_kernel(x, scale_value, zero_point_value, quant_min, quant_max)[0]


def _rounded_zero_points(zero_point: np.ndarray, quant_min: int, quant_max: int) -> np.ndarray:
    """``zero_point.round().clamp_(quant_min, quant_max)``, in the zero point's dtype."""
    rounded = np.rint(zero_point) if zero_point.dtype.kind == "f" else zero_point
    return np.clip(rounded, quant_min, quant_max).astype(zero_point.dtype, copy=False)


@_bfloat16_too
def _learnable_per_channel_kernel(x, scale, zero_point, axis, quant_min, quant_max, grad_factor=1.0):
    zero_point_int = _rounded_zero_points(zero_point, quant_min, quant_max).astype(np.int32)
    return _per_channel_cachemask_kernel(x, scale, zero_point_int, axis, quant_min, quant_max)[0]


# ---- learnable: backward -----------------------------------------------------------------------------------------


def _expect_float(arrays: dict) -> None:
    """The backward kernels' ``TORCH_CHECK(<name>.scalar_type() == ScalarType::Float)`` (bfloat16 was made float)."""
    for name, a in arrays.items():
        if a.dtype != _F32:
            raise RuntimeError(f"Expected {name}.scalar_type() == ScalarType::Float to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report an enhancement request "
                               "to PyTorch.)")


def _learnable_grads(dy, x, scale, inv_scale, zero_point, quant_min, quant_max, grad_factor):
    """``fake_quantize_learnable_{tensor,channel}_grad_kernel_cpu``, element by element in float:
    (dX, dScale per element, dZeroPoint per element). ``zero_point`` is a float (array) here."""
    gf = np.float32(grad_factor)
    with np.errstate(all="ignore"):
        # (GCC contracts ``zero_point + x * inv_scale`` into one FMA in ATen's AVX2 build)
        xq = _to_int64(np.rint(fma32(x, inv_scale, np.broadcast_to(zero_point, x.shape).astype(_F32))))
        inside = _in_range(xq, quant_min, quant_max)
        dx = dy * inside.astype(_F32)
        # (and ``xfqi - x``, xfqi a product, into another: the fake-quantized value is never rounded on its own)
        steps = np.clip(xq, quant_min, quant_max).astype(_F32) - zero_point
        d_scale_inside = dy * fma32(steps, np.broadcast_to(scale, x.shape).astype(_F32), -x) * inv_scale * gf
        d_scale_edge = np.where(xq < quant_min, dy * (np.float32(quant_min) - zero_point),
                                dy * (np.float32(quant_max) - zero_point)) * gf
        d_scale = np.where(inside, d_scale_inside, d_scale_edge)
        d_zero_point = np.where(inside, np.float32(0.0), -dy * scale * gf)
    return dx.astype(_F32, copy=False), d_scale.astype(_F32, copy=False), d_zero_point.astype(_F32, copy=False)


def _backward_zero_point(zero_point: np.ndarray, quant_min: int, quant_max: int) -> int:
    """``_get_zero_point_from_tensor(..., is_forward=false)``: ``+ 0.5f``, clamped, truncated."""
    value = np.float32(zero_point.reshape(-1)[0]) + np.float32(0.5)
    return int(min(max(value, np.float32(quant_min)), np.float32(quant_max)))


@_bfloat16_too
def _learnable_per_tensor_backward_kernel(dy, x, scale, zero_point, quant_min, quant_max, grad_factor=1.0):
    given = (x, scale, zero_point)
    dy, x, scale, zero_point = _float_if_bfloat16_input(dy, x, scale, zero_point)
    scale_value = np.float32(_first_scale(scale))
    zero_point_value = _backward_zero_point(zero_point, quant_min, quant_max)
    _expect_float({"dY_": dy, "X_": x, "scale_": scale, "zero_point_": zero_point})
    if x.size != dy.size:
        raise RuntimeError("`X` and `dY` are not the same size")
    if not (quant_min <= 0 <= quant_max):
        raise RuntimeError("`quant_min` should be less than or         equal to `quant_max`, and the quantization "
                           "range should include 0.")
    if not x.size:  # (ATen returns its inputs as given, not their float copies: the scale's "gradient" is its value)
        return tuple(a.copy() for a in given)
    mismatch = broadcast_mismatch([x.shape, dy.shape])
    if mismatch is not None:
        raise mismatch
    inv_scale = np.float32(1.0) / scale_value
    dx, d_scale, d_zero_point = _learnable_grads(dy, x, scale_value, inv_scale, np.float32(zero_point_value),
                                                 quant_min, quant_max, grad_factor)
    return dx, sum_as_aten(d_scale, None, False).reshape(1), sum_as_aten(d_zero_point, None, False).reshape(1)


@_bfloat16_too
def _learnable_per_channel_backward_kernel(dy, x, scale, zero_point, axis, quant_min, quant_max, grad_factor=1.0):
    given = (x, scale, zero_point)
    dy, x, scale, zero_point = _float_if_bfloat16_input(dy, x, scale, zero_point)
    rounded = _rounded_zero_points(zero_point, quant_min, quant_max)
    _expect_float({"dY_": dy, "X_": x, "scale_": scale, "zero_point_": zero_point})
    if x.shape != dy.shape:
        raise RuntimeError("`X` and `dY` are not the same size")
    if not (quant_min <= 0 <= quant_max):
        raise RuntimeError("Expecting `quant_min` <= 0 and `quant_max` >= 0")
    _check_channel_params(x, scale, zero_point, axis)
    if rounded.size and (rounded.min() < quant_min or rounded.max() > quant_max):
        raise RuntimeError(_ZERO_POINT_RANGE)
    if not 0 <= axis < x.ndim:
        raise RuntimeError(_AXIS_RANGE)
    if not x.size:  # (ATen returns its inputs as given, not their float copies: the scale's "gradient" is its value)
        return tuple(a.copy() for a in given)
    scale_c = _channel_shaped(scale, x.ndim, axis)
    inv_scale = np.float32(1.0) / scale_c
    dx, d_scale, d_zero_point = _learnable_grads(dy, x, scale_c, inv_scale, _channel_shaped(rounded, x.ndim, axis),
                                                 quant_min, quant_max, grad_factor)
    others = tuple(d for d in range(x.ndim) if d != axis)  # (none for a vector: ATen's sum over [] sums it all)
    return dx, sum_as_aten(d_scale, others or None, False), sum_as_aten(d_zero_point, others or None, False)


_fake_quantize_learnable_per_tensor_affine_backward = defop_without_derivative(
    "_fake_quantize_learnable_per_tensor_affine_backward(Tensor grad, Tensor self, Tensor scale, Tensor zero_point, "
    "int quant_min, int quant_max, float grad_factor=1.0) -> (Tensor, Tensor, Tensor)",
    _learnable_per_tensor_backward_kernel,
)

_fake_quantize_learnable_per_channel_affine_backward = defop_without_derivative(
    "_fake_quantize_learnable_per_channel_affine_backward(Tensor grad, Tensor self, Tensor scale, "
    "Tensor zero_point, int axis, int quant_min, int quant_max, float grad_factor=1.0) -> (Tensor, Tensor, Tensor)",
    _learnable_per_channel_backward_kernel,
)


def _learnable_per_tensor_vjp(ctx, g):
    x, scale, zero_point = ctx.saved_tensors
    quant_min, quant_max, grad_factor = ctx.attrs
    return _fake_quantize_learnable_per_tensor_affine_backward(g, x, scale, zero_point, quant_min, quant_max,
                                                               grad_factor)


def _learnable_per_channel_vjp(ctx, g):
    x, scale, zero_point = ctx.saved_tensors
    axis, quant_min, quant_max, grad_factor = ctx.attrs
    return _fake_quantize_learnable_per_channel_affine_backward(g, x, scale, zero_point, axis, quant_min, quant_max,
                                                                grad_factor)


_fake_quantize_learnable_per_tensor_affine = defop(
    "_fake_quantize_learnable_per_tensor_affine(Tensor self, Tensor scale, Tensor zero_point, int quant_min, "
    "int quant_max, float grad_factor=1.0) -> Tensor",
    _learnable_per_tensor_kernel,
    jvp=not_implemented_jvp("_fake_quantize_learnable_per_tensor_affine"),
    vjp=_learnable_per_tensor_vjp,
    saves=("self", "scale", "zero_point"),
    attrs=("quant_min", "quant_max", "grad_factor"),
    node_name="FakeQuantizeLearnablePerTensorAffineBackward0",
)

_fake_quantize_learnable_per_channel_affine = defop(
    "_fake_quantize_learnable_per_channel_affine(Tensor self, Tensor scale, Tensor zero_point, int axis, "
    "int quant_min, int quant_max, float grad_factor=1.0) -> Tensor",
    _learnable_per_channel_kernel,
    jvp=not_implemented_jvp("_fake_quantize_learnable_per_channel_affine"),
    vjp=_learnable_per_channel_vjp,
    saves=("self", "scale", "zero_point"),
    attrs=("axis", "quant_min", "quant_max", "grad_factor"),
    node_name="FakeQuantizeLearnablePerChannelAffineBackward0",
)

PUBLIC = {
    "fake_quantize_per_tensor_affine": fake_quantize_per_tensor_affine,
    "fake_quantize_per_channel_affine": fake_quantize_per_channel_affine,
    "_fake_quantize_per_tensor_affine_cachemask_tensor_qparams":
        _fake_quantize_per_tensor_affine_cachemask_tensor_qparams,
    "_fake_quantize_learnable_per_tensor_affine": _fake_quantize_learnable_per_tensor_affine,
    "_fake_quantize_learnable_per_channel_affine": _fake_quantize_learnable_per_channel_affine,
}
METHODS: dict = {}
