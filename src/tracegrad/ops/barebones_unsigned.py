"""Which operators refuse PyTorch's "barebones" unsigned dtypes (uint16, uint32, uint64), as data.

PyTorch 2.13 stores, copies, converts, prints, compares for equality, sorts, concatenates and indexes these dtypes,
and a few kernels compute with them (``mul``, ``sum``/``prod``/``cumsum`` into int64, the bitwise ``& | ^``,
``==``); every other CPU kernel's dtype dispatch has no instantiation for them and raises
``NotImplementedError: "<kernel>" not implemented for 'UInt32'``. NumPy computes all of them, so tracegrad's
kernels would too: the table below lists, per registered operator, the name torch's refusal gives, learnt by
calling torch 2.13 on every operator of the test database (``tests/ops/test_barebones_unsigned_vs_torch.py``).

An operator in :data:`REFUSED` gets its kernel wrapped once, the first time one of these dtypes comes into being
(:func:`activate`; until then, and in a program that never makes one, the kernels run as they are); the wrapper
looks at its tensor operands' dtypes and steps aside at once for any other dtype. When an operand has such a
dtype, PyTorch's order of checks decides:

- a pointwise operator (``OpDef.iterates``: TensorIterator's) checks its shapes, then promotes (refusing to
  promote these dtypes with anything but a floating type), then dispatches on the common dtype: a uint32
  tensor plus a float32 one is computed in float32, a uint32 tensor plus 1 is refused;
- any other operator checks its arguments first (dims, shapes, index dtypes) and then dispatches on its input's
  dtype: the kernel runs (on a copy of an in-place operator's target) and its own refusal wins; if it accepts
  the arguments, the dispatch refuses. ``BEFORE_ARGUMENTS`` lists the operators refused before anything runs
  (those whose kernel would allocate by the values, as ``bincount``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..backend import dtypes as _dt
from ._util import broadcast_mismatch, result_dtype, unsupported

_ndarray = np.ndarray
_CHARS = _dt.BAREBONES_UNSIGNED_CHARS

def _by_rounding_mode(args: tuple) -> str | None:
    """``div(rounding_mode=)``'s kernel: true division computes in the default floating dtype."""
    mode = args[2]
    return None if mode is None else f"div_{mode}_cpu"


def _into_dtype(kernel_name: str, position: int) -> Callable[[tuple], tuple | None]:
    """A reduction refused only where its ``dtype=`` (at ``position``) asks for one of these dtypes, which the
    refusal names (by default ``sum``/``prod``/``cumsum`` accumulate them in int64, which works)."""
    def named(args: tuple) -> tuple | None:
        dtype = args[position] if position < len(args) else None
        return (kernel_name, dtype.np) if dtype is not None and dtype in _dt.BAREBONES_UNSIGNED else None

    return named


def _clamp(args: tuple) -> str:
    low, high = args[1], args[2]
    return "clamp_max_scalar_cpu" if low is None else "clamp_min_scalar_cpu" if high is None else "clamp_scalar_cpu"


def _flip(args: tuple) -> str | None:
    """ATen's flip copies rows as they are unless the innermost dimension in memory (size > 1) is flipped."""
    a, dims = args[0], args[1]
    dims = (dims,) if isinstance(dims, int) else dims
    flips_inner = any(a.shape[d] > 1 and a.strides[d] == a.itemsize for d in dims if -a.ndim <= d < a.ndim)
    return "flip_cpu" if flips_inner else None


def _scatter_reduce(args: tuple) -> str:
    from .shape_extra import scatter_reduction

    reduce, include_self = scatter_reduction(args[4]), args[5]
    if not include_self:
        return "scatter_reduce_exclude_input_init"
    return f"scatter_gather_tensor_cpu_reduce_{reduce}" if reduce in ("mean", "amax", "amin") else \
        "scatter_gather_tensor_cpu"


def _unless_empty_index(refusal: str | Callable[[tuple], str | None]) -> Callable[[tuple], str | None]:
    """The scatter family: ATen returns before its dtype dispatch where the index (third argument) is empty."""
    def named(args: tuple) -> str | None:
        if args[2].size == 0:
            return None
        return refusal if refusal.__class__ is str else refusal(args)

    return named


def _of_self(kernel_name: str) -> Callable[[tuple], str | None]:
    """``masked_fill`` and ``index_fill``: dispatched on self's dtype alone (a 0-d value tensor is read as a
    number first, whatever its dtype)."""
    return lambda args: kernel_name if _has_barebones(args[0]) else None


def _index_add(args: tuple) -> str:
    return "scatter_gather_tensor_cpu" if args[4] == 1 else "add_stub"  # (``source * alpha`` first)


def _index_select(args: tuple) -> str | None:
    """ATen copies slices of a tensor of two or more dimensions (any dtype); it dispatches on the dtype of a 0-d or
    1-d one after checking the index's dtype and the dim, before the index's bounds."""
    a, dim, index = args[0], args[1], args[2]
    if a.ndim > 1:
        return None
    if index.dtype.kind == "i" and index.dtype.itemsize >= 4 and -max(a.ndim, 1) <= dim < max(a.ndim, 1):
        raise unsupported("index_select", a.dtype)
    return "index_select"  # (the kernel's own refusal of the index or dim first)


def _index_put(args: tuple) -> str:
    # (a single boolean mask without accumulation is a masked_fill)
    indices, accumulate = args[1], args[3]
    masks = [i for i in indices if i is not None and i.dtype == np.bool_]
    return "masked_fill" if masks and len(indices) == 1 and not accumulate else "index_put"


def _convolution(args: tuple) -> str:
    a, dilation = args[0], args[5]
    if any(d != 1 for d in dilation):
        return "slow_conv_dilated<>"
    return "compute_columns3d" if a.ndim == 5 else "slow_conv2d_cpu"


def _convolution_backward(args: tuple) -> str:
    """The input's gradient has a kernel of its own; the weight's is a convolution."""
    name = _convolution((args[1], None, None, None, None, args[6]))
    return "slow_conv2d_cpu_grad_input" if name == "slow_conv2d_cpu" and args[10][0] else name


def _max_pool2d(args: tuple) -> str:
    a = args[0]
    channels_last = a.ndim == 4 and a.shape[1] > 1 and a.strides[1] == a.itemsize
    return "max_pool2d_channels_last" if channels_last else "max_pool2d"


# registered operator name, or overload (an in-place form ``name_`` shares its functional form's entry) -> the kernel
# name in torch's refusal, or a function of the kernel's arguments giving it (None: accepted)
REFUSED: dict[str, str | Callable[[tuple], str | None] | None] = {
    # pointwise arithmetic
    "neg": "neg_cpu", "abs": "abs_cpu", "sign": "sign_cpu", "sgn": "sign_cpu", "square": "pow", "pow": "pow",
    "add": "add_stub", "sub": "add_stub", "rsub": "add_stub",
    "div.Tensor_mode": _by_rounding_mode, "div.Scalar_mode": _by_rounding_mode,
    "floor_divide": "div_floor_cpu", "remainder": "remainder_cpu", "fmod": "fmod_cpu",
    "maximum": "maximum_cpu", "minimum": "minimum_cpu", "fmax": "fmax_cpu", "fmin": "fmin_cpu",
    "clamp": _clamp, "clip": _clamp, "clamp.Tensor": "clamp_cpu", "clip.Tensor": "clamp_cpu",
    "clamp_min": "clamp_min_scalar_cpu", "clamp_max": "clamp_max_scalar_cpu",
    "clamp_min.Tensor": "maximum_cpu", "clamp_max.Tensor": "minimum_cpu",
    "addcmul": "addcmul_cpu_out",
    "lt": "lt_cpu", "le": "le_cpu", "gt": "gt_cpu", "ge": "ge_cpu",
    "less": "lt_cpu", "less_equal": "le_cpu", "greater": "gt_cpu", "greater_equal": "ge_cpu",
    "logical_and": "logical_and_cpu", "logical_or": "logical_or_cpu", "logical_xor": "logical_xor_cpu",
    "logical_not": "logical_not_cpu", "bitwise_not": "bitwise_not_cpu",
    "bitwise_left_shift": "lshift_cpu", "bitwise_right_shift": "rshift_cpu",
    "__lshift__": "lshift_cpu", "__rshift__": "rshift_cpu",
    "relu": "clamp_min_scalar_cpu", "hardtanh": "clamp_scalar_cpu", "soft_margin_loss": "neg_cpu", "dist": "add_stub",
    # reductions and scans
    "max": "max_all", "min": "min_all", "max.dim": "max_cpu", "min.dim": "min_cpu",
    "amax": "max_values_cpu", "amin": "min_values_cpu", "median": "median_cpu", "median.dim": "median_out",
    "argmax": "argmax_cpu", "argmin": "argmin_cpu", "aminmax": "aminmax_cpu",
    "cummax": "cummax_cpu", "cummin": "cummin_cpu", "kthvalue": "kthvalue_cpu", "topk": "topk_cpu",
    "mode": "mode_cpu", "count_nonzero": "nonzero_count_cpu", "nonzero": "nonzero_count_cpu",
    "bincount": "bincount_cpu", "histc": "aminmax_cpu", "trace": "trace",
    "sum": _into_dtype("sum_cpu", 1), "sum.dim_IntList": _into_dtype("sum_cpu", 3),
    "prod": _into_dtype("prod_out_cpu", 1), "prod.dim_int": _into_dtype("prod_out_cpu", 3),
    "cumsum": _into_dtype("cumsum_out_cpu", 2), "cumprod": _into_dtype("cumprod_out_cpu", 2),
    "cumsum_": "cumsum_out_cpu", "cumprod_": "cumprod_out_cpu",  # (in place: into self's dtype)
    # shape and indexing
    "flip": _flip, "rot90": "flip_cpu", "tril": "tril", "triu": "triu",
    "gather": "scatter_gather_tensor_cpu", "scatter.src": _unless_empty_index("scatter_gather_tensor_cpu"),
    "scatter.value": _unless_empty_index("scatter_gather_scalar_cpu"),
    "scatter.reduce": _unless_empty_index("scatter_gather_tensor_cpu"),
    "scatter.value_reduce": _unless_empty_index("scatter_gather_scalar_cpu"),
    "scatter_add": _unless_empty_index("scatter_gather_tensor_cpu"),
    "scatter_reduce.two": _unless_empty_index(_scatter_reduce), "index_add": _index_add, "index_put": _index_put,
    "index_copy": "index_copy_cpu", "index_fill": _of_self("index_fill_cpu"),
    "masked_fill": _of_self("masked_fill"), "masked_scatter": "masked_scatter", "take": "take_cpu",
    "masked_select": "masked_select", "index_select": _index_select,
    "pixel_shuffle": "pixel_shuffle", "pixel_unshuffle": "pixel_unshuffle", "channel_shuffle": "channel_shuffle",
    "_reflection_pad1d": "reflection_pad1d", "_reflection_pad2d": "reflection_pad2d",
    "_reflection_pad3d": "reflection_pad3d", "_replication_pad1d": "replication_pad1d",
    "_replication_pad2d": "replication_pad2d", "_replication_pad3d": "replication_pad3d",
    # products, convolution, pooling
    "mm": "addmm_impl_cpu_", "addmm": "addmm_impl_cpu_", "_nn_addmm": "addmm_impl_cpu_", "conv_tbc": "addmm_impl_cpu_",
    "_nn_linear_addmm": "addmm_impl_cpu_", "_nn_linear_mm": "addmm_impl_cpu_",
    "bmm": "bmm", "baddbmm": "baddbmm", "_trilinear": "bmm", "mv": "addmv_impl_cpu", "dot": "dot",
    "linalg_householder_product": "orgqr_cpu",
    "convolution": _convolution, "convolution_backward": _convolution_backward,
    "max_pool2d_with_indices": _max_pool2d, "max_pool3d_with_indices": "max_pool3d",
    # random numbers: ``random_()`` draws over the whole range (refused); with bounds it draws
    "random_": "random_kernel_cpu", "random_.from": None, "random_.to": None,
}

# the factories' kernels that refuse them (torch.eye(2, dtype=torch.uint32)); ``randint``, ``full``, ``zeros`` make them
FACTORY_KERNELS = frozenset({"arange_cpu", "linspace_cpu", "logspace_cpu", "randperm", "eye"})

# Operators whose dispatch comes before their kernel's (tracegrad's) own checks: refused at once, after the shapes
# where True (``dist`` and ``soft_margin_loss`` subtract and negate first; ``bincount`` would allocate by the values)
BEFORE_ARGUMENTS: dict[str, bool] = {"bincount": False, "dist": True, "soft_margin_loss": True, "addcmul": True,
                                     "convolution_backward": False, "scatter_reduce": False,
                                     "histc": False}
# kernels that dispatch on the dtype even for an empty result (their functional forms fill a clone in place)
DISPATCHED_WHEN_EMPTY = frozenset({"masked_fill", "index_fill_cpu"})
# pointwise operators whose bounds do not take part in the common dtype (``clamp(x, 0.5)`` is computed in float,
# ``hardtanh(x, 0.0, 6.0)`` dispatches on x's dtype)
DISPATCHED_ON_INPUT = frozenset({"hardtanh", "relu"})


def _has_barebones(operand) -> bool:
    return operand.__class__ is _ndarray and operand.dtype.char in _CHARS


def _operands(args: tuple) -> list:
    """What a pointwise operator promotes: its arrays, and the numbers among its first three arguments (``other``,
    clamp's bounds; not addcmul's ``value``, while add's ``alpha`` may not be a float for integers anyway)."""
    return [a for i, a in enumerate(args)
            if a.__class__ is _ndarray or (i < 3 and isinstance(a, (int, float, complex)))]


def _check_shapes(args: tuple, inplace: bool) -> None:
    """TensorIterator's shape checks, for an operator refused before its kernel runs."""
    shapes = [a.shape for a in args if a.__class__ is _ndarray]
    mismatch = broadcast_mismatch(shapes)
    if mismatch is not None:
        raise mismatch
    if inplace:
        shape = np.broadcast_shapes(*shapes)
        if shape != shapes[0]:
            raise RuntimeError(f"output with shape {list(shapes[0])} doesn't match the broadcast shape {list(shape)}")


def _is_empty(result) -> bool:
    results = result if isinstance(result, tuple) else (result,)
    return all(r.__class__ is _ndarray and r.size == 0 for r in results)


def _refusal(kernel: Callable, kernel_name: str, args: tuple, pointwise: bool, inplace: bool,
             dtype: np.dtype | None) -> object:
    """The kernel's own checks first (shapes, promotion, an in-place result's shape and dtype, alpha: on a copy of
    an in-place target), then the dispatch's refusal: of the common dtype for a pointwise operator (a floating
    operand makes it floating: computed), of the operand's dtype (or ``dtype``, the one asked for) otherwise.
    Returns the result it computed where nothing is refused (None for an in-place operator, whose target is still
    to be written): ATen's kernels return an empty result before they dispatch. A number the dtype cannot hold
    (``scalar_fill``) is refused after the dispatch, as ATen converts it inside."""
    deferred = None
    try:
        result = kernel(*((args[0].copy(),) + args[1:] if inplace else args))
    except TypeError:  # (NumPy's refusal to cast a result into these dtypes: the arguments were fine)
        result = None
    except RuntimeError as error:
        if not getattr(error, "raised_after_dispatch", False):
            raise
        result, deferred = None, error
    if pointwise:
        common = result_dtype(*_operands(args))
        if common.char in _CHARS:
            raise unsupported(kernel_name, common)
        if deferred is not None:
            raise deferred
        return None if inplace else result
    if result is not None and not inplace and _is_empty(result) and kernel_name not in DISPATCHED_WHEN_EMPTY:
        return result
    raise unsupported(kernel_name, dtype if dtype is not None else next(a.dtype for a in args if _has_barebones(a)))


def refusal_wrapper(name: str, full_name: str, tensor_positions: tuple[int, ...],
                    operand_positions: tuple[int, ...] | None, inplace: bool) -> Callable[[Callable], Callable] | None:
    """What makes a kernel refuse the barebones unsigned dtypes as torch's operator ``name`` (overload
    ``full_name``) does, or None for an operator that accepts them. ``operand_positions``: a pointwise operator's
    operands, in whose common dtype it computes (None for any other operator)."""
    base = name[:-1] if inplace else name
    entry = next((REFUSED[key] for key in (full_name, name, full_name.replace(name, base, 1), base)
                  if key in REFUSED), None)
    if entry is None or not tensor_positions:
        return None
    early = BEFORE_ARGUMENTS.get(base)
    pointwise = operand_positions is not None and base not in DISPATCHED_ON_INPUT

    def wrap(kernel: Callable) -> Callable:
        def refuse(args: tuple) -> object:
            kernel_name = entry if entry.__class__ is str else entry(args)
            if kernel_name is None:
                return None
            kernel_name, dtype = kernel_name if isinstance(kernel_name, tuple) else (kernel_name, None)
            if early is not None:
                if early:
                    _check_shapes(args, inplace)
                raise unsupported(kernel_name, next(a.dtype for a in args if _has_barebones(a)))
            return _refusal(kernel, kernel_name, args, pointwise, inplace, dtype)

        if tensor_positions == (0,):
            def guarded(a, *rest):
                if a.__class__ is _ndarray and a.dtype.char in _CHARS:
                    result = refuse((a, *rest))
                    if result is not None:
                        return result
                return kernel(a, *rest)
        elif tensor_positions == (0, 1):
            def guarded(a, b, *rest):
                if (a.__class__ is _ndarray and a.dtype.char in _CHARS) or (
                        b.__class__ is _ndarray and b.dtype.char in _CHARS):
                    result = refuse((a, b, *rest))
                    if result is not None:
                        return result
                return kernel(a, b, *rest)
        else:
            def guarded(*arrays):
                if any(_has_barebones(arrays[i]) for i in tensor_positions if i < len(arrays)):
                    result = refuse(arrays)
                    if result is not None:
                        return result
                return kernel(*arrays)

        guarded.refuses_barebones_unsigned = True
        # (a kernel that computes bfloat16 itself stays unwrapped by bfloat16_in_float when these dtypes come first)
        if getattr(kernel, "computes_bfloat16_in_float", False):
            guarded.computes_bfloat16_in_float = True
        return guarded

    return wrap


# ---- activation ---------------------------------------------------------------------------------------------
# No kernel is wrapped until one of these dtypes is reached for (backend/dtypes.barebones_in_use: ``tracegrad.uint32``
# read, a NumPy array's dtype or a dtype's name looked up, a pickled array rebuilt): a program that never makes one
# runs the kernels as they were, without the wrapper's Python frame on every call.

_active = False
_WRAPS: dict = {}  # operator -> its wrap (refusal_wrapper), for the operators REFUSED lists
_FAST_PATH_CELLS: list = []  # (operator, closure cell): a fast path's copy of its operator's kernel


def declare(op, operand_positions: tuple[int, ...] | None) -> None:
    """Note an operator as it is declared (OpDef.__init__): its kernel refuses from activation on (at once if
    these dtypes are already in use)."""
    wrap = refusal_wrapper(op.name, op.schema.full_name, op.tensor_idx, operand_positions, op.is_inplace)
    if wrap is None:
        return
    _WRAPS[op] = wrap
    if _active:
        op.kernel = wrap(op.kernel)


def fast_path_kernel(op, function: Callable) -> None:
    """A fast path (ops/fastpath.py) made for ``op`` keeps its kernel in a closure cell named ``kernel``: that cell
    gets the refusing kernel at activation (a fast path made after it closes over the wrapped kernel already)."""
    if op in _WRAPS and not _active:
        cell = function.__closure__[function.__code__.co_freevars.index("kernel")]
        _FAST_PATH_CELLS.append((op, cell))


def restored_kernel(op, kernel: Callable) -> Callable:
    """``kernel``, an operator's kernel taken before a temporary replacement (utils/_python_dispatch.py), as it
    should be put back: wrapped if these dtypes came into being in the meantime."""
    wrap = _WRAPS.get(op) if _active else None
    if wrap is None or getattr(kernel, "refuses_barebones_unsigned", False):
        return kernel
    return wrap(kernel)


def activate() -> None:
    """These dtypes are in use: every operator REFUSED lists gets its refusing kernel, fast paths included."""
    global _active
    if _active:
        return
    _active = True
    for op, wrap in _WRAPS.items():
        op.kernel = wrap(op.kernel)
    for op, cell in _FAST_PATH_CELLS:
        cell.cell_contents = op.kernel
    _FAST_PATH_CELLS.clear()


def is_active() -> bool:
    return _active
