"""``torch.fft`` (ops/fft.py). Float runs give the C2C and C2R transforms real input, which PyTorch promotes to
complex (a ToCopyBackward0 in the graph); complex runs (every transform but the R2C ones, rfft* and ihfft*, which
refuse complex input) take complex input directly (C2C, and C2R on a complex spectrum). Complex outputs are
compared, differentiated and gradchecked through ``view_as_real``; tests/ops/test_fft_vs_torch.py covers more
(Hermitian spectra, norms, out= shapes)."""

from __future__ import annotations

from .core import COMPLEX, FLOATS_INT, Maker, OpInfo, SampleInput

_TOL = {"float32": (1e-4, 1e-4)}


def _as_real(lib, out):
    """Complex outputs as (..., 2) real tensors (torch's ifft/ihfft outputs are lazily conjugated first)."""
    return lib.view_as_real(out.resolve_conj()) if out.is_complex() else out


def _one_dim_samples(m: Maker):
    yield SampleInput("default", (m(3, 5),))
    yield SampleInput("pad_ortho", (m(4, 3),), {"n": 6, "dim": 0, "norm": "ortho"})
    yield SampleInput("trim_forward_noncontig", (m(4, 5, layout="T"),), {"n": 3, "norm": "forward"})


def _n_dim_samples(m: Maker):
    yield SampleInput("default", (m(3, 4),))
    yield SampleInput("s_pad_trim_ortho", (m(2, 3, 4),), {"s": (4, 3), "norm": "ortho"})
    yield SampleInput("dims_forward_noncontig", (m(3, 4, layout="T"),), {"dim": (1, 0), "norm": "forward"})


def _two_dim_samples(m: Maker):
    yield SampleInput("default", (m(2, 3, 4),))
    yield SampleInput("s_ortho_noncontig", (m(4, 3, layout="T"),), {"s": (2, 5), "norm": "ortho"})


def _shift_samples(m: Maker):
    yield SampleInput("all_dims", (m(3, 4),))
    yield SampleInput("one_dim_noncontig", (m(5, 3, layout="T"),), {"dim": 1})
    yield SampleInput("dims", (m(2, 3, 5),), {"dim": (0, -1)})


def _entry(name: str, samples, **kw) -> OpInfo:
    real_input_only = name.startswith(("rfft", "ihfft"))
    return OpInfo(f"fft.{name}", samples, dtypes=FLOATS_INT + (() if real_input_only else COMPLEX), supports_out=True,
                  tol=_TOL, output_process=_as_real, **kw)


OPS: list[OpInfo] = [
    *(_entry(n, _one_dim_samples) for n in ("fft", "rfft", "irfft", "hfft")),
    *(_entry(n, _one_dim_samples) for n in ("ifft", "ihfft")),
    *(_entry(n, _n_dim_samples) for n in ("fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn")),
    *(_entry(n, _two_dim_samples) for n in ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2")),
    *(OpInfo(f"fft.{n}", _shift_samples, dtypes=FLOATS_INT + ("complex128",)) for n in ("fftshift", "ifftshift")),
]
