"""``torch.signal.windows`` against torch's: values (bit for bit where the ops underneath are: bartlett, and the
cosine sums and the sine window in float64), dtypes, ``sym``, the one- and zero-point windows, ``requires_grad``, the
default dtype, and torch's errors for bad arguments."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, raised, tg, torch

# each window with one non-default parameter where it has one
WINDOWS = {
    "bartlett": {}, "blackman": {}, "cosine": {}, "exponential": {"tau": 0.7}, "gaussian": {"std": 2.5},
    "general_cosine": {"a": [0.5, 0.3, 0.2]}, "general_hamming": {"alpha": 0.6}, "hamming": {}, "hann": {},
    "kaiser": {"beta": 5.0}, "nuttall": {},
}
# where tracegrad's exp/sin/cos/i0 kernels are torch's to the bit (elsewhere they differ by an ulp or so)
BIT_EXACT = {("bartlett", "float32"), ("bartlett", "float64"), ("cosine", "float64"), ("blackman", "float64"),
             ("general_cosine", "float64"), ("general_hamming", "float64"), ("hamming", "float64"),
             ("hann", "float64"), ("nuttall", "float64")}
LENGTHS = (0, 1, 2, 3, 10, 51)


def window(lib, name: str, M, **kwargs):  # noqa: N803
    return getattr(lib.signal.windows, name)(M, **{**WINDOWS[name], **kwargs})


def assert_same_window(name: str, ours, theirs) -> None:
    """The same bits where the ops underneath allow it, else the same dtype and shape and values within a few
    ulps of the window's peak (the sample positions and formula are torch's; a pointwise kernel's rounding is not)."""
    dtype = str(theirs.dtype).removeprefix("torch.")
    if (name, dtype) in BIT_EXACT or theirs.numel() < 2:
        assert_same_bits(ours, theirs)
        return
    assert str(ours.dtype).replace("tracegrad", "torch") == str(theirs.dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=0,
                               atol=8 * np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", WINDOWS)
def test_values(name, dtype):
    for M in LENGTHS:
        for sym in (True, False):
            ours = window(tg, name, M, sym=sym, dtype=getattr(tg, dtype))
            theirs = window(torch, name, M, sym=sym, dtype=getattr(torch, dtype))
            assert_same_window(name, ours, theirs)


@pytest.mark.parametrize("name", WINDOWS)
def test_requires_grad_and_default_dtype(name):
    def made(lib, M):  # noqa: N803
        w = window(lib, name, M, requires_grad=True)
        return w.dtype.__repr__().replace("tracegrad", "torch"), w.requires_grad, w.is_leaf, type(w.grad_fn).__name__

    for M in (0, 1, 5):
        assert made(tg, M) == made(torch, M)
    before = (tg.get_default_dtype(), torch.get_default_dtype())
    try:
        tg.set_default_dtype(tg.float64)
        torch.set_default_dtype(torch.float64)
        assert_same_window(name, window(tg, name, 6, sym=False), window(torch, name, 6, sym=False))
    finally:
        tg.set_default_dtype(before[0])
        torch.set_default_dtype(before[1])
    w = window(tg, name, 5, requires_grad=True)
    if w.grad_fn is not None:  # (gradients flow to the internal leaves without complaint)
        w.sum().backward()


MISTAKES = [
    "hann(-1)", "nuttall(-3)", "bartlett(-2)", "kaiser(-1, beta=-1)",
    "hann(4, dtype=L.float16)", "blackman(4, dtype=L.int64)", "cosine(4, dtype=L.complex64)",
    "gaussian(0, dtype=L.float16)", "kaiser(4, layout=L.sparse_coo)", "exponential(4, layout=L.sparse_coo)",
    "kaiser(4, beta=-1)", "kaiser(0, beta=-1)", "gaussian(4, std=0)", "gaussian(4, std=-2.0)",
    "exponential(4, tau=0)", "exponential(4, center=1.0)", "exponential(0, center=1.0)",
    "general_cosine(4, a=[])", "general_cosine(1, a=[])", "general_cosine(4, a=3)", "general_cosine(4)",
    "hann(2.5)", "hann('a')", "hann(None)", "hann(4, bogus=1)", "hann(4, True)",
    "exponential(4, sym=False, center=1.0, tau=2.0)", "general_hamming(5, alpha=1.5, sym=False)",
]


@pytest.mark.parametrize("call", MISTAKES)
def test_mistakes(call):
    def run(lib):
        return eval(f"lib.signal.windows.{call}", {"lib": lib, "L": lib})  # noqa: S307 - the test's own snippets

    ours, theirs = raised(tg, run), raised(torch, run)
    assert (ours and (ours[0], ours[1].replace("tracegrad", "torch"))) == theirs
    if theirs is None:  # (accepted by both: the same window)
        assert_same_window(call.partition("(")[0], run(tg), run(torch))


def test_module_layout():
    assert tg.signal.windows.__all__ == torch.signal.windows.__all__
    assert tg.signal.__all__ == torch.signal.__all__
    assert tg.signal.windows.windows.hann is tg.signal.windows.hann
