"""Workload 10: in-place writes into views of a tensor that is part of a graph (PyTorch's CopySlices).

``y = x * 2`` on an (8, 16) leaf that requires grad, then one write into a view of ``y``: ``y[0] = 5``,
``y[:, 1:3] = z`` (``z`` requires grad), ``y.narrow(0, 1, 2).mul_(3)``, ``y.diagonal().add_(1)``. Each write
records an in-place node, a CopySlices node for the base and the view's regenerated ``grad_fn``. Circular
padding with grad is PyTorch's composite of slices and copies into views of the output, so it pays the same
cost three times a padded dim. The forward rows time the ``x * 2`` too (its own row is the floor); the
"forward + backward" rows add ``backward`` from the written tensor with a gradient of ones.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from benchmarks.harness import Bench
from benchmarks.libs import Lib, sync_fn, tensor
from benchmarks.spec import Check, Context, Row, Workload

SHAPE = (8, 16)
# case -> (statement computing ``y`` from the namespace's tensors, the shape of ``y``)
CASES: dict[str, tuple[str, tuple[int, ...]]] = {
    "y = x * 2 (the floor)": ("y = x * 2", SHAPE),
    "y[0] = 5": ("y = x * 2; y[0] = 5", SHAPE),
    "y[:, 1:3] = z": ("y = x * 2; y[:, 1:3] = z", SHAPE),
    "y.narrow(0, 1, 2).mul_(3)": ("y = x * 2; y.narrow(0, 1, 2).mul_(3)", SHAPE),
    "y.diagonal().add_(1)": ("y = x * 2; y.diagonal().add_(1)", SHAPE),
    "circular pad (2, 3, 8)": ("y = lib.nn.functional.pad(p, (1, 1), mode='circular')", (2, 3, 10)),
    # (a 4-d input pads its last two dims)
    "circular pad (8, 16, 32, 32)": ("y = lib.nn.functional.pad(q, (1, 1, 1, 1), mode='circular')", (8, 16, 34, 34)),
}
VARIANTS = ("forward", "forward + backward")


def _arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    shapes = {"x": SHAPE, "z": (SHAPE[0], 2), "p": (2, 3, 8), "q": (8, 16, 32, 32)}
    return {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}


def inplace_view_bench(lib: Lib, case: str, backward: bool) -> Bench:
    stmt, out_shape = CASES[case]
    ns = {"lib": lib.module, "g": tensor(lib.module, np.ones(out_shape, np.float32), lib.device)}
    ns.update({name: tensor(lib.module, a, lib.device, True) for name, a in _arrays().items()})
    if backward:
        # (``set_to_none`` each time: the leaves' gradients are not accumulated over the loop)
        stmt += "; y.backward(g); x.grad = z.grad = p.grad = q.grad = None"
    return Bench(stmt=stmt, namespace=ns, sync=sync_fn(lib))


def _factory(lib: Lib, case: str, backward: bool) -> Callable[[], Bench]:
    return lambda: inplace_view_bench(lib, case, backward)


def _rows(ctx: Context) -> list[Row]:
    return [
        Row(case, variant, {lib.name: _factory(lib, case, variant != "forward") for lib in ctx.torchlike()})
        for case in CASES
        for variant in VARIANTS
    ]


def _gradients(lib: Lib) -> Callable[[], np.ndarray]:
    """Every case's output and its leaves' gradients, concatenated."""

    def run() -> np.ndarray:
        values = []
        for stmt, out_shape in CASES.values():
            ns = {"lib": lib.module}
            ns.update({name: tensor(lib.module, a, lib.device, True) for name, a in _arrays().items()})
            exec(stmt, ns)  # noqa: S102 - our own statement strings
            y = ns["y"]
            y.backward(
                tensor(lib.module, np.arange(np.prod(out_shape), dtype=np.float32).reshape(out_shape), lib.device)
            )
            values.append(y.detach().cpu().numpy().ravel())
            values += [ns[name].grad.cpu().numpy().ravel() for name in "xzpq" if ns[name].grad is not None]
        return np.concatenate(values).astype(np.float64)

    return run


def _checks(ctx: Context) -> list[Check]:
    return [Check("outputs and leaf gradients of every case", {lib.name: _gradients(lib) for lib in ctx.torchlike()})]


INPLACE_VIEW = Workload(
    key="inplace_view",
    title="10. In-place writes into views with autograd (CopySlices)",
    description=(
        "y = x * 2 on an (8, 16) leaf requiring grad, then one in-place write into a view of y; circular "
        "padding with grad (torch's composite of copies into views). Forward alone, and forward + "
        "backward from the written tensor."
    ),
    per="op",
    rows=_rows,
    checks=_checks,
)
