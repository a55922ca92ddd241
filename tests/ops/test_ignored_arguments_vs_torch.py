"""Keyword arguments tracegrad used to accept and then ignore, compared with torch: each call's observable
effect (result dtype, shape, strides, values, requires_grad, whether a generator advanced, or torch's error)
must be torch's.

- ``generator=`` of ``rand_like``/``randn_like``/``randint_like`` (the global stream was drawn instead);
- ``dtype=`` together with an ``out=`` of another dtype (torch refuses; tracegrad cast into ``out``), and the
  out= of the norms, sort/topk/max/min/median/mode/kthvalue/cummax..., which must have the results' dtypes;
- ``out=`` of ``msort`` (missing);
- ``memory_format=`` of ``Tensor.cpu``, ``cfloat``/``cdouble``, ``type``, ``resize_`` and ``resize_as_``;
- ``pin_memory=True`` (torch's CPU build refuses it) and ``device=`` of the factories that dropped them.
"""

from __future__ import annotations

import warnings

import pytest

from tests._lib import tg, torch


def _observed(lib, call):
    """What a call does: the result's dtype, shape, strides, values and requires_grad, or its error."""
    lib.manual_seed(0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call(lib)
    except Exception as exc:  # noqa: BLE001 - the error itself is what is compared
        return type(exc).__name__, str(exc)
    if isinstance(result, (tuple, list)):
        return tuple(_tensor_facts(r) for r in result)
    return _tensor_facts(result)


def _tensor_facts(t):
    return (str(t.dtype), tuple(t.shape), tuple(t.stride()), t.detach().reshape(-1).tolist(), t.requires_grad)


def _same_as_torch(call):
    assert _observed(tg, call) == _observed(torch, call)


# ---- generator= of the random *_like factories -------------------------------------------------------------

LIKE_DRAWS = {
    "rand_like": lambda lib, t, g: lib.rand_like(t, generator=g),
    "randn_like": lambda lib, t, g: lib.randn_like(t, generator=g),
    "randint_like high": lambda lib, t, g: lib.randint_like(t, 7, generator=g),
    "randint_like low high": lambda lib, t, g: lib.randint_like(t, 2, 9, dtype=lib.int32, generator=g),
    "rand_like channels_last": lambda lib, t, g: lib.rand_like(t, memory_format=lib.channels_last, generator=g),
}


def _draw_with_generator(lib, draw: str):
    """The draw from a generator seeded 5, whether the global stream was left alone, and the generator's next
    number (which shows how far the draw advanced it)."""
    lib.manual_seed(0)
    before = lib.get_rng_state()
    gen = lib.Generator().manual_seed(5)
    result = LIKE_DRAWS[draw](lib, lib.zeros(1, 2, 3, 4), gen)
    untouched = bool((lib.get_rng_state() == before).all())
    return _tensor_facts(result), untouched, lib.rand(1, generator=gen).item()


@pytest.mark.parametrize("draw", list(LIKE_DRAWS))
def test_random_like_draws_from_its_generator(draw):
    assert _draw_with_generator(tg, draw) == _draw_with_generator(torch, draw)


# ---- dtype= with out= ---------------------------------------------------------------------------------------

DTYPE_OUT_CALLS = {
    "sum": lambda lib, y, o: lib.sum(y, 0, dtype=lib.float64, out=o),
    "mean": lambda lib, y, o: lib.mean(y, 0, dtype=lib.float64, out=o),
    "prod": lambda lib, y, o: lib.prod(y, 0, dtype=lib.float64, out=o),
    "nansum": lambda lib, y, o: lib.nansum(y, 0, dtype=lib.float64, out=o),
    "nanmean": lambda lib, y, o: lib.nanmean(y, 0, dtype=lib.float64, out=o),
    "cumsum": lambda lib, y, o: lib.cumsum(y, 0, dtype=lib.float64, out=o),
    "cumprod": lambda lib, y, o: lib.cumprod(y, 0, dtype=lib.float64, out=o),
    "norm": lambda lib, y, o: lib.norm(y, dim=0, dtype=lib.float64, out=o),
    "linalg.vector_norm": lambda lib, y, o: lib.linalg.vector_norm(y, dim=0, dtype=lib.float64, out=o),
    "linalg.norm": lambda lib, y, o: lib.linalg.norm(y, dim=0, dtype=lib.float64, out=o),
    "sum float32 into double": lambda lib, y, o: lib.sum(y, 0, dtype=lib.float32, out=o),
    "sum without dtype": lambda lib, y, o: lib.sum(y, 0, out=o),
    "cumsum without dtype": lambda lib, y, o: lib.cumsum(y, 0, out=o),
}


@pytest.mark.parametrize("out_dtype", ["float32", "float64"])
@pytest.mark.parametrize("call", list(DTYPE_OUT_CALLS))
def test_dtype_and_out_of_another_dtype_as_torch(call, out_dtype):
    def run(lib):
        y = lib.arange(12.0).reshape(3, 4)  # (whole numbers: sums exact in either dtype)
        out = lib.zeros((3, 4) if call.startswith("cum") else (4,), dtype=getattr(lib, out_dtype))
        result = DTYPE_OUT_CALLS[call](lib, y, out)
        assert result is out
        return out

    _same_as_torch(run)


NORM_OUT_CALLS = {
    "linalg.vector_norm": lambda lib, y, o: lib.linalg.vector_norm(y, out=o),
    "linalg.matrix_norm": lambda lib, y, o: lib.linalg.matrix_norm(y, out=o),
    "linalg.matrix_norm nuc": lambda lib, y, o: lib.linalg.matrix_norm(y, "nuc", out=o),
    "linalg.matrix_norm dtype": lambda lib, y, o: lib.linalg.matrix_norm(y, dtype=lib.float64, out=o),
    "linalg.norm": lambda lib, y, o: lib.linalg.norm(y, out=o),
    "linalg.norm ord": lambda lib, y, o: lib.linalg.norm(y, 2, out=o),
    "norm": lambda lib, y, o: lib.norm(y, out=o),
    "norm nuc": lambda lib, y, o: lib.norm(y, "nuc", out=o),
}


@pytest.mark.parametrize("out_dtype", ["float32", "float64"])
@pytest.mark.parametrize("call", list(NORM_OUT_CALLS))
def test_norm_out_must_have_the_result_dtype(call, out_dtype):
    """The norms check ``out``'s dtype against their result's instead of casting into it."""
    # (singular values exact in either library: 2 * eye)
    _same_as_torch(lambda lib: NORM_OUT_CALLS[call](lib, lib.eye(3, 4) * 2, lib.zeros((), dtype=getattr(lib, out_dtype))))


VALUES_AND_INDICES_OUT_CALLS = {
    "sort": lambda lib, y, o: lib.sort(y, out=o),
    "sort stable": lambda lib, y, o: lib.sort(y, stable=True, out=o),
    "topk": lambda lib, y, o: lib.topk(y, 2, out=o),
    "max dim": lambda lib, y, o: lib.max(y, 0, out=o),
    "min dim": lambda lib, y, o: lib.min(y, 0, out=o),
    "cummax": lambda lib, y, o: lib.cummax(y, 0, out=o),
    "cummin": lambda lib, y, o: lib.cummin(y, 0, out=o),
    "kthvalue": lambda lib, y, o: lib.kthvalue(y, 1, 0, out=o),
    "mode": lambda lib, y, o: lib.mode(y, 0, out=o),
    "median dim": lambda lib, y, o: lib.median(y, 0, out=o),
    "nanmedian dim": lambda lib, y, o: lib.nanmedian(y, 0, out=o),
    "aminmax": lambda lib, y, o: lib.aminmax(y, out=(o[0], o[0].clone())),
    "amax": lambda lib, y, o: lib.amax(y, 0, out=o[0]),
    "amin": lambda lib, y, o: lib.amin(y, 0, out=o[0]),
    "max (full)": lambda lib, y, o: lib.max(y, out=o[0]),
    "msort": lambda lib, y, o: lib.msort(y, out=o[0]),
}


@pytest.mark.parametrize("dtypes", [("float32", "int64"), ("float64", "int64"), ("float32", "int32")])
@pytest.mark.parametrize("call", list(VALUES_AND_INDICES_OUT_CALLS))
def test_values_and_indices_out_dtypes_as_torch(call, dtypes):
    """These operators check their out= tensors' dtypes (values, and for some indices) instead of casting."""
    def run(lib):
        out = tuple(lib.empty(0, dtype=getattr(lib, d)) for d in dtypes)
        return VALUES_AND_INDICES_OUT_CALLS[call](lib, lib.arange(12.0).reshape(3, 4), out)

    _same_as_torch(run)


def test_msort_out_refuses_an_input_requiring_grad():
    _same_as_torch(lambda lib: lib.msort(lib.ones(3, 2, requires_grad=True), out=lib.empty(3, 2)))


# ---- memory_format= -----------------------------------------------------------------------------------------

FORMAT_CALLS = {
    "cpu": lambda lib, x, f: x.cpu(memory_format=f),
    "cfloat": lambda lib, x, f: x.cfloat(memory_format=f),
    "cdouble": lambda lib, x, f: x.cdouble(memory_format=f),
    "type dtype": lambda lib, x, f: x.type(lib.float64, memory_format=f),
    "type same dtype": lambda lib, x, f: x.type(lib.float32, memory_format=f),
    "type legacy name": lambda lib, x, f: x.type("torch.DoubleTensor", memory_format=f),
    "resize_ same shape": lambda lib, x, f: x.resize_(2, 3, 4, 5, memory_format=f),
    "resize_ smaller": lambda lib, x, f: x.resize_(1, 3, 4, 5, memory_format=f),
    "resize_ larger": lambda lib, x, f: _kept_memory(x.resize_(2, 3, 4, 6, memory_format=f)),
    "resize_ to 1-d": lambda lib, x, f: x.resize_(120, memory_format=f),
    "resize_as_": lambda lib, x, f: x.resize_as_(lib.empty(1, 2, 3, 4), memory_format=f),
    "resize_as_ channels-last template": lambda lib, x, f: x.resize_as_(
        lib.empty(1, 2, 3, 4, memory_format=lib.channels_last), memory_format=f),
    "torch.resize_as_": lambda lib, x, f: lib.resize_as_(x, lib.empty(2, 3, 4, 5), memory_format=f),
}
def _kept_memory(t):
    """A tensor resized larger: its strides, and the 120 elements it kept at the start of its memory (torch
    leaves the rest uninitialised)."""
    return t.new_tensor(t.stride()), t.as_strided((120,), (1,))


FORMATS = ["contiguous_format", "channels_last", "preserve_format", "channels_last_3d"]


@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("call", list(FORMAT_CALLS))
def test_memory_format_is_honoured_as_torch(call, fmt, layout):
    def run(lib):
        x = lib.arange(120.0).reshape(2, 3, 4, 5)
        if layout == "channels_last":
            x = x.contiguous(memory_format=lib.channels_last)
        return FORMAT_CALLS[call](lib, x, getattr(lib, fmt))

    _same_as_torch(run)


def test_cpu_and_type_return_self_when_nothing_changes():
    for lib in (tg, torch):
        x = lib.ones(2, 3, 4, 5)
        assert x.cpu() is x
        assert x.cpu(memory_format=lib.preserve_format) is x
        assert x.type(lib.float32) is x


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(2).cpu(bogus=1),
    lambda lib: lib.ones(2).type(lib.float64, bogus=1),
    lambda lib: lib.ones(2).type(lib.float64, **{"async": True}),
])
def test_cpu_and_type_refuse_unknown_keywords(call):
    _same_as_torch(call)


# ---- pin_memory= and device= of factories -------------------------------------------------------------------

PLACED_FACTORIES = {
    "eye": lambda lib, **k: lib.eye(3, **k),
    "arange": lambda lib, **k: lib.arange(3, **k),
    "linspace": lambda lib, **k: lib.linspace(0, 1, 3, **k),
    "logspace": lambda lib, **k: lib.logspace(0, 1, 3, **k),
    "randperm": lambda lib, **k: lib.randperm(3, **k),
    "scalar_tensor": lambda lib, **k: lib.scalar_tensor(1.0, **k),
    "empty_strided": lambda lib, **k: lib.empty_strided((2, 3), (1, 2), **k),
    "empty_permuted": lambda lib, **k: lib.empty_permuted((2, 3), (1, 0), **k),
    "new_empty_strided": lambda lib, **k: lib.ones(2).new_empty_strided((2, 3), (1, 2), **k),
    "tril_indices": lambda lib, **k: lib.tril_indices(3, 3, **k),
    "triu_indices": lambda lib, **k: lib.triu_indices(3, 3, 1, **k),
}


@pytest.mark.parametrize("keywords", [{"pin_memory": True}, {"pin_memory": False}, {"device": "cuda"},
                                      {"device": "cpu"}], ids=["pinned", "unpinned", "cuda", "cpu"])
@pytest.mark.parametrize("factory", list(PLACED_FACTORIES))
def test_factory_placement_as_torch(factory, keywords):
    """torch's CPU build refuses pinned memory and CUDA tensors; the factories checked neither."""
    def run(lib):
        result = PLACED_FACTORIES[factory](lib, **keywords)
        return result.fill_(0) if factory in UNINITIALISED else result

    _same_as_torch(run)


UNINITIALISED = {"empty_strided", "empty_permuted", "new_empty_strided"}  # (torch leaves their memory as it was)


@pytest.mark.parametrize("call", [
    lambda lib: lib.tril_indices(3, 3, requires_grad=True),
    lambda lib: lib.triu_indices(3, 4, -1, dtype=lib.int32),
])
def test_triangle_indices_keywords_as_torch(call):
    _same_as_torch(call)
