"""Area D of seed 004: hooks on graph nodes.

Covers ``Node.register_prehook`` / ``Node.register_hook`` on built-in nodes, custom Functions and
AccumulateGrad nodes (return values replacing gradients, ``None`` entries for non-tensor outputs,
snapshot semantics when handles are removed mid-pass, hooks registered during backward from a
saved-tensor unpack hook), ``Tensor.register_post_accumulate_grad_hook`` (leaf-only, order,
``None`` return, lifetime, optimizer-in-backward) and ``torch.autograd.graph.register_multi_grad_hook``
(``"all"`` / ``"any"`` modes; its upstream tests are past the seed's cut, so these are written
from PyTorch's documented behaviour and checked against the oracle).

The ordering tests of this area (``test_prehook_ordering``, ``test_post_accumulate_grad_hook_ordering``,
``test_backward_hook_relative_ordering``, ``test_hook_edge_case_when_called_with_grad``) are in
``test_tensor_hooks.py`` with the rest of inventory section 2.

Adapted seed tests:
- ``test_post_accumulate_grad_hook_e2e``: builds the reference model by copying parameters instead
  of ``copy.deepcopy``; otherwise the same Adam-in-backward pattern.

No seed test of this area is skipped.
"""

from __future__ import annotations

import gc
import weakref

import pytest
from _lib import assert_close, np, run_both, tg, torch


def _data(shape, seed):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape).tolist()


def _mul2(lib, use_custom_function):
    if not use_custom_function:
        return lambda x: x * 2

    class Mul2(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2

    return Mul2.apply


@pytest.mark.parametrize("use_custom_function", [True, False])
def test_grad_fn_prehooks(use_custom_function):
    """Pre-hooks chain their returned grad_outputs; post-hooks see the final grad_outputs and grad_inputs."""
    mul2 = _mul2(tg, use_custom_function)
    a = tg.tensor([1.0], requires_grad=True)
    b = mul2(a)
    post_seen = []
    pre_counter = [0]

    def posthook(grad_input, grad_output):
        post_seen.append((pre_counter[0], grad_output[0].item(), grad_input[0].item()))
        return grad_input

    def prehook(grad_output):
        pre_counter[0] += 1
        return (grad_output[0] * 2,)

    b.grad_fn.register_hook(posthook)
    b.grad_fn.register_hook(posthook)
    b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(lambda g: None)
    b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(lambda g: g)
    b.grad_fn.register_prehook(lambda g: None)
    b.sum().backward()
    # three doublings before the node, then the node's own x2
    assert post_seen == [(3, 8.0, 16.0), (3, 8.0, 16.0)]
    assert_close(a.grad, np.array([16.0]))

    a = tg.ones(3, 3, requires_grad=True)
    b = mul2(a)
    b.grad_fn.register_prehook(lambda g: pre_counter.__setitem__(0, pre_counter[0] + 1))
    b.sum().backward()
    assert pre_counter[0] == 4
    assert_close(a.grad, np.full((3, 3), 2.0))


def test_grad_fn_prehooks_multiple_outputs():
    """A multi-output node's pre-hook gets and returns one entry per output, None for non-tensors."""
    def program(lib):
        b = lib.tensor(_data((3, 3), 0), requires_grad=True)
        var, mean = lib.var_mean(b, dim=0)
        (var + mean).sum().backward()
        reference = b.grad

        a = b.detach().requires_grad_()
        calls = []

        def prehook(grad_output):
            gvar, gmean = grad_output
            calls.append(len(grad_output))
            return (gvar * 2, gmean * 2)

        var, mean = lib.var_mean(a, dim=0)
        mean.grad_fn.register_prehook(prehook)
        (var + mean).sum().backward()
        return reference * 2, a.grad, calls

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours[0], ours[1])
    assert ours[2] == [2]

    class DoubleMul2(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, k, y):
            ctx.k = k
            return k * x * 2, k, k * y * 2

        @staticmethod
        def backward(ctx, g1, _gk, g2):
            return ctx.k * g1 * 2, None, ctx.k * g2 * 2

    seen = []

    def prehook(grad_output):
        g1, gk, g2 = grad_output
        seen.append(gk)
        return (g1 * 2, None, g2 * 2)

    a = tg.ones(3, 3, requires_grad=True)
    b = tg.ones(3, 3, requires_grad=True)
    k = 3
    c, k_out, d = DoubleMul2.apply(a, k, b)
    assert k_out == 3
    c.grad_fn.register_prehook(prehook)
    (c + d).sum().backward()
    assert seen == [None]  # the non-tensor output's slot stays None
    assert_close(a.grad, np.full((3, 3), 4.0 * k))
    assert_close(b.grad, np.full((3, 3), 4.0 * k))


@pytest.mark.parametrize("use_custom_function", [True, False])
def test_grad_fn_prehooks_remove_hooks(use_custom_function):
    """Removed pre-hooks do not run; removal during backward only affects later passes (snapshot)."""
    mul2 = _mul2(tg, use_custom_function)
    a = tg.ones(3, 3, requires_grad=True)
    b = mul2(a)
    counter = [0]

    def prehook(grad_output):
        counter[0] += 1

    handle = b.grad_fn.register_prehook(prehook)
    b.grad_fn.register_prehook(prehook)
    handle.remove()
    b.sum().backward()
    assert_close(a.grad, np.full((3, 3), 2.0))
    assert counter[0] == 1

    a = tg.ones(3, 3, requires_grad=True)
    b = mul2(a)
    counter = [0]

    def prehook1(grad_output):
        handle2.remove()
        handle3.remove()  # removing an already-removed handle is fine

    def prehook2(grad_output):
        counter[0] += 1

    b.grad_fn.register_prehook(prehook1)
    handle2 = b.grad_fn.register_prehook(prehook2)
    handle3 = b.grad_fn.register_prehook(prehook2)
    handle3.remove()
    b.sum().backward()
    assert_close(a.grad, np.full((3, 3), 2.0))
    assert counter[0] == 1


def test_node_post_hook_registered_during_unpack_hook():
    """A post-hook registered on the running node from an unpack hook runs, with grad_outputs all None."""
    none_checks = []

    class RegisterPostNodeHook(tg.autograd.graph.saved_tensors_hooks):
        def __init__(self):
            def pack(tensor):
                return tensor

            def unpack(tensor):
                node = tg._C._current_autograd_node()

                def hook(grad_inputs, grad_outputs):
                    none_checks.append(all(g is None for g in grad_outputs))
                    return tuple(g / 2.0 if g is not None else None for g in grad_inputs)

                node.register_hook(hook)
                return tensor

            super().__init__(pack, unpack)

    a = tg.tensor(_data((3, 3), 0), requires_grad=True)

    def model():
        var, mean = tg.var_mean(a, dim=0)
        (var + mean).sum().backward()

    model()
    ref_grad = a.grad.clone()
    with RegisterPostNodeHook():
        model()
    assert none_checks and all(none_checks)
    assert_close(a.grad, ref_grad / 2.0 + ref_grad)


def test_accumulate_grad_posthooks_can_observe_tensor_prehook():
    """AccumulateGrad pre/post hooks see the tensor hook's change; its post-hook grad_inputs is empty."""
    def program(lib):
        a = lib.tensor(1.0, requires_grad=True)
        seen = []

        def posthook(grad_inputs, grad_outputs):
            seen.append(("post", len(grad_inputs), len(grad_outputs), grad_outputs[0].item()))

        def prehook(grad_outputs):
            seen.append(("pre", len(grad_outputs), grad_outputs[0].item()))

        b = a.clone()
        acc = b.grad_fn.next_functions[0][0]
        acc.register_hook(posthook)
        acc.register_prehook(prehook)
        a.register_hook(lambda g: g * 2)
        b.backward()
        return seen

    ours, theirs = run_both(program)
    assert ours == theirs == [("pre", 1, 2.0), ("post", 0, 1, 2.0)]


def test_accumulate_grad_posthooks_should_not_execute():
    """Hooks on leaves outside backward(inputs=...) never run."""
    def must_not_run(*_args):
        raise RuntimeError("this hook must not run")

    a = tg.tensor(1.0, requires_grad=True)
    a.register_hook(must_not_run)
    b = tg.tensor(1.0, requires_grad=True)
    c = a.clone()
    acc = c.grad_fn.next_functions[0][0]
    acc.register_hook(must_not_run)
    acc.register_prehook(must_not_run)
    out = a + b + c
    out.sum().backward(inputs=[b])
    assert_close(b.grad, 1.0)
    assert a.grad is None


def test_post_accumulate_grad_hook_on_non_leaf():
    """Post-accumulate-grad hooks are for leaves only."""
    leaf = tg.ones(3, requires_grad=True)
    non_leaf = 2.0 * leaf
    with pytest.raises(RuntimeError,
                       match="post accumulate grad hooks cannot be registered on non-leaf tensors"):
        non_leaf.register_post_accumulate_grad_hook(lambda t: None)


def test_post_accumulate_grad_hook_multiple_hooks():
    """Several post-accumulate hooks run in registration order and receive the tensor with .grad set."""
    def program(lib):
        def hook1(tensor):
            tensor.sub_(tensor.grad)

        def hook2(tensor):
            tensor.mul_(4.0)

        tensor = lib.tensor([0.2, 0.4, 0.6], requires_grad=True)
        tensor.register_post_accumulate_grad_hook(hook1)
        tensor.register_post_accumulate_grad_hook(hook2)
        tensor.sum().backward()
        return tensor.detach()

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours, 4.0 * (np.array([0.2, 0.4, 0.6]) - 1.0))


def test_post_accumulate_grad_hook_multiple_tensors():
    """One hook function registered on two leaves runs for each of them."""
    def program(lib):
        def hook(tensor):
            tensor.sub_(tensor.grad)

        t1 = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
        t2 = lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0], requires_grad=True)
        t1.register_post_accumulate_grad_hook(hook)
        t2.register_post_accumulate_grad_hook(hook)
        t1.sum().backward()
        t2.sum().backward()
        return t1.detach(), t2.detach()

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours, (np.array([0.1, 0.2, 0.3]) - 1.0, np.arange(1.0, 6.0) - 1.0))


def test_post_accumulate_grad_hook_returns_not_None():
    """A post-accumulate-grad hook that returns a value is an error."""
    tensor = tg.ones(2, 3, requires_grad=True)
    tensor.register_post_accumulate_grad_hook(lambda t: t.grad)
    with pytest.raises(RuntimeError, match="hooks should return None."):
        tensor.sum().backward()


def test_post_accumulate_grad_hook_e2e():
    """Optimizer-in-backward: Adam steps from post-accumulate hooks match an ordinary training loop."""
    def make_model():
        model = tg.nn.Linear(3, 2)
        with tg.no_grad():
            model.weight.copy_(tg.tensor(_data((2, 3), 0)))
            model.bias.copy_(tg.tensor(_data((2,), 1)))
        return model

    model = make_model()
    optims = {p: tg.optim.Adam([p]) for p in model.parameters()}

    def optim_step_hook(param):
        optims[param].step()
        optims[param].zero_grad()

    handles = [p.register_post_accumulate_grad_hook(optim_step_hook) for p in model.parameters()]
    model_copy = make_model()
    optim_copy = tg.optim.Adam(model_copy.parameters())
    inp = tg.tensor(_data((2, 3), 2))

    def one_round(iters=3):
        for _ in range(iters):
            model(inp).sum().backward()
            model_copy(inp).sum().backward()
            optim_copy.step()
            optim_copy.zero_grad()

    one_round()
    frozen = []
    for p_ref, p in zip(model_copy.parameters(), model.parameters()):
        assert_close(p, p_ref, rtol=0, atol=0)
        frozen.append(p_ref.detach().clone())

    for h in handles:
        h.remove()
    one_round()
    for p_static, p_ref, p in zip(frozen, model_copy.parameters(), model.parameters()):
        assert_close(p, p_static, rtol=0, atol=0)  # no longer updated
        assert not np.allclose(p.detach().numpy(), p_ref.detach().numpy())


def test_post_accumulate_grad_hook_gets_cleaned_up():
    """A post-accumulate hook (and what it captures) is released together with its tensor."""
    def fun_stuff_with_hook():
        captured = tg.ones(3)

        def hook(tensor):
            tensor.sub_(tensor.grad)
            tensor.add_(captured)

        tensor = tg.ones(3, requires_grad=True)
        tensor.register_post_accumulate_grad_hook(hook)
        tensor.sum().backward()
        ref = weakref.ref(captured)
        gc.collect()
        return tensor, ref

    tensor, ref = fun_stuff_with_hook()
    assert ref() is not None  # kept alive by the tensor's hook
    del tensor
    gc.collect()
    assert ref() is None


def test_grad_fn_posthook_replaces_grad_inputs():
    """A node post-hook's returned tuple replaces the gradients passed on to the next nodes."""
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        c = a * b
        seen = []

        def posthook(grad_inputs, grad_outputs):
            seen.append([g.tolist() for g in grad_inputs] + [g.tolist() for g in grad_outputs])
            return (grad_inputs[0] * 10, None)

        c.grad_fn.register_hook(posthook)
        c.sum().backward()
        return seen, a.grad, b.grad

    ours, theirs = run_both(program)
    assert_close(ours[1:], theirs[1:])
    assert ours[0] == theirs[0] == [[[3.0, 4.0], [1.0, 2.0], [1.0, 1.0]]]
    assert_close(ours[1], np.array([30.0, 40.0]))
    assert ours[2] is None  # a None entry drops that gradient


def test_multi_grad_all_hooks():
    """mode='all' fires once per pass after every needed grad exists, with None for ones not computed."""
    def program(lib):
        register = lib.autograd.graph.register_multi_grad_hook
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        c = a * b
        d = a * b
        log = []
        def record(grads):
            log.append([None if g is None else g.tolist() for g in grads])

        handle = register((a, b, c, d), record)
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        handle.remove()
        c.sum().backward(retain_graph=True)  # removed: nothing logged
        # grad() on non-leaves (PyTorch refuses leaves in a multi-grad hook under grad())
        x = a * 2
        y = a * 3
        z = x * y
        register((x, y), record)
        lib.autograd.grad(z.sum(), (x,), retain_graph=True)
        lib.autograd.grad(z.sum(), (a,), retain_graph=True)
        return log

    ours, theirs = run_both(program)
    assert ours == theirs
    assert ours == [
        [[3.0, 4.0], [1.0, 2.0], [1.0, 1.0], None],
        [[3.0, 4.0], None, [1.0, 1.0], None],  # b is not needed for inputs=(a,)
        [[3.0, 6.0], None],
        [[3.0, 6.0], [2.0, 4.0]],
    ]


def test_multi_grad_any_hooks():
    """mode='any' fires once per pass with the first gradient computed among the tensors."""
    def program(lib):
        register = lib.autograd.graph.register_multi_grad_hook
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        c = a * b
        d = c * 2
        log = []
        handle = register((a, c, d), lambda g: log.append(g.tolist()), mode="any")
        d.sum().backward(retain_graph=True)
        d.sum().backward(retain_graph=True)
        handle.remove()
        d.sum().backward()
        return log

    ours, theirs = run_both(program)
    assert ours == theirs == [[1.0, 1.0], [1.0, 1.0]]  # d's gradient comes first


def test_multi_grad_hook_order_and_errors():
    """The multi-grad hook runs at the tensor-hook slot of the last tensor to finish; bad modes raise."""
    def program(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        log = []
        lib.autograd.graph.register_multi_grad_hook((a, b), lambda grads: log.append("multi"))
        a.register_hook(lambda g: log.append("a"))
        b.register_hook(lambda g: log.append("b"))
        (a * b).sum().backward()
        with pytest.raises(ValueError, match="Expects mode to be one of"):
            lib.autograd.graph.register_multi_grad_hook((a, b), lambda g: None, mode="bad")
        return log

    ours, theirs = run_both(program)
    assert ours == theirs == ["a", "multi", "b"]


def test_post_hook_of_a_node_whose_gradients_lead_nowhere_wanted_sees_none():
    """``backward(inputs=[y])`` for a non-leaf ``y``: y's node runs (for its hooks) but computes no input
    gradient, since nothing below it is wanted; its post hook sees None, as in torch (a custom Function's
    backward, which returns every gradient, is shown them all)."""

    def seen(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 3
        got = []
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: got.append(
            [None if g is None else g.tolist() for g in grad_inputs]))
        (y * 2).sum().backward(inputs=[y])
        return got, y.grad.tolist(), x.grad

    assert seen(tg) == seen(torch)
