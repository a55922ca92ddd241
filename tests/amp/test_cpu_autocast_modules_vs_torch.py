"""``torch.nn`` modules under ``torch.autocast("cpu")`` against torch 2.13: each module with parameters (or made of
the operators autocast lists) run in training mode, and in eval mode under ``no_grad``, on float32 inputs and on
bfloat16 ones; the outputs' dtypes, and their values bit for bit.

Left out of ``MODULES``: modules whose bfloat16 values round differently from torch's for reasons other than
autocast (scaled_dot_product_attention's blocks in the transformer layers, oneDNN's LSTM kernel, ``_trilinear``'s
per-feature products in Bilinear), and the transformer encoder layer's eval fast path, which tracegrad lacks."""

from __future__ import annotations

import contextlib

import pytest
from _lib import assert_same_bits, np, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")


def _inputs(*shapes):
    def build(rs):
        return [rs.standard_normal(shape).astype(np.float32) for shape in shapes]
    return build


def _indices(*rows):
    return lambda rs: [np.array(rows)]


# name -> (module class name, constructor args, constructor kwargs, inputs(rs) -> list of arrays)
MODULES = {
    "Linear": ("Linear", (3, 5), {}, _inputs((4, 3))),
    "Conv1d": ("Conv1d", (2, 3, 3), {}, _inputs((1, 2, 8))),
    "Conv2d": ("Conv2d", (2, 3, 3), {}, _inputs((1, 2, 5, 5))),
    "Conv2d reflect": ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "reflect"}, _inputs((1, 2, 5, 5))),
    "Conv2d circular": ("Conv2d", (2, 3, 3), {"padding": 1, "padding_mode": "circular"}, _inputs((1, 2, 5, 5))),
    "Conv3d": ("Conv3d", (2, 3, 3), {}, _inputs((1, 2, 4, 4, 4))),
    "ConvTranspose1d": ("ConvTranspose1d", (2, 3, 3), {}, _inputs((1, 2, 5))),
    "ConvTranspose2d": ("ConvTranspose2d", (2, 3, 3), {"stride": 2}, _inputs((1, 2, 4, 4))),
    "ConvTranspose3d": ("ConvTranspose3d", (2, 3, 3), {}, _inputs((1, 2, 4, 4, 4))),
    "PReLU": ("PReLU", (), {}, _inputs((2, 3))),
    "Embedding": ("Embedding", (10, 4), {}, _indices([1, 2], [3, 9])),
    "EmbeddingBag": ("EmbeddingBag", (10, 4), {}, _indices([1, 2], [3, 9])),
    "Softmax": ("Softmax", (1,), {}, _inputs((4, 3))),
    "Softmin": ("Softmin", (1,), {}, _inputs((4, 3))),
    "LocalResponseNorm": ("LocalResponseNorm", (2,), {}, _inputs((2, 4, 5))),
    "RNN": ("RNN", (3, 4), {}, _inputs((5, 2, 3))),
    "RNN relu 2 layers bidirectional": ("RNN", (3, 4), {"nonlinearity": "relu", "num_layers": 2,
                                                         "bidirectional": True}, _inputs((5, 2, 3))),
    "GRU": ("GRU", (3, 4), {}, _inputs((5, 2, 3))),
    "GRU batch_first": ("GRU", (3, 4), {"batch_first": True}, _inputs((2, 5, 3))),
    "RNNCell": ("RNNCell", (3, 4), {}, _inputs((2, 3))),
    "GRUCell": ("GRUCell", (3, 4), {}, _inputs((2, 3))),
    "MultiheadAttention": ("MultiheadAttention", (8, 2), {}, _inputs((4, 2, 8), (4, 2, 8), (4, 2, 8))),
    "MultiheadAttention kdim vdim": ("MultiheadAttention", (8, 2), {"kdim": 6, "vdim": 5},
                                     _inputs((4, 2, 8), (3, 2, 6), (3, 2, 5))),
    "CrossEntropyLoss": ("CrossEntropyLoss", (), {}, lambda rs: [rs.standard_normal((4, 5)).astype(np.float32),
                                                               np.array([0, 1, 2, 3])]),
    "MSELoss": ("MSELoss", (), {}, _inputs((4, 5), (4, 5))),
    "GaussianNLLLoss": ("GaussianNLLLoss", (), {}, lambda rs: [*_inputs((4, 5), (4, 5))(rs),
                                                             np.abs(rs.standard_normal((4, 5))).astype(np.float32)]),
    "CosineSimilarity": ("CosineSimilarity", (), {}, _inputs((4, 5), (4, 5))),
    "Upsample bilinear": ("Upsample", (), {"scale_factor": 2, "mode": "bilinear"}, _inputs((1, 2, 3, 3))),
    "MaxPool3d": ("MaxPool3d", (2,), {}, _inputs((1, 2, 4, 4, 4))),
    "AvgPool3d": ("AvgPool3d", (2,), {}, _inputs((1, 2, 4, 4, 4))),
    "AdaptiveMaxPool3d": ("AdaptiveMaxPool3d", (2,), {}, _inputs((1, 2, 4, 4, 4))),
    "ReflectionPad1d": ("ReflectionPad1d", (1,), {}, _inputs((1, 2, 4))),
    "ReflectionPad2d": ("ReflectionPad2d", (1,), {}, _inputs((1, 2, 4, 4))),
    "ReflectionPad3d": ("ReflectionPad3d", (1,), {}, _inputs((1, 2, 4, 4, 4))),
    "ReplicationPad1d": ("ReplicationPad1d", (1,), {}, _inputs((1, 2, 4))),
    "ReplicationPad2d": ("ReplicationPad2d", (1,), {}, _inputs((1, 2, 4, 4))),
    "ReplicationPad3d": ("ReplicationPad3d", (1,), {}, _inputs((1, 2, 4, 4, 4))),
    "Unfold": ("Unfold", (2,), {}, _inputs((1, 2, 4, 4))),
    "Fold": ("Fold", ((3, 3), 2), {}, _inputs((1, 8, 4))),
    "BatchNorm1d": ("BatchNorm1d", (3,), {}, _inputs((4, 3))),
    "BatchNorm2d": ("BatchNorm2d", (2,), {}, _inputs((2, 2, 3, 3))),
    "LayerNorm": ("LayerNorm", (5,), {}, _inputs((4, 5))),
    "GroupNorm": ("GroupNorm", (2, 4), {}, _inputs((2, 4, 3))),
    "InstanceNorm1d affine": ("InstanceNorm1d", (3,), {"affine": True}, _inputs((2, 3, 5))),
}
MODES = {
    "train": (False, False),  # (eval and no_grad, bfloat16 inputs)
    "eval no_grad": (True, False),
    "bfloat16 inputs": (False, True),
}


def _set_parameters(lib, module) -> None:
    """Fixed parameters, the same in both libraries."""
    rs = np.random.default_rng(1)
    with lib.no_grad():
        for _, parameter in sorted(module.named_parameters()):
            parameter.copy_(lib.tensor(rs.standard_normal(tuple(parameter.shape)).astype(np.float32) * 0.5))


def _as_input(lib, array, bfloat16: bool):
    tensor = lib.tensor(array)
    return tensor.to(lib.bfloat16) if bfloat16 and tensor.is_floating_point() else tensor


def _flat(output) -> list:
    if isinstance(output, tuple):
        return [t for part in output for t in _flat(part)]
    return [] if output is None else [output]


def _run(lib, name: str, mode: str) -> list:
    class_name, args, kwargs, inputs = MODULES[name]
    evaluating, bfloat16 = MODES[mode]
    module = getattr(lib.nn, class_name)(*args, **kwargs)
    _set_parameters(lib, module)
    if evaluating:
        module.eval()
    xs = [_as_input(lib, a, bfloat16) for a in inputs(np.random.default_rng(2))]
    with lib.no_grad() if evaluating else contextlib.nullcontext(), lib.autocast("cpu"):
        return _flat(module(*xs))


def _outcome(lib, name: str, mode: str):
    """The outputs' dtypes and values (float32 copies), or the error's type and message."""
    try:
        outputs = _run(lib, name, mode)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc).replace("tracegrad", "torch")
    return [str(t.dtype).replace("tracegrad", "torch") for t in outputs], [t.detach().float() for t in outputs]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", MODULES)
def test_module_runs_in_torchs_dtypes_and_values(name, mode):
    (our_kind, ours), (their_kind, theirs) = _outcome(tg, name, mode), _outcome(torch, name, mode)
    assert our_kind == their_kind
    if isinstance(ours, str):
        assert ours == theirs
        return
    for a, b in zip(ours, theirs):
        assert_same_bits(a, b)
