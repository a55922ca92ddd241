"""Forward-mode AD side by side with PyTorch: inference mode, writes torch has no forward formula for, and the graphs
of tangents where grad mode records one. Each program runs with both libraries and prints what it sees (tangents,
errors, the state a refused write leaves).

* Inference mode turns forward grad mode off: no tangent is computed, read (``unpack_dual``) or made (``make_dual``
  only aliases); an operator whose tensors are all inference tensors runs below autograd too (tracegrad propagated
  tangents, and an in-place op rewrote the dual's tangent).
* ``resize_``/``resize_as_`` of a dual resize, then refuse; ``set_``, ``acosh_`` and the other in-place operators
  without a formula write, then refuse in torch's short words; ``out=`` calls with a tangent in or out write, then
  refuse (tracegrad went on, the tangent lost or stale).
* A tangent's formula reads its primal through ``_fw_primal`` (an ``Identity`` node) and softmax, log_softmax and
  logsumexp use torch's ``logsumexp_jvp`` (tracegrad's graphs had no Identity, and softmax's was a double backward).
"""

from __future__ import annotations

import contextlib
import io
import warnings

import pytest
from _lib import tg, torch


def _printed(lib, program: str) -> str:
    buffer = io.StringIO()
    g = {"torch": lib, "fwAD": lib.autograd.forward_ad, "F": lib.nn.functional}
    with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with g["fwAD"].dual_level():
                exec(program, g)  # noqa: S102 - the programs below
        except Exception as exc:  # noqa: BLE001 - the error is part of what is compared
            print(f"{type(exc).__name__}: {exc}")
        for name in ("x", "o"):  # what a refused write left
            if name in g:
                print(name, g[name])
    return buffer.getvalue().replace("tracegrad", "torch")


_DUAL = "d = fwAD.make_dual(torch.full((3,), 0.5), torch.arange(3.))\n"

_INFERENCE = [
    _DUAL + "with torch.inference_mode():\n    y = d * 2\n    print(fwAD.unpack_dual(y).tangent)\nprint(fwAD.unpack_dual(y))",
    _DUAL + "with torch.inference_mode():\n    d.mul_(2)\nprint(fwAD.unpack_dual(d))",
    _DUAL + "x = torch.ones(3)\nwith torch.inference_mode():\n    x.mul_(d)\nprint(fwAD.unpack_dual(x))",
    _DUAL + "x = torch.zeros(4)\nwith torch.inference_mode():\n    x[1:].copy_(d)\nprint(fwAD.unpack_dual(x))",
    _DUAL + "with torch.inference_mode():\n    p, t = fwAD.unpack_dual(d)\n    print(p.is_inference(), t)\n"
    "    v = d[1:]\n    print(fwAD.unpack_dual(v).tangent)\nprint(fwAD.unpack_dual(v).tangent, fwAD.unpack_dual(p).tangent)",
    "with torch.inference_mode():\n    e = fwAD.make_dual(torch.ones(3), torch.arange(3.))\n    print(e.is_inference())\n"
    "print(fwAD.unpack_dual(e))",
    # (no check of the autograd kernel runs there: a second tangent, another size, another level)
    _DUAL + "with torch.inference_mode():\n    e = fwAD.make_dual(d, torch.arange(3.))\nprint(fwAD.unpack_dual(e))",
    "with torch.inference_mode():\n    e = fwAD.make_dual(torch.ones(3), torch.arange(4.), level=1)\nprint(fwAD.unpack_dual(e))",
    "x = torch.ones(3, requires_grad=True)\nwith torch.inference_mode():\n    e = fwAD.make_dual(x, torch.arange(3.))\n"
    "print(e.requires_grad, fwAD.unpack_dual(e))",
    # inference tensors outside inference mode: a call on them only runs below autograd
    "with torch.inference_mode():\n    p = torch.ones(3)\n    t = torch.arange(3.)\ne = fwAD.make_dual(p, t)\n"
    "print(e.is_inference(), fwAD.unpack_dual(e))",
    "with torch.inference_mode():\n    p = torch.ones(3)\ne = fwAD.make_dual(p, torch.arange(3.))\n"
    "print(fwAD.unpack_dual(e).tangent, fwAD.unpack_dual(e * 2).tangent, fwAD.unpack_dual(e.sin()).tangent)\n"
    "print(fwAD.unpack_dual(e + p).tangent, fwAD.unpack_dual(e[1:]).tangent, fwAD.unpack_dual(e + torch.ones(3)).tangent)",
]


@pytest.mark.parametrize("program", _INFERENCE)
def test_inference_mode_and_inference_tensors(program):
    assert _printed(tg, program) == _printed(torch, program), program


_REFUSED_WRITES = [
    _DUAL + "x = d\nx.resize_(2)",
    _DUAL + "x = d\nx.resize_(3)",
    _DUAL + "x = d[:2]\nx.resize_(2)",
    _DUAL + "x = d\nx.resize_as_(torch.ones(3))",
    _DUAL + "x = torch.ones(3)\nx.resize_as_(d)\nprint(fwAD.unpack_dual(x))",
    _DUAL + "x = d\nwith torch.no_grad():\n    x.resize_(2)",
    _DUAL + "x = d\nwith torch.inference_mode():\n    x.resize_(2)\nprint(fwAD.unpack_dual(x).tangent)",
    _DUAL + "x = d\nx.set_(torch.ones(2))",
    _DUAL + "x = torch.zeros(3)\nx.set_(d)",
    _DUAL + "x = d\nx.set_()",
    _DUAL + "x = d\nx.set_(torch.ones(2, dtype=torch.long))",
    _DUAL + "x = d.clone()\nx.acosh_()",
    _DUAL + "x = d.clone()\nx.atanh_()",
    _DUAL + "x = torch.full((3,), 0.5)\nx.asinh_()\nprint(fwAD.unpack_dual(x))",
    _DUAL + "x = torch.ones(3)\nx.igamma_(d)",
    _DUAL + "x = d.clone()\nx.igammac_(torch.ones(3))",
    _DUAL + "x = d.clone()\nx.index_reduce_(0, torch.tensor([0, 1]), torch.full((2,), 3.), 'prod')",
    _DUAL + "x = d.index_reduce(0, torch.tensor([0, 1]), torch.full((2,), 3.), 'prod')",
    "x = fwAD.make_dual(torch.full((3, 2), 5.), torch.ones(3, 2)).clone()\n"
    "torch.embedding_renorm_(x, torch.tensor([0, 1]), 1.0, 2.0)",
    _DUAL + "x = d.clone()\nF.rrelu_(x, training=False)",
    _DUAL + "o = torch.zeros(3)\ntorch.sin(d, out=o)",
    _DUAL + "o = d\ntorch.sin(torch.ones(3), out=o)",
    _DUAL + "o = torch.zeros(3, dtype=torch.long)\ntorch.sin(d, out=o)",
    _DUAL + "o = torch.zeros(3, requires_grad=True)\ntorch.sin(d, out=o)",
    _DUAL + "o = torch.zeros(3)\ntorch.add(d, 1, out=o)",
    _DUAL + "o = torch.zeros(6)\ntorch.cat([d, d], out=o)",
    _DUAL + "o = torch.empty(()); i = torch.empty((), dtype=torch.long)\ntorch.max(d, 0, out=(o, i))",
    _DUAL + "o = torch.zeros(3)\ntorch.slice_scatter(d, torch.ones(1), 0, 0, 1, out=o)",
    _DUAL + "o = torch.zeros(3)\ntorch.mul(torch.ones(3), 2, out=o)\nprint(fwAD.unpack_dual(o))",
    _DUAL + "o = torch.zeros(3)\nwith torch.inference_mode():\n    torch.sin(d, out=o)",
]
_MATMUL_OUTS = [((3,), (3,), ()), ((2, 3), (3,), (2,)), ((2, 3), (3, 2), (2, 2)), ((2, 2, 3), (3, 2), (2, 2, 2)),
                ((2, 2, 3), (2, 3, 2), (2, 2, 2)), ((2, 2, 3), (3,), (2, 2))]
_REFUSED_WRITES += [
    f"o = torch.zeros{o}\ntorch.matmul(fwAD.make_dual(torch.ones{a}, torch.ones{a}), torch.ones{b}, out=o)"
    for a, b, o in _MATMUL_OUTS
] + [
    "o = torch.zeros(3, 2)\ntorch.outer(fwAD.make_dual(torch.ones(3), torch.ones(3)), torch.ones(2), out=o)",
    "o = torch.zeros(2, 2)\ntorch.linalg.multi_dot([fwAD.make_dual(torch.ones(2, 3), torch.ones(2, 3)), torch.ones(3, 2)],"
    " out=o)",
    "o = torch.zeros(2, 2)\ntorch.linalg.matrix_power(fwAD.make_dual(torch.ones(2, 2), torch.ones(2, 2)), 2, out=o)",
    "o = torch.zeros(2, 2)\ntorch.linalg.matrix_power(fwAD.make_dual(torch.ones(2, 2), torch.ones(2, 2)), 1, out=o)\n"
    "print(fwAD.unpack_dual(o).tangent)",
    "o = torch.zeros(())\ntorch.inner(fwAD.make_dual(torch.ones(3), torch.ones(3)), torch.ones(3), out=o)\n"
    "print(fwAD.unpack_dual(o).tangent)",
    "o = torch.zeros(2)\ntorch.linalg.eigvalsh(fwAD.make_dual(torch.eye(2), torch.ones(2, 2)), out=o)",
    # inner and matrix_power(n <= 1) copy their result in (CopyBackwards), as torch's
    "o = torch.zeros(())\ntorch.inner(torch.ones(3, requires_grad=True), torch.ones(3), out=o)",
    "o = torch.zeros(2, 2)\ntorch.linalg.matrix_power(torch.ones(2, 2, requires_grad=True), 1, out=o)",
    "o = torch.zeros(2, 2)\ntorch.linalg.matrix_power(torch.ones(2, 2, requires_grad=True), 0, out=o)",
]


@pytest.mark.parametrize("program", _REFUSED_WRITES)
def test_writes_without_forward_formula(program):
    assert _printed(tg, program) == _printed(torch, program), program


# ---- graphs of tangents -------------------------------------------------------------------------------------------


def _node_names(fn) -> list:
    """The nodes reached from ``fn`` through next_functions, breadth first (each once; None for a missing edge)."""
    names, seen, queue = [], set(), [fn]
    while queue:
        f = queue.pop(0)
        if f is None:
            names.append(None)
        elif id(f) not in seen:
            seen.add(id(f))
            names.append(f.name())
            queue.extend(n for n, _ in f.next_functions)
    return names


_GRAPHS = ["F.softmax(d, 1)", "F.softmax(d, 0)", "torch.softmax(d, -1, dtype=torch.float64)", "F.log_softmax(d, 1)",
           "d.log_softmax(0)", "torch.logsumexp(d, 1)", "torch.logsumexp(d, (0, 1), keepdim=True)",
           "F.softmax(d.new_zeros(0, 3).requires_grad_() + d.sum() * 0, 1)",
           "d.abs()", "F.gelu(d)", "F.leaky_relu(d)", "F.elu(d)", "F.hardtanh(d)", "torch.lgamma(d)", "d.sinh()"]


def _tangent_graph(lib, program: str):
    fw = lib.autograd.forward_ad
    x = lib.arange(12.0).reshape(3, 4).sub(5.5).div(3).requires_grad_()
    with fw.dual_level():
        d = fw.make_dual(x, lib.linspace(-1.0, 1.0, 12).reshape(3, 4))
        out = eval(program, {"torch": lib, "F": lib.nn.functional, "d": d})  # noqa: S307 - the programs above
        tangent = fw.unpack_dual(out).tangent
        return tangent.requires_grad, [n and n.replace("torch::autograd::", "") for n in _node_names(tangent.grad_fn)]


@pytest.mark.parametrize("program", _GRAPHS)
def test_tangent_graph_as_torch(program):
    assert _tangent_graph(tg, program) == _tangent_graph(torch, program)


def test_softmax_tangent_graph_saves_what_torch_does():
    """torch's logsumexp_jvp multiplies exp's result in place: a backward through the tangent's graph is refused."""
    results = []
    for lib in (tg, torch):
        fw = lib.autograd.forward_ad
        x = lib.linspace(-2.0, 2.0, 6).reshape(2, 3).requires_grad_()
        with fw.dual_level():
            tangent = fw.unpack_dual(lib.nn.functional.softmax(fw.make_dual(x, lib.ones(2, 3)), 1)).tangent
            try:
                tangent.sum().backward()
                results.append(x.grad.tolist())
            except RuntimeError as exc:
                results.append(str(exc).split(":")[0])
    assert results[0] == results[1]


def test_complex_logsumexp_tangent_graph_as_torch():
    graphs = []
    for lib in (tg, torch):
        fw = lib.autograd.forward_ad
        x = lib.arange(12.0).reshape(3, 4).mul(lib.tensor(0.5 - 0.25j)).requires_grad_()
        with fw.dual_level():
            d = fw.make_dual(x, lib.ones(3, 4, dtype=lib.complex64))
            graphs.append(_node_names(fw.unpack_dual(lib.logsumexp(d, 1)).tangent.grad_fn))
    assert graphs[0] == graphs[1]
