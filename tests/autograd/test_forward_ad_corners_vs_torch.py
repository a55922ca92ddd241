"""Forward-mode AD corners, side by side with PyTorch: each program runs in a dual level with both libraries and
prints what ``unpack_dual`` gives for the named results (primal dtype and values, tangent dtype, shape, strides and
values) or the error raised.

* A tangent of another dtype than its primal (float64 on float32, complex on real) keeps the dtype PyTorch's formula
  gives it: type promotion (``d * 2``, ``d.sum()``, ``d.clone()``, ``exp``'s float64), ``copy_``'s source tangent
  as it is, ``_to_copy``'s cast (with the imaginary part where the result is complex), a real element-wise result's
  real tangent. tracegrad cast every tangent to its output's dtype.
* An operator PyTorch has no derivative for refuses a dual input before its kernel runs, in the words of the
  autograd-not-implemented fallback (NotImplementedError); tracegrad ran it and raised a backward's RuntimeError.
"""

from __future__ import annotations

import pytest
from _lib import forward_ad_transcript, tg, torch

_F64_TANGENT = "d = fwAD.make_dual(torch.tensor([1., 2.]), torch.tensor([3., 4.], dtype=torch.float64))\n"
_C64_TANGENT = "d = fwAD.make_dual(torch.tensor([1., 2.]), torch.tensor([3+1j, 4-2j], dtype=torch.complex64))\n"
_C128_TANGENT = "d = fwAD.make_dual(torch.tensor([1., 2.]), torch.tensor([3+1j, 4-2j], dtype=torch.complex128))\n"


def _show(lib, name: str, x) -> None:
    tangent = lib.autograd.forward_ad.unpack_dual(x).tangent
    print(name, x.dtype, x.detach().tolist(), None if tangent is None else
          (tangent.dtype, tuple(tangent.shape), tangent.stride(), tangent.tolist()))


def _printed(lib, program: str) -> str:
    return forward_ad_transcript(lib, program, {"P": lambda name, x: _show(lib, name, x)}, in_dual_level=True)


# ---- tangent dtypes ------------------------------------------------------------------------------------------------

_DTYPE_PROGRAMS = [
    # a float64 tangent on a float32 primal: promoted by the formulas, cast by _to_copy
    _F64_TANGENT + 'P("d", d)',
    _F64_TANGENT + 'P("x", d.to(torch.float64))',
    _F64_TANGENT + 'P("x", d.float())',
    _F64_TANGENT + 'P("x", d.double())',
    _F64_TANGENT + 'P("x", d.half())',
    _F64_TANGENT + 'P("x", d.to(torch.complex64))',
    _F64_TANGENT + 'P("x", d.to(torch.float32, copy=True))',
    _F64_TANGENT + 'P("x", d * 2)',
    _F64_TANGENT + 'P("x", d.clone())',
    _F64_TANGENT + 'P("x", d.sum())',
    _F64_TANGENT + 'P("x", d.relu())',
    _F64_TANGENT + 'P("x", torch.zeros(2).copy_(d))',
    _F64_TANGENT + 'P("x", torch.zeros(2, dtype=torch.float64).copy_(d))',
    _F64_TANGENT + 'x = torch.zeros(4)\nx[1:3].copy_(d)\nP("x", x)',
    _F64_TANGENT + 'd.mul_(2)\nP("d", d)',
    'd = fwAD.make_dual(torch.tensor([1., 2.], dtype=torch.float64), torch.tensor([3., 4.]))\nP("x", d.float())',
    'd = fwAD.make_dual(torch.tensor([1., 2.], dtype=torch.float64), torch.tensor([3., 4.]))\nP("x", d * d)',
    # a complex tangent on a real primal: complex through promotion, real (the output's dtype) out of element-wise
    # formulas, kept by copy_ and by a cast to a complex dtype
    _C64_TANGENT + 'P("d", d)',
    _C64_TANGENT + 'P("x", d * 2)',
    _C64_TANGENT + 'P("x", d * torch.tensor([2., 3.]))',
    _C64_TANGENT + 'P("x", d + d)',
    _C64_TANGENT + 'P("x", d.clone())',
    _C64_TANGENT + 'P("x", d.sum())',
    _C64_TANGENT + 'P("x", d.cumsum(0))',
    _C64_TANGENT + 'P("x", d.neg())',
    _C64_TANGENT + 'P("x", d.tanh())',
    _C64_TANGENT + 'P("x", d.abs())',
    _C64_TANGENT + 'P("x", d ** 2)',
    _C64_TANGENT + 'P("x", d.clone().neg_())',
    _C64_TANGENT + 'P("x", d.to(torch.complex64))',
    _C64_TANGENT + 'P("x", torch.real(d))',
    _C64_TANGENT + 'x = torch.ones(2)\nx.mul_(d)\nP("x", x)',
    _C64_TANGENT + 'x = torch.zeros(2)\nx.copy_(d)\nP("x", x)',
    _C128_TANGENT + 'P("x", d.neg())',
    # (a rule that gives a real tangent of a complex one: still the output's dtype)
    _C128_TANGENT + 'P("x", d.pow(2))',
    _C128_TANGENT + 'P("x", d.square())',
    _C128_TANGENT + 'P("x", d.clone())',
    'd = fwAD.make_dual(torch.tensor([1., 2.]), torch.tensor([3., 4.]))\nx = torch.zeros(2, dtype=torch.complex64)\n'
    'x.copy_(d)\nP("x", x)',
    # real tangents of real primals through complex values
    'd = fwAD.make_dual(torch.tensor([1., -2.]), torch.tensor([3., 4.]))\nP("x", d * (1 + 2j))\nP("y", d + 1j)',
    'd = fwAD.make_dual(torch.tensor([[1., 2.]]), torch.tensor([[3., 4.]]))\nP("x", torch.view_as_complex(d))',
    'd = fwAD.make_dual(torch.tensor([1+2j, 2-1j]), torch.tensor([3+1j, 4-2j]))\nP("x", torch.real(d))\n'
    'P("y", torch.imag(d))\nP("z", d.abs())',
]


@pytest.mark.filterwarnings("ignore:Casting complex values to real")
@pytest.mark.parametrize("program", _DTYPE_PROGRAMS)
def test_tangent_dtype_follows_the_formula(program):
    assert _printed(tg, program) == _printed(torch, program), program


# ---- in-place writes into views of a base without (or with) a tangent -------------------------------------------

_VIEW_PROGRAMS = [
    "base = torch.zeros(4)\nv = base[:2]\nv.copy_(fwAD.make_dual(torch.ones(2), torch.tensor([5., 6.])))",
    "base = torch.zeros(4)\nv = base[:2]\nv.mul_(fwAD.make_dual(torch.ones(2), torch.tensor([5., 6.])))",
    "base = torch.ones(4)\nv = base[1::2]\nv.add_(fwAD.make_dual(torch.ones(2), torch.tensor([5., 6.])), alpha=2)",
    "base = torch.ones(2, 3)\nv = base.t()[1]\nv.mul_(fwAD.make_dual(torch.ones(2), torch.tensor([5., 6.])))",
    "base = torch.ones(2, 3)\nw = base[0]\nv = w[1:]\nv.add_(fwAD.make_dual(torch.ones(2), torch.tensor([5., 6.])))",
    "base = fwAD.make_dual(torch.ones(4), torch.arange(4.))\nv = base[:2]\nv.mul_(torch.tensor([2., 3.]))",
    "base = fwAD.make_dual(torch.ones(4), torch.arange(4.))\nv = base[:2]\nv.copy_(torch.tensor([2., 3.]))",
    "base = fwAD.make_dual(torch.ones(2, 3), torch.arange(6.).reshape(2, 3))\nw = base[1]\nv = w[::2]\n"
    "v.add_(torch.tensor([2., 3.]))",
    "base = torch.zeros(4)\nv = base[:2]\nv.copy_(fwAD.make_dual(torch.ones(2), torch.tensor([5., 6.], "
    "dtype=torch.float64)))",
    "base = torch.zeros(4, dtype=torch.float64)\nv = base[:2]\nv.copy_(fwAD.make_dual(torch.ones(2), "
    "torch.tensor([5., 6.])))",
    "base = torch.zeros(4)\nv = base[:2]\nv.copy_(fwAD.make_dual(torch.ones(1), torch.tensor([5.])))",
]


@pytest.mark.parametrize("program", _VIEW_PROGRAMS)
def test_in_place_write_into_a_view(program):
    program += '\nP("base", base)\nP("v", v)'
    assert _printed(tg, program) == _printed(torch, program), program


# ---- operators PyTorch has no derivative for ---------------------------------------------------------------------

_D = "d = fwAD.make_dual(torch.tensor([1.5, -2.5]), torch.ones(2))\n"
_A = ("A = torch.tensor([[4., 1.], [1., 3.]], dtype=torch.float64)\n"
      "d = fwAD.make_dual(A, torch.ones(2, 2, dtype=torch.float64))\n")
_REFUSED = [
    _A + 'P("x", torch.linalg.ldl_factor_ex(d).LD)',
    _A + 'P("x", torch.linalg.ldl_factor(d).LD)',
    _A + 'LD, piv = torch.linalg.ldl_factor(A)\nP("x", torch.linalg.ldl_solve(LD, piv, d))',
    _D + 'P("x", torch.floor_divide(d, 2.))',
    _D + 'P("x", d // 2)',
    _D + 'P("x", torch.heaviside(d, torch.tensor(0.5)))',
    # (refused before the write)
    _D + 'x = torch.ones(2)\ntry:\n    x.heaviside_(d)\nexcept NotImplementedError as e:\n    print(e)\nP("x", x)',
    _D + 'P("x", torch.nonzero_static(d, size=3))',
    _D + 'P("x", torch.binomial(torch.tensor([3., 4.]), d.sigmoid()))',
    # (without a tangent it runs)
    _D + 'P("x", torch.floor_divide(fwAD.unpack_dual(d).primal, 2.))',
]


@pytest.mark.parametrize("program", _REFUSED)
def test_operator_without_derivative_refuses_a_dual(program):
    assert _printed(tg, program) == _printed(torch, program), program
