"""An eighth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: a unit-carrying Tensor subclass (``__torch_function__``)
pushed through a small model's forward and backward, with the docs' ScalarTensor duck type and its refusals; a
TorchFunctionMode a user writes to count a CNN's calls, swap an activation and forbid a function; forward-mode
sensitivities of an MLP (dual inputs, a Jacobian by columns, tangents on the parameters through functional_call, a
custom Function with jvp); transfer learning with a frozen backbone unfrozen through add_param_group; a small
U-Net trained with a weighted, ignore_index cross entropy and a soft Dice loss, scored by a confusion matrix;
FGSM/PGD adversarial examples and an adversarial training step; a deep-equilibrium layer whose implicit backward
is a tensor hook; an energy-based model trained with Langevin negatives and a replay buffer; early stopping with
best-weight copies and a whole checkpoint through a BytesIO; data loading in forked worker processes
(IterableDataset sharded by get_worker_info, worker_init_fn, persistent workers, a worker's error); and Tensor
subclasses as activations and parameters (DisableTorchFunctionSubclass, wrap_torch_function,
handle_torch_function). Everything is drawn from the seeded global generator, which is torch's; values are
compared to a tolerance (matrix products are not bit for bit), and the fixed-point and adversarial programs work
in float64, as careful users of those methods do. A worker's error is shown by its first and last lines: the
traceback between them is each library's own code.

Differences these programs found, now fixed (``tests/ops/test_program8_findings_vs_torch.py``):
- a TorchFunctionMode (or a Tensor subclass) saw the insides of the functional that convolution, transposed
  convolution, pooling, adaptive pooling, Softmax and LogSoftmax modules call (``__index__``, ``__get__``,
  ``is_complex``, ``convolution``, ...) where torch's handlers see one ``conv2d``/``max_pool2d``/``softmax`` call;
  ``Flatten`` showed ``view`` for torch's ``flatten``, and BatchNorm in training hid its
  ``num_batches_tracked.add_(1)``;
- ``nn.Parameter`` of a Tensor subclass instance gave a plain Parameter; torch keeps the subclass (its
  ``detach().requires_grad_()``), marks it so that ``isinstance(p, nn.Parameter)`` holds, and refuses a subclass
  whose ``detach()`` changes the class.

Left: a mode still sees the insides of recurrent layers (torch: one ``lstm``/``gru``/``rnn_tanh`` call) and of
MultiheadAttention (torch: one ``multi_head_attention_forward``), and InstanceNorm's ``dim``/``size`` reads as
``__get__``; a duck type (a non-Tensor with ``__torch_function__``) given to a function that torch writes in
Python (most of ``torch.nn.functional``, and ``torch.split``/``einsum``/``norm``/``cdist``/``meshgrid``/...) is
handed over only where tracegrad's code fails on it, so a refusal is worded as a C++ one, a Python
``AttributeError``, or the parser's TypeError, where torch says "no implementation found for
'torch.nn.functional.relu' on types that implement __torch_function__: [...]" (and torch's C++ names
``torch.nn.softplus``, ``torch.nn.linear`` are spelt ``torch.softplus``, ``torch.linear``).
"""

from __future__ import annotations

import copy
import io
import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _unit_carrying_subclass(lib, show):
    """A Tensor subclass carrying a unit through ``__torch_function__`` (the docs' pattern: results of the
    subclass get the unit of the first argument that has one), pushed through a small model's forward and
    backward, with the functions it saw, and a duck type (the docs' ScalarTensor) with its refusals."""
    torch, nn = lib, lib.nn
    torch.manual_seed(80)
    seen: list = []

    class Quantity(torch.Tensor):
        unit = "1"

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            seen.append(func.__name__)
            result = super().__torch_function__(func, types, args, kwargs)
            unit = next((a.unit for a in args if isinstance(a, Quantity)), "1")
            for r in (result if isinstance(result, (tuple, list)) else (result,)):
                if isinstance(r, Quantity):
                    r.unit = unit
            return result

    def metres(data):
        q = torch.as_tensor(data).as_subclass(Quantity)
        q.unit = "m"
        return q

    x = metres(torch.randn(5, 3))
    show(type(x).__name__, x.unit, x.shape, x.dtype, x.requires_grad)
    show(seen)
    seen.clear()
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    out = model(x)
    show(type(out).__name__, out.unit, out.grad_fn.name(), out.shape)
    show(seen)
    seen.clear()
    loss = (out ** 2).mean()
    loss.backward()
    show(type(loss).__name__, loss.unit, round(loss.item(), 5), type(model[0].weight.grad).__name__)
    show(model[0].weight.grad, model[2].bias.grad)
    show(seen)
    seen.clear()
    mixed = torch.cat([x, torch.zeros(1, 3)])
    show(type(mixed).__name__, mixed.unit, mixed.shape)
    parts = x.split(2)
    show([type(p).__name__ for p in parts], [p.unit for p in parts])
    show(type(x.detach()).__name__, type(x.clone()).__name__, type(x[0]).__name__, type(x.sum().item()).__name__)
    plain = x.as_subclass(torch.Tensor)
    show(type(plain).__name__, type(x.numpy()).__name__, type(x.tolist()).__name__)
    show(seen)
    seen.clear()
    leaf = metres(torch.ones(3)).requires_grad_()
    y = (leaf * 3).exp().sum()
    show(type(y).__name__, y.grad_fn.name())
    g, = torch.autograd.grad(y, leaf)
    show(type(g).__name__, g)

    handled: dict = {}

    class ScalarTensor:
        def __init__(self, n, value):
            self._n, self._value = n, value

        def __repr__(self):
            return f"ScalarTensor(N={self._n}, value={self._value})"

        def tensor(self):
            return self._value * torch.eye(self._n)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func not in handled or not all(issubclass(t, (torch.Tensor, ScalarTensor)) for t in types):
                return NotImplemented
            return handled[func](*args, **kwargs)

    handled[torch.mean] = lambda s: float(s._value) / s._n
    handled[torch.diagonal] = lambda s: torch.full((s._n,), float(s._value))
    d = ScalarTensor(5, 2)
    show(d, torch.mean(d), torch.diagonal(d), d.tensor().sum())
    show_outcome(show, lambda: torch.add(d, 1))
    show_outcome(show, lambda: torch.ones(2) + d)
    show(torch.overrides.is_tensor_like(d), torch.overrides.is_tensor_like(x), torch.overrides.has_torch_function((d,)))


def _function_mode_profiler(lib, show):
    """A TorchFunctionMode a user writes to count the calls of a CNN's forward, one that swaps an activation
    (relu -> a leaky one) for an experiment, nested modes, and a mode that refuses a function."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(81)

    class Counter(torch.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.counts: dict = {}

        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", str(func))
            self.counts[name] = self.counts.get(name, 0) + 1
            return func(*args, **(kwargs or {}))

    class Leaky(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is F.relu:
                return F.leaky_relu(args[0], 0.1)
            return func(*args, **kwargs)

    class NoMatmul(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func in (torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__):
                raise RuntimeError(f"{func.__name__} is not allowed here")
            return func(*args, **(kwargs or {}))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 3, 3)
            self.fc = nn.Linear(12, 2)

        def forward(self, x):
            h = F.relu(self.conv(x))
            h = F.max_pool2d(h, 2).flatten(1)
            return self.fc(h)

    net = Net()
    x = torch.randn(2, 1, 6, 6)
    with Counter() as counter:
        out = net(x)
    show(sorted(counter.counts.items()), out)
    with Leaky():
        leaky = net(x)
    show(leaky, torch.equal(leaky, out))
    with Counter() as outer, Leaky():
        nested = net(x)
    show(sorted(outer.counts.items()), torch.equal(nested, leaky))
    with NoMatmul():
        show_outcome(show, lambda: torch.ones(2, 2) @ torch.ones(2, 2))
        show_outcome(show, lambda: (torch.ones(2, 2) * 2).sum())
    show(torch.overrides.is_tensor_method_or_property(torch.Tensor.add),
         torch.overrides.is_tensor_method_or_property(torch.add))


def _forward_mode_sensitivities(lib, show):
    """Forward-mode AD through an MLP: directional derivatives with dual inputs, a Jacobian built column by column
    and checked against reverse mode, tangents on the parameters through functional_call, and a custom Function
    with both vjp and jvp used in either mode."""
    torch, nn = lib, lib.nn
    fwAD = torch.autograd.forward_ad
    torch.manual_seed(82)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.LayerNorm(5), nn.Linear(5, 2)).double()
    x = torch.randn(4, 3, dtype=torch.float64)
    direction = torch.randn(4, 3, dtype=torch.float64)
    with fwAD.dual_level():
        out = model(fwAD.make_dual(x, direction))
        primal, tangent = fwAD.unpack_dual(out)
        show(primal, tangent, out.grad_fn.name() if out.grad_fn else None)
    xs = torch.randn(3, dtype=torch.float64)
    columns = []
    with fwAD.dual_level():
        for i in range(3):
            e = torch.zeros(3, dtype=torch.float64)
            e[i] = 1.0
            columns.append(fwAD.unpack_dual(model(fwAD.make_dual(xs, e))).tangent)
    jac_fwd = torch.stack(columns, dim=1)
    jac_rev = torch.autograd.functional.jacobian(model, xs)
    show(jac_fwd, torch.allclose(jac_fwd, jac_rev))

    params = {name: p.detach() for name, p in model.named_parameters()}
    tangents = {name: torch.ones_like(p) for name, p in params.items()}
    with fwAD.dual_level():
        duals = {name: fwAD.make_dual(params[name], tangents[name]) for name in params}
        out = torch.func.functional_call(model, duals, (x,))
        show(fwAD.unpack_dual(out).tangent)

    class SoftClip(torch.autograd.Function):
        @staticmethod
        def forward(x, limit):
            return limit * torch.tanh(x / limit)

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, limit = inputs
            ctx.save_for_backward(x)
            ctx.limit = limit

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * (1 - torch.tanh(x / ctx.limit) ** 2), None

        @staticmethod
        def jvp(ctx, x_t, _):
            x, = ctx.saved_tensors
            return x_t * (1 - torch.tanh(x / ctx.limit) ** 2)

    z = torch.linspace(-3, 3, 5, dtype=torch.float64, requires_grad=True)
    y = SoftClip.apply(z, 2.0)
    y.sum().backward()
    show(y, z.grad)
    with fwAD.dual_level():
        dual = fwAD.make_dual(z.detach(), torch.ones(5, dtype=torch.float64))
        show(fwAD.unpack_dual(SoftClip.apply(dual, 2.0)).tangent)

    class NoJvp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with fwAD.dual_level():
        show_outcome(show, lambda: NoJvp.apply(fwAD.make_dual(z.detach(), torch.ones(5, dtype=torch.float64))))
        show_outcome(show, lambda: fwAD.make_dual(z.detach(), torch.ones(4, dtype=torch.float64)))
    show_outcome(show, lambda: fwAD.make_dual(z.detach(), torch.ones(5, dtype=torch.float64)))


def _transfer_learning_unfreezing(lib, show):
    """Fine-tuning: a pretrained backbone frozen (requires_grad_(False), BatchNorm kept in eval), a new head
    trained alone, then the backbone unfrozen into a second parameter group with a smaller learning rate through
    add_param_group, and the optimizer's state_dict showing both groups."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(83)
    backbone = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten())
    head = nn.Linear(4, 3)
    x = torch.randn(6, 1, 5, 5)
    y = torch.tensor([0, 1, 2, 0, 1, 2])
    backbone.requires_grad_(False)
    backbone.eval()
    show([p.requires_grad for p in backbone.parameters()], backbone.training, backbone[1].training)
    opt = torch.optim.SGD([p for p in head.parameters() if p.requires_grad], lr=0.1, momentum=0.9)
    for step in range(3):
        logits = head(backbone(x))
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, round(loss.item(), 5), backbone[0].weight.grad, logits.grad_fn.name())
    show(backbone[1].running_mean, backbone[1].num_batches_tracked)
    show_outcome(show, lambda: opt.add_param_group({"params": head.parameters()}))
    backbone.requires_grad_(True)
    backbone[1].train()
    opt.add_param_group({"params": list(backbone.parameters()), "lr": 0.01})
    show([(len(g["params"]), g["lr"], g["momentum"]) for g in opt.param_groups])
    for step in range(2):
        loss = F.cross_entropy(head(backbone(x)), y)
        opt.zero_grad(set_to_none=False)
        loss.backward()
        opt.step()
        show(step, round(loss.item(), 5), backbone[0].weight.grad.abs().sum() > 0)
    show(backbone[1].running_mean, backbone[1].num_batches_tracked, backbone[0].weight[0, 0])
    state = opt.state_dict()
    show(state["param_groups"], len(state["state"]), sorted(state["state"][0]))
    frozen_head = nn.Linear(4, 3).requires_grad_(False)
    show_outcome(show, lambda: F.cross_entropy(frozen_head(torch.randn(2, 4)), y[:2]).backward())


def _unet_segmentation(lib, show):
    """A two-level U-Net (skip connections through cat, ConvTranspose2d and interpolate) trained on tiny masks with
    a pixel-wise cross entropy (class weights, ignore_index) plus a soft Dice loss, scored by a confusion matrix."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(84)
    classes = 3

    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(2, cout), nn.ReLU())

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc1, self.enc2 = block(1, 4), block(4, 8)
            self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
            self.dec = block(8, 4)
            self.out = nn.Conv2d(4, classes, 1)
            self.aux = nn.Conv2d(8, classes, 1)

        def forward(self, x):
            e1 = self.enc1(x)
            e2 = self.enc2(F.max_pool2d(e1, 2))
            d = self.dec(torch.cat([self.up(e2), e1], dim=1))
            aux = F.interpolate(self.aux(e2), size=x.shape[-2:], mode="bilinear", align_corners=False)
            return self.out(d), aux

    def dice_loss(logits, target, eps=1.0):
        probs = logits.softmax(1)
        valid = (target != 255).unsqueeze(1)
        one_hot = F.one_hot(target.clamp(max=classes - 1), classes).permute(0, 3, 1, 2).float()
        inter = (probs * one_hot * valid).sum((0, 2, 3))
        union = (probs * valid).sum((0, 2, 3)) + (one_hot * valid).sum((0, 2, 3))
        return 1 - ((2 * inter + eps) / (union + eps)).mean()

    net = UNet()
    images = torch.randn(2, 1, 8, 8)
    masks = torch.randint(0, classes, (2, 8, 8))
    masks[:, 0, :] = 255
    weights = torch.tensor([0.5, 1.0, 2.0])
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for step in range(4):
        logits, aux = net(images)
        ce = F.cross_entropy(logits, masks, weight=weights, ignore_index=255)
        loss = ce + dice_loss(logits, masks) + 0.4 * F.cross_entropy(aux, masks, ignore_index=255)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, round(ce.item(), 5), round(loss.item(), 5))
    show(logits.shape, aux.grad_fn.name(), net.up.weight.grad.shape)
    with torch.no_grad():
        pred = net(images)[0].argmax(1)
    valid = masks != 255
    confusion = torch.bincount(masks[valid] * classes + pred[valid], minlength=classes * classes)
    confusion = confusion.reshape(classes, classes)
    iou = confusion.diag() / (confusion.sum(0) + confusion.sum(1) - confusion.diag()).clamp(min=1)
    show(confusion, iou, iou.dtype, (pred[valid] == masks[valid]).float().mean())
    show_outcome(show, lambda: F.cross_entropy(logits, masks))


def _adversarial_examples(lib, show):
    """FGSM and a projected gradient descent attack on a small classifier in eval mode (gradients taken with
    respect to the input only, projections with tensor-valued clamp bounds), then one adversarial training step."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(85)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 3)).double()
    x = torch.rand(8, 6, dtype=torch.float64)
    y = torch.randint(0, 3, (8,))
    model.eval()

    def fgsm(inputs, eps):
        inputs = inputs.clone().requires_grad_(True)
        loss = F.cross_entropy(model(inputs), y)
        grad, = torch.autograd.grad(loss, inputs)
        return (inputs + eps * grad.sign()).clamp(0, 1).detach()

    adv = fgsm(x, 0.1)
    show(adv[:2], (adv - x).abs().max(), [p.grad for p in model.parameters()][:1])
    with torch.no_grad():
        clean_acc = (model(x).argmax(1) == y).double().mean()
        adv_acc = (model(adv).argmax(1) == y).double().mean()
    show(clean_acc, adv_acc)

    def pgd(inputs, eps, alpha, steps):
        lo, hi = (inputs - eps).clamp(min=0), (inputs + eps).clamp(max=1)
        delta = torch.empty_like(inputs).uniform_(-eps, eps)
        adv = (inputs + delta).clamp(lo, hi)
        for _ in range(steps):
            adv.requires_grad_(True)
            loss = F.cross_entropy(model(adv), y)
            loss.backward()
            with torch.no_grad():
                adv = torch.max(torch.min(adv + alpha * adv.grad.sign(), hi), lo)
        return adv.detach()

    model.zero_grad()
    strong = pgd(x, 0.1, 0.03, 4)
    show(strong[:2], model[0].weight.grad.abs().sum() > 0, strong.requires_grad)
    with torch.no_grad():
        show(F.cross_entropy(model(x), y), F.cross_entropy(model(strong), y))
        with torch.enable_grad():
            inside = x.clone().requires_grad_()
            show((inside * 2).grad_fn.name())
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    opt.zero_grad()
    loss = 0.5 * F.cross_entropy(model(x), y) + 0.5 * F.cross_entropy(model(strong), y)
    loss.backward()
    opt.step()
    show(round(loss.item(), 6), model[3].bias)
    show_outcome(show, lambda: torch.clamp(x, torch.zeros(6), 1.0))
    show_outcome(show, lambda: x.clamp(min=torch.zeros(6, dtype=torch.float64), max=torch.ones(7, dtype=torch.float64)))


def _deep_equilibrium_layer(lib, show):
    """A deep-equilibrium layer: the fixed point z = tanh(Wz + Ux) found without a graph, one differentiable step
    from it, and the implicit backward solved by a hook on that step's output (vector-Jacobian products with
    autograd.grad and retain_graph), compared with unrolled differentiation."""
    torch, nn = lib, lib.nn
    torch.manual_seed(86)
    dtype = torch.float64

    class DEQ(nn.Module):
        def __init__(self, n, d):
            super().__init__()
            self.W = nn.Linear(d, d, bias=False).to(dtype)
            self.U = nn.Linear(n, d).to(dtype)
            with torch.no_grad():
                self.W.weight.mul_(0.3)
            self.iterations = []

        def f(self, z, x):
            return torch.tanh(self.W(z) + self.U(x))

        def forward(self, x):
            with torch.no_grad():
                z = torch.zeros(x.shape[0], self.W.in_features, dtype=dtype)
                for step in range(60):
                    z_next = self.f(z, x)
                    if (z_next - z).norm() < 1e-12:
                        self.iterations.append(step)
                        break
                    z = z_next
            z = self.f(z.requires_grad_(), x)
            z0 = z.clone().detach().requires_grad_()
            f0 = self.f(z0, x)

            def implicit(grad):
                g = grad
                for _ in range(60):
                    g = torch.autograd.grad(f0, z0, g, retain_graph=True)[0] + grad
                return g

            if z.requires_grad:
                z.register_hook(implicit)
            return z

    deq = DEQ(3, 4)
    x = torch.randn(5, 3, dtype=dtype)
    z = deq(x)
    loss = z.pow(2).sum()
    loss.backward()
    implicit_grad = deq.U.weight.grad.clone()
    show(deq.iterations, z.grad_fn.name(), round(loss.item(), 8), implicit_grad)
    deq.zero_grad()
    zz = torch.zeros(5, 4, dtype=dtype)
    for _ in range(60):
        zz = deq.f(zz, x)
    zz.pow(2).sum().backward()
    show(torch.allclose(implicit_grad, deq.U.weight.grad, atol=1e-8), deq.U.weight.grad.dtype)
    with torch.no_grad():
        show(deq(x).requires_grad, deq.iterations)


def _energy_based_langevin(lib, show):
    """An energy-based model trained by contrastive divergence: negatives from stochastic gradient Langevin
    dynamics (autograd.grad of the energy w.r.t. the samples, Gaussian noise, clamping), a replay buffer refreshed
    with a random mask, and an energy-magnitude regulariser."""
    torch, nn = lib, lib.nn
    torch.manual_seed(87)
    energy = nn.Sequential(nn.Linear(2, 16), nn.SiLU(), nn.Linear(16, 1))
    data = torch.randn(16, 2) * 0.3 + torch.tensor([1.0, -1.0])
    buffer = torch.rand(32, 2) * 4 - 2
    opt = torch.optim.Adam(energy.parameters(), lr=1e-3, betas=(0.0, 0.999))

    def langevin(samples, steps=5, step_size=0.1, noise=0.01):
        samples = samples.clone().requires_grad_(True)
        was_training = energy.training
        energy.eval()
        for p in energy.parameters():
            p.requires_grad_(False)
        for _ in range(steps):
            e = energy(samples).sum()
            grad, = torch.autograd.grad(e, samples)
            samples.data.add_(-step_size * grad + noise * torch.randn_like(samples))
            samples.data.clamp_(-2, 2)
        for p in energy.parameters():
            p.requires_grad_(True)
        energy.train(was_training)
        return samples.detach()

    for step in range(3):
        idx = torch.randint(0, buffer.shape[0], (16,))
        starts = buffer[idx]
        fresh = torch.rand(16, 1) < 0.05
        starts = torch.where(fresh, torch.rand(16, 2) * 4 - 2, starts)
        negatives = langevin(starts)
        buffer[idx] = negatives
        pos, neg = energy(data), energy(negatives)
        cd = pos.mean() - neg.mean()
        reg = 0.1 * (pos ** 2 + neg ** 2).mean()
        opt.zero_grad()
        (cd + reg).backward()
        opt.step()
        show(step, round(cd.item(), 5), round(reg.item(), 6), negatives[:2])
    show(buffer.mean(0), energy[0].weight.grad.shape, negatives.requires_grad,
         [p.requires_grad for p in energy.parameters()])


def _early_stopping_checkpoints(lib, show):
    """Early stopping: the best weights kept as a deep copy of the state dict (and the classic mistake of keeping
    the dict itself, whose tensors keep changing), a plateau scheduler, patience counting, a whole checkpoint
    written to a BytesIO and restored (model, optimizer, scheduler, epoch)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(88)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=0)
    x, y = torch.randn(20, 4), torch.randn(20, 1)
    xv, yv = torch.randn(10, 4), torch.randn(10, 1)
    best, best_state, aliased, bad, patience = math.inf, None, None, 0, 2
    history = []
    for epoch in range(12):
        model.train()
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            val = F.mse_loss(model(xv), yv).item()
        sched.step(val)
        history.append((epoch, round(val, 5), opt.param_groups[0]["lr"]))
        if val < best - 1e-4:
            best, bad = val, 0
            best_state = copy.deepcopy(model.state_dict())
            aliased = model.state_dict()
        else:
            bad += 1
            if bad >= patience:
                break
    show(history, epoch, round(best, 5))
    show(torch.equal(best_state["0.weight"], model[0].weight), torch.equal(aliased["0.weight"], model[0].weight))
    buffer = io.BytesIO()
    torch.save({"epoch": epoch, "model": model.state_dict(), "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(), "best": best}, buffer)
    buffer.seek(0)
    checkpoint = torch.load(buffer, weights_only=True)
    show(sorted(checkpoint), checkpoint["epoch"], sorted(checkpoint["scheduler"]))
    fresh = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    fresh_opt = torch.optim.Adam(fresh.parameters(), lr=0.05)
    fresh_sched = torch.optim.lr_scheduler.ReduceLROnPlateau(fresh_opt, factor=0.5, patience=0)
    fresh.load_state_dict(checkpoint["model"])
    fresh_opt.load_state_dict(checkpoint["optimizer"])
    fresh_sched.load_state_dict(checkpoint["scheduler"])
    show(fresh_opt.param_groups[0]["lr"], fresh_sched.best == sched.best, fresh_sched.num_bad_epochs,
         fresh_opt.state_dict()["state"][0]["step"])
    model.load_state_dict(best_state)
    with torch.no_grad():
        show(round(F.mse_loss(model(xv), yv).item(), 5), torch.equal(fresh(xv), fresh(xv)))
    show_outcome(show, lambda: fresh.load_state_dict({k: v for k, v in best_state.items() if k != "2.bias"}))


def _worker_data_loading(lib, show):
    """Data loading in worker processes (fork): an IterableDataset sharded with get_worker_info, a map-style
    dataset whose workers are seeded by worker_init_fn, persistent workers over two epochs, and a worker's error
    reported in the parent."""
    torch = lib
    data = torch.utils.data

    class Shards(data.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            info = data.get_worker_info()
            start, step = (0, 1) if info is None else (info.id, info.num_workers)
            for i in range(start, self.n, step):
                yield torch.tensor([float(i), float(start)])

    def loader(dataset, **kw):
        return data.DataLoader(dataset, multiprocessing_context="fork", **kw)

    show([b.tolist() for b in loader(Shards(6), batch_size=2, num_workers=2)])
    show([b.tolist() for b in data.DataLoader(Shards(5), batch_size=2)])

    class Noisy(data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            info = data.get_worker_info()
            return i, info.id, info.seed % 1000 == torch.initial_seed() % 1000

    def init(worker_id):
        info = data.get_worker_info()
        info.dataset.marker = worker_id

    torch.manual_seed(89)
    batches = list(loader(Noisy(), batch_size=2, num_workers=2, worker_init_fn=init))
    show(batches)
    torch.manual_seed(89)
    again = list(loader(Noisy(), batch_size=2, num_workers=2, generator=torch.Generator().manual_seed(3)))
    show(again)
    persistent = loader(Noisy(), batch_size=3, num_workers=1, persistent_workers=True)
    show([[b[0].tolist() for b in persistent] for _ in range(2)])

    class Broken(data.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            raise ValueError(f"bad sample {i}")

    try:
        list(loader(Broken(), num_workers=1))
    except ValueError as e:  # (the traceback's frames are each library's own code)
        show(str(e).splitlines()[0], str(e).splitlines()[-1])
    show_outcome(show, lambda: data.DataLoader(Noisy(), num_workers=-1))
    show_outcome(show, lambda: data.DataLoader(Noisy(), persistent_workers=True))


def _tensor_subclass_parameters(lib, show):
    """A Tensor subclass used for parameters and activations in training: a subclass that logs which functions
    the optimizer and loss touch, nn.Parameter of a plain tensor beside it, DisableTorchFunctionSubclass, and
    torch.overrides.wrap_torch_function/handle_torch_function in a user's own function."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(90)
    calls: list = []

    class Tracked(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(getattr(func, "__name__", repr(func)))
            return super().__torch_function__(func, types, args, kwargs or {})

    features = torch.randn(6, 3).as_subclass(Tracked)
    targets = torch.randint(0, 2, (6,))
    lin = nn.Linear(3, 2)
    logits = lin(features)
    loss = F.cross_entropy(logits, targets)
    show(type(logits).__name__, type(loss).__name__, loss.grad_fn.name(), calls)
    calls.clear()
    loss.backward()
    show(type(lin.weight.grad).__name__, lin.weight.grad, calls)
    calls.clear()
    param = nn.Parameter(torch.randn(2).as_subclass(Tracked))
    show(type(param).__name__, isinstance(param, Tracked), param.requires_grad)
    with torch._C.DisableTorchFunctionSubclass():
        inside = features + 1
    show(type(inside).__name__, calls)
    calls.clear()

    @torch.overrides.wrap_torch_function(lambda x, scale=1.0: (x,))
    def scaled_softplus(x, scale=1.0):
        return F.softplus(x * scale) / scale

    show(type(scaled_softplus(features)).__name__, calls[:3])
    calls.clear()
    show(scaled_softplus(torch.tensor([0.0, 1.0])))

    def my_norm(x):
        if torch.overrides.has_torch_function_unary(x):
            return torch.overrides.handle_torch_function(my_norm, (x,), x)
        return x.pow(2).sum().sqrt()

    show(my_norm(torch.tensor([3.0, 4.0])), type(my_norm(features)).__name__, calls[:2])


PROGRAMS = [
    _unit_carrying_subclass,
    _function_mode_profiler,
    _forward_mode_sensitivities,
    _transfer_learning_unfreezing,
    _unet_segmentation,
    _adversarial_examples,
    _deep_equilibrium_layer,
    _energy_based_langevin,
    _early_stopping_checkpoints,
    _worker_data_loading,
    _tensor_subclass_parameters,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
