"""View operators: outputs share storage with their input (``is_view`` entries).

``reshape`` is a view only when the strides allow it, so it is not marked ``is_view``.
"""

from __future__ import annotations

from .core import C128, FLOATS_INT, Maker, OpInfo, SampleInput

VIEW_DTYPES = FLOATS_INT + ("bool",) + C128


def _view_samples(m: Maker):
    yield SampleInput("tuple_shape", (m(3, 4), (2, 6)))
    # a strided slice of the last dim can still be viewed when that dim is only split, not merged
    yield SampleInput("noncontig_split_last", (m(3, 4, layout="strided"), 3, 2, 2))
    yield SampleInput("infer", (m(3, 4), -1))


def _reshape_samples(m: Maker):
    yield SampleInput("tuple_shape", (m(3, 4), (2, 6)))
    yield SampleInput("noncontig_flat", (m(4, 3, layout="T"), (-1,)))
    yield SampleInput("strided_3d", (m(3, 4, layout="strided"), (2, 3, 2)))


def _transpose_samples(m: Maker):
    yield SampleInput("0_2", (m(2, 3, 4), 0, 2))
    yield SampleInput("noncontig_neg", (m(2, 4, 3, layout="T"), -1, -2))


def _permute_samples(m: Maker):
    yield SampleInput("3d", (m(2, 3, 4), (2, 0, 1)))
    yield SampleInput("noncontig_2d", (m(4, 3, layout="T"), (1, 0)))


def _t_samples(m: Maker):
    yield SampleInput("2d", (m(3, 4),))
    yield SampleInput("noncontig_2d", (m(4, 3, layout="T"),))
    yield SampleInput("1d_strided", (m(3, layout="strided"),))


def _squeeze_samples(m: Maker):
    yield SampleInput("all", (m(3, 1, 4, 1),))
    yield SampleInput("noncontig_dim", (m(1, 3, 1, 4, layout="strided"), 2))
    yield SampleInput("dims_tuple_noop_dim", (m(3, 1, 4, 1),), {"dim": (1, 2, 3)})


def _unsqueeze_samples(m: Maker):
    yield SampleInput("dim0", (m(3, 4), 0))
    yield SampleInput("noncontig_last", (m(4, 3, layout="T"), -1))
    yield SampleInput("0d", (m(), 0))


def _expand_samples(m: Maker):
    yield SampleInput("sizes", (m(3, 1), 3, 4))
    yield SampleInput("noncontig_new_dims", (m(1, 3, layout="strided"), (2, 4, -1)))
    yield SampleInput("0d", (m(), (2, 3)))


def _select_samples(m: Maker):
    yield SampleInput("dim0", (m(3, 4), 0, 1))
    yield SampleInput("noncontig_dim1_neg", (m(4, 3, layout="T"), 1, -1))


def _narrow_samples(m: Maker):
    yield SampleInput("dim1", (m(3, 4), 1, 1, 2))
    yield SampleInput("noncontig_dim0", (m(4, 3, layout="T"), 0, 1, 3))


def _diagonal_samples(m: Maker):
    yield SampleInput("main", (m(3, 4),))
    yield SampleInput("noncontig_offset", (m(4, 3, layout="T"),), {"offset": 1})
    yield SampleInput("3d_dims", (m(2, 3, 4, layout="strided"),), {"offset": -1, "dim1": 1, "dim2": 2})


def _unbind_samples(m: Maker):
    yield SampleInput("dim0", (m(3, 4),))
    yield SampleInput("noncontig_dim1", (m(4, 3, layout="T"), 1))


def _split_samples(m: Maker):
    yield SampleInput("int_uneven", (m(5, 4), 2))
    yield SampleInput("noncontig_sizes_dim1", (m(4, 5, layout="T"), [1, 3, 1]), {"dim": 1})


def _chunk_samples(m: Maker):
    yield SampleInput("two", (m(5, 4), 2))
    yield SampleInput("noncontig_dim1", (m(4, 5, layout="T"), 3, 1))


def _unfold_samples(m: Maker):
    yield SampleInput("dim1", (m(3, 6), 1, 2, 2))
    yield SampleInput("noncontig_overlap", (m(6, 3, layout="T"), 0, 3, 1))
    yield SampleInput("strided_1d", (m(7, layout="strided"), 0, 3, 2))


def _view(name, gen, method=True, is_view=True, **kw) -> OpInfo:
    aliases = kw.pop("aliases", (f"Tensor.{name}",) if method else ())
    return OpInfo(name, gen, dtypes=VIEW_DTYPES, aliases=aliases, is_view=is_view, **kw)


VIEW_OPS = [
    _view("Tensor.view", _view_samples, method=False),
    _view("reshape", _reshape_samples, is_view=False),
    _view("transpose", _transpose_samples, aliases=("Tensor.transpose", "swapaxes")),
    _view("permute", _permute_samples),
    _view("t", _t_samples),
    _view("squeeze", _squeeze_samples),
    _view("unsqueeze", _unsqueeze_samples),
    _view("Tensor.expand", _expand_samples, method=False),
    _view("select", _select_samples),
    _view("narrow", _narrow_samples),
    _view("diagonal", _diagonal_samples),
    _view("unbind", _unbind_samples),
    _view("split", _split_samples),
    _view("chunk", _chunk_samples),
    _view("Tensor.unfold", _unfold_samples, method=False),
]

OPS = VIEW_OPS
