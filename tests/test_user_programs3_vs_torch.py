"""More ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add to ``test_user_programs_vs_torch.py`` what it does not run: printed reprs (``print(model)``,
``print(tensor)``), physics-informed losses with second derivatives, module and tensor hooks around a custom
Function, model surgery (parameters_to_vector, deepcopy, ``to(float64)``, custom parametrizations), message passing
with ``index_add_``/``scatter_reduce``, a Gaussian process fitted with LBFGS, distributions, contrastive losses and
spatial transformers. Everything is drawn from the seeded global generator, which is torch's. Values are
compared to a tolerance: matrix products (and MKL's vector exp/log/sqrt) are not bit for bit.

Differences these programs found, now fixed (``tests/ops/test_program3_findings_vs_torch.py``):
- ``scatter_reduce(..., reduce="max")`` (graph attention's per-node maximum) was refused; torch reads "max"/"min"
  as "amax"/"amin" forward and refuses them only in backward;
- ``cdist`` of float64 points and float32 centroids (k-means) promoted where torch refuses the mixed dtypes, and
  cdist/pdist computed in half precision, which torch's kernels refuse.

Left: meta tensors are not implemented (``with torch.device("meta")`` raises NotImplementedError); ``grid_sample``'s
bicubic mode is within a few ulp of torch, not bit for bit (2-d bilinear is since bit for bit:
``tests/ops/test_program12_findings_vs_torch.py``).
"""

from __future__ import annotations

import copy
import io
import math

import pytest
from _precision_state import precisions_kept
from _tutorial_lib import assert_same_transcript, show_outcome


def _cnn_with_schedulers(lib, show):
    """A small CNN (Conv2d, BatchNorm2d, MaxPool2d, Dropout) printed, trained with Adam and LambdaLR, evaluated
    for accuracy; then a tour of schedulers stepping an optimizer."""
    torch, nn = lib, lib.nn
    torch.manual_seed(30)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 4, kernel_size=3, padding=1), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
                nn.MaxPool2d(2), nn.Conv2d(4, 8, 3, padding="same", bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                nn.MaxPool2d(kernel_size=2, stride=2))
            self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.5), nn.Linear(8 * 2 * 2, 3))

        def forward(self, x):
            return self.classifier(self.features(x))

    model = Net()
    show(model)
    show(repr(model.features[0]), repr(model.features[3]), str(model.classifier[1]))
    x, y = torch.randn(10, 1, 8, 8), torch.randint(0, 3, (10,))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5 ** epoch)
    for epoch in range(3):
        model.train()
        for xb, yb in zip(x.split(5), y.split(5)):
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
        model.eval()
        with torch.no_grad():
            logits = model(x)
            pred = logits.argmax(dim=1)
            correct = pred.eq(y).sum().item()
        show(epoch, loss, sched.get_last_lr(), correct, f"{100 * correct / len(y):.1f}%", pred)
    show(model.features[5].running_var, model.features[0].weight.grad[0, 0], sched.state_dict())

    def lrs(make, steps=7, **kw):
        p = nn.Parameter(torch.zeros(1))
        opt = torch.optim.SGD([p], lr=0.1, momentum=0.9, **kw)
        s = make(opt)
        out = []
        for _ in range(steps):
            opt.step()
            s.step()
            out.append(round(opt.param_groups[0]["lr"], 8))
        return out, s.get_last_lr()

    sch = torch.optim.lr_scheduler
    show(lrs(lambda o: sch.ExponentialLR(o, gamma=0.8)))
    show(lrs(lambda o: sch.StepLR(o, step_size=2, gamma=0.5)))
    show(lrs(lambda o: sch.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2")))
    show(lrs(lambda o: sch.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=1e-3)))
    show(lrs(lambda o: sch.PolynomialLR(o, total_iters=5, power=2.0)))
    show(lrs(lambda o: sch.ChainedScheduler([sch.ConstantLR(o, factor=0.5, total_iters=3),
                                             sch.ExponentialLR(o, gamma=0.9)])))
    show(lrs(lambda o: sch.OneCycleLR(o, max_lr=0.5, total_steps=7, anneal_strategy="linear",
                                      three_phase=True)))
    show(lrs(lambda o: sch.MultiplicativeLR(o, lambda e: 0.95)))
    show_outcome(show, lambda: lrs(lambda o: sch.OneCycleLR(o, max_lr=0.5, total_steps=3), steps=5))


def _physics_informed(lib, show):
    """A PINN for the heat equation: u_t and u_xx through autograd.grad with create_graph, boundary terms, trained
    with LBFGS; then a Hessian-vector product and autograd.functional on the network."""
    torch, nn = lib, lib.nn
    torch.set_default_dtype(torch.float64)
    try:
        torch.manual_seed(31)
        net = nn.Sequential(nn.Linear(2, 12), nn.Tanh(), nn.Linear(12, 12), nn.Tanh(), nn.Linear(12, 1))
        xt = torch.rand(20, 2, requires_grad=True)
        x0 = torch.rand(8, 1)
        initial = torch.cat([x0, torch.zeros_like(x0)], dim=1)

        def residual():
            u = net(xt)
            du, = torch.autograd.grad(u, xt, grad_outputs=torch.ones_like(u), create_graph=True)
            u_x, u_t = du[:, :1], du[:, 1:]
            u_xx = torch.autograd.grad(u_x.sum(), xt, create_graph=True)[0][:, :1]
            return u_t - 0.1 * u_xx

        opt = torch.optim.LBFGS(net.parameters(), lr=0.5, max_iter=4, history_size=5,
                                line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = residual().pow(2).mean() + (net(initial) - torch.sin(math.pi * x0)).pow(2).mean()
            loss.backward()
            return loss

        for step in range(2):
            loss = opt.step(closure)
            show(step, loss, opt.state[opt._params[0]]["n_iter"], opt.state[opt._params[0]]["func_evals"])
        show(net[0].weight.grad, residual()[:3])
        params = list(net.parameters())[:-1]  # (the residual does not depend on the last bias)
        loss = residual().pow(2).mean()
        grads = torch.autograd.grad(loss, params, create_graph=True)
        vs = [torch.randn_like(p) for p in params]
        hvp = torch.autograd.grad(grads, params, grad_outputs=vs)
        show(hvp[0][:2], hvp[-1], grads[0].grad_fn.name())
        show_outcome(show, lambda: torch.autograd.grad(residual().sum(), list(net.parameters())))
        show(torch.autograd.grad(residual().sum(), list(net.parameters()), allow_unused=True,
                                 materialize_grads=True)[-1])
        F = torch.autograd.functional
        point = torch.tensor([[0.3, 0.7]])
        show(F.jacobian(net, point), F.hessian(lambda p: net(p).sum(), point))
        show(F.hvp(lambda p: net(p).sum(), point, torch.ones(1, 2)), F.vjp(net, point, torch.ones(1, 1)))
        show(F.jacobian(lambda a, b: (a * b, a + b), (point, point * 2), vectorize=False))
    finally:
        torch.set_default_dtype(torch.float32)


def _custom_function_and_hooks(lib, show):
    """A custom ReLU (autograd.Function) inside a model observed by forward, pre-forward, full backward and tensor
    hooks, retain_grad, and checkpointed blocks: the hooks' order, what they receive, and the gradients."""
    torch, nn = lib, lib.nn
    torch.manual_seed(32)
    events = []

    class MyReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            events.append(("MyReLU.backward", tuple(grad.shape)))
            return grad * (x > 0).float()

    class Act(nn.Module):
        def forward(self, x):
            return MyReLU.apply(x)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.act = Act()

        def forward(self, x):
            return self.act(self.fc(x)) + x

    model = nn.Sequential(Block(), Block(), nn.Linear(4, 2))
    for name, module in model.named_modules():
        if not name:
            continue
        module.register_forward_pre_hook(lambda m, args, name=name: events.append(("pre", name, len(args))))
        module.register_forward_hook(lambda m, args, out, name=name: events.append(("fwd", name, out.shape)))
        module.register_full_backward_hook(
            lambda m, gin, gout, name=name: events.append(("bwd", name, [g is None for g in gin],
                                                           [tuple(g.shape) for g in gout])))
        module.register_full_backward_pre_hook(lambda m, gout, name=name: events.append(("bwd_pre", name)))
    x = torch.randn(3, 4, requires_grad=True)
    h = model[0](x)
    h.retain_grad()
    h.register_hook(lambda g: events.append(("tensor hook h", g.sum().item() != 0)))
    out = model[2](model[1](h))
    show(out.grad_fn.name(), h.grad_fn.name(), type(h.grad_fn).__name__, h.grad_fn.next_functions[0][0].name())
    out.pow(2).sum().backward()
    for e in events:
        show(*e)
    show(x.grad, h.grad, model[0].fc.weight.grad)
    events.clear()
    ckpt = torch.utils.checkpoint
    for reentrant in (False, True):
        x.grad = None
        for p in model.parameters():
            p.grad = None
        y = ckpt.checkpoint(model[0], x, use_reentrant=reentrant)
        y = ckpt.checkpoint_sequential(model, 2, x, use_reentrant=reentrant) + y.sum()
        y.sum().backward()
        show(reentrant, y.grad_fn.name(), x.grad, model[1].fc.bias.grad)
    show(len(events), sorted({e[0] for e in events}))


def _model_surgery(lib, show):
    """Freezing, weight tying, a custom parametrization, parameters_to_vector round trips, deepcopy, to(float64),
    and a state dict saved to memory and loaded into a copy."""
    torch, nn = lib, lib.nn
    P = nn.utils.parametrize
    torch.manual_seed(33)

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    class AE(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Linear(5, 3)
            self.mid = nn.Linear(3, 3, bias=False)
            self.dec = nn.Linear(3, 5)

        def forward(self, x):
            z = torch.relu(self.enc(x))
            z = self.mid(z)
            return nn.functional.linear(z, self.enc.weight.t(), self.dec.bias)

    model = AE()
    P.register_parametrization(model.mid, "weight", Symmetric())
    show(model)
    show([(n, tuple(p.shape)) for n, p in model.named_parameters()], P.is_parametrized(model.mid))
    show(torch.equal(model.mid.weight, model.mid.weight.T), model.mid.weight.grad_fn.name())
    vec = nn.utils.parameters_to_vector(model.parameters())
    show(vec.shape, vec.grad_fn.name())
    nn.utils.vector_to_parameters(vec * 0.5, model.parameters())
    show(model.enc.bias, model.mid.parametrizations.weight.original)
    model.dec.weight.requires_grad_(False)
    x = torch.randn(4, 5)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
    for step in range(2):
        loss = nn.functional.mse_loss(model(x), x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, model.dec.weight.grad)
    twin = copy.deepcopy(model)
    show(twin.enc.weight is model.enc.weight, torch.equal(twin.enc.weight, model.enc.weight), twin.enc.weight.grad)
    double = copy.deepcopy(model).to(torch.float64)
    show(double.enc.weight.dtype, double(x.double()).dtype, double.mid.weight.dtype)
    show_outcome(show, lambda: double(x))
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    state = torch.load(buf)
    show(list(state.keys()), state["mid.parametrizations.weight.original"])
    fresh = AE()
    P.register_parametrization(fresh.mid, "weight", Symmetric())
    show(fresh.load_state_dict(state))
    show(torch.equal(fresh(x), model(x)), model.half().enc.weight.dtype)
    P.remove_parametrizations(model.mid, "weight", leave_parametrized=True)
    show(model.mid, sorted(dict(model.named_parameters())))
    show(sum(p.numel() for p in fresh.parameters() if p.requires_grad), nn.utils.parameters_to_vector(
        fresh.parameters()).norm())


def _graph_message_passing(lib, show):
    """A two-layer graph network written with index_add_, scatter_reduce and a per-node softmax over edges."""
    torch, nn = lib, lib.nn
    torch.manual_seed(34)
    num_nodes = 6
    edge_index = torch.tensor([[0, 1, 1, 2, 3, 4, 5, 5, 2], [1, 0, 2, 1, 4, 3, 0, 2, 5]])
    src, dst = edge_index
    deg = torch.bincount(dst, minlength=num_nodes).float().clamp(min=1)
    feats = torch.randn(num_nodes, 3)
    labels = torch.tensor([0, 1, 0, 1, 1, 0])

    class GraphConv(nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.lin = nn.Linear(d_in, d_out)
            self.att = nn.Parameter(torch.randn(2 * d_out) * 0.1)

        def forward(self, h):
            h = self.lin(h)
            score = nn.functional.leaky_relu(torch.cat([h[src], h[dst]], dim=1) @ self.att, 0.2)
            smax = torch.zeros(num_nodes).scatter_reduce(0, dst, score, reduce="amax", include_self=False)
            e = (score - smax[dst]).exp()
            denom = torch.zeros(num_nodes).index_add_(0, dst, e)
            alpha = e / denom[dst]
            out = torch.zeros_like(h).index_add_(0, dst, alpha.unsqueeze(1) * h[src])
            mean = torch.zeros_like(h).scatter_add_(0, dst.unsqueeze(1).expand(-1, h.shape[1]), h[src])
            return out + mean / deg.unsqueeze(1)

    layers = nn.ModuleList([GraphConv(3, 8), GraphConv(8, 2)])
    opt = torch.optim.Adam(layers.parameters(), lr=0.02)
    for step in range(3):
        h = feats
        for i, layer in enumerate(layers):
            h = layer(h)
            if i == 0:
                h = nn.functional.elu(h)
        loss = nn.functional.cross_entropy(h, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, h.grad_fn.name())
    show(layers[0].att.grad, layers[1].lin.weight.grad, deg)
    show(torch.zeros(3).scatter_reduce(0, torch.tensor([0, 0, 2]), torch.tensor([1.0, 3.0, 2.0]), "mean"),
         torch.zeros(3, dtype=torch.long).index_add(0, torch.tensor([1, 1]), torch.tensor([2, 5]), alpha=2))
    show_outcome(show, lambda: torch.zeros(3).index_add_(0, torch.tensor([0, 1]), torch.ones(3)))
    show_outcome(show, lambda: torch.zeros(3).scatter_reduce(0, torch.tensor([0]), torch.ones(1), reduce="max"))


def _printing(lib, show):
    """What ``print`` shows for the tensors, modules, optimizers and results a notebook prints."""
    torch, nn = lib, lib.nn
    torch.manual_seed(35)
    w = torch.randn(3, 2, requires_grad=True)
    y = (w * 2).sum(0)
    show(str(w), repr(y), str(y.sum()), repr(y.mean().item()), repr(w.grad_fn), y.grad_fn.next_functions)
    d = y.detach()  # (float() of a tensor that requires grad warns once per process: a transcript can't depend on it)
    show(f"{y.sum():.4f}", f"{y[0]}", "%.2f" % d[1], f"{torch.tensor(12345.678):>10.3e}")  # noqa: UP031
    show(torch.arange(2000.0), torch.linspace(0, 1e-5, 5), torch.tensor([1e10, 1.0, -3e-8]))
    show(torch.tensor([[1, -2], [300000, 4]]), torch.tensor([True, False]), torch.tensor([1.5, float("nan"),
                                                                                          float("inf")]))
    show(repr(torch.zeros(2, 0, 3)), repr(torch.tensor(3)), repr(torch.tensor(2.5, dtype=torch.float64)),
         repr(torch.ones(2, dtype=torch.float16)), repr(torch.tensor([1 + 2j, -0.5j])),
         repr(torch.tensor([1, 2], dtype=torch.uint8)), repr(torch.randn(2, 2, 2, dtype=torch.float64)))
    model = nn.Sequential(nn.Linear(2, 3), nn.ModuleDict({"act": nn.GELU(), "drop": nn.Dropout(0.1)}),
                          nn.ModuleList([nn.Conv1d(1, 2, 3, stride=2, dilation=2), nn.LSTM(3, 4, 2)]),
                          nn.Embedding(10, 3, padding_idx=0), nn.MultiheadAttention(4, 2, batch_first=True),
                          nn.TransformerEncoderLayer(4, 2, 8), nn.LayerNorm(4, elementwise_affine=False),
                          nn.Identity(), nn.Softmax(dim=-1), nn.Upsample(scale_factor=2, mode="nearest"))
    show(model)
    show(model[0].weight, model[0].bias.data, list(model.state_dict())[:6])
    show(nn.Parameter(torch.ones(2)), nn.Parameter(torch.ones(2), requires_grad=False),
         nn.ParameterList([nn.Parameter(torch.zeros(2, 3))]), nn.Buffer(torch.ones(1)))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    show(opt)
    show(torch.optim.SGD([{"params": model[0].parameters()}, {"params": model[3].parameters(), "lr": 0.5}],
                         lr=0.1, momentum=0.9))
    show(torch.max(w, dim=1), torch.sort(torch.tensor([3, 1, 2])), torch.topk(torch.arange(5.0), 2))
    show(w.shape, w.size(1), w.dtype, w.device, w.layout, torch.get_default_dtype(), w.is_leaf, y.is_leaf)
    show(torch.finfo(torch.float32), torch.iinfo(torch.int8), w.stride(), torch.Size([2, 3]) + (4,))
    torch.set_printoptions(precision=2, linewidth=40)
    try:
        show(torch.randn(3, 6) * 100, torch.tensor([0.123456]))
    finally:
        torch.set_printoptions(profile="default")
    show(torch.tensor([0.123456789]))


def _distributions_and_vi(lib, show):
    """Variational inference with torch.distributions: a reparameterised Normal posterior, analytic and Monte
    Carlo KL, Independent, a mixture, a transformed (flow-like) distribution, Categorical policy terms."""
    torch, D = lib, lib.distributions
    torch.manual_seed(36)
    loc = torch.zeros(3, requires_grad=True)
    log_scale = torch.full((3,), -1.0, requires_grad=True)
    prior = D.Normal(torch.zeros(3), torch.ones(3))
    opt = torch.optim.Adam([loc, log_scale], lr=0.1)
    data = torch.randn(20) * 0.5 + 1.0
    for step in range(3):
        q = D.Normal(loc, log_scale.exp())
        z = q.rsample((4,))
        log_lik = D.Normal(z.mean(-1, keepdim=True), 0.5).log_prob(data).sum(-1).mean()
        kl = D.kl_divergence(q, prior).sum()
        mc_kl = (q.log_prob(z) - prior.log_prob(z)).sum(-1).mean()
        loss = kl - log_lik
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, kl, mc_kl, z.grad_fn.name())
    show(loc.grad, log_scale.grad, q, prior.batch_shape, prior.event_shape)
    diag = D.Independent(D.Normal(loc.detach(), log_scale.detach().exp()), 1)
    show(diag, diag.batch_shape, diag.event_shape, diag.log_prob(torch.zeros(2, 3)), diag.entropy())
    mix = D.MixtureSameFamily(D.Categorical(logits=torch.tensor([0.0, 1.0])),
                              D.Normal(torch.tensor([-1.0, 2.0]), torch.tensor([0.5, 1.0])))
    show(mix.sample((5,)), mix.log_prob(torch.tensor([0.0, 2.0])), mix.mean, mix.variance)
    flow = D.TransformedDistribution(D.Normal(0.0, 1.0), [D.transforms.AffineTransform(1.0, 2.0),
                                                           D.transforms.ExpTransform()])
    x = flow.sample((3,))
    show(x, flow.log_prob(x), D.LogNormal(1.0, 2.0).log_prob(x))
    logits = torch.randn(4, 3, requires_grad=True)
    pi = D.Categorical(logits=logits)
    actions = pi.sample()
    returns = torch.tensor([1.0, -0.5, 2.0, 0.0])
    policy_loss = -(pi.log_prob(actions) * returns).mean() - 0.01 * pi.entropy().mean()
    policy_loss.backward()
    show(actions, policy_loss, logits.grad, pi.probs.sum(-1))
    show(D.Bernoulli(logits=torch.tensor([0.0, 2.0])).sample((3,)), D.Beta(2.0, 3.0).rsample((2,)),
         D.Gamma(torch.tensor([2.0]), torch.tensor([1.0])).rsample(), D.Dirichlet(torch.ones(3)).sample())
    mvn = D.MultivariateNormal(torch.zeros(2), scale_tril=torch.tensor([[1.0, 0.0], [0.5, 2.0]]))
    show(mvn.rsample((2,)), mvn.log_prob(torch.ones(2)), mvn.covariance_matrix, D.kl_divergence(
        mvn, D.MultivariateNormal(torch.ones(2), torch.eye(2))))
    show_outcome(show, lambda: D.Normal(torch.zeros(2), -torch.ones(2)))
    show_outcome(show, lambda: D.Categorical(probs=torch.tensor([0.5, 0.5])).log_prob(torch.tensor(2)))
    show_outcome(show, lambda: D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(torch.ones(2))))


def _spatial_ops(lib, show):
    """A spatial transformer (affine_grid + grid_sample), interpolation, pixel shuffle, unfold/fold patches,
    padding modes and max unpooling, with gradients."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(37)
    img = torch.randn(2, 3, 6, 6, requires_grad=True)
    loc = nn.Sequential(nn.Flatten(), nn.Linear(3 * 6 * 6, 6))
    with torch.no_grad():
        loc[1].weight.mul_(0.01)
        loc[1].bias.copy_(torch.tensor([1.0, 0, 0, 0, 1, 0]))
    theta = loc(img).view(-1, 2, 3)
    grid = F.affine_grid(theta, img.size(), align_corners=False)
    warped = F.grid_sample(img, grid, align_corners=False, padding_mode="border")
    up = F.interpolate(warped, scale_factor=2, mode="bilinear", align_corners=False)
    near = F.interpolate(img, size=(4, 5), mode="nearest")
    bicubic = F.interpolate(img, size=(3, 3), mode="bicubic", align_corners=True)
    shuffled = F.pixel_shuffle(up[:, :, :, :8].reshape(2, 12, 6, 4)[:, :8], 2)
    patches = F.unfold(img, kernel_size=3, stride=3)
    folded = F.fold(patches, output_size=(6, 6), kernel_size=3, stride=3)
    padded = [F.pad(img, (1, 2, 0, 1), mode=m) for m in ("reflect", "replicate", "circular", "constant")]
    pooled, idx = F.max_pool2d(img, 2, return_indices=True)
    unpooled = F.max_unpool2d(pooled, idx, 2)
    total = (up.sum() + near.pow(2).sum() + bicubic.sum() + shuffled.sum() + folded.sum()
             + sum(p.sum() for p in padded) + unpooled.sum() + F.adaptive_max_pool2d(img, (2, 3)).sum()
             + F.avg_pool2d(img, 3, stride=2, padding=1, count_include_pad=False).sum())
    total.backward()
    show(theta, warped[0, 0, :2], up.shape, near[1, 2], bicubic[0, 0], shuffled.shape, patches.shape)
    show(torch.equal(folded, img), padded[0][0, 0, :2], padded[2][1, 1, -1], idx[0, 0], total)
    show(img.grad[0, 0], loc[1].weight.grad[:, :4], warped.grad_fn.name(), up.grad_fn.name())
    show(F.interpolate(torch.arange(4.0).view(1, 1, 4), scale_factor=1.5, mode="linear"),
         F.interpolate(torch.arange(4.0).view(1, 1, 2, 2), scale_factor=2, mode="nearest-exact"))
    show_outcome(show, lambda: F.pad(img, (4, 4), mode="reflect"))
    show_outcome(show, lambda: F.interpolate(img, scale_factor=2, mode="linear"))


def _embedding_bag_and_ctc(lib, show):
    """A bag-of-words classifier with EmbeddingBag (offsets, per-sample weights) and a bidirectional GRU trained
    with CTC loss on log-probabilities, with greedy CTC decoding."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(38)
    text = torch.tensor([1, 4, 2, 7, 3, 3, 9, 5])
    offsets = torch.tensor([0, 3, 5])
    bag = nn.EmbeddingBag(10, 4, mode="sum")
    weights = torch.rand(8)
    clf = nn.Linear(4, 2)
    out = clf(bag(text, offsets, per_sample_weights=weights))
    loss = F.cross_entropy(out, torch.tensor([0, 1, 1]))
    loss.backward()
    show(out, bag.weight.grad[3], nn.EmbeddingBag(10, 4, mode="max")(text.view(2, 4)))
    show(bag, nn.EmbeddingBag.from_pretrained(torch.eye(3), mode="mean")(torch.tensor([[0, 2]])))
    emb = nn.Embedding(6, 3, max_norm=1.0)
    show(emb(torch.tensor([1, 1, 4])).norm(dim=1), emb.weight.norm(dim=1))
    T, N, C = 12, 2, 5
    rnn = nn.GRU(3, 4, bidirectional=True)
    head = nn.Linear(8, C)
    feats = torch.randn(T, N, 3)
    targets = torch.tensor([[1, 2, 2, 3], [4, 1, 0, 0]])
    target_lengths = torch.tensor([4, 2])
    input_lengths = torch.tensor([12, 9])
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    opt = torch.optim.Adadelta(list(rnn.parameters()) + list(head.parameters()), lr=1.0)
    for step in range(3):
        log_probs = head(rnn(feats)[0]).log_softmax(2)
        loss = ctc(log_probs, targets, input_lengths, target_lengths)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, head.bias.grad)
    best = log_probs.argmax(-1).T
    decoded = [[c for i, c in enumerate(seq.tolist()) if c != 0 and (i == 0 or c != seq[i - 1].item())]
               for seq in best]
    show(best, decoded, F.ctc_loss(log_probs, targets, input_lengths, target_lengths, reduction="none"))
    show_outcome(show, lambda: F.ctc_loss(log_probs, targets, input_lengths, torch.tensor([4, 13])))


class _Pairs:
    """A map-style dataset of dicts (module level, so workers could pickle it)."""

    def __init__(self, lib, n):
        self.lib, self.n = lib, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x = self.lib.full((2,), float(i))
        return {"x": x, "y": i % 3, "name": f"item{i}", "w": 0.5 * i, "np": x.numpy() * 2}


def _data_loading_details(lib, show):
    """Custom datasets of dicts collated by default_collate, ConcatDataset/Subset/StackDataset, BatchSampler,
    worker processes with worker_init_fn and get_worker_info, an IterableDataset split across workers."""
    torch = lib
    data = torch.utils.data
    torch.manual_seed(39)
    ds = _Pairs(torch, 7)
    batch = next(iter(data.DataLoader(ds, batch_size=3)))
    show(sorted(batch), batch["x"], batch["y"], batch["name"], batch["w"], batch["np"])
    both = data.ConcatDataset([ds, data.Subset(ds, [6, 5])])
    show(len(both), both[8]["y"], both.cumulative_sizes, [b["y"] for b in data.DataLoader(both, batch_size=4)])
    stacked = data.StackDataset(data.TensorDataset(torch.arange(3.0)), torch.arange(3) * 10)
    show(stacked[1], len(stacked))
    sampler = data.BatchSampler(data.SequentialSampler(range(7)), batch_size=3, drop_last=False)
    show(list(sampler), len(sampler), len(data.DataLoader(ds, batch_size=3, drop_last=True)))
    loader = data.DataLoader(ds, batch_sampler=data.BatchSampler(data.RandomSampler(ds), 2, True))
    show([b["y"] for b in loader])
    show(data.default_collate([(1, 2.0), (3, 4.0)]), data.default_collate([[torch.ones(1), "a"],
                                                                             [torch.zeros(1), "b"]]))
    show_outcome(show, lambda: next(iter(data.DataLoader([torch.ones(2), torch.ones(3)], batch_size=2))))
    show_outcome(show, lambda: data.DataLoader(ds, batch_size=2, shuffle=True, sampler=data.SequentialSampler(ds)))
    show(list(data.DataLoader(range(5), batch_size=None)), torch.utils.data.get_worker_info())
    x, y = torch.randn(10, 3), torch.arange(10)
    loader = data.DataLoader(data.TensorDataset(x, y), batch_size=4, shuffle=True,
                             generator=torch.Generator().manual_seed(40))
    show([yb for _, yb in loader], len(loader), len(loader.dataset), loader.batch_size)
    train, val, test = data.random_split(range(10), [5, 3, 2], generator=torch.Generator().manual_seed(41))
    show(list(train), list(val), list(test))
    show_outcome(show, lambda: data.random_split(range(10), [5, 3]))


def _module_api(lib, show):
    """The nn.Module API notebooks lean on: submodule lookup, named_* with prefixes, apply-based init, a custom
    extra_repr, assignment errors, state_dict with keep_vars and its hooks, and load_state_dict(assign=True)."""
    torch, nn = lib, lib.nn
    torch.manual_seed(42)

    class Scale(nn.Module):
        def __init__(self, n, init=1.0):
            super().__init__()
            self.alpha = nn.Parameter(torch.full((n,), init))
            self.n = n

        def forward(self, x):
            return x * self.alpha

        def extra_repr(self):
            return f"n={self.n}, init={self.alpha[0].item()}"

    model = nn.Sequential()
    model.add_module("fc1", nn.Linear(3, 4))
    model.register_module("scale", Scale(4, 0.5))
    model.append(nn.ReLU())
    model.extend([nn.Linear(4, 2)])
    show(model, model.get_submodule("scale"), model.get_parameter("fc1.bias"), len(model), model[-1])
    show([n for n, _ in model.named_parameters(prefix="net")], [n for n, _ in model.named_modules()],
         [type(m).__name__ for m in model.children()], model[1:3])

    def init(m):
        if isinstance(m, nn.Linear):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            nn.init.constant_(m.bias, 0.01)

    model.apply(init)
    show(model.fc1.weight, nn.init.calculate_gain("leaky_relu", 0.2), nn.init.calculate_gain("tanh"))
    show_outcome(show, lambda: setattr(model.fc1, "weight", torch.zeros(4, 3)))
    show_outcome(show, lambda: model.get_submodule("fc9"))
    show_outcome(show, lambda: model.register_buffer("fc1", torch.zeros(1)))
    show_outcome(show, lambda: model.add_module("a.b", nn.ReLU()))
    show_outcome(show, lambda: nn.Linear(3, 4)(torch.ones(2, 3, dtype=torch.long)))
    show_outcome(show, lambda: nn.Linear(3, 4)(torch.ones(2, 5)))
    model.fc1.weight = nn.Parameter(torch.ones(4, 3))
    show(model.state_dict(keep_vars=True)["fc1.weight"], model.state_dict()["fc1.weight"].requires_grad)
    calls = []
    model.register_state_dict_post_hook(lambda m, sd, prefix, local_metadata: calls.append(("post", prefix)))
    model.register_load_state_dict_post_hook(lambda m, keys: calls.append(("load", keys.missing_keys)))
    sd = model.state_dict()
    show(calls, list(sd), sd._metadata[""], sd._metadata["scale"])
    skeleton = nn.Sequential(nn.Linear(3, 4))
    ones = torch.ones(4, 3)
    show(skeleton.load_state_dict({"0.weight": ones, "0.bias": torch.zeros(4)}, assign=True),
         type(skeleton[0].weight).__name__, skeleton[0].weight.requires_grad, skeleton(torch.ones(1, 3)))
    ones.add_(1)
    show(skeleton[0].weight)
    model.requires_grad_(False)
    show([p.requires_grad for p in model.parameters()], model.training, model.eval().training)
    model.zero_grad()
    del model.scale
    show(model, hasattr(model, "scale"))


def _optimizer_hooks_and_warnings(lib, show):
    """Optimizer step hooks, schedulers stepped in the wrong order, deprecated arguments, grad-norm utilities, and
    numpy/tensor construction warnings users see."""
    torch, nn = lib, lib.nn
    torch.manual_seed(43)
    model = nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    calls = []
    opt.register_step_pre_hook(lambda o, args, kwargs: calls.append("pre"))
    h = opt.register_step_post_hook(lambda o, args, kwargs: calls.append("post"))
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    sched.step()  # before opt.step(): torch warns
    loss = model(torch.randn(4, 3)).pow(2).sum()
    loss.backward()
    opt.step()
    h.remove()
    opt.step()
    show(calls, opt.param_groups[0]["lr"], sched.last_epoch)
    sched.step(5)
    show(sched.get_last_lr())
    grads = [p.grad for p in model.parameters()]
    total = nn.utils.get_total_norm(grads, norm_type=2.0)
    nn.utils.clip_grads_with_norm_(model.parameters(), max_norm=0.1, total_norm=total)
    show(total, model.weight.grad, nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type="inf"))
    model.weight.grad[0, 0] = float("nan")
    show_outcome(show, lambda: nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True))
    show(nn.utils.clip_grad_norm_(model.parameters(), 1.0), model.weight.grad)
    import numpy as np

    arrays = [np.ones(2, dtype=np.float32), np.zeros(2, dtype=np.float32)]
    t = torch.tensor(arrays)
    show(t, torch.tensor(t), torch.as_tensor(np.arange(3)), torch.from_numpy(np.arange(3.0)).dtype)
    w = torch.ones(2, requires_grad=True)
    show_outcome(show, lambda: w.numpy())
    show_outcome(show, lambda: np.asarray(w * 2))
    show(np.asarray(w.detach()).dtype, torch.tensor(np.float64(2.5)).dtype, torch.tensor([np.int32(1)]).dtype)
    show_outcome(show, lambda: torch.optim.Adam([w], lr=-1))
    show_outcome(show, lambda: torch.optim.SGD(w, lr=0.1))
    show_outcome(show, lambda: torch.optim.Adam([]))
    show(torch.optim.Adam([w], lr=torch.tensor(0.01)).param_groups[0]["lr"])


def _anomaly_and_grad_modes(lib, show):
    """Anomaly detection finding a NaN gradient, grad-mode decorators and context managers, backward with explicit
    gradients, and the errors a double backward and an in-place change give."""
    torch = lib
    torch.manual_seed(44)

    @torch.no_grad()
    def evaluate(x):
        return x * 2

    @torch.enable_grad()
    def force(x):
        return x * 2

    x = torch.randn(3, requires_grad=True)
    with torch.no_grad():
        show(evaluate(x).requires_grad, force(x).requires_grad, torch.is_grad_enabled())
    with torch.set_grad_enabled(False):
        show((x * 2).requires_grad)
    with torch.inference_mode():
        inf = x * 2
    show(inf.requires_grad, inf.is_inference(), torch.is_inference_mode_enabled())
    show_outcome(show, lambda: inf.requires_grad_())
    show_outcome(show, lambda: (inf * x).sum().backward())
    y = x * torch.tensor([1.0, 0.0, 2.0])
    z = y / y
    with torch.autograd.detect_anomaly(check_nan=True):
        show_outcome(show, lambda: torch.autograd.grad(z.sum(), x, retain_graph=True))
    show(torch.autograd.grad(z.sum(), x, retain_graph=True), torch.is_anomaly_enabled())
    out = x.exp()
    out.backward(torch.tensor([1.0, 0.5, 0.0]), retain_graph=True)
    torch.autograd.backward([out, x.sin()], [torch.ones(3), torch.ones(3)])
    show(x.grad)
    show_outcome(show, lambda: out.sum().backward())
    a = torch.randn(3, requires_grad=True)
    b = a.sigmoid()
    c = b * 2
    b.mul_(3)
    show_outcome(show, lambda: c.sum().backward())
    show_outcome(show, lambda: torch.autograd.grad(a.sum(), [a, torch.ones(1, requires_grad=True)]))
    show_outcome(show, lambda: x.sum().backward(torch.ones(2)))
    show_outcome(show, lambda: (x * 2).backward())
    show_outcome(show, lambda: a.detach().sum().backward())


def _kmeans_pca_and_least_squares(lib, show):
    """Classical ML in tensors: k-means with cdist/argmin/bincount, PCA by SVD and by eigh of the covariance,
    least squares and ridge regression, quantiles and ranks."""
    torch = lib
    torch.manual_seed(45)
    centers = torch.tensor([[0.0, 0.0], [3.0, 3.0], [0.0, 4.0]])
    points = (centers.repeat_interleave(5, dim=0) + 0.4 * torch.randn(15, 2)).double()
    k = 3
    cent = points[torch.randperm(15)[:k]].clone()
    for it in range(4):
        dist = torch.cdist(points, cent)
        assign = dist.argmin(dim=1)
        counts = torch.bincount(assign, minlength=k)
        sums = torch.zeros(k, 2, dtype=points.dtype).index_add_(0, assign, points)
        cent = torch.where(counts[:, None] > 0, sums / counts.clamp(min=1)[:, None], cent)
        show(it, assign, counts, dist.min(1).values.pow(2).sum())
    show(torch.unique(assign, return_counts=True), torch.mode(assign), assign.unique_consecutive())
    X = points - points.mean(0)
    U, S, Vh = torch.linalg.svd(X, full_matrices=False)
    evals, evecs = torch.linalg.eigh(torch.cov(X.T))
    show(S, evals.flip(0), (S ** 2 / (len(X) - 1)), (Vh[0] * evecs[:, -1]).sum().abs(), torch.corrcoef(X.T))
    A = torch.cat([points, torch.ones(15, 1, dtype=points.dtype)], dim=1)
    y = points[:, :1] * 2 - points[:, 1:] + 0.1
    sol = torch.linalg.lstsq(A, y)
    ridge = torch.linalg.solve(A.T @ A + 0.1 * torch.eye(3, dtype=A.dtype), A.T @ y)
    show(sol.solution, sol.rank, ridge, torch.linalg.pinv(A) @ y, torch.linalg.matrix_rank(A))
    show(torch.quantile(points[:, 0], torch.tensor([0.1, 0.5, 0.9], dtype=points.dtype)),
         points[:, 1].median(), points.kthvalue(3, dim=0), torch.nanmedian(torch.tensor([1.0, float("nan"), 3.0])))
    show(torch.histc(points[:, 0].float(), bins=4, min=-1, max=4), torch.bucketize(torch.tensor([0.5, 2.0]),
         torch.tensor([0.0, 1.0, 2.0])), torch.searchsorted(torch.tensor([1, 3, 5]), torch.tensor([3, 6]), right=True))
    show(points.argsort(dim=0)[:4], points[:, 0].topk(3, largest=False), torch.cummax(points[:5, 0], 0))
    show_outcome(show, lambda: torch.quantile(points[:, 0], 1.5))
    show_outcome(show, lambda: torch.linalg.solve(torch.zeros(2, 2), torch.ones(2)))
    show_outcome(show, lambda: torch.cdist(points, cent.float()))


def _signal_processing(lib, show):
    """Spectral features: stft/istft with a Hann window, a learnable filter applied in the frequency domain and
    trained by gradient descent, complex autograd (abs, angle), fftshift and a spectrogram."""
    torch = lib
    torch.manual_seed(46)
    t = torch.arange(64) / 64
    signal = torch.sin(2 * math.pi * 5 * t) + 0.5 * torch.sin(2 * math.pi * 12 * t) + 0.1 * torch.randn(64)
    window = torch.hann_window(16)
    spec = torch.stft(signal, n_fft=16, hop_length=4, window=window, return_complex=True)
    back = torch.istft(spec, n_fft=16, hop_length=4, window=window, length=64)
    show(spec.shape, spec.dtype, spec[:3, :2], (back - signal).abs().max() < 1e-5)
    power = spec.abs().pow(2)
    show(power[:, 0], torch.angle(spec[1:3, 1]), 10 * torch.log10(power + 1e-10)[0, :3])
    gain = torch.ones(33, requires_grad=True)
    target = torch.sin(2 * math.pi * 5 * t)
    opt = torch.optim.Adam([gain], lr=0.05)
    for step in range(3):
        filtered = torch.fft.irfft(torch.fft.rfft(signal) * gain, n=64)
        loss = torch.nn.functional.mse_loss(filtered, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, gain.grad[3:7], filtered.grad_fn.name())
    z = torch.randn(4, dtype=torch.complex64, requires_grad=True)
    (z.abs().sum() + z.angle().sum() + (z * z.conj()).real.sum()).backward()
    show(z.grad, torch.view_as_real(z.detach()), torch.polar(torch.ones(2), torch.tensor([0.0, math.pi / 2])))
    freqs = torch.fft.fftfreq(8, d=0.5)
    show(freqs, torch.fft.fftshift(freqs), torch.fft.fft2(torch.eye(3)), torch.fft.rfftfreq(6))
    show_outcome(show, lambda: torch.stft(signal, n_fft=16))
    show_outcome(show, lambda: torch.fft.irfft(torch.zeros(3), n=0))


def _indexing_and_promotion(lib, show):
    """The tensor idioms of data-wrangling cells: boolean masks, advanced indexing with assignment and
    accumulation, type promotion with integers and booleans, integer division, and the errors they give."""
    torch = lib
    torch.manual_seed(47)
    x = torch.randint(-5, 6, (4, 5))
    show(x[x > 0], x[x.sum(1) > 0], x[[0, 2], [1, 3]], x[:, [True, False, True, False, True]], x[..., -1])
    show(x[torch.tensor([[0, 1], [2, 3]])].shape, x[None, 1:3, ::2].shape, x.nonzero()[:3], torch.nonzero(
        x == 0, as_tuple=True))
    y = x.clone().float()
    y[y < 0] = 0
    y[:, 0] += 10
    y[torch.tensor([0, 0, 1]), torch.tensor([1, 1, 2])] = torch.tensor([7.0, 8.0, 9.0])
    y.index_put_((torch.tensor([3, 3]), torch.tensor([4, 4])), torch.tensor([1.0, 2.0]), accumulate=True)
    show(y, y.masked_select(y > 5), y.take(torch.tensor([0, 19])), y.masked_scatter(y == 0, -torch.ones(20)))
    show(x / 2, x // 3, x % 3, torch.div(x, 3, rounding_mode="trunc"), x.float() // 3, -7 // torch.tensor(2))
    show(x * 1.5, x + True, (x > 0) + (x < 0), torch.tensor([1, 2], dtype=torch.uint8) - 3, x.sum().dtype,
         torch.tensor([1, 2], dtype=torch.int8) * 100, (x > 0).sum(), (x > 0).float().mean(), x.double().mean())
    show(torch.tensor([3]) ** 2, 2 ** torch.tensor([3, -1]).float(), torch.tensor(5) / torch.tensor(2),
         torch.tensor([True]) & torch.tensor([False]), torch.arange(5)[torch.tensor(2)])
    show_outcome(show, lambda: (x > 0) - (x < 0))
    show_outcome(show, lambda: -(x > 0))
    show_outcome(show, lambda: x[torch.tensor([0.0, 1.0])])
    show_outcome(show, lambda: x[[True, False]])
    show_outcome(show, lambda: x[4])
    show_outcome(show, lambda: x.view(-1, 3))
    show_outcome(show, lambda: x.t().view(-1))
    show_outcome(show, lambda: torch.tensor([1, 2]) ** -1)
    show_outcome(show, lambda: x.float().index_put_((torch.tensor([0]),), torch.tensor([1.0, 2.0])))
    show_outcome(show, lambda: torch.tensor([1, 2]).mean())
    z = torch.zeros(3, dtype=torch.long)
    z += 2.7
    show(z, torch.tensor([1.5]).long(), torch.tensor([-1.5, 2.5, 0.5]).round(), torch.tensor([300]).to(torch.uint8))


def _attention_variants(lib, show):
    """nn.MultiheadAttention as people configure it (per-head weights, float and boolean masks, bias_kv,
    zero attention, other key/value sizes) and a full nn.Transformer trained one step with its masks."""
    torch, nn = lib, lib.nn
    torch.manual_seed(48)
    q, kv = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    mha = nn.MultiheadAttention(8, 2, batch_first=True, dropout=0.0)
    out, w = mha(q, kv, kv, need_weights=True, average_attn_weights=False)
    show(out.shape, w.shape, w[0, 1], out.grad_fn.name())
    padding = torch.tensor([[False, False, False, True, True], [False] * 5])
    causal = torch.full((3, 5), float("-inf")).triu(3)
    out2, w2 = mha(q, kv, kv, key_padding_mask=padding, attn_mask=causal)
    show(w2[0], out2[1, 0])
    odd = nn.MultiheadAttention(8, 4, kdim=6, vdim=3, add_bias_kv=True, add_zero_attn=True)
    out3, w3 = odd(q.transpose(0, 1), torch.randn(5, 2, 6), torch.randn(5, 2, 3))
    show(out3.shape, w3.shape, sorted(n for n, _ in odd.named_parameters()))
    (out.sum() + out2.sum() + out3.sum()).backward()
    show(mha.in_proj_weight.grad[:2, :4], odd.bias_k.grad, odd.k_proj_weight.grad.shape)
    show_outcome(show, lambda: mha(q, kv, kv, attn_mask=torch.zeros(4, 4)))
    show_outcome(show, lambda: nn.MultiheadAttention(8, 3))
    show_outcome(show, lambda: mha(q, kv, kv, key_padding_mask=padding.float(), attn_mask=causal.isinf()))
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16,
                           dropout=0.1, batch_first=True)
    src, tgt = torch.randn(2, 5, 8), torch.randn(2, 4, 8)
    tgt_mask = model.generate_square_subsequent_mask(4)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(2):
        y = model(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=padding, memory_key_padding_mask=padding,
                  tgt_is_causal=True)
        loss = y.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, loss, y.shape)
    show(tgt_mask, model.decoder.layers[0].multihead_attn.out_proj.weight.grad[0, :4], len(list(model.parameters())))
    model.eval()
    with torch.no_grad():
        show(model(src, tgt, tgt_mask=tgt_mask)[0, 0])


def _recurrent_variants(lib, show):
    """Recurrent layers beyond the defaults: a ReLU RNN, an LSTM with proj_size and given initial states, cells
    unrolled by hand with truncated backpropagation (detach), and the warnings and errors they give."""
    torch, nn = lib, lib.nn
    torch.manual_seed(49)
    rnn = nn.RNN(3, 5, num_layers=2, nonlinearity="relu", dropout=0.0)
    lstm = nn.LSTM(3, 6, proj_size=2, batch_first=True, num_layers=2)
    x = torch.randn(4, 7, 3)
    h0 = torch.zeros(2, 4, 2)
    c0 = torch.randn(2, 4, 6)
    out, (h, c) = lstm(x, (h0, c0))
    r_out, r_h = rnn(x.transpose(0, 1))
    show(out.shape, h.shape, c.shape, r_out.shape, out.grad_fn.name(), r_h[1, 0])
    show(sorted(n for n, _ in lstm.named_parameters()), lstm.weight_hr_l0.shape, lstm, rnn)
    (out.sum() + r_out.sum()).backward()
    show(lstm.weight_hr_l1.grad, rnn.bias_hh_l1.grad)
    cell = nn.LSTMCell(3, 4)
    head = nn.Linear(4, 1)
    opt = torch.optim.Adagrad(list(cell.parameters()) + list(head.parameters()), lr=0.1, lr_decay=0.01)
    state = None
    seq = torch.randn(12, 2, 3)
    for chunk in seq.split(4):
        if state is not None:
            state = tuple(s.detach() for s in state)
        loss = 0
        for xt in chunk:
            state = cell(xt, state)
            loss = loss + head(state[0]).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(loss, state[0].requires_grad, state[1].grad_fn.name())
    show(nn.GRUCell(3, 2)(torch.randn(3)), nn.RNNCell(3, 2, nonlinearity="tanh")(torch.randn(2, 3)).shape)
    show(nn.GRU(3, 2, num_layers=1, dropout=0.3).dropout)
    show_outcome(show, lambda: lstm(x, (torch.zeros(2, 4, 6), c0)))
    show_outcome(show, lambda: rnn(torch.randn(7, 4, 2)))
    show_outcome(show, lambda: cell(torch.randn(2, 3), (torch.zeros(3, 4), torch.zeros(3, 4))))
    show_outcome(show, lambda: nn.utils.rnn.pack_padded_sequence(x, torch.tensor([3, 7, 2, 1]), batch_first=True))
    show_outcome(show, lambda: nn.LSTM(3, 4, proj_size=4))


def _meta_learning_and_per_sample_grads(lib, show):
    """MAML's inner loop (second-order, through functional_call), per-sample gradients collected with module hooks
    (as differential-privacy libraries do) and clipped per sample, and a custom Function that works in place."""
    torch, nn = lib, lib.nn
    from_utils = nn.utils.stateless
    torch.manual_seed(50)
    model = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    tasks = [(torch.rand(1) * 2 + 0.5, torch.rand(1) * math.pi) for _ in range(2)]
    for it in range(2):
        meta_loss = 0
        for amp, phase in tasks:
            xs, xq = torch.rand(5, 1) * 10 - 5, torch.rand(5, 1) * 10 - 5
            ys, yq = amp * torch.sin(xs + phase), amp * torch.sin(xq + phase)
            params = dict(model.named_parameters())
            for _ in range(2):
                inner = nn.functional.mse_loss(from_utils.functional_call(model, params, (xs,)), ys)
                grads = torch.autograd.grad(inner, list(params.values()), create_graph=True)
                params = {n: p - 0.01 * g for (n, p), g in zip(params.items(), grads)}
            meta_loss = meta_loss + nn.functional.mse_loss(from_utils.functional_call(model, params, xq), yq)
        meta_opt.zero_grad()
        meta_loss.backward()
        meta_opt.step()
        show(it, meta_loss, model[0].weight.grad[:3, 0], params["0.weight"].grad_fn.name())
    layer = nn.Linear(3, 2)
    acts, per_sample = {}, {}
    layer.register_forward_hook(lambda m, inp, out: acts.__setitem__("x", inp[0].detach()))
    layer.register_full_backward_hook(
        lambda m, gin, gout: per_sample.__setitem__("w", torch.einsum("bo,bi->boi", gout[0], acts["x"])))
    x, y = torch.randn(4, 3), torch.randn(4, 2)
    nn.functional.mse_loss(layer(x), y, reduction="sum").backward()
    g = per_sample["w"]
    norms = g.flatten(1).norm(dim=1)
    clipped = g * (1.0 / norms.clamp(min=1.0)).view(-1, 1, 1)
    show(g.sum(0) - layer.weight.grad, norms, clipped.sum(0))

    class ScaleInPlace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.mark_dirty(x)
            ctx.factor = factor
            return x.mul_(factor)

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.factor, None

    class Split(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x.clone(), x.clone() * 2

        @staticmethod
        def backward(ctx, g1, g2):
            show("Split.backward", g1 is None, g2 is None, ctx.needs_input_grad)
            total = 0
            if g1 is not None:
                total = total + g1
            if g2 is not None:
                total = total + 2 * g2
            return total

    a = torch.randn(3, requires_grad=True)
    b = a * 1
    c = ScaleInPlace.apply(b, 3.0)
    show(c is b, b.grad_fn.name(), b._version)
    first, _ = Split.apply(c)
    first.sum().backward()
    show(a.grad)
    show_outcome(show, lambda: ScaleInPlace.apply(a, 2.0))
    show_outcome(show, lambda: ScaleInPlace.apply(a.detach(), 2.0).requires_grad)


def _python_and_numpy_interop(lib, show):
    """Tensors meeting Python and NumPy as notebook cells have them meet: builtins, truth values, NumPy scalars
    and arrays on either side of an operator, shared memory, and torch.testing's messages."""
    import numpy as np

    torch = lib
    torch.manual_seed(51)
    t = torch.tensor([3.0, 1.0, 2.0])
    show(sum(t), max(t), sorted(t), list(t), [float(v) for v in t], int(t[0]), t[1].item(), len(t), 2.0 in t)
    show(np.float32(2) * t, t * np.float64(0.5), np.int64(3) + torch.tensor([1, 2]), t + np.array([1.0, 2.0, 3.0]))
    show_outcome(show, lambda: np.array([1.0, 2.0, 3.0]) + t)
    show(np.sum(t.numpy()), np.mean(t.numpy()), t.tolist())
    a = np.arange(4.0)
    shared = torch.from_numpy(a)
    a[0] = 10
    view = shared.numpy()
    shared.add_(1)
    show(shared, view, torch.as_tensor(a) is not None, torch.tensor(a).data_ptr() != shared.data_ptr())
    readonly = np.frombuffer(bytearray(np.arange(3, dtype=np.float32).tobytes()), dtype=np.float32)
    readonly.flags.writeable = False
    show(torch.from_numpy(readonly))
    show_outcome(show, lambda: bool(t))
    show_outcome(show, lambda: float(t))
    show_outcome(show, lambda: iter(torch.tensor(1.0)))
    show_outcome(show, lambda: len(torch.tensor(1.0)))
    show_outcome(show, lambda: torch.tensor([torch.ones(2), torch.zeros(2)]))
    show_outcome(show, lambda: torch.stack([]))
    show_outcome(show, lambda: torch.from_numpy(np.array(["a", "b"])))
    show_outcome(show, lambda: torch.tensor([[1, 2], [3]]))
    show_outcome(show, lambda: t[None] == None)  # noqa: E711 - what users write
    show(torch.tensor([1, 2]) == torch.tensor([1, 3]), t.eq(3).any(), torch.equal(t, t.clone()),
         torch.allclose(t, t + 1e-9), torch.isclose(t, t + 1e-3, atol=1e-2))
    show_outcome(show, lambda: torch.testing.assert_close(t, t + torch.tensor([0.0, 1e-3, 0.5])))
    show_outcome(show, lambda: torch.testing.assert_close(t, t.double()))
    show_outcome(show, lambda: torch.testing.assert_close(torch.tensor([1, 2]), torch.tensor([1, 3])))
    show_outcome(show, lambda: torch.testing.assert_close(t, t[:2]))
    show(torch.testing.assert_close(t, t + 1e-7), torch.testing.assert_close(t, t.double(), check_dtype=False))
    import random

    random.seed(0)
    np.random.seed(0)
    g = torch.manual_seed(52)
    show(type(g).__name__, g.initial_seed(), torch.cuda.is_available(), torch.cuda.device_count(),
         torch.backends.cudnn.is_available() or False, torch.backends.mps.is_available())
    flags = torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.cuda.manual_seed_all(52)
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = flags
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    show(device, repr(device), torch.randn(2, device=device), torch.ones(1).to(device).device == device)
    with precisions_kept(torch):  # (the settings are process-wide: put back as they were, for other tests)
        torch.set_float32_matmul_precision("high")
        show(torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.fp32_precision,
             torch.backends.mkldnn.matmul.fp32_precision, torch.backends.cuda.matmul.allow_tf32)
        torch.set_float32_matmul_precision("highest")
        show(torch.backends.cuda.matmul.fp32_precision, torch.backends.mkldnn.matmul.fp32_precision)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    w = torch.ones(2, requires_grad=True)
    opt = torch.optim.SGD([w], lr=0.1)
    with torch.autocast(device_type="cpu", enabled=False):
        loss = (w * 3).sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    show(w, scaler.get_scale(), scaler.is_enabled(), scaler.scale(loss))


def _resume_training(lib, show):
    """A full training checkpoint: model, optimizer, scheduler (OneCycleLR and ReduceLROnPlateau), the RNG state
    and the epoch, saved to memory, reloaded into fresh objects, and training resumed: the resumed run must
    continue exactly; then a whole pickled model and the weights-only refusal."""
    torch, nn = lib, lib.nn
    torch.manual_seed(53)
    x, y = torch.randn(12, 3), torch.randn(12, 1)

    def make():
        model = nn.Sequential(nn.Linear(3, 5), nn.Dropout(0.2), nn.ReLU(), nn.Linear(5, 1))
        opt = torch.optim.RAdam(model.parameters(), lr=0.05, decoupled_weight_decay=True, weight_decay=0.01)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=8, cycle_momentum=True)
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
        return model, opt, sched, plateau

    def epoch(model, opt, sched, plateau):
        model.train()
        for xb, yb in zip(x.split(6), y.split(6)):
            loss = nn.functional.mse_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        plateau.step(loss.item())
        return loss

    model, opt, sched, plateau = make()
    for _ in range(2):
        epoch(model, opt, sched, plateau)
    buf = io.BytesIO()
    torch.save({"epoch": 2, "model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict(),
                "plateau": plateau.state_dict(), "rng": torch.get_rng_state()}, buf)
    rest = [epoch(model, opt, sched, plateau) for _ in range(2)]
    buf.seek(0)
    ckpt = torch.load(buf, weights_only=True)
    show(sorted(ckpt), ckpt["sched"]["last_epoch"], sorted(ckpt["sched"]), ckpt["plateau"]["best"])
    model2, opt2, sched2, plateau2 = make()
    model2.load_state_dict(ckpt["model"])
    opt2.load_state_dict(ckpt["opt"])
    sched2.load_state_dict(ckpt["sched"])
    plateau2.load_state_dict(ckpt["plateau"])
    torch.set_rng_state(ckpt["rng"])
    rest2 = [epoch(model2, opt2, sched2, plateau2) for _ in range(2)]
    show(rest, rest2, opt.param_groups[0]["lr"], opt2.param_groups[0]["lr"], opt2.param_groups[0]["betas"])
    show(torch.equal(model[0].weight, model2[0].weight), opt2.state_dict()["state"][0]["step"], sched2.get_last_lr())
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    show_outcome(show, lambda: torch.load(buf))
    buf.seek(0)
    whole = torch.load(buf, weights_only=False)
    show(whole, type(whole).__name__, torch.equal(whole[3].bias, model[3].bias))
    show_outcome(show, lambda: epoch(model, opt, sched, plateau))


PROGRAMS = [_cnn_with_schedulers, _physics_informed, _custom_function_and_hooks, _model_surgery,
            _graph_message_passing, _printing, _distributions_and_vi, _spatial_ops, _embedding_bag_and_ctc,
            _data_loading_details, _module_api, _optimizer_hooks_and_warnings, _anomaly_and_grad_modes,
            _kmeans_pca_and_least_squares, _signal_processing, _indexing_and_promotion,
            _attention_variants, _recurrent_variants, _meta_learning_and_per_sample_grads,
            _python_and_numpy_interop, _resume_training]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
