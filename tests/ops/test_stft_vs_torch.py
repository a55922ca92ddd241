"""torch.stft / torch.istft against torch: values, dtypes, gradients of a real loss (input and window), the
recorded graphs (ATen's composite: reflection pad, as_strided framing, window product, FFT primitives, in-place
transpose; istft's overlap-add by unfold_backward and the window envelope), warnings and error messages."""

from __future__ import annotations

import warnings

import pytest
from _lib import assert_close, np, raised, recorded_graph, tg, torch, warning_texts

_RNG = np.random.RandomState(0)
_SIGNAL = _RNG.standard_normal((2, 40))
_SPECTRUM = _RNG.standard_normal((2, 16, 11)) + 1j * _RNG.standard_normal((2, 16, 11))
N_FFT = 16


def _window(lib, length: int | None, complex_window: bool = False):
    """A strictly positive tapered window (so istft's envelope never vanishes), requiring grad."""
    if length is None:
        return None
    values = np.hanning(length + 2)[1:-1] + 0.1
    return lib.tensor(values * (1 + 0.5j) if complex_window else values, requires_grad=True)


def _loss(out):
    return out.abs().sum() if out.is_complex() else out.pow(2).sum()


def _run_stft(lib, kwargs: dict, batch: bool, win_length: int | None, complex_input=False, complex_window=False):
    value = _SIGNAL if batch else _SIGNAL[0]
    x = lib.tensor(value * (1 - 0.5j) if complex_input else value, requires_grad=True)
    w = _window(lib, win_length, complex_window)
    kwargs = dict(kwargs, window=w, win_length=win_length)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (return_complex=False's deprecation, a missing window)
        out = lib.stft(x, N_FFT, **kwargs)
    _loss(out).backward()
    return out, x.grad, None if w is None else w.grad, recorded_graph([out]), str(out.dtype)


STFT_CASES = [
    {"return_complex": True},
    {"return_complex": True, "center": False, "hop_length": 5},
    {"return_complex": True, "pad_mode": "constant", "normalized": True},
    {"return_complex": True, "onesided": False},
    {"return_complex": False, "normalized": True},
    {"return_complex": True, "center": False, "align_to_window": True, "hop_length": 3},
]


@pytest.mark.parametrize("win_length", [16, 12, None])
@pytest.mark.parametrize("batch", [False, True])
@pytest.mark.parametrize("kwargs", STFT_CASES, ids=[str(k) for k in STFT_CASES])
def test_stft_value_grad_graph_vs_torch(kwargs, batch, win_length):
    ours, theirs = _run_stft(tg, kwargs, batch, win_length), _run_stft(torch, kwargs, batch, win_length)
    assert_close(ours[:3], theirs[:3], rtol=1e-7, atol=1e-9)
    assert ours[3:] == theirs[3:]


@pytest.mark.parametrize("complex_input,complex_window,win_length", [
    (True, False, 16), (True, False, None), (False, True, 16), (False, True, 10), (True, True, 12)])
def test_stft_complex_input_or_window_vs_torch(complex_input, complex_window, win_length):
    """A complex input or window takes the two-sided C2C path (and a complex window is padded with CopySlices)."""
    args = ({"center": True}, True, win_length, complex_input, complex_window)
    ours, theirs = _run_stft(tg, *args), _run_stft(torch, *args)
    assert_close(ours[:3], theirs[:3], rtol=1e-7, atol=1e-9)
    assert ours[3:] == theirs[3:]


def _run_istft(lib, kwargs: dict, batch: bool, win_length: int | None, fft_size: int):
    value = _SPECTRUM[:, :fft_size] if batch else _SPECTRUM[0, :fft_size]
    z = lib.tensor(value, requires_grad=True)
    w = _window(lib, win_length)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a missing window, a length past the signal)
        out = lib.istft(z, N_FFT, window=w, win_length=win_length, **kwargs)
    _loss(out).backward()
    return out, z.grad, None if w is None else w.grad, recorded_graph([out]), str(out.dtype)


ISTFT_CASES = [
    ({}, 9, (16, 12, None)),
    ({"center": False, "hop_length": 2}, 9, (16,)),
    ({"normalized": True, "length": 30}, 9, (16, 12)),
    ({"length": 60}, 9, (16,)),  # longer than the signal: zero-padded with a warning
    ({"onesided": False}, 16, (16, 12)),  # a two-sided spectrum to a real signal: its first half
    ({"onesided": False, "return_complex": True}, 16, (16,)),
    ({"return_complex": True}, 16, (12, None)),
]
ISTFT_PARAMS = [(kw, fft, wl, batch) for kw, fft, wls in ISTFT_CASES for wl in wls for batch in (False, True)]


@pytest.mark.parametrize("kwargs,fft_size,win_length,batch", ISTFT_PARAMS,
                         ids=[f"{kw}-{fft}-{wl}-{b}" for kw, fft, wl, b in ISTFT_PARAMS])
def test_istft_value_grad_graph_vs_torch(kwargs, fft_size, win_length, batch):
    ours = _run_istft(tg, kwargs, batch, win_length, fft_size)
    theirs = _run_istft(torch, kwargs, batch, win_length, fft_size)
    assert_close(ours[:3], theirs[:3], rtol=1e-7, atol=1e-9)
    assert ours[3:] == theirs[3:]


@pytest.mark.parametrize("center", [True, False])
def test_round_trip_and_methods(center):
    """istft(stft(x)) gives x back (Tensor methods here), float32 stays single precision."""
    for lib in (tg, torch):
        x = lib.tensor(_SIGNAL, dtype=lib.float32)
        w = lib.hann_window(N_FFT) + 0.1  # (positive at the edges: center=False keeps the first sample)
        spec = x.stft(N_FFT, hop_length=4, window=w, center=center, return_complex=True)
        assert spec.dtype == lib.complex64 and tuple(spec.shape) == ((2, 9, 11) if center else (2, 9, 7))
        back = spec.istft(N_FFT, hop_length=4, window=w, center=center, length=40 if center else None)
        assert back.dtype == lib.float32
        expected = _SIGNAL if center else _SIGNAL[:, :N_FFT + 4 * 6]
        assert_close(back, expected, rtol=1e-4, atol=1e-5)


def test_dtype_promotion_and_strided_input_vs_torch():
    """A float32 signal with a float64 window gives complex128; a sliced, non-contiguous signal is framed from its
    own storage offset and strides."""
    results = []
    for lib in (tg, torch):
        base = lib.tensor(_SIGNAL.T.copy(), dtype=lib.float32)  # (40, 2): columns are strided
        x = base[3:, 1]
        w = lib.ones(N_FFT, dtype=lib.float64)
        out = lib.stft(x, N_FFT, hop_length=5, window=w, center=False, return_complex=True)
        results.append((out, str(out.dtype)))
    assert_close(results[0][0], results[1][0], rtol=1e-5, atol=1e-5)
    assert results[0][1] == results[1][1] == "torch.complex128"


def _x(lib, *shape, dtype=None):
    return lib.ones(*shape, dtype=dtype or lib.float64)


STFT_ERRORS = {
    "return_complex missing": lambda L: L.stft(_x(L, 40), 16, window=_x(L, 16)),
    "integer input": lambda L: L.stft(L.arange(40), 16, window=_x(L, 16), return_complex=True),
    "3-d input": lambda L: L.stft(_x(L, 2, 2, 40, dtype=L.float32), 16, window=_x(L, 16), center=False,
                                  return_complex=True),
    "float16 3-d": lambda L: L.stft(_x(L, 2, 2, 40, dtype=L.float16), 16, window=_x(L, 16, dtype=L.complex64),
                                     center=False, return_complex=True),
    "n_fft too big": lambda L: L.stft(_x(L, 40), 50, win_length=16, window=_x(L, 16), center=False,
                                      return_complex=True),
    "n_fft zero": lambda L: L.stft(_x(L, 2, 40), 0, window=_x(L, 0), center=False, return_complex=True),
    "hop zero": lambda L: L.stft(_x(L, 2, 40), 16, hop_length=0, window=_x(L, 16), return_complex=True),
    "win_length too big": lambda L: L.stft(_x(L, 40), 16, win_length=20, window=_x(L, 20), return_complex=True),
    "window size": lambda L: L.stft(_x(L, 40), 16, window=_x(L, 15), return_complex=False),
    "window 2-d": lambda L: L.stft(_x(L, 40), 4, window=_x(L, 2, 2), return_complex=True, align_to_window=False,
                                   center=False),
    "complex onesided": lambda L: L.stft(_x(L, 40, dtype=L.complex128), 16, window=_x(L, 16), onesided=True),
    "align with center": lambda L: L.stft(_x(L, 40), 16, window=_x(L, 16), return_complex=True,
                                          align_to_window=True),
    "pad mode": lambda L: L.stft(_x(L, 40), 16, window=_x(L, 16), return_complex=True, pad_mode="foo"),
    "reflect too short": lambda L: L.stft(_x(L, 6), 16, window=_x(L, 16), return_complex=True),
}


def _spectrum(L, *shape):
    return L.ones(*shape, dtype=L.complex128)


ISTFT_ERRORS = {
    "real input": lambda L: L.istft(_x(L, 9, 11, 2), 16, window=_x(L, 16)),
    "empty": lambda L: L.istft(_spectrum(L, 0, 3), 16, window=_x(L, 16)),
    "1-d": lambda L: L.istft(_spectrum(L, 9), 16, window=_x(L, 16)),
    "0-d": lambda L: L.istft(L.tensor(1j), 16, window=_x(L, 16)),
    "4-d": lambda L: L.istft(_spectrum(L, 1, 2, 9, 11), 16, window=_x(L, 16)),
    "onesided size": lambda L: L.istft(_spectrum(L, 8, 11), 16, window=_x(L, 16)),
    "twosided size": lambda L: L.istft(_spectrum(L, 9, 11), 16, window=_x(L, 16), onesided=False),
    "hop": lambda L: L.istft(_spectrum(L, 9, 11), 16, hop_length=17, window=_x(L, 16)),
    "win_length": lambda L: L.istft(_spectrum(L, 9, 11), 16, win_length=17, window=_x(L, 17), length=3),
    "window shape": lambda L: L.istft(_spectrum(L, 9, 11), 16, window=_x(L, 15)),
    "NOLA": lambda L: L.istft(_spectrum(L, 9, 11), 16, window=L.zeros(16, dtype=L.float32)),
    "NOLA padded window": lambda L: L.istft(_spectrum(L, 9, 11), 16, win_length=12, window=_x(L, 12),
                                            center=False),
    "onesided complex": lambda L: L.istft(_spectrum(L, 9, 11), 16, window=_x(L, 16), return_complex=True),
    "complex window": lambda L: L.istft(_spectrum(L, 9, 11), 16, window=_x(L, 16, dtype=L.complex64)),
}


@pytest.mark.parametrize("name", list(STFT_ERRORS) + list(ISTFT_ERRORS))
def test_errors_vs_torch(name):
    program = STFT_ERRORS.get(name) or ISTFT_ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = raised(tg, program), raised(torch, program)
    assert theirs is not None
    assert ours == theirs


WARNING_CASES = {
    "stft without window": lambda L: L.stft(_x(L, 40), 16, return_complex=True),
    "stft without window, no return_complex": lambda L: L.stft(_x(L, 40), 16),
    "stft real output": lambda L: L.stft(_x(L, 40), 16, window=_x(L, 16), return_complex=False),
    "istft without window": lambda L: L.istft(_spectrum(L, 9, 11), 16),
    "istft without window, empty": lambda L: L.istft(_spectrum(L, 0, 11), 16),
    "istft length past the signal": lambda L: L.istft(_spectrum(L, 9, 11), 16, window=_x(L, 16), length=50),
    "no warning": lambda L: L.istft(L.stft(_x(L, 40), 16, window=_x(L, 16), return_complex=True), 16,
                                    window=_x(L, 16)),
}


@pytest.mark.parametrize("name", list(WARNING_CASES))
def test_warnings_vs_torch(name):
    """(Warn-once warnings compared as if each were the process's first.)"""
    texts = []
    for lib in (tg, torch):
        always = lib.is_warn_always_enabled()
        lib.set_warn_always(True)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                raised(lib, WARNING_CASES[name])
        finally:
            lib.set_warn_always(always)
        texts.append(warning_texts(caught))
    assert texts[0] == texts[1]


def test_forward_ad_vs_torch():
    """Forward-mode AD through both composites (every primitive they use has a tangent rule)."""
    tangent = _RNG.standard_normal(40)
    results = []
    for lib in (tg, torch):
        fwAD = lib.autograd.forward_ad
        w = lib.tensor(np.hanning(N_FFT))
        with fwAD.dual_level():
            x = fwAD.make_dual(lib.tensor(_SIGNAL[0]), lib.tensor(tangent))
            spec = lib.stft(x, N_FFT, window=w, return_complex=True)
            back = lib.istft(spec, N_FFT, window=w, length=40)
            results.append((fwAD.unpack_dual(spec).tangent, fwAD.unpack_dual(back).tangent))
    assert_close(results[0], results[1], rtol=1e-8, atol=1e-9)
    assert_close(results[0][1], tangent, rtol=1e-8, atol=1e-9)  # (istft inverts stft, tangents too)
