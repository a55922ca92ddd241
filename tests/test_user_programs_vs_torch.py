"""Ordinary PyTorch training programs, run with ``import tracegrad as torch`` and with torch, and compared.

Unlike the tutorial programs (``test_tutorial_programs_vs_torch.py``), these draw everything from the seeded
global generator (``torch.manual_seed``): tracegrad's CPU stream is torch's, so default initialisations, ``randn``
data, dropout masks, shuffled loaders and ``random_split`` are the same numbers in both libraries. Matrix products
are not bit for bit, so a layer's bias just before a batch norm (whose gradient is only rounding noise, which Adam
turns into full steps) is left out, as good practice has it anyway.

Differences these programs found, now fixed (``tests/ops/test_program_findings_vs_torch.py``):
- dropout on a non-contiguous input (a ``batch_first`` LSTM's output, attention weights) drew its mask in logical
  order, torch in memory order: every later draw of the program differed;
- ``multinomial`` without replacement chose among zero probabilities in index order, torch as ``topk``;
- an in-place write into an inference tensor outside inference mode was refused before writing (torch: after).

Left: ``torch._foreach_*`` (the ``_ema_and_swa`` program keeps its average with per-tensor ops) do not exist.
"""

from __future__ import annotations

import io
import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _char_lstm_language_model(lib, show):
    """A character-level LSTM with tied embedding/decoder weights, clipped gradients and OneCycleLR."""
    torch, nn = lib, lib.nn
    torch.manual_seed(0)
    text = "hello world, hello tracegrad; the quick brown fox jumps over the lazy dog. " * 2
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)

    class CharLM(nn.Module):
        def __init__(self, vocab, hidden):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.rnn = nn.LSTM(hidden, hidden, num_layers=2, batch_first=True, dropout=0.1)
            self.drop = nn.Dropout(0.2)
            self.head = nn.Linear(hidden, vocab)
            self.head.weight = self.embed.weight  # weight tying

        def forward(self, x, state=None):
            out, state = self.rnn(self.drop(self.embed(x)), state)
            return self.head(self.drop(out)), state

    model = CharLM(len(chars), 16)
    show(sum(p.numel() for p in model.parameters()), [n for n, _ in model.named_parameters()])
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    steps = 6
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=steps)
    seq, batch = 12, 4
    for step in range(steps):
        starts = torch.randint(0, len(data) - seq - 1, (batch,))
        x = torch.stack([data[s:s + seq] for s in starts])
        y = torch.stack([data[s + 1:s + seq + 1] for s in starts])
        logits, _ = model(x)
        loss = nn.functional.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        sched.step()
        show(step, loss, norm, sched.get_last_lr())
    show(model.embed.weight.grad, model.head.weight is model.embed.weight)
    model.eval()
    with torch.no_grad():
        idx = torch.tensor([[stoi["h"]]])
        state = None
        out = []
        for _ in range(10):
            logits, state = model(idx, state)
            probs = torch.softmax(logits[:, -1] / 0.8, dim=-1)
            idx = torch.multinomial(probs, 1)
            out.append(chars[idx.item()])
        show("".join(out), state[0].shape, state[1])


def _gru_accumulation_plateau(lib, show):
    """A GRU regressor trained with gradient accumulation over micro-batches and ReduceLROnPlateau."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1)
    x = torch.randn(16, 7, 3)
    y = x.sum(dim=(1, 2)).unsqueeze(1) * 0.1

    class Regressor(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(3, 8, bidirectional=True, batch_first=True)
            self.out = nn.Linear(16, 1)

        def forward(self, x):
            _, h = self.gru(x)
            return self.out(torch.cat([h[0], h[1]], dim=1))

    model = Regressor()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.05, amsgrad=True)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=0, threshold=0.5)
    accumulation = 4
    for epoch in range(3):
        opt.zero_grad()
        total = 0.0
        for i, (xb, yb) in enumerate(zip(x.split(4), y.split(4))):
            loss = nn.functional.smooth_l1_loss(model(xb), yb, beta=0.5) / accumulation
            loss.backward()
            total += loss.item()
            if (i + 1) % accumulation == 0:
                opt.step()
                opt.zero_grad(set_to_none=False)
        sched.step(total)
        show(epoch, round(total, 6), opt.param_groups[0]["lr"], sched.num_bad_epochs)
    show(model.gru.weight_hh_l0_reverse.grad, model.out.weight)
    show(opt.state_dict()["state"][0]["max_exp_avg_sq"])


def _transformer_classifier_with_padding(lib, show):
    """A Transformer encoder classifier over padded sequences (key padding mask, masked mean pooling)."""
    torch, nn = lib, lib.nn
    torch.manual_seed(2)
    vocab, d_model, pad = 20, 16, 0
    lengths = torch.tensor([5, 3, 6, 2])
    tokens = torch.randint(1, vocab, (4, 6))
    padding = torch.arange(6).unsqueeze(0) >= lengths.unsqueeze(1)
    tokens = tokens.masked_fill(padding, pad)
    labels = torch.tensor([0, 1, 1, 0])

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, d_model, padding_idx=pad)
            self.pos = nn.Parameter(torch.zeros(1, 6, d_model))
            layer = nn.TransformerEncoderLayer(d_model, 4, dim_feedforward=32, dropout=0.1, batch_first=True,
                                               activation="gelu", norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
            self.head = nn.Linear(d_model, 2)

        def forward(self, tokens, padding):
            h = self.encoder(self.embed(tokens) * math.sqrt(d_model) + self.pos, src_key_padding_mask=padding)
            keep = (~padding).unsqueeze(-1).float()
            pooled = (h * keep).sum(1) / keep.sum(1)
            return self.head(pooled)

    model = Classifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    for step in range(3):
        loss = nn.functional.cross_entropy(model(tokens, padding), labels, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss)
    show(model.embed.weight.grad[pad], model.pos.grad[0, :, :3])
    model.eval()
    with torch.no_grad():
        logits = model(tokens, padding)
        acc = (logits.argmax(dim=1) == labels).float().mean()
    show(logits, acc)


def _vae(lib, show):
    """A VAE: reparameterisation with randn_like, a KL term, BCE-with-logits reconstruction."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(3)
    data = (torch.rand(12, 20) > 0.5).float()

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Sequential(nn.Linear(20, 16), nn.LeakyReLU(0.1))
            self.mu = nn.Linear(16, 4)
            self.logvar = nn.Linear(16, 4)
            self.dec = nn.Sequential(nn.Linear(4, 16), nn.Softplus(), nn.Linear(16, 20))

        def forward(self, x):
            h = self.enc(x)
            mu, logvar = self.mu(h), self.logvar(h)
            z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
            return self.dec(z), mu, logvar

    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, betas=(0.8, 0.99), eps=1e-6)
    for step in range(4):
        recon, mu, logvar = model(data)
        rec = F.binary_cross_entropy_with_logits(recon, data, reduction="sum")
        kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss = (rec + kl) / data.shape[0]
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, rec, kl)
    show(model.mu.weight.grad, model.logvar.bias)
    with torch.no_grad():
        samples = torch.sigmoid(model.dec(torch.randn(3, 4)))
    show(samples, torch.distributions.Normal(mu, (0.5 * logvar).exp()).log_prob(mu).sum())


def _gan_step(lib, show):
    """A GAN: two optimizers, the discriminator trained on detached fakes, label smoothing."""
    torch, nn = lib, lib.nn
    torch.manual_seed(4)
    G = nn.Sequential(nn.Linear(3, 8, bias=False), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2), nn.Tanh())
    D = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Dropout(0.3), nn.Linear(8, 1))
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
    criterion = nn.BCEWithLogitsLoss()
    real = torch.randn(8, 2) * 0.5 + torch.tensor([1.0, -1.0])
    for step in range(3):
        z = torch.randn(8, 3)
        fake = G(z)
        opt_d.zero_grad()
        d_real = criterion(D(real), torch.full((8, 1), 0.9))
        d_fake = criterion(D(fake.detach()), torch.zeros(8, 1))
        (d_real + d_fake).backward()
        opt_d.step()
        show("D", step, d_real, d_fake, G[0].weight.grad)
        opt_g.zero_grad()
        g_loss = criterion(D(fake), torch.ones(8, 1))
        g_loss.backward()
        opt_g.step()
        show("G", step, g_loss, D[0].weight.grad[0])
    show(G[1].running_mean, G[1].running_var, G[1].num_batches_tracked)
    G.eval()
    with torch.no_grad():
        show(G(torch.randn(2, 3)))


def _seq2seq_teacher_forcing(lib, show):
    """A GRU encoder-decoder trained with teacher forcing and a padded target (ignore_index)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(5)
    SOS, PAD, vocab, hidden = 1, 0, 12, 10
    src = torch.randint(2, vocab, (3, 5))
    tgt = torch.randint(2, vocab, (3, 4))
    tgt[2, 3:] = PAD

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.gru = nn.GRU(hidden, hidden, batch_first=True)

        def forward(self, src):
            return self.gru(self.embed(src))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden, padding_idx=PAD)
            self.cell = nn.GRUCell(2 * hidden, hidden)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, token, h, enc_out):
            scores = torch.bmm(enc_out, h.unsqueeze(2)).squeeze(2)
            context = torch.bmm(F.softmax(scores, dim=1).unsqueeze(1), enc_out).squeeze(1)
            h = self.cell(torch.cat([self.embed(token), context], dim=1), h)
            return F.log_softmax(self.out(h), dim=1), h

    enc, dec = Encoder(), Decoder()
    params = list(enc.parameters()) + list(dec.parameters())
    opt = torch.optim.RMSprop(params, lr=1e-2, alpha=0.9, momentum=0.5, centered=True)
    criterion = nn.NLLLoss(ignore_index=PAD)
    for step in range(3):
        enc_out, h = enc(src)
        h = h[0]
        token = torch.full((3,), SOS, dtype=torch.long)
        loss = 0
        teacher = torch.rand(1).item() < 0.5
        for t in range(tgt.shape[1]):
            logp, h = dec(token, h, enc_out)
            loss = loss + criterion(logp, tgt[:, t])
            token = tgt[:, t] if teacher else logp.argmax(1).detach()
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_value_(params, 0.5)
        opt.step()
        show(step, teacher, loss, dec.cell.weight_hh.grad[:2])
    show(opt.state_dict()["state"][len(list(enc.parameters()))]["grad_avg"][:2])


def _data_pipeline(lib, show):
    """TensorDataset, random_split with a seeded Generator, shuffled loaders, samplers and a padding collate."""
    torch = lib
    data = torch.utils.data
    torch.manual_seed(6)
    X = torch.randn(20, 3)
    Y = torch.randint(0, 3, (20,))
    full = data.TensorDataset(X, Y)
    train, val = data.random_split(full, [0.75, 0.25], generator=torch.Generator().manual_seed(7))
    show(train.indices, val.indices)
    g = torch.Generator()
    g.manual_seed(8)
    loader = data.DataLoader(train, batch_size=4, shuffle=True, generator=g, drop_last=True)
    for epoch in range(2):
        show(epoch, [yb for _, yb in loader])
    show(next(iter(data.DataLoader(train, batch_size=3, shuffle=True)))[0])
    show(list(data.RandomSampler(range(6), replacement=True, num_samples=8)))
    show(list(data.WeightedRandomSampler([0.1, 0.5, 2.0, 0.0], num_samples=6, replacement=True)))
    show(list(data.SubsetRandomSampler([10, 20, 30, 40])))
    sequences = [torch.arange(n) + 1 for n in (3, 1, 4, 2, 5)]

    def collate(batch):
        lengths = torch.tensor([len(s) for s in batch])
        padded = torch.nn.utils.rnn.pad_sequence(batch, batch_first=True, padding_value=0)
        return padded, lengths

    for padded, lengths in data.DataLoader(sequences, batch_size=2, shuffle=True, collate_fn=collate):
        show(padded, lengths)
    packed = torch.nn.utils.rnn.pack_padded_sequence(padded.unsqueeze(-1).float(), lengths, batch_first=True,
                                                     enforce_sorted=False)
    show(packed.batch_sizes, packed.sorted_indices)
    show(torch.utils.data.get_worker_info(), torch.initial_seed())


def _conv_autoencoder(lib, show):
    """A convolutional autoencoder: Conv2d + BatchNorm2d + Dropout2d down, ConvTranspose2d up; train then eval."""
    torch, nn = lib, lib.nn
    torch.manual_seed(9)
    images = torch.rand(4, 1, 8, 8)
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(), nn.Dropout2d(0.25),
        nn.Conv2d(4, 8, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(8, momentum=None), nn.ReLU(),
        nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1, bias=False), nn.BatchNorm2d(4), nn.ELU(),
        nn.ConvTranspose2d(4, 1, 4, stride=2, padding=1, bias=False), nn.Sigmoid())
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(3):
        out = model(images)
        loss = nn.functional.mse_loss(out, images)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, out.shape, loss)
    show(model[0].weight.grad[0], model[7].weight.grad[0, 0], model[10].weight)
    show(model[1].running_mean, model[5].running_var, model[5].num_batches_tracked)
    model.eval()
    with torch.no_grad():
        show(model(images[:1])[0, 0, :2], model.training, model[3].training)
    model.train()
    show(model[3].training)


def _buffers_and_checkpoints(lib, show):
    """A module with buffers (persistent or not); model and optimizer saved to memory, reloaded, and training
    resumed: the resumed run must equal the uninterrupted one."""
    torch, nn = lib, lib.nn
    torch.manual_seed(10)

    class Normalised(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mean", torch.zeros(3))
            self.register_buffer("count", torch.tensor(0))
            self.register_buffer("scratch", torch.ones(2), persistent=False)
            self.fc = nn.Linear(3, 2)

        def forward(self, x):
            if self.training:
                with torch.no_grad():
                    self.count += 1
                    self.mean.lerp_(x.mean(0), 1.0 / self.count.item())
            return self.fc(x - self.mean)

    def make():
        model = Normalised()
        return model, torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-3)

    def train(model, opt, xs):
        for x in xs:
            loss = model(x).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss

    xs = [torch.randn(5, 3) for _ in range(4)]
    model, opt = make()
    show(list(model.state_dict()), [n for n, _ in model.named_buffers()])
    train(model, opt, xs[:2])
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": 2}, buffer)
    final = train(model, opt, xs[2:])
    buffer.seek(0)
    checkpoint = torch.load(buffer, weights_only=True)
    model2, opt2 = make()
    show(model2.load_state_dict(checkpoint["model"]))
    opt2.load_state_dict(checkpoint["opt"])
    show(checkpoint["step"], opt2.state_dict()["state"][0]["momentum_buffer"])
    final2 = train(model2, opt2, xs[2:])
    show(final, final2, torch.equal(model.fc.weight, model2.fc.weight), model2.count, model2.mean)
    state = model.state_dict()
    state["extra"] = torch.zeros(1)
    del state["fc.bias"]
    show_outcome(show, lambda: model2.load_state_dict(state))
    show(model2.load_state_dict(state, strict=False))
    show_outcome(show, lambda: model2.load_state_dict({"fc.weight": torch.zeros(3, 3)}, strict=False))


def _weight_norm_and_spectral_norm(lib, show):
    """Reparametrised layers: weight_norm and spectral_norm (old hooks and parametrizations), orthogonal."""
    torch, nn = lib, lib.nn
    P = nn.utils.parametrizations
    torch.manual_seed(11)
    x = torch.randn(6, 4)
    old = nn.utils.weight_norm(nn.Linear(4, 3))
    new = P.weight_norm(nn.Linear(4, 3), dim=0)
    show(sorted(n for n, _ in old.named_parameters()), sorted(n for n, _ in new.named_parameters()))
    for layer in (old, new):
        loss = layer(x).sum()
        loss.backward()
        show(loss, layer.weight)
    show(old.weight_g.grad, new.parametrizations.weight.original0.grad, new.parametrizations.weight.original1.grad)
    sn = P.spectral_norm(nn.Linear(4, 5), n_power_iterations=2)
    sn_old = nn.utils.spectral_norm(nn.Linear(4, 5))
    for _ in range(2):
        out = sn(x).sum() + sn_old(x).sum()
        out.backward()
    show(out, sn.parametrizations.weight.original.grad, sn_old.weight_orig.grad, sn_old.weight_u)
    sn.eval()
    with torch.no_grad():
        show(torch.linalg.matrix_norm(sn.weight, ord=2))
    orth = P.orthogonal(nn.Linear(3, 3))
    w = orth.weight
    show(w @ w.T)
    nn.utils.parametrize.remove_parametrizations(new, "weight")
    show(type(new.weight).__name__, new.weight)
    nn.utils.remove_weight_norm(old)
    show(sorted(n for n, _ in old.named_parameters()))


def _parameter_groups(lib, show):
    """Per-parameter-group options (no weight decay on biases and norms), add_param_group, state_dict round
    trips, and a scheduler that scales every group."""
    torch, nn = lib, lib.nn
    torch.manual_seed(12)
    model = nn.Sequential(nn.Linear(4, 6), nn.LayerNorm(6), nn.GELU(approximate="tanh"), nn.Linear(6, 2))
    decay = [p for n, p in model.named_parameters() if n.endswith("weight") and p.dim() > 1]
    no_decay = [p for n, p in model.named_parameters() if not (n.endswith("weight") and p.dim() > 1)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0, "lr": 5e-3}], lr=1e-2)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 3], gamma=0.3)
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    for step in range(4):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        show(step, loss, [g["lr"] for g in opt.param_groups])
    extra = nn.Parameter(torch.randn(2))
    opt.add_param_group({"params": [extra], "lr": 1.0, "betas": (0.0, 0.5)})
    show(opt.param_groups[2]["weight_decay"], opt.param_groups[2]["betas"], len(opt.param_groups))
    show_outcome(show, lambda: opt.add_param_group({"params": [extra]}))
    state = opt.state_dict()
    show(state["param_groups"])
    opt2 = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                              {"params": no_decay, "weight_decay": 0.0, "lr": 5e-3},
                              {"params": [extra]}], lr=1e-2)
    opt2.load_state_dict(state)
    show(opt2.param_groups[2]["lr"], opt2.state_dict()["state"][0]["exp_avg"], opt2.state[decay[0]]["step"])
    extra.sum().backward()
    opt2.step()
    show(extra)
    show_outcome(show, lambda: opt2.load_state_dict(torch.optim.SGD(model.parameters(), lr=1).state_dict()))


def _einsum_attention_and_cumulative_ops(lib, show):
    """Causal self-attention written with einsum, masked_fill and triu; cumulative ops; a masked loss."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(13)
    B, T, H, D = 2, 5, 2, 4
    x = torch.randn(B, T, H * D, requires_grad=True)
    w_qkv = torch.randn(H * D, 3 * H * D) * 0.3
    w_qkv.requires_grad_()
    q, k, v = (x @ w_qkv).chunk(3, dim=-1)
    q, k, v = (t.view(B, T, H, D).transpose(1, 2) for t in (q, k, v))
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(D)
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(causal, float("-inf"))
    attn = scores.softmax(dim=-1)
    out = torch.einsum("bhqk,bhkd->bhqd", attn, v).transpose(1, 2).reshape(B, T, H * D)
    fused = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, H * D)
    show(attn[0, 0], (out - fused).abs().max() < 1e-6)
    lengths = torch.tensor([5, 3])
    mask = (torch.arange(T)[None, :] < lengths[:, None]).float()
    target = torch.randn(B, T, H * D)
    per_token = F.mse_loss(out, target, reduction="none").mean(-1)
    loss = (per_token * mask).sum() / mask.sum()
    loss.backward()
    show(loss, x.grad[1, 3:], w_qkv.grad[:2])
    y = torch.randn(2, 6, requires_grad=True)
    values, indices = y.cummax(dim=1)
    total = (y.cumsum(1) + y.cumprod(1) + torch.logcumsumexp(y, 1) + values + y.cummin(1).values).sum()
    total.backward()
    show(indices, total, y.grad)
    show(torch.einsum("ii->i", torch.arange(9.).view(3, 3)), torch.einsum("i,j->ij", torch.arange(2.), y[0].detach()))
    show_outcome(show, lambda: torch.einsum("ij,jk->ik", torch.ones(2, 3), torch.ones(2, 3)))


def _seeded_randomness(lib, show):
    """Seeds, generators and RNG state: every draw must be torch's."""
    torch = lib
    torch.manual_seed(14)
    show(torch.randn(3), torch.rand(2, 2), torch.randint(0, 10, (5,)), torch.randperm(7))
    state = torch.get_rng_state()
    a = torch.randn(4)
    torch.set_rng_state(state)
    show(torch.equal(a, torch.randn(4)))
    g = torch.Generator().manual_seed(15)
    show(torch.randn(2, generator=g), torch.normal(torch.zeros(3), torch.ones(3) * 2, generator=g))
    show(torch.bernoulli(torch.full((6,), 0.3)), torch.multinomial(torch.tensor([0.1, 0.6, 0.3]), 5, True))
    show(torch.empty(4).uniform_(-1, 1), torch.empty(3).normal_(5, 0.1), torch.empty(3).exponential_(),
         torch.empty(4, dtype=torch.long).random_(0, 100), torch.empty(3).geometric_(0.4))
    with torch.random.fork_rng():
        torch.randn(100)
    show(torch.rand(2), torch.randint_like(torch.zeros(3), 5), torch.rand_like(torch.zeros(2, dtype=torch.float64)))
    t = torch.ones(10)
    show(torch.nn.functional.dropout(t, 0.5), torch.nn.functional.dropout1d(torch.ones(2, 3, 4), 0.5)[:, :, 0])
    show(torch.nn.functional.alpha_dropout(t, 0.2), torch.nn.init.trunc_normal_(torch.empty(5), std=0.5))
    show(torch.nn.init.xavier_normal_(torch.empty(2, 3)), torch.nn.init.orthogonal_(torch.empty(3, 2)))
    show(torch.randn(2, dtype=torch.float64), torch.randn(3, dtype=torch.float16), torch.seed() > 0)


def _resnet_with_mixup(lib, show):
    """A small residual network with GroupNorm, SiLU and adaptive pooling, trained with mixup and a cosine
    schedule with linear warm-up (SequentialLR)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(16)

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.norm1 = nn.GroupNorm(2, c)
            self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.norm2 = nn.GroupNorm(2, c)

        def forward(self, x):
            return F.silu(x + self.norm2(self.conv2(F.silu(self.norm1(self.conv1(x))))))

    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), Block(4), nn.MaxPool2d(2), Block(4),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, dampening=0.1, weight_decay=5e-4)
    warmup = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=2)
    cosine = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3)
    sched = torch.optim.lr_scheduler.SequentialLR(opt, [warmup, cosine], milestones=[2])
    x = torch.randn(6, 3, 8, 8)
    y = torch.randint(0, 3, (6,))
    beta = torch.distributions.Beta(torch.tensor(0.4), torch.tensor(0.4))
    for step in range(4):
        lam = 0.7 + 0.1 * step
        perm = torch.randperm(6)
        mixed = lam * x + (1 - lam) * x[perm]
        logits = model(mixed)
        loss = lam * F.cross_entropy(logits, y) + (1 - lam) * F.cross_entropy(logits, y[perm])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        show(step, perm, loss, sched.get_last_lr())
    show(model[1].conv1.weight.grad[0, 0], model[3].norm2.weight, beta.mean)
    model.eval()
    with torch.no_grad():
        correct = (model(x).argmax(1) == y).sum().item()
    show(correct, f"accuracy {correct / len(y):.2%}")


def _ema_and_swa(lib, show):
    """An exponential moving average of weights kept by hand, AveragedModel (plain and EMA), SWALR, update_bn."""
    torch, nn = lib, lib.nn
    torch.manual_seed(17)
    model = nn.Sequential(nn.Linear(3, 4, bias=False), nn.BatchNorm1d(4), nn.Tanh(), nn.Linear(4, 1))
    ema = [p.detach().clone() for p in model.parameters()]
    swa = torch.optim.swa_utils.AveragedModel(model)
    ema_model = torch.optim.swa_utils.AveragedModel(
        model, multi_avg_fn=torch.optim.swa_utils.get_ema_multi_avg_fn(0.9))
    opt = torch.optim.Adamax(model.parameters(), lr=0.05)
    swa_sched = torch.optim.swa_utils.SWALR(opt, swa_lr=0.01, anneal_epochs=2)
    x, y = torch.randn(10, 3), torch.randn(10, 1)
    for step in range(4):
        loss = nn.functional.l1_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        swa_sched.step()
        with torch.no_grad():
            params = [p.detach() for p in model.parameters()]
            for average, param in zip(ema, params):
                average.mul_(0.9).add_(param, alpha=0.1)
        swa.update_parameters(model)
        ema_model.update_parameters(model)
        show(step, loss, opt.param_groups[0]["lr"])
    show(ema[0], swa.module[0].weight, swa.n_averaged, ema_model.module[3].bias)
    loader = [(x[:5], y[:5]), (x[5:], y[5:])]
    torch.optim.swa_utils.update_bn(loader, swa)
    show(swa.module[1].running_mean, swa.module[1].running_var)


def _greedy_and_sampled_decoding(lib, show):
    """A Transformer decoder with tied embeddings; greedy decoding and top-k / nucleus sampling."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(18)
    vocab, d = 11, 8
    embed = nn.Embedding(vocab, d)
    decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(d, 2, 16, dropout=0.0, batch_first=True), 1)
    head = nn.Linear(d, vocab, bias=False)
    head.weight = embed.weight
    memory = torch.randn(2, 3, d)
    decoder.eval()
    with torch.inference_mode():
        tokens = torch.zeros(2, 1, dtype=torch.long)
        for _ in range(4):
            mask = nn.Transformer.generate_square_subsequent_mask(tokens.shape[1])
            h = decoder(embed(tokens), memory, tgt_mask=mask, tgt_is_causal=True)
            logits = head(h[:, -1])
            top_v, top_i = logits.topk(3, dim=-1)
            probs = F.softmax(top_v / 0.7, dim=-1)
            choice = top_i.gather(1, torch.multinomial(probs, 1))
            tokens = torch.cat([tokens, choice], dim=1)
        show(tokens, mask, logits.argmax(-1))
        sorted_logits, sorted_idx = logits.sort(descending=True, dim=-1)
        cumulative = sorted_logits.softmax(-1).cumsum(-1)
        remove = cumulative > 0.9
        remove[:, 1:] = remove[:, :-1].clone()
        remove[:, 0] = False
        filtered = logits.scatter(1, sorted_idx, sorted_logits.masked_fill(remove, float("-inf")))
        show(filtered, torch.multinomial(filtered.softmax(-1), 2), tokens.is_inference())
    show_outcome(show, lambda: tokens.add_(1))


def _wgan_gradient_penalty(lib, show):
    """WGAN-GP: the critic's gradient at interpolated points (autograd.grad with create_graph) in its loss."""
    torch, nn = lib, lib.nn
    torch.manual_seed(19)
    critic = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 16), nn.SiLU(), nn.Linear(16, 1))
    opt = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.0, 0.9))
    real, fake = torch.randn(6, 2) + 2, torch.randn(6, 2)
    for step in range(3):
        alpha = torch.rand(6, 1)
        mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        grads, = torch.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)
        penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
        loss = critic(fake).mean() - critic(real).mean() + 10 * penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, penalty, loss, grads.grad_fn.name(), critic[2].weight.grad[0, :4])
    show_outcome(show, lambda: torch.autograd.grad(critic(mixed).sum(), mixed, create_graph=True)[0].sum().backward()
         or mixed.grad)


def _packed_sequence_classifier(lib, show):
    """Variable-length sequences through an LSTM as a PackedSequence (unsorted), pad_packed_sequence, the last
    valid output per sequence gathered by length, and a class-weighted loss."""
    torch, nn = lib, lib.nn
    rnn_utils = nn.utils.rnn
    torch.manual_seed(20)
    seqs = [torch.randn(n, 3) for n in (4, 2, 5, 1)]
    labels = torch.tensor([1, 0, 2, 1])
    lengths = torch.tensor([len(s) for s in seqs])
    lstm = nn.LSTM(3, 6, batch_first=True, bidirectional=True)
    head = nn.Linear(12, 3)
    opt = torch.optim.NAdam(list(lstm.parameters()) + list(head.parameters()), lr=0.01)
    criterion = nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5]))
    for step in range(3):
        padded = rnn_utils.pad_sequence(seqs, batch_first=True)
        packed = rnn_utils.pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = lstm(packed)
        unpacked, out_lengths = rnn_utils.pad_packed_sequence(out, batch_first=True, total_length=6)
        last = unpacked.gather(1, (lengths - 1).view(-1, 1, 1).expand(-1, 1, 12)).squeeze(1)
        loss = criterion(head(last), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, unpacked.shape, out_lengths, h.shape)
    show(lstm.weight_ih_l0_reverse.grad[:2], packed.unsorted_indices, (unpacked[1, 2:] == 0).all())
    packed_seqs = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    show(packed_seqs.batch_sizes, rnn_utils.unpack_sequence(packed_seqs)[2])
    show_outcome(show, lambda: rnn_utils.pack_sequence(seqs))


def _straight_through_quantiser(lib, show):
    """A custom autograd.Function (straight-through rounding) inside a model, with save_for_backward,
    mark_non_differentiable and a once_differentiable backward; gradient checks in double precision."""
    torch, nn = lib, lib.nn

    class RoundST(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            q = torch.round(x * scale) / scale
            code = (x * scale).round().long()
            ctx.mark_non_differentiable(code)
            return q, code

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, grad_q, grad_code):
            (x,) = ctx.saved_tensors
            return grad_q * (x.abs() <= 1).to(grad_q.dtype), None

    torch.manual_seed(21)
    model = nn.Sequential(nn.Linear(4, 4), nn.Hardtanh())
    x = torch.randn(5, 4)
    q, code = RoundST.apply(model(x), 4.0)
    loss = (q - x).pow(2).mean()
    loss.backward()
    show(q, code, q.grad_fn.name(), code.requires_grad, model[0].weight.grad)
    x64 = torch.randn(3, dtype=torch.float64, requires_grad=True)
    show_outcome(show, lambda: torch.autograd.gradcheck(lambda t: RoundST.apply(t, 1e6)[0], (x64,), atol=1e-4))
    inside = (x64.detach() * 0.3).requires_grad_()
    show(torch.autograd.gradcheck(lambda t: RoundST.apply(t, 1e6)[0], (inside,), atol=1e-4))
    y, _ = RoundST.apply(x64, 2.0)
    g, = torch.autograd.grad(y.sum(), x64, create_graph=True)
    show_outcome(show, lambda: g.sum().backward())


PROGRAMS = [_char_lstm_language_model, _gru_accumulation_plateau, _transformer_classifier_with_padding, _vae,
            _gan_step, _seq2seq_teacher_forcing, _data_pipeline, _conv_autoencoder, _buffers_and_checkpoints,
            _weight_norm_and_spectral_norm, _parameter_groups, _einsum_attention_and_cumulative_ops,
            _seeded_randomness, _resnet_with_mixup, _ema_and_swa, _greedy_and_sampled_decoding,
            _wgan_gradient_penalty, _packed_sequence_classifier, _straight_through_quantiser]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
