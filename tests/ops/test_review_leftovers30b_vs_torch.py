"""Review leftovers (thirtieth round, b), against torch: histogramdd's weights added per thread in the input's
dtype and its density divided as ATen's CPU template does (torch.histogram's density too); half-precision threads'
weighted histograms added in float."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from _lib import bits_or_error, on_threads

import tracegrad

_RNG = np.random.default_rng(30)
POINTS = (_RNG.standard_normal((1500, 3)) * 2).tolist()
WEIGHTS = (_RNG.random(1500) * 5).tolist()
EDGES = [[-4.0, -1.0, 0.0, 0.5, 4.0], [-3.0, 0.0, 3.0], [-2.0, -1.5, 1.0, 5.0]]


def _histogramdd(dtype: str, dims: int, weighted: bool, density: bool, given_edges: bool):
    def program(L):
        dt = getattr(L, dtype)
        x = L.tensor([p[:dims] for p in POINTS], dtype=dt)
        w = L.tensor(WEIGHTS, dtype=dt) if weighted else None
        bins = [L.tensor(e, dtype=dt) for e in EDGES[:dims]] if given_edges else 7
        hist, edges = L.histogramdd(x, bins=bins, weight=w, density=density)
        return [hist, *edges]
    return program


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize(("weighted", "density"), [(True, False), (False, True), (True, True)])
def test_histogramdd_bits_as_torch(threads, dtype, dims, weighted, density):
    program = _histogramdd(dtype, dims, weighted, density, given_edges=False)
    with on_threads(threads):
        assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("density", [False, True])
def test_histogramdd_of_given_edges_as_torch(threads, dtype, density):
    program = _histogramdd(dtype, 3, True, density, given_edges=True)
    with on_threads(threads):
        assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("weighted", [False, True])
def test_histogram_density_as_torch(threads, dtype, weighted):
    def program(L):
        dt = getattr(L, dtype)
        w = L.tensor(WEIGHTS, dtype=dt) if weighted else None
        return list(L.histogram(L.tensor([p[0] for p in POINTS], dtype=dt), bins=100, weight=w, density=True))

    with on_threads(threads):
        assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)


@pytest.mark.parametrize(("dtype", "bins"), [("float16", 4), ("bfloat16", 3)])
def test_half_precision_weighted_histogram_threads_added_in_float(dtype, bins):
    def program(L):
        dt = getattr(L, dtype)
        x = L.tensor([p[0] for p in POINTS], dtype=dt)
        return list(L.histogram(x, bins=bins, range=(-4.0, 4.0), weight=L.tensor(WEIGHTS, dtype=dt)))

    with on_threads(3):
        assert bits_or_error(program, tracegrad) == bits_or_error(program, torch)
