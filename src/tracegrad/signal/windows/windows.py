"""Window functions, as PyTorch's ``torch.signal.windows`` computes them.

Each window is a few dispatched ops (``linspace`` of the sample positions, then a pointwise formula), in the order
and the dtype torch uses, so the values are torch's bit for bit wherever the ops are. The checks come first, in
torch's order and words; the windows built on ``general_cosine`` (hamming, hann, nuttall) report under that name,
as torch's do.
"""

from __future__ import annotations

from collections.abc import Iterable
from math import sqrt

import tracegrad as torch
from tracegrad import Tensor

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]

_BLACKMAN = (0.42, 0.5, 0.08)
_NUTTALL = (0.3635819, 0.4891775, 0.1365995, 0.0106411)


def _checked_dtype(function_name: str, M: int, dtype, layout) -> torch.dtype:  # noqa: N803 - torch's name
    """The window's dtype (the default one when None), after torch's checks of the length, layout and dtype."""
    if dtype is None:
        dtype = torch.get_default_dtype()
    if M < 0:
        raise ValueError(f"{function_name} requires non-negative window length, got M={M}")
    if layout is not torch.strided:
        raise ValueError(f"{function_name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"{function_name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _short_window(M: int, factory: dict, *, one_is_trivial: bool = True) -> Tensor | None:  # noqa: N803
    """The window of no point (empty) and, where torch special-cases it, of one point (ones); None otherwise."""
    if M == 0:
        return torch.empty((0,), **factory)
    if M == 1 and one_is_trivial:
        return torch.ones((1,), **factory)
    return None


def _positions(start, end, M: int, factory: dict) -> Tensor:  # noqa: N803
    """``M`` evenly spaced sample positions from ``start`` to ``end``, made as the window's tensor."""
    return torch.linspace(start=start, end=end, steps=M, **factory)


def _factory(dtype, layout, device, requires_grad: bool) -> dict:
    return {"dtype": dtype, "layout": layout, "device": device, "requires_grad": requires_grad}


def _span(M: int, sym: bool) -> int:  # noqa: N803
    """The denominator of the sample spacing: ``M - 1`` for a symmetric window, ``M`` for a periodic one (which is
    the symmetric window of ``M + 1`` points without its last)."""
    return M - 1 if sym else M


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,  # noqa: N803
                dtype=None, layout=torch.strided, device=None, requires_grad: bool = False) -> Tensor:
    """A window with an exponential (Poisson) waveform: ``exp(-|n - center| / tau)``."""
    dtype = _checked_dtype("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    factory = _factory(dtype, layout, device, requires_grad)
    short = _short_window(M, factory, one_is_trivial=False)
    if short is not None:
        return short
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / tau
    k = _positions(-center * scale, (-center + (M - 1)) * scale, M, factory)
    return torch.exp(-torch.abs(k))


def cosine(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,  # noqa: N803
           requires_grad: bool = False) -> Tensor:
    """A window with a simple cosine waveform (the sine window): ``sin(pi * (n + 0.5) / M)``."""
    dtype = _checked_dtype("cosine", M, dtype, layout)
    factory = _factory(dtype, layout, device, requires_grad)
    short = _short_window(M, factory, one_is_trivial=False)
    if short is not None:
        return short
    step = torch.pi / (M + 1 if not sym and M > 1 else M)
    k = _positions(0.5 * step, (0.5 + (M - 1)) * step, M, factory)
    return torch.sin(k)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=torch.strided,  # noqa: N803
             device=None, requires_grad: bool = False) -> Tensor:
    """A Gaussian window: ``exp(-(n - c)^2 / (2 std^2))``, ``c`` the window's centre."""
    dtype = _checked_dtype("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    factory = _factory(dtype, layout, device, requires_grad)
    short = _short_window(M, factory, one_is_trivial=False)
    if short is not None:
        return short
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / (std * sqrt(2))
    k = _positions(start * scale, (start + (M - 1)) * scale, M, factory)
    return torch.exp(-(k**2))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=torch.strided,  # noqa: N803
           device=None, requires_grad: bool = False) -> Tensor:
    """A Kaiser window: ``I0(beta * sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)``."""
    dtype = _checked_dtype("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    factory = _factory(dtype, layout, device, requires_grad)
    short = _short_window(M, factory)
    if short is not None:
        return short
    # beta as a tensor of the window's dtype: the positions then stay inside [-beta, beta] (no sqrt of a negative)
    beta = torch.tensor(beta, dtype=dtype, device=device)
    start = -beta
    step = 2.0 * beta / _span(M, sym)
    end = torch.minimum(beta, start + (M - 1) * step)
    k = _positions(start, end, M, factory)
    return torch.i0(torch.sqrt(beta * beta - torch.pow(k, 2))) / torch.i0(beta)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,  # noqa: N803
             requires_grad: bool = False) -> Tensor:
    """A Bartlett (triangular) window: ``1 - |2n / (M - 1) - 1|``."""
    dtype = _checked_dtype("bartlett", M, dtype, layout)
    factory = _factory(dtype, layout, device, requires_grad)
    short = _short_window(M, factory)
    if short is not None:
        return short
    step = 2 / _span(M, sym)
    k = _positions(-1, -1 + (M - 1) * step, M, factory)
    return 1 - torch.abs(k)


def general_cosine(M: int, *, a: Iterable, sym: bool = True, dtype=None, layout=torch.strided,  # noqa: N803
                   device=None, requires_grad: bool = False) -> Tensor:
    """A sum of cosine terms: ``sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``."""
    dtype = _checked_dtype("general_cosine", M, dtype, layout)
    factory = _factory(dtype, layout, device, requires_grad)
    short = _short_window(M, factory)
    if short is not None:
        return short
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * torch.pi / _span(M, sym)
    k = _positions(0, (M - 1) * step, M, factory)
    signed = torch.tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype,
                          requires_grad=requires_grad)
    orders = torch.arange(signed.shape[0], dtype=signed.dtype, device=signed.device,
                          requires_grad=signed.requires_grad)
    return (signed.unsqueeze(-1) * torch.cos(orders.unsqueeze(-1) * k)).sum(0)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype=None,  # noqa: N803
                    layout=torch.strided, device=None, requires_grad: bool = False) -> Tensor:
    """A generalized Hamming window: ``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,  # noqa: N803
            requires_grad: bool = False) -> Tensor:
    """The Hamming window: ``general_hamming`` with ``alpha = 0.54``."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,  # noqa: N803
         requires_grad: bool = False) -> Tensor:
    """The Hann window: ``general_hamming`` with ``alpha = 0.5``."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,  # noqa: N803
             requires_grad: bool = False) -> Tensor:
    """The Blackman window: ``general_cosine`` with ``a = [0.42, 0.5, 0.08]`` (checked under its own name)."""
    dtype = _checked_dtype("blackman", M, dtype, layout)
    return general_cosine(M, a=list(_BLACKMAN), sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=torch.strided, device=None,  # noqa: N803
            requires_grad: bool = False) -> Tensor:
    """The minimum 4-term Blackman-Harris window of Nuttall: ``general_cosine`` with its four coefficients."""
    return general_cosine(M, a=list(_NUTTALL), sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
