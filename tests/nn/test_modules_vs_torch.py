"""nn modules and functions on the inputs users give them (unbatched inputs, options, wrong shapes): torch's
output (dtype, shape, values), or its error, and the same warnings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import recorded_graph, tg, torch, warning_texts


def mod(name, *args, **kwargs):
    """A module whose parameters are set to the same values in both libraries."""

    def build(lib):
        module = getattr(lib.nn, name)(*args, **kwargs)
        with lib.no_grad():
            for p in module.parameters():
                p.copy_(lib.linspace(-1, 1, p.numel()).reshape(p.shape))
        return module

    return build


def X(lib, *shape):  # noqa: N802 - an input, as in the formulas
    return lib.linspace(-2, 2, int(np.prod(shape))).reshape(*shape)


CASES = {
 "Conv2d unbatched": lambda L: mod("Conv2d", 2, 3, 3, padding=1)(L)(X(L, 2, 5, 5)),
 "Conv2d wrong dims": lambda L: mod("Conv2d", 2, 3, 3)(L)(X(L, 5, 5)),
 "Conv1d unbatched": lambda L: mod("Conv1d", 2, 3, 3)(L)(X(L, 2, 6)),
 "ConvT2d": lambda L: mod("ConvTranspose2d", 2, 3, 3, stride=2)(L)(X(L, 1, 2, 4, 4)),
 "ConvT2d output_size": lambda L: mod("ConvTranspose2d", 2, 3, 3, stride=2)(L)(X(L, 1, 2, 4, 4), output_size=[10, 10]),
 "Conv2d padding same": lambda L: mod("Conv2d", 2, 3, 4, padding="same")(L)(X(L, 1, 2, 5, 5)),
 "Conv2d padding same stride": lambda L: mod("Conv2d", 2, 3, 4, padding="same", stride=2)(L),
 "Conv2d groups": lambda L: mod("Conv2d", 4, 4, 3, groups=2)(L)(X(L, 1, 4, 5, 5)),
 "Conv2d dilation": lambda L: mod("Conv2d", 2, 2, 3, dilation=2)(L)(X(L, 1, 2, 7, 7)),
 "Conv2d padding_mode reflect": lambda L: mod("Conv2d", 2, 2, 3, padding=1, padding_mode="reflect")(L)(X(L, 1, 2, 5, 5)),
 "Conv2d padding_mode circular": lambda L: mod("Conv2d", 2, 2, 3, padding=1, padding_mode="circular")(L)(X(L, 1, 2, 5, 5)),
 "Linear 1d": lambda L: mod("Linear", 3, 2)(L)(X(L, 3)),
 "Linear 3d": lambda L: mod("Linear", 3, 2)(L)(X(L, 2, 4, 3)),
 "Bilinear": lambda L: mod("Bilinear", 2, 3, 4)(L)(X(L, 5, 2), X(L, 5, 3)),
 "BatchNorm1d 3d": lambda L: mod("BatchNorm1d", 3)(L)(X(L, 2, 3, 4)),
 "BatchNorm1d wrong": lambda L: mod("BatchNorm1d", 3)(L)(X(L, 2, 4)),
 "BatchNorm2d batch1 train": lambda L: mod("BatchNorm1d", 3)(L)(X(L, 1, 3)),
 "BatchNorm2d eval": lambda L: mod("BatchNorm2d", 3)(L).eval()(X(L, 2, 3, 2, 2)),
 "BatchNorm running": lambda L: (lambda m: (m(X(L, 4, 3)), m.running_mean, m.running_var, m.num_batches_tracked)[1:])(mod("BatchNorm1d", 3, momentum=None)(L)),
 "LayerNorm": lambda L: mod("LayerNorm", [2, 3])(L)(X(L, 4, 2, 3)),
 "LayerNorm no affine": lambda L: mod("LayerNorm", 3, elementwise_affine=False, bias=False)(L)(X(L, 4, 3)),
 "GroupNorm": lambda L: mod("GroupNorm", 2, 4)(L)(X(L, 2, 4, 3)),
 "MaxPool2d unbatched": lambda L: mod("MaxPool2d", 2)(L)(X(L, 2, 5, 5)),
 "MaxPool2d ceil": lambda L: mod("MaxPool2d", 2, ceil_mode=True)(L)(X(L, 1, 1, 5, 5)),
 "MaxPool2d indices": lambda L: mod("MaxPool2d", 2, return_indices=True)(L)(X(L, 1, 1, 4, 4))[1],
 "AvgPool2d count_include_pad": lambda L: mod("AvgPool2d", 3, stride=2, padding=1, count_include_pad=False)(L)(X(L, 1, 1, 5, 5)),
 "AdaptiveAvgPool2d": lambda L: mod("AdaptiveAvgPool2d", (3, 2))(L)(X(L, 1, 2, 7, 5)),
 "AdaptiveAvgPool2d None": lambda L: mod("AdaptiveAvgPool2d", (None, 2))(L)(X(L, 1, 2, 7, 5)),
 "MaxPool1d": lambda L: mod("MaxPool1d", 3, stride=2)(L)(X(L, 1, 2, 9)),
 "Embedding 2d": lambda L: mod("Embedding", 5, 2)(L)(L.tensor([[0, 4], [1, 1]])),
 "Embedding oob": lambda L: mod("Embedding", 5, 2)(L)(L.tensor([5])),
 "Embedding max_norm": lambda L: mod("Embedding", 5, 3, max_norm=1.0)(L)(L.tensor([1, 2])),
 "CrossEntropy unbatched": lambda L: L.nn.CrossEntropyLoss()(X(L, 4), L.tensor(2)),
 "CrossEntropy 4d": lambda L: L.nn.CrossEntropyLoss()(X(L, 2, 3, 2, 2), L.tensor([[[0, 1], [2, 0]], [[1, 1], [0, 2]]])),
 "CrossEntropy target oob": lambda L: L.nn.CrossEntropyLoss()(X(L, 2, 3), L.tensor([0, 3])),
 "CrossEntropy float target wrong shape": lambda L: L.nn.CrossEntropyLoss()(X(L, 2, 3), X(L, 2, 4)),
 "NLLLoss weight ignore": lambda L: L.nn.NLLLoss(weight=L.tensor([1., 2., 3.]), ignore_index=1)(X(L, 3, 3), L.tensor([0, 1, 2])),
 "BCELoss oob": lambda L: L.nn.BCELoss()(X(L, 3), L.ones(3)),
 "BCEWithLogits pos_weight": lambda L: L.nn.BCEWithLogitsLoss(pos_weight=L.tensor([2.0, 1.0]))(X(L, 3, 2), L.ones(3, 2)),
 "KLDiv batchmean": lambda L: L.nn.KLDivLoss(reduction="batchmean")(X(L, 2, 3), L.ones(2, 3) / 3),
 "KLDiv mean warns": lambda L: L.nn.KLDivLoss()(X(L, 2, 3), L.ones(2, 3) / 3),
 "HuberLoss delta": lambda L: L.nn.HuberLoss(delta=0.5)(X(L, 4), L.zeros(4)),
 "SmoothL1 beta0": lambda L: L.nn.SmoothL1Loss(beta=0.0)(X(L, 4), L.zeros(4)),
 "Flatten": lambda L: L.nn.Flatten()(X(L, 2, 3, 4)),
 "Flatten 1d": lambda L: L.nn.Flatten(0)(X(L, 3)),
 "Unflatten": lambda L: L.nn.Unflatten(1, (2, 2))(X(L, 3, 4)),
 "Softmax dim None": lambda L: L.nn.Softmax()(X(L, 2, 3)),
 "F.softmax no dim": lambda L: L.nn.functional.softmax(X(L, 2, 3)),
 "LogSoftmax": lambda L: L.nn.LogSoftmax(dim=1)(X(L, 2, 3)),
 "Dropout eval": lambda L: L.nn.Dropout(0.5).eval()(X(L, 4)),
 "Dropout p=1": lambda L: L.nn.Dropout(1.0)(X(L, 4)),
 "Dropout bad p": lambda L: L.nn.Dropout(1.5),
 "Identity": lambda L: L.nn.Identity(3, foo=1)(X(L, 2)),
 "PReLU": lambda L: mod("PReLU")(L)(X(L, 4)),
 "Hardtanh": lambda L: L.nn.Hardtanh(-0.5, 0.5)(X(L, 5)),
 "Softplus beta": lambda L: L.nn.Softplus(beta=2, threshold=1)(X(L, 5)),
 "GELU tanh": lambda L: L.nn.GELU(approximate="tanh")(X(L, 5)),
 "Upsample nearest": lambda L: L.nn.Upsample(scale_factor=2)(X(L, 1, 1, 2, 2)),
 "Upsample bilinear": lambda L: L.nn.Upsample(scale_factor=2, mode="bilinear")(X(L, 1, 1, 2, 2)),
 "interpolate size": lambda L: L.nn.functional.interpolate(X(L, 1, 1, 3, 3), size=(5, 4), mode="bilinear", align_corners=True),
 "pad negative": lambda L: L.nn.functional.pad(X(L, 1, 4), (-1, 1)),
 "pad reflect too big": lambda L: L.nn.functional.pad(X(L, 1, 1, 3), (3, 3), mode="reflect"),
 "one_hot": lambda L: L.nn.functional.one_hot(L.tensor([0, 2]), 4),
 "one_hot auto": lambda L: L.nn.functional.one_hot(L.tensor([0, 2])),
 "one_hot neg": lambda L: L.nn.functional.one_hot(L.tensor([-1])),
 "normalize": lambda L: L.nn.functional.normalize(X(L, 2, 3), dim=0),
 "cosine_similarity": lambda L: L.nn.functional.cosine_similarity(X(L, 2, 3), X(L, 2, 3) + 1),
 "pairwise_distance": lambda L: L.nn.functional.pairwise_distance(X(L, 2, 3), L.zeros(2, 3)),
 "unfold": lambda L: L.nn.functional.unfold(X(L, 1, 2, 4, 4), 2, stride=2),
 "fold": lambda L: L.nn.functional.fold(X(L, 1, 8, 4), (4, 4), 2, stride=2),
 "ModuleList index": lambda L: L.nn.ModuleList([L.nn.ReLU(), L.nn.Tanh()])[-1],
 "ModuleDict": lambda L: L.nn.ModuleDict({"a": L.nn.ReLU()})["a"],
 "Sequential slice": lambda L: L.nn.Sequential(L.nn.ReLU(), L.nn.Tanh(), L.nn.Sigmoid())[1:],
 "state_dict keys": lambda L: list(L.nn.Sequential(L.nn.Linear(2, 2), L.nn.BatchNorm1d(2)).state_dict().keys()),
 "named_parameters": lambda L: [n for n, _ in L.nn.Sequential(L.nn.Linear(2, 2), L.nn.BatchNorm1d(2)).named_parameters()],
 "buffers": lambda L: [n for n, _ in L.nn.Sequential(L.nn.Linear(2, 2), L.nn.BatchNorm1d(2)).named_buffers()],
 "parameters shared": lambda L: (lambda l: len(list(L.nn.Sequential(l, l).parameters())))(L.nn.Linear(2, 2)),
 "train flag": lambda L: (lambda m: (m.eval(), m[0].training, m.train(), m[0].training))(L.nn.Sequential(L.nn.Dropout())),
 "clip_grad_norm": lambda L: (lambda p: (setattr(p, "grad", L.ones(3) * 4), L.nn.utils.clip_grad_norm_([p], 1.0), p.grad)[1:])(L.nn.Parameter(L.ones(3))),
 "init kaiming": lambda L: (L.manual_seed(0), L.nn.init.calculate_gain("leaky_relu", 0.2), L.nn.init._calculate_fan_in_and_fan_out(L.empty(3, 4, 5)))[1:],
 "MarginRankingLoss": lambda L: L.nn.MarginRankingLoss(margin=0.2)(X(L, 4), X(L, 4).flip(0), L.tensor([1., -1., 1., -1.])),
 "MarginRankingLoss dims": lambda L: L.nn.MarginRankingLoss()(X(L, 4), X(L, 4), L.ones(1, 4)),
 "HingeEmbeddingLoss": lambda L: L.nn.HingeEmbeddingLoss(reduction="sum")(X(L, 4), L.tensor([1., -1., 1., -1.])),
 "CosineEmbeddingLoss": lambda L: L.nn.CosineEmbeddingLoss(0.1)(X(L, 2, 3), X(L, 2, 3).flip(1), L.tensor([1., -1.])),
 "CosineEmbeddingLoss dims": lambda L: L.nn.CosineEmbeddingLoss()(X(L, 3), X(L, 3), L.tensor([1.])),
 "TripletMarginLoss swap": lambda L: L.nn.TripletMarginLoss(swap=True)(X(L, 2, 3), X(L, 2, 3) * 0.5, X(L, 2, 3).flip(0)),
 "TripletMarginLoss margin": lambda L: L.nn.TripletMarginLoss(margin=0.0),
 "triplet dims": lambda L: L.nn.functional.triplet_margin_loss(X(L, 2, 3), X(L, 3), X(L, 2, 3)),
 "PoissonNLLLoss full": lambda L: L.nn.PoissonNLLLoss(log_input=False, full=True)(X(L, 4).abs() + 0.5, X(L, 4).abs() * 2),
 "poisson bad reduction": lambda L: L.nn.functional.poisson_nll_loss(X(L, 2), X(L, 2), reduction="avg"),
 "GaussianNLLLoss": lambda L: L.nn.GaussianNLLLoss(full=True)(X(L, 2, 3), X(L, 2, 3) * 0.5, X(L, 2).abs() + 0.1),
 "GaussianNLLLoss float var": lambda L: L.nn.functional.gaussian_nll_loss(X(L, 2, 3), X(L, 2, 3) * 0.5, 0.5),
 "GaussianNLLLoss bad var": lambda L: L.nn.functional.gaussian_nll_loss(X(L, 2, 3), X(L, 2, 3), L.ones(3, 2)),
 "GaussianNLLLoss negative var": lambda L: L.nn.functional.gaussian_nll_loss(X(L, 2, 3), X(L, 2, 3), -L.ones(2, 3)),
 "init orthogonal": lambda L: L.nn.init.orthogonal_(L.empty(3, 3)).shape,
}


def _outcome(case, lib):
    # warn-once warnings (TORCH_WARN_ONCE) are compared as if each call were the process's first
    always = lib.is_warn_always_enabled()
    lib.set_warn_always(True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = case(lib)
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            result = (type(exc).__name__, str(exc))
        finally:
            lib.set_warn_always(always)
    messages = warning_texts(caught)
    return result, messages


def _plain(result):
    if hasattr(result, "shape") and hasattr(result, "detach"):
        return str(result.dtype), tuple(result.shape), np.asarray(result.detach().tolist(), dtype=float)
    if isinstance(result, (tuple, list)):
        return [_plain(r) for r in result]
    return result if isinstance(result, (str, int, float, bool, type(None))) else repr(result)


def _assert_same(ours, theirs):
    if isinstance(ours, list) and isinstance(theirs, list):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _assert_same(a, b)
    elif isinstance(ours, tuple) and len(ours) == 3 and isinstance(ours[2], np.ndarray):
        assert ours[:2] == theirs[:2]
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5, atol=1e-6)
    else:
        assert ours == theirs


@pytest.mark.parametrize("name", CASES)
def test_same_as_torch(name):
    (ours, our_warnings), (theirs, their_warnings) = _outcome(CASES[name], tg), _outcome(CASES[name], torch)
    assert our_warnings == their_warnings
    _assert_same(_plain(ours), _plain(theirs))


def test_cdist_double_backward_error():
    """The direct route's backward operator has no derivative, in both libraries, with the same error."""

    def message(lib):
        x1 = lib.linspace(-1, 1, 6, dtype=lib.float64).reshape(3, 2).requires_grad_()
        (g,) = lib.autograd.grad(lib.cdist(x1, lib.ones(4, 2, dtype=lib.float64), p=3).sum(), x1, create_graph=True)
        with pytest.raises(NotImplementedError) as info:
            g.sum().backward()
        return str(info.value)

    assert message(tg) == message(torch)


def test_batch_norm_twice_then_backward():
    """Two training forwards through one BatchNorm before a backward work, as in torch: the running statistics
    are updated inside the kernel (their version does not change), and each node keeps its batch statistics."""

    def program(lib):
        bn = mod("BatchNorm1d", 3)(lib)
        x = X(lib, 4, 3).requires_grad_()
        y1, y2 = bn(x), bn(x * 2)
        saved = [tuple(y1.grad_fn._saved_result1.shape), y1.grad_fn._saved_training]
        (y1.sum() + (y2 * y2).sum()).backward()
        return saved, bn.running_mean._version, np.round(np.asarray(x.grad.tolist()), 5).tolist()

    assert program(tg) == program(torch)


def test_normalization_statistics_differentiability():
    """layer_norm's and batch_norm's saved statistics do not require grad; group_norm's do (torch's
    output_differentiability)."""

    def flags(lib):
        x = X(lib, 4, 6, 5).requires_grad_()
        F = lib.nn.functional
        nodes = [F.layer_norm(x, (5,)).grad_fn, F.batch_norm(x, None, None, training=True).grad_fn,
                 F.group_norm(x, 3).grad_fn]
        return [(n._saved_result1.requires_grad, n._saved_result2.requires_grad) for n in nodes]

    assert flags(tg) == flags(torch)


@pytest.mark.parametrize("rows", [2, 30])
def test_cdist_has_no_forward_mode(rows):
    """Neither cdist route has a forward-mode formula in torch: the same error in both libraries."""

    def message(lib):
        x = lib.linspace(0, 1, rows * 3, dtype=lib.float64).reshape(rows, 3)
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(x, lib.ones_like(x))
            with pytest.raises(NotImplementedError) as info:
                lib.cdist(dual, x[:2] * 2)
        return str(info.value)

    assert message(tg) == message(torch)


def _grads(build, *shapes):
    """A module's output, and the gradients of its inputs and parameters for a fixed weighting of the output."""

    def case(lib):
        module = build(lib)
        inputs = [X(lib, *s).double().requires_grad_() for s in shapes]
        module = module.double()
        out = module(*inputs)
        (out * lib.linspace(-1, 1, out.numel(), dtype=lib.float64).reshape(out.shape)).sum().backward()
        return [out] + [t.grad for t in inputs] + [p.grad for p in module.parameters()]

    return case


LATE_CASES = {
    "RMSNorm": _grads(mod("RMSNorm", [2, 3]), (4, 2, 3)),
    "RMSNorm eps": _grads(mod("RMSNorm", 3, eps=1e-2), (2, 3)),
    "RMSNorm no affine": _grads(mod("RMSNorm", 3, elementwise_affine=False), (2, 3)),
    "RMSNorm repr": lambda L: repr(L.nn.RMSNorm([2, 3], elementwise_affine=False)),
    "rms_norm half": lambda L: L.nn.functional.rms_norm(X(L, 2, 3).half(), (3,)),
    "rms_norm wrong shape": lambda L: L.nn.functional.rms_norm(X(L, 2, 3), (4,)),
    "rms_norm wrong weight": lambda L: L.nn.functional.rms_norm(X(L, 2, 3), (3,), L.ones(4)),
    "rms_norm graph": lambda L: recorded_graph([L.nn.functional.rms_norm(X(L, 2, 3).requires_grad_(), (3,),
                                                                         L.ones(3, requires_grad=True))]),
    "CosineSimilarity": _grads(mod("CosineSimilarity", dim=0, eps=1e-6), (3, 4), (3, 4)),
    "PairwiseDistance": _grads(mod("PairwiseDistance", p=1.0, keepdim=True), (3, 4), (3, 4)),
    "Fold": _grads(mod("Fold", (3, 3), 2), (1, 4, 4)),
    "Unfold": _grads(mod("Unfold", 2, padding=1), (1, 2, 3, 3)),
    "Unfold repr": lambda L: repr(L.nn.Unfold((2, 3), stride=2)),
    "Softmax2d": _grads(mod("Softmax2d"), (2, 3, 2, 2)),
    "Softmax2d 2d input": lambda L: L.nn.Softmax2d()(X(L, 2, 3)),
    "UpsamplingNearest2d": _grads(mod("UpsamplingNearest2d", scale_factor=2), (1, 1, 2, 3)),
    "UpsamplingBilinear2d": _grads(mod("UpsamplingBilinear2d", size=(3, 4)), (1, 2, 2, 3)),
    "UpsamplingBilinear2d repr": lambda L: repr(L.nn.UpsamplingBilinear2d(scale_factor=2)),
    "upsample_nearest": lambda L: L.nn.functional.upsample_nearest(X(L, 1, 1, 2, 2), scale_factor=2),
    "upsample_bilinear": lambda L: L.nn.functional.upsample_bilinear(X(L, 1, 1, 2, 2), size=3),
    "ZeroPad1d": _grads(mod("ZeroPad1d", (1, 2)), (2, 3)),
    "ZeroPad1d repr": lambda L: repr(L.nn.ZeroPad1d(2)),
}


@pytest.mark.parametrize("name", LATE_CASES)
def test_later_modules_same_as_torch(name):
    (ours, our_warnings), (theirs, their_warnings) = _outcome(LATE_CASES[name], tg), _outcome(LATE_CASES[name], torch)
    _assert_same(_plain(ours), _plain(theirs))
    assert our_warnings == their_warnings


# ---- margin losses -------------------------------------------------------------------------------------------


def _targets(L):
    """Targets of the margin losses for a (3, 4) input: signs, probabilities, class indices, -1-ended label rows."""
    return {"signs": L.tensor([[1., -1., 1., -1.], [-1., -1., 1., 1.], [1., 1., -1., 1.]]),
            "probs": L.linspace(0, 1, 12).reshape(3, 4), "classes": L.tensor([3, 0, 2]),
            "labels": L.tensor([[3, 0, -1, 1], [1, -1, 2, 2], [0, 1, 2, 3]])}


# (module class, constructor kwargs (weight: a class weight), functional, target kind, extra functional kwargs)
MARGIN_MODULES = [
    ("SoftMarginLoss", {}, "soft_margin_loss", "signs"),
    ("SoftMarginLoss", {"reduction": "none"}, "soft_margin_loss", "signs"),
    ("MultiLabelSoftMarginLoss", {"weight": True, "reduction": "sum"}, "multilabel_soft_margin_loss", "probs"),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": True}, "multi_margin_loss", "classes"),
    ("MultiMarginLoss", {"reduction": "none"}, "multi_margin_loss", "classes"),
    ("MultiLabelMarginLoss", {"size_average": False}, "multilabel_margin_loss", "labels"),
    ("TripletMarginWithDistanceLoss", {"swap": True, "margin": 0.3}, "triplet_margin_with_distance_loss", None),
    ("TripletMarginWithDistanceLoss", {"distance_function": "cosine", "reduction": "none"},
     "triplet_margin_with_distance_loss", None),
]


def _margin_module_case(lib, name, kwargs, functional, target_kind):
    kwargs = dict(kwargs)
    if kwargs.get("weight"):
        kwargs["weight"] = lib.tensor([0.5, 1.0, 1.5, 2.0], dtype=lib.float64)
    if kwargs.get("distance_function") == "cosine":
        kwargs["distance_function"] = lambda a, b: 1.0 - lib.nn.functional.cosine_similarity(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the legacy size_average warning is compared in test_same_as_torch)
        module = getattr(lib.nn, name)(**kwargs)
    x = X(lib, 3, 4).double().requires_grad_()
    if target_kind is None:
        inputs = (x, (X(lib, 3, 4) * 0.5).double(), X(lib, 3, 4).flip(0).double())
    else:
        target = _targets(lib)[target_kind]
        inputs = (x, target.double() if target.is_floating_point() else target)
    out = module(*inputs)
    options = {k: getattr(module, k) for k in ("p", "margin", "swap", "distance_function") if hasattr(module, k)}
    if getattr(module, "weight", None) is not None:
        options["weight"] = module.weight
    assert lib.equal(out, getattr(lib.nn.functional, functional)(*inputs, reduction=module.reduction, **options))
    (g,) = lib.autograd.grad((out * lib.linspace(-1, 1, out.numel(), dtype=lib.float64).reshape(out.shape)).sum(), x)
    state = {k: v.tolist() for k, v in module.state_dict().items()}
    return repr(module), state, module.reduction, out.grad_fn.name(), _plain(out), _plain(g)


@pytest.mark.parametrize("case", MARGIN_MODULES, ids=[f"{c[0]}-{i}" for i, c in enumerate(MARGIN_MODULES)])
def test_margin_loss_modules_as_in_torch(case):
    """Each margin-loss module: its functional's value, torch's repr, buffers, reduction, node, value and gradient."""
    ours, theirs = _margin_module_case(tg, *case), _margin_module_case(torch, *case)
    assert ours[:4] == theirs[:4]
    for a, b in zip(ours[4:], theirs[4:]):
        _assert_same(a, b)


MARGIN_CASES = {
 "multi_margin 0-D input": lambda L: L.nn.functional.multi_margin_loss(L.tensor(0.5), L.tensor(0), reduction="none"),
 "multi_margin 1-D input": lambda L: L.nn.functional.multi_margin_loss(X(L, 3), L.tensor(2), reduction="none"),
 "multi_margin 1-D input, target [1]": lambda L: L.nn.functional.multi_margin_loss(X(L, 3), L.tensor([2]), reduction="none"),
 "multi_margin target 0-D batch 1": lambda L: L.nn.functional.multi_margin_loss(X(L, 1, 4), L.tensor(1), reduction="none"),
 "multi_margin empty classes": lambda L: L.nn.functional.multi_margin_loss(L.zeros(5, 0), L.zeros(5, dtype=L.long)),
 "multi_margin empty batch none": lambda L: L.nn.functional.multi_margin_loss(L.zeros(0, 3), L.zeros(0, dtype=L.long), reduction="none"),
 "multi_margin 3-D": lambda L: L.nn.functional.multi_margin_loss(X(L, 2, 3, 4), L.zeros(2, dtype=L.long)),
 "multi_margin target shape": lambda L: L.nn.functional.multi_margin_loss(X(L, 5, 4), L.zeros(5, 4, dtype=L.long)),
 "multi_margin target size": lambda L: L.nn.functional.multi_margin_loss(X(L, 4), L.zeros(2, dtype=L.long)),
 "multi_margin target dtype": lambda L: L.nn.functional.multi_margin_loss(X(L, 5, 4), L.zeros(5)),
 "multi_margin target int32": lambda L: L.nn.functional.multi_margin_loss(X(L, 5, 4), L.zeros(5, dtype=L.int32)),
 "multi_margin target out of range": lambda L: L.nn.functional.multi_margin_loss(X(L, 5, 4), L.full((5,), 4)),
 "multi_margin negative target": lambda L: L.nn.functional.multi_margin_loss(X(L, 5, 4), L.full((5,), -1)),
 "multi_margin weight 0-D": lambda L: L.nn.functional.multi_margin_loss(X(L, 5, 4), L.zeros(5, dtype=L.long), weight=L.tensor(1.)),
 "multi_margin weight size": lambda L: L.nn.functional.multi_margin_loss(X(L, 5, 4), L.zeros(5, dtype=L.long), weight=L.ones(5)),
 "multi_margin weight dtype": lambda L: L.nn.functional.multi_margin_loss(X(L, 5, 4), L.zeros(5, dtype=L.long), weight=L.ones(4, dtype=L.double)),
 "multi_margin weight requires grad": lambda L: L.nn.functional.multi_margin_loss(X(L, 5, 4), L.zeros(5, dtype=L.long), weight=L.ones(4, requires_grad=True)),
 "multi_margin p=3": lambda L: L.nn.functional.multi_margin_loss(X(L, 5, 4), L.zeros(5, dtype=L.long), p=3),
 "multi_margin p=2.0": lambda L: L.nn.functional.multi_margin_loss(X(L, 5, 4), L.zeros(5, dtype=L.long), p=2.0),
 "multi_margin integer input": lambda L: L.nn.functional.multi_margin_loss(L.zeros(2, 3, dtype=L.long), L.zeros(2, dtype=L.long)),
 "multi_margin bad reduction": lambda L: L.nn.functional.multi_margin_loss(X(L, 2, 3), L.zeros(2, dtype=L.long), reduction="bad"),
 "multi_margin legacy reduce": lambda L: L.nn.functional.multi_margin_loss(X(L, 2, 3), L.tensor([2, 0]), reduce=False),
 "multilabel_margin 0-D": lambda L: L.nn.functional.multilabel_margin_loss(L.tensor(0.5), L.tensor([0]), reduction="none"),
 "multilabel_margin 1-D": lambda L: L.nn.functional.multilabel_margin_loss(X(L, 3), L.tensor([2, 0, -1]), reduction="none"),
 "multilabel_margin target shape": lambda L: L.nn.functional.multilabel_margin_loss(X(L, 2, 3), L.zeros(2, dtype=L.long)),
 "multilabel_margin target shape 1-D": lambda L: L.nn.functional.multilabel_margin_loss(X(L, 3), L.zeros(1, 3, dtype=L.long)),
 "multilabel_margin target dtype": lambda L: L.nn.functional.multilabel_margin_loss(X(L, 2, 3), L.zeros(2, 3)),
 "multilabel_margin out of range": lambda L: L.nn.functional.multilabel_margin_loss(X(L, 2, 3), L.full((2, 3), 3)),
 "multilabel_margin below -1": lambda L: L.nn.functional.multilabel_margin_loss(X(L, 2, 3), L.full((2, 3), -2)),
 "multilabel_margin 3-D": lambda L: L.nn.functional.multilabel_margin_loss(X(L, 2, 3, 4), L.zeros(2, 3, 4, dtype=L.long)),
 "multilabel_margin integer input": lambda L: L.nn.functional.multilabel_margin_loss(L.zeros(2, 3, dtype=L.long), L.zeros(2, 3, dtype=L.long)),
 "soft_margin shapes": lambda L: L.nn.functional.soft_margin_loss(X(L, 2, 3), L.ones(3, 2)),
 "soft_margin broadcast target": lambda L: L.nn.functional.soft_margin_loss(X(L, 2, 3), L.tensor([1., -1., 1.]), reduction="none"),
 "soft_margin target wider": lambda L: L.nn.functional.soft_margin_loss(X(L, 3), L.ones(2, 3)),
 "soft_margin integer target": lambda L: L.nn.functional.soft_margin_loss(X(L, 2, 3), L.ones(2, 3, dtype=L.long)),
 "soft_margin integer input": lambda L: L.nn.functional.soft_margin_loss(L.zeros(2, 3, dtype=L.long), L.ones(2, 3)),
 "soft_margin double target": lambda L: L.nn.functional.soft_margin_loss(X(L, 2, 3), L.ones(2, 3, dtype=L.double)),
 "soft_margin 0-D": lambda L: L.nn.functional.soft_margin_loss(L.tensor(0.3), L.tensor(-1.), reduction="none"),
 "soft_margin empty": lambda L: L.nn.functional.soft_margin_loss(L.zeros(0), L.zeros(0)),
 "soft_margin target requires grad": lambda L: L.nn.functional.soft_margin_loss(X(L, 3), L.ones(3, requires_grad=True)),
 "soft_margin legacy": lambda L: L.nn.SoftMarginLoss(size_average=False)(X(L, 3), L.ones(3)),
 "multilabel_soft_margin 0-D": lambda L: L.nn.functional.multilabel_soft_margin_loss(L.tensor(0.5), L.tensor(1.)),
 "multilabel_soft_margin 3-D": lambda L: L.nn.functional.multilabel_soft_margin_loss(X(L, 2, 3, 4), L.zeros(2, 3, 4), reduction="none"),
 "multilabel_soft_margin integer target": lambda L: L.nn.functional.multilabel_soft_margin_loss(X(L, 2, 3), L.ones(2, 3, dtype=L.long)),
 "multilabel_soft_margin bad reduction": lambda L: L.nn.functional.multilabel_soft_margin_loss(X(L, 2, 3), L.zeros(2, 3), reduction="bad"),
 "multilabel_soft_margin legacy": lambda L: L.nn.functional.multilabel_soft_margin_loss(X(L, 2, 3), L.zeros(2, 3), reduce=False),
 "triplet_distance margin": lambda L: L.nn.functional.triplet_margin_with_distance_loss(X(L, 2, 3), X(L, 2, 3), X(L, 2, 3), margin=0),
 "triplet_distance dims": lambda L: L.nn.functional.triplet_margin_with_distance_loss(X(L, 2, 3), X(L, 3), X(L, 2, 3)),
 "triplet_distance reduction": lambda L: L.nn.functional.triplet_margin_with_distance_loss(X(L, 2, 3), X(L, 2, 3), X(L, 2, 3), reduction="x"),
 "triplet_distance 1-D": lambda L: L.nn.functional.triplet_margin_with_distance_loss(X(L, 3), X(L, 3) * 0, X(L, 3) * 2),
 "triplet_distance positional": lambda L: L.nn.functional.triplet_margin_with_distance_loss(X(L, 2, 3), X(L, 2, 3), X(L, 2, 3), None),
 "TripletMarginWithDistanceLoss margin": lambda L: L.nn.TripletMarginWithDistanceLoss(margin=-1.0),
 "MultiMarginLoss p": lambda L: L.nn.MultiMarginLoss(p=3),
 "MultiMarginLoss weight 2-D": lambda L: L.nn.MultiMarginLoss(weight=L.ones(2, 2)),
}


@pytest.mark.parametrize("name", MARGIN_CASES)
def test_margin_losses_on_odd_input_as_in_torch(name):
    """0-D and 1-D inputs, wrong shapes and dtypes, legacy arguments: torch's result or error, and its warnings."""
    (ours, our_warnings), (theirs, their_warnings) = _outcome(MARGIN_CASES[name], tg), _outcome(MARGIN_CASES[name], torch)
    assert our_warnings == their_warnings
    _assert_same(_plain(ours), _plain(theirs))


@pytest.mark.parametrize("loss", ["multi_margin_loss", "multilabel_margin_loss"])
def test_multiclass_margin_losses_have_no_higher_derivatives(loss):
    """torch has no derivative of their backward operators (a NotImplemented node whose backward raises) and no
    forward-mode formula: the same node and the same errors here."""

    def errors(lib):
        x = X(lib, 3, 4).double().requires_grad_()
        target = lib.tensor([3, 0, 2]) if loss == "multi_margin_loss" else _targets(lib)["labels"]
        (g,) = lib.autograd.grad(getattr(lib.nn.functional, loss)(x, target), x, create_graph=True)
        with pytest.raises(RuntimeError) as backward_error:
            g.sum().backward()
        with lib.autograd.forward_ad.dual_level():
            dual = lib.autograd.forward_ad.make_dual(x.detach(), lib.ones_like(x))
            with pytest.raises(NotImplementedError) as forward_error:
                getattr(lib.nn.functional, loss)(dual, target)
        return g.grad_fn.name(), len(g.grad_fn.next_functions), str(backward_error.value), str(forward_error.value)

    assert errors(tg) == errors(torch)
