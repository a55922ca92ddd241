"""torch.fft against torch: complex inputs (the OpInfo database makes real ones only), graphs and saved values of
the FFT primitives, forward AD, out=, dtype promotion, fftfreq and error messages."""

from __future__ import annotations

import warnings

import pytest
from _lib import np, raised, recorded_graph, tg, to_numpy, torch

_RNG = np.random.RandomState(0)
_X = _RNG.standard_normal((4, 3))
_XC = _RNG.standard_normal((4, 3)) + 1j * _RNG.standard_normal((4, 3))
_W = _RNG.standard_normal((8, 8)) + 1j * _RNG.standard_normal((8, 8))  # cropped to each output's shape


def assert_close(actual, expected, rtol: float, atol: float, check_dtype: bool = True) -> None:
    """_lib.assert_close compares real parts only; this keeps the imaginary parts."""
    a, e = to_numpy(actual.resolve_conj()), to_numpy(expected.resolve_conj())
    assert a.shape == e.shape and (not check_dtype or a.dtype == e.dtype), (a.shape, a.dtype, e.shape, e.dtype)
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def _weighted(lib, out):
    """A real loss reading both parts of a complex output (its own value for a real one)."""
    w = lib.tensor(_W[tuple(slice(0, n) for n in out.shape)])
    return (out * w).real.sum() if out.is_complex() else (out * w.real).sum()


# (function, input, kwargs): every transform on complex input, the n/s/dim/norm forms, and a real input where
# it takes a different path (R2C, ToCopy to complex)
CASES = [
    ("fft", _XC, {}), ("fft", _XC, {"n": 2}), ("fft", _XC, {"n": 6, "dim": 0, "norm": "ortho"}),
    ("fft", _X, {"n": 5}), ("ifft", _XC, {"norm": "forward"}), ("ifft", _X, {"dim": 0}),
    ("rfft", _X, {"n": 5}), ("ihfft", _X, {"norm": "ortho"}),
    ("irfft", _XC, {}), ("irfft", _XC, {"n": 7, "dim": 0}), ("irfft", _XC, {"n": 2, "norm": "ortho"}),
    ("hfft", _XC, {}), ("hfft", _XC, {"n": 5, "norm": "forward"}), ("hfft", _X, {}),
    ("fft2", _XC, {}), ("fft2", _X, {"s": (5, 2)}), ("ifft2", _XC, {"norm": "ortho"}),
    ("fftn", _XC, {"s": (5, 2)}), ("fftn", _XC, {"dim": 0}), ("ifftn", _XC, {"s": (-1, 4), "norm": "forward"}),
    ("rfftn", _X, {}), ("rfft2", _X, {"s": (3, 6), "norm": "ortho"}),
    ("irfftn", _XC, {}), ("irfftn", _XC, {"s": (3, 5), "norm": "ortho"}), ("irfft2", _XC, {"dim": (1, 0)}),
    ("hfftn", _XC, {}), ("hfftn", _XC, {"dim": (1,)}), ("hfft2", _XC, {"s": (5, 4), "norm": "forward"}),
    ("ihfftn", _X, {}), ("ihfftn", _X, {"dim": 0}), ("ihfft2", _X, {"norm": "forward"}),
    ("fftshift", _XC, {}), ("ifftshift", _X, {"dim": 0}),
]
IDS = [f"{name}-{'c' if v.dtype.kind == 'c' else 'r'}-{kw}" for name, v, kw in CASES]


def _run(lib, name, value, kwargs, requires_grad=True):
    x = lib.tensor(value, requires_grad=requires_grad)
    return x, getattr(lib.fft, name)(x, **kwargs)


@pytest.mark.parametrize("name,value,kwargs", CASES, ids=IDS)
def test_value_grad_graph_vs_torch(name, value, kwargs):
    results = []
    for lib in (tg, torch):
        x, out = _run(lib, name, value, kwargs)
        graph = recorded_graph([out])
        (grad,) = lib.autograd.grad(_weighted(lib, out), x)
        results.append((out.detach().resolve_conj(), grad, str(out.dtype).split(".")[-1], graph))
    (ours, g_ours, dt_ours, graph_ours), (theirs, g_theirs, dt_theirs, graph_theirs) = results
    assert dt_ours == dt_theirs
    assert_close(ours, theirs, rtol=1e-10, atol=1e-12, check_dtype=True)
    assert_close(g_ours, g_theirs, rtol=1e-10, atol=1e-12, check_dtype=True)
    assert graph_ours == graph_theirs


def _saved(fn) -> dict:
    return {a: (tuple(getattr(fn, a).shape) if hasattr(getattr(fn, a), "shape") else getattr(fn, a))
            for a in dir(fn) if a.startswith("_saved_")}


@pytest.mark.parametrize("name,kwargs", [("rfft", {"n": 5}), ("fft", {}), ("ifft", {"norm": "ortho"}),
                                         ("irfft", {"n": 7}), ("hfftn", {"norm": "forward"}),
                                         ("ihfftn", {}), ("fftn", {"s": (5, 2)})])
def test_saved_values_vs_torch(name, kwargs):
    """Every node's saved values (dim, normalization, forward/onesided, the padded self) are torch's."""
    def nodes(lib):
        value = _X if name in ("rfft", "ihfftn") else _XC
        _, out = _run(lib, name, value, kwargs)
        found, stack = [], [out.grad_fn]
        while stack:
            fn = stack.pop()
            if fn is not None:
                found.append((fn.name(), _saved(fn)))
                stack.extend(nxt for nxt, _ in fn.next_functions)
        return found
    assert nodes(tg) == nodes(torch)


@pytest.mark.parametrize("name,value,kwargs", [c for c in CASES if c[0] not in ("fftshift", "ifftshift")][::2],
                         ids=IDS[:-2:2])
def test_forward_ad_vs_torch(name, value, kwargs):
    tangent = _RNG.standard_normal(value.shape) + (1j * _RNG.standard_normal(value.shape) if value.dtype.kind == "c"
                                                   else 0)
    tangents = []
    for lib in (tg, torch):
        fwd = lib.autograd.forward_ad
        with fwd.dual_level():
            out = getattr(lib.fft, name)(fwd.make_dual(lib.tensor(value), lib.tensor(tangent)), **kwargs)
            tangents.append(fwd.unpack_dual(out).tangent.resolve_conj())
    assert_close(tangents[0], tangents[1], rtol=1e-10, atol=1e-12, check_dtype=True)


def test_gradgradcheck_complex_inputs():
    x = tg.tensor(_XC, requires_grad=True)
    for fn in (lambda t: tg.fft.hfftn(t, s=(3, 5)), lambda t: tg.fft.fft(t, n=5, norm="ortho"),
               lambda t: tg.fft.irfft(t, dim=0)):
        assert tg.autograd.gradcheck(fn, (x,), fast_mode=True)
        assert tg.autograd.gradgradcheck(fn, (x,), fast_mode=True)


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32", "float64", "complex64"])
@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fftn", "ihfft2", "hfft"])
def test_dtype_promotion_vs_torch(name, dtype):
    def program(lib):
        x = lib.tensor(np.arange(6).reshape(2, 3) % 3 == 1 if dtype == "bool" else _X.astype(dtype) if dtype != "complex64"
                       else _XC.astype(dtype))
        return getattr(lib.fft, name)(x)
    got, want = raised(tg, program), raised(torch, program)
    assert got == want
    if want is None:
        assert_close(program(tg), program(torch).resolve_conj(), rtol=1e-5, atol=1e-5, check_dtype=True)


ERRORS = [
    lambda lib, x, xc: lib.fft.fft(x.half()),
    lambda lib, x, xc: lib.fft.rfft(x.half()),
    lambda lib, x, xc: lib.fft.fft(x, norm="bad"),
    lambda lib, x, xc: lib.fft.fft(x, dim=2),
    lambda lib, x, xc: lib.fft.fftn(x, dim=(0, 5)),
    lambda lib, x, xc: lib.fft.fftn(x, dim=(0, -2)),
    lambda lib, x, xc: lib.fft.fft(x, n=0),
    lambda lib, x, xc: lib.fft.fft(xc, n=-1),
    lambda lib, x, xc: lib.fft.irfft(xc, n=0),
    lambda lib, x, xc: lib.fft.irfft(xc[:, :1]),
    lambda lib, x, xc: lib.fft.rfft(xc),
    lambda lib, x, xc: lib.fft.ihfft(xc),
    lambda lib, x, xc: lib.fft.rfftn(xc),
    lambda lib, x, xc: lib.fft.ihfft2(xc),
    lambda lib, x, xc: lib.fft.fftn(x, s=(1, 2, 3)),
    lambda lib, x, xc: lib.fft.fftn(x, s=(1, 2), dim=(0,)),
    lambda lib, x, xc: lib.fft.fftn(x, s=(0, 2)),
    lambda lib, x, xc: lib.fft.fftn(x, s=(-2, 2)),
    lambda lib, x, xc: lib.fft.irfftn(xc, dim=()),
    lambda lib, x, xc: lib.fft.rfftn(x, dim=()),
    lambda lib, x, xc: lib.fft.hfftn(xc, dim=()),
    lambda lib, x, xc: lib.fft.ihfftn(x, dim=()),
    lambda lib, x, xc: lib.fft.fft(lib.tensor(1.0)),
    lambda lib, x, xc: lib.fft.fft2(lib.tensor([1.0, 2.0])),
    lambda lib, x, xc: lib.fft.fft(x, out=lib.empty(0)),
    lambda lib, x, xc: lib.fft.irfft(xc, out=lib.empty(0, dtype=lib.complex128)),
    lambda lib, x, xc: lib.fft.fft(x.requires_grad_(), out=lib.empty(0, dtype=lib.complex128)),
    lambda lib, x, xc: lib.fft.fft2(x.requires_grad_(), out=lib.empty(0, dtype=lib.complex128)),
    lambda lib, x, xc: lib.fft.hfftn(xc.requires_grad_(), out=lib.empty(0)),
    lambda lib, x, xc: lib.fft.fftfreq(5, dtype=lib.int64),
    lambda lib, x, xc: lib.fft.fftfreq(-1),
    lambda lib, x, xc: lib.fft.rfftfreq(4, dtype=lib.complex64),
    lambda lib, x, xc: lib.fft.fftshift(x, dim=3),
    lambda lib, x, xc: lib.fft.fftshift(lib.tensor(1.0)),
]


@pytest.mark.parametrize("index", range(len(ERRORS)))
def test_errors_vs_torch(index):
    def program(lib):
        ERRORS[index](lib, lib.tensor(_X), lib.tensor(_XC))
    got = raised(tg, program)
    assert got is not None and got == raised(torch, program)


@pytest.mark.parametrize("name,value,kwargs,out_dtype", [
    ("fft", _X, {}, "complex64"), ("ifft", _XC, {"n": 5}, "complex128"), ("rfftn", _X, {}, "complex128"),
    ("irfft", _XC, {"n": 5}, "float32"), ("hfft2", _XC, {}, "float64"), ("ihfft", _X, {}, "complex128"),
    ("ihfft2", _X, {}, "complex128"), ("fftfreq", 5, {"d": 0.5}, "float64"), ("rfftfreq", 6, {}, "float32"),
])
def test_out_vs_torch(name, value, kwargs, out_dtype):
    results = []
    for lib in (tg, torch):
        out = lib.empty(0, dtype=getattr(lib, out_dtype))
        arg = value if isinstance(value, int) else lib.tensor(value)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            returned = getattr(lib.fft, name)(arg, **kwargs, out=out)
        assert returned is out
        results.append(out.resolve_conj())
    assert_close(results[0], results[1], rtol=1e-6, atol=1e-6, check_dtype=True)


@pytest.mark.parametrize("kwargs", [{}, {"d": 0.1}, {"dtype": "float64"}, {"d": 3, "requires_grad": True}])
@pytest.mark.parametrize("name,n", [("fftfreq", 5), ("fftfreq", 4), ("rfftfreq", 6), ("rfftfreq", 7),
                                    ("fftfreq", 0)])
def test_fftfreq_vs_torch(name, n, kwargs):
    def program(lib):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        return getattr(lib.fft, name)(n, **kw)
    ours, theirs = program(tg), program(torch)
    assert ours.requires_grad == theirs.requires_grad
    assert_close(ours, theirs, rtol=1e-7, atol=0, check_dtype=True)


def test_namespace_matches_torch():
    public = [n for n in torch.fft.__all__ if n != "Tensor"]
    assert all(callable(getattr(tg.fft, n)) for n in public)
    assert tg._fft_c2c is not None and tg._fft_r2c is not None and tg._fft_c2r is not None
