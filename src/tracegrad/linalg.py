"""``tracegrad.linalg``: PyTorch's ``torch.linalg`` namespace (the operators live in ``ops/linalg.py``)."""

from __future__ import annotations

from .ops.linalg import LINALG, LinAlgError
from .ops.linalg_eig import LINALG_EIG
from .ops.linalg_extra import LINALG_EXTRA
from .ops.linalg_ldl import LINALG_LDL

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
lu_factor = LINALG_EXTRA["lu_factor"]
lu_factor_ex = LINALG_EXTRA["lu_factor_ex"]
lu = LINALG_EXTRA["lu"]
lu_solve = LINALG_EXTRA["lu_solve"]
solve_ex = LINALG_EXTRA["solve_ex"]
lstsq = LINALG_EXTRA["lstsq"]
matrix_exp = LINALG_EXTRA["matrix_exp"]
tensorinv = LINALG_EXTRA["tensorinv"]
tensorsolve = LINALG_EXTRA["tensorsolve"]
vander = LINALG_EXTRA["vander"]
cond = LINALG_EXTRA["cond"]
householder_product = LINALG_EXTRA["householder_product"]
eig = LINALG_EIG["eig"]
eigvals = LINALG_EIG["eigvals"]
ldl_factor = LINALG_LDL["ldl_factor"]
ldl_factor_ex = LINALG_LDL["ldl_factor_ex"]
ldl_solve = LINALG_LDL["ldl_solve"]

__all__ = ["LinAlgError", *sorted({*LINALG, *LINALG_EXTRA, *LINALG_EIG, *LINALG_LDL} - {"LinAlgError"})]
