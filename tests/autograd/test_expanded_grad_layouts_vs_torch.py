"""The gradient ``sum()``'s backward hands on is expanded (every stride 0). Pointwise backward rules fed with it
(``(x * 2).sum()``, ``(x * y).sum()``) lay their results out as PyTorch does without working through
TensorIterator's whole rule: an operand whose strides are all 0 decides nothing in its sort of dims, so NumPy's
C-contiguous result is torch's where the other operands are C-contiguous (``_strides._numpy_agrees``).

- The shortcut agrees with the whole rule (``torch_strides``) and with torch on random operands: expanded ones,
  C-contiguous ones of broadcast shapes, numbers, dims of size 1 and empty results.
- End to end, the gradients of small programs ending in ``sum()`` have torch's strides and bits.
- The common programs take the shortcut (the whole rule is not run).
"""

from __future__ import annotations

import random

import pytest
from _lib import assert_same_bits, np, tg, torch

import tracegrad._strides as strides_mod
from tracegrad._strides import _numpy_agrees, element_strides, pointwise_result, torch_strides


def _shape(rnd: random.Random) -> tuple:
    """2 to 4 dims of sizes 1 to 4, now and then an empty dim."""
    return tuple(0 if rnd.random() < 0.03 else rnd.choice((1, 2, 3, 4)) for _ in range(rnd.choice((2, 3, 4))))


def _broadcast_shape(rnd: random.Random, shape: tuple) -> tuple:
    """``shape`` itself, or one that broadcasts to it (dims of size 1, fewer leading dims)."""
    if rnd.random() < 0.5:
        return shape
    own = tuple(1 if rnd.random() < 0.3 else n for n in shape)
    return own[rnd.randint(0, len(own)):]


def _operand(rnd: random.Random, shape: tuple, dtype):
    """(NumPy operand, torch operand): an expanded one-element tensor, a C-contiguous one, or a number."""
    kind = rnd.choice(("expanded", "expanded", "contiguous", "number"))
    if kind == "number":
        return 2.0, 2.0
    own = _broadcast_shape(rnd, shape)
    if kind == "expanded":
        one = np.array(1.5, dtype).reshape((1,) * rnd.randint(0, len(own)))
        return np.broadcast_to(one, own), torch.from_numpy(one.copy()).expand(own)
    values = (np.arange(int(np.prod(own))) % 5 - 2).astype(dtype).reshape(own)
    return values, torch.from_numpy(values.copy())


def _torch_stride(t) -> tuple:
    return tuple(t.stride())


@pytest.mark.parametrize("seed", range(6))
def test_the_shortcut_agrees_with_the_whole_rule_and_with_torch(seed):
    rnd = random.Random(seed)
    checked = 0
    for _ in range(400):
        shape = _shape(rnd)
        dtype = rnd.choice((np.float32, np.float64))
        first = _operand(rnd, shape, dtype)
        if first[0].__class__ is float:
            continue
        first = (np.broadcast_to(first[0], shape), first[1].expand(shape))  # (the first has the result's shape)
        second = _operand(rnd, shape, dtype)
        result = np.multiply(first[0], second[0])
        theirs = torch.mul(first[1], second[1])
        ops = (first[0], second[0])
        if _numpy_agrees(result, ops):
            checked += 1
            assert element_strides(result) == torch_strides(result.shape, ops, result.dtype), (shape, ops)
        laid_out = pointwise_result(result, first[0], second[0])
        if result.size:  # (an empty result's strides: torch's own rule for empty tensors, not this one)
            assert element_strides(laid_out) == _torch_stride(theirs), (shape, ops)
    assert checked > 50


# (exact arithmetic only: transcendental kernels are not the subject here)
_PROGRAMS = {
    "x * 2": lambda x, y: (x * 2).sum(),
    "2.5 * x": lambda x, y: (2.5 * x).sum(),
    "x * y": lambda x, y: (x * y).sum(),
    "y * x": lambda x, y: (y * x).sum(),
    "(x * y) * 3": lambda x, y: ((x * y) * 3).sum(),
    "x * y + y": lambda x, y: (x * y + y).sum(),
    "relu(x * y)": lambda x, y: (x * y).relu().sum(),
}

# y's leaf shape for x's shape (rows, cols), and the view of it the program multiplies by
_LAYOUTS = {
    "contiguous": (lambda rows, cols: (rows, cols), lambda y: y),
    "transposed": (lambda rows, cols: (cols, rows), lambda y: y.t()),
    "sliced": (lambda rows, cols: (rows, 2 * cols), lambda y: y[:, ::2]),
}


def _leaf(lib, shape: tuple, dtype: str, offset: float):
    values = np.arange(shape[0] * shape[1], dtype=np.float64).reshape(shape) / 7 - offset
    return lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)


@pytest.mark.parametrize("program", list(_PROGRAMS))
@pytest.mark.parametrize("layout", list(_LAYOUTS))
@pytest.mark.parametrize("shape", [(4, 4), (3, 1), (1, 3), (5, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradients_of_sums_laid_out_as_torch(program, layout, shape, dtype):
    leaf_shape, view_of = _LAYOUTS[layout]
    results = []
    for lib in (tg, torch):
        x = _leaf(lib, shape, dtype, 1.5)
        y = _leaf(lib, leaf_shape(*shape), dtype, 0.5)
        for _ in range(2):  # (the second adds into .grad)
            _PROGRAMS[program](x, view_of(y)).backward()
        results.append((x.grad, y.grad))
    (ours_x, ours_y), (theirs_x, theirs_y) = results
    assert ours_x.stride() == theirs_x.stride()
    assert_same_bits(ours_x, theirs_x)
    assert (ours_y is None) == (theirs_y is None)
    if theirs_y is not None:
        assert ours_y.stride() == theirs_y.stride()
        assert_same_bits(ours_y, theirs_y)


@pytest.mark.parametrize("program", ["x * 2", "x * y", "relu(x * y)"])
def test_common_programs_skip_the_whole_layout_rule(program, monkeypatch):
    """The gradient of a sum of contiguous 4x4 leaves is laid out by the shortcut: TensorIterator's whole rule
    (``torch_strides``) does not run in the backward."""
    x = tg.randn(4, 4, requires_grad=True)
    y = tg.randn(4, 4, requires_grad=True)
    loss = _PROGRAMS[program](x, y)

    def refuse(*args, **kwargs):
        raise AssertionError("the whole layout rule ran")

    monkeypatch.setattr(strides_mod, "torch_strides", refuse)
    loss.backward()
    assert x.grad.stride() == (4, 1)
