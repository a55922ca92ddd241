"""Programs of the kind PyTorch's tutorials and notes contain, run under tracegrad and torch and compared.

"Learning PyTorch with Examples" (the polynomial fit with tensors, nn, optim and a custom Module), "Build the
Neural Network", "Optimizing Model Parameters", "Save and Load the Model", "What is torch.nn really?",
"Forward-mode Automatic Differentiation", "Jacobians, Hessians, hvp, vhp" (torch.autograd.functional), the
pruning tutorial; the "Autograd mechanics", "Modules", "Serialization semantics", "Broadcasting semantics" and
"Tensor Views" notes; the tensors / data / checkpoint / clipping / lr-scheduler pages; and small models as the
tutorials build them (char-level RNN, LSTM tagger and packed sequences, a transformer language model,
nn.MultiheadAttention, DQN, seq2seq with attention, DCGAN, VAE, knowledge distillation, BiLSTM-CRF, an n-gram
language model, REINFORCE with torch.distributions). Data come from NumPy: tracegrad's random generator is not
torch's. (Programs that other tutorial tests run are not repeated here.)

Differences these programs found, now fixed:
- ``torch.accelerator`` did not exist ("Build the Neural Network" picks its device with it);
- indexing with a ``range`` (``input[range(n), target]``, the nll of "What is torch.nn really?") was refused:
  torch reads any Python sequence as an index tensor;
- ``fwAD.make_dual`` of a Parameter gave a Parameter, which ``setattr`` on the module refused: torch's dual
  (a view) is a plain Tensor;
- ``autograd.functional.jacobian``/``hessian`` with ``strategy="forward-mode"`` returned tuples where torch's
  forward-mode path returns lists;
- a Python number given for a Tensor (``(x * 2).sum()``) was never freed after backward, so a second backward
  ran instead of raising "Trying to backward through the graph a second time";
- ``ParameterDict`` prints each value's ``torch.typename`` (``torch.FloatTensor``), not its dtype;
- ``Module.to("not_a_device")`` was accepted silently instead of raising torch's device-string error;
- ``torch.nn.utils.prune`` (the pruning tutorial) did not exist;
- ``torch.save([t, t[1::2]])`` loaded two tensors that no longer shared memory ("Serialization semantics"), and
  ``copy.copy(t)`` copied the data: a tensor's pickle now keeps the array owning its memory (once) and where the
  tensor lies in it, as torch's storages do;
- a weights-only ``torch.load`` refused dtypes, devices and ``torch.Size``; its error lacked torch's bold markers;
- with ``set_printoptions(sci_mode=False)`` the column width was the one of the automatic notation.

Left: ``torch.func`` (vmap, jacrev, functional_call...), ``torch.compile``, the ``__torch_function__`` protocol,
bfloat16 and low-precision autocast are not implemented, so the tutorial parts that use them are not run here.
"""

from __future__ import annotations

import copy
import importlib
import io
import math
import string
from collections import OrderedDict

import numpy as np
import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _np(shape, seed, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def _init(lib, module, seed, scale=0.2):
    """The module's parameters, in order, drawn uniformly from NumPy."""
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.tensor(rng.uniform(-scale, scale, tuple(p.shape)), dtype=p.dtype))


def _mnist(lib, n, seed):
    """``n`` flattened 28x28 "images" and their labels."""
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.uniform(size=(n, 784)), dtype=lib.float32)
    y = lib.tensor(rng.integers(0, 10, n), dtype=lib.int64)
    return x, y


class _Custom:
    """A class a weights-only load refuses."""


def _conv_relu_dict(lib):
    return OrderedDict([("conv1", lib.nn.Conv2d(1, 2, 3)), ("relu1", lib.nn.ReLU())])


def _poly_tensors(lib, show):
    dtype = lib.float
    device = lib.device("cpu")
    x = lib.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = lib.sin(x)
    a, b, c, d = (lib.tensor(v, device=device, dtype=dtype) for v in _np(4, 0))
    learning_rate = 1e-6
    for t in range(300):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum().item()
        if t % 100 == 99:
            show(t, round(loss, 2))
        grad_y_pred = 2.0 * (y_pred - y)
        grad_a = grad_y_pred.sum()
        grad_b = (grad_y_pred * x).sum()
        grad_c = (grad_y_pred * x ** 2).sum()
        grad_d = (grad_y_pred * x ** 3).sum()
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
        c -= learning_rate * grad_c
        d -= learning_rate * grad_d
    show(f'Result: y = {a.item():.3f} + {b.item():.3f} x + {c.item():.3f} x^2 + {d.item():.3f} x^3')


def _poly_nn_and_optim(lib, show):
    x = lib.linspace(-math.pi, math.pi, 2000)
    y = lib.sin(x)
    p = lib.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    show(xx.shape, xx[:2])
    model = lib.nn.Sequential(lib.nn.Linear(3, 1), lib.nn.Flatten(0, 1))
    _init(lib, model, 1)
    show(model)
    loss_fn = lib.nn.MSELoss(reduction='sum')
    learning_rate = 1e-6
    for t in range(100):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        if t % 50 == 49:
            show(t, loss)
        model.zero_grad()
        loss.backward()
        with lib.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad
    linear_layer = model[0]
    show(f'Result: y = {linear_layer.bias.item():.4f} + {linear_layer.weight[:, 0].item():.4f} x + '
         f'{linear_layer.weight[:, 1].item():.4f} x^2 + {linear_layer.weight[:, 2].item():.4f} x^3')
    show(linear_layer.weight[:, 0], linear_layer.weight.grad)
    optimizer = lib.optim.RMSprop(model.parameters(), lr=1e-3)
    show(optimizer)
    for t in range(40):
        loss = loss_fn(model(xx), y)
        if t % 20 == 19:
            show(t, loss)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    show(list(model.state_dict()), *model.state_dict().values())
    show(optimizer.state_dict()["state"][0]["square_avg"], optimizer.state_dict()["param_groups"])


def _poly_custom_module(lib, show):
    class Polynomial3(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Parameter(lib.tensor(0.1))
            self.b = lib.nn.Parameter(lib.tensor(-0.2))
            self.c = lib.nn.Parameter(lib.tensor(0.3))
            self.d = lib.nn.Parameter(lib.tensor(0.05))

        def forward(self, x):
            return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

        def string(self):
            return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3'

    x = lib.linspace(-math.pi, math.pi, 2000)
    y = lib.sin(x)
    model = Polynomial3()
    show(model, list(model.named_parameters()))
    criterion = lib.nn.MSELoss(reduction='sum')
    optimizer = lib.optim.SGD(model.parameters(), lr=1e-6)
    for t in range(150):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        if t % 50 == 49:
            show(t, loss)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    show(f'Result: {model.string()}'[:20], model.a, model.d.grad)


def _build_the_network(lib, show):
    nn = lib.nn
    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(28*28, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
        def forward(self, x):
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits
    device = lib.accelerator.current_accelerator().type if lib.accelerator.is_available() else "cpu"
    show(f"Using {device} device")
    acc = lib.accelerator
    show(acc.device_count(), acc.current_accelerator(), acc.current_accelerator(check_available=True))
    for needs_device in (acc.current_device_index, acc.synchronize, lambda: acc.set_device_index(0)):
        show_outcome(show, needs_device)
    model = NeuralNetwork().to(device)
    _init(lib, model, 2, 0.05)
    show(model)
    X = lib.tensor(np.random.default_rng(3).uniform(size=(1, 28, 28)), dtype=lib.float32, device=device)
    logits = model(X)
    pred_probab = nn.Softmax(dim=1)(logits)
    y_pred = pred_probab.argmax(1)
    show(f"Predicted class: {y_pred}")
    input_image = lib.tensor(np.random.default_rng(4).uniform(size=(3, 28, 28)), dtype=lib.float32)
    show(input_image.size())
    flat_image = nn.Flatten()(input_image)
    show(flat_image.size())
    layer1 = nn.Linear(in_features=28*28, out_features=20)
    _init(lib, layer1, 5, 0.05)
    hidden1 = layer1(flat_image)
    show(hidden1.size())
    show(f"Before ReLU: {hidden1}\n\n")
    hidden1 = nn.ReLU()(hidden1)
    show(f"After ReLU: {hidden1}")
    seq_modules = nn.Sequential(nn.Flatten(), layer1, nn.ReLU(), nn.Linear(20, 10))
    _init(lib, seq_modules[3], 6)
    logits = seq_modules(input_image)
    softmax = nn.Softmax(dim=1)
    pred_probab = softmax(logits)
    show(pred_probab)
    show(f"Model structure: {model}\n\n")
    for name, param in model.named_parameters():
        show(f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n")


def _optimizing_parameters(lib, show):
    nn = lib.nn
    from_np = lambda a, dt: lib.tensor(a, dtype=dt)
    rng = np.random.default_rng(7)
    Xtr = from_np(rng.uniform(size=(256, 1, 8, 8)), lib.float32)
    ytr = from_np(rng.integers(0, 10, 256), lib.int64)
    Xte = from_np(rng.uniform(size=(100, 1, 8, 8)), lib.float32)
    yte = from_np(rng.integers(0, 10, 100), lib.int64)
    train_dataloader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(Xtr, ytr), batch_size=64)
    test_dataloader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(Xte, yte), batch_size=64)
    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                                                   nn.Linear(32, 10))
        def forward(self, x):
            return self.linear_relu_stack(self.flatten(x))
    model = NeuralNetwork()
    _init(lib, model, 8)
    learning_rate, batch_size, epochs = 1e-1, 64, 3
    loss_fn = nn.CrossEntropyLoss()
    optimizer = lib.optim.SGD(model.parameters(), lr=learning_rate)

    def train_loop(dataloader, model, loss_fn, optimizer):
        size = len(dataloader.dataset)
        model.train()
        for batch, (X, y) in enumerate(dataloader):
            pred = model(X)
            loss = loss_fn(pred, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if batch % 2 == 0:
                loss, current = loss.item(), batch * batch_size + len(X)
                show(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")

    def test_loop(dataloader, model, loss_fn):
        model.eval()
        size = len(dataloader.dataset)
        num_batches = len(dataloader)
        test_loss, correct = 0, 0
        with lib.no_grad():
            for X, y in dataloader:
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(lib.float).sum().item()
        test_loss /= num_batches
        correct /= size
        show(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")

    for t in range(epochs):
        show(f"Epoch {t+1}\n-------------------------------")
        train_loop(train_dataloader, model, loss_fn, optimizer)
        test_loop(test_dataloader, model, loss_fn)
    show("Done!")
    show(optimizer.param_groups[0]["params"][0].grad)


def _save_and_load(lib, show):
    import io
    import os
    import tempfile
    nn = lib.nn
    model = nn.Sequential(nn.Conv2d(1, 3, 3, bias=False), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))
    _init(lib, model, 9)
    x = lib.tensor(_np((4, 1, 4, 4), 10), dtype=lib.float32)
    model(x).sum().backward()
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    opt.step()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model_weights.pth")
        lib.save(model.state_dict(), path)
        model2 = nn.Sequential(nn.Conv2d(1, 3, 3, bias=False), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(),
                               nn.Linear(12, 2))
        show(model2.load_state_dict(lib.load(path, weights_only=True)))
        model2.eval()
        show(model2(x), list(model2.state_dict().keys()))
        show(model2[1].running_mean, model2[1].num_batches_tracked)
        ckpt = os.path.join(d, "ckpt.tar")
        lib.save({'epoch': 5, 'model_state_dict': model.state_dict(), 'optimizer_state_dict': opt.state_dict(),
                  'loss': lib.tensor(0.25)}, ckpt)
        checkpoint = lib.load(ckpt, weights_only=True)
        opt2 = lib.optim.Adam(model2.parameters(), lr=0.5)
        opt2.load_state_dict(checkpoint['optimizer_state_dict'])
        show(checkpoint['epoch'], checkpoint['loss'], opt2)
        show(opt2.state_dict()['state'][0]['exp_avg'], opt2.state_dict()['state'][0]['step'])
        buf = io.BytesIO()
        lib.save(model, buf)
        buf.seek(0)
        m3 = lib.load(buf, weights_only=False)
        show(m3, m3(x))
        show(model2.load_state_dict({"0.weight": lib.zeros(3, 1, 3, 3)}, strict=False))
        model2.load_state_dict({"0.weight": lib.zeros(3, 1, 3, 3)})


def _nn_really(lib, show):
    torch = lib
    x_train, y_train = _mnist(lib, 300, 11)
    x_valid, y_valid = _mnist(lib, 100, 12)
    n, c = x_train.shape
    show(x_train.shape, y_train.min(), y_train.max())
    weights = torch.tensor(_np((784, 10), 13), dtype=torch.float32) / math.sqrt(784)
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)
    show(weights.is_leaf, bias)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    bs = 64
    xb = x_train[0:bs]
    preds = model(xb)
    show(preds[0], preds.shape)

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    loss_func = nll
    yb = y_train[0:bs]
    show(loss_func(preds, yb))

    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()

    show(accuracy(preds, yb))
    lr, epochs = 0.5, 2
    for _epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
    show(loss_func(model(xb), yb), accuracy(model(xb), yb))
    F = lib.nn.functional
    loss_func = F.cross_entropy

    def model(xb):
        return xb @ weights + bias
    show(loss_func(model(xb), yb), accuracy(model(xb), yb))

    nn = lib.nn

    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.Parameter(torch.tensor(_np((784, 10), 14), dtype=torch.float32) / math.sqrt(784))
            self.bias = nn.Parameter(torch.zeros(10))

        def forward(self, xb):
            return xb @ self.weights + self.bias

    model = Mnist_Logistic()
    show(loss_func(model(xb), yb))

    def fit():
        for _epoch in range(epochs):
            for i in range((n - 1) // bs + 1):
                start_i = i * bs
                end_i = start_i + bs
                xb = x_train[start_i:end_i]
                yb = y_train[start_i:end_i]
                pred = model(xb)
                loss = loss_func(pred, yb)
                loss.backward()
                with torch.no_grad():
                    for p in model.parameters():
                        p -= p.grad * lr
                    model.zero_grad()
    fit()
    show(loss_func(model(xb), yb), model.weights.grad)

    TensorDataset, DataLoader = lib.utils.data.TensorDataset, lib.utils.data.DataLoader
    optim = lib.optim

    class Mnist_Logistic2(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(784, 10)

        def forward(self, xb):
            return self.lin(xb)

    def get_model():
        model = Mnist_Logistic2()
        _init(lib, model, 15, 0.03)
        return model, optim.SGD(model.parameters(), lr=lr)

    train_ds = TensorDataset(x_train, y_train)
    show(len(train_ds), train_ds[0][1], train_ds[0:2][1])
    valid_ds = TensorDataset(x_valid, y_valid)
    train_dl = DataLoader(train_ds, batch_size=bs)
    valid_dl = DataLoader(valid_ds, batch_size=bs * 2)

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
        return loss.item(), len(xb)

    def fit2(epochs, model, loss_func, opt, train_dl, valid_dl):
        for epoch in range(epochs):
            model.train()
            for xb, yb in train_dl:
                loss_batch(model, loss_func, xb, yb, opt)
            model.eval()
            with torch.no_grad():
                losses, nums = zip(*[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl])
            val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
            show(epoch, lib.tensor(val_loss))

    model, opt = get_model()
    fit2(epochs, model, loss_func, opt, train_dl, valid_dl)

    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    def preprocess(x):
        return x.view(-1, 1, 28, 28)

    model = nn.Sequential(
        Lambda(preprocess),
        nn.Conv2d(1, 4, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(4, 4, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(4, 10, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    _init(lib, model, 16, 0.3)
    show(model)
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    fit2(epochs, model, loss_func, opt, train_dl, valid_dl)

    class WrappedDataLoader:
        def __init__(self, dl, func):
            self.dl = dl
            self.func = func

        def __len__(self):
            return len(self.dl)

        def __iter__(self):
            for b in self.dl:
                yield (self.func(*b))

    wdl = WrappedDataLoader(valid_dl, lambda x, y: (x.view(-1, 1, 28, 28).to("cpu"), y.to("cpu")))
    show(len(wdl), [tuple(b[0].shape) for b in wdl])
    show(opt.state_dict()["state"][0]["momentum_buffer"][0, 0])


def _forward_ad(lib, show):
    import_fwAD = lib.autograd.forward_ad
    fwAD = import_fwAD
    primal = lib.tensor(_np((10, 10), 20), dtype=lib.float32)
    tangent = lib.tensor(_np((10, 10), 21), dtype=lib.float32)

    def fn(x, y):
        return x ** 2 + y ** 2

    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        show(fwAD.unpack_dual(dual_input).tangent is tangent)
        dual_input_alt = fwAD.make_dual(primal, tangent.T)
        show(fwAD.unpack_dual(dual_input_alt).tangent is tangent)
        plain_tensor = lib.tensor(_np((10, 10), 22), dtype=lib.float32)
        dual_output = fn(dual_input, plain_tensor)
        jvp = fwAD.unpack_dual(dual_output).tangent
        show(jvp, fwAD.unpack_dual(dual_output))
        show(type(fwAD.unpack_dual(dual_output)).__name__, dual_output.grad_fn)
    show(fwAD.unpack_dual(dual_output).tangent)

    nn = lib.nn
    model = nn.Linear(5, 5)
    _init(lib, model, 23)
    input = lib.tensor(_np((16, 5), 24), dtype=lib.float32)
    params = {name: p for name, p in model.named_parameters()}
    tangents = {name: lib.tensor(_np(p.shape, 25), dtype=lib.float32) for name, p in params.items()}
    with fwAD.dual_level():
        for name, p in params.items():
            delattr(model, name)
            setattr(model, name, fwAD.make_dual(p, tangents[name]))
        out = model(input)
        jvp = fwAD.unpack_dual(out).tangent
    show(jvp)

    functional_call = lib.nn.utils.stateless.functional_call
    model = nn.Linear(5, 5)
    _init(lib, model, 26)
    dual_params = {}
    with fwAD.dual_level():
        for name, p in params.items():
            dual_params[name] = fwAD.make_dual(p, tangents[name])
        out = functional_call(model, dual_params, input)
        jvp = fwAD.unpack_dual(out).tangent
    show(jvp)

    class Fn(lib.autograd.Function):
        @staticmethod
        def forward(ctx, foo):
            result = lib.exp(foo)
            ctx.result = result
            return result

        @staticmethod
        def jvp(ctx, gI):
            gO = gI * ctx.result
            del ctx.result
            return gO

    fn = Fn.apply
    primal = lib.tensor(_np(10, 27), dtype=lib.double, requires_grad=True)
    tangent = lib.tensor(_np(10, 28), dtype=lib.double)
    with fwAD.dual_level():
        dual_input = fwAD.make_dual(primal, tangent)
        dual_output = fn(dual_input)
        jvp = fwAD.unpack_dual(dual_output).tangent
        show(jvp, dual_output)
    show(lib.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True, check_backward_ad=False,
                                check_undefined_grad=False, check_batched_grad=False))

    with fwAD.dual_level():
        fwAD.make_dual(lib.ones(3), lib.ones(3))
        try:
            fwAD.make_dual(lib.ones(3), lib.ones(4))
        except Exception as e:
            show(type(e).__name__, e)
    try:
        fwAD.make_dual(lib.ones(3), lib.ones(3))
    except Exception as e:
        show(type(e).__name__, e)


def _jacobians_hessians(lib, show):
    from_np = lambda a: lib.tensor(a, dtype=lib.float32)
    F = lib.nn.functional
    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()
    D = 4
    weight = from_np(_np((D, D), 30))
    bias = from_np(_np(D, 31))
    x = from_np(_np(D, 32))
    def compute_jac(xp):
        jacobian_rows = [lib.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                         for vec in unit_vectors]
        return lib.stack(jacobian_rows)
    xp = x.clone().requires_grad_()
    unit_vectors = lib.eye(D)
    jacobian = compute_jac(xp)
    show(jacobian.shape, jacobian[0])
    AF = lib.autograd.functional
    def pow_reducer(x):
        return x.pow(3).sum()
    inputs = from_np(_np((2, 2), 36))
    v = lib.ones(2, 2)
    show(AF.vjp(pow_reducer, inputs))
    show(AF.jvp(pow_reducer, inputs, v))
    show(AF.hvp(pow_reducer, inputs, v))
    show(AF.vhp(pow_reducer, inputs, v))
    show(AF.hessian(pow_reducer, inputs))
    def exp_adder(x, y):
        return 2 * x.exp() + 3 * y
    show(AF.jacobian(exp_adder, (from_np(_np(2, 37)), from_np(_np(2, 38)))))
    show(AF.jacobian(exp_adder, (from_np(_np(2, 37)), from_np(_np(2, 38))), vectorize=True, strategy="forward-mode"))
    show(AF.jacobian(lambda x: x.exp(), from_np(_np((2, 2), 39)), create_graph=True))
    try:
        AF.vjp(pow_reducer, inputs, lib.ones(3))
    except Exception as e:
        show(type(e).__name__, e)
    try:
        AF.hessian(lambda x: x * 2, inputs)
    except Exception as e:
        show(type(e).__name__, e)


def _autograd_mechanics(lib, show):
    torch, nn = lib, lib.nn
    x = torch.tensor(_np(5, 120), dtype=torch.float32, requires_grad=True)
    y = x.exp()
    show(y.grad_fn._saved_result is y if hasattr(y.grad_fn, "_saved_result") else None)
    show(y.grad_fn._saved_result.equal(y))
    a = x.pow(2)
    show(a.grad_fn._saved_self is x, a.grad_fn._saved_exponent)
    # in-place correctness checks
    b = x.sigmoid()
    c = b * 2
    b.add_(1)
    show_outcome(show, lambda: c.sum().backward())
    d = x.exp()
    d.mul_(2)
    show_outcome(show, lambda: d.sum().backward())
    show_outcome(show, lambda: x.add_(1))
    with torch.no_grad():
        x.add_(0)
    show(x._version)
    e = (x * 2).sum()
    e.backward()
    show_outcome(show, lambda: e.backward())
    e = (x * x).sum()
    e.backward(retain_graph=True)
    e.backward()
    show(x.grad)
    nl = x * 2
    show(nl.grad)
    show_outcome(show, lambda: nl.requires_grad_(False))
    show(nl.is_leaf, x.is_leaf, torch.ones(2).is_leaf)
    # freezing for finetuning
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
    _init(lib, model, 121)
    for param in model.parameters():
        param.requires_grad = False
    model[2] = nn.Linear(6, 2)
    _init(lib, model[2], 122)
    optimizer = torch.optim.SGD(model[2].parameters(), lr=1e-2, momentum=0.9)
    inp = torch.tensor(_np((3, 4), 123), dtype=torch.float32)
    out = model(inp)
    show(out.requires_grad, model[0](inp).requires_grad, [p.requires_grad for p in model.parameters()])
    out.sum().backward()
    optimizer.step()
    show(model[0].weight.grad, model[2].weight)
    with torch.no_grad():
        show(model(inp).requires_grad)
    with torch.inference_mode():
        it = model[2](torch.ones(1, 6))
    show(it.is_inference(), it.requires_grad)
    show_outcome(show, lambda: it.add_(1))
    show_outcome(show, lambda: (it * torch.ones(1, 2, requires_grad=True)).sum().backward())
    @torch.no_grad()
    def doubler(t):
        return t * 2
    show(doubler(x).requires_grad)
    @torch.enable_grad()
    def tripler(t):
        return t * 3
    with torch.no_grad():
        show(tripler(x).requires_grad)
    with torch.set_grad_enabled(False):
        show((x * 2).requires_grad, torch.is_grad_enabled())
    torch.set_grad_enabled(True)
    # complex autograd: grad is conj Wirtinger
    z = torch.tensor([1 + 2j, -0.5 + 1j], requires_grad=True)
    (z * z.conj()).real.sum().backward()
    show(z.grad)
    zz = torch.tensor([1 + 1j], requires_grad=True)
    show_outcome(show, lambda: (zz * 2).backward())
    # .grad of non-leaf warns
    w = x * 3
    show(w.grad)
    w.retain_grad()
    w.sum().backward()
    show(w.grad, w.retains_grad)
    show_outcome(show, lambda: torch.autograd.grad((x * 2).sum(), [torch.ones(2, requires_grad=True)]))
    show(torch.autograd.grad((x * 2).sum(), [x, torch.ones(2, requires_grad=True)], allow_unused=True,
                             materialize_grads=True))
    show_outcome(show, lambda: torch.autograd.backward(torch.ones(2)))
    show_outcome(show, lambda: (x * 2).backward())
    show_outcome(show, lambda: torch.autograd.grad(x.sum(), x, grad_outputs=torch.ones(2)))


def _optimizers(lib, show):
    torch, nn = lib, lib.nn
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    _init(lib, model, 130)
    x = torch.tensor(_np((8, 3), 131), dtype=torch.float32)
    y = torch.tensor(_np((8, 2), 132), dtype=torch.float32)
    def train(opt, steps=5, closure_opt=False):
        for _ in range(steps):
            def closure():
                opt.zero_grad()
                loss = nn.functional.mse_loss(model(x), y)
                loss.backward()
                return loss
            if closure_opt:
                loss = opt.step(closure)
            else:
                loss = closure()
                opt.step()
        return loss
    show(train(torch.optim.SGD([{'params': model[0].parameters()},
                                {'params': model[2].parameters(), 'lr': 1e-3}], lr=1e-2, momentum=0.9,
                               nesterov=True, weight_decay=1e-4)))
    for name, make in [("Adam", lambda p: torch.optim.Adam(p, lr=1e-2, amsgrad=True)),
                       ("AdamW", lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1)),
                       ("Adagrad", lambda p: torch.optim.Adagrad(p, lr=0.1, lr_decay=0.01)),
                       ("Adadelta", lambda p: torch.optim.Adadelta(p)),
                       ("RMSprop", lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True)),
                       ("Adamax", lambda p: torch.optim.Adamax(p)),
                       ("NAdam", lambda p: torch.optim.NAdam(p, lr=1e-2)),
                       ("RAdam", lambda p: torch.optim.RAdam(p, lr=1e-2, decoupled_weight_decay=True,
                                                             weight_decay=0.1)),
                       ("Rprop", lambda p: torch.optim.Rprop(p)),
                       ("ASGD", lambda p: torch.optim.ASGD(p, lr=0.01))]:
        opt = make(model.parameters())
        show(name, train(opt), model[2].bias)
    opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=5)
    show("LBFGS", train(opt, steps=2, closure_opt=True), model[2].bias)
    opt = torch.optim.Adam(model[0].parameters(), lr=1e-3)
    opt.add_param_group({'params': model[2].parameters(), 'lr': 1e-2, 'betas': (0.8, 0.9)})
    show(opt)
    show([g['lr'] for g in opt.param_groups], opt.param_groups[1]['betas'])
    train(opt, 2)
    sd = opt.state_dict()
    show(sorted(sd['state'].keys()), sd['state'][3]['exp_avg_sq'], sd['param_groups'][1])
    opt.zero_grad(set_to_none=False)
    show(model[0].weight.grad)
    opt.zero_grad()
    show(model[0].weight.grad)
    show_outcome(show, lambda: opt.add_param_group({'params': model[2].parameters()}))
    show_outcome(show, lambda: torch.optim.SGD(model.parameters(), lr=-1))
    show_outcome(show, lambda: torch.optim.Adam(model.parameters(), betas=(1.0, 0.9)))
    show_outcome(show, lambda: torch.optim.SGD([], lr=0.1))
    show_outcome(show, lambda: torch.optim.SGD(model.parameters(), lr=0.1, nesterov=True))
    show_outcome(show, lambda: torch.optim.SGD(torch.ones(2, requires_grad=True), lr=0.1))
    show_outcome(show, lambda: torch.optim.SGD([torch.ones(2)], lr=0.1))
    show_outcome(show, lambda: torch.optim.SGD([x * 1 for x in [torch.ones(2, requires_grad=True)]], lr=0.1))
    opt2 = torch.optim.Adam(model.parameters())
    show_outcome(show, lambda: opt2.load_state_dict(sd))
    calls = []
    opt3 = torch.optim.SGD(model.parameters(), lr=0.1)
    opt3.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt3.register_step_post_hook(lambda o, a, k: calls.append("post"))
    train(opt3, 1)
    show(calls)


def _tensors_tutorial(lib, show):
    torch = lib
    data = [[1, 2], [3, 4]]
    x_data = torch.tensor(data)
    np_array = np.array(data)
    x_np = torch.from_numpy(np_array)
    show(x_data, x_np, x_np.dtype)
    x_ones = torch.ones_like(x_data)
    show(f"Ones Tensor: \n {x_ones} \n")
    x_rand = torch.rand_like(x_data, dtype=torch.float)
    show(x_rand.shape, x_rand.dtype)
    shape = (2, 3,)
    show(f"Ones Tensor: \n {torch.ones(shape)} \n", f"Zeros Tensor: \n {torch.zeros(shape)}")
    tensor = torch.tensor(_np((3, 4), 70), dtype=torch.float32)
    show(f"Shape of tensor: {tensor.shape}", f"Datatype of tensor: {tensor.dtype}",
         f"Device tensor is stored on: {tensor.device}")
    tensor = torch.ones(4, 4)
    show(f"First row: {tensor[0]}", f"First column: {tensor[:, 0]}", f"Last column: {tensor[..., -1]}")
    tensor[:, 1] = 0
    show(tensor)
    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    show(t1)
    y1 = tensor @ tensor.T
    show(tensor.matmul(tensor.T))
    y3 = torch.rand_like(y1)
    torch.matmul(tensor, tensor.T, out=y3)
    show(tensor * tensor, tensor.mul(tensor))
    z3 = torch.rand_like(tensor)
    torch.mul(tensor, tensor, out=z3)
    show(y1, y3, z3)
    agg = tensor.sum()
    agg_item = agg.item()
    show(agg_item, type(agg_item))
    show(f"{tensor} \n")
    tensor.add_(5)
    show(tensor)
    t = torch.ones(5)
    show(f"t: {t}")
    n = t.numpy()
    show(f"n: {n}")
    t.add_(1)
    show(f"t: {t}", f"n: {n}")
    n = np.ones(5)
    t = torch.from_numpy(n)
    np.add(n, 1, out=n)
    show(f"t: {t}", f"n: {n}")
    show(torch.tensor([[0.1234567, 123456.7], [1e-5, -3.0]]), torch.tensor([1e10, 1.0]), torch.arange(12).view(3, 4))
    show(torch.tensor([True, False]), torch.tensor([1.5, float('nan'), float('inf')], dtype=torch.float64))
    show(repr(torch.zeros(2, 0)), repr(torch.tensor(3.5)), torch.tensor([1, 2], dtype=torch.int8))
    show(torch.tensor(_np((3, 3), 71)).to(torch.float16), torch.tensor([1 + 2j, 3 - 1j]))
    show(torch.arange(1000.).view(10, 100))


def _datasets_and_loaders(lib, show):
    torch = lib
    from_np = lambda a, dt=None: torch.tensor(a, dtype=dt)
    Dataset, DataLoader = torch.utils.data.Dataset, torch.utils.data.DataLoader

    class CustomImageDataset(Dataset):
        def __init__(self, n, transform=None, target_transform=None):
            rng = np.random.default_rng(80)
            self.images = rng.uniform(size=(n, 1, 4, 4)).astype(np.float32)
            self.labels = rng.integers(0, 3, n)
            self.transform = transform
            self.target_transform = target_transform
        def __len__(self):
            return len(self.labels)
        def __getitem__(self, idx):
            image = torch.from_numpy(self.images[idx])
            label = int(self.labels[idx])
            if self.transform:
                image = self.transform(image)
            if self.target_transform:
                label = self.target_transform(label)
            return image, label

    one_hot = lambda y: torch.zeros(3, dtype=torch.float).scatter_(0, torch.tensor(y), value=1)
    ds = CustomImageDataset(10, transform=lambda im: im * 2, target_transform=one_hot)
    show(len(ds), ds[3])
    loader = DataLoader(ds, batch_size=4)
    train_features, train_labels = next(iter(loader))
    show(f"Feature batch shape: {train_features.size()}", f"Labels batch shape: {train_labels.size()}")
    show(len(loader), [tuple(x.shape) for x, _ in loader])
    show(len(DataLoader(ds, batch_size=4, drop_last=True)))
    show(next(iter(DataLoader(CustomImageDataset(5), batch_size=5)))[1])
    class DictDS(Dataset):
        def __len__(self):
            return 3
        def __getitem__(self, i):
            return {"x": np.full(2, i, dtype=np.float32), "y": i, "name": f"s{i}", "pair": (i, float(i))}
    batch = next(iter(DataLoader(DictDS(), batch_size=3)))
    show(batch)
    show(torch.utils.data.default_collate([np.array([1.0, 2.0]), np.array([3.0, 4.0])]))
    X = from_np(_np((10, 2), 81), torch.float32)
    Y = from_np(np.arange(10))
    full = torch.utils.data.TensorDataset(X, Y)
    gen = torch.Generator().manual_seed(42)
    train_set, val_set = torch.utils.data.random_split(full, [0.7, 0.3], generator=gen)
    show(len(train_set), len(val_set), type(train_set).__name__)
    a, b, c = torch.utils.data.random_split(range(10), [3, 3, 4])
    show(len(a), len(b), len(c), sorted(list(a) + list(b) + list(c)))
    try:
        torch.utils.data.random_split(full, [3, 3])
    except Exception as e:
        show(type(e).__name__, e)
    sub = torch.utils.data.Subset(full, [1, 3, 5])
    show(len(sub), sub[1])
    cat = torch.utils.data.ConcatDataset([full, sub])
    show(len(cat), cat[11], cat.cumulative_sizes)
    sampler = torch.utils.data.SequentialSampler(range(5))
    show(list(sampler), list(torch.utils.data.BatchSampler(sampler, batch_size=2, drop_last=False)))
    loader = DataLoader(full, batch_sampler=torch.utils.data.BatchSampler(range(10), 4, True))
    show([y for _, y in loader])
    try:
        DataLoader(full, batch_size=2, shuffle=True, sampler=sampler)
    except Exception as e:
        show(type(e).__name__, e)
    try:
        full[10]
    except Exception as e:
        show(type(e).__name__, e)
    try:
        torch.utils.data.TensorDataset(X, Y[:5])
    except Exception as e:
        show(type(e).__name__, e)
    class It(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(7))
    show([b for b in DataLoader(It(), batch_size=3)])
    wl = DataLoader(full, batch_size=4, collate_fn=lambda b: len(b))
    show(list(wl))


def _grad_clipping(lib, show):
    torch, nn = lib, lib.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    _init(lib, model, 90, 1.0)
    x = torch.tensor(_np((6, 4), 91) * 5, dtype=torch.float32)
    y = torch.tensor(_np((6, 2), 92), dtype=torch.float32)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    show(total, model[0].weight.grad)
    show(nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5, norm_type=float('inf')))
    show(nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5, norm_type=1))
    nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)
    show(model[2].weight.grad)
    show(nn.utils.get_total_norm([p.grad for p in model.parameters()]))
    grads = [p.grad for p in model.parameters()]
    norm = nn.utils.get_total_norm(grads, norm_type=2.0)
    nn.utils.clip_grads_with_norm_(model.parameters(), 0.005, norm)
    show(model[0].bias.grad)
    model[0].bias.grad[0] = float('nan')
    show(nn.utils.clip_grad_norm_(model.parameters(), 1.0))
    try:
        nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
    except Exception as e:
        show(type(e).__name__, e)
    show(nn.utils.clip_grad_norm_([], 1.0), nn.utils.clip_grad_norm_(torch.ones(2, requires_grad=True), 1.0))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for p in model.parameters():
        p.grad = None
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    scaler_norm = nn.utils.clip_grad_norm_(model.parameters(), 2.0, foreach=True)
    opt.step()
    show(scaler_norm, model[2].bias)
    p = nn.utils.parameters_to_vector(model.parameters())
    show(p.shape, p[:5])
    nn.utils.vector_to_parameters(p * 0.5, model.parameters())
    show(model[0].weight[0])


def _lr_schedulers(lib, show):
    torch, nn = lib, lib.nn
    sched = torch.optim.lr_scheduler
    def fresh(lr=0.1, **kw):
        model = nn.Linear(2, 1)
        return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, **kw)
    def run(name, make, steps=8, metric=None):
        opt = fresh()
        s = make(opt)
        lrs = []
        for epoch in range(steps):
            opt.step()
            if metric is None:
                s.step()
            else:
                s.step(metric[epoch])
            lrs.append(round(opt.param_groups[0]["lr"], 8))
        show(name, lrs, s.get_last_lr(), getattr(s, "last_epoch", None))
        return s
    run("step", lambda o: sched.StepLR(o, step_size=3, gamma=0.5))
    run("multistep", lambda o: sched.MultiStepLR(o, milestones=[2, 5], gamma=0.1))
    run("exp", lambda o: sched.ExponentialLR(o, gamma=0.9))
    run("cos", lambda o: sched.CosineAnnealingLR(o, T_max=4, eta_min=0.01))
    run("lambda", lambda o: sched.LambdaLR(o, lr_lambda=lambda epoch: 0.95 ** epoch))
    run("mult", lambda o: sched.MultiplicativeLR(o, lr_lambda=lambda epoch: 0.9))
    run("linear", lambda o: sched.LinearLR(o, start_factor=0.25, total_iters=4))
    run("const", lambda o: sched.ConstantLR(o, factor=0.5, total_iters=3))
    run("poly", lambda o: sched.PolynomialLR(o, total_iters=5, power=2.0))
    run("warm", lambda o: sched.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.001))
    run("onecycle", lambda o: sched.OneCycleLR(o, max_lr=1.0, total_steps=10))
    run("cyclic", lambda o: sched.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2))
    run("seq", lambda o: sched.SequentialLR(o, [sched.LinearLR(o, 0.1, total_iters=2),
                                                sched.ExponentialLR(o, 0.5)], milestones=[3]))
    run("chain", lambda o: sched.ChainedScheduler([sched.ConstantLR(o, 0.5, total_iters=2),
                                                   sched.ExponentialLR(o, 0.9)]))
    s = run("plateau", lambda o: sched.ReduceLROnPlateau(o, mode="min", factor=0.5, patience=1),
            metric=[1.0, 0.9, 0.95, 0.96, 0.97, 0.5, 0.6, 0.7])
    show(s.num_bad_epochs, s.best)
    opt = fresh()
    s = sched.StepLR(opt, 2)
    show(s.state_dict())
    s.step()
    opt2 = fresh()
    s2 = sched.StepLR(opt2, 2)
    s2.load_state_dict(s.state_dict())
    show(s2.last_epoch, s2.get_last_lr())
    try:
        sched.StepLR(fresh(), 2, last_epoch=3)
    except Exception as e:
        show(type(e).__name__, e)
    try:
        sched.OneCycleLR(fresh(), max_lr=1.0)
    except Exception as e:
        show(type(e).__name__, e)
    opt = fresh()
    s = sched.ExponentialLR(opt, 0.5)
    s.step()
    show(opt.param_groups[0]["lr"], opt.param_groups[0]["initial_lr"])


def _module_hooks_features(lib, show):
    torch, nn = lib, lib.nn
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8, 3))
    _init(lib, model, 100)
    activation = {}
    def get_activation(name):
        def hook(model, input, output):
            activation[name] = output.detach()
        return hook
    h1 = model[0].register_forward_hook(get_activation('conv'))
    log = []
    def pre(m, args):
        log.append(("pre", type(m).__name__, tuple(args[0].shape)))
        return (args[0] * 2,)
    def fwd_kw(m, args, kwargs, out):
        log.append(("fwd_kw", sorted(kwargs)))
    def bw(m, gin, gout):
        log.append(("bw", type(m).__name__, [None if g is None else tuple(g.shape) for g in gin],
                    [tuple(g.shape) for g in gout]))
    def bw_pre(m, gout):
        log.append(("bw_pre", type(m).__name__))
    h2 = model[3].register_forward_pre_hook(pre)
    h3 = model.register_forward_hook(fwd_kw, with_kwargs=True)
    handles = [m.register_full_backward_hook(bw) for m in model]
    handles += [m.register_full_backward_pre_hook(bw_pre) for m in model]
    x = torch.tensor(_np((2, 1, 4, 4), 101), dtype=torch.float32, requires_grad=True)
    out = model(x)
    show(activation['conv'], out)
    out.sum().backward()
    for entry in log:
        show(entry)
    show(h1, type(h1).__name__, h1.id < h2.id)
    for h in [h1, h2, h3] + handles:
        h.remove()
    log.clear()
    model(x).sum().backward()
    show(log, x.grad)
    def replace_out(m, inp, out):
        return out + 1
    model.register_forward_hook(replace_out, prepend=True)
    show(model(x))
    grads = {}
    def save_grad(name):
        def hook(grad):
            grads[name] = grad
        return hook
    y = model[0](x)
    y.register_hook(save_grad('y'))
    y.retain_grad()
    z = (y ** 2).sum()
    z.backward()
    show(grads['y'], y.grad is not None, torch.equal(grads['y'], y.grad))
    sd_log = []
    model.register_state_dict_post_hook(lambda m, sd, prefix, local_metadata: sd_log.append(len(sd)))
    model.state_dict()
    show(sd_log)
    show(model._forward_hooks.keys().__len__(), list(model[3]._forward_pre_hooks))


def _checkpointing(lib, show):
    torch, nn = lib, lib.nn
    cp = torch.utils.checkpoint
    model = nn.Sequential(*[nn.Sequential(nn.Linear(6, 6), nn.Tanh()) for _ in range(4)])
    _init(lib, model, 110)
    x = torch.tensor(_np((3, 6), 111), dtype=torch.float32, requires_grad=True)
    ref = model(x).pow(2).sum()
    ref.backward()
    gref = x.grad.clone()
    wref = model[0][0].weight.grad.clone()
    model.zero_grad()
    x.grad = None
    calls = []
    def block(inp):
        calls.append(torch.is_grad_enabled())
        return model[1](model[0](inp))
    h = cp.checkpoint(block, x, use_reentrant=False)
    out = model[3](model[2](h)).pow(2).sum()
    show(out, h.grad_fn.name() if h.grad_fn else None)
    out.backward()
    show(calls, torch.allclose(x.grad, gref), torch.allclose(model[0][0].weight.grad, wref))
    model.zero_grad()
    x.grad = None
    out = cp.checkpoint_sequential(model, 2, x, use_reentrant=False).pow(2).sum()
    out.backward()
    show(out, torch.allclose(x.grad, gref))
    x.grad = None
    calls.clear()
    out = cp.checkpoint(block, x, use_reentrant=True)
    show(out.grad_fn.name())
    out.sum().backward()
    show(calls, x.grad)
    try:
        cp.checkpoint(block, x)
    except Exception as e:
        show(type(e).__name__, e)
    def two_out(a, b):
        return a * b, a + b
    a = torch.tensor(_np(4, 112), dtype=torch.float32, requires_grad=True)
    b = torch.tensor(_np(4, 113), dtype=torch.float32, requires_grad=True)
    p, s = cp.checkpoint(two_out, a, b, use_reentrant=False)
    (p.sum() + s.pow(2).sum()).backward()
    show(a.grad, b.grad)
    with torch.no_grad():
        show(cp.checkpoint(two_out, a, b, use_reentrant=False)[0].requires_grad)
    drop = nn.Dropout(0.5)
    torch.manual_seed(0)
    o = cp.checkpoint(lambda t: drop(t) * 1, torch.ones(50, requires_grad=True), use_reentrant=False,
                      preserve_rng_state=True)
    o.sum().backward()
    show(o.shape)
    x2 = torch.ones(3, requires_grad=True)
    o = cp.checkpoint(lambda t: t.sin(), x2, use_reentrant=False)
    o.sum().backward()
    try:
        o.sum().backward()
    except Exception as e:
        show(type(e).__name__, str(e)[:120])


def _char_rnn(lib, show):
    torch, nn = lib, lib.nn
    all_letters = string.ascii_letters + " .,;'"
    n_letters = len(all_letters)
    def letterToIndex(letter):
        return all_letters.find(letter)
    def letterToTensor(letter):
        tensor = torch.zeros(1, n_letters)
        tensor[0][letterToIndex(letter)] = 1
        return tensor
    def lineToTensor(line):
        tensor = torch.zeros(len(line), 1, n_letters)
        for li, letter in enumerate(line):
            tensor[li][0][letterToIndex(letter)] = 1
        return tensor
    show(letterToTensor('J'))
    show(lineToTensor('Jones').size())

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(input_size, hidden_size)
            self.h2h = nn.Linear(hidden_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)
        def forward(self, input, hidden):
            hidden = F.tanh(self.i2h(input) + self.h2h(hidden))
            output = self.h2o(hidden)
            output = self.softmax(output)
            return output, hidden
        def initHidden(self):
            return torch.zeros(1, self.hidden_size)
    F = nn.functional
    all_categories = ["English", "French", "Greek"]
    n_hidden = 16
    rnn = RNN(n_letters, n_hidden, len(all_categories))
    _init(lib, rnn, 40, 0.3)
    show(rnn)
    input = lineToTensor('Albert')
    hidden = torch.zeros(1, n_hidden)
    output, next_hidden = rnn(input[0], hidden)
    show(output)
    def categoryFromOutput(output):
        top_n, top_i = output.topk(1)
        category_i = top_i[0].item()
        return all_categories[category_i], category_i
    show(categoryFromOutput(output))
    criterion = nn.NLLLoss()
    learning_rate = 0.005
    def train(category_tensor, line_tensor):
        hidden = rnn.initHidden()
        rnn.zero_grad()
        for i in range(line_tensor.size()[0]):
            output, hidden = rnn(line_tensor[i], hidden)
        loss = criterion(output, category_tensor)
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-learning_rate)
        return output, loss.item()
    data = [("Smith", 0), ("Dubois", 1), ("Papadopoulos", 2), ("Jones", 0), ("Lefebvre", 1), ("Nikolaou", 2)]
    for it in range(12):
        line, cat = data[it % len(data)]
        output, loss = train(torch.tensor([cat], dtype=torch.long), lineToTensor(line))
        if it % 4 == 3:
            guess, guess_i = categoryFromOutput(output)
            correct = '✓' if guess == all_categories[cat] else f'✗ ({all_categories[cat]})'
            show(f'{it} {it / 12 * 100:.0f}% {loss:.4f} {line} / {guess} {correct}')
    confusion = torch.zeros(3, 3)
    with torch.no_grad():
        for line, cat in data:
            hidden = rnn.initHidden()
            lt = lineToTensor(line)
            for i in range(lt.size()[0]):
                output, hidden = rnn(lt[i], hidden)
            confusion[cat][categoryFromOutput(output)[1]] += 1
    for i in range(3):
        confusion[i] = confusion[i] / confusion[i].sum()
    show(confusion)

    class CharRNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.rnn = nn.RNN(input_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)
        def forward(self, line_tensor):
            rnn_out, hidden = self.rnn(line_tensor)
            output = self.h2o(hidden[0])
            return self.softmax(output)
    rnn2 = CharRNN(n_letters, n_hidden, 3)
    _init(lib, rnn2, 41, 0.3)
    show(rnn2)
    optimizer = torch.optim.SGD(rnn2.parameters(), lr=0.15)
    for it in range(6):
        line, cat = data[it]
        output = rnn2(lineToTensor(line))
        loss = criterion(output, torch.tensor([cat]))
        loss.backward()
        nn.utils.clip_grad_norm_(rnn2.parameters(), 3)
        optimizer.step()
        optimizer.zero_grad()
        show(loss)
    show(rnn2.rnn.weight_hh_l0[:2, :4], rnn2.rnn.all_weights[0][1].shape)


def _lstm_tagger(lib, show):
    torch, nn, F = lib, lib.nn, lib.nn.functional
    training_data = [(["The", "dog", "ate", "the", "apple"], ["DET", "NN", "V", "DET", "NN"]),
                     (["Everybody", "read", "that", "book"], ["NN", "V", "DET", "NN"])]
    word_to_ix = {}
    for sent, _tags in training_data:
        for word in sent:
            if word not in word_to_ix:
                word_to_ix[word] = len(word_to_ix)
    show(word_to_ix)
    tag_to_ix = {"DET": 0, "NN": 1, "V": 2}
    def prepare_sequence(seq, to_ix):
        idxs = [to_ix[w] for w in seq]
        return torch.tensor(idxs, dtype=torch.long)

    class LSTMTagger(nn.Module):
        def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
            super().__init__()
            self.hidden_dim = hidden_dim
            self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim)
            self.hidden2tag = nn.Linear(hidden_dim, tagset_size)
        def forward(self, sentence):
            embeds = self.word_embeddings(sentence)
            lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
            tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
            tag_scores = F.log_softmax(tag_space, dim=1)
            return tag_scores
    model = LSTMTagger(6, 6, len(word_to_ix), len(tag_to_ix))
    _init(lib, model, 42, 0.5)
    show(model)
    loss_function = nn.NLLLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with torch.no_grad():
        inputs = prepare_sequence(training_data[0][0], word_to_ix)
        tag_scores = model(inputs)
        show(tag_scores)
    for _epoch in range(30):
        for sentence, tags in training_data:
            model.zero_grad()
            sentence_in = prepare_sequence(sentence, word_to_ix)
            targets = prepare_sequence(tags, tag_to_ix)
            tag_scores = model(sentence_in)
            loss = loss_function(tag_scores, targets)
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        inputs = prepare_sequence(training_data[0][0], word_to_ix)
        tag_scores = model(inputs)
        show(tag_scores, tag_scores.argmax(1))
    # a batch-first bidirectional LSTM classifier over padded, packed sequences
    lstm = nn.LSTM(4, 5, num_layers=2, batch_first=True, bidirectional=True)
    _init(lib, lstm, 43, 0.4)
    head = nn.Linear(10, 2)
    _init(lib, head, 44)
    seqs = [torch.tensor(_np((n, 4), 45 + n), dtype=torch.float32) for n in (5, 3, 2)]
    padded = nn.utils.rnn.pad_sequence(seqs, batch_first=True)
    lengths = torch.tensor([5, 3, 2])
    packed = nn.utils.rnn.pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=True)
    show(packed.batch_sizes, packed.data.shape)
    out, (h, c) = lstm(packed)
    unpacked, lens = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
    show(unpacked.shape, lens, h.shape, c.shape)
    logits = head(torch.cat([h[-2], h[-1]], dim=1))
    loss = F.cross_entropy(logits, torch.tensor([0, 1, 1]))
    loss.backward()
    show(loss, unpacked[1, 2:], lstm.weight_ih_l1_reverse.grad[:2, :3], lstm.bias_hh_l0.grad[:5])
    packed2 = nn.utils.rnn.pack_sequence([seqs[1], seqs[0], seqs[2]], enforce_sorted=False)
    show(packed2.sorted_indices, packed2.unsorted_indices)
    out2, _ = lstm(packed2)
    show(nn.utils.rnn.pad_packed_sequence(out2, batch_first=True)[0][0, :3])
    try:
        nn.utils.rnn.pack_padded_sequence(padded, torch.tensor([2, 3, 5]), batch_first=True)
    except Exception as e:
        show(type(e).__name__, e)


def _transformer(lib, show):
    torch, nn = lib, lib.nn
    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=5000):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            position = torch.arange(max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = torch.zeros(max_len, 1, d_model)
            pe[:, 0, 0::2] = torch.sin(position * div_term)
            pe[:, 0, 1::2] = torch.cos(position * div_term)
            self.register_buffer('pe', pe)
        def forward(self, x):
            x = x + self.pe[:x.size(0)]
            return self.dropout(x)

    class TransformerModel(nn.Module):
        def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.5):
            super().__init__()
            self.model_type = 'Transformer'
            self.pos_encoder = PositionalEncoding(d_model, dropout, max_len=64)
            encoder_layers = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
            self.transformer_encoder = nn.TransformerEncoder(encoder_layers, nlayers, enable_nested_tensor=False)
            self.embedding = nn.Embedding(ntoken, d_model)
            self.d_model = d_model
            self.linear = nn.Linear(d_model, ntoken)
        def forward(self, src, src_mask=None):
            src = self.embedding(src) * math.sqrt(self.d_model)
            src = self.pos_encoder(src)
            output = self.transformer_encoder(src, src_mask)
            output = self.linear(output)
            return output
    ntokens, emsize, d_hid, nlayers, nhead = 20, 8, 16, 2, 2
    model = TransformerModel(ntokens, emsize, nhead, d_hid, nlayers, dropout=0.0)
    _init(lib, model, 50, 0.3)
    show(model)
    show(model.pos_encoder.pe[:3, 0], [n for n, _ in model.named_buffers()])
    show(sum(p.numel() for p in model.parameters()))
    rng = np.random.default_rng(51)
    data = torch.tensor(rng.integers(0, ntokens, 60), dtype=torch.long)
    def batchify(data, bsz):
        seq_len = data.size(0) // bsz
        data = data[:seq_len * bsz]
        data = data.view(bsz, seq_len).t().contiguous()
        return data
    train_data = batchify(data, 4)
    show(train_data.shape, train_data.is_contiguous())
    bptt = 5
    def get_batch(source, i):
        seq_len = min(bptt, len(source) - 1 - i)
        data = source[i:i+seq_len]
        target = source[i+1:i+1+seq_len].reshape(-1)
        return data, target
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
    mask = nn.Transformer.generate_square_subsequent_mask(bptt)
    show(mask)
    model.train()
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        output = model(data, mask[:data.size(0), :data.size(0)])
        output_flat = output.view(-1, ntokens)
        loss = criterion(output_flat, targets)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        show(batch, loss, scheduler.get_last_lr())
        scheduler.step()
    model.eval()
    with torch.no_grad():
        data, targets = get_batch(train_data, 0)
        show(criterion(model(data, mask).view(-1, ntokens), targets))
    show(model.transformer_encoder.layers[1].linear2.weight.grad[:2, :4])


def _multihead_attention(lib, show):
    torch, nn = lib, lib.nn
    mha = nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True)
    _init(lib, mha, 60, 0.4)
    show(mha, [(n, tuple(p.shape)) for n, p in mha.named_parameters()])
    q = torch.tensor(_np((2, 3, 8), 61), dtype=torch.float32, requires_grad=True)
    kv = torch.tensor(_np((2, 4, 8), 62), dtype=torch.float32)
    pad = torch.tensor([[False, False, True, True], [False, False, False, True]])
    out, w = mha(q, kv, kv, key_padding_mask=pad)
    show(out, w)
    out, w = mha(q, kv, kv, key_padding_mask=pad, average_attn_weights=False)
    show(w.shape, w[0, 1])
    out.sum().backward()
    show(q.grad, mha.in_proj_weight.grad[:2, :3], mha.out_proj.bias.grad)
    causal = torch.triu(torch.full((3, 3), float('-inf')), diagonal=1)
    out, w = mha(q, q, q, attn_mask=causal, need_weights=True)
    show(out, w)
    out2, w2 = mha(q, q, q, is_causal=True, attn_mask=nn.Transformer.generate_square_subsequent_mask(3))
    show(torch.allclose(out, out2), w2)
    F = nn.functional
    qh = torch.tensor(_np((2, 2, 3, 4), 63), dtype=torch.float32)
    show(F.scaled_dot_product_attention(qh, qh, qh, is_causal=True))
    try:
        mha(q, kv, kv[:, :3])
    except Exception as e:
        show(type(e).__name__, e)
    try:
        nn.MultiheadAttention(embed_dim=7, num_heads=2)
    except Exception as e:
        show(type(e).__name__, e)


def _dqn_pieces(lib, show):
    torch, nn, F = lib, lib.nn, lib.nn.functional
    class DQN(nn.Module):
        def __init__(self, n_observations, n_actions):
            super().__init__()
            self.layer1 = nn.Linear(n_observations, 16)
            self.layer2 = nn.Linear(16, 16)
            self.layer3 = nn.Linear(16, n_actions)
        def forward(self, x):
            x = F.relu(self.layer1(x))
            x = F.relu(self.layer2(x))
            return self.layer3(x)
    policy_net = DQN(4, 2)
    _init(lib, policy_net, 140)
    target_net = DQN(4, 2)
    target_net.load_state_dict(policy_net.state_dict())
    optimizer = torch.optim.AdamW(policy_net.parameters(), lr=1e-3, amsgrad=True)
    rng = np.random.default_rng(141)
    BATCH, GAMMA, TAU = 8, 0.99, 0.005
    for step in range(4):
        state_batch = torch.tensor(rng.standard_normal((BATCH, 4)), dtype=torch.float32)
        action_batch = torch.tensor(rng.integers(0, 2, (BATCH, 1)))
        reward_batch = torch.tensor(rng.standard_normal(BATCH), dtype=torch.float32)
        next_states = [None if i % 3 == 0 else torch.tensor(rng.standard_normal((1, 4)), dtype=torch.float32)
                       for i in range(BATCH)]
        non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, next_states)), dtype=torch.bool)
        non_final_next_states = torch.cat([s for s in next_states if s is not None])
        state_action_values = policy_net(state_batch).gather(1, action_batch)
        next_state_values = torch.zeros(BATCH)
        with torch.no_grad():
            next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
        expected_state_action_values = (next_state_values * GAMMA) + reward_batch
        criterion = nn.SmoothL1Loss()
        loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 100)
        optimizer.step()
        target_net_state_dict = target_net.state_dict()
        policy_net_state_dict = policy_net.state_dict()
        for key in policy_net_state_dict:
            target_net_state_dict[key] = policy_net_state_dict[key] * TAU + target_net_state_dict[key] * (1 - TAU)
        target_net.load_state_dict(target_net_state_dict)
        show(step, loss)
    with torch.no_grad():
        s = torch.tensor(rng.standard_normal((1, 4)), dtype=torch.float32)
        show(policy_net(s).max(1).indices.view(1, 1), policy_net(s).max(1))
    show(target_net.layer3.bias, non_final_mask)


def _seq2seq_attention(lib, show):
    torch, nn, F = lib, lib.nn, lib.nn.functional
    SOS_token, MAX_LENGTH, H, V = 0, 5, 8, 12
    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size, dropout_p=0.1):
            super().__init__()
            self.hidden_size = hidden_size
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
            self.dropout = nn.Dropout(dropout_p)
        def forward(self, input):
            embedded = self.dropout(self.embedding(input))
            output, hidden = self.gru(embedded)
            return output, hidden
    class BahdanauAttention(nn.Module):
        def __init__(self, hidden_size):
            super().__init__()
            self.Wa = nn.Linear(hidden_size, hidden_size)
            self.Ua = nn.Linear(hidden_size, hidden_size)
            self.Va = nn.Linear(hidden_size, 1)
        def forward(self, query, keys):
            scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
            scores = scores.squeeze(2).unsqueeze(1)
            weights = F.softmax(scores, dim=-1)
            context = torch.bmm(weights, keys)
            return context, weights
    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, dropout_p=0.1):
            super().__init__()
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attention = BahdanauAttention(hidden_size)
            self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
            self.out = nn.Linear(hidden_size, output_size)
            self.dropout = nn.Dropout(dropout_p)
        def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
            batch_size = encoder_outputs.size(0)
            decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
            decoder_hidden = encoder_hidden
            decoder_outputs, attentions = [], []
            for i in range(MAX_LENGTH):
                decoder_output, decoder_hidden, attn_weights = self.forward_step(
                    decoder_input, decoder_hidden, encoder_outputs)
                decoder_outputs.append(decoder_output)
                attentions.append(attn_weights)
                if target_tensor is not None:
                    decoder_input = target_tensor[:, i].unsqueeze(1)
                else:
                    _, topi = decoder_output.topk(1)
                    decoder_input = topi.squeeze(-1).detach()
            decoder_outputs = torch.cat(decoder_outputs, dim=1)
            decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
            attentions = torch.cat(attentions, dim=1)
            return decoder_outputs, decoder_hidden, attentions
        def forward_step(self, input, hidden, encoder_outputs):
            embedded = self.dropout(self.embedding(input))
            query = hidden.permute(1, 0, 2)
            context, attn_weights = self.attention(query, encoder_outputs)
            input_gru = torch.cat((embedded, context), dim=2)
            output, hidden = self.gru(input_gru, hidden)
            output = self.out(output)
            return output, hidden, attn_weights
    encoder = EncoderRNN(V, H)
    decoder = AttnDecoderRNN(H, V)
    _init(lib, encoder, 150, 0.4)
    _init(lib, decoder, 151, 0.4)
    encoder.eval()
    decoder.eval()
    rng = np.random.default_rng(152)
    input_tensor = torch.tensor(rng.integers(1, V, (3, MAX_LENGTH)))
    target_tensor = torch.tensor(rng.integers(1, V, (3, MAX_LENGTH)))
    enc_opt = torch.optim.Adam(encoder.parameters(), lr=0.01)
    dec_opt = torch.optim.Adam(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    for epoch in range(3):
        enc_opt.zero_grad()
        dec_opt.zero_grad()
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
        loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
        loss.backward()
        enc_opt.step()
        dec_opt.step()
        show(epoch, loss)
    with torch.no_grad():
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
        _, topi = decoder_outputs.topk(1)
        decoded_ids = topi.squeeze()
    show(decoded_ids, decoder_attn[0], decoder_hidden)
    show(encoder.gru.weight_hh_l0.grad[:2, :3])


def _dcgan_and_vae(lib, show):
    torch, nn, F = lib, lib.nn, lib.nn.functional
    nz, ngf, ndf, nc = 4, 4, 4, 1
    netG = nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
        nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh())
    netD = nn.Sequential(
        nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())
    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find('Conv') != -1:
            show("init", classname)
        elif classname.find('BatchNorm') != -1:
            nn.init.constant_(m.weight.data, 1.0)
            nn.init.constant_(m.bias.data, 0)
    netG.apply(weights_init)
    netD.apply(weights_init)
    _init(lib, netG, 160, 0.3)
    _init(lib, netD, 161, 0.3)
    show(netG, netD)
    criterion = nn.BCELoss()
    rng = np.random.default_rng(162)
    fixed_noise = torch.tensor(rng.standard_normal((4, nz, 1, 1)), dtype=torch.float32)
    real_label, fake_label = 1., 0.
    optimizerD = torch.optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
    for _ in range(2):
        real_cpu = torch.tensor(rng.uniform(-1, 1, (4, nc, 16, 16)), dtype=torch.float32)
        netD.zero_grad()
        b_size = real_cpu.size(0)
        label = torch.full((b_size,), real_label, dtype=torch.float)
        output = netD(real_cpu).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        noise = torch.tensor(rng.standard_normal((b_size, nz, 1, 1)), dtype=torch.float32)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()
        show(f'Loss_D: {errD.item():.4f}\tLoss_G: {errG.item():.4f}\tD(x): {D_x:.4f}\tD(G(z)): {D_G_z1:.4f} / '
             f'{D_G_z2:.4f}')
    with torch.no_grad():
        fake = netG(fixed_noise).detach().cpu()
    show(fake.shape, fake[0, 0, :2, :4], netG[1].running_var)

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(16, 8)
            self.fc21 = nn.Linear(8, 2)
            self.fc22 = nn.Linear(8, 2)
            self.fc3 = nn.Linear(2, 8)
            self.fc4 = nn.Linear(8, 16)
        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)
        def reparameterize(self, mu, logvar, eps):
            std = torch.exp(0.5 * logvar)
            return mu + eps * std
        def decode(self, z):
            h3 = F.relu(self.fc3(z))
            return torch.sigmoid(self.fc4(h3))
        def forward(self, x, eps):
            mu, logvar = self.encode(x.view(-1, 16))
            z = self.reparameterize(mu, logvar, eps)
            return self.decode(z), mu, logvar
    def loss_function(recon_x, x, mu, logvar):
        BCE = F.binary_cross_entropy(recon_x, x.view(-1, 16), reduction='sum')
        KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return BCE + KLD
    vae = VAE()
    _init(lib, vae, 163, 0.4)
    opt = torch.optim.Adam(vae.parameters(), lr=1e-3)
    data = torch.tensor(rng.uniform(size=(6, 1, 4, 4)), dtype=torch.float32)
    for epoch in range(3):
        eps = torch.tensor(rng.standard_normal((6, 2)), dtype=torch.float32)
        recon_batch, mu, logvar = vae(data, eps)
        loss = loss_function(recon_batch, data, mu, logvar)
        opt.zero_grad()
        loss.backward()
        opt.step()
        show(f'====> Epoch: {epoch} Average loss: {loss.item() / len(data):.4f}')
    show(vae.fc22.weight.grad, recon_batch[0, :4])


def _modules_note(lib, show):
    torch, nn = lib, lib.nn
    class MyLinear(nn.Module):
        def __init__(self, in_features, out_features):
            super().__init__()
            self.weight = nn.Parameter(torch.tensor(_np((in_features, out_features), 170), dtype=torch.float32))
            self.bias = nn.Parameter(torch.tensor(_np(out_features, 171), dtype=torch.float32))
        def forward(self, input):
            return (input @ self.weight) + self.bias
        def extra_repr(self):
            return f"in={self.weight.shape[0]}, out={self.weight.shape[1]}"
    m = MyLinear(4, 3)
    sample_input = torch.tensor(_np(4, 172), dtype=torch.float32)
    show(m(sample_input), m)
    for parameter in m.named_parameters():
        show(parameter)
    class DynamicNet(nn.Module):
        def __init__(self, num_layers):
            super().__init__()
            self.linears = nn.ModuleList([MyLinear(4, 4) for _ in range(num_layers)])
            self.activations = nn.ModuleDict({'relu': nn.ReLU(), 'lrelu': nn.LeakyReLU()})
            self.final = MyLinear(4, 1)
            self.plist = nn.ParameterList([nn.Parameter(torch.ones(2)), nn.Parameter(torch.zeros(3))])
            self.pdict = nn.ParameterDict({'a': nn.Parameter(torch.ones(1))})
        def forward(self, x, act):
            for linear in self.linears:
                x = linear(x)
                x = self.activations[act](x)
            return self.final(x)
    dynamic_net = DynamicNet(3)
    show(dynamic_net(sample_input, 'relu'), dynamic_net)
    show([n for n, _ in dynamic_net.named_parameters()])
    show([n for n, _ in dynamic_net.named_modules()], [type(c).__name__ for c in dynamic_net.children()])
    show(len(list(dynamic_net.modules())), dynamic_net.linears[1:], dynamic_net.activations.keys())
    def init_weights(m):
        if isinstance(m, nn.Linear):
            nn.init.constant_(m.weight, 0.25)
            nn.init.zeros_(m.bias)
    net = nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 2))
    net.apply(init_weights)
    show(net[0].weight, net.state_dict()['2.bias'])
    class RunningMean(nn.Module):
        def __init__(self, num_features, momentum=0.9):
            super().__init__()
            self.momentum = momentum
            self.register_buffer('mean', torch.zeros(num_features))
            self.register_buffer('tmp', torch.ones(1), persistent=False)
        def forward(self, x):
            self.mean = self.momentum * self.mean + (1.0 - self.momentum) * x
            return self.mean
    rm = RunningMean(4)
    for _ in range(3):
        rm(sample_input)
    show(rm.mean, rm.state_dict(), list(rm.named_buffers()))
    show(net.training, net[0].training)
    net.eval()
    show(net.training, net[0].training)
    net.train()
    net.requires_grad_(False)
    show([p.requires_grad for p in net.parameters()])
    show(net.to(torch.float64)[0].weight.dtype, net.double()[2].bias.dtype, net.half()[0].weight.dtype)
    dt = nn.Linear(2, 2, dtype=torch.float64)
    show(dt.weight.dtype)
    show_outcome(show, lambda: net.to("meta_not_a_device"))
    show_outcome(show, lambda: nn.ModuleList([1]))
    show_outcome(show, lambda: setattr(net, "x", 3) or net.x)
    show_outcome(show, lambda: net.register_buffer("a.b", torch.ones(1)))
    show_outcome(show, lambda: net.register_parameter("w", torch.ones(1)))
    show_outcome(show, lambda: net.missing)
    show_outcome(show, lambda: net.get_submodule("0.weight"))
    show(net.get_submodule("2"), net.get_parameter("0.bias"))
    show_outcome(show, lambda: nn.Sequential(nn.Linear(2, 2))[3])
    seq = nn.Sequential()
    seq.add_module("lin", nn.Linear(2, 3))
    seq.append(nn.Tanh())
    show(seq, seq.lin, len(seq))
    show(nn.Sequential(_conv_relu_dict(lib)), torch.nn.Identity()(sample_input).shape)


def _intro_tensor_ops(lib, show):
    torch = lib
    a = torch.tensor(_np((2, 3), 190), dtype=torch.float32)
    b = torch.tensor(_np((2, 3), 191), dtype=torch.float32)
    show(torch.abs(a), torch.ceil(a), torch.floor(a), torch.clamp(a, -0.5, 0.5))
    angles = torch.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
    sines = torch.sin(angles)
    inverses = torch.asin(sines)
    show(angles, sines, inverses)
    b1 = torch.tensor([1, 5, 11])
    b2 = torch.tensor([2, 7, 10])
    show(torch.bitwise_xor(b1, b2))
    d = torch.tensor([[1., 2.], [3., 4.]])
    e = torch.ones(1, 2)
    show(torch.eq(d, e), torch.max(d), torch.mean(d), torch.std(d), torch.prod(d), torch.unique(torch.tensor([1, 2, 1, 2, 1, 2])))
    v1 = torch.tensor([1., 0., 0.])
    v2 = torch.tensor([0., 1., 0.])
    m1 = torch.tensor(_np((2, 2), 192), dtype=torch.float32)
    m2 = torch.tensor([[3., 0.], [0., 3.]])
    show(torch.linalg.cross(v2, v1), torch.matmul(m1, m2), torch.linalg.svd(m1 @ m2).S)
    rand = torch.tensor(_np((2, 4), 193), dtype=torch.float32)
    doubled = rand * (torch.ones(1, 4) * 2)
    show(rand, doubled)
    a = torch.ones(4, 3, 2)
    show(a * torch.rand(3, 2).shape[0], (a * torch.ones(3, 1)).shape, (a * torch.ones(1, 2)).shape)
    show_outcome(show, lambda: a * torch.ones(4, 3))
    show_outcome(show, lambda: a * torch.ones(2, 3))
    show_outcome(show, lambda: a * torch.ones(0))
    c = torch.zeros(2, 2)
    old_id = id(c)
    d = torch.matmul(torch.ones(2, 2), torch.ones(2, 2), out=c)
    show(c, id(c) == old_id, d is c)
    show_outcome(show, lambda: torch.matmul(torch.ones(2, 2), torch.ones(2, 2), out=torch.zeros(3)))
    a = torch.ones(2, 2)
    b = a.clone()
    show(torch.eq(a, b), a is b)
    a = torch.ones(2, 2, requires_grad=True)
    b = a.clone()
    c = a.detach().clone()
    show(b, c)
    a = torch.ones(6, 20, 20)
    b = a.unsqueeze(0)
    show(b.shape, torch.ones(1, 20).squeeze(0).shape, torch.ones(2, 2).squeeze(0).shape)
    output3d = torch.ones(6, 20, 20)
    input1d = output3d.reshape(6 * 20 * 20)
    show(input1d.shape, torch.reshape(output3d, (6 * 20 * 20,)).shape)
    show(torch.ones(2, 3).T.is_contiguous(), torch.arange(6).view(2, 3).t().contiguous().view(-1))
    show_outcome(show, lambda: torch.arange(6).view(2, 3).t().view(-1))
    show(torch.einsum("bij,bjk->bik", torch.ones(2, 2, 3), torch.ones(2, 3, 2)),
         torch.einsum("ii", torch.eye(3)), torch.einsum("i,j->ij", torch.arange(3.), torch.arange(2.)))
    show(torch.where(d > 2, d, torch.zeros_like(d)), torch.topk(torch.tensor([3., 1., 4., 1., 5.]), 2))
    show(torch.sort(torch.tensor([3, 1, 2]), descending=True), torch.argsort(torch.tensor([3, 1, 2])))
    show(torch.tensor([[1, 2], [3, 4]]).max(dim=1), torch.tensor([1., 2.]).norm(), torch.cumsum(torch.arange(4), 0))
    show(torch.tensor(_np(5, 194)).var(unbiased=False), torch.stack([torch.ones(2), torch.zeros(2)], 1))
    show(torch.chunk(torch.arange(5), 2), torch.split(torch.arange(5), [2, 3]), torch.arange(10).tensor_split(3))
    show(torch.flip(torch.arange(4), [0]), torch.roll(torch.arange(4), 1), torch.diag(torch.tensor([1, 2])))
    show(torch.tensor([1, 2]).repeat(2, 2), torch.ones(2, 1).expand(2, 3), torch.gather(d, 1, torch.tensor([[0], [1]])))


def _distillation(lib, show):
    torch, nn, F = lib, lib.nn, lib.nn.functional
    teacher = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))
    student = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4))
    _init(lib, teacher, 200, 0.5)
    _init(lib, student, 201, 0.5)
    rng = np.random.default_rng(202)
    X = torch.tensor(rng.standard_normal((20, 6)), dtype=torch.float32)
    Y = torch.tensor(rng.integers(0, 4, 20))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, Y), batch_size=5)
    ce_loss = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(student.parameters(), lr=0.01)
    T, soft_target_loss_weight, ce_loss_weight = 2, 0.25, 0.75
    teacher.eval()
    student.train()
    for epoch in range(2):
        running_loss = 0.0
        for inputs, labels in loader:
            optimizer.zero_grad()
            with torch.no_grad():
                teacher_logits = teacher(inputs)
            student_logits = student(inputs)
            soft_targets = nn.functional.softmax(teacher_logits / T, dim=-1)
            soft_prob = nn.functional.log_softmax(student_logits / T, dim=-1)
            soft_targets_loss = torch.sum(soft_targets * (soft_targets.log() - soft_prob)) / soft_prob.size()[0] * (T**2)
            label_loss = ce_loss(student_logits, labels)
            loss = soft_target_loss_weight * soft_targets_loss + ce_loss_weight * label_loss
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
        show(f"Epoch {epoch+1}/2, Loss: {running_loss / len(loader)}"[:24])
    kl = nn.KLDivLoss(reduction="batchmean")
    show(kl(F.log_softmax(student(X), 1), F.softmax(teacher(X), 1)))
    show(kl(F.log_softmax(student(X), 1), F.log_softmax(teacher(X), 1)), nn.KLDivLoss(reduction="batchmean", log_target=True)(
        F.log_softmax(student(X), 1), F.log_softmax(teacher(X), 1)))
    cos = nn.CosineEmbeddingLoss()
    show(cos(student(X), teacher(X), torch.ones(20)), F.cosine_similarity(student(X), teacher(X)).mean())
    mse = nn.MSELoss()
    feats = {}
    h = teacher[1].register_forward_hook(lambda m, i, o: feats.__setitem__("t", o))
    teacher(X)
    h.remove()
    show(feats["t"].shape, mse(feats["t"][:, :8], student[1](student[0](X))))
    show(torch.nn.KLDivLoss()(F.log_softmax(student(X), 1), F.softmax(teacher(X), 1)))


def _pruning(lib, show):
    torch, nn, F = lib, lib.nn, lib.nn.functional
    prune = importlib.import_module(lib.__name__ + ".nn.utils.prune")  # (torch does not import it itself)
    class LeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 3)
            self.conv2 = nn.Conv2d(6, 16, 3)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)
        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = x.view(-1, int(x.nelement() / x.shape[0]))
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return self.fc3(x)
    model = LeNet()
    _init(lib, model, 210, 0.3)
    module = model.conv1
    show(list(module.named_parameters()))
    show(list(module.named_buffers()))
    prune.random_unstructured(module, name="weight", amount=0.3)
    show([n for n, _ in module.named_parameters()], [n for n, _ in module.named_buffers()])
    show(int(module.weight_mask.sum()), module.weight.grad_fn, module._forward_pre_hooks.keys().__len__())
    prune.l1_unstructured(module, name="bias", amount=3)
    show([n for n, _ in module.named_parameters()], module.bias_mask, module.bias)
    show(module._forward_pre_hooks.__len__())
    prune.ln_structured(module, name="weight", amount=0.5, n=2, dim=0)
    show((module.weight_mask.sum(dim=(1, 2, 3)) > 0).sum())  # (which entries: random)
    for hook in module._forward_pre_hooks.values():
        if hook._tensor_name == "weight":
            break
    show(type(hook).__name__, list(hook), len(hook), [type(m).__name__ for m in hook])
    show(model.state_dict().keys())
    prune.remove(module, 'weight')
    show([n for n, _ in module.named_parameters()], [n for n, _ in module.named_buffers()])
    show(prune.is_pruned(model), prune.is_pruned(model.fc3))
    new_model = LeNet()
    _init(lib, new_model, 211, 0.3)
    for _name, module in new_model.named_modules():
        if isinstance(module, torch.nn.Conv2d):
            prune.l1_unstructured(module, name='weight', amount=0.2)
        elif isinstance(module, torch.nn.Linear):
            prune.l1_unstructured(module, name='weight', amount=0.4)
    show(dict(new_model.named_buffers()).keys())
    show(new_model.conv2.weight_mask[0, 0], new_model.fc1.weight[:2, :5])
    model = LeNet()
    _init(lib, model, 212, 0.3)
    parameters_to_prune = ((model.conv1, 'weight'), (model.conv2, 'weight'), (model.fc1, 'weight'),
                           (model.fc2, 'weight'), (model.fc3, 'weight'))
    prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.2)
    for m, n in parameters_to_prune:
        show(f"Sparsity: {100. * float(torch.sum(getattr(m, n) == 0)) / float(getattr(m, n).nelement()):.2f}%")
    show("Global sparsity: {:.2f}%".format(100. * float(sum(torch.sum(m.weight == 0) for m, _ in parameters_to_prune))
                                         / float(sum(m.weight.nelement() for m, _ in parameters_to_prune))))
    x = torch.tensor(_np((2, 1, 28, 28), 213), dtype=torch.float32)
    out = model(x)
    out.sum().backward()
    show(out, model.fc3.weight_orig.grad[:2, :6], model.fc3.weight_mask.dtype)
    class FooBarPruningMethod(prune.BasePruningMethod):
        PRUNING_TYPE = 'unstructured'
        def compute_mask(self, t, default_mask):
            mask = default_mask.clone()
            mask.view(-1)[::2] = 0
            return mask
    def foobar_unstructured(module, name):
        FooBarPruningMethod.apply(module, name)
        return module
    model = LeNet()
    _init(lib, model, 214, 0.3)
    foobar_unstructured(model.fc3, name='bias')
    show(model.fc3.bias_mask, model.fc3.bias)
    prune.custom_from_mask(model.fc2, "bias", torch.tensor([0., 1.] * 42))
    show(model.fc2.bias[:6])
    prune.identity(model.fc1, "bias")
    show(model.fc1.bias_mask.sum())
    t = torch.tensor(_np((3, 4), 215), dtype=torch.float32)
    show(prune.L1Unstructured(amount=0.5).prune(t), prune.LnStructured(0.34, n=1, dim=1).prune(t))
    show_outcome(show, lambda: prune.l1_unstructured(model.fc1, "weight", amount=1.5))
    show_outcome(show, lambda: prune.l1_unstructured(model.fc1, "weight", amount="a"))
    show_outcome(show, lambda: prune.l1_unstructured(model.fc1, "weight", amount=10 ** 6))
    show_outcome(show, lambda: prune.ln_structured(model.fc1, "bias", amount=0.5, n=2, dim=0))
    show_outcome(show, lambda: prune.ln_structured(model.fc1, "weight", amount=0.5, n=2, dim=3))
    show_outcome(show, lambda: prune.remove(model.fc1, "weight"))
    show_outcome(show, lambda: prune.global_unstructured(parameters_to_prune, prune.LnStructured, amount=1, n=1))
    show([n for n, _ in model.fc1.named_parameters()])


def _bilstm_crf(lib, show):
    torch, nn = lib, lib.nn
    def argmax(vec):
        _, idx = torch.max(vec, 1)
        return idx.item()
    def prepare_sequence(seq, to_ix):
        return torch.tensor([to_ix[w] for w in seq], dtype=torch.long)
    def log_sum_exp(vec):
        max_score = vec[0, argmax(vec)]
        max_score_broadcast = max_score.view(1, -1).expand(1, vec.size()[1])
        return max_score + torch.log(torch.sum(torch.exp(vec - max_score_broadcast)))
    START_TAG, STOP_TAG = "<START>", "<STOP>"
    class BiLSTM_CRF(nn.Module):
        def __init__(self, vocab_size, tag_to_ix, embedding_dim, hidden_dim):
            super().__init__()
            self.embedding_dim = embedding_dim
            self.hidden_dim = hidden_dim
            self.tag_to_ix = tag_to_ix
            self.tagset_size = len(tag_to_ix)
            self.word_embeds = nn.Embedding(vocab_size, embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2, num_layers=1, bidirectional=True)
            self.hidden2tag = nn.Linear(hidden_dim, self.tagset_size)
            self.transitions = nn.Parameter(torch.zeros(self.tagset_size, self.tagset_size))
        def init_constraints(self):
            self.transitions.data[self.tag_to_ix[START_TAG], :] = -10000
            self.transitions.data[:, self.tag_to_ix[STOP_TAG]] = -10000
        def _forward_alg(self, feats):
            init_alphas = torch.full((1, self.tagset_size), -10000.)
            init_alphas[0][self.tag_to_ix[START_TAG]] = 0.
            forward_var = init_alphas
            for feat in feats:
                alphas_t = []
                for next_tag in range(self.tagset_size):
                    emit_score = feat[next_tag].view(1, -1).expand(1, self.tagset_size)
                    trans_score = self.transitions[next_tag].view(1, -1)
                    next_tag_var = forward_var + trans_score + emit_score
                    alphas_t.append(log_sum_exp(next_tag_var).view(1))
                forward_var = torch.cat(alphas_t).view(1, -1)
            terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
            return log_sum_exp(terminal_var)
        def _get_lstm_features(self, sentence):
            embeds = self.word_embeds(sentence).view(len(sentence), 1, -1)
            hidden = (torch.zeros(2, 1, self.hidden_dim // 2), torch.zeros(2, 1, self.hidden_dim // 2))
            lstm_out, _ = self.lstm(embeds, hidden)
            lstm_out = lstm_out.view(len(sentence), self.hidden_dim)
            return self.hidden2tag(lstm_out)
        def _score_sentence(self, feats, tags):
            score = torch.zeros(1)
            tags = torch.cat([torch.tensor([self.tag_to_ix[START_TAG]], dtype=torch.long), tags])
            for i, feat in enumerate(feats):
                score = score + self.transitions[tags[i + 1], tags[i]] + feat[tags[i + 1]]
            score = score + self.transitions[self.tag_to_ix[STOP_TAG], tags[-1]]
            return score
        def _viterbi_decode(self, feats):
            backpointers = []
            init_vvars = torch.full((1, self.tagset_size), -10000.)
            init_vvars[0][self.tag_to_ix[START_TAG]] = 0
            forward_var = init_vvars
            for feat in feats:
                bptrs_t, viterbivars_t = [], []
                for next_tag in range(self.tagset_size):
                    next_tag_var = forward_var + self.transitions[next_tag]
                    best_tag_id = argmax(next_tag_var)
                    bptrs_t.append(best_tag_id)
                    viterbivars_t.append(next_tag_var[0][best_tag_id].view(1))
                forward_var = (torch.cat(viterbivars_t) + feat).view(1, -1)
                backpointers.append(bptrs_t)
            terminal_var = forward_var + self.transitions[self.tag_to_ix[STOP_TAG]]
            best_tag_id = argmax(terminal_var)
            path_score = terminal_var[0][best_tag_id]
            best_path = [best_tag_id]
            for bptrs_t in reversed(backpointers):
                best_tag_id = bptrs_t[best_tag_id]
                best_path.append(best_tag_id)
            start = best_path.pop()
            assert start == self.tag_to_ix[START_TAG]
            best_path.reverse()
            return path_score, best_path
        def neg_log_likelihood(self, sentence, tags):
            feats = self._get_lstm_features(sentence)
            return self._forward_alg(feats) - self._score_sentence(feats, tags)
        def forward(self, sentence):
            return self._viterbi_decode(self._get_lstm_features(sentence))
    training_data = [(["the", "wall", "street", "journal", "reported", "today", "that", "apple", "corporation", "made", "money"],
                      ["B", "I", "I", "I", "O", "O", "O", "B", "I", "O", "O"]),
                     (["georgia", "tech", "is", "a", "university", "in", "georgia"], ["B", "I", "O", "O", "O", "O", "B"])]
    word_to_ix = {}
    for sentence, _ in training_data:
        for word in sentence:
            word_to_ix.setdefault(word, len(word_to_ix))
    tag_to_ix = {"B": 0, "I": 1, "O": 2, START_TAG: 3, STOP_TAG: 4}
    model = BiLSTM_CRF(len(word_to_ix), tag_to_ix, 5, 4)
    _init(lib, model, 220, 0.4)
    model.init_constraints()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, weight_decay=1e-4)
    with torch.no_grad():
        precheck_sent = prepare_sequence(training_data[0][0], word_to_ix)
        show(model(precheck_sent))
    for epoch in range(3):
        for sentence, tags in training_data:
            model.zero_grad()
            sentence_in = prepare_sequence(sentence, word_to_ix)
            targets = torch.tensor([tag_to_ix[t] for t in tags], dtype=torch.long)
            loss = model.neg_log_likelihood(sentence_in, targets)
            loss.backward()
            optimizer.step()
        show(epoch, loss)
    with torch.no_grad():
        show(model(precheck_sent))
    show(model.transitions.grad)


def _ngram_and_cbow(lib, show):
    torch, nn, F = lib, lib.nn, lib.nn.functional
    CONTEXT_SIZE, EMBEDDING_DIM = 2, 6
    test_sentence = ["When", "forty", "winters", "shall", "besiege", "thy", "brow,", "And", "dig", "deep", "trenches", "in", "thy", "beauty's", "field,", "Thy", "youth's", "proud", "livery", "so", "gazed", "on", "now,", "Will", "be", "a", "totter'd", "weed", "of", "small", "worth", "held"]
    ngrams = [([test_sentence[i - j - 1] for j in range(CONTEXT_SIZE)], test_sentence[i])
              for i in range(CONTEXT_SIZE, len(test_sentence))]
    show(ngrams[:3])
    vocab = sorted(set(test_sentence))
    word_to_ix = {word: i for i, word in enumerate(vocab)}
    class NGramLanguageModeler(nn.Module):
        def __init__(self, vocab_size, embedding_dim, context_size):
            super().__init__()
            self.embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.linear1 = nn.Linear(context_size * embedding_dim, 16)
            self.linear2 = nn.Linear(16, vocab_size)
        def forward(self, inputs):
            embeds = self.embeddings(inputs).view((1, -1))
            out = F.relu(self.linear1(embeds))
            out = self.linear2(out)
            return F.log_softmax(out, dim=1)
    losses = []
    loss_function = nn.NLLLoss()
    model = NGramLanguageModeler(len(vocab), EMBEDDING_DIM, CONTEXT_SIZE)
    _init(lib, model, 230, 0.5)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
    for _epoch in range(3):
        total_loss = 0
        for context, target in ngrams:
            context_idxs = torch.tensor([word_to_ix[w] for w in context], dtype=torch.long)
            model.zero_grad()
            log_probs = model(context_idxs)
            loss = loss_function(log_probs, torch.tensor([word_to_ix[target]], dtype=torch.long))
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        losses.append(torch.tensor(total_loss))
    show(*losses)
    show(model.embeddings.weight[word_to_ix["beauty's"]])
    emb = nn.Embedding(10, 3, padding_idx=0, max_norm=1.0)
    _init(lib, emb, 231, 2.0)
    out = emb(torch.tensor([[0, 2, 4], [4, 3, 0]]))
    out.sum().backward()
    show(out, emb.weight.grad, emb.weight[:5])
    emb2 = nn.Embedding.from_pretrained(torch.tensor([[1.0, 2.3, 3.0], [4.0, 5.1, 6.3]]))
    show(emb2(torch.tensor([1])), emb2.weight.requires_grad, emb2)
    show_outcome(show, lambda: nn.Embedding(10, 3)(torch.tensor([10])))
    show_outcome(show, lambda: emb(torch.tensor([1.0])))
    bag = nn.EmbeddingBag(10, 3, mode="mean")
    _init(lib, bag, 232)
    show(bag(torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4])))


def _serialization_semantics(lib, show):
    torch = lib
    numbers = torch.arange(1, 10)
    evens = numbers[1::2]
    buf = io.BytesIO()
    torch.save([numbers, evens], buf)
    buf.seek(0)
    loaded_numbers, loaded_evens = torch.load(buf)
    loaded_evens *= 2
    show(loaded_numbers, loaded_evens)
    shallow = copy.copy(evens)
    shallow[0] = 100
    show(numbers, shallow.storage_offset())
    small = torch.arange(1, 10)[1::2].clone()
    buf = io.BytesIO()
    torch.save(small, buf)
    show(buf.getbuffer().nbytes < 2000)
    buf.seek(0)
    show(torch.load(buf).untyped_storage().size())
    buf = io.BytesIO()
    torch.save({"a": torch.ones(2, requires_grad=True), "b": [1, 2.5, "s"], "c": torch.float64,
                "d": torch.Size([2, 3]), "e": torch.tensor([1 + 2j])}, buf)
    buf.seek(0)
    d = torch.load(buf)
    show(d, d["a"].requires_grad)
    buf.seek(0)
    show(torch.load(buf, map_location="cpu")["a"].device, torch.load(io.BytesIO(buf.getvalue()),
                                                                    map_location=torch.device("cpu"))["c"])
    buf = io.BytesIO()
    torch.save({"x": _Custom()}, buf)
    buf.seek(0)
    show_outcome(show, lambda: torch.load(buf, weights_only=True)["x"])
    buf.seek(0)
    show(type(torch.load(buf, weights_only=False)["x"]).__name__)
    nn = torch.nn
    m = nn.Linear(3, 2)
    sd = m.state_dict()
    show(type(sd).__name__, sd._metadata if hasattr(sd, "_metadata") else None)
    show_outcome(show, lambda: m.load_state_dict({"weight": torch.ones(2, 3), "bias": torch.ones(3)}))
    show_outcome(show, lambda: m.load_state_dict({"weight": torch.ones(2, 3), "bias": torch.ones(2), "extra": torch.ones(1)}))
    show(m.load_state_dict({"weight": torch.ones(2, 3)}, strict=False), m.weight)
    show_outcome(show, lambda: m.load_state_dict({"weight": torch.ones(2, 3), "bias": torch.ones(2)}, assign=True))
    show(m.bias, m.bias.requires_grad, type(m.bias).__name__)


def _printing_and_broadcasting(lib, show):
    torch = lib
    t = torch.tensor(_np((2, 3), 240) * 1000, dtype=torch.float32)
    torch.set_printoptions(precision=2)
    show(str(t), str(torch.tensor([1e-8, 1.0])))
    torch.set_printoptions(sci_mode=False)
    show(str(torch.tensor([1e-8, 1.0, 1e8])))
    torch.set_printoptions(profile="default")
    show(str(t), str(torch.arange(2000.)), str(torch.tensor([[1e-8, 1.0]], dtype=torch.float64)))
    torch.set_printoptions(threshold=5, edgeitems=1, linewidth=40)
    show(str(torch.arange(20.).view(4, 5)))
    torch.set_printoptions(profile="default")
    x = torch.empty(5, 1, 4, 1)
    y = torch.empty(3, 1, 1)
    show((x + y).size())
    x = torch.empty(1)
    y = torch.empty(3, 1, 7)
    show((x + y).size())
    show_outcome(show, lambda: torch.empty(5, 2, 4, 1) + torch.empty(3, 1, 1))
    x = torch.empty(5, 3, 4, 1)
    y = torch.empty(3, 1, 1)
    show(x.add_(y).size())
    show_outcome(show, lambda: torch.empty(1, 3, 1).add_(torch.empty(3, 1, 7)))
    show(torch.ones(4, 1).expand(4, 3).sum(), torch.broadcast_shapes((2, 1), (1, 3)), torch.broadcast_tensors(
        torch.ones(2, 1), torch.zeros(3))[1].shape)
    show_outcome(show, lambda: torch.broadcast_shapes((2, 2), (3,)))
    show(torch.tensor([1, 2]) / 2, torch.tensor([1, 2]) // 2, torch.tensor([1, 2], dtype=torch.int32) * 2.5,
         torch.tensor([True]) + 1, (torch.tensor([1.0], dtype=torch.float16) + torch.tensor(1e-4)).dtype)
    a = torch.tensor([1e20, 1, -1e20], dtype=torch.float32)
    show(a.sum(), torch.tensor([1e-45], dtype=torch.float32) / 2, torch.tensor(2.0) ** 128)


def _reinforce_distributions(lib, show):
    torch, nn, F = lib, lib.nn, lib.nn.functional
    Categorical = torch.distributions.Categorical
    policy = nn.Sequential(nn.Linear(4, 16), nn.Dropout(p=0.0), nn.ReLU(), nn.Linear(16, 2))
    _init(lib, policy, 250)
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    rng = np.random.default_rng(251)
    gamma, eps = 0.99, np.finfo(np.float32).eps.item()
    for episode in range(3):
        saved_log_probs, rewards = [], []
        for _t in range(5):
            state = torch.from_numpy(rng.standard_normal(4).astype(np.float32)).unsqueeze(0)
            probs = F.softmax(policy(state), dim=1)
            m = Categorical(probs)
            action = torch.tensor([int(rng.integers(0, 2))])
            saved_log_probs.append(m.log_prob(action))
            rewards.append(float(rng.uniform()))
        R, returns = 0, []
        for r in rewards[::-1]:
            R = r + gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        policy_loss = []
        for log_prob, R in zip(saved_log_probs, returns):
            policy_loss.append(-log_prob * R)
        optimizer.zero_grad()
        policy_loss = torch.cat(policy_loss).sum()
        policy_loss.backward()
        optimizer.step()
        show(episode, policy_loss, m.entropy(), m.probs)
    N = torch.distributions.Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
    show(N, N.log_prob(torch.tensor([0.5, 0.5])), N.cdf(torch.tensor([0.0, 1.0])), N.mean, N.stddev)
    mu = torch.tensor([0.5], requires_grad=True)
    d = torch.distributions.Normal(mu, 1.0)
    z = d.rsample()
    show(z.grad_fn is not None, d.has_rsample, Categorical(logits=torch.zeros(3)).has_rsample)
    kl = torch.distributions.kl_divergence(torch.distributions.Normal(mu, 1.0), torch.distributions.Normal(0.0, 2.0))
    kl.backward()
    show(kl, mu.grad)
    show_outcome(show, lambda: Categorical(probs=torch.tensor([-0.1, 1.1])))
    show_outcome(show, lambda: torch.distributions.Normal(0.0, -1.0))
    show(torch.distributions.Bernoulli(logits=torch.tensor([0.3])).log_prob(torch.tensor([1.0])))


def _tensor_views(lib, show):
    torch = lib
    t = torch.tensor(_np((4, 4), 260), dtype=torch.float32)
    b = t.view(2, 8)
    show(t.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())
    b[0][0] = 3.14
    show(t[0][0], b._base is t, t._base)
    base = torch.tensor([[0, 1], [2, 3]])
    show(base.is_contiguous())
    t = base.transpose(0, 1)
    show(t.is_contiguous(), t.stride(), t.storage_offset())
    c = t.contiguous()
    show(c.is_contiguous(), c._base is None, c.untyped_storage().data_ptr() == base.untyped_storage().data_ptr())
    for name, f in [("view_as_real", lambda: torch.view_as_real(torch.tensor([1 + 2j]))), ("diagonal", lambda: base.diagonal()),
                    ("expand", lambda: base[:1].expand(3, 2)), ("narrow", lambda: base.narrow(1, 1, 1)),
                    ("unbind", lambda: base.unbind(0)[1]), ("split", lambda: base.split(1)[0]),
                    ("unflatten", lambda: base.view(-1).unflatten(0, (2, 2))), ("movedim", lambda: base.movedim(0, 1)),
                    ("T", lambda: base.T), ("mT", lambda: base.mT), ("unfold", lambda: torch.arange(6).unfold(0, 2, 2)),
                    ("real", lambda: torch.tensor([1 + 2j]).real), ("indices", lambda: base[torch.tensor([0])]),
                    ("reshape_c", lambda: base.reshape(4)), ("reshape_nc", lambda: base.t().reshape(4)),
                    ("flatten", lambda: base.t().flatten()), ("detach", lambda: base.detach()),
                    ("view_dtype", lambda: torch.ones(2).view(torch.int32)), ("squeeze", lambda: base[None].squeeze(0))]:
        v = f()
        show(name, v._base is not None, v.is_contiguous(), v.stride(), v)
    show_outcome(show, lambda: base.t().view(-1))
    show_outcome(show, lambda: torch.ones(2, 3).view(4))
    show_outcome(show, lambda: torch.ones(2, 3).view(-1, -1))
    x = torch.zeros(4)
    v = x[1:3]
    v.fill_(1)
    show(x, x._version, v._version)
    w = x.view(2, 2)
    w.add_(torch.ones(2, 2))
    show(x, x._version)


PROGRAMS = [_poly_tensors,
            _poly_nn_and_optim,
            _poly_custom_module,
            _build_the_network,
            _optimizing_parameters,
            _save_and_load,
            _nn_really,
            _forward_ad,
            _jacobians_hessians,
            _autograd_mechanics,
            _optimizers,
            _tensors_tutorial,
            _datasets_and_loaders,
            _grad_clipping,
            _lr_schedulers,
            _module_hooks_features,
            _checkpointing,
            _char_rnn,
            _lstm_tagger,
            _transformer,
            _multihead_attention,
            _dqn_pieces,
            _seq2seq_attention,
            _dcgan_and_vae,
            _modules_note,
            _intro_tensor_ops,
            _distillation,
            _pruning,
            _tensor_views,
            _bilstm_crf,
            _ngram_and_cbow,
            _serialization_semantics,
            _printing_and_broadcasting,
            _reinforce_distributions]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_tutorial_program(program):
    # (float32 sums over 2000 points drift apart in the last bits over many optimizer steps)
    rtol, atol = (1e-3, 1e-4) if program is _poly_nn_and_optim else (1e-4, 1e-5)
    assert_same_transcript(program, rtol=rtol, atol=atol)
