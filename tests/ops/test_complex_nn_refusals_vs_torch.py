"""Complex input to the operators torch refuses it for, against torch: the same exception type and message.

Driven by the OpInfo database: every entry run in float64 that does not list complex128 is called with its samples
made complex (complex128 and complex64, with and without inputs requiring grad, and through its in-place form and
aliases), and whatever torch raises tracegrad must raise, word for word. Most are ``nn.functional`` ops whose CPU
kernels have no complex instantiation (``"elu_cpu" not implemented for 'ComplexDouble'``); the kernel named can
depend on the path (``max_pool1d_impl`` without grad, ``max_pool2d_channels_last`` for channels-last strides,
``nll_loss2d_forward_out_frame`` beyond 2 dims). The entries listing complex64 alone compute, but refuse to record
a complex output for autograd (``silu does not support automatic differentiation for outputs with complex
dtype.``). A new entry without complex dtypes is covered as soon as it is added.

``OTHERS`` adds what the database does not hold (activations without an entry, layouts and modes its samples do
not reach) and the neighbouring refusals fixed with them (bool and integer input to the same kernels).

No row is left deliberately different."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch
from opinfo import op_db
from opinfo.core import Call, resolve

_ENTRIES = [op for op in op_db if "float64" in op.dtypes and "complex128" not in op.dtypes]


def _outcome(lib, op, sample, path: str, requires_grad: bool):
    try:
        call = Call(lib, op, sample, requires_grad=requires_grad)
        call.run(resolve(lib, path))
    except Exception as exc:  # noqa: BLE001 - the exception itself is compared
        return type(exc).__name__, str(exc)
    return None


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("op", _ENTRIES, ids=lambda op: op.id)
def test_complex_input_like_torch(op):
    differ = []
    for dtype in ("complex128", "complex64"):
        for sample in op.samples(dtype):
            runs = [(op.name, False), (op.name, True)] + [(path, False) for path in op.aliases]
            if op.inplace:
                runs.append((op.inplace, False))
            for path, grad in runs:
                expected = _outcome(torch, op, sample, path, grad)
                got = _outcome(tg, op, sample, path, grad)
                if got != expected:
                    differ.append(f"{path}/{sample.name}/{dtype}/requires_grad={grad}: torch {expected}, tracegrad {got}")
    assert not differ, "\n".join(differ)


_RNG = np.random.default_rng(0)
_Z = _RNG.standard_normal((2, 3, 4, 4)) + 1j * _RNG.standard_normal((2, 3, 4, 4))


def _layout(L, a: np.ndarray, layout: str):
    """``a`` as a tensor laid out contiguously, transposed, channels-last (4-d/5-d) or with its dims 1 and 2
    swapped in memory (3-d)."""
    if layout == "T":
        return L.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
    if layout == "channels_last":
        return L.tensor(a).contiguous(memory_format=L.channels_last if a.ndim == 4 else L.channels_last_3d)
    if layout == "perm":
        return L.tensor(np.ascontiguousarray(np.swapaxes(a, 1, 2))).transpose(1, 2)
    return L.tensor(a)


def _z(L, *shape, layout: str = "contig", dtype=np.complex128, grad: bool = False):
    a = _Z.reshape(-1)[: int(np.prod(shape))].reshape(shape).astype(dtype)
    t = _layout(L, a, layout)
    return t.detach().requires_grad_(True) if grad else t


def _ones(L, *shape, dtype="bool", layout: str = "contig"):
    return _layout(L, np.ones(shape, dtype=dtype), layout)


OTHERS = {
    # activations without an entry
    "threshold": lambda L: L.nn.functional.threshold(_z(L, 3, 4), 0.5, 0.0),
    "threshold_bool": lambda L: L.nn.functional.threshold(_ones(L, 3), 0.5, 0.0),
    "hardsigmoid": lambda L: L.nn.functional.hardsigmoid(_z(L, 3, 4)),
    "hardshrink": lambda L: L.nn.functional.hardshrink(_z(L, 3, 4, dtype=np.complex64)),
    "softshrink": lambda L: L.nn.functional.softshrink(_z(L, 3, 4)),
    "softshrink_negative_lambda": lambda L: L.nn.functional.softshrink(_z(L, 3, 4), -1.0),  # dtype first
    "relu_inplace": lambda L: L.nn.functional.relu(_z(L, 3, 4), inplace=True),
    "relu_bool": lambda L: L.relu(_ones(L, 3)),
    "relu6_bool": lambda L: L.nn.functional.relu6(_ones(L, 3)),
    "leaky_relu_long": lambda L: L.nn.functional.leaky_relu(_ones(L, 3, dtype="int64")),
    "rrelu_training": lambda L: L.nn.functional.rrelu(_z(L, 3, 4), training=True),
    "prelu_complex_weight": lambda L: L.nn.functional.prelu(_z(L, 2, 3).real, _z(L, 3)),
    "prelu_zero_dim": lambda L: L.nn.functional.prelu(_z(L, 1)[0], _z(L, 3)),
    "softmax_dim0": lambda L: L.softmax(_z(L, 3, 4), 0),
    "softmin": lambda L: L.nn.functional.softmin(_z(L, 3, 4), 1),
    "dropout": lambda L: L.nn.functional.dropout(_z(L, 3, 4), 0.5),
    "dropout_p1": lambda L: L.nn.functional.dropout(_z(L, 3, 4), 1.0),  # no noise drawn: computed
    "alpha_dropout": lambda L: L.nn.functional.alpha_dropout(_z(L, 3, 4), 0.5, True),
    "dropout_long": lambda L: L.nn.functional.dropout(_ones(L, 3, dtype="int64"), 0.5),
    # losses
    "kl_div_long": lambda L: L.nn.functional.kl_div(_ones(L, 3, dtype="int64"), _ones(L, 3, dtype="int64")),
    "kl_div_complex_target": lambda L: L.nn.functional.kl_div(_z(L, 3).real, _z(L, 3)),
    "nll_loss_3d": lambda L: L.nn.functional.nll_loss(_z(L, 2, 3, 4), L.zeros(2, 4, dtype=L.long)),
    "nll_loss_bad_target_dtype": lambda L: L.nn.functional.nll_loss(_z(L, 2, 3), L.zeros(2, dtype=L.int32)),
    "nll_loss_float_weight": lambda L: L.nn.functional.nll_loss(_z(L, 2, 3), L.zeros(2, dtype=L.long),
                                                                L.ones(3, dtype=L.float64)),
    "nll_loss_long": lambda L: L.nn.functional.nll_loss(_ones(L, 2, 3, dtype="int64"), L.zeros(2, dtype=L.long)),
    "bce_with_logits_long": lambda L: L.nn.functional.binary_cross_entropy_with_logits(
        _ones(L, 3, dtype="int64"), _ones(L, 3, dtype="int64")),
    "mse_complex_target": lambda L: L.nn.functional.mse_loss(_z(L, 3).real, _z(L, 3)),
    "soft_margin_loss_grad": lambda L: L.nn.functional.soft_margin_loss(_z(L, 3, grad=True), _z(L, 3)),
    "cosine_similarity_long": lambda L: L.nn.functional.cosine_similarity(_ones(L, 3, dtype="int64"),
                                                                          _ones(L, 3, dtype="int64")),
    "cosine_similarity_0d": lambda L: L.nn.functional.cosine_similarity(_z(L, 1)[0], _z(L, 1)[0]),
    # pooling: the kernel named after the layout and the path
    "max_pool1d_grad_T": lambda L: L.nn.functional.max_pool1d(_z(L, 2, 3, 6, layout="T", grad=True), 2),
    "max_pool1d_perm": lambda L: L.nn.functional.max_pool1d(_z(L, 2, 3, 6, layout="perm"), 2),
    "max_pool1d_indices_perm": lambda L: L.nn.functional.max_pool1d(_z(L, 2, 3, 6, layout="perm"), 2,
                                                                    return_indices=True),
    "max_pool1d_long": lambda L: L.nn.functional.max_pool1d(_ones(L, 2, 3, 6, dtype="int64"), 2),
    "max_pool2d_channels_last": lambda L: L.nn.functional.max_pool2d(_z(L, 2, 3, 4, 4, layout="channels_last"), 2),
    "max_pool2d_too_small": lambda L: L.nn.functional.max_pool2d(_z(L, 2, 3, 4, 4), 5),  # geometry first
    "max_pool2d_bool": lambda L: L.nn.functional.max_pool2d(_ones(L, 2, 3, 4, 4), 2),
    "max_pool3d_channels_last_3d": lambda L: L.nn.functional.max_pool3d(
        _z(L, 1, 2, 2, 4, 4, layout="channels_last"), 2),
    "max_pool3d_unbatched_channels_last": lambda L: L.nn.functional.max_pool3d(
        _ones(L, 3, 4, 4, 4, dtype="float64", layout="channels_last"), 2),
    "avg_pool2d_channels_last": lambda L: L.nn.functional.avg_pool2d(_z(L, 2, 3, 4, 4, layout="channels_last"), 2),
    "avg_pool2d_too_small": lambda L: L.nn.functional.avg_pool2d(_z(L, 2, 3, 4, 4), 5),
    "adaptive_avg_pool1d_perm": lambda L: L.nn.functional.adaptive_avg_pool1d(_z(L, 2, 3, 6, layout="perm"), 2),
    "adaptive_avg_pool2d_ones": lambda L: L.nn.functional.adaptive_avg_pool2d(_z(L, 2, 3, 4, 4), 1),  # a mean
    "adaptive_avg_pool2d_ones_long": lambda L: L.nn.functional.adaptive_avg_pool2d(
        _ones(L, 2, 3, 4, 4, dtype="int64"), 1),
    "adaptive_avg_pool3d_ones": lambda L: L.nn.functional.adaptive_avg_pool3d(_z(L, 1, 2, 2, 4, 4), 1),
    "adaptive_max_pool2d_channels_last": lambda L: L.nn.functional.adaptive_max_pool2d(
        _z(L, 2, 3, 4, 4, layout="channels_last"), 2),
    "adaptive_max_pool2d_long": lambda L: L.nn.functional.adaptive_max_pool2d(_ones(L, 2, 3, 4, 4, dtype="int64"), 2),
    "lp_pool2d_channels_last": lambda L: L.nn.functional.lp_pool2d(_z(L, 2, 3, 4, 4, layout="channels_last"), 2, 2),
    # interpolation: each mode's kernel
    "interpolate_linear": lambda L: L.nn.functional.interpolate(_z(L, 2, 3, 4), size=5, mode="linear"),
    "interpolate_nearest_1d": lambda L: L.nn.functional.interpolate(_z(L, 2, 3, 4), size=5),
    "interpolate_nearest_exact_2d": lambda L: L.nn.functional.interpolate(_z(L, 2, 3, 4, 4), scale_factor=1.5,
                                                                          mode="nearest-exact"),
    "interpolate_trilinear": lambda L: L.nn.functional.interpolate(_z(L, 1, 2, 2, 4, 4), size=(3, 5, 5),
                                                                   mode="trilinear"),
    "interpolate_nearest_3d": lambda L: L.nn.functional.interpolate(_z(L, 1, 2, 2, 4, 4), scale_factor=2),
    "interpolate_area": lambda L: L.nn.functional.interpolate(_z(L, 2, 3, 4, 4, layout="channels_last"),
                                                              size=(2, 3), mode="area"),
    "interpolate_area_3d": lambda L: L.nn.functional.interpolate(_z(L, 1, 2, 2, 4, 4), size=(1, 2, 3), mode="area"),
    # complex kernels: computed
    "unfold": lambda L: L.nn.functional.unfold(_z(L, 2, 3, 4, 4), 2),
    "silu_no_grad": lambda L: L.nn.functional.silu(_z(L, 3, 4)),
    "silu_inplace_grad": lambda L: L.nn.functional.silu(_z(L, 3, 4, grad=True).clone(), inplace=True),
}


def _other_outcome(lib, name: str):
    try:
        out = OTHERS[name](lib)
    except Exception as exc:  # noqa: BLE001 - the exception itself is compared
        return type(exc).__name__, str(exc)
    out = out[0] if isinstance(out, tuple) else out
    return "computed", str(out.dtype).replace("torch.", "").replace("tracegrad.", "")


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", sorted(OTHERS))
def test_refusal_like_torch(name):
    assert _other_outcome(tg, name) == _other_outcome(torch, name)
