"""Random operators that take tensors: bernoulli, multinomial, normal, poisson and the in-place samplers
(``normal_``, ``uniform_``, ``exponential_``, ``random_``, ``geometric_``, ``log_normal_``, ``cauchy_``).

Draws come from ``tracegrad._factories._rng(generator)``, torch's CPU mt19937 stream with ATen's algorithms, so
a seed gives PyTorch's numbers (poisson: ATen's PTRS and multiplication methods). As in PyTorch, a
sample is not differentiable through its parameters: the ops that PyTorch records give zero gradients
(``normal(mean, std)`` is *not* reparameterised), and ``bernoulli(self, p: float)`` has no derivative.
"""

from __future__ import annotations

import math

import numpy as np

from .._arg_checks import int64_args
from .._factories import _rng, writes_out
from .._random_bounds import _BFLOAT16_MAX, largest_float, random_range
from .._random_bounds import INT64_MIN as _INT64_MIN
from .._strides import empty_strided, in_memory_order, memory_order_axes, preserve_format_strides
from .._tensor import Tensor
from ..backend.dtypes import cpp_type_name
from ._util import number_arg
from .bfloat16_in_float import seen_dtype
from .reductions_extra import topk_indices
from .registry import check_no_internal_overlap, defop, defop_without_derivative

# ---- helpers ----------------------------------------------------------------------------------------------


def _tname(np_dtype) -> str:
    from ..backend.dtypes import scalar_type_name

    return scalar_type_name(np_dtype)


def _num(x) -> str:
    """A number as PyTorch prints it in messages (``-1`` for -1.0, ``0.5``; a bool read as a double, ``1``)."""
    return f"{float(x):g}" if isinstance(x, (float, bool)) else str(x)


def _require_float(a: np.ndarray, kernel_name: str, kinds: str = "f") -> None:
    """A random kernel's dtype check: floating point (``kinds="fc"``: complex too, which normal_ and uniform_
    fill as the tensor viewed as real)."""
    kind = "f" if a.dtype.name == "bfloat16" else a.dtype.kind  # (ml_dtypes' bfloat16 is of kind "V")
    if kind not in kinds:
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for '{_tname(a.dtype)}'")


def _refuse_complex_std(std: np.ndarray) -> None:
    if std.dtype.kind == "c":
        raise RuntimeError("normal expects standard deviation to be non-complex")


def _zero_grads(ctx, g):
    """Zero gradient for every input that needs one: samples do not depend on their parameters."""
    from .creation import new_zeros

    grads = tuple(None if shape is None else new_zeros(g, shape) for shape in ctx.input_shapes)
    return grads[0] if len(grads) == 1 else grads


def _place(a: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Write ``a.size`` draws in memory order, the order torch's serial kernels walk a strided tensor."""
    view = in_memory_order(a)
    with np.errstate(over="ignore"):  # beyond the dtype's range is infinite, as C's cast makes it
        if a.dtype.kind == "f" and a.dtype.itemsize < 4 and draws.dtype == np.float64:
            draws = draws.astype(np.float32)  # static_cast<Half>(double) goes through float: two roundings
        np.copyto(view, draws.reshape(view.shape), casting="unsafe")
    return a


def _broadcast_shape(*shapes) -> tuple:
    from .shape_extra import _broadcast_shape as broadcast

    return broadcast(*shapes)


# ---- bernoulli --------------------------------------------------------------------------------------------


def _first_refused(valid: np.ndarray) -> int | None:
    """The position of the first False of ``valid`` in C order, or None when every element is valid."""
    if valid.all():
        return None
    return int(np.argmin(valid.ravel()))


def _check_probabilities(p: np.ndarray, generator=None, double: bool = False) -> None:
    """Refuse a probability outside [0, 1] (or NaN). torch checks each p as its serial loop reaches it, so the
    elements before the first bad one (``p`` in the loop's order) have drawn their uniforms from ``generator``."""
    refused = _first_refused((p >= 0) & (p <= 1)) if p.size else None
    if refused is None:
        return
    _rng(generator).unit(refused, np.float64 if double else np.float32)
    raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                       "message be improved?  If so, please report an enhancement request to PyTorch.)")


def _check_p_float(p) -> None:
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")


def _bernoulli_kernel(a, generator=None):
    _require_float(a, "bernoulli_tensor_cpu_self_" if a.dtype.kind == "c" else "bernoulli_tensor_cpu_p_")
    double = a.dtype == np.float64
    _check_probabilities(a, generator, double)  # (the result is contiguous: its loop walks ``a`` in C order)
    return _rng(generator).bernoulli(a, double=double).astype(a.dtype)


def _bernoulli_p_kernel(a, p, generator=None):
    _check_p_float(p)
    return _rng(generator).bernoulli(np.full(a.shape, float(p)), double=True).astype(a.dtype)


def _bernoulli_tensor_inplace(a, p, generator=None):
    p = np.asarray(p)
    _require_float(p, "bernoulli_tensor_cpu_p_")
    double = p.dtype == np.float64
    from .views import _expand_kernel

    # torch's loop walks ``self`` in memory order, each element with its own p (expanded to self's shape, with
    # expand's refusals): take p in that order too
    p_in_order = _expand_kernel(p, a.shape).transpose(memory_order_axes(a))
    _check_probabilities(p_in_order, generator, double)
    return _place(a, _rng(generator).bernoulli(p_in_order, double=double))


def _bernoulli_float_inplace(a, p=0.5, generator=None):
    _check_p_float(p)
    return _place(a, _rng(generator).bernoulli(np.full(a.size, float(p)), double=True))


_bernoulli = defop("bernoulli(Tensor self, *, Generator? generator=None) -> Tensor", _bernoulli_kernel,
                   vjp=_zero_grads)
# (no derivative in PyTorch: its autograd fallback's node, backward error and forward-AD refusal)
_bernoulli_p = defop_without_derivative("bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor",
                                        _bernoulli_p_kernel)
_bernoulli_tensor_ = defop("bernoulli_.Tensor(Tensor(a!) self, Tensor p, *, Generator? generator=None) -> "
                           "Tensor(a!)",
                           _bernoulli_tensor_inplace, vjp=_zero_grads, node_name="BernoulliBackward1")
_bernoulli_float_ = defop("bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> "
                          "Tensor(a!)", _bernoulli_float_inplace, vjp=_zero_grads,
                          node_name="BernoulliBackward2")


def bernoulli(input: Tensor, p: float | None = None, *, generator=None, out=None) -> Tensor:
    """Draw 0/1 with probability ``input`` (or with the float ``p`` for every element of ``input``)."""
    if p is None:
        op, args = _bernoulli, (input,)
    else:
        op, args = _bernoulli_p, (input, p)
    if out is not None:
        return op(*args, generator=generator, out=out)
    return op(*args, generator=generator)


def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    if isinstance(p, Tensor):
        return _bernoulli_tensor_(self, p, generator=generator)
    return _bernoulli_float_(self, p, generator=generator)


# ---- normal -----------------------------------------------------------------------------------------------


def check_normal_std(std) -> None:
    """``normal_``'s refusal of a negative (or NaN) float std."""
    if not std >= 0:  # (NaN refused too)
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")


def check_normal_call(a: np.ndarray, std: float) -> None:
    """``normal_``'s refusals for a fill of ``a``, in torch's order: its std (normal_impl_), then, unless ``a`` is
    empty, its dtype (the kernel's dispatch), then an expanded ``a`` (the kernel's TensorIterator; Tensor.normal_'s
    registry refuses that one first, and hands a bfloat16 tensor's dense float32 copy here)."""
    check_normal_std(std)
    if a.size:
        _require_float(a, "normal_kernel_cpu", "fc")
        check_no_internal_overlap(a)


def _check_std_tensor(std: np.ndarray) -> None:
    if std.size and (std < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")


def _normal_draw(mean, std, shape, dtype, generator) -> np.ndarray:
    """torch's tensor overloads: N(0, std) + mean for a float std, else N(0, 1) * std + mean, in ``dtype``: each
    step rounded to it (torch's ``normal_`` then ``mul_``/``add_``), bfloat16 (a kernel's float32 copy) included."""
    dtype = np.dtype(dtype)
    if isinstance(std, np.ndarray):
        noise = _rng(generator).normal(shape, dtype) * std.astype(dtype, copy=False)
    else:
        noise = _rng(generator).normal(shape, dtype, 0.0, std)
    return (noise + (mean.astype(dtype, copy=False) if isinstance(mean, np.ndarray) else dtype.type(mean)))


def _normal_tensor_float(mean, std=1.0, generator=None):
    _require_float(mean, "normal_kernel_cpu", "fc")
    check_normal_std(std)
    return _normal_draw(mean, float(std), mean.shape, seen_dtype(mean), generator)


def _normal_float_tensor(mean, std, generator=None):
    _refuse_complex_std(std)
    _require_float(std, "normal_kernel_cpu")
    _check_std_tensor(std)
    return _normal_draw(mean, std, std.shape, seen_dtype(std), generator)


def _normal_tensor_tensor(mean, std, generator=None):
    _refuse_complex_std(std)
    _require_float(mean, "normal_kernel_cpu", "fc")
    _check_std_tensor(std)
    shape = _broadcast_shape(mean.shape, std.shape)
    return _normal_draw(mean, std, shape, seen_dtype(mean), generator)  # the result has mean's dtype


def _normal_inplace(a, mean=0.0, std=1.0, generator=None):
    if isinstance(mean, complex):  # (PyTorch's parser: its mean is a float, whatever the tensor)
        raise TypeError(f"normal_(): argument 'mean' (position 1) must be float, not {type(mean).__name__}")
    mean, std = number_arg(mean), number_arg(std)
    check_normal_call(a, std)
    # (bfloat16, a float32 copy here, draws as torch's normal_fill_lowp: 16 uniforms per block, not one per element)
    draws = _rng(generator).normal((a.size,), seen_dtype(a), mean, std, contiguous=a.flags.c_contiguous)
    return _place(a, draws)


# (complex_grad: a complex draw that requires grad is refused by autograd, as PyTorch's)
_normal_tf = defop("normal.Tensor_float(Tensor mean, float std=1, *, Generator? generator=None) -> Tensor",
                   _normal_tensor_float, vjp=_zero_grads, node_name="NormalBackward1", complex_grad=False)
_normal_ft = defop("normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor",
                   _normal_float_tensor, vjp=_zero_grads, node_name="NormalBackward2", complex_grad=False)
_normal_tt = defop("normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor",
                   _normal_tensor_tensor, vjp=_zero_grads, node_name="NormalBackward3", complex_grad=False)
normal_ = defop("normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) -> "
                "Tensor(a!)",
                _normal_inplace, vjp=_zero_grads, node_name="NormalBackward0")


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """``normal(mean, std)`` with tensor or float mean/std; with two floats, ``size`` gives the shape."""
    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mean_t and not std_t:
        return _normal_factory(mean, std, size, generator=generator, out=out, dtype=dtype, device=device,
                               pin_memory=pin_memory, requires_grad=requires_grad)
    if mean_t and std_t:
        op = _normal_tt
    elif mean_t:
        op = _normal_tf
    else:
        op = _normal_ft
    if out is not None:
        return op(mean, std, generator=generator, out=out)
    return op(mean, std, generator=generator)


@writes_out  # (with out=, the draws are made in out's dtype, as torch's normal_ on out makes them)
def _normal_factory(mean, std, size, *, generator=None, dtype=None, device=None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    """``normal(float, float, size)``."""
    from .._factories import _finish, _resolve_dtype, _size
    from ..backend.device import CPU

    if size is None:
        raise TypeError("normal() received an invalid combination of arguments: (float mean, float std) "
                        "needs a size")
    check_normal_std(std)
    shape = _size((size,)) if not isinstance(size, int) else (size,)
    np_dtype = _resolve_dtype(dtype)
    if math.prod(shape):  # (an empty result runs no kernel)
        _require_float(np.empty(0, np_dtype), "normal_kernel_cpu", "fc")
    array = _rng(generator).normal(shape, np_dtype, float(mean), float(std))
    # (torch's normal is no factory of the default device: without a device it makes a CPU tensor)
    return _finish(array, requires_grad, CPU if device is None else device, pin_memory)


# ---- other in-place samplers -------------------------------------------------------------------------------


def _check_uniform_bounds(dtype: np.dtype, from_: float, to: float) -> None:
    """PyTorch's ``check_uniform_bounds``: both ends within the (real) dtype's range, NaN refused, and a width
    the dtype can hold (else the draws would be inf or NaN)."""
    real = dtype if dtype.name == "bfloat16" else np.finfo(dtype).dtype  # (complex ones are filled viewed as real)
    largest = largest_float(real)
    for name, value in (("from", from_), ("to", to)):
        if not -largest <= value <= largest:
            raise RuntimeError(f"{name} is out of bounds for {cpp_type_name(real)}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_num(from_)} > "
                           f"to={_num(to)}")
    if to - from_ > largest:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{_tname(real)}>::max(), but found "
                           f"to={_num(to)} and from={_num(from_)} which result in to-from to exceed the limit")


# Bounds within half of the dtype's largest value leave nothing to refuse (not even the width). A float32 array may
# hold a bfloat16 tensor (its kernel copy), whose largest value is smaller: float32's entry is half of bfloat16's.
_UNREFUSED_BOUND = {np.dtype(np.float32): _BFLOAT16_MAX / 2,
                    np.dtype(np.float64): float(np.finfo(np.float64).max) / 2}


def check_uniform_call(a: np.ndarray, from_: float, to: float) -> None:
    """``uniform_``'s refusals for a fill of ``a`` with [from_, to): its dtype, its bounds, then an expanded ``a``
    (the kernel's TensorIterator; Tensor.uniform_'s registry refuses that one first, and hands a bfloat16 tensor's
    dense float32 copy here)."""
    bound = _UNREFUSED_BOUND.get(a.dtype)
    if bound is None or not -bound <= from_ <= to <= bound:  # (else the common case, checked cheaply: module
        _require_float(a, "check_uniform_bounds", "fc")      # constructors fill every weight through here)
        _check_uniform_bounds(seen_dtype(a), from_, to)  # (bfloat16's kernel array is a float32 copy)
    check_no_internal_overlap(a)


def _uniform_inplace(a, from_=0.0, to=1.0, generator=None):
    check_uniform_call(a, from_, to)
    return _place(a, _rng(generator).uniform((a.size,), a.dtype, from_, to))


def _exponential_inplace(a, lambd=1.0, generator=None):
    if a.dtype.kind != "f":
        raise RuntimeError(f"Exponential distribution is a continuous probability distribution. dtype must "
                           f"be a floating point but you specified {_tname(a.dtype)}")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    return _place(a, _rng(generator).exponential(a.size, lambd))


def _geometric_inplace(a, p, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(float(p))}")  # (a double)
    _require_float(a, "geometric_cpu", "fiu")  # (every real dtype but bool)
    return _place(a, _rng(generator).geometric(a.size, p))


def _log_normal_inplace(a, mean=1.0, std=2.0, generator=None):
    mean, std = number_arg(mean), number_arg(std)
    if not std > 0:  # (torch's order: the parameter, then the dtype's dispatch)
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    _require_float(a, "log_normal_cpu")
    return _place(a, _rng(generator).log_normal(a.size, mean, std))


def _cauchy_inplace(a, median=0.0, sigma=1.0, generator=None):
    median, sigma = number_arg(median), number_arg(sigma)
    if not sigma > 0:  # (torch's order: the parameter, then the dtype, named as C++ names it)
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    if a.dtype.kind != "f":
        raise RuntimeError(f"Cauchy distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {cpp_type_name(a.dtype)}")
    return _place(a, _rng(generator).cauchy(a.size, median, sigma))


_GEN_IP = "*, Generator? generator=None) -> Tensor(a!)"
uniform_ = defop("uniform_(Tensor(a!) self, float from=0, float to=1, " + _GEN_IP,
                 _uniform_inplace, vjp=_zero_grads)
exponential_ = defop("exponential_(Tensor(a!) self, float lambd=1, " + _GEN_IP,
                     _exponential_inplace, vjp=_zero_grads)
geometric_ = defop("geometric_(Tensor(a!) self, float p, *, Generator? generator=None) -> Tensor(a!)",
                   _geometric_inplace, vjp=_zero_grads)
log_normal_ = defop("log_normal_(Tensor(a!) self, float mean=1, float std=2, " + _GEN_IP, _log_normal_inplace,
                    vjp=_zero_grads)
cauchy_ = defop("cauchy_(Tensor(a!) self, float median=0, float sigma=1, *, Generator? generator=None) -> "
                "Tensor(a!)", _cauchy_inplace, vjp=_zero_grads)


def _uniform_method(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator=None, **kwargs) -> Tensor:
    from_ = kwargs.pop("from", from_)  # ``from`` is a keyword in Python, but PyTorch accepts from=...
    if kwargs:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return uniform_(self, from_, to, generator=generator)


# ---- random_ -----------------------------------------------------------------------------------------------


_FULL_RANGE_DTYPES = ("int64", "float32", "float64", "bfloat16")
_FULL_RANGE_KERNEL = "random_full_64_bits_range_kernel_cpu"


def _random_full_range(a, generator) -> np.ndarray:
    """``random_(int64 min, None)``: torch's full-range kernel (random64() read as int64), on the dtypes that hold
    64 random bits; the others are refused (but an empty tensor runs no kernel)."""
    dtype = seen_dtype(a)
    if a.size and dtype.name not in _FULL_RANGE_DTYPES:
        if dtype.name in ("uint8", "int8", "int16", "int32"):  # (in the kernel's dispatch, refused inside it)
            raise RuntimeError(f"{_FULL_RANGE_KERNEL} handles only int64, double, float and bfloat16")
        raise NotImplementedError(f"\"{_FULL_RANGE_KERNEL}\" not implemented for '{_tname(a)}'")
    return _place(a, _rng(generator).random_full_range(a.size))


def _random_from_kernel(a, from_, to=None, generator=None):
    if to is None and from_ == _INT64_MIN:
        return _random_full_range(a, generator)
    low, high = random_range(seen_dtype(a), from_, to)  # (bfloat16's kernel array is a float32 copy)
    return _place(a, _rng(generator).random_from_to(a.size, low, high + 1))


def _random_to_kernel(a, to, generator=None):
    return _random_from_kernel(a, 0, to, generator)  # (torch's random_(to) is random_(0, to))


def _random_kernel(a, generator=None):
    """random_() with no bounds: ``uniform_int``, [0, max] for integers and [0, 2**digits] for floats."""
    if a.dtype.kind == "c":
        raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for '{_tname(a.dtype)}'")
    return _place(a, _rng(generator).random_default(a.size, seen_dtype(a)))


_random_from_ = defop("random_.from(Tensor(a!) self, int from, int? to, " + _GEN_IP,
                      _random_from_kernel, vjp=_zero_grads, node_name="RandomBackward0")
_random_to_ = defop("random_.to(Tensor(a!) self, int to, *, Generator? generator=None) -> Tensor(a!)",
                    _random_to_kernel, vjp=_zero_grads, node_name="RandomBackward1")
_random_ = defop("random_(Tensor(a!) self, *, Generator? generator=None) -> Tensor(a!)", _random_kernel,
                 vjp=_zero_grads, node_name="RandomBackward2")


def random_(self: Tensor, *args, generator=None, **kwargs) -> Tensor:
    """``random_()``, ``random_(to)`` or ``random_(from, to)`` (``to=None``: up to the dtype's limit)."""
    if "from" in kwargs:
        args = (kwargs.pop("from"),) + args
        if "to" in kwargs:
            args = args + (kwargs.pop("to"),)
        elif len(args) == 1:
            args = args + (None,)
    elif "to" in kwargs:
        args = args + (kwargs.pop("to"),)
    if kwargs:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    int64_args(*args)
    if not args:
        return _random_(self, generator=generator)
    if len(args) == 1:
        return _random_to_(self, int(args[0]), generator=generator)
    low, high = args
    return _random_from_(self, int(low), None if high is None else int(high), generator=generator)


# ---- poisson / multinomial ---------------------------------------------------------------------------------


def _poisson_kernel(a, generator=None):
    _require_float(a, "poisson_cpu")
    refused = _first_refused(a >= 0) if a.size else None
    if refused is not None:  # (the rates before it have drawn their samples, as torch's serial loop draws them)
        _rng(generator).poisson(np.ascontiguousarray(a).ravel()[:refused])
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return _rng(generator).poisson(a).astype(a.dtype)


poisson = defop("poisson(Tensor self, Generator? generator=None) -> Tensor", _poisson_kernel, vjp=_zero_grads)


def _multinomial_checks(a, num_samples: int, replacement: bool) -> None:
    if a.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if a.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_tname(a.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > a.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if replacement and num_samples > 1:
        # PyTorch's sampling-with-replacement kernel checks each row's entries in turn (NaN fails ``>= 0``)
        if a.shape[-1] == 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        for row in a.reshape(-1, a.shape[-1]):
            bad = ~(row >= 0) | ~np.isfinite(row)
            if bad.any():  # the first bad entry decides the message, as in torch's loop
                if not row[bad.argmax()] >= 0:
                    raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
                raise RuntimeError("invalid multinomial distribution (encountering probability entry = "
                                   "infinity or NaN)")
            if not row.sum() > 0:
                raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        return
    if a.shape[-1] == 0:  # (PyTorch takes the weights' aminmax for the check below)
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    if a.size and not (np.isfinite(a).all() and (a >= 0).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if a.shape[-1] == 0 or (a.sum(axis=-1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def _multinomial_kernel(a, num_samples, replacement=False, generator=None):
    _multinomial_checks(a, num_samples, replacement)
    rng = _rng(generator)
    if replacement and num_samples > 1:
        rows = a.reshape(-1, a.shape[-1])
        out = np.array([_sample_with_replacement(row, num_samples, rng) for row in rows], dtype=np.int64)
        return out.reshape(a.shape[:-1] + (num_samples,))  # (no rows: an empty result, nothing drawn)
    # torch's exponential race: keys p / q, q ~ Exp(1) drawn into ``empty_like(self)`` (a's layout and dtype); the
    # first largest key for one sample (argmax), else topk's, which decides among ties (zero probabilities) its way
    keys = a / _place(empty_strided(a.shape, preserve_format_strides(a), a.dtype), rng.exponential(a.size, 1.0))
    if num_samples == 1:
        return np.argmax(keys, axis=-1, keepdims=True).astype(np.int64)
    return topk_indices(keys, num_samples, largest=True, sorted=True)


def _sample_with_replacement(row: np.ndarray, num_samples: int, rng) -> np.ndarray:
    """torch's CPU kernel: the row's running sum (in its dtype, at least float) divided by its total, then a
    binary search for each double uniform: the first slot whose cumulative probability is >= it."""
    cumulative = np.cumsum(row.astype(np.promote_types(row.dtype, np.float32)))
    cumulative /= cumulative[-1]
    return np.searchsorted(cumulative.astype(np.float64), rng.unit(num_samples, np.float64), side="left")


multinomial = defop("multinomial(Tensor self, SymInt num_samples, bool replacement=False, *, "
                    "Generator? generator=None) -> Tensor", _multinomial_kernel, differentiable=())


def _bernoulli_method(self: Tensor, p=None, *, generator=None) -> Tensor:
    return bernoulli(self, p, generator=generator)


PUBLIC = {"bernoulli": bernoulli, "normal": normal, "poisson": poisson, "multinomial": multinomial}

METHODS = {
    "bernoulli": _bernoulli_method, "bernoulli_": bernoulli_, "normal_": normal_, "uniform_": _uniform_method,
    "exponential_": exponential_, "geometric_": geometric_, "log_normal_": log_normal_, "cauchy_": cauchy_,
    "random_": random_, "multinomial": multinomial,
}
