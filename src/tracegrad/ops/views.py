"""View operators: outputs alias their input's storage and share its version counter.

Each view op declares its kernel (a NumPy view), its backward, and its inverse scatter
``inverse(base, src, *view_args) -> new base`` used by functionalization. Autograd replays the ops of a
view made under view replay, or one that reinterprets the dtype (see ``autograd.views``).
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable

import numpy as np

from .._events import emit_op_call
from .._state import STATE
from .._strides import (
    has_torch_contiguous_strides,
    offset_in,
    storage_extent,
    storage_root,
    strided_empty,
    strided_view,
    torch_byte_strides,
    zero_strides_kept,
)
from .._tensor import Tensor, _new
from ..autograd.views import make_view
from ..backend.dtypes import scalar_type_name
from ..memory_format import contiguous_format
from ._util import wrap_dim, wrap_dims
from .registry import defop
from .result_layouts import view_strides

# ---- shape helpers -------------------------------------------------------------------------------------


def infer_size(shape, numel: int) -> tuple[int, ...]:
    shape = tuple(map(int, shape))
    # The valid shapes, without the loop below (which words the errors)
    least = min(shape) if shape else 0
    if least >= 0:
        if math.prod(shape) == numel:
            return shape
    elif least == -1 and shape.count(-1) == 1:
        known = -math.prod(shape)
        if known > 0 and numel % known == 0:
            i = shape.index(-1)
            return shape[:i] + (numel // known,) + shape[i + 1:]
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s} at index {shape.index(s)} of shape {list(shape)}")
            known *= s
    if -1 in shape:
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                               "unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return tuple(numel // known if s == -1 else s for s in shape)
    if known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def normalize_shape(args) -> tuple:
    """``view(2, 3)`` and ``view((2, 3))`` both mean shape (2, 3). A size that is not an integer is refused (the
    method's argument guard then words it as torch's parser does): NumPy would read ``view(2.0, 3)``."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        shape = tuple(args[0])
    elif len(args) == 1 and isinstance(args[0], Tensor):  # (a tensor of sizes)
        shape = tuple(args[0].tolist())
    else:
        shape = args
    for size in shape:
        if size.__class__ is not int:
            # (a TypeError for 2.0 and "a"; NumPy integers, integer tensors and bools are read as ints)
            return tuple(s if s.__class__ is int else operator.index(s) for s in shape)
    return shape


# ---- the lean eager path --------------------------------------------------------------------------------------
#
# Views of small tensors are called in loops (``x[0]``, ``x.view(-1)``), where OpDef.__call__'s binding and
# dispatch cost several times the NumPy view itself. Their methods (and ``__getitem__``) run the kernel directly
# when the call is plain (``plain``) and make the output here, as ``OpDef._eager`` makes it; anything else, and any
# kernel error, goes through the operator, which words the errors.


def plain(t: Tensor) -> bool:
    """Whether a view of ``t`` may skip the operator: no transform, forward AD, inference mode, anomaly mode,
    profiler or call observer (``STATE.special``), and ``t`` is not an inference tensor."""
    return not STATE.special and not t._inference


def fresh_view(op, src: Tensor, data: np.ndarray, args: tuple, replay: tuple | None = None) -> Tensor:
    """The output of the single-output view operator ``op`` called (plainly) as ``op(*args)`` on ``src``, whose
    kernel gave ``data``: its view bookkeeping, graph node and events, as ``OpDef._eager``'s. ``replay``, if
    given, is the whole chain of view ops from the base (a chain of views made at once, by ``x[0, :2]``)."""
    record = STATE.grad_enabled and (src._rg or (src._base is not None and src._base._rg))
    if record:
        node = op._new_node(args)
        node._saved = op._save_inputs(args)
    out = _new(Tensor)
    out._data = data
    out._rg = False
    out._gfn = None
    out._vc = None
    make_view(out, src, op, args, 0)
    if replay is not None:
        out._view_replay = replay
    if record:
        op._record(args, (out,), node)
    if STATE.observed:
        emit_op_call(op.public_name, (out,), record)
    return out


def call_plain(op, t: Tensor, *rest) -> Tensor:
    """``op(t, *rest)`` for a single-output view operator, the parameters after ``rest`` left to their defaults:
    the kernel run directly and its output made by ``fresh_view`` where the call is plain, else the operator's
    own path (which also words any error the kernel raised)."""
    if plain(t):
        try:
            data = op.kernel(t._data, *rest)
        except Exception:
            return op(t, *rest)
        args = (t, *rest)
        if len(args) != op.n_params:
            args += op.defaults[len(args):]
        return fresh_view(op, t, data, args)
    return op(t, *rest)


# ---- view / reshape ------------------------------------------------------------------------------------------

def viewed_as(a: np.ndarray, shape: tuple) -> np.ndarray | None:
    """``a`` viewed as ``shape`` (sizes already inferred), or None where no view has that shape. A dim of size 1
    gets the stride torch's ``view`` gives it, where NumPy's reshape picks another (not for a contiguous ``a``
    without such dims: there both give contiguous strides)."""
    if a.flags.c_contiguous and (1 not in a.shape or has_torch_contiguous_strides(a)):
        return a.reshape(shape)  # (contiguous strides in both; the method costs a fraction of np.reshape's)
    out = _numpy_view(a, shape)
    if out is None or 1 not in shape or not out.size:
        return out
    strides = view_strides(a.shape, a.strides, shape)  # (in bytes: the rule scales with the strides' unit)
    if strides is None or out.strides == strides:
        return out
    restrided = strided_view(a, shape, strides)
    if not a.flags.writeable:  # (a view of a read-only array stays read-only)
        restrided.flags.writeable = False
    return restrided


def _numpy_view(a: np.ndarray, shape: tuple) -> np.ndarray | None:
    if a.flags.c_contiguous:  # (always a view; the method costs a fraction of np.reshape's dispatch)
        return a.reshape(shape)
    try:  # (copy=False refuses without copying; assigning .shape copies the whole array first, then refuses)
        return np.reshape(a, shape, copy=False)
    except ValueError:
        return None
    except TypeError:  # NumPy < 2.1: no copy argument
        out = a.view()
        try:
            out.shape = shape
        except AttributeError:
            return None
        return out


VIEW_REFUSED = ("view size is not compatible with input tensor's size and stride (at least one dimension spans "
                "across two contiguous subspaces). Use .reshape(...) instead.")


def _view_kernel(a, size):
    out = viewed_as(a, infer_size(size, a.size))
    if out is None:
        raise RuntimeError(VIEW_REFUSED)
    return out


def _reshape_back_vjp(ctx, g):
    return reshape(g, ctx.input_shapes[0])


view = defop("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", _view_kernel, vjp=_reshape_back_vjp,
             meta=("self_sym_sizes",),
             inverse=lambda base, src, size: reshape(src, base.shape))


def _reshape_alias_kernel(a, size, stride):
    return _view_kernel(a, size)  # NumPy derives the strides ``reshape`` computed


_reshape_alias = defop("_reshape_alias(Tensor(a) self, SymInt[] size, SymInt[] stride) -> Tensor(a)",
                       _reshape_alias_kernel, vjp=_reshape_back_vjp, meta=("self_sym_sizes",),
                       inverse=lambda base, src, size, stride: reshape(src, base.shape))


def _unsafe_view_kernel(a, size):
    return np.reshape(a, infer_size(size, a.size))  # ``a`` is reshape's fresh contiguous copy: no second copy


def _unsafe_view_jvp(args, outs, tangents):
    # torch's auto_linear: the tangent (laid out as the contiguous primal) goes through _unsafe_view too, a new tensor
    # (UnsafeViewBackward0) rather than a view of the input's tangent, which would have to be cloned
    return _unsafe_view(tangents[0], args[1])


_unsafe_view = defop("_unsafe_view(Tensor self, SymInt[] size) -> Tensor", _unsafe_view_kernel,
                     vjp=_reshape_back_vjp, jvp=_unsafe_view_jvp, meta=("self_sym_sizes",))


def _view_strides(a: np.ndarray, shape) -> tuple[int, ...] | None:
    """The strides (in elements) of ``a`` viewed as ``shape``, or None if no view has that shape."""
    probe = viewed_as(a, infer_size(shape, a.size))
    return None if probe is None else tuple(s // a.itemsize for s in probe.strides)


def reshape(t, *shape):
    """PyTorch's reshape: a ``view`` of a contiguous tensor, else ``_reshape_alias`` where the strides allow
    a view, else a contiguous ``clone`` then ``_unsafe_view`` (so the graph has PyTorch's nodes)."""
    shape = normalize_shape(shape)
    a = t._data
    if a.flags.c_contiguous:
        return call_plain(view, t, shape)
    size = infer_size(shape, a.size)
    viewed = viewed_as(a, size)
    if viewed is not None:
        strides = tuple(s // a.itemsize for s in viewed.strides)
        if plain(t):  # (the view just made is the kernel's: not made twice)
            return fresh_view(_reshape_alias, t, viewed, (t, size, strides))
        return _reshape_alias(t, size, strides)
    from .creation import clone

    # contiguous, not preserve_format: a permuted copy could be viewed as ``shape`` with other strides than torch's
    return _unsafe_view(clone(t, memory_format=contiguous_format), infer_size(shape, a.size))


def flatten(t, start_dim: int = 0, end_dim: int = -1):
    nd = t._data.ndim
    if nd == 0:
        return reshape(t, (1,))
    s, e = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return t
    shape = t._data.shape
    if e - s + 1 == nd:  # (the whole tensor: ``flatten()``)
        return reshape(t, (t._data.size,))
    return reshape(t, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


# ---- transposes -------------------------------------------------------------------------------------------------

def _transpose_kernel(a, dim0, dim1):
    nd = a.ndim
    if nd == 0:
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return a.view()
    return np.swapaxes(a, wrap_dim(dim0, nd), wrap_dim(dim1, nd))


def _transpose_vjp(ctx, g):
    d0, d1 = ctx.attrs
    return transpose(g, d0, d1)


transpose = defop("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", _transpose_kernel,
                  vjp=_transpose_vjp, attrs=("dim0", "dim1"),
                  inverse=lambda base, src, d0, d1: transpose(src, d0, d1))


def _t_error(ndim: int, name: str) -> RuntimeError:
    return RuntimeError(f"{name}() expects a tensor with <= 2 dimensions, but self is {ndim}D")


def _t_kernel(a):
    if a.ndim > 2:
        raise _t_error(a.ndim, "t")
    return a.T


t = defop("t(Tensor(a) self) -> Tensor(a)", _t_kernel, vjp=lambda ctx, g: t(g), inverse=lambda base, src: t(src))


def _permute_kernel(a, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(dims) != a.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {a.ndim} is not equal "
                           f"to len(dims) = {len(dims)}")
    if dims and not (min(dims) >= 0 and max(dims) < a.ndim):  # (dims in range, the common case, are kept)
        dims = tuple(wrap_dim(d, a.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return a.transpose(dims)


def _permute_vjp(ctx, g):
    (dims,) = ctx.attrs
    dims = wrap_dims(dims, g._data.ndim)
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return permute(g, inverse)


permute = defop("permute(Tensor(a) self, int[] dims) -> Tensor(a)", _permute_kernel, vjp=_permute_vjp,
                attrs=("dims",))


def _movedim_dims(dims) -> list:
    """movedim's source or destination as a list: one int (a NumPy int is an int to torch's parser, which picks
    the ``movedim.int`` overload for it) or a list or tuple of them; any other sequence is refused as torch's
    parser refuses it (the argument guard words the error)."""
    if isinstance(dims, (int, np.integer)):
        return [int(dims)]
    if not isinstance(dims, (list, tuple)):
        raise TypeError(f"movedim takes an int or a tuple or list of ints, not {type(dims).__name__}")
    return list(dims)


def movedim(t, source, destination):
    """PyTorch's composite ``movedim``: a ``permute`` (an ``alias`` of a 0-d tensor)."""
    src, dst = _movedim_dims(source), _movedim_dims(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) should contain the "
                           f"same number of dims as destination ({dst} dims)")
    nd = t._data.ndim
    wsrc = [wrap_dim(d, nd) for d in src]
    wdst = [wrap_dim(d, nd) for d in dst]
    for name, given, wrapped in (("source", src, wsrc), ("destination", dst, wdst)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({given})")
    if nd == 0:
        return alias(t)
    order = [-1] * nd
    for s, d in zip(wsrc, wdst):
        order[d] = s
    rest = iter(d for d in range(nd) if d not in wsrc)  # the other dims keep their relative order
    return permute(t, [o if o >= 0 else next(rest) for o in order])


# ---- squeeze / unsqueeze / expand -----------------------------------------------------------------------------------

def _squeeze_kernel(a, dim=None):
    if dim is None:
        return np.squeeze(a)
    dims = wrap_dims(dim, a.ndim, one_by_one=True) if a.ndim else ()
    dims = tuple(d for d in dims if a.shape[d] == 1)
    return np.squeeze(a, axis=dims) if dims else a.view()


def _squeeze_inverse(base, src, *dim):
    return reshape(src, base.shape)


# One operator per PyTorch overload, for its node class: squeeze() SqueezeBackward0, squeeze(int)
# SqueezeBackward1, squeeze(int[]) SqueezeBackward2.
def _unsqueeze_to(g, sizes: tuple, dims) -> object:
    """PyTorch's unsqueeze_to: the size-1 dims among ``dims`` of ``sizes`` come back one unsqueeze each."""
    for d in dims:
        if sizes[d] == 1:
            g = unsqueeze(g, d)
    return g


def _squeeze_all_vjp(ctx, g):
    (sizes,) = ctx.attrs
    return _unsqueeze_to(g, sizes, range(len(sizes)))


def _squeeze_dims_vjp(ctx, g):
    dim, sizes = ctx.attrs
    return _unsqueeze_to(g, sizes, sorted(wrap_dims(dim, len(sizes))) if sizes else ())


def _unsqueeze_vjp(ctx, g):
    (dim,) = ctx.attrs
    return _squeeze_dim(g, wrap_dim(dim, g.ndim))  # PyTorch: grad.squeeze(dim)


_squeeze_all = defop("squeeze(Tensor(a) self) -> Tensor(a)", _squeeze_kernel, vjp=_squeeze_all_vjp,
                     inverse=_squeeze_inverse, attrs=("self_sym_sizes",))
_squeeze_dim = defop("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", _squeeze_kernel, vjp=_squeeze_dims_vjp,
                     inverse=_squeeze_inverse, node_name="SqueezeBackward1", attrs=("dim", "self_sym_sizes"))
_squeeze_dims = defop("squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)", _squeeze_kernel,
                      vjp=_squeeze_dims_vjp, inverse=_squeeze_inverse, node_name="SqueezeBackward2",
                      attrs=("dim", "self_sym_sizes"))


def squeeze(input, dim=None):
    """``squeeze()``, ``squeeze(dim)`` or ``squeeze(dims)``: each records its overload's node, as in PyTorch."""
    if dim is None:
        return _squeeze_all(input)
    if isinstance(dim, (list, tuple)):
        return _squeeze_dims(input, dim)
    return _squeeze_dim(input, dim)


def _unsqueeze_kernel(a, dim):
    nd = a.ndim
    if not 0 <= dim <= nd:
        dim = wrap_dim(dim, nd + 1)
    shape, st = a.shape, a.strides if a.size else torch_byte_strides(a)  # (an empty array's: see there)
    out = a.reshape(shape[:dim] + (1,) + shape[dim:])  # (what np.expand_dims does, without its checks)
    # PyTorch keeps every stride and gives the new dim the stride that steps over the dim it displaces (1 at
    # the end); NumPy's reshape may restride dims of size 1, and repeats the last dim's stride at the end
    strides = st[:dim] + (a.itemsize if dim == nd else shape[dim] * st[dim],) + st[dim:]
    if out.strides != strides:
        if not a.size:  # (NumPy's reshape places an empty array as it likes)
            return empty_view_at(a, out.shape, strides, 0)
        return np.lib.stride_tricks.as_strided(out, strides=strides)
    return out


unsqueeze = defop("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", _unsqueeze_kernel, vjp=_unsqueeze_vjp,
                  inverse=lambda base, src, dim: reshape(src, base.shape), attrs=("dim",))


def _expand_kernel(a, size, implicit=False):
    size = tuple(size)
    lead = len(size) - a.ndim
    source_strides = a.strides if a.size else torch_byte_strides(a)  # (an empty array's: see there)
    if lead >= 0:  # (the usual call, in one pass: sizes kept, -1, or a size-1 dim widened; anything else below)
        target = list(size)
        strides = [0] * lead
        i = lead
        for n, s, st in zip(a.shape, size[lead:], source_strides):
            if s == n:
                strides.append(st)
            elif s == -1:
                target[i] = n
                strides.append(st)
            elif n == 1 and s >= 0:
                strides.append(0)
            else:
                break
            i += 1
        else:
            if not lead or min(size[:lead]) >= 0:
                if lead and a.ndim and 1 in size[:lead]:
                    _set_leading_strides(target, strides, lead)
                try:
                    return _expanded_view(a, tuple(target), tuple(strides))
                except ValueError:  # (NumPy's "array is too big": beyond int64, refused in PyTorch's words)
                    _check_numel(target)
                    raise
    if len(size) < a.ndim:
        raise RuntimeError(f"expand(torch.{scalar_type_name(a.dtype)}Tensor{{{list(a.shape)}}}, size={list(size)}): "
                           f"the number of sizes provided ({len(size)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({a.ndim})")
    lead = len(size) - a.ndim
    target = _expanded_sizes(a.shape, size) if a.ndim else list(size)  # (a 0-d tensor's: the sizes as given)
    _check_numel(target)
    # A negative size passes where another is 0 (numel 0): PyTorch makes a tensor of that negative size, which
    # NumPy cannot hold; the nearest is an empty one
    target = [builtins.max(n, 0) for n in target]
    # Writable like PyTorch's (an in-place write into the overlapping result itself is refused by the operator, but
    # a non-overlapping view of it, e.g. a diagonal, writes through to the expanded tensor's memory)
    strides = [0] * lead + [0 if n == 1 and t != 1 else st
                            for n, t, st in zip(a.shape, target[lead:], source_strides)]
    if lead and a.ndim:
        _set_leading_strides(target, strides, lead)
    return _expanded_view(a, tuple(target), tuple(strides))


def _expanded_view(a: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
    """The expanded view; an empty one whose strides are all zero (a 0-d tensor's or size-1 dims' expand) is
    marked so, as ``Tensor.stride()`` reads a NumPy kernel's empty result, zero-strided, as contiguous."""
    view = strided_view(a, shape, strides)
    if 0 in shape and not any(strides):
        return zero_strides_kept(view)
    return view


def _expanded_sizes(shape: tuple, size: tuple) -> list:
    """PyTorch's inferExpandGeometry: from the last dim backwards (which decides the dim an error names), -1
    keeps an existing size, a size-1 dim takes any size (a negative one too), a leading new dim any but -1."""
    lead = len(size) - len(shape)
    target = list(size)
    for i in range(len(size) - 1, -1, -1):
        s = size[i]
        if i < lead:
            if s == -1:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                                   f"dimension {i}")
            continue
        cur = shape[i - lead]
        if s == -1:
            target[i] = cur
        elif cur != 1 and s != cur:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(size)}.  Tensor sizes: "
                               f"{list(shape)}")
    return target


def _set_leading_strides(target: list, strides: list, lead: int) -> None:
    """inferExpandGeometry's strides for the new leading dims of a tensor of 1 dim or more: a dim of size 1 steps
    over the dims after it (size times stride of the next), any other 0 (a 0-d tensor's are all 0)."""
    for i in range(lead - 1, -1, -1):
        strides[i] = target[i + 1] * strides[i + 1] if target[i] == 1 else 0


_U64 = 1 << 64


def _check_numel(sizes: list) -> None:
    """c10's safe_compute_numel: the sizes multiplied as unsigned 64-bit numbers (a negative one is huge), refused
    on an overflow or a product beyond int64."""
    product, overflow = 1, False
    for n in sizes:
        product *= n % _U64
        overflow |= product >= _U64
        product %= _U64
    if overflow or product > _INT64_MAX:
        raise RuntimeError("numel: integer multiplication overflow")


def _expand_vjp(ctx, g):
    from .reductions import sum_to_size

    return sum_to_size(g, ctx.input_shapes[0])


expand = defop("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)", _expand_kernel,
               vjp=_expand_vjp, meta=("self_sym_sizes",))


# ---- indexing views -----------------------------------------------------------------------------------------------

def _select_kernel(a, dim, index):
    nd = a.ndim
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = dim if 0 <= dim < nd else wrap_dim(dim, nd)
    n = a.shape[d]
    if index < -n or index >= n:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(a.shape)} at "
                         f"dimension {d}")
    return a[index, ...] if d == 0 else a[(_WHOLE,) * d + (index, Ellipsis)]


_WHOLE = builtins.slice(None)


def _select_vjp(ctx, g):
    dim, index, sizes = ctx.attrs
    return select_backward(g, sizes, dim, index)


select = defop("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", _select_kernel, vjp=_select_vjp,
               attrs=("dim", "index", "self_sym_sizes"),
               inverse=lambda base, src, dim, index: select_scatter(base, src, dim, index))


def _select_backward_kernel(g, input_sizes, dim, index):
    out = np.zeros(tuple(input_sizes), dtype=g.dtype)
    out[(builtins.slice(None),) * wrap_dim(dim, len(input_sizes)) + (index, Ellipsis)] = g
    return out


# PyTorch's gradient of select and slice: operators of their own (SelectBackwardBackward0...), linear in the
# gradient, whose own gradient is the view again.
select_backward = defop("select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor",
                        _select_backward_kernel, vjp=lambda ctx, g: select(g, *ctx.attrs),
                        jvp=lambda args, outs, tangents: select_backward(tangents[0], *args[1:]),
                        attrs=("dim", "index"))


def _slice_kernel(a, dim=0, start=None, end=None, step=1):
    if step <= 0:
        raise ValueError("step must be greater than zero")
    d = dim if 0 <= dim < a.ndim else wrap_dim(dim, a.ndim)
    out = a[(_WHOLE,) * d + (builtins.slice(start, end, step),)]  # (``sliced``, without a call on the lean path)
    return out if out.size else _placed_empty_slice(a, out, d, start, step)


def sliced(a: np.ndarray, d: int, start, end, step: int = 1) -> np.ndarray:
    """``a[start:end:step]`` along dim ``d`` (a view), placed as torch places it even where it is empty."""
    out = a[(_WHOLE,) * d + (builtins.slice(start, end, step),)]
    return out if out.size else _placed_empty_slice(a, out, d, start, step)


def _placed_empty_slice(a: np.ndarray, out: np.ndarray, d: int, start, step: int) -> np.ndarray:
    """An empty slice ``out`` of ``a`` where torch places it. NumPy starts an empty slice at ``a``'s first
    element and drops its step; torch starts it at the start clamped to the dim and multiplies the stride by the
    step (``storage_offset()`` and ``stride()`` show both). NumPy's own where its memory cannot hold the place
    (a slice of an empty slice past the end)."""
    n = a.shape[d]
    start = 0 if start is None else operator.index(start)
    start = builtins.min(builtins.max(start + n if start < 0 else start, 0), n)
    strides = list(a.strides)
    strides[d] *= step
    return empty_view_at(a, out.shape, tuple(strides), start * a.strides[d])


def empty_view_at(a: np.ndarray, shape: tuple, strides: tuple, byte_offset: int) -> np.ndarray:
    """An empty view of ``a``'s memory, ``byte_offset`` bytes after ``a``'s first element, with byte ``strides``
    (torch's empty views keep an offset and strides, though they never read through them)."""
    root = storage_root(a)
    offset = offset_in(root, a) + byte_offset
    if root.flags.c_contiguous and 0 <= offset <= root.nbytes:
        placed = np.ndarray(shape, a.dtype, root, offset, strides)  # (its base chain leads to the storage)
        if not a.flags.writeable:
            placed.flags.writeable = False
        return placed
    # past the storage's end (torch does not check an empty view's place): over the bare address
    interface = dict(a.__array_interface__, shape=tuple(shape), strides=tuple(strides))
    interface["data"] = (interface["data"][0] + byte_offset, not a.flags.writeable)
    return np.asarray(_Memory(interface, a))


class _Memory:
    """An array interface over an address (NumPy's arrays made from it keep it as their base)."""

    def __init__(self, interface: dict, base: np.ndarray) -> None:
        self.__array_interface__ = interface
        self.base = base


def _slice_vjp(ctx, g):
    dim, start, end, step, sizes = ctx.attrs
    # PyTorch's slice_backward_wrapper: a missing start is 0, a missing end INT64_MAX
    return slice_backward(g, sizes, dim, 0 if start is None else start, _INT64_MAX if end is None else end, step)


_INT64_MAX = 2 ** 63 - 1

slice = defop("slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) "
              "-> Tensor(a)",
              _slice_kernel, vjp=_slice_vjp, attrs=("dim", "start", "end", "step", "self_sym_sizes"),
              inverse=lambda base, src, dim=0, start=None, end=None, step=1: slice_scatter(base, src, dim, start, end,
                                                                                           step))


def _slice_backward_kernel(g, input_sizes, dim, start, end, step):
    out = np.zeros(tuple(input_sizes), dtype=g.dtype)
    out[(builtins.slice(None),) * wrap_dim(dim, len(input_sizes)) + (builtins.slice(start, end, step),)] = g
    return out


slice_backward = defop("slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, "
                       "SymInt step) -> Tensor", _slice_backward_kernel, vjp=lambda ctx, g: slice(g, *ctx.attrs),
                       jvp=lambda args, outs, tangents: slice_backward(tangents[0], *args[1:]),
                       attrs=("dim", "start", "end", "step"))


def narrow_start(start: int, length: int, n: int) -> int:
    """narrow's and narrow_copy's start, checked against the dim's size ``n`` and wrapped, in PyTorch's words."""
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if length < 0 or start > n - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return start


def narrow(t, dim: int, start, length: int):
    # (narrow.Tensor checks its start before anything else)
    if isinstance(start, Tensor) and (start._data.ndim != 0 or start._data.dtype.kind not in "iu"):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    if t._data.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    start = narrow_start(int(start), length, t._data.shape[wrap_dim(dim, t._data.ndim)])
    # (the dim unwrapped, as at::narrow passes it on: SliceBackward0 saves it so)
    return slice(t, dim, start, start + length, 1)


def _diagonal_kernel(a, offset=0, dim1=0, dim2=1):
    d1, d2 = wrap_dim(dim1, a.ndim), wrap_dim(dim2, a.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    out = np.diagonal(a, offset, d1, d2)
    if a.flags.writeable:
        out.flags.writeable = True  # NumPy hands out a read-only view; PyTorch's diagonal can be written to
    return out


def _diagonal_vjp(ctx, g):
    return diagonal_backward(g, ctx.input_shapes[0], *ctx.attrs)


diagonal = defop("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)", _diagonal_kernel,
                 vjp=_diagonal_vjp, attrs=("offset", "dim1", "dim2"), meta=("self_sym_sizes",),
                 inverse=lambda base, src, offset=0, dim1=0, dim2=1: diagonal_scatter(base, src, offset, dim1, dim2))


def _diagonal_backward_kernel(g, input_sizes, offset, dim1, dim2):
    """ATen's: ``zeros(input_sizes).diagonal(offset, dim1, dim2).copy_(grad)``, refusing what each step refuses in
    its words (a negative size, identical dims, a gradient that does not broadcast to the diagonal)."""
    from .._arg_checks import non_negative_shape
    from .pointwise import check_fits_into

    out = np.zeros(non_negative_shape("zeros", tuple(input_sizes)), dtype=g.dtype)
    piece = _diagonal_kernel(out, offset, dim1, dim2)
    check_fits_into(piece, g)
    piece[...] = g
    return out


# PyTorch's gradient of diagonal: an operator of its own (DiagonalBackwardBackward0), linear in the gradient,
# whose own gradient is the diagonal again.
diagonal_backward = defop(
    "diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor",
    _diagonal_backward_kernel, vjp=lambda ctx, g: diagonal(g, *ctx.attrs),
    jvp=lambda args, outs, tangents: diagonal_backward(tangents[0], *args[1:]),
    attrs=("offset", "dim1", "dim2"))


def _check_strided_geometry(size: tuple, stride: tuple, storage_offset) -> None:
    """PyTorch's setStrided checks, in its order and words, before the storage's bounds are."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    if storage_offset is not None and storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    if any(n < 0 for n in size):  # (its storage size arithmetic, in unsigned integers, overflows)
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")


def _as_strided_kernel(a, size, stride, storage_offset=None):
    size, stride = tuple(size), tuple(stride)
    _check_strided_geometry(size, stride, storage_offset)
    root = storage_root(a)
    item = a.itemsize
    offset = offset_in(root, a) // item if storage_offset is None else storage_offset
    if 0 in size:  # (a view all the same, placed at the offset: torch checks nothing of an empty one)
        if not root.nbytes:  # (a storage without memory: over an owner that keeps the strides, zero ones too)
            return strided_empty(size, stride, a.dtype)
        return empty_view_at(a, size, tuple(st * item for st in stride), offset * item - offset_in(root, a))
    needed = storage_extent(size, stride, offset) * item
    if needed > root.nbytes:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {item} requiring a storage size of {needed} are out of bounds for storage "
                           f"of size {root.nbytes}")
    # the storage in memory order, without a copy for any dense layout (as PyTorch's storage)
    flat = root.reshape(-1) if root.flags.c_contiguous else np.ravel(root, order="K")
    return np.ndarray(size, a.dtype, buffer=flat, offset=offset * item, strides=tuple(st * item for st in stride))


def _may_overlap(size, stride) -> bool:
    """False only when no two elements of the geometry share memory (PyTorch's conservative test)."""
    reach = 0
    for n, st in sorted((p for p in zip(size, stride) if p[0] > 1), key=lambda p: p[1]):
        if st <= reach:
            return True
        reach += (n - 1) * st
    return False


def _storage_index(base_size: int, size, stride, offset: int) -> np.ndarray:
    """The storage index of each element of a strided geometry."""
    positions = np.arange(base_size, dtype=np.int64)
    return np.lib.stride_tricks.as_strided(positions[offset:], shape=tuple(size),
                                           strides=tuple(st * 8 for st in stride)).reshape(-1)


def _as_strided_vjp(ctx, g):
    # As PyTorch's as_strided_backward, in storage coordinates: the gradient is written into a zero storage
    # where the output's elements lie, and read back where the input's lie. Both geometries are relative to
    # the storage, so the input may itself be a view at an offset.
    size, stride, offset, (in_size, in_stride, in_offset) = ctx.attrs
    offset = in_offset if offset is None else offset
    shared = builtins.min(in_offset, offset)
    in_offset, offset = in_offset - shared, offset - shared
    base_size = builtins.max(storage_extent(in_size, in_stride, in_offset), storage_extent(size, stride, offset))
    storage = _zeros((base_size,), g)
    if _may_overlap(size, stride):  # elements written twice add up
        from .._tensor import _wrap
        from . import indexing

        index = _wrap(_storage_index(base_size, size, stride, offset))
        storage = indexing.index_put(storage, (index,), g.reshape(-1), True)
    else:
        storage = as_strided_scatter(storage, g, size, stride, offset)
    if _may_overlap(in_size, in_stride):  # an input element read twice shares the gradient of its storage
        from .._tensor import _wrap

        count = np.bincount(_storage_index(base_size, in_size, in_stride, in_offset), minlength=base_size)
        storage = storage / _wrap(np.maximum(count, 1).astype(g._data.dtype))
    return as_strided(storage, in_size, in_stride, in_offset)


as_strided = defop("as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) "
                   "-> Tensor(a)",
                   _as_strided_kernel, vjp=_as_strided_vjp,
                   attrs=("size", "stride", "storage_offset", "self_geometry"))


# ---- multi-output views ---------------------------------------------------------------------------------

def _unbind_kernel(a, dim=0):
    d = wrap_dim(dim, a.ndim)
    return tuple(a[(builtins.slice(None),) * d + (i, Ellipsis)] for i in range(a.shape[d]))


def _unbind_vjp(ctx, *grads):
    (dim,) = ctx.attrs
    from .shape import stack

    return stack(list(grads), dim)


unbind = defop("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]", _unbind_kernel, vjp=_unbind_vjp,
               attrs=("dim",), multi_output_view=True)


def _split_kernel(a, split_size, dim=0):
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if isinstance(split_size, (list, tuple)):
        sizes = list(split_size)
        if builtins.sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                               f"dimension {d}), but got split_sizes={sizes}")
    else:
        if split_size <= 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        sizes = [builtins.min(split_size, n - i) for i in range(0, n, split_size)] if n else [0]
    out, start = [], 0
    for s in sizes:
        out.append(sliced(a, d, start, start + s))
        start += s
    return tuple(out)


def _split_vjp(ctx, *grads):
    split_size, dim, _ = ctx.attrs
    from .shape import cat

    return cat(list(grads), dim)


split = defop("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]", _split_kernel,
              vjp=_split_vjp, attrs=("split_size", "dim", "self_sym_sizes"), multi_output_view=True)


def chunk(t, chunks: int, dim: int = 0):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = wrap_dim(dim, t._data.ndim)
    n = t._data.shape[d]
    if not n:  # (as torch: ``chunks`` empty pieces, where a split would give one)
        from .shape_extra import split_with_sizes

        return split_with_sizes(t, [0] * chunks, d)
    return split(t, -(-n // chunks), d)


def _unfold_kernel(a, dimension, size, step):
    d = wrap_dim(dimension, a.ndim)  # (a 0-d tensor unfolds as one of one element, as torch's)
    n = a.shape[d] if a.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if a.ndim == 0:
        return a.reshape(1)[:size]
    count = (n - size) // step + 1
    strides = list(a.strides if a.size else torch_byte_strides(a))  # (an empty array's: see there)
    shape = list(a.shape)
    shape[d] = count
    new_strides = strides[:]
    new_strides[d] = strides[d] * step
    # (over the storage, so that an empty result's zero strides read as the view's: _strides.zero_strides_meant)
    return strided_view(a, tuple(shape) + (size,), tuple(new_strides) + (strides[d],))


def _unfold_vjp(ctx, g):
    dimension, size, step = ctx.attrs
    from .shape import unfold_backward

    return unfold_backward(g, ctx.input_shapes[0], dimension, size, step)


unfold = defop("unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)", _unfold_kernel,
               vjp=_unfold_vjp, attrs=("dimension", "size", "step"), meta=("self_sym_sizes",))


# ---- scatter inverses of views ---------------------------------------------------------------------------------

def _zeros(shape, like):
    from .creation import new_zeros

    return new_zeros(like, shape)


def _check_scatter_src(src, piece: np.ndarray) -> None:
    """The ``*_scatter`` operators take a ``src`` of exactly the embedded piece's shape (no broadcasting)."""
    if np.shape(src) != piece.shape:
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(np.shape(src))}, slice size = {list(piece.shape)}")


def _select_scatter_kernel(a, src, dim, index):
    out = a.copy()
    d = wrap_dim(dim, a.ndim)
    key = (builtins.slice(None),) * d + (index,)
    _check_scatter_src(src, out[key])
    out[key] = src
    return out


def _select_scatter_vjp(ctx, g):
    dim, index = ctx.attrs
    need = ctx.needs_input_grad
    return (select_scatter(g, _zeros(tuple(select(g, dim, index).shape), g), dim, index) if need[0] else None,
            select(g, dim, index) if need[1] else None)


select_scatter = defop("select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor",
                       _select_scatter_kernel, vjp=_select_scatter_vjp, attrs=("dim", "index"), complex_grad=False)


def _slice_scatter_kernel(a, src, dim=0, start=None, end=None, step=1):
    out = a.copy()
    d = wrap_dim(dim, a.ndim)
    key = (builtins.slice(None),) * d + (builtins.slice(start, end, step),)
    _check_scatter_src(src, out[key])
    out[key] = src
    return out


def _slice_scatter_vjp(ctx, g):
    dim, start, end, step = ctx.attrs
    need = ctx.needs_input_grad
    piece = slice(g, dim, start, end, step)
    return (slice_scatter(g, _zeros(tuple(piece.shape), g), dim, start, end, step) if need[0] else None,
            piece if need[1] else None)


slice_scatter = defop("slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, "
                      "SymInt step=1) -> Tensor", _slice_scatter_kernel, vjp=_slice_scatter_vjp,
                      attrs=("dim", "start", "end", "step"), complex_grad=False)


def _diagonal_scatter_kernel(a, src, offset=0, dim1=0, dim2=1):
    out = a.copy()
    view = np.diagonal(out, offset, wrap_dim(dim1, a.ndim), wrap_dim(dim2, a.ndim))
    view.setflags(write=True)
    _check_scatter_src(src, view)
    view[...] = src
    return out


def _diagonal_scatter_vjp(ctx, g):
    offset, dim1, dim2 = ctx.attrs
    need = ctx.needs_input_grad
    piece = diagonal(g, offset, dim1, dim2)
    return (diagonal_scatter(g, _zeros(tuple(piece.shape), g), offset, dim1, dim2) if need[0] else None,
            piece if need[1] else None)


diagonal_scatter = defop("diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor",
                         _diagonal_scatter_kernel, vjp=_diagonal_scatter_vjp, attrs=("offset", "dim1", "dim2"))


def _as_strided_scatter_kernel(a, src, size, stride, storage_offset=None):
    out = np.ascontiguousarray(a).copy()
    # (PyTorch's as_strided of the copy, with its checks: a geometry past the storage is refused, not written)
    view = _as_strided_kernel(out, size, stride, storage_offset or 0)
    _check_scatter_src(src, view)
    view[...] = src
    return out


def _as_strided_scatter_vjp(ctx, g):
    size, stride, offset = ctx.attrs
    need = ctx.needs_input_grad
    piece = as_strided(g.contiguous(), size, stride, offset)
    return (as_strided_scatter(g, _zeros(tuple(size), g), size, stride, offset) if need[0] else None,
            piece if need[1] else None)


as_strided_scatter = defop("as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, "
                           "SymInt? storage_offset=None) -> Tensor", _as_strided_scatter_kernel,
                           vjp=_as_strided_scatter_vjp, attrs=("size", "stride", "storage_offset"))


alias = defop("alias(Tensor(a) self) -> Tensor(a)", lambda a: a.view(), vjp=lambda ctx, g: g,
              inverse=lambda base, src: src, node_name="AliasBackward0")


def _view_alias(t):
    return alias(t)


# ---- in-place views --------------------------------------------------------------------------------------------
#
# ``t_``, ``squeeze_``...: the tensor itself takes the view's shape and strides. PyTorch gives each in-place
# overload its own node class with the out-of-place formula (derivatives.yaml: ``squeeze_.dim`` is
# SqueezeBackward4), and sets the tensor's history to it rather than rebasing it: an in-place view op on a view
# leaves its base's history alone (no CopySlices). It bumps the version, and under forward AD transforms the
# tangent in place too.

_INPLACE_NODE: dict[type, type] = {}  # out-of-place view op's node class -> the in-place overload's


def _inplace_node_class(op, name: str) -> None:
    cls = type(name, (op.node_class,), {"__slots__": (), "_name": name})
    cls.__module__ = op.node_class.__module__
    _INPLACE_NODE[op.node_class] = cls


for _op, _name in ((_squeeze_all, "SqueezeBackward3"), (_squeeze_dim, "SqueezeBackward4"),
                   (_squeeze_dims, "SqueezeBackward5"), (unsqueeze, "UnsqueezeBackward1"), (t, "TBackward1"),
                   (transpose, "TransposeBackward1"), (as_strided, "AsStridedBackward1")):
    _inplace_node_class(_op, _name)
del _op, _name


def inplace_view(view_fn: Callable[..., Tensor], name: str) -> Callable[..., Tensor]:
    """``name(self, *args)``, the in-place form of the view function ``view_fn`` (``squeeze_`` of ``squeeze``)."""

    def inplace(self: Tensor, *args, **kwargs) -> Tensor:
        from .._state import STATE
        from ..autograd import views as view_tracking

        if STATE.grad_enabled and not self._inference:  # (an inference tensor has no autograd kernel to check)
            view_tracking.check_inplace(self, self._rg)  # leaf errors; also refreshes a stale view's grad_fn
        tangent = None
        if STATE.fw_grad_levels:
            from ..autograd import forward_ad

            tangent = forward_ad.get_tangent(self, forward_ad.current_level())
            with forward_ad.fw_disabled():
                new = view_fn(self, *args, **kwargs)
        else:
            new = view_fn(self, *args, **kwargs)  # records the out-of-place node, renamed below
        self._data = new._data
        view_tracking.refuse_inference_update(self)  # (torch's version bump refuses it, after the change)
        self._bump_version()
        if self._base is not None:
            self._view_replay = new._view_replay  # replays see the new geometry
        node = new._gfn
        if node is not None:
            node.__class__ = _INPLACE_NODE.get(node.__class__, node.__class__)
            # (a retains_grad hook stays on the old grad_fn: PyTorch's set_history does not move it)
            self._gfn, self._output_nr, self._rg = node, new._output_nr, True
            if self._base is not None:
                self._view_version = self._vc[0]  # torch's set_history: the new grad_fn is current
        if tangent is not None:
            inplace(tangent, *args, **kwargs)
        return self

    inplace.__name__ = inplace.__qualname__ = name
    return inplace


def _t_checked(self: Tensor) -> Tensor:
    if self._data.ndim > 2:
        raise _t_error(self._data.ndim, "t_")  # the error names the in-place method, as in PyTorch
    return t(self)


squeeze_ = inplace_view(squeeze, "squeeze_")
unsqueeze_ = inplace_view(unsqueeze, "unsqueeze_")
t_ = inplace_view(_t_checked, "t_")
transpose_ = inplace_view(transpose, "transpose_")
as_strided_ = inplace_view(as_strided, "as_strided_")


# ---- view(dtype) ---------------------------------------------------------------------------------------------


def view_as_dtype(t: Tensor, dtype) -> Tensor:
    """``t.view(dtype)``: the same memory read as another dtype. As in PyTorch it shares ``t``'s data and
    version counter, is not differentiable (no grad_fn) and is not an autograd view (no ``_base``). With a
    different element size the last dim is split or merged, under PyTorch's stride conditions."""
    from .._tensor import _wrap

    a = t._data
    new = dtype.np
    old_size, new_size = a.dtype.itemsize, new.itemsize
    names = f"{scalar_type_name(a.dtype)} as {scalar_type_name(new)} (different element sizes)"
    if old_size != new_size:
        if a.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 to view {names}")
        strides = t.stride()
        ratio = new_size // old_size
        if new_size > old_size:  # (PyTorch's order of checks)
            if a.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to view {names}, but got "
                                   f"{a.shape[-1]}")
            if t.storage_offset() % ratio:
                raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} to view {names}, but got "
                                   f"{t.storage_offset()}")
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {names}, but got {strides[-1]}")
        if new_size > old_size:
            for i, stride in enumerate(strides[:-1]):
                if stride % ratio:
                    raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} to view {names}, but got "
                                       f"{stride}")
    out = _wrap(a.view(new))
    vc = t._vc
    if vc is None:
        vc = t._vc = [0]
    out._vc = vc  # the same storage: in-place changes through either one count for both
    return out
