"""Fractional max pooling with fixed window placements (``_random_samples``), so both libraries pool the same
windows; the samples themselves are not differentiable."""

from __future__ import annotations

from .core import Maker, OpInfo, SampleInput

NN = "nn.functional."
_TOL = {"float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9)}


def _samples_2d(m: Maker):
    yield SampleInput("output_size", (m(2, 3, 7, 6), (2, 3)),
                      {"output_size": (4, 3), "_random_samples": m(2, 3, 2, low=0, high=1)})
    yield SampleInput("noncontig_unbatched_ratio", (m(3, 8, 9, layout="T"), 2),
                      {"output_ratio": (0.5, 0.5), "_random_samples": m(1, 3, 2, low=0, high=1)})


def _samples_3d(m: Maker):
    yield SampleInput("output_size", (m(1, 2, 5, 6, 7), 2),
                      {"output_size": (3, 3, 4), "_random_samples": m(1, 2, 3, low=0, high=1)})
    yield SampleInput("unbatched_ratio", (m(2, 6, 5, 4, layout="strided"), (2, 2, 1)),
                      {"output_ratio": (0.5, 0.6, 0.5), "_random_samples": m(1, 2, 3, low=0, high=1)})


OPS = [
    OpInfo(NN + "fractional_max_pool2d", _samples_2d, tol=_TOL, nondiff_args=frozenset({"_random_samples"}),
           domain="no ties in a window"),
    OpInfo(NN + "fractional_max_pool3d", _samples_3d, tol=_TOL, nondiff_args=frozenset({"_random_samples"}),
           domain="no ties in a window"),
]
