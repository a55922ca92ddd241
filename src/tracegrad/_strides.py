"""PyTorch's strides for new arrays, for NumPy's kernels: contiguous and channels-last strides, ``empty_like``'s
(``preserve_format``), and the layout ATen's TensorIterator gives the result of a pointwise operator.

NumPy's ufuncs and PyTorch's TensorIterator both lay a new result out like their operands, but they settle
disagreements differently: where operands are laid out differently NumPy keeps C order and PyTorch follows
the first operand; a dim of size 1 has a stride NumPy ignores and PyTorch sorts by; and PyTorch copies the
exact strides of operands that share one dense layout. The difference shows in ``stride()``, in
``is_contiguous()``, in whether ``view`` accepts the result, and in the branch a later backward takes
(mm's). :func:`in_torch_layout` and :func:`pointwise_result` re-lay a kernel's result out as PyTorch would have
allocated it (result_layouts.py says which operators do).

TensorIterator's steps (``TensorIteratorBase::build``), which :func:`torch_strides` follows:
- operands whose dtype is not the computation's (the result's; for a bool result, the operands' common dtype)
  are first cast with ``.to()``, which keeps a dense operand's strides and lays any other one out dense in the
  order of its own strides (``preserve_format``), so a cast keeps a permuted operand's say in the result's order;
- if every operand has the result's shape (a Python number is a 0-d operand, so it never has), the result is
  contiguous when they all are, channels-last when they all are, and takes their strides when they are all
  dense with the same strides (``fast_set_up``);
- otherwise the dims are sorted from the fastest-moving to the slowest by comparing strides, the first operand
  that tells two dims apart deciding (``reorder_dimensions``), and the result is dense in that order.
"""

from __future__ import annotations

import ctypes
import functools
import weakref
from collections.abc import Sequence

import numpy as np

from .backend.dtypes import from_numpy_dtype, result_type_of, scalar_category, through_float_for_half

_NP_FLOAT16 = np.dtype(np.float16)
_ndarray = np.ndarray


def is_non_overlapping_and_dense(a: np.ndarray) -> bool:
    """Whether ``a``'s elements fill its memory exactly once, in some order of its dims (PyTorch's test, which
    looks at dims longer than 1 only)."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    expected = a.itemsize
    for size, stride in sorted((d for d in zip(a.shape, a.strides) if d[0] != 1), key=lambda d: d[1]):
        if stride != expected:
            return False
        expected *= size
    return True


def storage_root(a: np.ndarray) -> np.ndarray:
    """The array owning ``a``'s memory (a tensor's storage), followed through NumPy's chain of bases."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def strided_view(a: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
    """A view of ``a``'s memory from its first element, with ``shape`` and byte ``strides`` (non-negative, within
    the storage), writeable where ``a`` is: ``np.lib.stride_tricks.as_strided`` without its set-up. Made over
    ``a`` (C-contiguous) or else the storage's root array where that is, so the view's ``base`` chain leads to
    the tensor's storage (as_strided's ends at a DummyArray); as_strided otherwise."""
    root = a if a.flags.c_contiguous else storage_root(a)  # (its base chain is ``a``'s)
    if root.flags.c_contiguous:
        try:
            return _ndarray(shape, a.dtype, root, 0 if root is a else offset_in(root, a), strides)
        except (TypeError, ValueError):
            pass
    return np.lib.stride_tricks.as_strided(a, shape, strides, writeable=a.flags.writeable)


class _ArrayStruct(ctypes.Structure):
    """NumPy's ``PyArrayInterface``: what an array's ``__array_struct__`` capsule points to (the C side of the
    array interface protocol, a documented and fixed layout)."""

    _fields_ = [("two", ctypes.c_int), ("nd", ctypes.c_int), ("typekind", ctypes.c_char), ("itemsize", ctypes.c_int),
                ("flags", ctypes.c_int), ("shape", ctypes.c_void_p), ("strides", ctypes.c_void_p),
                ("data", ctypes.c_void_p), ("descr", ctypes.c_void_p)]


# (a function object of our own: setting argtypes on ``ctypes.pythonapi``'s shared one would change it for everyone)
_capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))
_pointer_at = ctypes.c_void_p.from_address
_DATA_FIELD = _ArrayStruct.data.offset


def data_address(a) -> int:
    """The address of ``a``'s first element. ``__array_interface__`` builds a dict with the dtype's description
    (some 0.8 us); an ndarray's ``__array_struct__`` capsule is read in less than half of that, and address
    arithmetic (a view's storage offset) runs on every in-place write into a view under autograd."""
    if a.__class__ is _ndarray:
        capsule = a.__array_struct__  # (kept alive while its struct is read)
        return _pointer_at(_capsule_pointer(capsule, None) + _DATA_FIELD).value or 0  # (ctypes reads NULL as None)
    return a.__array_interface__["data"][0]


def offset_in(owner: np.ndarray, a: np.ndarray) -> int:
    """The byte offset of ``a``'s first element in ``owner``'s memory."""
    return data_address(a) - data_address(owner)


def storage_offset_of(a: np.ndarray) -> int:
    """``Tensor.storage_offset()`` of a tensor holding ``a``: its first element's offset, in its own elements, from
    the last owner along its chain of bases that exposes an array interface (as_strided's results hang off a
    DummyArray). An array's address costs a dict (``__array_interface__``, some microseconds): an array that owns
    its memory reads none, and an owner is told apart by its class before any is asked for its interface."""
    root = a
    owner = a.base
    while owner is not None and (isinstance(owner, _ndarray) or hasattr(owner, "__array_interface__")):
        root = owner
        owner = getattr(owner, "base", None)
    return 0 if root is a else offset_in(root, a) // max(a.itemsize, 1)


def _plain(a: np.ndarray) -> bool:
    """Whether ``a`` certainly has PyTorch's contiguous strides: C-contiguous, not empty, and no dim of size 1
    (whose stride NumPy's C-contiguity does not fix). The common case, tested before any stride arithmetic."""
    return a.flags.c_contiguous and a.size > 0 and 1 not in a.shape


@functools.lru_cache(maxsize=1024)
def _contiguous_byte_strides(shape: tuple, itemsize: int) -> tuple:
    return tuple(s * itemsize for s in contiguous_strides(shape))


# Owners of no memory whose arrays' strides are meant as they are, or arrays so marked themselves (an expanded
# empty tensor): id -> a weak reference. NumPy gives every empty array it makes zero strides (its kernels' empty
# results), which Tensor.stride() reads as contiguous unless the array is a view of memory (see zero_strides_meant).
_MEANT_STRIDES: dict[int, weakref.ref] = {}


def strided_empty(shape: tuple, strides: tuple, dtype: np.dtype) -> np.ndarray:
    """An array without elements with these element strides, over a fresh owner of no memory, marked so that its
    strides and its views' read as they are (zero ones too: torch's reading of an empty NumPy array, an empty
    copy of an expanded tensor)."""
    owner = np.empty(0, np.uint8)
    _forget_dead_owners()
    _MEANT_STRIDES[id(owner)] = weakref.ref(owner)
    item = dtype.itemsize
    return _ndarray(shape, dtype, owner, 0, tuple([st * item for st in strides]))


def zero_strided_empty(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """An empty array of ``shape`` whose zero strides ``element_strides`` reads as they are (torch's reading of an
    empty NumPy array, whose strides NumPy makes zero)."""
    return strided_empty(shape, (0,) * len(shape), dtype)


def zero_strides_kept(a: np.ndarray) -> np.ndarray:
    """``a``, an empty view whose strides are all zero in PyTorch too (an expanded tensor's), marked so that
    ``element_strides`` reads them as they are (it reads a NumPy kernel's empty result, zero-strided, as
    contiguous)."""
    _forget_dead_owners()
    _MEANT_STRIDES[id(a)] = weakref.ref(a)
    return a


def _forget_dead_owners() -> None:
    if len(_MEANT_STRIDES) > 1024:  # (dead entries dropped in batches, rarely: such arrays are few)
        for key in [key for key, ref in _MEANT_STRIDES.items() if ref() is None]:
            del _MEANT_STRIDES[key]


def zero_strides_meant(a: np.ndarray) -> bool:
    """Whether an empty, zero-strided ``a`` has those strides in PyTorch too: marked itself, over a marked owner, or
    a view into memory that holds elements. NumPy makes a view's strides from its source's as PyTorch does (slices,
    transposes, selections keep them; a reshape to another shape, which PyTorch makes contiguous, NumPy makes so
    too), so a view of a tensor's storage that came out all zero is PyTorch's too (an expand's, an as_strided's,
    and every view of those); an empty array of a NumPy kernel owns no memory, and its zero strides are NumPy's."""
    root = storage_root(a)
    if root is not a and root.nbytes:
        return True
    for candidate in (a, root):
        ref = _MEANT_STRIDES.get(id(candidate))
        if ref is not None and ref() is candidate:
            return True
    return False


def element_strides(a: np.ndarray) -> tuple:
    """``a``'s strides in elements, as ``Tensor.stride()`` reads them."""
    if a.size == 0 and not any(a.strides):  # (NumPy's empty arrays: Tensor.stride() reads them as contiguous)
        return (0,) * a.ndim if zero_strides_meant(a) else contiguous_strides(a.shape)
    item = a.itemsize
    return tuple([s // item for s in a.strides])  # (a list, not a generator: a third faster on 2-4 dims)


def torch_byte_strides(a: np.ndarray) -> tuple:
    """``a``'s strides in bytes as ``Tensor.stride()`` reads them: an empty array's zero strides (NumPy's) are
    contiguous ones, which a view made from them must keep."""
    if a.size:
        return a.strides
    return tuple(s * a.itemsize for s in element_strides(a))


def _is_contiguous(shape: tuple, strides: tuple) -> bool:
    """PyTorch's ``is_contiguous()``: C order over the dims longer than 1; an empty tensor always is."""
    if 0 in shape:
        return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def _is_channels_last(shape: tuple, strides: tuple) -> bool:
    """PyTorch's ``is_contiguous(memory_format=torch.channels_last)`` for a 4-d tensor: dense in the dim order
    C, W, H, N, over the dims longer than 1."""
    expected = 1
    for d in (1, 3, 2, 0):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def dense_in_order(shape: tuple, order: Sequence[int], empty_dims_as_one: bool = True) -> tuple:
    """Element strides of a dense tensor whose dims move fastest to slowest in ``order``. PyTorch's memory
    formats step over an empty dim as if it had size 1; its sorted layout (``compatible_stride``) does not."""
    strides = [0] * len(shape)
    step = 1
    for d in order:
        strides[d] = step
        step *= max(shape[d], 1) if empty_dims_as_one else shape[d]
    return tuple(strides)


def contiguous_strides(shape: tuple) -> tuple:
    """PyTorch's contiguous element strides for ``shape`` (an empty dim steps as if it had size 1)."""
    return dense_in_order(shape, range(len(shape) - 1, -1, -1))


def _fast_setup(shape: tuple, layouts: list) -> tuple | None:
    """The result's element strides when every operand has the result's shape and they agree (``fast_set_up``),
    else None."""
    if all(_is_contiguous(shape, s) for _, s, _ in layouts):
        return contiguous_strides(shape)
    if len(shape) == 4 and all(_is_channels_last(shape, s) for _, s, _ in layouts):
        return dense_in_order(shape, (1, 3, 2, 0))
    _, last, array = layouts[-1]  # (PyTorch copies the last input's strides, size-1 dims' too)
    if all(s == last for _, s, _ in layouts) and (array is None or is_non_overlapping_and_dense(array)):
        return last
    return None


def _sorted_dims(shape: tuple, operands: list) -> list:
    """PyTorch's ``reorder_dimensions``: the dims, fastest-moving first. An insertion sort in which the first
    operand whose strides tell two dims apart decides (a broadcast dim tells nothing), equal strides put the
    shorter dim first, and a pair no operand decides keeps its C order."""
    ndim = len(shape)
    padded = []
    for own_shape, own_strides, _ in operands:  # (a dim broadcast to the result's size has stride 0)
        lead = ndim - len(own_shape)
        padded.append((0,) * lead + tuple(0 if n == 1 and shape[lead + i] != 1 else st
                                          for i, (n, st) in enumerate(zip(own_shape, own_strides))))

    def comes_after(d0: int, d1: int) -> int:
        for strides in padded:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    return insertion_sort_dims(list(range(ndim - 1, -1, -1)), comes_after)


def insertion_sort_dims(perm: list, comes_after) -> list:
    """TensorIterator's insertion sort of dims: each dim moves left past those ``comes_after`` says it precedes
    (a positive answer), stops at the first that precedes it (a negative one), and passes undecided pairs."""
    for i in range(1, len(perm)):
        moving = i
        for j in range(i - 1, -1, -1):
            order = comes_after(perm[j], perm[moving])
            if order > 0:
                perm[j], perm[moving] = perm[moving], perm[j]
                moving = j
            elif order < 0:
                break
    return perm


def torch_strides(shape: tuple, operands: Sequence, dtype: np.dtype | None = None, uncast: int = 0) -> tuple:
    """The element strides PyTorch gives a new pointwise result of ``shape``, from its operands in ATen's
    order (NumPy arrays; anything else is a number, a 0-d operand). ``dtype`` is the computation's dtype:
    an operand of another dtype is cast first, which makes a non-dense one dense in its own order
    (``empty_like``'s); the first ``uncast`` operands are not (``where``'s condition)."""
    layouts = []
    same_shape = True
    for k, a in enumerate(operands):
        if a.__class__ is not _ndarray or a.ndim == 0:
            same_shape = same_shape and not shape  # (a 0-d operand with a larger result)
            continue
        own_shape, strides = a.shape, element_strides(a)
        if dtype is not None and k >= uncast and a.dtype != dtype and not is_non_overlapping_and_dense(a):
            strides, a = preserve_format_strides(a), None  # (the cast copy, dense: ``a.to(dtype)``)
        same_shape = same_shape and own_shape == shape
        layouts.append((own_shape, strides, a))
    return _iterated_strides(shape, layouts, same_shape)


def _iterated_strides(shape: tuple, layouts: list, same_shape: bool) -> tuple:
    """TensorIterator's output strides from its operands' ``(shape, element strides, array or None)``."""
    if len(shape) <= 1 or not layouts:
        return contiguous_strides(shape)
    if same_shape:
        found = _fast_setup(shape, layouts)
        if found is not None:
            return found
    perm = _sorted_dims(shape, layouts)
    if perm == list(range(len(shape) - 1, -1, -1)):
        return contiguous_strides(shape)
    return dense_in_order(shape, perm, empty_dims_as_one=False)


def index_strides(shape: tuple, source: np.ndarray, indices: Sequence) -> tuple:
    """The element strides of ``source[indices]`` (advanced indexing; None for a dim taken whole), a result of
    ``shape``: ATen's ``index`` runs TensorIterator over the source restrided to the result's shape (stride 0
    across the indexed dims) and each index tensor reshaped to the result's rank (``AdvancedIndex``). Boolean
    masks become their ``nonzero()`` columns; indices that are not next to each other move to the front, with
    their dims."""
    strides = list(element_strides(source))
    sizes = list(source.shape)
    columns: list = []  # (shape, element strides) per long index, None for a whole dim
    for ix in indices:
        if ix is None:
            columns.append(None)
        elif ix.dtype.kind == "b":  # (nonzero() is (N, k) contiguous: column j has stride k)
            count = int(np.count_nonzero(ix))
            columns.extend(((count,), (ix.ndim,)) for _ in range(ix.ndim))
        else:
            columns.append((ix.shape, element_strides(ix)))
    columns += [None] * (len(sizes) - len(columns))
    taken = [d for d, c in enumerate(columns) if c is not None]
    if taken and taken[-1] - taken[0] + 1 != len(taken):  # (transposeToFront: the indexed dims first)
        order = taken + [d for d, c in enumerate(columns) if c is None]
        sizes, strides, columns = ([seq[d] for d in order] for seq in (sizes, strides, columns))
        taken = list(range(len(taken)))
    if not taken:
        return contiguous_strides(shape)
    before, after = taken[0], len(sizes) - taken[-1] - 1
    replacement = shape[before:len(shape) - after]
    layouts = [(shape, tuple(strides[:before]) + (0,) * len(replacement) + tuple(strides[taken[-1] + 1:]), None)]
    for d in taken:  # (expanded to the common index shape, then reshaped to the result's rank: size-1 dims
        own_shape, own_strides = columns[d]  # in front step over the first dim, as unsqueeze's, and 1 behind)
        lead = len(replacement) - len(own_shape)
        expanded = (0,) * lead + tuple(0 if n == 1 and m != 1 else st for n, m, st
                                       in zip(own_shape, replacement[lead:], own_strides))
        front = (replacement[0] * expanded[0],) * before if replacement else (1,) * before
        layouts.append(((1,) * before + replacement + (1,) * after, front + expanded + (1,) * after, None))
    if all(own_shape == shape and _is_contiguous(shape, own_strides) for own_shape, own_strides, _ in layouts):
        return contiguous_strides(shape)  # (fast_set_up: an empty result, or one whose other dims are all 1)
    return _iterated_strides(shape, layouts, same_shape=False)  # (the restrided source is never dense)


def storage_extent(shape, strides, offset: int = 0) -> int:
    """One past the last storage element a strided geometry reaches (its offset if it has no elements)."""
    if 0 in shape:
        return offset
    end = offset + 1
    for n, st in zip(shape, strides):  # (a loop: a generator's set-up costs more than the usual few dims)
        end += (n - 1) * st
    return end


def empty_strided(shape: tuple, strides: tuple, dtype: np.dtype) -> np.ndarray:
    """An uninitialised array with these (non-negative) element strides over a storage of its own, from offset 0,
    just long enough to reach every element."""
    extent = storage_extent(shape, strides)
    if not extent:  # (no elements: strides NumPy would not keep, zero ones included, and their views')
        return strided_empty(shape, strides, dtype)
    storage = np.empty(extent, dtype)
    item = storage.itemsize
    return _ndarray(shape, dtype, storage, 0, tuple([st * item for st in strides]))


def with_strides(result: np.ndarray, strides: tuple) -> np.ndarray:
    """``result`` itself if it has these element strides, else a copy laid out with them."""
    if result.strides == tuple(s * result.itemsize for s in strides) and (result.size or any(strides)):
        return result  # (an empty result's zero strides are read as contiguous: zero ones are laid out anew)
    fresh = empty_strided(result.shape, strides, result.dtype)
    np.copyto(fresh, result)
    return fresh


def preserve_format_strides(a: np.ndarray) -> tuple:
    """The element strides of ``torch.empty_like(a)`` (``preserve_format``): ``a``'s own where ``a`` is dense,
    else dense strides that keep the order of ``a``'s (``infer_dense_strides``: TensorIterator's sort, over one
    operand)."""
    strides = element_strides(a)
    if is_non_overlapping_and_dense(a) and min(strides, default=0) >= 0:
        return strides
    perm = _sorted_dims(a.shape, [(a.shape, strides, a)])
    return dense_in_order(a.shape, perm)


def memory_order_axes(a: np.ndarray) -> list[int]:
    """``a``'s axes from the largest stride to the smallest: the order in which memory walks them."""
    return sorted(range(a.ndim), key=lambda d: -abs(a.strides[d]))


def in_memory_order(a: np.ndarray) -> np.ndarray:
    """``a`` transposed so that its C order is its memory order: the order in which torch's serial kernels (a
    random fill, say) walk a strided tensor."""
    return a.transpose(memory_order_axes(a))


def like_self(result: np.ndarray, source: np.ndarray) -> np.ndarray:
    """A new ``result`` laid out as ``torch.empty_like(source)`` (same shape)."""
    if result.strides == source.strides and result.base is None and result.size and result.itemsize == source.itemsize:
        return result  # (NumPy's own allocation, so dense, with the strides of ``source``, so dense too: kept)
    if _plain(result) and (_plain(source) or (source.size > 1 and not any(source.strides))):
        return result  # (an expanded number, as the grad_output of ``.sum()``'s backward, is laid out contiguous)
    return with_strides(result, preserve_format_strides(source))


def copy_preserving_layout(a: np.ndarray, dtype=None) -> np.ndarray:
    """``a.clone()`` (``a.to(dtype)``): a copy laid out as ``torch.empty_like(a)``."""
    # (the values of float64 bound for float16 go through float32; the layout is still ``a``'s: an expanded or empty
    # ``a`` would lose its own in that float32 copy)
    values = through_float_for_half(a, dtype) if dtype is _NP_FLOAT16 else a
    if _plain(a):
        try:
            return np.array(values, dtype=dtype, order="C")  # (a fresh C array: contiguous strides)
        except np.exceptions.ComplexWarning:  # (a strict filter's, before NumPy copies: see _complex_to_real)
            return _complex_to_real(np.array(a.real, dtype=dtype, order="C"))
    fresh = empty_strided(a.shape, preserve_format_strides(a), a.dtype if dtype is None else dtype)
    try:
        np.copyto(fresh, values, casting="unsafe")
    except np.exceptions.ComplexWarning:
        np.copyto(fresh, a.real, casting="unsafe")
        return _complex_to_real(fresh)
    return fresh


def _complex_to_real(copy: np.ndarray) -> np.ndarray:
    """``copy``, made of a complex array's real part where a strict filter raised NumPy's ComplexWarning, after
    PyTorch's own warning (a UserWarning, raised by that filter once the copy is made, as torch's)."""
    from ._warnings import complex_to_real

    complex_to_real()
    return copy


def in_copy_of_storage(result: np.ndarray, source: np.ndarray) -> np.ndarray:
    """``result`` written into ATen's ``clone_preserve_strides(source)``: a copy of ``source``'s whole storage,
    viewed with ``source``'s strides and offset (the ``*_scatter`` operators keep their input's layout so). A
    source whose elements overlap is cloned instead, as there."""
    if any(st == 0 and n > 1 for n, st in zip(source.shape, source.strides)):
        return like_self(result, source)
    owner = storage_root(source)
    if not owner.flags.c_contiguous:
        return like_self(result, source)
    storage = np.array(owner, copy=True)
    out = np.ndarray(source.shape, source.dtype, buffer=storage, offset=offset_in(owner, source),
                     strides=source.strides)
    np.copyto(out, result)
    return out


def has_torch_contiguous_strides(a: np.ndarray) -> bool:
    """Whether a non-empty ``a`` has PyTorch's contiguous strides exactly (size-1 dims' included)."""
    return a.flags.c_contiguous and a.size > 0 and (
        1 not in a.shape or a.strides == _contiguous_byte_strides(a.shape, a.itemsize))


def contiguous_as_torch(result: np.ndarray) -> np.ndarray:
    """``result`` with PyTorch's contiguous strides, where NumPy's differ: NumPy gives an empty array zero strides,
    and a C-ordered dim of size 1 whatever stride it came with."""
    if has_torch_contiguous_strides(result):
        return result
    return with_strides(result, contiguous_strides(result.shape))


def in_torch_layout(result, arrays: Sequence, positions: tuple, uncast: int = 0):
    """A pointwise kernel's new ``result``, laid out as PyTorch lays it out (itself when NumPy already did), from
    the operator's arguments (arrays for its tensors) and the positions of its operands in ATen's order; the
    first ``uncast`` operands keep their dtype (see ``torch_strides``)."""
    if result.__class__ is not _ndarray or result.ndim < 2:
        return result  # (a 0-d or 1-d result is contiguous either way)
    shape = result.shape
    same_shape = True
    for i in positions:  # (_numpy_agrees's first tests, written out: this runs for every general pointwise call)
        a = arrays[i]
        if a.__class__ is not _ndarray:
            same_shape = False  # (a number: a 0-d operand)
        elif not a.flags.c_contiguous:
            break
        elif a.shape != shape:
            same_shape = False
    else:
        if same_shape or (result.size and 1 not in shape):
            return result
    return _laid_out(result, tuple(arrays[i] for i in positions), uncast)


def _computation_dtype(result: np.ndarray, operands: tuple, uncast: int) -> np.dtype:
    """The dtype the operands are cast to: the result's, but for a bool result (a comparison's, a logical op's) the
    operands' common dtype, to which TensorIterator casts them before comparing."""
    dtype = result.dtype
    return _common_dtype(operands[uncast:]) if dtype.kind == "b" else dtype


def _common_dtype(operands: tuple) -> np.dtype:
    """PyTorch's result_type over arrays (0-d ones as 0-dim tensors) and numbers."""
    dims, zero_dims, numbers = [], [], []
    for a in operands:
        if a.__class__ is _ndarray:
            (dims if a.ndim else zero_dims).append(from_numpy_dtype(a.dtype))
        else:
            numbers.append(scalar_category(a))
    return result_type_of(dims, zero_dims, numbers).np


def _numpy_agrees(result: np.ndarray, operands: tuple) -> bool:
    """Whether NumPy's pointwise ``result`` already has PyTorch's layout, by tests cheaper than working it out.
    C-contiguous operands: a result of their one shape is contiguous in both (PyTorch's fast setup; NumPy gives
    dims of size 1 C strides too, and an empty result zero strides, which ``Tensor.stride()`` reads as
    contiguous); otherwise both sort dims by strides, and agree unless a dim of size 1 has a stride to sort by
    (a number is a 0-d operand, so ``x * 2`` is sorted). Operands that all have the result's strides share one
    layout, which both keep (unless the result is empty, or 4-d with a dim of size 1: channels-last strides).
    Both checked against torch on random layouts in tests/ops/test_result_layouts_vs_torch.py."""
    arrays = [a for a in operands if a.__class__ is _ndarray]
    if all(a.flags.c_contiguous for a in arrays):
        if len(arrays) == len(operands) and all(a.shape == result.shape for a in arrays):
            return True
        if result.size and 1 not in result.shape and all(1 not in a.shape for a in arrays
                                                         if a.shape == result.shape):
            return True
    elif _plain(result) and all(a.flags.c_contiguous or not any(a.strides) for a in arrays):
        # An expanded operand (all strides 0, as the gradient ``sum()``'s backward hands on) decides nothing in
        # TensorIterator's sort of dims, as a number decides nothing: the C-contiguous operands decide, as above
        return True
    strides = result.strides
    return (result.size > 0 and all(a.strides == strides for a in arrays)
            and (result.ndim != 4 or 1 not in result.shape))


def _expanded_into(a: np.ndarray, result: np.ndarray) -> bool:
    """Whether ``a`` is expanded (all strides 0, as the gradient ``sum()``'s backward hands on) and NumPy's
    ``result`` C-contiguous: beside a number, PyTorch's layout too (see ``_numpy_agrees``)."""
    return not any(a.strides) and result.flags.c_contiguous


def _laid_out(result: np.ndarray, operands: tuple, uncast: int = 0) -> np.ndarray:
    if _numpy_agrees(result, operands):
        return result
    dtype = _computation_dtype(result, operands, uncast)
    return with_strides(result, torch_strides(result.shape, operands, dtype, uncast))


def pointwise_result(result: np.ndarray, a: np.ndarray, b=None, swapped: bool = False) -> np.ndarray:
    """A pointwise ``result`` that NumPy computed from ``a`` (and ``b``: an array or a number; ``swapped`` puts it
    first in ATen's order, as ``rsub``'s), laid out as PyTorch lays it out: the eager fast paths and the raw
    backward rules call this. The common cases are tested first
    (C-contiguous operands of one shape, or one with no dim of size 1 beside a number: NumPy's layout is then
    PyTorch's), before ``_numpy_agrees`` and, failing that, the whole rule."""
    if result.ndim < 2:
        return result  # (a 0-d or 1-d result is contiguous either way)
    if b is None:
        return result if a.flags.c_contiguous else _laid_out(result, (a,))
    if b.__class__ is _ndarray:
        if a.flags.c_contiguous and b.flags.c_contiguous and result.size and a.shape == b.shape:
            return result
    elif result.size and 1 not in a.shape and (a.flags.c_contiguous or _expanded_into(a, result)):
        return result
    return _laid_out(result, (b, a) if swapped else (a, b))

