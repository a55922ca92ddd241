"""``autograd.graph.allow_mutation_on_saved_tensors``: a tensor saved for backward may be written in place inside
the block; backward then reads a clone taken just before the first write. Every program runs on tracegrad
and on torch and must give the same gradients, context state and errors."""

import numpy as np
import pytest
from _lib import assert_close, raised, run_both, tg, torch


def _allowed(lib):
    return lib.autograd.graph.allow_mutation_on_saved_tensors()


def _grad_after_write(lib, write):
    """d/da sum(b * b) with b = a.clone() written in place by ``write(lib, b)`` between forward and backward."""
    with _allowed(lib) as ctx:
        a = lib.arange(6.0, dtype=lib.float64).reshape(2, 3).requires_grad_()
        b = a.clone()
        loss = (b * b).sum()
        write(lib, b)
        state = (len(ctx.cloned), len(ctx.original))
        loss.backward()
        return a.grad, b, state


def _without_grad(lib, fn):
    with lib.no_grad():
        return fn()


WRITES = {
    "method": lambda lib, b: b.sin_(),
    "operator": lambda lib, b: b.__imul__(3),
    "setitem": lambda lib, b: b.__setitem__((slice(None), 0), 7.0),
    "copy_": lambda lib, b: b.copy_(lib.ones(2, 3, dtype=lib.float64)),
    "zero_": lambda lib, b: b.zero_(),
    "out=": lambda lib, b: _without_grad(lib, lambda: lib.exp(lib.ones(2, 3, dtype=lib.float64), out=b)),
    "view at the start": lambda lib, b: b[0].mul_(5),  # same data pointer as b: cloned
    "view further on": lambda lib, b: b[1].mul_(5),  # another data pointer: not cloned, as in torch
    "twice": lambda lib, b: (b.add_(1), b.mul_(2)),
    "reshaped": lambda lib, b: b.view(6).neg_(),
}


@pytest.mark.parametrize("write", list(WRITES), ids=list(WRITES))
def test_backward_reads_the_values_saved_before_the_write(write):
    ours, theirs = run_both(_grad_after_write, WRITES[write])
    assert_close(ours[:2], theirs[:2])
    assert ours[2] == theirs[2]


def test_without_the_context_the_same_write_fails_backward():
    def program(lib):
        a = lib.ones(2, requires_grad=True)
        b = a.clone()
        loss = (b * b).sum()
        b.sin_()
        loss.backward()

    ours, theirs = raised(tg, program), raised(torch, program)
    assert ours is not None and ours[0] == theirs[0] == "RuntimeError"
    assert "modified by an inplace operation" in ours[1]


def test_a_tensor_saved_twice_has_one_handle_and_one_clone():
    def program(lib):
        with _allowed(lib) as ctx:
            x = lib.tensor([1.0, 2.0], requires_grad=True)
            y = x.clone()
            z = y * y  # saves y twice (self and other)
            after_forward = len(ctx.original)
            y.mul_(10)
            after_write = (len(ctx.cloned), len(ctx.original))
            z.sum().backward()
            return after_forward, after_write, x.grad

    ours, theirs = run_both(program)
    assert ours[:2] == theirs[:2] == (1, (1, 0))
    assert_close(ours[2], theirs[2])


def test_a_tensor_freed_by_backward_may_be_written_afterwards():
    def program(lib):
        with _allowed(lib) as ctx:
            a = lib.randn(2, 3, requires_grad=True).clone()
            (a ** 2).sum().backward()
            a.sin_()
            return len(ctx.cloned), len(ctx.original)

    ours, theirs = run_both(program)
    assert ours == theirs


def test_the_unpacked_clone_has_no_history():
    def program(lib):
        with _allowed(lib):
            x = lib.tensor([0.5, 1.5], requires_grad=True)
            y = x * 2
            w = y.sin()  # saves y
            untouched = w.grad_fn._saved_self is y
            y.mul_(3)
            unpacked = w.grad_fn._saved_self
            return untouched, unpacked is y, unpacked.requires_grad, unpacked.grad_fn is None, unpacked.detach()

    ours, theirs = run_both(program)
    assert ours[:4] == theirs[:4]
    assert_close(ours[4], theirs[4])


def test_the_state_is_cleared_on_exit_and_backward_outside_the_block_fails():
    def program(lib):
        with _allowed(lib) as ctx:
            a = lib.ones(2, requires_grad=True)
            loss = (a.clone() ** 2).sum()
        assert len(ctx.original) == len(ctx.tid_to_weakhandle) == len(ctx.sid_to_tid) == 0
        loss.backward()

    ours, theirs = raised(tg, program), raised(torch, program)
    assert ours == theirs
    assert ours[0] == "AssertionError"


def test_nesting_is_refused_and_ends_the_outer_block_too():
    def nested(lib):
        with _allowed(lib), _allowed(lib):
            pass

    def outer_after_refusal(lib):
        with _allowed(lib):
            a = lib.ones(2, requires_grad=True)
            loss = (a.clone() ** 2).sum()
            try:
                with _allowed(lib):
                    pass
            except RuntimeError:
                pass
            loss.backward()  # the refused inner block switched the feature off: unpacking fails

    for program in (nested, outer_after_refusal):
        assert raised(tg, program) == raised(torch, program) is not None


def test_an_optimizer_step_between_forward_and_backward():
    def program(lib, optimizer):
        lib.manual_seed(0)
        w = lib.nn.Parameter(lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4)))
        x = lib.tensor(np.linspace(0, 2, 8).reshape(2, 4))
        opt = optimizer(lib, [w])
        with _allowed(lib):
            loss = (lib.nn.functional.linear(x, w).tanh() * w.sum()).sum()
            w.grad = lib.ones_like(w)
            opt.step()  # writes w, which the forward saved
            w.grad = None
            loss.backward()
        return w.grad, w.detach()

    for optimizer in (lambda lib, p: lib.optim.SGD(p, lr=0.5), lambda lib, p: lib.optim.SGD(p, lr=0.5, momentum=0.9),
                      lambda lib, p: lib.optim.Adam(p, lr=0.5), lambda lib, p: lib.optim.AdamW(p, lr=0.5),
                      lambda lib, p: lib.optim.RMSprop(p, lr=0.5), lambda lib, p: lib.optim.Adagrad(p, lr=0.5)):
        ours, theirs = run_both(program, optimizer)
        assert_close(ours, theirs)


def test_batch_norm_running_statistics_written_by_a_second_forward():
    def program(lib):
        lib.manual_seed(0)
        bn = lib.nn.BatchNorm1d(3, dtype=lib.float64)
        x = lib.tensor(np.linspace(-2, 3, 12).reshape(4, 3), requires_grad=True)
        with _allowed(lib) as ctx:
            first = bn(x)
            second = bn(x * 2)  # updates the running statistics the first node saved: no clone, as in torch
            cloned = len(ctx.cloned)
            (first.sum() + (second ** 2).sum()).backward()
        return cloned, x.grad, bn.running_mean, bn.running_var

    ours, theirs = run_both(program)
    assert ours[0] == theirs[0]
    assert_close(ours[1:], theirs[1:])


def test_gradients_match_a_program_that_clones_by_hand():
    """The point of the feature: the same gradient as saving a copy explicitly."""
    def with_context(lib):
        with _allowed(lib):
            x = lib.tensor([0.3, -1.2, 2.0], requires_grad=True)
            y = x.exp()
            z = (y * x).sum()
            y.mul_(0.0)
            z.backward()
            return x.grad

    x = tg.tensor([0.3, -1.2, 2.0], requires_grad=True)
    (x.exp() * x).sum().backward()
    assert_close(with_context(tg), x.grad)
