"""PyTorch's "barebones" unsigned dtypes (uint16, uint32, uint64) against torch 2.13: same values, dtypes, and
error types and messages.

torch stores, converts, prints and indexes them, and a few kernels compute with them (``*``, ``&``, ``==``, ``sort``,
``cat``, ``sum``/``prod``/``cumsum`` into int64, anything promoted with a floating operand); most kernels refuse them
(``"add_stub" not implemented for 'UInt32'``), and promotion with any non-floating dtype is refused.
``tracegrad/ops/barebones_unsigned.py`` holds that support matrix as data.

Driven by the OpInfo database: every entry's samples, made unsigned (its main dtype's tensors turned into each of
the three dtypes, with non-negative values), through the op, its aliases and its in-place form. ``PROGRAMS`` adds
what the database does not reach: Python operators, factories, conversions, dtype attributes, promotion queries,
printing and serialization. ``KNOWN`` lists the entries that still differ, with why.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from _lib import saved_and_loaded, tg, to_numpy, torch
from opinfo import op_db
from opinfo.core import Arr, Call, SampleInput, _tree_map, resolve

UNSIGNED = ("uint16", "uint32", "uint64")

# entry id -> why it still differs from torch
KNOWN = {
    "addcdiv": "torch refuses integer addcdiv_ before an in-place shape mismatch (as for int64)",
    "dot": "torch's inner of two strided vectors goes through sum(dtype=...) and names sum_cpu",
    "frobenius_norm": "tracegrad's norm(p='fro') computes integer input that torch refuses (as for int64)",
    "nn.functional.batch_norm.train": "without running statistics torch fails in mean() first",
    "nn.functional.linear": "tracegrad's fused linear computes without the addmm kernel that refuses",
    "nn.functional.linear_cross_entropy": "tracegrad's fused linear computes without the addmm kernel that refuses",
    "nn.functional.scaled_dot_product_attention.math": "torch's math path refuses mixed dtypes in bmm first",
}


def _source_dtype(op) -> str:
    return next((d for d in ("float64", "int64", "uint8", "int32", "bool", "float32") if d in op.dtypes), op.dtypes[0])


def _made_unsigned(sample: SampleInput, source: str, target: str) -> SampleInput:
    """The sample with its ``source``-dtype tensors as ``target`` tensors: floats doubled and rounded, integers
    made non-negative (index tensors and masks stay as they are)."""
    def convert(x):
        if isinstance(x, np.ndarray):
            x = Arr(x)
        if not isinstance(x, Arr) or x.dtype != source:
            return x
        v = x.values
        v = np.round(np.abs(v) * 2) if v.dtype.kind == "f" else np.abs(v) if v.dtype.kind == "i" else v
        return Arr(np.asarray(v).astype(target), x.layout)
    return SampleInput(sample.name, _tree_map(convert, sample.args), _tree_map(convert, sample.kwargs))


def _outcome(lib, op, sample, path: str):
    try:
        result = Call(lib, op, sample, requires_grad=False).run(resolve(lib, path))
    except Exception as exc:  # noqa: BLE001 - the exception itself is compared
        return type(exc).__name__, str(exc).replace("tracegrad", "torch")
    return [(str(r.dtype).replace("tracegrad", "torch"), tuple(r.shape), to_numpy(r))
            for r in (result if isinstance(result, (tuple, list)) else [result]) if hasattr(r, "dtype")]


def _same(ours, theirs, tol) -> bool:
    if isinstance(theirs, tuple) or isinstance(ours, tuple):
        return ours == theirs
    if len(ours) != len(theirs):
        return False
    for (dt, shape, a), (dt2, shape2, b) in zip(ours, theirs):
        if dt != dt2 or shape != shape2:
            return False
        # (floating results of integer input round as for int64 input: MKL's functions, within tolerance)
        if a.dtype.kind in "fc" and not np.allclose(a, b, rtol=tol[0], atol=tol[1], equal_nan=True):
            return False
        if a.dtype.kind not in "fc" and not np.array_equal(a, b):
            return False
    return True


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("op", op_db, ids=lambda op: op.id)
def test_database_entry_with_unsigned_input_like_torch(op):
    if op.id in KNOWN:
        pytest.skip(KNOWN[op.id])
    source = _source_dtype(op)
    paths = [op.name, *op.aliases] + ([op.inplace] if op.inplace else [])
    differ = []
    for sample in op.samples(source):
        for dtype in UNSIGNED:
            unsigned = _made_unsigned(sample, source, dtype)
            for path in paths:
                expected, got = _outcome(torch, op, unsigned, path), _outcome(tg, op, unsigned, path)
                if not _same(got, expected, op.tolerance("float32")):
                    differ.append(f"{path}/{sample.name}/{dtype}: torch {str(expected)[:300]}, tracegrad "
                                  f"{str(got)[:300]}")
    assert not differ, "\n".join(differ)


def _u(L, dtype="uint32", values=(1, 2, 3)):
    return L.tensor(list(values), dtype=getattr(L, dtype))


PROGRAMS = {
    # NumPy's unsigned arrays (16-bit PNG images) and back
    "from_numpy uint16": lambda L: L.from_numpy(np.array([1, 65535], np.uint16)),
    "from_numpy uint32": lambda L: L.from_numpy(np.array([[1, 2**32 - 1]], np.uint32)),
    "from_numpy uint64": lambda L: L.from_numpy(np.array([2**64 - 1], np.uint64)),
    "from_numpy 0-d uint64": lambda L: L.from_numpy(np.array(5, np.uint64)),
    "from_numpy longdouble": lambda L: L.from_numpy(np.array([1], np.longdouble)),
    "as_tensor uint16": lambda L: L.as_tensor(np.array([1], np.uint16)),
    "numpy": lambda L: L.tensor(_u(L, "uint64").numpy().astype(np.int64)),
    # torch.tensor: Python ints, NumPy scalars
    "tensor uint64 max": lambda L: L.tensor([2**64 - 1, 3], dtype=L.uint64),
    "tensor uint64 2**63": lambda L: L.tensor([2**63], dtype=L.uint64),
    "tensor uint64 2**64": lambda L: L.tensor([2**64], dtype=L.uint64),
    "tensor uint64 -1": lambda L: L.tensor([-1], dtype=L.uint64),
    "tensor uint32 -1": lambda L: L.tensor([-1], dtype=L.uint32),
    "tensor uint16 -1": lambda L: L.tensor([-1], dtype=L.uint16),
    "tensor uint32 2**32": lambda L: L.tensor([2**32], dtype=L.uint32),
    "tensor uint32 1.5": lambda L: L.tensor([1.5], dtype=L.uint32),
    "tensor int 2**64-1": lambda L: L.tensor(2**64 - 1),
    "tensor np.uint64": lambda L: L.tensor(np.uint64(5)),
    "tensor [np.uint64]": lambda L: L.tensor([np.uint64(5)]),
    "tensor [np.uint64, 1]": lambda L: L.tensor([np.uint64(5), 1]),
    "tensor [np.uint32]": lambda L: L.tensor([np.uint32(5)]),
    "tensor np.uint16": lambda L: L.tensor(np.uint16(5)),
    "tensor [np.uint16, np.uint8]": lambda L: L.tensor([np.uint16(5), np.uint8(1)]),
    # Python operators
    "x + x": lambda L: _u(L) + _u(L),
    "x + 1": lambda L: _u(L) + 1,
    "x + True": lambda L: _u(L) + True,
    "x + 1.5": lambda L: _u(L) + 1.5,
    "x + float tensor": lambda L: _u(L) + L.ones(3),
    "x + half tensor": lambda L: _u(L, "uint16") + L.ones(3, dtype=L.float16),
    "x + 0-d int64": lambda L: _u(L) + L.tensor(1),
    "x + uint8": lambda L: _u(L) + _u(L, "uint8"),
    "x + int64": lambda L: _u(L, "uint64") + L.tensor([1, 2, 3]),
    "x + uint16": lambda L: _u(L) + _u(L, "uint16"),
    "x + complex": lambda L: _u(L) + L.ones(3, dtype=L.complex64),
    "x + bool": lambda L: _u(L) + L.tensor([True, False, True]),
    "x - x": lambda L: _u(L) - _u(L),
    "x * x": lambda L: _u(L) * _u(L),
    "x * 2": lambda L: _u(L, "uint64") * 2,
    "x * 2.5": lambda L: _u(L) * 2.5,
    "x / 2": lambda L: _u(L) / 2,
    "x / x": lambda L: _u(L, "uint16") / _u(L, "uint16"),
    "x // 2": lambda L: _u(L) // 2,
    "x % 2": lambda L: _u(L) % 2,
    "x ** 2": lambda L: _u(L) ** 2,
    "-x": lambda L: -_u(L),
    "abs(x)": lambda L: abs(_u(L)),
    "~x": lambda L: ~_u(L),
    "x & x": lambda L: _u(L) & _u(L),
    "x | 1": lambda L: _u(L) | 1,
    "x ^ x": lambda L: _u(L, "uint64") ^ _u(L, "uint64"),
    "x << 1": lambda L: _u(L) << 1,
    "x >> 1": lambda L: _u(L) >> 1,
    "x == 1": lambda L: _u(L) == 1,
    "x != x": lambda L: _u(L) != _u(L),
    "x > 1": lambda L: _u(L) > 1,
    "x < 1.5": lambda L: _u(L) < 1.5,
    "x < float tensor": lambda L: _u(L) < L.ones(3),
    "x += 1": lambda L: _u(L).__iadd__(1),
    "x *= 2": lambda L: _u(L).__imul__(2),
    "x *= 1.5": lambda L: _u(L).__imul__(1.5),
    "x.add_(float)": lambda L: _u(L).add_(L.ones(3)),
    # methods
    "sum": lambda L: _u(L).sum(),
    "sum dim": lambda L: _u(L, "uint64", (2**63, 1)).sum(0),
    "sum dtype uint32": lambda L: _u(L).sum(dtype=L.uint32),
    "sum dtype float": lambda L: _u(L).sum(dtype=L.float32),
    "prod": lambda L: _u(L, "uint16").prod(),
    "prod dtype uint16": lambda L: _u(L, "uint16").prod(dtype=L.uint16),
    "cumsum": lambda L: _u(L).cumsum(0),
    "cumsum dtype uint64": lambda L: _u(L).cumsum(0, dtype=L.uint64),
    "cumsum_": lambda L: _u(L).cumsum_(0),
    "mean": lambda L: _u(L).mean(),
    "max": lambda L: _u(L).max(),
    "max of an empty": lambda L: L.ones(0, dtype=L.uint32).max(),
    "amax of an empty result": lambda L: L.ones(0, 3, dtype=L.uint32).amax(1),
    "argmax": lambda L: _u(L).argmax(),
    "clamp": lambda L: _u(L).clamp(1, 2),
    "clamp float": lambda L: _u(L).clamp(0.5),
    "minimum": lambda L: L.minimum(_u(L), _u(L)),
    "neg": lambda L: _u(L).neg(),
    "sign": lambda L: _u(L).sign(),
    "square": lambda L: _u(L).square(),
    "sort": lambda L: _u(L, "uint64", (3, 1, 2)).sort()[0],
    "sort indices": lambda L: _u(L, "uint16", (3, 1, 2)).sort()[1],
    "unique": lambda L: _u(L, "uint32", (3, 1, 3)).unique(),
    "cat": lambda L: L.cat([_u(L), _u(L)]),
    "stack": lambda L: L.stack([_u(L, "uint64"), _u(L, "uint64")]),
    "index": lambda L: _u(L)[1:],
    "index tensor": lambda L: _u(L)[L.tensor([2, 0])],
    "index mask": lambda L: _u(L)[L.tensor([True, False, True])],
    "setitem": lambda L: (lambda t: (t.__setitem__(0, 7), t)[1])(_u(L)),
    "setitem tensor index": lambda L: (lambda t: (t.__setitem__(L.tensor([0]), 7), t)[1])(_u(L)),
    "where ==": lambda L: L.where(_u(L) == 1, _u(L), _u(L)),
    "where >": lambda L: L.where(_u(L) > 1, _u(L), _u(L)),
    "flip 0": lambda L: L.ones(4, 3, dtype=L.uint32).flip(0),
    "flip 1": lambda L: L.ones(4, 3, dtype=L.uint32).flip(1),
    "flip 0 of a transpose": lambda L: L.ones(4, 3, dtype=L.uint32).t().flip(0),
    "nonzero": lambda L: _u(L).nonzero(),
    "count_nonzero": lambda L: _u(L).count_nonzero(),
    "any": lambda L: _u(L).any(),
    "all": lambda L: _u(L).all(),
    "isnan": lambda L: L.isnan(_u(L)),
    "isclose": lambda L: L.isclose(_u(L), _u(L)),
    "fill_": lambda L: _u(L).fill_(3),
    "zero_": lambda L: _u(L).zero_(),
    "copy_ float": lambda L: _u(L).copy_(L.ones(3) * 2.5),
    "masked_fill": lambda L: _u(L).masked_fill(_u(L) == 1, 0),
    "index_put_": lambda L: _u(L).index_put_((L.tensor([0]),), _u(L, values=(9,))),
    "random_": lambda L: _u(L).random_(),
    "bincount": lambda L: L.bincount(_u(L, values=(3_000_000_000,))),
    "histc": lambda L: L.histc(_u(L)),
    "cummax": lambda L: _u(L).cummax(0)[0],
    # (review: masked_select and index_select of a 1-d tensor refuse; index_select of a 2-d one copies slices)
    "masked_select": lambda L: _u(L).masked_select(L.tensor([True, False, True])),
    "masked_select bad shape": lambda L: _u(L).masked_select(L.tensor([True, False])),
    "masked_select of an empty": lambda L: L.ones(0, dtype=L.uint16).masked_select(L.ones(0, dtype=L.bool)),
    "masked_select uint64 out=": lambda L: L.masked_select(_u(L), L.tensor([True, False, True]), out=_u(L)),
    "index_select": lambda L: _u(L).index_select(0, L.tensor([0, 2])),
    "index_select empty index": lambda L: _u(L).index_select(0, L.tensor([], dtype=L.int64)),
    "index_select out of bounds": lambda L: _u(L).index_select(0, L.tensor([5])),
    "index_select float index": lambda L: _u(L).index_select(0, L.tensor([0.0])),
    "index_select int16 index": lambda L: _u(L).index_select(0, L.tensor([0], dtype=L.int16)),
    "index_select bad dim": lambda L: _u(L).index_select(1, L.tensor([0])),
    "index_select 2-d": lambda L: L.ones(2, 3, dtype=L.uint64).index_select(1, L.tensor([0])),
    "index_select 0-d": lambda L: _u(L)[0].index_select(0, L.tensor([0])),
    "kthvalue": lambda L: L.kthvalue(_u(L), 1)[0],
    "view int32": lambda L: _u(L).view(L.int32),
    "view uint8": lambda L: _u(L).view(L.uint8),
    "view as uint16": lambda L: L.ones(2, dtype=L.int32).view(L.uint16),
    "clone": lambda L: _u(L, "uint64").clone(),
    "contiguous": lambda L: L.ones(2, 3, dtype=L.uint16).t().contiguous(),
    "reshape": lambda L: L.ones(2, 3, dtype=L.uint16).reshape(3, 2),
    # conversions
    "to float": lambda L: _u(L).to(L.float32),
    "float to uint32": lambda L: L.ones(3).to(L.uint32),
    "to uint8": lambda L: _u(L).to(L.uint8),
    "float()": lambda L: _u(L, "uint64", (2**64 - 1,)).float(),
    "long()": lambda L: _u(L).long(),
    "bool()": lambda L: _u(L).bool(),
    "type(torch.uint16)": lambda L: _u(L).type(L.uint16),
    # factories
    "zeros": lambda L: L.zeros(2, dtype=L.uint32),
    "ones": lambda L: L.ones(2, dtype=L.uint64),
    "full": lambda L: L.full((2,), 7, dtype=L.uint16),
    "full 2**63": lambda L: L.full((2,), 2**63, dtype=L.uint64),
    "empty dtype": lambda L: L.zeros_like(L.empty(2, dtype=L.uint32)),
    "zeros_like": lambda L: L.zeros_like(_u(L)),
    "ones_like": lambda L: L.ones_like(_u(L, "uint64")),
    "new_zeros": lambda L: _u(L).new_zeros(2),
    "new_tensor": lambda L: _u(L).new_tensor([1]),
    "arange": lambda L: L.arange(3, dtype=L.uint32),
    "arange empty": lambda L: L.arange(0, dtype=L.uint16),
    "eye": lambda L: L.eye(2, dtype=L.uint32),
    "linspace": lambda L: L.linspace(0, 3, 3, dtype=L.uint32),
    "linspace one step": lambda L: L.linspace(0, 3, 1, dtype=L.uint32),
    "logspace": lambda L: L.logspace(0, 1, 3, dtype=L.uint64),
    "randperm": lambda L: L.randperm(3, dtype=L.uint32),
    "randint": lambda L: L.randint(0, 5, (3,), dtype=L.uint32).dtype and L.zeros(1),
    "rand": lambda L: L.rand(2, dtype=L.uint16),
    "uniform_": lambda L: L.empty(2, dtype=L.uint32).uniform_(),
}

QUERIES = {
    "dtypes": lambda L: [L.uint16, L.uint32, L.uint64],
    "is_signed": lambda L: [d.is_signed for d in (L.uint16, L.uint32, L.uint64)],
    "itemsize": lambda L: [d.itemsize for d in (L.uint16, L.uint32, L.uint64)],
    "is_floating_point": lambda L: [d.is_floating_point for d in (L.uint16, L.uint32, L.uint64)],
    "is_complex": lambda L: [d.is_complex for d in (L.uint16, L.uint32, L.uint64)],
    "to_real": lambda L: L.uint32.to_real(),
    "iinfo": lambda L: [repr(L.iinfo(d)) for d in (L.uint16, L.uint32, L.uint64)],
    "iinfo max": lambda L: [(L.iinfo(d).max, L.iinfo(d).min, L.iinfo(d).bits) for d in (L.uint16, L.uint32, L.uint64)],
    "finfo": lambda L: L.finfo(L.uint32),
    "promote_types float16": lambda L: L.promote_types(L.uint32, L.float16),
    "promote_types float64": lambda L: L.promote_types(L.float64, L.uint64),
    "promote_types same": lambda L: L.promote_types(L.uint16, L.uint16),
    "promote_types bool": lambda L: L.promote_types(L.uint32, L.bool),
    "promote_types uint8": lambda L: L.promote_types(L.uint8, L.uint32),
    "promote_types int64": lambda L: L.promote_types(L.uint64, L.int64),
    "promote_types uint16": lambda L: L.promote_types(L.uint32, L.uint16),
    "promote_types complex": lambda L: L.promote_types(L.uint32, L.complex64),
    "can_cast": lambda L: [L.can_cast(a, b) for a in (L.uint32, L.int64, L.float32, L.bool)
                           for b in (L.uint32, L.int64, L.float32, L.bool, L.uint16)],
    "result_type int": lambda L: L.result_type(_u(L), 1),
    "result_type float": lambda L: L.result_type(_u(L), 1.0),
    "result_type 0-d": lambda L: L.result_type(_u(L), L.tensor(1)),
    "result_type tensors": lambda L: L.result_type(_u(L), _u(L, "uint16")),
    "type()": lambda L: [_u(L, d).type() for d in UNSIGNED],
    "element_size": lambda L: [_u(L, d).element_size() for d in UNSIGNED],
    "is_floating_point()": lambda L: _u(L).is_floating_point(),
    "is_signed()": lambda L: _u(L).is_signed(),
    "tolist": lambda L: _u(L, "uint64", (2**64 - 1, 2**63)).tolist(),
    "item": lambda L: _u(L, "uint64", (2**64 - 1,))[0].item(),
    "item type": lambda L: type(_u(L)[0].item()).__name__,
    "int()": lambda L: int(_u(L, "uint16")[1]),
    "float()": lambda L: float(_u(L, "uint64", (2**63,))[0]),
    "bool()": lambda L: bool(_u(L)[0]),
    # (review: int() and __index__ read an integer tensor as int64_t)
    "int() beyond int64": lambda L: int(_u(L, "uint64", (2**63,))[0]),
    "int() of int64 max": lambda L: int(_u(L, "uint64", (2**63 - 1,))[0]),
    "__index__ beyond int64": lambda L: [0][_u(L, "uint64", (2**63,))[0]],
    "int() of a big float": lambda L: int(L.tensor(1e30)),
    "repr": lambda L: [repr(_u(L, d)) for d in UNSIGNED],
    "repr big": lambda L: repr(_u(L, "uint64", (2**64 - 1, 3))),
    "repr 2-d": lambda L: repr(L.ones(2, 2, dtype=L.uint16)),
    "str 0-d": lambda L: str(L.tensor(5, dtype=L.uint32)),
    "numpy dtype": lambda L: [str(_u(L, d).numpy().dtype) for d in UNSIGNED],
    "save and load": lambda L: repr(saved_and_loaded(L, _u(L, "uint64", (2**64 - 1,)))),
    "pickle dtype": lambda L: pickle.loads(pickle.dumps(L.uint32)),
    "storage nbytes": lambda L: _u(L).untyped_storage().nbytes(),
}


def _program_outcome(program, lib):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = program(lib)
    except Exception as exc:  # noqa: BLE001 - the exception itself is compared
        return type(exc).__name__, str(exc).replace("tracegrad", "torch")
    if hasattr(result, "dtype") and hasattr(result, "tolist"):
        return str(result.dtype).replace("tracegrad", "torch"), tuple(result.shape), repr(result.tolist())
    return repr(result).replace("tracegrad", "torch")


@pytest.mark.parametrize("name", [*PROGRAMS, *QUERIES])
def test_program_like_torch(name):
    program = PROGRAMS.get(name) or QUERIES[name]
    assert _program_outcome(program, tg) == _program_outcome(program, torch)
