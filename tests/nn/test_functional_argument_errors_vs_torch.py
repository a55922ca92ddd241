"""Argument mistakes in ``nn.functional`` and the nn modules are refused as torch refuses them, in its words.

Most of torch's ``nn.functional`` is Python that ends in a call of a C++-bound operator (``F.cross_entropy`` calls
``cross_entropy_loss``, ``F.max_pool2d`` calls ``max_pool2d``, ``F.interpolate`` an ``upsample_*`` operator),
so a wrong argument is refused by that operator's parser, under its name; what fails earlier in torch's Python
(``F.sigmoid("a")`` is ``"a".sigmoid()``, ``F.dropout(x, p="a")`` compares ``p < 0.0``) fails with Python's
error. Each call below runs in both libraries; the exception type and the whole message must be torch's.

Left out, where tracegrad still answers differently (see the report of the change that added this file):
``F.normalize(x, p="a")`` (tracegrad's ``linalg.matrix_norm`` checks the dims before the order), a float list
with a wrong element after the first (``scale_factor=(2, "a")``: the parser checks the first element only), an
explicit ``stride=None`` next to another wrong argument of ``avg_pool*d`` (the parser does not take None for an
``int[n] stride=[]``), None where a number goes in losses composed of scalar operators (``margin=None``: those
operators read None as NaN), ``Tensor.pow(None)`` (lp_pool's ``norm_type``), anti-aliased interpolation (not
implemented), and messages that print an object's address or a set (which changes from one process to the next).
"""

from __future__ import annotations

import pytest

from tests._lib import Unknown, raised_quietly, spoiled_calls, tg, torch


def _env(lib) -> dict:
    """The names the snippets use, made afresh for each run (some snippets write into them)."""
    return {
        "torch": lib, "F": lib.nn.functional, "nn": lib.nn,
        "x": lib.ones(2, 3), "w": lib.ones(4, 3), "b": lib.ones(4), "img": lib.ones(1, 2, 4, 4),
        "k": lib.ones(3, 2, 2, 2), "t": lib.tensor([0, 1]), "x3": lib.ones(1, 2, 4), "k1": lib.ones(3, 2, 2),
        "vol": lib.ones(1, 2, 4, 4, 4), "k3": lib.ones(3, 2, 2, 2, 2), "p": lib.full((2, 3), 0.5),
        "idx": lib.tensor([[0, 1], [2, 3]]), "emb": lib.ones(5, 3), "theta": lib.ones(1, 2, 3),
        "grid": lib.zeros(1, 2, 2, 2), "q": lib.ones(1, 2, 3, 4), "y": lib.tensor([1.0, -1.0]),
        "cols": lib.ones(1, 8, 9), "l": lib.ones(2, 3).log_softmax(1), "g": lib.ones(2, 4), "U": Unknown,
    }


def _outcome(lib, source: str):
    return raised_quietly(lib, source, _env(lib))


# ---- written mistakes ----------------------------------------------------------------------------------------

SNIPPETS = [
    # activations: torch's Python calls a Tensor method (Python's AttributeError) or an operator (its parser)
    'F.relu("a")', 'F.relu([1.0])', "F.relu(x, 1, 2)", "F.relu(x, inplace=1)", 'F.relu(x, "a")', 'F.relu_("a")',
    'F.relu6("a")', "F.relu6(x, 1, 2)", 'F.leaky_relu("a")', 'F.leaky_relu(x, "a")', "F.leaky_relu(x, None)",
    'F.leaky_relu_(x, "a")', 'F.elu(x, alpha="a")', "F.elu(x, None)", 'F.elu_(x, "a")', "F.elu_(x, None)",
    'F.selu("a")', 'F.celu(x, "a")', 'F.gelu(x, approximate="foo")', "F.gelu(x, approximate=1)",
    'F.silu([1.0])', 'F.softplus(x, beta="a")', "F.softplus(x, None)", 'F.softplus(x, 1, "a")',
    'F.hardtanh(x, "a")', "F.hardtanh(x, 2.0, 1.0)", 'F.hardtanh(x, "a", "b")', 'F.hardtanh_(x, "a")',
    'F.sigmoid("a")', "F.sigmoid(x, 1)", "F.tanh([1.0])", "F.tanh(x, 1)", 'F.softmax("a", 1)', 'F.softmax("a")',
    'F.softmax(x, "a")', "F.softmax(x, 1.5)", 'F.log_softmax("a", 1)', 'F.softmin("a", 1)', 'F.softmin(x, "a")',
    'F.threshold(x, "a", 0.0)', "F.threshold(x, 0.5, None)", "F.threshold_(x, 0.5, None)",
    'F.logsigmoid("a")', 'F.softsign("a")', 'F.tanhshrink("a")', 'F.glu("a")', 'F.glu(x, "a")', "F.glu(g, 1.5)",
    'F.prelu("a", x)', 'F.hardshrink(x, "a")', 'F.rrelu("a")', 'F.rrelu(x, "a")', 'F.rrelu(x, 0.1, 0.3, "a")',
    "F.rrelu(x, training=1)", 'F.rrelu_(x, "a")', 'F.gumbel_softmax("a")',
    # dropout: p compared in Python first, then the operator (dropout, feature_dropout...) refuses the rest
    'F.dropout("a")', 'F.dropout(x, p="a")', "F.dropout(x, 1.5)", "F.dropout(x, -0.1)", "F.dropout(x, None)",
    'F.dropout(x, training="yes")', "F.dropout(x, 0.5, 1)", 'F.alpha_dropout(x, "a")', 'F.alpha_dropout("a")',
    'F.alpha_dropout(x, 0.5, "yes")', 'F.feature_alpha_dropout(img, 0.5, "yes")', 'F.dropout1d("a")',
    'F.dropout1d(x3, 0.5, "yes")', 'F.dropout2d("a")', 'F.dropout2d(img, 0.5, "yes")', "F.dropout2d(img, training=1)",
    'F.dropout3d("a")', 'F.dropout3d(vol, 0.5, "yes")',
    # linear and convolutions
    'F.linear(x, "a")', 'F.linear(x, w, "a")', 'F.linear("a", w)', "F.linear(x, w, b, 1)", "F.linear(x, [1.0])",
    'F.bilinear(x, x, "a")', 'F.conv2d(img, k, stride="a")', 'F.conv2d(img, k, padding="foo")',
    "F.conv2d(img, k, padding=1.5)", "F.conv2d(img, k, groups=1.5)", 'F.conv2d(img, "a")', 'F.conv2d("a", k)',
    'F.conv2d(img, k, None, (1, "a"))', "F.conv2d(img, k, None, (1, 1.5))", 'F.conv2d(img, k, dilation="a")',
    'F.conv1d(x3, "a")', 'F.conv3d(vol, k3, stride="a")', 'F.conv_transpose2d(img, torch.ones(2, 3, 2, 2), stride="a")',
    'F.conv_transpose2d(img, torch.ones(2, 3, 2, 2), padding="same")', 'F.conv_transpose3d(vol, "a")',
    # pooling: the operators take sizes as given, in ATen's lengths
    'F.max_pool2d(img, "a")', 'F.max_pool2d(img, 2, stride="a")', 'F.max_pool2d(img, 2, padding="a")',
    'F.max_pool2d(img, 2, ceil_mode="a")', "F.max_pool2d(img, 2.5)", 'F.max_pool2d(img, (2, "a"))',
    "F.max_pool2d(img, (2, 2, 2))", 'F.max_pool2d("a", 2)', 'F.max_pool2d(img, 2, return_indices="a")',
    "F.max_pool2d(img, 2, bogus=1)", "F.max_pool2d(img, 2, 1, 0, 1, False, False, 1)", 'F.max_pool1d(x3, "a")',
    "F.max_pool1d(x3, 2.5)", 'F.max_pool1d("a", 2)', "F.max_pool1d(x3, (2, 2))",
    "F.max_pool1d(x3, 2, return_indices=True, stride=(1, 1))", "F.max_pool1d(x3, 2, dilation=1.5)",
    'F.max_pool3d(vol, 2, stride="a")', "F.max_pool3d(vol, (2, 2))", 'F.max_pool2d_with_indices(img, "a")',
    "F.avg_pool2d(img, 2.5)", 'F.avg_pool2d(img, 2, "a")', 'F.avg_pool2d(img, 2, divisor_override="a")',
    "F.avg_pool2d(img, 2, divisor_override=1.5)", "F.avg_pool2d(img, (2, 2, 2))", 'F.avg_pool1d(x3, "a")',
    "F.avg_pool1d(x3, 2.5)", "F.avg_pool1d(x3, (2, 2))", 'F.avg_pool1d("a", 2)', "F.avg_pool3d(vol, 2.5)",
    "F.avg_pool3d(vol, (2, 2))", 'F.adaptive_avg_pool2d(img, "a")', "F.adaptive_avg_pool2d(img, 2.5)",
    'F.adaptive_avg_pool2d("a", 2)', "F.adaptive_avg_pool2d(img, [2, 2, 2])", "F.adaptive_avg_pool2d(x, (2, 2))",
    'F.adaptive_avg_pool1d(x3, "a")', "F.adaptive_avg_pool1d(x3, 2.5)", "F.adaptive_avg_pool1d(x3, (2, 2))",
    'F.adaptive_avg_pool3d(vol, "a")', "F.adaptive_avg_pool3d(vol, 2.5)", 'F.adaptive_max_pool2d(img, "a")',
    "F.adaptive_max_pool2d(img, 2.5)", 'F.adaptive_max_pool2d("a", 2)', "F.adaptive_max_pool2d(img, (2,))",
    'F.adaptive_max_pool1d(x3, "a")', "F.adaptive_max_pool1d(x3, (2, 2))", "F.adaptive_max_pool3d(vol, 2.5)",
    'F.lp_pool2d(img, 2, "a")', 'F.lp_pool2d(img, "a", 2)', "F.lp_pool2d(img, 2, None)", 'F.lp_pool1d(x3, 2, "a")',
    'F.lp_pool3d(vol, 2, "a")', 'F.lp_pool2d("a", 2, 2)',
    # unfold and fold (ATen's im2col and col2im)
    'F.unfold(img, "a")', 'F.unfold(img, 2, "a")', "F.unfold(img, 2.5)", "F.unfold(img, (2, 2, 2))",
    "F.unfold(img, 2, stride=0)", "F.unfold(img, 2, stride=0, padding=-1)", 'F.fold(cols, "a", 2)',
    'F.fold(cols, 4, "a")', "F.fold(cols, 4.5, 2)", "F.fold(cols, 4, 2, stride=0, dilation=0, padding=-1)",
    # normalization
    'F.batch_norm(x, "a", "b")', 'F.batch_norm("a", None, None)', 'F.batch_norm(x, None, None, "a")',
    'F.batch_norm(x, None, None, None, None, "a")', 'F.batch_norm(x, None, None, training=True, momentum="a")',
    "F.batch_norm(x, None, None, training=True, momentum=None)", 'F.batch_norm(x, None, None, training=True, eps="a")',
    'F.batch_norm(x, torch.zeros(3), torch.ones(3), eps="a")', "F.batch_norm(x, None, None, training=True, eps=0.0)",
    'F.instance_norm(img, "a")', 'F.instance_norm(img, use_input_stats="a")', 'F.instance_norm(img, eps="a")',
    'F.layer_norm(x, "a")', "F.layer_norm(x, 3)", 'F.layer_norm(x, (3,), "a")', 'F.layer_norm("a", (3,))',
    "F.layer_norm(x, (3.5,))", 'F.layer_norm(x, [3, "a"])', 'F.group_norm(img, "a")', "F.group_norm(img, 1.5)",
    'F.group_norm(img, 1, "a")', 'F.group_norm("a", 1)', "F.group_norm(img, 0)", "F.group_norm(torch.ones(1, 3), 2)",
    'F.rms_norm(x, "a")', "F.rms_norm(x, 3)", 'F.rms_norm(x, (3,), eps="a")', 'F.local_response_norm(img, "a")',
    "F.local_response_norm(img, 2.5)", 'F.normalize("a")', 'F.normalize(x, dim="a")', 'F.normalize(x, eps="a")',
    'F.normalize(x, 2, 1, 1e-12, "a")',
    # embeddings, one_hot, distances, padding
    'F.embedding(t, "a")', 'F.embedding("a", w)', 'F.embedding(t, w, padding_idx="a")',
    "F.embedding(t, w, padding_idx=1.5)", 'F.embedding(t, w, max_norm="a")', 'F.embedding(t, w, sparse="a")',
    "F.embedding(t, w, None, 1.0, None)", 'F.embedding_bag(idx, emb, sparse="a")', "F.embedding_bag(idx, emb, padding_idx=1.5)",
    'F.embedding_bag(idx, emb, mode="foo")', 'F.one_hot(t, "a")', "F.one_hot(x)", "F.one_hot(t, 2.5)",
    'F.cosine_similarity(x, "a")', "F.cosine_similarity(x, x, 1.5)", 'F.pairwise_distance(x, x, keepdim="a")',
    'F.pdist(x, "a")', 'F.pad(img, "a")', 'F.pad(img, (1, 1), value="a")', 'F.pixel_shuffle(img, "a")',
    # resampling and sampling grids
    'F.interpolate(img, scale_factor="a")', 'F.interpolate(img, size="a")', 'F.interpolate(img, mode="foo", size=2)',
    "F.interpolate(img, size=2.5)", 'F.interpolate(img, size=(2, "a"))', "F.interpolate(img, size=(2, 2, 2))",
    "F.interpolate(img)", 'F.interpolate("a", 2)', 'F.interpolate(img, size=2, mode="bilinear", align_corners="a")',
    "F.interpolate(img, size=2, align_corners=True)", 'F.interpolate(x3, size=2, mode="linear", antialias="a")',
    'F.interpolate(img, size=2, mode="trilinear")', 'F.interpolate(x3, size=2, mode="bicubic")',
    'F.interpolate(img, size=2, mode="lanczos")', "F.interpolate(x, size=2)", "F.interpolate(img, size=[2.0, 2.0])",
    'F.upsample(img, size="a")', 'F.upsample_nearest(img, "a")', 'F.upsample_bilinear(img, "a")',
    'F.grid_sample(img, "a")', 'F.grid_sample("a", grid)', 'F.grid_sample(img, grid, mode="foo")',
    'F.grid_sample(img, grid, align_corners="a")', 'F.affine_grid(theta, "a")',
    'F.affine_grid(theta, [1, 2, 4, 4], align_corners="a")', 'F.scaled_dot_product_attention(q, q, "a")',
    'F.scaled_dot_product_attention(q, q, q, is_causal="a")',
    # losses: the reduction's enum first, then the loss operator (cross_entropy_loss, nll_loss_nd...)
    'F.mse_loss(x, "a")', 'F.mse_loss(x, x, reduction="foo")', 'F.mse_loss(x, x, weight="a")', 'F.l1_loss("a", x)',
    'F.smooth_l1_loss(x, x, beta="a")', 'F.huber_loss(x, x, delta="a")', "F.cross_entropy(x, [0, 1])",
    'F.cross_entropy("a", t)', 'F.cross_entropy(x, t, weight="a")', 'F.cross_entropy(x, t, reduction="foo")',
    "F.cross_entropy(x, t, ignore_index=1.5)", 'F.cross_entropy(x, t, ignore_index="a")',
    'F.cross_entropy(x, t, label_smoothing="a")', "F.cross_entropy(x, t, None, None, -100, None, 'mean', 0.0, 1)",
    'F.nll_loss(x, "a")', 'F.nll_loss("a", t)', 'F.nll_loss(x, t, weight="a")', "F.nll_loss(x, t, ignore_index=1.5)",
    'F.binary_cross_entropy(x, "a")', 'F.binary_cross_entropy("a", x)', 'F.binary_cross_entropy_with_logits(x, "a")',
    'F.kl_div(l, "a")', 'F.kl_div(l, x, log_target="a")', 'F.margin_ranking_loss(y, y, y, margin="a")',
    'F.hinge_embedding_loss(y, "a")', 'F.hinge_embedding_loss(y, y, margin="a")', 'F.cosine_embedding_loss(x, x, "a")',
    'F.cosine_embedding_loss(x, x, y, margin="a")', 'F.soft_margin_loss(x, "a")', 'F.multilabel_margin_loss(x, "a")',
    'F.triplet_margin_loss(x, x, "a")', 'F.triplet_margin_loss(x, x, x, swap="a")', 'F.poisson_nll_loss(x, "a")',
    'F.poisson_nll_loss(x, x, log_input="a")', 'F.ctc_loss("a", t, t, t)',
    # modules: their constructors keep what torch's keep, their forwards call what torch's call
    'nn.Linear("a", 3)', "nn.Linear(3, 4.5)", 'nn.Linear(3, 4, bias="a")', 'nn.Linear(3, 4)("a")',
    "nn.Linear(3, 4)(x, x)", "nn.Linear(3, 4)([1.0, 2.0, 3.0])", 'nn.Bilinear(3, 3, 4)("a", x)', 'nn.Conv2d(2, 3, "a")',
    "nn.Conv2d(2, 3.5, 2)", 'nn.Conv2d(2, 3, 2, stride="a")', 'nn.Conv2d(2, 3, 2, padding="foo")',
    'nn.Conv2d(2, 3, 2)("a")', 'nn.Conv1d(2, 3, "a")', 'nn.ConvTranspose2d(2, 3, "a")', 'nn.ConvTranspose2d(2, 3, 2)("a")',
    'nn.ConvTranspose2d(2, 3, 2)("a", x)', 'nn.MaxPool2d("a")(img)', "nn.MaxPool2d(2.5)(img)", 'nn.MaxPool2d(2)("a")',
    "nn.AvgPool2d(2.5)(img)", 'nn.AdaptiveAvgPool2d("a")(img)', 'nn.AdaptiveAvgPool2d(2)("a")', 'nn.Dropout("a")',
    "nn.Dropout(1.5)", 'nn.Dropout(0.5)("a")', 'nn.BatchNorm1d("a")', 'nn.BatchNorm1d(3)("a")',
    'nn.BatchNorm1d(3, eps="a")(x)', 'nn.InstanceNorm2d(2)("a")', 'nn.LayerNorm("a")', 'nn.LayerNorm(3)("a")',
    'nn.GroupNorm(1, 2)("a")', 'nn.Embedding(10, "a")', 'nn.Embedding(10, 3, padding_idx="a")', 'nn.Embedding(10, 3)("a")',
    "nn.ReLU(1, 2)", "nn.ReLU6(1, 2)", 'nn.ReLU6()("a")', "nn.SELU(1, 2)", "nn.Hardswish(1, 2)", 'nn.Sigmoid()("a")',
    'nn.Tanh()("a")', "nn.Sigmoid()(x, x)", 'nn.Softmax(1)("a")', "nn.Softmax(1, 2)", 'nn.Flatten()("a")',
    'nn.CircularPad2d(1)("a")', "nn.ReflectionPad2d(1, 2)", "nn.ConstantPad2d(1)", 'nn.MaxUnpool2d(2)("a", x)',
    "nn.Sequential(1)", "nn.CrossEntropyLoss()(x, [0, 1])", "nn.CrossEntropyLoss(ignore_index=1.5)(x, t)",
    'nn.NLLLoss()(x, "a")', 'nn.BCELoss()(x, "a")', 'nn.KLDivLoss()(x, "a")', 'nn.SmoothL1Loss(beta="a")(x, x)',
    'nn.HuberLoss(delta="a")', 'nn.Upsample(size="a")(img)', 'nn.Unfold("a")(img)', 'nn.Fold(4, "a")(cols)',
    # (and the optimizers' refusals the first sweep compared)
    'torch.optim.SGD([x], lr="a")', "torch.optim.SGD([x], lr=-1)", "torch.optim.Adam(x)",
    "torch.optim.Adam([x], betas=(1.5, 0.9))",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_snippet_refused_as_torch(snippet):
    assert _outcome(tg, snippet) == _outcome(torch, snippet)


# ---- generated mistakes: each function's valid call, spoiled ------------------------------------------------------
#
# A keyword no signature has, too many positional arguments, and each positional argument replaced by a string
# or by None: what Python says (in torch's Python) or what the operator's parser says must be the same.

_CTC = ("torch.randn(5, 2, 4).log_softmax(2), torch.ones(2, 3, dtype=torch.long), torch.full((2,), 5, dtype=torch.long),"
        " torch.full((2,), 3, dtype=torch.long)")
VALID = {
    "relu": "x", "relu6": "x", "leaky_relu": "x, 0.1", "elu": "x, 1.0", "selu": "x", "celu": "x, 1.0", "gelu": "x",
    "silu": "x", "mish": "x", "softplus": "x, 1, 20", "hardtanh": "x, -1.0, 1.0", "hardswish": "x",
    "hardsigmoid": "x", "sigmoid": "x", "tanh": "x", "softmax": "x, 1", "log_softmax": "x, 1", "softmin": "x, 1",
    "threshold": "x, 0.5, 0.0", "logsigmoid": "x", "softsign": "x", "tanhshrink": "x", "glu": "g, 1",
    "prelu": "x, torch.ones(1)", "hardshrink": "x, 0.5", "softshrink": "x, 0.5", "rrelu": "x, 0.1, 0.3",
    "gumbel_softmax": "x, 1.0", "dropout": "x, 0.5, True", "alpha_dropout": "x, 0.5, True",
    "feature_alpha_dropout": "img, 0.5, True", "dropout1d": "x3, 0.5, True", "dropout2d": "img, 0.5, True",
    "dropout3d": "vol, 0.5, True", "linear": "x, w, b", "bilinear": "x, x, torch.ones(4, 3, 3)", "conv1d": "x3, k1",
    "conv2d": "img, k", "conv3d": "vol, k3", "conv_transpose1d": "x3, torch.ones(2, 3, 2)",
    "conv_transpose2d": "img, torch.ones(2, 3, 2, 2)", "conv_transpose3d": "vol, torch.ones(2, 3, 2, 2, 2)",
    "max_pool1d": "x3, 2", "max_pool2d": "img, 2", "max_pool3d": "vol, 2", "avg_pool1d": "x3, 2",
    "avg_pool2d": "img, 2", "avg_pool3d": "vol, 2", "adaptive_avg_pool1d": "x3, 2", "adaptive_avg_pool2d": "img, 2",
    "adaptive_avg_pool3d": "vol, 2", "adaptive_max_pool1d": "x3, 2", "adaptive_max_pool2d": "img, 2",
    "adaptive_max_pool3d": "vol, 2", "lp_pool1d": "x3, 2, 2", "lp_pool2d": "img, 2, 2", "lp_pool3d": "vol, 2, 2",
    "max_pool2d_with_indices": "img, 2", "adaptive_max_pool2d_with_indices": "img, 2",
    "batch_norm": "x, torch.zeros(3), torch.ones(3)", "instance_norm": "img", "layer_norm": "x, (3,)",
    "group_norm": "img, 1", "rms_norm": "x, (3,)", "local_response_norm": "img, 2", "normalize": "x",
    "embedding": "t, w", "embedding_bag": "idx, emb", "one_hot": "t, 3", "cosine_similarity": "x, x",
    "pairwise_distance": "x, x", "pdist": "x", "interpolate": "img, 2", "upsample": "img, 2",
    "upsample_nearest": "img, 2", "upsample_bilinear": "img, 2", "unfold": "img, 2", "fold": "cols, 4, 2",
    "pad": "img, (1, 1)", "pixel_shuffle": "torch.ones(1, 4, 2, 2), 2", "pixel_unshuffle": "img, 2",
    "channel_shuffle": "img, 2", "grid_sample": "img, grid, 'bilinear', 'zeros', False",
    "affine_grid": "theta, [1, 2, 4, 4], False", "scaled_dot_product_attention": "q, q, q", "cross_entropy": "x, t",
    "nll_loss": "l, t", "mse_loss": "x, x", "l1_loss": "x, x", "smooth_l1_loss": "x, x", "huber_loss": "x, x",
    "binary_cross_entropy": "p, p", "binary_cross_entropy_with_logits": "x, p",
    "kl_div": "l, p, None, None, 'batchmean'", "margin_ranking_loss": "y, y, y", "hinge_embedding_loss": "y, y",
    "cosine_embedding_loss": "x, x, y", "soft_margin_loss": "x, x", "multilabel_soft_margin_loss": "x, x",
    "multi_margin_loss": "x, t", "multilabel_margin_loss": "x, torch.zeros(2, 3, dtype=torch.long)",
    "triplet_margin_loss": "x, x, x", "poisson_nll_loss": "x, x", "gaussian_nll_loss": "x, x, torch.ones(2, 3)",
    "ctc_loss": _CTC,
}

def _spoiled() -> list[str]:
    return spoiled_calls("F.", VALID)


@pytest.mark.parametrize("call", _spoiled())
def test_spoiled_call_refused_as_torch(call):
    assert _outcome(tg, call) == _outcome(torch, call)


# ---- every module class: a constructor given too much, a forward given what it does not take --------------------

def _module_names() -> list[str]:
    return [name for name in dir(torch.nn) if isinstance(getattr(torch.nn, name), type)
            and issubclass(getattr(torch.nn, name), torch.nn.Module) and hasattr(tg.nn, name)]


@pytest.mark.parametrize("name", _module_names())
def test_module_constructor_mistakes_refused_as_torch(name):
    for source in (f"nn.{name}(*[1] * 20)", f"nn.{name}(bogus_keyword=1)"):
        assert _outcome(tg, source) == _outcome(torch, source), source


MODULES = {
    "Linear": "3, 4", "Bilinear": "3, 3, 4", "Conv1d": "2, 3, 2", "Conv2d": "2, 3, 2", "ConvTranspose2d": "2, 3, 2",
    "MaxPool1d": "2", "MaxPool2d": "2", "AvgPool1d": "2", "AvgPool2d": "2", "AdaptiveAvgPool2d": "2",
    "AdaptiveMaxPool2d": "2", "LPPool2d": "2, 2", "BatchNorm1d": "3", "BatchNorm2d": "3", "InstanceNorm2d": "3",
    "LayerNorm": "3", "GroupNorm": "1, 2", "RMSNorm": "3", "LocalResponseNorm": "2", "Embedding": "10, 3",
    "EmbeddingBag": "10, 3", "Dropout": "", "Dropout2d": "", "AlphaDropout": "", "ReLU": "", "ReLU6": "",
    "LeakyReLU": "", "ELU": "", "SELU": "", "CELU": "", "GELU": "", "SiLU": "", "Mish": "", "Softplus": "",
    "Hardtanh": "", "Hardswish": "", "Hardsigmoid": "", "Sigmoid": "", "Tanh": "", "Softmax": "1", "LogSoftmax": "1",
    "Softmin": "1", "Threshold": "0.1, 0.0", "LogSigmoid": "", "Softsign": "", "Tanhshrink": "", "GLU": "",
    "PReLU": "", "Hardshrink": "", "Softshrink": "", "RReLU": "", "Flatten": "", "Unflatten": "1, (1, 3)",
    "Upsample": "size=2", "Unfold": "2", "Fold": "4, 2", "PixelShuffle": "2", "ZeroPad2d": "1",
    "ConstantPad2d": "1, 0.5", "ReflectionPad2d": "1", "ReplicationPad2d": "1", "CircularPad2d": "1",
    "CosineSimilarity": "", "PairwiseDistance": "", "CrossEntropyLoss": "", "NLLLoss": "", "MSELoss": "",
    "L1Loss": "", "SmoothL1Loss": "", "HuberLoss": "", "BCELoss": "", "BCEWithLogitsLoss": "", "KLDivLoss": "",
    "MarginRankingLoss": "", "HingeEmbeddingLoss": "", "CosineEmbeddingLoss": "", "TripletMarginLoss": "",
    "MultiMarginLoss": "", "MaxUnpool2d": "2", "FractionalMaxPool2d": "2, output_size=2",
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_forward_mistakes_refused_as_torch(name):
    for given in ('"a"', "[1.0, 2.0]", '"a", x', 'x, "a"', 'x, "a", x'):
        source = f"nn.{name}({MODULES[name]})({given})"
        assert _outcome(tg, source) == _outcome(torch, source), source
