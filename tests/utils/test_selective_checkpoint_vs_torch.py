"""Selective activation checkpointing (``create_selective_checkpoint_contexts``) against PyTorch: which operators
the policy is asked about, which ones run again in backward, the gradients, and the errors."""

from __future__ import annotations

import functools
from collections import Counter

import numpy as np
import pytest
from torch.utils._python_dispatch import TorchDispatchMode

from tests._lib import assert_close, raised, run_both, tg, torch
from tracegrad._ops import overload_of
from tracegrad.utils._python_dispatch import OpInterceptor


class _TorchCounter(TorchDispatchMode):
    """Counts the aten operators that actually run (entered outside checkpoint's own modes)."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.counts[str(func)] += 1
        return func(*args, **(kwargs or {}))


class _TgCounter(OpInterceptor):
    """The same for tracegrad: an interceptor entered before SAC's sees the operators SAC lets run."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()

    def intercept(self, op, args, kwargs):
        self.counts[str(overload_of(op))] += 1
        return op(*args, **kwargs)


# Operators outside the checkpointed function that the two libraries run differently: PyTorch's checkpoint
# detaches through the dispatcher, its backward() makes the initial gradient with ones_like and its linear
# backward one more transpose.
_NOT_COMPARED = {"aten.detach.default", "aten.ones_like.default", "aten.t.default"}


def _inputs(lib):
    x = lib.tensor(np.random.RandomState(0).randn(4, 4), requires_grad=True)
    w = lib.tensor(np.random.RandomState(1).randn(4, 4), requires_grad=True)
    return x, w


def _fn(lib):
    def fn(x, w):
        a = x.sin()
        b = a @ w
        c = lib.sigmoid(b) * x.cos()
        d = lib.nn.functional.linear(c, w, None).relu()
        return (d.exp() + b).sum(dim=1).tanh()

    return fn


def _run(lib, policy_of, *, backward: bool = True, allow_cache_entry_mutation: bool = False, fn=None):
    """Checkpoint ``fn`` under SAC with ``policy_of(lib)``; return the policy calls, the operator counts of the
    forward and of the backward, and the gradients."""
    cp = lib.utils.checkpoint
    calls = []
    policy = policy_of(lib)
    if callable(policy):
        inner = policy

        def policy(ctx, op, *args, **kwargs):
            out = ctx.op_output
            calls.append((str(op), ctx.is_recompute, tuple(out.shape) if isinstance(out, lib.Tensor) else None))
            return inner(ctx, op, *args, **kwargs)

    x, w = _inputs(lib)
    counter = _TorchCounter() if lib is torch else _TgCounter()
    context_fn = functools.partial(cp.create_selective_checkpoint_contexts, policy,
                                   allow_cache_entry_mutation=allow_cache_entry_mutation)
    with counter:
        out = cp.checkpoint((fn or _fn)(lib), x, w, use_reentrant=False, context_fn=context_fn)
        fwd_calls = list(calls)
        fwd = +counter.counts
        counter.counts.clear()
        if backward:
            out.sum().backward()
    bwd = +counter.counts
    for counts in (fwd, bwd):
        for name in _NOT_COMPARED:
            counts.pop(name, None)
    return {"fwd_calls": fwd_calls, "bwd_calls": calls[len(fwd_calls):], "fwd": dict(fwd), "bwd": dict(bwd),
            "grads": (x.grad, w.grad), "out": out}


def _saving(*names: str):
    def policy_of(lib):
        cp = lib.utils.checkpoint

        def policy(ctx, op, *args, **kwargs):
            return cp.CheckpointPolicy.MUST_SAVE if str(op) in names else cp.CheckpointPolicy.PREFER_RECOMPUTE

        return policy

    return policy_of


def _compare(ours: dict, theirs: dict) -> None:
    assert ours["fwd_calls"] == theirs["fwd_calls"]
    assert ours["bwd_calls"] == theirs["bwd_calls"] == []  # the policy is only asked in the forward
    assert ours["fwd"] == theirs["fwd"]
    assert ours["bwd"] == theirs["bwd"]
    for a, b in zip(ours["grads"], theirs["grads"]):
        assert_close(a, b)


SAVED = [(), ("aten.sin.default",), ("aten.mm.default",), ("aten.sin.default", "aten.mm.default", "aten.relu.default"),
         ("aten.mul.Tensor", "aten.sum.dim_IntList", "aten.tanh.default", "aten.t.default")]


@pytest.mark.parametrize("saved", SAVED, ids=["-".join(s) or "none" for s in SAVED])
def test_policy_calls_counts_and_grads(saved):
    _compare(*run_both(_run, _saving(*saved)))


def test_must_save_outputs_are_not_recomputed():
    recompute_all = _run(tg, _saving())
    save_some = _run(tg, _saving("aten.sin.default", "aten.mm.default"))
    # recomputation runs sin once more and both mms again: saving them saves those runs
    assert recompute_all["bwd"]["aten.sin.default"] - save_some["bwd"]["aten.sin.default"] == 1
    assert recompute_all["bwd"]["aten.mm.default"] - save_some["bwd"]["aten.mm.default"] == 2
    assert recompute_all["bwd"]["aten.relu.default"] == save_some["bwd"]["aten.relu.default"] == 1


@pytest.mark.parametrize("policy", ["MUST_SAVE", "PREFER_SAVE", "MUST_RECOMPUTE", "PREFER_RECOMPUTE",
                                    "MUST_CPU_OFFLOAD", True, False])
def test_each_policy_value(policy):
    def policy_of(lib):
        value = policy if isinstance(policy, bool) else getattr(lib.utils.checkpoint.CheckpointPolicy, policy)
        return lambda ctx, op, *args, **kwargs: value

    _compare(*run_both(_run, policy_of))


def test_list_of_ops():
    def policy_of(lib):
        return [lib.ops.aten.mm.default, lib.ops.aten.sigmoid.default]

    ours, theirs = run_both(_run, policy_of)
    _compare(ours, theirs)
    assert "aten.sigmoid.default" not in ours["bwd"]  # saved: not run again


def test_cached_tensor_mutated():
    def fn_of(lib):
        def fn(x, w):
            a = lib.mm(x, w)
            b = lib.sigmoid(a)
            a.add_(1)  # writes into the cached mm output
            # (ending with an op that saves its output: tracegrad packs an op's saved inputs after its kernel,
            # PyTorch before, so an early-stopped recomputation would run the last mul only here)
            return (b * a).exp().sum()

        return fn

    def program(lib, allow=False):
        return _run(lib, lambda lib: [lib.ops.aten.mm.default], fn=fn_of, allow_cache_entry_mutation=allow)

    ours, theirs = raised(tg, program), raised(torch, program)
    assert ours == theirs == ("RuntimeError", "Tensor cached during selective activation checkpoint has been mutated")
    # allowed: the recomputation reads the mutated value, as PyTorch's does
    ours, theirs = run_both(program, allow=True)
    _compare(ours, theirs)


def test_backward_twice_and_mismatched_recomputation():
    def twice(lib):
        out = _run(lib, _saving("aten.mm.default"), backward=False)["out"]
        out.sum().backward(retain_graph=True)
        out.sum().backward()

    assert raised(tg, twice) == raised(torch, twice)
    assert raised(tg, twice)[1].startswith("Trying to backward an extra time")

    def changing(lib):
        state = {"first": True}

        def fn_of(lib):
            def fn(x, w):
                y = x.sin() if state.pop("first", False) else x.cos()
                return (y * w).sum()

            return fn

        _run(lib, _saving("aten.sin.default"), fn=fn_of)

    ours = raised(tg, changing)
    assert ours == raised(torch, changing)
    assert ours[1].startswith("aten.cos.default encountered during backward but not found in storage.")


def test_bad_policies():
    def packet(lib):
        lib.utils.checkpoint.create_selective_checkpoint_contexts([lib.ops.aten.mm])

    ours, theirs = raised(tg, packet), raised(torch, packet)
    assert ours == (theirs[0], theirs[1].replace("torch._ops", "tracegrad._ops"))
    for bad in ([lib_op] for lib_op in ("mm", 3)):
        def program(lib, bad=bad):
            lib.utils.checkpoint.create_selective_checkpoint_contexts(bad)

        assert raised(tg, program) == raised(torch, program)

    def not_callable(lib):
        lib.utils.checkpoint.create_selective_checkpoint_contexts(3)

    assert raised(tg, not_callable) == raised(torch, not_callable)

    def reentrant(lib):
        cp = lib.utils.checkpoint
        x, w = _inputs(lib)
        cp.checkpoint(_fn(lib), x, w, use_reentrant=True,
                      context_fn=functools.partial(cp.create_selective_checkpoint_contexts, []))

    assert raised(tg, reentrant) == raised(torch, reentrant)

    def raising_policy(lib):
        def policy(ctx, op, *args, **kwargs):
            raise ValueError(f"no policy for {op}")

        _run(lib, lambda lib: policy)

    assert raised(tg, raising_policy) == raised(torch, raising_policy) == ("ValueError", "no policy for aten.sin.default")


def test_op_handles():
    def program(lib):
        aten = lib.ops.aten
        cp = lib.utils.checkpoint
        return (str(aten.mm.default), repr(aten.mm.default), aten.mm.default.name(), aten.mul.Tensor.name(),
                aten.mm.default.__name__, str(aten.mm), repr(aten.mm), aten.mm.default.overloadpacket is aten.mm,
                aten.mm.default == aten.mm.default, aten.mm.default in [aten.sin.default, aten.mm.default],
                aten.detach.default in cp.SAC_IGNORED_OPS, aten.mm.default in cp.SAC_IGNORED_OPS,
                [p.name for p in cp.CheckpointPolicy], [p.value for p in cp.CheckpointPolicy],
                cp.SelectiveCheckpointContext(is_recompute=False).is_recompute,
                "create_selective_checkpoint_contexts" in cp.__all__)

    ours, theirs = run_both(program)
    assert ours == theirs
    for bad in ("aten.sin.Tensor", "aten.mm.nope", "aten.no_such_op"):
        def program(lib, bad=bad):
            return eval("lib.ops." + bad)

        assert raised(tg, program) == raised(torch, program)
    x = tg.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert_close(tg.ops.aten.mm.default(x, x), tg.mm(x, x))
