"""``FuzzedSparseTensor``: refused, as tracegrad has no sparse tensors (no ``sparse_coo_tensor`` to build one)."""

from __future__ import annotations

from typing import NoReturn

import tracegrad

from .fuzzer import FuzzedTensor

__all__ = ["FuzzedSparseTensor"]


def _refuse_sparse() -> NoReturn:
    raise NotImplementedError("FuzzedSparseTensor: tracegrad has no sparse tensors (no sparse COO layout), so it "
                              "cannot fuzz them; use FuzzedTensor for dense tensors")


class FuzzedSparseTensor(FuzzedTensor):
    """PyTorch's fuzzed sparse COO tensor; refused when specified, so a fuzzer never gets half built."""

    def __init__(self, name: str, size: tuple[str | int, ...], min_elements: int | None = None,
                 max_elements: int | None = None, dim_parameter: str | None = None, sparse_dim: str | None = None,
                 nnz: str | None = None, density: str | None = None, coalesced: str | None = None,
                 dtype=tracegrad.float32, cuda: bool = False) -> None:
        _refuse_sparse()

    @staticmethod
    def sparse_tensor_constructor(size, dtype, sparse_dim, nnz, is_coalesced) -> NoReturn:
        _refuse_sparse()
