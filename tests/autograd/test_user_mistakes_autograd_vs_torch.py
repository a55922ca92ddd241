"""Autograd mistakes from notebooks: backward on the wrong thing or twice, gradients asked of tensors without
history, in-place writes autograd cannot allow, hooks and custom Functions that return the wrong things, gradcheck
failures. Each program gives torch's exception type and message (or torch's result) and torch's warnings.
(Mistakes already compared in test_api_errors_vs_torch.py are not repeated here.)"""

from __future__ import annotations

import numpy as np
import pytest
from _mistakes_lib import assert_as_torch


def _leaf(L, n: int = 2, dtype=None):
    return L.ones(n, dtype=dtype, requires_grad=True)


def _modified_saved_input(L):
    a = _leaf(L) * 1
    b = a ** 2
    a.add_(1)
    b.sum().backward()


def _modified_saved_output(L):
    y = _leaf(L).exp()
    y.add_(1)
    y.sum().backward()


def _sigmoid_then_inplace(L):
    y = _leaf(L).sigmoid()
    y.mul_(2)
    y.sum().backward()


def _relu_inplace_after_use(L):
    x = _leaf(L) * 1
    z = x.tanh()
    L.relu_(z)
    (z * x).sum().backward()


def _grad_twice(L):
    x = _leaf(L)
    y = (x * x).sum()
    L.autograd.grad(y, x)
    return L.autograd.grad(y, x)


def _second_derivative_without_create_graph(L):
    x = _leaf(L)
    (g,) = L.autograd.grad((x ** 3).sum(), x)
    g.sum().backward()


def _backward_in_no_grad(L):
    x = _leaf(L)
    with L.no_grad():
        y = (x * 2).sum()
    y.backward()


def _backward_create_graph_warns(L):
    x = _leaf(L)
    (x * x).sum().backward(create_graph=True)
    return x.grad.requires_grad


def _hook_changes(L, change):
    x = _leaf(L)
    x.register_hook(change)
    (x * 2).sum().backward()
    return x.grad


def _function(L, forward, backward):
    """A custom autograd Function from a forward and a backward."""
    return type("MyFn", (L.autograd.Function,), {"forward": staticmethod(forward),
                                                  "backward": staticmethod(backward)})


def _custom(L, backward, forward=lambda ctx, x: x * 2, inputs=1):
    fn = _function(L, forward, backward)
    args = [_leaf(L) for _ in range(inputs)]
    fn.apply(*args).sum().backward()
    return [a.grad for a in args]


def _custom_instance_called(L):
    fn = _function(L, lambda ctx, x: x * 2, lambda ctx, g: g * 2)
    return fn()(_leaf(L))


def _custom_forward_called(L):
    fn = _function(L, lambda ctx, x: x * 2, lambda ctx, g: g * 2)
    return fn.forward(None, _leaf(L)).shape


def _custom_saves_an_int(L):
    def forward(ctx, x):
        ctx.save_for_backward(3)
        return x * 2

    return _function(L, forward, lambda ctx, g: g).apply(_leaf(L))


def _custom_saves_intermediate_then_reads(L):
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 2

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        (x,) = ctx.saved_tensors
        return g * x

    y = _function(L, forward, backward).apply(_leaf(L))
    y.sum().backward(retain_graph=False)
    return y.grad_fn.saved_tensors


def _gradcheck_wrong_backward(L):
    fn = _function(L, lambda ctx, x: x * 2, lambda ctx, g: g * 3)
    x = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
    return L.autograd.gradcheck(fn.apply, (x,), raise_exception=True)


def _gradcheck_wrong_backward_quiet(L):
    fn = _function(L, lambda ctx, x: x * 2, lambda ctx, g: g * 3)
    x = L.tensor([1.0, 2.0], dtype=L.float64, requires_grad=True)
    return L.autograd.gradcheck(fn.apply, (x,), raise_exception=False)


def _gradcheck_float32(L):
    return L.autograd.gradcheck(L.sin, (L.tensor([0.5, 1.0], requires_grad=True),), raise_exception=False)


def _inference_tensor_saved(L):
    with L.inference_mode():
        t = L.ones(2)
    return (_leaf(L) * t).sum()


def _inference_tensor_inplace(L):
    with L.inference_mode():
        t = L.ones(2)
    t.add_(1)


def _inference_tensor_requires_grad_inside(L):
    with L.inference_mode():
        t = L.ones(2)
        t.requires_grad_()
    return t.requires_grad


def _inference_tensor_requires_grad(L):
    with L.inference_mode():
        t = L.ones(2)
    t.requires_grad_()


def _view_of_leaf_in_place(L):
    x = _leaf(L, 4)
    x[:2].mul_(2)


def _reshape_view_of_leaf_in_place(L):
    x = _leaf(L, 4)
    x.view(2, 2).zero_()


def _leaf_setitem(L):
    w = _leaf(L, 3)
    w[0] = 0.0


def _update_leaf_without_no_grad(L):
    w = _leaf(L)
    (w * 2).sum().backward()
    w -= 0.1 * w.grad


def _update_leaf_data(L):
    w = _leaf(L)
    (w * 2).sum().backward()
    w.data -= 0.1 * w.grad
    return w


def _grad_zero_when_none(L):
    _leaf(L).grad.zero_()


def _backward_then_grad_of_intermediate(L):
    x = _leaf(L)
    y = x * 2
    y.sum().backward()
    return y.grad


def _retain_grad_without_requires_grad(L):
    L.ones(2).retain_grad()


def _grad_outputs_count(L):
    x = _leaf(L)
    return L.autograd.grad([(x * 2).sum()], [x], grad_outputs=[L.ones(()), L.ones(())])


def _grad_outputs_shape(L):
    x = _leaf(L)
    return L.autograd.grad([x * 2], [x], grad_outputs=[L.ones(3)])


def _backward_gradient_count(L):
    x = _leaf(L)
    L.autograd.backward([(x * 2).sum(), (x * 3).sum()], [L.ones(())])


def _backward_inputs_empty(L):
    (_leaf(L) * 2).sum().backward(inputs=[])


def _jacobian_of_a_float(L):
    return L.autograd.functional.jacobian(lambda x: 1.0, _leaf(L))


def _jacobian_of_a_list(L):
    return L.autograd.functional.jacobian(lambda x: x * 2, [1.0, 2.0])


def _no_grad_without_parentheses(L):
    with L.no_grad:
        pass


def _set_grad_enabled_without_argument(L):
    with L.set_grad_enabled():
        pass


def _grad_of_integer_output(L):
    x = _leaf(L)
    return L.autograd.grad(x.argmax(), x)


def _grad_of_output_with_integer_input(L):
    return L.autograd.grad((_leaf(L) * 2).sum(), L.ones(2, dtype=L.long))


def _requires_grad_non_bool(L):
    return _leaf(L).requires_grad_("yes")


def _detach_then_backward(L):
    (_leaf(L) * 2).detach().sum().backward()


def _backward_complex_scalar(L):
    x = L.ones(2, dtype=L.complex64, requires_grad=True)
    (x * 2).sum().backward()


def _register_hook_without_grad(L):
    L.ones(2).register_hook(lambda g: g)


def _hook_not_callable(L):
    x = _leaf(L)
    x.register_hook(3)
    (x * 2).sum().backward()


def _backward_gradient_of_other_dtype(L):
    x = _leaf(L)
    (x * 2).backward(L.ones(2, dtype=L.float64))
    return x.grad


def _backward_gradient_of_int(L):
    x = _leaf(L)
    (x * 2).backward(L.ones(2, dtype=L.long))
    return x.grad


def _backward_gradient_not_tensor(L):
    x = _leaf(L)
    (x * 2).backward([1.0, 1.0])


def _mark_dirty_not_in_place(L):
    def forward(ctx, x):
        ctx.mark_dirty(x)
        return x * 2

    return _function(L, forward, lambda ctx, g: g).apply(_leaf(L) * 1)


def _forward_returns_a_list(L):
    return _function(L, lambda ctx, x: [x * 2], lambda ctx, g: g).apply(_leaf(L))


def _custom_apply_with_kwargs(L):
    return _function(L, lambda ctx, x: x * 2, lambda ctx, g: g).apply(x=_leaf(L))


def _asarray_in_no_grad(L):
    x = _leaf(L)
    with L.no_grad():
        return np.asarray(x).tolist()


def _iadd_on_leaf(L):
    x = _leaf(L)
    x += 1


def _no_grad_decorator(L):
    @L.no_grad()
    def predict(t):
        return t * 2

    @L.no_grad
    def predict_bare(t):
        return t * 2

    return predict(_leaf(L)).requires_grad, predict_bare(_leaf(L)).requires_grad


def _requires_grad_on_non_leaf(L):
    y = _leaf(L) * 2
    y.requires_grad = True
    return y.requires_grad


def _grad_of_a_view_of_a_leaf(L):
    x = _leaf(L)
    (x * 2).sum().backward()
    return x[0].grad


def _retained_grad_of_non_leaf(L):
    x = _leaf(L)
    y = x * 2
    y.retain_grad()
    y.sum().backward()
    return y.grad


def _checkpoint_without_use_reentrant(L):
    from importlib import import_module

    checkpoint = import_module(f"{L.__name__}.utils.checkpoint").checkpoint
    return checkpoint(lambda t: t * 2, _leaf(L)).shape


CASES = {
    "backward of a non-scalar": lambda L: (_leaf(L) * 2).backward(),
    "backward gradient of a wrong shape": lambda L: (_leaf(L) * 2).backward(L.ones(3)),
    "backward gradient of another dtype": _backward_gradient_of_other_dtype,
    "backward gradient of an int dtype": _backward_gradient_of_int,
    "backward gradient not a tensor": _backward_gradient_not_tensor,
    "backward gradients of a wrong count": _backward_gradient_count,
    "backward inputs empty": _backward_inputs_empty,
    "backward in no_grad": _backward_in_no_grad,
    "backward of a detached tensor": _detach_then_backward,
    "backward of a complex scalar": _backward_complex_scalar,
    "backward create_graph warns": _backward_create_graph_warns,
    "grad twice without retain_graph": _grad_twice,
    "second derivative without create_graph": _second_derivative_without_create_graph,
    "grad_outputs of a wrong count": _grad_outputs_count,
    "grad_outputs of a wrong shape": _grad_outputs_shape,
    "grad of an integer output": _grad_of_integer_output,
    "grad for an integer input": _grad_of_output_with_integer_input,
    "grad of a list output": lambda L: L.autograd.grad([1.0], [_leaf(L)]),
    "grad of an intermediate after backward": _backward_then_grad_of_intermediate,
    "grad.zero_() before any backward": _grad_zero_when_none,
    "retain_grad without requires_grad": _retain_grad_without_requires_grad,
    "requires_grad_ of a non-bool": _requires_grad_non_bool,
    "requires_grad_ with a string keyword": lambda L: _leaf(L).requires_grad_(requires_grad="x"),
    "requires_grad attribute set to a string": lambda L: setattr(L.ones(2), "requires_grad", "yes"),
    "requires_grad_ of an inference tensor inside inference_mode": _inference_tensor_requires_grad_inside,
    "requires_grad of a float32 factory with a string": lambda L: L.ones(2, requires_grad="yes").requires_grad,
    "modified saved input": _modified_saved_input,
    "modified saved output": _modified_saved_output,
    "sigmoid output modified": _sigmoid_then_inplace,
    "relu_ of a saved tanh output": _relu_inplace_after_use,
    "in-place on a slice of a leaf": _view_of_leaf_in_place,
    "in-place on a reshaped leaf": _reshape_view_of_leaf_in_place,
    "setitem on a leaf": _leaf_setitem,
    "SGD step by hand without no_grad": _update_leaf_without_no_grad,
    "SGD step by hand through .data": _update_leaf_data,
    "hook returns a double": lambda L: _hook_changes(L, lambda g: g.double()),
    "hook returns a float": lambda L: _hook_changes(L, lambda g: 1.0),
    "hook returns a list": lambda L: _hook_changes(L, lambda g: [g]),
    "hook on a tensor without grad": _register_hook_without_grad,
    "hook not callable": _hook_not_callable,
    "custom Function returns too many gradients": lambda L: _custom(L, lambda ctx, g: (g, g)),
    "custom Function returns too few gradients": lambda L: _custom(
        L, lambda ctx, g: g, forward=lambda ctx, a, b: a * b, inputs=2),
    "custom Function gradient of a wrong shape": lambda L: _custom(L, lambda ctx, g: L.ones(3)),
    "custom Function gradient of a wrong dtype": lambda L: _custom(L, lambda ctx, g: g.double()),
    "custom Function gradient not a tensor": lambda L: _custom(L, lambda ctx, g: 1.0),
    "custom Function instance called": _custom_instance_called,
    "custom Function forward called directly": _custom_forward_called,
    "custom Function saves an int": _custom_saves_an_int,
    "custom Function saved tensors after backward": _custom_saves_intermediate_then_reads,
    "custom Function mark_dirty of an out-of-place result": _mark_dirty_not_in_place,
    "custom Function forward returns a list": _forward_returns_a_list,
    "custom Function apply with keywords": _custom_apply_with_kwargs,
    "gradcheck of a wrong backward raises": _gradcheck_wrong_backward,
    "gradcheck of a wrong backward quietly": _gradcheck_wrong_backward_quiet,
    "gradcheck of float32 warns": _gradcheck_float32,
    "gradcheck without inputs requiring grad": lambda L: L.autograd.gradcheck(
        L.sin, (L.ones(2, dtype=L.float64),)),
    "gradgradcheck without inputs requiring grad": lambda L: L.autograd.gradgradcheck(
        L.sin, (L.ones(2, dtype=L.float64),)),
    "inference tensor saved for backward": _inference_tensor_saved,
    "inference tensor updated in place": _inference_tensor_inplace,
    "inference tensor requires_grad_": _inference_tensor_requires_grad,
    "jacobian of a function returning a float": _jacobian_of_a_float,
    "jacobian of a list input": _jacobian_of_a_list,
    "no_grad without parentheses": _no_grad_without_parentheses,
    "set_grad_enabled without an argument": _set_grad_enabled_without_argument,
    "checkpoint without use_reentrant": _checkpoint_without_use_reentrant,
    "np.asarray of a tensor that requires grad": lambda L: np.asarray(_leaf(L)),
    "np.array of a non-leaf": lambda L: np.array(_leaf(L) * 2),
    "np.asarray in no_grad": _asarray_in_no_grad,
    "x += 1 on a leaf": _iadd_on_leaf,
    "no_grad as a decorator, with and without parentheses": _no_grad_decorator,
    "requires_grad = True on a non-leaf": _requires_grad_on_non_leaf,
    "requires_grad_(True) on a non-leaf": lambda L: (_leaf(L) * 2).requires_grad_(True).requires_grad,
    "requires_grad = False on a non-leaf": lambda L: setattr(_leaf(L) * 2, "requires_grad", False),
    "requires_grad = 'yes' on a non-leaf": lambda L: setattr(_leaf(L) * 2, "requires_grad", "yes"),
    ".grad of a view of a leaf": _grad_of_a_view_of_a_leaf,
    ".grad of a non-leaf after retain_grad": _retained_grad_of_non_leaf,
}

# Programs torch runs without error or warning (results compared).
SILENT = {"backward gradient of another dtype", "SGD step by hand through .data", "backward gradient of an int dtype",
          "custom Function gradient of a wrong dtype", "custom Function forward called directly",
          "custom Function forward returns a list", "custom Function apply with keywords",
          "gradcheck of a wrong backward quietly", "requires_grad_ of an inference tensor inside inference_mode",
          "np.asarray in no_grad", "no_grad as a decorator, with and without parentheses",
          ".grad of a non-leaf after retain_grad", "requires_grad_(True) on a non-leaf",
          "grad_outputs of a wrong count"}

KNOWN: dict = {}  # (none now: tracegrad's __array__ takes no copy keyword either, so NumPy warns alike)

# Differences whose fix belongs to files being edited by others: reported, and kept as strict expected failures so
# that the fix turns them into passing cases. (The autograd/api.py and autograd/function.py differences first found
# here -- a non-tensor gradient, the tensors/gradients counts, a non-tensor output, a number returned by a custom
# backward, extra grad_outputs -- were being fixed there while this was written, and are plain cases now.)
PENDING: dict[str, str] = {}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=PENDING[n]))
                                  if n in PENDING else n for n in CASES])
def test_same_outcome_as_torch(name):
    assert_as_torch(name, CASES[name], SILENT, KNOWN)
