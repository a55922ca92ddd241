"""torch.nn.functional: activations, losses, normalisation, convolution, pooling and friends."""

from __future__ import annotations

import numpy as np

from .core import C128, FLOATS, Arr, DType, Maker, OpInfo, SampleInput

NN = "nn.functional."
NN_TOL = {"float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9)}
# complex runs where torch takes complex input: complex128 (all the tests); complex64 alone (forward, out=, in-place)
# where torch computes the function but refuses to differentiate complex outputs ("does not support automatic
# differentiation for outputs with complex dtype")
F_C = FLOATS + C128
F_C64 = FLOATS + ("complex64",)


def _act_samples(low: float = -3.0, high: float = 3.0, **kwargs):
    """Activations: 2-D, transposed 3-D, strided 1-D (kinks are hit with probability 0)."""

    def gen(m: Maker):
        yield SampleInput("3x4", (m(3, 4, low=low, high=high),), dict(kwargs))
        yield SampleInput("noncontig_T", (m(2, 4, 3, low=low, high=high, layout="T"),), dict(kwargs))
        yield SampleInput("strided", (m(5, low=low, high=high, layout="strided"),), dict(kwargs))
    return gen


def _act(name: str, gen=None, variant: str = "", inplace: bool = False, aliases=(), **kw) -> OpInfo:
    return OpInfo(NN + name, gen or _act_samples(), variant=variant,
                  inplace=NN + name + "_" if inplace else None, aliases=aliases, **kw)


def _softplus_samples(m: Maker):
    yield SampleInput("default", (m(3, 4),))
    yield SampleInput("noncontig_beta", (m(4, 3, layout="T"),), {"beta": 2.0})
    # x*beta above threshold takes the linear branch
    yield SampleInput("threshold_linear_branch", (m(5, low=-3, high=3, layout="strided"),),
                      {"beta": 3.0, "threshold": 2.0})


def _softmax_samples(m: Maker):
    yield SampleInput("dim1", (m(3, 4),), {"dim": 1})
    yield SampleInput("noncontig_dim0_dtype", (m(4, 3, layout="T"), 0), {"dtype": DType("float64")})
    yield SampleInput("large_values", (m(2, 3, 4, low=-1000.0, high=1000.0, layout="strided"),), {"dim": -1})


# ------------------------------------------------------------------------------------------ linear


def _linear_samples(m: Maker):
    yield SampleInput("bias", (m(3, 4), m(2, 4), m(2)))
    yield SampleInput("noncontig_batched_no_bias", (m(2, 3, 4, layout="T"), m(2, 4, layout="strided")))
    yield SampleInput("1d_input", (m(4), m(2, 4)), {"bias": m(2)})


def _bilinear_samples(m: Maker):
    yield SampleInput("bias", (m(3, 2), m(3, 4), m(5, 2, 4), m(5)))
    yield SampleInput("noncontig_batched_no_bias", (m(2, 3, 2, layout="T"), m(2, 3, 4, layout="strided"),
                                                    m(5, 2, 4)))


# ------------------------------------------------------------------------------------------ losses


def _class_targets(m: Maker, shape, n_classes, ignore=None):
    t = m.rng.randint(0, n_classes, size=shape).astype(np.int64)
    if ignore is not None:
        t.flat[0] = ignore
    return Arr(t)


def _probs(m: Maker, *shape, dim=1, layout="contig"):
    v = m.rng.uniform(0.1, 1.0, size=shape)
    return Arr((v / v.sum(axis=dim, keepdims=True)).astype(m.dtype), layout)


def _ce_indices_samples(m: Maker):
    yield SampleInput("mean", (m(4, 5), _class_targets(m, (4,), 5)))
    yield SampleInput("noncontig_kdim_none", (m(2, 5, 3, layout="T"), _class_targets(m, (2, 3), 5)),
                      {"reduction": "none"})
    yield SampleInput("weight_ignore_sum", (m(4, 5), _class_targets(m, (4,), 5, ignore=1)),
                      {"weight": m(5, low=0.5, high=2.0), "ignore_index": 1, "reduction": "sum"})


def _ce_probs_samples(m: Maker):
    yield SampleInput("mean", (m(4, 5), _probs(m, 4, 5)))
    yield SampleInput("noncontig_kdim_none", (m(2, 5, 3, layout="T"), _probs(m, 2, 5, 3)), {"reduction": "none"})
    yield SampleInput("weight_smoothing_sum", (m(4, 5), _probs(m, 4, 5, layout="T")),
                      {"weight": m(5, low=0.5, high=2.0), "label_smoothing": 0.2, "reduction": "sum"})


def _ce_smoothing_samples(m: Maker):
    yield SampleInput("mean", (m(4, 5), _class_targets(m, (4,), 5)), {"label_smoothing": 0.1})
    yield SampleInput("noncontig_weight_ignore_mean", (m(5, 4, layout="T"), _class_targets(m, (5,), 4, ignore=2)),
                      {"weight": m(4, low=0.5, high=2.0), "ignore_index": 2, "label_smoothing": 0.3})
    yield SampleInput("kdim_none", (m(2, 3, 2), _class_targets(m, (2, 2), 3)),
                      {"label_smoothing": 0.2, "reduction": "none"})


def _linear_ce_samples(m: Maker):
    """linear_cross_entropy's reference path (options=None): class indices, K-dimensional out_features, probabilities."""
    yield SampleInput("mean", (m(4, 3), m(5, 3), _class_targets(m, (4,), 5)))
    yield SampleInput("noncontig_kdim_bias_weight_ignore_none",
                      (m(3, 4, layout="T"), m(5, 2, 4, layout="strided"), _class_targets(m, (3, 2), 5, ignore=1)),
                      {"linear_bias": m(5, 2), "weight": m(5, low=0.5, high=2.0), "ignore_index": 1,
                       "reduction": "none"})
    yield SampleInput("unbatched_probs_smoothing_sum", (m(3), m(4, 3), _probs(m, 4, dim=0)),
                      {"label_smoothing": 0.2, "reduction": "sum"})


def _conv_input_grad_samples(m: Maker):
    """nn.grad.conv2d_input: the weight and grad_output of a strided, padded, grouped convolution."""
    yield SampleInput("plain", ((1, 2, 4, 4), m(3, 2, 2, 2), m(1, 3, 3, 3)))
    yield SampleInput("noncontig_groups_stride_pad", ((2, 4, 5, 5), m(4, 2, 3, 3, layout="T"), m(2, 4, 3, 3)),
                      {"stride": 2, "padding": 1, "groups": 2})


def _conv_weight_grad_samples(m: Maker):
    yield SampleInput("plain", (m(1, 2, 4, 4), (3, 2, 2, 2), m(1, 3, 3, 3)))
    yield SampleInput("noncontig_groups_stride_pad_dilation", (m(2, 4, 5, 5, layout="T"), (4, 2, 2, 2),
                                                               m(2, 4, 3, 3)),
                      {"stride": 2, "padding": 1, "dilation": 2, "groups": 2})


def _nll_samples(m: Maker):
    yield SampleInput("mean", (m(4, 5), _class_targets(m, (4,), 5)))
    yield SampleInput("noncontig_kdim_weight_ignore_none", (m(2, 5, 3, layout="T"), _class_targets(m, (2, 3), 5, 0)),
                      {"weight": m(5, low=0.5, high=2.0), "ignore_index": 0, "reduction": "none"})
    yield SampleInput("weight_sum", (m(3, 4), _class_targets(m, (3,), 4)),
                      {"weight": m(4, low=0.5, high=2.0), "reduction": "sum"})


def _regression_loss_samples(**extra):
    def gen(m: Maker):
        yield SampleInput("mean", (m(3, 4), m(3, 4)))
        yield SampleInput("noncontig_sum", (m(4, 3, layout="T"), m(4, 3, layout="strided")),
                          {"reduction": "sum", **extra})
        yield SampleInput("none", (m(2, 3, layout="strided"), m(2, 3)), {"reduction": "none", **extra})
    return gen


def _bce_samples(m: Maker):
    p = dict(low=0.05, high=0.95)
    yield SampleInput("mean", (m(3, 4, **p), m(3, 4, low=0.0, high=1.0)))
    yield SampleInput("noncontig_weight_sum", (m(4, 3, layout="T", **p), m(4, 3, low=0.0, high=1.0)),
                      {"weight": m(3, low=0.5, high=2.0), "reduction": "sum"})
    yield SampleInput("none", (m(5, layout="strided", **p), m(5, low=0.0, high=1.0)), {"reduction": "none"})


def _bce_logits_samples(m: Maker):
    yield SampleInput("mean", (m(3, 4), m(3, 4, low=0.0, high=1.0)))
    yield SampleInput("noncontig_weight_pos_weight_sum", (m(4, 3, layout="T"), m(4, 3, low=0.0, high=1.0)),
                      {"weight": m(4, 1, low=0.5, high=2.0), "pos_weight": m(3, low=0.5, high=3.0),
                       "reduction": "sum"})
    yield SampleInput("none", (m(5, layout="strided"), m(5, low=0.0, high=1.0)), {"reduction": "none"})


def _signs(m: Maker, *shape, layout="contig"):
    """A target of +1/-1 in the sample's float dtype (the embedding and ranking losses)."""
    return Arr(np.where(m.rng.uniform(size=shape) < 0.5, -1.0, 1.0).astype(m.dtype), layout)


def _margin_ranking_samples(m: Maker):
    yield SampleInput("mean", (m(5), m(5), _signs(m, 5)))
    yield SampleInput("noncontig_margin_sum", (m(3, 4, layout="T"), m(3, 4), _signs(m, 3, 4)),
                      {"margin": 0.3, "reduction": "sum"})
    yield SampleInput("none", (m(4, layout="strided"), m(4), _signs(m, 4)), {"reduction": "none"})


def _hinge_embedding_samples(m: Maker):
    yield SampleInput("mean", (m(3, 4), _signs(m, 3, 4)))
    yield SampleInput("noncontig_margin_none", (m(4, 3, layout="T"), _signs(m, 4, 3)),
                      {"margin": 0.5, "reduction": "none"})


def _cosine_embedding_samples(m: Maker):
    yield SampleInput("mean", (m(4, 5), m(4, 5), _signs(m, 4)))
    yield SampleInput("noncontig_margin_sum", (m(3, 5, layout="T"), m(3, 5), _signs(m, 3)),
                      {"margin": 0.2, "reduction": "sum"})
    yield SampleInput("unbatched_none", (m(5), m(5), _signs(m)), {"reduction": "none"})


def _triplet_samples(m: Maker):
    yield SampleInput("mean", (m(4, 5), m(4, 5), m(4, 5)))
    yield SampleInput("noncontig_p1_swap_none", (m(3, 5, layout="T"), m(3, 5), m(3, 5)),
                      {"p": 1.0, "swap": True, "margin": 2.0, "reduction": "none"})


def _soft_margin_samples(m: Maker):
    yield SampleInput("mean", (m(3, 4), _signs(m, 3, 4)))
    yield SampleInput("noncontig_sum", (m(4, 3, layout="T"), _signs(m, 4, 3, layout="strided")), {"reduction": "sum"})
    yield SampleInput("broadcast_target_none", (m(2, 3), _signs(m, 3)), {"reduction": "none"})


def _multilabel_soft_margin_samples(m: Maker):
    yield SampleInput("mean", (m(3, 4), m(3, 4, low=0.0, high=1.0)))
    yield SampleInput("noncontig_weight_sum", (m(4, 3, layout="T"), m(4, 3, low=0.0, high=1.0)),
                      {"weight": m(3, low=0.5, high=2.0), "reduction": "sum"})
    yield SampleInput("unbatched_none", (m(5), m(5, low=0.0, high=1.0)), {"reduction": "none"})


def _multi_margin_samples(m: Maker):
    yield SampleInput("mean", (m(4, 5), m.index((4,), 5)))
    yield SampleInput("noncontig_p2_weight_none", (m(5, 4, layout="T"), m.index((5,), 4)),
                      {"p": 2, "margin": 0.7, "weight": m(4, low=0.5, high=2.0), "reduction": "none"})
    yield SampleInput("unbatched_sum", (m(6), m.index((), 6)), {"margin": 1.5, "reduction": "sum"})


def _multilabel_targets(m: Maker, rows: int, classes: int) -> Arr:
    """Per row, distinct class indices up to a -1 that ends the row's targets (then anything)."""
    t = np.stack([m.rng.permutation(classes) for _ in range(rows)]).astype(np.int64)
    for r in range(rows):
        t[r, m.rng.randint(1, classes)] = -1
    return Arr(t)


def _multilabel_margin_samples(m: Maker):
    yield SampleInput("mean", (m(3, 5), _multilabel_targets(m, 3, 5)))
    yield SampleInput("noncontig_none", (m(4, 4, layout="T"), _multilabel_targets(m, 4, 4)), {"reduction": "none"})
    yield SampleInput("unbatched_sum", (m(6), Arr(_multilabel_targets(m, 1, 6).values[0])), {"reduction": "sum"})


def _embedding_bag_samples(m: Maker):
    # (random rows: a max-mode tie between different rows is met with probability 0)
    yield SampleInput("mean_offsets_empty_bag", (m.index((7,), 6), m(6, 3), Arr(np.array([0, 3, 3, 5]))))
    yield SampleInput("noncontig_2d_sum_psw_padding", (m.index((3, 3), 5), m(5, 4, layout="T")),
                      {"mode": "sum", "per_sample_weights": m(3, 3), "padding_idx": 2})
    yield SampleInput("max_include_last_offset", (m.index((6,), 5), m(5, 3, layout="strided"),
                                                  Arr(np.array([0, 2, 6]))),
                      {"mode": "max", "include_last_offset": True})


def _ctc_log_softmax(lib, args, kwargs):
    """ctc_loss's gradient is torch's formula for log_softmax outputs: differentiate through a log_softmax."""
    return (args[0].log_softmax(-1), *args[1:]), kwargs


def _ctc_samples(m: Maker):
    # full lengths first: the saved log_alpha is then defined everywhere (torch leaves the rest unwritten)
    yield SampleInput("padded_full_mean", (m(5, 2, 4), m.index((2, 2), 4, low=1), Arr(np.array([5, 5])),
                                           Arr(np.array([2, 2]))))
    yield SampleInput("noncontig_concat_sum_zero_infinity", (m(4, 3, 3, layout="T"), Arr(np.array([1, 1, 0, 1, 0])),
                                                               (4, 3, 1), (2, 0, 3)),
                      {"blank": 2, "reduction": "sum", "zero_infinity": True})
    yield SampleInput("unbatched_none", (m(4, 3), Arr(np.array([2, 2])), Arr(np.array(4)), Arr(np.array(2))),
                      {"reduction": "none"})


def _l1_distance(a, b):
    """A distance written with methods both libraries have (a user's callable)."""
    return (a - b).abs().sum(-1)


def _triplet_distance_samples(m: Maker):
    yield SampleInput("mean", (m(4, 5), m(4, 5), m(4, 5)))
    yield SampleInput("noncontig_swap_margin_none", (m(3, 5, layout="T"), m(3, 5), m(3, 5)),
                      {"swap": True, "margin": 2.0, "reduction": "none"})
    yield SampleInput("custom_distance_sum", (m(3, 4), m(3, 4), m(3, 4)),
                      {"distance_function": _l1_distance, "margin": 0.5, "reduction": "sum"})


def _poisson_nll_samples(m: Maker):
    yield SampleInput("log_input_mean", (m(3, 4), m(3, 4, low=0.0, high=4.0)))
    yield SampleInput("rate_full_sum", (m(4, 3, low=0.5, high=3.0, layout="T"), m(4, 3, low=0.5, high=4.0)),
                      {"log_input": False, "full": True, "reduction": "sum"})


def _gaussian_nll_samples(m: Maker):
    yield SampleInput("mean", (m(3, 4), m(3, 4), m(3, 4, low=0.5, high=2.0)))
    yield SampleInput("homoscedastic_full_sum", (m(4, 3, layout="T"), m(4, 3), m(4, low=0.5, high=2.0)),
                      {"full": True, "reduction": "sum"})
    yield SampleInput("one_var_per_row_none", (m(2, 3), m(2, 3), m(2, 1, low=0.5, high=2.0)), {"reduction": "none"})


def _pixel_shuffle_samples(m: Maker):
    yield SampleInput("4d", (m(2, 8, 2, 3), 2))
    yield SampleInput("noncontig_3d", (m(9, 2, 2, layout="strided"), 3))


def _pixel_unshuffle_samples(m: Maker):
    yield SampleInput("4d", (m(2, 2, 4, 6), 2))
    yield SampleInput("noncontig_5d", (m(2, 1, 3, 3, 6, layout="strided"), 3))


def _cdist_mm_samples(m: Maker):
    """Euclidean distances through the matrix-product route (more than 25 rows, or asked for)."""
    yield SampleInput("rows_over_25", (m(27, 3), m(4, 3)))
    yield SampleInput("batched_broadcast", (m(2, 26, 3), m(4, 3, layout="T")))
    yield SampleInput("use_mm", (m(3, 4), m(5, 4)), {"compute_mode": "use_mm_for_euclid_dist"})


def _cdist_direct_samples(m: Maker):
    """The direct route (_cdist_forward): few rows, or p != 2."""
    yield SampleInput("p2", (m(3, 4), m(5, 4)))
    yield SampleInput("p1_noncontig", (m(4, 3, layout="T"), m(2, 3)), {"p": 1.0})
    yield SampleInput("p3_batched_no_mm", (m(2, 30, 2), m(1, 4, 2)),
                      {"p": 3.0, "compute_mode": "donot_use_mm_for_euclid_dist"})


def _cdist_other_p_samples(m: Maker):
    yield SampleInput("p_inf", (m(3, 2), m(4, 2)), {"p": float("inf")})
    yield SampleInput("p1_5", (m(3, 2, layout="T"), m(4, 2)), {"p": 1.5})
    yield SampleInput("p0", (m(3, 2), m(4, 2)), {"p": 0.0})


def _kl_div_samples(m: Maker):
    yield SampleInput("batchmean", (m(4, 5, low=-3.0, high=0.0), _probs(m, 4, 5)), {"reduction": "batchmean"})
    yield SampleInput("noncontig_log_target_sum", (m(5, 4, low=-3.0, high=0.0, layout="T"), m(5, 4, low=-3.0, high=0.0)),
                      {"reduction": "sum", "log_target": True})
    yield SampleInput("none", (m(2, 3, layout="strided"), _probs(m, 2, 3)), {"reduction": "none"})


# ------------------------------------------------------------------------------------------ dropout


def _dropout_samples(m: Maker):
    # deterministic configurations only; p > 0 in training mode is test_dropout_statistics
    yield SampleInput("p0_training", (m(3, 4),), {"p": 0.0, "training": True})
    yield SampleInput("noncontig_eval", (m(4, 3, layout="T"),), {"p": 0.5, "training": False})


# ------------------------------------------------------------------------------------------ normalisation


def _layer_norm_samples(m: Maker):
    yield SampleInput("no_affine", (m(3, 4), (4,)))
    yield SampleInput("noncontig_affine_2d", (m(2, 3, 4, layout="T"), (3, 4), m(3, 4), m(3, 4)))
    yield SampleInput("strided_weight_eps", (m(2, 5, layout="strided"), [5]), {"weight": m(5), "eps": 1e-3})


def _group_norm_samples(m: Maker):
    yield SampleInput("no_affine", (m(2, 4, 3), 2))
    yield SampleInput("noncontig_affine", (m(2, 6, 2, 3, layout="T"), 3, m(6), m(6)))
    yield SampleInput("strided_eps", (m(3, 2, 4, layout="strided"), 1), {"eps": 1e-3})


def _running(m: Maker, c: int):
    return m(c, low=-0.5, high=0.5), m(c, low=0.5, high=2.0)


def _batch_norm_samples(training: bool):
    def gen(m: Maker):
        rm, rv = _running(m, 3)
        yield SampleInput("2d_affine", (m(4, 3), rm, rv, m(3), m(3)), {"training": training})
        rm, rv = _running(m, 3)
        yield SampleInput("noncontig_5d_momentum", (m(2, 3, 1, 2, 2, layout="T"), rm, rv),
                          {"training": training, "momentum": 0.3, "weight": m(3)})
        if training:  # training mode also accepts no running statistics at all
            yield SampleInput("4d_no_running_stats", (m(2, 3, 2, 2, layout="strided"), None, None),
                              {"training": True, "bias": m(3), "eps": 1e-3},
                              skips={"gradgrad": "torch 2.13 bug: batch_norm double backward is wrong with a bias "
                                                 "and no weight (gradgradcheck fails on torch itself)"})
        else:
            rm, rv = _running(m, 3)
            yield SampleInput("4d_eps", (m(2, 3, 2, 2, layout="strided"), rm, rv), {"eps": 1e-3})
    return gen


def _instance_norm_samples(m: Maker):
    yield SampleInput("5d_affine", (m(2, 3, 2, 1, 2),), {"weight": m(3), "bias": m(3)})
    yield SampleInput("noncontig_4d_affine", (m(2, 3, 2, 3, layout="T"),), {"weight": m(3), "bias": m(3)})
    rm, rv = _running(m, 3)
    yield SampleInput("running_stats_update", (m(2, 3, 5, layout="strided"), rm, rv),
                      {"use_input_stats": True, "momentum": 0.2})


_RUNNING = frozenset({1, 2, "running_mean", "running_var"})


# ------------------------------------------------------------------------------------------ convolution


def _conv1d_samples(m: Maker):
    yield SampleInput("bias", (m(2, 3, 5), m(4, 3, 2), m(4)))
    yield SampleInput("noncontig_stride_pad_dilation", (m(2, 3, 7, layout="T"), m(4, 3, 2, layout="strided")),
                      {"stride": 2, "padding": 1, "dilation": 2})
    yield SampleInput("groups_same", (m(1, 4, 6), m(6, 2, 3)), {"groups": 2, "padding": "same"})


def _conv2d_samples(m: Maker):
    yield SampleInput("bias", (m(1, 2, 4, 4), m(3, 2, 2, 2), m(3)))
    yield SampleInput("noncontig_groups_stride_pad_dilation", (m(1, 2, 4, 5, layout="T"), m(4, 1, 2, 2)),
                      {"groups": 2, "stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)})
    yield SampleInput("same_dilation_strided", (m(1, 1, 4, 4, layout="strided"), m(2, 1, 3, 3)),
                      {"padding": "same", "dilation": 2})


def _conv_transpose2d_samples(m: Maker):
    yield SampleInput("bias", (m(1, 2, 3, 3), m(2, 3, 2, 2), m(3)))
    yield SampleInput("noncontig_stride_pad_outpad_groups", (m(1, 4, 2, 3, layout="T"), m(4, 1, 3, 3)),
                      {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2})
    yield SampleInput("dilation_strided", (m(1, 2, 3, 3, layout="strided"), m(2, 2, 2, 2)), {"dilation": 2})


def _conv3d_samples(m: Maker):
    yield SampleInput("bias", (m(1, 2, 3, 3, 3), m(2, 2, 2, 2, 2), m(2)))
    yield SampleInput("noncontig_groups_stride_pad_dilation", (m(1, 2, 3, 4, 3, layout="T"), m(2, 1, 1, 2, 2)),
                      {"groups": 2, "stride": (1, 2, 1), "padding": (0, 1, 1), "dilation": (1, 1, 2)})
    yield SampleInput("unbatched_same", (m(1, 3, 2, 3, layout="strided"), m(2, 1, 2, 1, 2)), {"padding": "same"})


def _conv_transpose3d_samples(m: Maker):
    yield SampleInput("bias", (m(1, 2, 2, 2, 2), m(2, 1, 2, 2, 2), m(1)))
    yield SampleInput("noncontig_stride_pad_outpad_groups", (m(1, 2, 1, 2, 2, layout="T"), m(2, 1, 2, 1, 2)),
                      {"stride": 2, "padding": (1, 0, 0), "output_padding": 1, "groups": 2})


def _pool3d_samples(kind: str):
    """max_pool3d, avg_pool3d, lp_pool3d: few and small samples (each is gradchecked twice)."""

    def gen(m: Maker):
        if kind == "lp_pool3d":
            yield SampleInput("p2", (m(1, 2, 2, 3, 3), 2.0, 2))
            yield SampleInput("noncontig_p3_rect_stride_ceil", (m(1, 3, 3, 2, low=0.2, high=2.0, layout="T"), 3.0,
                                                                (2, 1, 2)), {"stride": (1, 2, 1), "ceil_mode": True})
            return
        yield SampleInput("k2", (m(1, 2, 2, 3, 3), 2))
        extra = {"return_indices": True} if kind == "max_pool3d" else {"count_include_pad": False}
        yield SampleInput("noncontig_stride_pad_ceil", (m(1, 3, 3, 3, layout="T"), (3, 2, 3)),
                          {"stride": (2, 1, 2), "padding": (1, 0, 1), "ceil_mode": True, **extra})
        if kind == "avg_pool3d":
            yield SampleInput("divisor_override", (m(1, 2, 3, 2, layout="strided"), (2, 2, 1)), {"divisor_override": 3})
        else:
            yield SampleInput("dilation", (m(1, 1, 3, 3, 4, layout="strided"), 2), {"stride": 1, "dilation": (1, 2, 2)})
    return gen


def _adaptive_pool3d_samples(indices: bool):
    def gen(m: Maker):
        yield SampleInput("overlapping_windows", (m(1, 1, 3, 4, 3), (2, 3, 2)))
        yield SampleInput("noncontig_unbatched_none", (m(2, 3, 2, 3, layout="T"), (2, None, 2)),
                          {"return_indices": True} if indices else {})
    return gen


def _pad3d_samples(mode: str):
    def gen(m: Maker):
        yield SampleInput("5d", (m(1, 2, 2, 3, 3), (1, 1, 2, 0, 1, 1)), {"mode": mode})
        yield SampleInput("noncontig_unbatched", (m(1, 3, 2, 3, layout="T"), (0, 2, 1, 1, 1, 0)), {"mode": mode})
    return gen


# ------------------------------------------------------------------------------------------ pooling


def _max_pool1d_samples(m: Maker):
    yield SampleInput("k2", (m(2, 3, 6), 2))
    yield SampleInput("noncontig_stride_pad_indices", (m(2, 3, 7, layout="T"), 3),
                      {"stride": 2, "padding": 1, "return_indices": True})
    yield SampleInput("dilation_ceil", (m(1, 2, 8, layout="strided"), 2), {"stride": 3, "dilation": 2,
                                                                          "ceil_mode": True})


def _max_pool2d_samples(m: Maker):
    yield SampleInput("k2", (m(1, 2, 4, 4), 2))
    yield SampleInput("noncontig_stride_pad_indices", (m(1, 2, 5, 5, layout="T"), 3),
                      {"stride": 2, "padding": 1, "return_indices": True})
    yield SampleInput("rect_ceil", (m(2, 5, 5, layout="strided"), (2, 3)), {"ceil_mode": True})


def _avg_pool1d_samples(m: Maker):
    yield SampleInput("k2", (m(2, 3, 6), 2))
    yield SampleInput("noncontig_pad_exclude", (m(2, 3, 7, layout="T"), 3),
                      {"stride": 2, "padding": 1, "count_include_pad": False})
    yield SampleInput("ceil", (m(1, 2, 8, layout="strided"), 3), {"ceil_mode": True})


def _avg_pool2d_samples(m: Maker):
    yield SampleInput("k2", (m(1, 2, 4, 4), 2))
    yield SampleInput("noncontig_pad_exclude_ceil", (m(1, 2, 5, 5, layout="T"), 3),
                      {"stride": 2, "padding": 1, "count_include_pad": False, "ceil_mode": True})
    yield SampleInput("divisor_override", (m(2, 4, 5, layout="strided"), (2, 3)), {"divisor_override": 4})


def _adaptive_max_pool2d_samples(m: Maker):
    yield SampleInput("overlapping_windows", (m(1, 2, 5, 7), (3, 4)))
    yield SampleInput("noncontig_3d_none", (m(2, 6, 4, layout="T"), (None, 3)))
    yield SampleInput("indices", (m(1, 1, 4, 4), 2), {"return_indices": True})


def _adaptive_max_pool1d_samples(m: Maker):
    yield SampleInput("3d", (m(2, 3, 7), 3))
    yield SampleInput("2d_indices", (m(3, 5, layout="T"), 2), {"return_indices": True})


def _adaptive_avg_pool2d_samples(m: Maker):
    yield SampleInput("int", (m(1, 2, 5, 5), 3))
    yield SampleInput("noncontig_tuple", (m(1, 2, 4, 6, layout="T"), (2, 4)))
    yield SampleInput("3d_none", (m(2, 5, 7, layout="strided"), (None, 3)))


# ------------------------------------------------------------------------------------------ misc


def _embedding_samples(m: Maker):
    yield SampleInput("2d_index", (m.index((2, 3), 6), m(6, 4)))
    idx = Arr(np.array([0, 3, 1, 0], dtype=np.int64))  # uses the padding row: its gradient must be zero
    yield SampleInput("noncontig_weight_padding_idx", (idx, m(5, 3, layout="T")), {"padding_idx": 0},
                      skips={"gradcheck": "padding_idx rows get a zero gradient by definition, unlike finite "
                                          "differences"})
    yield SampleInput("strided_index", (m.index((5,), 4, layout="strided"), m(4, 2)))


def _pad_samples(mode: str):
    def gen(m: Maker):
        kw = {} if mode == "constant" else {"mode": mode}
        if mode == "constant":
            yield SampleInput("1d", (m(2, 3), (1, 2)))
            yield SampleInput("noncontig_2d_value", (m(2, 3, 4, layout="T"), (1, 1, 0, 2)), {"value": 1.5})
            yield SampleInput("negative", (m(2, 5, layout="strided"), (-1, 1)))
            return
        yield SampleInput("1d", (m(1, 2, 5), (2, 1)), kw)
        yield SampleInput("noncontig_2d", (m(1, 2, 4, 4, layout="T"), (1, 1, 2, 0)), kw)
        yield SampleInput("unbatched_1d", (m(2, 6, layout="strided"), (1, 3)), kw)
    return gen


def _one_hot_samples(m: Maker):
    yield SampleInput("num_classes", (m.index((2, 3), 4), 5))
    yield SampleInput("noncontig_infer", (m.index((3, 4), 5, layout="T"),))
    yield SampleInput("strided", (m.index((5,), 3, layout="strided"),), {"num_classes": 3})


def _normalize_samples(m: Maker):
    yield SampleInput("default", (m(3, 4),))
    yield SampleInput("noncontig_p1_dim0", (m(4, 3, layout="T"),), {"p": 1.0, "dim": 0})
    yield SampleInput("strided_eps", (m(2, 3, 4, layout="strided"),), {"dim": -1, "eps": 1e-3})


def _cosine_similarity_samples(m: Maker):
    yield SampleInput("default", (m(3, 4), m(3, 4)))
    yield SampleInput("noncontig_bcast", (m(4, 3, layout="T"), m(1, 3)), {"dim": 1})
    yield SampleInput("strided_dim0_eps", (m(2, 3, 4, layout="strided"), m(2, 3, 4)), {"dim": 0, "eps": 1e-4})


def _pairwise_distance_samples(m: Maker):
    yield SampleInput("default", (m(3, 4), m(3, 4)))
    yield SampleInput("noncontig_bcast_p1_keepdim", (m(4, 3, layout="T"), m(3, layout="strided")),
                      {"p": 1.0, "keepdim": True})
    yield SampleInput("p3_eps", (m(2, 5), m(2, 5)), {"p": 3.0, "eps": 1e-3})


def _unfold_samples(m: Maker):
    yield SampleInput("k2", (m(1, 2, 4, 4), 2))
    yield SampleInput("noncontig_rect_pad_stride", (m(1, 2, 4, 5, layout="T"), (2, 3)), {"padding": 1, "stride": 2})
    yield SampleInput("dilation_strided", (m(2, 1, 5, 5, layout="strided"),), {"kernel_size": 2, "dilation": 2})


def _fold_samples(m: Maker):
    yield SampleInput("k2", (m(1, 8, 9), (4, 4), 2))
    yield SampleInput("noncontig_rect", (m(1, 4, 6, layout="T"),), {"output_size": (3, 4), "kernel_size": 2})
    yield SampleInput("unbatched_stride_pad", (m(4, 9, layout="strided"), (5, 5), 2), {"stride": 2, "padding": 1})


def _interp_samples(mode: str, align_corners: bool | None = None):
    def gen(m: Maker):
        kw = {"mode": mode}
        if align_corners is not None:
            kw["align_corners"] = align_corners
        yield SampleInput("size", (m(1, 2, 3, 3),), {"size": (5, 4), **kw})
        yield SampleInput("noncontig_scale", (m(1, 2, 3, 4, layout="T"),), {"scale_factor": 2, **kw})
        yield SampleInput("downscale_strided", (m(2, 1, 5, 4, layout="strided"),), {"size": (3, 3), **kw})
    return gen


# grid values in (-0.9, 0.9): a pixel-centre kink of bilinear / nearest is met with probability 0
_GRID = dict(low=-0.9, high=0.9)


def _grid_sample_samples(mode: str):
    def gen(m: Maker):
        yield SampleInput("zeros", (m(1, 2, 3, 4), m(1, 2, 3, 2, **_GRID)), {"mode": mode, "align_corners": False})
        yield SampleInput("noncontig_border_align", (m(2, 1, 4, 3, layout="T"), m(2, 3, 2, 2, layout="T", **_GRID)),
                          {"mode": mode, "padding_mode": "border", "align_corners": True})
        if mode == "bicubic":
            yield SampleInput("reflection", (m(1, 2, 3, 3), m(1, 2, 2, 2, **_GRID)),
                              {"mode": mode, "padding_mode": "reflection", "align_corners": False})
        else:
            yield SampleInput("5d_reflection", (m(1, 2, 2, 3, 3), m(1, 2, 1, 2, 3, **_GRID)),
                              {"mode": mode, "padding_mode": "reflection", "align_corners": False})
    return gen


def _affine_grid_samples(m: Maker):
    yield SampleInput("2d", (m(2, 2, 3), (2, 1, 3, 4)), {"align_corners": False})
    yield SampleInput("noncontig_2d_align", (m(1, 2, 3, layout="T"), [1, 3, 2, 3]), {"align_corners": True})
    yield SampleInput("3d", (m(1, 3, 4), (1, 1, 2, 3, 2)), {"align_corners": False})


# ------------------------------------------------------------------------------------------ pdist, channel_shuffle,
# rrelu, local_response_norm, lp_pool, *_with_indices


def _pdist_samples(m: Maker):
    yield SampleInput("p2", (m(4, 3),))
    yield SampleInput("noncontig_p1", (m(3, 5, layout="T"),), {"p": 1.0})  # (the contiguous copy: CloneBackward0)
    yield SampleInput("strided_p3", (m(5, 2, layout="strided"),), {"p": 3.0})


def _pdist_other_p_samples(m: Maker):
    yield SampleInput("p_inf", (m(4, 3),), {"p": float("inf")})
    yield SampleInput("noncontig_p1_5", (m(2, 4, layout="T"),), {"p": 1.5})
    yield SampleInput("p0_one_row", (m(1, 3),), {"p": 0.0})


def _channel_shuffle_samples(m: Maker):
    yield SampleInput("3d", (m(2, 6, 3), 2))
    yield SampleInput("noncontig_4d", (m(2, 4, 3, 2, layout="T"), 4))
    yield SampleInput("strided_5d", (m(1, 6, 2, 1, 2, layout="strided"), 3))


def _rrelu_samples(m: Maker):
    # deterministic configurations only: evaluation, or training with lower == upper (every slope is lower);
    # random slopes are tests/nn/test_functional_extra_vs_torch.py's
    yield SampleInput("train_fixed_slope", (m(3, 4),), {"lower": 0.2, "upper": 0.2, "training": True})
    yield SampleInput("noncontig_eval", (m(2, 4, 3, layout="T"),))
    yield SampleInput("strided_eval_bounds", (m(5, layout="strided"), 0.1, 0.4))


def _local_response_norm_samples(m: Maker):
    yield SampleInput("3d", (m(2, 5, 4), 3), {"alpha": 0.5})
    yield SampleInput("noncontig_4d", (m(2, 4, 3, 3, layout="T"), 2), {"alpha": 0.3, "beta": 0.5, "k": 2.0})
    yield SampleInput("strided_5d", (m(1, 3, 2, 2, 4, layout="strided"), 4), {"alpha": 1.0})


def _lp_pool1d_samples(m: Maker):
    # odd or fractional p on positive inputs: a window's negative power average would sit at relu's kink
    yield SampleInput("p2", (m(2, 3, 6), 2.0, 2))
    yield SampleInput("noncontig_p3_stride", (m(2, 3, 7, low=0.2, high=2.0, layout="T"), 3.0, 3), {"stride": 2})
    yield SampleInput("strided_p1_5_ceil", (m(1, 2, 8, low=0.2, high=2.0, layout="strided"), 1.5, 3),
                      {"ceil_mode": True})


def _lp_pool2d_samples(m: Maker):
    yield SampleInput("p2", (m(1, 2, 4, 4), 2.0, 2))
    yield SampleInput("noncontig_int_p_rect_stride", (m(1, 2, 5, 5, layout="T"), 2, (2, 3)), {"stride": (1, 2)})
    yield SampleInput("strided_inf_3d", (m(2, 4, 5, layout="strided"), float("inf"), 2))


def _with_indices_samples(kind: str):
    def gen(m: Maker):
        if kind == "max_pool1d":
            yield SampleInput("k2", (m(2, 3, 6), 2))
            yield SampleInput("noncontig_stride_pad", (m(2, 3, 7, layout="T"), 3), {"stride": 2, "padding": 1})
        elif kind == "max_pool2d":
            yield SampleInput("k2", (m(1, 2, 4, 4), 2))
            yield SampleInput("noncontig_stride_pad_ceil", (m(1, 2, 5, 5, layout="T"), 3),
                              {"stride": 2, "padding": 1, "ceil_mode": True})
        elif kind == "max_pool3d":
            yield SampleInput("k2", (m(1, 2, 2, 3, 3), 2))
            yield SampleInput("noncontig_unbatched_pad", (m(1, 3, 3, 3, layout="T"), 3), {"stride": 2, "padding": 1})
        elif kind == "adaptive_max_pool3d":
            yield SampleInput("noncontig_5d", (m(1, 1, 3, 4, 3, layout="T"), (2, 3, 2)))
        elif kind == "adaptive_max_pool1d":
            yield SampleInput("3d", (m(2, 3, 7), 3))
            yield SampleInput("noncontig_2d", (m(3, 5, layout="T"), 2))
        else:
            yield SampleInput("4d", (m(1, 2, 5, 7), (3, 4)))
            yield SampleInput("noncontig_3d_none", (m(2, 6, 4, layout="T"), (None, 3)))
    return gen


_NO_PDIST_GRADGRAD = ("torch's _pdist_backward has no derivative either: both raise the same NotImplementedError")


# ------------------------------------------------------------------------------------------ entries

def _prelu_samples(m: Maker):
    yield SampleInput("channels", (m(2, 3, 4, exclude_zero=True), m(3, low=0.05, high=0.5)))
    yield SampleInput("noncontig_one_weight", (m(4, 3, layout="T", exclude_zero=True), m(1, low=0.05, high=0.5)))
    yield SampleInput("vector", (m(5, exclude_zero=True, layout="strided"), m(1, low=0.05, high=0.5)))


def _conv_tbc_samples(m: Maker):
    yield SampleInput("pad1", (m(5, 2, 3), m(3, 3, 4), m(4), 1))
    # (a time-strided input views as rows, which torch's kernel requires; a transposed one is refused)
    yield SampleInput("noncontig_no_pad", (m(4, 3, 2, layout="strided"), m(2, 2, 3, layout="T"), m(3)), {"pad": 0})


NN_OPS = [
    OpInfo("conv_tbc", _conv_tbc_samples, dtypes=F_C64, tol=NN_TOL),
    OpInfo(NN + "prelu", _prelu_samples, tol=NN_TOL, aliases=("prelu",), domain="no input at the kink 0"),
    _act("relu", inplace=True, aliases=("relu", "Tensor.relu")),
    _act("relu6", _act_samples(-8.0, 8.0)),
    _act("leaky_relu", _act_samples(negative_slope=0.2), inplace=True),
    _act("elu", _act_samples(alpha=1.5), inplace=True),
    _act("selu", inplace=True, aliases=("selu",)),
    _act("celu", _act_samples(alpha=0.7), inplace=True),
    _act("gelu"),
    _act("gelu", _act_samples(approximate="tanh"), variant="tanh"),
    _act("silu", dtypes=F_C64),
    _act("mish"),
    _act("logsigmoid"),
    OpInfo(NN + "softplus", _softplus_samples),
    _act("hardtanh", _act_samples(min_val=-0.5, max_val=1.2), inplace=True),
    _act("hardswish", _act_samples(-5.0, 5.0)),
    OpInfo(NN + "softmax", _softmax_samples, aliases=("softmax", "Tensor.softmax")),
    OpInfo(NN + "log_softmax", _softmax_samples, aliases=("log_softmax", "Tensor.log_softmax")),
    OpInfo(NN + "linear", _linear_samples, dtypes=F_C, tol=NN_TOL),
    OpInfo(NN + "bilinear", _bilinear_samples, dtypes=F_C64, tol=NN_TOL),
    # weight (class weights) is not differentiable in torch's nll_loss kernel
    OpInfo(NN + "cross_entropy", _ce_indices_samples, variant="indices", nondiff_args=frozenset({"weight"}),
           tol=NN_TOL),
    OpInfo(NN + "cross_entropy", _ce_probs_samples, variant="probs", nondiff_args=frozenset({"weight"}),
           tol=NN_TOL, notes="class-probability targets, differentiable w.r.t. the target"),
    OpInfo(NN + "cross_entropy", _ce_smoothing_samples, variant="label_smoothing",
           nondiff_args=frozenset({"weight"}), tol=NN_TOL),
    OpInfo(NN + "linear_cross_entropy", _linear_ce_samples, nondiff_args=frozenset({"weight"}), tol=NN_TOL),
    OpInfo(NN + "nll_loss", _nll_samples, nondiff_args=frozenset({"weight"}), tol=NN_TOL),
    OpInfo(NN + "mse_loss", _regression_loss_samples(), tol=NN_TOL),
    OpInfo(NN + "l1_loss", _regression_loss_samples(), dtypes=F_C, tol=NN_TOL),
    OpInfo(NN + "smooth_l1_loss", _regression_loss_samples(beta=0.5), tol=NN_TOL),
    OpInfo(NN + "huber_loss", _regression_loss_samples(delta=0.7), tol=NN_TOL),
    OpInfo(NN + "binary_cross_entropy", _bce_samples, nondiff_args=frozenset({"weight"}), tol=NN_TOL,
           domain="input in (0.05, 0.95)"),
    OpInfo(NN + "binary_cross_entropy_with_logits", _bce_logits_samples, tol=NN_TOL,
           nondiff_args=frozenset({"weight", "pos_weight"}),
           notes="torch raises if weight/pos_weight require grad ('is not differentiable with respect to')"),
    OpInfo(NN + "kl_div", _kl_div_samples, tol=NN_TOL, domain="input: log-probabilities; target: probabilities"),
    OpInfo("cdist", _cdist_mm_samples, variant="mm", tol=NN_TOL),
    *[OpInfo("cdist", gen, variant=variant, tol=NN_TOL, supports_gradgrad=False,
             gradgrad_skip_reason="torch's _cdist_backward has no derivative either: both raise the same "
                                  "NotImplementedError (test_cdist_double_backward_error)")
      for gen, variant in ((_cdist_direct_samples, "direct"), (_cdist_other_p_samples, "other_p"))],
    OpInfo(NN + "pixel_shuffle", _pixel_shuffle_samples, dtypes=F_C, aliases=("pixel_shuffle",)),
    OpInfo(NN + "pixel_unshuffle", _pixel_unshuffle_samples, dtypes=F_C, aliases=("pixel_unshuffle",)),
    OpInfo(NN + "margin_ranking_loss", _margin_ranking_samples, nondiff_args=frozenset({2}), tol=NN_TOL),
    OpInfo(NN + "hinge_embedding_loss", _hinge_embedding_samples, nondiff_args=frozenset({1}), tol=NN_TOL),
    OpInfo(NN + "cosine_embedding_loss", _cosine_embedding_samples, nondiff_args=frozenset({2}), tol=NN_TOL),
    OpInfo(NN + "triplet_margin_loss", _triplet_samples, dtypes=F_C, tol=NN_TOL),
    OpInfo(NN + "poisson_nll_loss", _poisson_nll_samples, tol=NN_TOL, domain="target >= 0; rates > 0"),
    # the target is not differentiable in torch's soft_margin_loss (it raises if it requires grad)
    OpInfo(NN + "soft_margin_loss", _soft_margin_samples, dtypes=F_C64, nondiff_args=frozenset({1}), tol=NN_TOL),
    OpInfo(NN + "multilabel_soft_margin_loss", _multilabel_soft_margin_samples, tol=NN_TOL,
           notes="composed in Python: target and weight are differentiable too"),
    *[OpInfo(NN + name, gen, nondiff_args=frozenset({"weight"}), tol=NN_TOL, supports_gradgrad=False,
             gradgrad_skip_reason=f"torch's {name}_backward has no derivative: both record torch's NotImplemented "
                                  "node, whose backward raises the same error; no forward-mode formula either",
             domain="no margin term at its kink (z = 0)")
      for name, gen in (("multi_margin_loss", _multi_margin_samples),
                        ("multilabel_margin_loss", _multilabel_margin_samples))],
    OpInfo(NN + "triplet_margin_with_distance_loss", _triplet_distance_samples, dtypes=F_C, tol=NN_TOL),
    OpInfo(NN + "gaussian_nll_loss", _gaussian_nll_samples, tol=NN_TOL, domain="var > 0"),
    OpInfo(NN + "dropout", _dropout_samples, dtypes=F_C, notes="p>0 with training=True is test_dropout_statistics"),
    OpInfo(NN + "layer_norm", _layer_norm_samples, tol=NN_TOL),
    OpInfo(NN + "group_norm", _group_norm_samples, tol=NN_TOL),
    OpInfo(NN + "batch_norm", _batch_norm_samples(training=False), variant="eval", nondiff_args=_RUNNING,
           tol=NN_TOL),
    OpInfo(NN + "batch_norm", _batch_norm_samples(training=True), variant="train", nondiff_args=_RUNNING,
           tol=NN_TOL, notes="running stats are updated in place and compared after the call"),
    OpInfo(NN + "instance_norm", _instance_norm_samples, nondiff_args=_RUNNING, tol=NN_TOL),
    OpInfo(NN + "conv1d", _conv1d_samples, dtypes=F_C, tol=NN_TOL, aliases=("conv1d",)),
    OpInfo(NN + "conv2d", _conv2d_samples, dtypes=F_C, tol=NN_TOL, aliases=("conv2d",)),
    OpInfo(NN + "conv_transpose2d", _conv_transpose2d_samples, dtypes=F_C, tol=NN_TOL, aliases=("conv_transpose2d",)),
    OpInfo(NN + "max_pool1d", _max_pool1d_samples),
    OpInfo(NN + "max_pool2d", _max_pool2d_samples),
    OpInfo(NN + "avg_pool1d", _avg_pool1d_samples, tol=NN_TOL),
    OpInfo(NN + "avg_pool2d", _avg_pool2d_samples, tol=NN_TOL),
    OpInfo(NN + "adaptive_avg_pool2d", _adaptive_avg_pool2d_samples, tol=NN_TOL),
    OpInfo(NN + "adaptive_max_pool2d", _adaptive_max_pool2d_samples, tol=NN_TOL, domain="no ties in a window"),
    OpInfo(NN + "adaptive_max_pool1d", _adaptive_max_pool1d_samples, tol=NN_TOL, domain="no ties in a window"),
    OpInfo(NN + "embedding", _embedding_samples, dtypes=F_C64),
    OpInfo(NN + "embedding_bag", _embedding_bag_samples, tol=NN_TOL, supports_gradgrad=False,
           gradgrad_skip_reason="torch's _embedding_bag_backward raises 'the derivative ... is not implemented' "
                                "(EmbeddingBagBackwardBackward0) and the per_sample_weights backward records its "
                                "NotImplemented node; no forward-mode formula for _embedding_bag either",
           domain="no ties between rows in a max bag"),
    OpInfo(NN + "ctc_loss", _ctc_samples, tol=NN_TOL, input_process=_ctc_log_softmax, supports_gradgrad=False,
           gradgrad_skip_reason="torch's _ctc_loss_backward has no derivative (its NotImplemented node raises); "
                                "no forward-mode formula for _ctc_loss either",
           domain="log_probs are log_softmax outputs (applied by input_process)"),
    OpInfo(NN + "pad", _pad_samples("constant"), variant="constant", dtypes=F_C),
    OpInfo(NN + "pad", _pad_samples("reflect"), variant="reflect", dtypes=F_C),
    OpInfo(NN + "pad", _pad_samples("replicate"), variant="replicate", dtypes=F_C),
    OpInfo(NN + "one_hot", _one_hot_samples, dtypes=("int64",), differentiable=False),
    OpInfo(NN + "normalize", _normalize_samples, dtypes=F_C, tol=NN_TOL),
    OpInfo(NN + "cosine_similarity", _cosine_similarity_samples, tol=NN_TOL),
    OpInfo(NN + "pairwise_distance", _pairwise_distance_samples, dtypes=F_C, tol=NN_TOL),
    OpInfo(NN + "unfold", _unfold_samples, dtypes=F_C),
    OpInfo(NN + "fold", _fold_samples, dtypes=F_C),
    OpInfo(NN + "interpolate", _interp_samples("nearest"), variant="nearest"),
    OpInfo(NN + "interpolate", _interp_samples("bilinear", False), variant="bilinear", tol=NN_TOL),
    OpInfo(NN + "interpolate", _interp_samples("bilinear", True), variant="bilinear_align_corners", tol=NN_TOL),
    OpInfo(NN + "interpolate", _interp_samples("bicubic", False), variant="bicubic", tol=NN_TOL),
    OpInfo(NN + "interpolate", _interp_samples("bicubic", True), variant="bicubic_align_corners", tol=NN_TOL),
    *[OpInfo(NN + "grid_sample", _grid_sample_samples(mode), variant=mode, tol=NN_TOL,
             domain="grid in (-0.9, 0.9), off pixel centres (bilinear/nearest kinks)",
             notes="torch has no forward-mode formula for grid_sampler_2d/3d; its double backward "
                   "(GridSampler2DBackwardBackward0) is differentiable again; nearest's grid gradient is 0")
      for mode in ("bilinear", "nearest", "bicubic")],
    OpInfo(NN + "affine_grid", _affine_grid_samples, tol=NN_TOL),
    OpInfo(NN + "pdist", _pdist_samples, tol=NN_TOL, aliases=("pdist",), supports_gradgrad=False,
           gradgrad_skip_reason=_NO_PDIST_GRADGRAD, domain="distinct rows"),
    OpInfo(NN + "pdist", _pdist_other_p_samples, variant="other_p", tol=NN_TOL, supports_gradgrad=False,
           gradgrad_skip_reason=_NO_PDIST_GRADGRAD, domain="distinct rows, no ties for p=inf"),
    OpInfo(NN + "channel_shuffle", _channel_shuffle_samples, dtypes=("float32", "float64", "int64") + C128,
           aliases=("channel_shuffle",)),
    OpInfo(NN + "rrelu", _rrelu_samples, inplace=NN + "rrelu_", aliases=("rrelu",),
           notes="random slopes (training, lower < upper) are tested in tests/nn/test_functional_extra_vs_torch.py"),
    OpInfo(NN + "local_response_norm", _local_response_norm_samples, tol=NN_TOL),
    OpInfo(NN + "lp_pool1d", _lp_pool1d_samples, tol=NN_TOL, domain="odd/fractional p: positive inputs"),
    OpInfo(NN + "lp_pool2d", _lp_pool2d_samples, tol=NN_TOL, domain="no ties in a window (p=inf)"),
    *[OpInfo(NN + kind + "_with_indices", _with_indices_samples(kind), tol=NN_TOL, domain="no ties in a window")
      for kind in ("max_pool1d", "max_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d", "max_pool3d",
                   "adaptive_max_pool3d")],
    OpInfo(NN + "conv3d", _conv3d_samples, dtypes=F_C, tol=NN_TOL, aliases=("conv3d",)),
    OpInfo("nn.grad.conv2d_input", _conv_input_grad_samples, tol=NN_TOL),
    OpInfo("nn.grad.conv2d_weight", _conv_weight_grad_samples, tol=NN_TOL),
    OpInfo(NN + "conv_transpose3d", _conv_transpose3d_samples, dtypes=F_C, tol=NN_TOL, aliases=("conv_transpose3d",)),
    OpInfo(NN + "max_pool3d", _pool3d_samples("max_pool3d"), tol=NN_TOL, domain="no ties in a window"),
    OpInfo(NN + "avg_pool3d", _pool3d_samples("avg_pool3d"), tol=NN_TOL),
    OpInfo(NN + "lp_pool3d", _pool3d_samples("lp_pool3d"), tol=NN_TOL, domain="odd p: positive inputs"),
    OpInfo(NN + "adaptive_avg_pool3d", _adaptive_pool3d_samples(False), tol=NN_TOL),
    OpInfo(NN + "adaptive_max_pool3d", _adaptive_pool3d_samples(True), tol=NN_TOL, domain="no ties in a window"),
    *[OpInfo(NN + "pad", _pad3d_samples(mode), variant=f"{mode}_3d", dtypes=F_C, tol=NN_TOL)
      for mode in ("reflect", "replicate")],
]

OPS = NN_OPS
