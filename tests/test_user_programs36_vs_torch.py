"""A thirty-sixth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: optimizers as objects, the way meta-learning and research code
pushes them. SGD with momentum and nesterov built with ``differentiable=True`` stepping a non-leaf copy of the
weights under enable_grad, a hypergradient flowing to a 0-d lr tensor and to the initialisation, against the same
unroll by hand and a first-order variant; MAML-style learning of an initialisation through Adam/AdamW with amsgrad
and an outer Adam loop; differentiable RMSprop (centered, momentum) and Adagrad, their tensor-lr refusals and a
backward through a state modified in place; the errors without ``differentiable`` (a non-leaf, in-place on a leaf
that requires grad) and the fixes; foreach and for-loop updates and ``maximize=True`` giving the same numbers, and
SGD with momentum by hand; parameter groups with and without weight decay, the optimizer's repr, params from a
generator, a set, dicts and add_param_group's refusals; step pre/post hooks (what they receive, a pre hook that
replaces the closure, removal, global hooks) and step(closure)'s return values; state-dict and load-state-dict
hooks of a checkpoint converter; the state_dict's layout, loading into a float64 model, group/parameter count
refusals and an old checkpoint with int step counts; zero_grad's two modes and parameters that never get a
gradient; a 0-d tensor lr changed by hand and by a scheduler; and a user's Optimizer subclass. Everything is drawn
from the seeded global generator, which is torch's; values are compared to a tolerance (matrix products are not
bit for bit).

Differences these programs found, now fixed (``tests/ops/test_program36_findings_vs_torch.py``):
- a scheduler over a 0-d tensor lr put a new tensor in the group each step (the user's tensor kept its old value);
  torch writes into it in place and clones it for ``initial_lr``/``base_lrs``/``get_last_lr()``;
- Adam/AdamW kept a 1-element tensor beta (``tensor([0.9000])``) and a list of betas as given; torch makes a tuple
  of 0-d tensors;
- a loaded state_dict with numbers for ``step`` (ASGD's ``eta``/``mu``, NAdam's ``mu_product``) kept numbers and
  the next step failed; torch's ``__setstate__`` makes them 0-d tensors;
- a step pre hook returning arguments without the optimizer gave Python's TypeError where torch's built-in step
  wrapper fails on ``args[0]`` (IndexError).
"""

from __future__ import annotations

import copy
import functools
import importlib

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _hypergradient_of_sgd_lr(lib, show):
    """Meta-learning a learning rate: SGD with momentum (then nesterov) built with ``differentiable=True`` steps a
    non-leaf copy of the weights under enable_grad; the validation loss after three steps is differentiated with
    respect to a 0-d lr tensor and the initial weights, and the same unroll is written by hand to check it."""
    torch = lib
    torch.manual_seed(360)
    x, y = torch.randn(8, 3), torch.randn(8)
    xv, yv = torch.randn(5, 3), torch.randn(5)
    w0 = torch.randn(3, requires_grad=True)

    def train_loss(w):
        return ((x @ w - y) ** 2).mean()

    for nesterov in (False, True):
        lr = torch.tensor(0.1, requires_grad=True)
        w = w0.clone()
        opt = torch.optim.SGD([w], lr=lr, momentum=0.9, nesterov=nesterov, differentiable=True)
        with torch.enable_grad():
            for _ in range(3):
                w.grad, = torch.autograd.grad(train_loss(w), w, create_graph=True)
                opt.step()
        show(nesterov, w.grad_fn.name(), w.is_leaf, w.requires_grad)
        state = opt.state[w]
        show(sorted(state), state["momentum_buffer"].requires_grad, state["momentum_buffer"].grad_fn is not None)
        val = ((xv @ w - yv) ** 2).mean()
        g_lr, g_w0 = torch.autograd.grad(val, [lr, w0])
        show(val, g_lr, g_w0)

    # the same unroll by hand (momentum without nesterov), and its hypergradient
    lr = torch.tensor(0.1, requires_grad=True)
    w, buf = w0.clone(), None
    for _ in range(3):
        g, = torch.autograd.grad(train_loss(w), w, create_graph=True)
        buf = g if buf is None else 0.9 * buf + g
        w = w - lr * buf
    val = ((xv @ w - yv) ** 2).mean()
    show(val, torch.autograd.grad(val, lr)[0], w.grad_fn.name())

    # a first-order hypergradient: the gradients detached, only lr flows
    lr = torch.tensor(0.1, requires_grad=True)
    w = w0.detach().clone()
    opt = torch.optim.SGD([w], lr=lr, differentiable=True)
    for _ in range(2):
        w.grad = torch.autograd.grad(train_loss(w), w)[0]
        opt.step()
    show(w.requires_grad, w.grad_fn.name(), torch.autograd.grad(((xv @ w - yv) ** 2).mean(), lr))


def _adam_amsgrad_meta_init(lib, show):
    """MAML-style learning of an initialisation through Adam and AdamW with amsgrad (differentiable), the
    optimizer's state tensors and their graph, and an outer Adam loop on the initialisation."""
    torch, nn = lib, lib.nn
    torch.manual_seed(361)
    tasks = [(torch.randn(6, 2), torch.randn(6, 1)) for _ in range(3)]
    init = nn.Parameter(torch.randn(2, 1) * 0.5)
    outer = torch.optim.Adam([init], lr=0.05)
    for name in ("Adam", "AdamW"):
        cls = getattr(torch.optim, name)
        inner_w = init * 1.0
        inner = cls([inner_w], lr=0.1, amsgrad=True, weight_decay=0.01, differentiable=True)
        x, y = tasks[0]
        for _ in range(3):
            loss = ((x @ inner_w - y) ** 2).mean()
            inner_w.grad, = torch.autograd.grad(loss, inner_w, create_graph=True)
            inner.step()
        st = inner.state[inner_w]
        show(name, sorted(st), st["step"], st["step"].requires_grad, st["exp_avg"].grad_fn is not None)
        show(st["max_exp_avg_sq"].grad_fn.name() if st["max_exp_avg_sq"].grad_fn else None, inner_w.grad_fn.name())
        meta_loss = ((x @ inner_w - y) ** 2).mean()
        show(meta_loss, torch.autograd.grad(meta_loss, init, retain_graph=True)[0])

    for epoch in range(3):
        outer.zero_grad()
        total = 0.0
        for x, y in tasks:
            w = init * 1.0
            inner = torch.optim.Adam([w], lr=0.1, amsgrad=True, differentiable=True)
            for _ in range(2):
                w.grad, = torch.autograd.grad(((x @ w - y) ** 2).mean(), w, create_graph=True)
                inner.step()
            post = ((x @ w - y) ** 2).mean()
            post.backward()
            total += post.item()
        outer.step()
        show(epoch, round(total, 5), init.grad, init.detach().clone())
    show(outer.state[init]["step"], outer.state_dict()["param_groups"][0]["amsgrad"])


def _rmsprop_adagrad_differentiable(lib, show):
    """RMSprop (centered, with momentum) and Adagrad (lr_decay, initial accumulator) made differentiable: the
    gradient of the result with respect to a 0-d lr and to alpha/eps given as numbers, the state's keys and
    dtypes, and the same updates without ``differentiable`` (values must agree, no graph)."""
    torch = lib
    torch.manual_seed(362)
    a = torch.randn(4, 3)
    target = torch.randn(4)
    w0 = torch.randn(3, requires_grad=True)
    settings = [
        ("RMSprop", dict(alpha=0.9, eps=1e-6, centered=True, momentum=0.5)),
        ("RMSprop", dict(alpha=0.95, weight_decay=0.1)),
        ("Adagrad", dict(lr_decay=0.01, initial_accumulator_value=0.1)),
        ("Adagrad", dict(weight_decay=0.05, maximize=True)),
    ]
    def unroll(name, kwargs, lr):
        w = w0 * 1.0
        opt = getattr(torch.optim, name)([w], lr=lr, differentiable=True, **kwargs)
        for _ in range(3):
            w.grad, = torch.autograd.grad(((a @ w - target) ** 2).sum(), w, create_graph=True)
            opt.step()
        return w, opt

    def hypergradient(name, kwargs):
        lr = torch.tensor(0.05, requires_grad=True)
        return torch.autograd.grad((unroll(name, kwargs, lr)[0] ** 2).sum(), lr)

    for name, kwargs in settings:
        # a 0-d lr that requires grad: torch's RMSprop passes it as add_'s alpha
        show_outcome(show, functools.partial(hypergradient, name, kwargs))
        w, opt = unroll(name, kwargs, 0.05)
        st = opt.state[w]
        show(name, sorted(st), {k: str(v.dtype) for k, v in st.items()}, st["step"])
        show(w)
        show_outcome(show, functools.partial(torch.autograd.grad, (w ** 2).sum(), w0))
        # the plain optimizer on a leaf: the same numbers, no graph
        leaf = w0.detach().clone().requires_grad_()
        plain = getattr(torch.optim, name)([leaf], lr=0.05, **kwargs)
        for _ in range(3):
            plain.zero_grad()
            ((a @ leaf - target) ** 2).sum().backward()
            plain.step()
        show(leaf, (leaf - w).abs().max().item() < 1e-6, leaf.grad_fn)


def _inplace_errors_without_differentiable(lib, show):
    """The errors a meta-learning script meets: a non-leaf given to a plain optimizer, a differentiable optimizer
    on an ordinary leaf Parameter (its in-place update under enable_grad), a hand update in place on a leaf, a
    0-d lr that requires grad given to the plain optimizer, and the fixes (no_grad, .data, differentiable)."""
    torch, nn = lib, lib.nn
    torch.manual_seed(363)
    layer = nn.Linear(3, 1)
    x = torch.randn(4, 3)
    w = layer.weight * 2
    show_outcome(show, lambda: torch.optim.SGD([w], lr=0.1))
    show_outcome(show, lambda: torch.optim.Adam([layer.weight.detach() * 2], lr=0.1).param_groups[0]["lr"])
    opt = torch.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9, differentiable=True)
    layer(x).sum().backward()
    show_outcome(show, opt.step)
    opt = torch.optim.Adam(layer.parameters(), lr=0.1, differentiable=True)
    show_outcome(show, opt.step)
    show(opt.state[layer.weight])

    def by_hand():
        for p in layer.parameters():
            p -= 0.1 * p.grad

    show_outcome(show, by_hand)
    with torch.no_grad():
        for p in layer.parameters():
            p -= 0.1 * p.grad
    show(layer.weight.requires_grad, layer.weight.is_leaf, layer.weight.detach().clone())
    layer.bias.data.add_(layer.bias.grad, alpha=-0.1)
    show(layer.bias.detach().clone())

    lr = torch.tensor(0.1, requires_grad=True)
    opt = torch.optim.SGD(layer.parameters(), lr=lr)
    opt.step()
    show(layer.weight.detach().clone(), lr.grad, opt.param_groups[0]["lr"])
    opt = torch.optim.Adam(layer.parameters(), lr=lr, foreach=False)
    opt.step()
    show(layer.bias, type(opt.param_groups[0]["lr"]).__name__)
    show_outcome(show, lambda: torch.optim.Adam(layer.parameters(), lr=torch.tensor(0.1), foreach=True))
    show_outcome(show, lambda: torch.optim.SGD(layer.parameters(), lr=torch.tensor([0.1, 0.2])))
    show_outcome(show, lambda: torch.optim.Adam(layer.parameters(), lr=-1.0))
    show_outcome(show, lambda: torch.optim.Adam(layer.parameters(), betas=(1.0, 0.999)))
    show_outcome(show, lambda: torch.optim.SGD(layer.parameters(), lr=0.1, nesterov=True))
    show_outcome(show, lambda: torch.optim.SGD(layer.parameters(), lr=0.1, fused=True, differentiable=True))


def _foreach_maximize_equivalence(lib, show):
    """The same training run of a small MLP with each optimizer in its foreach and for-loop forms (the numbers
    must agree), maximize=True on the negated loss against minimising the loss, and an unrolled SGD with momentum
    written by hand against the optimizer's."""
    torch, nn = lib, lib.nn
    torch.manual_seed(364)
    x, y = torch.randn(16, 4), torch.randn(16, 2)
    base = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    start = {k: v.clone() for k, v in base.state_dict().items()}

    def run(name, sign=1.0, **kwargs):
        base.load_state_dict(start)
        opt = getattr(torch.optim, name)(base.parameters(), **kwargs)
        losses = []
        for _ in range(4):
            opt.zero_grad()
            loss = nn.functional.mse_loss(base(x), y)
            (sign * loss).backward()
            opt.step()
            losses.append(round(loss.item(), 6))
        return losses, [p.detach().clone() for p in base.parameters()]

    configs = [
        ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3)),
        ("Adam", dict(lr=0.01, amsgrad=True)),
        ("AdamW", dict(lr=0.01, weight_decay=0.1)),
        ("RMSprop", dict(lr=0.01, centered=True, momentum=0.3)),
        ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
        ("NAdam", dict(lr=0.01)),
    ]
    for name, kwargs in configs:
        loop_losses, loop_params = run(name, foreach=False, **kwargs)
        vec_losses, vec_params = run(name, foreach=True, **kwargs)
        max_losses, max_params = run(name, sign=-1.0, maximize=True, foreach=False, **kwargs)
        gap = max((a - b).abs().max().item() for a, b in zip(loop_params, vec_params))
        show(name, loop_losses, gap < 1e-5, loop_losses == max_losses)
        show(loop_params[-1], max_params[-1])

    # SGD with momentum by hand
    base.load_state_dict(start)
    params = list(base.parameters())
    bufs = [None] * len(params)
    for _ in range(4):
        for p in params:
            p.grad = None
        nn.functional.mse_loss(base(x), y).backward()
        with torch.no_grad():
            for i, p in enumerate(params):
                bufs[i] = p.grad.clone() if bufs[i] is None else bufs[i].mul_(0.9).add_(p.grad)
                p.sub_(0.1 * bufs[i])
    hand = [p.detach().clone() for p in params]
    _, opt_params = run("SGD", lr=0.1, momentum=0.9)
    show(max((a - b).abs().max().item() for a, b in zip(hand, opt_params)) < 1e-6, hand[-1])


def _param_groups_and_repr(lib, show):
    """Parameter groups the way a fine-tuning script builds them: no weight decay on biases and norms, a smaller
    lr for the backbone, the optimizer's repr, groups from a generator, a set (refused), dicts with
    unknown options, add_param_group's refusals (a duplicate parameter, a missing lr), and per-group lrs changed by
    hand."""
    torch, nn = lib, lib.nn
    torch.manual_seed(365)
    model = nn.Sequential(nn.Linear(4, 6), nn.LayerNorm(6), nn.ReLU(), nn.Linear(6, 3))
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if name.endswith("bias") or name.startswith("1.") else decay).append(p)
    opt = torch.optim.AdamW([
        {"params": decay, "weight_decay": 0.05},
        {"params": no_decay, "weight_decay": 0.0},
    ], lr=1e-3, betas=(0.9, 0.98))
    show(opt)
    show(len(opt.param_groups), [len(g["params"]) for g in opt.param_groups], sorted(opt.defaults))
    opt2 = torch.optim.SGD(p for p in model.parameters() if p.dim() > 1)
    show(opt2, len(opt2.param_groups[0]["params"]))
    show_outcome(show, lambda: torch.optim.SGD(set(model.parameters()), lr=0.1))
    show_outcome(show, lambda: torch.optim.SGD([], lr=0.1))
    show_outcome(show, lambda: torch.optim.SGD(model[0].weight, lr=0.1))
    show_outcome(show, lambda: torch.optim.SGD([model[0].weight, model[0].weight], lr=0.1))
    show_outcome(show, lambda: torch.optim.SGD([{"params": model[0].weight}, {"params": model[0].weight}], lr=0.1))
    show_outcome(show, lambda: torch.optim.SGD([{"params": [model[0].weight]}]))
    show_outcome(show, lambda: torch.optim.SGD([{"params": [model[0].weight], "my_tag": "head"}], lr=0.1)
                 .param_groups[0]["my_tag"])
    show_outcome(show, lambda: torch.optim.SGD([torch.ones(2, dtype=torch.long)], lr=0.1))
    show_outcome(show, lambda: torch.optim.Adam([{"params": [model[3].weight], "lr": 0.1}, model[3].bias]))

    head_opt = torch.optim.SGD(model[3].parameters(), lr=0.1, momentum=0.9)
    show_outcome(show, lambda: head_opt.add_param_group({"params": model[3].weight}))
    show_outcome(show, lambda: head_opt.add_param_group(model[0].weight))
    show_outcome(show, lambda: head_opt.add_param_group({"params": set(model[0].parameters())}))
    head_opt.add_param_group({"params": model[0].parameters(), "lr": 0.01})
    show(head_opt)
    sgd_nolr = torch.optim.SGD([model[1].weight], lr=0.5)
    del sgd_nolr.defaults["lr"]
    show_outcome(show, lambda: sgd_nolr.add_param_group({"params": [model[1].bias]}))
    for g, factor in zip(head_opt.param_groups, (0.5, 0.1)):
        g["lr"] *= factor
    show([g["lr"] for g in head_opt.param_groups], [g["momentum"] for g in head_opt.param_groups])


def _step_hooks(lib, show):
    """register_step_pre_hook / register_step_post_hook on an optimizer (what they receive, a pre hook that
    returns new args, hook order, removing handles), the global register_optimizer_step_* hooks, and the values
    step(closure) returns."""
    torch, nn = lib, lib.nn
    torch.manual_seed(366)
    model = nn.Linear(3, 1)
    x, y = torch.randn(5, 3), torch.randn(5, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    log = []

    def pre(optimizer, args, kwargs):
        log.append(("pre", type(optimizer).__name__, optimizer is opt, len(args), sorted(kwargs)))

    def post(optimizer, args, kwargs):
        log.append(("post", len(args), sorted(kwargs)))

    def closure():
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        log.append(("closure", round(loss.item(), 5)))
        return loss

    h_pre = opt.register_step_pre_hook(pre)
    h_post = opt.register_step_post_hook(post)
    show(type(h_pre).__name__, h_pre.id != h_post.id)
    ret = opt.step(closure)
    show(type(ret).__name__, ret, log)
    log.clear()
    ret = opt.step(closure=closure)
    show(ret, log)
    log.clear()
    show(opt.step(), log)
    log.clear()

    def new_closure():
        log.append("replacement closure")
        return torch.tensor(42.0)

    def swap(optimizer, args, kwargs):
        return args[:1], {"closure": new_closure}

    def drop_all(optimizer, args, kwargs):  # (forgets that args[0] is the optimizer)
        return (), {"closure": new_closure}

    h_swap = opt.register_step_pre_hook(swap)
    show(opt.step(closure), log)
    log.clear()
    h_swap.remove()
    h_drop = opt.register_step_pre_hook(drop_all)
    show_outcome(show, lambda: opt.step(closure))
    h_drop.remove()
    log.clear()
    h_pre.remove()
    h_pre.remove()
    show(opt.step(closure), log)
    log.clear()
    h_post.remove()

    def bad(optimizer, args, kwargs):
        return "oops"

    h_bad = opt.register_step_pre_hook(bad)
    show_outcome(show, lambda: opt.step(closure))
    h_bad.remove()
    log.clear()
    optimizer_module = importlib.import_module(torch.__name__ + ".optim.optimizer")
    g_pre = optimizer_module.register_optimizer_step_pre_hook(
        lambda o, a, k: log.append(("global pre", type(o).__name__)))
    g_post = optimizer_module.register_optimizer_step_post_hook(
        lambda o, a, k: log.append(("global post", type(o).__name__)))
    local = opt.register_step_pre_hook(lambda o, a, k: log.append("local pre"))
    adam = torch.optim.Adam(model.parameters(), lr=0.01)
    opt.step(closure)
    adam.step()
    show(log)
    g_pre.remove()
    g_post.remove()
    local.remove()
    log.clear()
    opt.step()
    show(log, model.weight.detach().clone())
    lbfgs = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=3)
    show(lbfgs.step(closure), len(log))
    show_outcome(show, lbfgs.step)


def _state_dict_hooks(lib, show):
    """register_state_dict_pre/post_hook and register_load_state_dict_pre/post_hook the way a checkpoint
    converter uses them: a post hook that adds a version key and renames state, a load pre hook that accepts the
    old layout and returns a new dict, prepend=True ordering, a post hook that returns None, and removal."""
    torch, nn = lib, lib.nn
    torch.manual_seed(367)
    model = nn.Linear(2, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.randn(3, 2)).sum().backward()
    opt.step()
    order = []

    def sd_pre(optimizer):
        order.append(("sd pre", type(optimizer).__name__))

    def sd_post(optimizer, state_dict):
        order.append(("sd post", sorted(state_dict)))
        state_dict["format_version"] = 2
        return state_dict

    def sd_post_first(optimizer, state_dict):
        order.append("sd post (prepended)")

    h1 = opt.register_state_dict_pre_hook(sd_pre)
    h2 = opt.register_state_dict_post_hook(sd_post)
    h3 = opt.register_state_dict_post_hook(sd_post_first, prepend=True)
    sd = opt.state_dict()
    show(order, sorted(sd), sd["format_version"], sorted(sd["state"][0]))
    order.clear()

    def load_pre(optimizer, state_dict):
        order.append(("load pre", sorted(state_dict)))
        fixed = dict(state_dict)
        fixed.pop("format_version", None)
        fixed["param_groups"] = [dict(g, lr=0.005) for g in state_dict["param_groups"]]
        return fixed

    def load_post(optimizer):
        order.append(("load post", optimizer.param_groups[0]["lr"]))

    fresh = torch.optim.Adam(model.parameters(), lr=0.01)
    l1 = fresh.register_load_state_dict_pre_hook(load_pre)
    l2 = fresh.register_load_state_dict_post_hook(load_post)
    l3 = fresh.register_load_state_dict_post_hook(lambda o: order.append("load post first"), prepend=True)
    fresh.load_state_dict(sd)
    show(order, fresh.param_groups[0]["lr"], fresh.state[model.weight]["step"], "format_version" in sd)
    order.clear()
    show(sorted(fresh.state_dict()), sorted(opt.state_dict()["param_groups"][0]))
    for h in (h1, h2, h3, l1, l2, l3):
        h.remove()
    order.clear()
    show(sorted(opt.state_dict()), order)
    show_outcome(show, lambda: fresh.load_state_dict(sd))
    show(fresh.param_groups[0]["lr"])
    h = opt.register_state_dict_post_hook(lambda o, s: {"replaced": True})
    show(opt.state_dict())
    h.remove()
    show(len(opt._optimizer_state_dict_post_hooks), len(opt._optimizer_load_state_dict_pre_hooks))


def _state_dict_layout_and_loading(lib, show):
    """What an optimizer's state_dict holds (integer ids for parameters, ``step`` as a tensor, groups' options),
    loading it into a fresh optimizer over a float64 copy of the model (the state cast to the parameters' dtype
    but ``step`` kept float32), the refusals of mismatched group and parameter counts, and an old checkpoint whose
    step counts are numbers."""
    torch, nn = lib, lib.nn
    torch.manual_seed(368)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    opt = torch.optim.SGD([
        {"params": model[0].parameters()},
        {"params": model[2].parameters(), "lr": 0.01},
    ], lr=0.1, momentum=0.9)
    x = torch.randn(6, 3)
    model(x).pow(2).mean().backward()
    opt.step()
    sd = opt.state_dict()
    show(sorted(sd), list(sd["state"]), [g["params"] for g in sd["param_groups"]])
    show(sorted(sd["state"][0]), sd["state"][3]["momentum_buffer"])
    show(sd["param_groups"][1])

    adam = torch.optim.Adam(model.parameters(), lr=0.01)
    model(x).pow(2).mean().backward()
    adam.step()
    adam_sd = adam.state_dict()
    step = adam_sd["state"][0]["step"]
    show(step, step.dtype, step.shape, sorted(adam_sd["state"][0]), adam_sd["param_groups"][0]["params"])

    model64 = copy.deepcopy(model).double()
    adam64 = torch.optim.Adam(model64.parameters(), lr=0.01)
    adam64.load_state_dict(adam_sd)
    st = adam64.state[model64[0].weight]
    show(st["exp_avg"].dtype, st["exp_avg_sq"].dtype, st["step"].dtype, st["step"])
    show(st["exp_avg"] is adam_sd["state"][0]["exp_avg"], adam.state[model[0].weight]["exp_avg"].dtype)
    model64(x.double()).pow(2).mean().backward()
    adam64.step()
    show(adam64.state[model64[0].weight]["step"], model64[2].bias)

    show_outcome(show, lambda: torch.optim.SGD(model.parameters(), lr=0.1).load_state_dict(sd))
    show_outcome(show, lambda: torch.optim.SGD([
        {"params": model[0].parameters()}, {"params": [model[2].weight]}], lr=0.1).load_state_dict(sd))
    show_outcome(show, lambda: torch.optim.SGD([
        {"params": [model[0].weight]}, {"params": model[2].parameters()}], lr=0.1).load_state_dict(sd))
    show_outcome(show, lambda: opt.load_state_dict({"state": {}}))
    show_outcome(show, lambda: opt.load_state_dict(list(sd.items())))
    swapped = torch.optim.SGD([
        {"params": model[2].parameters(), "lr": 0.5},
        {"params": model[0].parameters()},
    ], lr=0.3, momentum=0.1)
    show_outcome(show, lambda: swapped.load_state_dict(sd))
    show([g["lr"] for g in swapped.param_groups], [g["momentum"] for g in swapped.param_groups])
    show(swapped.state[model[2].weight]["momentum_buffer"].shape)
    adam_into_sgd = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    adam_into_sgd.load_state_dict(adam_sd)
    show(sorted(adam_into_sgd.param_groups[0]), sorted(adam_into_sgd.state[model[0].weight]))
    model(x).pow(2).mean().backward()
    show_outcome(show, adam_into_sgd.step)

    # a checkpoint from an older PyTorch: step counts as plain numbers
    old = copy.deepcopy(adam_sd)
    for st in old["state"].values():
        st["step"] = int(st["step"])
    resumed = torch.optim.Adam(model.parameters(), lr=0.01)
    resumed.load_state_dict(old)
    show(resumed.state[model[0].weight]["step"], type(old["state"][0]["step"]).__name__)
    resumed.zero_grad()
    model(x).pow(2).mean().backward()
    resumed.step()
    show(resumed.state[model[2].bias]["step"], model[2].bias)


def _zero_grad_and_missing_grads(lib, show):
    """zero_grad with set_to_none True and False (grads kept as zeros, their identity, requires_grad of a grad),
    parameters that never get a gradient (a frozen branch, an unused head) and the state the optimizers keep for
    them, a gradient set by hand of another shape (refused), and optimizers over frozen parameters."""
    torch, nn = lib, lib.nn
    torch.manual_seed(369)

    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(3, 4)
            self.head_a = nn.Linear(4, 1)
            self.head_b = nn.Linear(4, 1)

        def forward(self, x):
            return self.head_a(torch.tanh(self.body(x)))

    net = TwoHeads()
    x = torch.randn(5, 3)
    for name in ("SGD", "Adam", "RMSprop"):
        opt = getattr(torch.optim, name)(net.parameters(), lr=0.01, **({"momentum": 0.9} if name == "SGD" else {}))
        net(x).sum().backward()
        opt.step()
        show(name, [n for n, p in net.named_parameters() if p in opt.state], net.head_b.weight.grad)
        grad_before = net.body.weight.grad
        opt.zero_grad(set_to_none=False)
        show(net.body.weight.grad is grad_before, net.body.weight.grad, net.head_b.weight.grad)
        opt.zero_grad()
        show(net.body.weight.grad, len(opt.state), sorted(opt.state_dict()["state"]))

    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    net(x).sum().backward(create_graph=True)
    g = net.body.bias.grad
    show(g.requires_grad, g.grad_fn is not None)
    opt.zero_grad(set_to_none=False)
    show(net.body.bias.grad is g, net.body.bias.grad.requires_grad, net.body.bias.grad)

    def set_wrong_shape():
        net.head_a.bias.grad = torch.zeros(2)

    show_outcome(show, set_wrong_shape)
    show_outcome(show, lambda: setattr(net.head_a.bias, "grad", torch.zeros(1, dtype=torch.float64)))
    show_outcome(show, lambda: setattr(net.head_a.bias, "grad", [0.0]))
    frozen = nn.Linear(2, 2).requires_grad_(False)
    show_outcome(show, lambda: torch.optim.SGD(frozen.parameters(), lr=0.1).step())
    opt = torch.optim.Adam(frozen.parameters(), lr=0.1)
    opt.zero_grad(set_to_none=False)
    show(frozen.weight.grad, opt.state_dict()["state"])


def _tensor_lr_and_schedulers(lib, show):
    """A learning rate given as a 0-d tensor: changed in place between steps (the groups see it), stepped by a
    scheduler (which writes into the tensor), in the state_dict and its round trip, Adam's refusal with foreach
    and capturable=False, and deepcopy of an optimizer that holds one."""
    torch, nn = lib, lib.nn
    torch.manual_seed(370)
    model = nn.Linear(3, 2)
    x = torch.randn(4, 3)
    lr = torch.tensor(0.1)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.5)
    show(opt.param_groups[0]["lr"] is lr, opt.param_groups[0].get("initial_lr", "no initial_lr"))
    for value in (0.1, 0.05):
        lr.fill_(value)
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()
        show(model.bias.detach().clone(), opt.param_groups[0]["lr"])
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    show(type(opt.param_groups[0]["initial_lr"]).__name__, opt.param_groups[0]["initial_lr"])
    for _ in range(2):
        opt.step()
        sched.step()
        show(lr, opt.param_groups[0]["lr"] is lr, sched.get_last_lr())
    sd = opt.state_dict()
    show(type(sd["param_groups"][0]["lr"]).__name__, sd["param_groups"][0]["lr"])
    other = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.5)
    other.load_state_dict(sd)
    show(other.param_groups[0]["lr"], other.param_groups[0]["lr"] is lr)
    dup = copy.deepcopy(opt)
    show(dup.param_groups[0]["lr"], dup.param_groups[0]["lr"] is lr, dup.param_groups[0]["params"][0] is model.weight)
    show(sched.state_dict()["_last_lr"], sched.state_dict()["base_lrs"])

    adam = torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01))
    model(x).pow(2).sum().backward()
    adam.step()
    show(adam.state[model.bias]["step"], model.bias.detach().clone())
    show_outcome(show, lambda: torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01), foreach=True))
    show_outcome(show, lambda: torch.optim.AdamW(model.parameters(), lr=torch.tensor(0.01), foreach=True))
    show_outcome(show, lambda: torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01), fused=True))
    show_outcome(show, lambda: torch.optim.SGD(model.parameters(), lr=torch.tensor(-0.1)))
    show_outcome(show, lambda: torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01),
                                                betas=(torch.tensor(0.9), 0.999)))
    show_outcome(show, lambda: torch.optim.Adam(model.parameters(), lr=0.01,
                                                betas=(torch.tensor([0.9]), torch.tensor(0.999))))


def _custom_optimizer_subclass(lib, show):
    """A user's Optimizer subclass (sign SGD with momentum and a lazily made state), its repr, defaults, state,
    closure, hooks and a state_dict round trip into a built-in, plus subclasses that forget ``defaults`` or
    ``@torch.no_grad`` (the in-place update's error) and the base class's own refusals."""
    torch, nn = lib, lib.nn
    torch.manual_seed(371)

    class SignSGD(torch.optim.Optimizer):
        def __init__(self, params, lr=0.01, beta=0.9):
            if lr <= 0:
                raise ValueError(f"Invalid learning rate: {lr}")
            super().__init__(params, dict(lr=lr, beta=beta))

        @torch.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with torch.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["m"] = torch.zeros_like(p)
                    state["step"] += 1
                    state["m"].mul_(group["beta"]).add_(p.grad, alpha=1 - group["beta"])
                    p.add_(state["m"].sign(), alpha=-group["lr"])
            return loss

    model = nn.Linear(3, 1)
    x, y = torch.randn(6, 3), torch.randn(6, 1)
    opt = SignSGD(model.parameters(), lr=0.05)
    show(opt, opt.defaults)

    def closure():
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        return loss

    seen = []
    opt.register_step_post_hook(lambda o, a, k: seen.append(type(o).__name__))
    for _ in range(3):
        loss = opt.step(closure)
    show(loss, seen, opt.state[model.weight]["step"], opt.state[model.weight]["m"])
    sd = opt.state_dict()
    show(sd["state"][0]["step"], sorted(sd["param_groups"][0]))
    again = SignSGD(model.parameters())
    again.load_state_dict(sd)
    show(again.param_groups[0]["lr"], again.state[model.bias]["step"], type(again.state[model.bias]["m"]).__name__)
    show_outcome(show, lambda: SignSGD(model.parameters(), lr=0))

    class Forgot(torch.optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, {"lr": lr})

        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p.add_(p.grad, alpha=-group["lr"])

    forgot = Forgot(model.parameters())
    closure()
    show_outcome(show, forgot.step)
    show_outcome(show, lambda: torch.optim.Optimizer(model.parameters(), {}).step())
    show_outcome(show, lambda: torch.optim.Optimizer(model.parameters(), None))
    show_outcome(show, lambda: torch.optim.Optimizer(torch.ones(2, requires_grad=True), {}))
    show(repr(torch.optim.Optimizer([torch.ones(2, requires_grad=True)], {"lr": 1})))


PROGRAMS = [
    _hypergradient_of_sgd_lr,
    _adam_amsgrad_meta_init,
    _rmsprop_adagrad_differentiable,
    _inplace_errors_without_differentiable,
    _foreach_maximize_equivalence,
    _param_groups_and_repr,
    _step_hooks,
    _state_dict_hooks,
    _state_dict_layout_and_loading,
    _zero_grad_and_missing_grads,
    _tensor_lr_and_schedulers,
    _custom_optimizer_subclass,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
