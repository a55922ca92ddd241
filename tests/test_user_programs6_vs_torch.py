"""A sixth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: a DDPM training step (cumprod noise schedule, sinusoidal time
embeddings, GroupNorm/SiLU conv blocks) and a reverse step; SimCLR's NT-Xent and a CLIP-style symmetric loss; a
tabular model with per-column embeddings, bucketized features, BatchNorm1d, pos_weight and ignore_index; a causal
dilated TCN with weight-normalised convolutions and a warmup; a graph network over scatter_reduce/index_reduce_
with every reduction; a noisy top-k mixture of experts with a load-balancing loss; distillation with KLDivLoss's
log_target and reductions; capsule routing; LBFGS with strong Wolfe line search and SparseAdam's refusals; a
custom Function with non-tensor and non-differentiable outputs in a training loop; non-reentrant checkpointing
with hooks counting recomputation; weight-decay parameter groups through a state_dict round trip; quantile
regression and quantile's interpolation modes; a linear-chain CRF (forward algorithm and Viterbi); and image
augmentation (flips, rolls, rot90, padding modes, affine_grid/grid_sample). Everything is drawn from the seeded
global generator (or seeded generators), which is torch's. Where float32 rounding decides the result (LBFGS on
Rosenbrock, a gradient summed over a whole image, a bias before a batch norm), the program does what careful users
do: float64, or no parameter whose gradient is only rounding noise.

Differences these programs found, now fixed (``tests/ops/test_program6_findings_vs_torch.py``):
- ``torch.optim.SparseAdam`` did not exist; it now checks its options as torch's does and refuses the dense
  gradients that are the only kind tracegrad makes;
- ``torch.bucketize``/``searchsorted`` of a non-contiguous tensor (a feature column ``nums[:, 1]``) did not warn,
  once a process, that it is copied to a contiguous one.

Left: sparse tensors (so SparseAdam never steps).
"""

from __future__ import annotations

import copy
import io
import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _diffusion_training_step(lib, show):
    """A DDPM training step: a linear beta schedule with cumprod, per-sample coefficients gathered by timestep,
    sinusoidal time embeddings, a small UNet-ish block (Conv2d, GroupNorm, SiLU, a time projection broadcast over
    the image, a skip connection), MSE on the predicted noise with AdamW and clipping, then one reverse step."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(21)
    T = 50
    betas = torch.linspace(1e-4, 0.02, T)
    alphas = 1.0 - betas
    alphas_cumprod = torch.cumprod(alphas, dim=0)
    alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
    posterior_variance = betas * (1.0 - alphas_cumprod_prev) / (1.0 - alphas_cumprod)
    show(alphas_cumprod[[0, 10, -1]], alphas_cumprod_prev[:3], posterior_variance[:3])

    def timestep_embedding(t, dim):
        half = dim // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
        args = t[:, None].float() * freqs[None]
        return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)

    class Block(nn.Module):
        def __init__(self, cin, cout, tdim):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
            self.norm1 = nn.GroupNorm(4, cout)
            self.time = nn.Linear(tdim, cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
            self.norm2 = nn.GroupNorm(4, cout)
            self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

        def forward(self, x, temb):
            h = F.silu(self.norm1(self.conv1(x)))
            h = h + self.time(temb)[:, :, None, None]
            h = F.silu(self.norm2(self.conv2(h)))
            return h + self.skip(x)

    class TinyUNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.tmlp = nn.Sequential(nn.Linear(16, 32), nn.SiLU(), nn.Linear(32, 32))
            self.down = Block(1, 8, 32)
            self.pool = nn.AvgPool2d(2)
            self.mid = Block(8, 8, 32)
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.out_block = Block(16, 8, 32)
            self.out = nn.Conv2d(8, 1, 1)

        def forward(self, x, t):
            temb = self.tmlp(timestep_embedding(t, 16))
            d = self.down(x, temb)
            m = self.up(self.mid(self.pool(d), temb))
            return self.out(self.out_block(torch.cat([d, m], dim=1), temb))

    model = TinyUNet()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-2)
    x0 = torch.rand(6, 1, 8, 8) * 2 - 1
    for step in range(3):
        t = torch.randint(0, T, (x0.shape[0],))
        noise = torch.randn_like(x0)
        a_bar = alphas_cumprod.gather(0, t).view(-1, 1, 1, 1)
        xt = a_bar.sqrt() * x0 + (1 - a_bar).sqrt() * noise
        loss = F.mse_loss(model(xt, t), noise)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        show(step, t, loss, norm)
    model.eval()
    with torch.no_grad():
        x = torch.randn(2, 1, 8, 8)
        for i in reversed(range(T - 3, T)):
            t = torch.full((2,), i, dtype=torch.long)
            eps = model(x, t)
            mean = (x - betas[i] / (1 - alphas_cumprod[i]).sqrt() * eps) / alphas[i].sqrt()
            x = mean + posterior_variance[i].sqrt() * torch.randn_like(x) if i > 0 else mean
        show(x.clamp(-1, 1).mean(), x.std(), t.dtype)
    show(model.down.norm1, model.tmlp[1], timestep_embedding(torch.tensor([0, 7]), 6))


def _contrastive_infonce(lib, show):
    """SimCLR's NT-Xent over two augmented views (normalised embeddings, a masked self-similarity, labels built
    with arange and cross_entropy), a CLIP-style symmetric loss with a learned, clamped log temperature, and
    all-pairs cosine similarity by broadcasting."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(5)
    encoder = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 8))
    projector = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 4))
    opt = torch.optim.SGD(list(encoder.parameters()) + list(projector.parameters()), lr=0.1, momentum=0.9,
                          nesterov=True)

    def nt_xent(z1, z2, tau=0.5):
        z = F.normalize(torch.cat([z1, z2]), dim=1)
        n = z1.shape[0]
        sim = z @ z.T / tau
        sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), float("-inf"))
        labels = torch.cat([torch.arange(n, 2 * n), torch.arange(n)])
        return F.cross_entropy(sim, labels), (sim.argmax(1) == labels).float().mean()

    x = torch.randn(8, 10)
    for step in range(3):
        v1 = x + 0.1 * torch.randn_like(x)
        v2 = x * (torch.rand_like(x) > 0.2)
        loss, acc = nt_xent(projector(encoder(v1)), projector(encoder(v2)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, acc)

    img = nn.Linear(6, 4)
    txt = nn.Linear(5, 4)
    logit_scale = nn.Parameter(torch.ones([]) * math.log(1 / 0.07))
    a, b = torch.randn(5, 6), torch.randn(5, 5)
    ia, tb = F.normalize(img(a), dim=-1), F.normalize(txt(b), dim=-1)
    scale = logit_scale.exp().clamp(max=100)
    logits = scale * ia @ tb.t()
    labels = torch.arange(5)
    loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
    loss.backward()
    show(loss, logit_scale.grad, img.weight.grad.norm(), scale)
    cos = F.cosine_similarity(ia[:, None, :], tb[None, :, :], dim=-1)
    show(cos.shape, torch.allclose(cos * scale, logits, atol=1e-5), cos.diagonal())
    sim = torch.randn(4, 4)
    sim.fill_diagonal_(-1e9)
    show(sim, F.log_softmax(sim, dim=1).diag())
    show(F.cosine_similarity(torch.zeros(2, 3), torch.ones(2, 3)), F.pairwise_distance(ia, tb, keepdim=True))
    show_outcome(show, lambda: F.cross_entropy(logits, labels.float()))
    show_outcome(show, lambda: F.cross_entropy(logits, labels.int()))


def _tabular_model(lib, show):
    """A tabular classifier: one Embedding per categorical column in a ModuleList, numeric features bucketized
    and standardised, BatchNorm1d and Dropout, BCEWithLogitsLoss with pos_weight and per-element weights, a
    class-weighted CrossEntropyLoss with ignore_index; eval-mode predictions and metrics."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(13)
    cardinalities = [4, 7, 3]
    n = 16
    cats = torch.stack([torch.randint(0, c, (n,)) for c in cardinalities], dim=1)
    nums = torch.randn(n, 3) * torch.tensor([1.0, 10.0, 0.1]) + torch.tensor([0.0, 50.0, 1.0])
    y = (torch.rand(n) < 0.25).float()
    show(cats[:3], y.sum())

    class TabNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.embs = nn.ModuleList(nn.Embedding(c, min(4, (c + 1) // 2)) for c in cardinalities)
            emb_dim = sum(e.embedding_dim for e in self.embs)
            self.bn_num = nn.BatchNorm1d(3, affine=False)
            self.mlp = nn.Sequential(nn.Linear(emb_dim + 3 + 4, 16, bias=False), nn.BatchNorm1d(16), nn.ReLU(),
                                     nn.Dropout(0.3), nn.Linear(16, 1))

        def forward(self, cats, nums):
            embedded = [emb(cats[:, i]) for i, emb in enumerate(self.embs)]
            buckets = torch.bucketize(nums[:, 1].contiguous(), torch.tensor([40.0, 50.0, 60.0]))
            feats = torch.cat(embedded + [self.bn_num(nums), F.one_hot(buckets, 4).float()], dim=1)
            return self.mlp(feats).squeeze(1)

    model = TabNet()
    pos_weight = (y == 0).sum() / (y == 1).sum().clamp(min=1)
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for epoch in range(3):
        model.train()
        logits = model(cats, nums)
        loss = criterion(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(epoch, loss, model.bn_num.running_mean.clone(), model.bn_num.num_batches_tracked.clone())
    model.eval()
    with torch.no_grad():
        probs = torch.sigmoid(model(cats, nums))
        preds = (probs > 0.5).long()
        tp = ((preds == 1) & (y == 1)).sum()
        show(probs, tp, preds.float().mean(), model.mlp[1].running_var[:4])
    logits = torch.randn(n, requires_grad=True)
    weights = torch.rand(n)
    per_elem = F.binary_cross_entropy_with_logits(logits, y, weight=weights, pos_weight=pos_weight,
                                                  reduction="none")
    per_elem.sum().backward()
    show(per_elem, logits.grad)
    multi = torch.randn(6, 3, requires_grad=True)
    target = torch.tensor([0, 2, -100, 1, 2, -100])
    ce = nn.CrossEntropyLoss(weight=torch.tensor([0.2, 1.0, 3.0]), ignore_index=-100)
    out = ce(multi, target)
    out.backward()
    show(out, multi.grad)
    show_outcome(show, lambda: nn.BCEWithLogitsLoss(pos_weight=torch.ones(2))(torch.zeros(4, 3), torch.zeros(4, 3)))
    show_outcome(show, lambda: model.embs[0](torch.tensor([4])))
    show_outcome(show, lambda: model.train()(cats[:1], nums[:1]))


def _causal_tcn_forecasting(lib, show):
    """Time-series forecasting with a temporal convolutional network: dilated Conv1d with left (causal) padding,
    weight-normalised convolutions, residual connections, sliding windows made with Tensor.unfold, a
    warmup LambdaLR and SmoothL1/Huber losses."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(17)
    series = torch.sin(torch.arange(0, 60, dtype=torch.float32) * 0.3) + 0.1 * torch.randn(60)
    windows = series.unfold(0, 13, 2)
    x, y = windows[:, :-1].unsqueeze(1), windows[:, -1]
    show(windows.shape, windows.stride(), x.is_contiguous(), y[:3])

    class CausalConv(nn.Module):
        def __init__(self, cin, cout, k, dilation):
            super().__init__()
            self.pad = (k - 1) * dilation
            self.conv = nn.utils.parametrizations.weight_norm(nn.Conv1d(cin, cout, k, dilation=dilation))

        def forward(self, x):
            return self.conv(F.pad(x, (self.pad, 0)))

    class TCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([CausalConv(1 if d == 1 else 8, 8, 3, d) for d in (1, 2, 4)])
            self.head = nn.Linear(8, 1)

        def forward(self, x):
            h = x
            for layer in self.layers:
                out = F.relu(layer(h))
                h = out + h if h.shape == out.shape else out
            return self.head(h[:, :, -1]).squeeze(-1)

    model = TCN()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    warmup = 3
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup))
    for step in range(5):
        pred = model(x)
        loss = F.smooth_l1_loss(pred, y, beta=0.5)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        show(step, loss, sched.get_last_lr())
    conv = model.layers[1].conv
    show(conv.parametrizations.weight.original0.shape, conv.weight.shape, conv.dilation, conv.padding)
    xs = torch.zeros(1, 1, 12)
    xs[0, 0, 5] = 1.0
    with torch.no_grad():
        resp = model.layers[0](xs)
    show(resp[0, 0], (resp[0, :, :5] == resp[0, :, :1]).all())
    show(F.huber_loss(torch.tensor([0.0, 2.0]), torch.tensor([0.3, -1.0]), delta=0.5),
         nn.HuberLoss(reduction="none")(torch.tensor([0.0, 3.0]), torch.tensor([1.5, 1.0])))
    show_outcome(show, lambda: series.unfold(0, 100, 1))
    show_outcome(show, lambda: nn.Conv1d(1, 2, 3, padding="same", stride=2))
    show(nn.Conv1d(1, 2, 3, padding="same", dilation=2)(torch.ones(1, 1, 6)).shape)


def _graph_neural_net(lib, show):
    """A graph network by hand: messages gathered along edges and aggregated per node with index_add_,
    scatter_reduce's 'mean'/'amax'/'amin'/'prod' (with and without include_self), index_reduce_ and degrees
    from bincount; a two-layer GraphSAGE-style model trained on node labels; gradients through the reductions."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(23)
    num_nodes = 6
    edge_index = torch.tensor([[0, 1, 1, 2, 3, 4, 5, 5, 0], [1, 0, 2, 1, 4, 3, 0, 4, 2]])
    src, dst = edge_index
    deg = torch.bincount(dst, minlength=num_nodes)
    show(deg, deg.dtype)
    x = torch.randn(num_nodes, 4)
    msgs = x[src]
    summed = torch.zeros(num_nodes, 4).index_add_(0, dst, msgs)
    idx = dst[:, None].expand_as(msgs)
    for reduce in ("sum", "mean", "amax", "amin", "prod"):
        for include_self in (True, False):
            out = torch.ones(num_nodes, 4).scatter_reduce(0, idx, msgs, reduce=reduce, include_self=include_self)
            show(reduce, include_self, out)
    show(summed, torch.zeros(num_nodes, 4).index_reduce_(0, dst, msgs, "mean", include_self=False))
    show(torch.full((num_nodes, 4), 5.0).index_reduce_(0, dst, msgs, "amax"))

    class SAGE(nn.Module):
        def __init__(self, cin, cout, aggr):
            super().__init__()
            self.lin_self = nn.Linear(cin, cout)
            self.lin_neigh = nn.Linear(cin, cout, bias=False)
            self.aggr = aggr

        def forward(self, x, edge_index):
            src, dst = edge_index
            m = x.index_select(0, src)
            index = dst.unsqueeze(-1).expand(-1, x.shape[1])
            agg = torch.zeros(x.shape[0], x.shape[1]).scatter_reduce(0, index, m, self.aggr, include_self=False)
            return self.lin_self(x) + self.lin_neigh(agg)

    class GNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = SAGE(4, 8, "mean")
            self.l2 = SAGE(8, 3, "amax")

        def forward(self, x, ei):
            return self.l2(F.elu(self.l1(x, ei)), ei)

    model = GNN()
    labels = torch.tensor([0, 1, 2, 0, 1, 2])
    train_mask = torch.tensor([True, True, False, True, False, True])
    opt = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
    for epoch in range(3):
        out = model(x, edge_index)
        loss = F.cross_entropy(out[train_mask], labels[train_mask])
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(epoch, loss, out.argmax(1))
    leaf = torch.tensor([1.0, 3.0, 3.0, 2.0], requires_grad=True)
    index = torch.tensor([0, 0, 0, 1])
    for reduce in ("amax", "mean", "prod"):
        leaf.grad = None
        torch.zeros(2).scatter_reduce(0, index, leaf, reduce, include_self=False).pow(2).sum().backward()
        show(reduce, leaf.grad)
    show_outcome(show, lambda: torch.zeros(2).scatter_reduce(0, index, leaf, "max"))
    show_outcome(show, lambda: torch.zeros(2).scatter_reduce(0, index, leaf.detach(), "median"))
    show_outcome(show, lambda: torch.zeros(2, 4).index_add_(0, torch.tensor([0, 2]), torch.ones(2, 4)))


def _mixture_of_experts(lib, show):
    """A sparse mixture-of-experts layer: noisy top-k gating (topk, softmax over the kept logits, scatter back
    into a dense gate matrix), tokens dispatched per expert with nonzero/index_select and combined with
    index_add_, and the Switch-style load-balancing auxiliary loss."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(29)

    class MoE(nn.Module):
        def __init__(self, dim=6, n_experts=4, k=2):
            super().__init__()
            self.k, self.n = k, n_experts
            self.gate = nn.Linear(dim, n_experts, bias=False)
            self.noise = nn.Linear(dim, n_experts, bias=False)
            self.experts = nn.ModuleList(nn.Sequential(nn.Linear(dim, 12), nn.GELU(), nn.Linear(12, dim))
                                         for _ in range(n_experts))

        def forward(self, x):
            logits = self.gate(x)
            if self.training:
                logits = logits + torch.randn_like(logits) * F.softplus(self.noise(x))
            top_val, top_idx = logits.topk(self.k, dim=-1)
            top_w = F.softmax(top_val, dim=-1)
            gates = torch.zeros_like(logits).scatter(-1, top_idx, top_w)
            out = torch.zeros_like(x)
            for e, expert in enumerate(self.experts):
                token_idx, slot = torch.nonzero(top_idx == e, as_tuple=True)
                if token_idx.numel() == 0:
                    continue
                weight = top_w[token_idx, slot].unsqueeze(-1)
                out.index_add_(0, token_idx, weight * expert(x.index_select(0, token_idx)))
            probs = F.softmax(logits, dim=-1)
            load = F.one_hot(top_idx[:, 0], self.n).float().mean(0)
            aux = self.n * (probs.mean(0) * load).sum()
            return out, aux, gates

    moe = MoE()
    opt = torch.optim.Adam(moe.parameters(), lr=1e-2)
    x, target = torch.randn(10, 6), torch.randn(10, 6)
    for step in range(3):
        out, aux, gates = moe(x)
        loss = F.mse_loss(out, target) + 0.01 * aux
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, aux, (gates > 0).sum(0), gates.sum(-1))
    show([p.grad is None for p in moe.experts[0].parameters()], moe.noise.weight.grad.abs().sum() > 0)
    moe.eval()
    with torch.no_grad():
        out, aux, gates = moe(x)
    show(out.sum(), aux, gates.argmax(-1))
    vals, ids = torch.tensor([[1.0, 3.0, 3.0, 2.0]]).topk(2, largest=False, sorted=True)
    show(vals, ids, torch.tensor([2.0, 1.0, 2.0]).topk(3).indices, torch.tensor([[5.0, 1.0]]).gather(1, ids[:, :1]))
    show_outcome(show, lambda: torch.randn(3, 4).topk(5))
    show_outcome(show, lambda: torch.zeros(2, 3).scatter(1, torch.tensor([[0], [3]]), 1.0))


def _knowledge_distillation_kl(lib, show):
    """Distillation from a frozen teacher: temperature-softened KLDivLoss with batchmean and log_target, the
    T**2 scaling, a hard-label term with label smoothing; the 'mean' reduction's warning and the other
    reductions of kl_div compared by hand."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(31)
    teacher = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 5)).eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    student = nn.Sequential(nn.Linear(8, 6), nn.ReLU(), nn.Linear(6, 5))
    opt = torch.optim.SGD(student.parameters(), lr=0.2)
    kd = nn.KLDivLoss(reduction="batchmean", log_target=True)
    T, alpha = 3.0, 0.7
    x = torch.randn(12, 8)
    y = torch.randint(0, 5, (12,))
    for step in range(3):
        with torch.no_grad():
            t_logits = teacher(x)
        s_logits = student(x)
        soft = kd(F.log_softmax(s_logits / T, dim=1), F.log_softmax(t_logits / T, dim=1)) * T * T
        hard = F.cross_entropy(s_logits, y, label_smoothing=0.1)
        loss = alpha * soft + (1 - alpha) * hard
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, soft, hard, loss)
    log_p = F.log_softmax(torch.randn(3, 4), dim=1)
    q = F.softmax(torch.randn(3, 4), dim=1)
    by_hand = (q * (q.log() - log_p)).sum() / 3
    show(F.kl_div(log_p, q, reduction="batchmean"), by_hand, F.kl_div(log_p, q.log(), reduction="sum",
                                                                      log_target=True))
    show(F.kl_div(log_p, q, reduction="none").shape, F.kl_div(log_p, torch.zeros(3, 4), reduction="sum"))
    show(F.kl_div(log_p, q))
    show(nn.KLDivLoss()(log_p, q))
    show(teacher.training, student.training, next(teacher.parameters()).requires_grad)
    show_outcome(show, lambda: F.kl_div(log_p, q, reduction="avg"))


def _capsule_routing(lib, show):
    """A capsule layer with dynamic routing by agreement: the squash non-linearity, prediction vectors from
    a per-capsule weight via matmul with broadcasting, three routing iterations of softmax over the output
    capsules, the margin loss on capsule lengths, and a backward through the routing loop."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(37)

    def squash(s, dim=-1, eps=1e-8):
        sq = (s ** 2).sum(dim=dim, keepdim=True)
        return sq / (1 + sq) * s / torch.sqrt(sq + eps)

    class Caps(nn.Module):
        def __init__(self, n_in=6, d_in=4, n_out=3, d_out=5, iters=3):
            super().__init__()
            self.W = nn.Parameter(0.1 * torch.randn(1, n_in, n_out, d_out, d_in))
            self.iters = iters

        def forward(self, u):
            u_hat = (self.W @ u[:, :, None, :, None]).squeeze(-1)
            b = torch.zeros(u_hat.shape[:3])
            for it in range(self.iters):
                c = F.softmax(b, dim=2)
                v = squash((c.unsqueeze(-1) * u_hat).sum(dim=1))
                if it < self.iters - 1:
                    b = b + (u_hat * v.unsqueeze(1)).sum(-1)
            return v, c

    caps = Caps()
    opt = torch.optim.Adam(caps.parameters(), lr=0.05)
    u = squash(torch.randn(4, 6, 4))
    labels = F.one_hot(torch.tensor([0, 2, 1, 2]), 3).float()
    for step in range(3):
        v, c = caps(u)
        lengths = v.norm(dim=-1)
        margin = labels * F.relu(0.9 - lengths) ** 2 + 0.5 * (1 - labels) * F.relu(lengths - 0.1) ** 2
        loss = margin.sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, lengths, c[0, 0])
    show(caps.W.grad.shape, v.shape, squash(torch.zeros(2, 3)), torch.linalg.vector_norm(v, dim=-1).argmax(1))
    show(F.softmax(torch.tensor([[1.0, float("-inf")], [float("-inf"), float("-inf")]]), dim=1))


def _lbfgs_and_sparse_adam(lib, show):
    """Full-batch optimisation with LBFGS: a closure on the Rosenbrock function with strong Wolfe line search,
    the optimizer's state counters, a logistic regression fitted in a few steps, LBFGS's refusal of several
    parameter groups, and SparseAdam's refusal of dense gradients."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(41)
    xy = torch.tensor([-1.5, 2.0], dtype=torch.float64, requires_grad=True)  # (float32 is chaotic here)
    opt = torch.optim.LBFGS([xy], lr=1, max_iter=20, history_size=5, line_search_fn="strong_wolfe")
    calls = []

    def closure():
        opt.zero_grad()
        loss = (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] ** 2) ** 2
        loss.backward()
        calls.append(loss.item())
        return loss

    for step in range(3):
        loss = opt.step(closure)
        show(step, loss, xy.detach().clone(), len(calls))
    state = opt.state[xy]
    show(sorted(state), state["func_evals"], state["n_iter"], len(state["old_dirs"]))
    X = torch.randn(30, 3)
    y = (X @ torch.tensor([1.0, -2.0, 0.5]) > 0).float()
    clf = nn.Linear(3, 1)
    opt2 = torch.optim.LBFGS(clf.parameters(), lr=0.5, max_iter=10, tolerance_grad=1e-9)

    def closure2():
        opt2.zero_grad()
        loss = F.binary_cross_entropy_with_logits(clf(X).squeeze(1), y) + 1e-2 * clf.weight.pow(2).sum()
        loss.backward()
        return loss

    for step in range(2):
        show(step, opt2.step(closure2), clf.weight.detach().clone())
    show(opt2.state_dict()["param_groups"][0]["line_search_fn"], opt2.defaults["history_size"])
    show_outcome(show, lambda: torch.optim.LBFGS([{"params": [xy]}, {"params": [clf.bias]}]))
    xy = torch.tensor([-1.5, 2.0], requires_grad=True)
    show_outcome(show, lambda: torch.optim.LBFGS([xy], line_search_fn="armijo").step(closure))
    emb = nn.Embedding(4, 2)
    sparse_opt = torch.optim.SparseAdam(emb.parameters(), lr=0.1)
    show(sparse_opt.step(), sparse_opt.defaults, sparse_opt)
    emb(torch.tensor([1, 2])).sum().backward()
    show_outcome(show, lambda: sparse_opt.step())
    show(len(sparse_opt.state), emb.weight.grad.is_sparse)
    show_outcome(show, lambda: torch.optim.SparseAdam([torch.zeros(2, requires_grad=True)], lr=-1))
    show_outcome(show, lambda: torch.optim.SparseAdam([torch.zeros(2, requires_grad=True)], betas=(0.9, 1.0)))
    show_outcome(show, lambda: torch.optim.SparseAdam([nn.Parameter(torch.zeros(2, dtype=torch.complex64))]))


def _custom_function_non_tensor_outputs(lib, show):
    """An autograd.Function with several outputs used inside a training loop: a differentiable value, integer
    indices marked non-differentiable, a Python number passed through, set_materialize_grads(False) with None
    gradients, needs_input_grad, and save_for_backward of an output."""
    torch, nn = lib, lib.nn
    torch.manual_seed(43)

    class SortedSoftmax(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            y = torch.softmax(x * scale, dim=-1)
            values, order = y.sort(dim=-1, descending=True)
            ctx.mark_non_differentiable(order)
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(y, order)
            ctx.scale = scale
            return values, order, float(y.max())

        @staticmethod
        def backward(ctx, grad_values, grad_order, grad_number):
            y, order = ctx.saved_tensors
            calls.append((grad_values is None, grad_order is None, grad_number, ctx.needs_input_grad))
            if grad_values is None:
                return None, None
            grad_y = torch.zeros_like(y).scatter(-1, order, grad_values)
            grad_x = y * (grad_y - (grad_y * y).sum(-1, keepdim=True)) * ctx.scale
            return grad_x, None

    calls = []
    lin = nn.Linear(4, 5)
    opt = torch.optim.SGD(lin.parameters(), lr=0.5)
    x = torch.randn(3, 4)
    for step in range(3):
        values, order, top = SortedSoftmax.apply(lin(x), 2.0)
        loss = -values[:, 0].log().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, order, order.requires_grad, type(top).__name__, values.grad_fn.name())
    show(calls)
    values, order, top = SortedSoftmax.apply(lin(x), 2.0)
    show(order.grad_fn, order.dtype, values.requires_grad)
    show_outcome(show, lambda: order.float().sum().backward())
    ref = torch.softmax(lin(x) * 2.0, dim=-1).sort(dim=-1, descending=True)
    show(torch.allclose(values, ref.values), torch.equal(order, ref.indices))
    z = torch.randn(2, 3, requires_grad=True)
    gz = torch.autograd.grad(SortedSoftmax.apply(z, 1.0)[0][:, 1].sum(), z)[0]
    show(gz, calls[-1])


def _checkpointed_deep_mlp(lib, show):
    """A deep residual MLP with torch.utils.checkpoint (non-reentrant) on every block, forward hooks counting
    how often each block runs (recomputation runs it again in backward), dropout inside a checkpoint replayed
    with the same mask, checkpoint_sequential, and the gradients against the plain model."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    from importlib import import_module
    checkpoint = import_module(lib.__name__ + ".utils.checkpoint")
    torch.manual_seed(47)

    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.fc = nn.Linear(d, d)
            self.drop = nn.Dropout(0.2)

        def forward(self, x):
            return x + self.drop(F.gelu(self.fc(x)))

    blocks = nn.ModuleList(Block(6) for _ in range(4))
    head = nn.Linear(6, 1)
    counts = {}
    for i, b in enumerate(blocks):
        b.register_forward_hook(lambda m, inp, out, i=i: counts.__setitem__(i, counts.get(i, 0) + 1))

    def run(x, use_ckpt):
        for b in blocks:
            x = checkpoint.checkpoint(b, x, use_reentrant=False) if use_ckpt else b(x)
        return head(x).sum()

    x = torch.randn(5, 6, requires_grad=True)
    torch.manual_seed(1)
    loss = run(x, True)
    show(dict(counts), loss)
    loss.backward()
    show(dict(counts), x.grad.norm())
    ck_grads = [b.fc.weight.grad.clone() for b in blocks]
    for p in list(blocks.parameters()) + list(head.parameters()):
        p.grad = None
    x.grad = None
    torch.manual_seed(1)
    plain = run(x, False)
    plain.backward()
    show(plain, all(torch.allclose(a, b.fc.weight.grad) for a, b in zip(ck_grads, blocks)), x.grad.norm())
    seq = nn.Sequential(*[nn.Sequential(nn.Linear(6, 6), nn.Tanh()) for _ in range(4)])
    inp = torch.randn(3, 6, requires_grad=True)
    out = checkpoint.checkpoint_sequential(seq, 2, inp, use_reentrant=False)
    out.sum().backward()
    show(out.grad_fn is not None, inp.grad.sum(), seq[0][0].weight.grad.sum())
    with torch.no_grad():
        show(checkpoint.checkpoint(blocks[0].fc, torch.ones(1, 6), use_reentrant=False).requires_grad)
    show_outcome(show, lambda: checkpoint.checkpoint(blocks[0].fc, torch.ones(1, 6)))
    show_outcome(show, lambda: checkpoint.checkpoint(blocks[0].fc, torch.ones(1, 6), use_reentrant=False,
                                                     bogus=1))


def _weight_decay_param_groups(lib, show):
    """The usual AdamW setup that exempts biases and norm weights from weight decay, with a different learning
    rate for the head; a state_dict round trip into a fresh optimizer (state keyed by position), add_param_group,
    and the errors of loading a mismatched state dict or listing a parameter twice."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(53)
    model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 3))

    def make_groups(model):
        decay, no_decay = [], []
        for name, p in model.named_parameters():
            if name.startswith("3."):
                continue
            (no_decay if p.ndim < 2 or "bias" in name else decay).append(p)
        head = list(model[3].parameters())
        return [{"params": decay, "weight_decay": 0.1},
                {"params": no_decay, "weight_decay": 0.0},
                {"params": head, "lr": 3e-3, "weight_decay": 0.05}]

    opt = torch.optim.AdamW(make_groups(model), lr=1e-3, betas=(0.9, 0.95))
    show([len(g["params"]) for g in opt.param_groups], [g["lr"] for g in opt.param_groups])
    x, y = torch.randn(10, 4), torch.randint(0, 3, (10,))
    for step in range(3):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss)
    sd = opt.state_dict()
    show(sorted(sd["state"]), sd["param_groups"][2], sorted(sd["state"][0]), sd["state"][0]["step"])
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "opt": sd}, buf)
    buf.seek(0)
    ckpt = torch.load(buf)
    model2 = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 3))
    model2.load_state_dict(ckpt["model"])
    opt2 = torch.optim.AdamW(make_groups(model2), lr=1e-3, betas=(0.9, 0.95))
    opt2.load_state_dict(ckpt["opt"])
    for m, o in ((model, opt), (model2, opt2)):
        loss = F.cross_entropy(m(x), y)
        o.zero_grad()
        loss.backward()
        o.step()
    show(torch.equal(model[0].weight, model2[0].weight), opt2.state[model2[3].bias]["exp_avg_sq"])
    extra = nn.Parameter(torch.ones(2))
    opt2.add_param_group({"params": extra, "lr": 0.5})
    show(len(opt2.param_groups), opt2.param_groups[-1]["weight_decay"], opt2.param_groups[-1]["betas"])
    show_outcome(show, lambda: opt2.add_param_group({"params": [extra]}))
    show_outcome(show, lambda: opt.load_state_dict({"state": {}, "param_groups": sd["param_groups"][:2]}))
    bad = copy.deepcopy(sd)
    bad["param_groups"][0]["params"] = bad["param_groups"][0]["params"][:1]
    show_outcome(show, lambda: opt.load_state_dict(bad))
    show_outcome(show, lambda: torch.optim.AdamW([{"params": model[0].parameters()},
                                                  {"params": [model[0].weight]}]))


def _quantile_regression(lib, show):
    """Quantile regression: a pinball loss for several quantiles at once trained with Adam, then
    torch.quantile/nanquantile with each interpolation mode, keepdim, a tensor of quantiles, gradients through
    quantile, and its errors."""
    torch, nn = lib, lib.nn
    torch.manual_seed(59)
    qs = torch.tensor([0.1, 0.5, 0.9])

    def pinball(pred, target, q):
        diff = target.unsqueeze(-1) - pred
        return torch.maximum(q * diff, (q - 1) * diff).mean()

    model = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    x = torch.rand(40, 1) * 4
    y = x.squeeze(1) + torch.randn(40) * (0.2 + 0.3 * x.squeeze(1))
    for step in range(4):
        loss = pinball(model(x), y, qs)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss)
    with torch.no_grad():
        pred = model(x)
    show((y.unsqueeze(1) < pred).float().mean(0), pred[:2])
    data = torch.tensor([[1.0, 7.0, 3.0, 4.0], [2.0, 2.0, 9.0, 5.0]])
    for mode in ("linear", "lower", "higher", "midpoint", "nearest"):
        show(mode, torch.quantile(data, 0.4, dim=1, interpolation=mode),
             torch.quantile(data, qs, dim=1, keepdim=True, interpolation=mode))
    show(torch.quantile(data, 0.5), data.quantile(torch.tensor([0.25, 0.75]), dim=0).shape,
         torch.quantile(torch.tensor([1.0, 2.0, 3.0, 4.0]), 0.5, interpolation="nearest"))
    nan_data = torch.tensor([[1.0, float("nan"), 3.0], [float("nan")] * 3])
    show(torch.nanquantile(nan_data, 0.5, dim=1), torch.quantile(nan_data, 0.5, dim=1),
         torch.nanquantile(nan_data, qs, dim=1, interpolation="higher"))
    w = torch.tensor([3.0, 1.0, 2.0, 5.0], requires_grad=True)
    torch.quantile(w, 0.3).backward()
    show(w.grad)
    show(torch.median(torch.tensor([1.0, 2.0, 3.0, 4.0])), torch.tensor([[1.0, 5.0, 2.0, 2.0]]).median(1))
    show_outcome(show, lambda: torch.quantile(data, 1.5))
    show_outcome(show, lambda: torch.quantile(data, 0.5, interpolation="cubic"))
    show_outcome(show, lambda: torch.quantile(data.long(), 0.5))
    show_outcome(show, lambda: torch.quantile(data, torch.tensor([[0.5]])))
    show_outcome(show, lambda: torch.quantile(data, qs.double()))


def _crf_forward_and_viterbi(lib, show):
    """A linear-chain CRF: the forward algorithm as a logsumexp dynamic program over a batch with a mask, the
    gold path score with gather, the negative log likelihood trained with Adam, Viterbi decoding with max and
    back-pointers, and the check that the gradient of log Z is the expected transition count."""
    torch, nn = lib, lib.nn
    torch.manual_seed(61)
    B, L, K = 3, 5, 4
    emissions = nn.Parameter(torch.randn(B, L, K))
    transitions = nn.Parameter(0.1 * torch.randn(K, K))
    start = nn.Parameter(torch.zeros(K))
    tags = torch.randint(0, K, (B, L))
    lengths = torch.tensor([5, 3, 4])
    mask = torch.arange(L)[None, :] < lengths[:, None]

    def log_partition():
        alpha = start + emissions[:, 0]
        for t in range(1, L):
            nxt = torch.logsumexp(alpha.unsqueeze(2) + transitions.unsqueeze(0), dim=1) + emissions[:, t]
            alpha = torch.where(mask[:, t:t + 1], nxt, alpha)
        return torch.logsumexp(alpha, dim=1)

    def gold_score():
        score = start[tags[:, 0]] + emissions[:, 0].gather(1, tags[:, :1]).squeeze(1)
        for t in range(1, L):
            step = transitions[tags[:, t - 1], tags[:, t]] + emissions[:, t].gather(1, tags[:, t:t + 1]).squeeze(1)
            score = score + step * mask[:, t]
        return score

    opt = torch.optim.Adam([emissions, transitions, start], lr=0.1)
    for it in range(3):
        nll = (log_partition() - gold_score()).mean()
        opt.zero_grad()
        nll.backward()
        opt.step()
        show(it, nll, transitions.grad.sum(), start.grad)

    with torch.no_grad():
        score = start + emissions[:, 0]
        history = []
        for t in range(1, L):
            best, idx = (score.unsqueeze(2) + transitions).max(dim=1)
            history.append(idx)
            score = torch.where(mask[:, t:t + 1], best + emissions[:, t], score)
        best_score, last = score.max(dim=1)
        paths = [last]
        for t in range(L - 1, 0, -1):
            prev = history[t - 1].gather(1, paths[-1].unsqueeze(1)).squeeze(1)
            paths.append(torch.where(mask[:, t], prev, paths[-1]))
        path = torch.stack(paths[::-1], dim=1)
    show(best_score, path, path.masked_fill(~mask, -1))
    transitions.grad = None
    log_partition().sum().backward()
    show(transitions.grad, transitions.grad.sum(), (lengths - 1).sum())
    show(torch.logsumexp(torch.full((2, 3), float("-inf")), dim=1), torch.logsumexp(torch.tensor([]), 0))
    show(torch.tensor([[1.0, 3.0, 3.0]]).max(dim=1), torch.tensor([[2, 2, 1]]).max(1, keepdim=True))


def _image_augmentation(lib, show):
    """Image augmentation by hand on a batch: flips, rolls and rot90 (negative k, other dims), random crops
    with explicit generators, padding modes (reflect, replicate, circular, constant), a random rotation and
    scale via affine_grid and grid_sample with each padding mode and align_corners, and cutout by masking."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(67)
    img = torch.arange(2 * 3 * 4 * 5, dtype=torch.float32).reshape(2, 3, 4, 5) / 10
    show(img.flip(-1)[0, 0], torch.fliplr(img[0, 0]), torch.flipud(img[0, 0]))
    show(img.roll(shifts=(1, -2), dims=(2, 3))[0, 0], torch.roll(img[0, 0], 3))
    show(torch.rot90(img, 1, (2, 3)).shape, torch.rot90(img[0, 0], -1), torch.rot90(img[0, 0], 2, (1, 0)),
         torch.rot90(img[0, 0], 5))
    gen = torch.Generator().manual_seed(2)
    pad = F.pad(img, (2, 2, 2, 2), mode="reflect")
    i, j = torch.randint(0, 5, (2,), generator=gen).tolist()
    crop = pad[:, :, i:i + 4, j:j + 5]
    show(i, j, crop[0, 0], torch.rand(1, generator=gen))
    for mode in ("reflect", "replicate", "circular", "constant"):
        show(mode, F.pad(img[:1, :1], (1, 2, 2, 1), mode=mode)[0, 0])
    show(F.pad(img[0, 0], (1, 1), value=-1.0), F.pad(img, (-1, -1, 0, 0)).shape)
    angle = torch.tensor([0.3, -0.5])
    scale = torch.tensor([1.0, 0.8])
    cos, sin = torch.cos(angle) * scale, torch.sin(angle) * scale
    theta = torch.stack([torch.stack([cos, -sin, torch.tensor([0.1, 0.0])], 1),
                         torch.stack([sin, cos, torch.tensor([0.0, -0.2])], 1)], 1)
    for align in (False, True):
        grid = F.affine_grid(theta, img.shape, align_corners=align)
        for padding in ("zeros", "border", "reflection"):
            out = F.grid_sample(img, grid, mode="bilinear", padding_mode=padding, align_corners=align)
            show(align, padding, out[0, 0], out.sum())
    theta64 = theta.double().requires_grad_()
    grid = F.affine_grid(theta64, img.shape, align_corners=False)
    F.grid_sample(img.double(), grid, padding_mode="border", align_corners=False).sum().backward()
    show(theta64.grad)
    box = torch.zeros(4, 5, dtype=torch.bool)
    box[1:3, 2:4] = True
    cut = img.masked_fill(box, 0.0)
    show(cut[1, 2], (cut == 0).sum(), img.transpose(-1, -2).flip(-1).equal(torch.rot90(img, -1, (2, 3))))
    show_outcome(show, lambda: F.pad(img, (5, 5, 0, 0), mode="reflect"))
    show_outcome(show, lambda: F.pad(img[0, 0], (1, 1), mode="reflect"))
    show_outcome(show, lambda: torch.rot90(img, 1, (0, 0)))
    show_outcome(show, lambda: F.affine_grid(theta, (2, 3, 4)))
    show_outcome(show, lambda: F.grid_sample(img, torch.zeros(2, 4, 5, 2), mode="bicubic", padding_mode="mirror"))


PROGRAMS = [
    _diffusion_training_step,
    _contrastive_infonce,
    _tabular_model,
    _causal_tcn_forecasting,
    _graph_neural_net,
    _mixture_of_experts,
    _knowledge_distillation_kl,
    _capsule_routing,
    _lbfgs_and_sparse_adam,
    _custom_function_non_tensor_outputs,
    _checkpointed_deep_mlp,
    _weight_decay_param_groups,
    _quantile_regression,
    _crf_forward_and_viterbi,
    _image_augmentation,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
