"""Fractional max pooling against torch: with the same window samples, the same windows, maxima, indices,
gradients (first and second order) and graphs, in float32 and float64, 2-d and 3-d, batched or not; NaN
handling; errors; modules; and placements drawn from the generator when no samples are given."""

from __future__ import annotations

import numpy as np
import pytest
from _lib import raised, recorded_graph, tg, torch

N_CASES = 40


def _case(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n = int(rng.choice([2, 3]))
    sizes = [int(v) for v in rng.integers(3, 9, n)]
    # the last window may end at the border in 2-d, must end before it in 3-d (PyTorch's checks)
    room = 1 if n == 2 else 0
    kernel = [int(rng.integers(1, min(4, s - 1 + room) + 1)) for s in sizes]
    output = [int(rng.integers(1, s - k + room + 1)) for s, k in zip(sizes, kernel, strict=True)]
    batched = bool(rng.random() < 0.7)
    batch, channels = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    shape = ([batch] if batched else []) + [channels] + sizes
    x = rng.standard_normal(shape)
    if rng.random() < 0.2:
        x.flat[int(rng.integers(x.size))] = np.nan
    return dict(n=n, x=x, kernel=kernel, output=output, dtype=str(rng.choice(["float32", "float64"])),
                samples=rng.random(((batch if batched else 1), channels, n)))


def _run(lib, case: dict):
    dt = getattr(lib, case["dtype"])
    x = lib.tensor(case["x"], dtype=dt, requires_grad=True)
    pool = getattr(lib.nn.functional, f"fractional_max_pool{case['n']}d")
    out, indices = pool(x, case["kernel"], output_size=case["output"], return_indices=True,
                        _random_samples=lib.tensor(case["samples"], dtype=dt))
    (grad,) = lib.autograd.grad((out * out).sum(), x, create_graph=True)
    (second,) = lib.autograd.grad(grad.sum(), x)
    return (out.detach().double().numpy(), indices.numpy(), grad.detach().double().numpy(),
            second.double().numpy(), recorded_graph([out]), recorded_graph([grad]))


@pytest.mark.parametrize("seed", range(N_CASES))
def test_fractional_max_pool_as_torch(seed):
    case = _case(seed)
    ours, theirs = _run(tg, case), _run(torch, case)
    for a, b in zip(ours[:4], theirs[:4], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, equal_nan=True)
    assert ours[4:] == theirs[4:]


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.fractional_max_pool2d(L.randn(1, 2, 6, 6), 2),
    lambda L: L.nn.functional.fractional_max_pool2d(L.randn(1, 2, 7, 6), (5, 2), output_size=(4, 3)),
    lambda L: L.nn.functional.fractional_max_pool2d(L.randn(1, 2, 7, 6), 2, output_size=(4, 6)),
    lambda L: L.nn.functional.fractional_max_pool2d(L.randn(1, 2, 6, 6), 2, output_ratio=(0.5, 0.5, 0.5)),
    lambda L: L.nn.functional.fractional_max_pool2d(L.randn(1, 2, 6, 6), 2, output_ratio=0.5),
    lambda L: L.nn.functional.fractional_max_pool2d(L.randn(2, 3, 6, 6), 2, output_size=3,
                                                    _random_samples=L.rand(2, 3, 3)),
    lambda L: L.nn.functional.fractional_max_pool2d(L.randn(2, 3, 6, 6), 2, output_size=3,
                                                    _random_samples=L.rand(1, 3, 2)),
    lambda L: L.nn.functional.fractional_max_pool2d(L.randn(2, 3, 6, 6), 2, output_size=3,
                                                    _random_samples=L.rand(2, 3, 2, dtype=L.float64)),
    lambda L: L.nn.functional.fractional_max_pool3d(L.randn(1, 2, 4, 4, 4), 2, output_size=(2, 2, 4)),
    lambda L: L.nn.FractionalMaxPool2d(2),
    lambda L: L.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5),
    lambda L: L.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    lambda L: L.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 1.0, 0.5)),
], ids=["no_size", "pool_height", "pool_width", "ratio_length", "bare_float_ratio", "samples_width",
        "samples_batch", "samples_dtype", "pool_width_3d", "module_no_size", "module_both", "module_ratio",
        "module_ratio_3d"])
def test_errors_as_in_torch(call):
    ours, theirs = raised(tg, call), raised(torch, call)
    assert theirs is not None
    assert ours == theirs


def test_modules_as_torch():
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    samples = np.random.default_rng(2).random((2, 3, 2)).astype(np.float32)
    results = []
    for lib in (tg, torch):
        module = lib.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5), return_indices=True,
                                            _random_samples=lib.tensor(samples))
        out, indices = module(lib.tensor(x))
        results.append((repr(module), repr(lib.nn.FractionalMaxPool3d((2, 2, 2), output_size=3)), module.kernel_size,
                        module.output_ratio, out.numpy(), indices.numpy()))
    assert results[0][:4] == results[1][:4]
    np.testing.assert_array_equal(results[0][4], results[1][4])
    np.testing.assert_array_equal(results[0][5], results[1][5])


def test_placements_drawn_from_the_generator():
    x = tg.randn(2, 3, 9, 9)
    tg.manual_seed(5)
    first = tg.nn.functional.fractional_max_pool2d(x, 2, output_size=4)
    tg.manual_seed(5)
    again = tg.nn.functional.fractional_max_pool2d(x, 2, output_size=4)
    assert first.shape == (2, 3, 4, 4) and bool((first == again).all())
