"""A thirteenth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: reinforcement-learning and classic NLP/recommender
notebooks. PPO with GAE computed backwards in a loop, the clipped surrogate, value clipping, an entropy bonus and
minibatches from a seeded randperm; DQN with a replay buffer of tensors, a target network synced by
load_state_dict and soft-updated in place under no_grad, Double-DQN targets gathered by argmax, Huber loss,
epsilon-greedy draws and a checkpoint (the whole agent with its lambda schedule refused, then state dicts, the
replay buffer and a generator's state through a BytesIO); SAC's tanh-squashed Normal policy with the log-det
correction beside REINFORCE's sample and rsample; a Bahdanau-attention GRU decoder with beam search bookkeeping (topk over flattened beams, floor division
and remainder, hidden states reordered by index_select); BLEU computed with unique/clamp/min; a two-tower
recommender with in-batch negatives, BPR through logsigmoid and hit-rate@k with topk and isin; a char-level CNN
classifier with max over time; word2vec updates by hand with index_add_; TF-IDF with bincount/scatter_add_ and
cosine similarity; a batch-first TransformerDecoder decoded greedily under inference_mode; invalid-action masking
with Categorical logits of -inf; and Thompson sampling with Beta posteriors. Everything is drawn from the seeded
global generator (or seeded generators), which is torch's; values are compared to a tolerance (matrix products
are not bit for bit, nor are MKL's float32 exp/log/sqrt and Sleef's tanh).

Differences these programs found, now fixed (``tests/ops/test_program13_findings_vs_torch.py``):
- ``torch.save`` of something C pickle cannot name (the whole agent with its lambda epsilon schedule, a model
  class defined inside a function) raised the Python-level pickler's ``PicklingError: Can't pickle <function
  ...>: it's not found as ...`` where torch, pickling with C pickle, raises ``AttributeError: Can't pickle local
  object '...'``;
- ``torch.load`` of an empty file said ``EOFError: Ran out of input`` where torch's weights-only unpickler raises
  a bare ``EOFError``.

Left: ``torch.load`` (weights-only) of bytes that are no pickle at all (a text or ``.npy`` file) fails in C
pickle's words (``UnpicklingError: invalid load key, 'n'.``) where torch's own Python unpickler says "Unsupported
operand 110" inside its long "Weights only load failed" message; sparse tensors (TF-IDF with
``sparse_coo_tensor``, ``Embedding(sparse=True)``) do not exist.
"""

from __future__ import annotations

import copy
import io
import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _ppo_with_gae(lib, show):
    """PPO on random rollouts: GAE computed backwards in a Python loop, advantages normalised, the clipped
    surrogate with ratio = exp(logp - old_logp), a clipped value loss, an entropy bonus, minibatches from a seeded
    randperm, clip_grad_norm_ and the approximate KL and clip fraction a training log prints."""
    torch, nn = lib, lib.nn
    D = torch.distributions
    torch.manual_seed(130)
    T, obs_dim, n_actions = 16, 4, 3
    gamma, lam, clip, vf_clip = 0.99, 0.95, 0.2, 0.2

    class Agent(nn.Module):
        def __init__(self):
            super().__init__()
            self.actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
            self.critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))
            nn.init.orthogonal_(self.actor[2].weight, gain=0.01)
            nn.init.constant_(self.actor[2].bias, 0.0)

        def forward(self, obs):
            return D.Categorical(logits=self.actor(obs)), self.critic(obs).squeeze(-1)

    agent = Agent()
    opt = torch.optim.Adam(agent.parameters(), lr=3e-4, eps=1e-5)
    obs = torch.randn(T, obs_dim)
    with torch.no_grad():
        dist, values = agent(obs)
        actions = dist.sample()
        old_logp = dist.log_prob(actions)
    rewards = (actions == 2).float() + 0.1 * torch.randn(T)
    dones = torch.zeros(T)
    dones[7] = 1.0
    next_value = torch.tensor(0.3)
    advantages = torch.zeros(T)
    last = 0.0
    for t in reversed(range(T)):
        nonterminal = 1.0 - dones[t]
        nxt = next_value if t == T - 1 else values[t + 1]
        delta = rewards[t] + gamma * nxt * nonterminal - values[t]
        last = delta + gamma * lam * nonterminal * last
        advantages[t] = last
    returns = advantages + values
    show(actions, advantages, returns.grad_fn, advantages.dtype)
    for epoch in range(2):
        perm = torch.randperm(T)
        for mb in perm.chunk(2):
            dist, new_values = agent(obs[mb])
            logp = dist.log_prob(actions[mb])
            adv = advantages[mb]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            ratio = torch.exp(logp - old_logp[mb])
            surrogate = torch.min(ratio * adv, torch.clamp(ratio, 1 - clip, 1 + clip) * adv)
            v_clipped = values[mb] + (new_values - values[mb]).clamp(-vf_clip, vf_clip)
            v_loss = 0.5 * torch.max((new_values - returns[mb]) ** 2, (v_clipped - returns[mb]) ** 2).mean()
            entropy = dist.entropy().mean()
            loss = -surrogate.mean() + 0.5 * v_loss - 0.01 * entropy
            opt.zero_grad()
            loss.backward()
            norm = nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
            opt.step()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - (logp - old_logp[mb])).mean()
                clip_frac = ((ratio - 1).abs() > clip).float().mean()
            show(epoch, mb, round(loss.item(), 6), norm, approx_kl, clip_frac, ratio.grad_fn.name())
    show(agent.actor[2].weight.grad.abs().sum(), opt.state_dict()["state"][0]["step"])


def _dqn_replay_and_target(lib, show):
    """DQN with a replay buffer of preallocated tensors, epsilon-greedy from a seeded torch.rand, a target
    network synced by load_state_dict and soft-updated with lerp_/mul_/add_ under no_grad, Q-values gathered by
    actions, Double-DQN targets from the online network's argmax, and smooth_l1/Huber losses."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(131)
    capacity, obs_dim, n_actions, batch = 32, 3, 4, 8
    states = torch.zeros(capacity, obs_dim)
    acts = torch.zeros(capacity, dtype=torch.long)
    rews = torch.zeros(capacity)
    nexts = torch.zeros(capacity, obs_dim)
    dones = torch.zeros(capacity, dtype=torch.bool)
    q_net = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU(), nn.Linear(16, n_actions))
    target = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU(), nn.Linear(16, n_actions))
    show(target.load_state_dict(q_net.state_dict()))
    target.requires_grad_(False)
    opt = torch.optim.RMSprop(q_net.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(5)
    s = torch.randn(obs_dim)
    for step in range(capacity):
        eps = max(0.1, 1.0 - step / 20)
        if torch.rand(1, generator=gen).item() < eps:
            a = torch.randint(n_actions, (1,), generator=gen).item()
        else:
            with torch.no_grad():
                a = q_net(s).argmax().item()
        s2 = s + 0.1 * torch.randn(obs_dim)
        i = step % capacity
        states[i], acts[i], rews[i], nexts[i], dones[i] = s, a, float(a == 1) - 0.05, s2, step % 11 == 10
        s = torch.randn(obs_dim) if dones[i] else s2
    show(acts.bincount(minlength=n_actions), dones.sum(), rews[:5])
    gamma, tau = 0.9, 0.05
    for update in range(3):
        idx = torch.randint(0, capacity, (batch,))
        q = q_net(states[idx]).gather(1, acts[idx].unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            best = q_net(nexts[idx]).argmax(dim=1, keepdim=True)
            q_next = target(nexts[idx]).gather(1, best).squeeze(1)
            y = rews[idx] + gamma * q_next * (~dones[idx]).float()
        loss = F.smooth_l1_loss(q, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for tp, p in zip(target.parameters(), q_net.parameters()):
                tp.lerp_(p, tau)
        show(update, idx, q.grad_fn.name(), y, round(loss.item(), 6), F.huber_loss(q, y, delta=0.5))
    with torch.no_grad():
        for tp, p in zip(target.parameters(), q_net.parameters()):
            tp.mul_(1 - tau).add_(p, alpha=tau)
    show(target[2].bias, target[2].bias.requires_grad, q_net[2].bias.requires_grad)
    show(nn.HuberLoss(reduction="none", delta=2.0)(torch.tensor([0.0, 1.0, 5.0]), torch.zeros(3)))
    show_outcome(show, lambda: q_net(states).gather(1, acts))
    show_outcome(show, lambda: target.load_state_dict({"0.weight": torch.zeros(16, obs_dim)}))
    agent = {"q": q_net, "epsilon": lambda step: max(0.1, 1.0 - step / 20)}
    show_outcome(show, lambda: torch.save(agent, io.BytesIO()))
    buffer = io.BytesIO()
    torch.save({"q": q_net.state_dict(), "target": target.state_dict(), "opt": opt.state_dict(),
                "replay": (states, acts, rews, nexts, dones), "rng": gen.get_state()}, buffer)
    buffer.seek(0)
    restored = torch.load(buffer)
    fresh = copy.deepcopy(q_net)
    show(fresh.load_state_dict(restored["target"]), torch.equal(fresh[2].bias, target[2].bias),
         restored["replay"][1][:6], restored["opt"]["state"][0]["square_avg"].shape)
    show(torch.equal(torch.rand(2, generator=torch.Generator().set_state(restored["rng"])), torch.rand(2, generator=gen)))
    show_outcome(show, lambda: torch.load(io.BytesIO()))  # (a checkpoint whose save never finished)


def _sac_squashed_gaussian(lib, show):
    """SAC's actor: a Normal policy whose rsample is squashed by tanh, log-prob summed over action dims with the
    log-det correction (the numerically stable softplus form beside 1 - tanh^2), twin Q critics with min, and the
    automatic temperature; then REINFORCE's sample (no path to the parameters) against rsample."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    D = torch.distributions
    torch.manual_seed(132)
    obs_dim, act_dim, batch = 5, 2, 6

    class Actor(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU())
            self.mu = nn.Linear(32, act_dim)
            self.log_std = nn.Linear(32, act_dim)

        def forward(self, obs):
            h = self.body(obs)
            log_std = self.log_std(h).clamp(-20, 2)
            dist = D.Normal(self.mu(h), log_std.exp())
            u = dist.rsample()
            a = torch.tanh(u)
            logp = dist.log_prob(u).sum(-1)
            logp_stable = logp - (2 * (math.log(2) - u - F.softplus(-2 * u))).sum(-1)
            logp_naive = logp - torch.log(1 - a.pow(2) + 1e-6).sum(-1)
            return a, logp_stable, logp_naive

    actor = Actor()
    critics = nn.ModuleList(nn.Sequential(nn.Linear(obs_dim + act_dim, 32), nn.ReLU(), nn.Linear(32, 1))
                            for _ in range(2))
    log_alpha = torch.zeros(1, requires_grad=True)
    target_entropy = -float(act_dim)
    a_opt = torch.optim.Adam(actor.parameters(), lr=3e-4)
    alpha_opt = torch.optim.Adam([log_alpha], lr=3e-4)
    obs = torch.randn(batch, obs_dim)
    for step in range(2):
        a, logp, naive = actor(obs)
        sa = torch.cat([obs, a], dim=-1)
        q = torch.min(critics[0](sa), critics[1](sa)).squeeze(-1)
        alpha = log_alpha.exp().detach()
        actor_loss = (alpha * logp - q).mean()
        a_opt.zero_grad()
        actor_loss.backward()
        a_opt.step()
        alpha_loss = -(log_alpha * (logp.detach() + target_entropy)).mean()
        alpha_opt.zero_grad()
        alpha_loss.backward()
        alpha_opt.step()
        show(step, a, logp, (logp - naive).abs().max() < 1e-3, actor_loss, log_alpha)
    show(actor.log_std.weight.grad.abs().sum(), critics[0][2].weight.grad)

    mu = torch.zeros(3, requires_grad=True)
    policy = D.Normal(mu, torch.ones(3))
    sampled, reparam = policy.sample(), policy.rsample()
    show(sampled.requires_grad, sampled.grad_fn, reparam.grad_fn.name())
    reinforce = -(policy.log_prob(sampled).sum() * 2.0)
    reinforce.backward()
    show(mu.grad, policy.log_prob(sampled).grad_fn.name())
    show(D.Normal(torch.zeros(2), torch.ones(2)).sample((3,)).shape, policy.entropy().sum())
    show_outcome(show, lambda: D.Normal(torch.zeros(2), torch.ones(2)).log_prob(torch.zeros(3)))


def _bahdanau_beam_search(lib, show):
    """A GRU decoder with additive (Bahdanau) attention over padded encoder states (bmm, softmax, masked_fill),
    one teacher-forced training step, then beam search: log-probs added to beam scores, topk over the flattened
    beams, the beam index by floor division and the token by remainder, hidden states reordered by index_select."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(133)
    vocab, d, src_len, bos, eos = 9, 8, 5, 1, 2

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.W = nn.Linear(d, d, bias=False)
            self.U = nn.Linear(d, d)
            self.v = nn.Linear(d, 1, bias=False)

        def forward(self, hidden, enc, mask):
            scores = self.v(torch.tanh(self.W(hidden).unsqueeze(1) + self.U(enc))).squeeze(-1)
            scores = scores.masked_fill(~mask, float("-inf"))
            weights = F.softmax(scores, dim=-1)
            return torch.bmm(weights.unsqueeze(1), enc).squeeze(1), weights

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, d)
            self.attn = Attention()
            self.cell = nn.GRUCell(2 * d, d)
            self.out = nn.Linear(2 * d, vocab)

        def step(self, token, hidden, enc, mask):
            context, weights = self.attn(hidden, enc, mask)
            hidden = self.cell(torch.cat([self.embed(token), context], -1), hidden)
            return F.log_softmax(self.out(torch.cat([hidden, context], -1)), -1), hidden, weights

    dec = Decoder()
    enc = torch.randn(2, src_len, d)
    lengths = torch.tensor([5, 3])
    mask = torch.arange(src_len)[None] < lengths[:, None]
    tgt = torch.tensor([[1, 4, 5, 2], [1, 6, 2, 0]])
    hidden, nll = enc.mean(1), 0.0
    for t in range(3):
        logp, hidden, weights = dec.step(tgt[:, t], hidden, enc, mask)
        nll = nll + F.nll_loss(logp, tgt[:, t + 1], ignore_index=0)
    nll.backward()
    show(weights, nll, dec.attn.v.weight.grad, dec.embed.weight.grad[0])

    beam = 3
    dec.eval()
    with torch.no_grad():
        memory, m = enc[1:].expand(beam, -1, -1), mask[1:].expand(beam, -1)
        hidden = enc[1].mean(0).expand(beam, -1)
        tokens = torch.full((beam, 1), bos)
        scores = torch.tensor([0.0] + [float("-inf")] * (beam - 1))
        for t in range(3):
            logp, hidden, _ = dec.step(tokens[:, -1], hidden, memory, m)
            total = (scores[:, None] + logp).view(-1)
            scores, flat = total.topk(beam)
            origin = torch.div(flat, vocab, rounding_mode="floor")
            token = flat.remainder(vocab)
            tokens = torch.cat([tokens.index_select(0, origin), token[:, None]], dim=1)
            hidden = hidden.index_select(0, origin)
            show(t, scores, origin, token, flat // vocab)
        show(tokens, scores / tokens.shape[1] ** 0.7, (tokens == eos).any(1))
    show(torch.div(torch.tensor([-7, 7]), 2, rounding_mode="trunc"), torch.tensor([-7, 7]) % 3,
         torch.fmod(torch.tensor([-7, 7]), 3))
    show_outcome(show, lambda: torch.div(torch.tensor([7]), 2, rounding_mode="round"))


def _bleu_with_tensors(lib, show):
    """Corpus BLEU written with tensors: n-grams by unfold, counted by unique(dim=0, return_counts) and matched
    with clipped counts (minimum of hypothesis and reference counts), a brevity penalty, and a geometric mean by
    log/exp; token accuracy with padding masked out."""
    torch = lib

    def ngram_counts(tokens, n):
        if tokens.numel() < n:
            return torch.zeros(0, n, dtype=tokens.dtype), torch.zeros(0, dtype=torch.long)
        grams = tokens.unfold(0, n, 1)
        return torch.unique(grams, dim=0, return_counts=True)

    def clipped_matches(hyp, ref, n):
        h_grams, h_counts = ngram_counts(hyp, n)
        r_grams, r_counts = ngram_counts(ref, n)
        if len(h_grams) == 0 or len(r_grams) == 0:
            return 0, max(len(hyp) - n + 1, 0)
        same = (h_grams[:, None, :] == r_grams[None, :, :]).all(-1)
        ref_for_hyp = (same.long() * r_counts[None]).sum(1)
        return torch.minimum(h_counts, ref_for_hyp).sum().item(), h_counts.sum().item()

    hyps = [torch.tensor([1, 2, 3, 4, 5, 2, 3]), torch.tensor([7, 7, 7]), torch.tensor([4, 5, 6, 7, 8])]
    refs = [torch.tensor([1, 2, 3, 4, 2, 3, 6]), torch.tensor([7, 8, 7, 9]), torch.tensor([4, 5, 6, 7, 8, 9])]
    matches, totals = torch.zeros(4), torch.zeros(4)
    for hyp, ref in zip(hyps, refs):
        for n in range(1, 5):
            m, c = clipped_matches(hyp, ref, n)
            matches[n - 1] += m
            totals[n - 1] += c
    show(matches, totals)
    precisions = matches / totals.clamp(min=1)
    hyp_len, ref_len = sum(len(h) for h in hyps), sum(len(r) for r in refs)
    bp = math.exp(1 - ref_len / hyp_len) if hyp_len < ref_len else 1.0
    bleu = bp * torch.exp(torch.log(precisions.clamp(min=1e-9)).mean())
    show(precisions, round(bp, 6), bleu)
    grams, counts = torch.unique(hyps[0].unfold(0, 2, 1), dim=0, return_counts=True)
    show(grams, counts, hyps[0].unfold(0, 3, 2))
    flat, inverse = torch.unique(torch.tensor([3, 1, 3, 2, 1]), sorted=True, return_inverse=True)
    show(flat, inverse, torch.tensor([3, 1, 3, 2, 1]).bincount())

    pred = torch.tensor([[1, 2, 3, 0], [4, 4, 0, 0]])
    gold = torch.tensor([[1, 2, 4, 0], [4, 5, 0, 0]])
    keep = gold.ne(0)
    correct = (pred.eq(gold) & keep).sum()
    show(correct, keep.sum(), correct.float() / keep.sum(), (correct / keep.sum()).dtype)
    show_outcome(show, lambda: torch.tensor([1, 2]).unfold(0, 3, 1))
    show_outcome(show, lambda: torch.minimum(torch.tensor([1, 2]), torch.tensor([1.5, 0.5])))


def _two_tower_recommender(lib, show):
    """A two-tower retrieval model: user and item towers normalised, logits = u @ v.T / temperature against
    in-batch negatives with arange labels, a BPR loss with logsigmoid on sampled negatives, then hit-rate@k and
    NDCG@k with topk, isin and the rank of the held-out item."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(134)
    n_users, n_items, d = 12, 20, 8

    class Tower(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.embed = nn.Embedding(n, d)
            self.mlp = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d))

        def forward(self, ids):
            return F.normalize(self.mlp(self.embed(ids)), dim=-1)

    users, items = Tower(n_users), Tower(n_items)
    params = list(users.parameters()) + list(items.parameters())
    opt = torch.optim.Adam(params, lr=1e-2)
    interactions = torch.stack([torch.randint(0, n_users, (24,)), torch.randint(0, n_items, (24,))], 1)
    temperature = 0.1
    for epoch in range(2):
        for batch in interactions[torch.randperm(len(interactions))].split(8):
            u, v = users(batch[:, 0]), items(batch[:, 1])
            logits = u @ v.T / temperature
            labels = torch.arange(len(batch))
            in_batch = F.cross_entropy(logits, labels)
            negatives = torch.randint(0, n_items, (len(batch),))
            bpr = -F.logsigmoid((u * v).sum(-1) - (u * items(negatives)).sum(-1)).mean()
            loss = in_batch + bpr
            opt.zero_grad()
            loss.backward()
            opt.step()
        show(epoch, round(in_batch.item(), 5), round(bpr.item(), 5), logits.shape)
    with torch.no_grad():
        all_items = items(torch.arange(n_items))
        scores = users(torch.arange(n_users)) @ all_items.T
        held_out = torch.randint(0, n_items, (n_users,))
        top_scores, top_items = scores.topk(5, dim=1)
        hits = (top_items == held_out[:, None]).any(1)
        in_top = torch.isin(held_out, top_items[0])
        rank = (scores > scores.gather(1, held_out[:, None])).sum(1)
        ndcg = torch.where(rank < 5, 1 / torch.log2(rank.float() + 2), torch.zeros(()))
    show(top_items[:3], hits.float().mean(), in_top, rank, ndcg.mean())
    show(torch.isin(torch.tensor([1, 2, 3]), torch.tensor([2, 5]), invert=True), torch.isin(3, torch.tensor([1, 3])))
    show_outcome(show, lambda: torch.isin(torch.tensor([1.0]), torch.tensor([1])))


def _char_cnn_classifier(lib, show):
    """A character-level CNN text classifier: strings encoded to padded index tensors, Embedding with
    padding_idx, Conv1d filters of several widths, max over time (values and indices), dropout, training steps
    and the which-characters-fired readout from the argmax positions."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(135)
    texts = ["good movie", "bad film", "great fun", "awful plot", "nice", "boring and bad"]
    labels = torch.tensor([1, 0, 1, 0, 1, 0])
    alphabet = sorted(set("".join(texts)))
    stoi = {c: i + 1 for i, c in enumerate(alphabet)}
    max_len = max(len(t) for t in texts)
    x = torch.zeros(len(texts), max_len, dtype=torch.long)
    for i, t in enumerate(texts):
        x[i, : len(t)] = torch.tensor([stoi[c] for c in t])
    show(x.shape, x[4], len(alphabet))

    class CharCNN(nn.Module):
        def __init__(self, widths=(2, 3, 4), channels=6):
            super().__init__()
            self.embed = nn.Embedding(len(alphabet) + 1, 5, padding_idx=0)
            self.convs = nn.ModuleList(nn.Conv1d(5, channels, w) for w in widths)
            self.drop = nn.Dropout(0.3)
            self.fc = nn.Linear(channels * len(widths), 2)

        def forward(self, tokens):
            e = self.embed(tokens).transpose(1, 2)
            pooled = [F.relu(conv(e)).max(dim=2) for conv in self.convs]
            self.positions = [p.indices for p in pooled]
            return self.fc(self.drop(torch.cat([p.values for p in pooled], dim=1)))

    model = CharCNN()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.1)
    for step in range(3):
        model.train()
        logits = model(x)
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, round(loss.item(), 6), logits.argmax(1))
    model.eval()
    with torch.no_grad():
        probs = model(x).softmax(-1)
    show(probs, model.positions[0][:2], model.embed.weight.grad[0])
    fired = [texts[0][p: p + 2] for p in model.positions[0][0].tolist()]
    show(fired)
    pooled = torch.randn(2, 3, 4).max(dim=2)
    show(type(pooled).__name__, pooled, F.adaptive_max_pool1d(torch.arange(8.0).view(1, 2, 4), 1, True))
    show_outcome(show, lambda: model(torch.zeros(1, 3, dtype=torch.long)))


def _word2vec_sparse_updates(lib, show):
    """CBOW trained by hand without an optimizer: context vectors averaged from an embedding table, a full
    softmax loss, the gradient taken with autograd.grad with respect to the gathered rows, and the table updated
    sparsely with index_add_ (repeated indices accumulate), beside the dense update it must equal."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(136)
    corpus = torch.tensor([0, 1, 2, 3, 4, 1, 2, 5, 0, 3, 2, 1])
    vocab, dim, lr = 6, 4, 0.5
    W_in = torch.randn(vocab, dim) * 0.1
    W_out = torch.randn(dim, vocab) * 0.1
    windows = corpus.unfold(0, 5, 1)
    ctx_ids = torch.cat([windows[:, :2], windows[:, 3:]], 1)
    centres = windows[:, 2]
    show(ctx_ids[:3], centres)
    for epoch in range(3):
        rows = W_in[ctx_ids].requires_grad_()
        W_out.requires_grad_()
        h = rows.mean(1)
        loss = F.cross_entropy(h @ W_out, centres)
        g_rows, g_out = torch.autograd.grad(loss, (rows, W_out))
        dense = W_in.clone()
        W_in.index_add_(0, ctx_ids.reshape(-1), g_rows.reshape(-1, dim), alpha=-lr)
        dense -= lr * torch.zeros_like(dense).index_put_((ctx_ids.reshape(-1),), g_rows.reshape(-1, dim),
                                                         accumulate=True)
        with torch.no_grad():
            W_out -= lr * g_out
        W_out = W_out.detach()
        show(epoch, round(loss.item(), 6), (W_in - dense).abs().max() < 1e-6, g_rows.shape)
    show(W_in, torch.zeros(3).index_add_(0, torch.tensor([0, 0, 2]), torch.tensor([1.0, 2.0, 3.0])))
    emb = torch.nn.Embedding.from_pretrained(W_in, freeze=False)
    emb(torch.tensor([1, 1, 3])).sum().backward()
    show(emb.weight.grad, emb.weight.requires_grad)
    show_outcome(show, lambda: torch.zeros(3).index_add_(0, torch.tensor([0, 3]), torch.ones(2)))
    show_outcome(show, lambda: torch.zeros(3).index_add_(0, torch.tensor([0.0]), torch.ones(1)))


def _tfidf_cosine_search(lib, show):
    """TF-IDF over a tiny tokenised corpus: term counts by scatter_add_ into a documents x vocabulary matrix and by
    bincount of flattened offsets, document frequencies, smoothed idf, l2-normalised rows, cosine similarity of
    a query against every document, and the best match by argsort(descending=True)."""
    torch, F = lib, lib.nn.functional
    docs = ["the cat sat on the mat", "the dog sat", "cats and dogs", "the mat is red"]
    vocab = sorted({w for d in docs for w in d.split()})
    index = {w: i for i, w in enumerate(vocab)}
    ids = [torch.tensor([index[w] for w in d.split()]) for d in docs]
    V, N = len(vocab), len(docs)
    counts = torch.zeros(N, V)
    for i, t in enumerate(ids):
        counts[i].scatter_add_(0, t, torch.ones(len(t)))
    doc_of = torch.cat([torch.full((len(t),), i) for i, t in enumerate(ids)])
    flat = torch.bincount(doc_of * V + torch.cat(ids), minlength=N * V).view(N, V)
    show(torch.equal(flat.float(), counts), flat.dtype, counts.sum(1))
    tf = counts / counts.sum(1, keepdim=True)
    df = (counts > 0).sum(0)
    idf = torch.log((1 + N) / (1 + df)) + 1
    tfidf = F.normalize(tf * idf, p=2, dim=1)
    show(df, idf, tfidf.norm(dim=1))
    query = torch.zeros(V).scatter_add_(0, torch.tensor([index["cat"], index["mat"]]), torch.ones(2))
    q = F.normalize(query * idf, dim=0)
    sims = F.cosine_similarity(tfidf, q[None], dim=1)
    show(sims, sims.argsort(descending=True), tfidf @ q)
    pairwise = F.cosine_similarity(tfidf[:, None], tfidf[None], dim=-1)
    show(pairwise.diagonal(), pairwise.triu(1).max(), torch.cdist(tfidf, tfidf).shape)
    show(torch.bincount(torch.tensor([0, 2, 2]), weights=torch.tensor([0.5, 1.0, 1.5])))
    show_outcome(show, lambda: torch.bincount(torch.tensor([-1, 2])))
    show_outcome(show, lambda: torch.zeros(3).scatter_add_(0, torch.tensor([0, 1]), torch.ones(2, dtype=torch.long)))


def _transformer_decoder_greedy(lib, show):
    """A batch-first nn.TransformerDecoder over a random memory: a causal tgt_mask from
    generate_square_subsequent_mask, a boolean memory_key_padding_mask, one training step, then a greedy decoding
    loop under inference_mode that stops sequences at EOS and pads finished ones."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(137)
    vocab, d, bos, eos, pad = 10, 16, 1, 2, 0
    layer = nn.TransformerDecoderLayer(d, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True)
    decoder = nn.TransformerDecoder(layer, num_layers=2, norm=nn.LayerNorm(d))
    embed, head = nn.Embedding(vocab, d), nn.Linear(d, vocab)
    memory = torch.randn(3, 4, d)
    memory_pad = torch.tensor([[False] * 4, [False, False, True, True], [False, False, False, True]])
    tgt = torch.tensor([[1, 5, 6, 2], [1, 7, 2, 0], [1, 3, 4, 8]])
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    show(mask, mask.dtype)
    params = [*decoder.parameters(), *embed.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=1e-3)
    out = decoder(embed(tgt[:, :-1]), memory, tgt_mask=mask, memory_key_padding_mask=memory_pad,
                  tgt_is_causal=True)
    loss = F.cross_entropy(head(out).transpose(1, 2), tgt[:, 1:], ignore_index=pad)
    opt.zero_grad()
    loss.backward()
    opt.step()
    show(out.shape, out.grad_fn.name(), round(loss.item(), 5), decoder.layers[1].linear2.bias.grad)
    decoder.eval()
    with torch.inference_mode():
        ys = torch.full((3, 1), bos)
        finished = torch.zeros(3, dtype=torch.bool)
        for _ in range(4):
            causal = nn.Transformer.generate_square_subsequent_mask(ys.shape[1])
            h = decoder(embed(ys), memory, tgt_mask=causal, memory_key_padding_mask=memory_pad)
            nxt = head(h[:, -1]).argmax(-1)
            nxt = nxt.masked_fill(finished, pad)
            ys = torch.cat([ys, nxt[:, None]], dim=1)
            finished |= nxt == eos
        show(ys, finished, ys.is_inference(), h.requires_grad)
    show_outcome(show, lambda: ys.add_(1))
    show_outcome(show, lambda: decoder(embed(tgt), memory, tgt_mask=mask))


def _masked_action_policy(lib, show):
    """Invalid-action masking in a discrete policy: logits masked_fill'ed with -inf (and with the dtype's minimum)
    before Categorical, probabilities, log-probs and entropy of masked rows, sampling, and the policy-gradient
    step's gradient through the mask."""
    torch, nn = lib, lib.nn
    D = torch.distributions
    torch.manual_seed(138)
    policy = nn.Linear(4, 5)
    obs = torch.randn(3, 4)
    legal = torch.tensor([[True, True, False, False, True], [False, True, False, False, False], [True] * 5])
    logits = policy(obs)
    masked = logits.masked_fill(~legal, float("-inf"))
    dist = D.Categorical(logits=masked)
    show(dist.probs, dist.logits, dist.entropy())
    actions = dist.sample()
    logp = dist.log_prob(actions)
    show(actions, logp, legal.gather(1, actions[:, None]).all())
    (-(logp * torch.tensor([1.0, -0.5, 2.0])).sum() - 0.1 * dist.entropy().sum()).backward()
    show(policy.weight.grad, policy.bias.grad)
    soft = D.Categorical(logits=logits.detach().masked_fill(~legal, torch.finfo(torch.float32).min))
    show(soft.probs, soft.entropy(), soft.log_prob(torch.tensor([2, 1, 0])))
    show(D.Categorical(logits=masked.detach()).log_prob(torch.tensor([2, 1, 0])))
    greedy = masked.argmax(-1)
    show(greedy, masked.detach().softmax(-1).max(-1))
    show_outcome(show, lambda: D.Categorical(logits=torch.full((2,), float("-inf"))).probs)
    show_outcome(show, lambda: dist.log_prob(torch.tensor([5, 0, 0])))


def _thompson_sampling_bandit(lib, show):
    """A Bernoulli bandit with Thompson sampling from Beta posteriors, UCB1 scores with argmax ties, and an
    epsilon-greedy baseline, all drawn from seeded generators; regret accumulated with cumsum."""
    torch = lib
    D = torch.distributions
    torch.manual_seed(139)
    true_p = torch.tensor([0.2, 0.5, 0.7, 0.4])
    k = len(true_p)
    wins, losses = torch.ones(k), torch.ones(k)
    pulls, totals = torch.zeros(k), torch.zeros(k)
    chosen, regret = [], []
    for _ in range(20):
        theta = D.Beta(wins, losses).sample()
        arm = theta.argmax().item()
        reward = torch.bernoulli(true_p[arm]).item()
        wins[arm] += reward
        losses[arm] += 1 - reward
        pulls[arm] += 1
        totals[arm] += reward
        chosen.append(arm)
        regret.append((true_p.max() - true_p[arm]).item())
    show(chosen, wins, losses, torch.tensor(regret).cumsum(0)[-1])
    means = totals / pulls.clamp(min=1)
    ucb = means + torch.sqrt(2 * math.log(20) / pulls.clamp(min=1))
    show(means, ucb, ucb.argmax(), torch.tensor([1.0, 3.0, 3.0]).argmax())
    posterior = D.Beta(wins, losses)
    show(posterior.mean, posterior.variance, posterior.entropy(), posterior.log_prob(torch.full((k,), 0.5)))
    gen = torch.Generator().manual_seed(9)
    greedy = [torch.randint(k, (), generator=gen).item() if torch.rand((), generator=gen) < 0.3
              else int(means.argmax()) for _ in range(6)]
    show(greedy, torch.bernoulli(torch.full((4,), 0.5), generator=gen))
    show_outcome(show, lambda: D.Beta(torch.tensor([0.0]), torch.tensor([1.0])))
    show_outcome(show, lambda: torch.bernoulli(torch.tensor([1.5])))


PROGRAMS = [
    _ppo_with_gae,
    _dqn_replay_and_target,
    _sac_squashed_gaussian,
    _bahdanau_beam_search,
    _bleu_with_tensors,
    _two_tower_recommender,
    _char_cnn_classifier,
    _word2vec_sparse_updates,
    _tfidf_cosine_search,
    _transformer_decoder_greedy,
    _masked_action_policy,
    _thompson_sampling_bandit,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
