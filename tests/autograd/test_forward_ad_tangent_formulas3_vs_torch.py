"""Forward-mode tangents by torch's own formulas (third part): in-place formulas, composite losses, decompositions.

With inputs that require grad a tangent records a graph of its own (walked with its edges, as the OpInfo sweep
walks it). What these tests pin, each against torch 2.13 on the same program:

* an in-place formula reads ``result`` as torch's codegen does, through ``self_p = toNonOptPrimal(self)`` after
  the write (an Identity node): ``exp_``, ``sqrt_``, ``sigmoid_``, ``hypot_``, ``div_``;
* a ``self_t.op(...)`` formula runs in place on ``self``'s tangent (``self_t_raw.op_(...)``: no CloneBackward0,
  no CopyBackwards) for ``masked_fill_``, ``index_fill_``, ``index_copy_``, ``index_put_``, ``put_``,
  ``scatter_`` and ``masked_scatter_``, and out of place (with a zero tangent for ``self``) where ``self`` has none;
* composite losses written as torch's C++: cross_entropy's label smoothing (``masked_fill_``),
  cosine_embedding_loss (``sqrt_``, and ``clamp_min_`` writing into the tangent ``cos - margin`` shares with
  ``cos``: sub.Scalar's formula is ``self_t``), poisson_nll_loss with ``full`` (``loss +=``);
* linalg_inv_ex, cholesky_jvp, linalg_eig_jvp (eigh) and linalg_qr_jvp as FunctionsManual writes them;
* soft_margin_loss's formula passes ``target`` itself to soft_margin_loss_backward, which has no formula: a target
  with a tangent is refused.

Values are bit for bit except where a product or a solve goes through LAPACK/BLAS (1e-12 there); gradients through
the tangent (``autograd.grad`` of a weighted sum of it) too.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, graph_with_edges, raised, tg, torch

_RNG = np.random.default_rng(20261129)


def _tangent_and_grads(lib, fn, values, tangents, dual) -> tuple:
    """(graph of fn's output tangents, their values, gradients of a weighted sum of them with respect to every leaf)
    where the inputs in ``dual`` are duals of leaves requiring grad (the others are plain leaves requiring grad)."""
    fw = lib.autograd.forward_ad
    leaves = [lib.tensor(v, requires_grad=True) for v in values]
    with fw.dual_level():
        args = [fw.make_dual(x, lib.tensor(t)) if i in dual else x for i, (x, t) in enumerate(zip(leaves, tangents))]
        out = fn(lib, *args)
        outs = out if isinstance(out, tuple) else (out,)
        found = [fw.unpack_dual(o).tangent for o in outs]
    found = [t for t in found if t is not None]
    weighted = [(t * lib.tensor(np.resize(np.linspace(-1.5, 2.0, 7), tuple(t.shape)))).sum() for t in found
                if t.requires_grad]
    graphs, values = [graph_with_edges(t.grad_fn) for t in found], [t.detach().numpy() for t in found]
    try:
        grads = lib.autograd.grad(weighted, leaves, allow_unused=True) if weighted else ()
    except RuntimeError as exc:  # (torch's own formulas may write in place what their graph saved)
        return graphs, values, str(exc)
    return graphs, values, [None if g is None else _dense(g) for g in grads]


def _dense(grad) -> np.ndarray:
    """torch's zero tensor (a gradient only zero-tensor terms reached) as the zeros it stands for (+0.)."""
    zero_tensor = getattr(grad, "_is_zerotensor", None)
    if zero_tensor is not None and zero_tensor():
        return np.zeros(tuple(grad.shape))
    return grad.detach().numpy() + 0.0


def _assert_same(ours, theirs, bits: bool) -> None:
    if bits:
        assert_same_bits(ours, theirs)
    else:  # (through LAPACK/BLAS: NumPy's last bits are not MKL's)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def _check(fn, values, dual, bits: bool) -> None:
    tangents = [_RNG.standard_normal(np.shape(v)) for v in values]
    (g1, t1, d1), (g2, t2, d2) = (_tangent_and_grads(lib, fn, values, tangents, dual) for lib in (tg, torch))
    assert g1 == g2
    assert len(t1) == len(t2)
    for ours, theirs in zip(t1, t2):
        _assert_same(ours, theirs, bits)
    if isinstance(d2, str) or isinstance(d1, str):
        assert d1 == d2
        return
    for ours, theirs in zip(d1, d2):
        assert (ours is None) == (theirs is None)
        if theirs is not None:
            _assert_same(ours, theirs, bits)


def _normal(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape)


def _index(lib):
    return lib.tensor([2, 0])


def _mask(lib):
    return lib.tensor([True, False, True, False])


# name -> program of (lib, a, b) with a, b of shape (4,); the in-place ops write into a fresh ``a * 2``
_INPLACE = {
    "exp_": lambda lib, a, b: (a * 2).exp_(),
    "sqrt_": lambda lib, a, b: (a * a).sqrt_(),
    "sigmoid_": lambda lib, a, b: (a * 2).sigmoid_(),
    "hypot_": lambda lib, a, b: (a * 2).hypot_(b),
    "div_": lambda lib, a, b: (a * 2).div_(b),
    "masked_fill_": lambda lib, a, b: (a * 2).masked_fill_(_mask(lib), 0.5),
    "masked_fill_tensor_": lambda lib, a, b: (a * 2).masked_fill_(_mask(lib), b[1] * 3),
    "index_fill_": lambda lib, a, b: (a * 2).index_fill_(0, _index(lib), 0.5),
    "index_fill_tensor_": lambda lib, a, b: (a * 2).index_fill_(0, _index(lib), b[0]),
    "index_copy_": lambda lib, a, b: (a * 2).index_copy_(0, _index(lib), b[:2] * 3),
    "index_put_": lambda lib, a, b: (a * 2).index_put_((_index(lib),), b[:2] * 3),
    "index_put_accumulate_": lambda lib, a, b: (a * 2).index_put_((_index(lib),), b[:2] * 3, accumulate=True),
    "put_": lambda lib, a, b: (a * 2).put_(_index(lib), b[:2] * 3),
    "scatter_": lambda lib, a, b: (a * 2).scatter_(0, _index(lib), b[:2] * 3),
    "scatter_value_": lambda lib, a, b: (a * 2).scatter_(0, _index(lib), 0.5),
    "masked_scatter_": lambda lib, a, b: (a * 2).masked_scatter_(_mask(lib), b * 3),
    "masked_fill": lambda lib, a, b: a.masked_fill(_mask(lib), b[1]),
    "index_copy": lambda lib, a, b: a.index_copy(0, _index(lib), b[:2]),
    "scatter": lambda lib, a, b: a.scatter(0, _index(lib), b[:2]),
    "masked_scatter": lambda lib, a, b: a.masked_scatter(_mask(lib), b),
}


_MKL = {"exp_"}  # (MKL's vector exp, which NumPy's is an ulp off at times)


@pytest.mark.parametrize("dual", [(0, 1), (0,), (1,)], ids=["both", "self", "other"])
@pytest.mark.parametrize("name", list(_INPLACE))
def test_inplace_and_self_tangent_formulas_as_torch(name, dual):
    """Both inputs require grad; the tangents are on both, on ``self`` alone or on the other input alone."""
    _check(_INPLACE[name], (np.abs(_normal(4)) + 0.5, _normal(4)), dual, bits=name not in _MKL)


def test_inplace_formula_writes_into_the_tangent_as_torch():
    """masked_fill_ writes into the tangent ``self`` had: the tangent object before and after is the same, with
    its version bumped, as torch's ``self_t_raw.masked_fill_``."""
    seen = []
    for lib in (tg, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(lib.tensor([1.0, 2.0, 3.0]), lib.tensor([4.0, 5.0, 6.0])) * 1
            before = fw.unpack_dual(x).tangent
            version = before._version
            x.masked_fill_(lib.tensor([True, False, True]), 0.0)
            after = fw.unpack_dual(x).tangent
            seen.append((after is before, after._version - version, after.tolist()))
    assert seen[0] == seen[1]


_F = "nn.functional"
# name -> (program of (lib, *inputs), input values)
_LOSSES = {
    "cross_entropy_label_smoothing": (
        lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 2, 1, 2]), label_smoothing=0.2,
                                                        ignore_index=1),
        (_normal(4, 3),)),
    "cross_entropy_label_smoothing_weight_2d": (
        lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([[0, 2], [1, 1]]),
                                                        weight=lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64),
                                                        label_smoothing=0.3, reduction="sum"),
        (_normal(2, 3, 2),)),
    "cosine_embedding_loss": (
        lambda lib, a, b: lib.nn.functional.cosine_embedding_loss(a, b, lib.tensor([1, -1, -1]), margin=-0.2),
        (_normal(3, 4), _normal(3, 4))),
    "cosine_embedding_loss_unbatched": (
        lambda lib, a, b: lib.nn.functional.cosine_embedding_loss(a, b, lib.tensor(-1), reduction="none"),
        (_normal(4), _normal(4))),
    "poisson_nll_loss_full": (
        lambda lib, x: lib.nn.functional.poisson_nll_loss(x, lib.tensor([0.5, 2.0, 3.0, 1.0]), log_input=False,
                                                           full=True, reduction="sum"),
        (np.abs(_normal(4)) + 0.1,)),
}


# (log_softmax's tangent goes through MKL's vector exp, which NumPy's is an ulp off at times)
_LOSS_ULP = {"cross_entropy_label_smoothing_weight_2d"}


@pytest.mark.parametrize("name", list(_LOSSES))
def test_composite_loss_tangents_as_torch(name):
    fn, values = _LOSSES[name]
    _check(fn, values, tuple(range(len(values))), bits=name not in _LOSS_ULP)


def _spd(n: int, batch: tuple = ()) -> np.ndarray:
    m = _normal(*batch, n, n)
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def _symmetric(lib, a):
    return (a + a.mT) / 2


# name -> (program of (lib, A), A's value); eigh and cholesky read a symmetrised input, as users differentiate them
_DECOMPOSITIONS = {
    "inv": (lambda lib, a: lib.linalg.inv(a), _spd(3)),
    "inv_batched": (lambda lib, a: lib.linalg.inv(a.transpose(-2, -1)), _spd(3, (2,))),
    "inv_ex": (lambda lib, a: lib.linalg.inv_ex(a)[0], _spd(3)),
    "tensorinv": (lambda lib, a: lib.linalg.tensorinv(a.reshape(2, 3, 6), ind=2), _spd(6)),
    "cholesky": (lambda lib, a: lib.linalg.cholesky(_symmetric(lib, a)), _spd(3)),
    "cholesky_upper": (lambda lib, a: lib.linalg.cholesky(_symmetric(lib, a), upper=True), _spd(3, (2,))),
    "eigh": (lambda lib, a: lib.linalg.eigh(_symmetric(lib, a)), _spd(3)),
    "eigh_batched": (lambda lib, a: lib.linalg.eigh(_symmetric(lib, a), UPLO="U"), _spd(3, (2,))),
    "qr_tall": (lambda lib, a: lib.linalg.qr(a), _normal(4, 3)),
    "qr_wide": (lambda lib, a: lib.linalg.qr(a), _normal(2, 3)),
    "qr_batched_complete_square": (lambda lib, a: lib.linalg.qr(a, mode="complete"), _normal(2, 3, 3)),
}


@pytest.mark.parametrize("name", list(_DECOMPOSITIONS))
def test_decomposition_tangents_as_torch(name):
    fn, value = _DECOMPOSITIONS[name]
    _check(fn, (value,), (0,), bits=False)


def _soft_margin(lib, dual_target: bool):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(lib.tensor([0.5, -1.0, 2.0]), lib.tensor([1.0, 2.0, 3.0]))
        target = lib.tensor([1.0, -1.0, 1.0])
        if dual_target:
            target = fw.make_dual(target, lib.tensor([0.5, 0.5, 0.5]))
        return fw.unpack_dual(lib.nn.functional.soft_margin_loss(x, target)).tangent.item()


@pytest.mark.parametrize("dual_target", [True, False])
def test_soft_margin_loss_target_with_tangent_refused_as_torch(dual_target):
    """torch's formula passes the target itself to soft_margin_loss_backward, which has no forward formula."""
    assert raised(tg, lambda lib: _soft_margin(lib, dual_target)) == raised(torch, lambda lib: _soft_margin(lib,
                                                                                                         dual_target))
    if not dual_target:
        assert _soft_margin(tg, False) == _soft_margin(torch, False)


def _legacy_cholesky(lib, upper: bool, not_positive_definite: bool):
    fw = lib.autograd.forward_ad
    a = [[1.0, 2.0], [2.0, 1.0]] if not_positive_definite else [[4.0, 1.0], [1.0, 3.0]]
    with fw.dual_level():
        return lib.cholesky(fw.make_dual(lib.tensor(a), lib.ones(2, 2)), upper=upper)


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("not_positive_definite", [False, True])
def test_legacy_cholesky_with_tangent_refused_as_torch(upper, not_positive_definite):
    """torch.cholesky has no forward formula (linalg_cholesky, which tracegrad runs for it, has one): refused before
    its kernel, so before a failing factorization too."""
    def program(lib):
        return _legacy_cholesky(lib, upper, not_positive_definite)

    assert raised(tg, program) == raised(torch, program)
