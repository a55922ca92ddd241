"""``out=`` of the matrix products and of ``torch.softmax``/``log_softmax`` against torch.

The products refuse an out= of another dtype in the words of the out= operator they end in (``mm``/``mv``/``bmm``'s
structured check, ``dot_out``'s before the vectors' sizes are compared, ``multi_dot``'s after its own checks,
``addbmm``'s per-batch ``addmm_`` on out, and none over no batches); tracegrad cast into it. ``torch.softmax`` and
``torch.log_softmax`` take ``out=`` (``Tensor.softmax`` and ``F.softmax`` do not): the dim is checked, then out's
dtype before the kernel's dtype dispatch; an out that requires grad is refused, and an input that does gives out a
``NotImplemented`` node. tracegrad refused the keyword."""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch


def _half(lib):
    return lib.empty(0, dtype=lib.float16)


PRODUCTS = {
    "matmul 2-d": lambda L: L.matmul(L.ones(2, 2), L.ones(2, 2), out=_half(L)),
    "matmul 3-d": lambda L: L.matmul(L.ones(2, 2, 2), L.ones(2, 2, 2), out=_half(L)),
    "matmul folded": lambda L: L.matmul(L.ones(2, 2, 2), L.ones(2, 2), out=_half(L)),
    "matmul vectors": lambda L: L.matmul(L.ones(2), L.ones(2), out=_half(L)),
    "matmul vectors of other sizes": lambda L: L.matmul(L.ones(2), L.ones(3), out=_half(L)),
    "matmul matrices of other sizes": lambda L: L.matmul(L.ones(2, 3), L.ones(2, 2), out=_half(L)),
    "matmul matrix-vector": lambda L: L.matmul(L.ones(2, 2), L.ones(2), out=_half(L)),
    "matmul vector-matrix": lambda L: L.matmul(L.ones(2), L.ones(2, 2), out=_half(L)),
    "matmul of its dtype": lambda L: L.matmul(L.ones(2, 2), L.ones(2, 2), out=L.empty(0)),
    "matmul of mixed operands": lambda L: L.matmul(L.ones(2, 2), L.ones(2, 2, dtype=L.float64), out=L.empty(0)),
    "mv": lambda L: L.mv(L.ones(2, 2), L.ones(2), out=_half(L)),
    "mv of other sizes": lambda L: L.mv(L.ones(2, 3), L.ones(2), out=_half(L)),
    "addbmm": lambda L: L.addbmm(L.ones(2, 2), L.ones(2, 2, 2), L.ones(2, 2, 2), out=_half(L)),
    "addbmm of no batches": lambda L: L.addbmm(L.ones(2, 2), L.ones(0, 2, 2), L.ones(0, 2, 2), out=_half(L)),
    "addbmm of other sizes": lambda L: L.addbmm(L.ones(2, 2), L.ones(2, 2, 3), L.ones(2, 2, 2), out=_half(L)),
    "multi_dot": lambda L: L.linalg.multi_dot([L.ones(2, 2), L.ones(2, 2)], out=_half(L)),
    "multi_dot of three": lambda L: L.linalg.multi_dot([L.ones(2, 2), L.ones(2, 2), L.ones(2, 2)], out=_half(L)),
    "multi_dot of other sizes": lambda L: L.linalg.multi_dot([L.ones(2, 3), L.ones(2, 2)], out=_half(L)),
    "chain_matmul": lambda L: L.chain_matmul(L.ones(2, 2), L.ones(2, 2), out=_half(L)),
    "dot": lambda L: L.dot(L.ones(2), L.ones(2), out=_half(L)),
    "dot of other sizes": lambda L: L.dot(L.ones(2), L.ones(3), out=_half(L)),
    "dot of mixed operands": lambda L: L.dot(L.ones(2), L.ones(2, dtype=L.float64), out=L.empty(0)),
    "vdot": lambda L: L.vdot(L.ones(2), L.ones(2), out=_half(L)),
}

SOFTMAX = {
    "softmax": lambda L: L.softmax(L.ones(3), 0, out=L.empty(0)),
    "softmax into half": lambda L: L.softmax(L.ones(3), 0, out=_half(L)),
    "softmax with dtype": lambda L: L.softmax(L.ones(3), 0, dtype=L.float64, out=L.empty(0, dtype=L.float64)),
    "softmax with dtype into float": lambda L: L.softmax(L.ones(3), 0, dtype=L.float64, out=L.empty(0)),
    "log_softmax": lambda L: L.log_softmax(L.ones(2, 3), 1, out=L.empty(0)),
    "log_softmax into half": lambda L: L.log_softmax(L.ones(3), 0, out=_half(L)),
    "an input that requires grad": lambda L: L.softmax(L.ones(3, requires_grad=True), 0, out=L.empty(0)),
    "an out that requires grad": lambda L: L.softmax(L.ones(3), 0, out=L.empty(0, requires_grad=True)),
    "integers into float": lambda L: L.softmax(L.ones(3, dtype=L.int64), 0, out=L.empty(0)),
    "integers into long": lambda L: L.softmax(L.ones(3, dtype=L.int64), 0, out=L.empty(0, dtype=L.int64)),
    "a bad dim": lambda L: L.softmax(L.ones(3), 5, out=_half(L)),
    "an out to resize": lambda L: L.softmax(L.ones(3), 0, out=L.empty(5)),
    "a transposed out": lambda L: L.softmax(L.ones(2, 3), dim=1, out=L.empty(3, 2).t()),
    "Tensor.softmax": lambda L: L.ones(3).softmax(0, out=L.empty(0)),
    "F.softmax": lambda L: L.nn.functional.softmax(L.ones(3), 0, out=L.empty(0)),
}


def _outcome(lib, program):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = program(lib)
            result = (str(r.dtype).replace("tracegrad", "torch"), r.tolist(), r.stride(), r.requires_grad,
                      None if r.grad_fn is None else r.grad_fn.name())
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            result = (type(exc).__name__, str(exc))
    # (torch's C++ warnings end in where they were raised)
    messages = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    return result, [m for m in messages if "chain_matmul is deprecated" not in m]


@pytest.mark.parametrize("name", sorted(PRODUCTS) + sorted(SOFTMAX))
def test_out_as_torch(name):
    program = PRODUCTS.get(name) or SOFTMAX[name]
    assert _outcome(tg, program) == _outcome(torch, program)


def test_softmax_out_backward_refuses_as_torch():
    def run(lib):
        x, out = lib.ones(3, requires_grad=True), lib.empty(0)
        lib.log_softmax(x, 0, out=out)
        try:
            out.sum().backward()
        except RuntimeError as exc:
            return str(exc)
        return None

    assert run(tg) == run(torch) == "derivative for aten::log_softmax is not implemented"


_GER_PROGRAM = """
import sys, warnings
lib = __import__(sys.argv[1])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    lib.ger(lib.ones(2), lib.ones(3), out=lib.empty(0))
    lib.ones(2).ger(lib.ones(3))
    lib.ger(lib.ones(2), lib.ones(3))
print([(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in caught])
"""


def test_ger_warns_that_it_is_deprecated_once_as_torch():
    """torch.ger, ger_out and Tensor.ger share one TORCH_WARN_ONCE: the first call in a process warns (a fresh
    process each, as the flag lives as long as the process)."""
    import subprocess
    import sys

    def run(name):
        return subprocess.run([sys.executable, "-c", _GER_PROGRAM, name], capture_output=True, text=True,
                              check=True).stdout

    ours = run("tracegrad")
    assert ours == run("torch")
    assert "torch.ger is deprecated" in ours
