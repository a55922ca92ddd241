"""``torch._foreach_*``: every overload of every operator, swept over lists of a few shapes and dtypes against
torch (values bit for bit, dtypes, layouts, errors), their autograd nodes and gradients, the in-place forms'
per-tensor nodes, PyTorch's messages for bad lists, and an EMA update in timm's style."""

from __future__ import annotations

import pytest

from tests._lib import assert_same_bits, np, raised, recorded_graph, tg, torch

NAMES = sorted(n for n in dir(torch) if n.startswith("_foreach"))


def _overloads() -> list[tuple[str, str]]:
    found = []
    for name in NAMES:
        packet = getattr(torch.ops.aten, name)
        found += [(name, overload) for overload in packet.overloads() if not overload.endswith("out")]
    return found


OVERLOADS = _overloads()
CASES = {  # the dtypes of each list's tensors: shapes (2, 3) transposed, (5,), ()
    "float32": ("float32", "float32", "float32"),
    "float64 and half": ("float64", "float16", "float64"),
    "int64 and float32": ("int64", "float32", "int64"),
}
_SHAPES = ((3, 2), (5,), ())


def _values(rng, shape, dtype: str, role: str) -> np.ndarray:
    if dtype == "int64":
        return rng.integers(1, 5, shape).astype(np.int64)
    low, high = (0.1, 0.9) if role in ("weights", "weight") else (0.5, 2.0) if role == "tensor2" else (-1.5, 1.5)
    return rng.uniform(low, high, shape).astype(dtype)


def _tensor_list(lib, name: str, role: str, dtypes: tuple, seed: int) -> list:
    rng = np.random.default_rng(seed)
    tensors = []
    for k, (shape, dtype) in enumerate(zip(_SHAPES, dtypes)):
        if name == "_foreach_mm":
            shape = ((2, 3), (3, 4)) [k % 2] if role == "self" else ((3, 4), (4, 2))[k % 2]
        t = lib.tensor(_values(rng, shape, dtype, role))
        tensors.append(t.t() if t.dim() == 2 and name != "_foreach_mm" else t)  # (a transposed layout)
    return tensors


def _scalar(name: str, role: str, case: str):
    if role == "alpha":
        return 2
    if "norm" in name or "powsum" in name:
        return 3
    if name.startswith("_foreach_pow"):
        return 2.0 if role == "self" else 2
    return 3 if case.startswith("int") else 0.75


def _arguments(lib, name: str, schema, case: str) -> tuple[list, dict]:
    dtypes = CASES[case]
    args, kwargs = [], {}
    for k, param in enumerate(schema.arguments):
        kind = str(param.type)
        if kind == "List[Tensor]":
            value = _tensor_list(lib, name, param.name, dtypes, k)
        elif kind == "Tensor":
            packed = name.startswith("_foreach_addc")  # (a 1-d tensor of one scalar per tensor)
            value = lib.tensor([0.5, 2.0, -1.0]) if packed else lib.tensor(0.75, dtype=lib.float64)
        elif kind == "number":
            value = _scalar(name, param.name, case)
        elif kind == "List[number]":
            value = [0.5, 2, -1.5] if "pow" not in name else [2, 3.0, 0.5]
        else:
            continue  # (dtype, memory_format, non_blocking: their defaults)
        if param.kwarg_only:
            kwargs[param.name] = value
        else:
            args.append(value)
    return args, kwargs


def _outcome(lib, name: str, overload: str, case: str):
    schema = getattr(getattr(torch.ops.aten, name), overload)._schema
    args, kwargs = _arguments(lib, name, schema, case)
    try:
        result = getattr(lib, name)(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    if result is None:  # (an in-place form: what it wrote)
        return None, args[0]
    return type(result).__name__, list(result)


# Per-tensor operators whose kernels tracegrad computes within an ulp of torch's (MKL's vector math, BLAS, libm):
# there each foreach result must carry tracegrad's own per-tensor bits, and torch's within two ulps.
_WITHIN_AN_ULP = frozenset({"acos", "asin", "atan", "cos", "cosh", "exp", "lgamma", "log", "log10", "log2", "sin",
                            "sinh", "sqrt", "tan", "tanh", "mm", "pow"})


def _per_tensor(name: str, overload: str, case: str) -> list:
    """tracegrad's per-tensor function on each tensor of the same arguments (``tg.pow(x, 2)`` for each x)."""
    schema = getattr(getattr(torch.ops.aten, name), overload)._schema
    args, kwargs = _arguments(tg, name, schema, case)
    count = max(len(a) for a in args if isinstance(a, list))
    fn = getattr(tg, name.removeprefix("_foreach_").rstrip("_"))
    return [fn(*[a[k] if isinstance(a, list) else a for a in args], **kwargs) for k in range(count)]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize(("name", "overload"), OVERLOADS)
def test_every_overload_gives_torchs_values(one_thread, name, overload, case):
    ours, theirs = _outcome(tg, name, overload, case), _outcome(torch, name, overload, case)
    assert ours[0] == theirs[0], (ours, theirs)
    if isinstance(theirs[1], str):
        assert ours[1] == theirs[1]
        return
    assert len(ours[1]) == len(theirs[1])
    within_an_ulp = name.removeprefix("_foreach_").rstrip("_") in _WITHIN_AN_ULP
    references = _per_tensor(name, overload, case) if within_an_ulp else theirs[1]
    for a, b, reference in zip(ours[1], theirs[1], references):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert a.stride() == b.stride()
        assert_same_bits(a, reference)
        if within_an_ulp and a.is_floating_point():
            np.testing.assert_allclose(a.double().numpy(), b.double().numpy(), rtol=2 * float(tg.finfo(a.dtype).eps))


def test_every_function_of_torch_exists():
    assert [n for n in NAMES if not callable(getattr(tg, n, None))] == []


# ---- autograd --------------------------------------------------------------------------------------------------------

def _graph_and_grads(lib, name: str, overload: str, inplace: bool):
    schema = getattr(getattr(torch.ops.aten, name), overload)._schema
    args, kwargs = _arguments(lib, name, schema, "float32")
    leaves = []
    for k, value in enumerate(args):
        if isinstance(value, list) and value and isinstance(value[0], lib.Tensor):
            value = [t.detach().double().requires_grad_(k < 2) for t in value]
            leaves += [t for t in value if t.requires_grad]
            args[k] = [t * 1 for t in value] if inplace and k == 0 else value
    out = getattr(lib, name)(*args, **kwargs)
    outs = list(out) if out is not None else args[0]
    graph = recorded_graph(outs)
    total = sum((o * (i + 1)).sum() for i, o in enumerate(outs) if o.requires_grad)
    try:
        grads = lib.autograd.grad(total, leaves, allow_unused=True)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return graph, (type(exc).__name__, str(exc))
    return graph, [None if g is None else g.tolist() for g in grads]


@pytest.mark.parametrize(("name", "overload"), OVERLOADS)
def test_nodes_and_gradients_as_torch(name, overload):
    inplace = name.endswith("_")
    ours, theirs = _graph_and_grads(tg, name, overload, inplace), _graph_and_grads(torch, name, overload, inplace)
    assert ours[0] == theirs[0]
    if isinstance(theirs[1], tuple):
        assert ours[1] == theirs[1]
        return
    assert len(ours[1]) == len(theirs[1])
    for a, b in zip(ours[1], theirs[1]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-12, atol=1e-12)


def _leaf_written(lib):
    plain, leaf = lib.zeros(2), lib.zeros(2, requires_grad=True)
    try:
        lib._foreach_add_([plain, leaf], 1)
    finally:
        assert plain.tolist() == [0.0, 0.0]  # (refused before anything is written)


def _saved_input_written(lib):
    a, c = lib.rand(2, requires_grad=True), lib.rand(2)
    out = lib._foreach_mul([a], [c])
    c.add_(1)  # (saved although only ``a`` needs a gradient)
    out[0].sum().backward()


def _unused_output(lib):
    a, b = lib.rand(2, requires_grad=True), lib.rand(3, requires_grad=True)
    lib._foreach_exp([a, b])[0].sum().backward()
    return b.grad


def _tensor_operand_with_grad(lib, count: int = 1):
    a, s = [lib.rand(2, requires_grad=True) for _ in range(count)], lib.tensor(2.0, requires_grad=True)
    out = lib._foreach_mul(a, s)
    sum(o.sum() for o in out).backward()
    return s.grad


def _tensor_operand_with_grad_for_two(lib):
    return _tensor_operand_with_grad(lib, 2)


@pytest.mark.parametrize("program", [_leaf_written, _saved_input_written, _unused_output, _tensor_operand_with_grad,
                                     _tensor_operand_with_grad_for_two])
def test_autograd_rules_as_torch(program):
    assert raised(tg, program) == raised(torch, program)
    if program is _unused_output:
        assert tg.is_tensor(program(tg)) == torch.is_tensor(program(torch))


def test_a_0d_tensor_needing_no_grad_is_read_as_a_number():
    """torch's parser takes it for a Number where the Scalar overload comes first (``add`` without ``alpha``)."""
    def run(lib):
        one = [lib.ones(2, dtype=lib.int32), lib.tensor(1.0)]
        number = lib.tensor(2.5, dtype=lib.float64)
        results = [lib._foreach_add(one, number), lib._foreach_add(one, number, alpha=2), lib._foreach_mul(one, number),
                   lib._foreach_add(one, number.clone().requires_grad_())]
        names = [lib._foreach_add([lib.rand(2, requires_grad=True)], number)[0].grad_fn.name()]
        return [str(t.dtype).split(".")[-1] for r in results for t in r] + names

    assert run(tg) == run(torch)


# ---- errors ----------------------------------------------------------------------------------------------------------

ERRORS = {
    "lists of two lengths": lambda L: L._foreach_add([L.ones(2), L.ones(2)], [L.ones(2), L.ones(2), L.ones(2)]),
    "empty list": lambda L: L._foreach_exp([]),
    "empty list, scalar": lambda L: L._foreach_add([], 1),
    "empty second list": lambda L: L._foreach_mul([L.ones(2)], []),
    "scalar list too long": lambda L: L._foreach_add([L.ones(2)], [1, 2]),
    "third list too long": lambda L: L._foreach_addcmul([L.ones(2)], [L.ones(2)], [L.ones(2), L.ones(2)]),
    "lerp weights too long": lambda L: L._foreach_lerp([L.ones(2)], [L.ones(2)], [L.ones(2), L.ones(2)]),
    "tensor operand not 0-d": lambda L: L._foreach_mul([L.ones(2)], L.ones(2, 3)),
    "packed scalars 2-d": lambda L: L._foreach_addcdiv([L.ones(2)], [L.ones(2)], [L.ones(2)], L.ones(1, 1)),
    "packed scalars too long": lambda L: L._foreach_addcdiv([L.ones(2)], [L.ones(2)], [L.ones(2)], L.ones(3)),
    "in-place promotion": lambda L: L._foreach_add_([L.ones(2, dtype=L.int64)], 1.5),
    "in-place exp of ints": lambda L: L._foreach_exp_([L.ones(2, dtype=L.int64)]),
    "shapes": lambda L: L._foreach_add([L.ones(2)], [L.ones(3)]),
    "not a list": lambda L: L._foreach_add(L.ones(2), 1),
    "a number in the list": lambda L: L._foreach_add([L.ones(2), 1], 1),
    "a string": lambda L: L._foreach_add([L.ones(2)], "a"),
    "alpha a list": lambda L: L._foreach_add([L.ones(2)], [L.ones(2)], alpha=[1]),
    "norm ord a string": lambda L: L._foreach_norm([L.ones(2)], "fro"),
    "norm of ints": lambda L: L._foreach_norm([L.ones(2, dtype=L.int64)]),
    "norm narrowing dtype": lambda L: L._foreach_norm([L.ones(2, dtype=L.float64)], dtype=L.float32),
    "inf norm of empty": lambda L: L._foreach_norm([L.zeros(0)], float("inf")),
    "-1 norm of empty": lambda L: L._foreach_norm([L.zeros(0)], -1),
    "max of empty": lambda L: L._foreach_max([L.ones(2), L.zeros(0)]),
    "mm of nothing": lambda L: L._foreach_mm([], []),
    "powsum of ints": lambda L: L._foreach_powsum([L.ones(2, dtype=L.int64)]),
    "leaf in place": lambda L: L._foreach_zero_([L.ones(2, requires_grad=True)]),
    "no derivative": lambda L: L._foreach_powsum([L.ones(2, requires_grad=True)])[0].backward(),
    "no in-place derivative": lambda L: L._foreach_maximum_([L.ones(2, requires_grad=True) * 1], 0.5)[0],
}


@pytest.mark.parametrize("program", ERRORS.values(), ids=ERRORS)
def test_errors_as_torch(program):
    assert raised(tg, program) == raised(torch, program)


def test_no_inplace_derivative_raises_at_backward_as_torch():
    def run(lib):
        a = [lib.ones(2, requires_grad=True) * 1]
        lib._foreach_maximum_(a, 0.5)
        node = a[0].grad_fn
        return node.name(), node._sequence_nr(), raised(lib, lambda _: a[0].sum().backward())

    assert run(tg) == run(torch)


# ---- a program: an EMA of a model's parameters in timm's style, and torch's optimizers' calls ----------------------------


def _ema_steps(lib):
    lib.manual_seed(0)
    model = lib.nn.Linear(4, 3)
    ema = [p.detach().clone() for p in model.parameters()]
    for step in range(3):
        with lib.no_grad():
            for p in model.parameters():
                p.add_(0.1 * (step + 1))
            params = list(model.parameters())
            lib._foreach_lerp_(ema, params, 1 - 0.9)
            lib._foreach_mul_(ema, 0.99)
            lib._foreach_add_(ema, params, alpha=0.01)
            norms = lib._foreach_norm(ema)
            lib._foreach_addcdiv_(ema, params, lib._foreach_add(lib._foreach_sqrt(ema), 1.5), [0.1, 0.2])
    return [*ema, *norms]


def test_ema_update_as_torch(one_thread):
    for a, b in zip(_ema_steps(tg), _ema_steps(torch)):
        assert_same_bits(a, b)


def test_ops_aten_overloads():
    x = [tg.ones(2), tg.ones(3)]
    assert tg.ops.aten._foreach_add.List(x, x, alpha=2)[1].tolist() == [3.0, 3.0, 3.0]
    assert tg.ops.aten._foreach_add_.Scalar(x, 1) is None and x[0].tolist() == [2.0, 2.0]
