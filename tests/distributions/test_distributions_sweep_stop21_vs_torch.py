"""What the twenty-first stop's sweep of tracegrad.distributions against torch.distributions found: the module
paths of the classes (their reprs and the "does not implement mode" messages), the top-level namespace,
torch.Size's reading of its items (a float sample shape, LKJCholesky's dim), the lower-Cholesky check of a value of
under two dims, expand's geometry (numel overflow, the strides of new leading dims), and the version check of
index tensors saved by indexing (Wishart's rsample writes into its mask after indexing with it)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch

import tracegrad as tg

TD, GD = torch.distributions, tg.distributions


def _outcome(fn, lib):
    """(value, None) or (None, (error type name, message with the package named torch))."""
    try:
        return fn(lib), None
    except Exception as exc:  # noqa: BLE001 - every error is compared with torch's
        return None, (type(exc).__name__, str(exc).replace("tracegrad", "torch"))


def _same_outcome(fn):
    ours, ref = _outcome(fn, tg), _outcome(fn, torch)
    assert ours[1] == ref[1]
    return ours[0], ref[0]


# ---- the classes' module paths: reprs and the mode message ----------------------------------------------------

# distributions without a mode in torch, built the same way in both libraries
_NO_MODE = {
    "ContinuousBernoulli": lambda d, L: d.ContinuousBernoulli(L.tensor([0.3, 0.6])),
    "LogisticNormal": lambda d, L: d.LogisticNormal(L.zeros(2), 1.0),
    "RelaxedBernoulli": lambda d, L: d.RelaxedBernoulli(0.5, L.tensor([0.3])),
    "RelaxedOneHotCategorical": lambda d, L: d.RelaxedOneHotCategorical(0.5, L.tensor([0.3, 0.7])),
    "Multinomial": lambda d, L: d.Multinomial(3, L.tensor([0.3, 0.7])),
    "LKJCholesky": lambda d, L: d.LKJCholesky(3, 0.5),
    "MixtureSameFamily": lambda d, L: d.MixtureSameFamily(d.Categorical(L.ones(2)), d.Normal(L.zeros(2), 1.0)),
    "TransformedDistribution": lambda d, L: d.TransformedDistribution(d.Normal(0.0, 1.0), d.transforms.ExpTransform()),
}


@pytest.mark.parametrize("name", sorted(_NO_MODE))
def test_mode_not_implemented_names_torch_module_path(name):
    _same_outcome(lambda L: _NO_MODE[name](L.distributions, L).mode)


@pytest.mark.parametrize("name", sorted(n for n in TD.__all__ if isinstance(getattr(TD, n), type)))
def test_class_module_path_matches_torch(name):
    ours, ref = getattr(GD, name), getattr(TD, name)
    assert ours.__module__.replace("tracegrad", "torch") == ref.__module__
    assert repr(ours).replace("tracegrad", "torch") == repr(ref)


def test_distribution_pickles_through_its_module_path():
    d = GD.Normal(tg.tensor([0.5]), tg.tensor([2.0]))
    back = pickle.loads(pickle.dumps(d))
    assert type(back) is GD.Normal and back.loc.tolist() == [0.5]


def test_top_level_namespace_matches_torch():
    public = lambda m: {n for n in dir(m) if not n.startswith("_")}  # noqa: E731
    # the grouped modules and the alias machinery are tracegrad's own
    ours = public(GD) - {"continuous", "discrete", "mixture", "multivariate", "sys", "ModuleType"}
    assert ours == public(TD)
    for module in ("", ".constraints", ".transforms"):  # (in PyTorch's order too)
        assert eval(f"GD{module}.__all__") == eval(f"TD{module}.__all__")  # noqa: S307
    assert GD.relaxed_bernoulli.LogitRelaxedBernoulli.__name__ == "LogitRelaxedBernoulli"
    assert GD.relaxed_categorical.ExpRelaxedCategorical.__name__ == "ExpRelaxedCategorical"


def test_generic_classes_subscript_as_torch():
    assert repr(GD.Independent[GD.Normal]).replace("tracegrad", "torch") == repr(TD.Independent[TD.Normal])
    assert GD.utils.lazy_property[int, float].__args__ == TD.utils.lazy_property[int, float].__args__


# ---- torch.Size reads its items as torch does ------------------------------------------------------------------

_SIZE_ITEMS = {
    "float": lambda L: (2.5,),
    "numpy_float": lambda L: (np.float64(2.0),),
    "str": lambda L: ("a",),
    "none": lambda L: (3, None),
    "complex": lambda L: (3 + 0j,),
    "float_tensor": lambda L: (L.tensor(3.0),),
    "long_tensor_of_two": lambda L: (L.tensor([3, 4]),),
    "numpy_bool": lambda L: (np.bool_(True),),
    "bool": lambda L: (True, 2),
    "numpy_int": lambda L: (np.int32(3),),
    "long_tensor": lambda L: (L.tensor([[3]]),),
    "bool_tensor": lambda L: (L.tensor(True),),
}


@pytest.mark.parametrize("case", sorted(_SIZE_ITEMS))
def test_size_reads_items_as_torch(case):
    ours, ref = _same_outcome(lambda L: L.Size(_SIZE_ITEMS[case](L)))
    if ref is not None:
        assert ours == ref and all(type(n) is int for n in ours)


_SIZE_OPERATORS = {
    "plus_list": lambda S: S([2]) + [3],
    "plus_bad_item": lambda S: S([2]) + (2.5,),
    "tuple_plus": lambda S: (3,) + S([2]),
    "times": lambda S: S([2]) * 2,
    "times_left": lambda S: 2 * S([2, 1]),
    "slice": lambda S: S([2, 3])[::-1],
    "reduce": lambda S: S([2, 3]).__reduce__()[1],
}


@pytest.mark.parametrize("case", sorted(_SIZE_OPERATORS))
def test_size_operators_as_torch(case):
    ours, ref = _same_outcome(lambda L: _SIZE_OPERATORS[case](L.Size))
    if ref is not None:
        assert ours == ref and type(ours).__name__ == type(ref).__name__


@pytest.mark.parametrize(
    "expr",
    [
        lambda L: L.distributions.Normal(L.zeros(2), 1.0).sample((2.5,)),
        lambda L: L.distributions.Normal(L.zeros(2), 1.0).rsample((L.tensor(2.0),)),
        lambda L: L.distributions.LKJCholesky(3.5, 0.5),
        lambda L: L.distributions.Normal(0.0, 1.0).sample((-1,)),
        lambda L: L.distributions.Normal(0.0, 1.0).sample((1, -2)),
    ],
)
def test_sample_shapes_refused_as_torch(expr):
    _same_outcome(expr)


# ---- constraints --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["lower_cholesky", "corr_cholesky"])
@pytest.mark.parametrize("value", [[0.5], 0.5])
def test_cholesky_constraints_check_of_a_vector_fails_as_torch(name, value):
    _same_outcome(lambda L: getattr(L.distributions.constraints, name).check(L.tensor(value)))


# ---- expand -----------------------------------------------------------------------------------------------------

_EXPANDS = [
    ((), (-1,)),
    ((), (1, -2)),
    ((), (5, -1, 2)),
    ((1,), (2, -3)),
    ((1,), (-2, 1)),
    ((1, 1), (-2, 2)),
    ((2,), (-1, 3, 2)),
    ((1,), (0, -1, 1)),
    ((1, 1), (2**40, 2**40)),
    ((2,), (2**62, 2)),
    ((2,), (1, -1)),
    ((1,), (1, 1, 3)),
    ((2, 1), (1, 2, 4)),
    ((3,), (1, 2, 3)),
    ((), (1, 1)),
]


@pytest.mark.parametrize(("source", "size"), _EXPANDS)
def test_expand_geometry_and_refusals_match_torch(source, size):
    ours, ref = _same_outcome(lambda L: L.zeros(source).expand(size))
    if ref is not None:
        assert ours.shape == ref.shape and ours.stride() == ref.stride()
        assert ours.is_contiguous() == ref.is_contiguous()


# ---- index tensors saved by indexing are version-checked ----------------------------------------------------------


def _index_then_write(L, index_dtype, write):
    x = L.ones(3, 2, requires_grad=True)
    idx = L.tensor([True, False, True]) if index_dtype == "bool" else L.tensor([0, 2])
    y = x * 1
    if write == "getitem":
        out = y[idx]
    elif write == "getitem_pair":
        out = y[idx, 1]
    else:
        y[idx] = L.full((2, 2), 2.0, requires_grad=True)
        out = y
    idx.zero_()  # (the index changes under the saved node)
    out.sum().backward()
    return x.grad


@pytest.mark.parametrize("index_dtype", ["bool", "long"])
@pytest.mark.parametrize("write", ["getitem", "getitem_pair", "setitem"])
def test_index_written_in_place_before_backward_fails_as_torch(index_dtype, write):
    _same_outcome(lambda L: _index_then_write(L, index_dtype, write))


@pytest.mark.parametrize("index", ["int32", "mask_2d"])
def test_converted_index_written_before_backward_is_named_as_torch(index):
    """tracegrad converts these (int32 to int64, a 2-D mask to its nonzeros); the error names the caller's."""

    def run(L):
        x = L.ones(2, 2, requires_grad=True)
        idx = L.tensor([0, 1], dtype=L.int32) if index == "int32" else L.tensor([[True, False], [False, True]])
        y = x[idx]
        idx.zero_()
        y.sum().backward()
        return x.grad

    _same_outcome(run)


def test_index_left_alone_backward_still_runs():
    def run(L):
        x = L.arange(6.0).reshape(3, 2).requires_grad_()
        idx = L.tensor([True, False, True])
        y = x * 1
        y[idx] = L.full((2, 2), 2.0)
        (y[idx] * y[L.tensor([0, 1])][:, :1]).sum().backward()
        return x.grad

    ours, ref = _same_outcome(run)
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


@pytest.mark.filterwarnings("ignore:Singular sample detected")
@pytest.mark.parametrize("cov", ["covariance_matrix", "precision_matrix"])
def test_wishart_rsample_backward_fails_as_torch(cov):
    """torch's Wishart.rsample rewrites its ``is_singular`` mask after indexing ``sample`` with it: the backward
    refuses (the mask is saved by IndexPutBackward0); tracegrad read the rewritten mask instead."""

    def run(L):
        L.manual_seed(0)
        matrix = L.tensor([[2.0, 0.3], [0.3, 1.0]], requires_grad=True)
        d = L.distributions.Wishart(4.0, **{cov: matrix})
        d.rsample((2,)).sum().backward()  # (a sample shape: the mask then has elements to rewrite)
        return matrix.grad

    _same_outcome(run)
