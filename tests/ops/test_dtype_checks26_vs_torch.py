"""Dtype checks that torch 2.13 makes and tracegrad's float32 copies of bfloat16 operands hid.

Writes of a source into self (index_copy, index_add, scatter, masked_scatter, index_put, index_reduce, put_)
refuse a source of another dtype, bfloat16 beside float32 included: tracegrad computes bfloat16 kernels on float32
copies, so its checks read the dtype a copy stands for.
"""

from __future__ import annotations

import warnings

import numpy as np
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


def _float16_input(lib):
    return lib.linspace(-1, 2, 24).reshape(2, 4, 3).to(lib.float16)


# normalizations of a float16 input with float32 parameters, each returning its outputs as a tuple
MIXED_NORMS = {
    "native_layer_norm": lambda lib, x, w, b: lib.native_layer_norm(x, (3,), w(3), b(3), 1e-5),
    "native_layer_norm weight only": lambda lib, x, w, b: lib.native_layer_norm(x, (3,), w(3), None, 1e-5),
    "native_group_norm": lambda lib, x, w, b: lib.native_group_norm(x, w(4), b(4), 2, 4, 3, 2, 1e-5),
    "native_batch_norm train": lambda lib, x, w, b: lib.native_batch_norm(x, w(4), b(4), lib.zeros(4), lib.ones(4),
                                                                          True, 0.1, 1e-5),
    "native_batch_norm no running stats": lambda lib, x, w, b: lib.native_batch_norm(x, w(4), b(4), None, None,
                                                                                     True, 0.1, 1e-5),
    "native_batch_norm eval": lambda lib, x, w, b: lib.native_batch_norm(x, w(4), b(4), lib.zeros(4), lib.ones(4),
                                                                         False, 0.1, 1e-5),
    "layer_norm": lambda lib, x, w, b: (lib.nn.functional.layer_norm(x, (3,), w(3), b(3)),),
    "group_norm": lambda lib, x, w, b: (lib.nn.functional.group_norm(x, 2, w(4), b(4)),),
    "BatchNorm1d": lambda lib, x, w, b: _batch_norm_module(lib, x),
}


def _batch_norm_module(lib, x):
    bn = lib.nn.BatchNorm1d(4)
    return bn(x), bn.running_mean, bn.running_var


def _mixed_norm_outputs(lib, norm):
    outputs = MIXED_NORMS[norm](lib, _float16_input(lib), lambda n: lib.linspace(0.5, 1.5, n),
                                lambda n: lib.linspace(-0.2, 0.3, n))
    return [(str(t.dtype).replace("tracegrad", "torch"), tuple(t.shape), t.detach().double().numpy()) for t in outputs]


@pytest.mark.parametrize("norm", MIXED_NORMS)
def test_float16_input_with_float32_parameters_keeps_float32_statistics(norm):
    ours, theirs = _mixed_norm_outputs(tg, norm), _mixed_norm_outputs(torch, norm)
    assert [o[:2] for o in ours] == [t[:2] for t in theirs]
    for (_, _, our_values), (_, _, their_values) in zip(ours, theirs):
        # (computed in float as torch does; its vectorised reductions, and the fused step without a bias, may differ
        # in the last float bit: 1e-5 is far below a float16 ulp of the outputs)
        np.testing.assert_allclose(our_values, their_values, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("norm", ["layer_norm", "group_norm", "batch_norm"])
def test_float16_input_with_float32_parameters_gradient_dtypes(norm):
    def gradients(lib):
        x = _float16_input(lib).requires_grad_()
        weight, bias = lib.linspace(0.5, 1.5, 4).requires_grad_(), lib.linspace(-0.2, 0.3, 4).requires_grad_()
        functional = lib.nn.functional
        y = {"layer_norm": lambda: functional.layer_norm(x.transpose(1, 2), (4,), weight, bias),
             "group_norm": lambda: functional.group_norm(x, 2, weight, bias),
             "batch_norm": lambda: functional.batch_norm(x, lib.zeros(4), lib.ones(4), weight, bias, training=True)}
        y[norm]().float().pow(2).sum().backward()
        return [(str(g.dtype).replace("tracegrad", "torch"), g.double().numpy()) for g in (x.grad, weight.grad, bias.grad)]

    ours, theirs = gradients(tg), gradients(torch)
    assert [o[0] for o in ours] == [t[0] for t in theirs]
    for (_, our_values), (_, their_values) in zip(ours, theirs):
        np.testing.assert_allclose(our_values, their_values, rtol=2e-3, atol=2e-3)
