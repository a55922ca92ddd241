"""PyTorch's "Neural Networks" tutorial (LeNet), the module hooks of ``torch.nn.modules.module`` (global
forward, backward and registration hooks), full backward hooks with in-place operations, and the tutorial
"How to save memory by fusing the optimizer step into the backward pass", run under tracegrad and torch.

What each program shows (values, graphs, hook calls in order, errors, warnings) must be torch's. Parameters
are set from NumPy (tracegrad's generator is not torch's).

Differences these programs found, now fixed:
- the global backward hooks (``register_module_full_backward_pre_hook``, ``register_module_full_backward_hook``,
  the deprecated ``register_module_backward_hook``), the global registration hooks (buffer, module, parameter),
  ``with_kwargs`` for global forward hooks and global ``always_call`` hooks on an error were missing;
- a module with full backward hooks passes its inputs and outputs through ``BackwardHookFunction`` as torch
  does: they become views created in a custom Function, so modifying them in place (``nn.ReLU(inplace=True)``,
  an output changed after the call) raises torch's error instead of giving silently wrong hook arguments;
- the FutureWarnings of a non-full backward hook whose forward has several nodes were missing.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from _lib import assert_close, recorded_graph, tg, torch
from _tutorial_lib import assert_same_transcript


def _t(lib, shape, seed, requires_grad=False):
    return lib.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=lib.float32,
                      requires_grad=requires_grad)


def _set_params(lib, module, seed, scale=0.2):
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.tensor(rng.uniform(-scale, scale, tuple(p.shape)), dtype=p.dtype))


def _module_module(lib):
    return importlib.import_module(lib.__name__ + ".nn.modules.module")


@pytest.fixture
def fresh_global_hooks():
    """A global backward hook fixes, for good, whether global backward hooks are full ones: start and end
    each test with that choice still open in both libraries."""
    mods = [_module_module(tg), _module_module(torch)]
    for m in mods:
        m._global_is_full_backward_hook = None
    yield
    for m in mods:
        m._global_is_full_backward_hook = None


def test_lenet_tutorial():
    def program(lib, show):
        nn, F = lib.nn, lib.nn.functional

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 6, 5)
                self.conv2 = nn.Conv2d(6, 16, 5)
                self.fc1 = nn.Linear(16 * 5 * 5, 120)
                self.fc2 = nn.Linear(120, 84)
                self.fc3 = nn.Linear(84, 10)

            def forward(self, input):
                c1 = F.relu(self.conv1(input))
                s2 = F.max_pool2d(c1, (2, 2))
                c3 = F.relu(self.conv2(s2))
                s4 = F.max_pool2d(c3, 2)
                s4 = lib.flatten(s4, 1)
                f5 = F.relu(self.fc1(s4))
                f6 = F.relu(self.fc2(f5))
                return self.fc3(f6)

        net = Net()
        show(net)
        params = list(net.parameters())
        show(len(params), params[0].size())
        _set_params(lib, net, 0)
        input = _t(lib, (1, 1, 32, 32), 1)
        out = net(input)
        show(out)
        net.zero_grad()
        out.backward(_t(lib, (1, 10), 2))
        target = _t(lib, (10,), 3).view(1, -1)
        criterion = nn.MSELoss()
        loss = criterion(net(input), target)
        show(loss)
        show(loss.grad_fn)
        show(loss.grad_fn.next_functions[0][0])
        show(loss.grad_fn.next_functions[0][0].next_functions[0][0])
        show(recorded_graph([loss]))
        net.zero_grad()
        show("conv1.bias.grad before backward", net.conv1.bias.grad)
        loss.backward()
        show("conv1.bias.grad after backward", net.conv1.bias.grad)
        for f in net.parameters():
            f.data.sub_(f.grad.data * 0.01)
        optimizer = lib.optim.SGD(net.parameters(), lr=0.01)
        optimizer.zero_grad()
        loss = criterion(net(input), target)
        loss.backward()
        optimizer.step()
        show(loss, net.fc3.bias, net.conv1.weight.grad)

    assert_same_transcript(program, rtol=1e-4, atol=1e-6)


def test_global_module_hooks_in_order(fresh_global_hooks):
    def program(lib, show):
        mm = _module_module(lib)
        name = lambda m: type(m).__name__
        handles = [
            mm.register_module_forward_pre_hook(lambda m, i: show("global forward pre", name(m))),
            mm.register_module_forward_hook(lambda m, i, o: show("global forward", name(m))),
            mm.register_module_forward_hook(lambda m, a, kw, o: show("global forward kw", name(m), sorted(kw)),
                                            with_kwargs=True),
            mm.register_module_full_backward_pre_hook(lambda m, go: show("global backward pre", name(m), go)),
            mm.register_module_full_backward_hook(lambda m, gi, go: show("global backward", name(m), gi)),
        ]
        try:
            net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
            _set_params(lib, net, 0)
            net[0].register_forward_pre_hook(lambda m, i: show("own forward pre 0"))
            net[0].register_forward_hook(lambda m, i, o: show("own forward 0"))
            net[2].register_full_backward_pre_hook(lambda m, go: show("own backward pre 2"))
            net[2].register_full_backward_hook(lambda m, gi, go: show("own backward 2"))
            x = _t(lib, (5, 3), 1, requires_grad=True)
            out = net(x)
            show(out.grad_fn, out.grad_fn.next_functions)
            out.sum().backward()
            show(x.grad)
            try:
                mm.register_module_backward_hook(lambda m, gi, go: None)
            except RuntimeError as e:
                show(e)
        finally:
            for h in handles:
                h.remove()
        net(x).sum().backward()
        show("removed")

    log = assert_same_transcript(program)
    assert log[0] == (("text", "global forward pre"), ("text", "Sequential"))


def test_global_registration_hooks():
    def program(lib, show):
        mm = _module_module(lib)

        def report(kind):
            return lambda m, n, v: show(kind, type(m).__name__, n, type(v).__name__)

        handles = [mm.register_module_buffer_registration_hook(report("buffer")),
                   mm.register_module_module_registration_hook(report("module")),
                   mm.register_module_parameter_registration_hook(report("parameter")),
                   mm.register_module_parameter_registration_hook(
                       lambda m, n, p: lib.nn.Parameter(lib.zeros_like(p)) if n == "extra" else None)]
        try:
            net = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
            net.act = lib.nn.ReLU()
            net.act = None
            net.register_buffer("b", lib.ones(2))
            net.extra = lib.nn.Parameter(lib.ones(2))
            net.add_module("last", lib.nn.Tanh())
            show(net.extra)
        finally:
            for h in handles:
                h.remove()
        lib.nn.Linear(1, 1)
        show("removed")

    assert_same_transcript(program)


def test_global_always_called_forward_hook_on_error():
    def program(lib, show):
        mm = _module_module(lib)

        class Broken(lib.nn.Module):
            def forward(self, x):
                raise ValueError("forward failed")

        h1 = mm.register_module_forward_hook(lambda m, i, o: show("always", type(m).__name__, o), always_call=True)
        h2 = mm.register_module_forward_hook(lambda m, i, o: 1 / 0, always_call=True)
        try:
            Broken()(lib.ones(2))
        finally:
            h1.remove()
            h2.remove()

    log = assert_same_transcript(program)
    assert log[-2][0][:2] == ("raised", "ValueError")


def test_global_non_full_backward_hook(fresh_global_hooks):
    def program(lib, show):
        mm = _module_module(lib)
        handle = mm.register_module_backward_hook(
            lambda m, gi, go: show("legacy", type(m).__name__, [g if g is None else tuple(g.shape) for g in gi]))
        try:
            try:
                mm.register_module_full_backward_hook(lambda *args: None)
            except RuntimeError as e:
                show(e)
            net = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Tanh())
            net(_t(lib, (4, 2), 0, requires_grad=True)).sum().backward()
        finally:
            handle.remove()

    assert_same_transcript(program)


@pytest.mark.parametrize("case", ["inplace_relu", "inplace_relu_on_leaf", "output_changed_after",
                                  "view_output_changed", "forward_modifies_input", "two_outputs"])
def test_full_backward_hooks_and_inplace(case):
    """The "Modifying inputs or outputs inplace is not allowed when using backward hooks" note."""

    def program(lib, show):
        class ViewOut(lib.nn.Module):
            def forward(self, x):
                return x.view(-1)

        class Modifies(lib.nn.Module):
            def forward(self, x):
                return x.mul_(2)

        class Two(lib.nn.Module):
            def forward(self, x):
                return x * 1, x * 2

        module = {"inplace_relu": lib.nn.ReLU(inplace=True), "inplace_relu_on_leaf": lib.nn.ReLU(inplace=True),
                  "output_changed_after": lib.nn.Linear(2, 2), "view_output_changed": ViewOut(),
                  "forward_modifies_input": Modifies(), "two_outputs": Two()}[case]
        module.register_full_backward_hook(lambda m, gi, go: show("hook", gi, go))
        x = _t(lib, (3, 2), 0, requires_grad=True)
        out = module(x if case == "inplace_relu_on_leaf" else x * 1)
        first = out[0] if isinstance(out, tuple) else out
        show(first.grad_fn, first._is_view(), first._base is not None)
        if case in ("output_changed_after", "view_output_changed", "two_outputs"):
            first.add_(1)
        first.sum().backward()
        show(x.grad)

    log = assert_same_transcript(program)
    assert log[-1][0][0] == "raised"


def test_inputs_without_grad_pass_through_as_views():
    def program(lib, show):
        class M(lib.nn.Module):
            def forward(self, a, b):
                show(a._is_view(), b._is_view(), b.requires_grad)
                b.add_(1)  # allowed: b needs no gradient
                return a * b

        m = M()
        m.register_full_backward_hook(lambda mod, gi, go: show("hook", gi, go))
        a, b = _t(lib, (2,), 0, requires_grad=True), _t(lib, (2,), 1)
        m(a, b).sum().backward()
        show(a.grad, b)

    assert_same_transcript(program)


@pytest.mark.parametrize("case", ["input_without_grad", "unused_input", "unused_output", "non_tensor_argument",
                                  "output_without_grad"])
def test_full_backward_hook_gradients_of_every_tensor(case):
    """BackwardHookFunction is a custom Function: the gradients it does not receive are zeros (materialized),
    so the hook sees zeros for an input that needs no gradient, and an unused input gets a zero ``.grad``."""

    def program(lib, show):
        class M(lib.nn.Module):
            def forward(self, a, c, k=2.0):
                if case == "unused_input":
                    return a * k
                if case == "output_without_grad":
                    return a * c, lib.ones(2), a.argmax()
                return a * c * k, c * 2

        module = M()
        module.register_full_backward_pre_hook(lambda m, go: show("pre", go))
        module.register_full_backward_hook(lambda m, gi, go: show("hook", gi, go))
        a = _t(lib, (2,), 0, requires_grad=True)
        c = _t(lib, (2,), 1, requires_grad=case != "input_without_grad")
        out = module(c, 3.0, a) if case == "non_tensor_argument" else module(a, c)
        (out if isinstance(out, lib.Tensor) else out[0]).sum().backward()
        show(a.grad, c.grad)

    assert_same_transcript(program)


@pytest.mark.parametrize("case", ["linear", "tuple_output", "dict_output"])
def test_non_full_backward_hook_warnings(case):
    def program(lib, show):
        class TupleOut(lib.nn.Module):
            def forward(self, x):
                return x * 2, x * 3

        class DictOut(lib.nn.Module):
            def forward(self, x):
                return {"y": x * 2}

        module = {"linear": lib.nn.Linear(2, 2), "tuple_output": TupleOut(), "dict_output": DictOut()}[case]
        module.register_backward_hook(
            lambda m, gi, go: show("hook", [g if g is None else tuple(g.shape) for g in gi], len(go)))
        out = module(_t(lib, (3, 2), 0, requires_grad=True))
        first = out[0] if isinstance(out, tuple) else out["y"] if isinstance(out, dict) else out
        first.sum().backward()

    log = assert_same_transcript(program)
    assert log[-1][0][:2] == ("warned", "FutureWarning")


def test_optimizer_step_in_backward():
    """The tutorial's pattern: one optimizer per parameter, stepped from its post-accumulate-grad hook."""

    def program(lib, show):
        model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.ReLU(), lib.nn.Linear(8, 2))
        _set_params(lib, model, 0, scale=0.5)
        names = {p: n for n, p in model.named_parameters()}
        optimizer_dict = {p: lib.optim.Adam([p], foreach=False) for p in model.parameters()}

        def optimizer_hook(parameter) -> None:
            show("step", names[parameter])
            optimizer_dict[parameter].step()
            optimizer_dict[parameter].zero_grad()

        for p in model.parameters():
            p.register_post_accumulate_grad_hook(optimizer_hook)
        x = _t(lib, (5, 4), 1)
        for _ in range(3):
            model(x).sum().backward()
        show([p.grad for p in model.parameters()])
        show(list(model.parameters()))

    log = assert_same_transcript(program)
    assert [line[1][1] for line in log[:4]] == ["2.bias", "2.weight", "0.bias", "0.weight"]


def test_tutorial_module_and_optimizer_reprs():
    """``print(model)`` and ``print(optimizer)`` of the tutorials, and a training loop's losses."""
    def run(lib):
        model = lib.nn.Sequential(lib.nn.Linear(3, 1), lib.nn.Flatten(0, 1))
        _set_params(lib, model, 0)
        x = lib.linspace(-3.0, 3.0, 50)
        xx = x.unsqueeze(-1).pow(lib.tensor([1, 2, 3]))
        loss_fn = lib.nn.MSELoss(reduction="sum")
        optimizer = lib.optim.RMSprop(model.parameters(), lr=1e-3)
        losses = []
        for _ in range(20):
            loss = loss_fn(model(xx), lib.sin(x))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        return repr(model), repr(optimizer), losses

    (m1, o1, l1), (m2, o2, l2) = run(tg), run(torch)
    assert (m1, o1) == (m2, o2)
    assert_close(np.array(l1), np.array(l2), rtol=1e-4)


def test_non_full_backward_hook_errors_name_the_hook():
    def program(lib, show):
        def my_legacy_hook(module, grad_input, grad_output):
            return (grad_input[0],)  # AddmmBackward0 has three grad_inputs

        module = lib.nn.Linear(2, 2)
        module.register_backward_hook(my_legacy_hook)
        module(_t(lib, (1, 2), 0, requires_grad=True)).sum().backward()

    log = assert_same_transcript(program)
    assert "hook 'my_legacy_hook' has returned an incorrect number of values" in log[0][0][2]
