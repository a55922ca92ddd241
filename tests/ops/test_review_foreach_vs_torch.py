"""Review of ``torch._foreach_*`` (0a03806) against torch: in-place forms on lists that share tensors (nodes made
from the histories before any write, outputs saved after all of them), the tensors torch's foreach nodes save for
their dtypes alone, keyword ``self`` and a 0-d tensor for ``_foreach_pow``'s Scalar base, complex ``ord``s,
``torch.utils._foreach_utils``, and ``torch.pow(number, t)``'s contiguous result."""

from __future__ import annotations

import pytest

from tests._lib import np, raised, recorded_graph, tg, torch


def _leaves(lib, count: int = 2, size: int = 2) -> list:
    return [lib.tensor(np.linspace(0.3, 1.7, size) + k, dtype=lib.float64, requires_grad=True) for k in range(count)]


def _outcome(lib, program) -> tuple:
    """The written tensors' values, their graph and the leaves' gradients, or the error."""
    leaves = _leaves(lib)
    try:
        written = program(lib, *leaves)
        total = sum((t * (i + 1)).sum() for i, t in enumerate(written))
        grads = lib.autograd.grad(total, leaves, allow_unused=True)
    except RuntimeError as exc:
        return "RuntimeError", str(exc)
    return ([t.tolist() for t in written], recorded_graph(written),
            [None if g is None else g.tolist() for g in grads])


def _twice(lib, a, b):
    x = a * 1
    lib._foreach_mul_([x, x], 2.0)
    return [x]


def _twice_with_a_list(lib, a, b):
    x = a * 1
    lib._foreach_mul_([x, x], [b, b])
    return [x]


def _twice_saving_the_result(lib, a, b):
    x = a * 1
    lib._foreach_exp_([x, x])  # (ExpBackward0 saves the result: both nodes after both writes)
    return [x]


def _crossed(lib, a, b):
    x = [a * 1, b * 1]
    lib._foreach_add_(x, [x[1], x[0]])  # (the second node's edge for x[0] is its history before the write)
    return x


def _twice_lerp(lib, a, b):
    x = a * 1
    lib._foreach_lerp_([x, x], [b, b], 0.5)
    return [x]


def _twice_with_a_shared_tensor(lib, a, b):
    x = a * 1
    lib._foreach_mul_([x, x], b.sum())
    return [x]


def _views_saving_the_result(lib, a, b):
    base = lib.cat([a, b]) * 1
    lib._foreach_exp_([base[:3], base[1:]])
    return [base]


def _view_after_its_base(lib, a, b):
    base = lib.cat([a, b]) * 1
    lib._foreach_mul_([base[1:3], base], 3.0)
    return [base]


def _twice_without_derivative(lib, a, b):
    x = a * 1
    lib._foreach_maximum_([x, x], 0.5)
    return [x, lib.tensor([float(x.grad_fn.next_functions[0][0].name() == "MulBackward0")])]


def _then_once_more(lib, a, b):
    x = a * 1
    lib._foreach_mul_([x, x], 2.0)
    lib._foreach_mul_([x], 3.0)
    return [x]


@pytest.mark.parametrize("program", [_twice, _twice_with_a_list, _twice_saving_the_result, _crossed, _twice_lerp,
                                     _twice_with_a_shared_tensor, _views_saving_the_result, _view_after_its_base,
                                     _twice_without_derivative, _then_once_more])
def test_inplace_on_lists_sharing_tensors_as_torch(program):
    ours, theirs = _outcome(tg, program), _outcome(torch, program)
    if isinstance(theirs[0], list) and isinstance(ours[0], list) and program is _twice_without_derivative:
        theirs, ours = theirs[:2], ours[:2]  # (no gradient to compare: NotImplemented)
    assert ours == theirs


# ---- the tensors torch's foreach nodes save for their dtypes ----------------------------------------------------

_DTYPE_SAVERS = {
    "add.Scalar": lambda L, x, y: L._foreach_add([x], 2.0),
    "add.List": lambda L, x, y: L._foreach_add([x], [y], alpha=2),
    "add.ScalarList": lambda L, x, y: L._foreach_add([x], [2.0]),
    "add.Tensor": lambda L, x, y: L._foreach_add([x], y.sum()),
    "sub.List": lambda L, x, y: L._foreach_sub([x], [y]),
    "sub.Scalar": lambda L, x, y: L._foreach_sub([x], 2.0),
    "mul.Scalar": lambda L, x, y: L._foreach_mul([x], 2.0),
    "div.ScalarList": lambda L, x, y: L._foreach_div([x], [2.0]),
    "addcmul.Scalar": lambda L, x, y: L._foreach_addcmul([x], [y], [y], 0.5),
    "addcdiv.ScalarList": lambda L, x, y: L._foreach_addcdiv([x], [y], [y + 2], [0.5]),
}


def _written_after(lib, name: str, which: int):
    a, b = _leaves(lib)
    x, y = a * 1, b * 1
    out = _DTYPE_SAVERS[name](lib, x, y)
    with lib.no_grad():
        (x, y)[which].add_(1)
    out[0].sum().backward()


def _backward_twice(lib, name: str):
    x, y = _leaves(lib)
    total = _DTYPE_SAVERS[name](lib, x, y)[0].sum()
    total.backward()
    total.backward()


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("name", _DTYPE_SAVERS)
def test_tensors_saved_for_their_dtypes_as_torch(name, which):
    def program(lib):
        _written_after(lib, name, which)

    def twice(lib):
        _backward_twice(lib, name)

    assert raised(tg, program) == raised(torch, program)
    assert raised(tg, twice) == raised(torch, twice)


# ---- arguments -------------------------------------------------------------------------------------------------------

_CALLS = {
    "self by keyword": lambda L: L._foreach_add(self=[L.ones(2)], scalar=1),
    "self by keyword, in place": lambda L: L._foreach_mul_(self=[L.ones(2)], scalars=[3]),
    "self by keyword, unary": lambda L: L._foreach_neg(self=[L.ones(2)]),
    "self by keyword, norm": lambda L: L._foreach_norm(self=[L.ones(2)], ord=1),
    "pow's base by keyword": lambda L: L._foreach_pow(self=2, exponent=[L.ones(2)]),
    "pow's base a 0-d tensor": lambda L: L._foreach_pow(L.tensor(2), [L.ones(2)]),
    "pow's base a 0-d float tensor, int list": lambda L: L._foreach_pow(L.tensor(2.5), [L.ones(2, dtype=L.int64)]),
    "pow's base a 0-d tensor needing grad": lambda L: L._foreach_pow(L.tensor(2.0, requires_grad=True),
                                                                     [L.ones(2)]),
    "norm of a complex ord": lambda L: L._foreach_norm([L.ones(2)], 1j),
    "norm of a real complex ord": lambda L: L._foreach_norm([L.ones(2)], 2 + 0j),
    "powsum of a complex ord": lambda L: L._foreach_powsum([L.ones(2)], 1j),
    "powsum of a real complex ord": lambda L: L._foreach_powsum([L.ones(2)], 3 + 0j),
    "powsum of ints, complex ord": lambda L: L._foreach_powsum([L.ones(2, dtype=L.int64)], 1j),
}


def _result_or_error(lib, program):
    try:
        result = program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc).split("\n")[0]
    return [(str(t.dtype).split(".")[-1], t.tolist()) for t in result]


@pytest.mark.parametrize("program", _CALLS.values(), ids=_CALLS)
def test_calls_as_torch(program):
    assert _result_or_error(tg, program) == _result_or_error(torch, program)


# ---- torch.utils._foreach_utils ----------------------------------------------------------------------------------------


def _grouped(lib, lists, *args, **kwargs):
    try:
        groups = lib.utils._foreach_utils._group_tensors_by_device_and_dtype(lists, *args, **kwargs)
    except (RuntimeError, TypeError) as exc:
        return type(exc).__name__, str(exc).replace("tracegrad", "torch")
    return [((str(device), str(dtype).split(".")[-1]),
             [[None if t is None else next(k for k, s in enumerate(lists[i]) if s is t) for t in grouped]
              for i, grouped in enumerate(tensors)], indices)
            for (device, dtype), (tensors, indices) in groups.items()]


_GROUPINGS = {
    "dtypes, newest group first": lambda L: ([[L.ones(1, dtype=d) for d in (L.uint8, L.float32, L.int32, L.int8,
                                                                           L.float32, L.float16, L.complex128,
                                                                           L.bool, L.float64)]], True),
    "two lists, with Nones": lambda L: ([[L.ones(2), L.ones(2, dtype=L.float64), L.ones(3)],
                                        [None, L.ones(2, dtype=L.float64), L.ones(3)]], True),
    "an empty second list": lambda L: ([[L.ones(2), L.ones(2, dtype=L.float64)], []],),
    "float steps with int params": lambda L: ([[L.ones(1, dtype=L.int64)], [L.ones(1)]],),
    "half with int params": lambda L: ([[L.ones(1, dtype=L.int64)], [L.ones(1, dtype=L.float16)]],),
    "lengths": lambda L: ([[L.ones(2)], [L.ones(2), L.ones(2)]],),
    "no lists": lambda L: ([],),
    "an empty first list": lambda L: ([[]],),
    "None first": lambda L: ([[None]],),
    "a number": lambda L: ([[L.ones(2)], [1.0]],),
    "a flat list": lambda L: ([L.ones(2)],),
    "flag a list": lambda L: ([[L.ones(2)]], []),
    "flag None": lambda L: ([[L.ones(2)]], None),
    "flag 2.5": lambda L: ([[L.ones(2)]], 2.5),
    "tuples": lambda L: (((L.ones(2),),), 1),
    "three arguments": lambda L: ([[L.ones(2)]], True, True),
}


@pytest.mark.parametrize("arguments", _GROUPINGS.values(), ids=_GROUPINGS)
def test_group_tensors_by_device_and_dtype_as_torch(arguments):
    assert _grouped(tg, *arguments(tg)) == _grouped(torch, *arguments(torch))


def test_foreach_utils_as_torch():
    def run(lib):
        utils = lib.utils._foreach_utils
        t = lib.ones(2)
        sub = t.as_subclass(type("Sub", (lib.Tensor,), {}))
        grouped = utils._group_tensors_by_device_and_dtype([[t * 1]], with_indices=True)
        return [utils._get_foreach_kernels_supported_devices(), utils._get_fused_kernels_supported_devices(),
                utils._device_has_foreach_support(lib.device("cpu")),
                utils._device_has_foreach_support(lib.device("meta")),
                utils._has_foreach_support([t, None], lib.device("cpu")),
                utils._has_foreach_support([sub], lib.device("cpu")), lib.is_grad_enabled(),
                next(iter(grouped.values()))[0][0][0].requires_grad, lib._C._get_privateuse1_backend_name()]

    assert run(tg) == run(torch)


# ---- torch.pow(number, t): a contiguous result -----------------------------------------------------------------


def _layouts(lib) -> dict:
    return {
        "transposed": lib.arange(6.0).reshape(2, 3).t(),
        "channels last": lib.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=lib.channels_last) / 100,
        "channels last 3d": lib.arange(240.0).reshape(2, 3, 2, 4, 5).contiguous(
            memory_format=lib.channels_last_3d) / 100,
        "permuted": (lib.arange(24.0).reshape(2, 3, 4) / 10).permute(2, 0, 1),
        "size-1 dims transposed": lib.arange(6.0).reshape(1, 6, 1).transpose(0, 2),
        "empty, transposed": lib.zeros(0, 3).t(),
        "integers, transposed": lib.arange(6).reshape(2, 3).t(),
        "expanded": lib.arange(3.0).reshape(3, 1).expand(3, 4),
        "sliced": lib.arange(12.0).reshape(3, 4)[:, ::2],
    }


_SCALAR_FIRST = {
    "pow(2, t)": lambda L, t: L.pow(2, t),
    "pow(1, t)": lambda L, t: L.pow(1, t),
    "pow(2.5, t)": lambda L, t: L.pow(2.5, t),
    "2 ** t": lambda L, t: 2 ** t,
    "float_power(2, t)": lambda L, t: L.float_power(2, t),
    "_foreach_pow(2, [t])": lambda L, t: L._foreach_pow(2, [t])[0],
    "pow(0-d tensor, t)": lambda L, t: L.pow(L.tensor(2.0), t),  # (pow.Tensor_Tensor: t's layout)
    "add(2, t)": lambda L, t: L.add(2, t),
}


@pytest.mark.parametrize("layout", list(_layouts(torch)))
@pytest.mark.parametrize("call", _SCALAR_FIRST.values(), ids=_SCALAR_FIRST)
def test_scalar_first_results_laid_out_as_torch(call, layout):
    def run(lib):
        result = call(lib, _layouts(lib)[layout])
        return result.stride(), str(result.dtype).split(".")[-1], np.asarray(result.tolist(), dtype=float)

    ours, theirs = run(tg), run(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)  # (the layouts are compared here, not pow's bits)
