"""A nineteenth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: notebooks of beginners making the common mistakes, reading
the errors and trying the fixes, cell after cell. An MNIST-style MLP fed images without flattening, with the wrong
in_features and a view of a permuted batch (then reshape/contiguous/flatten); a CNN whose flatten size is guessed
wrong, fed channels-last and unbatched images, its kernel larger than the input, debugged by forward hooks that
print each layer's shape; dtype mismatches (integer features into Linear, float64 NumPy data into a float32 model,
float or (N, 1) class targets for cross_entropy, Long regression targets, float indices and masks, ``+=`` of a float
into an integer tensor); an RNN language model whose hidden state is carried across batches without detach
(backward twice), losses with ``reduction="none"`` backpropagated (non-scalar), gradients of the wrong shape and
retain_graph; a manual SGD loop writing into leaves that require grad, ReLU(inplace=True) after a sigmoid and an
in-place residual add (the version-counter messages with their tensor types and nodes), found by anomaly mode;
``.numpy()``/``.item()``/``float()`` on tensors that require grad or hold many elements while logging a training
curve; modules called with the wrong arguments, a forgotten ``super().__init__()``, a misspelt ``forward``, layers
kept in a plain list, an LSTM's output tuple fed to a Linear; a training loop without zero_grad (gradients
accumulating), an optimizer built before the model is replaced, a scheduler stepped before the optimizer and
``model.eval`` without its call; ``requires_grad`` on integer tensors and non-leaves, and backward through argmax
and round; indexing out of range, ragged ``torch.tensor`` lists, ``torch.stack`` of different shapes and of
plain lists, padded with pad_sequence instead; ``load_state_dict`` with a DataParallel prefix, a new head of
another size, strict and non-strict, and optimizers' state dicts of other groups; and broadcasting surprises in
losses (mse_loss of (N, 1) against (N,) with its UserWarning, BCE of mismatched shapes) next to accuracy computed
from ``torch.max``'s named tuple. Everything is drawn from the seeded global generator, which is torch's; values
are compared to a tolerance (matrix products are not bit for bit). Parameters shown inside a loop are cloned first
(``show`` keeps the tensor's memory, which the next steps write).

Differences these programs found, now fixed (``tests/ops/test_program19_findings_vs_torch.py``):
- ``torch.stack``/``cat`` of plain lists (``torch.stack([[1, 2], [3, 4]])``), of a list beside a tensor or of
  NumPy scalars built a tensor where torch's parser refuses any element that is no tensor; a generator, dict
  values, a range or a deque were taken for a list of tensors (``torch.stack`` of a generator lost the gradient);
  ``meshgrid``/``chain_matmul`` of non-tensors warned before refusing;
- ``torch.max(x, 1)``'s named tuple was ``'max'`` in Python's messages ("'max' object has no attribute 'item'");
  torch's structseq is ``'torch.return_types.max'`` there;
- an optimizer's own ``step`` marked it as stepped, so a scheduler made after a warmup by hand and stepped before
  the optimizer did not warn "Detected call of `lr_scheduler.step()` before `optimizer.step()`".

Left: ``print(x.size)`` (the method, not called) shows ``<bound method Tensor.size of tensor(...)>`` where torch
shows ``<built-in method size of Tensor object at 0x...>``; ``nn.Sequential(nn.Linear(4, 2), torch.relu)`` says
"tracegrad.ops.nn_ops.public.relu is not a Module subclass" where torch says "torch._VariableFunctionsClass.relu
..." (torch's functions are builtins with ``__module__`` "torch" and ``__qualname__``
"_VariableFunctionsClass.relu"; the programs put ``F.relu`` in a ModuleList instead); the legacy
``torch.cuda.FloatTensor`` types are missing (torch: "type torch.cuda.FloatTensor not available. Torch not
compiled with CUDA enabled."; ``x.type("torch.cuda.FloatTensor")`` is ValueError "invalid type" where torch raises
its long "Cannot initialize CUDA without ATen_cuda library" RuntimeError), as is ``torch.cuda.set_device``. (Setting
a named tuple's field and ``torch.return_types.max((v, i))`` from one sequence are now torch's: the return types
are structseqs, ``tests/ops/test_review_structseq_vs_torch.py``.)
"""

from __future__ import annotations

import numpy as np
import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _mlp_without_flatten(lib, show):
    """An MNIST-style MLP fed a batch of images: no flatten (Linear on the last dim, then a target-size error), the
    wrong in_features, a view of a permuted batch; then flatten/reshape/contiguous and a training step."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(1900)
    images = torch.rand(8, 1, 28, 28)
    labels = torch.randint(0, 10, (8,))
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    show_outcome(show, lambda: model(images))
    wrong = nn.Sequential(nn.Linear(28, 16), nn.ReLU(), nn.Linear(16, 10))
    logits = wrong(images)
    show(logits.shape, logits.grad_fn.name())
    show_outcome(show, lambda: F.cross_entropy(logits, labels))
    show_outcome(show, lambda: model(images.view(8, -1, 28)))
    show_outcome(show, lambda: model(images.view(-1)))
    nhwc = images.permute(0, 2, 3, 1)
    show(nhwc.shape, nhwc.is_contiguous(), nhwc.stride())
    show_outcome(show, lambda: nhwc.view(8, 784))
    show_outcome(show, lambda: nhwc.view(-1, 784).shape)
    flat = nhwc.reshape(8, 784)
    show(flat.is_contiguous(), flat.shape, torch.equal(flat, nhwc.contiguous().view(8, -1)))
    show(torch.equal(images.flatten(1), images.view(images.size(0), -1)), images.flatten().shape)
    show_outcome(show, lambda: images.view(7, -1))
    show_outcome(show, lambda: images.view(-1, -1))
    show_outcome(show, lambda: images.flatten(2, 1))
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 32), nn.ReLU(), nn.Linear(32, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    for step in range(3):
        loss = F.cross_entropy(model(images), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(step, round(loss.item(), 5), loss.grad_fn.name())
    show(model[1].weight.grad.shape, model[3].bias.grad)
    show_outcome(show, lambda: nn.Linear(784, 10)(torch.rand(3, 785)))
    show_outcome(show, lambda: nn.Linear(784, 10)(torch.rand(2, 5, 784)).shape)
    show_outcome(show, lambda: nn.Linear(784, 10)(torch.tensor(1.0)))


def _cnn_flatten_size(lib, show):
    """A CNN whose first Linear's in_features is guessed wrong, read off forward hooks that print each layer's
    output shape; then images in the wrong layout (channels last, grayscale into an RGB conv, unbatched, a kernel
    larger than the input, a pool too big)."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1901)

    class SmallCNN(nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(hidden, 32)
            self.fc2 = nn.Linear(32, 10)

        def forward(self, x):
            x = self.pool(torch.relu(self.conv1(x)))
            x = self.pool(torch.relu(self.conv2(x)))
            x = torch.flatten(x, 1)
            return self.fc2(torch.relu(self.fc1(x)))

    batch = torch.randn(4, 3, 32, 32)
    net = SmallCNN(16 * 4 * 4)
    show_outcome(show, lambda: net(batch))
    shapes = []
    handles = [m.register_forward_hook(lambda mod, inp, out: shapes.append((type(mod).__name__, tuple(out.shape))))
               for m in net.children()]
    show_outcome(show, lambda: net(batch))
    show(shapes)
    for h in handles:
        h.remove()
    net = SmallCNN(16 * 5 * 5)
    out = net(batch)
    show(out.shape, out.grad_fn.name(), out[0])
    show_outcome(show, lambda: net(batch.permute(0, 2, 3, 1)))
    show_outcome(show, lambda: net(batch[:, :1]))
    show_outcome(show, lambda: net(batch[0]).shape)
    show_outcome(show, lambda: net(batch[0, 0]))
    show_outcome(show, lambda: net(torch.randn(4, 3, 8, 8)))
    show_outcome(show, lambda: net(torch.randn(4, 3, 14, 14)))
    show_outcome(show, lambda: nn.Conv2d(3, 6, 5)(torch.randn(1, 3, 4, 4)))
    show_outcome(show, lambda: nn.Conv1d(3, 6, 3)(torch.randn(2, 10, 3)))
    show_outcome(show, lambda: nn.Conv2d(3, 6, 3, padding="same", stride=2))
    show_outcome(show, lambda: nn.Conv2d(4, 6, 3, groups=3))
    show_outcome(show, lambda: nn.BatchNorm2d(6)(torch.randn(2, 3, 4, 4)))
    show_outcome(show, lambda: nn.BatchNorm2d(3)(torch.randn(3, 4, 4)))
    lazy = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.LazyLinear(10))
    show(lazy(batch).shape, lazy[2].in_features, lazy[2].weight.shape)
    show(sum(p.numel() for p in net.parameters()), [n for n, _ in net.named_parameters()])


def _dtype_mismatches(lib, show):
    """Integer features into a Linear, float64 NumPy data into a float32 model, float and (N, 1) class targets for
    cross_entropy, Long regression targets, float indices and masks, and the fixes (.float(), .long(), .squeeze)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(1902)
    model = nn.Linear(3, 2)
    counts = torch.tensor([[1, 0, 2], [3, 1, 0]])
    show(counts.dtype, model.weight.dtype)
    show_outcome(show, lambda: model(counts))
    show(model(counts.float()))
    data = np.linspace(0, 1, 6).reshape(2, 3)
    x = torch.from_numpy(data)
    show(x.dtype, torch.tensor(data).dtype, torch.tensor(data, dtype=torch.float32).dtype)
    show_outcome(show, lambda: model(x))
    show(model(x.float()), model.double()(x).dtype, model.weight.dtype)
    model.float()
    show_outcome(show, lambda: model(torch.ones(2, 3, dtype=torch.float16)))
    logits = torch.randn(4, 3, requires_grad=True)
    show_outcome(show, lambda: F.cross_entropy(logits, torch.tensor([0.0, 2.0, 1.0, 1.0])))
    show_outcome(show, lambda: F.cross_entropy(logits, torch.tensor([[0], [2], [1], [1]])))
    show_outcome(show, lambda: F.cross_entropy(logits, torch.tensor([[0.0], [2.0], [1.0], [1.0]])))
    show_outcome(show, lambda: F.cross_entropy(logits, F.one_hot(torch.tensor([0, 2, 1, 1]), 3)))
    show_outcome(show, lambda: F.nll_loss(logits, torch.tensor([0.0, 2.0, 1.0, 1.0])))
    show_outcome(show, lambda: F.cross_entropy(logits, torch.tensor([0, 2, 3, 1])))
    show_outcome(show, lambda: F.cross_entropy(logits, torch.tensor([0, 2, 1])))
    fixed = F.cross_entropy(logits, torch.tensor([[0], [2], [1], [1]]).squeeze(1))
    soft = F.cross_entropy(logits, F.one_hot(torch.tensor([0, 2, 1, 1]), 3).float())
    show(fixed, soft, fixed.grad_fn.name(), soft.grad_fn.name())
    pred = torch.randn(4, requires_grad=True)
    target = torch.tensor([1, 0, 3, 2])
    show_outcome(show, lambda: F.mse_loss(pred, target))
    show_outcome(show, lambda: F.binary_cross_entropy_with_logits(pred, torch.tensor([1, 0, 1, 1])))
    show_outcome(show, lambda: F.binary_cross_entropy(pred.sigmoid(), torch.tensor([1, 0, 1, 1])))
    loss = F.mse_loss(pred, target.float())
    loss.backward()
    show(loss, pred.grad)
    table = torch.arange(12.0).view(4, 3)
    show_outcome(show, lambda: table[torch.tensor([0.0, 2.0])])
    show_outcome(show, lambda: table.masked_fill(torch.tensor([1.0, 0.0, 1.0]), 0))
    show_outcome(show, lambda: nn.Embedding(5, 2)(torch.tensor([1.0, 3.0])))
    show_outcome(show, lambda: table.gather(1, torch.tensor([[0], [1], [2], [0]], dtype=torch.int32)))
    steps = torch.tensor([1, 2, 3])
    show_outcome(show, lambda: steps.__iadd__(0.5))
    show(steps + 0.5, steps / 2, steps // 2, (steps * 1.0).dtype, steps.float().mean())
    show_outcome(show, lambda: steps.mean())
    show_outcome(show, lambda: torch.cat([steps, torch.ones(2)]))


def _rnn_hidden_state_backward_twice(lib, show):
    """A character RNN trained on consecutive chunks with the hidden state carried over: the second backward
    goes through the first chunk's freed graph; then detach between chunks. Also a loss with reduction='none'
    backpropagated, a gradient of the wrong shape, and retain_graph."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(1903)
    vocab, hidden = 5, 6
    text = torch.randint(0, vocab, (25,))
    embed, rnn, head = nn.Embedding(vocab, 4), nn.RNN(4, hidden, batch_first=True), nn.Linear(hidden, vocab)
    params = [*embed.parameters(), *rnn.parameters(), *head.parameters()]
    opt = torch.optim.Adam(params, lr=0.01)

    def train(detach):
        h = torch.zeros(1, 1, hidden)
        losses = []
        for start in range(0, 20, 8):
            chunk, target = text[start:start + 8], text[start + 1:start + 9]
            if detach:
                h = h.detach()
            out, h = rnn(embed(chunk).unsqueeze(0), h)
            loss = F.cross_entropy(head(out[0]), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(round(loss.item(), 5))
        return losses, h.grad_fn.name()

    show_outcome(show, lambda: train(detach=False))
    show(train(detach=True))
    x = torch.randn(4, 3)
    y = torch.randn(4, 1)
    layer = nn.Linear(3, 1)
    per_sample = F.mse_loss(layer(x), y, reduction="none")
    show(per_sample.shape, per_sample.grad_fn.name())
    show_outcome(show, lambda: per_sample.backward())
    show_outcome(show, lambda: torch.autograd.grad(per_sample, layer.weight))
    show_outcome(show, lambda: per_sample.backward(torch.ones(4)))
    show_outcome(show, lambda: per_sample.backward(torch.ones(4, 1, dtype=torch.int64)))
    per_sample.backward(torch.ones(4, 1), retain_graph=True)
    show(layer.weight.grad.clone(), layer.bias.grad.clone())
    per_sample.mean().backward()
    show(layer.weight.grad, layer.bias.grad)
    loss = per_sample.sum()
    loss.backward()
    show_outcome(show, lambda: loss.backward())
    show_outcome(show, lambda: per_sample.grad_fn._saved_self)
    show_outcome(show, lambda: torch.autograd.grad(layer(x).sum(), [layer.weight, torch.ones(3, requires_grad=True)]))
    show(torch.autograd.grad(layer(x).sum(), [layer.weight, torch.ones(3, requires_grad=True)], allow_unused=True))


def _inplace_version_errors(lib, show):
    """A manual SGD loop writing into leaves that require grad (then under no_grad), ReLU(inplace=True) after a
    sigmoid, an in-place residual add inside a module and a normalised tensor scaled in place: the version-counter
    messages with their tensor types and nodes, and anomaly mode naming the forward op."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1904)
    w = torch.randn(3, 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    x, y = torch.randn(6, 3), torch.randn(6, 1)
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()

    def naive_step():  # (a notebook cell, where w is global)
        nonlocal w
        w -= 0.1 * w.grad

    show_outcome(show, naive_step)

    def leaf_step():
        w.sub_(0.1 * w.grad)

    show_outcome(show, leaf_step)
    show_outcome(show, lambda: w[0].zero_())
    with torch.no_grad():
        w -= 0.1 * w.grad
        b -= 0.1 * b.grad
    show(w.grad_fn, w.requires_grad, w.is_leaf, w._version, b._version)
    w.grad.zero_()
    b.grad = None
    ((x @ w + b - y) ** 2).mean().backward()
    show(w.grad, b.grad)

    net = nn.Sequential(nn.Linear(3, 4), nn.Sigmoid(), nn.ReLU(inplace=True), nn.Linear(4, 1))
    show_outcome(show, lambda: net(x).sum().backward())

    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            h = torch.tanh(self.fc(x))
            h += x
            return h

    show_outcome(show, lambda: Residual()(x).pow(2).sum().backward())
    h = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    normed = h / h.norm(dim=1, keepdim=True)
    out = normed.exp()
    normed.mul_(2)
    show(normed._version, normed.grad_fn.name())
    show_outcome(show, lambda: out.sum().backward())
    scores = torch.randn(3, 4, requires_grad=True)
    probs = scores.softmax(dim=1)
    probs[:, 0] = 0.0
    show(probs.grad_fn.name(), probs._version)
    show_outcome(show, lambda: probs.sum().backward())
    with torch.autograd.detect_anomaly():
        e = torch.randn(4, requires_grad=True).exp()
        e.add_(1)
        show_outcome(show, lambda: e.sum().backward())
    z = torch.randn(3, requires_grad=True)
    zz = z * 1
    zz.data.mul_(2)
    (zz * zz).sum().backward()
    show(zz._version, z.grad)


def _numpy_item_logging(lib, show):
    """Logging a training curve: .numpy() of a prediction and of a parameter that require grad, .item() and
    float() of a per-sample loss, np.array of a list of losses; then detach().numpy(), .tolist(), and the memory
    that from_numpy and .numpy() share."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(1905)
    model = nn.Linear(2, 1)
    x, y = torch.randn(5, 2), torch.randn(5, 1)
    pred = model(x)
    show_outcome(show, lambda: pred.numpy())
    show_outcome(show, lambda: model.weight.numpy())
    show_outcome(show, lambda: np.asarray(pred))
    per_sample = F.mse_loss(pred, y, reduction="none")
    show_outcome(show, lambda: per_sample.item())
    show_outcome(show, lambda: float(per_sample))
    show_outcome(show, lambda: int(torch.tensor([2.7])))
    show_outcome(show, lambda: torch.tensor([]).item())
    history = []
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(loss)
    show(type(history[0]).__name__, history[-1].requires_grad)
    show_outcome(show, lambda: np.array(history))
    show([round(h.item(), 5) for h in history], type(history[0].item()).__name__)
    arr = pred.detach().numpy()
    show(arr.dtype, arr.shape, type(arr).__name__, pred.detach().cpu().numpy().sum().round(5))
    show(pred.tolist() == pred.detach().tolist(), type(pred.tolist()[0][0]).__name__)
    data = np.zeros(3, dtype=np.float32)
    shared = torch.from_numpy(data)
    copied = torch.tensor(data)
    data[0] = 7.0
    show(shared, copied, shared.dtype)
    view = shared.numpy()
    shared.add_(1)
    show(view.tolist(), data.tolist())
    show_outcome(show, lambda: torch.from_numpy([1.0, 2.0]))
    show_outcome(show, lambda: torch.from_numpy(np.array(["a", "b"])))
    show(torch.from_numpy(np.arange(3)).dtype, torch.tensor(np.float64(1.5)).dtype, torch.tensor([np.float32(1)]).dtype)
    show(f"{loss:.3f}", f"{loss.item():.3f}", round(loss.item(), 3))
    show_outcome(show, lambda: f"{per_sample:.3f}")


def _module_call_mistakes(lib, show):
    """Modules misused: called with too many or too few arguments, a forgotten super().__init__(), a misspelt
    forward, layers kept in a plain list (no parameters) then a ModuleList, an LSTM's (output, state) tuple fed to a
    Linear, a layer class called on data, and a loss built with the tensors."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(1906)
    x = torch.randn(2, 4)

    class TwoInputs(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x, mask):
            return self.fc(x) * mask

    show_outcome(show, lambda: TwoInputs()(x))
    show_outcome(show, lambda: nn.Linear(4, 2)(x, x))
    show_outcome(show, lambda: nn.Sequential(nn.Linear(4, 2))(x, x))
    show_outcome(show, lambda: nn.Linear(4, 2)())
    show_outcome(show, lambda: nn.Linear(4, 2)(input=x).shape)
    show_outcome(show, lambda: nn.Linear(4, 2)([1.0, 2.0, 3.0, 4.0]))

    class Forgot(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(4, 2)

    show_outcome(show, Forgot)

    class Typo(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def foward(self, x):
            return self.fc(x)

    show_outcome(show, lambda: Typo()(x))

    class PlainList(nn.Module):
        def __init__(self, layers):
            super().__init__()
            self.layers = layers

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    plain = PlainList([nn.Linear(4, 4), nn.Linear(4, 2)])
    show(len(list(plain.parameters())), plain(x).shape)
    show_outcome(show, lambda: torch.optim.SGD(plain.parameters(), lr=0.1))
    fixed = PlainList(nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 2)]))
    show(len(list(fixed.parameters())), [n for n, _ in fixed.named_parameters()])
    show_outcome(show, lambda: nn.ModuleList([nn.Linear(4, 2)])(x))
    show_outcome(show, lambda: nn.ModuleList([nn.Linear(4, 2), F.relu]))
    show_outcome(show, lambda: nn.Sequential([nn.Linear(4, 2), nn.ReLU()]))
    lstm = nn.LSTM(4, 3, batch_first=True)
    seq = torch.randn(2, 5, 4)
    show_outcome(show, lambda: nn.Linear(3, 1)(lstm(seq)))
    out, (h, c) = lstm(seq)
    show(out.shape, h.shape, c.shape, nn.Linear(3, 1)(out[:, -1]).shape, torch.allclose(out[:, -1], h[0]))
    show_outcome(show, lambda: lstm(seq, torch.zeros(1, 2, 3)))
    show_outcome(show, lambda: lstm(seq, (torch.zeros(1, 5, 3), torch.zeros(1, 5, 3))))
    show_outcome(show, lambda: lstm(seq.transpose(1, 2)))
    show_outcome(show, lambda: nn.ReLU(x))
    show_outcome(show, lambda: nn.CrossEntropyLoss(x, torch.tensor([0, 1])))
    show_outcome(show, lambda: nn.MSELoss()(x))
    show_outcome(show, lambda: nn.Linear(x))
    show_outcome(show, lambda: nn.Conv2d(3, 8))


def _training_loop_mistakes(lib, show):
    """A training loop without zero_grad (gradients accumulating step after step), an optimizer built before the
    model is replaced (the new model never moves), a scheduler made after a warmup by hand and stepped before the
    optimizer, and model.eval
    without its call leaving dropout on."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(1907)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(3):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        show(step, round(loss.item(), 5), model.bias.grad.clone(), model.weight.grad.norm())
        opt.step()
    opt.zero_grad()
    show(model.weight.grad, model.bias.grad)
    opt.zero_grad(set_to_none=False)
    for step in range(3):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        show(step, round(loss.item(), 5), model.bias.grad.clone())

    model = nn.Linear(3, 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    before = [p.detach().clone() for p in model.parameters()]
    for _ in range(2):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    show([torch.equal(a, p) for a, p in zip(before, model.parameters())], len(opt.state), model[0].bias.grad)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    for _ in range(2):  # a warmup by hand, before the scheduler is made
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    for epoch in range(2):
        sched.step()
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
        show(epoch, sched.get_last_lr(), opt.param_groups[0]["lr"])
    late = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
    late.step()
    show(late.get_last_lr(), late.last_epoch)

    net = nn.Sequential(nn.Linear(3, 16), nn.Dropout(0.5), nn.Linear(16, 1))
    net.eval
    show(net.training, net[1].training, torch.equal(net(x), net(x)))
    net.eval()
    show(net.training, torch.equal(net(x), net(x)))
    show_outcome(show, lambda: net.train("no"))
    with torch.no_grad():
        preds = net(x)
    show(preds.requires_grad, preds.grad_fn)
    show_outcome(show, lambda: F.mse_loss(preds, y).backward())


def _requires_grad_integers(lib, show):
    """requires_grad on integer tensors (the factory, the method, the attribute, a Parameter), on a non-leaf, and
    gradients through argmax, round and a cast to long; then the float fixes."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1908)
    show_outcome(show, lambda: torch.tensor([1, 2, 3], requires_grad=True))
    show_outcome(show, lambda: torch.arange(5).requires_grad_())

    def set_attribute():
        t = torch.arange(5)
        t.requires_grad = True

    show_outcome(show, set_attribute)
    show_outcome(show, lambda: nn.Parameter(torch.tensor([1, 2])))
    show_outcome(show, lambda: torch.randint(0, 5, (3,), requires_grad=True))
    show_outcome(show, lambda: torch.zeros(2, dtype=torch.bool, requires_grad=True))
    t = torch.arange(5.0, requires_grad=True)
    show(t, torch.tensor([1, 2, 3], dtype=torch.float32, requires_grad=True), nn.Parameter(torch.tensor([1.0, 2])))
    y = t * 2
    show_outcome(show, lambda: setattr(y, "requires_grad", False))
    y.requires_grad_(True)
    show(y.requires_grad, y.is_leaf, y.detach().requires_grad_().is_leaf)
    logits = torch.randn(3, 4, requires_grad=True)
    pred = logits.argmax(dim=1)
    show(pred, pred.requires_grad, pred.grad_fn)
    show_outcome(show, lambda: pred.float().mean().backward())
    rounded = logits.round().sum()
    rounded.backward()
    show(rounded.grad_fn.name(), logits.grad)
    as_long = (logits * 10).long()
    show(as_long.requires_grad, as_long.grad_fn)
    show_outcome(show, lambda: as_long.sum().backward())
    soft = torch.softmax(logits, dim=1)
    expected = (soft * torch.arange(4.0)).sum(dim=1)
    expected.sum().backward()
    show(expected, logits.grad)
    show_outcome(show, lambda: torch.autograd.grad(pred.sum(), logits))
    show_outcome(show, lambda: torch.ones(2).backward())
    m = nn.Linear(2, 2)
    m.weight.requires_grad = False
    m(torch.randn(3, 2)).sum().backward()
    show(m.weight.grad, m.bias.grad, [p.requires_grad for p in m.parameters()])
    show_outcome(show, lambda: m.weight.requires_grad_(False).add_(1).sum())


def _indexing_and_stacking(lib, show):
    """Batching variable-length sequences: indexing out of range (plain, negative, a tensor, gather, an
    embedding), ragged lists into torch.tensor, torch.stack of different shapes and of plain lists, a list of
    tensors into torch.tensor; then pad_sequence and a mask."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1909)
    x = torch.arange(12.0).view(3, 4)
    show_outcome(show, lambda: x[3])
    show_outcome(show, lambda: x[-4])
    show_outcome(show, lambda: x[:, 4])
    show_outcome(show, lambda: x[0, 1, 2])
    show_outcome(show, lambda: x[torch.tensor([0, 3])])
    show_outcome(show, lambda: x[:, torch.tensor([1, 4])])
    show_outcome(show, lambda: x.gather(1, torch.tensor([[4], [0], [1]])))
    show_outcome(show, lambda: x.index_select(0, torch.tensor([3])))
    show_outcome(show, lambda: nn.Embedding(10, 3)(torch.tensor([3, 10])))
    show_outcome(show, lambda: x[torch.tensor([True, False])])
    show(x[1:10], x[5:], x[-1], x[torch.tensor([True, False, True])])
    sentences = [[4, 2, 7], [1, 5], [3, 3, 3, 9]]
    show_outcome(show, lambda: torch.tensor(sentences))
    show_outcome(show, lambda: torch.tensor([[1.0, 2.0], 3.0]))
    show_outcome(show, lambda: torch.tensor([1.0, [2.0, 3.0]]))
    tensors = [torch.tensor(s) for s in sentences]
    show_outcome(show, lambda: torch.stack(tensors))
    show_outcome(show, lambda: torch.stack(sentences[:1] * 2))
    show_outcome(show, lambda: torch.stack([torch.zeros(2, 3), torch.zeros(3, 2)], dim=1))
    show_outcome(show, lambda: torch.stack(torch.zeros(2, 3)))
    show_outcome(show, lambda: torch.cat(tensors, dim=1))
    show_outcome(show, lambda: torch.cat([torch.zeros(2, 3), torch.zeros(3)]))
    show_outcome(show, lambda: torch.tensor(tensors))
    show_outcome(show, lambda: torch.tensor([torch.tensor(1.0), torch.tensor(2.5)]))
    show_outcome(show, lambda: torch.tensor([torch.ones(2), torch.zeros(2)]))
    padded = nn.utils.rnn.pad_sequence(tensors, batch_first=True)
    lengths = torch.tensor([len(s) for s in sentences])
    mask = torch.arange(padded.size(1)) < lengths.unsqueeze(1)
    show(padded, lengths, mask, padded.dtype)
    show(torch.stack([torch.tensor(s[:2]) for s in sentences]), torch.cat(tensors))
    emb = nn.Embedding(10, 2, padding_idx=0)
    pooled = (emb(padded) * mask.unsqueeze(-1)).sum(1) / lengths.unsqueeze(1)
    show(pooled.shape, pooled.grad_fn.name())
    show_outcome(show, lambda: padded.view(-1, 3))
    show_outcome(show, lambda: x.expand(2, 4))
    show_outcome(show, lambda: x.unsqueeze(3))


def _state_dict_mistakes(lib, show):
    """Loading checkpoints: keys saved from DataParallel ("module." prefix), a classifier with another number of
    classes (size mismatch), extra and missing buffers, strict=False and its result; the fixes (stripping the
    prefix, dropping the head's keys); optimizers' state dicts from other parameter groups."""
    torch, nn = lib, lib.nn
    torch.manual_seed(1910)

    def make(classes, norm=True):
        layers = [nn.Linear(4, 8), nn.BatchNorm1d(8) if norm else nn.Identity(), nn.ReLU(), nn.Linear(8, classes)]
        return nn.Sequential(*layers)

    trained = make(10)
    wrapped = {"module." + k: v for k, v in trained.state_dict().items()}
    model = make(10)
    show_outcome(show, lambda: model.load_state_dict(wrapped))
    result = model.load_state_dict(wrapped, strict=False)
    show(result, len(result.missing_keys), result.unexpected_keys[:2])
    stripped = {k.removeprefix("module."): v for k, v in wrapped.items()}
    show(model.load_state_dict(stripped), torch.equal(model[0].weight, trained[0].weight))
    five = make(5)
    show_outcome(show, lambda: five.load_state_dict(trained.state_dict()))
    show_outcome(show, lambda: five.load_state_dict(trained.state_dict(), strict=False))
    backbone_only = {k: v for k, v in trained.state_dict().items() if not k.startswith("3.")}
    result = five.load_state_dict(backbone_only, strict=False)
    show(result.missing_keys, result.unexpected_keys, torch.equal(five[1].running_var, trained[1].running_var))
    plain = make(10, norm=False)
    show_outcome(show, lambda: plain.load_state_dict(trained.state_dict()))
    show_outcome(show, lambda: trained.load_state_dict(plain.state_dict()))
    show(sorted(trained.state_dict())[:5], trained.state_dict()["1.num_batches_tracked"])
    show_outcome(show, lambda: model.load_state_dict(model))
    show_outcome(show, lambda: model.load_state_dict({**stripped, "0.weight": [[0.0] * 4] * 8}))
    show_outcome(show, lambda: model.load_state_dict({**stripped, "0.bias": torch.tensor(1.0)}))
    halves = {**stripped, "0.weight": stripped["0.weight"].double()}
    model.load_state_dict(halves)
    show(model[0].weight.dtype, model[0].weight.requires_grad, type(model[0].weight).__name__)

    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(torch.randn(3, 4)).sum().backward()
    opt.step()
    other = torch.optim.SGD(five[3].parameters(), lr=0.1)
    show_outcome(show, lambda: other.load_state_dict(opt.state_dict()))
    groups = torch.optim.SGD([{"params": model[0].parameters()}, {"params": model[3].parameters()}], lr=0.1)
    show_outcome(show, lambda: groups.load_state_dict(opt.state_dict()))
    fresh = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    fresh.load_state_dict(opt.state_dict())
    show(fresh.param_groups[0]["lr"], sorted(fresh.state_dict()["state"]), fresh.state_dict()["state"][0])


def _loss_broadcasting(lib, show):
    """Regression with predictions of shape (N, 1) against targets of shape (N,): mse_loss broadcasts to (N, N)
    with a UserWarning and learns the wrong thing; then the fix. BCE of mismatched shapes, cross_entropy of an
    (N, 1) logit column, and accuracy read from torch.max's named tuple (misused, then unpacked)."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(1911)
    x = torch.randn(16, 2)
    y = x[:, 0] * 2 - x[:, 1]
    model = nn.Linear(2, 1)
    pred = model(x)
    wrong = F.mse_loss(pred, y)
    right = F.mse_loss(pred.squeeze(1), y)
    show(pred.shape, y.shape, (pred - y).shape, wrong, right)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(20):
        opt.zero_grad()
        nn.MSELoss()(model(x), y).backward()
        opt.step()
    show(model.weight.detach().clone(), model.bias.detach().clone())
    show(F.l1_loss(model(x), y), F.smooth_l1_loss(model(x), y.unsqueeze(1)))
    show_outcome(show, lambda: F.mse_loss(torch.zeros(4, 3), torch.ones(4, 2)))
    logits = torch.randn(4, 1, requires_grad=True)
    targets = torch.tensor([1.0, 0.0, 1.0, 1.0])
    show_outcome(show, lambda: F.binary_cross_entropy_with_logits(logits, targets))
    show_outcome(show, lambda: F.binary_cross_entropy(logits.sigmoid(), targets))
    show(F.binary_cross_entropy_with_logits(logits.squeeze(1), targets))
    show_outcome(show, lambda: F.cross_entropy(logits, targets.long()))
    show_outcome(show, lambda: F.cross_entropy(logits, torch.zeros(4, dtype=torch.long)))
    show_outcome(show, lambda: F.kl_div(torch.randn(2, 3).log_softmax(1), torch.full((2, 3), 1 / 3)))
    out = torch.randn(6, 3)
    labels = torch.tensor([0, 2, 1, 1, 0, 2])
    best = torch.max(out, 1)
    show(best)
    show_outcome(show, lambda: best == labels)
    show_outcome(show, lambda: best.eq(labels))
    show_outcome(show, lambda: best.item())
    show_outcome(show, lambda: -best)
    _, predicted = torch.max(out, 1)
    correct = (predicted == labels).sum()
    show(correct, correct / len(labels), correct.item() / len(labels), (predicted == labels).float().mean())
    show(correct // len(labels), f"{100 * correct / len(labels)}%", best.values.shape, best[1].dtype)


PROGRAMS = [
    _mlp_without_flatten,
    _cnn_flatten_size,
    _dtype_mismatches,
    _rnn_hidden_state_backward_twice,
    _inplace_version_errors,
    _numpy_item_logging,
    _module_call_mistakes,
    _training_loop_mistakes,
    _requires_grad_integers,
    _indexing_and_stacking,
    _state_dict_mistakes,
    _loss_broadcasting,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
