"""A twenty-seventh set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: memory, in-place and view semantics as notebook users meet
them. The ``.data`` trick against ``detach()`` (shared memory, the version counter autograd checks and the one it
does not see); the version-counter errors with their hints, for outputs and inputs saved by exp, sigmoid, mul and
pow; in-place writes on leaves that require grad and on views of them, under and outside no_grad; in-place writes
through views of non-leaves (CopySlices, the view's new grad_fn, ``_version``/``_base``/``_is_view()`` of base and
view, unbind's multi-output views); the in-place view ops (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``,
``as_strided_``, ``swapdims_``); ``copy_`` with broadcasting and dtype casts and the gradients through it;
``resize_``/``resize_as_``, ``set_`` and ``is_set_to``; storage pointers and offsets that tell views from copies,
and ``clone``/``contiguous`` in channels_last; ``out=`` arguments (the resize warning, aliasing an input, dtype and
autograd refusals); ``allow_mutation_on_saved_tensors``; an optimizer stepping in place from post-accumulate-grad
hooks beside ``_foreach_add_``/``_foreach_mul_`` and ``param.data -= ...``; and ``share_memory_``/``pin_memory``
on the CPU. Values are drawn from the seeded global generator, which is torch's; tensors shown before a later
in-place write are cloned first (``show`` keeps the tensor's memory), and a resized tensor is shown by ``tolist()``
(a live ``.numpy()`` of it makes torch's storage refuse to resize).

Differences these programs found, now fixed (``tests/ops/test_program27_findings_vs_torch.py``):
- an in-place foreach op on parameters outside no_grad (``_foreach_mul_(params, [1.0])``) checked its scalar
  list, packed scalars or 0-d tensor before refusing the leaf; torch checks the tensor lists' lengths, refuses the
  leaf, then checks the rest; an out-of-place foreach op on tensors that require grad, given lists of different
  lengths, raised a Python ``IndexError`` while making its node;
- ``set_(storage, offset, size, stride)`` past the storage's end raised NumPy's ValueError (torch grows the
  storage), and a negative offset, size or stride, or strides of another length, raised NumPy's ValueError or
  were taken (torch raises its RuntimeErrors).

Left:
- a view made before its base required grad (``x = torch.ones(3); v = x[:2]; x.requires_grad_()``): torch says
  ``v.requires_grad`` but gives it no grad_fn and no edge (a gradient through ``v`` does not reach ``x``) until a
  write bumps the version; tracegrad gives it an ``AsStridedBackward0`` and the gradient flows (the engine has no
  node whose edges are all empty);
- growing a storage (``resize_`` of a view past its storage's end, ``set_`` past it) reallocates it under every
  tensor over it in torch; in tracegrad the other tensors keep the old memory (their ``data_ptr()`` differs);
- a live ``t.numpy()`` array makes torch's ``t.resize_`` refuse ("Trying to resize storage that is not
  resizable"); tracegrad resizes;
- ``out=`` aliasing an input of ``mm``/``matmul``/``mv``/``bmm`` (``torch.mm(x, x, out=x)``): torch zeroes the
  output first (or overlaps batches), tracegrad computes the product;
- an empty ``set_`` view starting past its storage's end reports an offset clamped to the end; torch reports a
  stride of 1 for an empty view set with stride -1;
- ``resize_`` of a tensor in shared memory crashes torch (a segmentation fault); tracegrad refuses it.
"""

from __future__ import annotations

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _data_versus_detach(lib, show):
    """The ``.data`` trick against ``detach()``: both share memory with the original, but only a write through
    ``detach()`` bumps the version counter autograd checks, so the ``.data`` write gives a silently wrong gradient
    where the ``detach()`` write is refused."""
    torch = lib
    torch.manual_seed(270)
    w = torch.randn(3, requires_grad=True)
    d, det = w.data, w.detach()
    show(d.requires_grad, det.requires_grad, d.is_leaf, det.is_leaf, d.grad_fn, det.grad_fn)
    show(d.data_ptr() == w.data_ptr(), det.data_ptr() == w.data_ptr(), d._version, det._version, w._version)
    show(d._is_view(), det._is_view(), d._base is None, det._base is None)

    y = w.exp()
    w.data.mul_(2)
    show(w._version, y.grad_fn.name())
    y.sum().backward()
    show("grad after .data write (silently the old exp)", w.grad.clone())
    show(torch.allclose(w.grad, w.detach().exp()))

    w.grad = None
    y = w.exp()
    det = w.detach()
    det.mul_(0.5)
    show(w._version, det._version)
    show_outcome(show, lambda: y.sum().backward())

    z = w.sigmoid()
    z.detach().zero_()
    show_outcome(show, lambda: z.sum().backward())

    # assigning .data swaps the tensor under the leaf: shape and dtype may change
    leaf = torch.ones(2, 2, requires_grad=True)
    leaf.data = torch.arange(6.0)
    show(leaf.shape, leaf.requires_grad, leaf.is_leaf, leaf._version, leaf)
    leaf.sum().backward()
    show(leaf.grad)
    show_outcome(show, lambda: setattr(leaf, "data", [1.0, 2.0]))
    leaf.data = torch.zeros(3, dtype=torch.float64)
    show(leaf.dtype, leaf.grad.dtype)
    with torch.no_grad():
        n = w * 2
    show(n.requires_grad, n.is_leaf, n.data_ptr() == n.data.data_ptr())


def _version_counter_errors(lib, show):
    """The version-counter errors a user meets, with their hints: outputs saved by exp/sigmoid/tanh modified in
    place, inputs saved by mul and pow, the same with retain_graph, and ReLU(inplace=True) after a sigmoid."""
    torch, nn = lib, lib.nn
    torch.manual_seed(271)
    x = torch.randn(3, requires_grad=True)
    for name in ("exp", "sigmoid", "tanh"):
        y = getattr(x, name)()
        show(name, y.grad_fn.name(), y._version)
        y.add_(1)
        show(y._version, y.grad_fn.name())
        show_outcome(show, lambda y=y: y.sum().backward())

    a = x * 2
    b = a * a
    a.mul_(3)
    show(a._version, a.grad_fn.name(), b.grad_fn.name())
    show_outcome(show, lambda: b.sum().backward())

    m = torch.randn(2, 3, requires_grad=True) + 0
    p = m.pow(3)
    m[0, 0] = 5.0
    show(m._version, m.grad_fn.name())
    show_outcome(show, lambda: p.sum().backward())

    # the add of a saved input is fine: add saves nothing
    q = x + 1
    r = q + q
    q.zero_()
    r.sum().backward()
    show(x.grad.clone())

    # two backwards through a graph whose saved tensor changed in between
    x.grad = None
    s = x.exp()
    t = s.sum()
    t.backward(retain_graph=True)
    show(x.grad.clone())
    s += 1
    show_outcome(show, lambda: t.backward())

    net = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), nn.ReLU(inplace=True), nn.Linear(3, 1))
    out = net(torch.randn(4, 3))
    show(out.grad_fn.name(), out.shape)
    show_outcome(show, lambda: out.sum().backward())
    big = torch.randn(2, 4, requires_grad=True)
    e = big.exp()
    e.add_(1)
    show_outcome(show, lambda: e.sum().backward())
    f = big.double().exp()
    f.mul_(2)
    show_outcome(show, lambda: f.sum().backward())


def _inplace_on_leaves(lib, show):
    """In-place writes on leaves that require grad and on views of them: refused outside no_grad, allowed inside
    it (the version moves on, the grad stays), and ``param.data -= ...`` beside the no_grad update."""
    torch = lib
    torch.manual_seed(272)
    w = torch.randn(4, requires_grad=True)
    show_outcome(show, lambda: w.add_(1))
    show_outcome(show, lambda: w.zero_())
    show_outcome(show, lambda: w[0].fill_(3))
    show_outcome(show, lambda: w.__setitem__(1, 0.0))
    show_outcome(show, lambda: w.view(2, 2).mul_(2))
    show_outcome(show, lambda: w.clamp_(min=0))
    show_outcome(show, lambda: torch.relu_(w))
    show(w._version)

    loss = (w ** 2).sum()
    loss.backward()
    g = w.grad.clone()
    with torch.no_grad():
        w -= 0.1 * w.grad
    show(w._version, w.requires_grad, w.is_leaf, w.grad_fn, torch.equal(w.grad, g))
    w.data -= 0.1 * w.grad
    show(w._version, w.clone().detach())
    with torch.no_grad():
        v = w[:2]
        v.mul_(0)
    show(w._version, v._version, v._base is w, v.requires_grad, v.grad_fn, w.clone().detach())

    # a non-leaf's in-place write is fine, and its grad_fn changes
    h = w * 1
    show(h.grad_fn.name())
    h.add_(1)
    show(h.grad_fn.name(), h._version)
    h.sum().backward()
    show(w.grad)

    # a leaf without requires_grad, then requires_grad_ after writing
    buf = torch.zeros(3)
    buf.add_(2)
    buf.requires_grad_()
    show(buf._version, buf.is_leaf)
    show_outcome(show, lambda: buf.requires_grad_(False).add_(1))
    show(buf.requires_grad, buf._version)
    show_outcome(show, lambda: torch.zeros(2, dtype=torch.long).requires_grad_())


def _views_of_nonleaves(lib, show):
    """In-place writes through views of non-leaves: the base's grad_fn becomes CopySlices, the view's is rebuilt,
    ``_version`` is shared, ``_base`` and ``_is_view()`` tell views apart, and the gradients come out right; the
    multi-output views of unbind/split refuse the write."""
    torch = lib
    torch.manual_seed(273)
    x = torch.randn(3, 4, requires_grad=True)
    y = x * 2
    row = y[1]
    col = y[:, 2]
    show(row._is_view(), y._is_view(), row._base is y, col._base is y, y._base, row.grad_fn.name())
    show(y._version, row._version, col._version)
    row.mul_(10)
    show(y._version, row._version, col._version)
    show(y.grad_fn.name(), row.grad_fn.name(), col.grad_fn.name())
    col.sub_(1)
    show(y.grad_fn.name(), col.grad_fn.name(), y._version)
    y.sum().backward()
    show(x.grad)

    x.grad = None
    z = x.clone()
    tri = z.t()[1:3]
    show(tri._base is z, tri.grad_fn.name(), tri.stride(), tri.storage_offset())
    tri.exp_()
    show(z.grad_fn.name(), tri.grad_fn.name())
    (z * torch.arange(12.0).view(3, 4)).sum().backward()
    show(x.grad)

    # view of a view: _base is the root
    base = x + 0
    vv = base.view(12)[2:8].view(2, 3)
    show(vv._base is base, vv.grad_fn.name(), vv.is_contiguous())
    vv.fill_(0.5)
    show(base.grad_fn.name(), vv.grad_fn.name(), base._version)

    parts = (x * 1).unbind(0)
    show([p.grad_fn.name() for p in parts], parts[0]._is_view())
    show_outcome(show, lambda: parts[0].mul_(2))
    chunks = (x * 1).split(2, dim=1)
    show_outcome(show, lambda: chunks[1].add_(1))
    with torch.no_grad():
        nv = (x * 1).unbind(0)[0]
    show_outcome(show, lambda: nv.add_(1))
    det = (x * 1).detach()[0]
    det.add_(1)
    show(det._version, det._is_view())


def _inplace_view_ops(lib, show):
    """The in-place view ops: they change the tensor's shape and strides where it stands (the version does not
    move), on plain tensors and on non-leaves with the gradients through them, and their refusals."""
    torch = lib
    torch.manual_seed(274)
    a = torch.arange(6.0).view(2, 3)
    ptr = a.data_ptr()
    a.t_()
    show(a.shape, a.stride(), a._version, a.data_ptr() == ptr, a.is_contiguous())
    a.transpose_(0, 1)
    show(a.shape, a.stride(), a.is_contiguous())
    a.unsqueeze_(1)
    show(a.shape, a.stride())
    a.squeeze_()
    show(a.shape, a.stride())
    a.unsqueeze_(0).unsqueeze_(-1)
    show(a.shape, a.stride())
    a.squeeze_(0)
    show(a.shape)
    a.squeeze_((0, 2))
    show(a.shape)
    a.swapdims_(0, 1)
    show(a.shape, a.stride(), a)
    a.as_strided_((2, 2), (1, 2), 1)
    show(a.shape, a.stride(), a.storage_offset(), a)
    show_outcome(show, lambda: torch.zeros(2, 3, 4).t_())
    show_outcome(show, lambda: a.transpose_(0, 2))
    show_outcome(show, lambda: a.unsqueeze_(4))

    x = torch.randn(2, 3, requires_grad=True)
    y = x * 3
    y.t_()
    show(y.shape, y.grad_fn.name(), y._version, y.is_leaf)
    y.unsqueeze_(0)
    show(y.shape, y.grad_fn.name())
    (y * torch.arange(6.0).view(1, 3, 2)).sum().backward()
    show(x.grad)
    show_outcome(show, lambda: x.t_())
    show_outcome(show, lambda: x.unsqueeze_(0))
    with torch.no_grad():
        x.t_()
    show(x.shape, x.requires_grad, x.is_leaf, x._version)
    v = (x * 1)[0]
    v.squeeze_()
    show(v.shape, v._base is not None, v.grad_fn.name())
    w = torch.ones(3, 1, requires_grad=True).clone()
    w.swapdims_(0, 1)
    w.as_strided_((3,), (1,))
    show(w.shape, w.grad_fn.name())


def _copy_broadcast_and_cast(lib, show):
    """``copy_`` with broadcasting and dtype casts, its refusals, and the gradients through it: the source gets
    the (summed) gradient, the destination's old value none."""
    torch = lib
    torch.manual_seed(275)
    dst = torch.zeros(3, 4)
    dst.copy_(torch.arange(4.0))
    show(dst, dst._version)
    dst.copy_(torch.tensor([[1.0], [2.0], [3.0]]))
    show(dst)
    dst.copy_(torch.tensor(7))
    show(dst, dst.dtype, dst._version)
    ints = torch.empty(4, dtype=torch.int32)
    ints.copy_(torch.tensor([1.9, -1.9, 2.5, -0.5]))
    show(ints)
    flags = torch.empty(4, dtype=torch.bool).copy_(torch.tensor([0.0, 0.1, -2.0, 0.0]))
    show(flags)
    halves = torch.empty(3, dtype=torch.float16).copy_(torch.tensor([1e-8, 70000.0, 1 / 3], dtype=torch.float64))
    show(halves)
    real = torch.empty(2)
    real.copy_(torch.tensor([1 + 2j, 3 - 1j]))
    show(real)
    show_outcome(show, lambda: torch.zeros(3).copy_(torch.ones(2)))
    show_outcome(show, lambda: torch.zeros(2, 3).copy_(torch.ones(3, 2)))
    show_outcome(show, lambda: torch.zeros(2).copy_([1.0, 2.0]))

    src = torch.randn(4, requires_grad=True)
    buf = torch.zeros(3, 4)
    buf.copy_(src)
    show(buf.grad_fn.name(), buf.requires_grad, buf.is_leaf)
    (buf * torch.arange(12.0).view(3, 4)).sum().backward()
    show(src.grad)

    src.grad = None
    old = torch.randn(2, 4, requires_grad=True)
    target = old * 1
    target[1].copy_(src)
    show(target.grad_fn.name())
    target.sum().backward()
    show(old.grad, src.grad)

    d64 = torch.zeros(4, dtype=torch.float64)
    d64.requires_grad_()
    show_outcome(show, lambda: d64.copy_(src))
    d64b = torch.zeros(4, dtype=torch.float64)
    d64b.copy_(src)
    show(d64b.requires_grad, d64b.grad_fn.name(), d64b.dtype)
    g, = torch.autograd.grad(d64b.sum(), src)
    show(g, g.dtype)
    nograd = torch.zeros(4)
    with torch.no_grad():
        nograd.copy_(src)
    show(nograd.requires_grad, nograd.grad_fn, nograd._version)


def _resize_and_set(lib, show):
    """``resize_``/``resize_as_`` (shrinking keeps the first elements, growing keeps them too; the new part is
    not shown), ``set_`` onto another tensor or a storage with ``is_set_to``, and the refusals with grad."""
    torch = lib
    torch.manual_seed(276)
    t = torch.arange(12.0)
    ptr = t.data_ptr()
    t.resize_(3, 2)
    show(t.tolist(), t.shape, t.stride(), t.data_ptr() == ptr, t._version, t.untyped_storage().nbytes())
    t.resize_(2, 8)
    show(t.shape, t[0].tolist(), t.untyped_storage().nbytes() >= 64)
    t.resize_(0)
    show(t.shape, t.numel(), t.untyped_storage().nbytes() >= 64)
    u = torch.ones(2, 2)
    u.resize_as_(torch.empty(1, 3))
    show(u.shape, u.stride(), u)
    show_outcome(show, lambda: torch.ones(2).resize_(-1))

    g = torch.zeros(3, requires_grad=True)
    show_outcome(show, lambda: g.resize_(4))
    show_outcome(show, lambda: g.resize_(3))
    show_outcome(show, lambda: (g * 1).resize_(2))
    show_outcome(show, lambda: g.resize_as_(torch.ones(2)))

    source = torch.arange(6.0)
    dest = torch.empty(0)
    dest.set_(source)
    show(dest, dest.is_set_to(source), source.is_set_to(dest), dest.data_ptr() == source.data_ptr())
    dest[0] = 100.0
    show(source[0].item(), source._version, dest._version)
    other = torch.empty(0)
    other.set_(source.untyped_storage(), 2, (2, 2), (1, 2))
    show(other, other.storage_offset(), other.is_set_to(source))
    same = torch.empty(0).set_(source.untyped_storage(), 0, (6,), (1,))
    show(same.is_set_to(source), source.view(2, 3).is_set_to(source))
    empty = torch.empty(0)
    empty.set_()
    show(empty.shape, empty.untyped_storage().nbytes())
    grown = torch.empty(0)
    grown.set_(torch.ones(4).untyped_storage(), 2, (2, 2), (2, 1))  # (past the storage's end: torch grows it)
    show(grown.shape, grown.stride(), grown.storage_offset(), grown.untyped_storage().nbytes(), grown[0].tolist())
    small = torch.arange(6.0).untyped_storage()
    show_outcome(show, lambda: torch.empty(0).set_(small, -1, (3,), (1,)))
    show_outcome(show, lambda: torch.empty(0).set_(small, 0, (2,), (1, 2)))
    show_outcome(show, lambda: torch.empty(0).set_(small, 0, (-1,), (1,)))
    show_outcome(show, lambda: torch.empty(0).set_(small, 3, (3,), (-1,)))
    show_outcome(show, lambda: torch.zeros(2).set_(torch.zeros(2, dtype=torch.float64)))
    show_outcome(show, lambda: g.set_(torch.ones(3)))
    with torch.no_grad():
        g.set_(torch.ones(5))
    show(g.shape, g.requires_grad)


def _views_versus_copies(lib, show):
    """Telling views from copies by ``untyped_storage().data_ptr()``, ``data_ptr()`` and ``storage_offset()``:
    reshape of contiguous and transposed tensors, flatten, contiguous returning self, ``view`` refused where it
    cannot, and channels_last clones with their strides."""
    torch = lib
    torch.manual_seed(277)
    x = torch.arange(24.0).view(2, 3, 4)

    def same_storage(a, b):
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()

    for name, y in [("reshape", x.reshape(6, 4)), ("t-reshape", x.transpose(1, 2).reshape(2, 12)),
                    ("flatten", x.flatten()), ("t-flatten", x.mT.flatten()), ("slice", x[:, 1:]),
                    ("index", x[:, [0, 2]]), ("contiguous", x.contiguous()), ("t-contiguous", x.mT.contiguous()),
                    ("clone", x.clone()), ("narrow", x.narrow(2, 1, 2)), ("select", x[1, 2]),
                    ("expand", x[:, :1].expand(2, 3, 4)), ("diagonal", x.diagonal(dim1=1, dim2=2))]:
        show(name, same_storage(x, y), y.data_ptr() == x.data_ptr(), y.storage_offset(), y.stride(), y._is_view())
    show(x.contiguous() is x, x.mT.is_contiguous(), x[:, :, ::2].is_contiguous())
    show_outcome(show, lambda: x.mT.view(24))
    show_outcome(show, lambda: x[:, :, ::2].view(-1))
    show(x.mT.reshape(24)._is_view(), x.view(4, 6)._base is x)
    show(x.untyped_storage().nbytes(), x[1].untyped_storage().nbytes(), x.nbytes, x[1].nbytes, x.element_size())

    img = torch.randn(2, 3, 4, 5)
    cl = img.clone(memory_format=torch.channels_last)
    show(cl.stride(), cl.is_contiguous(), cl.is_contiguous(memory_format=torch.channels_last), torch.equal(cl, img))
    cc = img.contiguous(memory_format=torch.channels_last)
    show(cc.stride(), cc.contiguous(memory_format=torch.channels_last) is cc, cc.contiguous().stride())
    show(cl.clone().stride(), cl.clone(memory_format=torch.contiguous_format).stride(), (cl + 1).stride())
    show(torch.empty_like(cl).stride(), cl.to(torch.float64).stride(), cl.permute(0, 2, 3, 1).is_contiguous())
    show_outcome(show, lambda: torch.randn(3, 4).contiguous(memory_format=torch.channels_last))
    v3 = torch.randn(2, 3, 4, 5, 6).clone(memory_format=torch.channels_last_3d)
    show(v3.stride(), v3.is_contiguous(memory_format=torch.channels_last_3d))
    x2 = torch.ones(2, 1, 3, 3).contiguous(memory_format=torch.channels_last)
    show(x2.stride(), x2.is_contiguous(), x2.is_contiguous(memory_format=torch.channels_last))


def _out_arguments(lib, show):
    """``out=`` arguments: resized with the deprecation warning when they hold elements of another shape, quietly
    when empty, aliasing an input, refused for a dtype they cannot hold or when an input requires grad, and the
    version of the out tensor."""
    torch = lib
    torch.manual_seed(278)
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    out = torch.empty(0)
    r = torch.add(a, b, out=out)
    show(r is out, out.shape, out._version, torch.equal(out, a + b))
    wrong = torch.zeros(5)
    torch.mul(a, b, out=wrong)
    show(wrong.shape, wrong._version)
    same = torch.zeros(2, 3)
    ptr = same.data_ptr()
    torch.sub(a, b, out=same)
    show(same.data_ptr() == ptr, same._version)
    torch.sum(a, dim=0, out=same)
    show(same.shape)
    alias = a.clone()
    torch.mul(alias, 2, out=alias)
    show(torch.equal(alias, a * 2), alias._version)
    torch.matmul(alias, b.t(), out=alias)
    show(alias.shape, alias._version)
    cum = torch.ones(4)
    torch.cumsum(cum, 0, out=cum)
    show(cum)
    longs = torch.empty(2, 3, dtype=torch.long)
    show_outcome(show, lambda: torch.add(a, b, out=longs))
    doubles = torch.empty(2, 3, dtype=torch.float64)
    torch.add(a, b, out=doubles)
    show(doubles.dtype, torch.allclose(doubles, (a + b).double()))
    ints_ok = torch.empty(3, dtype=torch.long)
    torch.add(torch.tensor([1, 2, 3]), 1, out=ints_ok)
    show(ints_ok)
    w = torch.randn(2, 3, requires_grad=True)
    show_outcome(show, lambda: torch.mul(w, 2, out=torch.empty(2, 3)))
    show_outcome(show, lambda: torch.exp(a, out=w))
    with torch.no_grad():
        torch.mul(w, 2, out=same)
    show(same.requires_grad, same.grad_fn)
    mx = torch.empty(0)
    idx = torch.empty(0, dtype=torch.long)
    res = torch.max(a, dim=1, out=(mx, idx))
    show(res.values is mx, mx, idx)
    show_outcome(show, lambda: torch.max(a, dim=1, out=(torch.empty(0), torch.empty(0))))
    view_out = torch.zeros(4, 3)
    torch.add(a, 1, out=view_out[1:3])
    show(view_out)
    shared = torch.zeros(3)
    show_outcome(show, lambda: torch.add(shared[:2], 1, out=shared[1:]))


def _allow_mutation_on_saved(lib, show):
    """``torch.autograd.graph.allow_mutation_on_saved_tensors``: inside it an in-place write on a tensor that a
    node saved is allowed and the backward uses the saved value; outside, the usual refusal; the context's
    refusals."""
    torch = lib
    torch.manual_seed(279)
    x = torch.randn(3, requires_grad=True)
    with torch.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        a = x.clone()
        y = a * a
        a.mul_(10)
        show(a._version, y.grad_fn.name(), type(ctx).__name__)
        y.sum().backward()
    show(x.grad, torch.allclose(x.grad, 2 * x.detach()))
    x.grad = None
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        e = x.exp()
        e.add_(1)
        s = (e * 2).sum()
        e.sum().backward()
    show(x.grad)
    x.grad = None
    a = x.clone()
    y = a * a
    a.mul_(10)
    show_outcome(show, lambda: y.sum().backward())
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        a = x.clone()
        y = a.sin()
    a.add_(1)
    show_outcome(show, lambda: y.sum().backward())

    def nested():
        with torch.autograd.graph.allow_mutation_on_saved_tensors(), \
                torch.autograd.graph.allow_mutation_on_saved_tensors():
            pass
    show_outcome(show, nested)
    show(s.grad_fn.name())


def _optimizer_in_backward(lib, show):
    """An optimizer stepping in place from post-accumulate-grad hooks (the grad freed right after), beside
    ``_foreach_add_``/``_foreach_mul_`` updates of a parameter list and ``param.data -= ...``; the versions each
    update leaves, and the refusals of the foreach ops."""
    torch, nn = lib, lib.nn
    torch.manual_seed(280)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    ref = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    ref.load_state_dict(model.state_dict())
    seen: list = []
    optimizers = {p: torch.optim.SGD([p], lr=0.1) for p in model.parameters()}

    def step(p):
        seen.append(tuple(p.shape))
        optimizers[p].step()
        optimizers[p].zero_grad()

    handles = [p.register_post_accumulate_grad_hook(step) for p in model.parameters()]
    data = torch.randn(5, 3)
    model(data).pow(2).mean().backward()
    show(seen, [p.grad for p in model.parameters()], [p._version for p in model.parameters()])

    ref(data).pow(2).mean().backward()
    params = list(ref.parameters())
    grads = [p.grad for p in params]
    with torch.no_grad():
        torch._foreach_add_(params, grads, alpha=-0.1)
    show([torch.allclose(p, q) for p, q in zip(model.parameters(), params)], [p._version for p in params])
    with torch.no_grad():
        torch._foreach_mul_(params, 0.5)
        torch._foreach_mul_(params, [2.0, 1.0, 1.0, 1.0])
        torch._foreach_add_(params, 1.0)
    show([p._version for p in params], params[3].detach().clone())
    show_outcome(show, lambda: torch._foreach_add_(params, 1.0))
    show_outcome(show, lambda: torch._foreach_add_(params[:2], grads[:1]))
    show_outcome(show, lambda: torch._foreach_mul_(params, [1.0]))
    show_outcome(show, lambda: torch._foreach_mul_(params, torch.ones(2)))
    show_outcome(show, lambda: torch._foreach_mul(params, [1.0]))
    show_outcome(show, lambda: torch._foreach_add(params, grads[:3]))
    show_outcome(show, lambda: torch._foreach_add_([], grads[:1]))
    with torch.no_grad():
        show_outcome(show, lambda: torch._foreach_mul_(params, [1.0]))
    for h in handles:
        h.remove()

    lin = nn.Linear(2, 1)
    lin(torch.ones(1, 2)).sum().backward()
    before = lin.weight._version
    lin.weight.data -= 0.5 * lin.weight.grad
    show(lin.weight._version - before, lin.weight.grad)
    with torch.no_grad():
        lin.weight -= 0.5 * lin.weight.grad
    show(lin.weight._version - before, lin.weight.requires_grad, type(lin.weight).__name__)
    lin.weight = nn.Parameter(lin.weight - 1)
    show(lin.weight._version, lin.weight.is_leaf)
    show_outcome(show, lambda: setattr(lin, "weight", lin.weight * 2))


def _shared_and_pinned_memory(lib, show):
    """``share_memory_`` and ``pin_memory`` as a data-loading notebook calls them on the CPU, with ``is_shared``,
    ``is_pinned`` and the storage's own view of it."""
    torch = lib
    t = torch.arange(6.0)
    show(t.is_shared(), t.is_pinned(), t.untyped_storage().is_shared())
    r = t.share_memory_()
    show(r is t, t.is_shared(), t.untyped_storage().is_shared(), t[2:].is_shared(), t, t._version)
    show_outcome(show, lambda: torch.ones(2).pin_memory())
    show_outcome(show, lambda: torch.ones(2, pin_memory=True))
    show_outcome(show, lambda: torch.ones(2).is_pinned())


PROGRAMS = [
    _data_versus_detach,
    _version_counter_errors,
    _inplace_on_leaves,
    _views_of_nonleaves,
    _inplace_view_ops,
    _copy_broadcast_and_cast,
    _resize_and_set,
    _views_versus_copies,
    _out_arguments,
    _allow_mutation_on_saved,
    _optimizer_in_backward,
    _shared_and_pinned_memory,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
