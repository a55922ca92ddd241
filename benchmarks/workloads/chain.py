"""Workload 2: forward + backward through a chain of 300 tiny pointwise ops, per op.

The chain repeats a 7-op cycle (sin, *c, +d, tanh, exp, *e, +g) on a (16,) tensor. The constants are
chosen so each cycle is a contraction towards a fixed point near 1.3 with derivative ~0.9: values and
gradients stay far from overflow and from float32 denormals (which would slow every library's kernels
and distort the timing), and float32 results agree across libraries to ~1e-5, so the cross-check
below is meaningful.

The chain is generated as straight-line source, so no per-op Python dispatch of the harness is timed.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from benchmarks.harness import Bench
from benchmarks.libs import SUBJECT, Lib, host_array, sync_fn, tensor, to_numpy
from benchmarks.spec import Check, Context, Row, Target, Workload

N_OPS = 300
CYCLE = ("sin", "mul_c", "add_d", "tanh", "exp", "mul_e", "add_g")

# op -> (torch-like expression, NumPy expression, NumPy backward statement or "" where the gradient passes
# through unchanged). Placeholders: {h} is the op's input, {o} its output.
_RULES: dict[str, tuple[str, str, str]] = {
    "sin": ("lib.sin({h})", "np.sin({h})", "g = g * np.cos({h})"),
    "mul_c": ("{h} * c", "{h} * c", "g = g * c"),
    "add_d": ("{h} + d", "{h} + d", ""),
    "tanh": ("lib.tanh({h})", "np.tanh({h})", "g = g * (1.0 - {o} * {o})"),
    "exp": ("lib.exp({h})", "np.exp({h})", "g = g * {o}"),
    "mul_e": ("{h} * e", "{h} * e", "g = g * e"),
    "add_g": ("{h} + g_", "{h} + g_", ""),
}


def chain_ops(n: int = N_OPS) -> list[str]:
    return [CYCLE[i % len(CYCLE)] for i in range(n)]


def chain_data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    f32 = np.float32
    return {
        "w": rng.uniform(-1.0, 1.0, 16).astype(f32),
        "c": rng.uniform(0.9, 1.0, 16).astype(f32),
        "d": rng.uniform(-0.1, 0.1, 16).astype(f32),
        "e": np.full(16, 0.85, f32),
        "g_": np.full(16, -0.8, f32),
    }


def _compile(src: str, namespace: dict[str, Any], name: str) -> Callable[..., Any]:
    exec(src, namespace)  # noqa: S102 - generated from _RULES above
    return namespace[name]


def _forward_source(ops: list[str], col: int) -> str:
    lines = ["def chain(h):"] + [f"    h = {_RULES[op][col].format(h='h')}" for op in ops] + ["    return h"]
    return "\n".join(lines)


def make_chain(lib: ModuleType, device: str = "cpu", n: int = N_OPS) -> tuple[Any, Callable[[Any], Any]]:
    """The leaf ``w`` (requires grad) and the compiled chain function for a torch-like library."""
    data = chain_data()
    ns: dict[str, Any] = {"lib": lib}
    for key in ("c", "d", "e", "g_"):
        ns[key] = tensor(lib, data[key], device)
    w = tensor(lib, data["w"], device, requires_grad=True)
    return w, _compile(_forward_source(chain_ops(n), 0), ns, "chain")


def chain_bench(lib: ModuleType, device: str = "cpu", backward: bool = True) -> Bench:
    w, chain = make_chain(lib, device)
    if not backward:
        return Bench(stmt="chain(w)", namespace={"chain": chain, "w": w}, units=N_OPS)

    def step() -> None:
        w.grad = None
        chain(w).sum().backward()

    return Bench(stmt="step()", namespace={"step": step}, units=N_OPS)


def make_numpy_chain(xp: ModuleType, n: int = N_OPS) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """Hand-written NumPy: (forward only, forward keeping every intermediate + backward) -> dL/dw."""
    ops = chain_ops(n)
    # Every intermediate stays alive as a local h<i>, as a hand-written backward would keep it.
    fwd = [f"    h{i + 1} = {_RULES[op][1].format(h=f'h{i}')}" for i, op in enumerate(ops)]
    bwd = ["    g = np.ones_like(h0)"]
    for i in reversed(range(n)):
        rule = _RULES[ops[i]][2]
        if rule:
            bwd.append("    " + rule.format(h=f"h{i}", o=f"h{i + 1}"))
    src = "\n".join(["def fwd_bwd():", "    h0 = w", *fwd, *bwd, "    return g"])
    ns: dict[str, Any] = {"np": xp, **{k: xp.asarray(v) for k, v in chain_data().items()}}
    fwd_bwd = _compile(src, ns, "fwd_bwd")
    forward = _compile(_forward_source(ops, 1), dict(ns), "chain")
    w = ns["w"]
    return (lambda: forward(w)), fwd_bwd


def _bench_factory(lib: Lib, backward: bool) -> Callable[[], Bench]:
    def make() -> Bench:
        if lib.torchlike:
            bench = chain_bench(lib.module, lib.device, backward)
            bench.sync = sync_fn(lib)
            return bench
        forward, fwd_bwd = make_numpy_chain(lib.module)
        return Bench(stmt="f()", namespace={"f": fwd_bwd if backward else forward}, units=N_OPS)

    return make


def _rows(ctx: Context) -> list[Row]:
    case = f"chain of {N_OPS}"
    return [
        Row(case, "forward (recording)", {lib.name: _bench_factory(lib, False) for lib in ctx.libs}),
        Row(case, "forward + backward", {lib.name: _bench_factory(lib, True) for lib in ctx.libs},
            Target(SUBJECT, "torch", 0.7, "issue (stretch of G2)")),
    ]


def _grad_of(lib: Lib) -> Callable[[], np.ndarray]:
    def run() -> np.ndarray:
        if not lib.torchlike:
            return host_array(make_numpy_chain(lib.module)[1]())
        w, chain = make_chain(lib.module, lib.device)
        chain(w).sum().backward()
        return to_numpy(w.grad, lib.device)

    return run


def _checks(ctx: Context) -> list[Check]:
    return [Check("dL/dw of the 300-op chain", {lib.name: _grad_of(lib) for lib in ctx.libs}, rtol=1e-4,
                  atol=1e-9)]


CHAIN = Workload(
    key="chain",
    title="2. Forward + backward per op, chain of 300 tiny ops",
    description="A (16,) float32 leaf through 300 pointwise ops (sin, mul, add, tanh, exp, mul, add "
                "repeated), then sum().backward(); reported per op. NumPy is a hand-written forward + "
                "backward of the same chain.",
    per="op",
    rows=_rows,
    checks=_checks,
)
