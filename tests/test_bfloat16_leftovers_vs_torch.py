"""bfloat16 beside float32 parameters in the normalizations, as torch 2.13's CPU kernels take them.

ATen's layer/group/batch norm accept a bfloat16 (or float16) input with float32 parameters (mixed_data_type.h):
the output is bfloat16, the statistics float32; other mixes are refused in ATen's words. rms_norm with a weight
of another dtype takes torch's composite path (a warning, the weighted result brought to the input's dtype) and
its default eps is float's for a bfloat16 input (the opmath type's).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import tracegrad as tg
from tests._lib import value_or_error

_X = np.linspace(-2.3, 3.1, 24, dtype=np.float32).reshape(2, 3, 4)
_W4, _B4 = np.linspace(0.5, 1.7, 4, dtype=np.float32), np.linspace(-0.3, 0.2, 4, dtype=np.float32)
_W3, _B3 = np.linspace(0.6, 1.4, 3, dtype=np.float32), np.linspace(-0.2, 0.1, 3, dtype=np.float32)


def _t(lib, a, dtype=None):
    return lib.tensor(a).to(dtype or lib.float32)


def _call(norm: str, lib, x, w, b):
    F = lib.nn.functional
    if norm == "layer_norm":
        return lib.native_layer_norm(x, (4,), w, b, 1e-5)
    if norm == "group_norm":
        return lib.native_group_norm(x, w, b, 2, 3, 4, 3, 1e-5)
    if norm == "batch_norm_train":
        return lib.native_batch_norm(x, w, b, lib.zeros(3), lib.ones(3), True, 0.1, 1e-5)
    if norm == "batch_norm_eval":
        return (F.batch_norm(x, lib.zeros(3), lib.ones(3) * 2, w, b),)
    return (F.rms_norm(x, (4,), w),)


def _params(norm: str):
    return (_W4, _B4) if norm in ("layer_norm", "rms_norm") else (_W3, _B3)


NORMS = ("layer_norm", "group_norm", "batch_norm_train", "batch_norm_eval", "rms_norm")
MIXES = {"bf16 x, f32 params": ("bfloat16", "float32", "float32"), "bf16 x, bf16 w, f32 b": ("bfloat16", "bfloat16",
         "float32"), "bf16 x, f32 w, bf16 b": ("bfloat16", "float32", "bfloat16"),
         "f32 x, bf16 params": ("float32", "bfloat16", "bfloat16"), "bf16 x, f64 params": ("bfloat16", "float64",
         "float64"), "f32 x, f32 w, f64 b": ("float32", "float32", "float64")}


@pytest.mark.parametrize("mix", MIXES)
@pytest.mark.parametrize("norm", NORMS)
def test_mixed_parameters_outputs_and_refusals(norm, mix):
    if norm == "rms_norm" and MIXES[mix][:2] == ("bfloat16", "bfloat16"):
        pytest.xfail("rms_norm of a bfloat16 input and weight: the last bit of some products differs (not mixed)")
    def program(lib):
        xd, wd, bd = (getattr(lib, d) for d in MIXES[mix])
        w, b = _params(norm)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = _call(norm, lib, _t(lib, _X, xd), _t(lib, w, wd), _t(lib, b, bd))
        return lib.cat([o.double().flatten() for o in outs] + [lib.tensor([float(i) for o in outs for i in
                        (o.dtype.itemsize, o.is_floating_point())]).double()])

    def dtypes(lib):
        xd, wd, bd = (getattr(lib, d) for d in MIXES[mix])
        w, b = _params(norm)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return [str(o.dtype).split(".")[-1] for o in _call(norm, lib, _t(lib, _X, xd), _t(lib, w, wd),
                                                                   _t(lib, b, bd))]
            except RuntimeError as exc:
                return str(exc)

    assert value_or_error(program, tg) == value_or_error(program, torch)
    assert dtypes(tg) == dtypes(torch)


@pytest.mark.parametrize("norm", ("group_norm", "batch_norm_train", "batch_norm_eval", "rms_norm"))
def test_mixed_parameters_gradients(norm):
    def grads(lib):
        x = _t(lib, _X, lib.bfloat16).requires_grad_()
        w, b = (_t(lib, p).requires_grad_() for p in _params(norm))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = _call(norm, lib, x, w, b)[0]
        weights = lib.tensor(np.linspace(-1, 1, y.numel(), dtype=np.float32).reshape(tuple(y.shape)))
        got = lib.autograd.grad((y.float() * weights).sum(), [x, w, b], allow_unused=True)
        return y.dtype, type(y.grad_fn).__name__, [None if g is None else (str(g.dtype), g.double().tolist())
                                                  for g in got]

    ours, theirs = grads(tg), grads(torch)
    assert str(ours[0]).replace("tracegrad", "torch") == str(theirs[0])
    assert ours[1:] == theirs[1:]


def test_layer_norm_module_on_bfloat16_input():
    outs = [lib.nn.LayerNorm(4)(_t(lib, _X, lib.bfloat16)) for lib in (tg, torch)]
    assert value_or_error(lambda lib: outs[lib is torch], tg) == value_or_error(lambda lib: outs[lib is torch], torch)


def test_rms_norm_mixed_weight_warns_as_torch():
    texts = []
    for lib in (tg, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.set_warn_always(True)
            try:
                lib.nn.functional.rms_norm(_t(lib, _X, lib.bfloat16), (4,), _t(lib, _W4))
            finally:
                lib.set_warn_always(False)
        texts.append([str(w.message).split(" (Triggered internally")[0] for w in caught])
    assert texts[0] == texts[1] and texts[0]


def test_rms_norm_default_eps_of_bfloat16_input_is_floats():
    program = lambda lib: lib.nn.functional.rms_norm(_t(lib, _X * 1e-2, lib.bfloat16), (4,))  # noqa: E731
    assert value_or_error(program, tg) == value_or_error(program, torch)
