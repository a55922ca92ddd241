"""A fifth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: an actor-critic with Categorical, Independent Normal and a
tanh-squashed TransformedDistribution; a packed bidirectional multi-layer GRU encoder feeding an LSTM decoder; a CNN
with cumulative and untracked batch statistics, Dropout2d, MaxUnpool and adaptive max pooling; a WGAN-GP step and a
second-order MAML loop; autograd.functional on a small MLP; deepcopy of a model and its optimizer and pickles of
tensors; load_state_dict's strict/assign results, messages and state-dict hooks; forward hooks with kwargs and
always_call; reprs of odd tensors under print options; stable sorts, unique_consecutive and scans with ties;
selections on 0-d and empty shapes; interpolation modes and nearest grid_sample; scheduler chains saved and restored;
SWA; Embedding's padding_idx/max_norm/scale_grad_by_freq; linear algebra in losses; convolution variants; the
Python-number boundary; index accumulation; optimizer options; recurrent cells unrolled by hand; GradScaler on the
CPU; hooks on the autograd graph; the legacy reparametrizations; and packed batches converted between dtypes.
Everything is drawn from the seeded global generator (or seeded generators), which is torch's. Parameters and
buffers shown inside a loop are copied first (``show`` keeps the tensor's memory, which the next steps write).

Differences these programs found, now fixed (``tests/ops/test_program5_findings_vs_torch.py``):
- ``load_state_dict(sd, assign=True)`` did not record ``assign_to_params_buffers`` in ``sd._metadata`` (torch
  writes it into the caller's metadata, so later plain loads of that dict assign too);
- ``Module.to(torch.complex64)`` did not warn that complex modules are under development;
- ``torch.autocast("cpu", dtype=torch.float64)`` raised NotImplementedError where torch warns and disables itself;
- ``x[[idx0, idx1]]`` (a list read as a tuple of indices) did not warn that this reading is deprecated;
- ``PackedSequence`` lacked ``cpu``/``cuda``/``pin_memory``/``is_pinned`` and ``half``/``long``/``int``/... ;
- ``torch.cuda.empty_cache``/``memory_allocated``/``get_device_name``/... did not exist;
- the legacy ``scatter(reduce=...)`` warned on every call (torch: once a process).

Left: sparse tensors (``nn.Embedding(sparse=True)`` gives a dense gradient), ``torch.func``'s transforms
(``functional_call`` is there, as are ``torch.jit``/``torch.compiler``/``torch.distributed``'s eager answers);
``pack_padded_sequence`` refuses a length beyond the padded length where torch reads past the tensor.
"""

from __future__ import annotations

import copy
import importlib
import io
import math
import pickle

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _actor_critic(lib, show):
    """Advantage actor-critic on a toy bandit: a shared trunk with a Categorical policy head and a value head,
    entropy bonus, discounted returns, sampling through an explicit generator, then a Gaussian policy with
    Independent Normal and a tanh-squashed TransformedDistribution."""
    torch, nn = lib, lib.nn
    D = torch.distributions
    torch.manual_seed(7)

    class ActorCritic(nn.Module):
        def __init__(self, obs=4, actions=3):
            super().__init__()
            self.trunk = nn.Sequential(nn.Linear(obs, 16), nn.Tanh())
            self.pi = nn.Linear(16, actions)
            self.v = nn.Linear(16, 1)

        def forward(self, s):
            h = self.trunk(s)
            return D.Categorical(logits=self.pi(h)), self.v(h).squeeze(-1)

    net = ActorCritic()
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(3)
    gamma = 0.9
    for episode in range(3):
        states = torch.randn(5, 4, generator=gen)
        dist, values = net(states)
        actions = dist.sample()
        rewards = (actions == 1).float() - 0.1 * actions.float()
        returns, running = [], torch.tensor(0.0)
        for r in reversed(rewards.unbind(0)):
            running = r + gamma * running
            returns.insert(0, running)
        returns = torch.stack(returns)
        advantage = returns - values
        loss = -(dist.log_prob(actions) * advantage.detach()).mean() + advantage.pow(2).mean() * 0.5
        loss = loss - 0.01 * dist.entropy().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(episode, actions, returns, loss, dist.probs.sum(-1))
    show(dist, dist.batch_shape, dist.event_shape, dist.logits.grad_fn is not None)

    mu = torch.zeros(2, 3, requires_grad=True)
    log_std = torch.full((2, 3), -0.5, requires_grad=True)
    normal = D.Independent(D.Normal(mu, log_std.exp()), 1)
    a = normal.rsample()
    show(normal.batch_shape, normal.event_shape, normal.log_prob(a), normal.entropy())
    squashed = D.TransformedDistribution(D.Normal(mu, log_std.exp()), [D.transforms.TanhTransform(cache_size=1)])
    y = squashed.rsample()
    lp = squashed.log_prob(y).sum()
    lp.backward()
    show(y, lp, mu.grad, log_std.grad)
    show(D.kl_divergence(D.Normal(mu, log_std.exp()), D.Normal(0.0, 1.0)).sum())
    show(D.Categorical(probs=torch.tensor([0.2, 0.3, 0.5])).sample((4,), ))
    show_outcome(show, lambda: D.Categorical(probs=torch.tensor([0.2, -0.3, 0.5])))
    show_outcome(show, lambda: D.Normal(torch.tensor([0.0]), torch.tensor([-1.0])))
    show(D.Bernoulli(logits=torch.tensor([0.0, 2.0])).log_prob(torch.tensor([1.0, 0.0])))
    show(D.Categorical(logits=torch.tensor([[1.0, 2.0], [0.0, 0.0]])).enumerate_support())


def _seq2seq_rnns(lib, show):
    """An encoder-decoder with a two-layer bidirectional GRU encoder over packed sequences (batch_first), its final
    states merged into a two-layer LSTM decoder given an explicit initial state, dropout between layers in train
    mode and off in eval."""
    torch, nn = lib, lib.nn
    utils = nn.utils.rnn
    torch.manual_seed(11)
    enc = nn.GRU(5, 6, num_layers=2, bidirectional=True, batch_first=True, dropout=0.3)
    bridge = nn.Linear(12, 6)
    dec = nn.LSTM(4, 6, num_layers=2, dropout=0.2)
    out_proj = nn.Linear(6, 4)
    seqs = [torch.randn(n, 5) for n in (4, 2, 3)]
    lengths = torch.tensor([len(s) for s in seqs])
    padded = utils.pad_sequence(seqs, batch_first=True)
    show(padded.shape, utils.pad_sequence(seqs, padding_value=-1.0)[:, 1])
    packed = utils.pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    show(packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
    params = [*enc.parameters(), *bridge.parameters(), *dec.parameters(), *out_proj.parameters()]
    opt = torch.optim.SGD(params, lr=0.1, momentum=0.9)
    for mode in ("train", "eval"):
        for m in (enc, dec):
            m.train(mode == "train")
        out, h_n = enc(packed)
        unpacked, out_lengths = utils.pad_packed_sequence(out, batch_first=True, total_length=5)
        h_last = torch.cat([h_n[-2], h_n[-1]], dim=-1)
        h0 = torch.tanh(bridge(h_last)).unsqueeze(0).repeat(2, 1, 1)
        c0 = torch.zeros_like(h0)
        dec_in = torch.randn(3, 3, 4)
        dec_out, (h, c) = dec(dec_in, (h0, c0))
        loss = out_proj(dec_out).pow(2).mean() + unpacked.abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(mode, unpacked.shape, out_lengths, unpacked[1, 2:], h_n.shape, loss, c.shape)
        show(enc.weight_hh_l1_reverse.grad.norm(), dec.bias_ih_l1.grad[:3])
    show_outcome(show, lambda: dec(torch.randn(3, 3, 4), (torch.zeros(1, 3, 6), torch.zeros(1, 3, 6))))
    show_outcome(show, lambda: enc(torch.randn(2, 3, 4)))
    sorted_packed = utils.pack_sequence([torch.ones(3, 1), torch.ones(2, 1)])
    show(sorted_packed.data.shape, sorted_packed.batch_sizes, sorted_packed.sorted_indices)
    show_outcome(show, lambda: utils.pack_sequence([torch.ones(2, 1), torch.ones(3, 1)]))
    show(utils.unpad_sequence(padded, lengths, batch_first=True)[1])
    show(utils.unpack_sequence(packed)[2].shape)


def _batchnorm_cnn(lib, show):
    """A small CNN with BatchNorm2d in train and eval mode (cumulative averages with momentum=None, no running
    statistics), Dropout2d, max pooling with indices undone by MaxUnpool2d, and adaptive max pooling."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(21)
    bn = nn.BatchNorm2d(3, momentum=None).double()  # (float64: the gradients through the batch statistics are
    bn_free = nn.BatchNorm2d(3, track_running_stats=False, affine=False)  # sums whose float32 rounding differs)
    conv = nn.Conv2d(3, 3, 3, padding=1).double()
    drop = nn.Dropout2d(0.5)
    x = torch.randn(4, 3, 6, 6, dtype=torch.float64)
    for step in range(3):
        y = bn(conv(x + step))
        show(step, bn.running_mean.clone(), bn.running_var.clone(), bn.num_batches_tracked.clone())
    show(bn_free.running_mean, bn_free(x).mean((0, 2, 3)))
    bn.eval()
    bn_free.eval()
    show(bn(x)[0, 0, 0], bn_free(x)[0, 0, 0])
    show(drop(x)[:, :, 0, 0])
    drop.eval()
    show(torch.equal(drop(x), x))
    pooled, idx = F.max_pool2d(y, 2, return_indices=True)
    show(pooled[0, 0], idx[0, 0])
    unpool = nn.MaxUnpool2d(2)
    restored = unpool(pooled, idx)
    show(restored[0, 0], unpool(pooled, idx, output_size=(7, 7)).shape)
    pool1d, i1 = F.max_pool1d(torch.arange(10.0).view(1, 1, 10).flip(-1), 3, stride=2, return_indices=True)
    show(pool1d, i1, F.max_unpool1d(pool1d, i1, 3, stride=2))
    amp = nn.AdaptiveMaxPool2d((2, 3), return_indices=True)
    v, i = amp(y)
    show(v[1, 2], i[1, 2])
    show(F.adaptive_max_pool1d(torch.arange(7.0).view(1, 1, 7), 3))
    show(F.adaptive_avg_pool2d(y, (None, 2)).shape, F.adaptive_avg_pool2d(y, 4)[0, 0])
    (y * torch.linspace(-1, 1, y.numel()).view_as(y)).sum().backward()
    show(conv.weight.grad[0, 0], bn.weight.grad, bn.bias.grad)
    show_outcome(show, lambda: bn(torch.randn(2, 4, 3, 3)))
    show_outcome(show, lambda: nn.BatchNorm2d(3).train()(torch.randn(1, 3, 1, 1)))
    show_outcome(show, lambda: nn.BatchNorm1d(3)(torch.randn(4, 3, 2, 2)))


def _wgan_gp_and_maml(lib, show):
    """A WGAN-GP critic step whose gradient penalty uses create_graph=True through a conv critic, then a MAML
    inner loop with second-order gradients taken through the adapted weights (functional forward)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(31)
    critic = nn.Sequential(nn.Conv2d(1, 4, 3, stride=2), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(4 * 3 * 3, 1))
    opt = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.0, 0.9))
    real = torch.randn(4, 1, 7, 7)
    fake = torch.randn(4, 1, 7, 7)
    for step in range(2):
        eps = torch.rand(4, 1, 1, 1)
        mix = (eps * real + (1 - eps) * fake).requires_grad_(True)
        score = critic(mix)
        (grad,) = torch.autograd.grad(score, mix, grad_outputs=torch.ones_like(score), create_graph=True)
        gp = ((grad.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
        loss = critic(fake).mean() - critic(real).mean() + 10 * gp
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, gp, loss, critic[0].weight.grad[0, 0], grad.grad_fn is not None)

    torch.manual_seed(32)
    model = nn.Linear(2, 1)
    meta_opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for task in range(2):
        xs, ys = torch.randn(6, 2), torch.randn(6, 1)
        fast = dict(model.named_parameters())
        for _ in range(2):
            inner = F.mse_loss(torch.func.functional_call(model, fast, (xs[:3],)) if hasattr(torch, "func")
                               else F.linear(xs[:3], fast["weight"], fast["bias"]), ys[:3])
            grads = torch.autograd.grad(inner, list(fast.values()), create_graph=True)
            fast = {k: v - 0.1 * g for (k, v), g in zip(fast.items(), grads)}
        outer = F.mse_loss(F.linear(xs[3:], fast["weight"], fast["bias"]), ys[3:])
        meta_opt.zero_grad()
        outer.backward()
        show(task, outer, model.weight.grad, model.bias.grad, fast["weight"].grad_fn)
        meta_opt.step()
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    g1 = torch.autograd.grad((w ** 3).sum(), w, create_graph=True)[0]
    g2 = torch.autograd.grad(g1.sum(), w, retain_graph=True)[0]
    show(g1, g2)
    show_outcome(show, lambda: torch.autograd.grad(g1.sum(), w))
    show_outcome(show, lambda: torch.autograd.grad((w * 2).sum(), [w, torch.zeros(1, requires_grad=True)]))


def _autograd_functional_small_models(lib, show):
    """autograd.functional on a small MLP: jacobian (vectorize=False, create_graph), hessian of a loss in its
    flat weights, hvp/vhp/jvp/vjp with their (output, result) tuples."""
    torch, nn = lib, lib.nn
    AF = torch.autograd.functional
    torch.manual_seed(41)
    net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    x = torch.randn(3)
    jac = AF.jacobian(net, x)
    show(jac, AF.jacobian(net, x, vectorize=False, strategy="reverse-mode").shape)
    w0 = net[0].weight.detach().clone()

    def loss_of_w(w):
        return torch.tanh(x @ w.T).pow(2).sum()

    hess = AF.hessian(loss_of_w, w0)
    show(hess.shape, hess[0, 0])
    v = torch.ones_like(w0)
    out, hv = AF.hvp(loss_of_w, w0, v)
    show(out, hv)
    out, vh = AF.vhp(loss_of_w, w0, v)
    show(torch.allclose(hv, vh), vh.grad_fn)
    show(AF.jvp(net, x, torch.ones(3)), AF.vjp(net, x, torch.ones(2)))
    jac2 = AF.jacobian(lambda a, b: (a * b, a + b), (x, x.flip(0)), create_graph=True)
    show(type(jac2).__name__, len(jac2), type(jac2[0]).__name__, jac2[0][1])
    show_outcome(show, lambda: AF.hvp(loss_of_w, w0, torch.ones(2)))
    show_outcome(show, lambda: AF.jacobian(lambda t: t.detach() * 2, x, strict=True))
    show(AF.jacobian(lambda t: t.detach() * 2, x))


def _deepcopy_and_pickle(lib, show):
    """copy.deepcopy of a trained model and its Adam optimizer (the copy's state must follow its own parameters),
    pickling of tensors, Parameters and views, and deepcopy of tensors with gradients."""
    torch, nn = lib, lib.nn
    torch.manual_seed(51)
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    x = torch.randn(5, 3)
    model(x).sum().backward()
    opt.step()
    twin = copy.deepcopy(model)
    twin_opt = torch.optim.Adam(twin.parameters(), lr=0.1)
    twin_opt.load_state_dict(copy.deepcopy(opt.state_dict()))
    show(twin[0].weight.grad, twin[0].weight is model[0].weight, twin[0].weight.requires_grad)
    for m, o in ((model, opt), (twin, twin_opt)):
        o.zero_grad()
        m(x).pow(2).mean().backward()
        o.step()
    show(torch.equal(model[2].weight, twin[2].weight), twin_opt.state_dict()["state"][0]["step"])
    opt_copy = copy.deepcopy(opt)
    show(opt_copy.state_dict()["param_groups"], list(opt_copy.state.values())[0]["exp_avg"])
    t = torch.arange(6.0).view(2, 3)
    p = nn.Parameter(torch.ones(2))
    p.grad = torch.full((2,), 3.0)
    back_t, back_p = pickle.loads(pickle.dumps((t, p)))
    show(back_t, type(back_p).__name__, back_p.requires_grad, back_p.grad)
    view = t[:, 1]
    back_view = pickle.loads(pickle.dumps(view))
    show(back_view, back_view.is_contiguous(), back_view.stride())
    leaf = torch.ones(2, requires_grad=True)
    (leaf * 2).sum().backward()
    c = copy.deepcopy(leaf)
    show(c, c.grad, c.is_leaf)
    show_outcome(show, lambda: copy.deepcopy(leaf * 2))
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "int": torch.tensor([1, 2], dtype=torch.int8)}, buf)
    buf.seek(0)
    loaded = torch.load(buf)
    show(sorted(loaded["model"]), loaded["int"], loaded["model"]["0.bias"])
    z = torch.zeros(3, dtype=torch.complex64)
    show(pickle.loads(pickle.dumps(z)), copy.copy(torch.tensor(True)))


def _state_dict_loading(lib, show):
    """load_state_dict with strict=False (the _IncompatibleKeys it returns) and the messages for missing,
    unexpected and shape-mismatched keys, state_dict hooks, and assign=True."""
    torch, nn = lib, lib.nn
    torch.manual_seed(61)

    class Net(nn.Module):
        def __init__(self, hidden=4):
            super().__init__()
            self.body = nn.Linear(3, hidden)
            self.bn = nn.BatchNorm1d(hidden)
            self.head = nn.Linear(hidden, 2)

    net = Net()
    sd = net.state_dict()
    show(list(sd.keys()))
    partial = {k: v for k, v in sd.items() if not k.startswith("head")}
    partial["extra.weight"] = torch.zeros(1)
    result = Net().load_state_dict(partial, strict=False)
    show(result, result.missing_keys, result.unexpected_keys)
    show_outcome(show, lambda: Net().load_state_dict(partial))
    show_outcome(show, lambda: Net(hidden=5).load_state_dict(sd))
    show_outcome(show, lambda: Net(hidden=5).load_state_dict(sd, strict=False))
    show(Net().load_state_dict(sd))
    show_outcome(show, lambda: Net().load_state_dict([1, 2]))
    target = Net()
    target.load_state_dict(sd, assign=True)
    show(target.body.weight is sd["body.weight"], type(target.body.weight).__name__)

    calls = []

    def pre_hook(module, prefix, keep_vars):
        calls.append(("pre", prefix, keep_vars))

    def post_hook(module, state_dict, prefix, local_metadata):
        calls.append(("post", prefix, sorted(state_dict)[:2]))
        state_dict[prefix + "note"] = torch.tensor(1)

    net.head.register_state_dict_pre_hook(pre_hook)
    net.head.register_state_dict_post_hook(post_hook) if hasattr(net.head, "register_state_dict_post_hook") \
        else net.head._register_state_dict_hook(post_hook)
    sd2 = net.state_dict(keep_vars=True)
    show(calls, list(sd2), sd2["head.weight"].requires_grad)

    def load_pre(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        state_dict.pop(prefix + "note", None)

    net.head._register_load_state_dict_pre_hook(load_pre, with_module=True)
    seen = []
    net.register_load_state_dict_post_hook(lambda module, keys: seen.append((list(keys.missing_keys),
                                                                               list(keys.unexpected_keys))))
    show(net.load_state_dict(sd2), seen)
    show(sd._metadata[""], sd._metadata["body"])


def _forward_hooks_with_kwargs(lib, show):
    """Forward pre-hooks and forward hooks with with_kwargs=True (rewriting kwargs and the output), always_call
    hooks when forward raises, prepend ordering, and global module hooks."""
    torch, nn = lib, lib.nn
    torch.manual_seed(71)

    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)

        def forward(self, x, *, scale=1.0, fail=False):
            if fail:
                raise RuntimeError("forward failed")
            return self.lin(x) * scale

    m = Scale()
    log = []

    def pre(module, args, kwargs):
        log.append(("pre", sorted(kwargs)))
        return args, {**kwargs, "scale": kwargs.get("scale", 1.0) * 2}

    def post(module, args, kwargs, output):
        log.append(("post", kwargs["scale"]))
        return output + 1

    def first(module, args):
        log.append("first")

    def always(module, args, output):
        log.append(("always", output is None))

    h1 = m.register_forward_pre_hook(pre, with_kwargs=True)
    h2 = m.register_forward_hook(post, with_kwargs=True)
    m.register_forward_pre_hook(first, prepend=True)
    m.register_forward_hook(always, always_call=True)
    x = torch.ones(1, 2)
    y = m(x, scale=3.0)
    show(y, log)
    log.clear()
    show_outcome(show, lambda: m(x, fail=True))
    show(log)
    h1.remove()
    h2.remove()
    log.clear()
    show(m(x, scale=3.0), log)

    def bad_pre(module, args):
        return (args[0] * 0,)

    h = m.register_forward_pre_hook(bad_pre)
    show(m(x))
    h.remove()

    def single(module, args):
        return args[0] * 10

    h = m.register_forward_pre_hook(single)
    show(m(x))
    h.remove()
    show_outcome(show, lambda: m.register_forward_hook(post, with_kwargs=True, always_call=True) and m(x, fail=True))
    order = []
    g = nn.modules.module.register_module_forward_hook(lambda mod, a, o: order.append(type(mod).__name__))
    try:
        nn.Sequential(nn.ReLU(), nn.Tanh())(torch.ones(1))
    finally:
        g.remove()
    show(order)


def _printing_corners(lib, show):
    """repr of odd tensors under several print options: empty, huge/tiny values, integers, bool, complex,
    requires_grad and grad_fn, scientific mode, thresholds and edge items, linewidth and precision."""
    torch = lib
    samples = [
        torch.empty(0),
        torch.empty(2, 0, 3),
        torch.tensor([1e10, 1e-10, 1.0]),
        torch.tensor([1e-5, 2e-6]),
        torch.tensor([123456789.0, 1.5]),
        torch.tensor([-128, 0, 127], dtype=torch.int8),
        torch.tensor([True, False]),
        torch.tensor([1 + 2j, -0.5j], dtype=torch.complex64),
        torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0]),
        torch.tensor(3.5, requires_grad=True),
        torch.ones(2, requires_grad=True) * 2,
        torch.arange(5, dtype=torch.float64) / 3,
        torch.tensor([1.0, 2.0], dtype=torch.float16),
        torch.tensor([[1, 2], [200, 4]], dtype=torch.uint8),
        torch.tensor([-0.0, 0.0]),
    ]
    for t in samples:
        show(repr(t))
    torch.set_printoptions(precision=2, sci_mode=True)
    try:
        show(repr(torch.tensor([1.0, 2.5, 1000.0])), repr(torch.tensor([[1 + 1j]])))
        torch.set_printoptions(threshold=5, edgeitems=2, sci_mode=None)
        show(repr(torch.arange(20.0)), repr(torch.arange(30).view(5, 6)))
        torch.set_printoptions(profile="short")
        show(repr(torch.randn(2, 2, generator=torch.Generator().manual_seed(0))))
        torch.set_printoptions(linewidth=30, profile="default")
        show(repr(torch.linspace(0, 1, 12)))
    finally:
        torch.set_printoptions(profile="default")
    show(str(torch.tensor([1.0, 2.0]).unsqueeze(0).expand(3, 2)))
    show(repr(torch.nn.Parameter(torch.zeros(2))), repr(torch.ones(1, dtype=torch.int64) * 2))
    show(repr(torch.tensor([[1.5], [2.25]]).t()), f"{torch.tensor(2.5):.3f}", format(torch.tensor(7), "03d"))


def _sorting_and_scans(lib, show):
    """Stable sort/argsort with duplicates, sort of NaNs, unique_consecutive with inverse and counts, unique
    with dim, cummax/cummin with ties, topk/kthvalue/mode/median with ties, searchsorted and bucketize."""
    torch = lib
    x = torch.tensor([3, 1, 2, 1, 3, 2, 1])
    show(torch.sort(x, stable=True), torch.argsort(x, stable=True, descending=True))
    show(x.sort(descending=True, stable=True).indices)
    f = torch.tensor([2.0, float("nan"), -1.0, float("nan"), 0.0])
    show(f.sort(), f.sort(descending=True), f.argsort(stable=True))
    u = torch.tensor([1, 1, 2, 2, 2, 1, 3, 3])
    show(torch.unique_consecutive(u, return_inverse=True, return_counts=True))
    m = torch.tensor([[1, 2], [1, 2], [3, 4], [1, 2]])
    show(torch.unique_consecutive(m, dim=0, return_counts=True), torch.unique(m, dim=0, return_inverse=True))
    show(torch.unique(u, sorted=True, return_counts=True))
    c = torch.tensor([1.0, 3.0, 3.0, 2.0, 5.0, 5.0])
    show(torch.cummax(c, 0), torch.cummin(c.flip(0), 0))
    show(torch.topk(torch.tensor([1.0, 3.0, 3.0, 2.0, 3.0]), 2), torch.topk(torch.tensor([1, 1, 1]), 2, largest=False))
    show(torch.kthvalue(c, 3), torch.mode(torch.tensor([2, 1, 2, 1, 3])), torch.median(torch.tensor([1.0, 4.0, 2.0, 3.0])))
    show(torch.median(torch.tensor([[1.0, 2.0], [2.0, 1.0]]), dim=1), torch.nanmedian(f))
    edges = torch.tensor([0.0, 1.0, 2.0, 3.0])
    show(torch.searchsorted(edges, torch.tensor([1.0, 2.5, -1.0, 3.0]), right=True),
         torch.bucketize(torch.tensor([1.0, 2.5]), edges, out_int32=True))
    xs = torch.tensor([1.0, 3.0, 2.0], requires_grad=True)
    vals, idx = xs.cummax(0)
    vals.sum().backward()
    show(xs.grad, idx)
    xs.grad = None
    s, _ = xs.sort(descending=True)
    (s * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
    show(xs.grad)
    show(torch.msort(torch.tensor([[2, 1], [1, 2]])), torch.sort(torch.tensor([True, False, True])))
    show_outcome(show, lambda: torch.topk(torch.tensor([1.0, 2.0]), 3))
    show_outcome(show, lambda: torch.unique_consecutive(m, dim=2))


def _selection_odd_shapes(lib, show):
    """masked_select, nonzero (plain and as_tuple), where(cond) and argwhere on 0-d, empty and broadcast shapes,
    boolean index assignment and count_nonzero."""
    torch = lib
    a = torch.arange(12.0).view(3, 4)
    mask = a % 3 == 0
    show(torch.masked_select(a, mask), a.masked_select(torch.tensor([True, False, True, False])))
    show(torch.nonzero(mask), torch.nonzero(mask, as_tuple=True), torch.where(mask))
    scalar = torch.tensor(5.0)
    show(torch.nonzero(scalar), torch.nonzero(scalar, as_tuple=True), torch.where(scalar > 1))
    show(torch.nonzero(torch.tensor(0.0)), torch.argwhere(torch.zeros(2, 0)))
    empty = torch.zeros(0, 3)
    show(torch.nonzero(empty, as_tuple=True), torch.masked_select(empty, empty > 0))
    show(torch.where(mask, a, torch.tensor(-1.0)), torch.where(mask, 1.0, 0).dtype, torch.where(mask, 2, 0).dtype)
    b = a.clone()
    b[mask] = torch.tensor([10.0, 20.0, 30.0, 40.0])
    b[b > 25] = 0
    show(b, torch.count_nonzero(b, dim=0), b[b.sum(1) > 10])
    show_outcome(show, lambda: a.masked_select(torch.tensor([True, False])))
    show_outcome(show, lambda: a.__setitem__(mask, torch.tensor([1.0, 2.0])))
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    torch.masked_select(x, x > 0).sum().backward()
    show(x.grad, torch.where(x > 0, x, x * 0).grad_fn.name())
    show(a[torch.tensor([[True, False, True, False]]).expand(3, 4)], a[:, torch.tensor([False] * 4)].shape)
    show(torch.nonzero(torch.tensor([[0, 1], [2, 0]], dtype=torch.uint8)).dtype)


def _interpolation_modes(lib, show):
    """F.interpolate in nearest, nearest-exact, bilinear (align_corners on and off), bicubic, area and trilinear
    modes, scale_factor with recompute_scale_factor, gradients through them, and grid_sample in nearest mode."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(81)
    x = torch.arange(16.0).view(1, 1, 4, 4)
    show(F.interpolate(x, size=(3, 5), mode="nearest"), F.interpolate(x, size=(3, 5), mode="nearest-exact"))
    show(F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=False))
    show(F.interpolate(x, size=(3, 3), mode="bilinear", align_corners=True))
    show(F.interpolate(x, size=(2, 2), mode="area"), F.interpolate(x, size=(3, 3), mode="area"))
    show(F.interpolate(x, scale_factor=0.75, mode="bilinear", recompute_scale_factor=True).shape)
    show(F.interpolate(x, size=(5, 5), mode="bicubic", align_corners=False)[0, 0, 1])
    show(F.interpolate(torch.arange(5.0).view(1, 1, 5), scale_factor=2, mode="linear"))
    show(F.interpolate(torch.arange(8.0).view(1, 1, 2, 2, 2), size=(3, 3, 3), mode="trilinear")[0, 0, 1])
    img = torch.randn(1, 2, 4, 4, requires_grad=True)
    out = F.interpolate(img, scale_factor=2, mode="bilinear", align_corners=False)
    (out * torch.arange(out.numel()).view_as(out)).sum().backward()
    show(img.grad[0, 0])
    img.grad = None
    F.interpolate(img, size=(3, 3), mode="nearest").sum().backward()
    show(img.grad[0, 1])
    grid = torch.tensor([[[[-1.0, -1.0], [0.2, 0.4]], [[1.0, 1.0], [1.5, 0.0]]]])
    show(F.grid_sample(x, grid, mode="nearest", align_corners=True),
         F.grid_sample(x, grid, mode="nearest", padding_mode="border", align_corners=False))
    theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    show(F.affine_grid(theta, (1, 1, 2, 3), align_corners=False))
    show_outcome(show, lambda: F.interpolate(x, size=(2, 2), mode="bilinear", align_corners=True, scale_factor=2))
    show_outcome(show, lambda: F.interpolate(x, size=(2, 2), mode="nearest", align_corners=True))
    show_outcome(show, lambda: F.interpolate(x[0], size=(2, 2), mode="bilinear"))
    show(torch.nn.Upsample(scale_factor=2, mode="nearest")(torch.tensor([[[1.0, 2.0]]])))


def _scheduler_chains(lib, show):
    """Schedulers driven across a checkpoint: ReduceLROnPlateau (mode max, cooldown, threshold_mode abs),
    CyclicLR (triangular2, exp_range with momentum cycling), CosineAnnealingWarmRestarts (T_mult), MultiStepLR,
    ExponentialLR, PolynomialLR and ChainedScheduler, each saved with state_dict and restored into a fresh one."""
    torch, nn = lib, lib.nn
    optim, sched = lib.optim, lib.optim.lr_scheduler

    def fresh(lr=0.1, cls=optim.SGD, **kw):
        return cls([nn.Parameter(torch.zeros(1))], lr=lr, **kw)

    def lrs(opt, s, n, metric=None):
        out = []
        for i in range(n):
            opt.step()
            s.step(metric(i)) if metric else s.step()
            out.append(round(opt.param_groups[0]["lr"], 8))
        return out

    opt = fresh()
    plateau = sched.ReduceLROnPlateau(opt, mode="max", factor=0.5, patience=1, cooldown=1, threshold=0.1,
                                      threshold_mode="abs", min_lr=0.01)
    show(lrs(opt, plateau, 8, lambda i: [1.0, 1.05, 1.0, 1.2, 1.25, 1.0, 1.0, 1.0][i]))
    saved = plateau.state_dict()
    opt2 = fresh()
    again = sched.ReduceLROnPlateau(opt2, mode="max")
    again.load_state_dict(saved)
    show(sorted(saved), saved["best"], saved["num_bad_epochs"], again.patience, again.cooldown_counter)

    opt = fresh(cls=optim.SGD, momentum=0.9)
    cyc = sched.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2")
    show(lrs(opt, cyc, 9), opt.param_groups[0]["momentum"])
    opt = fresh(cls=optim.SGD, momentum=0.9)
    cyc2 = sched.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2, step_size_down=1, mode="exp_range",
                          gamma=0.9)
    out = lrs(opt, cyc2, 5)
    sd = cyc2.state_dict()
    opt3 = fresh(cls=optim.SGD, momentum=0.9)
    cyc3 = sched.CyclicLR(opt3, base_lr=0.01, max_lr=0.1, step_size_up=2, step_size_down=1, mode="exp_range",
                          gamma=0.9)
    cyc3.load_state_dict(sd)
    show(out, lrs(opt3, cyc3, 3), round(opt3.param_groups[0]["momentum"], 6), cyc3.last_epoch)
    show_outcome(show, lambda: sched.CyclicLR(fresh(cls=optim.Adam), base_lr=0.01, max_lr=0.1))
    show(sched.CyclicLR(fresh(cls=optim.Adam), 0.01, 0.1, cycle_momentum=False).get_last_lr())

    opt = fresh()
    warm = sched.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.001)
    show(lrs(opt, warm, 8), warm.T_cur, warm.T_i)
    opt = fresh()
    warm2 = sched.CosineAnnealingWarmRestarts(opt, T_0=3)
    for epoch in range(2):
        for batch in range(3):
            warm2.step(epoch + batch / 3)
    show(round(opt.param_groups[0]["lr"], 8), warm2.last_epoch)
    show_outcome(show, lambda: sched.CosineAnnealingWarmRestarts(fresh(), T_0=0))
    show_outcome(show, lambda: sched.CosineAnnealingWarmRestarts(fresh(), T_0=2, T_mult=0.5))

    opt = fresh()
    chain = sched.ChainedScheduler([sched.MultiStepLR(opt, milestones=[2, 4], gamma=0.5),
                                    sched.ExponentialLR(opt, gamma=0.9)])
    show(lrs(opt, chain, 5))
    opt = fresh()
    poly = sched.PolynomialLR(opt, total_iters=4, power=2.0)
    first = lrs(opt, poly, 2)
    state = poly.state_dict()
    opt4 = fresh()
    opt4.param_groups[0]["lr"] = opt.param_groups[0]["lr"]
    poly2 = sched.PolynomialLR(opt4, total_iters=4, power=2.0)
    poly2.load_state_dict(state)
    show(first, lrs(opt4, poly2, 4), sorted(state))
    opt = fresh()
    multi = sched.MultiStepLR(opt, milestones=[3, 1, 3], gamma=0.1)
    show(lrs(opt, multi, 4), multi.milestones)


def _swa_utils(lib, show):
    """Stochastic weight averaging: AveragedModel (default running mean, an EMA avg_fn, use_buffers), SWALR's
    annealing, update_bn over a loader, and the averaged model's state_dict keys."""
    torch, nn = lib, lib.nn
    swa = torch.optim.swa_utils
    torch.manual_seed(91)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    averaged = swa.AveragedModel(model)
    ema = swa.AveragedModel(model, multi_avg_fn=swa.get_ema_multi_avg_fn(0.9), use_buffers=True)
    swa_sched = swa.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy="linear")
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    for epoch in range(4):
        for xb, yb in data:
            opt.zero_grad()
            nn.functional.mse_loss(model(xb), yb).backward()
            opt.step()
        averaged.update_parameters(model)
        ema.update_parameters(model)
        swa_sched.step()
        show(epoch, opt.param_groups[0]["lr"], averaged.n_averaged, averaged.module[0].bias.clone())
    show(ema.module[1].running_mean, averaged.module[1].running_mean)
    swa.update_bn([xb for xb, _ in data], averaged)
    show(averaged.module[1].running_mean, averaged.module[1].running_var, averaged.module[1].momentum)
    averaged.eval()
    show(list(averaged.state_dict())[:3], averaged(torch.ones(2, 3)))
    cos = swa.SWALR(torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=1.0), swa_lr=0.1, anneal_epochs=2)
    out = []
    for _ in range(3):
        cos.step()
        out.append(round(cos.get_last_lr()[0], 8))
    show(out)
    show_outcome(show, lambda: swa.SWALR(opt, swa_lr=0.05, anneal_strategy="step"))
    show_outcome(show, lambda: swa.SWALR(opt, swa_lr=0.05, anneal_epochs=-1))


def _embeddings(lib, show):
    """nn.Embedding with padding_idx (zero row, no gradient), max_norm renormalising rows in place, scale_grad_by_freq,
    from_pretrained(freeze), sparse gradients and the errors for out-of-range indices."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(101)
    emb = nn.Embedding(6, 3, padding_idx=0)
    idx = torch.tensor([[0, 2, 2], [5, 0, 1]])
    out = emb(idx)
    out.sum().backward()
    show(emb.weight[0], emb.weight.grad, out[1, 1])
    capped = nn.Embedding(5, 4, max_norm=1.0, norm_type=2.0)
    before = capped.weight.detach().clone()
    y = capped(torch.tensor([1, 3, 1]))
    show(y.norm(dim=1), capped.weight.detach().norm(dim=1), torch.equal(before[0], capped.weight[0]))
    freq = nn.Embedding(4, 2, scale_grad_by_freq=True)
    freq(torch.tensor([1, 1, 1, 2])).sum().backward()
    show(freq.weight.grad)
    pre = nn.Embedding.from_pretrained(torch.arange(6.0).view(3, 2), padding_idx=1)
    show(pre.weight.requires_grad, pre(torch.tensor([1, 2])), pre.padding_idx)
    show(F.embedding(torch.tensor([2]), torch.eye(3), padding_idx=-1))
    show(nn.Embedding(3, 2, padding_idx=-1).padding_idx, repr(nn.Embedding(3, 2, padding_idx=1, max_norm=2.0)))
    show_outcome(show, lambda: emb(torch.tensor([6])))
    show_outcome(show, lambda: emb(torch.tensor([1.0])))
    show_outcome(show, lambda: nn.Embedding(3, 2, padding_idx=3))
    show_outcome(show, lambda: emb(torch.tensor([-1])))


def _linear_algebra_in_models(lib, show):
    """Linear algebra as models use it: a Gaussian log-likelihood through cholesky and cholesky_solve, solve and
    lstsq with gradients, eigh of a symmetric matrix (gradient of its eigenvalues), svd-based low-rank
    projection, pinv, matrix_power, cross and the errors of singular or non-square inputs."""
    torch = lib
    LA = torch.linalg
    torch.manual_seed(111)
    a = torch.randn(4, 4, dtype=torch.float64)
    spd = (a @ a.T + 4 * torch.eye(4, dtype=torch.float64)).requires_grad_(True)
    y = torch.randn(4, 1, dtype=torch.float64)
    L = LA.cholesky(spd)
    alpha = torch.cholesky_solve(y, L)
    nll = 0.5 * (y * alpha).sum() + L.diagonal().log().sum()
    nll.backward()
    show(L, nll, spd.grad)
    b = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)
    x = LA.solve(spd.detach(), b)
    x.sum().backward()
    show(x, b.grad)
    tall = torch.randn(6, 3, dtype=torch.float64)
    rhs = torch.randn(6, 1, dtype=torch.float64)
    sol = LA.lstsq(tall, rhs)
    show(sol.solution, sol.residuals.shape, sol.rank, sol.singular_values.shape)
    sym = spd.detach().clone().requires_grad_(True)
    vals, vecs = LA.eigh(sym)
    vals.sum().backward()
    show(vals, sym.grad, vecs.abs()[:, 0])
    u, s, vh = LA.svd(tall, full_matrices=False)
    low = u[:, :2] @ torch.diag(s[:2]) @ vh[:2]
    show(s, (low - tall).norm(), LA.matrix_rank(low))
    show(LA.pinv(tall).shape, LA.matrix_power(torch.tensor([[1.0, 1.0], [0.0, 1.0]]), 5),
         LA.matrix_power(torch.tensor([[2.0, 0.0], [0.0, 4.0]]), -1))
    show(LA.cross(torch.tensor([1.0, 0.0, 0.0]), torch.tensor([0.0, 1.0, 0.0])), LA.norm(tall, ord="fro"),
         LA.vector_norm(tall, ord=float("inf"), dim=0), LA.matrix_norm(tall[:3], ord=1))
    show(LA.det(torch.tensor([[1.0, 2.0], [2.0, 4.0]])), LA.cond(torch.tensor([[1.0, 0.0], [0.0, 2.0]])))
    show_outcome(show, lambda: LA.cholesky(torch.tensor([[1.0, 2.0], [2.0, 1.0]])))
    show_outcome(show, lambda: LA.inv(torch.tensor([[1.0, 2.0], [2.0, 4.0]])))
    show_outcome(show, lambda: LA.solve(torch.ones(2, 3), torch.ones(2)))
    show_outcome(show, lambda: LA.eigh(torch.ones(2, 3)))
    show(LA.cholesky_ex(torch.tensor([[1.0, 2.0], [2.0, 1.0]])).info, LA.inv_ex(torch.eye(2)).info)


def _conv_variants(lib, show):
    """Convolutions as architectures use them: depthwise-separable (groups), dilated, padding='same' with an
    even kernel, strided transposed convolutions with output_padding undoing a strided conv, 1-d causal
    convolution by left padding, circular padding_mode, and the shape errors users hit."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(121)
    x = torch.randn(2, 4, 9, 9, dtype=torch.float64)
    depthwise = nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False).double()
    pointwise = nn.Conv2d(4, 6, 1).double()
    y = pointwise(depthwise(x))
    dilated = nn.Conv2d(6, 2, 3, dilation=2, padding="same").double()
    same_even = nn.Conv2d(6, 2, 4, padding="same").double()
    z = dilated(y) + same_even(y)
    down = nn.Conv2d(2, 3, 3, stride=2, padding=1).double()
    up = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=0).double()
    d = down(z)
    show(y.shape, z.shape, d.shape, up(d).shape, up(d, output_size=[10, 10]).shape if False else None)
    (up(d) * torch.arange(81.0, dtype=torch.float64).view(9, 9)).sum().backward()
    show(depthwise.weight.grad[1, 0], same_even.weight.grad[0, 0, 0], up.bias.grad)
    causal = nn.Conv1d(2, 2, 3, dilation=2, bias=False).double()
    seq = torch.arange(12.0, dtype=torch.float64).view(1, 2, 6)
    out = causal(F.pad(seq, (4, 0)))
    show(out.shape, out[0, 0])
    circ = nn.Conv2d(1, 1, 3, padding=1, padding_mode="circular", bias=False)
    with torch.no_grad():
        circ.weight.fill_(1.0)
    show(circ(torch.arange(9.0).view(1, 1, 3, 3)), repr(circ))
    tconv = nn.ConvTranspose1d(1, 1, 2, stride=2, bias=False)
    with torch.no_grad():
        tconv.weight.copy_(torch.tensor([[[1.0, -1.0]]]))
    show(tconv(torch.tensor([[[1.0, 2.0, 3.0]]])), tconv(torch.tensor([[[1.0, 2.0, 3.0]]]), output_size=[7]))
    show_outcome(show, lambda: nn.Conv2d(4, 6, 3, groups=4))
    show_outcome(show, lambda: nn.Conv2d(4, 4, 3, stride=2, padding="same"))
    show_outcome(show, lambda: depthwise(torch.randn(2, 3, 9, 9, dtype=torch.float64)))
    show_outcome(show, lambda: nn.Conv2d(1, 1, 5)(torch.randn(1, 1, 3, 3)))
    show_outcome(show, lambda: nn.Conv2d(1, 1, 3)(torch.randn(1, 1, 3, 3, dtype=torch.float64)))
    show_outcome(show, lambda: tconv(torch.ones(1, 1, 3), output_size=[9]))


def _python_conversions(lib, show):
    """What users do at the Python boundary: item/tolist/int/float/bool of tensors of each dtype, truthiness
    errors, tensors in f-strings and round(), math functions on 0-d tensors, numbers compared with tensors,
    len/iteration of tensors, and tensors used as indices and sizes."""
    torch = lib
    vals = [torch.tensor(2.5), torch.tensor(-3), torch.tensor(True), torch.tensor(1.5, dtype=torch.float16),
            torch.tensor(1 + 2j), torch.tensor(200, dtype=torch.uint8), torch.tensor(7, dtype=torch.int8)]
    for v in vals:
        show(repr(v.item()), type(v.item()).__name__, v.tolist(), str(v.dtype))
    show(int(torch.tensor(3.9)), int(torch.tensor(-3.9)), float(torch.tensor(4)), bool(torch.tensor(0.0)))
    show(torch.tensor([[1, 2], [3, 4]]).tolist(), torch.tensor([]).tolist(), torch.tensor([1.5, 2.0]).tolist())
    show_outcome(show, lambda: bool(torch.tensor([1, 2])))
    show_outcome(show, lambda: float(torch.tensor([1.0, 2.0])))
    show_outcome(show, lambda: int(torch.tensor(1 + 1j)))
    show_outcome(show, lambda: torch.tensor([1.0, 2.0]).item())
    show(f"{torch.tensor(3.14159):.2f}", f"{torch.tensor(42)}", f"{torch.tensor([1.0, 2.0])}", round(torch.tensor(2.567).item(), 2))
    show_outcome(show, lambda: f"{torch.tensor([1.0, 2.0]):.2f}")
    show(math.sqrt(torch.tensor(16.0)), math.floor(torch.tensor(2.7)), math.isclose(torch.tensor(0.1), 0.1))
    show(3 < torch.tensor(4), torch.tensor(2) == 2, 2.0 * torch.tensor(3),  # noqa: SIM300 - the reflected compare
         2 ** torch.tensor([1, 2]), 7 // torch.tensor(2))
    show(len(torch.zeros(3, 2)), [t.tolist() for t in torch.arange(4).view(2, 2)], list(torch.tensor([1, 2])))
    show_outcome(show, lambda: len(torch.tensor(1.0)))
    show_outcome(show, lambda: iter(torch.tensor(1.0)))
    i = torch.tensor(2)
    show([10, 20, 30][i], torch.zeros(i, 1).shape, torch.arange(10)[i:i + 3], range(10)[torch.tensor(3)])
    show_outcome(show, lambda: [10, 20, 30][torch.tensor([1])])
    show_outcome(show, lambda: [1, 2][torch.tensor(1.0)])
    show(torch.tensor(5).__index__(), hash(torch.Size([2, 3])) == hash((2, 3)), torch.Size([2, 3]) + (4,))
    show(sum(torch.tensor([1.0, 2.0, 3.0])), max(torch.tensor([1, 5, 2])), sorted(torch.tensor([3, 1, 2])))
    show(torch.tensor(3.0) in torch.tensor([1.0, 3.0]), 5 in torch.tensor([1, 2]))
    show(divmod(7, 2), abs(torch.tensor(-2)), -torch.tensor(True) if False else ~torch.tensor(True))
    show_outcome(show, lambda: -torch.tensor(True))


def _indexed_accumulation(lib, show):
    """Histogram-like accumulation as users write it: index_put_ with accumulate and duplicates, index_add_,
    scatter_add_, put_ with accumulate, bincount with weights, one_hot counts, gradients through advanced
    indexing with repeated indices, and the errors of mismatched shapes."""
    torch, F = lib, lib.nn.functional
    idx = torch.tensor([0, 2, 2, 4, 0, 0])
    vals = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    show(torch.zeros(5).index_put_((idx,), vals, accumulate=True), torch.zeros(5).index_add_(0, idx, vals, alpha=2))
    show(torch.zeros(5).scatter_add_(0, idx, vals), torch.zeros(5).put_(idx, vals, accumulate=True))
    show(torch.bincount(idx), torch.bincount(idx, weights=vals, minlength=7), torch.bincount(torch.tensor([], dtype=torch.long)))
    show(F.one_hot(idx).sum(0), F.one_hot(idx, num_classes=6).dtype, F.one_hot(torch.tensor(3), 5))
    grid = torch.zeros(3, 3)
    rows, cols = torch.tensor([0, 1, 1]), torch.tensor([2, 0, 0])
    grid.index_put_((rows, cols), torch.tensor(1.0), accumulate=True)
    show(grid)
    grid[rows, cols] += 10
    show(grid)
    w = torch.ones(4, requires_grad=True)
    (w[torch.tensor([1, 1, 3, 1])] * torch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    show(w.grad)
    m = torch.arange(12.0).view(3, 4).requires_grad_(True)
    picked = m[torch.tensor([[0, 2], [2, 2]]), torch.tensor([1, 3])]
    picked.sum().backward()
    show(picked, m.grad)
    src = torch.arange(6.0).view(2, 3)
    show(torch.zeros(3, 3).scatter_(0, torch.tensor([[0, 1, 2], [2, 0, 1]]), src),
         torch.zeros(2, 4).scatter_(1, torch.tensor([[3], [0]]), 9.0),
         torch.zeros(2, 4).scatter_reduce(1, torch.tensor([[1, 1]]), torch.ones(1, 2), reduce="sum"))
    show_outcome(show, lambda: torch.zeros(5).index_put_((torch.tensor([7]),), torch.tensor([1.0])))
    show_outcome(show, lambda: torch.zeros(5).index_add_(0, idx, torch.ones(3)))
    show_outcome(show, lambda: torch.bincount(torch.tensor([-1, 2])))
    show_outcome(show, lambda: F.one_hot(torch.tensor([1, 5]), num_classes=3))
    show_outcome(show, lambda: torch.zeros(3).scatter_add_(0, torch.tensor([0, 1]), torch.ones(2, dtype=torch.float64)))


def _optimizer_options(lib, show):
    """Optimizers with their less common options: maximize, nesterov with dampening refused, Adam with
    weight_decay and amsgrad, NAdam with decoupled weight decay, RAdam, Adamax, Adagrad lr_decay, RMSprop
    centered with momentum; add_param_group with its defaults and errors; state_dict across a param group
    added later."""
    torch, nn = lib, lib.nn
    optim = torch.optim
    torch.manual_seed(131)
    target = torch.randn(3)

    def run(make, steps=3):
        p = nn.Parameter(torch.zeros(3))
        opt = make([p])
        for _ in range(steps):
            opt.zero_grad()
            loss = -((p - target) ** 2).sum() if opt.defaults.get("maximize") else ((p - target) ** 2).sum()
            loss.backward()
            opt.step()
        return p.detach()

    show(run(lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, maximize=True)))
    show(run(lambda ps: optim.Adam(ps, lr=0.1, weight_decay=0.01, amsgrad=True)))
    show(run(lambda ps: optim.NAdam(ps, lr=0.1, weight_decay=0.1, decoupled_weight_decay=True)))
    show(run(lambda ps: optim.RAdam(ps, lr=0.1, weight_decay=0.1, decoupled_weight_decay=True), steps=7))
    show(run(lambda ps: optim.Adamax(ps, lr=0.1)), run(lambda ps: optim.Adagrad(ps, lr=0.5, lr_decay=0.1)))
    show(run(lambda ps: optim.RMSprop(ps, lr=0.01, centered=True, momentum=0.5, maximize=True)))
    show_outcome(show, lambda: optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1, nesterov=True))
    show_outcome(show, lambda: optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1, momentum=0.9, dampening=0.1,
                                 nesterov=True))
    show_outcome(show, lambda: optim.Adam([nn.Parameter(torch.zeros(1))], lr=-1))
    show_outcome(show, lambda: optim.Adam([nn.Parameter(torch.zeros(1))], betas=(1.0, 0.9)))
    show_outcome(show, lambda: optim.Adam([]))
    show_outcome(show, lambda: optim.Adam(torch.zeros(2, requires_grad=True)))
    a, b = nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(2))
    opt = optim.Adam([a], lr=0.1, betas=(0.8, 0.9))
    opt.add_param_group({"params": b, "lr": 0.01})
    show(opt.param_groups[1]["betas"], opt.param_groups[1]["lr"], len(opt.param_groups))
    show_outcome(show, lambda: opt.add_param_group({"params": [a]}))
    show_outcome(show, lambda: opt.add_param_group({"params": [nn.Parameter(torch.ones(1))], "bogus": 1}))
    (a.sum() + 2 * b.sum()).backward()
    opt.step()
    sd = opt.state_dict()
    show(sd["param_groups"], sorted(sd["state"][1]))
    fresh = optim.Adam([nn.Parameter(torch.ones(2))], lr=0.1)
    show_outcome(show, lambda: fresh.load_state_dict(sd))
    show_outcome(show, lambda: optim.SGD([a, a], lr=0.1))
    show(repr(opt))


def _recurrent_cells_by_hand(lib, show):
    """Recurrent cells unrolled by hand (GRUCell, RNNCell with ReLU, LSTMCell) against the full layers with
    copied weights; truncated backpropagation through time with detached hidden states; LSTM states given
    without a batch dimension; and the messages for wrong hidden sizes."""
    torch, nn = lib, lib.nn
    torch.manual_seed(141)
    gru = nn.GRU(3, 4)
    cell = nn.GRUCell(3, 4)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(cell, name).copy_(getattr(gru, name + "_l0"))
    xs = torch.randn(5, 2, 3)
    h = torch.zeros(2, 4)
    outs = []
    for t in range(5):
        h = cell(xs[t], h)
        outs.append(h)
    full, h_n = gru(xs)
    show((torch.stack(outs) - full).abs().max() < 1e-6, h_n[0] - h)
    rnn_cell = nn.RNNCell(3, 2, nonlinearity="relu")
    show(rnn_cell(xs[0]), rnn_cell(xs[0, 0]).shape)
    lstm_cell = nn.LSTMCell(3, 2)
    hc = None
    opt = torch.optim.SGD(lstm_cell.parameters(), lr=0.1)
    for chunk in xs.split(2):
        for x_t in chunk:
            hc = lstm_cell(x_t, hc)
        loss = hc[0].pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        hc = tuple(s.detach() for s in hc)
        show(loss, lstm_cell.bias_hh.grad)
    lstm = nn.LSTM(3, 4)
    out, (hn, cn) = lstm(torch.randn(5, 3), (torch.zeros(1, 4), torch.zeros(1, 4)))
    show(out.shape, hn.shape, cn.shape)
    show_outcome(show, lambda: lstm(torch.randn(5, 2, 3), (torch.zeros(1, 2, 5), torch.zeros(1, 2, 4))))
    show_outcome(show, lambda: lstm(torch.randn(5, 3), (torch.zeros(1, 1, 4), torch.zeros(1, 1, 4))))
    show_outcome(show, lambda: cell(torch.randn(2, 3), torch.zeros(3, 4)))
    show_outcome(show, lambda: gru(torch.randn(5, 2, 3), torch.zeros(2, 2, 4)))
    show_outcome(show, lambda: nn.GRU(3, 4, num_layers=1, dropout=0.5))
    show(repr(nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True, dropout=0.1)), repr(cell))


def _mixed_precision_scaffolding(lib, show):
    """The scaffolding of a mixed-precision training loop run on a CPU-only machine: GradScaler("cpu") skipping
    an overflowing step and backing off, unscale_ before clipping, its state_dict restored into a new scaler,
    autocast regions disabled explicitly, by a cuda request without a GPU, or by a dtype autocast refuses."""
    torch, nn = lib, lib.nn
    torch.manual_seed(151)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**8, growth_interval=2)
    for step in range(4):
        opt.zero_grad()
        x = torch.randn(4, 3) * (1e38 if step == 1 else 1.0)
        with torch.autocast("cpu", enabled=False):
            loss = model(x).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        show(step, scaler.get_scale(), norm, model.bias.detach().clone())  # (a copy: the next steps write it)
    show_outcome(show, lambda: scaler.unscale_(opt) or scaler.unscale_(opt))
    restored = torch.amp.GradScaler("cpu")
    restored.load_state_dict(scaler.state_dict())
    show(sorted(scaler.state_dict().items()), restored.get_scale(), restored._get_growth_tracker())
    with torch.autocast("cuda"):
        show(torch.is_autocast_enabled("cuda"), (torch.ones(2, 2) @ torch.ones(2, 2)).dtype)
    with torch.autocast("cpu", dtype=torch.float64):
        show(torch.is_autocast_enabled("cpu"), model(torch.ones(1, 3)).dtype)

    @torch.autocast("cpu", enabled=False)
    def predict(inp):
        return model(inp)

    show(predict(torch.ones(2, 3)), predict.__name__)
    disabled = torch.amp.GradScaler("cpu", enabled=False)
    show(disabled.scale(torch.tensor(3.0)), disabled.state_dict(), disabled.is_enabled())
    show_outcome(show, lambda: torch.amp.GradScaler("cpu").load_state_dict({}))


def _graph_hooks(lib, show):
    """Hooks on the autograd graph itself: a multi-grad hook in "all" and "any" modes, pre-hooks and hooks on a
    grad_fn (one replacing the gradient), a tensor hook returning a wrong shape, a post-accumulate hook doing an
    optimizer-in-backward update, and a full backward hook on a module with two inputs and outputs."""
    torch, nn = lib, lib.nn
    a, b = torch.ones(2, requires_grad=True), torch.full((2,), 2.0, requires_grad=True)
    log = []
    h_all = torch.autograd.graph.register_multi_grad_hook(
        (a, b), lambda grads: log.append(["none" if g is None else g.tolist() for g in grads]))
    (a * 3).sum().backward()
    (a * b).sum().backward()
    h_all.remove()
    torch.autograd.graph.register_multi_grad_hook((a, b), lambda g: log.append(("any", g.tolist())), mode="any")
    (b * 5).sum().backward()
    show(log)
    x = torch.tensor([1.0, -2.0], requires_grad=True)
    y = x * 3
    events = []
    y.grad_fn.register_prehook(lambda grad_outputs: events.append(("pre", grad_outputs[0].tolist())))
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: (grad_inputs[0] * 10, grad_inputs[1]))
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: events.append(("post", len(grad_inputs))))
    y.pow(2).sum().backward()
    show(events, x.grad)
    z = torch.ones(3, requires_grad=True)
    w = z * 2
    w.register_hook(lambda g: torch.ones(2))
    show_outcome(show, lambda: w.sum().backward())
    torch.manual_seed(161)
    model = nn.Linear(2, 1)
    updates = []

    def sgd_in_backward(param):
        with torch.no_grad():
            param.add_(param.grad, alpha=-0.1)
        updates.append(param.grad.clone())
        param.grad = None

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(sgd_in_backward)
    model(torch.ones(4, 2)).sum().backward()
    show(updates, model.weight, model.weight.grad)

    class TwoWay(nn.Module):
        def forward(self, u, v):
            return u * v, u + 1

    seen = []
    two = TwoWay()
    two.register_full_backward_hook(
        lambda mod, gin, gout: seen.append(([g if g is None else g.tolist() for g in gin],
                                            [g if g is None else g.tolist() for g in gout])))
    u, v = torch.ones(2, requires_grad=True), torch.full((2,), 3.0)
    o1, o2 = two(u, v)
    (o1.sum() * 2).backward()
    show(seen, u.grad)


def _legacy_reparametrizations(lib, show):
    """Checkpoints written with the older reparametrization APIs and their replacements: spectral_norm's
    weight_orig/weight_u/weight_v buffers (train and eval), weight_norm's g and v, the parametrizations module
    (keys, cached(), right_inverse, removing while keeping or dropping the parametrized value) and pruning."""
    torch, nn = lib, lib.nn
    P = nn.utils.parametrize
    prune = importlib.import_module(lib.__name__ + ".nn.utils.prune")  # (torch does not import it itself)
    torch.manual_seed(171)
    sn = nn.utils.spectral_norm(nn.Linear(3, 2), n_power_iterations=2)
    y_train = sn(torch.ones(1, 3))
    sn.eval()
    show(list(sn.state_dict()), sn.weight_u, y_train, sn(torch.ones(1, 3)))
    plain = nn.utils.remove_spectral_norm(sn)
    show(list(plain.state_dict()), type(plain.weight).__name__)
    wn = nn.utils.weight_norm(nn.Linear(3, 2), dim=0)
    show(list(wn.state_dict()), wn.weight_g, wn.weight_v.shape)
    new_wn = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
    show(list(new_wn.state_dict()), new_wn.parametrizations.weight.original0)

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    class Positive(nn.Module):
        def forward(self, X):
            return X.exp()

        def right_inverse(self, Y):
            return Y.log()

    layer = nn.Linear(3, 3)
    P.register_parametrization(layer, "weight", Symmetric())
    P.register_parametrization(layer, "bias", Positive())
    layer.bias = torch.tensor([1.0, 2.0, 4.0])
    with P.cached():
        same = layer.weight is layer.weight
    show(list(layer.state_dict()), same, layer.parametrizations.bias.original, P.is_parametrized(layer, "bias"))
    layer(torch.ones(2, 3)).sum().backward()
    show(layer.parametrizations.weight.original.grad, layer.parametrizations.bias.original.grad)
    P.remove_parametrizations(layer, "weight", leave_parametrized=True)
    P.remove_parametrizations(layer, "bias", leave_parametrized=False)
    show(list(layer.state_dict()), layer.bias, torch.equal(layer.weight, layer.weight.T))
    show_outcome(show, lambda: P.remove_parametrizations(layer, "weight"))
    pruned = nn.Linear(4, 2)
    prune.l1_unstructured(pruned, "weight", amount=0.5)
    prune.random_unstructured(pruned, "bias", amount=1)
    show(list(pruned.state_dict()), pruned.weight_mask, pruned.bias, prune.is_pruned(pruned))
    prune.remove(pruned, "weight")
    show(list(pruned.state_dict()), (pruned.weight == 0).sum())


def _packed_batches_to_devices(lib, show):
    """A padded batch packed for an LSTM, the packed batch converted (cpu/double/half) as device-agnostic code
    does, the last valid step of each sequence picked with index lists (the old list-of-indices spelling too),
    and the output length bookkeeping."""
    torch, nn = lib, lib.nn
    utils = nn.utils.rnn
    torch.manual_seed(181)
    device = torch.device("cpu")
    seqs = [torch.randn(n, 2) for n in (3, 5, 2)]
    lengths = torch.tensor([3, 5, 2])
    packed = utils.pack_sequence(seqs, enforce_sorted=False).to(device)
    show(packed.is_cuda, packed.is_pinned(), packed.cpu() is packed, packed.double().data.dtype,
         packed.half().data.dtype, packed.double().sorted_indices, type(packed.float()).__name__)
    lstm = nn.LSTM(2, 3, batch_first=True).double()
    out, (h, c) = lstm(packed.double())
    padded, out_lengths = utils.pad_packed_sequence(out, batch_first=True)
    batch = torch.arange(3)
    last = padded[batch, out_lengths - 1]
    old_spelling = padded[[batch, out_lengths - 1]]
    show(last, torch.equal(last, h[0]), torch.equal(old_spelling, last), out_lengths)
    mask = torch.arange(padded.shape[1])[None, :] < lengths[:, None]
    show(padded[[slice(None), 0]].shape, padded[mask].shape, (padded.abs().sum(-1) > 0).sum(1))
    show(padded.sum(), repr(packed.batch_sizes), utils.unpack_sequence(packed.cpu())[1].shape)


PROGRAMS = [
    _actor_critic,
    _seq2seq_rnns,
    _batchnorm_cnn,
    _wgan_gp_and_maml,
    _autograd_functional_small_models,
    _deepcopy_and_pickle,
    _state_dict_loading,
    _forward_hooks_with_kwargs,
    _printing_corners,
    _sorting_and_scans,
    _selection_odd_shapes,
    _interpolation_modes,
    _scheduler_chains,
    _swa_utils,
    _embeddings,
    _linear_algebra_in_models,
    _conv_variants,
    _python_conversions,
    _indexed_accumulation,
    _optimizer_options,
    _recurrent_cells_by_hand,
    _mixed_precision_scaffolding,
    _graph_hooks,
    _legacy_reparametrizations,
    _packed_batches_to_devices,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
