"""Graph nodes expose their saved values as PyTorch names them: ``grad_fn._saved_<name>``.

For the first float64 sample of every differentiable operator, each node of the recorded graph (depth-first,
as ``next_functions`` orders them) must have the same ``_saved_*`` attribute names as torch's node, with the
same values: numbers, sizes and flags equal, tensors equal in shape, dtype and values.

Operators that still differ are listed in ``KNOWN_DIFFERENT`` with the reason, as strict expected failures.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _lib import tg, to_numpy, torch
from opinfo import op_db
from opinfo.core import Call, flatten_outputs, resolve

KNOWN_DIFFERENT: dict[str, str] = {}

# Defined up to the sign of each column (row of Vh): LAPACK builds may pick either.
UP_TO_SIGN = {"_saved_eigenvectors", "_saved_U", "_saved_Vh", "_saved_Q", "_saved_R"}

CASES = [pytest.param(op, id=op.id, marks=pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENT[op.id])
                      if op.id in KNOWN_DIFFERENT else ())
         for op in op_db if op.differentiable]


def _nodes(outputs: list) -> list:
    seen, order = set(), []

    def visit(fn):
        if fn is None or id(fn) in seen:
            return
        seen.add(id(fn))
        order.append(fn)
        for child, _ in fn.next_functions:
            visit(child)

    for o in outputs:
        visit(o.grad_fn)
    return order


def _value(v):
    """A saved value in comparable form: tensors as (shape, dtype, values), dtypes by name."""
    if isinstance(v, (tg.Tensor, torch.Tensor)):
        return ("tensor", tuple(v.shape), str(v.dtype).split(".")[-1], to_numpy(v))
    if isinstance(v, (tuple, list)):
        return tuple(_value(x) for x in v)
    if isinstance(v, (tg.dtype, torch.dtype)):
        return ("dtype", str(v).split(".")[-1])
    return v


def _same(a, b, up_to_sign: bool = False) -> bool:
    if isinstance(b, tuple) and b[:1] == ("tensor",):
        x, y = (np.abs(a[3]), np.abs(b[3])) if up_to_sign and isinstance(a, tuple) else (a[3], b[3])
        return isinstance(a, tuple) and a[:3] == b[:3] and np.allclose(x, y, rtol=1e-6, atol=1e-8, equal_nan=True)
    if isinstance(b, tuple):
        return isinstance(a, tuple) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(b, float) and isinstance(a, float):
        return math.isclose(a, b, rel_tol=1e-9) or (math.isnan(a) and math.isnan(b))
    return type(a) is type(b) and a == b


# torch.nn.grad passes convolution_backward a stand-in for the tensor it does not differentiate by (an expanded
# one-element ``new_empty``): its saved values are whatever memory held, in both libraries; shapes and dtypes compare
UNINITIALISED = {("nn.grad.conv2d_input", "_saved_input"), ("nn.grad.conv2d_weight", "_saved_weight")}


def _both_uninitialised(op_id: str, attribute: str, ours, theirs) -> bool:
    return (op_id, attribute) in UNINITIALISED and isinstance(ours, tuple) and ours[:3] == theirs[:3]


def saved_attributes(lib, op) -> list:
    """(node name, {attribute: value}) for every node of the sample's graph."""
    sample = op.samples("float64")[0]
    call = Call(lib, op, sample, requires_grad=True)
    outs = [t for t in flatten_outputs(call.run(resolve(lib, op.name))) if t.requires_grad]
    return [(fn.name(), {a: _value(getattr(fn, a)) for a in sorted(dir(fn)) if a.startswith("_saved_")})
            for fn in _nodes(outs)]


def differences(op) -> list[str]:
    ours, theirs = saved_attributes(tg, op), saved_attributes(torch, op)
    if [n for n, _ in ours] != [n for n, _ in theirs]:
        return [f"nodes {[n for n, _ in ours]} != {[n for n, _ in theirs]}"]
    out = []
    for (name, a), (_, b) in zip(ours, theirs):
        if sorted(a) != sorted(b):
            out.append(f"{name}: only ours {sorted(set(a) - set(b))}, only torch's {sorted(set(b) - set(a))}")
            continue
        out += [f"{name}.{k}: {a[k]!r} != {b[k]!r}" for k in b
                if not (_same(a[k], b[k], k in UP_TO_SIGN) or _both_uninitialised(op.id, k, a[k], b[k]))]
    return out


@pytest.mark.parametrize("op", CASES)
def test_saved_attributes_match_torch(op):
    assert differences(op) == []


def test_mm_sizes_and_strides_of_a_transposed_operand():
    """Strides come from the saved operand: a transposed one reads back with its own strides, and an operand
    whose gradient is not computed has none, as in PyTorch."""

    def attrs(lib):
        a = lib.arange(12.0, dtype=lib.float64).reshape(3, 4).requires_grad_()
        b = lib.arange(20.0, dtype=lib.float64).reshape(5, 4).requires_grad_()
        fns = [lib.mm(a, b.t()).grad_fn, lib.mm(a, b.detach().t()).grad_fn,
               lib.addmm(lib.zeros(3, dtype=lib.float64), b, a.t()).grad_fn]
        return [{k: getattr(fn, k) for k in dir(fn) if "_sym_" in k} for fn in fns]

    assert attrs(tg) == attrs(torch)


if __name__ == "__main__":  # a survey: every operator that differs, and how
    for case in CASES:
        if diff := differences(case.values[0]):
            print(case.id, "::", "; ".join(d[:300] for d in diff))


# Inputs PyTorch saves only for their sizes are still saved tensors: modifying one in place before backward
# raises the version error, as in torch.
SAVED_FOR_SIZES = {
    "gather": lambda L, y: y.gather(0, L.tensor([0, 2])),
    "take": lambda L, y: y.take(L.tensor([0, 2])),
    "take_along_dim": lambda L, y: L.take_along_dim(y, L.tensor([0, 2])),
    "index_add": lambda L, y: L.zeros(3).index_add(0, L.tensor([0, 1]), y[:2]),
    "index_copy": lambda L, y: L.zeros(3).index_copy(0, L.tensor([0, 1]), y[:2]),
}


@pytest.mark.parametrize("name", SAVED_FOR_SIZES)
def test_input_saved_for_its_sizes_checks_its_version(name):
    def run(lib):
        x = lib.randn(3, requires_grad=True)
        y = x * 1
        z = SAVED_FOR_SIZES[name](lib, y)
        y.add_(1)
        with pytest.raises(RuntimeError) as info:
            z.sum().backward()
        return str(info.value)

    assert run(tg) == run(torch)


def test_source_without_gradient_is_not_saved():
    def run(lib):
        source = lib.randn(2)
        base = lib.zeros(3, requires_grad=True) * 1
        out = base.index_add(0, lib.tensor([0, 1]), source)
        source.add_(1)  # not saved: its gradient is not needed
        out.sum().backward()
        return out.grad_fn is None

    assert run(tg) == run(torch)
