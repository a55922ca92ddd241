"""A twenty-ninth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and
compared.

These add what the other program files do not run: self-supervised, contrastive and metric-learning notebooks and
the loss catalogue they lean on, module by module with every reduction and the refusals. SimCLR's NT-Xent with a
diagonal masked by ``fill_diagonal_`` on a non-leaf and top-k retrieval accuracy; a MoCo queue enqueued in place
under no_grad beside a momentum encoder updated by ``_foreach_lerp_`` and by ``mul_().add_()``; BYOL and SimSiam
with stop-gradients (``detach``, ``detach_`` of a view); a CLIP loss whose learnable ``logit_scale`` is clamped at
100 (the gradient at and past the bound); batch-hard and semi-hard triplet mining through ``cdist``, masked
``max``/``min`` and ``topk``; ArcFace margins through ``acos``; a supervised contrastive (SupCon) loss;
TripletMarginLoss (p, swap, unbatched) and TripletMarginWithDistanceLoss; CosineEmbedding, MarginRanking,
HingeEmbedding and SoftMargin losses; MultiLabelMargin, MultiLabelSoftMargin and MultiMargin losses (p, margin,
weight); KLDivLoss, PoissonNLLLoss and GaussianNLLLoss (full, eps, var shapes); BCEWithLogitsLoss with a
broadcast pos_weight; CrossEntropyLoss with class probabilities, label smoothing and weights over extra
dimensions. Everything is drawn from the seeded global generator, which is torch's; values are compared to a
tolerance (matrix products are not bit for bit).

Differences these programs found, now fixed (``tests/ops/test_program29_findings_vs_torch.py``):
- ``cross_entropy`` with class-probability targets refused a ``weight`` that requires grad (learnable class
  weights); torch's probability path is a composite through which the weight gets its gradient;
- ``BCEWithLogitsLoss`` with a ``pos_weight`` or ``weight`` broadcasting beyond the input's shape computed a loss
  where torch's in-place products refuse it.

Left: bfloat16 reduced-precision corners the programs keep away from: ``log_softmax`` of bfloat16 along the last
dim is one rounding off torch's kernel (which rounds ``max + log(sum)`` to bfloat16 before subtracting), so are
``cross_entropy``/``binary_cross_entropy_with_logits`` of bfloat16 logits with float32 targets (log_sigmoid and
the products rounded per step in torch) and ``acos``'s bfloat16/half backward; ``soft_margin_loss`` and
``huber_loss`` of a bfloat16 input with a float32 target give float32 where torch keeps bfloat16 (its in-place
chain rounds each step); ``multi_margin_loss``/``multilabel_margin_loss`` of an empty batch read uninitialised
memory in torch (not comparable); ``huber_loss`` of mixed dtypes goes backward where torch's backward kernel
refuses them, a torch artefact deliberately not copied (``tests/nn/test_user_mistakes_losses_vs_torch.py``).
"""

from __future__ import annotations

import copy
import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _simclr_fill_diagonal(lib, show):
    """SimCLR's NT-Xent written the way the paper's pseudo-code reads: a similarity matrix whose diagonal is
    overwritten in place by ``fill_diagonal_`` (on a non-leaf), a temperature, cross entropy over the 2N rows,
    top-1/top-5 retrieval accuracy by ``topk``, and what ``fill_diagonal_`` does on a leaf and a tall matrix."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(2900)
    encoder = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 6))
    opt = torch.optim.Adam(encoder.parameters(), lr=1e-2)
    temperature = torch.tensor(0.2)

    def nt_xent(z1, z2):
        z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
        n = z1.shape[0]
        sim = torch.matmul(z, z.T) / temperature
        sim.fill_diagonal_(float("-inf"))
        targets = (torch.arange(2 * n) + n) % (2 * n)
        return F.cross_entropy(sim, targets), sim, targets

    x = torch.randn(6, 12)
    for step in range(3):
        v1 = x + 0.2 * torch.randn_like(x)
        v2 = F.dropout(x, p=0.3)
        loss, sim, targets = nt_xent(encoder(v1), encoder(v2))
        opt.zero_grad()
        loss.backward()
        opt.step()
        top5 = sim.topk(5, dim=1).indices
        top1 = (top5[:, 0] == targets).float().mean()
        hit5 = (top5 == targets[:, None]).any(dim=1).float().mean()
        show(step, loss, top1, hit5, sim.grad_fn.name())
    show(sim.diagonal(), torch.isinf(sim).sum(), sim.requires_grad, sim.is_leaf)
    show(encoder[0].weight.grad.norm(), encoder[2].bias.grad)
    leaf = torch.zeros(3, 3, requires_grad=True)
    show_outcome(show, lambda: leaf.fill_diagonal_(1.0))
    tall = torch.zeros(7, 3)
    show(tall.clone().fill_diagonal_(5.0), tall.clone().fill_diagonal_(5.0, wrap=True))
    show_outcome(show, lambda: torch.zeros(2, 3, 4).fill_diagonal_(1.0))
    cube = torch.zeros(3, 3, 3).fill_diagonal_(2.0)
    show(cube.sum(), cube[1, 1, 1], cube[0, 1, 1])
    masked = torch.randn(4, 4).masked_fill(torch.eye(4, dtype=torch.bool), float("-inf"))
    show(masked.softmax(1).diagonal(), masked.logsumexp(1), masked.max(1).values)


def _moco_queue_momentum(lib, show):
    """MoCo v2: a key encoder deep-copied from the query encoder and frozen, updated by momentum (``_foreach_lerp_``
    and, for comparison, param by param ``mul_().add_()``), a queue of negatives kept as a buffer and enqueued in
    place under no_grad with a pointer, logits [l_pos | l_neg] / T against zero labels, and the refusals of
    updating a parameter that requires grad outside no_grad."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(2901)

    class MoCo(nn.Module):
        def __init__(self, dim=4, queue_size=12, m=0.9, t=0.1):
            super().__init__()
            self.m, self.t = m, t
            self.encoder_q = nn.Sequential(nn.Linear(8, 10), nn.ReLU(), nn.Linear(10, dim))
            self.encoder_k = copy.deepcopy(self.encoder_q)
            for p in self.encoder_k.parameters():
                p.requires_grad_(False)
            self.register_buffer("queue", F.normalize(torch.randn(dim, queue_size), dim=0))
            self.register_buffer("queue_ptr", torch.zeros(1, dtype=torch.long))

        @torch.no_grad()
        def momentum_update(self):
            torch._foreach_lerp_(list(self.encoder_k.parameters()), list(self.encoder_q.parameters()), 1 - self.m)

        @torch.no_grad()
        def enqueue(self, keys):
            bs = keys.shape[0]
            ptr = int(self.queue_ptr)
            self.queue[:, ptr:ptr + bs] = keys.T
            self.queue_ptr[0] = (ptr + bs) % self.queue.shape[1]

        def forward(self, im_q, im_k):
            q = F.normalize(self.encoder_q(im_q), dim=1)
            with torch.no_grad():
                self.momentum_update()
                k = F.normalize(self.encoder_k(im_k), dim=1)
            l_pos = torch.einsum("nc,nc->n", q, k).unsqueeze(-1)
            l_neg = torch.einsum("nc,ck->nk", q, self.queue.clone().detach())
            logits = torch.cat([l_pos, l_neg], dim=1) / self.t
            labels = torch.zeros(logits.shape[0], dtype=torch.long)
            self.enqueue(k)
            return logits, labels

    model = MoCo()
    opt = torch.optim.SGD(model.encoder_q.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    data = torch.randn(20, 8)
    for step in range(4):
        batch = data[step * 5:(step + 1) * 5]
        logits, labels = model(batch + 0.1 * torch.randn_like(batch), batch + 0.1 * torch.randn_like(batch))
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, logits.shape, model.queue_ptr, model.queue._version, logits.grad_fn.name())
    show(model.queue.norm(dim=0), model.encoder_k[0].weight.grad, model.encoder_k[0].weight.requires_grad)
    show(sorted(model.state_dict().keys())[:3], model.queue_ptr.dtype)
    manual = copy.deepcopy(model.encoder_k)
    with torch.no_grad():
        for pk, pq in zip(manual.parameters(), model.encoder_q.parameters()):
            pk.mul_(model.m).add_(pq.detach(), alpha=1 - model.m)
    model.momentum_update()
    show(max((a - b).abs().max() for a, b in zip(manual.parameters(), model.encoder_k.parameters())))
    q_params = list(model.encoder_q.parameters())
    show_outcome(show, lambda: torch._foreach_lerp_(q_params, q_params, 0.5))
    show_outcome(show, lambda: q_params[0].mul_(0.5))
    show_outcome(show, lambda: torch._foreach_lerp_(list(manual.parameters()), q_params[:2], 0.5))
    show_outcome(show, lambda: model.queue[:, 10:15].copy_(torch.zeros(5, 4).T))


def _byol_simsiam_stop_gradient(lib, show):
    """BYOL's online network and predictor against an EMA target network, the symmetric ``2 - 2 cos`` loss, and
    SimSiam's negative cosine with ``detach`` as the stop-gradient: which parameters get gradients, what
    ``detach``/``detach_`` give (and refuse on a view), and a collapse check by the std of normalised outputs."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(2902)

    def mlp(i, h, o):
        return nn.Sequential(nn.Linear(i, h), nn.BatchNorm1d(h), nn.ReLU(), nn.Linear(h, o))

    online = mlp(6, 8, 4)
    predictor = mlp(4, 8, 4)
    target = copy.deepcopy(online).requires_grad_(False)
    opt = torch.optim.SGD(list(online.parameters()) + list(predictor.parameters()), lr=0.1)

    def byol_loss(p, z):
        p, z = F.normalize(p, dim=-1), F.normalize(z, dim=-1)
        return 2 - 2 * (p * z).sum(dim=-1)

    x = torch.randn(10, 6)
    for step in range(3):
        v1, v2 = x + 0.1 * torch.randn_like(x), x.flip(0) * 0 + x * 0.9
        p1, p2 = predictor(online(v1)), predictor(online(v2))
        with torch.no_grad():
            z1, z2 = target(v1), target(v2)
        loss = (byol_loss(p1, z2) + byol_loss(p2, z1)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for pt, po in zip(target.parameters(), online.parameters()):
                pt.data = 0.99 * pt.data + 0.01 * po.data
        show(step, loss, z1.requires_grad, target[0].weight.grad, predictor[3].bias.grad)
    show(target[1].running_mean, online[1].num_batches_tracked, target[1].num_batches_tracked)

    def simsiam_d(p, z):
        return -(F.normalize(p, dim=1) * F.normalize(z.detach(), dim=1)).sum(dim=1).mean()

    z_a, z_b = online(x), online(x * 1.1)
    p_a, p_b = predictor(z_a), predictor(z_b)
    loss = simsiam_d(p_a, z_b) / 2 + simsiam_d(p_b, z_a) / 2
    show(loss, loss.grad_fn.name(), z_b.detach().requires_grad, z_b.detach().grad_fn)
    grads = torch.autograd.grad(loss, [z_a, p_a], allow_unused=True)
    show(grads[0], grads[1].shape)
    std = F.normalize(z_a, dim=1).std(dim=0).mean()
    show(std, 1 / math.sqrt(4))
    h = z_a * 2
    h.detach_()
    show(h.requires_grad, h.grad_fn, h.is_leaf)
    show_outcome(show, lambda: z_a[0].detach_())
    show_outcome(show, lambda: z_a.view(-1).detach_())
    w = online[0].weight.detach()
    show(w._version, w.data_ptr() == online[0].weight.data_ptr(), w.requires_grad)
    show_outcome(show, lambda: w.add_(1.0) is None)
    show(online[0].weight._version)


def _clip_logit_scale(lib, show):
    """CLIP's symmetric loss with a learnable ``logit_scale`` initialised at log(1/0.07), ``exp().clamp(max=100)``,
    accuracy in both directions, the scale's gradient as it crosses the bound, and in-place clamping of the
    parameter's data as the original code does."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(2903)
    image_proj = nn.Linear(10, 6, bias=False)
    text_proj = nn.Linear(7, 6, bias=False)
    logit_scale = nn.Parameter(torch.ones([]) * math.log(1 / 0.07))
    opt = torch.optim.AdamW([*image_proj.parameters(), *text_proj.parameters(), logit_scale], lr=0.5,
                            weight_decay=0.0)
    images, texts = torch.randn(5, 10), torch.randn(5, 7)
    labels = torch.arange(5)
    for step in range(4):
        img = image_proj(images)
        txt = text_proj(texts)
        img = img / img.norm(dim=1, keepdim=True)
        txt = txt / txt.norm(dim=1, keepdim=True)
        scale = logit_scale.exp().clamp(max=100)
        logits_per_image = scale * img @ txt.t()
        logits_per_text = logits_per_image.t()
        loss = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        acc_i = (logits_per_image.argmax(1) == labels).float().mean()
        acc_t = (logits_per_text.argmax(1) == labels).float().mean()
        show(step, loss, scale, logit_scale.grad, acc_i, acc_t, scale.grad_fn.name())
    with torch.no_grad():
        logit_scale.clamp_(0, math.log(100))
    show(logit_scale, logit_scale.is_leaf, logit_scale._version)
    at_bound = torch.tensor(100.0, requires_grad=True)
    past = torch.tensor(101.0, requires_grad=True)
    below = torch.tensor(99.0, requires_grad=True)
    for t in (at_bound, past, below):
        t.clamp(max=100).backward()
    show(at_bound.grad, past.grad, below.grad)
    s = torch.tensor([4.0, 4.7, 4.6052], requires_grad=True)
    s.exp().clamp(max=100).sum().backward()
    show(s.grad)
    m = torch.tensor(2.0, requires_grad=True)
    show(torch.clamp(torch.tensor([1.0, 3.0]), max=m), torch.tensor([1.0, 3.0]).clamp(min=m, max=m))
    show_outcome(show, lambda: torch.tensor([1.0]).clamp())
    show(F.cross_entropy(torch.full((3, 3), 100.0), torch.arange(3)), F.cross_entropy(torch.eye(3) * 100, labels[:3]))


def _triplet_mining(lib, show):
    """Online triplet mining over a batch with P classes of K samples: all distances by ``cdist`` (and by the
    expanded square), batch-hard positives and negatives by masked ``max``/``min``, semi-hard negatives by
    ``where``, the loss's gradient through ``cdist``'s zero diagonal, and recall@k by ``topk``."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(2904)
    net = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
    labels = torch.tensor([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    x = torch.randn(12, 5) + labels[:, None].float()
    emb = net(x)
    dist = torch.cdist(emb, emb)
    same = labels[:, None] == labels[None, :]
    eye = torch.eye(12, dtype=torch.bool)
    pos_mask = same & ~eye
    hardest_pos, pos_idx = dist.masked_fill(~pos_mask, float("-inf")).max(dim=1)
    hardest_neg, neg_idx = dist.masked_fill(same, float("inf")).min(dim=1)
    loss = F.relu(hardest_pos - hardest_neg + 0.5).mean()
    show(dist.grad_fn.name(), hardest_pos, pos_idx, neg_idx, loss, hardest_pos.grad_fn.name())
    loss.backward()
    show(net[0].weight.grad, net[2].bias.grad)
    sq = (emb.unsqueeze(1) - emb.unsqueeze(0)).pow(2).sum(-1)
    show((sq.clamp_min(1e-12).sqrt() - dist).abs().max() < 1e-5, dist.diagonal())
    leaf = emb.detach().requires_grad_()
    torch.cdist(leaf, leaf).sum().backward()
    show(leaf.grad)
    semi = (dist > hardest_pos[:, None]) & ~same
    semi_neg = torch.where(semi, dist, torch.full_like(dist, float("inf"))).min(dim=1).values
    has_semi = torch.isfinite(semi_neg)
    show(has_semi, semi_neg[has_semi])
    knn = dist.detach().masked_fill(eye, float("inf")).topk(3, dim=1, largest=False)
    recall_at = [(labels[knn.indices[:, :k]] == labels[:, None]).any(1).float().mean() for k in (1, 2, 3)]
    show(knn.values[:3], recall_at)
    show(torch.cdist(emb, emb, p=1)[0], torch.cdist(emb, emb, p=float("inf"))[0])
    show(torch.cdist(emb[:4], emb[4:], compute_mode="donot_use_mm_for_euclid_dist"))
    show_outcome(show, lambda: torch.cdist(emb, emb[:, :2]))
    show_outcome(show, lambda: torch.cdist(emb, emb, p=-1))
    show_outcome(show, lambda: torch.cdist(emb, emb, compute_mode="fast"))
    show_outcome(show, lambda: dist.topk(13, dim=1))


def _arcface_and_supcon(lib, show):
    """Two classification-style metric-learning heads: ArcFace (normalised weights, ``acos`` of a clamped cosine,
    an additive angular margin on the target logit through a one-hot mask, a scale) and a supervised contrastive
    loss (a positives mask, the row max subtracted after ``detach``, ``log_softmax`` over the non-self entries)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(2905)
    backbone = nn.Linear(6, 4)
    class_w = nn.Parameter(torch.randn(3, 4))
    x = torch.randn(9, 6)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2])
    opt = torch.optim.SGD([*backbone.parameters(), class_w], lr=0.1)
    s, m = 8.0, 0.3
    for step in range(3):
        feats = F.normalize(backbone(x))
        cos = F.linear(feats, F.normalize(class_w)).clamp(-1 + 1e-7, 1 - 1e-7)
        theta = torch.acos(cos)
        one_hot = F.one_hot(y, num_classes=3).bool()
        logits = s * torch.where(one_hot, torch.cos(theta + m), cos)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, theta.grad_fn.name(), class_w.grad.norm(), logits.argmax(1))
    show(torch.acos(torch.tensor([1.0, -1.0, 0.5], requires_grad=True)).sum().grad_fn.name())
    edge = torch.tensor([1.0, -1.0, 0.0], requires_grad=True)
    torch.acos(edge).sum().backward()
    show(edge.grad)

    def supcon(features, labels, t=0.5):
        n = features.shape[0]
        f = F.normalize(features, dim=1)
        logits = f @ f.T / t
        logits = logits - logits.max(dim=1, keepdim=True).values.detach()
        self_mask = torch.eye(n, dtype=torch.bool)
        pos = (labels[:, None] == labels[None, :]) & ~self_mask
        logits = logits.masked_fill(self_mask, -1e9)
        log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
        mean_log_prob_pos = (log_prob * pos).sum(1) / pos.sum(1).clamp_min(1)
        return -mean_log_prob_pos.mean(), pos.sum(1)

    feats = backbone(x)
    loss, n_pos = supcon(feats, y)
    loss.backward()
    show(loss, n_pos, n_pos.dtype, backbone.weight.grad)
    single = torch.tensor([0, 1, 1, 2, 2, 2, 3, 3, 3])
    show(supcon(feats.detach(), single)[0], F.one_hot(y).dtype, F.one_hot(torch.tensor(2), 4))
    show_outcome(show, lambda: F.one_hot(y, num_classes=2))
    show_outcome(show, lambda: F.one_hot(y.float()))
    show_outcome(show, lambda: F.one_hot(torch.tensor([-1, 0])))


def _triplet_loss_modules(lib, show):
    """TripletMarginLoss with p = 1, 2, 3, swap, eps and every reduction, unbatched inputs;
    TripletMarginWithDistanceLoss with PairwiseDistance, a cosine distance and a lambda; gradients and the
    refusals (dimensions, reduction names, margins, a distance returning the wrong shape)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(2906)
    a, p, n = (torch.randn(5, 4, requires_grad=True) for _ in range(3))
    for kwargs in ({"p": 1.0}, {"p": 3.0, "margin": 2.0}, {"swap": True, "reduction": "sum"},
                   {"reduction": "none", "eps": 1e-3}, {"p": 2.0, "margin": 0.0}):
        loss = nn.TripletMarginLoss(**kwargs)(a, p, n)
        show(kwargs, loss, loss.grad_fn.name())
    loss = nn.TripletMarginLoss(margin=1.5, swap=True)(a, p, n)
    loss.backward()
    show(a.grad, p.grad, n.grad)
    show(nn.TripletMarginLoss()(a[0], p[0], n[0]), F.triplet_margin_loss(a[0], p[0], n[0], reduction="none"))
    distances = [nn.PairwiseDistance(p=1.0), lambda u, v: 1 - F.cosine_similarity(u, v),
                 lambda u, v: (u - v).pow(2).sum(-1), None]
    for dist in distances:
        crit = nn.TripletMarginWithDistanceLoss(distance_function=dist, margin=0.7, swap=True)
        show(crit(a, p, n), crit.margin, crit.swap)
    show(nn.TripletMarginWithDistanceLoss(reduction="none")(a, p, n).shape)
    show(nn.TripletMarginLoss(margin=0.5))
    show_outcome(show, lambda: nn.TripletMarginLoss()(a, p, n[0]))
    show_outcome(show, lambda: nn.TripletMarginLoss()(a[:, None], p[:, None], n[:, None]))
    show_outcome(show, lambda: nn.TripletMarginLoss(reduction="avg")(a, p, n))
    show_outcome(show, lambda: nn.TripletMarginWithDistanceLoss(margin=-1.0)(a, p, n))
    show_outcome(show, lambda: nn.TripletMarginWithDistanceLoss(margin=0.0))
    show_outcome(show, lambda: nn.TripletMarginWithDistanceLoss(reduction="max")(a, p, n))
    show_outcome(show, lambda: nn.TripletMarginWithDistanceLoss(distance_function=lambda u, v: u - v)(a, p, n))
    show_outcome(show, lambda: F.triplet_margin_loss(a, p, n[:3]))


def _pairwise_embedding_losses(lib, show):
    """CosineEmbeddingLoss, MarginRankingLoss, HingeEmbeddingLoss and SoftMarginLoss as modules with every
    reduction, unbatched inputs, targets other than +-1, their gradients and refusals."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(2907)
    x1, x2 = torch.randn(6, 5, requires_grad=True), torch.randn(6, 5, requires_grad=True)
    y = torch.tensor([1.0, -1.0, 1.0, -1.0, -1.0, 1.0])
    for reduction in ("mean", "sum", "none"):
        show(nn.CosineEmbeddingLoss(margin=0.2, reduction=reduction)(x1, x2, y))
    cel = nn.CosineEmbeddingLoss(margin=-0.5)(x1, x2, y)
    cel.backward()
    show(cel, cel.grad_fn.name(), x1.grad[0], x2.grad[1])
    show(F.cosine_embedding_loss(x1[0], x2[0], torch.tensor(1.0)), F.cosine_embedding_loss(x1, x2, y.long()))
    show(F.cosine_embedding_loss(torch.zeros(2, 3), torch.ones(2, 3), torch.tensor([1, -1])))
    show_outcome(show, lambda: F.cosine_embedding_loss(x1, x2, y[:4]))
    show_outcome(show, lambda: F.cosine_embedding_loss(x1, x2[:, :3], y))
    show_outcome(show, lambda: F.cosine_embedding_loss(x1[:, None], x2[:, None], y))
    s1, s2 = torch.randn(6, requires_grad=True), torch.randn(6, requires_grad=True)
    for reduction in ("mean", "sum", "none"):
        show(nn.MarginRankingLoss(margin=0.3, reduction=reduction)(s1, s2, y))
    mrl = nn.MarginRankingLoss(margin=0.1)(s1, s2, y)
    mrl.backward()
    show(mrl, mrl.grad_fn.name(), s1.grad, s2.grad)
    show(F.margin_ranking_loss(s1, s2, torch.tensor(1.0)), F.margin_ranking_loss(s1[:, None], s2, y))
    show_outcome(show, lambda: F.margin_ranking_loss(s1, s2, y[:3]))
    show_outcome(show, lambda: F.margin_ranking_loss(s1, s2[:2], y))
    h = torch.randn(2, 3, requires_grad=True)
    ht = torch.tensor([[1.0, -1.0, 0.0], [-1.0, 2.0, 1.0]])
    for reduction in ("mean", "sum", "none"):
        show(nn.HingeEmbeddingLoss(margin=0.8, reduction=reduction)(h, ht))
    hel = F.hinge_embedding_loss(h.abs(), ht.clamp(-1, 1))
    hel.backward()
    show(hel, hel.grad_fn.name(), h.grad)
    show(F.hinge_embedding_loss(torch.tensor([0.5, 2.0]), torch.tensor([-1, -1])))
    sm = torch.randn(4, 2, requires_grad=True)
    st = torch.tensor([[1.0, -1.0], [-1.0, 1.0], [1.0, 1.0], [0.5, -2.0]])
    for reduction in ("mean", "sum", "none"):
        show(nn.SoftMarginLoss(reduction=reduction)(sm, st))
    sml = F.soft_margin_loss(sm * 50, st)
    sml.backward()
    show(sml, sml.grad_fn.name(), sm.grad)
    show_outcome(show, lambda: F.soft_margin_loss(sm, st[:2]))
    show_outcome(show, lambda: nn.SoftMarginLoss(reduction="avg")(sm, st))
    show_outcome(show, lambda: F.hinge_embedding_loss(h, ht, reduction="total"))


def _multi_label_and_class_margins(lib, show):
    """MultiLabelMarginLoss (targets ended by -1, unbatched, every reduction), MultiLabelSoftMarginLoss with class
    weights, MultiMarginLoss with p = 1 and 2, margins and class weights; gradients and refusals (targets out of
    range, p = 3, a weight of the wrong size)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(2908)
    scores = torch.randn(4, 5, requires_grad=True)
    ml_target = torch.tensor([[3, 0, -1, 1, 1], [1, 2, 4, 3, 0], [-1, 2, 3, 0, 0], [4, -1, 0, 0, 0]])
    for reduction in ("mean", "sum", "none"):
        show(nn.MultiLabelMarginLoss(reduction=reduction)(scores, ml_target))
    mlm = F.multilabel_margin_loss(scores, ml_target)
    mlm.backward()
    show(mlm, mlm.grad_fn.name(), scores.grad)
    show(F.multilabel_margin_loss(scores[0], ml_target[0]), F.multilabel_margin_loss(scores[0], ml_target[0],
                                                                                     reduction="none"))
    show_outcome(show, lambda: F.multilabel_margin_loss(scores, ml_target.float()))
    show_outcome(show, lambda: F.multilabel_margin_loss(scores, ml_target[:, :3]))
    show_outcome(show, lambda: F.multilabel_margin_loss(scores, ml_target + 2))
    scores.grad = None
    multi_hot = (torch.rand(4, 5) > 0.5).float()
    w = torch.tensor([1.0, 0.5, 2.0, 1.0, 0.0])
    for reduction in ("mean", "sum", "none"):
        show(nn.MultiLabelSoftMarginLoss(weight=w, reduction=reduction)(scores, multi_hot))
    mls = nn.MultiLabelSoftMarginLoss()(scores, multi_hot)
    mls.backward()
    show(mls, mls.grad_fn.name(), scores.grad)
    show_outcome(show, lambda: F.multilabel_soft_margin_loss(scores, multi_hot[:, :3]))
    scores.grad = None
    y = torch.tensor([2, 0, 4, 1])
    cw = torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0])
    for kwargs in ({}, {"p": 2}, {"margin": 0.5, "weight": cw}, {"p": 2, "margin": 2.0, "weight": cw,
                                                                  "reduction": "sum"}, {"reduction": "none"}):
        show(kwargs.get("p", 1), nn.MultiMarginLoss(**kwargs)(scores, y))
    mm = nn.MultiMarginLoss(p=2, weight=cw)(scores, y)
    mm.backward()
    show(mm, mm.grad_fn.name(), scores.grad)
    show(F.multi_margin_loss(scores[1], y[1]), F.multi_margin_loss(scores[1:2], y[1:2], reduction="none"))
    show_outcome(show, lambda: nn.MultiMarginLoss(p=3))
    show_outcome(show, lambda: F.multi_margin_loss(scores, y, p=3))
    show_outcome(show, lambda: F.multi_margin_loss(scores, torch.tensor([2, 0, 5, 1])))
    show_outcome(show, lambda: F.multi_margin_loss(scores, y, weight=torch.ones(3)))
    show_outcome(show, lambda: F.multi_margin_loss(scores, y[:2]))
    show_outcome(show, lambda: F.multi_margin_loss(scores, y.float()))


def _likelihood_losses(lib, show):
    """KLDivLoss with log targets and batchmean beside 'mean' (and its warning), PoissonNLLLoss with and without
    log inputs, the Stirling term and eps, GaussianNLLLoss with full and eps and every var shape it takes
    (a homoscedastic column, one fewer dimension, a scalar-like var), with gradients and refusals."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(2909)
    log_p = F.log_softmax(torch.randn(4, 6, requires_grad=True), dim=1)
    log_q = F.log_softmax(torch.randn(4, 6), dim=1)
    kl = nn.KLDivLoss(reduction="batchmean", log_target=True)
    show(kl(log_p, log_q), nn.KLDivLoss(reduction="none", log_target=True)(log_p, log_q).sum(1))
    show(nn.KLDivLoss(reduction="mean", log_target=True)(log_p, log_q))
    show(nn.KLDivLoss(reduction="sum")(log_p, log_q.exp()), F.kl_div(log_p, torch.zeros(4, 6)))
    show(F.kl_div(log_p[0], log_q[0], reduction="batchmean", log_target=True))
    rate_log = torch.randn(8, requires_grad=True)
    counts = torch.tensor([0.0, 1.0, 3.0, 7.0, 0.0, 2.0, 1.0, 12.0])
    for kwargs in ({}, {"full": True}, {"log_input": False}, {"log_input": False, "eps": 1e-2, "full": True},
                   {"reduction": "sum"}, {"reduction": "none", "full": True}):
        rate = rate_log if kwargs.get("log_input", True) else rate_log.exp()
        show(kwargs, nn.PoissonNLLLoss(**kwargs)(rate, counts))
    pn = nn.PoissonNLLLoss(log_input=False, full=True)(rate_log.exp(), counts)
    pn.backward()
    show(pn, pn.grad_fn.name(), rate_log.grad)
    show(F.poisson_nll_loss(torch.zeros(3), torch.zeros(3), log_input=False),
         F.poisson_nll_loss(torch.zeros(3), torch.zeros(3), log_input=False, eps=1.0))
    mu = torch.randn(5, 2, requires_grad=True)
    target = torch.randn(5, 2)
    vars_ = {"full": torch.rand(5, 2) + 0.1, "column": torch.rand(5, 1) + 0.1, "fewer dims": torch.rand(5) + 0.1,
             "tiny": torch.full((5, 2), 1e-9)}
    for name, var in vars_.items():
        show(name, nn.GaussianNLLLoss()(mu, target, var), nn.GaussianNLLLoss(full=True, eps=1e-3)(mu, target, var))
    for reduction in ("sum", "none"):
        show(nn.GaussianNLLLoss(reduction=reduction)(mu, target, vars_["column"]))
    var = (torch.rand(5, 1) * 1e-8).requires_grad_()
    g = nn.GaussianNLLLoss(eps=1e-4)(mu, target, var)
    g.backward()
    show(g, g.grad_fn.name(), mu.grad, var.grad)
    show(F.gaussian_nll_loss(mu, target, torch.tensor(0.5)))
    show_outcome(show, lambda: F.gaussian_nll_loss(mu, target, torch.rand(5, 3)))
    show_outcome(show, lambda: F.gaussian_nll_loss(mu, target, torch.rand(4, 2)))
    show_outcome(show, lambda: F.gaussian_nll_loss(mu, target, -torch.ones(5, 2)))
    show_outcome(show, lambda: F.gaussian_nll_loss(mu, target, torch.ones(5, 2), reduction="avg"))
    show_outcome(show, lambda: F.gaussian_nll_loss(mu, target[:, :1], torch.ones(5, 2)))
    show_outcome(show, lambda: F.poisson_nll_loss(rate_log, counts, reduction="avg"))
    show_outcome(show, lambda: F.kl_div(log_p, log_q, reduction="batch"))


def _bce_pos_weight_and_soft_cross_entropy(lib, show):
    """BCEWithLogitsLoss for multi-label segmentation with a pos_weight broadcast over (C, 1, 1), a weight, every
    reduction and extreme logits; CrossEntropyLoss with class-probability targets, label smoothing and class
    weights over an extra spatial dimension; gradients and refusals."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(2910)
    logits = torch.randn(2, 3, 2, 2, requires_grad=True)
    target = (torch.rand(2, 3, 2, 2) > 0.7).float()
    pos_weight = (1 - target).sum((0, 2, 3)) / target.sum((0, 2, 3)).clamp_min(1)
    crit = nn.BCEWithLogitsLoss(pos_weight=pos_weight.view(3, 1, 1))
    loss = crit(logits, target)
    loss.backward()
    show(pos_weight, loss, loss.grad_fn.name(), logits.grad[0, :, 0, 0])
    for reduction in ("sum", "none"):
        show(nn.BCEWithLogitsLoss(weight=torch.tensor([1.0, 0.5]), pos_weight=pos_weight.view(3, 1, 1),
                                  reduction=reduction)(logits.transpose(1, 3), target.transpose(1, 3)).sum())
    extreme = torch.tensor([-100.0, -30.0, 0.0, 30.0, 100.0], requires_grad=True)
    ext_t = torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0])
    e = F.binary_cross_entropy_with_logits(extreme, ext_t, pos_weight=torch.tensor(2.0), reduction="none")
    e.sum().backward()
    show(e, extreme.grad)
    show_outcome(show, lambda: crit(logits, target[:, :2]))
    show_outcome(show, lambda: F.binary_cross_entropy_with_logits(logits, target.long()))
    show_outcome(show, lambda: F.binary_cross_entropy_with_logits(logits, target, pos_weight=torch.ones(2)))
    show_outcome(show, lambda: nn.BCEWithLogitsLoss(pos_weight=torch.ones(2, 1, 3, 1, 1))(logits, target))
    seq_logits = torch.randn(3, 4, 5, requires_grad=True)
    probs = torch.softmax(torch.randn(3, 4, 5) * 2, dim=1)
    cw = torch.tensor([1.0, 2.0, 0.5, 1.0])
    losses = [
        nn.CrossEntropyLoss()(seq_logits, probs),
        nn.CrossEntropyLoss(label_smoothing=0.1)(seq_logits, probs),
        nn.CrossEntropyLoss(weight=cw, label_smoothing=0.2)(seq_logits, probs),
        nn.CrossEntropyLoss(weight=cw, label_smoothing=0.2, reduction="sum")(seq_logits, probs),
        nn.CrossEntropyLoss(weight=cw, reduction="none")(seq_logits, probs),
        nn.CrossEntropyLoss(weight=cw, label_smoothing=0.3, ignore_index=1)(seq_logits, probs),
    ]
    for item in losses:
        show(item)
    sum(item.sum() for item in losses).backward()
    show(seq_logits.grad[0, :, 0], losses[2].grad_fn.name())
    hard = probs.argmax(1)
    show(F.cross_entropy(seq_logits, F.one_hot(hard, 4).permute(0, 2, 1).float(), weight=cw),
         F.cross_entropy(seq_logits, hard, weight=cw))
    show(F.cross_entropy(seq_logits[0, :, 0], probs[0, :, 0], label_smoothing=0.5))
    learned_w = nn.Parameter(torch.ones(4))
    soft_ce = nn.CrossEntropyLoss(weight=learned_w, label_smoothing=0.1)(seq_logits.detach(), probs)
    soft_ce.backward()
    show(soft_ce, learned_w.grad)
    show_outcome(show, lambda: F.cross_entropy(seq_logits, hard, weight=learned_w))
    show_outcome(show, lambda: F.cross_entropy(seq_logits, probs.double()))
    show_outcome(show, lambda: F.cross_entropy(seq_logits, probs[:, :3]))
    show_outcome(show, lambda: F.cross_entropy(seq_logits, probs, weight=torch.ones(5)))
    show_outcome(show, lambda: F.cross_entropy(seq_logits, probs, label_smoothing=-0.1))
    show_outcome(show, lambda: F.cross_entropy(seq_logits, hard.float()))


def _embedding_retrieval_eval(lib, show):
    """Evaluating a trained embedding the way metric-learning notebooks do: a gallery/query split, cosine
    similarities by ``mm`` of normalised rows, ``topk`` with ties broken on sorted scores, mean average precision
    by ``cumsum``, a margin-based contrastive (Hadsell) loss on pairs, and ``pairwise_distance``'s eps and keepdim."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(2911)
    net = nn.Sequential(nn.Linear(4, 6), nn.GELU(), nn.Linear(6, 3, bias=False))  # distances ignore a shift
    labels = torch.arange(10) % 3
    x = torch.randn(10, 4) + labels[:, None] * 1.5
    opt = torch.optim.RMSprop(net.parameters(), lr=0.01)
    i, j = torch.triu_indices(10, 10, offset=1)
    same = (labels[i] == labels[j]).float()
    for step in range(3):
        e = net(x)
        d = F.pairwise_distance(e[i], e[j])
        loss = (same * d.pow(2) + (1 - same) * F.relu(1.0 - d).pow(2)).mean() / 2
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, d.shape, d.grad_fn.name())
    net.eval()
    with torch.inference_mode():
        e = F.normalize(net(x), dim=1)
        query, gallery = e[:4], e[4:]
        sims = query @ gallery.T
        scores, order = sims.sort(dim=1, descending=True)
        rel = (labels[4:][order] == labels[:4, None]).float()
        precision = rel.cumsum(1) / torch.arange(1, 7)
        ap = (precision * rel).sum(1) / rel.sum(1).clamp_min(1)
    show(sims.is_inference(), scores[:, :2], order, ap, ap.mean())
    show(sims.topk(2, dim=1).indices, torch.equal(sims.topk(2, dim=1).values, scores[:, :2]))
    show(F.pairwise_distance(torch.zeros(2, 3), torch.zeros(2, 3)),
         F.pairwise_distance(torch.ones(3), torch.zeros(3), keepdim=True), F.pairwise_distance(e[:2], e[2:4], p=1))
    z = torch.zeros(3, requires_grad=True)
    F.pairwise_distance(z, torch.zeros(3)).backward()
    show(z.grad)
    show_outcome(show, lambda: sims.add_(1))
    show_outcome(show, lambda: F.pairwise_distance(e[:2], e[:3]))


PROGRAMS = [
    _simclr_fill_diagonal,
    _moco_queue_momentum,
    _byol_simsiam_stop_gradient,
    _clip_logit_scale,
    _triplet_mining,
    _arcface_and_supcon,
    _triplet_loss_modules,
    _pairwise_embedding_losses,
    _multi_label_and_class_margins,
    _likelihood_losses,
    _bce_pos_weight_and_soft_cross_entropy,
    _embedding_retrieval_eval,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
