"""A ninth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: the code of modern language-model and generative-model
notebooks. A LLaMA-style decoder block (nn.RMSNorm beside one written by hand, rotary embeddings both as complex
numbers through polar/view_as_complex/view_as_real and in the real rotate-half form, a SwiGLU MLP, grouped-query
attention by repeat_interleave and by scaled_dot_product_attention's enable_gqa); generation with a KV cache grown
by cat under inference_mode and nucleus sampling from a seeded generator; a tiny GPT with tied weights, depth-scaled
initialisation, AdamW parameter groups, a warmup-cosine LambdaLR, gradient accumulation and clip_grad_norm_; a LoRA
adapter around a frozen Linear merged back under no_grad; label-smoothed cross entropy with ignore_index over
flattened logits, token dropout and padded attention masks; a tiny GPT trained under bfloat16 CPU autocast; a
VQ-VAE codebook with the straight-through estimator, commitment loss and codebook usage; a DDIM sampler; a
Gumbel-softmax codebook and a CLIP loss with a clamped learnable temperature; an EMA of weights through
``_foreach_*`` and ``lerp_`` with a state dict through a BytesIO; and einops-style rearrangements. Everything is
drawn from the seeded global generator (or seeded generators), which is torch's; values are compared to a
tolerance (matrix products are not bit for bit). bfloat16 tensors are shown through ``.float()`` (torch's
``numpy()`` refuses bfloat16).

Differences these programs found, now fixed (``tests/ops/test_program9_findings_vs_torch.py``):
- ``scaled_dot_product_attention`` of half and bfloat16 inputs (the GPT's attention under bfloat16 autocast) was
  a rounding or two off torch's fused CPU kernel, which rounds the softmax's numerators to the input dtype before
  the product with value and divides by their float sum after, and in its backward rounds the weights, their
  gradients and each accumulated gradient (a shared key head summing its query heads one after another);
  bfloat16 went through the composite path (``UnsafeViewBackward0``) where torch runs the fused kernel; the fused
  kernel's logsumexp of a fully masked row was -inf (torch: 0).

Left: rows of 8 or more keys take torch's vectorised ``exp_u20`` in the fused kernel, which is not NumPy's exp,
so reduced-precision attention over longer rows can still differ by a rounding (and half's query gradient of a
causal grouped-query row attending to one key can be a subnormal where torch's orders of summation cancel to 0).
"""

from __future__ import annotations

import io
import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _rms_norm_by_hand(torch, x, weight, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def _rope_complex(torch, x, freqs_cis):
    """Rotary embeddings as LLaMA's reference code writes them: pairs of features read as complex numbers."""
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs_cis).flatten(3).type_as(x)


def _rope_rotate_half(torch, x, cos, sin):
    """The same rotation in the real 'rotate half' form (pairs interleaved, as the complex form reads them)."""
    x1, x2 = x[..., 0::2], x[..., 1::2]
    rotated = torch.stack((-x2, x1), dim=-1).flatten(-2)
    return x * cos + rotated * sin


def _llama_decoder_block(lib, show):
    """One LLaMA-style decoder block: RMSNorm (module and by hand), rotary embeddings in both forms, grouped-query
    attention computed by repeat_interleave and by SDPA's enable_gqa, a SwiGLU MLP, and its backward."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(900)
    dim, n_heads, n_kv, seq, batch = 16, 4, 2, 6, 2
    head_dim = dim // n_heads
    norm = nn.RMSNorm(dim, eps=1e-6)
    show(norm, norm.weight.shape, norm.normalized_shape)
    x = torch.randn(batch, seq, dim, requires_grad=True)
    by_module = norm(x)
    by_hand = _rms_norm_by_hand(torch, x, norm.weight, 1e-6)
    show(by_module.grad_fn.name(), by_hand.grad_fn.name(), torch.allclose(by_module, by_hand, atol=1e-6))
    show(F.rms_norm(x, (dim,)).shape, nn.RMSNorm(dim).eps, nn.RMSNorm([seq, dim], elementwise_affine=False))

    freqs = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    angles = torch.outer(torch.arange(seq), freqs)
    freqs_cis = torch.polar(torch.ones_like(angles), angles)
    show(freqs_cis.dtype, freqs_cis.shape, freqs_cis[1], angles.dtype)
    cos = angles.cos().repeat_interleave(2, dim=-1)[None, :, None, :]
    sin = angles.sin().repeat_interleave(2, dim=-1)[None, :, None, :]

    wq = nn.Linear(dim, n_heads * head_dim, bias=False)
    wk = nn.Linear(dim, n_kv * head_dim, bias=False)
    wv = nn.Linear(dim, n_kv * head_dim, bias=False)
    wo = nn.Linear(n_heads * head_dim, dim, bias=False)
    h = norm(x)
    q = wq(h).view(batch, seq, n_heads, head_dim)
    k = wk(h).view(batch, seq, n_kv, head_dim)
    v = wv(h).view(batch, seq, n_kv, head_dim)
    q_c = _rope_complex(torch, q, freqs_cis[None, :, None, :])
    k_c = _rope_complex(torch, k, freqs_cis[None, :, None, :])
    q_r = _rope_rotate_half(torch, q, cos, sin)
    show(q_c.grad_fn.name(), q_c.shape, (q_c - q_r).abs().max() < 1e-5, q_r.grad_fn.name())
    q, k, v = (t.transpose(1, 2) for t in (q_c, k_c, v))
    k_rep = k.repeat_interleave(n_heads // n_kv, dim=1)
    v_rep = v.repeat_interleave(n_heads // n_kv, dim=1)
    scores = q @ k_rep.transpose(-2, -1) / math.sqrt(head_dim)
    mask = torch.full((seq, seq), float("-inf")).triu(1)
    manual = torch.softmax(scores + mask, dim=-1) @ v_rep
    fused = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    show(manual, fused, fused.grad_fn.name(), torch.allclose(manual, fused, atol=1e-5))
    boolean = torch.ones(seq, seq, dtype=torch.bool).tril()
    with_mask = F.scaled_dot_product_attention(q, k_rep, v_rep, attn_mask=boolean)
    show(torch.allclose(with_mask, fused, atol=1e-5))
    show_outcome(show, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    show_outcome(show, lambda: F.scaled_dot_product_attention(q, k_rep, v_rep, attn_mask=boolean, is_causal=True))
    attn_out = wo(fused.transpose(1, 2).reshape(batch, seq, dim))
    x2 = x + attn_out

    w1, w3 = nn.Linear(dim, 24, bias=False), nn.Linear(dim, 24, bias=False)
    w2 = nn.Linear(24, dim, bias=False)
    h2 = norm(x2)
    out = x2 + w2(F.silu(w1(h2)) * w3(h2))
    show(out, out.grad_fn.name())
    out.pow(2).mean().backward()
    show(x.grad, norm.weight.grad, wq.weight.grad.norm(), wk.weight.grad.norm(), w3.weight.grad.abs().sum())


class _TinyCausalLM:
    """A one-layer causal language model whose attention keeps a KV cache (built with ``lib``'s nn)."""

    @staticmethod
    def build(lib, vocab=11, dim=8):
        torch, nn, F = lib, lib.nn, lib.nn.functional

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(vocab, dim)
                self.qkv = nn.Linear(dim, 3 * dim)
                self.norm = nn.LayerNorm(dim)
                self.head = nn.Linear(dim, vocab, bias=False)

            def forward(self, ids, cache=None):
                x = self.embed(ids)
                q, k, v = self.qkv(x).chunk(3, dim=-1)
                if cache is not None:
                    k = torch.cat([cache[0], k], dim=1)
                    v = torch.cat([cache[1], v], dim=1)
                causal = cache is None and ids.shape[1] > 1
                att = F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None], is_causal=causal)[:, 0]
                return self.head(self.norm(x + att)), (k, v)

        return Model()


def _nucleus_filter(torch, logits, top_k, top_p):
    values, _ = torch.topk(logits, top_k)
    logits = logits.masked_fill(logits < values[..., -1:], float("-inf"))
    sorted_logits, order = torch.sort(logits, descending=True)
    cumulative = sorted_logits.softmax(-1).cumsum(-1)
    remove = cumulative > top_p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    return logits.masked_fill(remove.scatter(-1, order, remove), float("-inf"))


def _kv_cache_generation(lib, show):
    """Autoregressive generation: a prompt's forward fills a KV cache, each new token's forward grows it with cat,
    all under inference_mode, sampling with temperature, top-k and top-p from a seeded generator (and greedy); the
    cached decode is checked against a full forward, and inference tensors refuse autograd afterwards."""
    torch = lib
    torch.manual_seed(901)
    model = _TinyCausalLM.build(lib).eval()
    prompt = torch.tensor([[1, 4, 2], [3, 3, 7]])
    gen = torch.Generator().manual_seed(7)
    with torch.inference_mode():
        logits, cache = model(prompt)
        show(logits.shape, cache[0].shape, logits.is_inference(), torch.is_inference_mode_enabled())
        tokens = prompt
        for _ in range(5):
            next_logits = _nucleus_filter(torch, logits[:, -1] / 0.8, top_k=5, top_p=0.9)
            probs = next_logits.softmax(-1)
            nxt = torch.multinomial(probs, 1, generator=gen)
            show(probs, nxt.view(-1), cache[0].shape[1])
            tokens = torch.cat([tokens, nxt], dim=1)
            logits, cache = model(nxt, cache)
        full, _ = model(tokens[:, :-1])
        show(tokens, torch.allclose(full[:, -1], _last_step_logits(model, tokens), atol=1e-5))
        greedy = prompt
        for _ in range(3):
            step, _ = model(greedy)
            greedy = torch.cat([greedy, step[:, -1].argmax(-1, keepdim=True)], dim=1)
        show(greedy, step.is_inference())
    show(tokens.is_inference(), tokens.requires_grad, gen.get_state().shape)
    show_outcome(show, lambda: model(tokens)[0].sum().backward())
    w = torch.ones(3, requires_grad=True)
    show_outcome(show, lambda: (logits[0, 0, :3] * w).sum())
    show_outcome(show, lambda: logits.add_(1))
    show_outcome(show, lambda: torch.multinomial(torch.tensor([0.0, float("-inf")]).softmax(0), 1))


def _last_step_logits(model, tokens):
    """The logits for the last position of ``tokens[:, :-1]`` computed token by token through the cache."""
    logits, cache = model(tokens[:, :1])
    for i in range(1, tokens.shape[1] - 1):
        logits, cache = model(tokens[:, i:i + 1], cache)
    return logits[:, -1]


def _tiny_gpt(lib, vocab=13, dim=8, n_layer=2, block=6):
    """A tiny GPT (pre-norm blocks over nn.MultiheadAttention-free attention) with its head tied to the embedding
    and GPT-2's initialisation: normal(0, 0.02), residual projections scaled by 1/sqrt(2 * n_layer)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.attn = nn.Linear(dim, 3 * dim)
            self.c_proj = nn.Linear(dim, dim)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"))
            self.mlp_proj = nn.Linear(4 * dim, dim)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.attn(self.ln1(x)).split(dim, dim=2)
            q, k, v = (z.view(b, t, 2, c // 2).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))
            return x + self.mlp_proj(self.mlp(self.ln2(x)))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, dim)
            self.wpe = nn.Embedding(block, dim)
            self.blocks = nn.ModuleList(Block() for _ in range(n_layer))
            self.ln_f = nn.LayerNorm(dim)
            self.lm_head = nn.Linear(dim, vocab, bias=False)
            self.wte.weight = self.lm_head.weight
            self.apply(self._init_weights)
            for name, p in self.named_parameters():
                if name.endswith("c_proj.weight") or name.endswith("mlp_proj.weight"):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            pos = torch.arange(idx.shape[1], dtype=torch.long)
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.blocks:
                x = blk(x)
            logits = self.lm_head(self.ln_f(x))
            if targets is None:
                return logits, None
            return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

    return GPT()


def _gpt_training_recipe(lib, show):
    """nanoGPT's training recipe: tied weights, depth-scaled init, AdamW with decay only on matrices, a warmup
    then cosine LambdaLR, gradient accumulation with the loss divided by the steps, clip_grad_norm_'s norm."""
    torch = lib
    torch.manual_seed(902)
    model = _tiny_gpt(lib)
    show(model.wte.weight is model.lm_head.weight, len(list(model.parameters())),
         sum(p.numel() for p in model.parameters()), len(model.state_dict()))
    show(model.blocks[0].c_proj.weight.std(), model.blocks[1].attn.bias.abs().sum(), model.wpe.weight.std())
    params = {n: p for n, p in model.named_parameters() if p.requires_grad}
    decay = [p for p in params.values() if p.dim() >= 2]
    no_decay = [p for p in params.values() if p.dim() < 2]
    show(len(decay), len(no_decay), sum(p.numel() for p in decay))
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=3e-3, betas=(0.9, 0.95), eps=1e-8, fused=False)
    warmup, total = 2, 6

    def lr_lambda(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = (step - warmup) / max(1, total - warmup)
        return 0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
    data = torch.randint(0, 13, (8, 7))
    accum = 2
    for step in range(4):
        opt.zero_grad(set_to_none=True)
        total_loss = 0.0
        for micro in range(accum):
            batch = data[(step * accum + micro) % 4 * 2:][:2]
            x, y = batch[:, :-1], batch[:, 1:].clone()
            y[0, :2] = -1
            _, loss = model(x, y)
            (loss / accum).backward()
            total_loss += loss.item() / accum
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        show(round(total_loss, 5), norm, sched.get_last_lr(), [g["lr"] for g in opt.param_groups])
    show(model.lm_head.weight.grad is model.wte.weight.grad, opt.state[model.wte.weight]["step"],
         model.wte.weight.clone())
    show(list(opt.state_dict()["param_groups"][0].keys()), sched.state_dict()["last_epoch"])
    logits, none = model(data[:1, :3])
    show(logits.shape, none)


def _lora_adapter(lib, show):
    """A LoRA adapter around a frozen Linear: A by kaiming_uniform_(a=sqrt(5)), B zeros, scaled by alpha / r;
    trainable parameters counted, one optimiser step, dropout on the adapter's input, the update merged back into
    the frozen weight under no_grad, and a second adapter as a parametrization."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(903)

    class LoRALinear(nn.Module):
        def __init__(self, base, r=2, alpha=4, dropout=0.1):
            super().__init__()
            self.base = base
            self.base.requires_grad_(False)
            self.lora_A = nn.Parameter(torch.empty(r, base.in_features))
            self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
            nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
            self.scaling = alpha / r
            self.dropout = nn.Dropout(dropout)
            self.merged = False

        def forward(self, x):
            out = self.base(x)
            if not self.merged:
                out = out + self.dropout(x) @ self.lora_A.T @ self.lora_B.T * self.scaling
            return out

        @torch.no_grad()
        def merge(self):
            self.base.weight += (self.lora_B @ self.lora_A) * self.scaling
            self.merged = True

    model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3))
    model[0] = LoRALinear(model[0])
    model[2] = LoRALinear(model[2], r=1, alpha=1)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    show(trainable, total, f"trainable: {100 * trainable / total:.2f}%")
    show([n for n, p in model.named_parameters() if p.requires_grad], model[0].lora_A)
    opt = torch.optim.AdamW((p for p in model.parameters() if p.requires_grad), lr=1e-2)
    x, y = torch.randn(4, 6), torch.randn(4, 3)
    for _ in range(3):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(loss, model[0].base.weight.grad, model[2].lora_B.grad)
    model.eval()
    before = model(x)
    for layer in (model[0], model[2]):
        layer.merge()
    after = model(x)
    show(torch.allclose(before, after, atol=1e-6), model[0].base.weight.requires_grad, model[0].base.weight._version)
    show(before, after.grad_fn, after.requires_grad)

    class LowRankDelta(nn.Module):
        def __init__(self, out_features, in_features):
            super().__init__()
            self.A = nn.Parameter(torch.randn(1, in_features) * 0.1)
            self.B = nn.Parameter(torch.randn(out_features, 1) * 0.1)

        def forward(self, w):
            return w + self.B @ self.A

    lin = nn.Linear(4, 2)
    original = lin.weight.detach().clone()
    torch.nn.utils.parametrize.register_parametrization(lin, "weight", LowRankDelta(2, 4))
    show(lin.weight - original, type(lin).__name__, sorted(lin.state_dict()))
    lin(torch.ones(1, 4)).sum().backward()
    delta = lin.parametrizations.weight[0]
    show(delta.A.grad, delta.B.grad, lin.parametrizations.weight.original.grad)
    torch.nn.utils.parametrize.remove_parametrizations(lin, "weight", leave_parametrized=True)
    show(lin.weight - original, type(lin).__name__, lin.weight.requires_grad)


def _masked_lm_losses(lib, show):
    """Losses of masked and causal language models: label-smoothed cross entropy with ignore_index=-100 over
    flattened logits (mean, sum, none), BERT-style token masking drawn from bernoulli, padded attention masks
    through F.pad and an additive mask, a z-loss through logsumexp, and per-sequence means over the kept tokens."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(904)
    vocab, batch, seq, mask_id, pad_id = 10, 3, 5, 9, 0
    tokens = torch.randint(1, 9, (batch, seq))
    lengths = torch.tensor([5, 3, 4])
    padding = torch.arange(seq)[None, :] >= lengths[:, None]
    tokens = tokens.masked_fill(padding, pad_id)
    chosen = torch.bernoulli(torch.full(tokens.shape, 0.3)).bool() & ~padding
    labels = torch.where(chosen, tokens, torch.full_like(tokens, -100))
    inputs = tokens.masked_fill(chosen, mask_id)
    show(tokens, chosen, labels, inputs)
    logits = torch.randn(batch, seq, vocab, requires_grad=True)
    flat = logits.view(-1, vocab), labels.view(-1)
    mean = F.cross_entropy(*flat, ignore_index=-100, label_smoothing=0.1)
    summed = F.cross_entropy(*flat, reduction="sum", label_smoothing=0.1)
    each = F.cross_entropy(*flat, reduction="none", label_smoothing=0.1)
    show(mean, summed, each, torch.isclose(summed / (labels != -100).sum(), mean))
    per_seq = each.view(batch, seq).sum(1) / (labels != -100).sum(1).clamp(min=1)
    show(per_seq, (labels != -100).sum(1))
    z_loss = 1e-4 * torch.logsumexp(logits, dim=-1).pow(2)[~padding].mean()
    (mean + z_loss).backward()
    show(z_loss, logits.grad[1, 4], logits.grad.abs().sum())
    all_ignored = torch.full((4,), -100)
    show(F.cross_entropy(torch.randn(4, vocab), all_ignored), F.nll_loss(torch.randn(4, vocab), all_ignored))
    show_outcome(show, lambda: F.cross_entropy(logits.view(-1, vocab), labels))
    show_outcome(show, lambda: F.cross_entropy(logits.detach().view(-1, vocab), labels.view(-1).float()))
    show_outcome(show, lambda: F.cross_entropy(logits.detach().view(-1, vocab), labels.view(-1) + 100))
    show_outcome(show, lambda: F.cross_entropy(logits.detach().transpose(1, 2), labels, label_smoothing=1.5))
    show(F.cross_entropy(logits.detach().transpose(1, 2), labels, label_smoothing=0.2))
    attn = (~padding).long()
    padded = F.pad(attn, (2, 0), value=0)
    additive = (1.0 - padded[:, None, None, :].float()) * torch.finfo(torch.float32).min
    show(padded, additive.shape, additive[1, 0, 0], F.pad(attn, (0, 1, 1, 0), mode="constant", value=1))
    keep = torch.rand(batch, seq) > 0.2
    dropped = torch.where(keep[..., None], torch.randn(batch, seq, 4), torch.zeros(()))
    show(keep, dropped.sum(-1))


def _bf16_autocast_training(lib, show):
    """Two training steps of the tiny GPT under ``torch.autocast('cpu', dtype=torch.bfloat16)``: which dtype each
    layer returns, the float32 loss and gradients, the parameters kept in float32, and a model cast to bfloat16 outright."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(905)
    model = _tiny_gpt(lib, n_layer=1)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.0)
    data = torch.randint(0, 13, (2, 7))
    inputs, targets = data[:, :-1], data[:, 1:].contiguous()
    seen: dict = {}

    def record(name):
        def hook(module, args, out):
            seen[name] = (args[0].dtype, out.dtype)
        return hook

    for name in ("lm_head", "ln_f", "blocks.0.attn", "blocks.0.mlp.1", "wte"):
        model.get_submodule(name).register_forward_hook(record(name))
    for _ in range(2):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits, loss = model(inputs, targets)
            show(torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"), logits.dtype, loss.dtype)
        opt.zero_grad()
        loss.backward()
        show(sorted((k, str(a), str(b)) for k, (a, b) in seen.items()))
        show(loss, model.lm_head.weight.grad.dtype, model.blocks[0].attn.weight.grad.norm())
        opt.step()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a, b = torch.randn(3, 4), torch.randn(4, 2)
        mm = a @ b
        show(mm.float(), mm.dtype, (mm.float() + 1).dtype, torch.mm(a.double(), b.double()).dtype)
        show(torch.softmax(mm, -1).dtype, F.layer_norm(mm, (2,)).dtype, torch.exp(mm).dtype, (mm + a[:, :2]).dtype)
        show(torch.cat([mm, a[:, :2]]).dtype, torch.stack([mm.float(), a[:, :2]]).dtype, F.gelu(mm).dtype)
        with torch.autocast("cpu", enabled=False):
            show((a @ b).dtype, (mm @ mm.T).dtype)
    low = model.to(torch.bfloat16)
    logits, loss = low(inputs, targets)
    show(logits.dtype, loss.dtype, loss.float(), low.wte.weight.dtype)
    show_outcome(show, lambda: low(inputs)[0] @ torch.ones(13, 2))


def _vq_vae_codebook(lib, show):
    """A VQ-VAE bottleneck: nearest codes by squared distances (and cdist), the straight-through estimator
    ``z + (q - z).detach()``, codebook and commitment losses, codebook usage by bincount and its perplexity, and an
    EMA codebook update through one_hot and index_add_."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(906)
    codebook = nn.Embedding(6, 3)
    codebook.weight.data.uniform_(-1 / 6, 1 / 6)
    encoder = nn.Conv1d(2, 3, 1)
    x = torch.randn(2, 2, 5, requires_grad=True)
    z = encoder(x).permute(0, 2, 1)
    flat = z.reshape(-1, 3)
    distances = flat.pow(2).sum(1, keepdim=True) - 2 * flat @ codebook.weight.t() + codebook.weight.pow(2).sum(1)
    codes = distances.argmin(1)
    show(codes, torch.equal(codes, torch.cdist(flat, codebook.weight).argmin(1)), distances.grad_fn.name())
    quantized = codebook(codes).view_as(z)
    codebook_loss = F.mse_loss(quantized, z.detach())
    commitment = F.mse_loss(z, quantized.detach())
    straight = z + (quantized - z).detach()
    show(straight.grad_fn.name(), torch.allclose(straight, quantized), codebook_loss, commitment)
    (straight.sum() + codebook_loss + 0.25 * commitment).backward()
    show(x.grad, encoder.weight.grad, codebook.weight.grad)
    usage = torch.bincount(codes, minlength=6)
    probs = usage.float() / usage.sum()
    perplexity = torch.exp(-(probs * torch.log(probs + 1e-10)).sum())
    show(usage, perplexity, (usage == 0).sum().item())
    one_hot = F.one_hot(codes, 6).float()
    cluster_size = torch.zeros(6).mul_(0.99).add_(one_hot.sum(0), alpha=0.01)
    embed_sum = torch.zeros(6, 3).index_add_(0, codes, flat.detach())
    n = cluster_size.sum()
    smoothed = (cluster_size + 1e-5) / (n + 6 * 1e-5) * n
    show(cluster_size, embed_sum, embed_sum / smoothed.unsqueeze(1))
    show_outcome(show, lambda: torch.bincount(codes.float()))
    show_outcome(show, lambda: torch.bincount(codes - 1))


def _ddim_sampler(lib, show):
    """A DDIM sampler loop under no_grad: a linear beta schedule, alphas_cumprod read by gather at timesteps
    from linspace(...).long(), predicted x0 clamped, deterministic (eta 0) and stochastic (eta 1) steps from a
    seeded generator, and classifier-free guidance mixing two predictions."""
    torch, nn = lib, lib.nn
    torch.manual_seed(907)
    steps = 50
    betas = torch.linspace(1e-4, 0.02, steps, dtype=torch.float64)
    alphas_cumprod = torch.cumprod(1 - betas, dim=0).float()
    timesteps = torch.linspace(steps - 1, 0, 6).long()
    show(timesteps, alphas_cumprod[[0, 24, 49]], alphas_cumprod.dtype)
    model = nn.Sequential(nn.Linear(5, 16), nn.SiLU(), nn.Linear(16, 4))

    def eps_model(x, t, cond):
        t_feat = (t.float() / steps).expand(x.shape[0], 1)
        return model(torch.cat([x, t_feat], dim=1)) * (1 + cond)

    gen = torch.Generator().manual_seed(11)
    for eta in (0.0, 1.0):
        x = torch.randn(3, 4, generator=gen)
        with torch.no_grad():
            for i, t in enumerate(timesteps):
                t_prev = timesteps[i + 1] if i + 1 < len(timesteps) else torch.tensor(-1)
                a_t = alphas_cumprod.gather(0, t.view(1))
                a_prev = alphas_cumprod[t_prev] if t_prev >= 0 else torch.tensor(1.0)
                eps = eps_model(x, t, 0.0) + 2.0 * (eps_model(x, t, 1.0) - eps_model(x, t, 0.0))
                x0 = ((x - (1 - a_t).sqrt() * eps) / a_t.sqrt()).clamp(-1, 1)
                sigma = eta * ((1 - a_prev) / (1 - a_t) * (1 - a_t / a_prev)).sqrt()
                noise = torch.randn(x.shape, generator=gen) if eta > 0 else torch.zeros_like(x)
                x = a_prev.sqrt() * x0 + (1 - a_prev - sigma ** 2).clamp(min=0).sqrt() * eps + sigma * noise
        show(eta, x, x.requires_grad, sigma)
    show(torch.is_grad_enabled(), torch.linspace(0, 1, 1), torch.linspace(3, 3, 4).long())
    show_outcome(show, lambda: torch.linspace(0, 1, -1))


def _gumbel_and_clip(lib, show):
    """A discrete bottleneck through F.gumbel_softmax (soft and hard, seeded) whose gradient reaches the logits,
    and a CLIP-style symmetric contrastive loss with a learnable temperature clamped by exp().clamp(max=100)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(908)
    logits = torch.randn(4, 5, requires_grad=True)
    soft = F.gumbel_softmax(logits, tau=0.7)
    hard = F.gumbel_softmax(logits, tau=0.7, hard=True)
    show(soft, hard, hard.sum(-1), hard.grad_fn.name())
    values = torch.arange(5.0)
    (hard @ values).sum().backward()
    show(logits.grad, F.gumbel_softmax(logits, tau=1.0, hard=True, dim=0).argmax(0))
    image_proj, text_proj = nn.Linear(6, 4, bias=False), nn.Linear(7, 4, bias=False)
    logit_scale = nn.Parameter(torch.ones([]) * math.log(1 / 0.07))
    images, texts = torch.randn(3, 6), torch.randn(3, 7)
    opt = torch.optim.AdamW([*image_proj.parameters(), *text_proj.parameters(), logit_scale], lr=0.5)
    for _ in range(3):
        img = F.normalize(image_proj(images), dim=-1)
        txt = F.normalize(text_proj(texts), dim=-1)
        scale = logit_scale.exp().clamp(max=100)
        per_image = scale * img @ txt.t()
        labels = torch.arange(3)
        loss = (F.cross_entropy(per_image, labels) + F.cross_entropy(per_image.t(), labels)) / 2
        opt.zero_grad()
        loss.backward()
        show(loss, scale, logit_scale.grad, (per_image.argmax(1) == labels).float().mean())
        opt.step()
        with torch.no_grad():
            logit_scale.clamp_(0, math.log(100))
    show(logit_scale.detach().clone(), scale.grad_fn.name())
    show_outcome(show, lambda: F.gumbel_softmax(logits, tau=0.0, hard=True))


def _ema_and_state_dicts(lib, show):
    """An EMA of a model's weights kept by torch._foreach_mul_/_foreach_add_ and by lerp_, compared; the EMA
    saved with torch.save to a BytesIO and loaded with weights_only=True into a fresh model; and loading's
    refusals (a missing key, a wrong shape)."""
    torch, nn = lib, lib.nn
    torch.manual_seed(909)
    model = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 2))
    ema = [p.detach().clone() for p in model.parameters()]
    ema_lerp = [p.detach().clone() for p in model.parameters()]
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    decay = 0.9
    for _ in range(3):
        loss = model(torch.randn(5, 3)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            params = [p.detach() for p in model.parameters()]
            torch._foreach_mul_(ema, decay)
            torch._foreach_add_(ema, params, alpha=1 - decay)
            for e, p in zip(ema_lerp, params):
                e.lerp_(p, 1 - decay)
    show(ema[0], ema_lerp[0], max((a - b).abs().max() for a, b in zip(ema, ema_lerp)))
    show(torch._foreach_norm(ema)[2], torch._foreach_add(ema[:2], 1.0)[1])
    names = [n for n, _ in model.named_parameters()]
    buffer = io.BytesIO()
    torch.save({"ema": dict(zip(names, ema)), "step": 3}, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)
    fresh = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Linear(4, 2))
    result = fresh.load_state_dict(loaded["ema"])
    show(result, loaded["step"], sorted(loaded["ema"]), fresh[2].bias)
    partial = dict(loaded["ema"])
    partial.pop("1.bias")
    show_outcome(show, lambda: fresh.load_state_dict(partial))
    show(fresh.load_state_dict(partial, strict=False))
    partial["0.weight"] = torch.zeros(2, 2)
    show_outcome(show, lambda: fresh.load_state_dict(partial, strict=False))


def _einops_style_rearranges(lib, show):
    """What einops' rearrange does, written with permute/reshape/unflatten/flatten/einsum: patchify an image
    batch (b c (h p1) (w p2) -> b (h w) (p1 p2 c)) and back, split and merge attention heads, a causal mask from
    tril/masked_fill(-inf) with its fully masked rows, and a bilinear einsum; the gradients through them."""
    torch = lib
    torch.manual_seed(910)
    images = torch.randn(2, 3, 4, 6, requires_grad=True)
    b, c, h, w, p = *images.shape, 2
    patches = images.unflatten(2, (h // p, p)).unflatten(4, (w // p, p)).permute(0, 2, 4, 3, 5, 1)
    patches = patches.flatten(3).flatten(1, 2)
    show(patches.shape, patches.is_contiguous(), patches.grad_fn.name(), patches[1, 4])
    back = patches.view(b, h // p, w // p, p, p, c).permute(0, 5, 1, 3, 2, 4).reshape(b, c, h, w)
    show(torch.equal(back, images), back.grad_fn.name())
    by_einsum = torch.einsum("bchpwq->bhwpqc", images.view(b, c, h // p, p, w // p, p)).reshape(b, -1, p * p * c)
    show(torch.equal(by_einsum, patches))
    (patches * torch.arange(patches.shape[-1])).sum().backward()
    show(images.grad[0, :, :2, :2])
    x = torch.randn(2, 5, 8)
    heads = x.view(2, 5, 2, 4).transpose(1, 2)
    merged = heads.transpose(1, 2).reshape(2, 5, 8)
    show(heads.shape, heads.stride(), torch.equal(merged, x), merged.is_contiguous())
    show_outcome(show, lambda: heads.transpose(1, 2).view(2, 5, 8))
    scores = torch.einsum("bhqd,bhkd->bhqk", heads, heads) / 2.0
    causal = torch.tril(torch.ones(5, 5, dtype=torch.bool))
    masked = scores.masked_fill(~causal, float("-inf"))
    show(masked[0, 0], torch.softmax(masked, -1)[0, 0, 0])
    no_row = masked.masked_fill(torch.tensor([True, False, False, False, False])[:, None], float("-inf"))
    show(torch.softmax(no_row, -1)[0, 0, :2], torch.nan_to_num(torch.softmax(no_row, -1))[0, 0, 0])
    bilinear = torch.einsum("bi,ij,bj->b", x[:, 0], torch.eye(8), x[:, 1])
    show(bilinear, (x[:, 0] * x[:, 1]).sum(-1))
    show_outcome(show, lambda: torch.einsum("bi,bj->bk", x[:, 0], x[:, 1]))


PROGRAMS = [
    _llama_decoder_block,
    _kv_cache_generation,
    _gpt_training_recipe,
    _lora_adapter,
    _masked_lm_losses,
    _bf16_autocast_training,
    _vq_vae_codebook,
    _ddim_sampler,
    _gumbel_and_clip,
    _ema_and_state_dicts,
    _einops_style_rearranges,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
