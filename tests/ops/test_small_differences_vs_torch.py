"""Small tensor-level differences from torch, each against torch itself: the strides of empty tensors
(channels-last, empty_strided, empty_like, an unsqueezed, expanded, repeated or bool-indexed empty one),
``torch.strided`` as a ``torch.layout``, slices whose step or bounds reach past int64's arithmetic, index_put_'s
value shapes and the order of its refusals, a lone ``True`` written through, cummax/cummin of an empty tensor, and
the bits of the NaN that max/min/amax/amin/aminmax return."""

from __future__ import annotations

import contextlib
import copy
import pickle
import warnings

import numpy as np
import pytest
from _lib import raised, tg, torch


def _geometry(t) -> tuple:
    return tuple(t.shape), t.stride(), t.storage_offset()


def _same_geometry(program) -> None:
    assert _geometry(program(tg)) == _geometry(program(torch))


def _same_outcome(program) -> None:
    """The same error, or the same geometry and values."""
    theirs = raised(torch, program)
    assert raised(tg, program) == theirs
    if theirs is None:
        ours, expected = program(tg), program(torch)
        assert _geometry(ours) == _geometry(expected)
        assert ours.tolist() == expected.tolist()


# ---- strides of empty tensors ------------------------------------------------------------------------------------

EMPTY_LAYOUTS = {
    "channels_last": lambda L: L.empty(2, 0, 4, 5, memory_format=L.channels_last),
    "channels_last_batch0": lambda L: L.empty(0, 3, 4, 5, memory_format=L.channels_last),
    "channels_last_3d": lambda L: L.empty(2, 0, 4, 5, 3, memory_format=L.channels_last_3d),
    "empty_strided": lambda L: L.empty_strided((0, 3), (7, 2)),
    "empty_strided_3d": lambda L: L.empty_strided((2, 0, 3, 1), (7, 2, 1, 5)),
    "to_channels_last": lambda L: L.zeros(2, 0, 4, 5).to(memory_format=L.channels_last),
}
ON_EMPTY = {
    "itself": lambda t: t,
    "empty_like": lambda t: _like(t, "empty_like"),
    "zeros_like": lambda t: _like(t, "zeros_like"),
    "randn_like": lambda t: _like(t, "randn_like"),
    "clone": lambda t: t.clone(),
}


def _like(t, name: str):
    lib = tg if isinstance(t, tg.Tensor) else torch
    return getattr(lib, name)(t)


@pytest.mark.parametrize("make", EMPTY_LAYOUTS.values(), ids=EMPTY_LAYOUTS.keys())
@pytest.mark.parametrize("then", ON_EMPTY.values(), ids=ON_EMPTY.keys())
def test_empty_tensor_strides(make, then):
    _same_geometry(lambda L: then(make(L)))


@pytest.mark.parametrize("program", [
    lambda L: L.zeros(1)[L.tensor(False)],
    lambda L: L.zeros(2, 1)[L.tensor([False, False])],
    lambda L: L.zeros(0)[None],
    lambda L: L.zeros(0).unsqueeze(0),
    lambda L: L.zeros(0)[None, None],
    lambda L: L.zeros(0).expand(2, 0),
    lambda L: L.zeros(4, 3)[:, 3:].repeat(2, 1, 1),
], ids=["bool0d_false", "mask_all_false", "none_of_empty", "unsqueeze_empty", "two_nones_of_empty", "expand_empty",
        "repeat_of_empty_slice"])
def test_empty_results_of_indexing_and_views(program):
    _same_geometry(program)


# ---- torch.strided is a torch.layout ---------------------------------------------------------------------------


def test_strided_is_a_layout_object():
    ours = tg.strided
    assert (repr(ours), str(ours), type(ours).__name__) == (repr(torch.strided), str(torch.strided), "layout")
    assert tg.zeros(2).layout is ours and tg.FloatTensor.layout is ours
    assert ours == tg.strided and ours != tg.sparse_coo and ours != "torch.strided"
    assert hash(ours) == hash(tg.strided) and isinstance(tg.sparse_coo, tg.layout)
    assert pickle.loads(pickle.dumps(ours)) is ours and copy.deepcopy([ours])[0] is ours
    assert raised(tg, lambda L: L.layout()) == raised(torch, lambda L: L.layout())


@pytest.mark.parametrize("program", [
    lambda L: L.zeros(2, layout=L.strided),
    lambda L: L.zeros(2, layout="torch.strided"),
    lambda L: L.zeros(2, layout=1),
    lambda L: L.empty_strided((2,), (1,), layout="torch.strided"),
    lambda L: L.zeros_like(L.zeros(2), layout="torch.strided"),
    lambda L: L.ones(1).new_zeros(2, layout="torch.strided"),
], ids=["layout", "str", "int", "empty_strided_str", "zeros_like_str", "new_zeros_str"])
def test_layout_arguments(program):
    theirs = raised(torch, program)
    assert raised(tg, program) == theirs
    if theirs is None:
        assert program(tg).layout is tg.strided


@pytest.mark.parametrize("program", [
    lambda L: L.zeros(2, layout=L.sparse_coo),
    lambda L: L.empty(2, 2, layout=L.sparse_csr),
    lambda L: L.randn(2, layout=L.sparse_coo),
    lambda L: L.zeros_like(L.ones(2), layout=L.sparse_coo),
    lambda L: L.arange(3, layout=L.sparse_coo),
    lambda L: L.ones(2).new_zeros(2, layout=L.sparse_coo),
], ids=["zeros", "empty_csr", "randn", "zeros_like", "arange", "new_zeros"])
def test_other_layouts_are_refused_not_ignored(program):
    """tracegrad's tensors are all strided: asked for a sparse one, it refuses rather than answering with a
    strided tensor (torch makes the sparse tensor, or has no sparse kernel either: NotImplementedError too)."""
    with contextlib.suppress(NotImplementedError):
        assert program(torch).layout is not torch.strided
    with pytest.raises(NotImplementedError, match="strided tensors only"):
        program(tg)


# ---- slices beyond int64's arithmetic ------------------------------------------------------------------------------

SLICES = {
    "step_2**63_long_dim": lambda L: L.arange(10.0)[::2 ** 63],
    "step_2**64_long_dim": lambda L: L.arange(10.0)[::2 ** 64],
    "step_int64_max_from_1": lambda L: L.arange(10.0)[1::2 ** 63 - 1],
    "step_2**63_short_dim": lambda L: L.arange(3.0)[::2 ** 63],
    "step_2**63_2d_columns": lambda L: L.zeros(2, 3)[:, ::2 ** 63],
    "step_2**63_2d_rows": lambda L: L.zeros(4, 5)[::2 ** 63],
    "step_2**61_negative_stride": lambda L: L.zeros(2, 3, dtype=L.int8)[::2 ** 62],
    "step_2**61_not_a_symint": lambda L: L.zeros(4, 5)[::2 ** 61],
    "step_2**63_beside_an_empty_dim": lambda L: L.zeros(0, 5)[:, ::2 ** 63],
    "step_2**63_of_empty": lambda L: L.zeros(0)[::2 ** 63],
    "step_2**62_empty_other_dim": lambda L: L.zeros(1, 5, 0, 3)[-4:1:10 ** 20],
    "int_beyond_int64_of_0d": lambda L: L.zeros(())[2 ** 63],
}


@pytest.mark.parametrize("program", SLICES.values(), ids=SLICES.keys())
def test_huge_slice_steps(program):
    theirs = raised(torch, program)
    assert raised(tg, program) == theirs
    if theirs is None:
        ours, expected = program(tg), program(torch)
        assert tuple(ours.shape) == tuple(expected.shape) and ours.storage_offset() == expected.storage_offset()


@pytest.mark.parametrize("key", ["::2 ** 63", "::2 ** 64", "1::2 ** 63 - 1"])
def test_huge_step_writes_nothing(key):
    def program(L):
        x = L.arange(10.0)
        exec(f"x[{key}] = -1")  # noqa: S102 - the test's own keys
        return x

    assert program(tg).tolist() == program(torch).tolist()
    assert raised(tg, lambda L: exec(f"L.zeros(2, 3)[{key}] = 1")) == raised(  # noqa: S102
        torch, lambda L: exec(f"L.zeros(2, 3)[{key}] = 1"))  # noqa: S102


def _warnings_of(program, lib) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = raised(lib, program)
    return [(w.category.__name__, str(w.message), w.filename) for w in caught], outcome


@pytest.mark.parametrize("key", ["-2 ** 62 - 1:", ":-2 ** 63", "-2 ** 100:", "::-2 ** 62 - 1", "-2 ** 62:"])
def test_bounds_below_the_least_symint_warn(key):
    def program(L):
        return eval(f"L.arange(10.0)[{key}]")  # noqa: S307 - the test's own keys

    ours, ours_outcome = _warnings_of(program, tg)
    theirs, their_outcome = _warnings_of(program, torch)
    assert (ours, ours_outcome) == (theirs, their_outcome)  # (the warning names the indexing line's file, as torch's)


def test_truncating_warning_on_setitem_and_fast_path_bounds():
    def program(L):
        x = L.arange(10.0)
        x[-2 ** 62 - 1:] = 1
        return x

    ours, _ = _warnings_of(program, tg)
    theirs, _ = _warnings_of(program, torch)
    assert [w[:2] for w in ours] == [w[:2] for w in theirs] and ours[0][2] == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert program(tg).tolist() == program(torch).tolist()


# ---- index_put_ and setitem: value shapes, the order of refusals -----------------------------------------------

MASK = [True, False, True]
PUTS = {
    "int_extra_leading_ones": ([[0, 1]], (1, 1, 4), False),
    "int_extra_leading_ones_accumulate": ([[0, 1]], (1, 1, 4), True),
    "mask_extra_leading_one": (["mask"], (1, 2, 4), False),
    "mask_one_value_many_dims": (["mask"], (1, 1, 1), False),
    "mask_one_value_many_dims_accumulate": (["mask"], (1, 1, 1), True),
    "two_ints": ([[0, 1], [1, 2]], (1, 2), False),
    "2d_index": ([[[0, 1]]], (1, 1, 1, 4), False),
    "2d_index_fits": ([[[0, 1]]], (1, 1, 4), False),
    "empty_index": ([[]], (1, 0, 4), False),
    "other_dtype_wrong_shape": ([[0, 1]], (1, 2, 4), "f64"),
}


def _index_of(L, spec):
    return L.tensor(MASK) if spec == "mask" else L.tensor(spec, dtype=L.int64)


@pytest.mark.parametrize("indices, value_shape, accumulate", PUTS.values(), ids=PUTS.keys())
def test_index_put_value_shapes(indices, value_shape, accumulate):
    def program(L):
        dtype = L.float64 if accumulate == "f64" else L.float32
        value = L.ones(value_shape, dtype=dtype)
        return L.zeros(3, 4).index_put_(tuple(_index_of(L, i) for i in indices), value, accumulate=accumulate is True)

    _same_outcome(program)


SETS = {
    "leading_ones_stripped": ("x[L.tensor([0, 1])] = L.ones(1, 1, 2, 4)", (3, 4)),
    "mask_leading_ones": ("x[L.tensor([True, False, True])] = L.ones(1, 1, 2, 1)", (3, 4)),
    "value_shape_before_bounds": ("x[L.tensor([4, 3]), L.tensor([-2])] = L.ones(0, 1)", (4, 3, 4)),
    "value_shape_before_bounds_2": ("x[L.tensor([-3]), :-2 ** 63] = L.ones(1, 2)", (1, 5, 4, 3)),
    "empty_dim_before_value_shape": ("x[1:-2 ** 63, [2, 4], L.tensor([-2])] = L.ones(0, 0, 3)", (1, 5, 0)),
    "empty_dim_index_message": ("x[L.tensor([[-2, -4]])] = L.ones(2, 1)", (0,)),
    "empty_mask_value_shape_first": ("x[L.zeros(0, dtype=L.bool), [1]] = L.ones(1, 2)", (0, 0, 0, 4)),
    "indices_broadcast_first": ("x[L.tensor(False), [-4, -3]] = L.ones(2)", (0, 4, 1)),
    "apart_indices_result_shape": ("x[L.tensor([True] * 5), None, L.tensor(True)] = L.ones(2, 3, 1)", (5, 5, 1)),
    "apart_lists_result_shape": ("x[[1], -3:3:7, [-2, -2, -4]] = L.ones(2, 1)", (1, 1, 1, 2)),
    "lone_true_copies": ("x[True] = L.ones(2, 0)", ()),
}


@pytest.mark.parametrize("statement, shape", SETS.values(), ids=SETS.keys())
def test_setitem_value_shapes_and_refusals(statement, shape):
    def program(L):
        x = L.arange(float(np.prod(shape))).reshape(shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(statement)  # noqa: S102 - the test's own statements
        return x

    _same_outcome(program)


def test_lone_true_written_as_a_copy():
    def program(L):
        x = L.zeros(3, requires_grad=True).clone()
        x[True] = L.ones(1, 3, requires_grad=True)
        return x.grad_fn.name(), [f.name() for f, _ in x.grad_fn.next_functions if f is not None], x._version

    assert program(tg) == program(torch)


# ---- cummax / cummin of an empty tensor ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("shape, dim", [((0,), 5), ((0,), -5), ((2, 0), 7), ((0, 3), -9), ((2, 0), 1)])
@pytest.mark.parametrize("dtype", ["float32", "complex64", "bool"])
def test_cummax_of_empty_reads_no_dim(name, shape, dim, dtype):
    def program(L):
        values, indices = getattr(L, name)(L.zeros(shape, dtype=getattr(L, dtype)), dim)
        return values.dtype, _geometry(values), indices.dtype, _geometry(indices)

    ours, theirs = program(tg), program(torch)
    assert (str(ours[0]), ours[1], str(ours[2]), ours[3]) == (str(theirs[0]), theirs[1], str(theirs[2]), theirs[3])


def test_cummax_of_empty_backward():
    def program(L):
        x = L.zeros(2, 0, requires_grad=True)
        L.cummax(x, 5).values.sum().backward()
        return tuple(x.grad.shape)

    assert program(tg) == program(torch)


# ---- the NaN of max / min / amax / amin / aminmax ----------------------------------------------------------------

REDUCTIONS = {
    "max": lambda t: t.max(), "min": lambda t: t.min(), "aminmax_min": lambda t: t.aminmax()[0],
    "aminmax_max": lambda t: t.aminmax()[1], "amax": lambda t: t.amax(), "amin": lambda t: t.amin(),
    "amax_dim": lambda t: t.amax(dim=-1), "amin_dim": lambda t: t.amin(dim=-1),
    "aminmax_dim": lambda t: t.aminmax(dim=-1)[1], "aminmax_dim0_min": lambda t: t.aminmax(dim=0)[0],
    "max_dim": lambda t: t.max(dim=-1).values, "expanded_max": lambda t: t.reshape(-1, 1).expand(-1, 2).t().max(),
}


_MANTISSA_BITS = {2: 10, 4: 23, 8: 52}
_UNSIGNED = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def _nan_bits(itemsize: int, rng) -> int:
    """A NaN of either sign, quiet or signalling, with a random payload."""
    width, mantissa = itemsize * 8, _MANTISSA_BITS[itemsize]
    exponent = ((1 << (width - 1 - mantissa)) - 1) << mantissa
    payload = int(rng.integers(1, 1 << min(mantissa - 1, 40)))
    quiet = int(rng.integers(2)) << (mantissa - 1)
    return int(rng.integers(2)) << (width - 1) | exponent | quiet | payload


def _with_nans(dtype: str, shape: tuple, seed: int) -> np.ndarray:
    """Normal numbers with up to three NaNs at random places."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(dtype)
    bits = a.reshape(-1).view(_UNSIGNED[a.itemsize])
    for place in rng.choice(a.size, size=min(3, a.size), replace=False):
        bits[place] = _nan_bits(a.itemsize, rng)
    return a


@pytest.mark.parametrize("name", REDUCTIONS.keys())
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(1,), (2,), (7,), (70,), (3, 5), (4, 17)])
def test_nan_bits_of_extremes(name, dtype, shape):
    reduce = REDUCTIONS[name]
    for seed in range(3):
        a = _with_nans(dtype, shape, seed)
        ours, theirs = reduce(tg.tensor(a)).numpy(), reduce(torch.tensor(a)).numpy()
        assert ours.tobytes() == theirs.tobytes(), (seed, ours, theirs)


@pytest.mark.parametrize("threads", [1, 2])
def test_nan_bits_of_a_full_max_split_over_threads(threads):
    """Above GRAIN_SIZE elements, more than one thread's results are combined into the default NaN."""
    before = (tg.get_num_threads(), torch.get_num_threads())
    tg.set_num_threads(threads)
    torch.set_num_threads(threads)
    try:
        for n in (32768, 32769):
            a = _with_nans("float32", (n,), n)
            for reduce in (lambda t: t.max(), lambda t: t.aminmax()[0], lambda t: t.amin()):
                assert reduce(tg.tensor(a)).numpy().tobytes() == reduce(torch.tensor(a)).numpy().tobytes()
    finally:
        tg.set_num_threads(before[0])
        torch.set_num_threads(before[1])
