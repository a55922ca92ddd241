"""Differences that the programs of ``tests/test_user_programs22_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch (the outcome, a tangent's values, the error's type and message).

- ``torch.histogram`` / ``Tensor.histogram`` / ``torch.histogramdd`` of a dual input (or dual weight or bin edges)
  counted, as if the tangent were not there; torch has no forward formula for them and its autograd fallback
  refuses before any check of the kernel ("Trying to use forward AD with aten::histogram that does not support
  it.", ``aten::_histogramdd_bin_edges`` / ``aten::_histogramdd_from_bin_tensors`` for histogramdd);
- ``torch._weight_norm`` over the first or last dim (what ``nn.utils.weight_norm`` computes, so a
  ``functional_call`` with a dual ``weight_v``) and ``torch._weight_norm_interface`` gave a tangent; torch's fused
  interface has no forward formula and refuses a dual ``v`` or ``g`` before its kernel, in half precision too;
- ``binary_cross_entropy`` and ``binary_cross_entropy_with_logits`` with a dual ``weight`` or ``pos_weight`` (and a
  dual input or target) gave a tangent; torch's formula reads those operands themselves, not their primals, so the
  tangent it computes carries one of its own and setting it is refused ("Setting a forward grad that itself has a
  forward gradient at the same level0 is not supported.").
"""

from __future__ import annotations

import pytest
from _forward_ad_lib import assert_dual_program_as_torch

_HISTOGRAMS = {
    "histogram": lambda L, d: L.histogram(d(6), bins=3),
    "histogram_method": lambda L, d: d(6).histogram(3),
    "histogram_bad_bins_refused_first": lambda L, d: L.histogram(d(6), bins=-2),
    "histogram_dual_weight": lambda L, d: L.histogram(L.rand(6, dtype=L.float64), bins=3, weight=d(6)),
    "histogram_dual_edges": lambda L, d: L.histogram(L.rand(6, dtype=L.float64), bins=d(3).sort().values),
    "histogram_out": lambda L, d: L.histogram(d(6), bins=2, out=(L.empty(2, dtype=L.float64),
                                                                 L.empty(3, dtype=L.float64))),
    "histogramdd_counts": lambda L, d: L.histogramdd(d(5, 2), bins=[2, 3]),
    "histogramdd_one_dim_refused_first": lambda L, d: L.histogramdd(d(5), bins=2),
    "histogramdd_dual_weight": lambda L, d: L.histogramdd(L.rand(5, 2, dtype=L.float64), bins=2, weight=d(5)),
    "histogramdd_edges": lambda L, d: L.histogramdd(d(5, 1), bins=[L.tensor([0.0, 0.5, 1.0], dtype=L.float64)]),
    "histogramdd_dual_edges": lambda L, d: L.histogramdd(L.rand(5, 1, dtype=L.float64), bins=[d(3).sort().values]),
    "histogram_plain": lambda L, d: L.histogram(L.rand(6, dtype=L.float64), bins=3).hist,
    "histc_has_a_formula": lambda L, d: L.histc(d(6), bins=3),
}

_WEIGHT_NORMS = {
    "first_dim_dual_v": lambda L, d: L._weight_norm(d(2, 3), L.ones(2, 1, dtype=L.float64)),
    "first_dim_dual_g": lambda L, d: L._weight_norm(L.ones(2, 3, dtype=L.float64), d(2, 1)),
    "last_dim": lambda L, d: L._weight_norm(d(2, 3), L.ones(1, 3, dtype=L.float64), 1),
    "half": lambda L, d: L._weight_norm(d(2, 3).half(), L.ones(2, 1, dtype=L.half)),
    "bad_shape_refused_first": lambda L, d: L._weight_norm(d(2, 3), L.ones(5, dtype=L.float64)),
    "interface": lambda L, d: L._weight_norm_interface(d(2, 3), L.ones(2, 1, dtype=L.float64))[0],
    "middle_dim_composite": lambda L, d: L._weight_norm(d(2, 2, 2), L.ones(1, 2, 1, dtype=L.float64), 1),
    "functional_call_dual_weight_v": lambda L, d: L.func.functional_call(
        L.nn.utils.weight_norm(L.nn.Linear(3, 2).double()), {"weight_v": d(2, 3)}, (L.ones(1, 3, dtype=L.float64),)),
    "module_dual_input": lambda L, d: L.nn.utils.weight_norm(L.nn.Linear(3, 2).double())(d(1, 3)),
}

_BCE = {
    "bce_dual_weight": lambda L, d: L.nn.functional.binary_cross_entropy(d(3), L.rand(3, dtype=L.float64),
                                                                         weight=d(3)),
    "bce_only_weight_dual": lambda L, d: L.nn.functional.binary_cross_entropy(
        L.rand(3, dtype=L.float64), L.rand(3, dtype=L.float64), weight=d(3)),
    "logits_dual_weight": lambda L, d: L.nn.functional.binary_cross_entropy_with_logits(
        d(3), L.rand(3, dtype=L.float64), weight=d(3)),
    "logits_dual_pos_weight": lambda L, d: L.nn.functional.binary_cross_entropy_with_logits(
        d(3), L.rand(3, dtype=L.float64), pos_weight=d(3), reduction="none"),
    "logits_dual_target_and_pos_weight": lambda L, d: L.nn.functional.binary_cross_entropy_with_logits(
        L.rand(3, dtype=L.float64), d(3), pos_weight=d(3)),
    "logits_only_pos_weight_dual": lambda L, d: L.nn.functional.binary_cross_entropy_with_logits(
        L.rand(3, dtype=L.float64), L.rand(3, dtype=L.float64), pos_weight=d(3)),
    "logits_plain_weights": lambda L, d: L.nn.functional.binary_cross_entropy_with_logits(
        d(3), d(3), weight=L.rand(3, dtype=L.float64), pos_weight=L.rand(3, dtype=L.float64)),
    "nll_dual_weight_has_a_formula": lambda L, d: L.nn.functional.nll_loss(d(2, 3), L.tensor([0, 2]), weight=d(3)),
}


def _check(program) -> None:
    assert_dual_program_as_torch(program)


@pytest.mark.parametrize("case", _HISTOGRAMS, ids=str)
def test_histograms_of_duals_are_refused_as_torch(case):
    _check(_HISTOGRAMS[case])


@pytest.mark.parametrize("case", _WEIGHT_NORMS, ids=str)
def test_fused_weight_norm_refuses_tangents_as_torch(case):
    _check(_WEIGHT_NORMS[case])


@pytest.mark.parametrize("case", _BCE, ids=str)
def test_dual_weights_of_binary_cross_entropy_as_torch(case):
    _check(_BCE[case])
