"""A seventeenth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: the training infrastructure around a model. Resuming a run
from a checkpoint (model, Adam, MultiStepLR, a CPU GradScaler, the global RNG and a Generator's state through a
BytesIO, loaded into fresh objects) and checking the resumed run continues bit for bit; parameter groups by name
with their own lr/weight_decay, the optimizer's repr and add_param_group mid-training with its refusals; freezing
and unfreezing layers (what SGD/Adam/AdamW do with ``None`` gradients, zero_grad's two modes, the state they keep);
gradient accumulation against the full batch with clip_grad_norm_'s totals and a GradScaler skipping a step on an
infinite gradient; an EMA of weights by ``_foreach_lerp_`` beside AveragedModel with a custom avg_fn and
use_buffers, and update_bn; schedulers printed epoch by epoch (LambdaLR with one lambda per group,
MultiplicativeLR, repeated MultiStepLR milestones, CyclicLR cycling momentum, warm restarts with fractional epochs,
ChainedScheduler) and their warnings; a per-op dtype table under CPU bfloat16 autocast with the dtypes of the
gradients; weight_norm/spectral_norm/orthogonal parametrizations with their state_dict keys, round trips and
removal; early stopping with best-state deepcopies and ``model.apply`` initialisers filtered by named_modules;
counting parameters, buffers and bytes (element_size, nbytes, shared untyped storages, non-persistent buffers);
and load_state_dict's strict=False reports and its refusals' text. Everything is drawn from the seeded global
generator (or seeded generators), which is torch's; values are compared to a tolerance (matrix products are not
bit for bit). Parameters shown inside a loop are cloned first (``show`` keeps the tensor's memory). The programs
also save checkpoints in both formats (views sharing a storage, map_location forms, a user's class through
safe_globals), count optimizer step/state-dict hooks on an optimizer built from named_parameters, run a user's
LRScheduler subclass beside SWALR, and restore RNG states around dropout and fork_rng.

Differences these programs found, now fixed (``tests/ops/test_program17_findings_vs_torch.py``):
- ``torch.set_rng_state``/``Generator.set_state`` took any tensor's bytes (a float state restored silently) and
  failed with ``AttributeError`` on a list; torch refuses a non-Tensor, a tensor that is not a contiguous CPU
  ByteTensor, and words its size refusal without the legacy THGeneratorState;
- ``torch.nn.modules.utils`` (``consume_prefix_in_state_dict_if_present`` for a DataParallel checkpoint,
  ``_pair``, ...) did not exist;
- an optimizer's step pre/post hooks got the step's arguments without the optimizer (torch: ``args[0]`` is it,
  and the step runs on what a pre hook returns);
- ``torch.save`` to a target without ``write`` failed mid-write in AttributeError's own words; ``torch.load(...,
  mmap=True)`` of a stream that is no archive said "f must be a file path" where torch says mmap needs the zip
  format.

Left: an ``UntypedStorage``'s missing attribute is named ``'UntypedStorage' object`` where torch's is
``'torch.storage.UntypedStorage' object`` (the program reads no missing attribute); ``torch.optim`` shows its
submodules (``torch.optim.optimizer``, ``adam``, ...) as attributes before they are imported, where torch deletes
them from the package (the program imports ``optim.optimizer`` by name), and lacks
``swap_in_optimizer_params_and_state``.
"""

from __future__ import annotations

import copy
import importlib
import io
import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _mlp(lib, width=6):
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, width), nn.ReLU(), nn.Dropout(0.25), nn.Linear(width, 2))


def _resume_from_checkpoint(lib, show):
    """Train three steps, save everything a resumable run needs to a BytesIO (model, Adam, MultiStepLR, a CPU
    GradScaler, the global RNG state and a shuffling Generator's state), train two more; then load it all into
    fresh objects and check the two more steps are the same numbers."""
    torch, F = lib, lib.nn.functional
    torch.manual_seed(1700)
    data, targets = torch.randn(32, 4), torch.randint(0, 2, (32,))

    def fresh():
        model = _mlp(lib)
        opt = torch.optim.Adam(model.parameters(), lr=0.01, amsgrad=True)
        sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.5)
        scaler = torch.amp.GradScaler("cpu", init_scale=256.0, growth_interval=2)
        return model, opt, sched, scaler

    def step(model, opt, sched, scaler, gen):
        idx = torch.randperm(32, generator=gen)[:8]
        loss = F.cross_entropy(model(data[idx]), targets[idx])
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        sched.step()
        return round(loss.item(), 5)

    model, opt, sched, scaler = fresh()
    gen = torch.Generator().manual_seed(7)
    show([step(model, opt, sched, scaler, gen) for _ in range(3)])
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                "scaler": scaler.state_dict(), "rng": torch.get_rng_state(), "gen": gen.get_state(),
                "epoch": 3}, buffer)
    show(buffer.tell() > 0, sorted(opt.state_dict()["state"][0]), opt.state_dict()["param_groups"][0]["params"])
    show(sched.state_dict(), scaler.state_dict())
    later = [step(model, opt, sched, scaler, gen) for _ in range(2)]
    expected = [p.detach().clone() for p in model.parameters()]
    show(later, sched.get_last_lr(), scaler.get_scale())

    buffer.seek(0)
    ckpt = torch.load(buffer)
    show(sorted(ckpt), type(ckpt["rng"]).__name__, ckpt["rng"].dtype, ckpt["rng"].shape, ckpt["gen"].shape)
    torch.manual_seed(0)  # (what a new process would hold before restoring)
    model2, opt2, sched2, scaler2 = fresh()
    show(model2.load_state_dict(ckpt["model"]))
    opt2.load_state_dict(ckpt["opt"])
    sched2.load_state_dict(ckpt["sched"])
    scaler2.load_state_dict(ckpt["scaler"])
    torch.set_rng_state(ckpt["rng"])
    gen2 = torch.Generator()
    gen2.set_state(ckpt["gen"])
    show(sched2.last_epoch, sched2.get_last_lr(), scaler2.get_scale(), opt2.param_groups[0]["lr"])
    resumed = [step(model2, opt2, sched2, scaler2, gen2) for _ in range(2)]
    show(resumed == later, all(torch.equal(a, b) for a, b in zip(expected, model2.parameters())))
    show(opt2.state[model2[0].weight]["max_exp_avg_sq"], opt2.state[model2[0].weight]["step"])
    show_outcome(show, lambda: torch.set_rng_state(ckpt["rng"].float()))
    show_outcome(show, lambda: torch.set_rng_state(ckpt["rng"][:100]))
    show_outcome(show, lambda: gen2.set_state(ckpt["gen"].tolist()))
    show_outcome(show, lambda: opt2.load_state_dict({"state": {}, "param_groups": []}))


def _parameter_groups(lib, show):
    """Parameter groups built by name (no weight decay on biases and norms), the optimizer's repr, per-group
    learning rates, add_param_group for a head added mid-training, and the refusals users run into."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1701)
    model = nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 3))
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if name.endswith("bias") or name.startswith("1.") else decay).append(p)
    show(len(decay), len(no_decay))
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0, "lr": 3e-3}], lr=1e-2, betas=(0.8, 0.95))
    show(opt)
    x, y = torch.randn(16, 4), torch.randn(16, 3)
    for _ in range(2):
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    show(model[0].weight[0], model[1].bias)
    head = nn.Linear(3, 1)
    opt.add_param_group({"params": head.parameters(), "lr": 5e-2})
    show(len(opt.param_groups), sorted(opt.param_groups[2]), opt.param_groups[2]["betas"],
         opt.param_groups[2]["weight_decay"])
    opt.zero_grad()
    head(model(x)).pow(2).mean().backward()
    opt.step()
    show(head.weight, head.bias, opt.state[head.weight]["step"])
    show_outcome(show, lambda: opt.add_param_group({"params": [model[0].weight]}))
    show_outcome(show, lambda: opt.add_param_group({"params": model[0].weight * 2}))
    show_outcome(show, lambda: opt.add_param_group({"params": [model[0].weight * 2]}))
    show_outcome(show, lambda: torch.optim.SGD(model[0].weight, lr=0.1))
    show_outcome(show, lambda: torch.optim.SGD([], lr=0.1))
    show_outcome(show, lambda: torch.optim.SGD(model.parameters()))
    show_outcome(show, lambda: torch.optim.AdamW(model.parameters(), lr=-1.0))
    show_outcome(show, lambda: torch.optim.AdamW(model.parameters(), betas=(1.0, 0.9)))
    show_outcome(show, lambda: torch.optim.SGD(model.parameters(), lr=0.1, nesterov=True))
    show_outcome(show, lambda: torch.optim.SGD({"params": model[0].weight}, lr=0.1))
    dup = list(model.parameters())
    show_outcome(show, lambda: torch.optim.SGD([{"params": dup[:2]}, {"params": dup[1:3]}], lr=0.1))
    show_outcome(show, lambda: torch.optim.SGD(dup + dup[:1], lr=0.1).param_groups[0]["params"].__len__())
    sgd = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, dampening=0.0)
    show(sgd.defaults, sgd.state_dict()["param_groups"])


def _freeze_and_unfreeze(lib, show):
    """Fine-tuning with a frozen backbone: what SGD with momentum, Adam and AdamW do with parameters whose grad
    is None (no state, no decay), zero_grad(set_to_none=False) keeping zeros that AdamW then decays, unfreezing,
    and a backward with everything frozen."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1702)
    backbone = nn.Sequential(nn.Linear(4, 6), nn.Tanh())
    head = nn.Linear(6, 2)
    model = nn.Sequential(backbone, head)
    backbone.requires_grad_(False)
    show([(n, p.requires_grad) for n, p in model.named_parameters()])
    show(sum(p.numel() for p in model.parameters() if p.requires_grad), sum(p.numel() for p in model.parameters()))
    x, y = torch.randn(10, 4), torch.randn(10, 2)
    for name, make in [("sgd", lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01)),
                       ("adam", lambda ps: torch.optim.Adam(ps, lr=0.01, weight_decay=0.01)),
                       ("adamw", lambda ps: torch.optim.AdamW(ps, lr=0.01, weight_decay=0.5))]:
        torch.manual_seed(3)
        for p in model.parameters():
            p.grad = None
        before = [p.detach().clone() for p in model.parameters()]
        opt = make(model.parameters())
        for _ in range(2):
            opt.zero_grad()
            out = model(x)
            show(out.grad_fn.name(), out.requires_grad, backbone(x).requires_grad)
            nn.functional.mse_loss(out, y).backward()
            opt.step()
        changed = [not torch.equal(a, b) for a, b in zip(before, model.parameters())]
        show(name, changed, len(opt.state), [p.grad is None for p in model.parameters()])
    opt = torch.optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.5)
    backbone[0].weight.grad = torch.zeros_like(backbone[0].weight)
    w0 = backbone[0].weight.detach().clone()
    opt.step()
    show("zero grad decays", backbone[0].weight - w0, opt.state[backbone[0].weight]["exp_avg"].abs().sum())
    opt.zero_grad(set_to_none=False)
    show(backbone[0].weight.grad is None, head.weight.grad)
    backbone.requires_grad_(True)
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    show(backbone[0].weight.grad, backbone[0].bias.grad)
    opt.step()
    show(backbone[0].bias, len(opt.state))
    model.requires_grad_(False)
    show_outcome(show, lambda: nn.functional.mse_loss(model(x), y).backward())
    show_outcome(show, lambda: torch.autograd.grad(model(x).sum(), head.weight))
    show_outcome(show, lambda: backbone[0].weight.requires_grad_(1))
    show_outcome(show, lambda: (backbone[0].weight * 2).requires_grad_(False))


def _accumulation_and_scaling(lib, show):
    """Gradient accumulation over four micro-batches with the loss divided by the number of steps, compared with
    one full-batch backward; clip_grad_norm_'s returned totals (2, inf, with error_if_nonfinite); and a CPU
    GradScaler that skips the step whose gradient overflowed, backs its scale off, and refuses a second unscale_."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(1703)
    model = nn.Sequential(nn.Linear(5, 8), nn.SiLU(), nn.Linear(8, 1)).double()
    x, y = torch.randn(16, 5, dtype=torch.float64), torch.randn(16, 1, dtype=torch.float64)
    F.mse_loss(model(x), y).backward()
    full = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    accum = 4
    for i, (xb, yb) in enumerate(zip(x.chunk(accum), y.chunk(accum))):
        (F.mse_loss(model(xb), yb) / accum).backward()
        show(i, model[0].bias.grad[:3].clone())
    show([torch.allclose(a, p.grad) for a, p in zip(full, model.parameters())])
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.05)
    show(total, total.dtype, model[2].weight.grad.clone())
    show(nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type="inf"))
    show(nn.utils.get_total_norm([p.grad for p in model.parameters()], norm_type=1.0))
    model[0].bias.grad[0] = float("nan")
    show(nn.utils.clip_grad_norm_(model.parameters(), 1.0))
    show_outcome(show, lambda: nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True))

    torch.manual_seed(1704)
    net = nn.Linear(3, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10, growth_factor=4.0, backoff_factor=0.25,
                                  growth_interval=1)
    inputs = [torch.randn(4, 3), torch.full((4, 3), 1e38), torch.randn(4, 3)]
    for step, xb in enumerate(inputs):
        before = net.weight.detach().clone()
        opt.zero_grad()
        loss = net(xb).pow(2).mean()
        scaled = scaler.scale(loss)
        show(step, scaled.grad_fn.name(), math.isfinite(loss.item()))
        scaled.backward()
        scaler.unscale_(opt)
        show(net.weight.grad.isfinite().all(), net.weight.grad.dtype)
        if step == 0:
            show_outcome(show, lambda: scaler.unscale_(opt))
        scaler.step(opt)
        scaler.update()
        show(torch.equal(before, net.weight), scaler.get_scale(), scaler._get_growth_tracker())
    show(scaler.state_dict(), scaler.is_enabled())
    off = torch.amp.GradScaler("cpu", enabled=False)
    show(off.scale(torch.tensor(3.0)), off.get_scale(), off.state_dict())
    show_outcome(show, lambda: scaler.step(opt, 1.0))
    show_outcome(show, lambda: torch.amp.GradScaler("cpu", init_scale=-1.0).scale(torch.tensor(1.0)))


def _weight_averaging(lib, show):
    """An EMA of the weights kept by ``_foreach_lerp_`` on detached copies, beside swa_utils.AveragedModel with a
    user's avg_fn and with use_buffers=True (BatchNorm statistics averaged too), and update_bn recomputing the
    statistics from a loader of tuples."""
    torch, nn = lib, lib.nn
    swa = torch.optim.swa_utils
    torch.manual_seed(1705)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
    ema_params = [p.detach().clone() for p in model.parameters()]
    decay = 0.9

    def my_avg(averaged, current, num_averaged):
        return averaged + (current - averaged) / (num_averaged + 1) * 0.5

    averaged = swa.AveragedModel(model, avg_fn=my_avg)
    with_buffers = swa.AveragedModel(model, multi_avg_fn=swa.get_ema_multi_avg_fn(0.8), use_buffers=True)
    show(sorted(averaged.state_dict())[:4], averaged.n_averaged, type(averaged.module).__name__)
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.5)
    data = [(torch.randn(6, 3), torch.randn(6, 1)) for _ in range(4)]
    for xb, yb in data:
        opt.zero_grad()
        nn.functional.mse_loss(model(xb), yb).backward()
        opt.step()
        with torch.no_grad():
            torch._foreach_lerp_(ema_params, [p.detach() for p in model.parameters()], 1 - decay)
        averaged.update_parameters(model)
        with_buffers.update_parameters(model)
    show(ema_params[0], ema_params[-1])
    show(averaged.module[0].weight, averaged.n_averaged)
    show(with_buffers.module[1].running_mean, with_buffers.module[1].num_batches_tracked, with_buffers.n_averaged)
    show(averaged.module[1].running_mean.clone(), model[1].running_mean)
    loader = [(xb,) for xb, _ in data]
    swa.update_bn(loader, averaged)
    show(averaged.module[1].running_mean, averaged.module[1].running_var, averaged.module[1].momentum)
    averaged.eval()
    show(averaged(data[0][0]))
    shadow = [torch.zeros(2), torch.ones(2)]
    torch._foreach_lerp_(shadow, [torch.ones(2), torch.zeros(2)], [torch.tensor(0.25), torch.tensor(0.5)])
    show(shadow)
    show_outcome(show, lambda: torch._foreach_lerp_(shadow, [torch.ones(3), torch.ones(2)], 0.5))
    show_outcome(show, lambda: torch._foreach_lerp_(shadow, [torch.ones(2)], 0.5))
    show(torch._foreach_lerp([torch.zeros(2)], [torch.ones(2)], 0.1))
    show_outcome(show, lambda: swa.AveragedModel(model, avg_fn=my_avg, multi_avg_fn=swa.get_ema_multi_avg_fn()).update_parameters(model))


def _scheduler_zoo(lib, show):
    """Schedulers printed epoch by epoch as a training script logs them: LambdaLR with one lambda per group,
    MultiplicativeLR, MultiStepLR with a repeated milestone, ExponentialLR, PolynomialLR, CyclicLR cycling SGD's
    momentum in exp_range mode, CosineAnnealingWarmRestarts stepped with fractional epochs, a ChainedScheduler,
    their state_dicts, and the warnings for stepping before the optimizer and for passing an epoch."""
    torch = lib
    sched_mod = torch.optim.lr_scheduler

    def sgd(groups=1, **kw):
        params = [{"params": [torch.nn.Parameter(torch.zeros(1))], "lr": 0.1 * (i + 1)} for i in range(groups)]
        return torch.optim.SGD(params, lr=0.1, **kw)

    def run(opt, sched, steps, key="lr"):
        seen = []
        for _ in range(steps):
            opt.step()
            sched.step()
            seen.append([round(g[key], 6) for g in opt.param_groups])
        return seen

    opt = sgd(2)
    lam = sched_mod.LambdaLR(opt, [lambda e: 0.5 ** e, lambda e: 1.0 / (e + 1)])
    show(lam.get_last_lr(), run(opt, lam, 3), lam.base_lrs)
    show(sorted(lam.state_dict()), lam.state_dict()["lr_lambdas"])
    opt = sgd()
    mul = sched_mod.MultiplicativeLR(opt, lambda e: 0.9 if e % 2 else 1.0)
    show(run(opt, mul, 4))
    opt = sgd()
    ms = sched_mod.MultiStepLR(opt, milestones=[3, 1, 3], gamma=0.1)
    show(ms.milestones, run(opt, ms, 4))
    opt = sgd()
    ex = sched_mod.ExponentialLR(opt, gamma=0.8)
    show(run(opt, ex, 3), ex.get_last_lr())
    opt = sgd()
    poly = sched_mod.PolynomialLR(opt, total_iters=4, power=2.0)
    show(run(opt, poly, 6))
    opt = sgd(momentum=0.9)
    cyc = sched_mod.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range", gamma=0.9,
                             base_momentum=0.8, max_momentum=0.95)
    show(run(opt, cyc, 6), run(opt, cyc, 0) or [round(g["momentum"], 6) for g in opt.param_groups])
    moms = []
    for _ in range(4):
        opt.step()
        cyc.step()
        moms.append(round(opt.param_groups[0]["momentum"], 6))
    show(moms, cyc.get_last_lr())
    show_outcome(show, lambda: sched_mod.CyclicLR(torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))]), 0.01, 0.1))
    opt = sgd()
    warm = sched_mod.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2, eta_min=0.001)
    iters = 3
    lrs = []
    for epoch in range(4):
        for i in range(iters):
            opt.step()
            warm.step(epoch + i / iters)
            lrs.append(round(opt.param_groups[0]["lr"], 6))
    show(lrs, warm.T_cur, warm.T_i)
    show_outcome(show, lambda: warm.step(-1))
    opt = sgd()
    chain = sched_mod.ChainedScheduler([sched_mod.ConstantLR(opt, factor=0.5, total_iters=2),
                                        sched_mod.ExponentialLR(opt, gamma=0.9)])
    show(run(opt, chain, 4), chain.get_last_lr())
    show(sorted(chain.state_dict()), [sorted(s) for s in chain.state_dict()["_schedulers"]])
    opt = sgd()
    early = sched_mod.StepLR(opt, step_size=1, gamma=0.5)
    early.step()  # (before optimizer.step: torch warns that the first value is skipped)
    show(early.get_last_lr(), early.get_lr())
    show_outcome(show, lambda: sched_mod.StepLR(opt, step_size=1, last_epoch=3))
    show_outcome(show, lambda: sched_mod.LambdaLR(opt, [lambda e: 1.0, lambda e: 1.0]))
    show_outcome(show, lambda: sched_mod.ExponentialLR("not an optimizer", 0.9))


def _bfloat16_autocast_table(lib, show):
    """Which operations run in bfloat16 under CPU autocast (a user's table of output dtypes), what stays float32,
    mixed inputs, nested autocast(enabled=False), the dtypes of the gradients of float32 parameters, the state
    functions, and autocast's refusals."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(1706)
    x = torch.randn(4, 8)
    w = torch.randn(8, 8, requires_grad=True)
    lin = nn.Linear(8, 8)
    conv = nn.Conv1d(2, 3, 3)
    table = {}
    with torch.autocast("cpu", dtype=torch.bfloat16):
        show(torch.is_autocast_enabled(), torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
        h = x @ w
        table["matmul"] = h.dtype
        table["linear"] = lin(x).dtype
        table["mm"] = torch.mm(x, w).dtype
        table["bmm"] = torch.bmm(x[None], w[None]).dtype
        table["baddbmm"] = torch.baddbmm(torch.zeros(1, 4, 8), x[None], w[None]).dtype
        table["conv1d"] = conv(x.view(4, 2, 4)).dtype
        table["relu"] = torch.relu(h).dtype
        table["softmax"] = torch.softmax(h, -1).dtype
        table["log_softmax"] = F.log_softmax(h, -1).dtype
        table["layer_norm"] = F.layer_norm(h, (8,)).dtype
        table["mse"] = F.mse_loss(h, torch.zeros(4, 8)).dtype
        table["cross_entropy"] = F.cross_entropy(h, torch.tensor([0, 1, 2, 3])).dtype
        table["sum"] = h.sum().dtype
        table["add_mixed"] = (h + x).dtype
        table["cat_mixed"] = torch.cat([h, x]).dtype
        table["exp"] = h.exp().dtype
        table["addmm"] = torch.addmm(torch.zeros(8), x, w).dtype
        table["float64_mm"] = (x.double() @ w.double()).dtype
        table["topk"] = h.topk(2).values.dtype
        table["cdist"] = torch.cdist(x, x).dtype
        with torch.autocast("cpu", enabled=False):
            table["disabled"] = (h @ w.bfloat16()).dtype
            show(torch.is_autocast_enabled("cpu"))
        loss = lin(x @ w).float().pow(2).mean()
    show(sorted((k, str(v)) for k, v in table.items()))
    loss.backward()
    show(loss.dtype, loss.grad_fn.name(), w.grad.dtype, lin.weight.grad.dtype, w.grad.float().abs().sum() > 0)
    show(torch.is_autocast_enabled("cpu"))

    @torch.autocast("cpu", dtype=torch.bfloat16)
    def forward(inp):
        return lin(inp)

    out = forward(x)
    show(out.dtype, out.grad_fn.name(), out.float())
    with torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
        product = x @ w
        show(product.grad_fn.name(), [(f.name() if f else None, i) for f, i in product.grad_fn.next_functions])
    def integer_autocast():
        with torch.autocast("cpu", dtype=torch.int32):
            return (x @ w).dtype, torch.is_autocast_enabled("cpu")

    show_outcome(show, integer_autocast)
    show_outcome(show, lambda: torch.autocast("tpu"))
    show_outcome(show, lambda: torch.get_autocast_dtype("gpu"))


def _parametrized_layers(lib, show):
    """nn.utils.parametrizations' weight_norm, spectral_norm and orthogonal on a small model: the state_dict keys
    they make, a training step through them, the norms they keep, a state_dict loaded into a fresh parametrized
    copy, and removing them with and without leave_parametrized."""
    torch, nn = lib, lib.nn
    P, parametrize = nn.utils.parametrizations, nn.utils.parametrize
    torch.manual_seed(1707)
    model = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 5), nn.Tanh(), nn.Linear(5, 3))
    P.weight_norm(model[0])
    P.spectral_norm(model[2], n_power_iterations=3)
    P.orthogonal(model[4], orthogonal_map="cayley")
    show(list(model.state_dict()))
    show(type(model[0]).__name__, parametrize.is_parametrized(model[0]), parametrize.is_parametrized(model[1]))
    show(model[0].parametrizations.weight.original0.shape, model[0].parametrizations.weight.original1.shape)
    show(model[0].weight.grad_fn.name(), model[2].weight.grad_fn.name(), model[4].weight.grad_fn.name())
    show(torch.linalg.matrix_norm(model[2].weight, 2), model[4].weight @ model[4].weight.T)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    x, y = torch.randn(8, 4), torch.randn(8, 3)
    for _ in range(3):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        show(round(loss.item(), 5))
    show(model[0].parametrizations.weight.original0.grad.squeeze(), model[0].weight.norm(dim=1))
    show(model[2].parametrizations.weight.original.grad[0], model[2]._buffers, model[2].parametrizations.weight[0]._u)
    with parametrize.cached():
        a, b = model[0].weight, model[0].weight
        show(a is b)
    model.eval()
    with torch.no_grad():
        reference = model(x)
    torch.manual_seed(0)
    fresh = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 5), nn.Tanh(), nn.Linear(5, 3))
    P.weight_norm(fresh[0])
    P.spectral_norm(fresh[2], n_power_iterations=3)
    P.orthogonal(fresh[4], orthogonal_map="cayley")
    show(fresh.load_state_dict(model.state_dict()))
    fresh.eval()
    with torch.no_grad():
        show(torch.allclose(fresh(x), reference, atol=1e-6))
    show_outcome(show, lambda: nn.Sequential(nn.Linear(4, 5)).load_state_dict(model.state_dict(), strict=False))
    parametrize.remove_parametrizations(model[0], "weight")
    parametrize.remove_parametrizations(model[4], "weight", leave_parametrized=False)
    show(type(model[0]).__name__, list(model.state_dict()), model[4].weight.requires_grad)
    show_outcome(show, lambda: parametrize.remove_parametrizations(model[0], "weight"))
    show_outcome(show, lambda: P.orthogonal(nn.Linear(3, 4), orthogonal_map="givens"))
    show_outcome(show, lambda: P.spectral_norm(nn.Linear(3, 4), name="scale"))


def _early_stopping_and_init(lib, show):
    """A training loop with patience-based early stopping that deep-copies the best state dict, restores it at
    the end; initialisation through model.apply with a function that picks layers by type, and a second
    initialiser over named_modules that skips the classifier head by name."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(1708)

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 12))
            self.head = nn.Linear(12, 3)

        def forward(self, x):
            return self.head(F.relu(self.features(x)))

    visited = []

    def init_weights(m):
        visited.append(type(m).__name__)
        if isinstance(m, nn.Linear):
            nn.init.kaiming_uniform_(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.BatchNorm1d):
            nn.init.ones_(m.weight)
            nn.init.constant_(m.bias, 0.1)

    model = Classifier()
    returned = model.apply(init_weights)
    show(returned is model, visited)
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear) and not name.startswith("head"):
            nn.init.orthogonal_(module.weight, gain=nn.init.calculate_gain("relu"))
            show(name, module.weight.norm())
    show([name for name, _ in model.named_modules(prefix="net") if name.count(".") == 1])
    x, y = torch.randn(60, 6), torch.randint(0, 3, (60,))
    x_val, y_val = torch.randn(20, 6), torch.randint(0, 3, (20,))
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    best, best_state, patience, waited, history = math.inf, None, 2, 0, []
    for epoch in range(12):
        stopped_at = epoch
        model.train()
        for xb, yb in zip(x.split(20), y.split(20)):
            opt.zero_grad()
            F.cross_entropy(model(xb), yb).backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            val = F.cross_entropy(model(x_val), y_val).item()
        history.append(round(val, 4))
        if val < best - 1e-3:
            best, waited = val, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            waited += 1
            if waited >= patience:
                break
    show(history, stopped_at, round(best, 4))
    show(best_state["features.1.running_mean"], best_state["features.1.num_batches_tracked"])
    show(best_state["head.bias"].requires_grad, best_state["head.bias"] is model.head.bias)
    model.load_state_dict(best_state)
    with torch.no_grad():
        show(round(F.cross_entropy(model(x_val), y_val).item(), 4))
    show_outcome(show, lambda: model.apply(lambda m: 1 / 0))
    show_outcome(show, lambda: model.apply(None))


def _counting_parameters_and_memory(lib, show):
    """Counting a model's parameters (trainable, frozen, unique under weight tying), buffers (persistent or not)
    and bytes: element_size, itemsize, nbytes, untyped_storage().nbytes() of views that share one storage,
    data_ptr offsets, and a half-precision copy's footprint."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1709)

    class TiedLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(10, 4)
            self.norm = nn.LayerNorm(4)
            self.out = nn.Linear(4, 10, bias=False)
            self.out.weight = self.embed.weight
            self.register_buffer("positions", torch.arange(6), persistent=False)
            self.register_buffer("scale", torch.tensor(2.0))
            self.register_buffer("nothing", None)

    model = TiedLM()
    model.norm.requires_grad_(False)
    params = list(model.parameters())
    show(len(params), sum(p.numel() for p in params), sum(p.numel() for p in params if p.requires_grad))
    show(len(list(model.named_parameters(remove_duplicate=False))), [n for n, _ in model.named_parameters()])
    show([n for n, _ in model.named_buffers()], list(model.state_dict()), "positions" in model.state_dict())
    show(model._non_persistent_buffers_set, model.nothing, model.scale.element_size(), model.positions.itemsize)
    total_bytes = sum(p.nelement() * p.element_size() for p in params)
    buffer_bytes = sum(b.nbytes for b in model.buffers())
    show(total_bytes, buffer_bytes, model.embed.weight.nbytes, model.embed.weight.untyped_storage().nbytes())
    flat = torch.zeros(24)
    rows, col = flat.view(4, 6)[1:3], flat.view(4, 6)[:, 2]
    show(rows.nbytes, rows.untyped_storage().nbytes(), col.nbytes, col.stride(), col.storage_offset())
    show(rows.data_ptr() - flat.data_ptr(), col.untyped_storage().data_ptr() == flat.data_ptr())
    show(rows.is_contiguous(), col.is_contiguous(), col.contiguous().untyped_storage().nbytes())
    half = copy.deepcopy(model).half()
    show(half.embed.weight.dtype, half.positions.dtype, half.scale.dtype, half.out.weight is half.embed.weight)
    show(sum(p.nbytes for p in half.parameters()), half.embed.weight.element_size())
    show([(t.dtype, t.element_size(), t.itemsize) for t in (torch.zeros(1, dtype=torch.bfloat16),
                                                             torch.zeros(1, dtype=torch.complex64),
                                                             torch.zeros(1, dtype=torch.bool),
                                                             torch.zeros(1, dtype=torch.int16))])
    storage = model.scale.untyped_storage()
    show(type(storage).__name__, len(storage), storage.size(), storage.element_size(), storage.device)
    show(torch.zeros(3, 4).expand(5, 3, 4).nbytes, torch.zeros(3, 4).expand(5, 3, 4).untyped_storage().nbytes())
    show_outcome(show, lambda: model.register_buffer("scale", torch.ones(1)) or model.scale)
    show_outcome(show, lambda: model.register_buffer("embed", torch.ones(1)))
    show_outcome(show, lambda: model.register_buffer("bad.name", torch.ones(1)))
    show_outcome(show, lambda: model.register_buffer("w", nn.Parameter(torch.ones(1))))
    show_outcome(show, lambda: model.register_buffer("w", [1.0]))
    show_outcome(show, lambda: model.register_parameter("scale", nn.Parameter(torch.ones(1))))


def _load_state_dict_reports(lib, show):
    """Loading checkpoints that do not quite fit: strict=False's missing and unexpected keys, the error text for
    missing, unexpected and size-mismatched keys together, a checkpoint saved from DataParallel ('module.' keys)
    cleaned by consume_prefix_in_state_dict_if_present, partial loads of a backbone, and dtype conversions."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1710)
    old = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Linear(6, 3))
    new = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Linear(6, 5), nn.Softmax(-1))
    sd = old.state_dict()
    result = new.load_state_dict({k: v for k, v in sd.items() if not k.startswith("2.")}, strict=False)
    show(result, result.missing_keys, type(result).__name__, len(result))
    show(torch.equal(new[0].weight, old[0].weight), new[1].num_batches_tracked)
    show_outcome(show, lambda: new.load_state_dict(sd))
    extra = dict(sd, **{"3.temperature": torch.tensor(1.0), "head.weight": torch.zeros(2)})
    show_outcome(show, lambda: new.load_state_dict(extra, strict=False))
    del extra["2.bias"]
    show_outcome(show, lambda: new.load_state_dict(extra))
    show_outcome(show, lambda: old.load_state_dict(dict(sd, **{"0.weight": torch.zeros(6, 4, 1)})))
    show_outcome(show, lambda: old.load_state_dict({"0.weight": torch.zeros(6, 4).tolist()}, strict=False))
    doubled = {k: v.double() if v.is_floating_point() else v for k, v in sd.items()}
    show(old.load_state_dict(doubled), old[0].weight.dtype)
    parallel = {"module." + k: v for k, v in sd.items()}
    nn.modules.utils.consume_prefix_in_state_dict_if_present(parallel, "module.")
    show(list(parallel)[:3], hasattr(parallel, "_metadata"))
    show(old.load_state_dict(parallel))
    backbone = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6))
    show(backbone.load_state_dict({k: v for k, v in sd.items() if k[0] in "01"}), backbone[1].running_var)
    show(old[1].load_state_dict({"weight": torch.ones(6), "bias": torch.zeros(6)}, strict=False))
    show(sd._metadata[""], sd._metadata["1"])
    show_outcome(show, lambda: old.load_state_dict([("0.weight", torch.zeros(6, 4))]))
    show_outcome(show, lambda: old.load_state_dict({"1.num_batches_tracked": torch.tensor(5.7)}, strict=False)
                 or old[1].num_batches_tracked)
    show_outcome(show, lambda: old.load_state_dict({"1.running_mean": torch.zeros(1)}, strict=False))


def _optimizer_hooks_and_named_params(lib, show):
    """An optimizer built from named_parameters (its state_dict carries the names), step pre/post hooks that log
    and skip, state-dict hooks that add and read an extra entry, a load-state-dict post hook, global step hooks,
    a tensor learning rate, and the refusals of mixing named and unnamed parameters."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1711)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = torch.optim.Adam(model.named_parameters(), lr=torch.tensor(0.01))
    show(opt.param_groups[0]["param_names"], type(opt.param_groups[0]["lr"]).__name__)
    log = []

    def pre(optimizer, args, kwargs):
        log.append(("pre", len(args), sorted(kwargs)))

    def post(optimizer, args, kwargs):
        log.append(("post", optimizer.state[model[0].weight]["step"].item()))

    h_pre, h_post = opt.register_step_pre_hook(pre), opt.register_step_post_hook(post)
    optimizer_module = importlib.import_module(f"{torch.__name__}.optim.optimizer")  # (from torch.optim.optimizer import ...)
    h_global = optimizer_module.register_optimizer_step_post_hook(lambda o, a, k: log.append("global"))
    opt.register_state_dict_pre_hook(lambda o: log.append(("sd pre", type(o).__name__)))
    opt.register_state_dict_post_hook(lambda o, sd: dict(sd, extra=len(sd["state"])))
    opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(("load pre", sorted(sd))))
    opt.register_load_state_dict_post_hook(lambda o: log.append(("load post", len(o.state))))
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    for _ in range(2):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    show(log, model[2].bias)
    log.clear()
    h_pre.remove()
    h_global.remove()
    sd = opt.state_dict()
    show(sorted(sd), sd["extra"], sd["param_groups"][0]["param_names"], sd["param_groups"][0]["lr"], log)
    log.clear()
    fresh = torch.optim.Adam(model.named_parameters(), lr=torch.tensor(0.01))
    fresh.register_load_state_dict_pre_hook(lambda o, sd: log.append(("load pre", sorted(sd))))
    fresh.register_load_state_dict_post_hook(lambda o: log.append(("load post", len(o.state))))
    fresh.load_state_dict(sd)
    show(log, fresh.state[model[0].bias]["exp_avg"], fresh.state[model[0].bias]["step"])
    h_post.remove()
    show(opt._optimizer_step_pre_hooks, len(opt._optimizer_step_post_hooks))
    show_outcome(show, lambda: torch.optim.SGD([("w", nn.Parameter(torch.ones(1))), nn.Parameter(torch.ones(1))],
                                               lr=0.1))
    unnamed = torch.optim.SGD(model.parameters(), lr=0.1)
    show_outcome(show, lambda: unnamed.add_param_group({"params": [nn.Parameter(torch.ones(1))],
                                                        "param_names": ["extra"]}))
    show_outcome(show, lambda: fresh.load_state_dict(unnamed.state_dict()))
    show_outcome(show, lambda: torch.optim.Adam(model.parameters(), lr=torch.tensor([0.1, 0.2])))


def _custom_schedule_and_swa(lib, show):
    """A user's LRScheduler subclass (linear warmup then inverse square root) written with get_lr's
    within-step check, SWALR's cosine and linear annealing after a switch epoch, SequentialLR joining them, and the
    warnings and refusals of using them wrong."""
    torch = lib
    sched_mod, swa = torch.optim.lr_scheduler, torch.optim.swa_utils

    class WarmupInvSqrt(sched_mod.LRScheduler):
        def __init__(self, optimizer, warmup, last_epoch=-1):
            self.warmup = warmup
            super().__init__(optimizer, last_epoch)

        def get_lr(self):
            step = max(self.last_epoch, 1)
            factor = min(step / self.warmup, (self.warmup / step) ** 0.5)
            return [base * factor for base in self.base_lrs]

    param = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.SGD([param], lr=1.0)
    sched = WarmupInvSqrt(opt, warmup=3)
    lrs = [round(sched.get_last_lr()[0], 6)]
    for _ in range(6):
        opt.step()
        sched.step()
        lrs.append(round(sched.get_last_lr()[0], 6))
    show(lrs, sched.last_epoch, sorted(sched.state_dict()))
    show(round(sched.get_lr()[0], 6))
    for strategy in ("cos", "linear"):
        opt = torch.optim.SGD([param], lr=0.5)
        swalr = swa.SWALR(opt, swa_lr=0.05, anneal_epochs=3, anneal_strategy=strategy)
        seen = []
        for _ in range(5):
            opt.step()
            swalr.step()
            seen.append(round(opt.param_groups[0]["lr"], 6))
        show(strategy, seen, swalr.get_last_lr())
    opt = torch.optim.SGD([param], lr=0.5)
    seq = sched_mod.SequentialLR(opt, [sched_mod.LinearLR(opt, start_factor=0.1, total_iters=2),
                                       swa.SWALR(opt, swa_lr=0.05, anneal_epochs=2)], milestones=[2])
    seen = []
    for _ in range(5):
        opt.step()
        seq.step()
        seen.append(round(opt.param_groups[0]["lr"], 6))
    show(seen, seq.last_epoch)
    show_outcome(show, lambda: swa.SWALR(opt, swa_lr=0.05, anneal_strategy="step"))
    show_outcome(show, lambda: swa.SWALR(opt, swa_lr=0.05, anneal_epochs=0))
    show_outcome(show, lambda: swa.SWALR(opt, swa_lr=[0.1, 0.2]))
    show_outcome(show, lambda: sched_mod.SequentialLR(opt, [sched_mod.ConstantLR(opt)], milestones=[1]))
    show_outcome(show, lambda: sched_mod.LRScheduler(opt).get_lr())
    show_outcome(show, lambda: WarmupInvSqrt(opt, 3, last_epoch=5))


def _reproducible_randomness(lib, show):
    """Reproducibility helpers of a training script: the global state saved and restored around a dropout
    forward (the same mask again), fork_rng keeping an evaluation's draws from moving the training stream, a
    Generator's state taken after an odd number of normal draws (the cached second normal), clone_state, seeding
    helpers, and the state tensors themselves."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1712)
    drop = nn.Dropout(0.5)
    x = torch.ones(2, 6)
    saved = torch.get_rng_state()
    first = drop(x)
    torch.set_rng_state(saved)
    show(torch.equal(first, drop(x)), first)
    before = torch.get_rng_state()
    with torch.random.fork_rng():
        torch.manual_seed(0)
        show(torch.rand(2))
    show(torch.equal(before, torch.get_rng_state()), torch.rand(2))
    with torch.random.fork_rng(enabled=False):
        torch.rand(1)
    show(torch.equal(before, torch.get_rng_state()))
    gen = torch.Generator().manual_seed(42)
    torch.randn(3, generator=gen)  # (an odd count leaves a normal cached)
    state = gen.get_state()
    show(state.dtype, state.shape, state.is_contiguous(), state[:8])
    a = torch.randn(4, generator=gen)
    clone = torch.Generator().set_state(state)
    show(torch.equal(a, torch.randn(4, generator=clone)), a)
    other = gen.clone_state()
    show(torch.equal(torch.rand(3, generator=gen), torch.rand(3, generator=other)), other.initial_seed())
    show(torch.initial_seed(), torch.Generator().initial_seed(), gen.device, type(torch.default_generator).__name__)
    g1, g2 = torch.Generator(), torch.Generator()
    g1.manual_seed(7)
    g2.set_state(g1.get_state())
    show(torch.randint(0, 100, (5,), generator=g1), torch.randint(0, 100, (5,), generator=g2))
    perm_gen = torch.Generator().manual_seed(3)
    epochs = [torch.randperm(6, generator=perm_gen).tolist() for _ in range(2)]
    perm_gen.manual_seed(3)
    show(epochs, [torch.randperm(6, generator=perm_gen).tolist() for _ in range(2)] == epochs)
    show_outcome(show, lambda: torch.Generator().manual_seed(-1).initial_seed())
    show_outcome(show, lambda: torch.Generator().manual_seed(2 ** 64))
    show_outcome(show, lambda: torch.Generator().manual_seed("7"))
    show_outcome(show, lambda: torch.manual_seed("7").initial_seed())
    show_outcome(show, lambda: torch.Generator("meta"))


class _RunConfig:  # (a user's config object saved inside a checkpoint: module level, so pickle can name it)
    def __init__(self, lr: float, tags: tuple):
        self.lr, self.tags = lr, tags

    def __repr__(self):
        return f"_RunConfig(lr={self.lr}, tags={self.tags})"


def _checkpoint_formats(lib, show):
    """What a checkpoint file holds and how it loads: views saved together keep sharing one storage after
    loading, a slice saved alone brings its whole storage, map_location forms, a user's config object refused by
    the weights-only unpickler and allowed through add_safe_globals/safe_globals, and a legacy-format save."""
    torch = lib
    serialization = torch.serialization
    torch.manual_seed(1713)
    base = torch.randn(4, 5)
    bundle = {"whole": base, "row": base[1], "col": base[:, 2], "step": 7, "names": ["a", "b"]}
    buffer = io.BytesIO()
    torch.save(bundle, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    show(sorted(loaded), loaded["step"], loaded["names"], loaded["col"], loaded["col"].stride())
    loaded["whole"][1, 2] = 100.0
    show(loaded["row"][2], loaded["col"][1], loaded["row"].storage_offset(), loaded["col"].storage_offset())
    show(loaded["row"].untyped_storage().data_ptr() == loaded["whole"].untyped_storage().data_ptr())
    small, whole = io.BytesIO(), io.BytesIO()
    torch.save(base[0, :2], small)
    torch.save(base[0, :2].clone(), whole)
    small.seek(0)
    piece = torch.load(small)
    show(piece, piece.untyped_storage().nbytes(), small.getbuffer().nbytes > whole.getbuffer().nbytes)
    for location in ("cpu", torch.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage):
        buffer.seek(0)
        show(torch.load(buffer, map_location=location)["whole"].device)
    config_file = io.BytesIO()
    torch.save({"config": _RunConfig(0.1, ("x",)), "weights": base}, config_file)
    config_file.seek(0)
    try:
        torch.load(config_file)
    except Exception as e:  # noqa: BLE001 - what the weights-only unpickler says is part of the transcript
        show(type(e).__name__, str(e).splitlines()[-1].replace("tracegrad", "torch"))
    config_file.seek(0)
    show(torch.load(config_file, weights_only=False)["config"])
    config_file.seek(0)
    with serialization.safe_globals([_RunConfig]):
        show(torch.load(config_file)["config"], _RunConfig in serialization.get_safe_globals())
    show(_RunConfig in serialization.get_safe_globals())
    legacy = io.BytesIO()
    torch.save({"w": base[:2]}, legacy, _use_new_zipfile_serialization=False)
    legacy.seek(0)
    show(torch.load(legacy)["w"], legacy.getvalue()[:2] != b"PK")
    show_outcome(show, lambda: torch.load(io.BytesIO(), mmap=True))
    show_outcome(show, lambda: torch.save(base, 42))


PROGRAMS = [
    _resume_from_checkpoint,
    _parameter_groups,
    _freeze_and_unfreeze,
    _accumulation_and_scaling,
    _weight_averaging,
    _scheduler_zoo,
    _bfloat16_autocast_table,
    _parametrized_layers,
    _early_stopping_and_init,
    _counting_parameters_and_memory,
    _load_state_dict_reports,
    _optimizer_hooks_and_named_params,
    _custom_schedule_and_swa,
    _reproducible_randomness,
    _checkpoint_formats,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
