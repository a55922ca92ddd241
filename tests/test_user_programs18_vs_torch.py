"""An eighteenth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: higher-order autograd notebooks. MAML over a small CNN
(conv2d, batch_norm in training mode with its buffers passed to torch.func.functional_call, max_pool2d, linear)
with second-order inner steps beside first-order MAML, and functional_call's strict/ambiguous refusals;
hypergradients of a log learning rate and a weight decay through five unrolled SGD steps, checked by finite
differences and trained by Adam; implicit differentiation of a regularised logistic regression's optimum by
conjugate gradients on Hessian-vector products, against linalg.solve and a mixed Jacobian; a WGAN-GP critic of
LayerNorm and LeakyReLU with the penalty's graph names and an R1 penalty; double backward through GELU (both
forms), SiLU, Mish, Softplus, the ELU family, softmax/log_softmax/softmin and label-smoothed, weighted cross
entropy (with soft targets); gradient penalties through layer_norm, group_norm, conv_transpose2d, avg/max/adaptive
pooling, bilinear interpolation, causal scaled_dot_product_attention and embeddings; Hessian-vector products of
cumsum, cumprod and prod with zeros, norms, logsumexp with -inf, where/masked_fill, pow with a tensor exponent and
a zero base, atan2, hypot and amax with ties; Jacobian (Frobenius) regularisation by random projections against
autograd.functional.jacobian; influence functions by double-backward HVPs, LiSSA and a mixed derivative with
respect to per-example weights; a neural ODE through RK4, its adjoint written by hand and wrapped in a custom
Function; and grad-of-grad with retain_graph, freed buffers, constant gradients, wrong grad_outputs, backward with
create_graph into ``.grad`` and is_grads_batched Hessian rows. Everything is drawn from the seeded global
generator, which is torch's; values are compared to a tolerance (matrix products are not bit for bit), and the
methods that solve or iterate (hypergradients, implicit differentiation, influence, the ODE) work in float64, as
careful users of them do. The CNN's convolution has no bias: before a batch norm its gradient is rounding noise,
which Adam turns into whole steps.

Differences these programs found, now fixed (``tests/ops/test_program18_findings_vs_torch.py``):
- the gradient of ``F.linear``'s bias taken with create_graph (a MAML inner step's ``head.bias``) was a bare
  ``SumBackward1``: torch's AddmmBackward0 hands the whole gradient on and the engine's ``sum_to`` reduces it, a
  ``ViewBackward0`` over ``SumBackward1``;
- the second derivative of ``elu``/``selu``/``celu`` ended in ``WhereBackward0``; torch's ``elu_double_backward``
  multiplies by the mask ``x < 0`` (``MulBackward0``) after an ``elu_backward`` of its own (and ``elu_backward`` of
  doubles now multiplies by ATen's one coefficient ``alpha * scale``: a selu Hessian was an ulp off);
- upsampling's gradient with create_graph was named ``SeparableLinearBackward0`` (``IndexMapBackwardBackward0``
  for nearest); torch's is ``UpsampleBilinear2DBackwardBackward0`` and so on, whose gradient is the upsampling again;
- ``cumprod``'s recorded gradient with a zero in the input was a ``PermuteBackward0`` of a matrix formulation;
  torch's loop writes each slice of a zero tensor (``CopySlices``);
- ``stack``'s gradients were ``unbind`` views (``UnbindBackward0``); torch selects each (``SelectBackward0``).

Left: the Hessian-vector product of ``linalg.vector_norm(x, inf)`` is one of torch's ZeroTensors, whose
``numpy()`` refuses ("Cannot convert a ZeroTensor to numpy"); tracegrad gives a plain zero tensor (the program
does not differentiate the infinity norm twice); ``torch.func``'s transforms (grad, vmap, jacrev) are missing, so
MAML uses autograd.grad over functional_call; ``elu_backward`` of doubles takes Sleef's exp in the kernel's vector
blocks, NumPy's here (an ulp off in places).
"""

from __future__ import annotations

import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _names(*tensors) -> list:
    """The grad_fn names of tensors (None for a tensor without history)."""
    return [t.grad_fn.name() if t.grad_fn is not None else None for t in tensors]


def _maml_small_cnn(lib, show):
    """MAML over a small CNN (conv2d, batch_norm in training mode, max_pool2d, linear) with torch.func's
    functional_call: second-order inner steps through create_graph=True, the names of the second-order graph,
    the buffers functional_call updates, and first-order MAML (detached inner gradients) beside it."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(180)

    class SmallCNN(nn.Module):
        def __init__(self, ways=3):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3, padding=1, bias=False)  # (a bias before a batch norm learns only noise)
            self.bn = nn.BatchNorm2d(4)
            self.head = nn.Linear(4 * 3 * 3, ways)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
            return self.head(x.flatten(1))

    model = SmallCNN()
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    params = dict(model.named_parameters())
    buffers = dict(model.named_buffers())
    show(sorted(params), sorted(buffers))

    def adapt(support_x, support_y, first_order):
        fast = dict(params)
        for step in range(2):
            logits = torch.func.functional_call(model, {**fast, **buffers}, (support_x,))
            loss = F.cross_entropy(logits, support_y)
            grads = torch.autograd.grad(loss, list(fast.values()), create_graph=not first_order)
            if step == 0:
                show("inner grads", first_order, _names(*grads), [g.requires_grad for g in grads])
            fast = {k: w - 0.4 * g for (k, w), g in zip(fast.items(), grads)}
        return fast

    for first_order in (False, True):
        for episode in range(2):
            xs, ys = torch.randn(6, 1, 6, 6), torch.arange(6) % 3
            xq, yq = torch.randn(6, 1, 6, 6), torch.arange(6) % 3
            fast = adapt(xs, ys, first_order)
            query = F.cross_entropy(torch.func.functional_call(model, {**fast, **buffers}, (xq,)), yq)
            meta_opt.zero_grad()
            query.backward()
            show(first_order, episode, query, _names(fast["conv.weight"], fast["bn.weight"]))
            show(model.conv.weight.grad[0, 0], model.bn.weight.grad, model.head.bias.grad)
            show(buffers["bn.running_mean"], buffers["bn.num_batches_tracked"])
            meta_opt.step()
    show(model.bn.running_var, model.bn.bias)
    strict = torch.func.functional_call(model, {"conv.weight": model.conv.weight}, (xq[:2],), strict=False)
    show(strict.shape, strict.grad_fn.name())
    show_outcome(show, lambda: torch.func.functional_call(model, {"conv.weight": model.conv.weight}, (xq[:2],),
                                                          strict=True))
    show_outcome(show, lambda: torch.func.functional_call(model, ({"head.bias": torch.zeros(3)},
                                                                  {"head.bias": torch.ones(3)}), (xq[:2],)))


def _hypergradient_unrolled_sgd(lib, show):
    """Hypergradients of a learning rate (and of a weight decay) through five unrolled SGD steps on a small MLP:
    the validation loss is differentiated through every step's create_graph gradient, checked against a central
    finite difference in float64, then the log-learning-rate is itself trained by Adam."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(181)
    x_train, y_train = torch.randn(16, 3, dtype=torch.float64), torch.randn(16, 1, dtype=torch.float64)
    x_val, y_val = torch.randn(8, 3, dtype=torch.float64), torch.randn(8, 1, dtype=torch.float64)
    init = [torch.randn(5, 3, dtype=torch.float64) * 0.5, torch.zeros(5, dtype=torch.float64),
            torch.randn(1, 5, dtype=torch.float64) * 0.5, torch.zeros(1, dtype=torch.float64)]

    def forward(ws, x):
        return F.linear(torch.tanh(F.linear(x, ws[0], ws[1])), ws[2], ws[3])

    def unrolled_val_loss(log_lr, decay, steps=5, create_graph=True):
        ws = [w.clone().requires_grad_() for w in init]
        lr = log_lr.exp()
        for _ in range(steps):
            loss = F.mse_loss(forward(ws, x_train), y_train) + decay * sum((w ** 2).sum() for w in ws)
            grads = torch.autograd.grad(loss, ws, create_graph=create_graph)
            ws = [w - lr * g for w, g in zip(ws, grads)]
        return F.mse_loss(forward(ws, x_val), y_val), ws

    log_lr = torch.tensor(math.log(0.3), dtype=torch.float64, requires_grad=True)
    decay = torch.tensor(1e-2, dtype=torch.float64, requires_grad=True)
    val, ws = unrolled_val_loss(log_lr, decay)
    show(val, _names(*ws), ws[0].requires_grad)
    d_lr, d_decay = torch.autograd.grad(val, (log_lr, decay))
    show(d_lr, d_decay)
    eps = 1e-6
    with torch.no_grad():
        plus = unrolled_val_loss(log_lr + eps, decay, create_graph=False)[0]
        minus = unrolled_val_loss(log_lr - eps, decay, create_graph=False)[0]
    show(round(((plus - minus) / (2 * eps)).item(), 5), round(d_lr.item(), 5))

    opt = torch.optim.Adam([log_lr], lr=0.1)
    for outer in range(3):
        val, _ = unrolled_val_loss(log_lr, decay.detach(), steps=3)
        opt.zero_grad()
        val.backward()
        show(outer, val, log_lr.grad, decay.grad)
        opt.step()
    show(log_lr, log_lr.exp())
    val, _ = unrolled_val_loss(log_lr, decay, steps=2, create_graph=False)
    show(val.requires_grad, _names(val))
    show_outcome(show, lambda: torch.autograd.grad(val, log_lr))


def _implicit_ridge_hyperparameter(lib, show):
    """Implicit differentiation of a ridge-regularised logistic regression's optimum with respect to its
    per-feature regularisation (the implicit function theorem): the inner problem solved by gradient descent, the
    linear system H v = dL_val/dw solved by conjugate gradients built from Hessian-vector products (grad of a
    create_graph gradient dotted with v), the hypergradient as a mixed second derivative, checked against
    linalg.solve on the full Hessian from autograd.functional."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(182)
    X, y = torch.randn(40, 5, dtype=torch.float64), (torch.rand(40, dtype=torch.float64) > 0.5).double()
    Xv, yv = torch.randn(20, 5, dtype=torch.float64), (torch.rand(20, dtype=torch.float64) > 0.5).double()
    log_alpha = torch.full((5,), -1.0, dtype=torch.float64, requires_grad=True)

    def train_loss(w, log_alpha):
        return F.binary_cross_entropy_with_logits(X @ w, y) + 0.5 * (log_alpha.exp() * w ** 2).sum()

    w = torch.zeros(5, dtype=torch.float64, requires_grad=True)
    for _ in range(200):
        g, = torch.autograd.grad(train_loss(w, log_alpha.detach()), w)
        with torch.no_grad():
            w -= 0.5 * g
    show(w, g.norm() < 1e-6)
    w = w.detach().requires_grad_()
    inner_grad, = torch.autograd.grad(train_loss(w, log_alpha), w, create_graph=True)
    show(inner_grad.grad_fn.name(), inner_grad.requires_grad)

    def hvp(v):
        return torch.autograd.grad(inner_grad, w, grad_outputs=v, retain_graph=True)[0]

    val_loss = F.binary_cross_entropy_with_logits(Xv @ w, yv)
    rhs, = torch.autograd.grad(val_loss, w)
    v, r = torch.zeros_like(rhs), rhs.clone()
    p, rs, iterations = r.clone(), r.dot(r), 0
    while iterations < 10 and rs.sqrt() > 1e-10:
        Ap = hvp(p)
        step = rs / p.dot(Ap)
        v, r = v + step * p, r - step * Ap
        rs_new = r.dot(r)
        p, rs, iterations = r + (rs_new / rs) * p, rs_new, iterations + 1
    show("cg iterations", iterations, v)
    hyper, = torch.autograd.grad(inner_grad, log_alpha, grad_outputs=-v, retain_graph=True)
    show("hypergradient", hyper)
    H = torch.autograd.functional.hessian(lambda w_: train_loss(w_, log_alpha.detach()), w.detach())
    exact = torch.linalg.solve(H, rhs)
    show(torch.allclose(exact, v, atol=1e-8), H.shape, torch.linalg.eigvalsh(H).min() > 0)
    mixed = torch.autograd.functional.jacobian(
        lambda la: torch.autograd.grad(train_loss(w, la), w, create_graph=True)[0], log_alpha.detach())
    show(torch.allclose(-(mixed.T @ exact), hyper), mixed.diagonal())
    show_outcome(show, lambda: torch.autograd.grad(inner_grad.sum(), log_alpha, retain_graph=True,
                                                   allow_unused=False))
    show_outcome(show, lambda: torch.autograd.grad(rhs.sum(), w))


def _wgan_gp_layernorm_critic(lib, show):
    """A WGAN-GP step with an MLP critic of LayerNorm and LeakyReLU (BatchNorm is not allowed with a per-sample
    penalty): the gradient at interpolates with create_graph=True, the names along the penalty's graph, an
    R1 penalty on real samples, the generator's step, and the penalty's gradients w.r.t. the LayerNorm affine
    parameters."""
    torch, nn = lib, lib.nn
    torch.manual_seed(183)
    critic = nn.Sequential(nn.Linear(6, 16), nn.LayerNorm(16), nn.LeakyReLU(0.2), nn.Linear(16, 16),
                           nn.LayerNorm(16, elementwise_affine=True, bias=False), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    gen = nn.Sequential(nn.Linear(3, 16), nn.SiLU(), nn.Linear(16, 6))
    c_opt = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
    g_opt = torch.optim.Adam(gen.parameters(), lr=1e-3, betas=(0.5, 0.9))
    for step in range(3):
        real = torch.randn(8, 6) * 0.5 + 1.0
        fake = gen(torch.randn(8, 3)).detach()
        alpha = torch.rand(8, 1)
        interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        scores = critic(interp)
        grad, = torch.autograd.grad(scores, interp, torch.ones_like(scores), create_graph=True)
        norms = grad.norm(2, dim=1)
        penalty = ((norms - 1) ** 2).mean()
        if step == 0:
            show(_names(grad, norms, penalty), grad.grad_fn.next_functions[0][0].name())
            pen_ln, = torch.autograd.grad(penalty, critic[1].weight, retain_graph=True)
            show("penalty wrt LayerNorm gamma", pen_ln)
        loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
        c_opt.zero_grad()
        loss.backward()
        c_opt.step()
        show(step, penalty, loss, critic[4].weight.grad[:4], critic[1].bias.grad[:4])
        g_loss = -critic(gen(torch.randn(8, 3))).mean()
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
        show(g_loss, gen[2].bias.grad)
    real = (torch.randn(8, 6) * 0.5 + 1.0).requires_grad_()
    r1_grad, = torch.autograd.grad(critic(real).sum(), real, create_graph=True)
    r1 = r1_grad.pow(2).sum(1).mean()
    r1.backward()
    show(r1, r1.grad_fn.name(), critic[6].weight.grad[0, :4], real.grad[0])
    show_outcome(show, lambda: torch.autograd.grad(critic(real).sum(), real, create_graph=True)[0].norm(dim=1)
                 .sub(1).pow(2).mean().backward(inputs=[]))


def _double_backward_activations(lib, show):
    """Second derivatives of the activations and losses people differentiate twice: GELU (both forms), SiLU,
    Mish, Softplus with beta and threshold, ELU, softmax and log_softmax, and cross entropy with label smoothing
    and class weights; with the names of the first gradient's node and of the second-order graph."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(184)
    x = torch.linspace(-3, 3, 9, requires_grad=True)
    acts = {
        "gelu": F.gelu, "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "silu": F.silu, "mish": F.mish,
        "softplus": lambda t: F.softplus(t, beta=2.0, threshold=4.0), "elu": lambda t: F.elu(t, alpha=0.7),
        "selu": F.selu, "celu": lambda t: F.celu(t, 1.3), "hardswish": F.hardswish, "tanh": torch.tanh,
        "sigmoid": torch.sigmoid, "logsigmoid": F.logsigmoid,
    }
    for name, f in acts.items():
        d1, = torch.autograd.grad(f(x).sum(), x, create_graph=True)
        d2, = torch.autograd.grad(d1.sum(), x, create_graph=True)
        show(name, d1.grad_fn.name(), d2, d2.grad_fn.name() if d2.grad_fn else None)
    logits = torch.randn(4, 5, requires_grad=True)
    for name, f in {"softmax": lambda t: F.softmax(t, -1), "log_softmax": lambda t: F.log_softmax(t, dim=1),
                    "softmin": lambda t: F.softmin(t, 1)}.items():
        v = torch.randn(4, 5)
        g1, = torch.autograd.grad(f(logits), logits, v, create_graph=True)
        g2, = torch.autograd.grad((g1 ** 2).sum(), logits)
        show(name, g1.grad_fn.name(), g1, g2)
    target = torch.tensor([0, 3, 1, 4])
    weight = torch.tensor([1.0, 2.0, 0.5, 1.0, 1.5])
    loss = F.cross_entropy(logits, target, weight=weight, label_smoothing=0.1)
    g1, = torch.autograd.grad(loss, logits, create_graph=True)
    show(loss, loss.grad_fn.name(), g1.grad_fn.name(), g1)
    gnorm = g1.pow(2).sum()
    g2, = torch.autograd.grad(gnorm, logits)
    show(g2)
    soft = F.softmax(torch.randn(4, 5), 1)
    loss = F.cross_entropy(logits, soft, label_smoothing=0.2)
    g1, = torch.autograd.grad(loss, logits, create_graph=True)
    show(loss, g1.grad_fn.name(), torch.autograd.grad(g1.sum() + (g1 ** 3).sum(), logits)[0])
    relu_grad, = torch.autograd.grad(F.relu(x).sum(), x, create_graph=True)
    show(relu_grad, relu_grad.requires_grad, _names(relu_grad))
    show_outcome(show, lambda: torch.autograd.grad(relu_grad.sum(), x))
    show_outcome(show, lambda: torch.autograd.grad(relu_grad.sum(), x, allow_unused=True, materialize_grads=True))


def _double_backward_layers(lib, show):
    """Gradient penalties through layers (a per-example input-gradient norm, as in WGAN-GP or double backprop):
    layer_norm and group_norm, conv_transpose2d with stride and output_padding, avg and max pooling (with
    ceil_mode), bilinear interpolation both ways of aligning corners, scaled_dot_product_attention (causal), and an
    embedding bag of tokens; each shows the first gradient's node, the penalty, and its gradients."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(185)
    img = torch.randn(2, 4, 5, 5, requires_grad=True)
    w_t = torch.randn(4, 3, 3, 3, requires_grad=True)
    gamma, beta = torch.randn(4, requires_grad=True), torch.randn(4, requires_grad=True)
    layers = {
        "layer_norm": lambda t: F.layer_norm(t, (5, 5), torch.ones(5, 5) * 1.5, None, eps=1e-3),
        "group_norm": lambda t: F.group_norm(t, 2, gamma, beta),
        "conv_transpose2d": lambda t: F.conv_transpose2d(t, w_t, stride=2, padding=1, output_padding=1),
        "avg_pool2d": lambda t: F.avg_pool2d(t, 3, stride=2, padding=1, count_include_pad=False),
        "max_pool2d": lambda t: F.max_pool2d(t, 2, ceil_mode=True),
        "bilinear": lambda t: F.interpolate(t, scale_factor=1.6, mode="bilinear", align_corners=False),
        "bilinear_aligned": lambda t: F.interpolate(t, size=(7, 3), mode="bilinear", align_corners=True),
        "adaptive_avg": lambda t: F.adaptive_avg_pool2d(t, (2, 3)),
    }
    for name, f in layers.items():
        out = f(img)
        weight = torch.linspace(-1, 1, out.numel()).reshape(out.shape)
        g, = torch.autograd.grad((out * weight).sum() + out.pow(2).sum(), img, create_graph=True)
        penalty = g.flatten(1).norm(dim=1).sub(1).pow(2).mean()
        params = [img] + ([gamma, beta] if name == "group_norm" else [w_t] if name == "conv_transpose2d" else [])
        grads = torch.autograd.grad(penalty, params)
        show(name, out.shape, g.grad_fn.name(), penalty, grads[0][0, 0, :2], *grads[1:])
    q = torch.randn(2, 3, 4, 8, requires_grad=True)
    k, v = torch.randn(2, 3, 4, 8, requires_grad=True), torch.randn(2, 3, 4, 8, requires_grad=True)
    att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    gq, = torch.autograd.grad(att.pow(2).sum(), q, create_graph=True)
    second = torch.autograd.grad(gq.pow(2).sum(), (q, k, v))
    show(att.grad_fn.name(), gq.grad_fn.name(), second[0][0, 0], second[1][1, 2], second[2][0, 1])
    emb = nn.Embedding(10, 4, padding_idx=0)
    tokens = torch.tensor([[1, 0, 3, 3], [2, 9, 0, 1]])
    out = emb(tokens)
    g, = torch.autograd.grad(out.pow(3).sum(), emb.weight, create_graph=True)
    gg, = torch.autograd.grad(g.pow(2).sum(), emb.weight)
    show(g.grad_fn.name(), g[:4], gg[:4])
    bag = F.embedding_bag(tokens, emb.weight, mode="mean")
    g, = torch.autograd.grad(bag.pow(2).sum(), emb.weight, create_graph=True)
    show(bag.grad_fn.name(), g.grad_fn.name(), g[:4])


def _double_backward_reductions(lib, show):
    """Second derivatives of reductions and elementwise ops with awkward derivatives: cumsum, cumprod (with a zero
    inside), prod with one and with two zeros, vector and matrix norms (at a zero vector too), logsumexp with -inf,
    where and masked_fill, pow with a tensor exponent (a zero base), atan2 and hypot, amax with ties; each shows the
    gradient's node, the Hessian-vector product and, where it is defined, its node."""
    torch = lib
    torch.manual_seed(186)
    x = torch.tensor([1.5, -0.5, 2.0, 0.75], dtype=torch.float64, requires_grad=True)
    v = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64)
    zero_in = torch.tensor([1.5, 0.0, 2.0, 0.75], dtype=torch.float64, requires_grad=True)
    two_zeros = torch.tensor([1.5, 0.0, 2.0, 0.0], dtype=torch.float64, requires_grad=True)
    cases = {
        "cumsum": (lambda t: (t.cumsum(0) ** 2).sum(), x),
        "cumprod": (lambda t: t.cumprod(0).sum(), x),
        "cumprod_zero": (lambda t: t.cumprod(0).sum(), zero_in),
        "prod": (lambda t: t.prod(), x),
        "prod_zero": (lambda t: t.prod(), zero_in),
        "prod_two_zeros": (lambda t: t.prod(), two_zeros),
        "prod_dim": (lambda t: t.reshape(2, 2).prod(1).sum(), zero_in),
        "norm": (lambda t: t.norm(), x),
        "norm_3": (lambda t: torch.linalg.vector_norm(t, 3), x),
        "matrix_norm": (lambda t: torch.linalg.matrix_norm(t.reshape(2, 2)), x),
        "logsumexp": (lambda t: torch.logsumexp(torch.stack([t, torch.full_like(t, float("-inf"))]), 0).sum(), x),
        "where": (lambda t: torch.where(t > 0, t ** 3, t.exp()).sum(), x),
        "masked_fill": (lambda t: (t ** 2).masked_fill(t < 1, 0.5).sum(), x),
        "pow_tensor_exp": (lambda t: torch.pow(t.abs() + 0.5, t).sum(), x),
        "pow_zero_base": (lambda t: torch.pow(torch.zeros(4, dtype=torch.float64), t.abs() + 1).sum()
                          + torch.pow(t, torch.tensor([2.0, 3.0, 0.0, 1.0], dtype=torch.float64)).sum(), x),
        "atan2": (lambda t: torch.atan2(t, t.flip(0) + 2).sum(), x),
        "hypot": (lambda t: torch.hypot(t, t.roll(1)).sum(), x),
        "amax_ties": (lambda t: torch.stack([t, t.abs()]).amax(0).pow(2).sum(), x),
    }
    for name, (f, inp) in cases.items():
        g, = torch.autograd.grad(f(inp), inp, create_graph=True)
        hv, = torch.autograd.grad(g, inp, v, allow_unused=True)
        show(name, g.grad_fn.name() if g.grad_fn else None, g, hv)
    cube, = torch.autograd.grad(zero_in.prod(), zero_in, create_graph=True)
    third = torch.autograd.grad(torch.autograd.grad(cube[1], zero_in, create_graph=True)[0][0], zero_in)[0]
    show(cube, third)
    zero_vec = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    g, = torch.autograd.grad(zero_vec.norm(), zero_vec, create_graph=True)
    show(g, g.grad_fn.name())
    show_outcome(show, lambda: torch.autograd.grad(g.sum(), zero_vec))


def _jacobian_frobenius_regulariser(lib, show):
    """Jacobian regularisation (Hoffman et al.) of a small tanh classifier: the Frobenius norm of d logits/d input
    estimated by random projections (autograd.grad with grad_outputs and create_graph=True), its exact value from
    autograd.functional.jacobian per example, and training with the estimate added to the loss."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(187)
    model = nn.Sequential(nn.Linear(4, 12), nn.Tanh(), nn.Linear(12, 12), nn.Softplus(), nn.Linear(12, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x_all, y_all = torch.randn(24, 4), torch.randint(0, 3, (24,))

    def jacobian_penalty(x, projections):
        x = x.requires_grad_(True)
        logits = model(x)
        total = 0
        for _ in range(projections):
            v = torch.randn_like(logits)
            v = v / v.norm(dim=1, keepdim=True)
            jv, = torch.autograd.grad(logits, x, v, create_graph=True)
            total = total + logits.shape[1] * jv.pow(2).sum() / (projections * x.shape[0])
        return logits, total

    x = x_all[:6].clone()
    _, estimate = jacobian_penalty(x, 64)
    jac = torch.stack([torch.autograd.functional.jacobian(model, row) for row in x_all[:6]])
    exact = jac.pow(2).sum() / 6
    show(jac.shape, exact, round(estimate.item(), 4), estimate.grad_fn.name())
    for step in range(4):
        xb, yb = x_all[step * 6:(step + 1) * 6].clone(), y_all[step * 6:(step + 1) * 6]
        logits, penalty = jacobian_penalty(xb, 2)
        loss = F.cross_entropy(logits, yb) + 0.01 * penalty
        opt.zero_grad()
        loss.backward()
        show(step, loss, penalty, model[0].weight.grad[0], xb.grad is not None)
        opt.step()
    with torch.no_grad():
        show(model(x_all[:2]))
    show_outcome(show, lambda: torch.autograd.grad(model(x_all[:2]), x_all[:2], torch.ones(2, 3)))
    show_outcome(show, lambda: torch.autograd.grad(model(x_all[:2].requires_grad_()),
                                                   model[0].weight, torch.ones(2, 4)))


def _influence_functions(lib, show):
    """Influence functions (Koh & Liang) for a small logistic-regression head on frozen features: the training
    loss's Hessian-vector products by double backward over flattened parameters, the inverse-HVP by LiSSA
    recursion and by an explicit damped Hessian, and the influence of up-weighting each training point on a
    test loss; the most helpful and harmful points, checked against retraining with one point removed."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(188)
    X, y = torch.randn(30, 4, dtype=torch.float64), torch.randint(0, 2, (30,)).double()
    head = nn.Linear(4, 1).double()
    params = list(head.parameters())
    opt = torch.optim.LBFGS(params, lr=0.5, max_iter=50, tolerance_grad=1e-12, tolerance_change=1e-14)
    damping = 1e-2

    def train_loss(weights=None):
        losses = F.binary_cross_entropy_with_logits(head(X).squeeze(1), y, reduction="none")
        reg = damping / 2 * sum((p ** 2).sum() for p in params)
        return (losses if weights is None else losses * weights).mean() + reg

    def closure():
        opt.zero_grad()
        loss = train_loss()
        loss.backward()
        return loss

    opt.step(closure)
    show("trained", train_loss(), head.weight, head.bias)
    grads = torch.autograd.grad(train_loss(), params, create_graph=True)
    flat_grad = torch.cat([g.reshape(-1) for g in grads])
    show(flat_grad.grad_fn.name(), flat_grad.norm() < 1e-6)

    def hvp(v):
        return torch.cat([h.reshape(-1) for h in torch.autograd.grad(flat_grad, params, v, retain_graph=True)])

    H = torch.stack([hvp(e) for e in torch.eye(5, dtype=torch.float64)])
    show(H, torch.allclose(H, H.T))
    x_test, y_test = torch.randn(1, 4, dtype=torch.float64), torch.ones(1, dtype=torch.float64)
    test_grad = torch.cat([g.reshape(-1) for g in torch.autograd.grad(
        F.binary_cross_entropy_with_logits(head(x_test).squeeze(1), y_test), params)])
    exact = torch.linalg.solve(H, test_grad)
    estimate = test_grad.clone()
    for _ in range(100):
        estimate = test_grad + estimate - hvp(estimate) / 1.0
    show(exact, estimate, torch.allclose(exact, estimate, atol=1e-6))
    per_example = []
    for i in range(len(X)):
        li = F.binary_cross_entropy_with_logits(head(X[i:i + 1]).squeeze(1), y[i:i + 1])
        gi = torch.cat([g.reshape(-1) for g in torch.autograd.grad(li, params)])
        per_example.append(-gi.dot(exact) / len(X))
    influence = torch.stack(per_example)
    order = influence.argsort()
    show(influence[:5], order[:3], order[-3:])
    weights = torch.ones(30, dtype=torch.float64, requires_grad=True)
    g_w = torch.autograd.grad(train_loss(weights), params, create_graph=True)
    mixed = torch.autograd.grad(torch.cat([g.reshape(-1) for g in g_w]).dot(exact.detach()), weights)[0]
    show(torch.allclose(-mixed, influence, atol=1e-10), mixed[:3])
    show_outcome(show, lambda: torch.autograd.grad(flat_grad, params, torch.ones(4, dtype=torch.float64)))


def _neural_ode_adjoint(lib, show):
    """A neural ODE integrated by fixed-step RK4, differentiated two ways: backpropagation through the solver,
    and the adjoint method written by hand (the augmented state integrated backwards, its dynamics vector-Jacobian
    products from autograd.grad with allow_unused and retain_graph), with the gradients compared; a custom
    autograd.Function wraps the adjoint for training."""
    torch, nn = lib, lib.nn
    torch.manual_seed(189)
    func = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 2)).double()
    params = tuple(func.parameters())

    def rk4(f, z, t0, t1, steps):
        h = (t1 - t0) / steps
        for _ in range(steps):
            k1 = f(z)
            k2 = f(z + h / 2 * k1)
            k3 = f(z + h / 2 * k2)
            k4 = f(z + h * k3)
            z = z + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return z

    z0 = torch.tensor([[1.0, 0.0], [0.0, -1.0], [0.5, 0.5]], dtype=torch.float64, requires_grad=True)
    target = torch.tensor([[0.0, 1.0], [1.0, 0.0], [-0.5, 0.5]], dtype=torch.float64)
    z1 = rk4(func, z0, 0.0, 1.0, 20)
    loss = ((z1 - target) ** 2).sum()
    direct = torch.autograd.grad(loss, (z0,) + params)
    show(loss, z1.grad_fn.name(), direct[0], direct[2][:3])

    def adjoint_dynamics(aug):
        z, a = aug[0], aug[1]
        with torch.enable_grad():
            z = z.detach().requires_grad_(True)
            fz = func(z)
            vjps = torch.autograd.grad(fz, (z,) + params, -a, allow_unused=True, retain_graph=True)
        return fz, vjps

    def adjoint_gradients(z_end, dl_dz, steps=20):
        z, a = z_end.detach(), dl_dz
        grads = [torch.zeros_like(p) for p in params]
        h = -1.0 / steps
        for _ in range(steps):  # (Euler on the augmented system, backwards in time)
            fz, vjps = adjoint_dynamics((z, a))
            z = (z + h * fz).detach()
            a = a + h * vjps[0]
            grads = [g + h * v for g, v in zip(grads, vjps[1:])]
        return a, grads

    dl_dz1 = 2 * (z1.detach() - target)
    a0, param_grads = adjoint_gradients(z1, dl_dz1, steps=200)
    show(a0, param_grads[1][:3])
    show((a0 - direct[0]).abs().max() < 5e-2, (param_grads[1] - direct[2]).abs().max() < 5e-2)

    class ODEBlock(torch.autograd.Function):
        @staticmethod
        def forward(ctx, z, *ps):
            with torch.no_grad():
                out = rk4(func, z, 0.0, 1.0, 20)
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, grad_out):
            out, = ctx.saved_tensors
            a, grads = adjoint_gradients(out, grad_out, steps=50)
            return (a, *grads)

    opt = torch.optim.Adam(params, lr=1e-2)
    for step in range(3):
        out = ODEBlock.apply(z0, *params)
        loss = ((out - target) ** 2).sum()
        opt.zero_grad()
        loss.backward()
        show(step, loss, out.grad_fn.name(), func[0].bias.grad[:3], z0.grad[0])
        z0.grad = None
        opt.step()
    show_outcome(show, lambda: torch.autograd.grad(func(z0).sum(), (z0, torch.zeros(2, requires_grad=True))))


def _retain_graph_patterns(lib, show):
    """Grad of grads and the errors people meet on the way: create_graph implies retain_graph, a second pass
    through a graph whose buffers were freed, a first gradient taken without create_graph and differentiated
    again, backward into .grad with create_graph (and its warning), grad_outputs of the wrong shape, a gradient
    that is a constant (does not require grad), gradients through an in-place modified input, and is_grads_batched
    for the rows of a Hessian."""
    torch = lib
    torch.manual_seed(190)
    x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = (x.sin() * x.exp()).sum()
    g, = torch.autograd.grad(y, x, create_graph=True)
    show(g, g.grad_fn.name(), g.requires_grad)
    h1, = torch.autograd.grad(g[0], x, retain_graph=True)
    h2, = torch.autograd.grad(g[1], x)
    show(h1, h2)
    show_outcome(show, lambda: torch.autograd.grad(g[2], x))
    y = (x ** 3).sum()
    plain, = torch.autograd.grad(y, x, retain_graph=True)
    show(plain.requires_grad, plain.grad_fn)
    show_outcome(show, lambda: torch.autograd.grad(plain.sum(), x))
    twice, = torch.autograd.grad(y, x, create_graph=True)
    show(twice.grad_fn.name(), torch.autograd.grad(twice.sum(), x, create_graph=True)[0])
    show_outcome(show, lambda: torch.autograd.grad(y, x))
    show_outcome(show, lambda: torch.autograd.grad((x * 2).sum(), x, create_graph=True)[0].sum().backward())
    lin, = torch.autograd.grad((x * 2).sum(), x, create_graph=True)
    show(lin, lin.requires_grad, lin.grad_fn)
    z = x.detach().clone().requires_grad_()
    (z ** 4).sum().backward(create_graph=True)
    show(z.grad, z.grad.grad_fn.name())
    z.grad.sum().backward()
    show(z.grad)
    w = torch.randn(3, 3, requires_grad=True)
    out = torch.tanh(w @ x)
    show_outcome(show, lambda: torch.autograd.grad(out, x, torch.ones(2), create_graph=True))
    show_outcome(show, lambda: torch.autograd.grad(out, x, create_graph=True))
    gx, = torch.autograd.grad(out, x, torch.ones(3), create_graph=True)
    rows = torch.autograd.grad(gx, x, torch.eye(3), is_grads_batched=True)[0]
    show(rows, rows.shape)
    v = x * 1
    q = (v ** 2).sum()
    gv, = torch.autograd.grad(q, v, create_graph=True)
    v.mul_(2)
    show_outcome(show, lambda: torch.autograd.grad(gv.sum(), x))
    show_outcome(show, lambda: torch.autograd.grad(q, [x, x]))
    many = torch.autograd.grad([(x ** 2).sum(), (x ** 3).sum()], x, create_graph=True)
    show(many[0], many[0].grad_fn.name())


PROGRAMS = [
    _maml_small_cnn,
    _hypergradient_unrolled_sgd,
    _implicit_ridge_hyperparameter,
    _wgan_gp_layernorm_critic,
    _double_backward_activations,
    _double_backward_layers,
    _double_backward_reductions,
    _jacobian_frobenius_regulariser,
    _influence_functions,
    _neural_ode_adjoint,
    _retain_graph_patterns,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
