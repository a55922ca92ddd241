"""A twenty-sixth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: signal-processing and time-series notebooks. A windowed
two-tone spectrum (rfft magnitude and phase, the peak by rfftfreq, Parseval under every norm mode, fftshift of
fftfreq, the peak's gradient back to the samples); ``n=`` padding and truncation, irfft's odd lengths, 2-d and
n-d transforms with ``s=``/``dim=`` and the FFT refusals (a real tensor's ``.imag``, rfft of complex input, zero
lengths, complex max/comparisons); every window function (periodic and symmetric, ``torch.signal.windows`` with
their parameters, gain and noise bandwidth, bad lengths and parameters); stft/istft round trips with a log-power
gradient and stft's refusals; conv1d with 'same'/'valid' (even kernels, dilation), nn.Conv1d under every
padding_mode and F.pad's modes on 1-d signals; rolling mean/std by ``unfold`` and cumsum, drawdown by cummax,
logcumsumexp and diff with prepend/append; a GRU forecaster (``batch_first``) trained with teacher forcing and
rolled out under ``no_grad``; packed variable-length series through an LSTM and an LSTMCell; gappy series
(nanmean, quantile/nanquantile under every interpolation, nan_to_num, gap filling by searchsorted and forward
fill by cummax); trapezoid/cumulative_trapezoid with gradients and histc/histogram with their refusals; a
frequency-domain filter learned by SGD, view_as_complex and polar gradients; and spectral features (fft2,
Wiener-Khinchin autocorrelation, centroid and flatness, hfft/ihfft). Everything is drawn from the seeded global
generator, which is torch's; values are compared to a tolerance (FFTs and matrix products are not bit for bit).

Differences these programs found, now fixed (``tests/ops/test_program26_findings_vs_torch.py``):
- ``F.conv1d(x, w, padding=(1, 1))`` (or ``nn.Conv1d(..., padding=(1, 1))``, a stride, dilation or
  output_padding of the wrong length, in any convolution) computed with it or failed in NumPy's words; torch
  refuses "expected padding to be a single integer value or a list of 1 values to match the convolution
  dimensions, but got padding=[1, 1]" ("dilation cannot broadcast to 1 dimensions" under ``padding='same'``);
- ``Tensor.unfold`` of a 0-d tensor took any size, and a negative size leaked NumPy's ValueError;
- ``logcumsumexp`` cast into an ``out=`` of another dtype (torch: "expected scalar_type Float but found Double");
- ``quantile``/``nanquantile`` cast into an ``out=`` of another dtype, resized it without the deprecation warning
  and without torch's ``CopyBackwards``; ``histogram`` resized its outs silently (hist before bin_edges) and cast
  into outs of another dtype;
- ``pack_padded_sequence`` read 2-d lengths as flat ones; ``nn.LSTMCell`` given one tensor as ``hx`` read its
  rows as the two states where torch refuses "lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors".

Left: ``F.pad`` in reflect/replicate mode of an input with an empty non-batch dim gives an empty result or NumPy's
ValueError where torch refuses "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other
non-zero dimensions"; window functions asked for a complex dtype refuse in their own words where torch says
'"arange_cpu" not implemented for 'ComplexFloat''; ``torch.polar`` of float and int64 words its refusal as
``torch.complex``'s; ``var``/``std`` of complex input are an ulp off torch's; FFT results can differ from
MKL's in the sign of a zero imaginary part (``0.-0.j``); lazily conjugated results (``conj()``'s ``is_conj``,
``numpy()`` and ``view_as_real`` refusals) and ``pack_padded_sequence`` with a length beyond the padded length
stay as set 15 and set 5 left them.
"""

from __future__ import annotations

import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _spectrum_of_a_tone(lib, show):
    """A noisy two-tone signal windowed by hann, its one-sided spectrum (magnitude, phase, the peak's frequency by
    rfftfreq), Parseval under each norm mode, fftshift/fftfreq of a centred spectrum, and a gradient of the peak
    magnitude back to the samples."""
    torch = lib
    torch.manual_seed(260)
    fs, n = 64.0, 64
    t = torch.arange(n) / fs
    signal = torch.sin(2 * math.pi * 5 * t) + 0.5 * torch.cos(2 * math.pi * 12 * t) + 0.1 * torch.randn(n)
    window = torch.hann_window(n)
    spec = torch.fft.rfft(signal * window)
    show(spec.shape, spec.dtype, spec.real[:4], spec.imag[:4])
    freqs = torch.fft.rfftfreq(n, d=1 / fs)
    mag = spec.abs()
    peak = mag.argmax()
    show(freqs[:5], freqs.dtype, peak, freqs[peak], mag.topk(2).indices)
    show(spec.angle()[[5, 12]], torch.angle(torch.tensor([-1.0, 0.0, 2.0])))
    for norm in (None, "backward", "ortho", "forward"):
        full = torch.fft.fft(signal, norm=norm)
        energy_time = signal.pow(2).sum()
        energy_freq = full.abs().pow(2).sum()
        back = torch.fft.ifft(full, norm=norm).real
        show(norm, round(energy_freq.item() / energy_time.item(), 4), torch.allclose(back, signal, atol=1e-5))
    show_outcome(show, lambda: torch.fft.fft(signal, norm="unitary"))
    centred = torch.fft.fftshift(torch.fft.fftfreq(8, d=0.5))
    show(centred, torch.fft.ifftshift(centred), torch.fft.fftfreq(5), torch.fft.rfftfreq(5, 0.1))
    show(torch.fft.fftfreq(4, dtype=torch.float64), torch.fft.fftfreq(4, d=2).dtype)
    x = signal.clone().requires_grad_()
    peak_mag = torch.fft.rfft(x * window, norm="ortho").abs()[5]
    peak_mag.backward()
    show(peak_mag, x.grad[:6])
    show(spec.abs().grad_fn, torch.fft.rfft(x).grad_fn.name(), torch.fft.fft(x).grad_fn.name())
    show(torch.fft.ifft(torch.fft.fft(x)).grad_fn.name(), torch.fft.irfft(torch.fft.rfft(x)).grad_fn.name())


def _fft_padding_and_errors(lib, show):
    """What ``n=`` does (zero-padding, truncation), irfft's odd lengths, 2-d and n-d transforms with ``s=`` and
    ``dim=``, and the errors a notebook runs into: a real tensor's ``.imag``, rfft of a complex input, a dim out
    of range, a zero or negative length, ``s`` and ``dim`` of different lengths."""
    torch = lib
    torch.manual_seed(261)
    x = torch.randn(6)
    show(torch.fft.fft(x, n=8).shape, torch.fft.fft(x, n=4), torch.fft.rfft(x, n=9).shape)
    half = torch.fft.rfft(x)
    show(torch.fft.irfft(half).shape, torch.fft.irfft(half, n=6), torch.fft.irfft(half, n=7).shape)
    odd = torch.randn(7)
    show(torch.allclose(torch.fft.irfft(torch.fft.rfft(odd)), odd[:6]), torch.fft.irfft(torch.fft.rfft(odd), n=7))
    img = torch.randn(2, 4, 6)
    show(torch.fft.fft2(img).shape, torch.fft.rfft2(img).shape, torch.fft.rfftn(img, dim=(0, 2)).shape)
    show(torch.fft.fftn(img, s=(3, 3)).shape, torch.fft.irfftn(torch.fft.rfftn(img), s=img.shape[-3:]).shape)
    show(torch.fft.irfft2(torch.fft.rfft2(img), s=(4, 6)), torch.fft.fft2(img, norm="ortho").abs().sum())
    show_outcome(show, lambda: x.imag)
    show_outcome(show, lambda: torch.fft.rfft(torch.fft.fft(x)))
    show_outcome(show, lambda: torch.fft.fft(x, dim=1))
    show_outcome(show, lambda: torch.fft.fft(x, n=0))
    show_outcome(show, lambda: torch.fft.fft(x, n=-2))
    show_outcome(show, lambda: torch.fft.fftn(img, s=(3, 3), dim=(0,)))
    show_outcome(show, lambda: torch.fft.fft2(x))
    show_outcome(show, lambda: torch.fft.irfft(torch.zeros(1, dtype=torch.complex64)))
    show_outcome(show, lambda: torch.fft.fft(torch.arange(4)))
    show_outcome(show, lambda: torch.fft.rfft(torch.arange(4)))
    show_outcome(show, lambda: torch.fft.fftshift(x, dim=2))
    show(torch.fft.fft(torch.arange(4)).dtype, torch.fft.fft(x.double()).dtype, torch.fft.rfft(x).dtype)
    z = torch.fft.fft(x)
    show_outcome(show, lambda: z.max())
    show_outcome(show, lambda: z < 0)
    show_outcome(show, lambda: z.float())
    show(z.real.is_contiguous(), z.real.stride(), torch.view_as_real(z).shape)


def _windows_catalogue(lib, show):
    """The window functions a user compares: periodic against symmetric, dtypes, ``torch.signal.windows`` with
    their parameters, the coherent gain and equivalent noise bandwidth of each, and what a bad length does."""
    torch = lib
    for make in (torch.hann_window, torch.hamming_window, torch.blackman_window, torch.bartlett_window):
        periodic, symmetric = make(8), make(8, periodic=False)
        show(make.__name__, periodic, symmetric[[0, -1]], periodic.dtype)
    show(torch.hann_window(5, dtype=torch.float64), torch.kaiser_window(6, True, 8.0), torch.kaiser_window(6, False))
    show(torch.hamming_window(6, True, 0.5, 0.5), torch.hann_window(1), torch.hann_window(0))
    windows = torch.signal.windows
    show(windows.gaussian(7, std=1.5), windows.exponential(7, tau=2.0), windows.cosine(6))
    show(windows.kaiser(7, beta=4.0, sym=False), windows.general_hamming(5, alpha=0.6), windows.nuttall(6))
    show(windows.general_cosine(6, a=[0.5, 0.5]), windows.bartlett(5), windows.blackman(5, sym=False))
    for name in ("hann", "hamming", "blackman", "nuttall"):
        w = getattr(windows, name)(64)
        gain = w.mean()
        enbw = 64 * w.pow(2).sum() / w.sum().pow(2)
        show(name, round(gain.item(), 5), round(enbw.item(), 4))
    show_outcome(show, lambda: torch.hann_window(-1))
    show_outcome(show, lambda: torch.hann_window(4, dtype=torch.int64))
    show_outcome(show, lambda: windows.gaussian(5, std=-1.0))
    show_outcome(show, lambda: windows.exponential(5, center=1.0))
    show_outcome(show, lambda: windows.hann(-3))
    show_outcome(show, lambda: windows.kaiser(5, beta=-1.0))
    show_outcome(show, lambda: windows.general_cosine(5, a=1.0))
    w = torch.hann_window(8, requires_grad=True)
    show(w.requires_grad, w.is_leaf, torch.blackman_window(4, dtype=torch.float16))


def _stft_round_trip(lib, show):
    """A spectrogram by stft with a hann window (centred and not, reflect and constant padding), its shape and
    frames, the inverse by istft, a magnitude loss differentiated back to the waveform, and stft's refusals."""
    torch = lib
    torch.manual_seed(262)
    wave = torch.randn(2, 200)
    window = torch.hann_window(32)
    spec = torch.stft(wave, n_fft=32, hop_length=8, window=window, return_complex=True)
    show(spec.shape, spec.dtype, spec.abs()[0, :3, :3])
    flat = torch.stft(wave[0], 32, hop_length=8, window=window, center=False, return_complex=True)
    show(flat.shape, torch.stft(wave[0], 32, 8, window=window, pad_mode="constant", return_complex=True).shape)
    two_sided = torch.stft(wave[0], 32, 8, window=window, onesided=False, return_complex=True)
    show(two_sided.shape, torch.stft(wave[0], 32, 8, window=window, normalized=True, return_complex=True)[3, 4])
    back = torch.istft(spec, n_fft=32, hop_length=8, window=window, length=200)
    show(back.shape, (back - wave).abs().max() < 1e-5)
    x = wave[0].clone().requires_grad_()
    power = torch.stft(x, 32, 8, window=window, return_complex=True).abs().pow(2)
    log_power = torch.log1p(power).mean()
    log_power.backward()
    show(log_power, x.grad[:5], power.grad_fn.name())
    show_outcome(show, lambda: torch.stft(wave, 32, 8, window=window))
    show_outcome(show, lambda: torch.stft(wave, 32, 8, window=torch.hann_window(16), return_complex=True))
    show_outcome(show, lambda: torch.stft(wave[0, :20], 32, 8, window=window, center=False, return_complex=True))
    show_outcome(show, lambda: torch.stft(wave, 32, 0, window=window, return_complex=True))
    show_outcome(show, lambda: torch.istft(spec.abs(), 32, 8, window=window))
    show_outcome(show, lambda: torch.istft(spec, 32, 8, window=torch.ones(32).index_fill(0, torch.tensor([0]), 0.0),
                                           center=False))


def _conv1d_padding_modes(lib, show):
    """A smoothing and a differencing kernel applied by conv1d with 'same'/'valid' padding (even kernels,
    dilation), nn.Conv1d with every padding_mode, F.pad's modes on a 1-d signal, the gradients, and the refusals
    ('same' with a stride, reflect padding wider than the signal)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(263)
    signal = torch.arange(10.0).sin().view(1, 1, 10)
    box = torch.full((1, 1, 3), 1 / 3)
    deriv = torch.tensor([[[-1.0, 1.0]]])
    show(F.conv1d(signal, box, padding="same"), F.conv1d(signal, box, padding="valid").shape)
    show(F.conv1d(signal, deriv, padding="same"), F.conv1d(signal, box, padding="same", dilation=2))
    show(F.conv1d(signal, torch.ones(1, 1, 4), padding="same", dilation=3))
    for mode in ("zeros", "circular", "reflect", "replicate"):
        conv = nn.Conv1d(1, 2, 5, padding=2, padding_mode=mode, bias=False)
        out = conv(signal)
        out.sum().backward()
        show(mode, conv, out[0, 0, :3], conv.weight.grad[0, 0])
    same = nn.Conv1d(1, 1, 4, padding="same", padding_mode="circular")
    show(same(signal).shape, same)
    for mode in ("constant", "reflect", "replicate", "circular"):
        show(mode, F.pad(signal, (2, 3), mode=mode)[0, 0])
    show(F.pad(signal, (1, 1), value=-1.0)[0, 0, :3], F.pad(signal, (-2, 1))[0, 0])
    x = signal.clone().requires_grad_()
    F.pad(x, (3, 3), mode="reflect").sum().backward()
    show(x.grad)
    show_outcome(show, lambda: F.conv1d(signal, box, padding="same", stride=2))
    show_outcome(show, lambda: F.pad(signal, (10, 0), mode="reflect"))
    show_outcome(show, lambda: F.pad(signal, (11, 0), mode="circular"))
    show_outcome(show, lambda: F.pad(signal[0, 0], (1, 1), mode="reflect"))
    try:  # the message prints a Python set, whose order changes between processes: show its names sorted
        nn.Conv1d(1, 1, 3, padding_mode="mirror")
    except ValueError as exc:
        show(type(exc).__name__, sorted(str(exc).split("{")[1].split("}")[0].split(", ")), str(exc).split("}")[1])
    show_outcome(show, lambda: nn.Conv1d(1, 1, 3, padding="full"))
    show_outcome(show, lambda: F.conv1d(signal, torch.ones(1, 1, 11)))
    show_outcome(show, lambda: F.conv1d(signal[0], box[0]))
    show_outcome(show, lambda: F.conv1d(signal, box, padding=(1, 1)))
    show_outcome(show, lambda: nn.Conv1d(1, 1, 3, stride=(1, 2))(signal))


def _rolling_statistics(lib, show):
    """Rolling mean and standard deviation of a price series by ``unfold`` and by cumsum differences, running
    maxima/minima with their indices (drawdown), a running log-sum-exp, diff with prepend/append for returns,
    and the gradients of the drawdown and of logcumsumexp."""
    torch = lib
    torch.manual_seed(264)
    prices = 100 + torch.randn(20).cumsum(0)
    windows = prices.unfold(0, 5, 1)
    show(windows.shape, windows.stride(), windows.mean(1)[:4], windows.std(1)[:4])
    show(prices.unfold(0, 5, 5).shape, prices.unfold(0, 4, 3)[-1], prices.unfold(0, 20, 1).shape)
    csum = torch.cat([torch.zeros(1), prices.cumsum(0)])
    rolling = (csum[5:] - csum[:-5]) / 5
    show(torch.allclose(rolling, windows.mean(1), atol=1e-4), rolling.shape)
    peak, where = prices.cummax(0)
    low, where_low = torch.cummin(prices, dim=0)
    drawdown = (prices - peak) / peak
    show(peak[:6], where[:6], where_low[-5:], drawdown.min())
    returns = prices.diff()
    show(returns.shape, torch.diff(prices, prepend=prices[:1]).shape, torch.diff(prices, n=2, append=prices[-2:])[-3:])
    show(torch.diff(prices.view(4, 5), dim=0).shape, torch.diff(prices, n=0).shape, torch.diff(prices, n=25).shape)
    scores = torch.tensor([0.5, -1.0, 2.0, float("-inf"), 1.0])
    show(torch.logcumsumexp(scores, 0), scores.exp().cumsum(0).log())
    p = prices.clone().requires_grad_()
    pk = p.cummax(0).values
    ((p - pk) / pk).min().backward()
    show(p.grad.nonzero().flatten(), pk.grad_fn.name())
    s = scores.clone().requires_grad_()
    torch.logcumsumexp(s, 0)[-1].backward()
    show(s.grad, torch.cummin(s, 0).values.grad_fn.name())
    show_outcome(show, lambda: prices.unfold(0, 21, 1))
    show_outcome(show, lambda: prices.unfold(0, 5, 0))
    show_outcome(show, lambda: torch.diff(prices, prepend=torch.zeros(2, 1)))
    show_outcome(show, lambda: torch.diff(prices, n=-1))
    show_outcome(show, lambda: torch.diff(torch.tensor(3.0)))
    show_outcome(show, lambda: prices.cummax(1))
    show_outcome(show, lambda: torch.logcumsumexp(torch.arange(4), 0))
    show_outcome(show, lambda: torch.logcumsumexp(scores, 0, out=torch.empty(5, dtype=torch.float64)))
    show_outcome(show, lambda: prices.unfold(0, -3, 1))
    show_outcome(show, lambda: prices[-1].unfold(0, 2, 1))
    show(torch.cumsum(torch.tensor([True, True, False]), 0), torch.arange(5).cummax(0).values.dtype)


def _gru_forecaster(lib, show):
    """A GRU forecaster (``batch_first``) trained a few steps with teacher forcing on windows of a sine wave, then
    rolled out autoregressively under ``no_grad``, with the shapes and states a notebook prints."""
    torch, nn = lib, lib.nn
    torch.manual_seed(265)
    t = torch.linspace(0, 8 * math.pi, 240)
    series = torch.sin(t) + 0.05 * torch.randn(240)
    inputs = series.unfold(0, 24, 8)[:, :-1].unsqueeze(-1)
    targets = series.unfold(0, 24, 8)[:, 1:].unsqueeze(-1)
    show(inputs.shape, targets.shape)

    class Forecaster(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(1, 16, num_layers=2, batch_first=True, dropout=0.0)
            self.head = nn.Linear(16, 1)

        def forward(self, x, h=None):
            out, h = self.gru(x, h)
            return self.head(out), h

    model = Forecaster()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for step in range(4):
        pred, h = model(inputs)
        loss = nn.functional.mse_loss(pred, targets)
        opt.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        show(step, round(loss.item(), 5), round(norm.item(), 4))
    show(pred.shape, h.shape, h.grad_fn.name(), pred.grad_fn.name())
    model.eval()
    with torch.no_grad():
        _, h = model(inputs[:1])
        last = inputs[:1, -1:]
        rollout = []
        for _ in range(6):
            last, h = model(last, h)
            rollout.append(last.item())
    show([round(v, 4) for v in rollout], h.requires_grad, last.shape)
    show(model.gru.weight_ih_l0.shape, model.gru.weight_hh_l1.shape, model.gru)
    show_outcome(show, lambda: model.gru(inputs[0]))
    show_outcome(show, lambda: model.gru(inputs, torch.zeros(2, 16)))
    show_outcome(show, lambda: model.gru(inputs.squeeze(-1)))
    show_outcome(show, lambda: model.gru(inputs.double()))


def _lstm_packed_sequences(lib, show):
    """Variable-length series through an LSTM with pack_padded_sequence (sorted and not), the last valid output
    per series from h_n, pad_packed_sequence's total_length, a masked loss, and the packing refusals."""
    torch, nn = lib, lib.nn
    rnn_utils = nn.utils.rnn
    torch.manual_seed(266)
    lengths = torch.tensor([5, 3, 6, 2])
    batch = torch.zeros(4, 6, 2)
    for i, n in enumerate(lengths.tolist()):
        batch[i, :n] = torch.randn(n, 2)
    lstm = nn.LSTM(2, 4, batch_first=True)
    packed = rnn_utils.pack_padded_sequence(batch, lengths, batch_first=True, enforce_sorted=False)
    show(type(packed).__name__, packed.data.shape, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
    out, (h, c) = lstm(packed)
    padded, out_lengths = rnn_utils.pad_packed_sequence(out, batch_first=True, total_length=7)
    show(padded.shape, out_lengths, h.shape, c.shape)
    last = padded[torch.arange(4), lengths - 1]
    show(torch.allclose(last, h[0], atol=1e-6), padded[3, 2:].abs().sum())
    mask = torch.arange(7) < lengths.unsqueeze(1)
    loss = (padded.pow(2).sum(-1) * mask).sum() / mask.sum()
    loss.backward()
    show(loss, lstm.weight_hh_l0.grad.abs().sum(), lstm.bias_ih_l0.grad[:4])
    sorted_lengths, order = lengths.sort(descending=True)
    packed_sorted = rnn_utils.pack_padded_sequence(batch[order], sorted_lengths, batch_first=True)
    show(packed_sorted.sorted_indices, packed_sorted.batch_sizes)
    seqs = [torch.ones(n, 2) * n for n in (3, 1, 2)]
    padded_seqs = rnn_utils.pad_sequence(seqs, batch_first=True, padding_value=-1.0)
    show(padded_seqs[:, :, 0], rnn_utils.pack_sequence(seqs, enforce_sorted=False).batch_sizes)
    show_outcome(show, lambda: rnn_utils.pack_padded_sequence(batch, lengths, batch_first=True))
    show_outcome(show, lambda: rnn_utils.pack_padded_sequence(batch, torch.tensor([5, 3, 0, 2]), batch_first=True,
                                                              enforce_sorted=False))
    show_outcome(show, lambda: rnn_utils.pack_padded_sequence(batch, [6, 5], batch_first=True))
    show_outcome(show, lambda: rnn_utils.pad_packed_sequence(out, batch_first=True, total_length=3))
    show_outcome(show, lambda: rnn_utils.pack_sequence(seqs))
    show_outcome(show, lambda: rnn_utils.pack_padded_sequence(batch, lengths.view(4, 1), batch_first=True))
    cell = nn.LSTMCell(2, 4)
    h_c = (torch.zeros(4, 4), torch.zeros(4, 4))
    for step in range(3):
        h_c = cell(batch[:, step], h_c)
    show(h_c[0].shape, h_c[1].grad_fn.name())
    show_outcome(show, lambda: cell(batch[:, 0], torch.zeros(4, 4)))


def _gappy_series(lib, show):
    """A sensor series with gaps (NaN): nanmean/nansum/nanmedian, quantile and nanquantile with each
    interpolation, nan_to_num with its defaults and overrides, linear interpolation of the gaps by searchsorted,
    a forward fill by cummax of indices, and the quantile refusals."""
    torch = lib
    torch.manual_seed(267)
    series = torch.randn(12)
    series[[2, 3, 7]] = float("nan")
    show(series.nanmean(), series.nansum(), series.nanmedian(), series.mean(), series.isnan().sum())
    grid = series.view(3, 4)
    show(grid.nanmean(1), grid.nanmean(0, keepdim=True).shape, torch.nanmean(torch.full((3,), float("nan"))))
    q = torch.tensor([0.1, 0.5, 0.9])
    for how in ("linear", "lower", "higher", "midpoint", "nearest"):
        show(how, torch.nanquantile(series, q, interpolation=how), torch.quantile(series, 0.5, interpolation=how))
    show(torch.nanquantile(grid, 0.5, dim=1), torch.quantile(grid, q, dim=0, keepdim=True).shape)
    wild = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.5])
    show(torch.nan_to_num(wild), torch.nan_to_num(wild, nan=0.0, posinf=9.0, neginf=-9.0), wild.half().nan_to_num())
    idx = torch.arange(12.0)
    ok = ~series.isnan()
    known_x, known_y = idx[ok], series[ok]
    right = torch.searchsorted(known_x, idx).clamp(1, len(known_x) - 1)
    left = right - 1
    frac = (idx - known_x[left]) / (known_x[right] - known_x[left])
    filled = known_y[left] + frac * (known_y[right] - known_y[left])
    show(filled[[1, 2, 3, 4, 7]], torch.where(ok, series, filled).isnan().any())
    positions = torch.where(ok, torch.arange(12), 0).cummax(0).values
    show(positions, series[positions][:5])
    x = series.nan_to_num(0.0).requires_grad_()
    torch.quantile(x, 0.75).backward()
    show(x.grad, torch.nanmean(x).grad_fn.name())
    show_outcome(show, lambda: torch.quantile(series, 1.5))
    show_outcome(show, lambda: torch.quantile(series, torch.tensor([0.5], dtype=torch.float64)))
    show_outcome(show, lambda: torch.quantile(series.long(), 0.5))
    show_outcome(show, lambda: torch.quantile(series, 0.5, interpolation="cubic"))
    show_outcome(show, lambda: torch.quantile(series, torch.ones(2, 2) / 2))
    show_outcome(show, lambda: torch.nanmean(torch.arange(4)))
    show_outcome(show, lambda: torch.quantile(torch.empty(0), 0.5))
    buffer = torch.empty(4)
    show(torch.quantile(series.nan_to_num(), q, out=buffer), buffer.shape)
    show_outcome(show, lambda: torch.nanquantile(series, q, out=torch.empty(3, dtype=torch.float64)))


def _integrals_and_histograms(lib, show):
    """Area under a sampled curve by trapezoid (uniform dx, uneven x, along a dim), the running integral by
    cumulative_trapezoid with its gradient, histc and histogram (bins as a count and as edges, range, weights,
    density), and their refusals."""
    torch = lib
    torch.manual_seed(268)
    x = torch.linspace(0, math.pi, 9)
    y = torch.sin(x)
    show(torch.trapezoid(y, x), torch.trapezoid(y, dx=x[1] - x[0]), torch.trapezoid(y, dx=0.5))
    uneven = torch.tensor([0.0, 0.1, 0.5, 1.5, 3.0])
    show(torch.trapezoid(uneven ** 2, uneven), torch.cumulative_trapezoid(uneven ** 2, uneven))
    table = torch.randn(3, 5)
    show(torch.trapezoid(table), torch.trapezoid(table, dim=0), torch.cumulative_trapezoid(table, dx=2.0, dim=1))
    show(torch.trapezoid(table, uneven), torch.trapz(y, x))
    w = torch.randn(5, requires_grad=True)
    area = torch.cumulative_trapezoid(w, uneven)[-1]
    area.backward()
    show(area.grad_fn.name(), w.grad)
    data = torch.randn(200)
    show(torch.histc(data, bins=5), torch.histc(data, bins=4, min=-1, max=1), torch.histc(torch.ones(3), bins=3))
    hist, edges = torch.histogram(data, bins=5)
    show(hist, edges)
    hist, edges = torch.histogram(data, bins=torch.tensor([-3.0, -1.0, 0.0, 1.0, 3.0]), density=True)
    show(hist, (hist * edges.diff()).sum())
    weighted = torch.histogram(data[:10], bins=3, range=(-2.0, 2.0), weight=torch.arange(10.0))
    show(weighted.hist, weighted.bin_edges, type(weighted).__name__)
    show_outcome(show, lambda: torch.trapezoid(y, x[:5]))
    show_outcome(show, lambda: torch.trapezoid(y, x, dx=0.1))
    show_outcome(show, lambda: torch.histc(data, bins=4, min=2, max=1))
    show_outcome(show, lambda: torch.histc(data, bins=0))
    show_outcome(show, lambda: torch.histc(data.long(), bins=3))
    show_outcome(show, lambda: torch.histogram(data.long(), bins=3))
    show_outcome(show, lambda: torch.histogram(data, bins=torch.tensor([1.0, 0.0])))
    show_outcome(show, lambda: torch.histogram(data, bins=3, range=(1.0, 0.0)))
    show_outcome(show, lambda: torch.cumulative_trapezoid(y, dim=1))
    hist_out, edges_out = torch.empty(10), torch.empty(2)
    torch.histogram(data, bins=4, out=(hist_out, edges_out))
    show(hist_out, edges_out)
    show_outcome(show, lambda: torch.histogram(data, bins=4, out=(torch.empty(4, dtype=torch.float64), edges_out)))


def _learned_fft_filter(lib, show):
    """A frequency-domain filter learned by gradient descent: a real gain per rfft bin, the output by irfft,
    an SGD loop that recovers a low-pass response, complex weights through view_as_complex, and polar
    coordinates with their gradients."""
    torch = lib
    torch.manual_seed(269)
    n = 32
    clean = torch.sin(torch.arange(n) * 2 * math.pi * 2 / n).expand(8, n)
    noisy = clean + 0.3 * torch.randn(8, n)
    gain = torch.zeros(n // 2 + 1, requires_grad=True)
    opt = torch.optim.SGD([gain], lr=0.5)
    for step in range(5):
        filtered = torch.fft.irfft(torch.fft.rfft(noisy) * torch.sigmoid(gain), n=n)
        loss = (filtered - clean).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, round(loss.item(), 6))
    show(torch.sigmoid(gain)[:5], gain.grad[:5], filtered.grad_fn.name())
    pair = torch.randn(n // 2 + 1, 2, requires_grad=True)
    h = torch.view_as_complex(pair)
    out = torch.fft.irfft(torch.fft.rfft(noisy[0]) * h, n=n)
    out.pow(2).sum().backward()
    show(h.dtype, h.grad_fn.name(), pair.grad[:3])
    mag = torch.tensor([1.0, 2.0, 0.5], requires_grad=True)
    phase = torch.tensor([0.0, math.pi / 2, -math.pi / 4], requires_grad=True)
    z = torch.polar(mag, phase)
    z.real.sum().backward()
    show(z, mag.grad, phase.grad, z.grad_fn.name())
    zz = torch.complex(torch.tensor([3.0, 0.0]), torch.tensor([4.0, 0.0])).requires_grad_()
    zz.abs().sum().backward()
    show(zz.grad, torch.sgn(torch.tensor([3 + 4j, 0j])))
    show_outcome(show, lambda: torch.view_as_complex(torch.randn(3, 3)))
    show_outcome(show, lambda: torch.view_as_complex(torch.randn(2, 4)[:, ::2].unsqueeze(-1).expand(2, 2, 2)))
    show_outcome(show, lambda: torch.polar(torch.ones(2, dtype=torch.float64), torch.zeros(2)))
    show_outcome(show, lambda: torch.complex(torch.ones(2), torch.ones(2, dtype=torch.float64)))
    show_outcome(show, lambda: torch.complex(torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.int64)))
    show_outcome(show, lambda: torch.fft.rfft(noisy).backward())


def _spectral_features(lib, show):
    """Features for a time-series classifier: band powers from a 2-d FFT of a batch, the dominant period by
    rfft over a chosen dim, autocorrelation by the Wiener-Khinchin theorem with zero padding, spectral centroid
    and flatness, and an ``hfft``/``ihfft`` pair."""
    torch = lib
    torch.manual_seed(270)
    batch = torch.randn(3, 4, 16)
    spec2 = torch.fft.fft2(batch)
    show(spec2.shape, spec2[0, 0, :3], torch.fft.ifft2(spec2).real.sub(batch).abs().max() < 1e-5)
    along = torch.fft.rfft(batch, dim=1)
    show(along.shape, along.abs().argmax(dim=1)[0])
    x = batch[:, 0]
    centred = x - x.mean(-1, keepdim=True)
    f = torch.fft.rfft(centred, n=32)
    acf = torch.fft.irfft(f * f.conj(), n=32)[:, :16]
    acf = acf / acf[:, :1]
    show(acf[:, :4], acf.shape)
    power = torch.fft.rfft(x).abs().pow(2)
    freqs = torch.fft.rfftfreq(16)
    centroid = (power * freqs).sum(-1) / power.sum(-1)
    flatness = power.log().mean(-1).exp() / power.mean(-1)
    show(centroid, flatness)
    show(torch.fft.rfftn(batch, s=(4, 8), dim=(-2, -1)).shape, torch.fft.ifftn(spec2, dim=(-1,)).shape)
    herm = torch.fft.ihfft(x[0])
    show(herm.shape, torch.fft.hfft(herm, n=16).sub(x[0]).abs().max() < 1e-5)
    g = batch.clone().requires_grad_()
    torch.fft.fft2(g, norm="forward").abs().sum().backward()
    show(g.grad[0, 0, :4])
    y = x.clone().requires_grad_()
    acf_y = torch.fft.irfft(torch.fft.rfft(y, n=32).abs().pow(2), n=32)
    acf_y[:, 1].sum().backward()
    show(y.grad[0, :5], acf_y.grad_fn.name())
    show(torch.fft.fftshift(batch[0], dim=(0, 1))[0, :4], torch.fft.ifftshift(torch.arange(7)))


PROGRAMS = [
    _spectrum_of_a_tone,
    _fft_padding_and_errors,
    _windows_catalogue,
    _stft_round_trip,
    _conv1d_padding_modes,
    _rolling_statistics,
    _gru_forecaster,
    _lstm_packed_sequences,
    _gappy_series,
    _integrals_and_histograms,
    _learned_fft_filter,
    _spectral_features,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-4, atol=1e-5)
