"""The device and layout questions library code asks of a CPU strided tensor, answered as torch's CPU build."""

from __future__ import annotations

import warnings

import pytest
from _lib import raised, tg, torch

FLAGS = ["is_mps", "is_xpu", "is_ipu", "is_mtia", "is_maia", "is_vulkan", "is_xla", "is_mkldnn", "is_nested",
         "is_sparse_csr", "is_sparse", "is_quantized", "is_meta", "is_cuda", "is_cpu", "name"]


@pytest.mark.parametrize("flag", FLAGS)
def test_flags_as_torch(flag):
    assert getattr(tg.ones(2, 3), flag) == getattr(torch.ones(2, 3), flag)


def test_dense_answers_as_torch():
    def facts(lib):
        x = lib.ones(2, 3, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            volatile = x.volatile
        return (x.const_data_ptr() == x.data_ptr(), x.sparse_dim(), x.dense_dim(), x.to_dense() is x,
                str(x.to_dense(lib.float64).dtype), x.is_distributed(), volatile, [str(w.message) for w in caught])

    assert facts(tg) == facts(torch)


@pytest.mark.parametrize("method", ["is_coalesced", "coalesce", "indices", "values"])
def test_sparse_only_methods_refuse_a_strided_tensor_as_torch(method):
    def program(lib):
        getattr(lib.ones(2), method)()

    assert raised(tg, program) == raised(torch, program) is not None
