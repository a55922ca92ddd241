"""Differences that the programs of ``tests/test_user_programs35_vs_torch.py`` ran into, each reduced to the
custom ``autograd.Function`` call that caused it and compared with torch.

- an in-place Function (``mark_dirty``) called under ``no_grad`` on a leaf that requires grad, or on any input
  that requires grad, was refused with "Some elements marked as dirty during the forward method were not returned
  as output": the returned input comes back detached, and the check looked at that detached alias; torch checks
  what forward returned, and gives the detached alias;
- a Function in the ``setup_context`` form that saved an input it returned as-is ran, its output an alias of the
  input; torch refuses it ("An input that has been returned as-is as output is being saved for backward. ...");
- the node's ``to_save``, ``dirty_tensors``, ``non_differentiable`` and ``saved_for_forward`` were AttributeErrors
  unless forward had just set them, where torch's C fields read None (and None again after ``apply``);
  ``materialize_grads`` read True, where torch refuses to read it ("... is not readable");
  ``set_materialize_grads(0)`` was taken as False, where torch takes only a bool (TypeError).
"""

from __future__ import annotations

import pytest
from _lib import tg, torch
from _tutorial_lib import repr_or_error


def _neg_inplace_class(lib):
    class NegInplace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.neg_()
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return -g

    return NegInplace


def _dirty_under_no_grad(lib, make_input):
    x = make_input(lib)
    with lib.no_grad():
        out = _neg_inplace_class(lib).apply(x)
    return out is x, out.requires_grad, out.grad_fn, out._is_view(), x._version, out.tolist()


DIRTY_UNDER_NO_GRAD = {
    "a leaf that requires grad": lambda L: L.tensor([1.0, -2.0], requires_grad=True),
    "a non-leaf": lambda L: L.tensor([1.0, -2.0], requires_grad=True) * 1,
    "a view of a non-leaf": lambda L: (L.tensor([[1.0, -2.0]], requires_grad=True) * 1)[0],
    "a plain tensor": lambda L: L.tensor([1.0, -2.0]),
}


@pytest.mark.parametrize("case", DIRTY_UNDER_NO_GRAD)
def test_dirty_input_returned_under_no_grad_as_torch(case):
    make_input = DIRTY_UNDER_NO_GRAD[case]
    assert repr_or_error(lambda L: _dirty_under_no_grad(L, make_input), tg) == repr_or_error(
        lambda L: _dirty_under_no_grad(L, make_input), torch)


def _returns_input_class(lib, save):
    class ReturnsInput(lib.autograd.Function):
        @staticmethod
        def forward(x, scale):
            return x

        @staticmethod
        def setup_context(ctx, inputs, output):
            save(ctx, inputs, output)

        @staticmethod
        def backward(ctx, g):
            return g, None

    return ReturnsInput


SAVES = {
    "the output": lambda ctx, inputs, output: ctx.save_for_backward(output),
    "the input": lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]),
    "the input beside None": lambda ctx, inputs, output: ctx.save_for_backward(None, inputs[0]),
    "nothing": lambda ctx, inputs, output: None,
    "a view of the output": lambda ctx, inputs, output: ctx.save_for_backward(output.view_as(output)),
}
INPUTS = {
    "a leaf that requires grad": lambda L: L.ones(3, requires_grad=True),
    "a non-leaf": lambda L: L.ones(3, requires_grad=True) * 2,
    "a plain tensor": lambda L: L.ones(3),
}


def _returned_input_saved(lib, save, make_input, grad_mode):
    x = make_input(lib)
    with lib.set_grad_enabled(grad_mode):
        out = _returns_input_class(lib, save).apply(x, 2.0)
    return out is x, out._is_view(), out.requires_grad, None if out.grad_fn is None else out.grad_fn.name()


@pytest.mark.parametrize("grad_mode", [True, False], ids=["grad", "no_grad"])
@pytest.mark.parametrize("made", INPUTS)
@pytest.mark.parametrize("saved", SAVES)
def test_setup_context_saving_an_input_returned_as_is_as_torch(saved, made, grad_mode):
    def program(L):
        return _returned_input_saved(L, SAVES[saved], INPUTS[made], grad_mode)

    assert repr_or_error(program, tg) == repr_or_error(program, torch)


def _ctx_fields(lib, when):
    seen = {}

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen["before"] = (ctx.to_save, ctx.dirty_tensors, ctx.non_differentiable, ctx.saved_for_forward)
            ctx.save_for_backward(x)
            ctx.mark_non_differentiable()
            seen["set"] = (len(ctx.to_save), ctx.non_differentiable)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            seen["backward"] = (ctx.to_save, ctx.dirty_tensors, ctx.non_differentiable, ctx.saved_for_forward)
            return g * 2

    y = Scale.apply(lib.ones(2, requires_grad=True))
    node = y.grad_fn
    seen["after"] = (node.to_save, node.dirty_tensors, node.non_differentiable, node.saved_for_forward)
    y.sum().backward()
    return seen[when]


@pytest.mark.parametrize("when", ["before", "set", "after", "backward"])
def test_ctx_fields_read_none_when_unset_as_torch(when):
    assert repr_or_error(lambda L: _ctx_fields(L, when), tg) == repr_or_error(lambda L: _ctx_fields(L, when), torch)


def _materialize_flag(lib, action):
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            action(ctx)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return (0 if g1 is None else g1 * 2) + (0 if g2 is None else g2 * 3)

    x = lib.ones(2, requires_grad=True)
    first, _ = Twice.apply(x)
    first.sum().backward()
    return x.grad.tolist()


MATERIALIZE = {
    "read": lambda ctx: ctx.materialize_grads,
    "set False": lambda ctx: ctx.set_materialize_grads(False),
    "set True": lambda ctx: ctx.set_materialize_grads(True),
    "set 0": lambda ctx: ctx.set_materialize_grads(0),
    "set None": lambda ctx: ctx.set_materialize_grads(None),
    "assign False": lambda ctx: setattr(ctx, "materialize_grads", False),
}


@pytest.mark.parametrize("action", MATERIALIZE)
def test_materialize_grads_write_only_bool_as_torch(action):
    def program(L):
        return _materialize_flag(L, MATERIALIZE[action])

    assert repr_or_error(program, tg) == repr_or_error(program, torch)
