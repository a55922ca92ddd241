"""Top-level ``torch.*`` names PyTorch has that tracegrad lacked: in-place functions (``torch.exp_``), the
dropout family, ``fill``, the ``*_copy`` ops, and dtype helpers (``result_type``, ``can_cast``, ``asarray``...).

Most are the existing operators under PyTorch's top-level name. The ``*_copy`` ops are declared from their view
op: the same rules, a contiguous copy as the result, and PyTorch's node name ``<ViewNode>_copy``
(``ViewBackward0_copy``).
"""

from __future__ import annotations

import numpy as np

from .. import _arg_checks as _args
from .. import _factories
from .._arg_parser import refuse_as_torch, tp_name
from .._state import STATE
from .._strides import contiguous_strides, storage_extent, zero_strided_empty
from .._tensor import Tensor
from ..autograd.views import autograd_kernel_runs, refuse_inference_update, refuse_unrecorded_inplace_on_leaf
from ..backend import dtypes as _dt
from ..memory_format import format_strides, preserve_format, suggested_format
from ..storage import laid_out_over_storage
from . import complex_ops, creation, indexing, linalg, pointwise, shape_extra, special_fns, views
from .bfloat16_bit_moves import bfloat16_scalar
from .nn_ops import misc as _misc
from .registry import OpDef, defop, defop_without_derivative

# ---- in-place functions --------------------------------------------------------------------------------------


def _fill_tensor_vjp(ctx, g):
    from .reductions_extra import sum as _sum

    need = ctx.needs_input_grad
    return (creation.zeros_like(g) if need[0] else None, _sum(g) if need[1] else None)


def _fill_kernel(a, value):
    if isinstance(value, np.ndarray) and value.ndim:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} "
                           f"dimensions.")
    return np.full(a.shape, value, dtype=a.dtype)


# One op per overload for the node class, as PyTorch: a number is fill.Scalar (FillBackward0), a 0-d tensor
# fill.Tensor (FillBackward1, with an edge to the value).
_fill_scalar = defop("fill.Scalar(Tensor self, Scalar value) -> Tensor", _fill_kernel,
                     vjp=lambda ctx, g: (creation.zeros_like(g),), differentiable=("self",),
                     node_name="FillBackward0")
_fill_tensor = defop("fill.Tensor(Tensor self, Tensor value) -> Tensor", _fill_kernel, vjp=_fill_tensor_vjp,
                     node_name="FillBackward1")


def fill(input: Tensor, value) -> Tensor:  # noqa: A002 - PyTorch's parameter name
    return (_fill_tensor if isinstance(value, Tensor) else _fill_scalar)(input, value)


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:  # noqa: A002
    """``torch.embedding_renorm_``: an in-place write PyTorch records nothing for, so a leaf that requires grad
    is refused (nn.functional.embedding calls it under no_grad)."""
    refuse_unrecorded_inplace_on_leaf(input)
    _misc.embedding_renorm_(input, indices, max_norm, norm_type)
    if STATE.fw_grad_levels:
        from ..autograd.forward_ad import refuse_written_tangents

        refuse_written_tangents("embedding_renorm_", (input,))
    return input


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:  # noqa: A002
    """Give ``input`` the template's shape; ``memory_format`` (``preserve_format``: the template's suggested
    one) lays it out anew, as ``resize_`` does."""
    if memory_format is preserve_format:
        memory_format = suggested_format(the_template._data)
    return resized(input, tuple(the_template._data.shape), memory_format, (input, the_template))


def resized(input: Tensor, shape: tuple, memory_format=None, args: tuple = ()) -> Tensor:  # noqa: A002
    """``input`` resized in place to ``shape``, as PyTorch's ``resize_``: a new shape (or a memory format) lays the
    tensor out contiguously (or in that format) from its storage offset over the same storage, reading whatever
    lies there (``laid_out_over_storage``: grown where too small, where tracegrad owns the memory). ``args``: the
    op's tensor arguments, which decide whether autograd's check runs for an inference ``input``."""
    if input._rg and (not input._inference or autograd_kernel_runs(args, ())):
        raise RuntimeError("cannot resize variables that require grad")
    old = input._data
    new_shape = old.shape != shape
    if new_shape:
        input._before_write()
    if new_shape or memory_format is not None:
        strides = contiguous_strides(shape) if memory_format is None else format_strides(shape, memory_format)
        input._data = laid_out_over_storage(old, shape, strides)
    if new_shape:  # (torch counts a write only where the sizes change, a restride in place of the same is none)
        input._bump_version()
        refuse_inference_update(input)  # (torch's version bump refuses it, after the resize)
    if STATE.fw_grad_levels:
        from ..autograd.forward_ad import refuse_resize

        refuse_resize(input)  # (after the resize, as PyTorch's autograd kernel checks)
    return input


# ---- the dropout family (torch.dropout_, torch.alpha_dropout...: ATen's _dropout_impl, in nn_ops/misc.py) -----


def _dropout_fns(feature: bool, alpha: bool) -> tuple:
    def functional(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
        return _misc.aten_dropout(input, p, train, feature=feature, alpha=alpha, inplace=False)

    def inplace(input: Tensor, p: float, train: bool) -> Tensor:  # noqa: A002
        return _misc.aten_dropout(input, p, train, feature=feature, alpha=alpha, inplace=True)

    return functional, inplace


_DROPOUTS = {name: _dropout_fns(feature, alpha) for name, feature, alpha in (
    ("dropout", False, False), ("alpha_dropout", False, True), ("feature_dropout", True, False),
    ("feature_alpha_dropout", True, True))}


# ---- the *_copy ops: a view's rules, a fresh contiguous result -----------------------------------------------


def _copy_of(view: OpDef, schema: str) -> OpDef:
    """An op computing ``view``'s result as a new contiguous tensor, with its backward rule and saved values;
    its node is named ``<view's node>_copy``, as PyTorch's generated ``*_copy`` nodes."""
    kernel = view.kernel

    def copy_kernel(*args):
        out = kernel(*args)
        if isinstance(out, tuple):
            return tuple(np.array(o, order="C", copy=True) for o in out)
        return np.array(out, order="C", copy=True)

    names = view.param_names
    saves = view.saved_names
    save_if = {saves[k]: names[i] for k, i in enumerate(view.save_conditions) if i >= 0}
    return defop(schema, copy_kernel, vjp=view.vjp, jvp=view.jvp, saves=saves, attrs=view.attr_names,
                 differentiable=tuple(names[i] for i in view.diff_idx), save_if=save_if, meta=view.meta,
                 hidden=view.hidden, node_name=view.node_class._name + "_copy")


alias_copy = _copy_of(views.alias, "alias_copy(Tensor self) -> Tensor")
as_strided_copy = _copy_of(views.as_strided, "as_strided_copy(Tensor self, SymInt[] size, SymInt[] stride, "
                                             "SymInt? storage_offset=None) -> Tensor")
diagonal_copy = _copy_of(views.diagonal, "diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor")
expand_copy = _copy_of(views.expand, "expand_copy(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor")
permute_copy = _copy_of(views.permute, "permute_copy(Tensor self, int[] dims) -> Tensor")
select_copy = _copy_of(views.select, "select_copy.int(Tensor self, int dim, SymInt index) -> Tensor")
slice_copy = _copy_of(views.slice, "slice_copy.Tensor(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, "
                                   "SymInt step=1) -> Tensor")
split_copy = _copy_of(views.split, "split_copy.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]")
split_with_sizes_copy = _copy_of(shape_extra.split_with_sizes,
                                 "split_with_sizes_copy(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]")
_squeeze_copy_all = _copy_of(views._squeeze_all, "squeeze_copy(Tensor self) -> Tensor")
_squeeze_copy_dim = _copy_of(views._squeeze_dim, "squeeze_copy.dim(Tensor self, int dim) -> Tensor")
_squeeze_copy_dims = _copy_of(views._squeeze_dims, "squeeze_copy.dims(Tensor self, int[] dim) -> Tensor")
t_copy = _copy_of(views.t, "t_copy(Tensor self) -> Tensor")
transpose_copy = _copy_of(views.transpose, "transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor")
unbind_copy = _copy_of(views.unbind, "unbind_copy.int(Tensor self, int dim=0) -> Tensor[]")
unfold_copy = _copy_of(views.unfold, "unfold_copy(Tensor self, int dimension, int size, int step) -> Tensor")
unsqueeze_copy = _copy_of(views.unsqueeze, "unsqueeze_copy(Tensor self, int dim) -> Tensor")
_view_copy = _copy_of(views.view, "view_copy(Tensor self, SymInt[] size) -> Tensor")
view_as_real_copy = _copy_of(complex_ops.view_as_real, "view_as_real_copy(Tensor self) -> Tensor")
_view_as_complex_copy = _copy_of(complex_ops.view_as_complex, "view_as_complex_copy(Tensor self) -> Tensor")
unsafe_split_with_sizes = _copy_of(
    shape_extra.split_with_sizes, "unsafe_split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]")
unsafe_split_with_sizes.node_class._name = "UnsafeSplitWithSizesBackward0"  # PyTorch's own node, not a _copy one
unsafe_split_with_sizes.node_class.__name__ = "UnsafeSplitWithSizesBackward0"
detach_copy = defop_without_derivative("detach_copy(Tensor self) -> Tensor",
                                       lambda a: np.array(a, order="C", copy=True))


def squeeze_copy(input: Tensor, dim=None) -> Tensor:  # noqa: A002
    if dim is None:
        return _squeeze_copy_all(input)
    return (_squeeze_copy_dim if isinstance(dim, int) else _squeeze_copy_dims)(input, dim)


def view_copy(input: Tensor, size) -> Tensor:  # noqa: A002
    if isinstance(size, _dt.dtype):  # view_copy.dtype: PyTorch records no history for it
        return creation.clone(views.view_as_dtype(input.detach(), size))
    return _view_copy(input, views.normalize_shape((size,)))


def view_as_complex_copy(input: Tensor) -> Tensor:  # noqa: A002
    if STATE.grad_enabled and input.requires_grad:
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation for outputs with "
                           "complex dtype.")
    return _view_as_complex_copy(input)


def values_copy(input: Tensor) -> Tensor:  # noqa: A002
    raise RuntimeError("values expected sparse tensor layout but got Strided")  # tracegrad has no sparse layout


# ---- dtype helpers and tensor queries ------------------------------------------------------------------------


def _dtype_of(x) -> tuple[_dt.dtype | None, int | None]:
    """(dtype, scalar category) of an operand of result_type."""
    if isinstance(x, Tensor):
        return _dt.from_numpy_dtype(x._data.dtype), None
    return None, _dt.scalar_category(x)


def result_type(tensor, other) -> _dt.dtype:
    """The dtype an operation on the two operands (tensors or numbers, in any pair) would give."""
    dims, zeros, scalars = [], [], []
    for x in (tensor, other):
        d, cat = _dtype_of(x)
        if d is None:
            scalars.append(cat)
        else:
            (dims if x._data.ndim else zeros).append(d)
    return _dt.result_type_of(dims, zeros, scalars)


def promote_types(type1: _dt.dtype, type2: _dt.dtype) -> _dt.dtype:
    return _dt.promote_types(type1, type2)


def can_cast(from_: _dt.dtype, to: _dt.dtype) -> bool:
    """PyTorch's canCast: no complex to real, no floating to integral, nothing but bool to bool."""
    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and not (to.is_floating_point or to.is_complex):
        return False
    return not (from_ is not _dt.bool_ and to is _dt.bool_)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad: bool = False) -> Tensor:
    """A tensor with the given strides over a zeroed buffer of just the storage they reach."""
    from .._factories import _finish
    from .._runtime import fill_uninitialized

    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    np_dtype = _dt.to_dtype(dtype).np if dtype is not None else _dt.DEFAULT.value.np
    if not any(stride) and 0 in size:  # (zero strides of an empty tensor, which NumPy's would not tell apart)
        array = zero_strided_empty(size, np.dtype(np_dtype))
        return _finish(array, requires_grad, device, pin_memory, strides_given=True)
    buffer = fill_uninitialized(np.zeros(storage_extent(size, stride), dtype=np_dtype))
    item = buffer.itemsize
    array = np.lib.stride_tricks.as_strided(buffer, size, tuple(s * item for s in stride))
    return _finish(array, requires_grad, device, pin_memory, strides_given=True)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad: bool = False) -> Tensor:
    """A 0-d tensor of the default dtype (whatever the number's kind) or of ``dtype``."""
    from .._factories import _finish

    d = _dt.to_dtype(dtype) if dtype is not None else _dt.DEFAULT.value
    if isinstance(s, Tensor):
        s = s.item()
    if isinstance(s, complex) and not d.is_complex:
        raise RuntimeError(f"value cannot be converted to type {_dt.cpp_type_name(d)} without overflow")
    # (a one-element fill: c10's unchecked conversion; a NumPy float read as the double torch's parser reads)
    if d is _dt.bfloat16 and isinstance(s, (bool, int, float, np.floating)):
        return _finish(np.asarray(bfloat16_scalar(s, checked=False)), requires_grad, device, pin_memory)
    return _finish(np.asarray(s, dtype=d.np), requires_grad, device, pin_memory)


_UNSET = object()


def asarray(obj=_factories.NO_DATA, /, *extra, dtype=None, device=None, copy: bool | None = None,
            requires_grad=_UNSET, **unknown) -> Tensor:
    """``torch.asarray``: shares memory with a tensor or NumPy array when it can (``copy=None``), always copies
    with ``copy=True``, and refuses to copy with ``copy=False``. ``requires_grad`` unspecified follows a
    tensor's (with PyTorch's one-time warning when that is True)."""
    if obj is _factories.NO_DATA or extra or unknown:  # (in torch's words: see _factories.tensor)
        obj = _factories.data_off_fast_path("asarray", "obj", obj, extra,
                                            {"dtype": dtype, "device": device, "copy": copy, **unknown})
    _args.dtype_arg("asarray", dtype)
    if copy is not None:
        _args.bool_arg("asarray", "copy", copy)
    if requires_grad is None:  # (an optional bool to torch's parser: None is "not given")
        requires_grad = _UNSET
    if requires_grad is not _UNSET:
        _args.bool_arg("asarray", "requires_grad", requires_grad)
    try:
        return _asarray(obj, dtype, device, copy, requires_grad)
    except Exception:  # (a device torch's parser refuses, say, rather than tracegrad's reading of it)
        options = {"dtype": dtype, "device": device, "copy": copy}
        if requires_grad is not _UNSET:
            options["requires_grad"] = requires_grad
        refuse_as_torch("asarray", (obj,), options)
        raise


asarray.argument_guard = "asarray"  # (it refuses as torch's parser does itself: see _factories.tensor)


def _refuse_move(device) -> None:
    """asarray moves a tensor given to ``device`` as ``Tensor.to`` would, in its words where this build has no such
    device (only checked: a tensor is already where tracegrad can put one)."""
    from ..backend import cupy_backend
    from ..backend.device import as_device, refuse_unsupported

    target = as_device(device)
    if target.type == "cuda" and not cupy_backend.available():
        raise RuntimeError("PyTorch is not linked with support for cuda devices")
    refuse_unsupported(target, moving=True)


def _asarray(obj, dtype, device, copy: bool | None, requires_grad) -> Tensor:
    from .. import _factories
    from .._warnings import warn_once_at_caller

    target = _dt.to_dtype(dtype) if dtype is not None else None
    if isinstance(obj, (np.ndarray, np.generic)):
        return _asarray_of_numpy(obj, target, copy, bool(requires_grad) if requires_grad is not _UNSET else False)
    if isinstance(obj, Tensor):
        if device is not None:
            _refuse_move(device)
        if requires_grad is _UNSET:
            requires_grad = obj.requires_grad
            if requires_grad:
                warn_once_at_caller("asarray_requires_grad",
                                    "torch.asarray: unspecified requires_grad now defaults to obj.requires_grad "
                                    "instead of False. Pass requires_grad=False explicitly to get the old behavior "
                                    "and silence this warning.")
        return _copied_or_aliased(obj, target, copy, requires_grad)
    requires_grad = bool(requires_grad) if requires_grad is not _UNSET else False
    if copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    return _factories.tensor(obj, dtype=target, device=device, requires_grad=requires_grad)


def _copied_or_aliased(obj: Tensor, target, copy: bool | None, requires_grad: bool) -> Tensor:
    """``obj`` cast to ``target`` or copied where asked (``copy=True``) or needed (another dtype), else ``obj``
    itself, refused where aliasing is asked (``copy=False``) and a cast is needed."""
    from .. import _factories

    cast = target is not None and obj._data.dtype != target.np
    if cast and copy is False:
        raise ValueError(f"can't alias tensor with dtype '{_dt.scalar_type_name(obj._data.dtype)}' into "
                         f"dtype '{_dt.scalar_type_name(target)}'.")
    if copy or cast:
        source = obj if requires_grad else obj.detach()
        out = creation.to_dtype(source, target) if cast else creation.clone(source)
        return _factories.requiring_grad(out) if requires_grad and not out.requires_grad else out
    if requires_grad:
        return obj if obj.requires_grad else _factories.requiring_grad(obj)
    return obj.detach() if obj.requires_grad else obj


def _asarray_of_numpy(obj: np.ndarray | np.generic, target, copy: bool | None, requires_grad: bool) -> Tensor:
    """torch.asarray of a NumPy array or scalar, as torch reads it: a tensor over the array first (from_numpy's
    refusals whatever the dtype asked, a scalar refused with ``copy=False``), then copied or aliased as a tensor
    is. A scalar or a 0-d array is copied at once, and then ``copy=True`` asks for no second copy (a cast refused
    as an alias's); a read-only array gets torch's warning only where the tensor shares its memory."""
    from .. import _factories

    array = obj if isinstance(obj, np.ndarray) else None
    if array is None:
        if copy is False:
            raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or transform it in a ndarray. ")
        array = np.asarray(obj)
    tensor = _factories.tensor_over_array(array, warn_not_writable=False)
    if array.ndim == 0:
        tensor = creation.clone(tensor)
        copy = None if copy is None else False  # (copied already: ``copy=True`` is met)
    out = _copied_or_aliased(tensor, target, copy, requires_grad)
    if out._data is tensor._data and not array.flags.writeable:
        _factories.warn_numpy_not_writable()
    return out


def _tensor_query(name: str, method):
    def query(input: Tensor):  # noqa: A002
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {tp_name(input)}")
        return method(input)

    query.__name__ = name
    return query


PUBLIC = {
    **{n + "_": getattr(pointwise, n + "_") for n in ("exp", "log", "sin", "cos", "tanh", "sigmoid", "sqrt", "neg")},
    "i0_": special_fns.i0_,
    "detach_": creation.detach_,
    "zero_": creation.zero_,
    "fill": fill,
    "fill_": creation.fill_,
    "addmv_": linalg.addmv_,
    "as_strided_": views.as_strided_,
    "index_put_": indexing.public_index_put_,
    # (torch.dropout too: ATen refuses a bad p with a RuntimeError, where nn.functional's is a ValueError)
    **{name: fns[0] for name, fns in _DROPOUTS.items()},
    **{name + "_": fns[1] for name, fns in _DROPOUTS.items()},
    "embedding_renorm_": embedding_renorm_,
    "resize_as_": resize_as_,
    # *_copy
    "alias_copy": alias_copy, "as_strided_copy": as_strided_copy, "detach_copy": detach_copy,
    "diagonal_copy": diagonal_copy, "expand_copy": expand_copy, "permute_copy": permute_copy,
    "select_copy": select_copy, "slice_copy": slice_copy, "split_copy": split_copy,
    "split_with_sizes_copy": split_with_sizes_copy, "squeeze_copy": squeeze_copy, "t_copy": t_copy,
    "transpose_copy": transpose_copy, "unbind_copy": unbind_copy, "unfold_copy": unfold_copy,
    "unsqueeze_copy": unsqueeze_copy, "view_copy": view_copy, "values_copy": values_copy,
    "view_as_real_copy": view_as_real_copy, "view_as_complex_copy": view_as_complex_copy,
    "unsafe_split_with_sizes": unsafe_split_with_sizes,
    # dtype helpers and queries
    "result_type": result_type, "promote_types": promote_types, "can_cast": can_cast,
    "empty_strided": empty_strided, "scalar_tensor": scalar_tensor, "asarray": asarray,
    "is_inference": _tensor_query("is_inference", lambda t: t.is_inference()),
    "is_conj": _tensor_query("is_conj", lambda t: t.is_conj()),
    "is_neg": _tensor_query("is_neg", lambda t: t.is_neg()),
    "get_device": _tensor_query("get_device", lambda t: t.get_device()),
}
METHODS = {"unsafe_split_with_sizes": unsafe_split_with_sizes}
