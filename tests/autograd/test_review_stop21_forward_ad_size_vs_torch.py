"""Review of the twenty-first stop's forward-AD, torch.Size, expand and indexing changes, side by side with PyTorch:
each program runs with both libraries and prints what it gives (values, dtypes, types, errors).

* A dual written into a dtype-changing view of a plain tensor (``z.real.copy_(dual)``, ``z.imag.mul_(dual)``,
  ``view_as_real(z)[:, 0].add_(dual)``) gives the complex base a complex zero tangent, of which the view's is a
  view, as PyTorch's: the stop made the base's tangent in the written value's (real) dtype, so reading the view's
  tangent failed ("view_as_real is only supported for complex tensors").
* ``Tensor.index_put_``/``index_put`` save the caller's index tensors, as ``torch.index_put_`` already did: writing
  into an index in place before the backward is refused in PyTorch's words (the method handed the arrays on, so
  the backward read the new indices); an index made in inference mode is refused alike, also where indexing
  converts it (an int32 tensor read as int64).
* ``torch.Size``: ``s * s`` and ``(1,) * s`` name the Size in CPython's refusal (``'torch.Size'``), and ``s +`` a
  NumPy array or scalar is NumPy's elementwise sum, as torch's (the stop refused them in tuple's words).
* ``expand`` refuses a size beyond int64 in PyTorch's words without multiplying the sizes on every call, and a
  Size plus a tuple checks only the tuple's items (the stop's Size sums took twice as long as before it).
"""

from __future__ import annotations

import pytest
from _lib import forward_ad_transcript, np, tg, torch


def _printed(lib, program: str) -> str:
    return forward_ad_transcript(lib, program, {"np": np})


def _same(program: str) -> None:
    expected = _printed(torch, program)
    assert _printed(tg, program) == expected, program


_SHOW = ("def show(t):\n"
         "    print(None if t is None else (t.dtype, tuple(t.shape), t.stride(), t.storage_offset(), t.tolist()))\n")

# ---- a dual written into a dtype-changing view -----------------------------------------------------------------

_DTYPE_VIEW_WRITES = {
    "real copy_": "z = torch.tensor([1+2j, 3-1j, 0.5j], dtype={dt})\nv = z.real\nv.copy_(d)",
    "imag mul_": "z = torch.tensor([1+2j, 3-1j, 0.5j], dtype={dt})\nv = z.imag\nv.mul_(d)",
    "view_as_real add_": "z = torch.tensor([1+2j, 3-1j, 0.5j], dtype={dt})\nv = torch.view_as_real(z)[:, 0]\nv.add_(d)",
    "real of a slice": "z = torch.tensor([1+2j, 3-1j, 0.5j, 2j], dtype={dt})[1:]\nv = z.real\nv.copy_(d)",
}


@pytest.mark.parametrize("dt", ["torch.complex128", "torch.complex64"])
@pytest.mark.parametrize("name", list(_DTYPE_VIEW_WRITES))
def test_dual_written_into_a_dtype_changing_view(name, dt):
    real = "torch.float64" if dt == "torch.complex128" else "torch.float32"
    body = (f"d = fwAD.make_dual(torch.tensor([1., 2., 3.], dtype={real}), torch.tensor([4., -5., 6.], dtype={real}))\n"
            + _DTYPE_VIEW_WRITES[name].format(dt=dt)
            + "\nshow(fwAD.unpack_dual(z).tangent)\nshow(fwAD.unpack_dual(v).tangent)\n"
            "show(fwAD.unpack_dual(z.imag).tangent)\nshow(fwAD.unpack_dual(z * 2).tangent)\n")
    _same(_SHOW + "with fwAD.dual_level():\n" + "".join(f"    {line}\n" for line in body.splitlines()))


# ---- index_put_ saves the caller's indices ----------------------------------------------------------------------

_PUTS = {
    "method index_put_": "y = (x * 1).index_put_((i,), torch.tensor(1.))",
    "method index_put_ values": "y = (x * 1).index_put_([i], v)",
    "method index_put accumulate": "y = (x * 1).index_put((i,), v, accumulate=True)",
    "function index_put_": "y = torch.index_put_(x * 1, (i,), v)",
    "setitem": "y = x * 1\ny[i] = v",
    "getitem": "y = x[i]",
}
_INDICES = {
    "int64": "torch.tensor([0, 2])",
    "int32": "torch.tensor([0, 2], dtype=torch.int32)",
    "bool": "torch.tensor([True, False, True, False])",
}


@pytest.mark.parametrize("index", list(_INDICES))
@pytest.mark.parametrize("put", list(_PUTS))
def test_index_written_before_backward(put, index):
    program = (f"x = torch.arange(4., requires_grad=True)\nv = torch.tensor([5., 6.], requires_grad=True)\n"
               f"i = {_INDICES[index]}\n{_PUTS[put]}\n"
               "i.logical_not_() if i.dtype == torch.bool else i.add_(1)\n"
               "y.sum().backward()\nprint(x.grad, v.grad)\n")
    _same(program)


@pytest.mark.parametrize("index", list(_INDICES))
@pytest.mark.parametrize("put", list(_PUTS))
def test_index_made_in_inference_mode(put, index):
    program = (f"with torch.inference_mode():\n    i = {_INDICES[index]}\n"
               "x = torch.arange(4., requires_grad=True)\nv = torch.tensor([5., 6.], requires_grad=True)\n"
               f"{_PUTS[put]}\ny.sum().backward()\nprint(x.grad, v.grad)\n")
    _same(program)


def test_index_put_method_gradients_unchanged():
    program = ("x = torch.arange(6., requires_grad=True)\nv = torch.tensor([5., 6., 7.], requires_grad=True)\n"
               "y = (x * 2).reshape(2, 3).index_put_((torch.tensor([1, 1]), torch.tensor([0, 2])), v[:2], accumulate=True)\n"
               "y = y.index_put((torch.tensor([0]),), v)\n"
               "(y * torch.arange(6.).reshape(2, 3)).sum().backward()\nprint(y, x.grad, v.grad, y.grad_fn.name())\n")
    _same(program)


# ---- torch.Size operators -----------------------------------------------------------------------------------

_SIZE_EXPRESSIONS = ["s * s", "(1,) * s", "[1] * s", "s * [1]", "s * (1,)", "s * 2.0", "2.0 * s", "s * None",
                     "s * np.float64(2)", "s * 2", "2 * s", "s * np.int64(2)", "s * True",
                     "s + np.int64(2)", "s + np.array([1, 2])", "s + np.float32(1)", "s + [1]", "s + 1",
                     "s + torch.tensor(1)", "s + (3,)", "(3,) + s", "s + s", "np.array([1, 2]) + s",
                     "s + (1, 2.5)", "(2.5,) + s", "s + (True,)", "(torch.tensor(3),) + s", "(1, None) + s",
                     "s[1:] + s[:1]"]


@pytest.mark.parametrize("expression", _SIZE_EXPRESSIONS)
def test_size_operators(expression):
    _same(f"s = torch.Size([1, 2])\nr = {expression}\nprint(type(r).__name__, r)\n")


# ---- expand beyond int64 ------------------------------------------------------------------------------------

@pytest.mark.parametrize("sizes", ["(2 ** 40, 2 ** 40)", "(2 ** 32, 2 ** 32)", "(3, 1, 4)", "(1, 1, 4)", "(-1,)",
                                   "(2, 0, -1)"])
def test_expand_sizes(sizes):
    _same(f"t = torch.ones(1).expand(*{sizes})\nprint(t.shape, t.stride())\n")
