"""Loss-function mistakes from notebooks: targets of the wrong shape, dtype or range, probabilities where logits
are expected, bad reductions and options. Each program gives torch's exception type and message (or torch's
result) and torch's warnings."""

from __future__ import annotations

import pytest
from _lib import tg, torch
from _mistakes_lib import assert_as_torch


def X(L, *shape, dtype=None):  # noqa: N802 - an input, as in the formulas
    n = 1
    for s in shape:
        n *= s
    return L.linspace(-2, 2, n, dtype=dtype).reshape(*shape)


def F(L):  # noqa: N802 - torch.nn.functional, as users import it
    return L.nn.functional


def _labels(L, *values, dtype=None):
    return L.tensor(list(values), dtype=dtype or L.long)


def _ctc(L, input_lengths, target_lengths, targets=None, **kwargs):
    log_probs = X(L, 5, 2, 4).log_softmax(2)
    targets = L.tensor([[1, 2], [1, 1]]) if targets is None else targets
    return F(L).ctc_loss(log_probs, targets, L.tensor(input_lengths), L.tensor(target_lengths), **kwargs)


CASES = {
    "cosine_similarity of an int tensor with a float one": lambda L: str(F(L).cosine_similarity(
        L.tensor([[1, 2, 3]]), L.tensor([[1., 0., 1.]])).dtype).rpartition(".")[2],
    # ---- cross_entropy and nll_loss
    "cross_entropy of a negative target": lambda L: F(L).cross_entropy(X(L, 2, 3), _labels(L, 0, -5)),
    "cross_entropy of int32 targets": lambda L: F(L).cross_entropy(X(L, 2, 3), _labels(L, 0, 1, dtype=L.int32)),
    "cross_entropy of float class indices": lambda L: F(L).cross_entropy(X(L, 2, 3), L.tensor([0.0, 1.0])),
    "cross_entropy of uint8 targets": lambda L: F(L).cross_entropy(X(L, 2, 3), _labels(L, 0, 1, dtype=L.uint8)),
    "cross_entropy of bool targets": lambda L: F(L).cross_entropy(X(L, 2, 3), L.tensor([True, False])),
    "cross_entropy of one-hot long targets": lambda L: F(L).cross_entropy(X(L, 2, 3), L.eye(3, dtype=L.long)[:2]),
    "cross_entropy of a column of targets": lambda L: F(L).cross_entropy(X(L, 3, 4), L.zeros(3, 1, dtype=L.long)),
    "cross_entropy of float targets with fewer classes": lambda L: F(L).cross_entropy(X(L, 2, 3), L.ones(2, 2) / 2),
    "cross_entropy of double probability targets": lambda L: F(L).cross_entropy(X(L, 2, 3), L.ones(2, 3).double() / 3),
    "cross_entropy of an int input": lambda L: F(L).cross_entropy(L.ones(2, 3, dtype=L.long), _labels(L, 0, 1)),
    "cross_entropy of a 0-d input": lambda L: F(L).cross_entropy(L.tensor(1.0), L.tensor(0)),
    "cross_entropy 1-D input with a 1-D target": lambda L: F(L).cross_entropy(X(L, 3), _labels(L, 0)),
    "cross_entropy label_smoothing above 1": lambda L: F(L).cross_entropy(X(L, 2, 3), _labels(L, 0, 1),
                                                                          label_smoothing=1.5),
    "cross_entropy label_smoothing negative": lambda L: F(L).cross_entropy(X(L, 2, 3), _labels(L, 0, 1),
                                                                           label_smoothing=-0.1),
    "CrossEntropyLoss label_smoothing above 1": lambda L: L.nn.CrossEntropyLoss(label_smoothing=2.0)(
        X(L, 2, 3), _labels(L, 0, 1)),
    "cross_entropy bogus reduction": lambda L: F(L).cross_entropy(X(L, 2, 3), _labels(L, 0, 1), reduction="avg"),
    "CrossEntropyLoss bogus reduction": lambda L: L.nn.CrossEntropyLoss(reduction="bogus")(X(L, 2, 3),
                                                                                          _labels(L, 0, 1)),
    "cross_entropy weight of a wrong size": lambda L: F(L).cross_entropy(X(L, 2, 3), _labels(L, 0, 1),
                                                                         weight=L.ones(2)),
    "cross_entropy weight of double": lambda L: F(L).cross_entropy(X(L, 2, 3), _labels(L, 0, 1),
                                                                   weight=L.ones(3).double()),
    "cross_entropy weight of a 2-D tensor": lambda L: F(L).cross_entropy(X(L, 2, 3), _labels(L, 0, 1),
                                                                         weight=L.ones(1, 3)),
    "cross_entropy of an empty batch": lambda L: F(L).cross_entropy(L.ones(0, 3), L.zeros(0, dtype=L.long)),
    "cross_entropy all ignored": lambda L: F(L).cross_entropy(X(L, 2, 3), _labels(L, -100, -100)),
    "cross_entropy 4-D input with a 2-D target": lambda L: F(L).cross_entropy(X(L, 2, 3, 4, 4),
                                                                              L.zeros(2, 4, dtype=L.long)),
    "cross_entropy spatial target of a wrong size": lambda L: F(L).cross_entropy(X(L, 2, 3, 4),
                                                                                 L.zeros(2, 5, dtype=L.long)),
    "cross_entropy probabilities with a wrong shape 3-D": lambda L: F(L).cross_entropy(X(L, 2, 3, 4),
                                                                                       L.ones(2, 4, 3) / 3),
    "nll_loss of a 3-D input with a wrong target": lambda L: F(L).nll_loss(X(L, 2, 3, 4), L.zeros(2, 5, dtype=L.long)),
    "nll_loss batch mismatch": lambda L: F(L).nll_loss(X(L, 3, 4), L.zeros(2, dtype=L.long)),
    "nll_loss of a 4-D input with a 2-D target": lambda L: F(L).nll_loss(X(L, 2, 3, 4, 4), L.zeros(2, 4, dtype=L.long)),
    "nll_loss weight of a wrong size": lambda L: F(L).nll_loss(X(L, 2, 3), _labels(L, 0, 1), weight=L.ones(2)),
    "nll_loss target out of range": lambda L: F(L).nll_loss(X(L, 2, 3), _labels(L, 0, 3)),
    "nll_loss of a 1-D target for a 1-D input": lambda L: F(L).nll_loss(X(L, 3), _labels(L, 0, 1)),
    "nll_loss of float targets": lambda L: F(L).nll_loss(X(L, 2, 3), L.tensor([0.0, 1.0])),
    "nll_loss bogus reduction": lambda L: F(L).nll_loss(X(L, 2, 3), _labels(L, 0, 1), reduction="bogus"),
    "NLLLoss legacy size_average warns": lambda L: L.nn.NLLLoss(size_average=False).reduction,
    "cross_entropy with size_average warns": lambda L: F(L).cross_entropy(X(L, 2, 3), _labels(L, 0, 1),
                                                                          size_average=True),
    # ---- regression losses
    "mse_loss of a column against a vector warns": lambda L: F(L).mse_loss(X(L, 3), X(L, 3, 1)),
    "mse_loss of a 0-d against a 1-element vector warns": lambda L: F(L).mse_loss(L.tensor(1.0), L.ones(1)),
    "mse_loss not broadcastable": lambda L: F(L).mse_loss(X(L, 3), X(L, 4)),
    "mse_loss of a long target": lambda L: F(L).mse_loss(X(L, 3), L.ones(3, dtype=L.long)),
    "mse_loss of a double target": lambda L: F(L).mse_loss(X(L, 3), L.ones(3, dtype=L.double)),
    "mse_loss of long tensors": lambda L: F(L).mse_loss(L.ones(3, dtype=L.long), L.ones(3, dtype=L.long)),
    "mse_loss bogus reduction": lambda L: F(L).mse_loss(X(L, 3), X(L, 3), reduction="bogus"),
    "MSELoss bogus reduction": lambda L: L.nn.MSELoss(reduction="bogus")(X(L, 3), X(L, 3)),
    "MSELoss legacy reduce warns": lambda L: L.nn.MSELoss(reduce=False).reduction,
    "l1_loss size mismatch warns": lambda L: F(L).l1_loss(X(L, 2, 3), X(L, 3)),
    "smooth_l1_loss size mismatch warns": lambda L: F(L).smooth_l1_loss(X(L, 4, 1), X(L, 4)),
    "smooth_l1_loss negative beta": lambda L: F(L).smooth_l1_loss(X(L, 4), X(L, 4), beta=-1.0),
    "huber_loss size mismatch warns": lambda L: F(L).huber_loss(X(L, 4, 1), X(L, 4)),
    "huber_loss zero delta": lambda L: F(L).huber_loss(X(L, 4), X(L, 4), delta=0.0),
    "mse_loss target requires grad": lambda L: F(L).mse_loss(X(L, 3), X(L, 3).requires_grad_()),
    "mse_loss of lists": lambda L: F(L).mse_loss([1.0, 2.0], [1.0, 2.0]),
    # ---- binary losses
    "binary_cross_entropy of targets above 1": lambda L: F(L).binary_cross_entropy(
        X(L, 3).sigmoid(), L.tensor([0.0, 1.0, 2.0])),
    "binary_cross_entropy of logits": lambda L: F(L).binary_cross_entropy(X(L, 3), L.ones(3)),
    "BCELoss of probabilities above 1": lambda L: L.nn.BCELoss()(L.tensor([0.5, 1.5]), L.ones(2)),
    "binary_cross_entropy size mismatch": lambda L: F(L).binary_cross_entropy(X(L, 3).sigmoid(), L.ones(3, 1)),
    "binary_cross_entropy weight wider than the loss": lambda L: F(L).binary_cross_entropy(
        X(L, 3).sigmoid(), L.ones(3), weight=L.ones(2, 3)),
    "binary_cross_entropy weight of another length": lambda L: F(L).binary_cross_entropy(
        X(L, 3).sigmoid(), L.ones(3), weight=L.ones(4)),
    "binary_cross_entropy of long targets": lambda L: F(L).binary_cross_entropy(X(L, 2).sigmoid(),
                                                                                _labels(L, 1, 0)),
    "binary_cross_entropy of double targets": lambda L: F(L).binary_cross_entropy(X(L, 2).sigmoid(),
                                                                                  L.ones(2).double()),
    "binary_cross_entropy weight of a wrong shape": lambda L: F(L).binary_cross_entropy(
        X(L, 2, 2).sigmoid(), L.ones(2, 2), weight=L.ones(3)),
    "binary_cross_entropy bogus reduction": lambda L: F(L).binary_cross_entropy(
        X(L, 2).sigmoid(), L.ones(2), reduction="bogus"),
    "bce_with_logits size mismatch": lambda L: F(L).binary_cross_entropy_with_logits(X(L, 3, 1), L.ones(3)),
    "bce_with_logits of long targets": lambda L: F(L).binary_cross_entropy_with_logits(X(L, 2), _labels(L, 1, 0)),
    "bce_with_logits of double targets": lambda L: F(L).binary_cross_entropy_with_logits(X(L, 2), L.ones(2).double()),
    "bce_with_logits pos_weight of a wrong shape": lambda L: F(L).binary_cross_entropy_with_logits(
        X(L, 2, 2), L.ones(2, 2), pos_weight=L.ones(3)),
    "bce_with_logits pos_weight of a scalar": lambda L: F(L).binary_cross_entropy_with_logits(
        X(L, 2, 2), L.ones(2, 2), pos_weight=2.0),
    "BCEWithLogitsLoss pos_weight of a wrong shape": lambda L: L.nn.BCEWithLogitsLoss(pos_weight=L.ones(3))(
        X(L, 2, 2), L.ones(2, 2)),
    "bce_with_logits bogus reduction": lambda L: F(L).binary_cross_entropy_with_logits(X(L, 2), L.ones(2),
                                                                                       reduction="avg"),
    "bce_with_logits of targets outside [0, 1]": lambda L: F(L).binary_cross_entropy_with_logits(
        X(L, 3), L.tensor([-1.0, 0.5, 2.0])),
    # ---- divergences, CTC and the rest
    "kl_div default mean warns": lambda L: F(L).kl_div(X(L, 2, 3).log_softmax(1), L.ones(2, 3) / 3),
    "kl_div size mismatch": lambda L: F(L).kl_div(X(L, 2, 3), L.ones(3, 2)),
    "kl_div bogus reduction": lambda L: F(L).kl_div(X(L, 2, 3), L.ones(2, 3), reduction="avg"),
    "KLDivLoss size_average warns": lambda L: L.nn.KLDivLoss(size_average=False).reduction,
    "ctc_loss input length above T": lambda L: _ctc(L, [6, 5], [2, 2]),
    "ctc_loss target length above the targets": lambda L: _ctc(L, [5, 5], [3, 2]),
    "ctc_loss lengths of a wrong count": lambda L: _ctc(L, [5], [2, 2]),
    "ctc_loss bogus reduction": lambda L: _ctc(L, [5, 5], [2, 2], reduction="avg"),
    "ctc_loss blank out of range": lambda L: _ctc(L, [5, 5], [2, 2], blank=4),
    "ctc_loss of float targets": lambda L: _ctc(L, [5, 5], [2, 2], targets=L.ones(2, 2)),
    "ctc_loss impossible alignment is inf": lambda L: _ctc(L, [2, 2], [2, 2], reduction="none"),
    "margin_ranking_loss size mismatch": lambda L: F(L).margin_ranking_loss(X(L, 3), X(L, 4), L.ones(3)),
    "cosine_embedding_loss of a wrong target": lambda L: F(L).cosine_embedding_loss(X(L, 2, 3), X(L, 2, 3),
                                                                                    L.ones(3)),
    "hinge_embedding_loss bogus reduction": lambda L: F(L).hinge_embedding_loss(X(L, 3), L.ones(3), reduction="x"),
    "triplet_margin_loss of a negative margin": lambda L: F(L).triplet_margin_loss(X(L, 2, 3), X(L, 2, 3),
                                                                                   X(L, 2, 3), margin=-1.0),
    "poisson_nll_loss size mismatch": lambda L: F(L).poisson_nll_loss(X(L, 3), X(L, 2)),
    "gaussian_nll_loss of a wrong var shape": lambda L: F(L).gaussian_nll_loss(X(L, 2, 3), X(L, 2, 3),
                                                                               L.ones(2, 2)),
    "L1Loss of a module's output against a list": lambda L: L.nn.L1Loss()(X(L, 2), [1.0, 1.0]),
    "mse_loss of an int32 target": lambda L: F(L).mse_loss(X(L, 2), L.ones(2, dtype=L.int32)),
    "mse_loss of a bool target": lambda L: F(L).mse_loss(X(L, 2), L.ones(2, dtype=L.bool)),
    "smooth_l1_loss of a long target": lambda L: F(L).smooth_l1_loss(X(L, 2), L.ones(2, dtype=L.long)),
    "huber_loss of a long target": lambda L: F(L).huber_loss(X(L, 2), L.ones(2, dtype=L.long)),
    "smooth_l1_loss of long tensors": lambda L: F(L).smooth_l1_loss(L.ones(2, dtype=L.long), L.ones(2, dtype=L.long)),
    "huber_loss of long tensors": lambda L: F(L).huber_loss(L.ones(2, dtype=L.long), L.ones(2, dtype=L.long)),
    "l1_loss of long tensors": lambda L: F(L).l1_loss(L.ones(2, dtype=L.long), L.ones(2, dtype=L.long)),
    "binary_cross_entropy of a nan target": lambda L: F(L).binary_cross_entropy(
        L.tensor([0.5, 0.5]), L.tensor([1.0, float("nan")])),
    "binary_cross_entropy of a bad input and long targets": lambda L: F(L).binary_cross_entropy(
        L.tensor([1.5, 0.5]), _labels(L, 1, 0)),
    "binary_cross_entropy of a double input": lambda L: F(L).binary_cross_entropy(
        L.tensor([0.5, 0.5], dtype=L.float64), L.tensor([1.0, 0.0])),
    "binary_cross_entropy with a double weight": lambda L: F(L).binary_cross_entropy(
        L.tensor([0.5, 0.5]), L.tensor([1.0, 0.0]), weight=L.ones(2, dtype=L.float64)),
    "bce_with_logits of a double input": lambda L: F(L).binary_cross_entropy_with_logits(
        X(L, 2, dtype=L.float64), L.tensor([1.0, 0.0])),
    "bce_with_logits of int32 targets": lambda L: F(L).binary_cross_entropy_with_logits(
        X(L, 2), _labels(L, 1, 0, dtype=L.int32)),
    "bce_with_logits of bool targets": lambda L: F(L).binary_cross_entropy_with_logits(
        X(L, 2), L.tensor([True, False])),
    "bce_with_logits with a double pos_weight": lambda L: F(L).binary_cross_entropy_with_logits(
        X(L, 2), L.tensor([1.0, 0.0]), pos_weight=L.ones(2, dtype=L.float64)),
    "bce_with_logits weight of a list": lambda L: F(L).binary_cross_entropy_with_logits(
        X(L, 2), L.tensor([1.0, 0.0]), weight=[1.0, 1.0]),
    "nll_loss 4-D with a target of a wrong size": lambda L: F(L).nll_loss(X(L, 2, 3, 4, 4),
                                                                          L.zeros(2, 4, 5, dtype=L.long)),
    "nll_loss 4-D with a 4-D target": lambda L: F(L).nll_loss(X(L, 2, 3, 4, 4), L.zeros(2, 4, 4, 1, dtype=L.long)),
    "nll_loss of a 2-D target for a 1-D input": lambda L: F(L).nll_loss(X(L, 3), L.zeros(1, 2, dtype=L.long)),
    "nll_loss weight of double": lambda L: F(L).nll_loss(X(L, 2, 3), _labels(L, 0, 1), weight=L.ones(3).double()),
    "cross_entropy 0-d input and a float 0-d target": lambda L: F(L).cross_entropy(L.tensor(1.0), L.tensor(0.0)),
    "cross_entropy smoothing with a double weight": lambda L: F(L).cross_entropy(
        X(L, 2, 3), _labels(L, 0, 1), label_smoothing=0.5, weight=L.ones(3).double()),
    "cross_entropy of probabilities with a double weight": lambda L: F(L).cross_entropy(
        X(L, 2, 3), L.ones(2, 3) / 3, weight=L.ones(3).double()),
    "cross_entropy label_smoothing of 1.1": lambda L: F(L).cross_entropy(X(L, 2, 3), _labels(L, 0, 1),
                                                                         label_smoothing=1.1),
    "cross_entropy probabilities with label_smoothing above 1": lambda L: F(L).cross_entropy(
        X(L, 2, 3), L.ones(2, 3) / 3, label_smoothing=1.1),
}

# Programs torch runs without error or warning (results compared).
SILENT = {"cosine_similarity of an int tensor with a float one", "cross_entropy of an empty batch", "cross_entropy all ignored", "bce_with_logits of targets outside [0, 1]",
          "ctc_loss impossible alignment is inf", "mse_loss target requires grad", "cross_entropy of uint8 targets",
          "cross_entropy of double probability targets", "cross_entropy 1-D input with a 1-D target",
          "cross_entropy label_smoothing negative", "mse_loss of a long target", "mse_loss of a double target",
          "bce_with_logits of double targets", "ctc_loss of float targets", "mse_loss of an int32 target",
          "smooth_l1_loss of a long target", "huber_loss of a long target", "bce_with_logits of a double input",
          "binary_cross_entropy with a double weight", "cross_entropy of probabilities with a double weight",
          "bce_with_logits with a double pos_weight", "mse_loss of a bool target"}


@pytest.mark.parametrize("name", CASES)
def test_same_outcome_as_torch(name):
    assert_as_torch(name, CASES[name], SILENT)


@pytest.mark.parametrize("target_dtype", ["float64", "int64"])
def test_regression_losses_keep_the_input_dtype_in_backward(target_dtype):
    """A float32 prediction against double or integer targets: the loss takes torch's promoted dtype and the
    gradient the prediction's dtype (NumPy alone would widen to float64)."""

    def program(lib):
        results = []
        for loss in ("mse_loss", "l1_loss", "smooth_l1_loss"):
            x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
            y = getattr(lib.nn.functional, loss)(x, lib.tensor([0, 3, 1], dtype=getattr(lib, target_dtype)))
            y.backward()
            results.append((str(y.dtype), round(y.item(), 5), str(x.grad.dtype), [round(g, 5) for g in x.grad.tolist()]))
        return results

    assert program(tg) == program(torch)


def test_huber_loss_backward_of_mixed_dtypes_is_not_refused():
    """A torch artefact not copied: torch's huber_loss computes the loss of a float32 prediction against double or
    integer targets, then its backward kernel refuses the mixed dtypes ("Found dtype Double but expected Float").
    The forward already accepted them, and mse/l1/smooth_l1 differentiate the same inputs, so tracegrad gives the
    gradient (in the prediction's dtype) instead of failing at backward."""

    def program(lib, target_dtype):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        lib.nn.functional.huber_loss(x, lib.tensor([0, 3, 1], dtype=getattr(lib, target_dtype))).backward()
        return x.grad

    for target_dtype in ("float64", "int64"):
        with pytest.raises(RuntimeError, match="Found dtype .* but expected Float"):
            program(torch, target_dtype)
        grad = program(tg, target_dtype)
        assert str(grad.dtype) == "torch.float32"
        assert grad.tolist() == pytest.approx([1 / 6, -1 / 3, 1 / 3])
