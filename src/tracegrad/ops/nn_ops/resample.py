"""Index maps and separable linear maps over the trailing dims: padding, nearest/bilinear resampling and
adaptive average pooling are all one of the two.

* gather ``y = x[..., idx_1, ..., idx_k]`` (reflect / replicate / circular padding, nearest upsampling),
  whose adjoint is a scatter-add (and the scatter's adjoint is the gather again);
* separable linear ``y = M_1 ... M_k x`` over the trailing dims (bilinear interpolation, adaptive average
  pooling), whose adjoint is the same map with transposed matrices. The interpolating upsamplings pass a
  :class:`~.interp_cpu.ResamplePlan` in place of the matrices: PyTorch's kernels replayed rounding for rounding
  (float inputs), its adjoint the backward kernel's.

Each user-facing operator is its own OpDef so its node carries PyTorch's name.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ...backend.dtypes import scalar_type_name
from ..registry import defop
from .interp_cpu import ResamplePlan

# ---- gather / scatter along trailing dims ------------------------------------------------------------------


def _flat_source(index_maps: tuple, in_sizes: tuple) -> np.ndarray:
    grids = np.meshgrid(*index_maps, indexing="ij")
    return np.ravel_multi_index(tuple(grids), in_sizes).ravel()


def gather_kernel(x, index_maps):
    k = len(index_maps)
    lead = x.shape[: x.ndim - k]
    flat = x.reshape(lead + (math.prod(x.shape[x.ndim - k :]),))
    src = _flat_source(index_maps, x.shape[x.ndim - k :])
    out_trailing = tuple(len(m) for m in index_maps)
    return np.take(flat, src, axis=-1).reshape(lead + out_trailing)


class NearestMaps(tuple):
    """The forward index maps of a nearest upsampling, carrying in ``backward`` the maps its backward kernel
    scatters by: PyTorch's nearest backward maps an axis that keeps its size, or exactly doubles, by index (see
    ``nearest_index_map``) where its 1-d and 3-d forward kernels follow the scale factor."""

    backward: tuple

    def __new__(cls, forward: tuple, backward: tuple) -> NearestMaps:
        maps = super().__new__(cls, forward)
        maps.backward = backward
        return maps


def scatter_kernel(g, index_maps, input_size):
    index_maps = getattr(index_maps, "backward", index_maps)  # (a NearestMaps: the backward's own maps)
    k = len(index_maps)
    in_trailing = tuple(input_size[len(input_size) - k :])
    lead = tuple(input_size[: len(input_size) - k])
    planes = math.prod(lead)
    size = math.prod(in_trailing)
    src = _flat_source(index_maps, in_trailing)
    idx = ((np.arange(planes) * size).reshape(-1, 1) + src.reshape(1, -1)).ravel()
    weights = g.reshape(-1)
    if weights.dtype == np.float32 or weights.dtype == np.float64:  # (added one by one in g's order, as PyTorch)
        out = np.zeros(planes * size, dtype=weights.dtype)
        np.add.at(out, idx, weights)
        return out.reshape(tuple(input_size))
    out = np.bincount(idx, weights=weights.real.astype(np.float64, copy=False), minlength=planes * size)
    if weights.dtype.kind == "c":  # (bincount sums real weights only: the imaginary parts separately)
        out = out + 1j * np.bincount(idx, weights=weights.imag.astype(np.float64), minlength=planes * size)
    return out.astype(g.dtype, copy=False).reshape(tuple(input_size))


def shown_args(kernel, arg: str, shown: tuple[str, ...]) -> tuple[str, Callable, dict]:
    """An operator taking an internal ``arg`` (index maps, matrices) last, then the arguments PyTorch's node
    saves (``shown``, e.g. ``"SymInt[] padding"``): the schema tail, the kernel ignoring them and the defop
    rules that record them, with ``arg`` first, for the node's ``_saved_*`` getters (``arg`` hidden)."""
    names = tuple(s.rsplit(" ", 1)[1] for s in shown)
    tail = "".join(", " + s for s in shown)
    rules = {"attrs": (arg,) + names, "hidden": (arg,)}
    n = len(shown)
    return tail, (lambda *args: kernel(*args[:-n])) if n else kernel, rules


def dtype_checked(kernel: Callable, kernel_name: str, uint8_ok: bool) -> Callable:
    """``kernel`` refusing, in PyTorch's dispatch words, the input dtypes its upsampling kernel has no
    instantiation for: all but the floating ones, and uint8 where it has one (nearest, bilinear, bicubic)."""
    def checked(x, *rest):
        if x.dtype.kind != "f" and not (uint8_ok and x.dtype == np.uint8):
            raise NotImplementedError(f'"{kernel_name}" not implemented for \'{scalar_type_name(x.dtype)}\'')
        return kernel(x, *rest)

    return checked


def backward_node_name(name: str) -> str:
    """The node of the backward op of the op whose node is ``name``, as PyTorch's codegen names it:
    ``UpsampleBilinear2DBackward0`` -> ``UpsampleBilinear2DBackwardBackward0``."""
    return name.removesuffix("0") + "Backward0"


def _adjoint_pair(name: str, forward: tuple, backward: tuple, adjoint_vjps: Callable) -> object:
    """The op recording node ``name`` and its backward op (``backward_node_name(name)``), each differentiated by
    the other, as PyTorch's upsampling and its ``*_backward`` are; ``forward``/``backward`` are (schema, kernel,
    rules) and ``adjoint_vjps(forward_op, backward_op)`` gives the two vjps. Returns the forward op."""
    ops: dict = {}
    forward_vjp, backward_vjp = adjoint_vjps(lambda *a: ops["forward"](*a), lambda *a: ops["backward"](*a))
    (f_schema, f_kernel, f_rules), (b_schema, b_kernel, b_rules) = forward, backward
    ops["backward"] = defop(b_schema, b_kernel, vjp=backward_vjp, node_name=backward_node_name(name), **b_rules)
    ops["forward"] = defop(f_schema, f_kernel, vjp=forward_vjp, node_name=name, **f_rules)
    return ops["forward"]


def _op_name(name: str) -> str:
    return f"_nn_{name.lower()}"


def named_gather(name: str, shown: tuple[str, ...] = (), meta: tuple[str, ...] = (),
                 dtypes: tuple[str, bool] | None = None):
    """A gather op whose node is called ``name`` (e.g. ``UpsampleNearest2DBackward0``), differentiated by a
    scatter-add op named as PyTorch's backward node (``...BackwardBackward0``), itself differentiated by the
    gather; ``dtypes`` = (PyTorch's kernel name, uint8 accepted) for :func:`dtype_checked`. (Whether the backward op
    lays its result out contiguously or as its gradient suggests, result_layouts.py says by its name.)"""
    base = gather_kernel if dtypes is None else dtype_checked(gather_kernel, *dtypes)
    tail, kernel, rules = shown_args(base, "index_maps", shown)
    _, scatter, scatter_rules = shown_args(scatter_kernel, "index_maps", shown)
    scatter_rules = {"attrs": ("index_maps", "input_size") + scatter_rules["attrs"][1:],
                     "hidden": ("index_maps", "input_size")}  # (input_size: the kernel's, not shown by PyTorch)

    def vjps(gather_op, scatter_op):
        def gather_vjp(ctx, g):
            return scatter_op(g, ctx.attrs[0], ctx.input_shapes[0], *ctx.attrs[1:])

        def scatter_vjp(ctx, gg):
            return gather_op(gg, ctx.attrs[0], *ctx.attrs[2:])

        return gather_vjp, scatter_vjp

    op = _op_name(name)
    return _adjoint_pair(
        name,
        (f"{op}(Tensor self, Any index_maps{tail}) -> Tensor", kernel, {"meta": meta, **rules}),
        (f"{op}_backward(Tensor grad_output, Any index_maps, int[] input_size{tail}) -> Tensor", scatter,
         scatter_rules),
        vjps,
    )


# ---- separable linear maps ---------------------------------------------------------------------------------


def apply_matrices(x, mats):
    if isinstance(mats, ResamplePlan):
        if x.dtype.kind == "f":  # (PyTorch's float kernels, rounding for rounding)
            return mats.apply(x)
        mats = plan_matrices(mats)
    k = len(mats)
    if x.dtype == np.uint8:
        # PyTorch's uint8 image path: one pass per axis, the last (horizontal) one first, each pass rounded back
        # to [0, 255] before the next
        out = x
        for i in reversed(range(k)):
            axis = x.ndim - k + i
            passed = np.tensordot(out.astype(np.float64), mats[i], axes=([axis], [1]))
            out = np.moveaxis(np.clip(np.floor(passed + 0.5), 0, 255).astype(np.uint8), -1, axis)
        return np.ascontiguousarray(out)
    out = x
    for i, m in enumerate(mats):
        axis = x.ndim - k + i
        out = np.moveaxis(np.tensordot(out, m.astype(x.dtype, copy=False), axes=([axis], [1])), -1, axis)
    return np.ascontiguousarray(out)


def transposed(mats) -> tuple | ResamplePlan:
    """The adjoint map: each matrix transposed (contiguous), or the plan's adjoint."""
    if isinstance(mats, ResamplePlan):
        return mats.transposed()
    return tuple(np.ascontiguousarray(m.T) for m in mats)


def named_linear(name: str, shown: tuple[str, ...] = (), meta: tuple[str, ...] = (),
                 dtypes: tuple[str, bool] | None = None):
    """A separable linear map whose node is called ``name`` (e.g. ``UpsampleBilinear2DBackward0``), differentiated
    by its adjoint, an op named as PyTorch's backward node (``...BackwardBackward0``), itself differentiated by the
    map; ``dtypes`` as for :func:`named_gather`."""
    base = apply_matrices if dtypes is None else dtype_checked(apply_matrices, *dtypes)
    tail, kernel, rules = shown_args(base, "matrices", shown)
    _, adjoint_kernel, adjoint_rules = shown_args(apply_matrices, "matrices", shown)

    def vjps(map_op, adjoint_op):
        def map_vjp(ctx, g):
            return adjoint_op(g, transposed(ctx.attrs[0]), *ctx.attrs[1:])

        def adjoint_vjp(ctx, gg):
            return map_op(gg, transposed(ctx.attrs[0]), *ctx.attrs[1:])

        return map_vjp, adjoint_vjp

    op = _op_name(name)
    return _adjoint_pair(
        name,
        (f"{op}(Tensor self, Any matrices{tail}) -> Tensor", kernel, {"meta": meta, **rules}),
        (f"{op}_backward(Tensor grad_output, Any matrices{tail}) -> Tensor", adjoint_kernel, adjoint_rules),
        vjps,
    )


# ---- the maps ----------------------------------------------------------------------------------------------


def pad_index_map(size: int, left: int, right: int, mode: str) -> np.ndarray:
    src = np.arange(-left, size + right)
    if mode == "reflect":
        period = 2 * (size - 1) if size > 1 else 1
        src = np.abs(src) % period
        return np.where(src >= size, period - src, src)
    if mode == "replicate":
        return np.clip(src, 0, size - 1)
    return src % size  # circular (misc.pad: where no graph is recorded and no pad is negative)


def nearest_index_map(in_size: int, out_size: int, scale: float | None, exact: bool = False,
                      size_shortcuts: bool = False) -> np.ndarray:
    """PyTorch's nearest source index, computed in float32 like its kernel. With ``size_shortcuts`` (its 2-d
    nearest kernel), an axis that keeps its size maps each index to itself and one that exactly doubles to half
    of it, whatever the scale factor says (``interpolate(scale_factor=1.3)`` of a width 3 copies it)."""
    if size_shortcuts and out_size in (in_size, 2 * in_size):
        return np.arange(out_size, dtype=np.int64) >> (out_size != in_size)
    s = np.float32(1.0 / scale) if scale else np.float32(in_size / out_size)
    dst = np.arange(out_size, dtype=np.float32)
    src = np.floor((dst + np.float32(0.5)) * s) if exact else np.floor(dst * s)
    return np.minimum(src.astype(np.int64), in_size - 1)


def linear_matrix(in_size: int, out_size: int, scale: float | None, align_corners: bool) -> np.ndarray:
    """(out, in) weights of 1-d linear resampling (PyTorch's area_pixel_compute_source_index)."""
    dst = np.arange(out_size, dtype=np.float64)
    if align_corners:
        ratio = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
        src = dst * ratio
    else:
        ratio = 1.0 / scale if scale else in_size / out_size
        src = np.maximum((dst + 0.5) * ratio - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    i1 = np.minimum(i0 + 1, in_size - 1)
    lam = src - i0
    m = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    np.add.at(m, (rows, i0), 1.0 - lam)
    np.add.at(m, (rows, i1), lam)
    return m


_CUBIC_A = -0.75  # PyTorch's cubic convolution coefficient


def cubic_matrix(in_size: int, out_size: int, scale: float | None, align_corners: bool) -> np.ndarray:
    """(out, in) weights of 1-d bicubic resampling as PyTorch's upsample_bicubic2d: the source coordinate not
    clamped, four taps around its floor (indices clamped to the input), Keys' cubic convolution with A = -0.75."""
    dst = np.arange(out_size, dtype=np.float64)
    if align_corners:
        src = dst * ((in_size - 1) / (out_size - 1) if out_size > 1 else 0.0)
    else:
        src = (dst + 0.5) * (1.0 / scale if scale else in_size / out_size) - 0.5
    base = np.floor(src)
    t = src - base
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    m = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    for k, w in enumerate(weights):
        np.add.at(m, (rows, np.clip(base.astype(np.int64) - 1 + k, 0, in_size - 1)), w)
    return m


def plan_matrices(plan: ResamplePlan) -> tuple:
    """The dense (out, in) matrices of ``plan`` (transposed for its adjoint): the uint8 image path's weights."""
    make = cubic_matrix if plan.mode == "cubic" else linear_matrix
    mats = tuple(make(n, o, s, plan.align_corners)
                 for n, o, s in zip(plan.in_sizes, plan.out_sizes, plan.scales))
    return transposed(mats) if plan.adjoint else mats


def adaptive_avg_matrix(in_size: int, out_size: int) -> np.ndarray:
    """(out, in) weights of adaptive average pooling: window [floor(i*in/out), ceil((i+1)*in/out))."""
    m = np.zeros((out_size, in_size))
    for i in range(out_size):
        start = (i * in_size) // out_size
        end = -((-(i + 1) * in_size) // out_size)
        m[i, start:end] = 1.0 / (end - start)
    return m
