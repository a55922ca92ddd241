"""Activation checkpointing: ``torch.utils.checkpoint``.

Ports the behaviour of seed 004 (PyTorch ``test_autograd.py``) area L. ``checkpoint(fn, *args,
use_reentrant=..., context_fn=..., debug=..., preserve_rng_state=..., **kwargs)`` must give the
same values and gradients as running ``fn`` directly, while not keeping ``fn``'s intermediates
alive after the forward. The reentrant variant runs ``fn`` under ``no_grad`` and re-runs it in a
nested backward (so it only works with ``.backward()``); the non-reentrant variant is built on
saved-tensor hooks and recomputes lazily when a saved tensor is unpacked, checks that the
recomputation saves the same tensors, and frees recomputed tensors as soon as they are used.

Seed tests ported here: test_custom_autograd_ac_early_stop, test_checkpointing (small sizes),
test_checkpointing_without_reentrant_memory_savings (A: measured with weak references to an
intermediate instead of CUDA memory statistics), test_checkpointing_without_reentrant_custom_function_works,
test_checkpointing_without_reentrant_with_context_fn (A: logging context managers instead of a
TorchDispatchMode), test_checkpoint_warns_if_use_reentrant_not_passed_explcitly,
test_checkpoint_sequential_warns_if_use_reentrant_not_passed_explcitly,
test_checkpoint_graph_execution_group, test_checkpoint_detects_non_determinism,
test_access_saved_tensor_twice_without_recomputation_works, test_checkpointing_without_reentrant
(x2 input_requires_grad, small sizes), test_checkpoint_valid_reset_on_error,
test_checkpointing_without_reentrant_detached_tensor (x2 use_reentrant),
test_checkpointing_without_reentrant_saved_object_identity,
test_checkpointing_without_reentrant_correct_grad,
test_checkpointing_without_reentrant_parameter_used_in_an_out,
test_checkpointing_without_reentrant_arbitrary_input_output.

Beyond the seed (brief of area L): checkpoint_sequential correctness, preserve_rng_state with
dropout, and non-tensor positional arguments.

test_custom_autograd_ac_early_stop runs ``gc.collect()`` instead of the seed's ``disable_gc``:
PyTorch 2.13 itself keeps the first call's frame in a traceback cycle, so only "nothing holds the
recomputed tensors after backward" is portable, not "freed by reference counting alone".

Skipped (marked N): test_checkpointing_non_reentrant_autocast_cpu / _gpu (autocast),
test_checkpointing_without_reentrant_dataparallel (DataParallel). The selective-checkpoint tests
(``CheckpointPolicy``, ``create_selective_checkpoint_contexts``) are imported by the seed but cut off.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import warnings
import weakref

import pytest
from _lib import assert_close, np, tg


class _Lazy:
    """Attribute access resolved at use time, so a missing feature fails only the tests using it."""

    def __init__(self, dotted):
        self._dotted = dotted

    def __getattr__(self, name):
        return getattr(importlib.import_module(f"{tg.__name__}.{self._dotted}"), name)


cp = _Lazy("utils.checkpoint")
nn = _Lazy("nn")


def checkpoint(*args, **kwargs):
    return cp.checkpoint(*args, **kwargs)


def checkpoint_sequential(*args, **kwargs):
    return cp.checkpoint_sequential(*args, **kwargs)


USE_REENTRANT = pytest.mark.parametrize("use_reentrant", [True, False], ids=["reentrant", "non_reentrant"])
ALREADY_FREED = "or directly access saved tensors after they have already been freed"


def _small_mlp(seed=0):
    """Linear(3, 8) -> ReLU -> Linear(8, 3) with fixed weights."""
    rng = np.random.default_rng(seed)
    model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 3))
    with tg.no_grad():
        for p in model.parameters():
            p.copy_(tg.tensor(rng.standard_normal(tuple(p.shape)).tolist()))
    return model


def _grads(params):
    return [p.grad.clone() for p in params]


def test_custom_autograd_ac_early_stop():
    """Tensors saved by a custom Function inside a non-reentrant checkpoint are freed after backward."""
    refs = []

    class Test(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.clone()
            ctx.save_for_backward(y)
            refs.append(weakref.ref(y))
            return y

        @staticmethod
        def backward(ctx, *args):
            _ = ctx.saved_tensors
            return None

    inp = tg.randn(3, 3, requires_grad=True)

    def scope():
        out = checkpoint(Test.apply, inp, use_reentrant=False)
        out.sum().backward()

    scope()
    # PyTorch itself can hold the scope's frame in a traceback cycle on a first call (early stop
    # is implemented with an exception), so only the cycle collector is guaranteed to free it.
    gc.collect()
    assert len(refs) == 2  # original forward + recomputation
    for ref in refs:
        assert ref() is None


@USE_REENTRANT
def test_checkpointing(use_reentrant):
    """Per-sample checkpointed MLP gives the same parameter gradients as the plain model."""
    model = _small_mlp()
    rng = np.random.default_rng(1)
    data = [tg.tensor(rng.uniform(size=(1, 3)).tolist(), requires_grad=True) for _ in range(4)]

    tg.stack([model(d) for d in data]).mean().backward()
    expected = _grads(model.parameters())
    model.zero_grad()

    feats = [checkpoint(model, d, use_reentrant=use_reentrant) for d in data]
    tg.stack(feats).mean().backward()
    assert_close(_grads(model.parameters()), expected)


@USE_REENTRANT
def test_checkpointing_without_reentrant_memory_savings(use_reentrant):
    """A checkpointed function's intermediates are not kept alive between forward and backward."""
    refs = []

    def fn(x):
        h = x.sin()
        refs.append(weakref.ref(h))
        return h.cos()  # cos saves its input h

    x = tg.randn(3, requires_grad=True)
    out = fn(x)
    assert refs[0]() is not None  # without checkpointing the graph holds h
    del out
    refs.clear()

    out = checkpoint(fn, x, use_reentrant=use_reentrant)
    gc.collect()
    assert refs[0]() is None
    out.sum().backward()
    assert len(refs) == 2  # recomputed once in backward
    assert_close(x.grad, -(x.sin().sin()) * x.cos())


def test_checkpointing_without_reentrant_custom_function_works():
    """Inside one backward, a recomputed saved tensor can be unpacked only once."""
    msg = "Unpack is being triggered for a tensor that was already unpacked once"
    second_access = []

    class MyFunc(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, z):
            w = x * y * z
            out = w + w
            ctx.save_for_backward(x, y, z, w, out)
            return out

        @staticmethod
        def backward(ctx, grad_out):
            x, y, z, w, out = ctx.saved_tensors
            # Recomputed tensors are cleared as soon as they are unpacked.
            try:
                ctx.saved_tensors
            except RuntimeError as e:
                second_access.append(str(e))
            return x, y, z

    x = tg.tensor(1.0, requires_grad=True)
    y = tg.tensor(2.0, requires_grad=True)
    z = tg.tensor(3.0, requires_grad=True)

    def foo(x, y, z):
        x = x * y * z
        y = y * y * z
        z = z * z
        return MyFunc.apply(x, y, z)

    out = checkpoint(foo, x, y, z, use_reentrant=False)
    out.sum().backward()
    assert len(second_access) == 1 and msg in second_access[0]


def test_checkpointing_without_reentrant_with_context_fn():
    """context_fn's first context wraps the forward, its second the recomputation; reentrant rejects it."""
    log = []

    @contextlib.contextmanager
    def logging_ctx(name):
        log.append(f"{name}:enter")
        try:
            yield
        finally:
            log.append(f"{name}:exit")

    def fn(x):
        log.append("fn")
        return x.exp()

    x = tg.tensor(1.0, requires_grad=True)
    out = checkpoint(
        fn, x, use_reentrant=False, context_fn=lambda: (logging_ctx("fwd"), contextlib.nullcontext())
    )
    assert log == ["fwd:enter", "fn", "fwd:exit"]

    log.clear()
    out = checkpoint(
        fn, x, use_reentrant=False, context_fn=lambda: (contextlib.nullcontext(), logging_ctx("recompute"))
    )
    assert log == ["fn"]
    out.backward()
    assert log == ["fn", "recompute:enter", "fn", "recompute:exit"]
    assert_close(x.grad, tg.tensor(1.0).exp())

    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(
            lambda t: t.sin(),
            x,
            use_reentrant=True,
            context_fn=lambda: (contextlib.nullcontext(), contextlib.nullcontext()),
        )


def _assert_warned_once(caught):
    hits = [w for w in caught if "the use_reentrant parameter should be passed explicitly" in str(w.message)]
    assert len(hits) == 1
    assert issubclass(hits[0].category, UserWarning)


def test_checkpoint_warns_if_use_reentrant_not_passed_explcitly():
    """Omitting use_reentrant warns exactly once per call; passing it explicitly does not."""
    a = tg.randn(1, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checkpoint(lambda x: x, a, use_reentrant=False)
    assert not [w for w in caught if "use_reentrant" in str(w.message)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checkpoint(lambda x: x, a)
    _assert_warned_once(caught)


def test_checkpoint_sequential_warns_if_use_reentrant_not_passed_explcitly():
    """checkpoint_sequential warns the same way when use_reentrant is omitted."""
    a = tg.randn(3, requires_grad=True)
    modules_list = [nn.Linear(3, 3), nn.Linear(3, 3), nn.Linear(3, 3)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checkpoint_sequential(modules_list, 3, a, use_reentrant=False)
    assert not [w for w in caught if "use_reentrant" in str(w.message)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checkpoint_sequential(modules_list, 3, a)
    _assert_warned_once(caught)


def test_checkpoint_graph_execution_group():
    """GraphExecGroup lets disjoint grad() calls share one recomputation; overlapping calls raise."""

    def run(use_group):
        counter = [0]

        def fn(x):
            counter[0] += 1
            y = x.sin().cos()
            z = y.sin().cos()
            return y, z

        x = tg.randn(3, 3, requires_grad=True)
        y, z = checkpoint(fn, x, use_reentrant=False)
        ctx = cp.GraphExecGroup() if use_group else contextlib.nullcontext()
        with ctx:
            (grad_y,) = tg.autograd.grad(z, inputs=(y,), grad_outputs=(tg.ones(3, 3),))
            (grad_x,) = tg.autograd.grad(y, inputs=(x,), grad_outputs=(grad_y,))
        return counter[0], grad_x

    count_group, grad_group = run(True)
    count_plain, grad_plain = run(False)
    assert count_group == 2
    assert count_plain == 3

    x = tg.randn(3, 3, requires_grad=True)
    out = checkpoint(lambda t: t.sin().cos(), x, use_reentrant=False)
    with cp.GraphExecGroup():
        # Inside the group two backwards must be disjoint, even with retain_graph=True.
        out.sum().backward(retain_graph=True)
        with pytest.raises(RuntimeError, match="Performing two backward calls that overlap"):
            out.sum().backward()


def _non_det_fn(orig_fn, recompute_fn):
    counter = [0]

    def fn(x):
        if counter[0] == 0:
            counter[0] += 1
            return orig_fn(x)
        return recompute_fn(x)

    return fn


def _save_3_tensors(x):
    return x.sin().exp().sin()


def _save_2_tensors(x):
    return x.sin().exp()


def _save_2_tensors_alt(x):
    return x.sin() * tg.tensor([1.0, 2.0])


def test_checkpoint_detects_non_determinism():
    """Recomputation saving different tensors than the forward is detected, with debug hints."""
    a = tg.randn(1, requires_grad=True)

    with pytest.raises(RuntimeError, match="A different number of tensors was saved"):
        checkpoint(_non_det_fn(_save_3_tensors, _save_2_tensors), a, use_reentrant=False).backward()

    with cp.set_checkpoint_early_stop(False), pytest.raises(
        RuntimeError, match="trying to save more tensors during recomputation"
    ):
        checkpoint(_non_det_fn(_save_2_tensors, _save_3_tensors), a, use_reentrant=False).backward()

    # With early stop (the default) recomputation stops once enough tensors exist: no error.
    checkpoint(_non_det_fn(_save_2_tensors, _save_3_tensors), a, use_reentrant=False).backward()

    with pytest.raises(RuntimeError, match="tensors have different metadata"):
        checkpoint(_non_det_fn(_save_2_tensors, _save_2_tensors_alt), a, use_reentrant=False).backward()

    debug_msg = "You are seeing this error because you passed `debug=True` to checkpoint"
    with pytest.raises(RuntimeError, match=debug_msg):
        checkpoint(_non_det_fn(_save_2_tensors, _save_2_tensors_alt), a, use_reentrant=False, debug=True).backward()

    with cp.set_checkpoint_debug_enabled(True), pytest.raises(RuntimeError, match=debug_msg):
        checkpoint(_non_det_fn(_save_2_tensors, _save_2_tensors_alt), a, use_reentrant=False, debug=False).backward()

    with cp.set_checkpoint_debug_enabled(False), pytest.raises(
        RuntimeError, match="Recomputed values for the following tensors have different"
    ):
        checkpoint(_non_det_fn(_save_2_tensors, _save_2_tensors_alt), a, use_reentrant=False, debug=True).backward()


def test_access_saved_tensor_twice_without_recomputation_works():
    """Reading a saved tensor outside backward recomputes each time; backward recomputes and frees."""
    count = [0]

    def foo(a):
        count[0] += 1
        b = a * a
        c = a * b  # noqa: F841 - saved tensors the recomputation must reproduce
        return tg.exp(a)

    a = tg.randn(5, requires_grad=True)
    d = checkpoint(foo, a, use_reentrant=False)
    assert count[0] == 1
    d.grad_fn._saved_result
    assert count[0] == 2
    d.grad_fn._saved_result
    assert count[0] == 3
    d.sum().backward()
    assert count[0] == 4
    with pytest.raises(RuntimeError, match=ALREADY_FREED):
        d.grad_fn._saved_result


@pytest.mark.parametrize("input_requires_grad", [True, False], ids=["input_rg", "input_no_rg"])
def test_checkpointing_without_reentrant(input_requires_grad):
    """Non-reentrant checkpoint of a module called with a keyword argument matches the plain model."""

    class Holder(nn.Module):
        def __init__(self, mod):
            super().__init__()
            self.module = mod

        def forward(self, data):
            return self.module(data)

    model = Holder(_small_mlp(2))
    rng = np.random.default_rng(3)
    data = [tg.tensor(rng.uniform(size=(1, 3)).tolist()).requires_grad_(input_requires_grad) for _ in range(4)]

    plain = tg.stack([model(d) for d in data]).mean()
    plain.backward()
    expected = _grads(model.parameters())
    model.zero_grad()

    ckpt = tg.stack([checkpoint(model, data=d, use_reentrant=False) for d in data]).mean()
    ckpt.backward()
    assert_close(ckpt, plain)
    assert_close(_grads(model.parameters()), expected)


def test_checkpoint_valid_reset_on_error():
    """Reentrant checkpoint rejects autograd.grad, and works again with backward() afterwards."""
    a = tg.randn(2, 2, requires_grad=True)
    with pytest.raises(Exception, match="torch.utils.checkpoint is incompatible"):
        b = checkpoint(tg.exp, a, use_reentrant=True).sum()
        tg.autograd.grad(b, (a,))
    c = checkpoint(tg.exp, a, use_reentrant=True).sum()
    c.backward()
    assert_close(a.grad, a.detach().exp())


@USE_REENTRANT
def test_checkpointing_without_reentrant_detached_tensor(use_reentrant):
    """Outputs that do not require grad: reentrant raises, non-reentrant is fine."""

    class NoGradModule(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(2, 2, bias=False)
            self.lin2 = nn.Linear(2, 2, bias=False)

        def forward(self, x):
            with tg.no_grad():
                return self.lin2(self.linear(x))

    module = NoGradModule()
    a = tg.randn(2, 2, requires_grad=True)
    for _ in range(2):
        err_ctx = (
            pytest.raises(RuntimeError, match="none of output has requires_grad=True")
            if use_reentrant
            else contextlib.nullcontext()
        )
        with err_ctx:
            out = checkpoint(module, a, use_reentrant=use_reentrant)
            out += a  # make the loss require grad
            out.sum().backward()


def test_checkpointing_without_reentrant_saved_object_identity():
    """A saved input that does not require grad unpacks to the very same object."""
    seen = []

    class Test(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(y)
            return x

        @staticmethod
        def backward(ctx, x):
            (saved,) = ctx.saved_tensors
            seen.append(saved)
            return x, None

    a = tg.tensor(1.0, requires_grad=True)
    b = tg.tensor(1.0, requires_grad=False)
    Test.apply(a, b).backward()
    assert seen[-1] is b
    checkpoint(Test.apply, a, b, use_reentrant=False).backward()
    assert seen[-1] is b


def test_checkpointing_without_reentrant_correct_grad():
    """Non-reentrant checkpoint gives the plain gradient through backward() and autograd.grad()."""
    a = tg.randn(2, 2, requires_grad=True)
    tg.exp(a).sum().backward()
    b_grad = a.grad

    a.grad = None
    checkpoint(tg.exp, a, use_reentrant=False).sum().backward()
    c_grad = a.grad

    a.grad = None
    d = checkpoint(tg.exp, a, use_reentrant=False).sum()
    (d_grad,) = tg.autograd.grad(d, (a,))
    assert_close(c_grad, b_grad)
    assert_close(d_grad, b_grad)


def test_checkpointing_without_reentrant_parameter_used_in_an_out():
    """A tensor used inside and outside a checkpoint fires its hook once, with the summed grad."""
    w = tg.randn(3, 3, requires_grad=True)
    calls = []
    w.register_hook(lambda grad: calls.append(grad.clone()))
    x = tg.rand(3, 3, requires_grad=True)
    h = w * x  # outside the checkpoint
    out = checkpoint(lambda t: w * t, h, use_reentrant=False)  # inside the checkpoint
    out.sum().backward()
    assert len(calls) == 1
    # d/dw sum(w * (w * x)) = 2 * w * x
    assert_close(calls[0], 2 * w.detach() * x.detach())


def test_checkpointing_without_reentrant_arbitrary_input_output():
    """Non-reentrant checkpoint accepts dict inputs and returns dict outputs."""

    class MyModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(3, 3, bias=False)

        def forward(self, dict_input):
            return {"result": self.layer(dict_input["tensor"])}

    model = MyModel()
    inp = {"tensor": tg.randn(3, 3)}

    plain = model(inp)["result"].sum()
    plain.backward()
    expected = _grads(model.parameters())
    model.zero_grad()

    out = checkpoint(model, inp, use_reentrant=False)
    assert isinstance(out, dict)
    ckpt = out["result"].sum()
    assert_close(ckpt, plain)
    ckpt.backward()
    assert_close(_grads(model.parameters()), expected)


# ---------------------------------------------------------------------------------------------------
# Beyond the seed


@USE_REENTRANT
@pytest.mark.parametrize("segments", [1, 2, 4])
def test_checkpoint_sequential_matches_plain(use_reentrant, segments):
    """checkpoint_sequential over plain callables matches running them in order."""
    fns = [lambda t: t.sin(), lambda t: t * 2, lambda t: t.exp(), lambda t: t.cos()]
    x = tg.randn(3, requires_grad=True)
    out = checkpoint_sequential(fns, segments, x, use_reentrant=use_reentrant)
    out.sum().backward()

    y = x.detach().requires_grad_(True)
    ref = y
    for f in fns:
        ref = f(ref)
    ref.sum().backward()
    assert_close(out, ref)
    assert_close(x.grad, y.grad)


@USE_REENTRANT
def test_checkpoint_sequential_with_sequential_module(use_reentrant):
    """checkpoint_sequential accepts an nn.Sequential and matches its plain gradients."""
    model = _small_mlp(4)
    x = tg.randn(2, 3, requires_grad=True)
    model(x).sum().backward()
    expected = _grads(model.parameters()) + [x.grad.clone()]
    model.zero_grad()
    x.grad = None
    checkpoint_sequential(model, 2, x, use_reentrant=use_reentrant).sum().backward()
    assert_close(_grads(model.parameters()) + [x.grad], expected)


@USE_REENTRANT
def test_checkpoint_preserve_rng_state_dropout(use_reentrant):
    """With preserve_rng_state (the default) the recomputed dropout mask equals the forward one."""
    x = tg.ones(32, requires_grad=True)
    out = checkpoint(
        lambda t: tg.nn.functional.dropout(t, 0.5, training=True),
        x,
        use_reentrant=use_reentrant,
        preserve_rng_state=True,
    )
    out.sum().backward()
    # The gradient is 1/(1-p) exactly where the forward kept an element.
    assert tg.equal(x.grad, (out != 0).to(x.dtype) * 2)


@USE_REENTRANT
def test_checkpoint_non_tensor_args(use_reentrant):
    """Non-tensor positional arguments are passed through to the checkpointed function unchanged."""
    received = []

    def fn(x, k, s, n):
        received.append((k, s, n))
        return x.exp() * k  # exp saves its result, so backward must recompute

    x = tg.ones(2, requires_grad=True)
    checkpoint(fn, x, 3, "mode", None, use_reentrant=use_reentrant).sum().backward()
    assert received == [(3, "mode", None)] * 2  # forward + recomputation
    assert_close(x.grad, tg.ones(2).exp() * 3)


def test_checkpoint_reentrant_rejects_kwargs():
    """Keyword arguments to the function are only supported by the non-reentrant variant."""
    x = tg.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: data"):
        checkpoint(lambda data: data * 2, data=x, use_reentrant=True)
    out = checkpoint(lambda data: data * 2, data=x, use_reentrant=False)
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
