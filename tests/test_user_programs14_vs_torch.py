"""A fourteenth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: notebooks of people exploring autograd itself. Tensor hooks
on views and on non-leaf tensors written in place afterwards, retain_grad on views whose base is rewritten; walking
a graph by next_functions with each node's ``_saved_*`` values, ``_raw_saved_*`` objects and metadata, node
pre-hooks and post-hooks that replace gradients (and wrong ones), and attempts to cut a graph by assigning
``grad_fn``; saved-tensor hooks packing to NumPy half precision, nested with counting hooks, on a raw saved tensor,
save_on_cpu, and disable_saved_tensors_hooks' refusal; register_multi_grad_hook in "all" and "any" mode,
GradientEdge as an input of autograd.grad, allow_unused/materialize_grads/is_grads_batched and their refusals;
custom Functions with mark_dirty (and forgetting it), mark_non_differentiable, set_materialize_grads(False),
once_differentiable's double-backward refusal and wrong backward returns; dual numbers through a handful of ops,
views and in-place writes, a Function with vjp/jvp, nested levels; autograd.functional's jacobian/hessian with
vectorize, both strategies and create_graph, vjp/jvp/hvp/vhp and strict mode; non-reentrant checkpointing with a
context_fn pair, nesting, a forward that changes on recomputation; anomaly mode naming the node that made a NaN,
with its flags refused when not bools, and gradcheck/gradgradcheck failures; backward twice, freed saved values,
version-counter errors with their numbers, legacy ``Variable`` code and ``only_inputs``; an optimizer stepped from
post-accumulate-grad hooks beside the order of every hook on one leaf; and higher-order gradients by hand.
Everything is drawn from the seeded global generator, which is torch's; values are compared to a tolerance.

Differences these programs found, now fixed (``tests/ops/test_program14_findings_vs_torch.py``):
- ``autograd.grad(..., is_grads_batched=True)`` with a gradient of the wrong shape named the whole gradient's
  shape; torch checks the batch's first gradient (``grad[0]``: a 0-dim or empty batch is an IndexError) and names
  its shape less one more size;
- ``SavedTensor.register_hooks`` given one hook (or keywords) failed in Python's words, not pybind11's
  "incompatible function arguments";
- the forward-mode Hessian (``vectorize=True, outer_jacobian_strategy="forward-mode"``) ended in
  ``ViewBackward0``; torch's ends in ``ReshapeAliasBackward0`` over ``PermuteBackward0``;
- ``detect_anomaly(check_nan="no")`` and ``set_detect_anomaly(True, check_nan=0)`` switched anomaly mode on (the
  first left it on) where torch's parser refuses a flag that is no bool;
- ``y.grad_fn = None``, ``x.is_leaf = False``, ``del y.grad_fn``: torch says "attribute 'grad_fn' of
  'torch._C.TensorBase' objects is not writable" (tracegrad: "property ... has no setter", a RuntimeError for the
  deletion), and warns when ``volatile`` is set;
- ``autograd.Variable(y)`` returned ``y`` itself, graph and all: torch's legacy constructor detaches (gradients
  stop there), warns about ``volatile`` and refuses a list;
- ``autograd.grad(..., only_inputs=False)`` did not warn (FutureWarning) that the argument is ignored.

Left: float32 ``sin`` is an ulp off torch's MKL ``vsSin`` for some inputs (so a float32 ``gradcheck`` of
``torch.sin`` prints other finite differences; the program checks ``t * t``); a node's class says ``__module__``
``torch.autograd.generated`` (torch: ``builtins``), has no ``requires_grad`` attribute (torch: always True), can
be instantiated (torch: "cannot create 'ExpBackward0' instances"), refuses writes to ``_saved_*`` as a property
("has no setter"; torch: "attribute ... is not writable"), and its ``_input_metadata`` is a list of named tuples
(torch: a tuple of ``_InputMetadata``); ``torch.func`` transforms (grad, vjp, vmap over a custom Function) do not
exist; ``torch.no_grad(f)`` (a function given to the class) names its wrapper differently.
"""

from __future__ import annotations

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _hooks_on_views_and_inplace(lib, show):
    """Tensor hooks on a view and on a non-leaf that is then modified in place, retain_grad on a view whose base
    is written afterwards, and what each hook saw, in order."""
    torch = lib
    torch.manual_seed(140)
    log: list = []
    w = torch.randn(4, 3, requires_grad=True)
    h = w * 2
    h.register_hook(lambda g: log.append(("h", g.sum().item())))
    row = h[1]
    row.register_hook(lambda g: log.append(("row", g.tolist())))
    row.retain_grad()
    show(row.grad_fn.name(), row._base is h, row._version, h._version)
    h.mul_(3)
    show(h.grad_fn.name(), row.grad_fn.name(), row._version, h._version)
    col = h[:, 0]
    col.retain_grad()
    h[:, 0].add_(1)
    show(col.grad_fn.name(), col._version)
    (h.sum() + (row * torch.arange(3.0)).sum()).backward()
    show(log)
    show(w.grad, row.grad, col.grad, h.is_leaf, row.is_leaf)

    log.clear()
    x = torch.randn(3, requires_grad=True)
    y = x.exp()
    handle = y.register_hook(lambda g: g * 10)
    y.register_hook(lambda g: log.append(("second", g.tolist())) or None)
    y.add_(1)
    y.register_hook(lambda g: log.append(("after add_", g.tolist())))
    y.sum().backward()
    show(x.grad, log, y.grad_fn.name())
    handle.remove()
    handle.remove()
    x.grad = None
    log.clear()
    z = x.exp()
    z.register_hook(lambda g: log.append("z"))
    z.sum().backward()
    show(x.grad, log)

    base = torch.zeros(2, 3, requires_grad=True).clone()
    view = base.view(6)
    view.retain_grad()
    base.retain_grad()
    base[0] = torch.arange(3.0, requires_grad=True) * 2
    show(view.grad_fn.name(), base.grad_fn.name(), view._version, base._version)
    (view * torch.arange(6.0)).sum().backward()
    show(view.grad, base.grad)
    leaf = torch.ones(3, requires_grad=True)
    show_outcome(show, lambda: leaf.view(3).add_(1))
    show_outcome(show, lambda: leaf.register_hook(5))
    show_outcome(show, lambda: torch.ones(2).register_hook(lambda g: g))
    show_outcome(show, lambda: torch.ones(2).retain_grad())


def _walking_the_graph(lib, show):
    """Walking grad_fn graphs: next_functions down to AccumulateGrad, name(), metadata, the _saved_* attributes a
    node exposes (and _raw_saved_* SavedTensor objects), node hooks returning replacements and their handles."""
    torch = lib
    torch.manual_seed(141)
    a = torch.randn(3, 4, requires_grad=True)
    b = torch.randn(4, 2, requires_grad=True)
    out = torch.tanh(a @ b).pow(3).sum(dim=1).mean()

    def walk(node, depth=0, seen=None):
        seen = set() if seen is None else seen
        if node is None:
            return
        show("  " * depth + node.name(), len(node.next_functions))
        for child, _ in node.next_functions:
            if child is not None and child not in seen:
                seen.add(child)
                walk(child, depth + 1, seen)

    walk(out.grad_fn)
    node = out.grad_fn
    show(node._saved_self_sym_sizes, node._saved_self_sym_numel)
    sum_node = node.next_functions[0][0]
    show(sum_node._saved_dim, sum_node._saved_keepdim, sum_node._saved_self_sym_sizes)
    pow_node = sum_node.next_functions[0][0]
    show(pow_node._saved_exponent, pow_node._saved_self)
    raw = pow_node._raw_saved_self
    show(type(raw).__name__)
    tanh_node = pow_node.next_functions[0][0]
    show(tanh_node._saved_result.shape, torch.equal(tanh_node._saved_result, torch.tanh(a @ b)))
    mm_node = tanh_node.next_functions[0][0]
    show(mm_node.name(), mm_node._saved_self is a, mm_node._saved_mat2 is b, mm_node._saved_mat2_sym_strides,
         mm_node._saved_self_sym_sizes)
    acc = mm_node.next_functions[0][0]
    show(acc.name(), acc.variable is a, acc.next_functions)
    show(isinstance(acc, torch.autograd.graph.Node), issubclass(type(node), torch.autograd.graph.Node))
    node.metadata["tag"] = "loss"
    show(out.grad_fn.metadata, type(node.metadata).__name__)

    log: list = []
    h1 = tanh_node.register_prehook(lambda grad_outputs: (grad_outputs[0] * 0.5,))
    h2 = tanh_node.register_hook(lambda grad_inputs, grad_outputs: log.append(
        (round(grad_inputs[0].sum().item(), 4), round(grad_outputs[0].sum().item(), 4))))
    h3 = mm_node.register_hook(lambda grad_inputs, grad_outputs: (None, grad_inputs[1] * 0))
    out.backward(retain_graph=True)
    show(log, a.grad, b.grad)
    for h in (h1, h2, h3):
        h.remove()
    a.grad = b.grad = None
    out.backward(retain_graph=True)
    show(log, a.grad.sum(), b.grad.sum())
    bad = tanh_node.register_prehook(lambda grad_outputs: (grad_outputs[0], grad_outputs[0]))
    show_outcome(show, lambda: out.backward(retain_graph=True))
    bad.remove()
    bad = tanh_node.register_hook(lambda gi, go: (gi[0].sum(),))
    show_outcome(show, lambda: out.backward(retain_graph=True))
    bad.remove()
    out.backward()
    show_outcome(show, lambda: pow_node._saved_self)
    show_outcome(show, lambda: mm_node._saved_self)
    cut = torch.tanh(a).sum()
    show_outcome(show, lambda: setattr(cut, "grad_fn", None))
    show_outcome(show, lambda: setattr(a, "is_leaf", False))
    show_outcome(show, lambda: delattr(cut, "grad_fn"))
    show_outcome(show, lambda: setattr(cut, "_version", 0))
    show(cut.grad_fn.name(), a.is_leaf)


def _packing_saved_tensors(lib, show):
    """saved_tensors_hooks that pack to NumPy half precision and count events, hooks on a raw saved tensor,
    save_on_cpu, nesting, and disable_saved_tensors_hooks' refusal."""
    torch = lib
    import numpy as np
    torch.manual_seed(142)
    events: list = []

    def pack(t):
        events.append(("pack", tuple(t.shape), str(t.dtype), t.requires_grad))
        return t.detach().numpy().astype(np.float16), t.dtype

    def unpack(packed):
        array, dtype = packed
        events.append(("unpack", array.shape))
        return torch.from_numpy(array.astype(np.float32)).to(dtype)

    x = torch.randn(5, 4, requires_grad=True)
    w = torch.randn(4, 3, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        h = torch.relu(x @ w)
        y = (h * h).sigmoid().sum()
    show(events, y)
    events.clear()
    y.backward()
    show(events, x.grad, w.grad)

    count = {"pack": 0, "unpack": 0}

    def counting_pack(t):
        count["pack"] += 1
        return t

    def counting_unpack(t):
        count["unpack"] += 1
        return t

    with torch.autograd.graph.saved_tensors_hooks(counting_pack, counting_unpack):
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            inner = (x.sin() * w.sum()).sum()
        outer = (x.cos() * x).sum()
    show(count, len(events))
    (inner + outer).backward()
    show(count, len(events))

    z = torch.randn(3, requires_grad=True)
    p = z.pow(2)
    raw = p.grad_fn._raw_saved_self
    show_outcome(show, lambda: raw.register_hooks(lambda t: t, lambda t: t * 0))
    show_outcome(show, lambda: raw.register_hooks(lambda t: t, lambda t: t))
    show_outcome(show, lambda: raw.register_hooks(lambda t: t))
    p.sum().backward()
    show(z.grad)

    with torch.autograd.graph.save_on_cpu(pin_memory=False):
        q = (x * w.sum(1)).exp().sum()
    q.backward()
    show(q, x.grad)
    with torch.autograd.graph.disable_saved_tensors_hooks("no hooks in this block, please"):
        show_outcome(show, lambda: torch.autograd.graph.saved_tensors_hooks(pack, unpack).__enter__())
        show((x * 2).sum().grad_fn.name())
    bad = torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: "not a tensor")
    with bad:
        r = x.sin().sum()
    show_outcome(show, lambda: r.backward())


def _multi_grad_hooks_and_edges(lib, show):
    """register_multi_grad_hook in "all" and "any" mode around a two-headed model, GradientEdge with
    autograd.grad, and autograd.grad's allow_unused, materialize_grads and is_grads_batched."""
    torch, nn = lib, lib.nn
    torch.manual_seed(143)
    trunk = nn.Linear(3, 4)
    head_a, head_b = nn.Linear(4, 1), nn.Linear(4, 2)
    x = torch.randn(5, 3)
    feats = trunk(x)
    a, b = head_a(feats), head_b(feats)
    log: list = []
    h_all = torch.autograd.graph.register_multi_grad_hook(
        (a, b), lambda grads: log.append(("all", [None if g is None else tuple(g.shape) for g in grads])))
    h_any = torch.autograd.graph.register_multi_grad_hook(
        (a, b), lambda grad: log.append(("any", tuple(grad.shape))), mode="any")
    a.sum().backward(retain_graph=True)
    show(log)
    log.clear()
    (a.sum() + b.sum()).backward(retain_graph=True)
    show(log)
    h_all.remove()
    h_any.remove()
    log.clear()
    b.sum().backward(retain_graph=True)
    show(log, type(h_all).__name__)
    show_outcome(show, lambda: torch.autograd.graph.register_multi_grad_hook((a, b), lambda g: None, mode="some"))

    edge = torch.autograd.graph.get_gradient_edge(feats)
    show(type(edge).__name__, edge.node.name(), edge.output_nr)
    g_edge, = torch.autograd.grad(a.sum(), edge, retain_graph=True)
    g_feats, = torch.autograd.grad(a.sum(), feats, retain_graph=True)
    show(g_edge, torch.equal(g_edge, g_feats))
    show_outcome(show, lambda: torch.autograd.graph.get_gradient_edge(x))

    u = torch.randn(3, requires_grad=True)
    v = torch.randn(3, requires_grad=True)
    loss = (u ** 2).sum()
    show_outcome(show, lambda: torch.autograd.grad(loss, (u, v), retain_graph=True))
    show(torch.autograd.grad(loss, (u, v), allow_unused=True, retain_graph=True))
    show(torch.autograd.grad(loss, (u, v), materialize_grads=True, retain_graph=True))
    show_outcome(show, lambda: torch.autograd.grad(loss, (u, v), allow_unused=False, materialize_grads=True))

    m = torch.randn(3, 3, requires_grad=True)
    y = m @ u
    basis = torch.eye(3)
    rows, = torch.autograd.grad(y, u, basis, is_grads_batched=True, retain_graph=True)
    show(rows, torch.allclose(rows, m))
    both = torch.autograd.grad(y, (u, m), basis, is_grads_batched=True, retain_graph=True)
    show(both[1].shape)
    show_outcome(show, lambda: torch.autograd.grad(y, u, torch.ones(3), is_grads_batched=True, retain_graph=True))
    show_outcome(show, lambda: torch.autograd.grad(y, u, torch.ones(2, 4), is_grads_batched=True))


def _custom_function_corners(lib, show):
    """Custom Functions a user writes while learning the API: an in-place one with mark_dirty, an argsort-like
    output marked non-differentiable, set_materialize_grads(False) seeing None, once_differentiable's refusal of
    double backward, and the errors of forgetting mark_dirty or returning too many gradients."""
    torch = lib
    torch.manual_seed(144)

    class ClampInPlace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, lo, hi):
            mask = (x >= lo) & (x <= hi)
            x.clamp_(lo, hi)
            ctx.mark_dirty(x)
            ctx.save_for_backward(mask)
            return x

        @staticmethod
        def backward(ctx, g):
            mask, = ctx.saved_tensors
            return g * mask, None, None

    leaf = torch.randn(6, requires_grad=True)
    t = leaf * 2
    out = ClampInPlace.apply(t, -1.0, 1.0)
    show(out is t, out.grad_fn.name(), t._version, out)
    out.sum().backward()
    show(leaf.grad)
    show_outcome(show, lambda: ClampInPlace.apply(leaf, -1.0, 1.0))

    class Forgot(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    show_outcome(show, lambda: Forgot.apply(leaf.clone()).grad_fn.name())

    class SortWithIndex(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            values, idx = x.sort()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            return values, idx

        @staticmethod
        def backward(ctx, g_values, g_idx):
            idx, = ctx.saved_tensors
            show("g_idx", g_idx)
            return torch.zeros_like(g_values).scatter(0, idx, g_values)

    x = torch.randn(5, requires_grad=True)
    values, idx = SortWithIndex.apply(x)
    show(values.requires_grad, idx.requires_grad, idx.dtype, values.grad_fn.name(), idx.grad_fn)
    (values * torch.arange(5.0)).sum().backward()
    show(x.grad)

    class Split(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            show("grads seen", g1 is None, g2 is None)
            total = 0
            if g1 is not None:
                total = total + g1 * 2
            if g2 is not None:
                total = total + g2 * 3
            return total

    p, q = Split.apply(x)
    x.grad = None
    q.sum().backward()
    show(x.grad)

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x ** 2 * g

    z = torch.tensor([1.0, 2.0], requires_grad=True)
    g, = torch.autograd.grad(Cube.apply(z).sum(), z, create_graph=True)
    show(g, g.requires_grad, g.grad_fn.name() if g.grad_fn else None)
    show_outcome(show, lambda: g.sum().backward())

    class TooMany(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g, g

    show_outcome(show, lambda: TooMany.apply(z).sum().backward())

    class WrongShape(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g[:1]

    show_outcome(show, lambda: WrongShape.apply(z).sum().backward())
    show_outcome(show, lambda: ClampInPlace(z))
    show_outcome(show, lambda: Cube.forward(None, z))


def _dual_numbers(lib, show):
    """Forward-mode AD with dual numbers on a handful of ops (unpack_dual's named tuple, views of duals, in-place
    on a dual), a custom Function with vjp and jvp staticmethods, and the refusals outside a dual level."""
    torch = lib
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(145)
    x = torch.randn(4, dtype=torch.float64)
    v = torch.ones(4, dtype=torch.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, v)
        unpacked = fwAD.unpack_dual(dual)
        show(type(unpacked).__name__, unpacked._fields, unpacked.tangent is v)
        for name, f in [("sin", torch.sin), ("exp", torch.exp), ("sigmoid", torch.sigmoid),
                        ("x*x", lambda t: t * t), ("softmax", lambda t: t.softmax(0)),
                        ("cumsum", lambda t: t.cumsum(0)), ("norm", lambda t: t.norm()),
                        ("where", lambda t: torch.where(t > 0, t, 0.1 * t))]:
            show(name, fwAD.unpack_dual(f(dual)).tangent)
        view = dual[1:3]
        show(fwAD.unpack_dual(view).tangent, view._base is dual)
        buf = torch.zeros(4, dtype=torch.float64)
        buf.copy_(dual)
        buf.mul_(dual)
        show(fwAD.unpack_dual(buf).tangent)
        plain = torch.zeros(2, dtype=torch.float64)
        plain[0] = dual[0]
        show(fwAD.unpack_dual(plain).tangent)
        show_outcome(show, lambda: fwAD.make_dual(x, torch.ones(3, dtype=torch.float64)))
        show_outcome(show, lambda: fwAD.make_dual(x, torch.ones(4)))
        show_outcome(show, lambda: fwAD.make_dual(torch.arange(3), torch.ones(3)))
        show(fwAD.unpack_dual(x).tangent)
    show(fwAD.unpack_dual(dual).tangent)
    show_outcome(show, lambda: fwAD.make_dual(x, v))

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            ctx.save_for_forward(t)
            return t * t

        @staticmethod
        def vjp(ctx, g):
            t, = ctx.saved_tensors
            return 2 * t * g

        @staticmethod
        def jvp(ctx, t_dot):
            t, = ctx.saved_tensors
            return 2 * t * t_dot

    with fwAD.dual_level():
        show(fwAD.unpack_dual(Square.apply(fwAD.make_dual(x, v))).tangent)
    leaf = x.clone().requires_grad_()
    Square.apply(leaf).sum().backward()
    show(leaf.grad)

    class NoJvp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.exp()

        @staticmethod
        def backward(ctx, g):
            return g

    with fwAD.dual_level():
        show_outcome(show, lambda: NoJvp.apply(fwAD.make_dual(x, v)))
        with torch.no_grad():
            show(fwAD.unpack_dual(torch.sin(fwAD.make_dual(x, v))).tangent)
        show_outcome(show, lambda: fwAD.enter_dual_level())
    show_outcome(show, lambda: fwAD.exit_dual_level())


def _functional_jacobians(lib, show):
    """autograd.functional on a small map: jacobian with vectorize and both strategies, hessian with
    outer_jacobian_strategy, create_graph to differentiate a Jacobian's trace, vjp/jvp/hvp/vhp, and the refusals
    of misuse (strict mode on an independent output, forward-mode without vectorize)."""
    torch = lib
    F = torch.autograd.functional
    torch.manual_seed(146)

    def f(x, y):
        return torch.stack([x[0] * y.sum(), torch.sin(x).prod(), (x ** 2).sum() - y[1]])

    x = torch.randn(3, dtype=torch.float64)
    y = torch.randn(2, dtype=torch.float64)
    jx, jy = F.jacobian(f, (x, y))
    show(jx, jy)
    jv = F.jacobian(f, (x, y), vectorize=True)
    jf = F.jacobian(f, (x, y), vectorize=True, strategy="forward-mode")
    show(type(jv).__name__, type(jf).__name__, all(torch.allclose(a, b) for a, b in zip(jv, jf)))
    show_outcome(show, lambda: F.jacobian(f, (x, y), strategy="forward-mode"))
    show_outcome(show, lambda: F.jacobian(f, (x, y), strategy="sideways"))

    def energy(p):
        return (p[0] ** 2 * p[1] + torch.exp(p[2]) * p[0]).reshape(())

    p = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)
    show(F.hessian(energy, p))
    show(F.hessian(energy, p, vectorize=True, outer_jacobian_strategy="forward-mode"))
    show_outcome(show, lambda: F.hessian(energy, p, outer_jacobian_strategy="forward-mode"))

    q = p.clone().requires_grad_()
    jac = F.jacobian(lambda t: t.exp() * t.sum(), q, create_graph=True)
    show(jac.requires_grad, jac.grad_fn is not None)
    jac.trace().backward()
    show(q.grad)
    no_graph = F.jacobian(lambda t: t.exp() * t.sum(), q)
    show(no_graph.requires_grad)

    out, vjp = F.vjp(energy, p)
    show(out, vjp)
    out, jvp = F.jvp(lambda t: t.sin() * t, p, torch.ones(3, dtype=torch.float64))
    show(out, jvp)
    show(F.hvp(energy, p, torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64)))
    show(F.vhp(energy, p, torch.tensor([0.0, 1.0, 1.0], dtype=torch.float64)))
    show_outcome(show, lambda: F.jacobian(lambda t: torch.ones(2, dtype=torch.float64), p, strict=True))
    show(F.jacobian(lambda t: torch.ones(2, dtype=torch.float64), p))
    show_outcome(show, lambda: F.vjp(lambda t: t * 2, p))
    show_outcome(show, lambda: F.hessian(lambda t: t * 2, p))
    show_outcome(show, lambda: F.jacobian(lambda t: t.tolist(), p))


def _checkpoint_exploration(lib, show):
    """Non-reentrant activation checkpointing explored: counting recomputation, a context_fn pair that logs the
    forward and the recomputation, nested checkpoints, early stopping of recomputation, and the errors of a
    forward that differs on recomputation or of use_reentrant left out."""
    torch, nn = lib, lib.nn
    from contextlib import contextmanager
    checkpoint = lib.utils.checkpoint
    torch.manual_seed(147)
    calls = {"n": 0}
    block = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 4))

    def run(x):
        calls["n"] += 1
        return block(x)

    x = torch.randn(3, 4, requires_grad=True)
    y = checkpoint.checkpoint(run, x, use_reentrant=False)
    show(calls, y.grad_fn.name())
    y.pow(2).sum().backward()
    show(calls, x.grad, block[0].weight.grad.sum())

    phases: list = []

    @contextmanager
    def tag(label):
        phases.append(label + " in")
        yield
        phases.append(label + " out")

    def context_fn():
        return tag("forward"), tag("recompute")

    x.grad = None
    z = checkpoint.checkpoint(run, x, use_reentrant=False, context_fn=context_fn)
    z.sum().backward()
    show(phases, calls)
    show_outcome(show, lambda: checkpoint.checkpoint(run, x, use_reentrant=True, context_fn=context_fn))

    def inner(t):
        calls["n"] += 1
        return t.sin() * 2

    def outer(t):
        return checkpoint.checkpoint(inner, t, use_reentrant=False).cos()

    calls["n"] = 0
    x.grad = None
    w = checkpoint.checkpoint(outer, x, use_reentrant=False)
    w.sum().backward()
    show(calls, x.grad)

    counter = {"n": 0}

    def flaky(t):
        counter["n"] += 1
        return t * 2 if counter["n"] == 1 else t[:2] * 2

    bad = checkpoint.checkpoint(flaky, x, use_reentrant=False)
    show_outcome(show, lambda: bad.sum().backward())
    show_outcome(show, lambda: checkpoint.checkpoint(run, x))
    show_outcome(show, lambda: checkpoint.checkpoint(run, x, use_reentrant=False, preserve=True))
    with torch.no_grad():
        show(checkpoint.checkpoint(run, x, use_reentrant=False).requires_grad)
    r = checkpoint.checkpoint(run, torch.randn(2, 4), use_reentrant=True)
    show(r.requires_grad)


def _anomaly_and_gradchecks(lib, show):
    """Anomaly mode pointing at the forward op whose backward made a NaN (the error's words, the warning with the
    forward trace), check_nan=False, and gradcheck/gradgradcheck of a wrong backward with raise_exception=False
    and their messages."""
    torch = lib
    torch.manual_seed(148)
    x = torch.tensor([0.0, 1.0, 4.0], requires_grad=True)

    def loss_of(t):
        return (t.sqrt() * 0).sum()

    loss_of(x).backward()
    show(x.grad)
    x.grad = None
    with torch.autograd.detect_anomaly():
        try:
            loss_of(x).backward()
        except RuntimeError as e:
            show("RuntimeError", str(e))
    show(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
    try:
        with torch.autograd.detect_anomaly(check_nan="no"):
            show("entered")
    except TypeError as e:
        show("TypeError", e, torch.is_anomaly_enabled())
    with torch.autograd.detect_anomaly(check_nan=False):
        show(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
        show_outcome(show, lambda: torch.autograd.set_detect_anomaly(True, check_nan=0))
        x.grad = None
        loss_of(x).backward()
        show(x.grad)
    with torch.autograd.set_detect_anomaly(True):
        bad = torch.tensor([-1.0, 2.0], requires_grad=True)
        show_outcome(show, lambda: torch.log(bad).sum().backward())
        show_outcome(show, lambda: (bad.log() * 0 + 1).sum().backward())

    class WrongSin(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t.sin()

        @staticmethod
        def backward(ctx, g):
            t, = ctx.saved_tensors
            return g * t.cos() * 1.01

    inp = torch.randn(3, dtype=torch.float64, requires_grad=True)
    show(torch.autograd.gradcheck(WrongSin.apply, (inp,), raise_exception=False))
    show_outcome(show, lambda: torch.autograd.gradcheck(WrongSin.apply, (inp,)))
    show(torch.autograd.gradcheck(torch.sin, (inp,)))
    show(torch.autograd.gradcheck(torch.sin, (inp,), fast_mode=True))
    show_outcome(show, lambda: torch.autograd.gradcheck(WrongSin.apply, (inp,), fast_mode=True))
    show_outcome(show, lambda: torch.autograd.gradcheck(lambda t: t * t, (inp.float(),)))
    show_outcome(show, lambda: torch.autograd.gradcheck(torch.sin, (inp.detach(),)))

    class SinOnce(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t.sin()

        @staticmethod
        def backward(ctx, g):
            t, = ctx.saved_tensors
            return g * t.detach().cos()

    show(torch.autograd.gradcheck(SinOnce.apply, (inp,)))
    show(torch.autograd.gradgradcheck(SinOnce.apply, (inp,), raise_exception=False))
    show_outcome(show, lambda: torch.autograd.gradgradcheck(SinOnce.apply, (inp,)))
    show(torch.autograd.gradgradcheck(torch.sin, (inp,)))


def _graph_lifetime_errors(lib, show):
    """The errors an autograd explorer provokes: backward twice (with and without retain_graph), saved tensors
    read after they were freed, in-place writes to saved inputs and outputs with the versions in the message, and
    the same write made safe by clone()."""
    torch = lib
    torch.manual_seed(149)
    w = torch.randn(3, requires_grad=True)
    y = (w * w).sum()
    y.backward()
    show(w.grad)
    show_outcome(show, lambda: y.backward())
    show_outcome(show, lambda: y.grad_fn.next_functions[0][0]._saved_self)
    z = (w.exp() * 2).sum()
    z.backward(retain_graph=True)
    z.backward()
    show(w.grad)
    show_outcome(show, lambda: z.backward())

    a = w * 1
    b = a.sigmoid()
    b.add_(1)
    show(b._version, a._version)
    show_outcome(show, lambda: b.sum().backward())
    a2 = w * 1
    c = a2 * a2
    a2.mul_(2)
    a2.add_(1)
    show_outcome(show, lambda: c.sum().backward())
    d = w * 1
    e = d[0:2].exp()
    d.zero_()
    show_outcome(show, lambda: e.sum().backward())
    f = w * 1
    g = f.clone().tanh()
    f.zero_()
    g.sum().backward()
    show(w.grad)
    h = w.detach()
    k = (w.sin()).sum()
    h.add_(0)
    show(w._version, h._version)
    show_outcome(show, lambda: k.backward())
    with torch.no_grad():
        w.add_(1)
    show(w._version, w.grad_fn, w.is_leaf)
    m = w.relu()
    with torch.no_grad():
        w.mul_(2)
    show_outcome(show, lambda: m.sum().backward())
    show_outcome(show, lambda: torch.autograd.backward(torch.ones(2)))
    Variable = torch.autograd.Variable
    legacy = Variable(w * 2)
    show(legacy.requires_grad, legacy.is_leaf, legacy.grad_fn)
    fresh = Variable(w * 2, requires_grad=True)
    (fresh * 3).sum().backward()
    show(fresh.grad, fresh.is_leaf)
    show(Variable(torch.ones(2), volatile=True).requires_grad)
    show_outcome(show, lambda: Variable(torch.ones(2), requires_grad=True, volatile=True))
    show_outcome(show, lambda: Variable([1.0, 2.0]))
    show(torch.autograd.grad((w * w).sum(), w, only_inputs=False))
    show_outcome(show, lambda: (w * 2).backward())
    show_outcome(show, lambda: (w * 2).backward(torch.ones(2)))


def _optimizer_in_backward(lib, show):
    """An optimizer step done inside backward from register_post_accumulate_grad_hook on a small model with
    gradient clipping per parameter, the hook order beside tensor hooks and node hooks on the same leaf, and
    a comparison with the ordinary loop."""
    torch, nn = lib, lib.nn
    torch.manual_seed(150)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    twin = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    twin.load_state_dict(model.state_dict())
    opts = {p: torch.optim.SGD([p], lr=0.1, momentum=0.9) for p in model.parameters()}
    order: list = []

    def step(p):
        order.append(tuple(p.shape))
        p.grad.clamp_(-0.5, 0.5)
        opts[p].step()
        opts[p].zero_grad(set_to_none=True)

    handles = [p.register_post_accumulate_grad_hook(step) for p in model.parameters()]
    x = torch.randn(8, 3, dtype=torch.float64)
    target = torch.randn(8, 1, dtype=torch.float64)
    opt = torch.optim.SGD(twin.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        nn.functional.mse_loss(model(x), target).backward()
        opt.zero_grad()
        nn.functional.mse_loss(twin(x), target).backward()
        for p in twin.parameters():
            p.grad.clamp_(-0.5, 0.5)
        opt.step()
    show(order[:4], all(p.grad is None for p in model.parameters()))
    show(all(torch.allclose(p, q) for p, q in zip(model.parameters(), twin.parameters())), model[2].weight)
    for h in handles:
        h.remove()

    seq: list = []
    leaf = torch.ones(2, requires_grad=True)
    leaf.register_hook(lambda g: seq.append("tensor hook") or g * 2)
    leaf.register_post_accumulate_grad_hook(lambda t: seq.append(("post-acc", t.grad.tolist())))
    out = leaf * 3
    acc = out.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: seq.append("acc prehook"))
    acc.register_hook(lambda gi, go: seq.append(("acc hook", gi, go[0].tolist())))
    out.sum().backward()
    show(seq, leaf.grad)
    seq.clear()
    torch.autograd.grad((leaf * 3).sum(), leaf)
    show(seq)
    show_outcome(show, lambda: leaf.register_post_accumulate_grad_hook(lambda t: t).remove())
    leaf.grad = None
    bad = leaf.register_post_accumulate_grad_hook(lambda t: t.grad * 2)
    show_outcome(show, lambda: (leaf * 1).sum().backward())
    bad.remove()


def _higher_order_exploration(lib, show):
    """Higher-order gradients explored by hand: grad of grad with create_graph, the double-backward graph's node
    names, a mixed second derivative, backward with create_graph into .grad (the leak warning), and grad of a
    gradient that does not depend on the input."""
    torch = lib
    torch.manual_seed(151)
    x = torch.tensor(1.5, requires_grad=True)
    y = x ** 3 * torch.sin(x)
    dy, = torch.autograd.grad(y, x, create_graph=True)
    show(dy, dy.grad_fn.name())
    d2y, = torch.autograd.grad(dy, x, create_graph=True)
    d3y, = torch.autograd.grad(d2y, x)
    show(d2y, d3y)
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([0.5, -1.0], requires_grad=True)
    f = (a * b.exp()).sum() + (a ** 2 * b).sum()
    ga, = torch.autograd.grad(f, a, create_graph=True)
    mixed = [torch.autograd.grad(ga[i], b, retain_graph=True)[0] for i in range(2)]
    show(ga, torch.stack(mixed))
    lin = torch.tensor([1.0, 2.0], requires_grad=True)
    g, = torch.autograd.grad((3 * lin).sum(), lin, create_graph=True)
    show(g, g.requires_grad, g.grad_fn)
    show_outcome(show, lambda: torch.autograd.grad(g.sum(), lin))
    show(torch.autograd.grad(g.sum(), lin, allow_unused=True))

    w = torch.tensor([0.3, -0.7], requires_grad=True)
    loss = (w.tanh() ** 2).sum()
    loss.backward(create_graph=True)
    show(w.grad, w.grad.grad_fn.name() if w.grad.grad_fn else None)
    penalty = w.grad.pow(2).sum()
    w.grad = None
    penalty.backward()
    show(w.grad)
    z = torch.randn(3, requires_grad=True)
    out = torch.nn.functional.softplus(z)
    g1, = torch.autograd.grad(out.sum(), z, create_graph=True)
    g2, = torch.autograd.grad(g1.sum(), z)
    show(g1, g2, torch.allclose(g2, torch.sigmoid(z) * (1 - torch.sigmoid(z))))
    hidden = torch.randn(2, 2, requires_grad=True)
    m = hidden.detach().requires_grad_()
    res = (hidden @ m).sum()
    show_outcome(show, lambda: torch.autograd.grad(res, [hidden, m, torch.ones(1)]))


PROGRAMS = [
    _hooks_on_views_and_inplace,
    _walking_the_graph,
    _packing_saved_tensors,
    _multi_grad_hooks_and_edges,
    _custom_function_corners,
    _dual_numbers,
    _functional_jacobians,
    _checkpoint_exploration,
    _anomaly_and_gradchecks,
    _graph_lifetime_errors,
    _optimizer_in_backward,
    _higher_order_exploration,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
