"""``saved_tensors_hooks`` see every operator's saved values packed, and unpacked, in PyTorch's order.

PyTorch's generated code saves a node's inputs first, then its outputs, each group sorted by name (``other``
before ``self``), and reads them back in the same order whatever its formula uses. For the first two float64
samples of every differentiable operator, the values the pack and unpack hooks receive (each identified by
shape, dtype and the sum of its magnitudes, so a sign-ambiguous eigenvector still matches) come in torch's
order. Where tracegrad saves something else, the case is a strict expected failure with the reason.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch
from opinfo import op_db
from opinfo.core import Call, flatten_outputs, resolve

KNOWN_DIFFERENT: dict = {}


def _events(lib, op, index: int) -> list:
    call = Call(lib, op, op.samples("float64")[index], requires_grad=True)
    events: list = []

    def key(kind: str, x) -> tuple:
        data = x.detach().to(lib.float64) if x.is_floating_point() else x.detach()
        magnitude = float(np.nansum(np.abs(data.numpy().astype(np.float64))))
        return kind, tuple(x.shape), str(x.dtype).split(".")[-1], round(magnitude, 5)

    def pack(x):
        events.append(key("pack", x))
        return x

    def unpack(x):
        events.append(key("unpack", x))
        return x

    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        outs = [t for t in flatten_outputs(call.run(resolve(lib, op.name))) if getattr(t, "requires_grad", False)]
    if outs:
        lib.autograd.grad(outs, call.diff_inputs, [lib.ones_like(o) for o in outs], allow_unused=True)
    return events


# Cases whose torch values are undefined, so there is nothing to compare with.
_EMPTY_NOISE = ("torch.rrelu passes rrelu_with_noise a noise tensor from empty_like, packed before the kernel "
                "writes it (and never written in evaluation): torch's packed values are uninitialized memory")
UNDEFINED_IN_TORCH = {("nn.functional.rrelu", 0): _EMPTY_NOISE, ("nn.functional.rrelu", 1): _EMPTY_NOISE}


def _marks(key: tuple) -> tuple:
    if key in UNDEFINED_IN_TORCH:
        return (pytest.mark.skip(reason=UNDEFINED_IN_TORCH[key]),)
    if key in KNOWN_DIFFERENT:
        return (pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENT[key]),)
    return ()


CASES = [pytest.param(op, index, id=f"{op.id}-{index}", marks=_marks((op.id, index)))
         for op in op_db if op.differentiable for index in range(min(2, len(op.samples("float64"))))]


# torch.nn.grad gives convolution_backward a stand-in (an expanded one-element ``new_empty``) for the tensor it does
# not differentiate by, which the double backward saves: its values are uninitialized memory in torch (tracegrad
# zeroes it), so those cases compare what is packed and unpacked, in what order, without the values' magnitudes
STAND_IN_VALUES = {"nn.grad.conv2d_input", "nn.grad.conv2d_weight"}


@pytest.mark.parametrize(("op", "index"), CASES)
def test_pack_and_unpack_in_torchs_order(op, index):
    ours, theirs = _events(tg, op, index), _events(torch, op, index)
    if op.id in STAND_IN_VALUES:
        ours, theirs = [event[:3] for event in ours], [event[:3] for event in theirs]
    assert ours == theirs
