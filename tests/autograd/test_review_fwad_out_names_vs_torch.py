"""Review of forward AD's out= refusals, side by side with PyTorch: the operator that refuses a tangent (or grad)
for an out= call is the out= kernel torch's composite ends in, and ``make_dual``/``unpack_dual`` alias.

* matmul(out=) ends in mm/mv over a folded batch only where the larger operand's batch folds without a copy (no
  fold for a gradient under out=), else in bmm (tracegrad named it by the operands' dims alone).
* linalg.matrix_power(out=) follows ``linalg_matrix_power_impl``: n = -1 is linalg_inv_ex's out=, |n| = 2, 3 and
  the last product matmul's, a power of two from 4 a copy (which carries grad and tangents); without out, n = 0
  and 1 are copies (clone, then copy_), n = 3 is (a a) a.
* outer/ger/kron refuse as mul, eigvalsh as _linalg_eigh, svd as _linalg_svd, multi_dot as mm, vecdot as sum
  (vdot for two vectors), linalg.inv/cholesky/svdvals as linalg_inv_ex/linalg_cholesky_ex/_linalg_svd, for grad
  as for tangents (tracegrad used the composite's own name for grad); chain_matmul of one matrix copies.
* make_dual and _fw_primal are aliases: a size-1 dim keeps its stride (a view of the same shape recomputed it).
"""

from __future__ import annotations

import pytest
from _lib import forward_ad_transcript, tg, torch


def _printed(lib, program: str) -> str:
    return forward_ad_transcript(lib, program, quiet=True)


_LAYOUTS = {
    "contiguous": "",
    "expanded": "A = A[..., :1, :].expand(A.shape) if A.dim() >= 3 else A\nB = B[..., :1, :].expand(B.shape) if B.dim() >= 3 else B\n",
    "transposed": "A = A.mT.contiguous().mT if A.dim() >= 3 else A\nB = B.mT.contiguous().mT if B.dim() >= 3 else B\n",
}
_SHAPES = [((4, 2, 3), (3,)), ((4, 2, 3), (3, 2)), ((3,), (4, 3, 2)), ((2, 3), (4, 3, 2)), ((1, 2, 3), (3, 2)),
           ((2, 4, 2, 3), (3, 2)), ((0, 2, 3), (3, 2))]


@pytest.mark.parametrize("layout", list(_LAYOUTS))
@pytest.mark.parametrize("dual", ["A", "B", "out"])
@pytest.mark.parametrize("shapes", _SHAPES, ids=str)
def test_matmul_out_refuses_tangents_as_the_out_kernel_it_ends_in(shapes, dual, layout):
    a, b = shapes
    program = (f"A = torch.rand({a}, dtype=torch.float64)\nB = torch.rand({b}, dtype=torch.float64)\n"
               + _LAYOUTS[layout] + "o = torch.zeros(torch.matmul(A, B).shape, dtype=torch.float64)\n"
               "with fwAD.dual_level():\n"
               f"    if '{dual}' == 'A': A = fwAD.make_dual(A, torch.ones_like(A))\n"
               f"    if '{dual}' == 'B': B = fwAD.make_dual(B, torch.ones_like(B))\n"
               f"    if '{dual}' == 'out': o = fwAD.make_dual(o, torch.ones_like(o))\n"
               "    torch.matmul(A, B, out=o)\n    print(fwAD.unpack_dual(o).tangent)")
    assert _printed(tg, program) == _printed(torch, program), program


@pytest.mark.parametrize("n", range(-5, 9))
@pytest.mark.parametrize("shape", [(2, 2), (3, 2, 2), (0, 2, 2)], ids=str)
def test_matrix_power_out_as_torch_with_tangents_and_grad(shape, n):
    setup = f"A = torch.eye(2, dtype=torch.float64).expand({shape}).clone() * 2 + 0.25\n"
    out = f"torch.zeros({shape}, dtype=torch.float64)"
    programs = [
        setup + f"with fwAD.dual_level():\n    d = fwAD.make_dual(A, torch.ones({shape}, dtype=torch.float64))\n"
        f"    x = {out}\n    r = torch.linalg.matrix_power(d, {n}, out=x)\n    print(r is x, fwAD.unpack_dual(x))",
        setup + f"with fwAD.dual_level():\n    x = fwAD.make_dual({out}, torch.ones({shape}, dtype=torch.float64))\n"
        f"    torch.linalg.matrix_power(A, {n}, out=x)\n    print(fwAD.unpack_dual(x))",
        setup + f"A.requires_grad_()\nx = {out}\nr = torch.linalg.matrix_power(A, {n}, out=x)\n"
        "print(r is x, x.grad_fn.name() if x.grad_fn else None, x)",
        setup + f"x = torch.zeros({shape}, dtype=torch.float64, requires_grad=True) * 1\n"
        f"torch.linalg.matrix_power(A, {n}, out=x)\nprint(x.grad_fn.name() if x.grad_fn else None, x)",
    ]
    for program in programs:
        assert _printed(tg, program) == _printed(torch, program), program


@pytest.mark.parametrize("n", range(-4, 6))
def test_matrix_power_graph_as_torch(n):
    program = ("A = (torch.eye(3, dtype=torch.float64) * 2 + 0.25).requires_grad_()\n"
               f"r = torch.linalg.matrix_power(A, {n})\n"
               "print(r is A, r.grad_fn.name(), [f[0] and f[0].name() for f in r.grad_fn.next_functions])\n"
               "print([[g[0] and g[0].name() for g in f[0].next_functions] for f in r.grad_fn.next_functions if f[0]])")
    assert _printed(tg, program) == _printed(torch, program), program


_OUT_CALLS = [
    "torch.outer(A[0], A[1], out=torch.zeros(2, 2, dtype=torch.float64))",
    "torch.ger(A[0], A[1], out=torch.zeros(2, 2, dtype=torch.float64))",
    "torch.kron(A, A, out=torch.zeros(4, 4, dtype=torch.float64))",
    "torch.linalg.eigvalsh(A, out=torch.zeros(2, dtype=torch.float64))",
    "torch.svd(A, out=(torch.zeros(2, 2, dtype=torch.float64), torch.zeros(2, dtype=torch.float64), "
    "torch.zeros(2, 2, dtype=torch.float64)))",
    "torch.svd(A, compute_uv=False, out=(torch.zeros(2, 2, dtype=torch.float64), torch.zeros(2, dtype=torch.float64), "
    "torch.zeros(2, 2, dtype=torch.float64)))",
    "torch.linalg.multi_dot([A, A, A], out=torch.zeros(2, 2, dtype=torch.float64))",
    "torch.linalg.multi_dot([A[0], A], out=torch.zeros(2, dtype=torch.float64))",
    "torch.chain_matmul(A, out=torch.zeros(2, 2, dtype=torch.float64))",
    "torch.chain_matmul(A, A, out=torch.zeros(2, 2, dtype=torch.float64))",
    "torch.linalg.vecdot(A, A, out=torch.zeros(2, dtype=torch.float64))",
    "torch.linalg.vecdot(A[0], A, out=torch.zeros(2, dtype=torch.float64))",
    "torch.linalg.vecdot(A[0], A[1], out=torch.zeros((), dtype=torch.float64))",
    "torch.linalg.inv(A, out=torch.zeros(2, 2, dtype=torch.float64))",
    "torch.inverse(A, out=torch.zeros(2, 2, dtype=torch.float64))",
    "torch.linalg.cholesky(A, out=torch.zeros(2, 2, dtype=torch.float64))",
    "torch.linalg.svdvals(A, out=torch.zeros(2, dtype=torch.float64))",
]


@pytest.mark.parametrize("call", _OUT_CALLS)
def test_composite_out_refusals_name_the_out_kernel(call):
    programs = [
        "A = (torch.eye(2, dtype=torch.float64) * 2 + 0.5).requires_grad_()\n" + call,
        "B = torch.eye(2, dtype=torch.float64) * 2 + 0.5\nwith fwAD.dual_level():\n"
        "    A = fwAD.make_dual(B, torch.ones(2, 2, dtype=torch.float64))\n    r = " + call + "\n    print('written')",
    ]
    for program in programs:
        assert _printed(tg, program) == _printed(torch, program), program


@pytest.mark.parametrize("make", ["torch.rand(1, 2, 3).mT.contiguous().mT", "torch.rand(3, 1, 2)[:, :, :1]",
                                  "torch.rand(3, 4, 2).permute(1, 0, 2)[:1]"])
def test_make_dual_and_unpack_dual_keep_strides(make):
    program = (f"A = {make}\nwith fwAD.dual_level():\n    d = fwAD.make_dual(A, torch.ones_like(A))\n"
               "    p, t = fwAD.unpack_dual(d)\n    print(A.stride(), d.stride(), p.stride(), d.storage_offset())")
    assert _printed(tg, program) == _printed(torch, program), program
