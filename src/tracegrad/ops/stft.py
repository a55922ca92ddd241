"""``torch.stft`` / ``torch.istft``: the short-time Fourier transform and its inverse.

Both are composites, as in PyTorch (``torch/functional.py`` plus ATen's SpectralOps.cpp), so the recorded graphs
are PyTorch's: ``stft`` reflect-pads the signal (``center``), frames it with one ``as_strided`` view, multiplies
by the (zero-padded) window and runs ``_fft_r2c``/``_fft_c2c``, then transposes in place; ``istft`` runs
``_fft_c2r``/``_fft_c2c`` on the frames, multiplies by the window, overlap-adds the frames and the squared
window with ``unfold_backward`` and divides by that window envelope (after checking it has no zeros: NOLA).
"""

from __future__ import annotations

import numpy as np

from .._arg_parser import refuse_as_torch
from .._tensor import Tensor
from .._warnings import warn_once_at_caller
from ..backend.dtypes import kind_of, tensor_type_string
from ._util import wrap_dim
from .complex_ops import view_as_complex, view_as_real
from .fft import _BY_N, _BY_ROOT_N, _NONE, _fft_c2c, _fft_c2r, _fft_r2c
from .nn_ops.misc import constant_pad_nd
from .shape import unfold_backward
from .shape_extra import refuse_if
from .views import slice as slice_view
from .views import squeeze_, transpose_

_STFT_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied,which is known to cause spectral leakage. "
    "Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce spectral leakage."
    "To suppress this warning and use a rectangular window, explicitly set "
    "`window=torch.ones(n_fft, device=<device>)`.")
_ISTFT_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied.Please provide the same window used by stft "
    "to make the inversion lossless.To suppress this warning and use a rectangular window, explicitly set "
    "`window=torch.ones(n_fft, device=<device>)`.")
_STFT_REAL_DEPRECATED = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will return complex tensors "
    "for all inputs, and return_complex=False will raise an error.\n"
    "Note: you can still call torch.view_as_real on the complex output to recover the old return format.")
_ISTFT_SHORT = (
    "The length of signal is shorter than the length parameter. Result is being padded with zeros in the tail. "
    "Please check your center and hop_length settings.")


# ---- ATen's REPR of the call, which prefixes its errors ----------------------------------------------------------


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _opt(v: bool | int | None) -> str:
    """C++ stream formatting: bools as 0/1, an empty optional as None."""
    return "None" if v is None else str(int(v))


def _window_repr(window: Tensor | None) -> str:
    return "None" if window is None else f"{tensor_type_string(window._data.dtype)}{{{_sizes(window)}}}"


# ---- stft --------------------------------------------------------------------------------------------------------


def _padded_window(window: Tensor | None, n_fft: int, win_length: int, like: Tensor) -> Tensor | None:
    """The window centred in ``n_fft`` zeros: ATen writes it into ``zeros(n_fft)`` with ``narrow().copy_``
    (a CopySlices node); a missing window becomes a constant box of ones."""
    from .._factories import from_numpy

    if win_length >= n_fft:
        return window
    left = (n_fft - win_length) // 2
    source = like if window is None else window
    padded = np.zeros(n_fft, dtype=source._data.dtype)
    if window is None:
        padded[left:left + win_length] = 1
        return from_numpy(padded)
    result = from_numpy(padded)
    result.narrow(0, left, win_length).copy_(window)
    return result


def _stft_core(input: Tensor, n_fft: int, hop_length: int | None, win_length: int | None, window: Tensor | None,
               normalized: bool, onesided: bool | None, return_complex: bool | None,
               align_to_window: bool | None) -> Tensor:
    """ATen's ``stft`` (after the Python-side centre padding)."""
    if window is None:
        warn_once_at_caller("stft_no_window", _STFT_NO_WINDOW)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def fail(message: str) -> RuntimeError:
        return RuntimeError(
            f"stft({tensor_type_string(input._data.dtype)}{_sizes(input)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, "
            f"window={_window_repr(window)}, normalized={_opt(normalized)}, onesided={_opt(onesided)}, "
            f"return_complex={_opt(return_complex)}, align_to_window={_opt(align_to_window)}) : {message}")

    complex_out = return_complex
    if complex_out is None:  # (the default follows the input and the window)
        complex_out = input.is_complex() or (window is not None and window.is_complex())
    if not complex_out:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                               "further require that return_complex=True in a future PyTorch release.")
        warn_once_at_caller("stft_return_complex_false", _STFT_REAL_DEPRECATED)
    if kind_of(input._data.dtype) not in "fc":
        raise fail("expected a tensor of floating point or complex values")
    if input.ndim not in (1, 2):
        raise fail("expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if input.ndim == 1 else input
    length = x.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise fail(f"expected 0 < n_fft < {length}, but got n_fft={win}")  # (ATen prints win_length here)
    if hop <= 0:
        raise fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window with size "
                   f"{_sizes(window)}")
    window_ = _padded_window(window, n_fft, win, input)
    if align_to_window:
        # frames start where their window starts rather than where the zero-padded window does
        left = (n_fft - win) // 2
        x = constant_pad_nd(x, (left, n_fft - win - left), 0)
    n_frames = 1 + (x.shape[1] - n_fft) // hop
    stride = x.stride()
    frames = x.as_strided((x.shape[0], n_frames, n_fft), (stride[0], hop * stride[1], stride[1]))
    if window_ is not None:
        frames = frames.mul(window_)
    mode = _BY_ROOT_N if normalized else _NONE
    last = (frames.ndim - 1,)
    if frames.is_complex():
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _fft_c2c(frames, last, mode, True)
    else:
        out = _fft_r2c(frames, last, mode, True if onesided is None else onesided)
    transpose_(out, 1, 2)
    if input.ndim == 1:
        squeeze_(out, 0)
    return out if complex_out else view_as_real(out)


_INT_OR_NONE = (int, type(None))
_BOOL_OR_NONE = (bool, type(None))


def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: bool | None = None, return_complex: bool | None = None,
         align_to_window: bool | None = None) -> Tensor:
    """torch's Python pads a centred signal, then its C++ ``stft`` parses the rest (its words for a mistake)."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        from ..nn.functional import pad as functional_pad  # (F.pad's parser refuses a mode that is not a str)

        # (torch/functional.py: F.pad needs a batch and a channel dim)
        signal_dim = input.dim()
        half = int(n_fft // 2)
        input = functional_pad(input.view([1] * (3 - signal_dim) + list(input.size())), [half, half], pad_mode)
        input = input.view(input.shape[-signal_dim:])
    args = (input, n_fft, hop_length, win_length, window, normalized, onesided, return_complex, align_to_window)
    # (the kernel would read a bool as a size, or any object as a flag: such a call is parsed first)
    refuse_if(n_fft.__class__ is not int or hop_length.__class__ not in _INT_OR_NONE
              or win_length.__class__ not in _INT_OR_NONE or normalized.__class__ is not bool
              or onesided.__class__ not in _BOOL_OR_NONE or return_complex.__class__ not in _BOOL_OR_NONE
              or align_to_window.__class__ not in _BOOL_OR_NONE, "stft", args, {})
    try:
        return _stft_core(*args)
    except Exception:
        refuse_as_torch("stft", args, {})
        raise


# ---- istft -------------------------------------------------------------------------------------------------------


def _overlap_add(frames: Tensor, batch: int, signal_length: int, n_fft: int, hop: int) -> Tensor:
    """Sum ``(batch, n_frames, n_fft)`` frames, ``hop`` apart, into ``(batch, signal_length)``: the adjoint of
    framing with ``unfold``."""
    return unfold_backward(frames, (batch, signal_length), 1, n_fft, hop)


def istft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
          window: Tensor | None = None, center: bool = True, normalized: bool = False,
          onesided: bool | None = None, length: int | None = None, return_complex: bool = False) -> Tensor:
    from .._factories import from_numpy

    if window is None:
        warn_once_at_caller("istft_no_window", _ISTFT_NO_WINDOW)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def fail(message: str) -> RuntimeError:
        return RuntimeError(
            f"istft({tensor_type_string(input._data.dtype)}{_sizes(input)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, "
            f"window={_window_repr(window)}, center={_opt(center)}, normalized={_opt(normalized)}, "
            f"onesided={_opt(onesided)}, length={_opt(length)}, return_complex={_opt(return_complex)}) {message}")

    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    x = view_as_real(input.resolve_conj())
    n_frames = x.shape[wrap_dim(-2, x.ndim)]
    fft_size = x.shape[wrap_dim(-3, x.ndim)]
    expected_length = n_fft + hop * (n_frames - 1)
    if x.numel() == 0:
        raise fail(": input tensor cannot be empty.")
    if x.ndim not in (3, 4):
        raise fail(f": expected a tensor with 3 or 4 dimensions, but got {x.ndim}")
    is_onesided = fft_size != n_fft if onesided is None else onesided
    if is_onesided and n_fft // 2 + 1 != fft_size:
        raise fail(": expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 "
                   f"when onesided=True, but got {fft_size}")
    if not is_onesided and n_fft != fft_size:
        raise fail(": expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when "
                   f"onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise fail(": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise fail(": expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise fail(": Invalid window shape. window has to be 1D and length of `win_length`")

    window_ = window if window is not None else from_numpy(np.ones(win, dtype=x._data.dtype))
    if win != n_fft:
        left = (n_fft - win) // 2
        window_ = constant_pad_nd(window_, (left, n_fft - win - left), 0)
    if x.ndim == 3:
        x = x.unsqueeze(0)
    frames = view_as_complex(x.transpose(1, 2))  # (channel, n_frames, fft_size)
    mode = _BY_ROOT_N if normalized else _BY_N
    if return_complex:
        if is_onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = _fft_c2c(frames, (frames.ndim - 1,), mode, False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not is_onesided:
            frames = frames.narrow(-1, 0, n_fft // 2 + 1)
        frames = _fft_c2r(frames, (frames.ndim - 1,), mode, n_fft)

    y = _overlap_add(frames * window_.view(1, 1, n_fft), frames.shape[0], expected_length, n_fft, hop)
    envelope = _overlap_add(window_.pow(2).expand(1, n_frames, n_fft), 1, expected_length, n_fft, hop)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center else expected_length
    y = slice_view(y, 1, start, end)
    envelope = slice_view(envelope, 1, start, end)
    if envelope.abs().min().lt(1e-11).item():
        raise fail("window overlap add min: 1\n[ CPUBoolType{} ]")  # (ATen prints the bool tensor)
    y = y / envelope
    if input.ndim == 2:
        y = y.squeeze(0)
    if end > expected_length:
        warn_once_at_caller("istft_short_signal", _ISTFT_SHORT)
        y = constant_pad_nd(y, (0, end - expected_length), 0)
    return y


def _stft_method(self: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
                 window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect",
                 normalized: bool = False, onesided: bool | None = None, return_complex: bool | None = None,
                 align_to_window: bool | None = None) -> Tensor:
    return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided,
                return_complex=return_complex, align_to_window=align_to_window)


def _istft_method(self: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
                  window: Tensor | None = None, center: bool = True, normalized: bool = False,
                  onesided: bool | None = None, length: int | None = None, return_complex: bool = False) -> Tensor:
    return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided, length, return_complex)


# (torch writes these methods in Python: Python's errors about their arguments name them so)
_stft_method.__qualname__ = "Tensor.stft"
_istft_method.__qualname__ = "Tensor.istft"

PUBLIC = {"stft": stft, "istft": istft}
METHODS = {"stft": _stft_method, "istft": _istft_method}
