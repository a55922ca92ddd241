"""Review of torch.convolution's argument checks (set 26): a stride, padding, dilation or output_padding of one
value for a 2-d or 3-d convolution computes, and its plain backward (which read the saved sizes unexpanded) gives
torch's gradients; the refusals come in ATen's order and words (the weight's dims and groups before anything,
then the signs of the sizes, then the input's dims against the weight's, the bias's size before the kernel's
against the input, and the CPU kernel's dtype refusals last)."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch


def _raised(lib, fn) -> tuple:
    try:
        fn(lib)
    except Exception as error:  # noqa: BLE001 - the type and text are what is compared
        return type(error).__name__, str(error)
    return None


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("create_graph", [False, True])
def test_one_value_sizes_backward(nd: int, transposed: bool, create_graph: bool) -> None:
    rng = np.random.default_rng(nd)
    xs, ws = rng.standard_normal((2, 2) + (5,) * nd), rng.standard_normal((2, 2) + (3,) * nd)
    results = []
    for lib in (torch, tg):
        x = lib.tensor(xs, requires_grad=True)
        w = lib.tensor(ws, requires_grad=True)
        y = lib.convolution(x, w, None, [2], [1], [1], transposed, [1] if transposed else [0], 1)
        grads = lib.autograd.grad((y * y).sum(), (x, w), create_graph=create_graph)
        assert y.grad_fn._saved_stride == (2,)
        results.append([y.detach().numpy()] + [g.detach().numpy() for g in grads])
    for theirs, ours in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)


_D = "float32"
CASES = {
    "weight 2-d": ((1, 2, 5), (2, 2), None, [1], [0], [1], False, [0], 1),
    "weight 1-d, groups 0": ((1, 2, 5), (2,), None, [1], [0], [1], False, [0], 0),
    "weight 2-d, input 1-d": ((2,), (2, 2), None, [1], [0], [1], True, [0], 1),
    "groups 0, input 1-d": ((2,), (2, 2, 3), None, [1], [0], [1], False, [0], 0),
    "input 1-d": ((2,), (2, 2, 3), None, [1], [0], [1], False, [0], 1),
    "input 3-d for 2-d": ((1, 2, 5), (2, 2, 3, 3), None, [1], [0], [1], True, [0], 1),
    "input 0-d": ((), (2, 2, 3, 3), None, [1], [0], [1], False, [0], 1),
    "input 1-d, stride -1": ((2,), (2, 2, 3), None, [-1], [0], [1], False, [0], 1),
    "padding before stride": ((1, 2, 5), (2, 2, 3), None, [-1], [-1], [-1], False, [0], 1),
    "output_padding before stride": ((1, 2, 5), (2, 2, 3), None, [-1], [0], [1], True, [-1], 1),
    "bias before kernel size": ((1, 2, 2), (2, 2, 3), (3,), [1], [0], [1], False, [0], 1),
    "transposed bias": ((1, 2, 2), (2, 2, 3), (3,), [1], [0], [1], True, [0], 1),
    "transposed bias before output_padding": ((1, 2, 5), (2, 2, 3), (3, 3), [1], [0], [1], True, [1], 1),
    "bool input, groups 3": ((1, 2, 5), (2, 2, 3), None, [1], [0], [1], False, [0], 3, "bool"),
    "bool input 2-d": ((2, 5), (2, 2, 3), None, [1], [0], [1], False, [0], 1, "bool"),
    "int32 transposed input 2-d": ((2, 5), (2, 2, 3), None, [1], [0], [1], True, [0], 1, "int32"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_refusals_in_atens_order(name: str) -> None:
    xs, ws, bs, *sizes, groups = CASES[name][:9]
    dtype = CASES[name][9] if len(CASES[name]) > 9 else _D

    def call(lib):
        d = getattr(lib, dtype)
        bias = None if bs is None else lib.ones(bs, dtype=d)
        return lib.convolution(lib.ones(xs, dtype=d), lib.ones(ws, dtype=d), bias, *sizes, groups)

    expected = _raised(torch, call)
    assert expected is not None
    assert _raised(tg, call) == expected
