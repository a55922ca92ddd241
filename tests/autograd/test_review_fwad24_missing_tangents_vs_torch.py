"""Forward-mode formulas of atan2, hypot, remainder, fmod and addcdiv where one input has no tangent.

PyTorch's formulas read a missing tangent as its zero tensor (ZeroTensor): where a graph records (an input requires
grad), the zero tensor's terms are still computed, so the tangent's graph shows them (the products' and quotients'
nodes, the SubBackward0 of ``self_t - ...``) and the tangent requires grad even when only ``self`` has a tangent.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, recorded_graph, tg, torch

_X = np.array([[0.3, -1.2, 2.5], [0.7, 1.9, -0.4]])
_Y = np.array([[1.1, 0.2, -0.6], [-1.5, 0.8, 2.2]])
_TX = np.array([[0.5, -0.25, 1.5], [2.0, -1.0, 0.75]])
_TY = np.array([[-0.3, 0.9, 0.1], [1.2, 0.4, -2.0]])

CASES = {
    "atan2": lambda lib, a, b: lib.atan2(a, b),
    "hypot": lambda lib, a, b: lib.hypot(a, b),
    "remainder": lambda lib, a, b: lib.remainder(a, b),
    "fmod": lambda lib, a, b: lib.fmod(a, b),
    "addcdiv": lambda lib, a, b: lib.addcdiv(a, a, b, value=0.5),
    "addcdiv_other_first": lambda lib, a, b: lib.addcdiv(b, a, b, value=-3),
    "remainder_": lambda lib, a, b: a.clone().remainder_(b),
    "hypot_broadcast": lambda lib, a, b: lib.hypot(a, b[0]),
}


def _one_tangent(lib, fn, dual_index: int, requires_grad: bool, dtype: str):
    """fn's tangent where only input ``dual_index`` has one: its graph, bits, whether it requires grad, and the
    gradients of ``sum(tangent)`` with respect to the inputs (when it does)."""
    fw = lib.autograd.forward_ad
    dt = getattr(lib, dtype)
    leaves = [lib.tensor(v, dtype=dt, requires_grad=requires_grad) for v in (_X, _Y)]
    with fw.dual_level():
        args = [fw.make_dual(x, lib.tensor(t, dtype=dt)) if i == dual_index else x
                for i, (x, t) in enumerate(zip(leaves, (_TX, _TY)))]
        tangent = fw.unpack_dual(fn(lib, *args)).tangent
    grads = None
    if tangent.requires_grad:
        grads = [None if g is None else _dense(lib, g)
                 for g in lib.autograd.grad(tangent.sum(), leaves, allow_unused=True)]
    return recorded_graph([tangent]), tangent.detach(), tangent.requires_grad, grads


def _dense(lib, grad) -> np.ndarray:
    """torch's zero tensor (a gradient only zero tensor terms reached) as the zeros it stands for."""
    if getattr(grad, "_is_zerotensor", lambda: False)():
        return lib.zeros(tuple(grad.shape), dtype=grad.dtype).numpy()
    return grad.detach().numpy()


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dual_index", [0, 1])
@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_missing_tangent_as_torch_zero_tensor(name, dual_index, requires_grad, dtype):
    (graph, tangent, rg, grads), (t_graph, t_tangent, t_rg, t_grads) = (
        _one_tangent(lib, CASES[name], dual_index, requires_grad, dtype) for lib in (tg, torch))
    assert graph == t_graph
    assert_same_bits(tangent, t_tangent)
    assert rg == t_rg
    assert (grads is None) == (t_grads is None)
    for mine, want in zip(grads or (), t_grads or ()):
        assert (mine is None) == (want is None)
        if want is not None:  # (a zero tensor's gradient is +0. in torch, -0. here: values compared, not signs)
            assert mine.dtype == want.dtype
            np.testing.assert_array_equal(mine, want)
