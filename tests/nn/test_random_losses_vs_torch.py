"""Random losses, normalizations and other nn.functional calls, by tracegrad and by torch: the same outputs,
output node names, input (and weight) gradients, running statistics, errors and warnings.

Each case draws a function (cross_entropy with class weights, ignored targets or label smoothing, soft-label
cross_entropy, nll_loss, mse/l1/smooth_l1/huber with broadcast targets, binary cross-entropy with weights or
pos_weight, kl_div, margin/hinge/cosine/triplet/poisson/gaussian losses, the soft/multi-class/multi-label margin
losses and triplet loss with a custom distance, layer/group/batch/instance norm,
normalize, cosine_similarity, pairwise_distance, embedding, one_hot, glu), a batch, a class count, extra dims, a
reduction and two option flags.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_logs_match, tg, torch, warning_texts

N_CASES = 600


class _Draw:
    """One case's random inputs, drawn the same way for either library."""

    def __init__(self, lib, seed: int) -> None:
        self.lib, self.rng, self.inputs = lib, np.random.default_rng(seed), []

    def tensor(self, shape, requires_grad: bool = True, low: float = -1, high: float = 1):
        t = self.lib.tensor(self.rng.uniform(low, high, shape).round(3).tolist(), dtype=self.lib.float64,
                            requires_grad=requires_grad)
        if requires_grad:
            self.inputs.append(t)
        return t

    def classes(self, count: int, shape):
        return self.lib.tensor(self.rng.integers(0, count, shape).tolist())

    def signs(self, shape):
        return self.lib.tensor(self.rng.choice([1.0, -1.0], shape).tolist(), dtype=self.lib.float64)


def _class_losses(d: _Draw, F, op: str, n: int, c: int, extra: int, red: str, flag: bool, flag2: bool):
    shape = (n, c) + (3,) * extra
    x = d.tensor(shape)
    target = d.classes(c, (n,) + (3,) * extra)
    if flag2 and op == "cross_entropy":
        target[0] = -100
    weight = d.lib.tensor(d.rng.uniform(0.5, 1.5, c).round(2).tolist(), dtype=d.lib.float64) if flag else None
    if op == "nll_loss":
        return F.nll_loss(F.log_softmax(x, 1), target, weight=weight, reduction=red)
    smoothing = {} if flag2 else {"label_smoothing": 0.1}
    return F.cross_entropy(x, target, weight=weight, reduction=red, **smoothing)


def _pointwise_losses(d: _Draw, F, op: str, n: int, c: int, extra: int, red: str, flag: bool, flag2: bool):
    shape = (n, c) + (3,) * extra
    if op == "soft_cross_entropy":
        return F.cross_entropy(d.tensor(shape), F.softmax(d.tensor(shape, False), 1), reduction=red,
                               label_smoothing=0.2 if flag else 0.0)
    if op == "binary_cross_entropy":
        p = d.tensor(shape, low=0.05, high=0.95)
        return F.binary_cross_entropy(p, d.tensor(shape, False, 0, 1),
                                      weight=d.tensor(shape, False, 0.5, 1.5) if flag else None, reduction=red)
    if op == "binary_cross_entropy_with_logits":
        x = d.tensor(shape)
        pos = d.tensor((c,) + (1,) * extra, False, 0.5, 2) if flag else None
        return F.binary_cross_entropy_with_logits(x, d.tensor(shape, False, 0, 1), pos_weight=pos, reduction=red)
    if op == "kl_div":
        x = d.tensor(shape)
        other = d.tensor(shape, False)
        target = F.log_softmax(other, 1) if flag else F.softmax(other, 1)
        return F.kl_div(F.log_softmax(x, 1), target, reduction="batchmean" if red == "mean" else red, log_target=flag)
    if op == "poisson_nll_loss":
        return F.poisson_nll_loss(d.tensor(shape), d.tensor(shape, False, 0, 3), log_input=flag, full=flag2,
                                  reduction=red)
    if op == "gaussian_nll_loss":
        x = d.tensor(shape)
        return F.gaussian_nll_loss(x, d.tensor(shape, False), d.tensor(shape, True, 0.1, 1), full=flag, reduction=red)
    if op == "hinge_embedding_loss":
        return F.hinge_embedding_loss(d.tensor(shape), d.signs(shape), margin=0.5, reduction=red)
    x = d.tensor(shape)
    target = d.tensor(shape if flag else shape[:-1] + (1,), requires_grad=flag2)  # (maybe broadcast: a warning)
    options = {"smooth_l1_loss": {"beta": 0.5}, "huber_loss": {"delta": 0.7}}.get(op, {})
    return getattr(F, op)(x, target, reduction=red, **options)


def _pair_losses(d: _Draw, F, op: str, n: int, c: int, extra: int, red: str, flag: bool, flag2: bool):
    signs = d.lib.tensor([1.0, -1.0, 1.0][:n], dtype=d.lib.float64)
    if op == "margin_ranking_loss":
        return F.margin_ranking_loss(d.tensor((n,)), d.tensor((n,)), signs, margin=0.1, reduction=red)
    if op == "cosine_embedding_loss":
        return F.cosine_embedding_loss(d.tensor((n, c)), d.tensor((n, c)), signs, margin=0.2, reduction=red)
    return F.triplet_margin_loss(d.tensor((n, c)), d.tensor((n, c)), d.tensor((n, c)), margin=0.5,
                                 p=1.0 if flag else 2.0, swap=flag2, reduction=red)


def _margin_losses(d: _Draw, F, op: str, n: int, c: int, extra: int, red: str, flag: bool, flag2: bool):
    shape = (n, c) + (3,) * extra
    # (with flag2, the legacy size_average/reduce arguments instead of reduction: their warning is compared too)
    reduction = {"reduce": red != "none", "size_average": red == "mean"} if flag2 else {"reduction": red}
    if op == "soft_margin_loss":
        return F.soft_margin_loss(d.tensor(shape), d.signs(shape if flag else shape[-1:]), **reduction)
    if op == "multilabel_soft_margin_loss":
        weight = d.tensor(shape[-1:], requires_grad=flag2, low=0.5, high=1.5) if flag else None
        return F.multilabel_soft_margin_loss(d.tensor(shape), d.tensor(shape, flag2, 0, 1), weight=weight,
                                             reduction=red)
    if op == "multi_margin_loss":  # a 3-D input (extra == 2) is torch's error
        x = d.tensor(shape if extra != 1 else (n, c))
        weight = d.lib.tensor(d.rng.uniform(0.5, 1.5, c).round(2).tolist(), dtype=d.lib.float64) if flag2 else None
        return F.multi_margin_loss(x, d.classes(c, (n,)), p=2 if flag else 1, margin=0.6, weight=weight,
                                   reduction=red)
    if op == "multilabel_margin_loss":  # -1 ends a row's targets; one sample when extra == 1
        rows = (c,) if extra == 1 else (n, c)
        target = d.lib.tensor(d.rng.integers(-1, c, rows).tolist())
        return F.multilabel_margin_loss(d.tensor(rows), target, **reduction)
    distance = None if flag else (lambda a, b: 1.0 - F.cosine_similarity(a, b))
    return F.triplet_margin_with_distance_loss(d.tensor((n, c)), d.tensor((n, c)), d.tensor((n, c)),
                                               distance_function=distance, margin=0.5, swap=flag2, reduction=red)


def _norms(d: _Draw, F, op: str, n: int, c: int, extra: int, red: str, flag: bool, flag2: bool):
    shape = (n, c) + (3,) * extra
    x = d.tensor(shape)
    if op == "layer_norm":
        normalized = shape[1:] if flag else shape[-1:]
        weight, bias = d.tensor(normalized), d.tensor(normalized)
        return F.layer_norm(x, normalized, weight if flag2 else None, bias if flag2 else None)
    if op == "group_norm":
        weight, bias = d.tensor((c,)), d.tensor((c,))
        return F.group_norm(x, 1 if c % 2 else 2, weight if flag else None, bias if flag else None)
    if op == "batch_norm":
        mean, var = d.lib.zeros(c, dtype=d.lib.float64), d.lib.ones(c, dtype=d.lib.float64)
        weight, bias = d.tensor((c,)), d.tensor((c,))
        out = F.batch_norm(x, mean if flag2 else None, var if flag2 else None, weight if flag else None,
                           bias if flag else None, training=True, momentum=0.3)
        # (with running statistics, their updated values enter the output: they must agree too)
        return out + 1e-3 * (mean.sum() + 2 * var.sum()) if flag2 else out
    if op == "instance_norm":
        x = x if x.dim() >= 3 else d.tensor((n, c, 3))
        return F.instance_norm(x, weight=d.tensor((c,)) if flag else None)
    if op == "normalize":
        return F.normalize(x, p=1.0 if flag else 2.0, dim=1)
    if op == "cosine_similarity":
        return F.cosine_similarity(x, d.tensor(shape), dim=1)
    if op == "pairwise_distance":
        return F.pairwise_distance(x, d.tensor(shape), p=1.5 if flag else 2.0, keepdim=flag2)
    if op == "embedding":
        return F.embedding(d.classes(5, (n, 2)), d.tensor((5, c)), padding_idx=0 if flag else None)
    if op == "one_hot":
        return F.one_hot(d.classes(c, (n,)), num_classes=c if flag else -1).to(d.lib.float64)
    if op == "dropout_eval":
        return F.dropout(x, 0.5, training=False)
    return F.glu(d.tensor((n, 2 * c)), dim=1)


_BUILDERS = {**dict.fromkeys(("cross_entropy", "nll_loss"), _class_losses),
             **dict.fromkeys(("soft_cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
                              "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
                              "poisson_nll_loss", "gaussian_nll_loss", "hinge_embedding_loss"), _pointwise_losses),
             **dict.fromkeys(("margin_ranking_loss", "cosine_embedding_loss", "triplet_margin_loss"), _pair_losses),
             **dict.fromkeys(("soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
                              "multilabel_margin_loss", "triplet_margin_with_distance_loss"), _margin_losses),
             **dict.fromkeys(("layer_norm", "group_norm", "batch_norm", "instance_norm", "normalize",
                              "cosine_similarity", "pairwise_distance", "embedding", "one_hot", "dropout_eval",
                              "glu"), _norms)}


def _case(seed: int) -> tuple:
    rng = np.random.default_rng(seed)
    return (str(rng.choice(sorted(_BUILDERS))), int(rng.integers(1, 4)), int(rng.integers(1, 5)),
            int(rng.integers(0, 3)), str(rng.choice(["mean", "sum", "none"])), bool(rng.integers(2)),
            bool(rng.integers(2)), int(rng.integers(1 << 30)))


# Functions whose output node differs from torch's: composed of other operators here (torch: GluBackward0).
_COMPOSED_HERE = {"glu"}


def _run(lib, case: tuple) -> tuple:
    op, *args, seed = case
    draw = _Draw(lib, seed)
    log: list = []
    with warnings.catch_warnings(record=True) as caught, np.errstate(all="ignore"):
        warnings.simplefilter("always")
        try:
            y = _BUILDERS[op](draw, lib.nn.functional, op, *args)
            log.append(("out", tuple(y.shape), np.asarray(y.detach().tolist(), dtype=float).reshape(-1)))
            if y.requires_grad:
                if op not in _COMPOSED_HERE:
                    log.append(("node", y.grad_fn.name(), np.zeros(0)))
                (y * lib.linspace(-1, 1, y.numel(), dtype=lib.float64).reshape(y.shape)).sum().backward()
                log += [("grad", tuple(t.shape), np.asarray(t.grad.tolist(), dtype=float).reshape(-1))
                        for t in draw.inputs if t.grad is not None]
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            log.append(("error", type(exc).__name__, str(exc).split("\n")[0]))
    return log, warning_texts(caught)


@pytest.mark.parametrize("seed", range(N_CASES))
def test_random_loss_or_norm_as_in_torch(seed):
    case = _case(seed)
    (ours, our_warnings), (theirs, their_warnings) = _run(tg, case), _run(torch, case)
    assert our_warnings == their_warnings
    assert_logs_match(ours, theirs, rtol=1e-5, atol=1e-7, equal_nan=True)


def test_cases_cover_every_function():
    assert {_case(seed)[0] for seed in range(N_CASES)} == set(_BUILDERS)
