"""A thirty-fifth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and
compared.

These add what the other program files do not run: custom ``autograd.Function`` patterns from papers and
libraries. BinaryConnect's sign estimator with a hard-tanh window and a fake quantiser with a clamped
straight-through pass (scale and zero point as plain numbers, ``needs_input_grad``); a gradient-reversal layer
(DANN) with its lambda schedule; a memory-saving Swish that saves only its input beside ``F.silu``; an in-place
ReLU with ``mark_dirty`` and the refusals of marking a non-input or a leaf; top-k indices marked
non-differentiable and ``set_materialize_grads(False)`` with None grads; ``once_differentiable`` and a twice
differentiable twin; a Function with a ``jvp`` staticmethod under ``forward_ad`` and ``torch.func``; Functions
that return views or their inputs as-is, and in-place writes on those outputs; non-tensor and None arguments,
ctx attributes and saved intermediates vs outputs; saved tensors read twice and after backward; wrong backward
returns (count, shape, dtype, type); Functions under no_grad, inference_mode and checkpoint (reentrant and not);
and the graph they build (``print(grad_fn)``, ``name()``, ``next_functions``). Both the ``forward(ctx, ...)`` and
the ``forward(...)`` + ``setup_context`` forms are used. Values are compared to a tolerance.

Differences these programs found, now fixed (``tests/ops/test_program35_findings_vs_torch.py``):
- an in-place Function called under ``no_grad`` on a parameter (a leaf that requires grad) was refused with "Some
  elements marked as dirty during the forward method were not returned as output"; torch allows it and returns
  a detached alias;
- a ``setup_context`` Function that saved an input it returned as-is ran; torch refuses it ("An input that has
  been returned as-is as output is being saved for backward. ...");
- the node's ``to_save``/``dirty_tensors``/``non_differentiable``/``saved_for_forward`` were AttributeErrors where
  torch reads None, ``materialize_grads`` was readable (torch: "... is not readable"), and
  ``set_materialize_grads(0)`` was taken (torch: TypeError, a bool only).

Left: ``torch.func`` (grad, jvp, jacfwd, jacrev, vmap) does not exist, so the Functions are run through
``autograd.functional`` and gradcheck instead; inside forward ``ctx._input_metadata`` is a list (torch: an empty
tuple); the node's C methods (``_sequence_nr``) print as bound Python methods; anomaly mode's forward traceback
ends in tracegrad's own ``apply`` frame where torch's ends in its own (so no program prints it). A ``jvp`` that
returns None for one of two outputs trips an internal assert in torch, so no program does that.
"""

from __future__ import annotations

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _graph_names(node, depth=0, seen=None) -> list:
    """The names of a graph's nodes, depth first, as a user walks ``next_functions`` to print it."""
    seen = set() if seen is None else seen
    if node is None or id(node) in seen:
        return []
    seen.add(id(node))
    names = ["  " * depth + node.name()]
    for child, _ in node.next_functions:
        names += _graph_names(child, depth + 1, seen)
    return names


def _binary_connect_ste(lib, show):
    """BinaryConnect: weights binarised by sign in forward, the gradient passed straight through inside the
    hard-tanh window |w| <= 1 (zero outside); a few SGD steps of a binary linear classifier with the real-valued
    latent weights clipped after each step."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(3501)

    class SignSTE(torch.autograd.Function):
        @staticmethod
        def forward(ctx, w):
            ctx.save_for_backward(w)
            return torch.where(w >= 0, torch.ones_like(w), -torch.ones_like(w))

        @staticmethod
        def backward(ctx, grad_out):
            w, = ctx.saved_tensors
            return grad_out * (w.abs() <= 1).to(grad_out.dtype)

    class BinaryLinear(nn.Linear):
        def forward(self, x):
            return F.linear(x, SignSTE.apply(self.weight), self.bias)

    layer = BinaryLinear(6, 3)
    with torch.no_grad():
        layer.weight.mul_(3.0)
    x = torch.randn(16, 6)
    y = torch.randint(0, 3, (16,))
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    for step in range(3):
        opt.zero_grad()
        out = layer(x)
        loss = F.cross_entropy(out, y)
        loss.backward()
        outside = (layer.weight.abs() > 1).sum().item()
        show(step, round(loss.item(), 5), outside, (layer.weight.grad[layer.weight.abs() > 1] == 0).all().item())
        opt.step()
        with torch.no_grad():
            layer.weight.clamp_(-1.5, 1.5)
    show(layer.weight.grad, layer.bias.grad)
    bw = SignSTE.apply(layer.weight)
    show(bw.grad_fn, bw.grad_fn.name(), type(bw.grad_fn).__name__, bw.unique())
    show(_graph_names(layer(x).sum().grad_fn))
    show(bw.grad_fn.next_functions[0][0].variable is layer.weight, bw.grad_fn.next_functions[0][1])
    show(SignSTE.apply(torch.tensor([0.0, -0.0, 2.0, -0.5])))


def _fake_quant_clamped_passthrough(lib, show):
    """A fake quantiser (QAT): round to a grid of ``scale`` and ``zero_point`` (plain numbers) with the gradient
    passed only where the value fell inside the representable range, and a learned-step-size variant whose
    scale is a tensor with its own gradient; ``needs_input_grad`` decides what is computed."""
    torch = lib
    torch.manual_seed(3502)
    seen: list = []

    class FakeQuant(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale, zero_point, qmin, qmax):
            q = torch.round(x / scale) + zero_point
            inside = (q >= qmin) & (q <= qmax)
            ctx.save_for_backward(inside)
            return (q.clamp(qmin, qmax) - zero_point) * scale

        @staticmethod
        def backward(ctx, g):
            inside, = ctx.saved_tensors
            seen.append(ctx.needs_input_grad)
            return g * inside, None, None, None, None

    x = (torch.randn(10) * 2).requires_grad_()
    y = FakeQuant.apply(x, 0.25, 3, 0, 15)
    show(y, y.grad_fn.name(), y.dtype)
    (y * torch.arange(10.0)).sum().backward()
    show(x.grad, seen)

    class LSQ(torch.autograd.Function):
        @staticmethod
        def forward(x, step, qmax):
            return torch.clamp(torch.round(x / step), -qmax - 1, qmax) * step

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, step, qmax = inputs
            ctx.save_for_backward(x, step)
            ctx.qmax = qmax

        @staticmethod
        def backward(ctx, g):
            x, step = ctx.saved_tensors
            seen.append(ctx.needs_input_grad)
            v = x / step
            lo, hi = -ctx.qmax - 1, ctx.qmax
            inside = (v >= lo) & (v <= hi)
            gx = g * inside if ctx.needs_input_grad[0] else None
            gs = None
            if ctx.needs_input_grad[1]:
                ds = torch.where(inside, torch.round(v) - v, v.clamp(lo, hi))
                gs = (g * ds).sum().reshape(step.shape) / (x.numel() * ctx.qmax) ** 0.5
            return gx, gs, None

    seen.clear()
    w = torch.randn(4, 5, requires_grad=True)
    step = torch.tensor([0.3], requires_grad=True)
    wq = LSQ.apply(w, step, 7)
    show(wq, wq.grad_fn.name())
    loss = (wq - w.detach() * 0.9).pow(2).sum()
    loss.backward()
    show(w.grad, step.grad, seen)
    frozen = LSQ.apply(w.detach(), step, 7)
    frozen.sum().backward()
    show(step.grad, seen[-1], frozen.grad_fn.next_functions)
    show_outcome(show, lambda: LSQ.apply(w, 0.3, 7))


def _gradient_reversal_dann(lib, show):
    """DANN's gradient-reversal layer: identity forward (``view_as``), gradient times ``-lambda`` backward, with
    the paper's schedule lambda = 2 / (1 + exp(-10 p)) - 1 over training progress p."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(3503)

    class GradReverse(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, lambd):
            ctx.lambd = lambd
            return x.view_as(x)

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.neg() * ctx.lambd, None

    features = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
    label_head, domain_head = nn.Linear(8, 2), nn.Linear(8, 1)
    params = [*features.parameters(), *label_head.parameters(), *domain_head.parameters()]
    opt = torch.optim.SGD(params, lr=0.05, momentum=0.9)
    src, src_y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    tgt = torch.randn(8, 4) + 1.0
    for step in range(4):
        p = step / 3
        lambd = 2.0 / (1.0 + torch.exp(torch.tensor(-10.0 * p)).item()) - 1.0
        opt.zero_grad()
        f_src, f_tgt = features(src), features(tgt)
        cls_loss = F.cross_entropy(label_head(f_src), src_y)
        reversed_feats = GradReverse.apply(torch.cat([f_src, f_tgt]), lambd)
        dom_logits = domain_head(reversed_feats).squeeze(1)
        dom_loss = F.binary_cross_entropy_with_logits(dom_logits, torch.cat([torch.zeros(8), torch.ones(8)]))
        (cls_loss + dom_loss).backward()
        show(step, round(lambd, 6), round(cls_loss.item(), 5), round(dom_loss.item(), 5))
        opt.step()
    show(reversed_feats.grad_fn, reversed_feats.grad_fn.name(), reversed_feats._base is None,
         reversed_feats._is_view())
    show(features[0].weight.grad, domain_head.weight.grad)
    leaf = torch.ones(3, requires_grad=True)
    out = GradReverse.apply(leaf, 0.5)
    show(out._is_view(), out._base is leaf, out.grad_fn.name())
    g, = torch.autograd.grad(out.sum(), leaf)
    show(g)
    show_outcome(show, lambda: out.add_(1))
    show_outcome(show, lambda: GradReverse.apply(leaf * 1, 0.5).mul_(2).grad_fn.name())


def _memory_saving_swish(lib, show):
    """A memory-saving Swish (as in EfficientNet's implementations): only the input is saved, the sigmoid
    recomputed in backward; checked against ``F.silu``, by gradcheck in float64, and read through the node's
    ``saved_tensors`` (twice, and after backward freed them)."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(3504)

    class SwishFn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * torch.sigmoid(x)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            s = torch.sigmoid(x)
            return g * (s * (1 + x * (1 - s)))

    x = torch.randn(3, 5, requires_grad=True)
    y = SwishFn.apply(x)
    ref = F.silu(x)
    show(y, (y - ref).abs().max().item() < 1e-6, y.grad_fn.name(), ref.grad_fn.name())
    first, second = y.grad_fn.saved_tensors, y.grad_fn.saved_tensors
    show(first[0] is x, second[0] is x, len(first), type(first).__name__)
    w = torch.randn(3, 5)
    gy, = torch.autograd.grad(y, x, w, retain_graph=True)
    gr, = torch.autograd.grad(ref, x, w)
    show(gy, (gy - gr).abs().max().item() < 1e-5)
    (y * w).sum().backward()
    show(x.grad)
    show_outcome(show, lambda: y.grad_fn.saved_tensors)
    show_outcome(show, lambda: y.sum().backward())
    xd = torch.randn(6, dtype=torch.float64, requires_grad=True)
    show(torch.autograd.gradcheck(SwishFn.apply, (xd,)))
    show(torch.autograd.gradgradcheck(SwishFn.apply, (xd,)))
    half = SwishFn.apply(torch.randn(4, dtype=torch.float64, requires_grad=True).float())
    show(half.dtype, half.grad_fn.name(), half.grad_fn.next_functions[0][0].name())


def _inplace_relu_mark_dirty(lib, show):
    """An in-place ReLU (memory-saving activations): ``mark_dirty`` on the input, the output saved for backward,
    the version counter, and the refusals: a leaf that requires grad, marking a tensor that is not an input,
    forgetting ``mark_dirty`` on a view, and the saved output modified afterwards."""
    torch = lib
    torch.manual_seed(3505)

    class ReLUInplace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.clamp_(min=0)
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            out, = ctx.saved_tensors
            return g * (out > 0).to(g.dtype)

    leaf = torch.randn(2, 4, requires_grad=True)
    h = leaf * 1.5
    v0 = h._version
    out = ReLUInplace.apply(h)
    show(out is h, h._version - v0, out.grad_fn, out.grad_fn.name(), out)
    out.sum().backward()
    show(leaf.grad)
    show_outcome(show, lambda: ReLUInplace.apply(leaf))
    base = leaf * 1.0
    row = base[1]
    out2 = ReLUInplace.apply(row)
    show(out2 is row, row.grad_fn.name(), base.grad_fn.name(), row._base is base)
    base.sum().backward()
    show(leaf.grad)

    class MarksNonInput(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            ctx.mark_dirty(y)
            return y

        @staticmethod
        def backward(ctx, g):
            return g * 2

    show_outcome(show, lambda: MarksNonInput.apply(leaf * 1))

    class DirtyNotReturned(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    show_outcome(show, lambda: DirtyNotReturned.apply(leaf * 1))
    h2 = leaf * 2
    out3 = ReLUInplace.apply(h2)
    out3.mul_(3)
    show_outcome(show, lambda: out3.sum().backward())
    with torch.no_grad():
        plain = leaf.clone()
        r = ReLUInplace.apply(plain)
        show(r is plain, r.requires_grad, r.grad_fn, (r >= 0).all().item())
        r = ReLUInplace.apply(leaf)  # (a parameter clipped in place under no_grad: allowed)
    show(r is leaf, r.requires_grad, r._is_view(), leaf.requires_grad, leaf._version, (leaf >= 0).all().item())


def _topk_indices_and_materialize(lib, show):
    """A top-k routing Function (mixture of experts) returning values and indices, the indices marked
    non-differentiable (and the zero gradient backward sees for them); ``set_materialize_grads(False)`` with
    outputs left unused (None grads); a non-tensor output beside tensors."""
    torch = lib
    torch.manual_seed(3506)

    class TopK(torch.autograd.Function):
        @staticmethod
        def forward(ctx, scores, k):
            values, idx = scores.topk(k, dim=-1)
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            ctx.shape = scores.shape
            return values, idx

        @staticmethod
        def backward(ctx, g_values, g_idx):
            idx, = ctx.saved_tensors
            show("g_idx", g_idx.dtype, g_idx.shape, (g_idx == 0).all().item())
            return torch.zeros(ctx.shape, dtype=g_values.dtype).scatter(-1, idx, g_values), None

    scores = torch.randn(3, 6, requires_grad=True)
    values, idx = TopK.apply(scores, 2)
    show(values, idx, values.grad_fn.name(), idx.grad_fn, idx.requires_grad, idx.is_leaf)
    gates = torch.softmax(values, -1)
    (gates[:, 0] * torch.arange(3.0)).sum().backward()
    show(scores.grad)
    show_outcome(show, lambda: idx.float().requires_grad_().sum().backward())

    class Stats(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            show_outcome(show, lambda: ctx.set_materialize_grads(0))
            ctx.set_materialize_grads(False)
            return x.mean(), x.std(), x.numel()

        @staticmethod
        def backward(ctx, g_mean, g_std, g_n):
            show("grads", g_mean is None, g_std is None, g_n)
            if g_mean is None:
                return None
            return g_mean.expand(ctx.needs_input_grad[0] and 5) / 5

    x = torch.randn(5, requires_grad=True)
    mean, std, n = Stats.apply(x)
    show(type(n).__name__, n, mean.grad_fn.name(), std.grad_fn.name(), mean.grad_fn is std.grad_fn)
    mean.backward(retain_graph=True)
    show(x.grad)
    x.grad = None
    std.backward()
    show(x.grad)


def _once_differentiable_pair(lib, show):
    """A softplus written twice: with a backward wrapped in ``once_differentiable`` (the double backward refused
    where it is taken), and with a backward of differentiable ops (a Hessian-vector product through it), beside
    ``F.softplus``."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(3507)

    class SoftplusOnce(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.log1p(torch.exp(x))

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            show("once: grad mode", torch.is_grad_enabled(), g.requires_grad)
            return g * torch.sigmoid(x)

    class SoftplusTwice(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return torch.log1p(torch.exp(x))

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * torch.sigmoid(x)

    x = torch.randn(6, requires_grad=True)
    v = torch.randn(6)
    for fn in (SoftplusOnce.apply, SoftplusTwice.apply, F.softplus):
        y = fn(x)
        g, = torch.autograd.grad(y.sum(), x, create_graph=True)
        show(y.grad_fn.name(), g, g.requires_grad, g.grad_fn.name() if g.grad_fn is not None else None)
        show_outcome(show, lambda g=g: torch.autograd.grad((g * v).sum(), x)[0])
    y = SoftplusOnce.apply(x)
    g, = torch.autograd.grad(y.sum(), x, create_graph=True)
    show(_graph_names(g.grad_fn))
    show_outcome(show, lambda: (g * 2).sum().backward())
    with torch.no_grad():
        show(SoftplusOnce.apply(x).requires_grad)
    g2, = torch.autograd.grad(SoftplusOnce.apply(x).sum(), x)
    show(g2.requires_grad, g2.grad_fn)


def _jvp_function_forward_ad(lib, show):
    """A Function with ``jvp`` (and ``vjp``) staticmethods in the setup_context form, used under
    ``forward_ad`` dual levels, ``autograd.functional`` and gradcheck's forward-mode check, and the refusals of a
    Function without ``jvp`` and of vectorised forward-mode Jacobians; ``save_for_forward`` and the ctx attributes
    the jvp reads."""
    torch = lib
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(3508)

    class ScaledTanh(torch.autograd.Function):
        @staticmethod
        def forward(x, alpha):
            return alpha * torch.tanh(x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, alpha = inputs
            ctx.alpha = alpha
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)

        @staticmethod
        def vjp(ctx, g):
            out, = ctx.saved_tensors
            return g * (ctx.alpha - out * out / ctx.alpha), None

        @staticmethod
        def jvp(ctx, x_t, alpha_t):
            out, = ctx.saved_tensors
            return x_t * (ctx.alpha - out * out / ctx.alpha)

    x = torch.randn(4, dtype=torch.float64)
    t = torch.randn(4, dtype=torch.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        out = ScaledTanh.apply(dual, 1.7)
        p, tan = fwAD.unpack_dual(out)
        show(p, tan, out.grad_fn)
        chained = fwAD.unpack_dual(torch.sin(ScaledTanh.apply(dual * 2, 0.5))).tangent
        show(chained)
    primal, jv = torch.autograd.functional.jvp(lambda a: ScaledTanh.apply(a, 1.7), x, t)
    show(primal, jv)
    show(torch.autograd.functional.jacobian(lambda a: ScaledTanh.apply(a, 1.7), x[:3]))
    show(torch.autograd.gradcheck(lambda a: ScaledTanh.apply(a, 1.7), (x.clone().requires_grad_(),),
                                  check_forward_ad=True))
    xr = x.clone().requires_grad_()
    y = ScaledTanh.apply(xr, 1.7)
    y.backward(t)
    show(xr.grad, y.grad_fn.name())

    class NoJvp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3

    with fwAD.dual_level():
        show_outcome(show, lambda: NoJvp.apply(fwAD.make_dual(x, t)))
    show_outcome(show, lambda: torch.autograd.functional.jacobian(
        lambda a: ScaledTanh.apply(a, 1.7), x[:3], strategy="forward-mode", vectorize=True))


def _functions_returning_views(lib, show):
    """Functions returning their input as-is, a view of it, or a fresh tensor, and what in-place writes on
    those outputs do afterwards (torch forbids the view+in-place ones, and says to clone)."""
    torch = lib
    torch.manual_seed(3509)

    class Identity(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class FirstRow(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.rows = x.shape[0]
            return x[0]

        @staticmethod
        def backward(ctx, g):
            return torch.cat([g.unsqueeze(0), g.new_zeros(ctx.rows - 1, *g.shape)])

    class Transposed(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x.t()

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g.t()

    leaf = torch.randn(3, 2, requires_grad=True)
    h = leaf * 1
    same = Identity.apply(h)
    show(same is h, same._is_view(), same._base is h, same.grad_fn.name(), h.grad_fn.name())
    same.sum().backward()
    show(leaf.grad)
    for fn in (Identity.apply, FirstRow.apply, Transposed.apply):
        out = fn(leaf * 1)
        show(out.shape, out._is_view(), out.grad_fn.name(), out.is_contiguous())
        show_outcome(show, lambda out=out: out.mul_(2))
        show_outcome(show, lambda out=out: out.clone().mul_(2).grad_fn.name())
        with torch.no_grad():
            show_outcome(show, lambda out=out: out.zero_().sum().item())
        show_outcome(show, lambda out=out: out.detach().add_(1).shape)

    class SavesPassthrough(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, g):
            return g

    show_outcome(show, lambda: SavesPassthrough.apply(leaf * 1))
    show_outcome(show, lambda: SavesPassthrough.apply(torch.ones(2)))
    direct = Identity.apply(leaf)
    show(direct is leaf, direct._is_view(), direct.grad_fn.name(), direct.requires_grad)
    leaf.grad = None
    (direct * 3).sum().backward()
    show(leaf.grad)
    plain = torch.ones(3)
    show(Identity.apply(plain) is plain, Identity.apply(plain).requires_grad, FirstRow.apply(plain.view(3, 1))._base)


def _arguments_and_ctx_state(lib, show):
    """A scaled-dot-product Function taking tensors, None (an optional mask), numbers, strings and a tuple; ctx
    attributes carried into backward; intermediates vs outputs saved; ``needs_input_grad`` as the inputs ask
    for it; and ``save_for_backward`` of a non-tensor."""
    torch = lib
    torch.manual_seed(3510)
    log: list = []

    class Attention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, mask, scale, mode, shape):
            scores = q @ k.transpose(-1, -2) * scale
            if mask is not None:
                scores = scores.masked_fill(mask, float("-inf"))
            probs = scores.softmax(-1)
            out = probs @ v
            ctx.save_for_backward(q, k, v, probs)
            ctx.scale, ctx.mode, ctx.shape, ctx.had_mask = scale, mode, shape, mask is not None
            log.append((mode, shape, type(scale).__name__, mask is None))
            return out.reshape(shape) if mode == "flat" else out

        @staticmethod
        def backward(ctx, g):
            q, k, v, probs = ctx.saved_tensors
            log.append(ctx.needs_input_grad)
            g = g.reshape(probs.shape[0], v.shape[-1])
            gp = g @ v.t()
            gs = probs * (gp - (gp * probs).sum(-1, keepdim=True)) * ctx.scale
            gq = gs @ k if ctx.needs_input_grad[0] else None
            gk = gs.t() @ q if ctx.needs_input_grad[1] else None
            gv = probs.t() @ g if ctx.needs_input_grad[2] else None
            return gq, gk, gv, None, None, None, None

    q = torch.randn(4, 3, requires_grad=True)
    k = torch.randn(5, 3, requires_grad=True)
    v = torch.randn(5, 2)
    mask = torch.zeros(4, 5, dtype=torch.bool)
    mask[:, -1] = True
    out = Attention.apply(q, k, v, None, 3 ** -0.5, "flat", (8,))
    ref = torch.softmax(q @ k.t() / 3 ** 0.5, -1) @ v
    show(out.shape, (out - ref.reshape(8)).abs().max().item() < 1e-6, out.grad_fn.name())
    out.sum().backward()
    show(q.grad, k.grad, v.grad, log)
    log.clear()
    out2 = Attention.apply(q.detach(), k, v.requires_grad_(), mask, 0.5, "keep", None)
    out2.pow(2).sum().backward()
    show(out2.shape, k.grad, v.grad, log)
    show([n is None or n.name() for n, _ in out2.grad_fn.next_functions])
    show(out2.grad_fn.needs_input_grad, out2.grad_fn.had_mask, out2.grad_fn.mode)
    node = Attention.apply(q, k, v, None, 1.0, "keep", None).grad_fn
    show(node.to_save, node.dirty_tensors, node.non_differentiable, node.saved_for_forward, len(node.saved_tensors))
    show_outcome(show, lambda: node.materialize_grads)

    class SaveNumber(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.save_for_backward(x, factor)
            return x * factor

        @staticmethod
        def backward(ctx, g):
            return g, None

    show_outcome(show, lambda: SaveNumber.apply(q, 2.0))

    class SaveBoth(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            e = x.exp()
            s = e.sum()
            out = e / s
            ctx.save_for_backward(out, e)
            return out

        @staticmethod
        def backward(ctx, g):
            out, e = ctx.saved_tensors
            return out * (g - (g * out).sum())

    x = torch.randn(5, requires_grad=True)
    y = SaveBoth.apply(x)
    saved = y.grad_fn.saved_tensors
    show(saved[0] is y, saved[0].equal(y), saved[1].grad_fn, saved[1].requires_grad)
    (y * torch.arange(5.0)).sum().backward()
    show(x.grad)
    y2 = SaveBoth.apply(x)
    with torch.no_grad():
        y2.mul_(2)
    show_outcome(show, lambda: y2.sum().backward())


def _wrong_backward_returns(lib, show):
    """The mistakes of a Function's backward: too few and too many gradients, a gradient of the wrong shape
    (broadcastable and not), of another dtype, a gradient for a non-tensor input, a non-tensor gradient, and a
    gradient for an integer input."""
    torch = lib
    torch.manual_seed(3511)
    wrong = {}

    def make(name, result):
        def backward(ctx, g):
            return result(g)

        cls = type(name, (torch.autograd.Function,), {
            "forward": staticmethod(lambda ctx, x, n: x * n),
            "backward": staticmethod(backward),
        })
        wrong[name] = cls
        return cls

    x = torch.randn(2, 3, requires_grad=True)
    cases = [
        ("TooFew", lambda g: g),
        ("TooFewTuple", lambda g: (g,)),
        ("TooMany", lambda g: (g, None, None)),
        ("RowShape", lambda g: (g[:1], None)),
        ("BadShape", lambda g: (g.reshape(3, 2), None)),
        ("ExtraDim", lambda g: (g.unsqueeze(0), None)),
        ("Double", lambda g: (g.double(), None)),
        ("Int", lambda g: (g.long(), None)),
        ("ForNumber", lambda g: (g, g)),
        ("NotTensor", lambda g: (3.0, None)),
        ("NoneAll", lambda g: (None, None)),
    ]
    for name, result in cases:
        cls = make(name, result)
        x.grad = None

        def run(cls=cls):
            cls.apply(x, 2.0).sum().backward()
            return None if x.grad is None else (x.grad.dtype, tuple(x.grad.shape), x.grad.sum().item())

        show(name)
        show_outcome(show, run)
    g, = torch.autograd.grad(wrong["RowShape"].apply(x, 2.0).sum(), x)
    show(g)
    ints = torch.arange(3)

    class IntIn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, idx):
            return a[idx]

        @staticmethod
        def backward(ctx, g):
            return g.new_ones(2, 3), torch.ones(3)

    show_outcome(show, lambda: IntIn.apply(x, ints[:2]).sum().backward())
    show(x.grad)


def _grad_modes_and_checkpoint(lib, show):
    """A Function called under no_grad, enable_grad inside no_grad, inference_mode and set_grad_enabled(False),
    and inside activation checkpointing (reentrant and not), counting how often its forward and backward run;
    a Function whose forward asks for the grad mode."""
    torch, nn = lib, lib.nn
    from_checkpoint = lib.utils.checkpoint.checkpoint
    torch.manual_seed(3512)
    calls = {"forward": 0, "backward": 0, "modes": []}

    class Gelu(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            calls["forward"] += 1
            calls["modes"].append((torch.is_grad_enabled(), torch.is_inference_mode_enabled()))
            ctx.save_for_backward(x)
            return 0.5 * x * (1 + torch.erf(x / 2 ** 0.5))

        @staticmethod
        def backward(ctx, g):
            calls["backward"] += 1
            x, = ctx.saved_tensors
            pdf = torch.exp(-0.5 * x * x) / (2 * torch.pi) ** 0.5
            cdf = 0.5 * (1 + torch.erf(x / 2 ** 0.5))
            return g * (cdf + x * pdf)

    x = torch.randn(4, 3, requires_grad=True)
    with torch.no_grad():
        a = Gelu.apply(x)
        with torch.enable_grad():
            b = Gelu.apply(x)
    with torch.inference_mode():
        c = Gelu.apply(x)
    with torch.set_grad_enabled(False):
        d = Gelu.apply(x)
    show(a.requires_grad, b.requires_grad, b.grad_fn.name(), c.is_inference(), c.requires_grad, d.grad_fn)
    show(calls["modes"])
    show_outcome(show, lambda: Gelu.apply(c.requires_grad_()).sum().item())
    show_outcome(show, lambda: Gelu.apply(c.clone().requires_grad_()).sum().item())
    block = nn.Sequential(nn.Linear(3, 5), nn.Identity(), nn.Linear(5, 3))

    def body(inp):
        return block[2](Gelu.apply(block[0](inp)))

    for reentrant in (True, False):
        calls.update(forward=0, backward=0)
        calls["modes"].clear()
        block.zero_grad()
        x.grad = None
        out = from_checkpoint(body, x, use_reentrant=reentrant)
        show(reentrant, out.grad_fn.name(), calls["forward"])
        out.pow(2).sum().backward()
        show(calls["forward"], calls["backward"], calls["modes"], x.grad, block[0].weight.grad)
    calls.update(forward=0)
    frozen = torch.randn(4, 3)
    out = from_checkpoint(body, frozen, use_reentrant=True)
    show(out.requires_grad, out.grad_fn.name() if out.grad_fn is not None else None, calls["forward"])
    with torch.no_grad():
        out = from_checkpoint(body, x, use_reentrant=False)
    show(out.requires_grad, calls["forward"])


PROGRAMS = [
    _binary_connect_ste,
    _fake_quant_clamped_passthrough,
    _gradient_reversal_dann,
    _memory_saving_swish,
    _inplace_relu_mark_dirty,
    _topk_indices_and_materialize,
    _once_differentiable_pair,
    _jvp_function_forward_ad,
    _functions_returning_views,
    _arguments_and_ctx_state,
    _wrong_backward_returns,
    _grad_modes_and_checkpoint,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
