"""``tracegrad.nn.init``: in-place initialisations drawn from tracegrad's generators
(``manual_seed`` applies).

Every function writes into the tensor's storage without recording autograd history (PyTorch runs them
under ``no_grad``) and bumps its version counter, as an in-place operation does.
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
from collections.abc import Callable

import numpy as np

from .._factories import _rng
from .._state import STATE
from .._strides import empty_strided, memory_order_axes, preserve_format_strides
from .._tensor import Tensor
from .._warnings import warn_at_caller
from ..autograd.grad_mode import no_grad
from ..backend.dtypes import scalar_type_name
from ..ops.random_ops import check_normal_call, check_uniform_call
from ..ops.registry import check_no_internal_overlap

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
]


def _reads_first(*names: str) -> Callable[[Callable], Callable]:
    """For a non-tensor given (a NumPy array, a list), read the attributes torch's function reads of it first, in
    its order: the first one missing raises Python's AttributeError naming it, as in torch (tracegrad's code would
    name private ones, ``_data``, ``_before_write``)."""
    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def initialise(tensor, *args, **kwargs):
            if not isinstance(tensor, Tensor):
                for name in names:
                    getattr(tensor, name)
            return fn(tensor, *args, **kwargs)
        return initialise
    return wrap


def _handed_to_torch_function(fn: Callable) -> Callable:
    """torch's ``uniform_``, ``normal_``, ``constant_`` and ``kaiming_uniform_`` hand a call whose tensor takes part
    in the ``__torch_function__`` protocol (or any call under a mode) to the handlers, as one call of themselves
    with every argument by keyword."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def initialise(tensor, *args, **kwargs):
        if STATE.torch_function:  # (only while the protocol is live: nothing to look at otherwise)
            from ..overrides import handle_torch_function, has_torch_function_variadic

            if has_torch_function_variadic(tensor):
                try:
                    bound = signature.bind(tensor, *args, **kwargs)
                except TypeError:  # (a wrong call: Python's own message naming the function, as torch's)
                    return fn(tensor, *args, **kwargs)
                bound.apply_defaults()
                return handle_torch_function(initialise, (tensor,), **bound.arguments)
        return fn(tensor, *args, **kwargs)

    return initialise


def _write(tensor: Tensor, values) -> Tensor:
    tensor._before_write()
    np.copyto(tensor._data, np.asarray(values), casting="unsafe")
    tensor._bump_version()
    return tensor


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    linear_fns = [
        "linear",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
    ]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


@_handed_to_torch_function
@_reads_first("uniform_")
def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    return _uniform_fill(tensor, a, b, generator)


def _uniform_fill(tensor: Tensor, a: float, b: float, generator) -> Tensor:
    if STATE.torch_function:  # (a handler watches: torch's grad switches around the one Tensor method)
        with no_grad():
            return tensor.uniform_(a, b, generator=generator)
    data = tensor._data
    check_uniform_call(data, a, b)  # (torch's refusals: its init calls ``tensor.uniform_``)
    draws = _in_memory_order_draws(data, lambda shape: _rng(generator).uniform(shape, data.dtype, a, b))
    return _write(tensor, draws)


@_handed_to_torch_function
@_reads_first("normal_")
def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    return _normal_fill(tensor, mean, std, generator)


def _normal_fill(tensor: Tensor, mean: float, std: float, generator) -> Tensor:
    if STATE.torch_function:  # (a handler watches: torch's grad switches around the one Tensor method)
        with no_grad():
            return tensor.normal_(mean, std, generator=generator)
    check_normal_call(tensor._data, std)  # (torch's refusals: its init calls ``tensor.normal_``)
    return _write(tensor, _normal(tensor._data, mean, std, generator))


def _normal(data: np.ndarray, mean: float, std: float, generator) -> np.ndarray:
    """torch's ``normal_`` draws for ``data`` (its Box-Muller blocks depend on size and contiguity)."""
    contiguous = data.flags.c_contiguous
    return _in_memory_order_draws(
        data, lambda shape: _rng(generator).normal(shape, data.dtype, mean, std, contiguous=contiguous))


def _in_memory_order_draws(data: np.ndarray, draw: Callable[[tuple], np.ndarray]) -> np.ndarray:
    """``draw``'s values for ``data``, laid out as torch's fill walks a strided tensor (in memory order: a
    transposed or sliced weight gets its draws along its storage), returned in ``data``'s own index order."""
    if data.flags.c_contiguous:
        return draw(data.shape)
    axes = memory_order_axes(data)
    return draw(tuple(data.shape[axis] for axis in axes)).transpose(np.argsort(axes))


@_reads_first("is_meta")
def trunc_normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0, generator=None
) -> Tensor:
    """Normal(mean, std) restricted to [a, b], drawn as torch 2.13 does: redrawn normals when [a, b] holds more
    than 30% of the mass, else uniform candidates on [a, b] accepted by a log-uniform test."""
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may "
            "be incorrect.",
            stacklevel=2,
        )

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    data, rng = tensor._data, _rng(generator)
    # (torch draws its first values into ``tensor`` itself, its redraws into ``torch.empty_like`` buffers: dense
    # strides, so a sliced weight's redraws come in index order, not in its memory order)
    buffer = empty_strided(data.shape, preserve_format_strides(data), data.dtype)
    if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
        if data.dtype.kind not in "fc":  # (torch rounds the bounds to the dtype first: uint8 refuses a negative one)
            tensor.new_tensor(a), tensor.new_tensor(b)
        check_normal_call(data, std)  # (torch's refusals: its first draw is ``tensor.normal_``)
        lo, hi = data.dtype.type(a), data.dtype.type(b)  # torch compares with a and b rounded to the dtype
        values = _normal(data, mean, std, generator)
        _refuse_complex_comparison(values, "lt")
        outside = (values < lo) | (values > hi)
        while outside.any():  # (torch redraws the whole tensor each round and keeps the new values outside)
            values = np.where(outside, _normal(buffer, mean, std, generator), values)
            outside = (values < lo) | (values > hi)
        return _write(tensor, values)
    check_uniform_call(data, a, b)  # (torch's refusals: its first draw is ``tensor.uniform_``)
    log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2

    def log_density(x: np.ndarray) -> np.ndarray:  # (the tensor ops torch chains, in the tensor's dtype)
        return ((x - x.dtype.type(mean)) / x.dtype.type(std)) ** 2 * x.dtype.type(-0.5) - x.dtype.type(log_peak)

    def rejected(x: np.ndarray) -> np.ndarray:
        return np.log(uniform(buffer, 0.0, 1.0)) > log_density(x)

    def uniform(into: np.ndarray, low: float, high: float) -> np.ndarray:
        return _in_memory_order_draws(into, lambda shape: rng.uniform(shape, data.dtype, low, high))

    result = uniform(data, a, b)
    _refuse_complex_comparison(result, "gt")
    pending = rejected(result)
    while pending.any():
        candidates = uniform(buffer, a, b)
        result = np.where(pending, candidates, result)
        pending = np.where(pending, rejected(candidates), pending)
    return _write(tensor, result)


def _refuse_complex_comparison(values: np.ndarray, comparison: str) -> None:
    """PyTorch's trunc_normal_ compares its draws (``lt`` with the bounds, or ``gt`` in its rejection test), which
    complex numbers refuse (NumPy orders them)."""
    if values.dtype.kind == "c":
        raise NotImplementedError(f"\"{comparison}_cpu\" not implemented for '{scalar_type_name(values.dtype)}'")


@_handed_to_torch_function
@_reads_first("fill_")
def constant_(tensor: Tensor, val: float) -> Tensor:
    return _write(tensor, val)


@_reads_first("fill_")
def ones_(tensor: Tensor) -> Tensor:
    with no_grad():  # (as torch's: a mode sees the grad switches and the one Tensor method)
        return tensor.fill_(1.0)


@_reads_first("zero_")
def zeros_(tensor: Tensor) -> Tensor:
    with no_grad():
        return tensor.zero_()


@_reads_first("ndimension")
def eye_(tensor: Tensor) -> Tensor:
    if STATE.torch_function:
        return _watched_eye_(tensor)
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, np.eye(*tensor._data.shape))


def _watched_eye_(tensor: Tensor) -> Tensor:
    """torch's ``eye_``, for a handler to see its calls (``ndimension()``, which handlers get as ``Tensor.dim``)."""
    import tracegrad  # (the namespace's ``eye``: its routing wrapper while the protocol is live)

    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tracegrad.eye(*tensor.shape, out=tensor, requires_grad=tensor.requires_grad)
    return tensor


@_reads_first("ndimension")
def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor._data.shape
    if sizes[0] % groups:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    values = np.zeros(sizes)
    for g in range(groups):
        for d in range(min(out_per_group, sizes[1])):
            values[(g * out_per_group + d, d) + tuple(s // 2 for s in sizes[2:])] = 1
    return _write(tensor, values)


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    if STATE.torch_function:
        return _watched_fans(tensor)
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor._data.shape[2:])
    return tensor._data.shape[1] * receptive, tensor._data.shape[0] * receptive


def _watched_fans(tensor: Tensor) -> tuple[int, int]:
    """torch's ``_calculate_fan_in_and_fan_out``, for a handler to see its reads."""
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    inputs, outputs = tensor.size(1), tensor.size(0)
    receptive = math.prod(tensor.shape[2:]) if tensor.dim() > 2 else 1
    return inputs * receptive, outputs * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


@_reads_first("dim")
def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return _uniform_fill(tensor, -bound, bound, generator)


@_reads_first("dim")
def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return _normal_fill(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


@_handed_to_torch_function
@_reads_first("shape", "dim")
def kaiming_uniform_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None
) -> Tensor:
    if 0 in tensor._data.shape:
        warn_at_caller("Initializing zero-element tensors is a no-op", UserWarning)  # (past the decorators)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return _uniform_fill(tensor, -bound, bound, generator)


@_reads_first("shape", "dim")
def kaiming_normal_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None
) -> Tensor:
    if 0 in (tensor.shape if STATE.torch_function else tensor._data.shape):  # (a handler sees torch's read)
        warn_at_caller("Initializing zero-element tensors is a no-op", UserWarning)  # (past the decorators)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return _normal_fill(tensor, 0.0, std, generator)


@_reads_first("ndimension")
def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor._data.shape[0]
    cols = tensor.numel() // rows
    flat = _rng(generator).normal((rows, cols), tensor._data.dtype)
    if rows < cols:
        flat = flat.T
    if flat.dtype.kind == "c":  # (PyTorch's QR goes through, then its sign of r's diagonal refuses complex numbers)
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                  "torch.sgn instead.")
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    # (torch writes q through ``tensor.view_as(q).copy_(q)``: a channels_last or expanded weight refuses)
    tensor.detach().view(rows, cols)
    check_no_internal_overlap(tensor._data)
    return _write(tensor, (q * gain).reshape(tensor._data.shape))


@_reads_first("ndimension")
def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor._data.shape
    check_normal_call(tensor._data, std)  # (torch's refusals: it fills with ``tensor.normal_``)
    values = _normal(tensor._data, 0.0, std, generator)
    zeros = int(math.ceil(sparsity * rows))
    # the rows to zero come from the default generator even when ``generator`` is given, as PyTorch's randperm
    default = _rng(None)
    for c in range(cols):
        values[default.randperm(rows)[:zeros], c] = 0
    return _write(tensor, values)


def _deprecated(new):
    name = new.__name__[:-1]

    def old(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{name}` is now deprecated in favor of `nn.init.{new.__name__}`.",
            FutureWarning,
            stacklevel=2,
        )
        return new(*args, **kwargs)

    old.__name__ = name
    return old


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
sparse = _deprecated(sparse_)

for _function in list(globals().values()):  # (torch's resolve_name gives every function here as torch.nn.init.<name>)
    if inspect.isfunction(_function) and _function.__module__ == __name__:
        _function._torch_owner = "torch.nn.init"
del _function
