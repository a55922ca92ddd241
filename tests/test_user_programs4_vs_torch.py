"""A fourth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: a transformer encoder block written by hand (causal and
padding masks, fully masked rows) trained with AdamW, both clipping utilities and a warmup-then-cosine
SequentialLR; top-k/top-p sampling with explicit generators and a hard Gumbel-softmax; anchor boxes, IoU and a
hand-written non-maximum suppression; metric-learning and likelihood losses; a user-written optimizer subclass
saved through ``torch.save`` to a BytesIO; a RealNVP-style normalizing flow with a Glow 1x1 convolution;
weight-initialisation schemes; NaN-aware statistics; integer arithmetic and promotion; a mixture density network;
class-weighted and label-smoothed losses; the errors of common mistakes; tensor rearrangements; einsum; the newer
autograd.Function forms; module containers; grad-mode contexts; data utilities; index/count bookkeeping; hooks
around gradient accumulation; weight tying and buffers; assert_close's messages; seeded samplers; a small vision
transformer; MultiheadAttention's rarer options; scheduler misuse; orthogonal parametrizations; creation corners;
and complex-valued layers. Everything is drawn from the seeded global generator (or seeded generators), which is
torch's.

Differences these programs found, now fixed (``tests/ops/test_program4_findings_vs_torch.py``):
- a complex ``nn.Linear`` on an input without grad got a wrong weight gradient (the input was not conjugated);
- ``clip_grad_value_`` clipped complex gradients where torch's clamp refuses them, and moved versions by one where
  torch's foreach path moves them by two; ``clip_grad_norm_``'s 0-norm of complex gradients was complex, and an
  infinity norm over an empty gradient was 0 where torch refuses it.

Left: ``conj()`` is a copy, not a lazy view (``is_conj()`` is False, ``view_as_real(z.conj())`` does not refuse);
``torch.func``/``vmap``, ``torch.compile`` and ``torch.segment_reduce`` do not exist.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _hand_written_encoder(lib, show):
    """A pre-norm transformer encoder block written by hand (multi-head attention over a causal mask combined
    with a key-padding mask, LayerNorm, GELU, dropout switched off by eval) trained with AdamW, gradient clipping
    and a LinearLR warmup followed by cosine annealing."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(50)

    class SelfAttention(nn.Module):
        def __init__(self, dim, heads, p=0.1):
            super().__init__()
            self.heads, self.dk = heads, dim // heads
            self.qkv = nn.Linear(dim, 3 * dim)
            self.out = nn.Linear(dim, dim)
            self.drop = nn.Dropout(p)

        def forward(self, x, mask):
            b, t, d = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q, k, v = (z.view(b, t, self.heads, self.dk).transpose(1, 2) for z in (q, k, v))
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.dk)
            scores = scores.masked_fill(~mask[:, None], float("-inf"))
            attn = self.drop(scores.softmax(dim=-1))
            return self.out((attn @ v).transpose(1, 2).reshape(b, t, d)), attn

    class Block(nn.Module):
        def __init__(self, dim=8, heads=2):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim, eps=1e-6)
            self.attn = SelfAttention(dim, heads)
            self.mlp = nn.Sequential(
                nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"), nn.Linear(4 * dim, dim), nn.Dropout(0.1)
            )

        def forward(self, x, mask):
            a, weights = self.attn(self.ln1(x), mask)
            x = x + a
            return x + self.mlp(self.ln2(x)), weights

    block = Block()
    head = nn.Linear(8, 5)
    x = torch.randn(3, 5, 8)
    lengths = torch.tensor([5, 3, 4])
    padding = torch.arange(5)[None, :] < lengths[:, None]
    causal = torch.tril(torch.ones(5, 5, dtype=torch.bool))
    mask = causal[None] & padding[:, None, :]
    targets = torch.randint(0, 5, (3, 5)).masked_fill(~padding, -100)
    params = list(block.parameters()) + list(head.parameters())
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
        lr=3e-3,
        betas=(0.9, 0.98),
        eps=1e-9,
        amsgrad=True,
    )
    warmup = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=2)
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3, eta_min=1e-4)
    sched = torch.optim.lr_scheduler.SequentialLR(opt, [warmup, cosine], milestones=[2])
    for step in range(5):
        block.train()
        h, _ = block(x, mask)
        loss = F.cross_entropy(head(h).flatten(0, 1), targets.flatten(), ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        total = nn.utils.clip_grad_norm_(params, max_norm=0.5)
        nn.utils.clip_grad_value_(head.parameters(), clip_value=0.05)
        opt.step()
        sched.step()
        show(step, loss, total, sched.get_last_lr(), head.bias.grad)
    block.eval()
    with torch.no_grad():
        h, weights = block(x, mask)
    show(weights[1, 0], h[2, -1], torch.isnan(weights).any())
    show(
        nn.utils.clip_grad_norm_(params, max_norm=1.0, norm_type="inf"),
        nn.utils.get_total_norm([p.grad for p in params], norm_type=1.0),
    )
    # A row whose keys are all masked out softmaxes to NaN, which users meet when a sequence is empty.
    empty = torch.zeros(1, 1, 5, dtype=torch.bool)
    show(block.attn(x[:1], empty)[1][0, 0, 0])
    opt.param_groups[0]["params"][0].grad = torch.full_like(decay[0], float("nan"))
    show_outcome(show, lambda: nn.utils.clip_grad_norm_(decay, 1.0, error_if_nonfinite=True))
    show(sched.state_dict()["_milestones"], opt.state_dict()["param_groups"][1]["weight_decay"])


def _sampling_strategies(lib, show):
    """Language-model sampling: temperature, top-k and nucleus (top-p) filtering with sort/cumsum/scatter, a
    repetition penalty with gather/scatter_, multinomial draws from seeded generators, and a hard Gumbel-softmax."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(51)
    logits = torch.randn(2, 10) * 2

    def top_k_top_p(logits, k=0, p=1.0):
        logits = logits.clone()
        if k > 0:
            kth = torch.topk(logits, k)[0][..., -1, None]
            logits[logits < kth] = float("-inf")
        if p < 1.0:
            sorted_logits, order = torch.sort(logits, descending=True)
            cumulative = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
            remove = cumulative > p
            remove[..., 1:] = remove[..., :-1].clone()
            remove[..., 0] = False
            logits = logits.scatter(1, order, sorted_logits.masked_fill(remove, float("-inf")))
        return logits

    show(top_k_top_p(logits, k=3), top_k_top_p(logits, p=0.8))
    gen = torch.Generator().manual_seed(7)
    probs = F.softmax(top_k_top_p(logits / 0.7, k=4, p=0.9), dim=-1)
    show(probs, torch.multinomial(probs, 5, replacement=True, generator=gen))
    show(torch.multinomial(probs, 3, generator=gen), gen.initial_seed())
    state = gen.get_state()
    a = torch.rand(3, generator=gen)
    gen.set_state(state)
    show(a, torch.rand(3, generator=gen), torch.equal(a, torch.rand(3, generator=gen)))
    previous = torch.tensor([[1, 3, 3], [0, 9, 2]])
    scores = logits.gather(1, previous)
    scores = torch.where(scores < 0, scores * 1.3, scores / 1.3)
    show(logits.scatter(1, previous, scores))
    torch.manual_seed(52)
    soft = F.gumbel_softmax(logits, tau=0.5)
    hard = F.gumbel_softmax(logits.requires_grad_(), tau=0.5, hard=True)
    (hard * torch.arange(10.0)).sum().backward()
    show(soft, hard, hard.sum(dim=-1), logits.grad)
    show(
        torch.bernoulli(torch.full((6,), 0.3), generator=torch.Generator().manual_seed(3)),
        torch.randperm(6, generator=torch.Generator().manual_seed(3)),
    )
    show_outcome(show, lambda: torch.multinomial(torch.tensor([0.0, 0.0]), 1))
    show_outcome(show, lambda: torch.multinomial(torch.tensor([0.5, 0.5]), 3))
    show_outcome(show, lambda: torch.multinomial(torch.tensor([-0.1, 1.0]), 1))


def _boxes_and_nms(lib, show):
    """Detection bookkeeping: anchors from meshgrid, pairwise IoU with broadcasting and clamp, a hand-written
    greedy non-maximum suppression, and anchor-to-target matching with max/argmax and boolean masks."""
    torch = lib
    torch.manual_seed(53)
    ys, xs = torch.meshgrid(torch.arange(3.0), torch.arange(4.0), indexing="ij")
    centres = torch.stack([xs, ys], dim=-1).reshape(-1, 2) * 8 + 4
    sizes = torch.tensor([[8.0, 8.0], [16.0, 8.0]])
    anchors = torch.cat([centres[:, None] - sizes / 2, centres[:, None] + sizes / 2], dim=-1).reshape(-1, 4)
    show(anchors.shape, anchors[:3], torch.meshgrid(torch.arange(2), torch.arange(3), indexing="xy")[0])

    def area(b):
        return (b[:, 2] - b[:, 0]).clamp(min=0) * (b[:, 3] - b[:, 1]).clamp(min=0)

    def iou(a, b):
        lt = torch.max(a[:, None, :2], b[None, :, :2])
        rb = torch.min(a[:, None, 2:], b[None, :, 2:])
        inter = (rb - lt).clamp(min=0).prod(dim=-1)
        return inter / (area(a)[:, None] + area(b)[None] - inter)

    def nms(boxes, scores, threshold):
        order = scores.argsort(descending=True)
        keep = []
        while order.numel() > 0:
            i = order[0]
            keep.append(i.item())
            if order.numel() == 1:
                break
            overlaps = iou(boxes[i].unsqueeze(0), boxes[order[1:]]).squeeze(0)
            order = order[1:][overlaps <= threshold]
        return torch.tensor(keep, dtype=torch.long)

    boxes = anchors + torch.randn(anchors.shape) * 2
    scores = torch.rand(len(boxes))
    keep = nms(boxes, scores, 0.3)
    show(keep, scores[keep], boxes[keep][:2])
    targets = torch.tensor([[2.0, 2.0, 12.0, 10.0], [14.0, 6.0, 30.0, 18.0]])
    overlaps = iou(anchors, targets)
    best, matched = overlaps.max(dim=1)
    labels = torch.where(best >= 0.5, matched, torch.full_like(matched, -1))
    labels[(best > 0.2) & (best < 0.5)] = -2
    labels[overlaps.argmax(dim=0)] = torch.arange(len(targets))
    show(best, labels, torch.nonzero(labels >= 0, as_tuple=True)[0], (labels == -2).sum())
    deltas = (targets[matched] - anchors) / torch.tensor([8.0, 8.0, 8.0, 8.0])
    show(deltas[labels >= 0], torch.unique(labels, sorted=True, return_counts=True))


def _metric_learning_losses(lib, show):
    """Triplet, ranking and embedding losses (with custom distance functions and every reduction), Gaussian and
    Poisson likelihoods, multi-label soft margin and KL divergence with log targets; their gradients."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(54)
    anchor, positive, negative = (torch.randn(4, 6, requires_grad=True) for _ in range(3))
    losses = [
        nn.TripletMarginLoss(margin=1.0, p=2)(anchor, positive, negative),
        nn.TripletMarginLoss(margin=0.5, p=1, swap=True, reduction="sum")(anchor, positive, negative),
        nn.TripletMarginWithDistanceLoss(distance_function=lambda a, b: 1 - F.cosine_similarity(a, b), margin=0.2)(
            anchor, positive, negative
        ),
        F.triplet_margin_with_distance_loss(anchor, positive, negative, reduction="none"),
    ]
    for loss in losses:
        show(loss)
    sum(loss.sum() for loss in losses).backward()
    show(anchor.grad, negative.grad[0])
    x1, x2 = torch.randn(5, requires_grad=True), torch.randn(5)
    y = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0])
    show(
        F.margin_ranking_loss(x1, x2, y, margin=0.1),
        nn.HingeEmbeddingLoss(margin=0.5)(x1, y),
        F.soft_margin_loss(x1, y, reduction="none"),
    )
    mean, var, target = torch.randn(4, 2, requires_grad=True), torch.rand(4, 1) + 0.1, torch.randn(4, 2)
    g = nn.GaussianNLLLoss(full=True)(mean, target, var)
    g.backward()
    show(g, mean.grad, F.gaussian_nll_loss(mean, target, var.expand(4, 2), reduction="sum"))
    rate = torch.randn(6, requires_grad=True)
    counts = torch.tensor([0.0, 1.0, 2.0, 5.0, 3.0, 0.0])
    show(nn.PoissonNLLLoss()(rate, counts), F.poisson_nll_loss(rate.exp(), counts, log_input=False, full=True))
    multi = torch.randn(3, 4, requires_grad=True)
    labels = torch.tensor([[1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 0.0]])
    show(
        nn.MultiLabelSoftMarginLoss(weight=torch.tensor([1.0, 2.0, 1.0, 0.5]))(multi, labels),
        F.multilabel_margin_loss(multi, torch.tensor([[0, 2, -1, 1], [3, -1, 0, 0], [1, 0, 2, -1]])),
        F.multi_margin_loss(multi, torch.tensor([2, 3, 0]), p=2, margin=0.5),
    )
    log_p, log_q = F.log_softmax(torch.randn(3, 4), -1), F.log_softmax(torch.randn(3, 4), -1)
    show(
        F.kl_div(log_p, log_q, reduction="batchmean", log_target=True),
        nn.KLDivLoss(reduction="sum")(log_p, log_q.exp()),
        F.cosine_embedding_loss(torch.randn(3, 4), torch.randn(3, 4), torch.tensor([1, -1, 1]), margin=0.1),
    )
    show_outcome(show, lambda: F.gaussian_nll_loss(mean, target, -var))
    show_outcome(show, lambda: nn.TripletMarginLoss()(anchor, positive, negative[:3]))
    show_outcome(show, lambda: F.kl_div(log_p, log_q))


def _custom_optimizer(lib, show):
    """A user-written optimizer (Lion-style sign updates with a per-parameter state), saved with the model through
    torch.save to a BytesIO and resumed; add_param_group and the errors of a wrongly built optimizer."""
    torch, nn = lib, lib.nn
    torch.manual_seed(55)

    class Lion(torch.optim.Optimizer):
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.99), weight_decay=0.0):
            if lr <= 0:
                raise ValueError(f"Invalid learning rate: {lr}")
            super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

        @torch.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with torch.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                        state["step"] = 0
                    exp_avg = state["exp_avg"]
                    state["step"] += 1
                    p.mul_(1 - group["lr"] * group["weight_decay"])
                    update = exp_avg.mul(beta1).add(p.grad, alpha=1 - beta1).sign_()
                    p.add_(update, alpha=-group["lr"])
                    exp_avg.mul_(beta2).add_(p.grad, alpha=1 - beta2)
            return loss

    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = Lion(model.parameters(), lr=0.01, weight_decay=0.01)
    x, y = torch.randn(8, 3), torch.randn(8, 1)

    def closure():
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    for step in range(3):
        show(step, opt.step(closure))
    show(opt, opt.defaults, opt.state[model[0].bias])
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3}, buffer)
    buffer.seek(0)
    checkpoint = torch.load(buffer, weights_only=True)
    restored = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    show(restored.load_state_dict(checkpoint["model"]), checkpoint["epoch"], sorted(checkpoint["opt"]))
    opt2 = Lion(restored.parameters(), lr=0.5)
    opt2.load_state_dict(checkpoint["opt"])
    show(opt2.param_groups[0]["lr"], opt2.state[restored[0].bias]["exp_avg"], opt2.step(closure))
    extra = nn.Parameter(torch.ones(2))
    opt.add_param_group({"params": extra, "lr": 0.1})
    show(len(opt.param_groups), opt.param_groups[1]["betas"], opt.param_groups[1]["lr"])
    show_outcome(show, lambda: opt.add_param_group({"params": [extra]}))
    show_outcome(show, lambda: Lion(model.parameters(), lr=-1.0))
    show_outcome(show, lambda: Lion(torch.ones(2, requires_grad=True)))
    show_outcome(show, lambda: Lion([]))
    show_outcome(show, lambda: torch.optim.SGD([{"params": model[0].weight}, {"params": model[0].weight}], lr=0.1))
    show_outcome(show, lambda: opt2.load_state_dict({"state": {}, "param_groups": []}))


def _normalizing_flow(lib, show):
    """A RealNVP-style flow: affine coupling layers with alternating masks, a Glow invertible 1x1 mixing matrix
    (QR-initialised, slogdet and inverse), the change-of-variables log-likelihood trained with Adam, and sampling
    through the inverse."""
    torch, nn = lib, lib.nn
    torch.manual_seed(56)

    class Coupling(nn.Module):
        def __init__(self, mask):
            super().__init__()
            self.register_buffer("mask", mask)
            self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8))

        def forward(self, x):
            s, t = self.net(x * self.mask).chunk(2, dim=-1)
            s = torch.tanh(s) * (1 - self.mask)
            t = t * (1 - self.mask)
            return x * torch.exp(s) + t, s.sum(dim=-1)

        def inverse(self, y):
            s, t = self.net(y * self.mask).chunk(2, dim=-1)
            s = torch.tanh(s) * (1 - self.mask)
            return (y - t * (1 - self.mask)) * torch.exp(-s)

    class Mix(nn.Module):
        def __init__(self, dim):
            super().__init__()
            q, _ = torch.linalg.qr(torch.randn(dim, dim))
            self.weight = nn.Parameter(q)

        def forward(self, x):
            return x @ self.weight.T, torch.linalg.slogdet(self.weight)[1].expand(x.shape[0])

        def inverse(self, y):
            return y @ torch.linalg.inv(self.weight).T

    mask = torch.tensor([1.0, 0.0, 1.0, 0.0])
    layers = nn.ModuleList([Coupling(mask), Mix(4), Coupling(1 - mask)])
    base = torch.distributions.Normal(torch.zeros(4), torch.ones(4))
    data = torch.randn(32, 4) @ torch.tensor([[1.0, 0.5, 0, 0], [0, 1, 0.3, 0], [0, 0, 1, 0], [0.2, 0, 0, 0.5]])
    opt = torch.optim.Adam(layers.parameters(), lr=1e-2)

    def log_likelihood(x):
        total = torch.zeros(x.shape[0])
        for layer in layers:
            x, log_det = layer(x)
            total = total + log_det
        return base.log_prob(x).sum(dim=-1) + total

    for step in range(4):
        loss = -log_likelihood(data).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, layers[1].weight.grad[0])
    with torch.no_grad():
        z = base.sample((3,))
        x = z
        for layer in reversed(layers):
            x = layer.inverse(x)
        y = x
        for layer in layers:
            y, _ = layer(y)
    show(x, (y - z).abs().max() < 1e-5, torch.linalg.slogdet(layers[1].weight), torch.det(layers[1].weight))
    show(list(layers.state_dict()), layers[0].mask.requires_grad)


def _weight_initialisation(lib, show):
    """Initialisation schemes users apply through Module.apply: Kaiming (fan modes, leaky ReLU gains), Xavier
    with calculate_gain, orthogonal, truncated normal, sparse, dirac and eye; and their errors."""
    torch, nn = lib, lib.nn
    torch.manual_seed(57)
    init = nn.init

    def initialise(module):
        if isinstance(module, nn.Conv2d):
            init.kaiming_normal_(module.weight, mode="fan_out", nonlinearity="relu")
            init.zeros_(module.bias)
        elif isinstance(module, nn.Linear):
            init.xavier_uniform_(module.weight, gain=init.calculate_gain("tanh"))
            init.constant_(module.bias, 0.01)
        elif isinstance(module, nn.BatchNorm2d):
            init.ones_(module.weight)
            init.zeros_(module.bias)

    model = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.Flatten(), nn.Linear(12, 2))
    show(model.apply(initialise) is model, model[0].weight[0, 0], model[3].weight, model[3].bias)
    w = torch.empty(3, 5)
    show(
        init.kaiming_uniform_(w, a=math.sqrt(5)),
        init.kaiming_normal_(torch.empty(4, 2), a=0.1, nonlinearity="leaky_relu"),
    )
    show(init.xavier_normal_(torch.empty(2, 3, 2)), init.orthogonal_(torch.empty(3, 5), gain=2.0))
    q = init.orthogonal_(torch.empty(4, 4))
    show((q @ q.T - torch.eye(4)).abs().max() < 1e-5, init.trunc_normal_(torch.empty(6), std=0.02, a=-0.03, b=0.03))
    show(init.sparse_(torch.empty(5, 3), sparsity=0.4), init.normal_(torch.empty(3), mean=1.0, std=0.1))
    show(init.dirac_(torch.empty(2, 2, 3)), init.eye_(torch.empty(2, 3)), init.uniform_(torch.empty(3), -2, 2))
    show(
        [init.calculate_gain(n) for n in ("linear", "sigmoid", "relu", "selu", "conv2d")],
        init.calculate_gain("leaky_relu", 0.2),
    )
    with torch.no_grad():
        w = nn.Parameter(torch.empty(2, 2))
        init.kaiming_uniform_(w)
    show(w, w.requires_grad, w.grad_fn)
    show_outcome(show, lambda: init.xavier_uniform_(torch.empty(5)))
    show_outcome(show, lambda: init.calculate_gain("swish"))
    show_outcome(show, lambda: init.orthogonal_(torch.empty(3)))
    show_outcome(show, lambda: init.kaiming_normal_(torch.empty(2, 2), mode="fan_avg"))
    show_outcome(show, lambda: init.sparse_(torch.empty(2, 2, 2), 0.1))


def _nan_aware_statistics(lib, show):
    """Statistics of data with missing values: nanmean/nansum/nanmedian/nanquantile, quantile interpolation
    modes, median and mode ties, std_mean/var_mean with corrections, aminmax, logsumexp of -inf, cov with
    frequency weights, corrcoef, and their gradients."""
    torch = lib
    torch.manual_seed(58)
    x = torch.randn(4, 6)
    x[0, 1] = x[2, 3] = x[2, 4] = float("nan")
    show(x.nanmean(dim=1), x.nansum(dim=0), x.nanmedian(dim=1), torch.nanquantile(x, 0.25, dim=1))
    show(x.nanmedian(), torch.nan_to_num(x, nan=0.0, posinf=1.0).sum(), x.isnan().sum(dim=1))
    v = torch.tensor([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
    show([torch.quantile(v, 0.3, interpolation=m) for m in ("linear", "lower", "higher", "midpoint", "nearest")])
    show(torch.quantile(v, torch.tensor([0.1, 0.5, 0.9])), v.median(), v.reshape(2, 4).median(dim=1))
    show(torch.tensor([2, 1, 2, 3, 1]).mode(), torch.tensor([[1, 1, 2], [3, 2, 2]]).mode(dim=1, keepdim=True))
    y = torch.randn(3, 5, requires_grad=True)
    std, mean = torch.std_mean(y, dim=1, correction=0)
    var, mean2 = torch.var_mean(y, dim=0, keepdim=True, unbiased=True)
    (std.sum() + var.sum() + mean.sum()).backward()
    show(std, mean, var, mean2, y.grad)
    show(torch.aminmax(y.detach(), dim=1), y.detach().aminmax())
    show(torch.logsumexp(torch.tensor([[float("-inf"), float("-inf")], [0.0, float("-inf")]]), dim=1))
    obs = torch.randn(3, 6)
    show(torch.cov(obs, correction=0, fweights=torch.tensor([1, 2, 1, 1, 3, 1])), torch.corrcoef(obs))
    z = torch.randn(6, requires_grad=True)
    z.nanmean().backward()
    w = torch.tensor([1.0, float("nan"), 2.0], requires_grad=True)
    w.nansum().backward()
    show(z.grad, w.grad, torch.median(torch.tensor([1.0, float("nan"), 0.0])))
    show_outcome(show, lambda: torch.quantile(v, 1.5))
    show_outcome(show, lambda: torch.quantile(v.long(), 0.5))
    show_outcome(show, lambda: torch.std_mean(torch.tensor([1.0]), correction=1))
    show_outcome(show, lambda: torch.tensor([]).median())


def _integer_arithmetic(lib, show):
    """Integer tensors as users meet them: floor/trunc division of negatives, remainder against fmod, int8 and
    uint8 wrap-around, bit operations and shifts, promotion with Python scalars and bools, and refusals."""
    torch = lib
    a = torch.tensor([7, -7, 7, -7])
    b = torch.tensor([2, 2, -2, -2])
    show(a // b, torch.div(a, b, rounding_mode="trunc"), a / b, torch.div(a, b, rounding_mode="floor"))
    show(a % b, torch.fmod(a, b), torch.remainder(a, 3), torch.remainder(-7.5, torch.tensor([2.0, -2.0])))
    i8 = torch.tensor([100, -100, 127], dtype=torch.int8)
    u8 = torch.tensor([250, 3, 128], dtype=torch.uint8)
    show(i8 + i8, i8 * 2, u8 + 10, u8 - 5, -u8, u8 + i8, (u8 + i8).dtype)
    show(a & 6, a | 1, a ^ b, ~a, a << 2, a >> 1, torch.bitwise_left_shift(u8, 1))
    show(torch.tensor([True, False]) + 1, torch.tensor([True, False]) * 2.5, (a > 0).sum(), (a > 0).float().mean())
    show(a * 1.5, a + True, torch.tensor([1, 2], dtype=torch.int16) * 100000, a.pow(2), a.abs().sqrt())
    show(torch.arange(10) // 3, torch.arange(-5, 5).clamp(-2, 2), a.to(torch.uint8), torch.tensor(300).byte())
    show(
        torch.tensor([5, 3]).true_divide(2),
        torch.floor_divide(torch.tensor([5.5, -5.5]), 2),
        torch.tensor([2**62]) * 4,
        torch.iinfo(torch.int32).max,
        torch.tensor(2**31 - 1, dtype=torch.int32) + 1,
    )
    show_outcome(show, lambda: torch.tensor([2, 3]) ** -1)
    show_outcome(show, lambda: a // 0)
    show_outcome(show, lambda: a.float() & 1)
    show_outcome(show, lambda: torch.tensor([1, 2]).mean())
    show_outcome(show, lambda: -torch.tensor([True, False]))
    show_outcome(show, lambda: torch.tensor([1, 2]).sqrt_())
    show_outcome(show, lambda: torch.tensor([1], dtype=torch.int8).add_(1.5))


def _mixture_density_network(lib, show):
    """A mixture density network: a shared trunk with three heads (mixture logits, means, log scales) building a
    MixtureSameFamily of Independent Normals, trained on its negative log-likelihood, then sampled."""
    torch, nn = lib, lib.nn
    D = torch.distributions
    torch.manual_seed(59)

    class MDN(nn.Module):
        def __init__(self, k=3, d=2):
            super().__init__()
            self.k, self.d = k, d
            self.trunk = nn.Sequential(nn.Linear(1, 16), nn.Tanh())
            self.pi, self.mu, self.log_sigma = nn.Linear(16, k), nn.Linear(16, k * d), nn.Linear(16, k * d)

        def forward(self, x):
            h = self.trunk(x)
            mix = D.Categorical(logits=self.pi(h))
            mu = self.mu(h).view(-1, self.k, self.d)
            sigma = self.log_sigma(h).view(-1, self.k, self.d).clamp(-5, 3).exp()
            return D.MixtureSameFamily(mix, D.Independent(D.Normal(mu, sigma), 1))

    model = MDN()
    x = torch.linspace(-1, 1, 20).unsqueeze(1)
    y = torch.cat([torch.sin(3 * x), torch.cos(3 * x)], dim=1) + 0.05 * torch.randn(20, 2)
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-2, alpha=0.9, centered=True)
    for step in range(4):
        dist = model(x)
        loss = -dist.log_prob(y).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, model.pi.bias.grad)
    dist = model(x[:4])
    show(dist.batch_shape, dist.event_shape, dist.mean, dist.variance, dist.mixture_distribution.probs)
    show(dist.sample(), dist.sample((2,)).shape, dist.log_prob(y[:4]))
    show(dist)
    show_outcome(show, lambda: dist.rsample())
    show_outcome(
        show,
        lambda: D.MixtureSameFamily(
            D.Categorical(logits=torch.zeros(4, 2)), D.Normal(torch.zeros(4, 3), torch.ones(4, 3))
        ),
    )


def _weighted_classification_losses(lib, show):
    """Classification losses with every option users reach for: class weights with ignore_index and label
    smoothing, probability targets, spatial (N, C, H, W) targets, BCE with pos_weight, and a focal loss by hand."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(60)
    logits = torch.randn(6, 4, requires_grad=True)
    target = torch.tensor([0, 3, 1, -100, 2, 3])
    weight = torch.tensor([1.0, 2.0, 0.5, 1.5])
    losses = [
        F.cross_entropy(logits, target, weight=weight),
        F.cross_entropy(logits, target, weight=weight, label_smoothing=0.1),
        F.cross_entropy(logits, target, label_smoothing=0.2, reduction="sum"),
        nn.CrossEntropyLoss(weight=weight, reduction="none", label_smoothing=0.05)(logits, target),
    ]
    for loss in losses:
        show(loss)
    soft = torch.softmax(torch.randn(6, 4), dim=1)
    losses.append(F.cross_entropy(logits, soft, label_smoothing=0.1, weight=weight))
    show(losses[-1])
    sum(loss.sum() for loss in losses).backward()
    show(logits.grad)
    seg = torch.randn(2, 3, 4, 4, requires_grad=True)
    seg_target = torch.randint(0, 3, (2, 4, 4))
    seg_target[0, 0] = 255
    loss = F.cross_entropy(seg, seg_target, ignore_index=255, weight=torch.tensor([0.2, 1.0, 3.0]))
    loss.backward()
    show(
        loss,
        seg.grad[0, :, 0, 0],
        seg.grad[1, :, 1, 1],
        F.nll_loss(F.log_softmax(seg, 1), seg_target, ignore_index=255, reduction="sum"),
    )
    bce_logits = torch.randn(5, 3, requires_grad=True)
    bce_target = torch.randint(0, 2, (5, 3)).float()
    bce = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0, 3.0, 0.5]))(bce_logits, bce_target)
    p = torch.sigmoid(bce_logits)
    pt = torch.where(bce_target == 1, p, 1 - p)
    focal = (-((1 - pt) ** 2) * torch.log(pt.clamp_min(1e-8))).mean()
    (bce + focal).backward()
    show(bce, focal, bce_logits.grad, F.binary_cross_entropy(p, bce_target, weight=torch.tensor([1.0, 2.0, 1.0])))
    show_outcome(show, lambda: F.cross_entropy(logits, target.float()))
    show_outcome(show, lambda: F.cross_entropy(logits, torch.tensor([0, 4, 1, 1, 2, 3])))
    show_outcome(show, lambda: F.cross_entropy(logits, soft[:, :3]))
    show_outcome(show, lambda: F.cross_entropy(logits, target, label_smoothing=1.5))
    show_outcome(show, lambda: F.binary_cross_entropy(bce_logits, bce_target))
    show_outcome(show, lambda: F.nll_loss(logits, target, weight=torch.ones(3)))


def _common_mistakes(lib, show):
    """The errors and warnings of mistakes users make: in-place changes to saved tensors, backward twice, views
    of non-contiguous tensors, numpy() of a tensor needing grad, item() of many elements, mismatched matrix
    shapes, .grad of a non-leaf, a leaf changed in place, and a wrong device string."""
    torch, nn = lib, lib.nn
    torch.manual_seed(61)
    w = torch.randn(3, requires_grad=True)

    def modified_saved():
        y = w.sigmoid()
        y.mul_(2)
        y.sum().backward()

    def twice():
        y = (w * w).sum()
        y.backward()
        y.backward()

    show_outcome(show, modified_saved)
    show_outcome(show, twice)
    show_outcome(show, lambda: torch.randn(3, 4).t().view(12))
    show_outcome(show, lambda: w.numpy())
    show_outcome(show, lambda: w.item())
    show_outcome(show, lambda: nn.Linear(4, 2)(torch.randn(3, 5)))
    show_outcome(show, lambda: w.add_(1))
    show_outcome(show, lambda: torch.randn(2, 3) @ torch.randn(2, 3))
    show_outcome(show, lambda: torch.cat([torch.zeros(2, 3), torch.zeros(3, 2)]))
    show_outcome(show, lambda: torch.stack([torch.zeros(2), torch.zeros(3)]))
    show_outcome(show, lambda: torch.zeros(2, 3).expand(4, 3))
    show_outcome(show, lambda: torch.zeros(6).view(4, -1))
    show_outcome(show, lambda: torch.zeros(3, 2).to("gpu"))
    show_outcome(show, lambda: torch.zeros(2).backward())
    show_outcome(show, lambda: torch.autograd.grad(w.sum(), torch.ones(3, requires_grad=True)))
    show_outcome(show, lambda: nn.Conv2d(3, 4, 3)(torch.randn(1, 2, 5, 5)))
    show_outcome(show, lambda: nn.BatchNorm1d(3)(torch.randn(1, 3)))
    show_outcome(show, lambda: nn.Embedding(5, 2)(torch.tensor([1.0, 2.0])))
    show_outcome(show, lambda: nn.Embedding(5, 2)(torch.tensor([5])))
    show_outcome(show, lambda: nn.LSTM(3, 4)(torch.randn(2, 3)))
    y = w * 2
    show(y.grad, y.is_leaf, w.is_leaf, (w.detach() * 2).requires_grad)
    y.retain_grad()
    y.sum().backward()
    show(y.grad, w.grad)
    z = w.detach()
    z.zero_()
    show(w, w._version, z._version)


def _tensor_shuffling(lib, show):
    """Tensor rearrangements of data-augmentation and bookkeeping code: roll, flip, rot90, tensordot, kron,
    block_diag, cartesian_prod, combinations, tril/triu indices, diag_embed, unfold, as_strided, index_put with
    accumulate, put_, masked_scatter and repeat_interleave; their gradients and refusals."""
    torch = lib
    torch.manual_seed(70)
    x = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()
    show(
        torch.roll(x, shifts=(1, -1), dims=(0, 2)),
        x.flip(-1)[0],
        torch.rot90(x, 1, (1, 2))[0],
        torch.rot90(x, -3, (1, 2)).shape,
    )
    show(
        torch.tensordot(x, torch.ones(4, 2), dims=([2], [0]))[1],
        torch.kron(torch.eye(2), torch.tensor([[1.0, 2], [3, 4]])),
    )
    show(
        torch.block_diag(torch.ones(1, 2), torch.tensor([[3.0]]), torch.zeros(2, 1)),
        torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4, 5])),
    )
    show(
        torch.combinations(torch.tensor([1, 2, 3, 4]), r=2),
        torch.combinations(torch.tensor([1, 2, 3]), with_replacement=True),
        torch.tril_indices(3, 4, offset=1),
        torch.triu_indices(4, 3, -1),
    )
    show(
        torch.diag_embed(torch.tensor([[1.0, 2], [3, 4]]), offset=1),
        x.diagonal(offset=1, dim1=1, dim2=2),
        x.movedim(0, -1).shape,
        x.unflatten(2, (2, 2)).shape,
    )
    show(
        x.unfold(2, 2, 1)[0, 0],
        torch.as_strided(torch.arange(6.0), (3, 2), (1, 2)),
        x.detach().take_along_dim(torch.tensor([[[0], [3], [1]]]), dim=2),
    )
    y = x * 1
    idx = (torch.tensor([0, 0, 1]), torch.tensor([1, 1, 2]), torch.tensor([3, 3, 0]))
    y2 = y.index_put(idx, torch.tensor([10.0, 20.0, 30.0]), accumulate=True)
    z = torch.zeros(5).index_put_((torch.tensor([1, 1, 3]),), torch.tensor([1.0, 2.0, 3.0]), accumulate=True)
    show(
        y2[0, 1],
        y2[1, 2],
        z,
        torch.zeros(3, 3).put_(torch.tensor([0, 4, 8, 4]), torch.tensor([1.0, 2, 3, 4]), accumulate=True),
    )
    m = x.detach() > 10
    show(
        torch.zeros(2, 3, 4).masked_scatter(m, torch.arange(100.0)),
        x.masked_select(m).shape,
        torch.repeat_interleave(torch.tensor([1, 2, 3]), torch.tensor([2, 0, 3])),
    )
    show(
        torch.repeat_interleave(torch.tensor([[1, 2], [3, 4]]), 2, dim=0),
        torch.repeat_interleave(torch.tensor([2, 1])),
        torch.tensor([1, 2]).repeat_interleave(3, output_size=6),
    )
    (
        y2.sum()
        + (x.gather(2, torch.tensor([[[0, 0]] * 3] * 2)) ** 2).sum()
        + x.index_select(1, torch.tensor([2, 2])).sum()
    ).backward()
    show(x.grad)
    s = torch.zeros(4, requires_grad=True)
    out = s.scatter_add(0, torch.tensor([1, 1, 2]), torch.tensor([1.0, 2.0, 3.0]))
    (out * torch.arange(4.0)).sum().backward()
    show(out, s.grad)
    show_outcome(show, lambda: torch.roll(x, 1, dims=(0, 1)))
    show_outcome(show, lambda: torch.rot90(x, 1, (0, 0)))
    show_outcome(show, lambda: torch.tensordot(x, torch.ones(3, 2), dims=([2], [0])))
    show_outcome(show, lambda: torch.repeat_interleave(torch.tensor([1, 2]), torch.tensor([1, 2, 3])))
    show_outcome(show, lambda: torch.zeros(3).index_put_((torch.tensor([5]),), torch.tensor(1.0)))
    show_outcome(show, lambda: x.unfold(2, 5, 1))


def _einsum_heavy(lib, show):
    """einsum as users write it: batched products, traces and diagonals, ellipses, spaces, the sublist form, a
    bilinear form against F.bilinear, attention scores; gradients and the errors of mismatched subscripts."""
    torch = lib
    torch.manual_seed(71)
    a, b = torch.randn(2, 3, 4, requires_grad=True), torch.randn(2, 4, 5, requires_grad=True)
    M = torch.randn(4, 4)
    show(
        torch.einsum("bij,bjk->bik", a, b),
        torch.einsum("ii->i", M),
        torch.einsum("ii", M),
        torch.einsum("ij->ji", M)[0],
    )
    show(
        torch.einsum("...ij,...jk", a, b).shape,
        torch.einsum("b i j, b j k -> b k", a, b),
        torch.einsum(a, [0, 1, 2], b, [0, 2, 3], [0, 3])[1],
    )
    show(
        torch.einsum("i,j->ij", torch.arange(3.0), torch.arange(2.0)),
        torch.einsum("bij,bij->b", a, a),
        torch.einsum("i,i", torch.ones(3), torch.arange(3.0)),
    )
    w = torch.randn(5, 4, 5, requires_grad=True)
    bil = torch.einsum("bi,oij,bj->bo", a[:, 0], w, b[:, 0])
    show(bil, torch.nn.functional.bilinear(a[:, 0], b[:, 0], w) - bil)
    (bil.pow(2).sum() + torch.einsum("bij,bjk->", a, b)).backward()
    show(a.grad[0], b.grad[1, 0], w.grad[0, 0])
    q = torch.randn(2, 2, 3, 4)
    k = torch.randn(2, 2, 5, 4)
    show(torch.einsum("bhqd,bhkd->bhqk", q, k)[1, 1], torch.einsum("...d,...d->...", q, q)[0])
    show(
        torch.einsum("ab,ab->", torch.ones(2, 2), torch.full((2, 2), 2.0)),
        torch.einsum("ijk->kji", torch.arange(8.0).reshape(2, 2, 2)),
    )
    show_outcome(show, lambda: torch.einsum("ij,jk->ik", torch.ones(2, 3), torch.ones(4, 2)))
    show_outcome(show, lambda: torch.einsum("ij->ik", torch.ones(2, 3)))
    show_outcome(show, lambda: torch.einsum("ijk", torch.ones(2, 3)))
    show_outcome(show, lambda: torch.einsum("i,i->", torch.ones(2)))
    show_outcome(show, lambda: torch.einsum("i,i->", torch.ones(2), torch.ones(2, dtype=torch.float64)))


def _custom_function_new_style(lib, show):
    """autograd.Function in its newer forms: a separate setup_context, mark_non_differentiable,
    once_differentiable, set_materialize_grads(False), gradcheck, and the errors of wrong backward returns."""
    torch = lib
    torch.manual_seed(72)

    class Clamp(torch.autograd.Function):
        @staticmethod
        def forward(x, lo, hi):
            return x.clamp(lo, hi)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, lo, hi = inputs
            ctx.save_for_backward(x)
            ctx.lo, ctx.hi = lo, hi

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * ((x > ctx.lo) & (x < ctx.hi)), None, None

    class SortWithIndex(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            values, idx = x.sort()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            return values, idx

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, gv, gi):
            (idx,) = ctx.saved_tensors
            return torch.zeros_like(gv).scatter(0, idx, gv)

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.set_materialize_grads(False)
            ctx.factor = factor
            return x * factor, x + 0

        @staticmethod
        def backward(ctx, g1, g2):
            show("grads none", g1 is None, g2 is None)
            out = torch.zeros(3) if g1 is None else g1 * ctx.factor
            return out, None

    x = torch.randn(5, requires_grad=True)
    y = Clamp.apply(x, -0.5, 0.5)
    v, i = SortWithIndex.apply(x)
    (y.sum() + (v * torch.arange(5.0)).sum()).backward()
    show(y, v, i, i.requires_grad, x.grad, y.grad_fn.name(), v.grad_fn.name())
    a = torch.randn(3, requires_grad=True)
    p, q = Scale.apply(a, 3.0)
    q.sum().backward()
    show(a.grad)
    g = torch.randn(3, dtype=torch.float64, requires_grad=True)
    show(torch.autograd.gradcheck(lambda t: Clamp.apply(t, -10.0, 10.0).pow(2), (g,)))
    x2 = torch.randn(4, requires_grad=True)
    v2, _ = SortWithIndex.apply(x2)
    gg = torch.autograd.grad(v2.sum(), x2, create_graph=True)[0]
    show_outcome(show, lambda: gg.sum().backward())

    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    show_outcome(show, lambda: Bad.apply(torch.ones(2, requires_grad=True)).sum().backward())

    class WrongShape(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g[:1]

    show_outcome(show, lambda: WrongShape.apply(torch.ones(2, requires_grad=True)).sum().backward())
    show_outcome(show, lambda: Clamp(torch.ones(2)))


def _module_containers(lib, show):
    """A mixture-of-experts built from ModuleList, ParameterList, ParameterDict and ModuleDict with top-k
    routing; printing, editing the containers (append, insert, extend, del, pop), get_submodule and their errors."""
    torch, nn = lib, lib.nn
    torch.manual_seed(73)

    class Experts(nn.Module):
        def __init__(self):
            super().__init__()
            self.experts = nn.ModuleList([nn.Linear(3, 3) for _ in range(3)])
            self.gate = nn.Linear(3, 3, bias=False)
            self.scales = nn.ParameterList([nn.Parameter(torch.ones(1) * i) for i in range(3)])
            self.extra = nn.ParameterDict(
                {"temp": nn.Parameter(torch.tensor(2.0)), "shift": nn.Parameter(torch.zeros(3))}
            )
            self.heads = nn.ModuleDict({"a": nn.Linear(3, 1), "b": nn.Sequential(nn.ReLU(), nn.Linear(3, 2))})

        def forward(self, x):
            w = (self.gate(x) / self.extra["temp"]).softmax(-1)
            top, idx = w.topk(2, dim=-1)
            out = torch.zeros_like(x)
            for j, expert in enumerate(self.experts):
                sel = (idx == j).any(-1)
                if sel.any():
                    weight = (top * (idx == j)).sum(-1, keepdim=True)[sel]
                    out[sel] += weight * expert(x[sel]) * self.scales[j]
            return {k: h(out + self.extra.shift) for k, h in self.heads.items()}

    m = Experts()
    x = torch.randn(6, 3)
    out = m(x)
    (out["a"].sum() + out["b"].pow(2).sum()).backward()
    show(out["a"], out["b"], m.gate.weight.grad, m.scales[2].grad, m.extra.temp.grad)
    show(m)
    show([n for n, _ in m.named_parameters()], len(list(m.modules())), list(m.heads.keys()), m.extra.keys())
    m.experts.append(nn.Linear(3, 3))
    m.experts.insert(0, nn.Identity())
    m.experts.extend([nn.Tanh()])
    show(len(m.experts), m.experts[-1], m.experts[1:3], m.experts[-2].weight.shape)
    del m.experts[0]
    seq = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    seq.append(nn.Linear(2, 1))
    seq.insert(1, nn.Dropout(0.0))
    show(seq, seq[-1].out_features, seq[::2], len(seq), seq.pop(1))
    pl = nn.ParameterList([torch.zeros(2), nn.Parameter(torch.ones(1))])
    show(pl, pl[0].requires_grad, type(pl[0]).__name__)
    pd = nn.ParameterDict({"b": torch.ones(2)})
    pd.update({"a": nn.Parameter(torch.zeros(1))})
    show(pd, list(pd), "a" in pd, pd.pop("b"))
    show(m.get_submodule("heads.b.1"), m.get_parameter("extra.temp"), m.heads.b[1].weight.shape)
    show_outcome(show, lambda: m.get_submodule("heads.c"))
    show_outcome(show, lambda: nn.ModuleList([nn.Linear(1, 1), 3]))
    show_outcome(show, lambda: m.experts[10])
    show_outcome(show, lambda: nn.ModuleDict({"a.b": nn.ReLU()}))
    show_outcome(show, lambda: m.add_module("", nn.ReLU()))
    show_outcome(show, lambda: setattr(m, "gate", torch.ones(2)))
    show_outcome(show, lambda: pl.append(3))


def _inference_mode_and_grad_context(lib, show):
    """Grad-mode contexts: inference_mode tensors and their errors, no_grad as a decorator (also on a
    generator), enable_grad inside no_grad, set_grad_enabled as a call and a context, saved-tensor hooks."""
    torch, nn = lib, lib.nn
    torch.manual_seed(74)
    model = nn.Linear(3, 2)
    x = torch.randn(4, 3)
    with torch.inference_mode():
        y = model(x)
    show(y, y.requires_grad, y.is_inference(), x.is_inference(), torch.is_inference_mode_enabled())
    show_outcome(show, lambda: (y * torch.ones(2, requires_grad=True)).sum().backward())
    show_outcome(show, lambda: y.add_(1))
    z = y.clone()
    show(z.is_inference())

    @torch.no_grad()
    def predict(inp):
        return model(inp).argmax(-1)

    @torch.inference_mode(mode=False)
    def grad_fn(inp):
        return model(inp).sum()

    show(predict(x), torch.is_grad_enabled())
    with torch.no_grad():
        out = grad_fn(x)
        show(out.requires_grad)
        with torch.enable_grad():
            show(model(x).requires_grad)
    torch.set_grad_enabled(False)
    show(model(x).requires_grad)
    torch.set_grad_enabled(True)
    with torch.set_grad_enabled(False):
        show(model(x).requires_grad)
    show(torch.is_grad_enabled())

    def gen():
        for i in range(2):
            yield torch.is_grad_enabled(), (model(x) * i).requires_grad

    show(list(torch.no_grad()(gen)()))
    with torch.autograd.graph.saved_tensors_hooks(
        lambda t: (show("pack", t.shape), t)[1], lambda t: (show("unpack", t.shape), t)[1]
    ):
        w = torch.randn(2, requires_grad=True)
        r = (w * w).exp().sum()
    r.backward()
    show(w.grad)
    with torch.inference_mode():
        p = nn.Parameter(torch.ones(2))
    show(p.requires_grad, p.is_inference())


def _data_utilities(lib, show):
    """Data utilities: a map-style dataset of dicts through a seeded shuffling DataLoader, random_split by
    fractions, weighted/subset/batch samplers, ConcatDataset, default_collate, a padding collate_fn, an
    IterableDataset, and their errors."""
    torch = lib
    data = lib.utils.data
    torch.manual_seed(75)

    class Pairs(data.Dataset):
        def __init__(self):
            self.x = np.arange(20, dtype=np.float32).reshape(10, 2)

        def __len__(self):
            return 10

        def __getitem__(self, i):
            return {"x": self.x[i], "y": int(i % 3), "name": f"s{i}", "w": float(i) / 10}

    ds = Pairs()
    loader = data.DataLoader(ds, batch_size=4, shuffle=True, generator=torch.Generator().manual_seed(1), drop_last=True)
    for batch in loader:
        show(batch["x"], batch["y"], batch["name"], batch["w"])
    train, val = data.random_split(ds, [0.7, 0.3], generator=torch.Generator().manual_seed(2))
    show(len(train), len(val), list(train.indices), val[0]["name"])
    weights = torch.tensor([0.1, 0.9, 0.5, 0.5, 0.0, 1.0, 1.0, 0.2, 0.3, 0.3])
    sampler = data.WeightedRandomSampler(
        weights, num_samples=8, replacement=True, generator=torch.Generator().manual_seed(3)
    )
    show(list(sampler), list(data.SubsetRandomSampler([1, 4, 6], generator=torch.Generator().manual_seed(4))))
    show(list(data.BatchSampler(data.SequentialSampler(range(7)), 3, drop_last=False)))
    show(list(data.BatchSampler(data.RandomSampler(range(7), generator=torch.Generator().manual_seed(5)), 3, True)))
    cat = data.ConcatDataset([data.TensorDataset(torch.arange(3)), data.TensorDataset(torch.arange(10, 12))])
    show(len(cat), cat[4], cat.cumulative_sizes, data.default_collate([(1, 2.0), (3, 4.0)]))
    show(data.default_collate([np.array([1, 2]), np.array([3, 4])]), data.default_collate([[1, 2], [3, 4]]))

    def pad_collate(batch):
        seqs = [torch.tensor(b) for b in batch]
        return torch.nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=-1), torch.tensor(
            [len(s) for s in seqs]
        )

    lo = data.DataLoader([[1, 2, 3], [4], [5, 6]], batch_size=3, collate_fn=pad_collate)
    show(next(iter(lo)), len(lo))

    class Stream(data.IterableDataset):
        def __iter__(self):
            return iter(range(5))

    show(list(data.DataLoader(Stream(), batch_size=2)), data.get_worker_info())
    show_outcome(show, lambda: data.random_split(ds, [0.5, 0.6]))
    show_outcome(show, lambda: data.DataLoader(Stream(), shuffle=True))
    show_outcome(show, lambda: data.default_collate([{"a": 1}, {"b": 2}]))
    show_outcome(show, lambda: len(data.DataLoader(Stream())))
    show_outcome(show, lambda: data.WeightedRandomSampler(weights, 20, replacement=False))


def _bookkeeping(lib, show):
    """Index and count bookkeeping: one_hot, bincount with weights, unique with inverse and counts (also by rows),
    unique_consecutive, histc/histogram, bucketize/searchsorted (right, sorter), NaN-aware sorting and topk,
    per-group scatter_reduce statistics and a confusion matrix; and their refusals."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(80)
    labels = torch.tensor([3, 1, 3, 0, 1, 3, 2, 2])
    show(
        F.one_hot(labels),
        F.one_hot(labels, num_classes=6).sum(0),
        torch.bincount(labels),
        torch.bincount(labels, weights=torch.linspace(0, 1, 8), minlength=6),
    )
    vals, inv, counts = torch.unique(labels, return_inverse=True, return_counts=True)
    show(vals, inv, counts, torch.unique(labels, sorted=False).sort()[0])
    rows = torch.tensor([[1, 2], [0, 1], [1, 2], [0, 0]])
    show(
        torch.unique(rows, dim=0, return_inverse=True, return_counts=True),
        torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1, 1]), return_counts=True, return_inverse=True),
    )
    x = torch.tensor([0.1, 2.5, -1.0, 3.0, 3.0, 7.5, 0.0])
    show(
        torch.histc(x, bins=4, min=0, max=4),
        torch.histc(x, bins=3),
        torch.histogram(x, bins=3, range=(0.0, 6.0), weight=torch.ones(7) * 2, density=False),
    )
    show(torch.histogram(x, bins=torch.tensor([-1.0, 0.0, 1.0, 5.0]), density=True))
    edges = torch.tensor([0.0, 1.0, 2.5, 3.0])
    show(
        torch.bucketize(x, edges),
        torch.bucketize(x, edges, right=True),
        torch.searchsorted(edges, x),
        torch.searchsorted(edges, x, side="right"),
    )
    unsorted = torch.tensor([3.0, 0.0, 2.5, 1.0])
    show(
        torch.searchsorted(unsorted, torch.tensor([0.5, 2.7]), sorter=unsorted.argsort()),
        torch.searchsorted(torch.tensor([[0, 2, 4], [1, 3, 5]]), torch.tensor([[3], [3]]), out_int32=True),
    )
    n = torch.tensor([1.0, float("nan"), 0.5, 1.0, -2.0, float("nan")])
    show(
        n.sort(),
        n.sort(descending=True, stable=True),
        n.argsort(stable=True),
        n.topk(2),
        n.msort(),
        n.max(),
        n.argmax(),
        torch.nanmedian(n),
    )
    show(
        torch.tensor([2, 1, 2, 1, 2]).sort(stable=True),
        torch.tensor([2, 1, 2, 1, 2]).argsort(descending=True, stable=True),
    )
    scores = torch.randn(10)
    group = torch.tensor([0, 1, 0, 2, 1, 1, 0, 2, 2, 0])
    maxes = torch.zeros(3).scatter_reduce(0, group, scores, reduce="amax", include_self=False)
    sums = torch.zeros(3).index_add(0, group, scores)
    means = torch.zeros(3).scatter_reduce(0, group, scores, reduce="mean", include_self=False)
    show(maxes, sums, means, torch.zeros(3).scatter_reduce(0, group, scores, reduce="prod"))
    cm = torch.zeros(3, 3, dtype=torch.long)
    pred = torch.tensor([0, 2, 1, 1, 0, 2])
    true = torch.tensor([0, 1, 1, 2, 0, 2])
    cm.index_put_((true, pred), torch.ones(6, dtype=torch.long), accumulate=True)
    show(cm, torch.bincount(true * 3 + pred, minlength=9).reshape(3, 3), cm.diag() / cm.sum(1).clamp(min=1))
    show_outcome(show, lambda: torch.bincount(torch.tensor([-1, 2])))
    show_outcome(show, lambda: torch.bincount(torch.tensor([[1, 2]])))
    show_outcome(show, lambda: F.one_hot(torch.tensor([1.0])))
    show_outcome(show, lambda: F.one_hot(torch.tensor([3]), 2))
    show_outcome(show, lambda: torch.histc(torch.tensor([1, 2]), bins=2))
    show_outcome(show, lambda: torch.bucketize(x, torch.tensor([[0.0, 1.0]])))
    show_outcome(show, lambda: torch.searchsorted(edges, x, side="middle"))
    show_outcome(show, lambda: torch.histc(x, bins=-1))


def _hooks_and_accumulation(lib, show):
    """Gradient accumulation over micro-batches with module hooks (backward pre-hooks, full backward
    hooks, forward pre-hooks with kwargs, a forward hook changing the output), a post-accumulate-grad hook, tensor
    hooks' order, autograd.backward with grad_tensors, backward(inputs=...) and retain_graph."""
    torch, nn = lib, lib.nn
    torch.manual_seed(81)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    log = []
    handles = [
        model[0].register_full_backward_pre_hook(lambda m, go: log.append(("pre0", go[0].shape))),
        model[2].register_full_backward_hook(lambda m, gi, go: log.append(("full2", gi[0].shape, go[0].shape))),
        model[0].weight.register_post_accumulate_grad_hook(lambda p: log.append(("acc", p.grad.norm().item() > 0))),
        model[2].weight.register_hook(lambda g: g * 0.5),
        model.register_forward_pre_hook(
            lambda m, args, kwargs: log.append(("fpre", len(args), sorted(kwargs))) or None, with_kwargs=True
        ),
        model[1].register_forward_hook(lambda m, i, o: o + 1),
    ]
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    accum = 4
    for i, (xb, yb) in enumerate(zip(x.split(2), y.split(2))):
        h = model[0](xb)
        h.retain_grad()
        out = model[2](model[1](h))
        loss = nn.functional.mse_loss(out, yb) / accum
        loss.backward()
        show(i, loss, h.grad, model[2].weight.grad)
    show(log)
    for h in handles:
        h.remove()
    log.clear()
    a = torch.randn(3, requires_grad=True)
    b = a * 2
    c = b.exp()
    order = []
    b.register_hook(lambda g: order.append("b") or g * 10)
    c.register_hook(lambda g: order.append("c"))
    a.register_hook(lambda g: order.append("a"))
    torch.autograd.backward([c.sum(), b.sum()], grad_tensors=[torch.tensor(1.0), torch.tensor(2.0)])
    show(a.grad, order)
    a.grad = None
    d = (a * a).sum()
    e = a.sin().sum()
    d.backward(inputs=[a], retain_graph=True)
    show(a.grad)
    (d + e).backward(inputs=a)
    show(a.grad)
    w = torch.ones(2, requires_grad=True)
    z = w * 3
    z.backward(torch.ones(2), retain_graph=True)
    z.backward(torch.ones(2))
    show(w.grad, z.grad_fn.next_functions[0][0].name())
    show_outcome(show, lambda: torch.autograd.backward([c.sum()], grad_tensors=[torch.ones(2)]))
    show_outcome(show, lambda: (a * 2).backward(torch.ones(4)))
    show_outcome(show, lambda: (a * 2).sum().backward(inputs=[]))


def _weight_tying_and_buffers(lib, show):
    """A tiny language model whose output layer shares the embedding's weight, with persistent and
    non-persistent buffers; the state_dict through torch.save/torch.load, double(), requires_grad_(False),
    load_state_dict(strict=False), buffer registration errors, and Embedding's padding_idx and max_norm."""
    torch, nn = lib, lib.nn
    torch.manual_seed(82)

    class TinyLM(nn.Module):
        def __init__(self, vocab=7, dim=4):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim, padding_idx=0)
            self.proj = nn.Linear(dim, vocab, bias=False)
            self.proj.weight = self.embed.weight
            self.register_buffer("position", torch.arange(5).float() / 5, persistent=False)
            self.register_buffer("steps", torch.zeros((), dtype=torch.long))
            self.register_buffer("maybe", None)

        def forward(self, ids):
            self.steps += 1
            h = self.embed(ids) + self.position[: ids.shape[1], None]
            return self.proj(torch.tanh(h))

    lm = TinyLM()
    ids = torch.tensor([[1, 2, 3, 0, 0], [4, 5, 6, 2, 0]])
    opt = torch.optim.SGD(lm.parameters(), lr=0.5)
    for step in range(2):
        logits = lm(ids)
        loss = nn.functional.cross_entropy(logits[:, :-1].reshape(-1, 7), ids[:, 1:].reshape(-1), ignore_index=0)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, lm.embed.weight.grad[0], lm.embed.weight.grad[2])
    show(
        lm.proj.weight is lm.embed.weight,
        len(list(lm.parameters())),
        [n for n, _ in lm.named_parameters(remove_duplicate=False)],
    )
    sd = lm.state_dict()
    show(list(sd), sd["steps"], [n for n, _ in lm.named_buffers()], lm.maybe)
    buf = io.BytesIO()
    torch.save(sd, buf)
    buf.seek(0)
    fresh = TinyLM()
    show(
        fresh.load_state_dict(torch.load(buf)),
        torch.equal(fresh.proj.weight, lm.embed.weight),
        fresh.proj.weight is fresh.embed.weight,
        fresh.steps,
    )
    lm.double()
    show(lm.position.dtype, lm.steps.dtype, lm.embed.weight.dtype)
    lm.requires_grad_(False)
    show([p.requires_grad for p in lm.parameters()], lm.embed.weight.grad is not None)
    show(lm.load_state_dict({"embed.weight": torch.zeros(7, 4)}, strict=False))
    show_outcome(
        show,
        lambda: lm.load_state_dict(
            {"embed.weight": torch.zeros(3, 4), "steps": torch.tensor(1), "proj.weight": torch.zeros(7, 4)}
        ),
    )
    show_outcome(show, lambda: lm.register_buffer("embed", torch.ones(1)))
    show_outcome(show, lambda: lm.register_buffer("x.y", torch.ones(1)))
    show_outcome(show, lambda: lm.register_buffer("z", [1, 2]))
    show_outcome(show, lambda: torch.optim.SGD([lm.embed.weight, lm.proj.weight], lr=0.1))
    emb = nn.Embedding(5, 3, padding_idx=1, max_norm=1.0)
    out = emb(torch.tensor([1, 2, 2, 4]))
    out.sum().backward()
    show(emb.weight.grad, emb.weight.norm(dim=1) <= 1.0 + 1e-6)
    show(
        nn.Embedding.from_pretrained(torch.eye(3), freeze=True).weight.requires_grad,
        nn.Embedding.from_pretrained(torch.eye(3), freeze=False, padding_idx=2)(torch.tensor([2])),
    )


def _numerics_helpers(lib, show):
    """Numerical comparisons: isclose/allclose with NaN and tolerances, finfo, float rounding, and
    torch.testing.assert_close's messages for values, dtypes, shapes, NaNs, containers, strides and custom msg."""
    torch = lib
    torch.manual_seed(83)
    a = torch.tensor([1.0, 2.0, float("nan"), float("inf")])
    b = torch.tensor([1.0 + 1e-6, 2.1, float("nan"), float("inf")])
    show(torch.isclose(a, b), torch.isclose(a, b, equal_nan=True), torch.isclose(a, b, rtol=0.1, atol=0.0))
    show(
        torch.allclose(a[:2], b[:2]),
        torch.allclose(a, b, equal_nan=True, rtol=0.1),
        torch.equal(a, a),
        torch.isclose(torch.tensor([1, 2]), torch.tensor([1, 3])),
    )
    show(
        a.isfinite(),
        a.isinf(),
        a.isposinf(),
        a.isnan(),
        torch.finfo(torch.float32).eps,
        torch.finfo(torch.float16).max,
        torch.finfo().tiny,
    )
    show(
        torch.nextafter(torch.tensor([1.0]), torch.tensor([2.0])) - 1,
        torch.tensor(0.1, dtype=torch.float64).float().double(),
        torch.tensor([1e-45]).float(),
    )
    show(
        torch.tensor([16777217.0]),
        torch.tensor([65504.0, 65520.0]).half(),
        torch.tensor([1 / 3]).half().float(),
        torch.tensor([0.1, 0.2]).sum() == 0.3,
    )

    def check(*args, **kw):
        torch.testing.assert_close(*args, **kw)
        return "close"

    show_outcome(show, lambda: check(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0001])))
    show_outcome(show, lambda: check(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.5, 2.0, 3.5])))
    show_outcome(show, lambda: check(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64)))
    show_outcome(show, lambda: check(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64), check_dtype=False))
    show_outcome(show, lambda: check(torch.ones(2), torch.ones(3)))
    show_outcome(show, lambda: check(torch.tensor([1, 2]), torch.tensor([1, 3])))
    show_outcome(show, lambda: check(torch.tensor([float("nan")]), torch.tensor([float("nan")])))
    show_outcome(show, lambda: check(torch.tensor([float("nan")]), torch.tensor([float("nan")]), equal_nan=True))
    show_outcome(show, lambda: check(1.0, 1.0 + 1e-9))
    show_outcome(show, lambda: check([torch.ones(1), 2], [torch.ones(1), 3]))
    show_outcome(show, lambda: check({"a": torch.ones(1)}, {"a": torch.zeros(1)}))
    show_outcome(show, lambda: check(torch.tensor([1.0]), torch.tensor([1.1]), rtol=0.2, atol=0))
    show_outcome(show, lambda: check(torch.tensor([1.0]), torch.tensor([1.1]), rtol=0.2))
    show_outcome(show, lambda: check(torch.ones(2, requires_grad=True), torch.ones(2)))
    show_outcome(show, lambda: check(torch.ones(2, 3), torch.ones(2, 3).t().contiguous().t(), check_stride=True))
    show_outcome(show, lambda: check(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5]), msg="custom message"))
    show_outcome(show, lambda: torch.testing.assert_close(torch.zeros(2, 2), torch.eye(2), msg=lambda m: "wrapped: " + m[:40]))
    show_outcome(show, lambda: torch.allclose(torch.tensor([1]), torch.tensor([1.0])))
    show_outcome(show, lambda: torch.allclose(torch.ones(2), torch.ones(3)))
    show(torch.testing.make_tensor((2, 3), dtype=torch.float32, device="cpu", low=-1, high=1).shape)


def _randomness_reproducibility(lib, show):
    """Reproducibility: every sampler users reach for (dropout variants, rand/randn/randint(_like),
    multinomial, bernoulli, normal, poisson, the in-place distributions, randperm, half and complex draws) gives the
    same values after the same manual_seed; rng state save/restore, fork_rng, generators, and refusals."""
    torch, nn = lib, lib.nn

    def run(seed):
        torch.manual_seed(seed)
        drop = nn.Dropout(0.5)
        d2 = nn.Dropout2d(0.5)
        ad = nn.AlphaDropout(0.2)
        x = torch.ones(2, 3, 2, 2)
        return (
            drop(torch.ones(8)),
            d2(x)[:, :, 0, 0],
            ad(torch.ones(6)),
            torch.randn(3),
            torch.rand(2, dtype=torch.float64),
            torch.randint(0, 10, (4,)),
            torch.randint_like(torch.zeros(3), 5),
            torch.randn_like(torch.zeros(2, dtype=torch.float64)),
            torch.multinomial(torch.tensor([0.2, 0.3, 0.5]), 4, replacement=True),
            torch.bernoulli(torch.tensor([0.1, 0.9, 0.5])),
            torch.normal(torch.zeros(3), torch.tensor([1.0, 2.0, 3.0])),
            torch.normal(2.0, 0.5, size=(2,)),
            torch.poisson(torch.tensor([1.0, 4.0])),
            torch.empty(3).uniform_(-1, 1),
            torch.empty(3).normal_(5, 2),
            torch.empty(3).exponential_(2.0),
            torch.empty(3).geometric_(0.3),
            torch.empty(3).cauchy_(),
            torch.empty(3).log_normal_(0, 0.5),
            torch.empty(4, dtype=torch.long).random_(3, 9),
            torch.empty(2).bernoulli_(0.5),
            torch.randperm(5),
            torch.rand(3, dtype=torch.float16),
            torch.randn(2, dtype=torch.complex64),
            torch.empty(3).random_(),
            torch.empty(2, dtype=torch.int8).random_(),
        )

    first = run(90)
    second = run(90)
    for a, b in zip(first, second):
        show(a, torch.equal(a, b))
    torch.manual_seed(91)
    s = torch.get_rng_state()
    u = torch.rand(2)
    torch.set_rng_state(s)
    show(torch.equal(u, torch.rand(2)), torch.initial_seed(), s.dtype, s.shape)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        inner = torch.rand(1)
    show(inner, torch.rand(1))
    show(torch.Generator().manual_seed(5).initial_seed(), torch.randn(2, generator=torch.Generator().manual_seed(5)))
    show_outcome(show, lambda: torch.empty(2).random_(5, 2))
    show_outcome(show, lambda: torch.bernoulli(torch.tensor([1.5])))
    show_outcome(show, lambda: torch.normal(torch.zeros(2), torch.tensor([-1.0, 1.0])))
    show_outcome(show, lambda: nn.Dropout(1.5))
    show_outcome(show, lambda: torch.randint(5, 2, (2,)))


def _vit_patches(lib, show):
    """A small vision transformer: patch embedding by a strided Conv2d, class token, truncated-normal position
    embeddings, nn.TransformerEncoder (pre-norm, GELU) trained with AdamW and OneCycleLR (momentum cycling);
    unfold/fold round trip, sinusoidal position encodings and the square subsequent mask."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(100)

    class ViT(nn.Module):
        def __init__(self, img=8, patch=4, dim=6, classes=3):
            super().__init__()
            self.patch = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
            n = (img // patch) ** 2
            self.cls = nn.Parameter(torch.zeros(1, 1, dim))
            self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
            nn.init.trunc_normal_(self.pos, std=0.02)
            layer = nn.TransformerEncoderLayer(
                dim, 2, dim_feedforward=12, dropout=0.0, batch_first=True, norm_first=True, activation="gelu"
            )
            self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, classes)

        def forward(self, x):
            x = self.patch(x).flatten(2).transpose(1, 2)
            x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
            return self.head(self.norm(self.encoder(x))[:, 0])

    model = ViT()
    imgs, labels = torch.randn(4, 3, 8, 8), torch.tensor([0, 2, 1, 2])
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=4, pct_start=0.5)
    for step in range(3):
        loss = F.cross_entropy(model(imgs), labels, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        show(step, loss, sched.get_last_lr(), opt.param_groups[0]["betas"], model.cls.grad[0, 0, :3])
    unf = F.unfold(imgs, kernel_size=4, stride=4)
    show(
        unf.shape,
        torch.allclose(F.fold(unf, (8, 8), kernel_size=4, stride=4), imgs),
        nn.Unfold(2, dilation=2, padding=1)(imgs[:1, :1]).shape,
    )
    d = 6
    pe = torch.zeros(5, d)
    pos = torch.arange(5).unsqueeze(1)
    div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    show(pe, div)
    show(
        nn.Transformer.generate_square_subsequent_mask(4),
        nn.Transformer.generate_square_subsequent_mask(3, dtype=torch.float64),
    )


def _mha_options(lib, show):
    """nn.MultiheadAttention's less common options (kdim/vdim, add_bias_kv, add_zero_attn, per-head weights,
    float/bool/3-D masks, is_causal) and scaled_dot_product_attention (is_causal, scale, enable_gqa); errors."""
    torch, nn = lib, lib.nn
    torch.manual_seed(101)
    mha = nn.MultiheadAttention(4, 2, kdim=3, vdim=5, add_bias_kv=True, add_zero_attn=True, batch_first=True)
    q, k, v = torch.randn(2, 3, 4), torch.randn(2, 6, 3), torch.randn(2, 6, 5)
    pad = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
    out, w = mha(q, k, v, key_padding_mask=pad, average_attn_weights=False)
    show(out, w.shape, w[1, 0, 0])
    out.sum().backward()
    show(mha.q_proj_weight.grad[0], mha.bias_k.grad, mha.in_proj_bias.grad)
    show(list(n for n, _ in mha.named_parameters()), mha)
    plain = nn.MultiheadAttention(4, 1, dropout=0.0)
    x = torch.randn(3, 2, 4)
    float_mask = torch.zeros(3, 3)
    float_mask[0, 2] = float("-inf")
    o1, w1 = plain(x, x, x, attn_mask=float_mask)
    o2, w2 = plain(x, x, x, attn_mask=float_mask.isinf())
    o3, w3 = plain(
        x, x, x, need_weights=False, is_causal=True, attn_mask=nn.Transformer.generate_square_subsequent_mask(3)
    )
    show(o1, w1, torch.allclose(o1, o2), o3, w3)
    m3 = torch.zeros(2, 3, 3, dtype=torch.bool)
    m3[:, :, 1] = True
    show(plain(x, x, x, attn_mask=m3)[1])
    sdpa = nn.functional.scaled_dot_product_attention
    qq, kk, vv = torch.randn(2, 2, 3, 4), torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4)
    show(
        sdpa(qq, kk, vv, is_causal=True)[0, 0],
        sdpa(qq, kk, vv, scale=0.1)[1, 1],
        sdpa(qq, kk[:, :1], vv[:, :1], enable_gqa=True).shape,
    )
    show_outcome(show, lambda: sdpa(qq, kk, vv, attn_mask=torch.ones(3, 5, dtype=torch.bool), is_causal=True))
    show_outcome(show, lambda: plain(x, x, x, attn_mask=torch.zeros(2, 2)))
    show_outcome(show, lambda: nn.MultiheadAttention(5, 2))
    show_outcome(show, lambda: plain(x, x, x, key_padding_mask=torch.zeros(3, 2, dtype=torch.bool)))


def _scheduler_warnings(lib, show):
    """Scheduler usage and misuse: step before optimizer.step, step(epoch), CyclicLR on Adam,
    ReduceLROnPlateau in max mode with abs threshold and cooldown, an optimizer with a tensor lr and maximize;
    the errors of wrong optimizer and scheduler arguments."""
    torch, nn = lib, lib.nn
    p = nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    sched.step()
    show(opt.param_groups[0]["lr"], sched.last_epoch)
    (p * p).sum().backward()
    opt.step()
    sched.step(5)
    show(sched.get_last_lr(), sched.last_epoch)
    adam = torch.optim.Adam([p], lr=0.01)
    cyc = torch.optim.lr_scheduler.CyclicLR(adam, 0.001, 0.01, step_size_up=2)
    for _ in range(3):
        adam.step()
        cyc.step()
    show(cyc.get_last_lr(), adam.param_groups[0]["betas"], adam.param_groups[0].get("momentum"))
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(
        opt, mode="max", factor=0.5, patience=1, threshold=0.1, threshold_mode="abs", cooldown=1, min_lr=0.01
    )
    for metric in [1.0, 1.05, 1.02, 1.01, 1.0, 0.9, 0.8, 0.7]:
        plateau.step(metric)
        show(metric, opt.param_groups[0]["lr"], plateau.num_bad_epochs, plateau.cooldown_counter, plateau.get_last_lr())
    show_outcome(show, lambda: torch.optim.SGD([p], lr=0.1, nesterov=True))
    show_outcome(show, lambda: torch.optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True, dampening=0.1))
    show_outcome(show, lambda: torch.optim.Adam([p], betas=(1.0, 0.9)))
    show_outcome(show, lambda: torch.optim.lr_scheduler.StepLR(torch.optim.SGD([p], lr=0.1), step_size=1, last_epoch=3))
    show_outcome(show, lambda: torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="middle"))
    show_outcome(show, lambda: torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1))
    show_outcome(
        show,
        lambda: torch.optim.lr_scheduler.SequentialLR(opt, [torch.optim.lr_scheduler.StepLR(opt, 1)], milestones=[1]),
    )
    sgd = torch.optim.SGD([p], lr=torch.tensor(0.05), maximize=True)
    p.grad = torch.ones(2)
    sgd.step()
    show(p, sgd.param_groups[0]["lr"])


def _orthogonal_parametrizations(lib, show):
    """Parametrizations: orthogonal with each map (trained a step, staying orthogonal),
    a rectangular one, spectral_norm's parametrization in train and eval, a user Symmetric parametrization with
    right_inverse, cached(), and remove_parametrizations."""
    torch, nn = lib, lib.nn
    P = nn.utils.parametrize
    torch.manual_seed(102)
    for omap in ("matrix_exp", "cayley", "householder"):
        lin = nn.utils.parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map=omap)
        opt = torch.optim.SGD(lin.parameters(), lr=0.1)
        lin(torch.randn(4, 3)).pow(2).sum().backward()
        opt.step()
        W2 = lin.weight
        show(omap, (W2 @ W2.T - torch.eye(3)).abs().max() < 1e-5, list(n for n, _ in lin.named_parameters()))
    rect = nn.utils.parametrizations.orthogonal(nn.Linear(5, 2))
    show((rect.weight @ rect.weight.T - torch.eye(2)).abs().max() < 1e-5, rect.parametrizations.weight[0])
    sn = nn.utils.parametrizations.spectral_norm(nn.Linear(4, 3), n_power_iterations=3)
    x = torch.randn(2, 4)
    for _ in range(2):
        sn(x)
    show(torch.linalg.matrix_norm(sn.weight, ord=2), sorted(sn.state_dict()), sn.parametrizations.weight.original.shape)
    sn.eval()
    y1, y2 = sn(x), sn(x)
    show(torch.equal(y1, y2))

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    lin = nn.Linear(3, 3)
    P.register_parametrization(lin, "weight", Symmetric())
    lin.weight = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]])
    show(lin.parametrizations.weight.original, lin.weight, P.is_parametrized(lin), P.is_parametrized(lin, "bias"))
    with P.cached():
        show(lin.weight is lin.weight)
    show(lin.weight is lin.weight)
    P.remove_parametrizations(lin, "weight", leave_parametrized=True)
    show(type(lin.weight).__name__, lin.weight, P.is_parametrized(lin))
    show_outcome(show, lambda: P.remove_parametrizations(lin, "weight"))
    show_outcome(show, lambda: nn.utils.parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map="qr"))


def _creation_edge_cases(lib, show):
    """Tensor creation corners: arange with float steps, linspace/logspace, full's inferred dtypes, empty
    tensors and their reductions, numpy scalars, mixed Python lists, rounding, tril/triu/diag, heaviside; and the
    errors of ragged lists, empty max, zero steps and negative sizes."""
    torch = lib
    show(
        torch.arange(0, 1, 0.1).shape,
        torch.arange(1, 2.5, 0.5),
        torch.arange(5.0).dtype,
        torch.arange(0, 1, 0.3, dtype=torch.float64),
    )
    show(
        torch.linspace(0, 1, steps=1),
        torch.linspace(-1, 1, 4),
        torch.logspace(0, 2, 3, base=2),
        torch.linspace(0, 10, 5, dtype=torch.int64),
    )
    show(
        torch.eye(2, 3),
        torch.full((2,), True),
        torch.full((2,), 3),
        torch.full((2,), 3.5).dtype,
        torch.zeros([2, 1]),
        torch.ones(torch.Size([1, 2])),
    )
    show(
        torch.tensor([]),
        torch.tensor([]).shape,
        torch.tensor([[]]).shape,
        torch.tensor(np.float64(1.5)).dtype,
        torch.tensor(np.array([1, 2], dtype=np.int32)).dtype,
    )
    show(
        torch.tensor([1, 2.5, True]),
        torch.tensor([True, 1]),
        torch.tensor([[1, 2], [3, 4]], dtype=torch.float16),
        torch.tensor(3.7).int(),
        torch.tensor(-3.7).long(),
    )
    show(
        torch.tensor([1, 2]).new_tensor([3.5]),
        torch.ones(2, dtype=torch.float64).new_zeros(3),
        torch.ones(1).new_full((2,), 7),
        torch.as_tensor([1, 2], dtype=torch.float32),
    )
    show(
        torch.zeros_like(torch.ones(2, dtype=torch.int32), dtype=torch.float32),
        torch.empty(0, 3).sum(0),
        torch.empty(0).mean(),
        torch.tensor(5).shape,
        torch.tensor([5]).squeeze().dim(),
    )
    show(
        torch.tensor(2**40).float(),
        torch.tensor([0.5, 1.5, 2.5, -0.5]).round(),
        torch.tensor([1.2345]).round(decimals=2),
    )
    show(
        torch.tril(torch.ones(3, 4), diagonal=-1),
        torch.triu(torch.ones(2, 3), 1),
        torch.diag(torch.tensor([1, 2])),
        torch.diag(torch.arange(9).reshape(3, 3), 1),
    )
    show(
        torch.heaviside(torch.tensor([-1.0, 0.0, 2.0]), torch.tensor(0.5)),
        torch.sgn(torch.tensor([-2.0, 0.0])),
        torch.frac(torch.tensor([-1.5, 2.25])),
        torch.trunc(torch.tensor([-1.5])),
    )
    show_outcome(show, lambda: torch.tensor([[1, 2], [3]]))
    show_outcome(show, lambda: torch.empty(0, 3).max(0))
    show_outcome(show, lambda: torch.arange(0, 1, 0))
    show_outcome(show, lambda: torch.arange(1, 0, 0.5))
    show_outcome(show, lambda: torch.zeros(-1))
    show_outcome(show, lambda: torch.tensor("abc"))
    show_outcome(show, lambda: torch.linspace(0, 1, -1))
    show_outcome(show, lambda: torch.full((2,), "x"))
    show_outcome(show, lambda: torch.eye(-2))
    show_outcome(show, lambda: torch.ones(2, 3).reshape(4, 2))


def _complex_layers(lib, show):
    """Complex-valued layers: nn.Linear(dtype=cfloat) on an input without grad, trained a step with Adam and
    clipped by norm; view_as_complex/real, conj, complex math and promotion, Wirtinger gradients, eigvals,
    polar; and the refusals (ordering, max, real input to a complex layer, clip_grad_value_)."""
    torch, nn = lib, lib.nn
    torch.manual_seed(103)
    lin = nn.Linear(3, 2, dtype=torch.cfloat)
    x = torch.randn(4, 3, dtype=torch.cfloat)
    y = lin(x)
    loss = y.abs().pow(2).mean()
    loss.backward()
    show(y, loss, lin.weight.grad, lin.bias.grad)
    show(nn.utils.clip_grad_norm_(lin.parameters(), 1.0), nn.utils.clip_grad_norm_(lin.parameters(), 5.0, norm_type=0))
    opt = torch.optim.Adam(lin.parameters(), lr=0.1)
    opt.step()
    show(lin.weight, opt.state[lin.weight]["exp_avg_sq"])
    z = torch.view_as_complex(torch.randn(3, 2))
    show(z, z.real, z.imag, z.conj().resolve_conj(), torch.view_as_real(z.conj().resolve_conj()))
    show(z * 1j, z.abs(), z.angle(), z.exp(), z.log(), z.sqrt(), z.reciprocal(), z @ z.conj(), torch.vdot(z, z))
    c = torch.complex(torch.tensor([1.0, 0.0]), torch.tensor([0.0, 2.0]))
    show(
        c,
        c.dtype,
        (c + 1.5).dtype,
        (c * torch.tensor([2], dtype=torch.float64)).dtype,
        torch.tensor([1 + 2j]).dtype,
        c.to(torch.complex128),
    )
    w = torch.randn(3, dtype=torch.cdouble, requires_grad=True)
    (w * w.conj()).real.sum().backward()
    show(w.grad)
    w.grad = None
    torch.view_as_real(w).pow(2).sum().backward()
    show(
        w.grad,
        torch.linalg.eigvals(torch.tensor([[0.0, -1.0], [1.0, 0.0]])),
        torch.polar(torch.tensor([2.0]), torch.tensor([math.pi])),
    )
    show(
        str(torch.tensor([1 + 2j, -0.5j])),
        torch.tensor([1 + 1j]).abs().dtype,
        torch.randn(2, dtype=torch.cfloat).is_complex(),
    )
    show_outcome(show, lambda: c < c)
    show_outcome(show, lambda: c.max())
    show_outcome(show, lambda: torch.view_as_complex(torch.randn(3, 3)))
    show_outcome(show, lambda: lin(torch.randn(4, 3)))
    show_outcome(show, lambda: torch.zeros(2).add_(c))
    show_outcome(show, lambda: (c * c).backward())
    show_outcome(show, lambda: nn.utils.clip_grad_value_(lin.parameters(), 0.1))


PROGRAMS = [
    _hand_written_encoder,
    _sampling_strategies,
    _boxes_and_nms,
    _metric_learning_losses,
    _custom_optimizer,
    _normalizing_flow,
    _weight_initialisation,
    _nan_aware_statistics,
    _integer_arithmetic,
    _mixture_density_network,
    _weighted_classification_losses,
    _common_mistakes,
    _tensor_shuffling,
    _einsum_heavy,
    _custom_function_new_style,
    _module_containers,
    _inference_mode_and_grad_context,
    _data_utilities,
    _bookkeeping,
    _hooks_and_accumulation,
    _weight_tying_and_buffers,
    _numerics_helpers,
    _randomness_reproducibility,
    _vit_patches,
    _mha_options,
    _scheduler_warnings,
    _orthogonal_parametrizations,
    _creation_edge_cases,
    _complex_layers,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
