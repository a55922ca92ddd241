"""Layers and functionals on an empty batch (N = 0) against torch.

Output shape, dtype and strides; the input's and parameters' gradients after ``(out.sum() * 3).backward()``
(empty, or zero-filled weight gradients, as torch's); the running statistics of the norms; and torch's errors
(type and message) where it raises.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch


def _run(lib, make, shapes, dtype: str, channels_last: bool):
    lib.manual_seed(0)
    layer = make(lib, getattr(lib, dtype))
    inputs = []
    for s in shapes:
        if callable(s):
            inputs.append(s(lib))
            continue
        x = lib.zeros(*s, dtype=getattr(lib, dtype))
        if channels_last and len(s) == 4:
            x = x.to(memory_format=lib.channels_last)
        inputs.append(x.requires_grad_())
    out = layer(*inputs)
    outs = list(out) if isinstance(out, tuple) else [out]
    result = {"out": [(tuple(o.shape), str(o.dtype).split(".")[-1], o.stride()) for o in outs]}
    if outs[0].requires_grad:
        (outs[0].sum() * 3).backward()
        # (the gradients' strides of channels-last leaves are left out: tracegrad's accumulation lays an empty
        # gradient out like its leaf, torch keeps the backward kernel's layout)
        result["grads"] = [(tuple(x.grad.shape), None if channels_last else x.grad.stride())
                           for x in inputs if x.requires_grad]
        params = list(layer.parameters()) if hasattr(layer, "parameters") else []
        result["param_grads"] = [None if p.grad is None else p.grad.detach().numpy().tolist() for p in params]
    buffers = list(layer.buffers()) if hasattr(layer, "buffers") else []
    result["buffers"] = [repr(np.asarray(b.detach().numpy()).tolist()) for b in buffers]  # (NaN compares)
    return result


def _outcome(lib, *args):
    try:
        return ("ok", _run(lib, *args))
    except Exception as e:  # (the same error as torch's: type and message)
        return ("raises", type(e).__name__, str(e))


def _fn(name, **kw):
    return lambda L, dt: (lambda *xs: getattr(L.nn.functional, name)(*xs, **kw))


CASES = {
    # convolutions (the reported crash): stride, padding, dilation, groups, padding modes, transposes
    "conv1d": (lambda L, dt: L.nn.Conv1d(3, 4, 3, padding=1, dtype=dt), [(0, 3, 5)]),
    "conv1d_groups": (lambda L, dt: L.nn.Conv1d(4, 4, 3, stride=2, dilation=2, groups=2, dtype=dt), [(0, 4, 9)]),
    "conv2d": (lambda L, dt: L.nn.Conv2d(3, 2, 3, padding=1, dtype=dt), [(0, 3, 4, 4)]),
    "conv2d_groups": (lambda L, dt: L.nn.Conv2d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2, dtype=dt),
                      [(0, 4, 7, 7)]),
    "conv2d_nobias_same": (lambda L, dt: L.nn.Conv2d(3, 2, 3, padding="same", bias=False, dtype=dt),
                           [(0, 3, 4, 4)]),
    "conv2d_reflect": (lambda L, dt: L.nn.Conv2d(3, 2, 3, padding=1, padding_mode="reflect", dtype=dt),
                       [(0, 3, 4, 4)]),
    "conv2d_circular": (lambda L, dt: L.nn.Conv2d(3, 2, 3, padding=1, padding_mode="circular", dtype=dt),
                        [(0, 3, 4, 4)]),
    "conv3d": (lambda L, dt: L.nn.Conv3d(2, 2, 2, padding=1, dtype=dt), [(0, 2, 3, 3, 3)]),
    "conv_transpose1d": (lambda L, dt: L.nn.ConvTranspose1d(3, 4, 3, stride=2, padding=1, output_padding=1,
                                                            dtype=dt), [(0, 3, 5)]),
    "conv_transpose2d": (lambda L, dt: L.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2, dilation=2,
                                                            dtype=dt), [(0, 4, 3, 3)]),
    "conv_transpose3d": (lambda L, dt: L.nn.ConvTranspose3d(2, 2, 2, stride=2, dtype=dt), [(0, 2, 2, 2, 2)]),
    # pools
    "max_pool1d": (lambda L, dt: L.nn.MaxPool1d(2), [(0, 3, 5)]),
    "max_pool1d_indices_ceil": (lambda L, dt: L.nn.MaxPool1d(3, stride=2, padding=1, ceil_mode=True,
                                                             return_indices=True), [(0, 3, 6)]),
    "max_pool2d": (lambda L, dt: L.nn.MaxPool2d(2), [(0, 3, 4, 4)]),
    "max_pool2d_indices_ceil": (lambda L, dt: L.nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True,
                                                             return_indices=True), [(0, 3, 5, 5)]),
    "max_pool2d_dilation": (lambda L, dt: L.nn.MaxPool2d(2, dilation=2), [(0, 3, 5, 5)]),
    "max_pool3d": (lambda L, dt: L.nn.MaxPool3d(2), [(0, 3, 4, 4, 4)]),
    "max_unpool2d": (lambda L, dt: (lambda x: L.nn.functional.max_unpool2d(x, L.zeros(0, 3, 2, 2, dtype=L.long),
                                                                          2)), [(0, 3, 2, 2)]),
    "avg_pool2d_ceil": (lambda L, dt: L.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                                     count_include_pad=False), [(0, 3, 5, 5)]),
    "adaptive_avg_pool2d": (lambda L, dt: L.nn.AdaptiveAvgPool2d((2, 3)), [(0, 3, 5, 5)]),
    "adaptive_max_pool1d": (lambda L, dt: L.nn.AdaptiveMaxPool1d(3, return_indices=True), [(0, 3, 5)]),
    "adaptive_max_pool2d": (lambda L, dt: L.nn.AdaptiveMaxPool2d((2, 3), return_indices=True), [(0, 3, 5, 5)]),
    "adaptive_max_pool2d_one": (lambda L, dt: L.nn.AdaptiveMaxPool2d(1), [(0, 3, 5, 5)]),
    "adaptive_max_pool3d": (lambda L, dt: L.nn.AdaptiveMaxPool3d(2), [(0, 3, 5, 5, 5)]),
    # norms (torch's batch_norm of an empty input: a clone times weight[0] plus bias[0], running stats untouched)
    "batch_norm1d_train": (lambda L, dt: L.nn.BatchNorm1d(3, dtype=dt), [(0, 3)]),
    "batch_norm1d_train_3d": (lambda L, dt: L.nn.BatchNorm1d(3, dtype=dt), [(0, 3, 4)]),
    "batch_norm2d_train": (lambda L, dt: L.nn.BatchNorm2d(3, dtype=dt), [(0, 3, 4, 4)]),
    "batch_norm2d_eval": (lambda L, dt: L.nn.BatchNorm2d(3, dtype=dt).eval(), [(0, 3, 4, 4)]),
    "batch_norm2d_noaffine_train": (lambda L, dt: L.nn.BatchNorm2d(3, affine=False, dtype=dt), [(0, 3, 4, 4)]),
    "batch_norm2d_nostats_eval": (lambda L, dt: L.nn.BatchNorm2d(3, track_running_stats=False, dtype=dt).eval(),
                                  [(0, 3, 4, 4)]),
    "batch_norm3d_eval": (lambda L, dt: L.nn.BatchNorm3d(3, dtype=dt).eval(), [(0, 3, 2, 2, 2)]),
    "batch_norm_fn_empty_weight": (lambda L, dt: (lambda x: L.nn.functional.batch_norm(
        x, None, None, weight=L.ones(0, dtype=dt), training=True)), [(0, 3, 2, 2)]),
    "instance_norm2d": (lambda L, dt: L.nn.InstanceNorm2d(3, dtype=dt), [(0, 3, 4, 4)]),
    "instance_norm2d_stats": (lambda L, dt: L.nn.InstanceNorm2d(3, track_running_stats=True, dtype=dt),
                              [(0, 3, 4, 4)]),
    "instance_norm2d_affine": (lambda L, dt: L.nn.InstanceNorm2d(3, affine=True, track_running_stats=True,
                                                                 dtype=dt), [(0, 3, 4, 4)]),
    "instance_norm2d_affine_eval": (lambda L, dt: L.nn.InstanceNorm2d(3, affine=True, track_running_stats=True,
                                                                      dtype=dt).eval(), [(0, 3, 4, 4)]),
    "instance_norm1d_affine": (lambda L, dt: L.nn.InstanceNorm1d(3, affine=True, dtype=dt), [(0, 3, 4)]),
    "group_norm": (lambda L, dt: L.nn.GroupNorm(2, 4, dtype=dt), [(0, 4, 3, 3)]),
    "group_norm_2d_input": (lambda L, dt: L.nn.GroupNorm(2, 4, dtype=dt), [(0, 4)]),
    "layer_norm": (lambda L, dt: L.nn.LayerNorm([4, 4], dtype=dt), [(0, 3, 4, 4)]),
    # resampling, padding
    "upsample_nearest1d": (lambda L, dt: L.nn.Upsample(scale_factor=2, mode="nearest"), [(0, 3, 4)]),
    "upsample_nearest2d": (lambda L, dt: L.nn.Upsample(scale_factor=2, mode="nearest"), [(0, 3, 4, 4)]),
    "upsample_nearest3d": (lambda L, dt: L.nn.Upsample(scale_factor=2, mode="nearest"), [(0, 3, 2, 2, 2)]),
    "upsample_nearest_exact": (lambda L, dt: L.nn.Upsample(size=(3, 5), mode="nearest-exact"), [(0, 3, 4, 4)]),
    "upsampling_nearest2d": (lambda L, dt: L.nn.UpsamplingNearest2d(scale_factor=2), [(0, 3, 2, 2)]),
    "upsample_bilinear": (lambda L, dt: L.nn.Upsample(size=(3, 7), mode="bilinear", align_corners=True),
                          [(0, 3, 4, 4)]),
    "pad_reflect1d": (_fn("pad", pad=(1, 2), mode="reflect"), [(0, 3, 4)]),
    "pad_reflect2d": (_fn("pad", pad=(1, 2, 0, 1), mode="reflect"), [(0, 3, 4, 4)]),
    "pad_replicate2d": (_fn("pad", pad=(1, 2, 0, 1), mode="replicate"), [(0, 3, 4, 4)]),
    "pad_circular2d": (_fn("pad", pad=(1, 2, 0, 1), mode="circular"), [(0, 3, 4, 4)]),
    "pad_reflect3d": (_fn("pad", pad=(1, 1, 1, 1, 1, 1), mode="reflect"), [(0, 3, 3, 3, 3)]),
    "pad_replicate3d": (_fn("pad", pad=(1, 1, 1, 1, 1, 1), mode="replicate"), [(0, 3, 3, 3, 3)]),
    "pad_constant": (_fn("pad", pad=(1, 2, 0, 1)), [(0, 3, 4, 4)]),
    # the rest, which already worked: kept so that they stay so
    "unfold": (lambda L, dt: L.nn.Unfold(2, padding=1, stride=2), [(0, 3, 4, 4)]),
    "fold": (lambda L, dt: L.nn.Fold((4, 4), 2, stride=2), [(0, 12, 4)]),
    "embedding": (lambda L, dt: L.nn.Embedding(5, 3, padding_idx=1, max_norm=1.0, dtype=dt),
                  [lambda L: L.zeros(0, 4, dtype=L.long)]),
    "linear": (lambda L, dt: L.nn.Linear(3, 4, dtype=dt), [(0, 5, 3)]),
    "bilinear": (lambda L, dt: L.nn.Bilinear(3, 2, 4, dtype=dt), [(0, 3), (0, 2)]),
    "dropout2d": (lambda L, dt: L.nn.Dropout2d(0.5), [(0, 3, 4, 4)]),
}


@pytest.mark.parametrize("dtype, channels_last", [("float32", False), ("float64", False), ("float32", True)],
                         ids=["float32", "float64", "float32_channels_last"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_empty_batch_matches_torch(name, dtype, channels_last):
    make, shapes = CASES[name]
    if channels_last and not any(not callable(s) and len(s) == 4 for s in shapes):
        pytest.skip("no 4-D input")
    expected = _outcome(torch, make, shapes, dtype, channels_last)
    assert _outcome(tg, make, shapes, dtype, channels_last) == expected


def test_batch_norm_train_keeps_running_stats_on_empty_batch():
    for lib in (torch, tg):
        m = lib.nn.BatchNorm2d(3)
        m.running_mean.fill_(1.0)
        out = m(lib.zeros(0, 3, 4, 4))
        assert out.grad_fn.name() == "AddBackward0"
        assert m.running_mean.tolist() == [1.0, 1.0, 1.0] and m.running_var.tolist() == [1.0, 1.0, 1.0]
        assert int(m.num_batches_tracked) == 1
