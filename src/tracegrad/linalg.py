"""``tracegrad.linalg``: PyTorch's ``torch.linalg`` namespace (the operators live in ``ops/linalg.py``)."""

from __future__ import annotations

from .ops.linalg import LINALG, LinAlgError

norm = LINALG["norm"]
vector_norm = LINALG["vector_norm"]
matrix_norm = LINALG["matrix_norm"]
inv = LINALG["inv"]
inv_ex = LINALG["inv_ex"]
det = LINALG["det"]
slogdet = LINALG["slogdet"]
solve = LINALG["solve"]
solve_triangular = LINALG["solve_triangular"]
cholesky = LINALG["cholesky"]
cholesky_ex = LINALG["cholesky_ex"]
qr = LINALG["qr"]
eigh = LINALG["eigh"]
eigvalsh = LINALG["eigvalsh"]
svd = LINALG["svd"]
svdvals = LINALG["svdvals"]
pinv = LINALG["pinv"]
matrix_power = LINALG["matrix_power"]
matrix_rank = LINALG["matrix_rank"]
multi_dot = LINALG["multi_dot"]
vecdot = LINALG["vecdot"]
cross = LINALG["cross"]
matmul = LINALG["matmul"]
diagonal = LINALG["diagonal"]

__all__ = ["LinAlgError", *sorted(k for k in LINALG if k != "LinAlgError")]
