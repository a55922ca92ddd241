"""A new result's ``_version`` (and ``is_inference()``) is torch's: composite operators make some results by writing
in place, and those writes count (``one_hot``'s, circular padding's copies, in any mode); for inference tensors
alone, outside inference mode, torch's autograd kernel does not run, and the writes of a CPU kernel's inner calls
count too, some as many as the arguments ask for (``diag``: 2 for a vector, 1 for a matrix; ``rot90`` by ``k``;
``var`` where it leaves one value; ``max(x, dim)`` unless keepdim).

- Every operator of the OpInfo database, in four settings: plain, inputs requiring grad, inference tensors used
  outside inference mode, and inside inference mode.
- The argument-dependent counts, case by case.
"""

from __future__ import annotations

import contextlib
import warnings

import pytest
from _lib import tg, torch
from opinfo import op_db
from opinfo.core import Call, flatten_outputs, resolve

SETTINGS = ("plain", "grad", "inference tensors", "inference mode")


def _versions(outputs) -> list:
    """Each output's version (or that it tracks none) and whether it is an inference tensor."""
    found = []
    for t in outputs:
        try:
            version = t._version
        except RuntimeError:
            version = "untracked"
        found.append((version, t.is_inference()))
    return found


def _observed(lib, op, sample, setting: str):
    """The versions of ``op``'s results on ``sample`` in ``setting``, or None where the call fails."""
    made_in_inference = lib.inference_mode() if setting.startswith("inference") else contextlib.nullcontext()
    run_in_inference = lib.inference_mode() if setting == "inference mode" else contextlib.nullcontext()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with made_in_inference:
                call = Call(lib, op, sample, requires_grad=setting == "grad")
            with run_in_inference:
                return _versions(flatten_outputs(call.run(resolve(lib, op.name))))
    except Exception:  # (the forward tests compare errors)
        return None


# Operators whose results, for inference tensors alone outside inference mode, still start at another version than
# torch's: their CPU kernels' inner writes (an out= call, a copy_ or fill_, an in-place step) are not counted yet
INFERENCE_TENSORS_UNCOUNTED = frozenset({
    "Tensor.masked_fill", "addmm", "as_strided_scatter", "baddbmm", "block_diag", "cat", "cdist.mm", "conv_tbc",
    "diagonal_scatter", "fft.fft", "fft.ifft", "fft.ihfft", "fft.rfft", "fft.rfft2", "fft.rfftn", "frobenius_norm",
    "index_add", "index_copy", "index_fill", "index_put", "linalg.det", "linalg.householder_product", "linalg.inv",
    "linalg.lstsq", "linalg.lu", "linalg.lu_factor", "linalg.lu_factor_ex", "linalg.lu_solve", "linalg.matrix_exp",
    "linalg.qr", "linalg.slogdet", "linalg.solve", "linalg.solve_ex", "linalg.tensorinv", "linalg.tensorsolve",
    "logical_and", "logical_or", "logical_xor", "matmul", "mv", "nn.functional.adaptive_avg_pool2d",
    "nn.functional.adaptive_avg_pool3d", "nn.functional.binary_cross_entropy",
    "nn.functional.binary_cross_entropy_with_logits", "nn.functional.channel_shuffle", "nn.functional.conv1d",
    "nn.functional.conv2d", "nn.functional.conv3d", "nn.functional.conv_transpose2d",
    "nn.functional.conv_transpose3d", "nn.functional.fold", "nn.functional.interpolate.bilinear",
    "nn.functional.interpolate.bilinear_align_corners", "nn.functional.interpolate.nearest", "nn.functional.linear",
    "nn.functional.max_pool3d", "nn.functional.max_pool3d_with_indices", "nn.functional.mse_loss",
    "nn.functional.multi_margin_loss", "nn.functional.multilabel_margin_loss", "nn.functional.pad.reflect",
    "nn.functional.pdist", "nn.functional.pdist.other_p", "nn.functional.pixel_shuffle",
    "nn.functional.pixel_unshuffle", "nn.functional.smooth_l1_loss", "nn.functional.soft_margin_loss",
    "nn.functional.unfold", "ormqr", "scatter", "scatter_add", "scatter_reduce.amax", "scatter_reduce.amin",
    "scatter_reduce.mean", "scatter_reduce.prod", "scatter_reduce.sum", "special.multigammaln", "triangular_solve",
    "where",
})
ONE_ENTRY = {}
for _op in op_db:
    ONE_ENTRY.setdefault(_op.id, _op)


def _param(op, setting: str):
    known = setting == "inference tensors" and op.id in INFERENCE_TENSORS_UNCOUNTED
    mark = pytest.mark.xfail(strict=True, reason="inner writes of the CPU kernel not counted") if known else ()
    return pytest.param(op, setting, id=f"{op.id}-{setting}", marks=mark)


@pytest.mark.parametrize("op,setting", [_param(op, s) for op in ONE_ENTRY.values() for s in SETTINGS])
def test_database_results_start_at_torchs_version(op, setting):
    dtype = "float64" if "float64" in op.dtypes else op.dtypes[0]
    for sample in op.samples(dtype):
        theirs = _observed(torch, op, sample, setting)
        if theirs is not None:
            assert _observed(tg, op, sample, setting) == theirs, sample.name


# ------------------------------------------------------------------------------------------------ case by case


def _inference(lib, make):
    with lib.inference_mode():
        return make()


def _matrix(lib, *shape, dtype=None):
    """An inference tensor of ones (``dtype``: the library's attribute name)."""
    kind = getattr(lib, dtype) if dtype else lib.float32
    return _inference(lib, lambda: lib.ones(shape, dtype=kind))


# (name, program of the library): every program's inputs are inference tensors, unless named plain
CASES = {
    "one_hot (plain)": lambda lib: lib.nn.functional.one_hot(lib.tensor([0, 2, 1])),
    "one_hot of a 0-d tensor (plain)": lambda lib: lib.nn.functional.one_hot(lib.tensor(1), 3),
    "one_hot of an empty tensor (plain)": lambda lib: lib.nn.functional.one_hot(lib.zeros(0, dtype=lib.long), 3),
    "one_hot": lambda lib: lib.nn.functional.one_hot(_inference(lib, lambda: lib.tensor([0, 2, 1]))),
    "circular pad (plain)": lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 4), (1, 2), mode="circular"),
    "circular pad, one side (plain)": lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 4), (1, 0), mode="circular"),
    "circular pad, none (plain)": lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 4), (0, 0), mode="circular"),
    "circular pad, negative (plain)": lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 4), (-1, 2), mode="circular"),
    "circular pad 2-d (plain)": lambda lib: lib.nn.functional.pad(lib.ones(1, 1, 3, 3), (1, -1, 0, 2),
                                                                  mode="circular"),
    "circular pad requiring grad (plain)": lambda lib: lib.nn.functional.pad(
        lib.ones(1, 2, 4, requires_grad=True), (1, 2), mode="circular"),
    "circular pad": lambda lib: lib.nn.functional.pad(_matrix(lib, 1, 1, 2, 2, 4), (1, 2, 0, 1, 1, 0),
                                                      mode="circular"),
    "var to one value": lambda lib: lib.var(_matrix(lib, 1, 3)),
    "var along a dim to one value": lambda lib: lib.var(_matrix(lib, 1, 3), 1),
    "var along a dim": lambda lib: lib.var(_matrix(lib, 2, 3), 1),
    "var of an empty tensor": lambda lib: lib.var(_matrix(lib, 0, 3), 1),
    "var in half precision": lambda lib: lib.var(_matrix(lib, 3, dtype="float16")),
    "var of complex numbers": lambda lib: lib.var(_matrix(lib, 3, 2, dtype="complex128"), 1),
    "std to one value": lambda lib: lib.std(_matrix(lib, 3, 1), 0, unbiased=False),
    "std along a dim": lambda lib: _matrix(lib, 3, 2).std(1),
    "std of complex numbers": lambda lib: lib.std(_matrix(lib, 3, dtype="complex128")),
    "diag of a vector": lambda lib: lib.diag(_matrix(lib, 2), 1),
    "diag of a matrix": lambda lib: lib.diag(_matrix(lib, 2, 2)),
    "diag of an empty matrix": lambda lib: lib.diag(_matrix(lib, 0, 3), 5),
    "constant_pad_nd": lambda lib: lib.constant_pad_nd(_matrix(lib, 1, 3), (1, -2)),
    "constant_pad_nd, no positive pad": lambda lib: lib.constant_pad_nd(_matrix(lib, 1, 3), (0, -1)),
    "constant_pad_nd, no pad": lambda lib: lib.constant_pad_nd(_matrix(lib, 1, 3), ()),
    "pad with a constant": lambda lib: lib.nn.functional.pad(_matrix(lib, 0, 3), (1, 1)),
    "flip of size-1 dims": lambda lib: _matrix(lib, 1, 3).flip(0),
    "flip": lambda lib: _matrix(lib, 1, 3).flip(0, 1),
    "flip of an empty tensor": lambda lib: _matrix(lib, 0, 3).flip(1),
    "flip of no dims": lambda lib: _matrix(lib, 1, 3).flip([]),
    "fliplr": lambda lib: lib.fliplr(_matrix(lib, 3, 1)),
    "rot90 by 0": lambda lib: lib.rot90(_matrix(lib, 2, 2), 4),
    "rot90 by 1": lambda lib: lib.rot90(_matrix(lib, 2, 2), 1),
    "rot90 by 1 flipping a size-1 dim": lambda lib: lib.rot90(_matrix(lib, 2, 1), 1),
    "rot90 by 2": lambda lib: lib.rot90(_matrix(lib, 2, 2), 2),
    "rot90 by 2 of size-1 dims": lambda lib: lib.rot90(_matrix(lib, 1, 1), -2),
    "rot90 by 3 flipping a size-1 dim": lambda lib: lib.rot90(_matrix(lib, 2, 1, 3), 3, [1, 2]),
    "rot90 by -1": lambda lib: lib.rot90(_matrix(lib, 2, 1, 3), -1, [2, 1]),
    "max along a dim": lambda lib: lib.max(_matrix(lib, 2, 3), 1),
    "max along a dim, kept": lambda lib: lib.max(_matrix(lib, 2, 3), 1, keepdim=True),
    "max of a 0-d tensor": lambda lib: lib.max(_matrix(lib), 0),
    "min along a dim, kept": lambda lib: _matrix(lib, 2, 3).min(dim=0, keepdim=True),
    "mode, kept": lambda lib: lib.mode(_matrix(lib, 2, 3), 1, True),
    "mode of a 0-d tensor": lambda lib: lib.mode(_matrix(lib)),
    "aminmax": lambda lib: lib.aminmax(_matrix(lib, 2, 3)),
    "aminmax along a dim": lambda lib: lib.aminmax(_matrix(lib, 2, 3), dim=0),
    "aminmax along a dim, kept": lambda lib: lib.aminmax(_matrix(lib, 2, 3), dim=0, keepdim=True),
    "argmax along a dim of size 1": lambda lib: _matrix(lib, 1, 3).argmax(0),
    "argmin along a dim of size 1, kept": lambda lib: _matrix(lib, 3, 1).argmin(1, True),
    "argmax of everything": lambda lib: _matrix(lib, 1, 1).argmax(),
    "nanmedian along a dim": lambda lib: lib.nanmedian(_matrix(lib, 2, 3), 1),
}


def _result_versions(lib, program) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = program(lib)
    return _versions(out if isinstance(out, tuple) else (out,))


@pytest.mark.parametrize("name", CASES)
def test_result_starts_at_torchs_version(name):
    assert _result_versions(tg, CASES[name]) == _result_versions(torch, CASES[name])


def test_each_result_of_a_call_has_its_own_counter():
    """max's values and indices start at version 2 each: a write into one leaves the other's alone."""
    values, indices = tg.max(_matrix(tg, 2, 3), 1)
    values.add_(1)
    assert (values._version, indices._version) == (3, 2)
