"""The barebones unsigned dtypes' refusing kernels are installed lazily (ops/barebones_unsigned.activate), the first
time one of uint16/uint32/uint64 is reached for: each way to make such a tensor, run first in a fresh interpreter,
must install them before any kernel sees the array, so that the operators after it answer as torch 2.13's do. A
program that never makes one keeps the kernels unwrapped (no extra Python frame on the fast paths)."""

from __future__ import annotations

import contextlib
import io
import pickle
import subprocess
import sys
from unittest import mock

import pytest
import torch

import tracegrad as tg

# each program makes x, a tensor of [1, 2, 3] in the dtype given, first thing after ``import tracegrad as L``
# (``path``: a file torch.save/tracegrad.save wrote; ``blob``: pickle bytes made in the test's process)
CREATIONS = {
    "from_numpy": ("uint32", "L.from_numpy(np.array([1, 2, 3], np.uint32))"),
    "from_numpy uint64": ("uint64", "L.from_numpy(np.array([1, 2, 3], np.uint64))"),
    "as_tensor": ("uint16", "L.as_tensor(np.array([1, 2, 3], np.uint16))"),
    "tensor of an array": ("uint32", "L.tensor(np.array([1, 2, 3], np.uint32))"),
    "tensor of NumPy scalars": ("uint16", "L.tensor([np.uint16(1), np.uint16(2), np.uint16(3)])"),
    "asarray": ("uint64", "L.asarray(np.array([1, 2, 3], np.uint64))"),
    "NumPy ufunc": ("uint16", "np.add(L.tensor([1, 2, 3], dtype=L.uint8), np.zeros(3, np.uint16))"),
    "from_dlpack": ("uint32", "L.from_dlpack(np.array([1, 2, 3], np.uint32))"),
    "frombuffer": ("uint32", "L.frombuffer(bytearray(np.array([1, 2, 3], np.uint32).tobytes()), dtype=L.uint32)"),
    "tensor dtype=": ("uint32", "L.tensor([1, 2, 3], dtype=L.uint32)"),
    "factory dtype=": ("uint64", "L.arange(1, 4).to(L.uint64)"),
    "full dtype=": ("uint16", "L.full((3,), 1, dtype=L.uint16).cumsum(0).to(L.uint16)"),
    "from-import": ("uint64", "L.tensor([1, 2, 3]).to(__import__(L.__name__, fromlist=['uint64']).uint64)"),
    "type": ("uint16", "L.tensor([1, 2, 3]).type(L.uint16)"),
    "view": ("uint32", "L.tensor([1, 2, 3], dtype=L.int32).view(L.uint32)"),
    "pickled dtype": ("uint32", "L.tensor([1, 2, 3]).to(pickle.loads(bytes.fromhex(blob)))"),
    "load": ("uint32", "L.load(path)"),
    "pickled tensor": ("uint16", "pickle.loads(bytes.fromhex(blob))"),
}

# what is done with x, on the fast paths and the general one
USES = ("x + 1", "x.abs()", "x.sum()", "x.max()", "x.clamp(0, 1)", "-x", "x.add_(1)", "x > 1", "x * 2",
        "L.maximum(x, x)")

_PROGRAM = """
import pickle, sys
import numpy as np
import {lib} as L
path, blob = sys.argv[1], sys.argv[2]
x = {creation}
outcomes = []
for use in {uses!r}:
    try:
        r = eval(use)
        outcomes.append((str(r.dtype), r.tolist()))
    except Exception as exc:
        outcomes.append((type(exc).__name__, str(exc)))
outcomes.append(str(x.dtype))  # (last: reading it brings the dtype into use)
print(repr(outcomes).replace("tracegrad", "torch"))
"""


def _blob(name: str, lib) -> str:
    if name == "pickled dtype":
        return pickle.dumps(lib.uint32).hex()
    if name == "pickled tensor" and lib is tg:  # (torch 2.13 cannot pickle a uint16 tensor: see the test below)
        return pickle.dumps(lib.tensor([1, 2, 3], dtype=lib.uint16)).hex()
    return "-"


@pytest.mark.filterwarnings("ignore:__array_wrap__")
@pytest.mark.parametrize("name", CREATIONS)
def test_first_unsigned_tensor_in_a_fresh_interpreter_like_torch(name, tmp_path):
    dtype, creation = CREATIONS[name]
    outcomes = {}
    for lib in (tg, torch):  # (tracegrad in a fresh interpreter; torch's answers do not depend on it)
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save(lib.tensor([1, 2, 3], dtype=getattr(lib, dtype)), path)
        if name == "pickled tensor" and lib is torch:
            creation = "L.tensor([1, 2, 3], dtype=L.uint16)"
        program = _PROGRAM.format(lib=lib.__name__, creation=creation, uses=USES)
        args = [str(path), _blob(name, lib)]
        if lib is tg:
            outcomes[lib.__name__] = subprocess.run([sys.executable, "-c", program, *args], capture_output=True,
                                                    text=True, check=True).stdout
        else:
            outcomes[lib.__name__] = _run_here(program, args)
    assert outcomes["tracegrad"] == outcomes["torch"]
    assert f"torch.{dtype}" in outcomes["torch"]


def _run_here(program: str, args: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), mock.patch.object(sys, "argv", ["-c", *args]):
        exec(program, {})  # noqa: S102 - the test's own program
    return out.getvalue()


def test_pickling_an_unsigned_tensor_is_a_torch_bug_that_tracegrad_does_not_copy():
    with pytest.raises(AttributeError, match="has no attribute 'dtype'"):
        pickle.loads(pickle.dumps(torch.tensor([1], dtype=torch.uint16)))


_WITHOUT_UNSIGNED = """
import io, pickle
import numpy as np
import tracegrad as L
from tracegrad.ops import barebones_unsigned
x = L.ones(4, 4, requires_grad=True)
y = (x + 1, x.abs(), x.sum(), x.max(), x.clamp(0, 1), L.tensor([1, 2]) + 1, x.to(L.int64), repr(x), dir(L),
     L.iinfo(L.int64), L.finfo(L.float32), L.promote_types(L.uint8, L.int8), L.from_numpy(np.ones(2, np.int32)),
     np.add(x.detach(), 1), pickle.loads(pickle.dumps(x)), L.tensor([2**63 - 1]), x.type(L.DoubleTensor))
(x * 2).sum().backward()
buffer = io.BytesIO()
L.save(x, buffer)
buffer.seek(0)
L.load(buffer)
wrapped = [op.name for op in barebones_unsigned._WRAPS if hasattr(op.kernel, "refuses_barebones_unsigned")]
print(barebones_unsigned.is_active(), len(barebones_unsigned._WRAPS), wrapped)
"""


def test_a_program_without_unsigned_tensors_keeps_the_kernels_unwrapped():
    result = subprocess.run([sys.executable, "-c", _WITHOUT_UNSIGNED], capture_output=True, text=True, check=True)
    assert result.stdout.split(maxsplit=2)[::2] == ["False", "[]\n"], result.stdout
    assert int(result.stdout.split()[1]) > 100  # (the operators that will refuse, once activated)


# The kernels that compute bfloat16 themselves (histc, bincount, nextafter, full_like) keep doing so when the
# unsigned dtypes came into use before bfloat16: the unsigned refusal wrapper used to hide their mark, and bfloat16's
# activation then widened their input to float (histc's NaN range printed as ``[-nan, -nan]``, torch's ``[nan, nan]``)
_UNSIGNED_THEN_BFLOAT16 = """
import math
import {lib} as L
L.tensor([1], dtype=L.uint32)  # the unsigned dtypes first
nan = math.nan
for program in (
    lambda: L.histc(L.tensor([1.0, nan, 2.0], dtype=L.bfloat16)),
    lambda: L.histc(-L.tensor([nan], dtype=L.bfloat16)),
    lambda: L.histc(L.tensor([1.0, 2.5, 3.0, 2.0], dtype=L.bfloat16), 3),
    lambda: L.nextafter(L.tensor([1.0, -2.0], dtype=L.bfloat16), L.tensor([2.0, -3.0], dtype=L.bfloat16)),
    lambda: L.full_like(L.tensor([1.0], dtype=L.bfloat16), 1.00390625),
):
    try:
        print(program().view(L.int16).tolist())
    except RuntimeError as exc:
        print(type(exc).__name__, exc)
"""


def test_bfloat16_kernels_of_their_own_when_unsigned_dtypes_came_first():
    ours = subprocess.run([sys.executable, "-c", _UNSIGNED_THEN_BFLOAT16.format(lib="tracegrad")],
                          capture_output=True, text=True, check=True).stdout
    assert ours == _run_here(_UNSIGNED_THEN_BFLOAT16.format(lib="torch"), [])
