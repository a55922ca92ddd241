"""Review of the custom ``autograd.Function`` fixes of program set 35, each case compared with torch.

- a mark_dirty Function under ``inference_mode`` on a normal tensor that requires grad gave an inference tensor
  (``detach`` in inference mode made one: torch's detach is a view op, and a view of a normal tensor is normal);
- a view made under ``no_grad`` of a tensor that requires grad requires grad (through its base), but
  ``Function.apply`` read the view's own flag: ``needs_input_grad`` False, no graph, a dirty such input returned
  as-is under no_grad instead of detached; ``view * 2`` of such a view crashed in backward (no edge at all);
- ``setup_context`` saving, with ``save_for_forward``, an input returned as-is ran (torch refuses it as it refuses
  ``save_for_backward``'s);
- forward AD: ``jvp`` ran under ``inference_mode`` (forward grad mode is off there); under ``no_grad`` the detached
  alias of a dirty input got the input's tangent; a ``jvp`` returning None for a dirty input with a tangent was
  taken, and one returning another tensor after modifying the tangent in place had the wrong message.
"""

from __future__ import annotations

import pytest
from _lib import tg, torch
from _tutorial_lib import repr_or_error


def _describe(t):
    gf = t.grad_fn
    return (t.tolist(), t.requires_grad, t.is_leaf, None if gf is None else gf.name(), t._is_view(), t.is_inference())


def _scale_inplace_class(lib, jvp=lambda gx: gx.mul_(2)):
    class ScaleInplace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, gx):
            return jvp(gx)

    return ScaleInplace


def test_detach_in_inference_mode_of_a_normal_tensor_as_torch():
    def program(L):
        x = L.ones(2, requires_grad=True)
        with L.inference_mode():
            d = x.detach()
        return d.is_inference(), d._version, d._is_view()

    assert repr_or_error(program, tg) == repr_or_error(program, torch)


INPUTS = {
    "a leaf": lambda L: L.tensor([1.0, -2.0], requires_grad=True),
    "a non-leaf": lambda L: L.tensor([1.0, -2.0], requires_grad=True) * 1,
    "a view of a non-leaf": lambda L: (L.tensor([[1.0, -2.0]], requires_grad=True) * 1)[0],
}


@pytest.mark.parametrize("made", INPUTS)
def test_dirty_input_under_inference_mode_as_torch(made):
    def program(L):
        x = INPUTS[made](L)
        with L.inference_mode():
            out = _scale_inplace_class(L).apply(x)
        return out is x, _describe(out), x._version, out._version, _describe(x)

    assert repr_or_error(program, tg) == repr_or_error(program, torch)


def _viewed_under_no_grad(L):
    a = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with L.no_grad():
        v = a[0:2]
    return a, v


def test_dirty_view_made_under_no_grad_returned_under_no_grad_as_torch():
    def program(L):
        _, v = _viewed_under_no_grad(L)
        with L.no_grad():
            out = _scale_inplace_class(L).apply(v)
        return out is v, _describe(out)

    assert repr_or_error(program, tg) == repr_or_error(program, torch)


def test_view_made_under_no_grad_as_a_function_input_as_torch():
    def program(L):
        seen = []

        class Twice(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                seen.append(ctx.needs_input_grad)
                return g * 2

        a, v = _viewed_under_no_grad(L)
        y = Twice.apply(v)
        y.sum().backward()
        return _describe(y), seen, a.grad

    assert repr_or_error(program, tg) == repr_or_error(program, torch)


def test_backward_of_an_op_on_a_view_made_under_no_grad_as_torch():
    def program(L):
        a, v = _viewed_under_no_grad(L)
        y = v * 2
        y.sum().backward()
        return _describe(y), a.grad

    assert repr_or_error(program, tg) == repr_or_error(program, torch)


def test_setup_context_saving_for_forward_an_input_returned_as_is_as_torch():
    def program(L):
        class ReturnsInput(L.autograd.Function):
            @staticmethod
            def forward(x):
                return x

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_forward(inputs[0])

            @staticmethod
            def backward(ctx, g):
                return g

        out = ReturnsInput.apply(L.ones(2, requires_grad=True))
        return _describe(out)

    assert repr_or_error(program, tg) == repr_or_error(program, torch)


JVPS = {
    "in place": lambda gx: gx.mul_(2),
    "None": lambda gx: None,
    "another tensor, the tangent modified": lambda gx: gx.mul_(2).clone(),
    "another tensor": lambda gx: gx * 2,
}
MODES = {
    "grad": lambda L: L.enable_grad(),
    "no_grad": lambda L: L.no_grad(),
    "inference_mode": lambda L: L.inference_mode(),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("jvp", JVPS)
def test_dirty_input_with_a_tangent_as_torch(jvp, mode):
    def program(L):
        fw = L.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(L.tensor([1.0, 2.0], requires_grad=True) * 1, L.ones(2))
            with MODES[mode](L):
                out = _scale_inplace_class(L, JVPS[jvp]).apply(x)
            out_tangent = fw.unpack_dual(out).tangent
            x_tangent = fw.unpack_dual(x).tangent
            return out is x, None if out_tangent is None else out_tangent.tolist(), x_tangent.tolist()

    assert repr_or_error(program, tg) == repr_or_error(program, torch)
