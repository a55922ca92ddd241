"""A sweep of operators without forward-AD formulas in torch 2.13 (review of the set-22 forward-AD fixes), each
compared with torch (the tangent, or the error's type and message):

- ``igamma`` / ``igammac`` (``special.gammainc``/``gammaincc``, the methods) with a dual ``other`` gave the tangent
  derived from the backward's ``other`` term; torch has no forward formula and refuses a tangent of either argument
  before its kernel. ``special.zeta`` the same, for all three overloads (a number in either place), and ``ormqr``
  (which has a backward formula only);
- ``bincount`` with dual weights, ``scatter``/``scatter_`` with ``reduce=``, ``bernoulli(x, p)`` and
  ``native_channel_shuffle`` are torch's autograd-fallback operators: their refusal is the fallback's
  ("Trying to use forward AD with aten::bincount that does not support it.") before any check of the kernel (an
  out= one's too), and their backward is the fallback's ``torch::autograd::NotImplemented`` node raising
  "derivative for aten::NAME is not implemented" (was tracegrad's NotImplementedError, or for
  native_channel_shuffle a tangent refused by the backward's RuntimeError);
- out= forms ran the functional form's forward-AD refusal before their own ("igamma_out ... is an out= function");
- ``histc(dual, out=...)`` wrote with no refusal (the input is detached inside); an out= of another dtype than the
  input was filled where torch refuses it first ("torch.histogram: input tensor and hist tensor should have the same
  dtype ..."); ``histogram`` with a dual out= tensor computed, and its out count was checked after the refusal;
- operators declared with ``not_implemented_jvp`` (cdist, grid_sampler, conv_tbc, index_reduce, the margin losses,
  _ctc_loss, _embedding_bag) ran their kernel before refusing, so its errors came first; torch refuses first.
  ``multi_margin_loss`` with a dual weight computed; ``embedding_bag`` with a dual ``per_sample_weights`` and a plain
  weight is refused in ``_embedding_bag_forward_only``'s name (torch's composite calls it there);
- ``cross_entropy`` with label smoothing, a class weight and mean reduction divided by the weights as a constant:
  a dual weight's tangent missed that term;
- linalg's out= forms of det, slogdet, solve, lu_factor, lu wrote a dual input's result with no refusal
  (torch: "_linalg_det_out ... is an out= function"); eigvals' and ldl_factor's are the autograd fallback's;
  svd's and eigh's out= errors name ``_linalg_svd``/``_linalg_eigh``;
- ``nextafter``'s tangent (and gradient) was ``t * (self != other)``, -0 at a tie for a negative tangent, and a
  dual ``other`` alone gave a zero tangent; torch's ``where(self != other, t, 0)`` gives +0, and no tangent there.
"""

from __future__ import annotations

import pytest
from _forward_ad_lib import assert_dual_program_as_torch, assert_outcome_as_torch


def _plain(L, *shape, dtype=None):
    return L.rand(*shape, dtype=dtype or L.float64) + 0.5


_UNFORMULATED = {
    "igamma_dual_other": lambda L, d: L.igamma(_plain(L, 3), d(3)),
    "igamma_dual_other_half": lambda L, d: L.igamma(_plain(L, 3).half(), d(3).half()),
    "igamma_dual_other_int_self": lambda L, d: L.igamma(L.tensor([1, 2, 3]), d(3)),
    "igamma_dual_other_bad_shapes_refused_first": lambda L, d: L.igamma(_plain(L, 2), d(3)),
    "igammac_dual_other": lambda L, d: L.igammac(_plain(L, 3), d(3)),
    "gammainc_dual_other": lambda L, d: L.special.gammainc(_plain(L, 3), d(3)),
    "igamma_method_dual_other": lambda L, d: _plain(L, 3).igamma(d(3)),
    "igamma_dual_self": lambda L, d: L.igamma(d(3), _plain(L, 3)),
    "igamma_out_dual_other": lambda L, d: L.igamma(_plain(L, 3), d(3), out=L.empty(3, dtype=L.float64)),
    "igamma_out_dual_out": lambda L, d: L.igamma(_plain(L, 3), _plain(L, 3), out=d(3)),
    "igamma_inplace_dual_other": lambda L, d: _plain(L, 3).igamma_(d(3)),
    "zeta_dual_other": lambda L, d: L.special.zeta(_plain(L, 3) + 1, d(3)),
    "zeta_dual_self": lambda L, d: L.special.zeta(d(3) + 1, _plain(L, 3)),
    "zeta_number_self": lambda L, d: L.special.zeta(2.0, d(3)),
    "zeta_number_other": lambda L, d: L.special.zeta(d(3) + 1, 2.0),
    "zeta_0d_self": lambda L, d: L.special.zeta(L.tensor(2.0, dtype=L.float64), d(3)),
    "zeta_half_refused_before_kernel": lambda L, d: L.special.zeta(_plain(L, 3).half() + 1, d(3).half()),
    "zeta_out": lambda L, d: L.special.zeta(_plain(L, 3) + 1, d(3), out=L.empty(3, dtype=L.float64)),
    "polygamma_has_a_formula": lambda L, d: L.polygamma(1, d(3)),
    "ormqr_dual_other": lambda L, d: L.ormqr(_plain(L, 3, 2), _plain(L, 2), d(3, 2)),
    "ormqr_dual_tau": lambda L, d: L.ormqr(_plain(L, 3, 2), d(2), _plain(L, 3, 2)),
    "ormqr_bad_tau_refused_after": lambda L, d: L.ormqr(d(3, 2), _plain(L, 3), _plain(L, 3, 2)),
    "ormqr_out": lambda L, d: L.ormqr(d(3, 2), _plain(L, 2), _plain(L, 3, 2), out=L.empty(3, 2, dtype=L.float64)),
}

_FALLBACKS = {
    "bincount_dual_weights": lambda L, d: L.bincount(L.tensor([0, 1, 1]), weights=d(3)),
    "bincount_bad_minlength_refused_after": lambda L, d: L.bincount(L.tensor([0, 1, 1]), weights=d(3), minlength=-1),
    "bincount_bad_weights_refused_after": lambda L, d: L.bincount(L.tensor([0, 1, 1]), weights=d(2)),
    "bincount_float_input_refused_after": lambda L, d: L.bincount(L.tensor([0.0, 1.0]), weights=d(2)),
    "scatter_reduce_src": lambda L, d: L.scatter(d(3), 0, L.tensor([0, 1]), d(2), reduce="add"),
    "scatter_reduce_src_only": lambda L, d: L.scatter(_plain(L, 3), 0, L.tensor([0, 1]), d(2), reduce="multiply"),
    "scatter_reduce_value": lambda L, d: L.scatter(d(3), 0, L.tensor([0, 1]), 2.0, reduce="add"),
    "scatter_bad_reduce_refused_after": lambda L, d: L.scatter(d(3), 0, L.tensor([0, 1]), 2.0, reduce="bad"),
    "scatter_bad_index_refused_after": lambda L, d: L.scatter(d(3), 0, L.tensor([0, 9]), 2.0, reduce="add"),
    "scatter_reduce_inplace": lambda L, d: d(3).scatter_(0, L.tensor([0, 1]), d(2), reduce="add"),
    "scatter_reduce_inplace_value": lambda L, d: d(3).scatter_(0, L.tensor([0, 1]), 2.0, reduce="multiply"),
    "scatter_reduce_out_dual_out": lambda L, d: L.scatter(_plain(L, 3), 0, L.tensor([0, 1]), _plain(L, 2),
                                                          reduce="add", out=d(3)),
    "scatter_reduce_out_other_dtype": lambda L, d: L.scatter(d(3), 0, L.tensor([0, 1]), 2.0, reduce="add",
                                                             out=L.empty(3)),
    "scatter_has_a_formula": lambda L, d: L.scatter(d(3), 0, L.tensor([0, 1]), d(2)),
    "scatter_out": lambda L, d: L.scatter(d(3), 0, L.tensor([0, 1]), d(2), out=L.empty(3, dtype=L.float64)),
    "heaviside_out": lambda L, d: L.heaviside(d(3), _plain(L, 3), out=L.empty(3, dtype=L.float64)),
    "bernoulli_p": lambda L, d: L.bernoulli(d(3), 0.5).shape,
    "bernoulli_p_bad_p_refused_after": lambda L, d: L.bernoulli(d(3), 2.0).shape,
    "bernoulli_has_a_formula": lambda L, d: L.bernoulli(d(3) / 2).shape,
    "native_channel_shuffle": lambda L, d: L.native_channel_shuffle(d(1, 4, 1, 1), 2),
    "native_channel_shuffle_bad_groups_refused_after": lambda L, d: L.native_channel_shuffle(d(1, 4, 1, 1), 3),
    "channel_shuffle_has_a_formula": lambda L, d: L.nn.functional.channel_shuffle(d(1, 4, 1, 1), 2),
}

# (operators without forward formulas declared with ``not_implemented_jvp`` ran their kernel first: its errors came
# before torch's refusal)
_BEFORE_KERNEL = {
    "cdist_p": lambda L, d: L.cdist(d(3, 2), _plain(L, 4, 2), p=-1),
    "grid_sample_bad_grid": lambda L, d: L.nn.functional.grid_sample(d(1, 1, 3, 3), _plain(L, 1, 2, 2, 3),
                                                                     align_corners=False),
    "grid_sampler_2d_bad_grid": lambda L, d: L.grid_sampler_2d(d(1, 1, 3, 3), _plain(L, 1, 2, 2, 3), 0, 0, False),
    "conv_tbc_bad_bias": lambda L, d: L.conv_tbc(d(3, 1, 2), _plain(L, 2, 2, 5), _plain(L, 4)),
    "index_reduce_bad_index": lambda L, d: L.index_reduce(d(3), 0, L.tensor([0, 5]), _plain(L, 2), "prod"),
    "index_reduce_bad_reduce": lambda L, d: L.index_reduce(d(3), 0, L.tensor([0, 1]), _plain(L, 2), "bad"),
    "index_reduce_out": lambda L, d: L.index_reduce(_plain(L, 3), 0, L.tensor([0, 1]), d(2), "amax",
                                                    out=L.empty(3, dtype=L.float64)),
    "multilabel_margin_bad_target": lambda L, d: L.nn.functional.multilabel_margin_loss(d(2, 3),
                                                                                        L.tensor([[0, 1, -1]])),
    "multi_margin_bad_target": lambda L, d: L.nn.functional.multi_margin_loss(d(2, 3), L.tensor([0, 5])),
    "multi_margin_dual_weight": lambda L, d: L.nn.functional.multi_margin_loss(_plain(L, 2, 3), L.tensor([0, 2]),
                                                                               weight=d(3)),
    "multi_margin_dual_weight_bad_size": lambda L, d: L.nn.functional.multi_margin_loss(
        _plain(L, 2, 3), L.tensor([0, 2]), weight=d(2)),
    "ctc_bad_blank": lambda L, d: L.nn.functional.ctc_loss(d(5, 1, 3), L.tensor([[1, 2]]), L.tensor([5]),
                                                           L.tensor([2]), blank=7),
    "ctc_bad_lengths": lambda L, d: L.nn.functional.ctc_loss(d(5, 1, 3), L.tensor([[1, 2]]), L.tensor([9]),
                                                             L.tensor([2])),
    "embedding_bag_bad_index": lambda L, d: L.nn.functional.embedding_bag(L.tensor([0, 2, 9]), d(3, 2),
                                                                          L.tensor([0, 1]), mode="sum"),
    # (torch's composite takes _embedding_bag_forward_only where the weight has neither grad nor tangent)
    "embedding_bag_dual_per_sample_weights": lambda L, d: L.nn.functional.embedding_bag(
        L.tensor([0, 2, 1]), _plain(L, 3, 2), L.tensor([0, 1]), mode="sum", per_sample_weights=d(3)),
    "embedding_bag_dual_per_sample_weights_bad_index": lambda L, d: L.nn.functional.embedding_bag(
        L.tensor([0, 2, 9]), _plain(L, 3, 2), L.tensor([0, 1]), mode="sum", per_sample_weights=d(3)),
    "embedding_bag_weight_requires_grad": lambda L, d: L.nn.functional.embedding_bag(
        L.tensor([0, 2, 1]), _plain(L, 3, 2).requires_grad_(), L.tensor([0, 1]), mode="sum",
        per_sample_weights=d(3)),
    "embedding_bag_bad_padding_idx_first": lambda L, d: L.nn.functional.embedding_bag(
        L.tensor([0, 2, 1]), d(3, 2), L.tensor([0, 1]), mode="sum", padding_idx=7),
    "embedding_bag_module": lambda L, d: L.nn.EmbeddingBag(3, 2, mode="sum").double()(
        L.tensor([0, 2, 1]), L.tensor([0, 1]), per_sample_weights=d(3)),
}

# (the mean's denominator, the target classes' weights, was taken as a constant: a dual weight's tangent was lost)
_LABEL_SMOOTHING = {
    "dual_weight_mean": lambda L, d: L.nn.functional.cross_entropy(_plain(L, 2, 3), L.tensor([0, 2]), weight=d(3),
                                                                   label_smoothing=0.1),
    "dual_weight_mean_ignore_index": lambda L, d: L.nn.functional.cross_entropy(
        _plain(L, 2, 3), L.tensor([0, 2]), weight=d(3), ignore_index=2, label_smoothing=0.2),
    "dual_input_and_weight": lambda L, d: L.nn.functional.cross_entropy(d(2, 3), L.tensor([0, 2]), weight=d(3),
                                                                        label_smoothing=0.1),
    "dual_weight_sum": lambda L, d: L.nn.functional.cross_entropy(_plain(L, 2, 3), L.tensor([0, 2]), weight=d(3),
                                                                  label_smoothing=0.1, reduction="sum"),
    "plain_weight_value": lambda L, d: L.nn.functional.cross_entropy(_plain(L, 4, 3), L.tensor([0, 2, 1, 1]),
                                                                     weight=_plain(L, 3), label_smoothing=0.3).item(),
    "dual_weight_4d": lambda L, d: L.nn.functional.cross_entropy(_plain(L, 2, 3, 2, 2), L.tensor([[[0, 2], [1, 1]]] * 2),
                                                                 weight=d(3), label_smoothing=0.1),
}

_HISTOGRAM_OUTS = {
    "histc_out_dual_input": lambda L, d: L.histc(d(5), bins=4, out=L.empty(4, dtype=L.float64)),
    "histc_out_dual_out": lambda L, d: L.histc(_plain(L, 5), bins=4, out=d(4)),
    "histc_out_bad_bins_refused_first": lambda L, d: L.histc(d(5), bins=-1, out=L.empty(4, dtype=L.float64)),
    "histc_out_other_dtype": lambda L, d: L.histc(d(5), bins=4, out=L.empty(4)),
    "histc_out_other_dtype_before_bins": lambda L, d: L.histc(_plain(L, 5), bins=-1, out=L.empty(4)),
    "histc_out_long_input": lambda L, d: L.histc(L.tensor([1, 2]), bins=4, out=L.empty(4)),
    "histc_out_bfloat16_input": lambda L, d: L.histc(L.ones(3, dtype=L.bfloat16), bins=4, out=L.empty(4)),
    "histc_out_resized": lambda L, d: L.histc(L.ones(3), bins=4, out=L.empty(2)),
    "histc": lambda L, d: L.histc(d(5), bins=4),
    "histogram_dual_hist_out": lambda L, d: L.histogram(_plain(L, 5), bins=4, out=(d(4), L.empty(5, dtype=L.float64))),
    "histogram_dual_edges_out": lambda L, d: L.histogram(_plain(L, 5), bins=4, out=(L.empty(4, dtype=L.float64), d(5))),
    "histogram_dual_out_bad_bins": lambda L, d: L.histogram(_plain(L, 5), bins=-1, out=(L.empty(4, dtype=L.float64),
                                                                                        d(5))),
    "histogram_out_count_checked_first": lambda L, d: L.histogram(d(5), bins=4, out=(L.empty(4, dtype=L.float64),)),
}

def _empty(L, *shape, dtype=None):
    return L.empty(*shape, dtype=dtype or L.float64)


# (linalg's out= forms through native operators wrote with no refusal; svd's and eigh's named the public function)
_LINALG_OUTS = {
    "det": lambda L, d: L.linalg.det(d(2, 2), out=_empty(L, ())),
    "slogdet": lambda L, d: L.linalg.slogdet(d(2, 2), out=(_empty(L, ()), _empty(L, ()))),
    "solve": lambda L, d: L.linalg.solve(d(2, 2), _plain(L, 2, 2), out=_empty(L, 2, 2)),
    "lu_factor": lambda L, d: L.linalg.lu_factor(d(2, 2), out=(_empty(L, 2, 2), _empty(L, 2, dtype=L.int32))),
    "lu": lambda L, d: L.linalg.lu(d(2, 2), out=(_empty(L, 2, 2), _empty(L, 2, 2), _empty(L, 2, 2))),
    "svd": lambda L, d: L.linalg.svd(d(2, 2), out=(_empty(L, 2, 2), _empty(L, 2), _empty(L, 2, 2))),
    "eigh": lambda L, d: L.linalg.eigh(d(2, 2), out=(_empty(L, 2), _empty(L, 2, 2))),
    "eigvals_fallback": lambda L, d: L.linalg.eigvals(d(2, 2), out=_empty(L, 2, dtype=L.complex128)),
    "ldl_factor_fallback": lambda L, d: L.linalg.ldl_factor(d(2, 2), out=(_empty(L, 2, 2),
                                                                          _empty(L, 2, dtype=L.int32))),
    "svd_requires_grad": lambda L, d: L.linalg.svd(_plain(L, 2, 2).requires_grad_(),
                                                   out=(_empty(L, 2, 2), _empty(L, 2), _empty(L, 2, 2))),
    "eigh_requires_grad": lambda L, d: L.linalg.eigh(_plain(L, 2, 2).requires_grad_(),
                                                     out=(_empty(L, 2), _empty(L, 2, 2))),
}


@pytest.mark.parametrize("case", _LINALG_OUTS, ids=str)
def test_linalg_outs_refuse_as_torch(case):
    _check(_LINALG_OUTS[case])


_NEXTAFTER = {
    # (the sign of a zero tangent: where(), not a product by the mask; a list, since a tensor's tangent is compared)
    "tie_negative_tangent_sign": lambda L, d: L.signbit(L.autograd.forward_ad.unpack_dual(
        L.nextafter(L.autograd.forward_ad.make_dual(L.ones(3, dtype=L.float64), -L.ones(3, dtype=L.float64)),
                    L.ones(3, dtype=L.float64))).tangent).tolist(),
    "values": lambda L, d: L.nextafter(d(3), L.tensor([0.0, 1.0, 2.0], dtype=L.float64)),
    "dual_other_only": lambda L, d: L.nextafter(_plain(L, 3), d(3)),
    "both_dual": lambda L, d: L.nextafter(d(3), d(3)),
    "broadcast_self": lambda L, d: L.nextafter(d(), _plain(L, 3)),
    "inplace_dual_other_only": lambda L, d: _plain(L, 3).nextafter_(d(3)),
    "inplace": lambda L, d: d(3).nextafter_(L.tensor([0.0, 1.0, 2.0], dtype=L.float64)),
    "out": lambda L, d: L.nextafter(d(3), _plain(L, 3), out=L.empty(3, dtype=L.float64)),
    "backward_tie_sign": lambda L, d: L.signbit(L.autograd.grad(
        L.nextafter(x := L.ones(3, dtype=L.float64, requires_grad=True), L.ones(3, dtype=L.float64)),
        x, -L.ones(3, dtype=L.float64))[0]).tolist(),
}


def _check(program) -> None:
    assert_dual_program_as_torch(program, 0.5, -0.5)


@pytest.mark.parametrize("case", _UNFORMULATED, ids=str)
def test_operators_without_forward_formulas_refuse_as_torch(case):
    _check(_UNFORMULATED[case])


@pytest.mark.parametrize("case", _FALLBACKS, ids=str)
def test_autograd_fallback_operators_refuse_as_torch(case):
    _check(_FALLBACKS[case])


@pytest.mark.parametrize("case", _BEFORE_KERNEL, ids=str)
def test_refusals_come_before_the_kernels_checks_as_torch(case):
    _check(_BEFORE_KERNEL[case])


@pytest.mark.parametrize("case", _LABEL_SMOOTHING, ids=str)
def test_label_smoothing_with_a_dual_weight_as_torch(case):
    _check(_LABEL_SMOOTHING[case])


@pytest.mark.parametrize("case", _HISTOGRAM_OUTS, ids=str)
def test_histogram_outs_as_torch(case):
    _check(_HISTOGRAM_OUTS[case])


@pytest.mark.parametrize("case", _NEXTAFTER, ids=str)
def test_nextafter_tangents_as_torch(case):
    _check(_NEXTAFTER[case])


_BACKWARDS = {
    "bincount": lambda L, x: L.bincount(L.tensor([0, 1, 1]), weights=x),
    "scatter_reduce": lambda L, x: L.scatter(x, 0, L.tensor([0, 1]), L.ones(2), reduce="add"),
    "scatter_value_reduce": lambda L, x: L.scatter(x, 0, L.tensor([0, 1]), 2.0, reduce="multiply"),
    "scatter_reduce_inplace": lambda L, x: x.clone().scatter_(0, L.tensor([0, 1]), 2.0, reduce="add"),
    "bernoulli_p": lambda L, x: L.bernoulli(x / 2, 0.5),
    "native_channel_shuffle": lambda L, x: L.native_channel_shuffle(x.reshape(1, 3, 1, 1), 3),
}


@pytest.mark.parametrize("case", _BACKWARDS, ids=str)
def test_autograd_fallback_operators_backward_as_torch(case):
    def run(lib):
        x = lib.ones(3, requires_grad=True)
        y = _BACKWARDS[case](lib, x)
        try:
            y.sum().backward()
        except RuntimeError as error:
            return y.grad_fn.name(), type(error).__name__, str(error)
        return y.grad_fn.name()

    assert_outcome_as_torch(run)
