"""Edges of indexing, read and written, on one (2, 3, 4) tensor, against torch: several ellipses, a zero slice step,
the dtypes of index tensors (byte masks too) and of written values, lists read as index tensors or as tuples, where empty slices and split pieces lie
(storage offset, strides), which index out of bounds torch names, lone keys of a 0-d tensor. Each case gives
torch's result (dtype, shape, strides, storage offset, view or not, values, version counter) or torch's error."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import tg, torch

ELLIPSES = [
    "x[..., ...]", "x[..., 0, ...]", "x[0, ..., ...]", "x[..., None, ...]", "x[..., ..., ...]", "x[None, ..., ...]",
    "x[0, ..., 1, ..., 2]", "x[..., 1, 2, ...]", "x[..., 0, 0, 0, ...]", "x[..., 0, 0, 0, 0, ...]",
    "x[..., ..., 0]", "x[..., 1, ..., 2]", "x[..., ..., ..., 0]", "x[..., ..., ..., 4]", "x[..., ..., 0:1]",
    "x[..., ..., 1:]", "x[..., ..., None]", "x[..., ..., True]", "x[..., ..., L.tensor(0)]", "x[..., ..., [0]]",
    "x[..., [0], ..., [0]]", "x[[0], ..., ...]", "x[[0, 1], ..., ...]", "x[L.tensor([0.5]), ..., ...]",
    "x[[0], ..., ..., None]", "x[L.tensor([True, False, True]), ..., ...]", "x[..., ..., L.tensor([0.5])]",
    "L.arange(4.0)[..., ..., ..., 0]", "L.tensor(5.0)[..., ...]", "L.tensor(5.0)[..., None, ...]",
    "SET x[..., ...] = 2", "SET x[..., 0, ...] = 2", "SET x[[0], ..., ...] = 2", "SET x[..., ..., 0] = 2",
    "SET x[..., ..., [0]] = 2",
]
STEPS = [
    "x[::0]", "x[:, ::0]", "x[1:1:0]", "x[::0, 5]", "x[5, ::0]", "x[::0, 1.5]", "x[[0, 1], ::0]", "x[..., ::0]",
    "x[::L.tensor(0)]", "x[::-1]", "x[::-1, ::0]", "x[::0.5]", "x[0.5:]", "x[:'a']", "x[::0.5, ::0]",
    "x[L.tensor(1):]", "x[::L.tensor(2)]", "x[2 ** 63:]", "x[-2 ** 64:]", "x[L.tensor(1.0):]",
    "x[L.tensor([1, 2]):]", "x[:[1]]",
    "SET x[::0] = 1", "SET x[:, ::0] = 1", "SET x[::-1] = 1", "SET x[::0] = L.ones(3, 4)",
]
DTYPES = [
    "x[L.tensor([0, 1], dtype=L.int8)]", "x[L.tensor([0, 1], dtype=L.int16)]", "x[L.tensor([0, 1], dtype=L.int32)]",
    "x[L.tensor([1, 0], dtype=L.uint8)]", "x[L.tensor([0, 1], dtype=L.float32)]", "x[L.tensor([], dtype=L.int8)]",
    "x[0, L.tensor([0, 1], dtype=L.int8)]", "x[:, L.tensor([0, 1], dtype=L.int16), 0]",
    "x[L.tensor([0, 1], dtype=L.int8), 5]", "x[L.tensor([0, 1], dtype=L.int8), [0, 1, 1]]",
    "x[L.tensor([True, False]), L.tensor([0], dtype=L.int8)]", "x[L.tensor([0, 9], dtype=L.int8)]",
    "x[L.tensor([1, 0, 1], dtype=L.bool), L.tensor([0.5])]", "x[L.tensor(1, dtype=L.int8)]",
    "x[L.tensor(-1, dtype=L.int16), 0]", "x[L.tensor(5, dtype=L.int16)]", "x[L.tensor(1, dtype=L.uint8), 0, 0, 0]",
    "x[L.tensor(True), 0, 0, 0]", "x[[L.tensor(0, dtype=L.int8)]]",
    "SET x[L.tensor([0, 1], dtype=L.int8)] = 1", "SET x[L.tensor([0, 1], dtype=L.int16)] = L.ones(3, 4)",
    "SET x[L.tensor([0, 1], dtype=L.int32)] = 1", "SET x[L.tensor(1, dtype=L.int8)] = 1",
    "SET x.index_put_((L.tensor([0, 1], dtype=L.int8),), L.tensor(1.0))",
    "SET x.index_put_((L.tensor([0, 1], dtype=L.int16),), L.tensor(1.0))",
    "SET x.index_put_((L.tensor([0, 1], dtype=L.int32),), L.tensor(1.0))",
    "x.index_put((L.tensor([0, 1], dtype=L.int8),), L.tensor(1.0))",
]
BYTE_MASKS = [
    "SET x[L.tensor([1, 0], dtype=L.uint8)] = 1", "SET x[L.tensor([1, 0], dtype=L.uint8)] = L.ones(1)",
    "SET x[L.tensor([1, 0], dtype=L.uint8)] = L.ones(4)", "SET x[L.tensor([1, 0, 1], dtype=L.uint8)] = 1",
    "SET x[L.tensor([[1, 0, 1], [0, 1, 1]], dtype=L.uint8)] = 1", "SET x[0, L.tensor([1, 0, 1], dtype=L.uint8)] = 1",
    "SET x[L.tensor([1, 0], dtype=L.uint8), [0]] = 1", "SET x[L.tensor([1, 0], dtype=L.bool)] = 1",
    "SET x.index_put_((L.tensor([1, 0], dtype=L.uint8),), L.tensor(1.0))",
    "SET x.index_put_((L.tensor([1, 0], dtype=L.uint8),), L.tensor(1.0), accumulate=True)",
    "x[L.tensor([[1, 0, 1], [0, 1, 1]], dtype=L.uint8), 0]", "x[L.tensor([[1, 0, 1], [0, 1, 1]], dtype=L.uint8), 0, 0]",
]
VALUE_DTYPES = [
    "SET x[[0]] = L.ones(3, 4, dtype=L.int64)", "SET x[[0]] = L.tensor(1, dtype=L.float64)",
    "SET x[[0]] = L.tensor(1 + 1j)", "SET x[[0, 1], [0, 1]] = L.ones(3, 4, dtype=L.int64)",
    "SET x[x > 5] = L.tensor(1, dtype=L.int64)", "SET x[x > 5] = L.tensor([1], dtype=L.float64)",
    "SET x[x > 5] = L.ones(18, dtype=L.int64)", "SET x[x[:, :, 0] > 5] = L.tensor(1, dtype=L.float64)",
    "SET x[x > 5] = L.tensor(1 + 1j)", "SET x[x > 5] = L.tensor(1, dtype=L.complex64)",
    "SET x.index_put_((L.tensor([0]),), L.tensor(1, dtype=L.float64))",
    "SET x.index_put_((L.tensor([0]),), L.ones(3, 4, dtype=L.float64), accumulate=True)",
    "SET x.index_put_((x > 5,), L.tensor(1, dtype=L.int64))",
    "SET x.index_put_((x > 5,), L.tensor(1, dtype=L.int64), accumulate=True)",
    "x.index_put((L.tensor([0]),), L.ones(3, 4, dtype=L.int64))",
]
LISTS = [
    "x[[0.5, 1.7]]", "x[[0, 1.0]]", "x[[-1.5]]", "x[[2.5]]", "x[[0, 1 + 0j]]", "x[[0, 1], [0.0, 1.9]]",
    "x[[0, None]]", "x[[[0], [1]]]", "x[[[0, 1]]]", "x[[slice(None), 0]]", "x[[0, Ellipsis]]", "x[[L.tensor(1), 0]]",
    "x[[L.tensor(1), 0.0]]", "x[[[True, False]]]", "x[[0, 1] * 20]", "x[np.array([0.5, 1.2])]",
    "x[np.array([1, 0], dtype=np.uint8)]", "x[np.array([[0, 1]])]", "SET x[[0, 1.0]] = 5", "x[2 ** 63]",
    "x[-2 ** 63 - 1]", "x[[2 ** 63]]", "x[[0, 2 ** 64]]", "x[[2 ** 63 - 1]]", "SET x[2 ** 63] = 1",
]
EMPTY_PLACES = [
    "x[5:]", "x[:, 5:]", "x[1:1]", "x[:, :, 9:]", "x[-1:0]", "x[1:1:2]", "x[-9:0]", "x[1:][..., 9:]",
    "x[5:][:, 1:]", "x[5:][:, 1]", "x[1, 5:]", "x[1][2:2:3]", "x[1:][..., 9:][:, 3:]", "x.select(1, 2)[4:]",
    "x.narrow(0, 2, 0)", "x.narrow(1, 1, 0)", "x.narrow(2, -1, 0)", "x.split([0, 2, 0], 0)", "x.split([1, 0, 2], 1)",
    "x.chunk(2, 0)", "x[:, :0].chunk(2, 1)", "x[:, :0].split(1, 1)", "x[:, :0].unbind(0)", "x[:, 2:2].unbind(1)",
    "x.permute(2, 1, 0)[:, 7:]", "x.expand(3, 2, 3, 4)[:, 5:]", "x[None][:, 5:]", "x[:, 5:].unsqueeze(0)",
    "x[:, 5:][None]", "x[5:][None, ..., None]", "x[:, :, ::2][:, 7:]", "x[2::3]", "x[:, 3::5]",
    "x.as_strided((0, 2), (1, 1), 5)", "x[:, 5:].select(2, 1)",
]
BOUNDS = [
    "x[:, [5]]", "x[:, :, [5]]", "x[L.tensor([True, False]), :, [9]]", "x[:, [[0, 1, 1]], [[9], [1]]]",
    "x[[0, 9], [9, 0]]", "x[[1, 0], [0, 9], [9, 0]]", "x[:, :0][[5]]", "x[:, :0][:, :, [5]]", "x[[5], :0]",
    "L.zeros(0, 1)[[0]]", "L.zeros(2, 0)[:, [-1]]", "L.zeros(2, 0)[[5], [0]]", "SET x[:, :0][[5]] = 1",
    "SET x[:, :, [5]] = 1", "SET x[[0, 9], [9, 0]] = 1", "x.index_put((L.tensor([0, 1]), L.tensor([1, 7])), "
    "L.tensor(1.0), accumulate=True)",
]
ZERO_DIM = [
    "L.tensor(1.0)[0]", "L.tensor(1.0)[-1]", "L.tensor(1.0)[3]", "L.tensor(1.0)[0:]", "L.tensor(1.0)[:]",
    "L.tensor(1.0)[::-1]", "L.tensor(1.0)[np.int64(0)]", "L.tensor(1.0)[(0,)]", "L.tensor(1.0)[L.tensor(0)]",
    "SET x[False] = 5", "SET x[(False,)] = 5", "SET x[False] = [1, 2]",
]


def _described(t) -> tuple:
    return (str(t.dtype), tuple(t.shape), t.stride(), t.storage_offset(), t._base is not None,
            t.detach().reshape(-1).tolist())


def _outcome(lib, source: str):
    x = lib.arange(24.0).reshape(2, 3, 4)
    scope = {"x": x, "L": lib, "np": np}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if source.startswith("SET "):
                exec(source[4:], scope)  # noqa: S102 - the fixed statements above
                return (*_described(x), x._version)
            result = eval(source, scope)  # noqa: S307 - the fixed expressions above
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return type(exc).__name__, str(exc)
    if isinstance(result, tuple):
        return [_described(r) for r in result]
    return _described(result)


@pytest.mark.parametrize("source", ELLIPSES + STEPS + DTYPES + BYTE_MASKS + VALUE_DTYPES + LISTS + EMPTY_PLACES + BOUNDS + ZERO_DIM)
def test_same_outcome_as_torch(source):
    assert _outcome(tg, source) == _outcome(torch, source)


GRADIENTS = [
    ("x[..., 0, ...]", None), ("x[0, ..., 1, ...]", None), ("x[[0.5, 1.7]]", None), ("x[[[0], [1]]]", None),
    ("x[L.tensor(1, dtype=L.int8)]", None), ("x[..., ...]", "2.0"), ("x[[0], ..., ...]", "v"),
    ("x[0.5:2:1][[0]]", None), ("x[:, :0][[5]]", None), ("x[:, 5:]", "v"),
    ("x[x > 5]", "v.double()"), ("x[x > 5]", "v.double()[:1]"),
]


def _gradients(lib, source: str, value: str | None):
    x = lib.arange(24.0).reshape(2, 3, 4).requires_grad_()
    scope = {"x": x, "L": lib}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if value is None:
                y = eval(source, scope)  # noqa: S307 - the fixed expressions above
                (y * lib.arange(float(y.numel())).reshape(y.shape)).sum().backward()
                return y.grad_fn.name(), x.grad.reshape(-1).tolist()
            z = x * 1
            scope["x"] = z
            shape = eval(source, scope).shape  # noqa: S307
            v = lib.arange(float(np.prod(shape))).reshape(shape).requires_grad_()
            scope["v"] = v
            exec(f"{source} = {value}", scope)  # noqa: S102
            (z * lib.arange(24.0).reshape(2, 3, 4)).sum().backward()
            return z.grad_fn.name(), x.grad.reshape(-1).tolist(), v.grad
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("source,value", GRADIENTS)
def test_same_gradients_as_torch(source, value):
    ours, theirs = _gradients(tg, source, value), _gradients(torch, source, value)
    if len(ours) == 3 and ours[2] is not None:  # (the value's gradient, as a list)
        ours, theirs = ours[:2] + (ours[2].tolist(),), theirs[:2] + (theirs[2].tolist(),)
    assert ours == theirs
