"""Shape manipulation, indexing, scatter/gather and the *_scatter operators (view inverses)."""

from __future__ import annotations

import numpy as np

from .core import C128, FLOATS_INT, Arr, Maker, OpInfo, SampleInput, is_complex, is_inexact

# complex128 only: moving complex values around adds nothing to check in complex64
ANY_DTYPES = FLOATS_INT + ("bool",) + C128
FI_C = FLOATS_INT + C128
# torch computes these for complex input but refuses to differentiate them: complex64 (forward, out=, in-place)
FI_C64 = FLOATS_INT + ("complex64",)


def _scalar(m: Maker, value: float = 2.5):
    """A Python scalar of the run's kind (a float scalar would promote an integer tensor)."""
    if m.dtype == "bool":
        return True
    if is_complex(m.dtype):
        return complex(value, -0.5)
    return value if is_inexact(m.dtype) else int(value)


# ------------------------------------------------------------------------------------------ joining


def _cat_samples(m: Maker):
    yield SampleInput("dim0", ([m(2, 3), m(3, 3)],))
    yield SampleInput("noncontig_dim_neg", ([m(2, 3, layout="T"), m(2, 1), m(2, 2, layout="strided")],), {"dim": -1})
    other = "float64" if m.dtype == "float32" else "float32"
    yield SampleInput("mixed_dtypes", ([m(2, 3), m(1, 3, dtype=other)], 0))


def _stack_samples(m: Maker):
    yield SampleInput("dim0", ([m(2, 3), m(2, 3)],))
    yield SampleInput("noncontig_dim_neg", ([m(2, 3, layout="T"), m(2, 3, layout="strided"), m(2, 3)],), {"dim": -1})
    yield SampleInput("dim1", ([m(3), m(3)], 1))


def _hstack_samples(m: Maker):
    yield SampleInput("2d", ([m(2, 3), m(2, 1)],))
    yield SampleInput("noncontig_1d", ([m(3, layout="strided"), m(2)],))
    yield SampleInput("noncontig_T", ([m(3, 2, layout="T"), m(3, 2)],))


def _vstack_samples(m: Maker):
    yield SampleInput("2d", ([m(2, 3), m(1, 3)],))
    yield SampleInput("noncontig_1d", ([m(3, layout="strided"), m(3)],))
    yield SampleInput("noncontig_T", ([m(2, 3, layout="T"), m(2, 3)],))


# ------------------------------------------------------------------------------------------ reshaping copies


def _flatten_samples(m: Maker):
    yield SampleInput("all", (m(2, 3, 4),))
    yield SampleInput("noncontig_start1", (m(2, 3, 4, layout="T"),), {"start_dim": 1})
    yield SampleInput("strided_0_1", (m(2, 3, 4, layout="strided"), 0, 1))


def _unflatten_samples(m: Maker):
    yield SampleInput("dim1", (m(2, 12), 1, (3, 4)))
    yield SampleInput("noncontig_infer", (m(6, 4, layout="T"), 0, (2, -1)))


def _repeat_samples(m: Maker):
    yield SampleInput("2_1_3", (m(2, 3), 2, 1, 3))
    yield SampleInput("noncontig_tuple", (m(3, 2, layout="T"), (1, 2)))


def _tile_samples(m: Maker):
    yield SampleInput("short_dims", (m(2, 3), (2,)))
    yield SampleInput("noncontig_long_dims", (m(3, 2, layout="T"), (2, 1, 2)))


def _repeat_interleave_samples(m: Maker):
    yield SampleInput("flat_int", (m(2, 3), 2))
    yield SampleInput("noncontig_tensor_repeats", (m(2, 3, layout="T"), Arr(np.array([1, 0, 2], dtype=np.int64))),
                      {"dim": 1})
    yield SampleInput("dim0", (m(2, 3, layout="strided"), 3), {"dim": 0})


def _flip_samples(m: Maker):
    yield SampleInput("dims_0_2", (m(2, 3, 4), (0, 2)))
    yield SampleInput("noncontig_list", (m(4, 3, layout="T"), [1]))


def _roll_samples(m: Maker):
    yield SampleInput("flat", (m(3, 4), 5))
    yield SampleInput("noncontig_two_dims", (m(4, 3, layout="T"), (1, -2), (0, 1)))
    yield SampleInput("strided_neg", (m(2, 5, layout="strided"), -1, 1))


def _rot90_samples(m: Maker):
    yield SampleInput("default", (m(3, 4),))
    yield SampleInput("noncontig_k2", (m(4, 3, layout="T"), 2, [0, 1]))
    yield SampleInput("k_neg_3d", (m(2, 3, 4, layout="strided"), -1, [2, 0]))


def _movedim_samples(m: Maker):
    yield SampleInput("int", (m(2, 3, 4), 0, 2))
    yield SampleInput("noncontig_tuple", (m(2, 4, 3, layout="T"), (0, 1), (1, 0)))


# ------------------------------------------------------------------------------------------ gather / scatter


def _gather_samples(m: Maker):
    yield SampleInput("dim1", (m(3, 4), 1, m.index((3, 2), 4)))
    yield SampleInput("noncontig_dim0", (m(4, 3, layout="T"), 0, m.index((2, 3), 4)))
    yield SampleInput("index_smaller", (m(3, 5, layout="strided"), -1, m.index((2, 2), 5)))


def _scatter_samples(m: Maker):
    yield SampleInput("src", (m(3, 5), 0, m.scatter_index((2, 5), 0, 3), m(2, 5)))
    # src has the index's shape: torch's scatter backward returns grad.gather(dim, index) for src
    yield SampleInput("noncontig_smaller_index", (m(5, 3, layout="T"), 1, m.scatter_index((4, 2), 1, 3),
                                                  m(4, 2, layout="strided")))
    yield SampleInput("value", (m(3, 4), 1, m.scatter_index((3, 2), 1, 4), _scalar(m)))


def _scatter_add_samples(m: Maker):
    yield SampleInput("dups", (m(3, 5), 0, m.index((4, 5), 3), m(4, 5)))
    yield SampleInput("noncontig_smaller_index", (m(5, 3, layout="T"), 1, m.index((4, 2), 3), m(4, 2, layout="strided")))


def _scatter_reduce_samples(reduce: str):
    def gen(m: Maker):
        kw = dict(low=0.5, high=2.0) if reduce == "prod" and is_inexact(m.dtype) else {}
        yield SampleInput("include_self", (m(3, 5, **kw), 0, m.index((4, 5), 3), m(4, 5, **kw), reduce))
        yield SampleInput("noncontig_exclude_self",
                          (m(5, 3, layout="T", **kw), 1, m.index((4, 2), 3), m(4, 2, layout="strided", **kw), reduce),
                          {"include_self": False})
    return gen


def _index_select_samples(m: Maker):
    yield SampleInput("dim0_dups", (m(3, 4), 0, Arr(np.array([2, 0, 2], dtype=np.int64))))
    yield SampleInput("noncontig_dim1", (m(4, 3, layout="T"), 1, m.index((4,), 3, layout="strided")))


def _index_add_samples(m: Maker):
    yield SampleInput("dim0_dups", (m(3, 4), 0, m.index((5,), 3), m(5, 4)))
    # (a real alpha in complex runs: torch 2.13's backward multiplies by alpha where the gradient needs
    # conj(alpha), which its own gradcheck rejects; tracegrad's conj(alpha) is tested in
    # tests/ops/test_complex_deviations_vs_torch.py)
    alpha = 2.0 if is_complex(m.dtype) else _scalar(m, 2.0)
    yield SampleInput("noncontig_alpha", (m(4, 3, layout="T"), 1, m.index((2,), 3), m(4, 2, layout="strided")),
                      {"alpha": alpha})


def _index_copy_samples(m: Maker):
    yield SampleInput("dim0", (m(4, 3), 0, m.perm_index(4, 2), m(2, 3)))
    yield SampleInput("noncontig_dim1", (m(4, 3, layout="T"), 1, m.perm_index(3, 3), m(4, 3, layout="strided")))


def _index_fill_samples(m: Maker):
    yield SampleInput("scalar", (m(3, 4), 1, Arr(np.array([0, 2], dtype=np.int64)), _scalar(m)))
    yield SampleInput("noncontig_0d_tensor_value", (m(4, 3, layout="T"), 0, m.index((3,), 4), m()))


def _index_put_samples(m: Maker):
    rows, cols = np.array([0, 2, 1]), np.array([1, 1, 3])
    yield SampleInput("pairs", (m(3, 4), (Arr(rows), Arr(cols)), m(3)))
    yield SampleInput("noncontig_accumulate_dups",
                      (m(4, 3, layout="T"), (m.index((5,), 4),), m(5, 3, layout="strided")), {"accumulate": True})
    yield SampleInput("bool_mask_bcast_values", (m(3, 4), (m.mask(3, 4),), m()))


def _masked_fill_samples(m: Maker):
    yield SampleInput("bcast_mask", (m(3, 4), m.mask(4), _scalar(m)))
    yield SampleInput("noncontig_0d_value", (m(4, 3, layout="T"), m.mask(4, 3, layout="T"), m()))


def _masked_scatter_samples(m: Maker):
    yield SampleInput("same_shape", (m(3, 4), m.mask(3, 4), m(3, 4)))
    yield SampleInput("noncontig_bcast_mask", (m(4, 3, layout="T"), m.mask(3), m(4, 3, layout="strided")))


def _take_samples(m: Maker):
    yield SampleInput("2d_index", (m(3, 4), m.index((2, 3), 12)))
    yield SampleInput("noncontig", (m(4, 3, layout="T"), m.index((5,), 12, layout="strided")))


def _take_along_dim_samples(m: Maker):
    yield SampleInput("dim1", (m(3, 4), m.index((3, 2), 4)), {"dim": 1})
    yield SampleInput("noncontig_bcast", (m(4, 3, layout="T"), m.index((1, 3), 4), 0))
    yield SampleInput("flat", (m(3, 4, layout="strided"), m.index((5,), 12)))


def _narrow_copy_samples(m: Maker):
    yield SampleInput("dim1", (m(3, 4), 1, 1, 2))
    yield SampleInput("noncontig_dim0", (m(4, 3, layout="T"), 0, 0, 2))


# ------------------------------------------------------------------------------------------ *_scatter


def _select_scatter_samples(m: Maker):
    yield SampleInput("dim0", (m(3, 4), m(4), 0, 1))
    yield SampleInput("noncontig_dim1_neg", (m(4, 3, layout="T"), m(4, layout="strided"), 1, -1))


def _slice_scatter_samples(m: Maker):
    yield SampleInput("dim0", (m(4, 5), m(2, 5)), {"dim": 0, "start": 1, "end": 3})
    yield SampleInput("noncontig_step2", (m(5, 4, layout="T"), m(5, 2, layout="strided")),
                      {"dim": 1, "start": 0, "end": 4, "step": 2})


def _diagonal_scatter_samples(m: Maker):
    yield SampleInput("main", (m(3, 4), m(3)))
    yield SampleInput("noncontig_offset_dims", (m(2, 4, 3, layout="T"), m(2, 2, layout="strided")),
                      {"offset": 1, "dim1": 1, "dim2": 2})


def _as_strided_scatter_samples(m: Maker):
    # only the source is non-contiguous: size/stride address the storage of a contiguous input
    yield SampleInput("block", (m(3, 4), m(2, 2), (2, 2), (4, 1)), {"storage_offset": 1})
    yield SampleInput("noncontig_src_strided_rows", (m(4, 4), m(2, 3, layout="T"), (2, 3), (8, 1)))


def _op(name, gen, dtypes=FLOATS_INT, method=True, **kw) -> OpInfo:
    aliases = kw.pop("aliases", (f"Tensor.{name}",) if method else ())
    return OpInfo(name, gen, dtypes=dtypes, aliases=aliases, **kw)


SHAPE_OPS = [
    _op("cat", _cat_samples, ANY_DTYPES, method=False, supports_out=True, aliases=("concat", "concatenate")),
    _op("stack", _stack_samples, ANY_DTYPES, method=False, supports_out=True),
    _op("hstack", _hstack_samples, FI_C, method=False, supports_out=True),
    _op("vstack", _vstack_samples, FI_C, method=False, supports_out=True, aliases=("row_stack",)),
    _op("flatten", _flatten_samples, ANY_DTYPES),
    _op("unflatten", _unflatten_samples, FI_C),
    _op("Tensor.repeat", _repeat_samples, ANY_DTYPES, method=False),
    _op("tile", _tile_samples, FI_C),
    _op("repeat_interleave", _repeat_interleave_samples, FI_C),
    _op("flip", _flip_samples, ANY_DTYPES),
    _op("roll", _roll_samples, FI_C),
    _op("rot90", _rot90_samples, FI_C),
    _op("movedim", _movedim_samples, FI_C, aliases=("Tensor.movedim", "moveaxis"), is_view=True),
    _op("gather", _gather_samples, FI_C, supports_out=True),
    _op("scatter", _scatter_samples, FI_C, supports_out=True, inplace="Tensor.scatter_",
        domain="indices distinct along dim (duplicates are nondeterministic)"),
    _op("scatter_add", _scatter_add_samples, FI_C, supports_out=True, inplace="Tensor.scatter_add_"),
    *[_op("scatter_reduce", _scatter_reduce_samples(r), FI_C64 if r in ("sum", "prod", "mean") else FLOATS_INT,
          variant=r, supports_out=True, inplace="Tensor.scatter_reduce_")
      for r in ("sum", "prod", "mean", "amax", "amin")],
    _op("index_select", _index_select_samples, FI_C, supports_out=True),
    _op("index_add", _index_add_samples, FI_C, supports_out=True, inplace="Tensor.index_add_"),
    _op("index_copy", _index_copy_samples, FI_C, supports_out=True, inplace="Tensor.index_copy_",
        domain="indices distinct"),
    _op("index_fill", _index_fill_samples, FI_C, inplace="Tensor.index_fill_"),
    _op("index_put", _index_put_samples, FI_C, inplace="Tensor.index_put_",
        domain="indices distinct unless accumulate=True"),
    _op("Tensor.masked_fill", _masked_fill_samples, ANY_DTYPES, aliases=("masked_fill",),
        inplace="Tensor.masked_fill_"),
    _op("masked_scatter", _masked_scatter_samples, FI_C, inplace="Tensor.masked_scatter_"),
    _op("take", _take_samples, FI_C, supports_out=True),
    _op("take_along_dim", _take_along_dim_samples, FI_C, supports_out=True),
    _op("narrow_copy", _narrow_copy_samples, FI_C, supports_out=True),
    _op("select_scatter", _select_scatter_samples, FI_C64, method=False),
    _op("slice_scatter", _slice_scatter_samples, FI_C64, method=False, supports_out=True),
    _op("diagonal_scatter", _diagonal_scatter_samples, FI_C, method=False),
    _op("as_strided_scatter", _as_strided_scatter_samples, FI_C, method=False, nondiff_args=frozenset({0}),
        notes="torch 2.13's gradient w.r.t. input is wrong (it keeps the overwritten block and zeroes the "
              "rest), so only src is differentiated here; test input grads by hand against finite differences"),
]

OPS = SHAPE_OPS
