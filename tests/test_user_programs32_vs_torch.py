"""A thirty-second set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and
compared: model-interpretability and adversarial-robustness notebooks.

These add what the other program files do not run: vanilla saliency and input x gradient over a batch by
``autograd.grad`` (with the errors users meet: the grad of a non-scalar, an input that does not require grad,
backward twice, unused inputs); SmoothGrad from a seeded Generator; integrated gradients along a linspace of
alphas with Riemann and trapezoid sums and the completeness check; Grad-CAM whose activation is kept by a forward
hook and whose gradient comes from ``Tensor.register_hook`` beside full backward (pre-)hooks, with their call
order; guided backprop by full backward hooks that return modified tuples and None entries, and the refusals of
hooks that return the wrong count, shape or type; occlusion maps through unfold/fold; FGSM on a CNN with
BatchNorm in eval, ``requires_grad_`` on detached copies in a loop; PGD in the L-inf and L2 balls (renorm,
normalize, vector_norm); a gradient-reversal layer for domain-adversarial training; and feature visualisation by
optimising an input with roll jitter and a total-variation penalty. Everything is drawn from the seeded global
generator or a seeded Generator, which are torch's; values are compared to a tolerance (convolutions and matrix
products are not bit for bit).

Differences these programs found, now fixed (``tests/ops/test_program32_findings_vs_torch.py``):
- the gradient through ``renorm`` (the L2-ball projection differentiated through) was a few ulp off torch in
  float32 and float64: PyTorch groups its terms as ``maxnorm * invnorm * (grad - invnorm * nb)`` and takes the
  norm and sums in the CPU accumulate type (float32's in float64); renorm's forward in float16/bfloat16 was an
  ulp off (PyTorch rounds the float32 scale to the input's type before multiplying).

Left: float64 ``exp`` (and so ``sigmoid``, ``softplus``, BCE with logits) is not bit for bit with torch's
vectorised kernel (about 1 element in 20 differs by an ulp), so the float64 programs are compared to a
tolerance; renorm's bfloat16 gradient for a fractional p and its complex gradient still round their own way.
"""

from __future__ import annotations

import contextlib

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _small_cnn(torch, nn, classes=3, bn=False):
    """The small classifier the notebooks attribute: conv, (BN), ReLU, conv, ReLU, global pool, linear."""
    layers = [nn.Conv2d(3, 4, 3, padding=1)]
    if bn:
        layers.append(nn.BatchNorm2d(4))
    layers += [nn.ReLU(), nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
               nn.Linear(6, classes)]
    return nn.Sequential(*layers)


def _vanilla_saliency(lib, show):
    """Vanilla saliency and input x gradient for a batch: the gradient of each image's top score w.r.t. the
    batch, its largest absolute value over channels, and the errors a first attempt runs into."""
    torch, nn = lib, lib.nn
    torch.manual_seed(320)
    model = _small_cnn(torch, nn).eval()
    images = torch.rand(4, 3, 6, 6)
    x = images.clone().requires_grad_(True)
    logits = model(x)
    top = logits.argmax(dim=1)
    show(logits, top, logits.grad_fn.name())
    show_outcome(show, lambda: torch.autograd.grad(logits, x))
    show_outcome(show, lambda: logits.backward())
    scores = logits.gather(1, top.unsqueeze(1)).squeeze(1)
    show(scores, scores.grad_fn.name())
    grad, = torch.autograd.grad(scores.sum(), x, retain_graph=True)
    saliency = grad.abs().amax(dim=1)
    show(saliency.shape, saliency[0], saliency.flatten(1).argmax(dim=1))
    per_image, = torch.autograd.grad(scores, x, grad_outputs=torch.ones_like(scores), retain_graph=True)
    show(torch.equal(per_image, grad), (grad * x).sum(dim=(1, 2, 3)))
    attribution = (x * grad).detach()
    show(attribution.sum(dim=1)[1], attribution.requires_grad, grad.requires_grad)
    scores.sum().backward()
    show(x.grad.shape, torch.allclose(x.grad, grad), model[0].weight.grad.shape)
    show_outcome(show, lambda: scores.sum().backward())
    plain = images[:1]
    show_outcome(show, lambda: torch.autograd.grad(model(plain)[0, 0], plain))
    x2 = images[:1].clone().requires_grad_()
    unused = torch.zeros(1, requires_grad=True)
    show_outcome(show, lambda: torch.autograd.grad(model(x2)[0, 0], [x2, unused]))
    g_x, g_unused = torch.autograd.grad(model(x2)[0, 0], [x2, unused], allow_unused=True)
    show(g_x.shape, g_unused)
    g_x, g_unused = torch.autograd.grad(model(x2)[0, 0], [x2, unused], allow_unused=True,
                                        materialize_grads=True)
    show(g_unused, g_x.abs().sum() > 0)
    with torch.no_grad():
        show_outcome(show, lambda: torch.autograd.grad(model(x2)[0, 0], x2))


def _smoothgrad(lib, show):
    """SmoothGrad: noisy copies of each image from a seeded Generator (noise scaled by each image's range),
    gradients averaged over the copies, the squared variant, and the same with a fresh Generator reproduced."""
    torch, nn = lib, lib.nn
    torch.manual_seed(321)
    model = _small_cnn(torch, nn).eval()
    images = torch.rand(2, 3, 5, 5)
    target = torch.tensor([0, 2])
    samples, noise_level = 6, 0.15

    def smoothgrad(gen, squared=False):
        span = images.flatten(1).amax(1) - images.flatten(1).amin(1)
        sigma = (noise_level * span).view(-1, 1, 1, 1, 1)
        noise = torch.randn(samples, *images.shape, generator=gen) * sigma.transpose(0, 1)
        noisy = (images.unsqueeze(0) + noise).reshape(-1, *images.shape[1:]).requires_grad_()
        out = model(noisy)
        picked = out.gather(1, target.repeat(samples).unsqueeze(1))
        grad, = torch.autograd.grad(picked.sum(), noisy)
        grad = grad.view(samples, *images.shape)
        return (grad ** 2 if squared else grad).mean(dim=0), noisy

    gen = torch.Generator().manual_seed(7)
    smooth, noisy = smoothgrad(gen)
    show(noisy.shape, noisy.is_leaf, noisy.grad_fn, smooth.shape)
    show(smooth.abs().amax(dim=1)[0], gen.initial_seed())
    again, _ = smoothgrad(torch.Generator().manual_seed(7))
    show(torch.equal(again, smooth))
    squared, _ = smoothgrad(gen, squared=True)
    show(squared.sum(dim=1)[1], (squared >= 0).all())
    state = gen.get_state()
    first = torch.randn(3, generator=gen)
    gen.set_state(state)
    show(first, torch.equal(first, torch.randn(3, generator=gen)), state.dtype, state.shape)
    show_outcome(show, lambda: torch.randn(2, generator=torch.Generator().manual_seed(-1)))
    show_outcome(show, lambda: gen.set_state(torch.zeros(4)))


def _integrated_gradients(lib, show):
    """Integrated gradients in float64: a batch of interpolations between a black baseline and the image, the
    path gradients, left/right Riemann and trapezoid sums, and the completeness check against f(x) - f(x')."""
    torch, nn = lib, lib.nn
    torch.manual_seed(322)
    model = nn.Sequential(nn.Linear(8, 12), nn.Softplus(), nn.Linear(12, 3)).double().eval()
    x = torch.rand(1, 8, dtype=torch.float64)
    baseline = torch.zeros_like(x)
    steps = 32
    alphas = torch.linspace(0, 1, steps + 1, dtype=torch.float64)
    show(alphas[:4], alphas.dtype, alphas.shape)
    path = baseline + alphas.view(-1, 1) * (x - baseline)
    path.requires_grad_()
    target = model(x).argmax(dim=1).item()
    out = model(path)[:, target]
    grads, = torch.autograd.grad(out.sum(), path)
    show(target, out[[0, -1]], grads.shape)
    left = grads[:-1].mean(dim=0)
    right = grads[1:].mean(dim=0)
    trap = torch.trapezoid(grads, alphas, dim=0)
    trap_dx = torch.trapezoid(grads, dx=1.0 / steps, dim=0)
    show(torch.allclose(trap, trap_dx), torch.allclose(trap, (left + right) / 2))
    attributions = (x - baseline) * trap
    show(attributions, attributions.sum())
    with torch.no_grad():
        delta = model(x)[0, target] - model(baseline)[0, target]
    show(delta, (attributions.sum() - delta).abs() < 1e-3)
    show([round(((x - baseline) * g).sum().item() - delta.item(), 6) for g in (left, right)])
    running = torch.cumulative_trapezoid(grads, alphas, dim=0)
    show(running.shape, torch.allclose(running[-1], trap))
    show_outcome(show, lambda: torch.trapezoid(grads, alphas[:5], dim=0))
    show_outcome(show, lambda: torch.linspace(0, 1, -2))


def _grad_cam_tensor_hooks(lib, show):
    """Grad-CAM for a batch of two with the activation kept by a forward hook and its gradient by
    ``Tensor.register_hook``, beside a full backward pre-hook and backward hook on the same conv: the order they
    run in, the weights by the mean over H, W, the ReLU'd map upsampled, and retain_grad on the activation."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(323)
    model = _small_cnn(torch, nn).eval()
    order: list = []
    kept: dict = {}

    def keep_activation(module, inputs, output):
        kept["act"] = output
        output.retain_grad()
        output.register_hook(lambda g: order.append(("tensor hook", tuple(g.shape))))
        order.append(("forward", type(module).__name__, output.requires_grad))

    conv = model[2]
    handles = [
        conv.register_forward_hook(keep_activation),
        conv.register_full_backward_pre_hook(lambda m, go: order.append(("pre", len(go))) or None),
        conv.register_full_backward_hook(lambda m, gi, go: order.append(("full", len(gi), gi[0] is None))),
    ]
    images = torch.rand(2, 3, 8, 8)
    logits = model(images)
    classes = torch.tensor([1, 2])
    logits.gather(1, classes.view(-1, 1)).sum().backward()
    show(order)
    act, grads = kept["act"], kept["act"].grad
    show(act.grad_fn.name(), act.is_leaf, grads.shape, act.requires_grad)
    weights = grads.mean(dim=(2, 3), keepdim=True)
    cam = F.relu((weights * act.detach()).sum(dim=1, keepdim=True))
    cam = F.interpolate(cam, size=images.shape[-2:], mode="bilinear", align_corners=False)
    flat = cam.flatten(1)
    lo, hi = flat.amin(1, keepdim=True), flat.amax(1, keepdim=True)
    cam = ((flat - lo) / (hi - lo + 1e-8)).view_as(cam)
    show(weights.flatten(1), cam.shape, cam[1, 0, ::3, ::3])
    for h in handles:
        h.remove()
    order.clear()
    model(images)[:, 0].sum().backward()
    show(order, len(conv._forward_hooks), len(conv._backward_hooks), len(conv._backward_pre_hooks))
    show_outcome(show, lambda: act.register_hook(lambda g: None))
    leaf = torch.ones(2)
    show_outcome(show, lambda: leaf.register_hook(lambda g: g))


def _guided_backprop(lib, show):
    """Guided backprop: every ReLU's full backward hook clamps grad_input to be non-negative (a new tuple), a
    hook on the linear layer hands back None entries, and the refusals of hooks that return a wrong count, a
    wrong shape, or not a tensor."""
    torch, nn = lib, lib.nn
    torch.manual_seed(324)
    model = _small_cnn(torch, nn).eval()
    calls: list = []

    def guided(module, grad_input, grad_output):
        calls.append((type(module).__name__, type(grad_input).__name__, len(grad_input)))
        return tuple(g.clamp(min=0.0) if g is not None else None for g in grad_input)

    handles = [m.register_full_backward_hook(guided) for m in model.modules() if isinstance(m, nn.ReLU)]
    handles.append(model[-1].register_full_backward_hook(lambda m, gi, go: calls.append(("fc", gi[0].shape))))
    image = torch.rand(1, 3, 6, 6, requires_grad=True)
    model(image)[0, 1].backward()
    show(calls, image.grad[0, 0, :2])
    show((image.grad >= 0).float().mean())
    for h in handles:
        h.remove()
    plain = image.detach().clone().requires_grad_()
    model(plain)[0, 1].backward()
    show(torch.equal(plain.grad, image.grad), plain.grad[0, 0, :2])

    relu = model[1]

    def attempt(hook, register=nn.Module.register_full_backward_hook):
        handle = register(relu, hook)
        try:
            inp = torch.rand(1, 3, 6, 6, requires_grad=True)
            model(inp)[0, 0].backward()
            return inp.grad if inp.grad is None else inp.grad.abs().sum()
        finally:
            handle.remove()

    show_outcome(show, lambda: attempt(lambda m, gi, go: (gi[0], gi[0])))
    show_outcome(show, lambda: attempt(lambda m, gi, go: (gi[0][:, :2],)))
    show_outcome(show, lambda: attempt(lambda m, gi, go: gi[0]))
    show_outcome(show, lambda: attempt(lambda m, gi, go: (None,)))
    show_outcome(show, lambda: attempt(lambda m, gi, go: [gi[0] * 0]))
    show_outcome(show, lambda: attempt(lambda m, go: (go[0] * 2,), nn.Module.register_full_backward_pre_hook))
    show_outcome(show, lambda: attempt(lambda m, go: (go[0], go[0]), nn.Module.register_full_backward_pre_hook))
    t = torch.rand(3, requires_grad=True)
    y = t * 2
    y.register_hook(lambda g: g[:2])
    show_outcome(show, lambda: y.sum().backward())
    z = t * 3
    z.register_hook(lambda g: 5)
    show_outcome(show, lambda: z.sum().backward())
    w = t * 4
    w.register_hook(lambda g: g.double())
    show_outcome(show, lambda: (w.sum().backward(), t.grad.dtype))


def _occlusion_maps(lib, show):
    """Occlusion sensitivity: patches by F.unfold, each patch zeroed in turn, the drop of the class score per
    patch folded back into an image and normalised by the overlap counts from folding ones."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(325)
    model = _small_cnn(torch, nn).eval()
    image = torch.rand(1, 3, 6, 6)
    k, s = 3, 1
    cols = F.unfold(image, kernel_size=k, stride=s)
    show(cols.shape, cols.dtype)
    n_patches = cols.shape[-1]
    with torch.no_grad():
        base = model(image)[0]
        cls = base.argmax().item()
        keep = 1.0 - torch.eye(n_patches).unsqueeze(1)
        occluded_cols = cols.expand(n_patches, -1, -1) * keep
        show(occluded_cols.shape, keep.shape)
        counts = F.fold(torch.ones_like(cols), image.shape[-2:], kernel_size=k, stride=s)
        covered = F.fold(keep.expand(-1, cols.shape[1], -1), image.shape[-2:], kernel_size=k, stride=s)
        occluded = F.fold(occluded_cols, image.shape[-2:], kernel_size=k, stride=s) / counts
        show(counts[0, 0], occluded.shape, covered[0, 0])
        drops = base[cls] - model(occluded)[:, cls]
    show(cls, drops.view(4, 4))
    heat = F.fold(drops.view(1, 1, -1).expand(1, k * k, -1), image.shape[-2:], kernel_size=k, stride=s)
    heat = heat / counts[:, :1]
    show(heat[0, 0], heat.argmax())
    unfold, fold = nn.Unfold(kernel_size=2, stride=2), nn.Fold(output_size=(6, 6), kernel_size=2, stride=2)
    show(unfold, fold, torch.equal(fold(unfold(image)), image))
    show_outcome(show, lambda: F.fold(cols, (5, 5), kernel_size=k))
    show_outcome(show, lambda: F.unfold(image[0, 0], kernel_size=2))
    show_outcome(show, lambda: F.fold(cols[:, :-1], (6, 6), kernel_size=k))


def _fgsm_batchnorm_eval(lib, show):
    """FGSM on a CNN with BatchNorm in eval (running stats untouched), a targeted variant, iterative FGSM with
    ``requires_grad_`` on a detached copy each step and clamp with tensor bounds, and what goes wrong when the
    copy is not detached."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(326)
    model = _small_cnn(torch, nn, bn=True)
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model(torch.rand(8, 3, 6, 6))
    bn = model[1]
    model.eval()
    stats = (bn.running_mean.clone(), bn.running_var.clone(), bn.num_batches_tracked.clone())
    show(bn.training, stats[2], bn.running_mean)
    x = torch.rand(4, 3, 6, 6)
    y = torch.tensor([0, 1, 2, 0])
    for p in model.parameters():
        p.requires_grad_(False)
    x_adv = x.clone().requires_grad_()
    loss = F.cross_entropy(model(x_adv), y)
    loss.backward()
    eps = 8 / 255
    adv = (x_adv + eps * x_adv.grad.sign()).clamp(0, 1).detach()
    show(loss, adv.requires_grad, (adv - x).abs().amax(), model[0].weight.grad)
    show(torch.equal(stats[0], bn.running_mean), torch.equal(stats[2], bn.num_batches_tracked))
    target = torch.tensor([2, 2, 2, 2])
    t_in = x.clone().requires_grad_()
    grad, = torch.autograd.grad(F.cross_entropy(model(t_in), target), t_in)
    targeted = (t_in - eps * grad.sign()).clamp(0, 1)
    show(targeted.grad_fn.name(), model(targeted.detach()).argmax(1))
    lo, hi = (x - eps).clamp(min=0), (x + eps).clamp(max=1)
    adv = x.clone()
    losses = []
    for _ in range(4):
        adv = adv.detach().requires_grad_(True)
        loss = F.cross_entropy(model(adv), y)
        g, = torch.autograd.grad(loss, adv)
        adv = torch.clamp(adv + (eps / 4) * g.sign(), min=lo, max=hi)
        losses.append(round(loss.item(), 5))
    show(losses, adv.grad_fn.name(), (adv - x).abs().amax() <= eps + 1e-7)
    chained = x.clone().requires_grad_()
    step = chained + 0.01
    show_outcome(show, lambda: step.requires_grad_(False))
    show_outcome(show, lambda: torch.clamp(x, min=lo[0], max=1.5))
    show_outcome(show, lambda: torch.clamp(x, min=lo.double(), max=hi))


def _pgd_balls(lib, show):
    """PGD in float64: the L-inf ball (sign steps, clamp to [-eps, eps]) and the L2 ball (normalised gradient
    steps, projection by renorm and by dividing by the clipped vector_norm), with random starts, per-sample
    early stopping by a mask, and the loss per step."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(327)
    model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 4)).double().eval()
    x = torch.rand(5, 10, dtype=torch.float64)
    y = model(x).argmax(1)
    gen = torch.Generator().manual_seed(11)

    def linf(eps, alpha, steps):
        delta = torch.empty_like(x).uniform_(-eps, eps, generator=gen)
        history = []
        for _ in range(steps):
            delta.requires_grad_(True)
            loss = F.cross_entropy(model(x + delta), y, reduction="none")
            g, = torch.autograd.grad(loss.sum(), delta)
            with torch.no_grad():
                delta = (delta + alpha * g.sign()).clamp(-eps, eps)
                delta = (x + delta).clamp(0, 1) - x
            history.append(round(loss.mean().item(), 6))
        return delta, history

    delta, hist = linf(0.1, 0.03, 5)
    show(hist, delta.abs().amax(), delta.requires_grad)

    def l2(eps, alpha, steps, project):
        delta = torch.randn(x.shape, generator=gen, dtype=torch.float64)
        delta = F.normalize(delta, dim=1) * eps * 0.5
        fooled = torch.zeros(len(x), dtype=torch.bool)
        for _ in range(steps):
            delta = delta.detach().requires_grad_()
            out = model(x + delta)
            fooled = fooled | (out.argmax(1) != y)
            g, = torch.autograd.grad(F.cross_entropy(out, y), delta)
            step = g / g.norm(p=2, dim=1, keepdim=True).clamp_min(1e-12)
            delta = torch.where(fooled.unsqueeze(1), delta, delta + alpha * step)
            delta = project(delta, eps)
        return delta.detach(), fooled

    by_renorm = l2(0.5, 0.2, 5, lambda d, eps: d.renorm(p=2, dim=0, maxnorm=eps))
    by_norm = l2(0.5, 0.2, 5, lambda d, eps: d * (eps / torch.linalg.vector_norm(d, dim=1, keepdim=True))
                 .clamp(max=1.0))
    for delta, fooled in (by_renorm, by_norm):
        show(delta.norm(dim=1), fooled, delta.dtype)
    show(torch.allclose(by_renorm[0].norm(dim=1).amax(), torch.tensor(0.5, dtype=torch.float64)))
    # (a perturbation kept in the ball by construction: the attack differentiates through the projection)
    raw = (torch.randn(x.shape, generator=gen, dtype=torch.float64) * 0.4).requires_grad_()
    loss = F.cross_entropy(model(x + raw.renorm(p=2, dim=0, maxnorm=0.5)), y)
    g_raw, = torch.autograd.grad(loss, raw)
    show(loss, g_raw[:2], raw.renorm(2, 0, 0.5).norm(dim=1))
    raw32 = raw.detach().float().requires_grad_()
    (raw32.renorm(2, 0, 0.5) * torch.linspace(-1, 1, 10)).sum().backward()
    show(raw32.grad[:2])
    show(F.normalize(torch.zeros(2, 3), dim=1), torch.zeros(2, 3).renorm(2, 0, 1.0))
    show_outcome(show, lambda: x.renorm(p=2, dim=2, maxnorm=1.0))
    show_outcome(show, lambda: x.renorm(p=-1, dim=0, maxnorm=1.0))
    show_outcome(show, lambda: x.renorm(p=2, dim=0, maxnorm=-1.0))
    show_outcome(show, lambda: torch.linalg.vector_norm(x.long(), dim=1))


def _gradient_reversal(lib, show):
    """A gradient-reversal layer (a custom Function: identity forward by ``view_as``, negated and scaled
    backward) between a feature extractor and a domain classifier, its schedule of lambda, the gradients it
    flips, and a backward that returns the wrong number of gradients."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(328)

    class GradReverse(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, lambd):
            ctx.lambd = lambd
            return x.view_as(x)

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output.neg() * ctx.lambd, None

    features = nn.Sequential(nn.Linear(5, 8), nn.ReLU())
    label_head, domain_head = nn.Linear(8, 3), nn.Linear(8, 1)
    source, target = torch.randn(6, 5), torch.randn(6, 5)
    labels = torch.randint(0, 3, (6,))
    domains = torch.cat([torch.zeros(6), torch.ones(6)])
    lambdas = [round(2.0 / (1.0 + torch.exp(torch.tensor(-10.0 * p)).item()) - 1.0, 6) for p in (0.0, 0.25, 1.0)]
    show(lambdas)
    feats = features(torch.cat([source, target]))
    reversed_feats = GradReverse.apply(feats, 0.5)
    show(reversed_feats.grad_fn.name(), reversed_feats._base is None, torch.equal(reversed_feats, feats))
    domain_loss = F.binary_cross_entropy_with_logits(domain_head(reversed_feats).squeeze(1), domains)
    class_loss = F.cross_entropy(label_head(feats[:6]), labels)
    params = list(features.parameters())
    g_domain = torch.autograd.grad(domain_loss, params, retain_graph=True)
    g_plain = torch.autograd.grad(F.binary_cross_entropy_with_logits(domain_head(feats).squeeze(1), domains),
                                  params, retain_graph=True)
    show(torch.allclose(g_domain[1], -0.5 * g_plain[1]), g_domain[1])
    opt = torch.optim.SGD([*features.parameters(), *label_head.parameters(), *domain_head.parameters()], lr=0.1)
    opt.zero_grad()
    (class_loss + domain_loss).backward()
    show(class_loss, domain_loss, features[0].bias.grad, domain_head.bias.grad)
    opt.step()
    show(features[0].bias)

    class BadReverse(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, lambd):
            return x.clone()

        @staticmethod
        def backward(ctx, grad_output):
            return -grad_output

    show_outcome(show, lambda: BadReverse.apply(torch.ones(2, requires_grad=True), 1.0).sum().backward())

    class ShapeReverse(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, grad_output):
            return -grad_output[:1]

    show_outcome(show, lambda: ShapeReverse.apply(torch.ones(2, 2, requires_grad=True)).sum().backward())
    leaf = torch.ones(3, requires_grad=True)
    out = GradReverse.apply(leaf, 2.0)
    out.sum().backward()
    show(leaf.grad, out.grad_fn.next_functions[0][0].name() if out.grad_fn.next_functions[0][0] else None)


def _feature_visualisation(lib, show):
    """Feature visualisation: an input optimised by Adam to excite one channel of a conv layer (its activation
    taken by a forward hook), with roll jitter from a seeded Generator, a total-variation penalty and an L2
    decay, ``clamp_`` under no_grad, and a hook that stops the forward early by raising."""
    torch, nn = lib, lib.nn
    torch.manual_seed(329)
    net = nn.Sequential(nn.Conv2d(3, 5, 3, padding=1), nn.ReLU(), nn.Conv2d(5, 6, 3, padding=1), nn.ReLU(),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 2)).eval()
    for p in net.parameters():
        p.requires_grad_(False)
    captured: dict = {}

    class StopForward(Exception):
        pass

    def grab(module, inputs, output):
        captured["act"] = output
        raise StopForward

    handle = net[3].register_forward_hook(grab)
    gen = torch.Generator().manual_seed(5)
    image = (torch.rand(1, 3, 8, 8, generator=gen) * 0.2 + 0.4).requires_grad_()
    opt = torch.optim.Adam([image], lr=0.05)

    def total_variation(img):
        return (img[..., 1:, :] - img[..., :-1, :]).abs().mean() + (img[..., :, 1:] - img[..., :, :-1]).abs().mean()

    history = []
    for _ in range(6):
        dy, dx = torch.randint(-2, 3, (2,), generator=gen).tolist()
        jittered = torch.roll(image, shifts=(dy, dx), dims=(2, 3))
        opt.zero_grad()
        with contextlib.suppress(StopForward):  # (the hook ends the forward once it has its layer)
            net(jittered)
        activation = captured["act"][0, 3].mean()
        loss = -activation + 0.1 * total_variation(image) + 1e-3 * image.pow(2).sum()
        loss.backward()
        opt.step()
        with torch.no_grad():
            image.clamp_(0, 1)
        history.append((dy, dx, round(activation.item(), 5)))
    show(history, image.grad.shape, image.is_leaf, image.requires_grad)
    show(image[0, :, 3, 3], total_variation(image.detach()))
    handle.remove()
    show(net(image.detach()).shape, torch.roll(torch.arange(6).view(2, 3), 1), torch.roll(torch.arange(4), -5))
    show_outcome(show, lambda: torch.roll(image, shifts=(1, 2), dims=(2,)))
    show_outcome(show, lambda: torch.roll(image, shifts=1, dims=4))


PROGRAMS = [
    _vanilla_saliency,
    _smoothgrad,
    _integrated_gradients,
    _grad_cam_tensor_hooks,
    _guided_backprop,
    _occlusion_maps,
    _fgsm_batchnorm_eval,
    _pgd_balls,
    _gradient_reversal,
    _feature_visualisation,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
