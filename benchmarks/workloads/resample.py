"""Workload 11: resampling and contraction composites on small and realistic operands.

``F.interpolate`` (bilinear, bicubic, trilinear; torch's CPU bits, its fused multiply-adds emulated) and
``einsum`` (torch's composite of views, sums and one bmm per pair), where per-call costs (plans, tables, the
views' dispatch, the backward node) weigh most on small inputs. Forward alone (inputs that do not require
grad), and forward + ``backward`` of the sum with the leaves' gradients reset each time.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from benchmarks.harness import Bench
from benchmarks.libs import Lib, sync_fn, tensor
from benchmarks.spec import Check, Context, Row, Workload

# case -> (statement computing ``y`` from ``a`` (and ``b``), the operands' shapes)
CASES: dict[str, tuple[str, tuple[tuple[int, ...], ...]]] = {
    "bilinear x2, 1x2x8x8": ("y = F.interpolate(a, scale_factor=2, mode='bilinear')", ((1, 2, 8, 8),)),
    "bicubic x2, 1x2x8x8": ("y = F.interpolate(a, scale_factor=2, mode='bicubic')", ((1, 2, 8, 8),)),
    "trilinear x2, 1x2x4x4x4": ("y = F.interpolate(a, scale_factor=2, mode='trilinear')", ((1, 2, 4, 4, 4),)),
    "bilinear x2, 1x16x64x64": ("y = F.interpolate(a, scale_factor=2, mode='bilinear')", ((1, 16, 64, 64),)),
    "bilinear x2, 8x3x32x32": ("y = F.interpolate(a, scale_factor=2, mode='bilinear')", ((8, 3, 32, 32),)),
    "einsum 'ij,jk->ki', 64x64": ("y = lib.einsum('ij,jk->ki', a, b)", ((64, 64), (64, 64))),
    "einsum 'i,j->ij', 64": ("y = lib.einsum('i,j->ij', a, b)", ((64,), (64,))),
    "einsum 'bhqd,bhkd->bhqk'": ("y = lib.einsum('bhqd,bhkd->bhqk', a, b)", ((2, 4, 16, 8), (2, 4, 16, 8))),
}
VARIANTS = ("forward", "forward + backward")


def _arrays(case: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {name: rng.standard_normal(shape).astype(np.float32) for name, shape in zip("ab", CASES[case][1])}


def resample_bench(lib: Lib, case: str, backward: bool) -> Bench:
    stmt = CASES[case][0]
    ns = {"lib": lib.module, "F": lib.module.nn.functional}
    ns.update({name: tensor(lib.module, x, lib.device, backward) for name, x in _arrays(case).items()})
    if backward:
        stmt += "; y.sum().backward(); a.grad = None" + ("; b.grad = None" if "b" in ns else "")
    return Bench(stmt=stmt, namespace=ns, sync=sync_fn(lib))


def _factory(lib: Lib, case: str, backward: bool) -> Callable[[], Bench]:
    return lambda: resample_bench(lib, case, backward)


def _rows(ctx: Context) -> list[Row]:
    return [
        Row(case, variant, {lib.name: _factory(lib, case, variant != "forward") for lib in ctx.torchlike()})
        for case in CASES
        for variant in VARIANTS
    ]


def _results(lib: Lib) -> Callable[[], np.ndarray]:
    """Every case's output and its leaves' gradients, concatenated."""

    def run() -> np.ndarray:
        values = []
        for case in CASES:
            ns = {"lib": lib.module, "F": lib.module.nn.functional}
            ns.update({name: tensor(lib.module, x, lib.device, True) for name, x in _arrays(case).items()})
            exec(CASES[case][0], ns)  # noqa: S102 - our own statement strings
            ns["y"].sum().backward()
            values.append(ns["y"].detach().cpu().numpy().ravel())
            values += [ns[name].grad.cpu().numpy().ravel() for name in "ab" if name in ns]
        return np.concatenate(values).astype(np.float64)

    return run


def _checks(ctx: Context) -> list[Check]:
    return [Check("outputs and leaf gradients of every case", {lib.name: _results(lib) for lib in ctx.torchlike()})]


RESAMPLE = Workload(
    key="resample",
    title="11. Interpolation and einsum, small and realistic operands",
    description=(
        "F.interpolate (bilinear, bicubic, trilinear, x2) and einsum on small operands, where per-call costs "
        "weigh most, and bilinear on realistic ones. Forward alone, and forward + backward of the sum."
    ),
    per="op",
    rows=_rows,
    checks=_checks,
)
