"""A sixteenth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: tensor-manipulation notebooks of the "tensor puzzles" and
"einops by hand" kind, where shapes, strides, dtypes and errors are the whole point. einsum gymnastics (triple and
batch diagonals, an ellipsis in the middle, broadcast ellipses, sublists with Ellipsis, integer and empty operands,
the layout of a transposed product, malformed equations); advanced indexing mixing slices, None, Ellipsis, bool
masks and int tensors (where the advanced dims land) with assignments through duplicates; index_put with
accumulate, one-hot by scatter, segment sums by scatter_add/index_add/scatter_reduce/index_reduce with and without
include_self; stride()/is_contiguous() after every view and memory format, and in-place writes into expanded
tensors; sliding windows by as_strided and unfold; type promotion corners (result_type/promote_types/can_cast,
uint8 against int8, integer overflow, floor division of negatives, integer powers); printing of every dtype with
mixed magnitudes; nonzero/unique/unique_consecutive/stable sorts/searchsorted; tensor_split/hsplit/vsplit/dsplit;
meshgrid, cartesian_prod, combinations, block_diag, tril_indices and cdist; diff, torch.gradient, histc and
histogram; the tensor puzzles written with arange, broadcasting and ``@`` alone; and einops' rearrangements by
hand. Values are compared to a tolerance (cdist's and einsum's matrix products are not bit for bit).

Differences these programs found, now fixed (``tests/ops/test_program16_findings_vs_torch.py``):
- ``einsum("ij,jk->ki", ...)`` gave a transposed view where torch 2.13 multiplies the right operand first and
  gives a contiguous result (other strides, another graph); a stray or second ``.`` in an equation was refused as
  an invalid subscript (torch: "found '.' for operand 0 that is not part of any ellipsis"), a bad character after
  a second ``->`` was placed at the wrong index, and ellipsis dims that do not broadcast were worded as a
  subscript's;
- ``x[idx] = v``, ``index_put_``, ``masked_fill_`` and ``index_fill_`` into an expanded tensor were refused as an
  internal overlap; torch writes, warning that this is deprecated (``masked_fill_``/``index_fill_`` also wrote
  back what they left alone);
- ``torch.result_type`` of two numbers was refused; ``torch.unique`` counted every NaN as one value (torch keeps
  each apart); ``as_strided`` with mismatched sizes and strides, ``tril_indices(-1, 3)`` leaked NumPy's
  ValueErrors; ``meshgrid`` checked dims before dtypes; ``histc`` of data with a NaN printed ``[nan, nan]`` where
  torch prints ``[-nan, -nan]``.

Left: ``torch.result_type(half_tensor, 1j)`` and ``half_tensor * 1j`` are torch's complex32 (ComplexHalf), a
dtype tracegrad lacks (complex64 here); ``meshgrid`` of a 2-d tensor prints it in torch's legacy C++ format
(" 1  1 ...") in its refusal, tracegrad in the Python repr.
"""

from __future__ import annotations

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _einsum_gymnastics(lib, show):
    """einsum beyond matrix products: a triple diagonal, batch diagonals and traces with their gradient,
    an ellipsis in the middle, broadcast ellipses, the sublist form with Ellipsis, integer and empty operands,
    the layout of a transposed product; and the refusals of a malformed equation."""
    torch = lib
    torch.manual_seed(160)
    A = torch.randn(3, 3, 3)
    show(torch.einsum("iii->i", A), torch.einsum("iii", A), torch.einsum("iij->ij", A).shape)
    B = torch.randn(4, 3, 3, requires_grad=True)
    d = torch.einsum("bii->bi", B)
    show(d, d.grad_fn.name(), d.stride(), d.is_contiguous())
    tr = torch.einsum("bii->b", B)
    tr.sum().backward()
    show(tr, B.grad[0])
    x = torch.randn(2, 3, 4, 5)
    show(torch.einsum("a...b->...ab", x).shape, torch.einsum("...->...", x).stride())
    p = torch.einsum("ij->ji", x[0, 0])
    show(p.stride(), p.is_contiguous(), p.data_ptr() == x[0, 0].data_ptr())
    mm = torch.einsum("ij,jk->ki", x[0, 0], torch.ones(5, 2, requires_grad=True))
    show(mm.stride(), mm.is_contiguous(), mm.grad_fn.name(), mm.grad_fn.next_functions[0][0].name())
    show(torch.einsum("...ij,...jk->...ik", torch.randn(2, 1, 3, 4), torch.randn(5, 4, 2)).shape)
    show(torch.einsum(x, [Ellipsis, 0, 1], [1, Ellipsis, 0]).shape)
    show(torch.einsum(x[0], [0, 1, 2], x[1], [0, 1, 2], [0]))
    ints = torch.arange(6).reshape(2, 3)
    show(torch.einsum("ij,kj->ik", ints, ints), torch.einsum("ij->", ints).dtype)
    show(torch.einsum("i,j->ij", torch.tensor([1, 2], dtype=torch.int8), torch.tensor([3, 4], dtype=torch.int8)))
    show(torch.einsum("ij,j->i", torch.zeros(0, 3), torch.ones(3)), torch.einsum("ij,ij->", torch.zeros(2, 0), torch.zeros(2, 0)))
    show(torch.einsum("Ab,bC->AC", torch.ones(2, 3), torch.ones(3, 2)))
    show_outcome(show, lambda: torch.einsum("ij->ii", torch.ones(2, 2)))
    show_outcome(show, lambda: torch.einsum("i...j,jk->ik", torch.ones(2, 3), torch.ones(3, 2)))
    show_outcome(show, lambda: torch.einsum("ij,jk", torch.ones(2, 3), torch.ones(2, 3)))
    show_outcome(show, lambda: torch.einsum("i1->i", torch.ones(2, 3)))
    show_outcome(show, lambda: torch.einsum("ii->i", torch.ones(2, 3)))
    show_outcome(show, lambda: torch.einsum("...ij,...jk", torch.ones(2, 2, 3), torch.ones(3, 3, 4)))
    show_outcome(show, lambda: torch.einsum("i,i", torch.ones(2), torch.ones(2, dtype=torch.int64)))
    show_outcome(show, lambda: torch.einsum("ij->j->i", torch.ones(2, 3)))
    show_outcome(show, lambda: torch.einsum(torch.ones(2), [0], [1]))
    show_outcome(show, lambda: torch.einsum(torch.ones(2), [60]))
    show_outcome(show, lambda: torch.einsum("i.j", torch.ones(2, 3)))
    show_outcome(show, lambda: torch.einsum("i...j...", torch.ones(2, 3)))


def _advanced_indexing(lib, show):
    """Advanced indexing as in the puzzles: where the advanced dims land beside slices, None and Ellipsis,
    bool masks mixed with int tensors, 0-d index tensors, strides of basic views, assignments through
    duplicate indices and masks; and the IndexErrors of bad indices."""
    torch = lib
    x = torch.arange(60).reshape(3, 4, 5)
    i = torch.tensor([0, 2])
    j = torch.tensor([[1], [3]])
    show(x[i, :, j].shape, x[:, i, j].shape, x[i, j].shape, x[..., i].shape, x[None, i, None, j].shape)
    show(x[:, i, :, None].shape, x[i, None, j].shape, x[1:, [0, 1], 2].shape, x[[0], 1:3, [[4]]].shape)
    show(x[i, :, j], x[:, [1, 1, 0], [4]])
    m = torch.tensor([True, False, True, True])
    show(x[:, m].shape, x[1, m, 0], x[:, m, [0, 1, 2]].shape, x[m.nonzero().squeeze(1)[:2], :, 0].shape)
    show(x[True].shape, x[False].shape, x[None].stride(), x[..., None, 1].stride(), x[1::2, ::2].stride())
    v = x[torch.tensor(1)]
    w = x[1]
    show(v.shape, v.data_ptr() == x.data_ptr() + 20 * 8, w.storage_offset(), x[torch.tensor(1), 2].shape)
    show(x[[1, -1]].shape, x[torch.tensor([-1, -3])][:, 0, 0], x[(torch.tensor([0, 1]), torch.tensor([1, 0]))])
    big = x[x > 50]
    show(big, big.stride(), x[x.sum(-1) > 100].shape)
    y = torch.zeros(3, 4)
    y[torch.tensor([0, 0, 2]), torch.tensor([1, 1, 3])] = torch.tensor([1.0, 2.0, 3.0])
    y[:, [0, 2]] += 1
    y[y > 1.5] *= 10
    y[1] = torch.tensor([7.0, 8, 9, 10])
    y[..., -1] = 5
    show(y)
    show_outcome(show, lambda: x[3])
    show_outcome(show, lambda: x[torch.tensor([3])])
    show_outcome(show, lambda: x[:, torch.tensor([0, 5])])
    show_outcome(show, lambda: x[torch.tensor([0.0])])
    show_outcome(show, lambda: x[torch.tensor([True, False])])
    show_outcome(show, lambda: x[i, j, torch.tensor([0, 1, 2])])
    show_outcome(show, lambda: x[0, 0, 0, 0])
    show_outcome(show, lambda: x["a"])
    show_outcome(show, lambda: x[1.5])
    z = torch.zeros(3)
    show_outcome(show, lambda: z.__setitem__(torch.tensor([0, 1]), torch.tensor([1.0, 2, 3])))
    show_outcome(show, lambda: z.__setitem__(z > 0, torch.tensor([1.0, 2])))


def _puts_and_scatters(lib, show):
    """index_put with accumulate and duplicate indices, one-hot by scatter_, segment sums by
    scatter_add/index_add/scatter_reduce (include_self both ways) and index_reduce, gather tricks, with their
    gradients; and the refusals of wrong index dtypes, shapes and bounds."""
    torch = lib
    torch.manual_seed(161)
    t = torch.zeros(5)
    idx = torch.tensor([0, 1, 1, 4, 4, 4])
    vals = torch.tensor([1.0, 2, 3, 4, 5, 6])
    show(t.index_put((idx,), vals, accumulate=True), t.index_put((idx[:2],), torch.tensor(9.0)))
    g = torch.zeros(2, 3).index_put_((torch.tensor([0, 0]), torch.tensor([1, 1])), torch.tensor([1.0, 1.0]), accumulate=True)
    show(g)
    M = torch.zeros(3, 4)
    M.index_put_((torch.tensor([0, 2]),), torch.tensor([1.0, 2, 3, 4]))
    show(M)
    labels = torch.tensor([2, 0, 1, 2])
    onehot = torch.zeros(4, 3).scatter_(1, labels.unsqueeze(1), 1.0)
    show(onehot, torch.zeros(4, 3, dtype=torch.long).scatter_(1, labels[:, None], 1))
    seg = torch.tensor([0, 0, 1, 2, 2, 2])
    data = torch.arange(6.0, requires_grad=True)
    s1 = torch.zeros(3).scatter_add(0, seg, data)
    s2 = torch.zeros(3).index_add(0, seg, data, alpha=2)
    s3 = torch.full((3,), 10.0).scatter_reduce(0, seg, data, "amax", include_self=False)
    s4 = torch.full((3,), 10.0).scatter_reduce(0, seg, data, "amax")
    s5 = torch.ones(3).scatter_reduce(0, seg, data, "mean", include_self=True)
    s6 = torch.zeros(4).scatter_reduce(0, seg, data, "prod", include_self=False)
    show(s1, s2, s3, s4, s5, s6)
    (s1.sum() + s2.sum() + s3.sum() + s5.sum() + s6.sum()).backward()
    show(data.grad, s3.grad_fn.name(), s2.grad_fn.name())
    ints = torch.zeros(3, dtype=torch.long).scatter_reduce(0, seg, torch.tensor([1, 2, 3, 4, 5, 7]), "mean", include_self=False)
    show(ints, torch.zeros(3, dtype=torch.long).index_reduce_(0, seg, torch.tensor([1, 2, 3, 4, 5, 7]), "mean", include_self=False))
    src = torch.arange(12.0).reshape(3, 4)
    show(src.gather(1, torch.tensor([[3, 0], [1, 1], [2, 0]])), torch.take_along_dim(src, src.argmax(1, keepdim=True), 1))
    show_outcome(show, lambda: torch.zeros(3).scatter_(0, torch.tensor([0, 1], dtype=torch.int32), 1.0))
    show_outcome(show, lambda: torch.zeros(3).scatter_add(0, torch.tensor([0, 3]), torch.ones(2)))
    show_outcome(show, lambda: src.gather(1, torch.tensor([[4]])))
    show_outcome(show, lambda: torch.zeros(3).index_add_(0, torch.tensor([0]), torch.ones(1, dtype=torch.float64)))
    show_outcome(show, lambda: torch.zeros(3).scatter_reduce(0, seg, data, "max"))
    show_outcome(show, lambda: torch.zeros(3).index_put_((torch.tensor([0, 0]),), torch.ones(3)))
    show_outcome(show, lambda: src.gather(1, torch.tensor([0, 1])))


def _strides_and_memory_formats(lib, show):
    """stride(), storage_offset() and is_contiguous() after every common view, channels_last and
    channels_last_3d tensors through pointwise ops, reductions and *_like factories (preserve_format), expanded
    tensors written in place (refused, or deprecated), and view's refusals."""
    torch = lib
    x = torch.arange(120.0).reshape(2, 3, 4, 5)
    for v in (x.transpose(1, 2), x.permute(0, 2, 3, 1), x[:, 1], x[..., ::2], x.narrow(2, 1, 2), x.unsqueeze(1),
              x[:, :, None], x.expand(3, 2, 3, 4, 5)[1], x[0, 0].t(), x.flatten(1), x.unflatten(3, (5, 1)), x.mT, x.select(3, 4), x.diagonal(0, 2, 3), x.movedim(1, 3)):
        show(tuple(v.shape), v.stride(), v.storage_offset(), v.is_contiguous(), v.is_contiguous(memory_format=torch.channels_last))
    cl = x.contiguous(memory_format=torch.channels_last)
    show(cl.stride(), cl.is_contiguous(), cl.is_contiguous(memory_format=torch.channels_last), (cl + 1).stride(), (cl * x).stride(), (x + cl).stride())
    show(torch.empty_like(cl).stride(), torch.zeros_like(x.transpose(1, 3)).stride(), torch.ones_like(x[..., ::2]).stride(), cl.clone().stride(), cl.clone(memory_format=torch.contiguous_format).stride())
    show(x.transpose(0, 1).clone().stride(), x.expand(2, 2, 3, 4, 5).clone().stride(), x[:, :, :, ::2].clone().stride(), torch.empty_like(x.permute(3, 1, 0, 2)).stride())
    show(cl.to(torch.float64).stride(), cl.sum(1, keepdim=True).stride(), cl.sin().stride(), cl.reshape(-1).is_contiguous())
    one = torch.ones(2, 1, 4, 1)
    show(one.stride(), one.is_contiguous(memory_format=torch.channels_last), one.contiguous(memory_format=torch.channels_last).stride())
    c3 = torch.ones(1, 2, 3, 4, 5).to(memory_format=torch.channels_last_3d)
    show(c3.stride(), c3.is_contiguous(memory_format=torch.channels_last_3d))
    e = torch.zeros(3, 1).expand(3, 4)
    show(e.stride(), e.is_contiguous(), e.contiguous().stride(), torch.zeros(0, 3).stride(), torch.zeros(3, 0).t().is_contiguous())
    grid = torch.zeros(3, 1).expand(3, 4)
    grid[torch.tensor([0, 2])] = 9.0
    grid.masked_fill_(torch.tensor([True, False, False, False]), -1.0)
    show(grid, grid.stride())
    show_outcome(show, lambda: e.add_(1))
    show_outcome(show, lambda: e.copy_(torch.ones(3, 4)))
    show_outcome(show, lambda: x.transpose(1, 2).view(2, -1))
    show_outcome(show, lambda: torch.ones(2, 3).contiguous(memory_format=torch.channels_last))
    show_outcome(show, lambda: torch.ones(2, 3, 4, 5).to(memory_format=torch.channels_last_3d))
    show_outcome(show, lambda: x.view(7, -1))
    show_outcome(show, lambda: x.view(-1, -1))
    show_outcome(show, lambda: x.expand(2, 3, 4))
    show_outcome(show, lambda: x.expand(2, 1, 4, 5))
    show_outcome(show, lambda: torch.zeros(2, 3).t().view(6))
    s = torch.zeros(4)
    show_outcome(show, lambda: s.as_strided((2, 2), (1, 1)).mul_(2))
    show_outcome(show, lambda: torch.zeros(2).expand(2, 2).index_put_((torch.tensor([0]),), torch.ones(2)))


def _sliding_windows(lib, show):
    """Sliding windows by as_strided and Tensor.unfold (1-d signals and 2-d patches), their strides and
    gradients, moving averages and maxima, writes through window views; and the refusals of bad windows."""
    torch = lib
    sig = torch.arange(10.0, requires_grad=True)
    w = sig.as_strided((4, 4), (2, 1))
    show(w, w.stride(), w.grad_fn.name(), w.is_contiguous())
    w.sum().backward()
    show(sig.grad)
    u = sig.unfold(0, 3, 2)
    show(u, u.stride(), u.grad_fn.name(), u.is_contiguous())
    sig.grad = None
    (u * torch.arange(3.0)).sum().backward()
    show(sig.grad)
    img = torch.arange(2 * 5 * 6.0).reshape(2, 5, 6)
    patches = img.unfold(1, 3, 2).unfold(2, 2, 2)
    show(patches.shape, patches.stride(), patches[1, 1, 2])
    show(torch.arange(7.0).unfold(0, 7, 1).shape, torch.arange(7.0).unfold(0, 1, 3), torch.tensor(3.0).unfold(0, 1, 1))
    mov = torch.arange(8.0).as_strided((3, 3), (2, 1), 1)
    show(mov, mov.storage_offset(), torch.arange(8.0)[2:].as_strided((2, 2), (1, 2)))
    avg = torch.arange(10.0).unfold(0, 4, 1).mean(-1)
    show(avg, torch.arange(10.0).unfold(0, 4, 1).max(-1))
    z = torch.zeros(6)
    z.as_strided((3,), (2,)).fill_(1)
    z.unfold(0, 2, 2)[:, 1] += 5
    show(z)
    show_outcome(show, lambda: torch.arange(5.0).unfold(0, 6, 1))
    show_outcome(show, lambda: torch.arange(5.0).unfold(0, 2, 0))
    show_outcome(show, lambda: torch.arange(5.0).unfold(1, 2, 1))
    show_outcome(show, lambda: torch.arange(5.0).as_strided((3, 3), (1, 1), 3))
    show_outcome(show, lambda: torch.arange(5.0).as_strided((2,), (-1,)))
    show_outcome(show, lambda: torch.arange(5.0).as_strided((2, 2), (1,)))


def _type_promotion_corners(lib, show):
    """Type promotion corners: int tensors with float scalars and 0-d tensors, uint8 against int8, bool
    arithmetic, result_type/promote_types/can_cast, floor division and remainder of negatives, integer overflow,
    integer powers; and the refusals of negative powers, bool subtraction and in-place casts."""
    torch = lib
    i = torch.tensor([1, 2, 3])
    u8 = torch.tensor([200, 100], dtype=torch.uint8)
    i8 = torch.tensor([-100, 100], dtype=torch.int8)
    b = torch.tensor([True, False])
    h = torch.tensor([1.5, 2.5], dtype=torch.half)
    show((i * 1.5).dtype, (i + torch.tensor(1.5, dtype=torch.float64)).dtype, (i + torch.tensor([1.5], dtype=torch.float64)).dtype, (h + torch.tensor(1.0)).dtype, (h + torch.tensor([1.0])).dtype)
    show(u8 + i8, (u8 + i8).dtype, u8 * 2, u8 + 100, (u8 + 1000), i8 - 200, (b + b), (b * b).dtype, b + 1.5, (b & b))
    show(torch.result_type(i, 1.0), torch.result_type(u8, i8), torch.result_type(torch.tensor(1.0, dtype=torch.float64), i), torch.result_type(b, True))
    show(torch.result_type(2, 3.0), torch.result_type(True, 2), torch.result_type(1j, 2))
    show(torch.promote_types(torch.uint8, torch.int8), torch.promote_types(torch.bool, torch.float16), torch.promote_types(torch.int64, torch.float16), torch.promote_types(torch.complex64, torch.float64), torch.promote_types(torch.bfloat16, torch.float16))
    show(torch.can_cast(torch.float64, torch.int32), torch.can_cast(torch.int32, torch.float16), torch.can_cast(torch.bool, torch.uint8), torch.can_cast(torch.complex64, torch.float64), torch.can_cast(torch.int8, torch.uint8), torch.can_cast(torch.uint8, torch.bool))
    n = torch.tensor([7, -7, 7, -7, 0])
    d = torch.tensor([3, 3, -3, -3, 5])
    show(torch.floor_divide(n, d), n.remainder(d), torch.fmod(n, d), n % -4, -7 // d, torch.remainder(-7, d), n.div(d, rounding_mode="floor").dtype, n.float().remainder(-2.5))
    big = torch.tensor([2**31 - 1, -2**31], dtype=torch.int32)
    show(big + 1, big * 2, big.abs(), -big, torch.tensor([127], dtype=torch.int8) + torch.tensor([1], dtype=torch.int8), torch.tensor(255, dtype=torch.uint8) + 1, torch.tensor([2**63 - 1]) + 1)
    show(i ** 2, i ** 0, torch.tensor([2]) ** torch.tensor([3]), 2 ** i, i.pow(2.5), torch.tensor([0, 1, -1]) ** 3, torch.tensor([-2], dtype=torch.int8) ** 7)
    show_outcome(show, lambda: i ** -2)
    show_outcome(show, lambda: i.pow(torch.tensor([-1, 1, 1])))
    show_outcome(show, lambda: 2 ** -i)
    show_outcome(show, lambda: b - b)
    show_outcome(show, lambda: -b)
    show_outcome(show, lambda: i.add_(1.5))
    show_outcome(show, lambda: u8.sub_(i8))
    show_outcome(show, lambda: b.add_(1))
    show_outcome(show, lambda: torch.floor_divide(i, 0))
    show_outcome(show, lambda: i % 0)
    show_outcome(show, lambda: torch.tensor([1.0]) << 1)
    show_outcome(show, lambda: i.mul_(torch.tensor([1.0, 2, 3])))
    show_outcome(show, lambda: torch.tensor(1 + 1j) > 0)
    show(i.mul_(torch.tensor(2)), torch.tensor([1, 2], dtype=torch.int8).add_(torch.tensor(300)), u8.clone().add_(i8), torch.tensor([1.0]).add_(torch.tensor([2], dtype=torch.int64)))


def _printing_mixed_magnitudes(lib, show):
    """Printing tensors of every dtype with mixed magnitudes: ints, bools, half with inf/nan, complex,
    bfloat16, empty tensors, big int64, negative zeros, tensors with grad_fn, iinfo/finfo."""
    torch = lib
    show(str(torch.tensor([1, -20, 300000, 7])), str(torch.tensor([[True, False], [False, True]])))
    show(str(torch.tensor([1e-5, 1.0, 1e5])), str(torch.tensor([0.1, 200.0, -3.0], dtype=torch.half)))
    show(str(torch.tensor([1 + 2j, -0.5 - 1e-4j, 1000j])), str(torch.tensor([1e10, 1], dtype=torch.int64)))
    show(str(torch.tensor([float("nan"), float("inf"), -0.0, 2.0], dtype=torch.half)), str(torch.tensor([-0.0, 0.0])))
    show(str(torch.tensor([], dtype=torch.int64)), str(torch.zeros(0, 3)), str(torch.zeros(2, 0, dtype=torch.bool)), repr(torch.tensor([], dtype=torch.complex64)))
    show(repr(torch.tensor([1.0, 2.0], dtype=torch.float64)), repr(torch.tensor(3, dtype=torch.uint8)), repr(torch.tensor([1, 2], dtype=torch.int32)), repr(torch.tensor(True)))
    show(repr(torch.tensor([1.5, float("nan")], dtype=torch.bfloat16)), repr(torch.tensor([100000.0, 1.0], dtype=torch.half)), repr(torch.tensor([65504.0, 6e-8], dtype=torch.half)))
    show(repr(torch.tensor([[1e-8 + 1j, 2.0], [3.0, 4e8j]])), repr(torch.tensor([1.0 + 0j], dtype=torch.complex128)), repr(torch.arange(6).reshape(2, 3).t()))
    show(repr(torch.tensor([123456789.0, 0.001])), repr(torch.tensor([1.0, 2.0]).requires_grad_()), repr(torch.tensor([1.0]) * torch.tensor([2.0], requires_grad=True)))
    show(repr(torch.tensor([-5, 0, 5], dtype=torch.int8)), repr(torch.iinfo(torch.int8)), repr(torch.finfo(torch.half)), repr(torch.tensor([2**40, -1])))
    show(repr(torch.full((3, 3), 7, dtype=torch.int16)), repr(torch.tensor([1.0, -1.0]).neg().abs()), repr(torch.tensor([0.5, 1e-3], dtype=torch.float64)))
    show(str(torch.tensor([[1.0, 2.0]]).expand(3, 2)), str(torch.tensor([1.25, 3.5]).half().float()), torch.tensor([1, 2]).tolist(), torch.tensor(2.5).item(), torch.tensor([1 + 1j]).tolist())


def _sets_and_sorting(lib, show):
    """nonzero (as_tuple), argwhere, unique with inverse/counts (by rows and columns, NaNs),
    unique_consecutive, stable sorts among ties, NaN and signed zeros in sorts, searchsorted (right, side,
    out_int32) and bucketize; and their refusals."""
    torch = lib
    x = torch.tensor([[0, 3, 0], [2, 0, 0], [0, 0, 5]])
    nz = x.nonzero()
    rows, cols = x.nonzero(as_tuple=True)
    show(nz, nz.stride(), rows, cols, torch.nonzero(torch.tensor(5)), torch.nonzero(torch.tensor(0), as_tuple=True), torch.argwhere(x > 1))
    show(torch.tensor([1.0, 0.0, float("nan")]).nonzero(), torch.zeros(2, 0).nonzero().shape, x[x.nonzero(as_tuple=True)])
    a = torch.tensor([3, 1, 2, 3, 1, 3, 0])
    u, inv, cnt = torch.unique(a, return_inverse=True, return_counts=True)
    show(u, inv, cnt, torch.unique(a, sorted=False).sort().values, a.unique(return_counts=True)[1])
    rows2 = torch.tensor([[1, 2], [3, 4], [1, 2], [0, 9]])
    ur, ir, cr = rows2.unique(dim=0, return_inverse=True, return_counts=True)
    uc = torch.unique(rows2, dim=1)
    show(ur, ir, cr, uc, torch.unique(torch.tensor([[2, 1], [2, 1]]), dim=1, return_inverse=True))
    c = torch.tensor([1, 1, 2, 2, 3, 1, 1, 2])
    show(torch.unique_consecutive(c, return_inverse=True, return_counts=True), torch.unique_consecutive(rows2.repeat_interleave(2, 0), dim=0))
    show(torch.unique(torch.tensor([2.0, float("nan"), 1.0, float("nan")])), torch.unique(torch.tensor([True, False, True])), torch.unique(torch.tensor([], dtype=torch.long), return_counts=True))
    keys = torch.tensor([2, 1, 2, 1, 0, 2, 1])
    show(keys.sort(stable=True), keys.sort(descending=True, stable=True).indices, keys.argsort(stable=True), torch.argsort(keys, descending=True, stable=True))
    f = torch.tensor([0.5, float("nan"), -1.0, float("inf"), -0.0, 0.0, float("-inf")])
    show(f.sort(), f.sort(descending=True).indices, f.argsort(stable=True), torch.sort(torch.tensor([[3, 1], [0, 2]]), dim=0))
    m = torch.tensor([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]])
    q = torch.tensor([[0.0, 3.0, 6.0], [1.0, 4.5, 7.0]])
    show(torch.searchsorted(m, q), torch.searchsorted(m, q, right=True), torch.searchsorted(m[0], torch.tensor(3.0)), torch.searchsorted(m[0], 4, side="right"), torch.searchsorted(m[0], q, out_int32=True))
    show(torch.bucketize(q, m[0]), torch.bucketize(torch.tensor([1, 5, 9]), torch.tensor([2, 5, 8]), right=True), torch.bucketize(3.0, m[0]))
    show_outcome(show, lambda: torch.searchsorted(m, q[0]))
    show_outcome(show, lambda: torch.searchsorted(m[0], q, side="left", right=True))
    show_outcome(show, lambda: torch.searchsorted(m[0], q, side="middle"))
    show_outcome(show, lambda: torch.unique(rows2, dim=2))
    show_outcome(show, lambda: torch.bucketize(q, m))
    show_outcome(show, lambda: torch.searchsorted(m.long(), q))
    show_outcome(show, lambda: keys.sort(dim=1))


def _splitting_and_stacking(lib, show):
    """tensor_split by sections, indices and index tensors, hsplit/vsplit/dsplit, split with sizes, chunk,
    unbind: their shapes, strides and grad_fn names; hstack/dstack/column_stack; and the refusals."""
    torch = lib
    x = torch.arange(24).reshape(2, 3, 4)
    show([t.shape for t in torch.tensor_split(x, 3, dim=2)], [t.tolist() for t in torch.tensor_split(torch.arange(7), [1, 5])])
    show([t.shape for t in torch.tensor_split(x, torch.tensor([1, 3]), dim=-1)], [t.shape for t in torch.tensor_split(x, torch.tensor(2), dim=1)], [t.shape for t in x.tensor_split((0, 10), dim=1)])
    show([t.shape for t in torch.hsplit(x, 3)], [t.shape for t in torch.vsplit(x, [1])], [t.shape for t in torch.dsplit(x, [1, 2])], [t.shape for t in torch.hsplit(torch.arange(6), 3)])
    parts = x.split([1, 3], dim=2)
    show([p.stride() for p in parts], [p.storage_offset() for p in parts], [p.is_contiguous() for p in parts], [c.shape for c in x.chunk(3, dim=2)], [c.shape for c in torch.arange(5).chunk(3)])
    show([c.shape for c in torch.arange(6).chunk(4)], [t.shape for t in x.unbind(1)], x.split(3, -1)[1].shape, [t.stride() for t in torch.tensor_split(x, 2, dim=1)])
    g = torch.arange(6.0, requires_grad=True)
    a, b, c = g.tensor_split(3)
    (a * 1 + b * 2 + c * 3).sum().backward()
    show(g.grad, a.grad_fn.name(), torch.hsplit(g, 2)[0].grad_fn.name(), g.split(2)[1].grad_fn.name(), g.unbind()[2].grad_fn.name())
    show(torch.hstack([torch.ones(2), torch.zeros(3)]), torch.dstack([torch.ones(2), torch.zeros(2)]).shape, torch.column_stack([torch.arange(2), torch.ones(2, 2)]), torch.row_stack([torch.arange(2), torch.arange(2)]).shape)
    show_outcome(show, lambda: torch.dsplit(torch.ones(2, 3), 2))
    show_outcome(show, lambda: torch.hsplit(x, 5))
    show_outcome(show, lambda: torch.vsplit(torch.ones(3), 3))
    show_outcome(show, lambda: torch.tensor_split(x, 0))
    show_outcome(show, lambda: torch.tensor_split(x, torch.tensor([[1]])))
    show_outcome(show, lambda: torch.tensor_split(x, torch.tensor([1.0])))
    show_outcome(show, lambda: x.split([1, 2], dim=2))
    show_outcome(show, lambda: x.chunk(0))
    show_outcome(show, lambda: torch.tensor_split(torch.tensor(1), 2))


def _grids_and_pairs(lib, show):
    """meshgrid in both indexings (and without one), cartesian_prod, combinations, block_diag of mixed
    dtypes and 0-d/1-d blocks, tril/triu indices as index tensors, cdist for every p with its gradient; and
    their refusals."""
    torch = lib
    xs, ys = torch.arange(3), torch.arange(2)
    show_outcome(show, lambda: torch.meshgrid(xs, ys.float(), indexing="ij"))
    gx, gy = torch.meshgrid(xs, ys, indexing="xy")
    ix, iy = torch.meshgrid(xs, ys, indexing="ij")
    show(gx, gy, gx.stride(), ix.stride(), iy.stride(), gx.dtype, gy.dtype)
    show_outcome(show, lambda: torch.meshgrid(xs, ys)[0].shape)
    show([t.shape for t in torch.meshgrid([xs, ys, torch.arange(4)], indexing="xy")], torch.meshgrid(xs, indexing="ij")[0].shape)
    show(torch.cartesian_prod(xs), torch.cartesian_prod(xs, torch.tensor([7, 8]), torch.tensor([9])), torch.combinations(xs, r=0), torch.combinations(xs, r=4).shape, torch.combinations(torch.arange(4), r=3))
    show(torch.block_diag(torch.tensor([[1, 2]]), torch.tensor([[0.5]]), torch.tensor(7), torch.tensor([3, 4])), torch.block_diag().shape, torch.block_diag(torch.zeros(0, 2), torch.ones(1, 1)))
    show(torch.tril_indices(3, 3), torch.tril_indices(4, 3, -1), torch.triu_indices(3, 5, 2), torch.tril_indices(0, 3).shape, torch.triu_indices(2, 2, dtype=torch.int32).dtype, torch.tril_indices(3, 3, 10).shape)
    M = torch.arange(9.0).reshape(3, 3)
    r, c = torch.triu_indices(3, 3, 1)
    show(M[r, c], torch.zeros(3, 3).index_put((r, c), torch.ones(3)))
    torch.manual_seed(162)
    A = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    B = torch.randn(5, 3, dtype=torch.float64)
    for p in (0.0, 1.0, 2.0, 3.0, float("inf")):
        show(p, torch.cdist(A, B, p=p))
    show(torch.cdist(A, B, compute_mode="use_mm_for_euclid_dist"), torch.cdist(A[None], B[None].expand(2, 5, 3)).shape)
    d = torch.cdist(A, A)
    d.sum().backward()
    show(d.diagonal(), A.grad, d.grad_fn.name())
    show_outcome(show, lambda: torch.cdist(A, B[:, :2]))
    show_outcome(show, lambda: torch.cdist(A, B, p=-1))
    show_outcome(show, lambda: torch.cdist(A[0], B))
    show_outcome(show, lambda: torch.cdist(A.long(), B.long()))
    show_outcome(show, lambda: torch.meshgrid(xs, ys, indexing="ji"))
    show_outcome(show, lambda: torch.meshgrid(torch.ones(2, 2), ys, indexing="ij"))
    show_outcome(show, lambda: torch.cartesian_prod(torch.ones(2, 2)))
    show_outcome(show, lambda: torch.combinations(torch.ones(2, 2)))
    show_outcome(show, lambda: torch.tril_indices(-1, 3))
    show_outcome(show, lambda: torch.block_diag(torch.ones(2, 2, 2)))


def _differences_and_bins(lib, show):
    """diff with n, prepend and append; torch.gradient with scalar, per-dim and coordinate spacing and
    edge_order 2; histc and histogram with ranges, bin edges, weights and density; and their refusals."""
    torch = lib
    y = torch.tensor([1.0, 4.0, 9.0, 16.0, 25.0])
    show(y.diff(), y.diff(n=2), y.diff(prepend=torch.tensor([0.0])), torch.diff(y, append=torch.tensor([36.0, 49.0]), n=3), torch.diff(torch.tensor([1, 5, 2])), torch.diff(torch.tensor([True, False, False])))
    g2 = torch.arange(12.0).reshape(3, 4) ** 2
    show(g2.diff(dim=0), torch.diff(g2, n=0).shape, torch.diff(g2, dim=-1, prepend=g2[:, :1]).shape, torch.diff(torch.tensor([1, 3], dtype=torch.uint8).flip(0)))
    show(torch.gradient(y), torch.gradient(y, spacing=2.0), torch.gradient(y, spacing=(torch.tensor([0.0, 1, 3, 4, 7]),)), torch.gradient(y, edge_order=2))
    show(torch.gradient(g2), torch.gradient(g2, dim=1, spacing=[0.5]), torch.gradient(g2, spacing=[torch.arange(3.0), torch.tensor([0.0, 1, 2, 4])], edge_order=2))
    show(torch.gradient(torch.tensor([1, 4, 9, 16])), torch.gradient(g2, dim=(0, 1), spacing=(1.0, 2.0)))
    show_outcome(show, lambda: torch.gradient(torch.tensor([1.0])))
    show_outcome(show, lambda: torch.gradient(y, spacing=[1.0, 2.0]))
    show_outcome(show, lambda: torch.gradient(torch.tensor([1.0, 2.0]), edge_order=2))
    show_outcome(show, lambda: torch.gradient(y, edge_order=3))
    show_outcome(show, lambda: torch.gradient(y, spacing=(torch.arange(4.0),)))
    show_outcome(show, lambda: y.diff(dim=1))
    show_outcome(show, lambda: y.diff(prepend=torch.zeros(1, 1)))
    data = torch.tensor([0.5, 1.5, 1.5, 2.0, 3.9, -1.0, 4.0, float("nan")])
    show(torch.histc(data[:-1], bins=4, min=0, max=4), torch.histc(torch.tensor([2.0, 2.0]), bins=3), torch.histc(data[:-1], bins=2), torch.histc(torch.tensor([1.0, 1.0, 1.0]), bins=4, min=0, max=0))
    h = torch.histogram(data[:-1], bins=4, range=(0.0, 4.0))
    show(h.hist, h.bin_edges, torch.histogram(data[:-1], bins=torch.tensor([0.0, 1.0, 3.0, 4.0]), weight=torch.arange(7.0), density=True))
    show(torch.histogram(torch.tensor([1.0, 2.0, 1.0]), bins=3, density=True), torch.histogram(torch.tensor([1.0, 2.0, 1.0], dtype=torch.float64), 2).bin_edges)
    show_outcome(show, lambda: torch.histc(data, bins=3))
    show_outcome(show, lambda: torch.histc(torch.tensor([1, 2]), bins=3))
    show_outcome(show, lambda: torch.histc(data[:-1], bins=3, min=2, max=1))
    show_outcome(show, lambda: torch.histogram(data[:-1], bins=torch.tensor([1.0, 0.0])))
    show_outcome(show, lambda: torch.histogram(torch.tensor([1, 2]), bins=2))
    show_outcome(show, lambda: torch.histc(data[:-1], bins=0))


def _tensor_puzzles(lib, show):
    """The "tensor puzzles": ones, outer, diag, eye, triu, cumsum, diff, vstack, roll, flip, compress,
    pad_to, sequence_mask, bincount, scatter_add, flatten, linspace, heaviside, repeat and bucketize written with
    arange, broadcasting, comparisons and @ alone; and what @ refuses."""
    torch = lib
    def arange(i):
        return torch.tensor(range(i))
    def where(q, a, b):
        return (q * a) + (~q) * b
    def ones(i):
        return where(arange(i) > -1, 1, 0)
    def outer(a, b):
        return a[:, None] * b[None, :]
    def diag(a):
        return a[arange(a.shape[0]), arange(a.shape[0])]
    def eye(j):
        return (arange(j)[:, None] == arange(j)) * 1
    def triu(j):
        return (arange(j)[:, None] <= arange(j)) * 1
    def cumsum(a):
        return a @ triu(a.shape[0])
    def diff(a, i):
        return a[arange(i)] - where(arange(i) > 0, a[arange(i) - 1], 0)
    def vstack(a, b):
        return where(arange(2)[:, None] == 0, a, b)
    def roll(a, i):
        return a[(arange(i) + 1) % i]
    def flip(a, i):
        return a[i - arange(i) - 1]
    def compress(g, v, i):
        return v[g]
    def pad_to(a, i, j):
        return a @ ((arange(i)[:, None] == arange(j)) * 1)
    def sequence_mask(values, length):
        return where(length[:, None] > arange(values.shape[1]), values, 0)
    def bincount(a, j):
        return ones(a.shape[0]) @ eye(j)[a]
    def scatter_add(values, link, j):
        return values @ eye(j)[link]
    def flatten(a, i, j):
        return a[arange(i * j) // j, arange(i * j) % j]
    def linspace(i, j, n):
        return i + (j - i) * arange(n) / max(1, n - 1)
    def heaviside(a, b):
        return where(a == 0, b, a > 0)
    def repeat(a, d):
        return ones(d)[:, None] @ a[None, :]
    def bucketize(v, boundaries):
        return (v[:, None] >= boundaries) * 1 @ ones(boundaries.shape[0])
    a = torch.tensor([3, 1, 4, 1, 5])
    show(ones(3), outer(a, arange(3)), diag(outer(a, a)), eye(3), triu(3), cumsum(a), diff(a, 5))
    show(vstack(a, -a), roll(a, 5), flip(a, 5), compress(torch.tensor([True, False, True, True, False]), a, 5), pad_to(a, 5, 7))
    show(sequence_mask(outer(a, a), torch.tensor([1, 3, 0, 5, 2])), bincount(torch.tensor([2, 0, 2, 1]), 4), scatter_add(torch.tensor([5, 1, 7, 2, 3]), torch.tensor([0, 0, 1, 0, 2]), 3))
    show(flatten(outer(a, arange(3)), 5, 3), linspace(0, 1, 5), linspace(2, 3, 1), heaviside(torch.tensor([-1, 0, 2]), torch.tensor([7, 8, 9])), repeat(a, 2))
    show(bucketize(torch.tensor([2, 5, 3, 0]), torch.tensor([1, 3, 5])), torch.bucketize(torch.tensor([2, 5, 3, 0]), torch.tensor([1, 3, 5]), right=True))
    show(torch.tensor(range(4)).dtype, torch.tensor(range(0)).shape, torch.tensor([True]) * 3, torch.tensor(range(3)) / 2, (arange(3) > 0).long() @ arange(3))
    show_outcome(show, lambda: (arange(3) > 0) @ (arange(3) > 0))
    show_outcome(show, lambda: arange(3) @ arange(3).float())
    show_outcome(show, lambda: a @ triu(4))
    show_outcome(show, lambda: torch.ones(2, 3, dtype=torch.int64) @ torch.ones(3, dtype=torch.int32))
    show_outcome(show, lambda: torch.tensor([1, 2]) @ torch.tensor(3))


def _einops_by_hand(lib, show):
    """einops' rearrange/reduce/repeat by hand: channels-first views, patchify and back, grouped means,
    repeat by expand, head splitting and merging with gradients, pixel_shuffle against a manual rearrange; and
    the refusals of reshape, unflatten, permute, view, flatten and movedim."""
    torch = lib
    torch.manual_seed(163)
    x = torch.arange(2 * 6 * 4 * 3.0).reshape(2, 6, 4, 3)  # b h w c
    y = x.permute(0, 3, 1, 2)
    show(y.shape, y.stride(), y.is_contiguous(), y.is_contiguous(memory_format=torch.channels_last))
    tokens = x.reshape(2, 6 * 4, 3)
    show(tokens.stride(), tokens.data_ptr() == x.data_ptr(), x.flatten(1, 2).shape)
    p = 2
    patches = x.reshape(2, 3, p, 2, p, 3).permute(0, 1, 3, 2, 4, 5).reshape(2, 6, p * p * 3)
    show(patches.shape, patches[1, 4], patches.is_contiguous())
    back = patches.reshape(2, 3, 2, p, p, 3).permute(0, 1, 3, 2, 4, 5).reshape(2, 6, 4, 3)
    show(torch.equal(back, x), back.stride())
    r = x.unflatten(1, (3, 2)).mean(2)
    show(r.shape, r[0, 0], x.unflatten(1, (-1, 2)).amax(dim=(2, 3)).shape)
    rep = x[:, :, :, None, :].expand(2, 6, 4, 2, 3).reshape(2, 6, 8, 3)
    show(rep.shape, rep.stride(), rep[0, 0, :, 0], x.repeat_interleave(2, dim=2).equal(rep))
    ex = x.sum(-1, keepdim=True).expand(-1, -1, -1, 3)
    show(ex.stride(), ex.is_contiguous(), ex.contiguous().stride(), ex.reshape(2, -1).stride())
    t = x.transpose(1, 2)
    show(t.reshape(2, 4, 18).stride(), t.reshape(2, 4, 18).is_contiguous(), t.flatten().is_contiguous(), t.view(2, 4, 6, 3).shape)
    q = torch.randn(2, 5, 8, requires_grad=True)
    heads = q.view(2, 5, 2, 4).transpose(1, 2)
    merged = heads.transpose(1, 2).reshape(2, 5, 8)
    merged.pow(2).sum().backward()
    show(heads.shape, heads.stride(), heads.grad_fn.name(), merged.grad_fn.name(), torch.allclose(q.grad, 2 * q))
    ps = torch.nn.functional.pixel_shuffle(torch.arange(16.0).reshape(1, 4, 2, 2), 2)
    manual = torch.arange(16.0).reshape(1, 1, 2, 2, 2, 2).permute(0, 1, 4, 2, 5, 3).reshape(1, 1, 4, 4)
    show(ps, torch.equal(ps, manual), ps.stride())
    show(torch.einsum("bhwc->bchw", x).stride(), torch.einsum("bhwc->b", x), x.movedim(-1, 1).stride(), x.swapaxes(0, 3).shape, x.swapdims(1, 2).stride())
    show_outcome(show, lambda: x.reshape(2, 5, -1))
    show_outcome(show, lambda: x.unflatten(1, (4, -1)))
    show_outcome(show, lambda: x.permute(0, 1, 2))
    show_outcome(show, lambda: x.permute(0, 1, 1, 2))
    show_outcome(show, lambda: heads.view(2, 5, 8))
    show_outcome(show, lambda: x.flatten(2, 1))
    show_outcome(show, lambda: x.movedim((0, 1), (2,)))


PROGRAMS = [
    _einsum_gymnastics,
    _advanced_indexing,
    _puts_and_scatters,
    _strides_and_memory_formats,
    _sliding_windows,
    _type_promotion_corners,
    _printing_mixed_magnitudes,
    _sets_and_sorting,
    _splitting_and_stacking,
    _grids_and_pairs,
    _differences_and_bins,
    _tensor_puzzles,
    _einops_by_hand,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
