"""torch.fft's results have the strides torch gives them.

PyTorch's CPU transforms (MKL's ``_exec_fft``) return a dense result whose dims are laid out, outermost to
innermost, as: the dims not transformed, by decreasing stride of the primitive's input, then the transformed dims
in the order the primitive runs them (``_fft_c2c`` sorts them by decreasing input stride, ``_fft_r2c`` all but
the last). The public functions pad (a fresh tensor), trim (a view) and promote (``.to()``) the input first,
``_fft_c2r`` over several dims runs a C2C over all but the last dim first, and ``hfft``/``ihfft`` conjugate
around the primitives. Compared here on random layouts (permuted, with gaps, sliced, channels-last, dims of size 1
with any stride), every function, with ``n``/``s`` padding and trimming, dims in any order, norms, real and complex
inputs of both precisions; the primitives themselves; ``out=``; and the gradients' strides (tensor hooks).
"""

from __future__ import annotations

import random

import pytest
from _lib import np, tg, to_numpy, torch

ONE_DIM = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
SEVERAL_DIMS = ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn",
                "ihfftn")
REAL_ONLY = frozenset({"rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn"})
_DTYPES = {(False, "float32"): np.float32, (False, "float64"): np.float64, (True, "float32"): np.complex64,
           (True, "float64"): np.complex128}


def _random_layout(rnd: random.Random, max_ndim: int = 4) -> tuple[tuple, tuple, int]:
    """(shape, element strides, storage size): dense in a random dim order, some dims stepping over gaps, dims of
    size 1 with any stride, sometimes channels-last."""
    ndim = rnd.randint(1, max_ndim)
    shape = tuple(rnd.choice((1, 2, 3, 4, 5, 6)) for _ in range(ndim))
    order = list(range(ndim))
    if rnd.random() < 0.6:
        rnd.shuffle(order)
    strides = [0] * ndim
    step = 1
    for d in reversed(order):
        gap = rnd.choice((1, 1, 1, 2))
        strides[d] = step * gap
        step *= shape[d] * gap
    for d, n in enumerate(shape):
        if n == 1 and rnd.random() < 0.5:
            strides[d] = rnd.choice((1, 2, 3, 7, 12))
    if ndim == 4 and rnd.random() < 0.25:  # channels-last
        _, c, h, w = shape
        strides = [h * w * c, 1, w * c, c]
    return shape, tuple(strides), 1 + sum((n - 1) * s for n, s in zip(shape, strides))


def _strided(lib, values: np.ndarray, shape: tuple, strides: tuple, requires_grad: bool = False):
    return lib.as_strided(lib.tensor(values, requires_grad=requires_grad), shape, strides)


def _values(seed: int, size: int, complex_: bool, precision: str) -> np.ndarray:
    rng = np.random.RandomState(seed)
    values = rng.standard_normal(size)
    if complex_:
        values = values + 1j * rng.standard_normal(size)
    return values.astype(_DTYPES[complex_, precision])


def _random_kwargs(rnd: random.Random, name: str, shape: tuple, pad: bool = True) -> dict | None:
    """Arguments for one call: ``dim`` (default, any, negative, several in any order), ``n``/``s`` (padding,
    trimming, -1) and ``norm``; without ``pad``, sizes that only trim."""
    ndim = len(shape)
    kwargs: dict = {}
    if rnd.random() < 0.3:
        kwargs["norm"] = rnd.choice(("forward", "backward", "ortho"))

    def size(d: int, last: bool = True) -> int:
        if pad:
            return rnd.choice((1, 2, 3, 5, 7, 8))
        # (a C2R function reads n // 2 + 1 points of its last dim)
        return rnd.randint(1, 2 * shape[d] - 1 if last and name.startswith(("irfft", "hfft")) else shape[d])

    if name in ONE_DIM:
        dim = rnd.randrange(-ndim, ndim) if rnd.random() < 0.7 else -1
        if dim != -1 or rnd.random() < 0.5:
            kwargs["dim"] = dim
        if rnd.random() < 0.5:
            kwargs["n"] = size(dim)
        return kwargs
    two = name.endswith("2")
    if two and ndim < 2:
        return None
    count = 2 if two else rnd.randint(1, ndim)
    dims = [d - ndim if rnd.random() < 0.3 else d for d in rnd.sample(range(ndim), count)]
    if two or rnd.random() < 0.7:
        kwargs["dim"] = dims
    elif rnd.random() < 0.5:
        return kwargs
    if rnd.random() < 0.5:
        given = dims if "dim" in kwargs else list(range(ndim - count, ndim))
        kwargs["s"] = [-1 if rnd.random() < 0.2 else size(d, d == given[-1]) for d in given]
    return kwargs


def _run(lib, name, values, shape, strides, kwargs):
    try:
        return getattr(lib.fft, name)(_strided(lib, values, shape, strides), **kwargs)
    except RuntimeError:  # (invalid sizes: the error tests compare these)
        return None


@pytest.mark.parametrize("name", ONE_DIM + SEVERAL_DIMS)
def test_results_laid_out_as_torch(name):
    rnd = random.Random(name)
    checked = 0
    for case in range(150):
        shape, strides, size = _random_layout(rnd)
        kwargs = _random_kwargs(rnd, name, shape)
        if kwargs is None:
            continue
        complex_ = name not in REAL_ONLY and rnd.random() < 0.6
        precision = rnd.choice(("float32", "float64"))
        values = _values(case, size, complex_, precision)
        theirs = _run(torch, name, values, shape, strides, kwargs)
        ours = _run(tg, name, values, shape, strides, kwargs)
        assert (ours is None) == (theirs is None), (shape, strides, kwargs)
        if theirs is None:
            continue
        where = (precision, "complex" if complex_ else "real", shape, strides, kwargs)
        assert ours.stride() == theirs.stride(), where
        tolerance = 1e-4 if precision == "float32" else 1e-10
        np.testing.assert_allclose(to_numpy(ours), to_numpy(theirs), rtol=tolerance, atol=tolerance, err_msg=str(where))
        checked += 1
    assert checked > 80


@pytest.mark.parametrize("kind", ("_fft_c2c", "_fft_r2c", "_fft_c2r"))
def test_primitives_laid_out_as_torch(kind):
    """``_exec_fft``'s layout itself: any input strides, any dims in any order."""
    rnd = random.Random(kind)
    for case in range(300):
        shape, strides, size = _random_layout(rnd)
        dims = rnd.sample(range(len(shape)), rnd.randint(1, len(shape)))
        values = _values(case, size, kind != "_fft_r2c", "float64")
        # (c2c: forward; r2c: onesided; c2r: the last dim's real size)
        extra = max(2 * (shape[dims[-1]] - 1), 1) if kind == "_fft_c2r" else rnd.random() < 0.5
        normalization = rnd.randint(0, 2)
        results = [getattr(lib, kind)(_strided(lib, values, shape, strides), dims, normalization, extra)
                   for lib in (tg, torch)]
        assert results[0].stride() == results[1].stride(), (shape, strides, dims, extra)
        np.testing.assert_allclose(to_numpy(results[0]), to_numpy(results[1]), rtol=1e-10, atol=1e-10)


def _same_strides(program) -> None:
    ours, theirs = ([tuple(t.stride()) for t in program(lib)] for lib in (tg, torch))
    assert ours == theirs


def test_examples():
    """Hand-picked cases of each family: a transposed result of a padded input, channels-last batches, permuted
    3-d inputs with the dims given in either order, steps, trimming views, size-1 dims, and the helpers."""
    def program(lib):
        rng = np.random.RandomState(0)
        x = lib.tensor(rng.standard_normal((4, 3)))
        z = lib.tensor(rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3)))
        cube = lib.tensor(rng.standard_normal((3, 4, 5))).permute(2, 0, 1)
        image = lib.tensor(rng.standard_normal((2, 3, 4, 5))).contiguous(memory_format=lib.channels_last)
        stepped = lib.tensor(rng.standard_normal((6, 8)))[::2, 1::2]
        ones = lib.tensor(rng.standard_normal((1, 5, 1))) + 0j
        F = lib.fft
        return [F.fft(x, n=6, dim=0), F.fft(x, dim=0), F.fft(z.t()), F.ifft(z, n=2, dim=0), F.rfft(x, dim=0),
                F.irfft(z, dim=0), F.irfft(z.t(), n=7), F.hfft(z, dim=0), F.ihfft(x, dim=0), F.ihfft(x.t()),
                F.fft2(cube), F.fft2(cube, dim=(1, 0)), F.fftn(cube, dim=(2, 0)), F.fftn(cube, s=(2, 7)),
                F.ifftn(cube.float()), F.rfft2(cube, dim=(1, 0)), F.rfftn(cube, s=(3, 3, 3)),
                F.irfft2(cube + 0j, dim=(0, 2)), F.irfftn(cube + 0j, s=(2, 6)), F.hfft2(cube + 0j, dim=(2, 0)),
                F.hfftn(cube + 0j), F.ihfft2(cube, dim=(2, 1)), F.ihfftn(cube, s=(2, 3, 4)),
                F.fft(image, dim=1), F.rfft2(image), F.fftn(image, dim=(1, 3)), F.irfftn(image + 0j, dim=(1, 2)),
                F.fft(stepped), F.rfft(stepped, dim=0), F.fft2(stepped, s=(5, 2)), F.fft(ones, dim=1),
                F.ifft(ones, dim=0), F.hfft(ones, dim=1), F.irfft(ones, n=3, dim=2), F.fftshift(cube),
                F.ifftshift(image, dim=1), F.fftfreq(5), F.rfftfreq(6)]
    _same_strides(program)


def test_out_resized_contiguous():
    """``_fft_*_out`` compute the result, then resize ``out`` (contiguous) and copy into it; an ``out`` of the
    right shape keeps its strides."""
    def program(lib):
        rng = np.random.RandomState(1)
        z = lib.tensor(rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3)))
        outs = [lib.empty(0, dtype=lib.complex128), lib.empty(3, 4, dtype=lib.complex128).t(),
                lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.complex128), lib.empty(0, dtype=lib.float64)]
        lib.fft.fft(z, dim=0, out=outs[0])
        lib.fft.fft(z, dim=1, out=outs[1])
        lib.fft.irfft(z, dim=0, out=outs[2])
        lib.fft.rfft2(z.real.t(), out=outs[3])
        lib.fft.hfftn(z.t(), out=outs[4])
        return outs
    _same_strides(program)


# Functions whose backward goes through no conj (whose copy here is laid out by NumPy: see below)
_GRADIENT_FUNCTIONS = ("fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
                       "rfftn", "irfftn")


def _gradient_strides(lib, name, values, shape, strides, kwargs, weights):
    """The strides of the gradient reaching the transform's input (a hook on a non-leaf view) and of the
    result."""
    seen: list = []
    x = _strided(lib, values, shape, strides, requires_grad=True) * 1
    x.register_hook(lambda g: seen.append(tuple(g.stride())))
    y = getattr(lib.fft, name)(x, **kwargs)
    w = lib.tensor(weights[:y.numel()].reshape(tuple(y.shape)))
    y.backward(w if y.is_complex() else w.real)
    return seen


@pytest.mark.parametrize("name", _GRADIENT_FUNCTIONS)
def test_gradients_laid_out_as_torch(name):
    """The backward formulas' results: C2C of the gradient, R2C's zero-filled half (``new_zeros``: contiguous),
    C2R's doubled bins (an in-place ``mul_``: the R2C's layout), the primitives' own layouts, trimming views."""
    rnd = random.Random(name)
    weights = np.random.RandomState(2).standard_normal(4096) * (1 + 0.5j)
    checked = 0
    for case in range(60):
        shape, strides, size = _random_layout(rnd)
        kwargs = _random_kwargs(rnd, name, shape, pad=False)
        if kwargs is None:
            continue
        complex_ = name not in REAL_ONLY and (name == "ifft" or rnd.random() < 0.6)  # (ifft of real: conj)
        values = _values(case, size, complex_, "float64")
        try:
            theirs = _gradient_strides(torch, name, values, shape, strides, kwargs, weights)
        except RuntimeError:
            continue
        ours = _gradient_strides(tg, name, values, shape, strides, kwargs, weights)
        assert ours == theirs, (shape, strides, kwargs)
        checked += 1
    assert checked > 25


def _gradient_case(name, shape, strides, kwargs, complex_=True):
    weights = np.random.RandomState(2).standard_normal(4096) * (1 + 0.5j)
    values = _values(0, 1 + sum((n - 1) * s for n, s in zip(shape, strides)), complex_, "float64")
    assert (_gradient_strides(tg, name, values, shape, strides, kwargs, weights)
            == _gradient_strides(torch, name, values, shape, strides, kwargs, weights))


# Gradients through the operators the transforms are made of: torch's ``conj`` is a view (its backward too)
# and ``conj_physical`` writes into ``empty_like(self)``, laid out as the input (they differ from TensorIterator's
# layout in the strides of dims of size 1); ``constant_pad_nd`` with no positive pad (the backward of padding)
# clones the narrowed gradient (``preserve_format``).
def test_hfft_gradient_through_conj():
    _gradient_case("hfft", (4, 5, 1), (5, 1, 12), {"dim": -2})


def test_ihfft2_gradient_through_conj_physical():
    _gradient_case("ihfft2", (1, 1, 5), (5, 1, 1), {"norm": "ortho", "dim": [1, -3]}, complex_=False)


def test_padded_fft_gradient():
    _gradient_case("ifftn", (3, 4), (4, 1), {"dim": [0], "s": [5]})
