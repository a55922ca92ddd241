"""Dtype checks that torch 2.13 makes and tracegrad's float32 copies of bfloat16 operands hid.

Writes of a source into self (index_copy, index_add, scatter, masked_scatter, index_put, index_reduce, put_)
refuse a source of another dtype, bfloat16 beside float32 included: tracegrad computes bfloat16 kernels on float32
copies, so its checks read the dtype a copy stands for.
"""

from __future__ import annotations

import warnings

import pytest
import torch

import tracegrad as tg
from tests._lib import value_or_error

_INDEX = [0, 2]
_SCATTER_INDEX = [[0, 1], [2, 0]]
_MASK = [[True, False], [False, True], [True, True]]

# each write: the call on a (3, 2) self, given the library and a (2, 2) source
WRITES = {
    "index_copy_": lambda lib, x, s: x.index_copy_(0, lib.tensor(_INDEX), s),
    "index_copy": lambda lib, x, s: lib.index_copy(x, 0, lib.tensor(_INDEX), s),
    "index_add_": lambda lib, x, s: x.index_add_(0, lib.tensor(_INDEX), s),
    "index_add": lambda lib, x, s: x.index_add(0, lib.tensor(_INDEX), s, alpha=2),
    "index_reduce_": lambda lib, x, s: x.index_reduce_(0, lib.tensor(_INDEX), s, "prod"),
    "scatter_": lambda lib, x, s: x.scatter_(0, lib.tensor(_SCATTER_INDEX), s),
    "scatter": lambda lib, x, s: x.scatter(0, lib.tensor(_SCATTER_INDEX), s),
    "scatter_add": lambda lib, x, s: lib.scatter_add(x, 0, lib.tensor(_SCATTER_INDEX), s),
    "scatter_reduce_": lambda lib, x, s: x.scatter_reduce_(0, lib.tensor(_SCATTER_INDEX), s, "sum"),
    "masked_scatter_": lambda lib, x, s: x.masked_scatter_(lib.tensor(_MASK), s.flatten()),
    "masked_scatter": lambda lib, x, s: x.masked_scatter(lib.tensor(_MASK), s.flatten()),
    "index_put_": lambda lib, x, s: x.index_put_((lib.tensor(_INDEX),), s),
    "index_put_ accumulate": lambda lib, x, s: x.index_put_((lib.tensor(_INDEX),), s, accumulate=True),
    "put_": lambda lib, x, s: x.put_(lib.tensor(_INDEX), s[0]),
    "index_fill_": lambda lib, x, s: x.index_fill_(0, lib.tensor(_INDEX), s[0, 0]),
}

DTYPE_PAIRS = [("float32", "bfloat16"), ("bfloat16", "float32"), ("bfloat16", "float16"),
               ("float16", "bfloat16"), ("float64", "bfloat16"), ("float32", "float64"), ("bfloat16", "bfloat16")]


@pytest.mark.parametrize(("self_dtype", "source_dtype"), DTYPE_PAIRS, ids=[f"{a}-{b}" for a, b in DTYPE_PAIRS])
@pytest.mark.parametrize("write", WRITES)
def test_write_of_a_source_checks_its_dtype_as_torch(write, self_dtype, source_dtype):
    def program(lib):
        x = lib.zeros(3, 2, dtype=getattr(lib, self_dtype))
        source = lib.arange(1.0, 5.0).reshape(2, 2).to(getattr(lib, source_dtype))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (index_reduce's beta warning)
            return WRITES[write](lib, x, source)

    assert value_or_error(program, tg) == value_or_error(program, torch)


BAG_PAIRS = [("float32", "bfloat16"), ("bfloat16", "float32"), ("bfloat16", "bfloat16"), ("float32", "float64"),
             ("float16", "float32")]


@pytest.mark.parametrize(("weight_dtype", "weights_dtype"), BAG_PAIRS, ids=[f"{a}-{b}" for a, b in BAG_PAIRS])
@pytest.mark.parametrize("call", ["functional", "2-d input", "module"])
def test_embedding_bag_checks_per_sample_weights_dtype_as_torch(call, weight_dtype, weights_dtype):
    def program(lib):
        weight = lib.arange(12.0).reshape(4, 3).to(getattr(lib, weight_dtype))
        indices, offsets = lib.tensor([0, 2, 1, 3]), lib.tensor([0, 2])
        per_sample = lib.tensor([0.5, 1.0, 2.0, 3.0]).to(getattr(lib, weights_dtype))
        if call == "module":
            bag = lib.nn.EmbeddingBag.from_pretrained(weight, mode="sum")
            return bag(indices, offsets, per_sample_weights=per_sample)
        if call == "2-d input":
            return lib.nn.functional.embedding_bag(indices.reshape(2, 2), weight, mode="sum",
                                                   per_sample_weights=per_sample.reshape(2, 2))
        return lib.nn.functional.embedding_bag(indices, weight, offsets, mode="sum", per_sample_weights=per_sample)

    assert value_or_error(program, tg) == value_or_error(program, torch)
