"""A thirty-fourth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and
compared: tensors used as ordinary Python objects and mixed with NumPy.

These add what the other program files do not run: iterating tensors (rows, ``list``, ``zip``, ``enumerate``,
unpacking and its errors, ``reversed``, 0-d and empty tensors, ``len``) with the gradients that flow back through
the rows; ``in`` with numbers, tensors, NaN and strings, and tensors in lists (``index``, ``remove``, ``count``);
``bool``/``int``/``float``/``complex``/``operator.index`` of 0-d and one-element tensors and their refusals,
tensors as list indices, slice bounds and ``range`` arguments; hashing (dict keys, set members, ``lru_cache``);
Python's builtins over tensors and lists of tensors (``sum``, ``max``/``min`` with keys, ``sorted``, ``any``/
``all``, ``abs``, ``round``, ``divmod``, three-argument ``pow``), ``math.*`` on 0-d tensors, ``operator`` and
``functools.reduce`` over tensor lists; ``np.asarray``/``np.array(dtype=...)`` of tensors, ``.numpy()`` of views
(strides, shared memory, broadcast zero strides), NumPy ufuncs and scalars beside tensors of every kind, and
``ndarray`` + tensor in both orders; ``torch.tensor``/``as_tensor``/``from_numpy`` of lists of NumPy scalars,
mixed nested lists, broadcast, Fortran-ordered, unsigned, byte-swapped and read-only arrays; ``copy.copy``/
``deepcopy``/pickle of leaves that require grad, non-leaves, views sharing a storage inside a container,
Parameters and tensors carrying a ``.grad``; and weak references to tensors. Values are compared to a tolerance
(everything here is exact in both libraries).

Differences these programs found, now fixed (``tests/ops/test_program34_findings_vs_torch.py``):
- ``reversed(t)`` was Python's reverse iterator; torch's ``__reversed__`` is ``t.flip(0)`` (a 0-d tensor itself);
- ``t.numpy()`` returned the tensor's own array object (the same at each call, the very array given to
  ``from_numpy``, one that owns its data); torch makes a new array over the memory at each call;
- ``pickle`` of tensors sharing a storage (a tensor and its views in a dict) loaded them still sharing; torch
  pickles each with a storage of its own (a whole copy, at the view's offset and strides);
- the argument parser's "invalid combination of arguments - got (...)" (``np.var(t)``, ``np.std(t, axis=0)``),
  its "some of the keywords were incorrect" lines and the legacy constructors' refusal listed keywords in reverse
  order; torch lists them in the iteration order of a libstdc++ ``std::unordered_map``, and the legacy
  constructor's notes follow torch's rule, not counts observed;
- ``pow(t, 2, 5)`` said "Tensor.__pow__() takes 2 positional arguments but 3 were given" (torch: "unsupported
  operand type(s) for ** or pow(): 'Tensor', 'int', 'int'").

Left: a ``weakref.proxy`` of a tensor is taken by torch functions (``torch.sin(proxy)``), which torch refuses
("Multiple dispatch failed for 'torch.sin'; all __torch_function__ handlers returned NotImplemented ... tensor
subclass <class 'weakref.ProxyType'>"): tracegrad recognises tensors by ``isinstance``, which a proxy passes;
Tensor's operator dunders called directly with a wrong number of arguments or keywords (``t.__add__()``,
``t.__mul__(other=2)``, ``t.__sub__(2, 5)``) raise Python's TypeError where torch's return NotImplemented or
bind them as ``add``'s parser does; ``weakref.ref(torch.Size(...))``/``weakref.ref(torch.float32)`` name the
types ``'Size'``/``'dtype'`` (torch: ``'torch.Size'``/``'torch.dtype'``); ``weakref.WeakMethod(t.sum)`` is
taken (torch's methods are builtins: refused); ``t.__getstate__()`` returns tracegrad's internals (torch: None)
and ``Tensor.__setstate__`` is missing; float32 ``exp`` is an ulp off torch's in places (the weak-reference
program squares instead).
"""

from __future__ import annotations

import copy
import functools
import io
import math
import operator
import pickle
import weakref

import numpy as np
import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _iterating_rows(lib, show):
    """A batch walked row by row as Python code does: ``for row in t``, ``list``, ``zip`` with labels,
    ``enumerate``, unpacking (and its errors), ``reversed``, iterating 0-d and empty tensors, ``len``, and the
    gradient that comes back through rows taken by iteration."""
    torch = lib
    torch.manual_seed(340)
    batch = torch.randn(3, 2, requires_grad=True)
    labels = torch.tensor([1, 0, 1])
    total = 0
    for i, (row, label) in enumerate(zip(batch, labels)):
        show(i, row, label, type(label).__name__, row.grad_fn.name())
        total = total + row.sum() * label
    total.backward()
    show(total, batch.grad)
    rows = list(batch.detach())
    show(len(rows), [r.shape for r in rows], rows[0]._base is None, rows[0].is_contiguous())
    first, second, third = torch.arange(3)
    show(first, second + third, type(first).__name__, first.dim())
    top, bottom = torch.arange(6).reshape(2, 3)
    show(top, bottom, top.shape)
    head, *rest = torch.arange(5) * 10
    show(head, rest, len(rest))
    show_outcome(show, lambda: operator.itemgetter(0)(tuple(torch.arange(2))))
    show_outcome(show, lambda: [a for a, b in [torch.arange(3)]])
    show_outcome(show, lambda: list(reversed(torch.arange(4))))
    show_outcome(show, lambda: reversed(torch.arange(6).reshape(3, 2)))
    show_outcome(show, lambda: list(torch.tensor(5.0)))
    show_outcome(show, lambda: len(torch.tensor(5.0)))
    show_outcome(show, lambda: iter(torch.tensor(5.0)))
    show_outcome(show, lambda: list(torch.empty(0, 3)))
    show_outcome(show, lambda: list(torch.empty(2, 0)))
    show(len(torch.zeros(4, 2)), len(torch.zeros(0)), len(torch.zeros(2, 3).T))
    it = iter(torch.tensor([7, 8]))
    show(next(it), next(it))
    show_outcome(show, lambda: next(it))
    mask = torch.tensor([True, False])
    show([bool(m) for m in mask], [type(m.item()).__name__ for m in mask], [m.dtype for m in mask])
    show([x.item() for x in torch.tensor([1.5, 2.5], dtype=torch.float16)])
    grid = torch.arange(8).reshape(2, 2, 2)
    show([[c.tolist() for c in plane] for plane in grid])
    show(dict(zip(["a", "b"], torch.tensor([1.0, 2.0]))))


def _membership_and_lists(lib, show):
    """``in`` over tensors (numbers, 0-d tensors, NaN, a string, a list) and tensors kept in Python lists: the
    identity shortcut, ``index``/``remove``/``count`` that compare elementwise, and their ambiguity errors."""
    torch = lib
    t = torch.tensor([1.0, 2.0, float("nan")])
    show(2 in t, 2.0 in t, 3 in t, True in torch.tensor([0, 1]), float("nan") in t)
    show(torch.tensor(2.0) in t, torch.tensor([1.0, 2.0]) in torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    show(torch.tensor([1.0, 5.0]) in torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    show(torch.tensor(1) in torch.arange(3), 1.5 in torch.arange(3), torch.tensor([[2]]) in torch.arange(3))
    show_outcome(show, lambda: torch.tensor([]) in torch.arange(3))
    show_outcome(show, lambda: "a" in t)
    show_outcome(show, lambda: None in t)
    show_outcome(show, lambda: [1.0, 2.0] in t)
    show_outcome(show, lambda: (1, 2) in torch.arange(3))
    show_outcome(show, lambda: 1 + 2j in torch.tensor([1 + 2j]))
    show_outcome(show, lambda: torch.tensor([5.0, 6.0]) in t)
    a, b, c = torch.ones(2), torch.zeros(2), torch.tensor(3.0)
    items = [a, b, c]
    show(a in items, items.index(a), items[1] is b)
    show_outcome(show, lambda: c in items)
    show_outcome(show, lambda: items.count(a))
    show_outcome(show, lambda: torch.ones(2) in items)
    show_outcome(show, lambda: items.index(torch.zeros(2)))
    show_outcome(show, lambda: torch.tensor(3.0) in [c])
    show_outcome(show, lambda: torch.tensor(4.0) in [c])
    show_outcome(show, lambda: [c].index(torch.tensor(3.0)))
    show_outcome(show, lambda: [torch.tensor(1.0), c].index(torch.tensor(3.0)))
    scalars = [torch.tensor(1.0), torch.tensor(2.0)]
    scalars.remove(torch.tensor(2.0))
    show(scalars, len(scalars))
    show_outcome(show, lambda: [torch.tensor(1.0)].remove(torch.tensor(9.0)))
    show_outcome(show, lambda: 2 in torch.tensor([1.0, 2.0], requires_grad=True))
    show_outcome(show, lambda: torch.tensor([1, 2]).__contains__(2))
    show_outcome(show, lambda: torch.arange(4).__contains__([1]))


def _scalar_conversions(lib, show):
    """A logger turning results into Python numbers: ``bool``/``int``/``float``/``complex``/``operator.index`` of
    0-d and one-element tensors (integer, float, bool, complex, requiring grad), their refusals, and tensors used
    as list indices, slice bounds, ``range`` arguments and ``hex``."""
    torch = lib
    loss = torch.tensor(0.7, requires_grad=True) * 2
    show(float(loss), int(loss), bool(loss), complex(loss), type(float(loss)).__name__)
    one = torch.tensor([[2.5]])
    show(float(one), int(one), bool(one), complex(one))
    show(int(torch.tensor(-2.7)), int(torch.tensor([True])), float(torch.tensor(3)), bool(torch.tensor(0.0)))
    show(complex(torch.tensor(1 + 2j)), complex(torch.tensor(2, dtype=torch.int8)))
    show(operator.index(torch.tensor(4)), operator.index(torch.tensor([4], dtype=torch.uint8)))
    for convert in (lambda: float(torch.tensor(1 + 2j)), lambda: int(torch.tensor(1j)),
                    lambda: int(torch.tensor(float("nan"))), lambda: int(torch.tensor(float("inf"))),
                    lambda: int(torch.tensor([1, 2])), lambda: float(torch.empty(0)), lambda: bool(torch.empty(0)),
                    lambda: bool(torch.tensor([1.0, 2.0])), lambda: complex(torch.ones(2)),
                    lambda: operator.index(torch.tensor(4.0)), lambda: operator.index(torch.tensor([1, 2])),
                    lambda: operator.index(torch.tensor(True)), lambda: operator.index(torch.tensor(4, requires_grad=False) * 1.0),
                    lambda: int(torch.tensor(2.0, requires_grad=True)), lambda: bool(torch.tensor(2.0, requires_grad=True))):
        show_outcome(show, convert)
    words = ["zero", "one", "two", "three", "four"]
    i = torch.tensor(2)
    show(words[i], words[torch.tensor([3])], words[i:torch.tensor(4)], words[::torch.tensor(2)])
    show(list(range(torch.tensor(3))), list(range(torch.tensor(1), 5, torch.tensor(2))), hex(torch.tensor(255)))
    show(bin(torch.tensor(5, dtype=torch.int16)), "abc" * torch.tensor(2), [0] * torch.tensor(3))
    for use in (lambda: words[torch.tensor(1.0)], lambda: words[torch.tensor([1, 2])],
                lambda: list(range(torch.tensor(2.0))), lambda: hex(torch.tensor(2.5)),
                lambda: words[torch.tensor(True)], lambda: "ab" * torch.tensor(1.5)):
        show_outcome(show, use)


def _hashing_and_dict_keys(lib, show):
    """Tensors as dict keys and set members (hashed by identity, not by value), caching a function on a tensor
    argument, a Parameter as a key, and the grouping by value that people write instead (``item()`` keys)."""
    torch = lib
    a, b = torch.tensor(1.0), torch.tensor(1.0)
    show(hash(a) == id(a), hash(a) == hash(b), len({a, b}), len({a, a}), a in {a}, b in {a})
    cache = {a: "first"}
    show(cache[a], cache.get(b, "missing"))
    show_outcome(show, lambda: cache[torch.tensor(1.0)])
    p = torch.nn.Parameter(torch.ones(2))
    show(hash(p) == id(p), {p: 1}[p], p in {p}, type(next(iter({p}))).__name__)
    d = {torch.tensor([1, 2]): "vec"}
    show(list(d.values()), type(next(iter(d))).__name__)
    labels = torch.tensor([2, 0, 2, 1, 0, 2])
    counts: dict = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    show(len(counts), sorted(counts.values()))
    by_value: dict = {}
    for label in labels:
        by_value[label.item()] = by_value.get(label.item(), 0) + 1
    show(sorted(by_value.items()))
    show(sorted(set(labels.tolist())), len(set(labels)), labels.unique().tolist())

    calls = []

    @functools.lru_cache(maxsize=None)  # noqa: UP033 - the form users write
    def expensive(x):
        calls.append(1)
        return x * 2

    x = torch.tensor([3.0])
    show(expensive(x), expensive(x), expensive(torch.tensor([3.0])), len(calls))
    show(hash(torch.Size([2, 3])) == hash((2, 3)), {torch.Size([2]): 1}[(2,)], torch.float32 in {torch.float32: 1})
    show(hash(torch.float32) == hash(torch.float32), len({torch.float32, torch.float, torch.float64}))
    y = torch.ones(2, requires_grad=True) * 3
    show(len({y, y.detach()}), y.detach() in {y}, {y: 1}.get(y))


def _builtins_over_tensors(lib, show):
    """Python's builtins over tensors and lists of tensors: ``sum`` (with start), ``max``/``min`` (with keys, and
    of a 2-d tensor), ``sorted``, ``any``/``all``, ``abs``, ``round`` with digits, ``divmod`` and ``pow`` with a
    modulus, with the gradients through ``sum`` of a list of losses."""
    torch = lib
    torch.manual_seed(341)
    losses = [(torch.randn(3, requires_grad=True) ** 2).mean() for _ in range(3)]
    total = sum(losses)
    show(total, total.grad_fn.name(), type(sum(losses, 0.0)).__name__, sum(losses, torch.tensor(10.0)))
    show(sum(torch.arange(5)), sum(torch.arange(6).reshape(3, 2)), sum(torch.tensor([True, True, False])))
    show(max(torch.tensor([3, 9, 2])), min(torch.tensor([3.5, -1.0])), max(losses), min(losses, key=lambda v: -v))
    show_outcome(show, lambda: max(torch.arange(4).reshape(2, 2)))
    show_outcome(show, lambda: max(torch.tensor(3.0)))
    show_outcome(show, lambda: max(torch.tensor(2.0), 1.0))
    show_outcome(show, lambda: min(torch.tensor([1.0]), torch.tensor([0.5])))
    show(sorted(torch.tensor([3, 1, 2])), sorted(losses, reverse=True)[0], sorted([torch.tensor(2), 1, 3.5]))
    show_outcome(show, lambda: sorted([torch.ones(2), torch.zeros(2)]))
    show(any(torch.tensor([0, 0, 1])), all(torch.tensor([1.0, 0.5])), any(torch.zeros(0)), all(torch.zeros(0)))
    show_outcome(show, lambda: any(torch.ones(2, 2)))
    show_outcome(show, lambda: all(torch.tensor(1.0)))
    v = torch.tensor([-1.55, 2.45, 0.5, -0.5])
    show(abs(v), abs(torch.tensor(-3)), v.round(decimals=1), round(v.sum().item(), 1))
    show_outcome(show, lambda: abs(torch.tensor([True])))
    for rounding in (lambda: round(v), lambda: round(v, 1), lambda: round(torch.tensor(2.675), 2),
                     lambda: round(torch.tensor(7)), lambda: round(torch.tensor([1234.0]), -2)):
        show_outcome(show, rounding)
    show_outcome(show, lambda: divmod(torch.tensor([7, -7]), 3))
    show_outcome(show, lambda: divmod(7, torch.tensor(3)))
    show_outcome(show, lambda: pow(torch.tensor([2, 3]), 2, 5))
    show(pow(torch.tensor([2.0, 3.0]), 2), pow(2, torch.tensor([1, 2])), 2 ** torch.tensor(0.5), (-8) ** torch.tensor(2))
    show(torch.tensor([7, -7]) // 2, torch.tensor([7, -7]) % 3, 7 % torch.tensor([3, -3]), 7.5 // torch.tensor(2))
    show(math.fsum(torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64)), sum([torch.tensor(1), torch.tensor(2)]).dtype)


def _math_module_and_reduce(lib, show):
    """``math.*`` on 0-d and one-element tensors (and the refusals for more elements), then ``operator``
    functions and ``functools.reduce`` over lists of tensors: products of matrices, an in-place ``iadd`` chain
    that writes into its first tensor, and reductions whose dtypes promote."""
    torch = lib
    x = torch.tensor(2.0, requires_grad=True)
    show(math.sqrt(x), math.exp(torch.tensor([1.0])), math.log(torch.tensor(8), 2), math.isnan(torch.tensor(float("nan"))))
    show(math.floor(torch.tensor(2.7)), math.ceil(torch.tensor(-2.7)), type(math.floor(torch.tensor([2.7]))).__name__)
    show_outcome(show, lambda: math.trunc(torch.tensor(-2.7)))
    show(math.isclose(torch.tensor(0.1) + torch.tensor(0.2), 0.3), math.hypot(torch.tensor(3.0), torch.tensor(4.0)))
    show(math.gcd(torch.tensor(12), torch.tensor(18)), math.factorial(torch.tensor(5)), math.comb(torch.tensor(5), 2))
    show(math.prod([torch.tensor(2), torch.tensor(3)]), math.dist(torch.tensor([0.0, 0.0]), torch.tensor([3.0, 4.0])))
    for call in (lambda: math.sqrt(torch.ones(2)), lambda: math.floor(torch.ones(2)), lambda: math.gcd(torch.tensor(2.0), 4),
                 lambda: math.factorial(torch.tensor(2.0)), lambda: math.sqrt(torch.tensor(1j)),
                 lambda: math.floor(torch.tensor(float("inf"))), lambda: math.isfinite(torch.tensor([1.0, 2.0]))):
        show_outcome(show, call)
    mats = [torch.eye(2) * (k + 1) for k in range(3)]
    show(functools.reduce(operator.matmul, mats), functools.reduce(torch.mm, mats).sum())
    ints = [torch.tensor([1, 2]), torch.tensor([3, 4], dtype=torch.int32), torch.tensor([0.5, 0.5])]
    show(functools.reduce(operator.add, ints), functools.reduce(operator.mul, ints[:2]).dtype)
    show(functools.reduce(operator.truediv, ints[:2]), functools.reduce(operator.floordiv, ints[:2]))
    acc = torch.zeros(2)
    result = functools.reduce(operator.iadd, [torch.ones(2), torch.ones(2) * 2], acc)
    show(result is acc, acc)
    w = torch.ones(2, requires_grad=True)
    terms = [w * k for k in range(1, 4)]
    prod = functools.reduce(operator.mul, terms).sum()
    prod.backward()
    show(prod, w.grad, prod.grad_fn.name())
    show(operator.neg(torch.tensor([1, -2])), operator.invert(torch.tensor([True, False])), operator.not_(torch.tensor(0)))
    show(operator.and_(torch.tensor([5]), torch.tensor([3])), operator.lshift(torch.tensor([1]), 3), operator.pos(torch.tensor([-1.0])))
    show_outcome(show, lambda: operator.invert(torch.tensor([1.5])))
    show_outcome(show, lambda: operator.not_(torch.ones(2)))
    show_outcome(show, lambda: functools.reduce(operator.add, []))
    show(functools.reduce(torch.maximum, [torch.tensor([1, 5]), torch.tensor([4, 2]), torch.tensor([3, 3])]))
    show(list(map(torch.Tensor.item, torch.tensor([1.5, 2.5]))), list(filter(None, torch.tensor([0, 2, 0, 3]))))


def _numpy_views_and_arrays(lib, show):
    """``np.asarray``/``np.array(t, dtype=...)`` of tensors of several dtypes (and their refusals), ``.numpy()`` of
    views (strides in bytes, memory shared with the base, writes that show through), of expanded tensors (zero
    strides), of requires-grad views (refused) and through ``detach()``."""
    torch = lib
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    show(np.asarray(base).dtype, np.array(base, dtype=np.float64).dtype, np.array(base, dtype=int).dtype)
    show(np.array(base, dtype=np.int8)[2].tolist(), np.asarray(base, dtype="f2").dtype, np.array(base, copy=True).flags.owndata)
    show(np.asarray(torch.tensor([True])).dtype, np.asarray(torch.tensor([1], dtype=torch.int16)).dtype,
         np.asarray(torch.tensor([1 + 1j])).dtype, np.asarray(torch.tensor(1.5, dtype=torch.float16)).dtype)
    show_outcome(show, lambda: np.asarray(torch.ones(2, dtype=torch.bfloat16)))
    show_outcome(show, lambda: torch.ones(2, dtype=torch.bfloat16).numpy())
    show_outcome(show, lambda: np.array(torch.ones(2, dtype=torch.bfloat16), dtype=np.float32))
    for view in (base.T, base[:, 1], base[::2, ::3], base[1], base[1:, 2:], base.view(2, 6), base.unsqueeze(0)):
        arr = view.numpy()
        show(arr.shape, arr.strides, arr.flags.c_contiguous, np.shares_memory(arr, base.numpy()))
    col = base[:, 1].numpy()
    col[0] = -1.0
    base[2, 1] = -2.0
    show(base[:, 1], col.tolist())
    wide = torch.tensor([1.0, 2.0]).expand(3, 2)
    show(wide.numpy().strides, wide.numpy().flags.writeable, np.asarray(wide).tolist())
    show(torch.tensor(5.0).numpy().shape, type(torch.tensor(5.0).numpy()).__name__, torch.zeros(0, 2).numpy().shape)
    w = torch.ones(2, 3, requires_grad=True)
    show_outcome(show, lambda: w[0].numpy())
    show_outcome(show, lambda: w.T.numpy())
    show_outcome(show, lambda: np.array(w, dtype=np.float64))
    d = w.detach()[0].numpy()
    d[1] = 9.0
    show(w, w.detach()[:, 1].numpy().strides, w.numpy(force=True).flags.owndata)
    sl = torch.arange(10)[2:8:2]
    show(sl.numpy().strides, sl.numpy().tolist(), sl.storage_offset(), sl.numpy().base is not None)
    show(type(np.sin(torch.tensor([0.0, 1.0]))).__name__, np.sin(torch.tensor([0.0, 1.0])).dtype)
    show(np.add(torch.tensor([1, 2]), 1).dtype, np.multiply(torch.tensor([1.0], dtype=torch.float16), 2).dtype)
    grid = torch.tensor([[3.0, -1.0], [2.0, 5.0]])
    for np_call in (lambda: np.var(grid), lambda: np.std(grid, axis=0), lambda: np.cumsum(grid, axis=0),
                    lambda: np.round(grid / 3, 2), lambda: np.argsort(grid[0]), lambda: np.transpose(grid),
                    lambda: np.reshape(grid, (4,)), lambda: np.prod(grid), lambda: np.ravel(grid),
                    lambda: np.trace(grid), lambda: np.squeeze(grid[None])):
        show_outcome(show, np_call)


def _numpy_scalars_and_arrays_in_arithmetic(lib, show):
    """NumPy scalars of every kind on both sides of tensor arithmetic and the result dtypes (torch treats them as
    Python numbers), ``ndarray + tensor`` in both orders (which side wins), and NumPy integers as indices, dims
    and sizes."""
    torch = lib
    f16 = torch.tensor([1.0, 2.0], dtype=torch.float16)
    i8 = torch.tensor([1, 2], dtype=torch.int8)
    u8 = torch.tensor([250, 5], dtype=torch.uint8)
    show(np.float32(2) * f16, f16 * np.float64(0.5), i8 * np.int64(300), u8 + np.uint8(10), i8 * np.float16(1.5))
    show(np.bool_(True) + i8, i8 & np.int16(3), f16 * np.complex64(1j), (np.int32(3) - i8).dtype, u8 / np.uint16(5))
    show(np.float64(3) ** i8, i8 ** np.int64(2), np.float32(1) / f16, np.int8(-1) * u8, i8 > np.float32(1.5))
    show(type(np.float64(2) * torch.ones(2)).__name__, type(np.float32(2) + torch.tensor(1.0)).__name__)
    t = torch.tensor([1.0, 2.0])
    arr32, arr64 = np.array([10.0, 20.0], dtype=np.float32), np.array([10.0, 20.0])
    show(t + arr32, t + arr64, type(t - arr64).__name__, t * arr32[:1])
    show_outcome(show, lambda: arr32 + t)
    show_outcome(show, lambda: arr64 * t)
    show_outcome(show, lambda: arr64 - t)
    show_outcome(show, lambda: arr64 / t)
    show(t * np.array(3), t + np.array([1, 2]), t ** np.array(2))
    show_outcome(show, lambda: np.array(3) * t)
    show_outcome(show, lambda: np.float64(3) * t)
    show_outcome(show, lambda: np.array([1, 2]) + t)
    show_outcome(show, lambda: (np.array([1.0, 2.0], dtype=np.float64) * torch.ones(2, requires_grad=True)))
    show_outcome(show, lambda: torch.ones(2, requires_grad=True) * np.array([1.0, 2.0]))
    show_outcome(show, lambda: t + np.array(["a", "b"]))
    show_outcome(show, lambda: t @ np.array([1.0, 1.0], dtype=np.float32))
    show_outcome(show, lambda: t == np.array([1.0, 5.0]))
    show_outcome(show, lambda: t < np.float64(1.5))
    m = torch.arange(12).reshape(3, 4)
    show(m[np.int64(2)], m[np.int32(1), np.int16(3)], m[:, np.uint8(0)], m[np.array([0, 2]), np.int64(1)])
    show(m.sum(np.int64(1)), m.transpose(np.int64(0), np.int8(1)).shape, m.view(np.int64(4), -1).shape)
    show(torch.zeros(np.int64(2), np.int32(3)).shape, torch.ones(np.array(2)).shape, m.narrow(0, np.int64(1), 2).shape)
    show_outcome(show, lambda: m[np.float64(1)])
    show_outcome(show, lambda: m[np.bool_(True)].shape)
    show_outcome(show, lambda: torch.zeros(np.float32(2)))
    show_outcome(show, lambda: m.repeat(np.int64(2), 1).shape)
    show_outcome(show, lambda: torch.full((2,), np.bool_(True)).dtype)


def _building_tensors_from_numpy_lists(lib, show):
    """``torch.tensor``/``as_tensor``/``from_numpy`` of what NumPy code leaves around: lists of NumPy scalars of
    one and of mixed kinds, nested lists mixing arrays, tensors and numbers, lists of 0-d tensors and of 0-d
    arrays, and the refusals (ragged rows, lists of longer tensors, NumPy scalars given to from_numpy)."""
    torch = lib
    for data in ([np.float32(1), np.float32(2)], [np.float32(1), np.float64(2)], [np.int64(1), 2.5],
                 [np.int8(1), np.int8(2)], [np.uint8(200), 1], [np.bool_(True), np.bool_(False)], [np.bool_(True), 2],
                 [np.float16(1), np.int32(2)], [np.complex64(1j), 1], [[1, 2], np.array([3, 4])],
                 [np.array([1.0, 2.0]), np.array([3.0, 4.0])], [np.array(1.0), np.array(2)],
                 [torch.tensor(1.0), torch.tensor(2.0)], [torch.tensor(1), 2.5], [[torch.tensor(1)], [np.int64(2)]],
                 [np.array([1, 2], dtype=np.int16), [3, 4]], [torch.tensor([1.5]), torch.tensor([2.5])],
                 (np.float32(0.5), (1, 2)), [np.float64(1e300), 1]):
        show_outcome(show, lambda data=data: (torch.tensor(data), torch.tensor(data).dtype))
    show_outcome(show, lambda: torch.tensor([torch.tensor([1, 2]), torch.tensor([3, 4])]))
    show_outcome(show, lambda: torch.tensor([[1, 2], np.array([3])]))
    show_outcome(show, lambda: torch.tensor([np.array([1, 2]), [3]]))
    show_outcome(show, lambda: torch.tensor([np.str_("a")]))
    show_outcome(show, lambda: torch.tensor([np.datetime64("2020-01-01")]))
    show_outcome(show, lambda: torch.tensor([torch.tensor(1.0, requires_grad=True), 2.0]))
    show_outcome(show, lambda: torch.as_tensor([np.float32(1), np.float32(2)]).dtype)
    show_outcome(show, lambda: torch.as_tensor([np.int64(1), np.float16(2)], dtype=torch.float64))
    show_outcome(show, lambda: torch.as_tensor(np.float32(2.5)))
    show_outcome(show, lambda: torch.as_tensor(np.int16(7)).dtype)
    show_outcome(show, lambda: torch.from_numpy(np.float32(2.5)))
    show_outcome(show, lambda: torch.from_numpy(np.array(2.5, dtype=np.float32)).shape)
    show_outcome(show, lambda: torch.tensor(np.array([np.float32(1), 2], dtype=object)))
    show_outcome(show, lambda: torch.tensor(np.bool_(False)))
    show_outcome(show, lambda: torch.tensor([[np.float32(1)], [np.float32(2), np.float32(3)]]))
    show_outcome(show, lambda: torch.tensor([1, [2]]))
    show_outcome(show, lambda: torch.tensor([[1], 2]))
    show_outcome(show, lambda: torch.tensor([np.int64(2**62), np.float32(1)]).dtype)


def _awkward_arrays(lib, show):
    """Arrays that are not plain C-ordered native-endian writable blocks: broadcast (zero strides, read-only),
    Fortran-ordered, unsigned of every width, byte-swapped back to native order, read-only copies with
    ``torch.tensor`` (no warning), and memory that the tensor and the array keep sharing."""
    torch = lib
    row = np.arange(3, dtype=np.float32)
    wide = np.broadcast_to(row, (2, 3))
    t = torch.from_numpy(wide)
    show(t, t.stride(), t.is_contiguous())
    show(torch.tensor(wide).stride(), torch.as_tensor(wide).stride(), torch.asarray(wide).stride())
    fortran = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    ft = torch.from_numpy(fortran)
    show(ft.stride(), ft.is_contiguous(), ft.T.is_contiguous(), torch.tensor(fortran).stride())
    for dt in (np.uint16, np.uint32, np.uint64, np.int16, np.float16, np.complex64, np.complex128, np.bool_):
        show_outcome(show, lambda dt=dt: torch.from_numpy(np.array([1, 0], dtype=dt)).dtype)
    show_outcome(show, lambda: torch.from_numpy(np.array([1], dtype=np.longdouble)))
    show_outcome(show, lambda: torch.from_numpy(np.zeros(2, dtype=[("a", "f4"), ("b", "i4")])))
    show_outcome(show, lambda: torch.from_numpy(np.array(["2020-01-01"], dtype="datetime64[D]")))
    swapped = np.arange(4, dtype=">i4")
    native = swapped.byteswap().view(swapped.dtype.newbyteorder())
    show(native.dtype.byteorder, torch.from_numpy(native), native.tolist())
    show_outcome(show, lambda: torch.from_numpy(swapped.astype("<i4")).tolist())
    show_outcome(show, lambda: torch.tensor(swapped.astype(np.int32)).dtype)
    show_outcome(show, lambda: torch.as_tensor(swapped))
    frozen = np.ones(3)
    frozen.setflags(write=False)
    show(torch.tensor(frozen), torch.tensor(frozen).dtype)
    show_outcome(show, lambda: torch.as_tensor(frozen, dtype=torch.float32))
    show_outcome(show, lambda: torch.asarray(frozen))
    flipped = np.arange(6).reshape(2, 3)[:, ::-1]
    show_outcome(show, lambda: torch.tensor(flipped))
    show_outcome(show, lambda: torch.as_tensor(flipped).stride())
    show_outcome(show, lambda: torch.from_numpy(np.ascontiguousarray(flipped)).stride())
    shared = np.zeros(4, dtype=np.float32)
    ts = torch.from_numpy(shared)
    ts[1:3] += 5
    shared[0] = -1
    show(ts, shared.tolist(), ts.numpy() is shared, np.shares_memory(ts.numpy(), shared))
    show(torch.from_numpy(shared[1:]).storage_offset(), torch.from_numpy(shared[::2]).stride())


def _copying_and_pickling(lib, show):
    """Checkpointing Python objects that hold tensors: ``copy.copy``/``deepcopy`` and pickle of a leaf that
    requires grad (with its ``.grad``), of non-leaves (refused), of views sharing a storage inside a dict, and of
    Parameters; what is shared and what is copied afterwards."""
    torch = lib
    torch.manual_seed(342)
    leaf = torch.randn(3, requires_grad=True)
    (leaf * 2).sum().backward()
    shallow, deep = copy.copy(leaf), copy.deepcopy(leaf)
    show(shallow is leaf, shallow.requires_grad, shallow.grad, deep.requires_grad, deep.grad, deep.is_leaf)
    with torch.no_grad():
        leaf.add_(1)
    show(torch.equal(shallow, leaf), torch.equal(deep, leaf), deep.grad is leaf.grad)
    loaded = pickle.loads(pickle.dumps(leaf))
    show(loaded.requires_grad, loaded.grad, loaded.is_leaf, type(loaded).__name__)
    nonleaf = leaf * 3
    show_outcome(show, lambda: copy.deepcopy(nonleaf))
    show_outcome(show, lambda: copy.copy(nonleaf))
    show_outcome(show, lambda: pickle.dumps(nonleaf)[:0])
    show_outcome(show, lambda: copy.deepcopy(nonleaf.detach()).requires_grad)
    base = torch.arange(6.0)
    state = {"base": base, "head": base[:3], "tail": base[3:], "col": base.view(2, 3)[:, 0]}
    cloned = copy.deepcopy(state)
    cloned["head"][0] = 100.0
    show(cloned["base"], base[0], cloned["col"], cloned["tail"].storage_offset(), cloned["col"].stride())
    restored = pickle.loads(pickle.dumps(state))
    restored["base"][3] = -3.0
    show(restored["tail"], restored["col"], restored["head"]._base is None)
    buf = io.BytesIO()
    torch.save(state, buf)
    buf.seek(0)
    again = torch.load(buf)
    again["base"].zero_()
    show(again["head"], again["col"])
    p = torch.nn.Parameter(torch.ones(2))
    p.grad = torch.full((2,), 0.5)
    for c in (copy.copy(p), copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        show(type(c).__name__, c.requires_grad, c.grad, c is p, c.data_ptr() == p.data_ptr())
    frozen = torch.nn.Parameter(torch.zeros(1), requires_grad=False)
    show(copy.deepcopy(frozen).requires_grad, pickle.loads(pickle.dumps(frozen)).requires_grad, repr(copy.deepcopy(frozen)))
    pair = [p, p]
    dup = copy.deepcopy(pair)
    show(dup[0] is dup[1], type(dup[0]).__name__)
    view_of_leaf = leaf[:2]
    show_outcome(show, lambda: copy.deepcopy(view_of_leaf))
    show_outcome(show, lambda: copy.deepcopy(leaf.detach()[:2]).shape)
    x = torch.ones(2)
    x.note = "tagged"
    show(copy.deepcopy(x).note, pickle.loads(pickle.dumps(x)).note, copy.copy(x).note)


def _weak_references(lib, show):
    """Weak references to tensors: ``weakref.ref`` that dies with its tensor, a ``WeakValueDictionary`` cache of
    activations, a ``WeakKeyDictionary`` of per-tensor notes, ``finalize`` callbacks, and what a graph keeps
    alive (a saved input) after the user drops their name for it."""
    torch = lib
    t = torch.ones(3)
    r = weakref.ref(t)
    show(r() is t, type(r()).__name__)
    del t
    show(r() is None)
    cache = weakref.WeakValueDictionary()
    act = torch.arange(4.0)
    cache["layer1"] = act
    show(list(cache.keys()), cache["layer1"])
    del act
    show(list(cache.keys()), cache.get("layer1"))
    notes = weakref.WeakKeyDictionary()
    a, b = torch.zeros(1), torch.zeros(1)
    notes[a], notes[b] = "a", "b"
    show(len(notes), notes[a], notes.get(torch.zeros(1)))
    del a
    show(len(notes), list(notes.values()))
    finished = []
    c = torch.zeros(2)
    weakref.finalize(c, finished.append, "collected")
    del c
    show(finished)
    x = torch.tensor([2.0], requires_grad=True)
    inp = x * 1
    ref_inp = weakref.ref(inp)
    out = inp * inp
    del inp
    show(ref_inp() is not None)
    ref_sq = weakref.ref(out)
    y = out.sum()
    del out
    show(ref_sq() is None)
    y.backward()
    show(x.grad)
    p = torch.nn.Parameter(torch.ones(1))
    rp = weakref.ref(p)
    show(type(rp()).__name__, rp() is p)
    proxy = weakref.proxy(torch.arange(3))
    show_outcome(show, lambda: proxy.sum())
    holder = torch.arange(3.0)
    prox = weakref.proxy(holder)
    show(prox.sum(), prox.shape, prox * 2)


PROGRAMS = [
    _iterating_rows,
    _membership_and_lists,
    _scalar_conversions,
    _hashing_and_dict_keys,
    _builtins_over_tensors,
    _math_module_and_reduce,
    _numpy_views_and_arrays,
    _numpy_scalars_and_arrays_in_arithmetic,
    _building_tensors_from_numpy_lists,
    _awkward_arrays,
    _copying_and_pickling,
    _weak_references,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
