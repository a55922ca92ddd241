"""A twenty-second set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

Forward-mode AD notebooks (``torch.autograd.forward_ad``), the way a user learns it from the tutorial and then
pushes it: dual_level / make_dual / unpack_dual and the printing of duals and of the ``UnpackedDualTensor`` named
tuple; tangents through pointwise ops, reductions and matrix products; views of duals and in-place writes through
views into bases that had no tangent; tangents of another dtype, shape or layout, and the refusals of make_dual,
unpack_dual and nested or mismatched levels; forward-over-reverse Hessian-vector products on a small network's
parameters and reverse-over-forward gradients of a directional derivative; Jacobians built by looping jvps
beside ``autograd.functional.jacobian(strategy="forward-mode", vectorize=True)``; custom ``autograd.Function``
with a ``jvp`` staticmethod (with ``save_for_forward``, several outputs, ``mark_dirty``), and one without;
forward AD through nn modules (Linear, Conv2d, LayerNorm, BatchNorm in train and eval, softmax / log_softmax /
cross_entropy, dropout in eval) and through no_grad and inference_mode; and operators with no forward
derivative. Everything is drawn from the seeded global generator, which is torch's; the programs work in
float64 where a user checks derivatives against each other.

Differences these programs found, now fixed (``tests/ops/test_program22_findings_vs_torch.py``):
- ``torch.histogram`` / ``histogramdd`` of a dual (input, weight or bin edges) counted as if it were plain; torch's
  autograd fallback refuses it first ("Trying to use forward AD with aten::histogram that does not support it.");
- ``torch._weight_norm`` over the first or last dim (so ``nn.utils.weight_norm`` with a dual ``weight_v`` through
  ``functional_call``) gave a tangent; torch's fused ``_weight_norm_interface`` has no forward formula and refuses;
- ``binary_cross_entropy`` (with logits) with a dual ``weight`` or ``pos_weight`` gave a tangent; torch's formula
  reads them unprimaled and refuses "Setting a forward grad that itself has a forward gradient at the same level0".

Left: tracegrad has no conjugate bit, so the tangent of ``z.conj()`` (and ``mH``, ``adjoint``) is a plain tensor
where torch's is a conjugate view (``is_conj()``, ``numpy()`` refuses it); ``slogdet``'s sign gets a zeros tangent
where torch's is a ZeroTensor (``_is_zerotensor``, ``numpy()`` refuses it); an operator without a forward formula
whose kernel also refuses its arguments (``ctc_loss`` with wrong lengths) gives the kernel's error where torch
refuses the tangent first; ``_weight_norm`` with ``dim=-1``/``None`` and a dual gives a tangent where torch
fails on a size check of its own; ``torch.func`` (jvp, jacfwd, linearize) and ``segment_reduce`` do not exist.
"""

from __future__ import annotations

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _tutorial_dual_numbers(lib, show):
    """The forward-mode tutorial's first cell, then a user poking at it: what a dual prints as, the named tuple
    unpack_dual gives (its repr, fields, indexing), tangents through a chain of pointwise ops checked against the
    hand-written derivative, a dual that is not a leaf, and what is left after the level closes."""
    torch = lib
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(220)
    primal = torch.randn(3, dtype=torch.float64)
    tangent = torch.tensor([1.0, 0.0, -2.0], dtype=torch.float64)

    def fn(x, y):
        return x ** 2 + y ** 2

    with fwAD.dual_level() as level:
        show(level)
        dual_input = fwAD.make_dual(primal, tangent)
        show(dual_input)
        show(dual_input.requires_grad, dual_input.is_leaf, dual_input.grad_fn)
        plain_tensor = torch.ones(3, dtype=torch.float64)
        dual_output = fn(dual_input, plain_tensor)
        unpacked = fwAD.unpack_dual(dual_output)
        show(unpacked)
        show(type(unpacked).__name__, unpacked._fields, len(unpacked))
        p, t = unpacked
        show(p, t, unpacked[1] is t, unpacked.primal is p)
        show(torch.allclose(t, 2 * primal * tangent))
        chain = torch.tanh(torch.exp(dual_input) / (1 + dual_input ** 2)).sqrt().log1p()
        show(fwAD.unpack_dual(chain).tangent)
        smooth = torch.where(dual_input > 0, dual_input.sigmoid(), torch.nn.functional.softplus(dual_input))
        show(fwAD.unpack_dual(smooth).tangent)
        clipped = dual_input.clamp(-0.5, 0.5).abs() + dual_input.relu() * 3
        show(fwAD.unpack_dual(clipped).tangent)
        ratio = dual_input / plain_tensor.add(1)
        show(fwAD.unpack_dual(ratio))
        show(fwAD.unpack_dual(plain_tensor), fwAD.unpack_dual(plain_tensor).tangent is None)
        show(fwAD.unpack_dual(dual_input).tangent is tangent)
        show(dual_output)
    show(dual_output, fwAD.unpack_dual(dual_output).tangent)
    show(repr(fwAD.UnpackedDualTensor(torch.zeros(1), None)))


def _reductions_and_products(lib, show):
    """Directional derivatives of reductions and matrix products: sums, means, variances, norms, max along a dim
    (the values' tangent, the indices'), logsumexp, prod, cumsum and cumprod, matmul/mm/bmm/einsum/outer, a
    determinant and a linear solve; each compared with a finite difference in float64."""
    torch = lib
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(221)
    A = torch.randn(3, 4, dtype=torch.float64)
    dA = torch.randn(3, 4, dtype=torch.float64)
    B = torch.randn(4, 2, dtype=torch.float64)
    S = torch.randn(3, 3, dtype=torch.float64) + 3 * torch.eye(3, dtype=torch.float64)
    dS = torch.randn(3, 3, dtype=torch.float64)
    fns = {
        "sum": lambda a, s: a.sum(),
        "sum_dim": lambda a, s: a.sum(1, keepdim=True),
        "mean": lambda a, s: a.mean(0),
        "var": lambda a, s: a.var(1),
        "std": lambda a, s: a.std(unbiased=False),
        "norm": lambda a, s: a.norm(dim=0),
        "fro": lambda a, s: torch.linalg.matrix_norm(a),
        "amax": lambda a, s: a.amax(1),
        "logsumexp": lambda a, s: a.logsumexp(1),
        "prod": lambda a, s: a.prod(0),
        "cumsum": lambda a, s: a.cumsum(1),
        "cumprod": lambda a, s: a.cumprod(0),
        "matmul": lambda a, s: a @ B,
        "mm_left": lambda a, s: s.mm(a),
        "bmm": lambda a, s: torch.bmm(a.unsqueeze(0), B.unsqueeze(0)),
        "einsum": lambda a, s: torch.einsum("ij,ik->jk", a, s @ a),
        "outer": lambda a, s: torch.outer(a[0], a[1]),
        "det": lambda a, s: torch.linalg.det(s),
        "solve": lambda a, s: torch.linalg.solve(s, a),
        "trace": lambda a, s: (s @ s.T).trace(),
    }
    eps = 1e-6
    with fwAD.dual_level():
        a_dual = fwAD.make_dual(A, dA)
        s_dual = fwAD.make_dual(S, dS)
        for name, f in fns.items():
            out = f(a_dual, s_dual)
            jvp = fwAD.unpack_dual(out).tangent
            fd = (f(A + eps * dA, S + eps * dS) - f(A - eps * dA, S - eps * dS)) / (2 * eps)
            show(name, jvp, torch.allclose(jvp, fd, atol=1e-5))
        values, indices = torch.max(a_dual, dim=1)
        show(fwAD.unpack_dual(values).tangent, fwAD.unpack_dual(indices).tangent, indices.dtype)
        top = a_dual.topk(2, dim=1)
        show(type(top).__name__, fwAD.unpack_dual(top.values).tangent)
        med = a_dual.median(dim=0)
        show(fwAD.unpack_dual(med.values).tangent, med.indices)
        sorted_vals = a_dual.sort(dim=1, descending=True).values
        show(fwAD.unpack_dual(sorted_vals).tangent)


def _views_and_inplace(lib, show):
    """Views of a dual share its tangent as views; writing a dual into a slice of a plain buffer gives the
    buffer (the base) a tangent that is zero elsewhere; in-place ops on views of a dual base, on the base seen
    through its views, transpose/narrow/select/expand/unsqueeze/unbind; and a dual's tangent is itself a view."""
    torch = lib
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(222)
    x = torch.randn(2, 3, dtype=torch.float64)
    dx = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, dx)
        for name, f in [("T", lambda t: t.T), ("narrow", lambda t: t.narrow(1, 1, 2)),
                        ("select", lambda t: t.select(0, 1)), ("expand", lambda t: t[:, :1].expand(2, 4)),
                        ("unsqueeze", lambda t: t.unsqueeze(1)), ("flatten", lambda t: t.flatten()),
                        ("diagonal", lambda t: t.diagonal()), ("view", lambda t: t.view(3, 2))]:
            v = f(dual)
            vt = fwAD.unpack_dual(v).tangent
            show(name, vt, v._base is dual, vt.shape, vt.stride(), vt.is_contiguous())
        show([fwAD.unpack_dual(r).tangent for r in dual.unbind(1)])

        buffer = torch.zeros(4, 3, dtype=torch.float64)
        show(fwAD.unpack_dual(buffer).tangent)
        buffer[1:3] = dual
        show(fwAD.unpack_dual(buffer).tangent)
        row = buffer[0]
        row.copy_(dual[0] * 10)
        show(fwAD.unpack_dual(buffer).tangent, fwAD.unpack_dual(row).tangent)

        base = fwAD.make_dual(torch.ones(2, 3, dtype=torch.float64), torch.ones(2, 3, dtype=torch.float64))
        col = base[:, 1]
        col.mul_(dual[:, 0])
        show(fwAD.unpack_dual(base).tangent, fwAD.unpack_dual(col).tangent)
        base.t_()
        show(base.shape, fwAD.unpack_dual(base).tangent)
        tview = base.transpose(0, 1)
        tview.add_(5)
        show(fwAD.unpack_dual(base).tangent)
        base.zero_()
        show(fwAD.unpack_dual(base).tangent, fwAD.unpack_dual(tview).tangent)

        acc = torch.zeros(3, dtype=torch.float64)
        for i in range(2):
            acc += dual[i] ** 2
        show(acc, fwAD.unpack_dual(acc).tangent)
        idx = torch.tensor([2, 0])
        scattered = torch.zeros(2, 3, dtype=torch.float64).index_add(1, idx, dual[:, :2])
        show(fwAD.unpack_dual(scattered).tangent)
        masked = dual.masked_fill(dual > 0, 0.0)
        show(fwAD.unpack_dual(masked).tangent)


def _tangent_layouts_and_refusals(lib, show):
    """What make_dual takes as a tangent: another layout (a transposed or expanded tangent for a contiguous
    primal: kept or copied), another dtype, size or device; integer and boolean primals; a tangent that requires
    grad; make_dual and unpack_dual outside a level or at a level that is not active; nested levels."""
    torch = lib
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(223)
    x = torch.randn(3, 2, dtype=torch.float64)
    with fwAD.dual_level():
        t_transposed = torch.randn(2, 3, dtype=torch.float64).T
        d1 = fwAD.make_dual(x, t_transposed)
        got = fwAD.unpack_dual(d1).tangent
        show(got, got.stride(), got is t_transposed, got.is_contiguous())
        t_expanded = torch.ones(1, 2, dtype=torch.float64).expand(3, 2)
        d2 = fwAD.make_dual(x, t_expanded)
        got = fwAD.unpack_dual(d2).tangent
        show(got.stride(), got is t_expanded)
        xt = torch.randn(2, 3, dtype=torch.float64).T
        d3 = fwAD.make_dual(xt, torch.ones(3, 2, dtype=torch.float64))
        got = fwAD.unpack_dual(d3).tangent
        show(xt.stride(), got.stride(), fwAD.unpack_dual(d3).primal.stride())
        show(fwAD.unpack_dual(d3.sum(0)).tangent)
        show_outcome(show, lambda: fwAD.make_dual(x, torch.ones(2, 3, dtype=torch.float64)))
        show_outcome(show, lambda: fwAD.make_dual(x, torch.ones(6, dtype=torch.float64)))
        show_outcome(show, lambda: fwAD.make_dual(x, torch.ones(3, 2)))
        show_outcome(show, lambda: fwAD.make_dual(x.float(), torch.ones(3, 2, dtype=torch.float64)))
        show_outcome(show, lambda: fwAD.make_dual(x, torch.ones(3, 2, dtype=torch.int64)))
        show_outcome(show, lambda: fwAD.make_dual(torch.arange(3), torch.ones(3)))
        show_outcome(show, lambda: fwAD.make_dual(torch.ones(3, dtype=torch.bool), torch.ones(3)))
        show_outcome(show, lambda: fwAD.make_dual(x, torch.ones(3, 2, dtype=torch.float64), level=5))
        show_outcome(show, lambda: fwAD.unpack_dual(d1, level=7))
        show_outcome(show, lambda: fwAD.make_dual(x, 1.0))
        show_outcome(show, lambda: fwAD.make_dual([1.0, 2.0], torch.ones(2)))
        needs = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)
        d4 = fwAD.make_dual(x, needs)
        show(d4.requires_grad, fwAD.unpack_dual(d4).tangent.requires_grad, fwAD.unpack_dual(d4).tangent is needs)
        show_outcome(show, lambda: fwAD.enter_dual_level())
        try:
            with fwAD.dual_level():
                show("nested entered")
        except RuntimeError as e:
            show("nested", type(e).__name__, e)
        show(fwAD.unpack_dual(d1).tangent is not None)
    show_outcome(show, lambda: fwAD.make_dual(x, torch.ones(3, 2, dtype=torch.float64)))
    show_outcome(show, lambda: fwAD.exit_dual_level())
    show(fwAD.unpack_dual(d1))
    level = fwAD.enter_dual_level()
    show(level)
    show_outcome(show, lambda: fwAD.exit_dual_level(level=level + 1))
    fwAD.exit_dual_level(level=level)
    show_outcome(show, lambda: fwAD.exit_dual_level(level=level))


def _second_order_mixed_modes(lib, show):
    """A small tanh network's Hessian-vector product with respect to its weights by forward-over-reverse
    (dual parameters, autograd.grad inside the level) against double backward, and reverse-over-forward: the
    gradient of a directional derivative (the tangent is a differentiable function of the primal)."""
    torch = lib
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(224)
    X = torch.randn(8, 3, dtype=torch.float64)
    y = torch.randn(8, 1, dtype=torch.float64)
    W1 = torch.randn(3, 4, dtype=torch.float64) * 0.5
    W2 = torch.randn(4, 1, dtype=torch.float64) * 0.5
    V1 = torch.randn(3, 4, dtype=torch.float64)
    V2 = torch.randn(4, 1, dtype=torch.float64)

    def loss_fn(w1, w2):
        return ((torch.tanh(X @ w1) @ w2 - y) ** 2).mean()

    p1, p2 = W1.clone().requires_grad_(), W2.clone().requires_grad_()
    g1, g2 = torch.autograd.grad(loss_fn(p1, p2), (p1, p2), create_graph=True)
    show(g1.grad_fn.name(), g2.grad_fn.name())
    hv_double = torch.autograd.grad((g1 * V1).sum() + (g2 * V2).sum(), (p1, p2))
    with fwAD.dual_level():
        d1 = fwAD.make_dual(W1, V1).requires_grad_()
        d2 = fwAD.make_dual(W2, V2).requires_grad_()
        show(d1.is_leaf, d1.requires_grad)
        loss = loss_fn(d1, d2)
        show(loss, fwAD.unpack_dual(loss).tangent)
        gd1, gd2 = torch.autograd.grad(loss, (d1, d2))
        hv_forward = (fwAD.unpack_dual(gd1).tangent, fwAD.unpack_dual(gd2).tangent)
    show(hv_forward[0], hv_forward[1])
    show(torch.allclose(hv_forward[0], hv_double[0]), torch.allclose(hv_forward[1], hv_double[1]))

    q = torch.randn(3, dtype=torch.float64, requires_grad=True)
    direction = torch.tensor([1.0, 2.0, 0.5], dtype=torch.float64)
    with fwAD.dual_level():
        out = (fwAD.make_dual(q, direction) ** 3).sin().sum()
        directional = fwAD.unpack_dual(out).tangent
        show(directional, directional.requires_grad, directional.grad_fn is not None)
        grad_q, = torch.autograd.grad(directional, q)
    expected = (3 * q.detach() ** 2 * direction * torch.cos(q.detach() ** 3))
    show(grad_q, torch.allclose(expected.sum(), directional.detach()))

    with fwAD.dual_level():
        tangent_param = torch.ones(3, dtype=torch.float64, requires_grad=True)
        out = (fwAD.make_dual(q.detach(), tangent_param) * 2).exp()
        tangent_out = fwAD.unpack_dual(out).tangent
        show(tangent_out.grad_fn is not None)
        tangent_out.sum().backward()
    show(tangent_param.grad, q.grad)


def _jacobian_by_columns(lib, show):
    """A Jacobian of a small map R^4 -> R^3 by looping jvps over the basis, against
    autograd.functional.jacobian in reverse mode and in forward mode (vectorize=True), autograd.functional.jvp,
    tuple inputs and outputs, and forward mode without vectorize (refused)."""
    torch = lib
    fwAD = torch.autograd.forward_ad
    AF = torch.autograd.functional
    torch.manual_seed(225)
    M = torch.randn(3, 4, dtype=torch.float64)

    def f(x):
        return torch.sin(M @ x) * x[:3].exp()

    x0 = torch.randn(4, dtype=torch.float64)
    cols = []
    with fwAD.dual_level():
        for e in torch.eye(4, dtype=torch.float64):
            cols.append(fwAD.unpack_dual(f(fwAD.make_dual(x0, e))).tangent)
    J_loop = torch.stack(cols, dim=1)
    J_rev = AF.jacobian(f, x0)
    J_fwd = AF.jacobian(f, x0, strategy="forward-mode", vectorize=True)
    show(J_loop, J_fwd.shape, torch.allclose(J_loop, J_rev), torch.allclose(J_fwd, J_rev))
    out, jv = AF.jvp(f, x0, torch.ones(4, dtype=torch.float64))
    show(out, jv, torch.allclose(jv, J_rev.sum(1)))

    def g(a, b):
        return a * b.sum(), (a ** 2).sum() + b.prod()

    a0, b0 = torch.randn(2, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
    jac = AF.jacobian(g, (a0, b0), strategy="forward-mode", vectorize=True)
    show(type(jac).__name__, len(jac), [type(row).__name__ for row in jac])
    show(jac[0][0], jac[0][1], jac[1][0], jac[1][1])
    outs, jvps = AF.jvp(g, (a0, b0), (torch.ones(2, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)))
    show(outs, jvps)
    show_outcome(show, lambda: AF.jacobian(f, x0, strategy="forward-mode"))
    show_outcome(show, lambda: AF.jacobian(f, x0, strategy="sideways", vectorize=True))
    show_outcome(show, lambda: AF.jvp(f, x0, torch.ones(3, dtype=torch.float64)))
    show_outcome(show, lambda: AF.jvp(f, x0))


def _custom_functions_with_jvp(lib, show):
    """Custom autograd.Functions in forward mode: a jvp staticmethod reading save_for_forward, the
    setup_context form, two outputs, an in-place Function with mark_dirty, a jvp that returns the wrong shape
    or a tuple where one tangent is expected, and a Function without jvp (its error)."""
    torch = lib
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(226)
    x = torch.randn(4, dtype=torch.float64)
    v = torch.linspace(-1, 1, 4, dtype=torch.float64)

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_forward(t)
            return t ** 3

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("not used")

        @staticmethod
        def jvp(ctx, t_dot):
            t, = ctx.saved_tensors
            show("jvp saw", t_dot.shape, type(ctx).__name__)
            return 3 * t ** 2 * t_dot

    class PolarSplit(torch.autograd.Function):
        @staticmethod
        def forward(r, theta):
            return r * torch.cos(theta), r * torch.sin(theta)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_forward(*inputs)

        @staticmethod
        def jvp(ctx, r_dot, theta_dot):
            r, theta = ctx.saved_tensors
            dx = r_dot * torch.cos(theta) - r * torch.sin(theta) * theta_dot
            dy = r_dot * torch.sin(theta) + r * torch.cos(theta) * theta_dot
            return dx, dy

    class ScaleInPlace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.mark_dirty(t)
            return t.mul_(2)

        @staticmethod
        def jvp(ctx, t_dot):
            t_dot.mul_(2)
            return t_dot

    class WrongShape(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.sum()

        @staticmethod
        def jvp(ctx, t_dot):
            return t_dot

    class TooMany(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t * 2

        @staticmethod
        def jvp(ctx, t_dot):
            return t_dot * 2, t_dot

    class NoJvp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.clamp(min=0)

        @staticmethod
        def backward(ctx, g):
            return g

    with fwAD.dual_level():
        out = Cube.apply(fwAD.make_dual(x, v))
        show(fwAD.unpack_dual(out).tangent, out.grad_fn)
        r = torch.tensor([1.0, 2.0], dtype=torch.float64)
        th = torch.tensor([0.0, 0.5], dtype=torch.float64)
        px, py = PolarSplit.apply(fwAD.make_dual(r, torch.ones(2, dtype=torch.float64)), th)
        show(fwAD.unpack_dual(px).tangent, fwAD.unpack_dual(py).tangent)
        px, py = PolarSplit.apply(r, fwAD.make_dual(th, torch.ones(2, dtype=torch.float64)))
        show(fwAD.unpack_dual(px).tangent, fwAD.unpack_dual(py).tangent)
        buf = fwAD.make_dual(x.clone(), v.clone())
        res = ScaleInPlace.apply(buf)
        show(res is buf, fwAD.unpack_dual(buf).tangent, buf._version)
        show_outcome(show, lambda: WrongShape.apply(fwAD.make_dual(x, v)))
        show_outcome(show, lambda: TooMany.apply(fwAD.make_dual(x, v)))
        show_outcome(show, lambda: NoJvp.apply(fwAD.make_dual(x, v)))
        show(fwAD.unpack_dual(NoJvp.apply(x)).tangent)


def _nn_modules_forward_mode(lib, show):
    """Directional derivatives through layers: Linear, Conv2d, LayerNorm, BatchNorm2d in train (its running
    stats after a dual batch) and eval, softmax/log_softmax/cross_entropy with a dual logit batch, Dropout in
    eval, and tangents on a module's weights by functional_call."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(227)
    img = torch.randn(2, 3, 5, 5)
    d_img = torch.randn(2, 3, 5, 5)
    conv = nn.Conv2d(3, 4, 3, padding=1)
    bn = nn.BatchNorm2d(4)
    ln = nn.LayerNorm([4, 5, 5])
    drop = nn.Dropout(0.5)
    head = nn.Linear(4, 3)
    targets = torch.tensor([0, 2])
    with fwAD.dual_level():
        x = fwAD.make_dual(img, d_img)
        h = conv(x)
        show(h.shape, fwAD.unpack_dual(h).tangent[0, 0, :2])
        b = bn(h)
        show(fwAD.unpack_dual(b).tangent[1, 2, 0], bn.running_mean, bn.running_var, bn.num_batches_tracked)
        show(fwAD.unpack_dual(bn.running_mean).tangent)
        bn.eval()
        b_eval = bn(h)
        show(fwAD.unpack_dual(b_eval).tangent[0, 1, 1])
        n = ln(h)
        show(fwAD.unpack_dual(n).tangent[0, 3, 2])
        drop.eval()
        pooled = drop(F.relu(n)).mean((2, 3))
        logits = head(pooled)
        show(logits, fwAD.unpack_dual(logits).tangent)
        show(fwAD.unpack_dual(logits.softmax(1)).tangent, fwAD.unpack_dual(F.log_softmax(logits, 1)).tangent)
        loss = F.cross_entropy(logits, targets)
        show(loss, fwAD.unpack_dual(loss).tangent)
        loss_ls = F.cross_entropy(logits, targets, label_smoothing=0.1, reduction="sum")
        show(fwAD.unpack_dual(loss_ls).tangent)
        nll = F.nll_loss(F.log_softmax(logits, 1), targets, reduction="none")
        show(fwAD.unpack_dual(nll).tangent)
        multi_hot = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
        bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0, 1.0, 0.5]))
        show(fwAD.unpack_dual(bce(logits, multi_hot)).tangent)
        class_weights = fwAD.make_dual(torch.tensor([2.0, 1.0, 0.5]), torch.tensor([1.0, 0.0, 0.0]))
        show_outcome(show, lambda: nn.BCEWithLogitsLoss(pos_weight=class_weights)(logits, multi_hot))
        show_outcome(show, lambda: F.binary_cross_entropy(logits.sigmoid(), multi_hot, weight=class_weights))
        show(fwAD.unpack_dual(F.binary_cross_entropy_with_logits(pooled.detach()[:, :3], multi_hot,
                                                                 weight=class_weights)).tangent)
        show(fwAD.unpack_dual(F.cross_entropy(logits, targets, weight=class_weights)).tangent)
        drop.train()
        show_outcome(show, lambda: fwAD.unpack_dual(drop(torch.zeros(2))).tangent)
        params = {k: fwAD.make_dual(p.detach(), torch.ones_like(p)) for k, p in head.named_parameters()}
        out = torch.func.functional_call(head, params, (pooled.detach(),))
        show(fwAD.unpack_dual(out).tangent, out.requires_grad)


def _grad_modes_and_detach(lib, show):
    """Forward mode under no_grad, inference_mode and set_grad_enabled(False) (tangents still flow, tensors made
    in inference mode), detach and .data of a dual, a dual that requires grad, item and tolist of a dual."""
    torch = lib
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(228)
    x = torch.randn(3)
    v = torch.ones(3)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        with torch.no_grad():
            y = d.exp()
            show(fwAD.unpack_dual(y).tangent, y.requires_grad)
        with torch.set_grad_enabled(False):
            show(fwAD.unpack_dual(d * d).tangent)
        with torch.inference_mode():
            z = d.sin()
            show(fwAD.unpack_dual(z).tangent, z.is_inference())
            fresh = fwAD.make_dual(torch.ones(2), torch.full((2,), 3.0))
            show(fresh.is_inference(), fwAD.unpack_dual(fresh * 2).tangent)
        show(fwAD.unpack_dual(d.detach()).tangent, fwAD.unpack_dual(d.data).tangent)
        show(d.item() if d.numel() == 1 else d.tolist())
        w = fwAD.make_dual(x.clone().requires_grad_(), v)
        show(w.requires_grad, w.is_leaf, w.grad_fn.name() if w.grad_fn else None)
        q = (w * 2).sum()
        show(q.grad_fn.name(), fwAD.unpack_dual(q).tangent)
        q.backward()
        show(fwAD.unpack_dual(d.clone()).tangent, fwAD.unpack_dual(d.contiguous()).tangent)
        show(fwAD.unpack_dual(d.to(torch.float64)).tangent, fwAD.unpack_dual(d.half()).tangent)
        show(fwAD.unpack_dual(d.long()).tangent)
        show(fwAD.unpack_dual(torch.stack([d, x])).tangent, fwAD.unpack_dual(torch.cat([x, d])).tangent)
        show(fwAD.unpack_dual(d.new_zeros(2)).tangent, fwAD.unpack_dual(torch.zeros_like(d)).tangent)


def _operators_without_forward_derivative(lib, show):
    """Operators torch has no forward-mode formula for, and what a user reads when a dual reaches them; the same
    operators on plain tensors inside the level; and an op with no derivative at all."""
    torch, F = lib, lib.nn.functional
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(229)
    x = torch.rand(2, 3, 4, dtype=torch.float64) + 0.1
    v = torch.ones(2, 3, 4, dtype=torch.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        targets, in_lens, tgt_lens = torch.tensor([[1, 2], [3, 1]]), torch.tensor([3, 3]), torch.tensor([2, 2])
        show_outcome(show, lambda: F.ctc_loss(d.log_softmax(2).permute(1, 0, 2), targets, in_lens, tgt_lens))
        show_outcome(show, lambda: torch.histogram(d, bins=4))
        show_outcome(show, lambda: d.flatten().histc(4))
        show_outcome(show, lambda: torch.histogramdd(d.reshape(-1, 2), bins=[2, 3]))
        show_outcome(show, lambda: torch.histogram(x, bins=3, weight=d))
        show(torch.histogram(x, bins=3).hist)
        show_outcome(show, lambda: torch.nanmedian(d))
        show_outcome(show, lambda: F.max_unpool1d(*F.max_pool1d(d, 2, return_indices=True), 2))
        show_outcome(show, lambda: torch.nn.functional.adaptive_max_pool2d(d, 2).sum())
        show_outcome(show, lambda: fwAD.unpack_dual(torch.floor(d)).tangent)
        show_outcome(show, lambda: fwAD.unpack_dual(torch.sign(d)).tangent)
        show_outcome(show, lambda: fwAD.unpack_dual(torch.round(d)).tangent)
        show_outcome(show, lambda: fwAD.unpack_dual(d.argmax()).tangent)
        show_outcome(show, lambda: fwAD.unpack_dual(torch.histc(d, bins=4)).tangent)
        show_outcome(show, lambda: fwAD.unpack_dual(d > 0.5).tangent)
        show_outcome(show, lambda: fwAD.unpack_dual(torch.bucketize(d, torch.tensor([0.3, 0.6],
                                                                                     dtype=torch.float64))).tangent)
        show(F.ctc_loss(x.log_softmax(2).permute(1, 0, 2), targets, in_lens, tgt_lens))
        layer = torch.nn.Linear(4, 2).double()
        show_outcome(show, lambda: fwAD.unpack_dual(layer(d)).tangent[0, 0])
        normed = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 2).double())
        show(fwAD.unpack_dual(normed(d)).tangent[1, 2])
        legacy = torch.nn.utils.weight_norm(torch.nn.Linear(4, 2).double())
        show(fwAD.unpack_dual(legacy(d)).tangent[1, 2])
        v = legacy.weight_v.detach()
        dual_v = fwAD.make_dual(v, torch.ones_like(v))
        show_outcome(show, lambda: torch.func.functional_call(legacy, {"weight_v": dual_v}, (x,)))
        show_outcome(show, lambda: torch._weight_norm(dual_v, legacy.weight_g.detach(), 0))
        middle = torch._weight_norm(dual_v.unsqueeze(1), torch.ones(1, 1, 1, dtype=torch.float64), 1)
        show(fwAD.unpack_dual(middle).tangent)


def _ode_sensitivities(lib, show):
    """Forward sensitivities of an explicit-Euler simulation of a damped oscillator with respect to its
    stiffness (a dual parameter), accumulated state by state in a preallocated trajectory buffer, against a
    finite difference; then the sensitivity of the final energy to the initial state."""
    torch = lib
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(230)
    steps, dt = 40, 0.05

    def simulate(k, state0, out):
        state = state0
        for i in range(steps):
            pos, vel = state[0], state[1]
            acc = -k * pos - 0.3 * vel
            state = torch.stack([pos + dt * vel, vel + dt * acc])
            out[i] = state
        return state

    k0 = torch.tensor(2.0, dtype=torch.float64)
    s0 = torch.tensor([1.0, 0.0], dtype=torch.float64)
    with fwAD.dual_level():
        traj = torch.empty(steps, 2, dtype=torch.float64)
        final = simulate(fwAD.make_dual(k0, torch.tensor(1.0, dtype=torch.float64)), s0, traj)
        sens = fwAD.unpack_dual(final).tangent
        traj_sens = fwAD.unpack_dual(traj).tangent
        show(final, sens, traj_sens.shape, traj_sens[::10])
        eps = 1e-6
        plus = simulate(k0 + eps, s0, torch.empty(steps, 2, dtype=torch.float64))
        minus = simulate(k0 - eps, s0, torch.empty(steps, 2, dtype=torch.float64))
        show(torch.allclose(sens, (plus - minus) / (2 * eps), atol=1e-6))
        energy = lambda s, k: 0.5 * s[1] ** 2 + 0.5 * k * s[0] ** 2  # noqa: E731
        for e in torch.eye(2, dtype=torch.float64):
            fin = simulate(k0, fwAD.make_dual(s0, e), torch.empty(steps, 2, dtype=torch.float64))
            show(fwAD.unpack_dual(energy(fin, k0)).tangent)


def _complex_and_dtypes(lib, show):
    """Tangents of float32, float64, half and complex duals through a few ops (the tangent's dtype follows the
    result's), mixed precision between primal and other operands, and complex tangents of real ops."""
    torch = lib
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(231)
    with fwAD.dual_level():
        f32 = fwAD.make_dual(torch.randn(3), torch.ones(3))
        f64 = torch.randn(3, dtype=torch.float64)
        mixed = f32 * f64
        show(mixed.dtype, fwAD.unpack_dual(mixed).tangent)
        show(fwAD.unpack_dual(f32 + 1).tangent.dtype, fwAD.unpack_dual(f32.double()).tangent.dtype)
        z = fwAD.make_dual(torch.tensor([1 + 2j, -0.5j], dtype=torch.complex64),
                           torch.tensor([1 + 0j, 1j], dtype=torch.complex64))
        show(z)
        show(fwAD.unpack_dual(z * z).tangent, fwAD.unpack_dual(z.abs()).tangent, fwAD.unpack_dual(z.real).tangent)
        show(fwAD.unpack_dual(torch.view_as_real(z)).tangent)
        show(fwAD.unpack_dual(z.angle()).tangent, fwAD.unpack_dual(z.exp()).tangent)
        r = fwAD.make_dual(torch.tensor([0.5, 2.0]), torch.tensor([1.0, -1.0]))
        c = torch.polar(r, torch.tensor([0.0, 1.0]))
        show(c.dtype, fwAD.unpack_dual(c).tangent)
        show_outcome(show, lambda: fwAD.make_dual(torch.ones(2), torch.ones(2, dtype=torch.complex64)))
        show_outcome(show, lambda: fwAD.make_dual(torch.ones(2, dtype=torch.complex64), torch.ones(2)))
        h = fwAD.make_dual(torch.tensor([1.0, 2.0], dtype=torch.float16),
                           torch.tensor([0.5, 0.25], dtype=torch.float16))
        show(fwAD.unpack_dual(h.exp()).tangent, fwAD.unpack_dual(h @ h).tangent)


PROGRAMS = [
    _tutorial_dual_numbers,
    _reductions_and_products,
    _views_and_inplace,
    _tangent_layouts_and_refusals,
    _second_order_mixed_modes,
    _jacobian_by_columns,
    _custom_functions_with_jvp,
    _nn_modules_forward_mode,
    _grad_modes_and_detach,
    _operators_without_forward_derivative,
    _ode_sensitivities,
    _complex_and_dtypes,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
