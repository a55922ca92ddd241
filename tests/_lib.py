"""The library under test and the oracle.

Tests run the same program against tracegrad (``tg``) and PyTorch (``torch``) and compare.
Set ``TRACEGRAD_ORACLE_SELFTEST=1`` to bind ``tg`` to PyTorch itself: a test that fails in
that mode is a wrong specification, not a tracegrad bug.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import re
import warnings

import numpy as np
import torch

if os.environ.get("TRACEGRAD_ORACLE_SELFTEST"):
    tg = torch
else:
    import tracegrad as tg

__all__ = ["tg", "torch", "np", "to_numpy", "assert_close", "assert_same_bits", "assert_same_bits_of", "both_from",
           "STRIDED_VIEWS_2D", "run_both", "recorded_graph", "raised", "value_or_error", "bits_or_error", "saved_and_loaded",
           "UnseekableStream", "forward_ad_transcript", "on_threads"]


def to_numpy(value):
    """Any tensor-like (tracegrad, torch, numpy, scalar) → a NumPy array (detached)."""
    if value is None:
        return None
    if hasattr(value, "detach"):
        value = value.detach()
        for bit, resolve in (("is_conj", "resolve_conj"), ("is_neg", "resolve_neg")):  # torch's lazy conj/neg
            if hasattr(value, bit) and getattr(value, bit)():
                value = getattr(value, resolve)()
        return np.asarray(value.cpu().numpy() if hasattr(value, "cpu") else value.numpy())
    return np.asarray(value)


def assert_same_bits(ours, theirs) -> None:
    """The two results (tensors or arrays) have one dtype and shape and the same bits, signs of zeros included;
    any NaN matches any NaN."""
    a, b = to_numpy(ours), to_numpy(theirs)
    assert a.dtype == b.dtype and a.shape == b.shape, f"{a.dtype}{a.shape} vs {b.dtype}{b.shape}"
    if a.dtype.kind == "c":  # (real and imaginary parts side by side)
        a, b = (np.ascontiguousarray(x).view(x.real.dtype) for x in (a, b))
    if a.dtype.kind == "f":
        bits = f"u{a.itemsize}"
        same = (np.ascontiguousarray(a).view(bits) == np.ascontiguousarray(b).view(bits)) | (np.isnan(a) & np.isnan(b))
    else:
        same = a == b
    assert same.all(), (f"{(~same).sum()} of {same.size} differ, e.g. at {np.flatnonzero(~same)[:5]}: "
                        f"{a.reshape(-1)[~same.reshape(-1)][:3]} vs {b.reshape(-1)[~same.reshape(-1)][:3]}")


def assert_all_same_bits(ours, theirs) -> None:
    """``assert_same_bits`` for each pair of two equally long sequences of results (tracegrad's, torch's)."""
    assert len(ours) == len(theirs), f"{len(ours)} results vs {len(theirs)}"
    for a, b in zip(ours, theirs):
        assert_same_bits(a, b)


# Views of a 2-d tensor that give other strides: transposed, every other row, every third column, an inner window,
# a transposed slice. A kernel's order of operations may follow the layout.
STRIDED_VIEWS_2D = {
    "t": lambda t: t.t(),
    "rows": lambda t: t[::2],
    "cols": lambda t: t[:, 1::3],
    "inner": lambda t: t[3:-2, 5:-7],
    "t-sliced": lambda t: t.t()[::2, 1:],
}


def both_from(base: np.ndarray, view=lambda t: t) -> tuple:
    """The same array as a tensor of each library (tracegrad's first), through the same view (so with the same
    strides)."""
    return view(tg.from_numpy(base.copy())), view(torch.from_numpy(base.copy()))


def assert_same_bits_of(op: str, base: np.ndarray, *args, view=lambda t: t, dtype: str | None = None,
                        **kwargs) -> None:
    """``op`` (a dotted name, e.g. ``"linalg.vector_norm"``) of the same input gives the same bits in both
    libraries; ``dtype`` names a ``dtype=`` argument (each library's own dtype)."""
    results = []
    for lib, t in zip((tg, torch), both_from(base, view)):
        fn = lib
        for part in op.split("."):
            fn = getattr(fn, part)
        results.append(fn(t, *args, **kwargs, **({} if dtype is None else {"dtype": getattr(lib, dtype)})))
    assert_same_bits(*results)


def assert_close(actual, expected, rtol=1e-5, atol=1e-6, check_dtype=False):
    """Compare nested results (tuples/lists/dicts of tensors, numbers, None, strings)."""
    if isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple)), f"{type(actual)} vs {type(expected)}"
        assert len(actual) == len(expected), f"len {len(actual)} != {len(expected)}"
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol, atol, check_dtype)
        return
    if isinstance(expected, dict):
        assert set(actual) == set(expected)
        for k in expected:
            assert_close(actual[k], expected[k], rtol, atol, check_dtype)
        return
    if expected is None or isinstance(expected, (str, bool)):
        assert actual == expected, f"{actual!r} != {expected!r}"
        return
    a, e = to_numpy(actual), to_numpy(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    if check_dtype:
        assert str(a.dtype) == str(e.dtype), f"dtype {a.dtype} != {e.dtype}"
    np.testing.assert_allclose(_widened(a), _widened(e), rtol=rtol, atol=atol)


def _widened(a: np.ndarray) -> np.ndarray:
    """Booleans as they are, complex values as complex128 (both parts compared), anything else as float64."""
    if a.dtype == bool:
        return a
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


def run_both(program, *args, **kwargs):
    """Run ``program(lib, ...)`` with tracegrad and with torch; return (ours, theirs)."""
    return program(tg, *args, **kwargs), program(torch, *args, **kwargs)


def recorded_graph(outputs: list) -> list:
    """The recorded graph as a user sees it: each node's ``name()`` with the names of its ``next_functions``
    ("-" for an input without gradient), nodes in depth-first order from the outputs, each listed once."""
    index: dict = {}
    nodes: list = []

    def visit(fn) -> str:
        if fn is None:
            return "-"
        if id(fn) not in index:
            index[id(fn)] = fn.name()
            nodes.append((fn.name(), [visit(nxt) for nxt, _ in fn.next_functions]))
        return index[id(fn)]

    for out in outputs:
        visit(out.grad_fn)
    return nodes


def graph_nodes(roots: list) -> list:
    """Every node of the graph behind ``roots``, depth first from the roots, each once (the same order in both
    libraries, so nodes can be paired up by position)."""
    seen: dict = {}
    stack = [r.grad_fn for r in reversed(roots)]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen[fn] = len(seen)
        stack.extend(nxt for nxt, _ in reversed(fn.next_functions))
    return list(seen)


def graph_with_edges(fn) -> tuple | None:
    """Every node reached from the node ``fn`` (breadth first, each once) as (name, edges), an edge being (the index
    of its node in this walk, input_nr) or None: the whole graph, the edges' output numbers included."""
    if fn is None:
        return None
    order, index, nodes = [fn], {id(fn): 0}, []
    for f in order:  # (grows while walked)
        edges = []
        for nxt, nr in f.next_functions:
            if nxt is None:
                edges.append(None)
                continue
            if id(nxt) not in index:
                index[id(nxt)] = len(order)
                order.append(nxt)
            edges.append((index[id(nxt)], nr))
        nodes.append((f.name().replace("torch::autograd::", ""), tuple(edges)))
    return tuple(nodes)


def double_backward(lib, build) -> tuple:
    """``build(lib, x)`` of a float64 3x4 ``x`` that requires grad: its first gradient ``g``, taken with
    ``create_graph=True`` against a cotangent that requires grad too (so a linear op's gradient has a graph), and the
    gradients of ``(g * g).sum()`` with respect to ``x`` and the cotangent."""
    x = lib.linspace(-0.9, 0.8, 12, dtype=lib.float64).reshape(3, 4).requires_grad_()
    y = build(lib, x)
    cotangent = lib.linspace(-1.0, 1.0, y.numel(), dtype=y.dtype).reshape(y.shape).requires_grad_()
    (g,) = lib.autograd.grad(y, x, cotangent, create_graph=True)
    return (g, *lib.autograd.grad((g * g).sum(), (x, cotangent)))


def value_or_error(program, lib) -> tuple:
    """What ``program(lib)`` gives, comparable across libraries: its result's dtype, shape and values (NaN equal
    to NaN through repr), or the error's type and message."""
    try:
        result = program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    return str(result.dtype).replace("tracegrad", "torch"), tuple(result.shape), repr(result.tolist())


def bits_or_error(program, lib):
    """A program's tensors as (dtype, shape, raw bits), other values as they are, or its error as (type, first
    line of its message): outcomes compared bit for bit across libraries (bfloat16 read through int16)."""
    lib.manual_seed(0)
    try:
        value = program(lib)
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return type(e).__name__, str(e).split("\n")[0].replace("tracegrad", "torch")
    out = []
    for v in value if isinstance(value, (list, tuple)) else [value]:
        if hasattr(v, "detach"):
            v = v.detach()
            raw = v.view(lib.int16) if v.dtype is lib.bfloat16 else v
            out.append((str(v.dtype).replace("tracegrad", "torch"), tuple(v.shape), raw.numpy().tobytes()))
        else:
            out.append(v)
    return out


def saved_and_loaded(lib, obj, **load_kwargs):
    """``obj`` through ``lib.save`` into memory and back through ``lib.load(**load_kwargs)``."""
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    buffer.seek(0)
    return lib.load(buffer, **load_kwargs)


def raised(lib, program) -> tuple[str, str] | None:
    """(exception type name, message) of ``program(lib)``, or None when it runs: errors compared across
    libraries."""
    try:
        program(lib)
    except Exception as exc:  # noqa: BLE001 - the error itself is the result
        return type(exc).__name__, str(exc)
    return None


class Unknown:
    """An object no parameter takes (it prints as ``object`` in both libraries' messages)."""


Unknown.__name__ = Unknown.__qualname__ = "object"


def raised_quietly(lib, source: str, env: dict) -> tuple[str, str] | None:
    """``raised`` for a snippet evaluated in ``env`` with warnings ignored (mistake sweeps compare errors only),
    an object's address in the message written as ``0x?`` (each run has its own)."""
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return eval(source, env)  # noqa: S307 - the calling test's own snippets
    outcome = raised(lib, run)
    return outcome and (outcome[0], re.sub(r" at 0x[0-9a-fA-F]+", " at 0x?", outcome[1]))


def spoiled_calls(prefix: str, valid: dict[str, str], wrong: tuple[str, ...] = ('"a"', "None", "1.5", "True")
                  ) -> list[str]:
    """Mistaken calls made from valid ones (``{name: "its arguments"}``), as source: no arguments, one unknown
    object more (``U()``, a name the test's snippets give), an unknown keyword, nine objects more, and each argument
    replaced in turn by each of ``wrong``."""
    import ast

    calls = []
    for name, args in valid.items():
        given = [ast.unparse(a) for a in ast.parse(f"f({args})", mode="eval").body.args]
        head = f"{prefix}{name}({', '.join(given)}"
        calls += [head + ")", head + ", U())", head + ", bogus=1)", head + ", U()" * 9 + ")"]
        for i in range(len(given)):
            for value in wrong:
                calls.append(f"{prefix}{name}({', '.join(given[:i] + [value] + given[i + 1:])})")
    return calls


def assert_logs_match(ours: list, theirs: list, **tolerance) -> None:
    """Two libraries' logs of ``(kind, key, value)`` entries: the same kinds and keys in the same order, array
    values close (``tolerance`` for ``np.testing.assert_allclose``), every other value equal."""
    assert [entry[:2] for entry in ours] == [entry[:2] for entry in theirs]
    for a, b in zip(ours, theirs, strict=True):
        if isinstance(a[2], np.ndarray):
            np.testing.assert_allclose(a[2], b[2], **tolerance)
        else:
            assert a[2] == b[2], (a, b)


def warning_texts(caught: list) -> list[str]:
    """The messages of recorded warnings, without torch's "(Triggered internally at ...)" source suffix."""
    return [str(w.message).split(" (Triggered internally at")[0] for w in caught]


@contextlib.contextmanager
def every_warning(lib):
    """Every warning of ``lib`` recorded (the caught list is yielded): Python's filters set to "always" and the
    library's warn-always on, so its once-per-process warnings (TORCH_WARN_ONCE: the complex-to-real copy...) show
    whatever earlier tests in this worker did through either library."""
    always = lib.is_warn_always_enabled()
    lib.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield caught
    finally:
        lib.set_warn_always(always)


@contextlib.contextmanager
def gc_disabled():
    """Like PyTorch's ``disable_gc``: inside, only reference counting may free objects (liveness checks)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextlib.contextmanager
def on_threads(count: int):
    """Both libraries on ``count`` threads inside, each given back its own count afterwards: where ATen's
    at::parallel_for cuts its ranges shows in the bits, so a comparison at a thread count pins it in both."""
    before = [(lib, lib.get_num_threads()) for lib in (tg, torch)]
    for lib, _ in before:
        lib.set_num_threads(count)
    try:
        yield
    finally:
        for lib, threads in before:
            lib.set_num_threads(threads)


@contextlib.contextmanager
def collector_off():
    """``gc_disabled`` from a collected start: what is alive inside is kept by references alone."""
    gc.collect()
    with gc_disabled():
        yield


def _torch_sqrt_correctly_rounded(t):
    return torch.from_numpy(np.asarray(np.sqrt(t.detach().numpy())))


def _torch_sqrt_correctly_rounded_(t):
    with torch.no_grad():
        t.copy_(_torch_sqrt_correctly_rounded(t))
    return t


def correctly_rounded_torch_sqrt(monkeypatch, foreach: bool = True) -> None:
    """Give torch a correctly rounded square root (``Tensor.sqrt``/``sqrt_``, and with ``foreach`` its
    ``_foreach_sqrt``/``_foreach_sqrt_``) for the rest of a test: torch's CPU sqrt goes through MKL, which on some
    processors (this AMD EPYC) is an ulp off for about a sixth of float32 inputs, so optimizer updates are compared
    bit for bit only against a torch that rounds as NumPy's (and tracegrad's) sqrt does."""
    monkeypatch.setattr(torch.Tensor, "sqrt", _torch_sqrt_correctly_rounded)
    monkeypatch.setattr(torch.Tensor, "sqrt_", _torch_sqrt_correctly_rounded_)
    if foreach:
        monkeypatch.setattr(torch, "_foreach_sqrt", lambda ts: [_torch_sqrt_correctly_rounded(t) for t in ts])
        monkeypatch.setattr(torch, "_foreach_sqrt_", lambda ts: [_torch_sqrt_correctly_rounded_(t) for t in ts])


def optimizer_snapshot(opt, params: list) -> list:
    """Each parameter's and its state tensors' names, values and versions, in order: what a step (or a step that
    failed part-way) left behind."""
    seen = []
    for p in params:
        seen.append(("param", p.detach().clone(), p._version))
        seen += [(key, value.detach().clone(), value._version) for key, value in opt.state[p].items()]
    return seen


def assert_same_snapshots(ours: list, theirs: list) -> None:
    """Two ``optimizer_snapshot``s hold the same names and versions, and the same bits."""
    assert [(key, version) for key, _, version in ours] == [(key, version) for key, _, version in theirs]
    for (_, mine, _), (_, their, _) in zip(ours, theirs):
        assert_same_bits(mine, their)


def plain_nested(x):
    """Nested results (batches, collated samples) as lists and dicts of (dtype name, values): comparable across
    the two libraries, bit for bit for floats (their values as Python floats are exact)."""
    if isinstance(x, dict):
        return {k: plain_nested(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [type(x).__name__] + [plain_nested(v) for v in x]
    if hasattr(x, "detach"):
        arr = to_numpy(x)
        return (arr.dtype.name, arr.tolist())
    return x


def optimizer_parameters(lib, spec: list) -> list:
    """Parameters of the (shape, dtype) ``spec``, each of distinct values (complex ones off the real axis)."""
    params = []
    for k, (shape, dtype) in enumerate(spec):
        values = np.linspace(-1.0, 1.5, int(np.prod(shape))) + 0.1 * k
        if dtype.startswith("complex"):
            values = values * (1 - 0.5j)
        params.append(lib.nn.Parameter(lib.tensor(values.reshape(shape).astype(dtype))))
    return params


def set_alternating_gradients(lib, params: list, step: int) -> None:
    """Gradients that change sign from step to step (Rprop's step sizes grow and shrink)."""
    for k, p in enumerate(params):
        p.grad = (p.detach() * 0.7 - 0.1 * (k + 1) * (-1) ** step).clone()


def failed_third_step(lib, opt, params: list, where: int, shape: tuple) -> tuple:
    """Two good steps, then one where parameter ``where``'s gradient has ``shape`` (set through ``.grad.data``): the
    error, and the ``optimizer_snapshot`` of what the step left."""
    for step in range(2):
        set_alternating_gradients(lib, params, step)
        opt.step()
    set_alternating_gradients(lib, params, 2)
    params[where].grad.data = lib.full(shape, 0.25, dtype=params[where].dtype)
    return raised(lib, lambda _: opt.step()), optimizer_snapshot(opt, params)


class UnseekableStream(io.RawIOBase):
    """A readable stream that cannot seek (a pipe, a socket), returning at most ``chunk`` bytes a read when given
    one (a raw stream may return fewer bytes than asked)."""

    def __init__(self, data: bytes, chunk: int | None = None) -> None:
        self.data = io.BytesIO(data)
        self.chunk = chunk

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        size = len(buffer) if self.chunk is None else min(len(buffer), self.chunk)
        piece = self.data.read(size)
        buffer[:len(piece)] = piece
        return len(piece)


def forward_ad_transcript(lib, program: str, extra: dict | None = None, *, in_dual_level: bool = False,
                          quiet: bool = False) -> str:
    """What ``program`` prints when run with ``torch`` bound to ``lib`` and ``fwAD`` to its forward_ad (plus
    ``extra`` names), inside a dual level if asked and with warnings silenced if ``quiet``, ending with the error it
    stopped on (type and message); the library's name read as torch's."""
    env = {"torch": lib, "fwAD": lib.autograd.forward_ad, **(extra or {})}
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore")
        try:
            with lib.autograd.forward_ad.dual_level() if in_dual_level else contextlib.nullcontext():
                exec(program, env)  # noqa: S102 - the tests' own programs
        except Exception as exc:  # noqa: BLE001 - the error is part of what is compared
            print(f"{type(exc).__name__}: {exc}")
    return buffer.getvalue().replace("tracegrad", "torch")
