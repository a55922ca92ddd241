"""Edge cases of the engine's input buffer and of AccumulateGrad's layout checks, against torch.

- A gradient broadcast to a 0-d input is reduced by PyTorch's ``sum_to`` as ``grad.sum()``: a fresh tensor, not a
  view, so a second gradient is added into it in place (``_version`` 1), unlike a reduction that drops leading dims
  to a 1-d or wider shape (a view, never added into). The same for the 0-d bias of ``addmm``/``linear``.
- Empty gradients: NumPy gives its empty arrays zero strides, which ``Tensor.stride()`` reads as contiguous; the
  gradient layout contract must read them so too (no copy with its version bump, no layout warning).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tests._lib import tg, torch, warning_texts

_A = np.arange(6, dtype=np.float32).reshape(2, 3) / 7


def _obs(t) -> tuple | None:
    g = t.grad
    if g is None:
        return None
    return g._version, tuple(g.stride()), str(g.dtype).split(".")[-1], g.detach().numpy().tobytes()


def zero_dim_leaf_reduced(lib):
    out = []
    a = lib.tensor(_A)
    for later_first in (True, False):
        b = lib.tensor(1.5).requires_grad_()
        first, second = (a + b).sum() * 2, (a * 3 + b).sum() * 3
        (first + second if later_first else second + first).backward()
        out.append(_obs(b))
    b = lib.tensor([1.5]).requires_grad_()  # (1,): a keepdim sum then a view: added out of place
    ((a + b).sum() * 2 + (a * 3 + b).sum() * 3).backward()
    out.append(_obs(b))
    b = lib.tensor(1.5, dtype=lib.float64).requires_grad_()  # reduced and cast: fresh
    ((a + b).sum() * 2 + (a * 3 + b).sum() * 3).backward()
    out.append(_obs(b))
    return out


def zero_dim_intermediate_reduced(lib):
    a = lib.tensor(_A)
    x = lib.tensor(1.5).requires_grad_()
    h = x * 1
    seen = []
    h.register_hook(lambda g: seen.append(g._version))
    ((a + h).sum() * 2 + (a * 3 + h).sum() * 3).backward()
    return [seen, _obs(x)]


def zero_dim_bias(lib):
    out = []
    b_rows = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    for make in (lambda: lib.tensor(1.5), lambda: lib.tensor([1.5]), lambda: lib.tensor([1.5, 2.0, 2.5])):
        for layer in (lambda x, w, b: lib.addmm(b, x, w), lambda x, w, b: lib.nn.functional.linear(x, w, b)):
            b = make().requires_grad_()
            w = lib.tensor(np.eye(3, dtype=np.float32)).requires_grad_()
            layer(layer(lib.tensor(b_rows), w, b), w, b).sum().backward()  # (a 0-d bias's gradient: sum(), fresh)
            out += [_obs(b), _obs(w)]
    return out


def empty_leaves(lib):
    F = lib.nn.functional
    out = []
    losses = {"nll": lambda x: F.nll_loss(x, lib.zeros(0, dtype=lib.int64), reduction="sum"),
              "cross_entropy": lambda x: F.cross_entropy(x, lib.zeros(0, dtype=lib.int64)),
              "exp": lambda x: x.exp().sum(), "mul": lambda x: (x * 2).sum(), "square": lambda x: (x * x).sum(),
              "log_softmax": lambda x: (F.log_softmax(x, -1) * 2).sum(),
              # (expanded gradients: zero strides in torch too, which break the contract)
              "sum": lambda x: x.sum(), "sum_last": lambda x: x.sum(-1).sum()}
    for name, loss in losses.items():
        for shape in ((0, 4),) if name in ("nll", "cross_entropy") else ((0, 4), (3, 0), (2, 0, 3)):
            x = lib.zeros(*shape).requires_grad_()
            loss(x).backward()
            out.append((name, shape, _obs(x)))
            loss(x).backward()  # (added into the existing .grad)
            out.append((name, shape, _obs(x)))
    return out


@pytest.mark.parametrize("program", [zero_dim_leaf_reduced, zero_dim_intermediate_reduced, zero_dim_bias,
                                     empty_leaves],
                         ids=lambda p: p.__name__)
def test_same_as_torch(program):
    # warn-always, so that torch's TORCH_WARN_ONCE (the layout contract's) warns in every test
    def observe(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = program(lib)
        return result, warning_texts(caught)

    try:
        torch.set_warn_always(True)
        tg.set_warn_always(True)
        assert observe(tg) == observe(torch)
    finally:
        torch.set_warn_always(False)
        tg.set_warn_always(False)
