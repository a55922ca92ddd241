"""Review of the saved-value records (5c9e258, b535646, 341d0d6, c51eb07): saved values observed or changed after
recording, compared with torch.

The fast paths (and linear, nll_loss, relu) keep plain saved inputs and fresh outputs as records rather than
SavedTensor objects; these programs change or observe them between the forward and the backward: hooks, anomaly
mode and disabled hooks entered only then (they must not apply to values already saved), writes into a saved
value or its base (``.data``, ``set_``, ``detach_``, views), saved-tensor hooks during a ``create_graph`` backward,
and the fused linear, whose saved ``mat2`` PyTorch keeps as ``weight.t()``: a weight written in place is reported
with that view's shape and regenerated grad_fn.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import raised, run_both, to_numpy


def _mk(lib, *shape, requires_grad=True):
    n = 1
    for d in shape:
        n *= d
    return lib.arange(1.0, 1 + n).reshape(shape).div(7).requires_grad_(requires_grad)


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "detach"):
        return ("tensor", to_numpy(value).round(5).tolist())
    return value


def _compare(program):
    def outcome(lib):
        box = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (anomaly mode's warning)
            err = raised(lib, lambda lib: box.append(program(lib)))
        return err if err is not None else _plain(box[0])
    ours, theirs = run_both(outcome)
    assert ours == theirs


# ---- the fused linear's saved weight (PyTorch's ``mat2 = weight.t()``) --------------------------------------


@pytest.mark.parametrize("weight_grad,bias,non_leaf", [(True, True, False), (True, False, False), (True, True, True),
                                                       (True, False, True), (False, True, False),
                                                       (False, False, False)])
def test_linear_weight_written_in_place(weight_grad, bias, non_leaf):
    def program(lib):
        x, p = _mk(lib, 2, 3), _mk(lib, 4, 3, requires_grad=weight_grad)
        w = p * 1 if non_leaf else p
        y = lib.nn.functional.linear(x, w, _mk(lib, 4) if bias else None)
        if non_leaf:
            w.mul_(2)
        else:
            with lib.no_grad():
                w.mul_(2)
        y.sum().backward()
    _compare(program)


def test_linear_input_reported_before_weight():
    def program(lib):
        x, w = _mk(lib, 2, 3), _mk(lib, 4, 3)
        y = lib.nn.functional.linear(x, w, _mk(lib, 4))
        with lib.no_grad():
            x.add_(1)
            w.add_(1)
        y.sum().backward()
    _compare(program)


@pytest.mark.parametrize("how", ["saved_mat2", "anomaly", "create_graph", "module"])
def test_linear_weight_written_after_forward(how):
    def program(lib):
        if how == "module":
            m = lib.nn.Linear(3, 4)
            y = m(_mk(lib, 2, 3))
            with lib.no_grad():
                m.weight.mul_(2)
            return y.sum().backward()
        x, w = _mk(lib, 2, 3), _mk(lib, 4, 3)
        y = lib.nn.functional.linear(x, w, _mk(lib, 4))
        if how == "saved_mat2":
            y.sum().backward(retain_graph=True)
        with lib.no_grad():
            w.add_(1)
        if how == "saved_mat2":
            return [y.grad_fn._saved_mat1, raised(lib, lambda lib: y.grad_fn._saved_mat2)]
        if how == "anomaly":
            with lib.autograd.detect_anomaly():
                return y.sum().backward()
        return lib.autograd.grad(y.sum(), x, create_graph=True)
    _compare(program)


def test_linear_weight_hooked_then_written():
    def program(lib):
        x, w = _mk(lib, 2, 3), _mk(lib, 4, 3)
        y = lib.nn.functional.linear(x, w)
        y.grad_fn._raw_saved_mat2.register_hooks(lambda t: t.clone(), lambda t: t)
        with lib.no_grad():
            w.add_(1)  # (the packed copy is read back: no version check)
        y.sum().backward()
        return [x.grad, w.grad]
    _compare(program)


# ---- hooks and modes entered after recording ------------------------------------------------------------


def _chain(lib):
    x = _mk(lib, 4)
    return x, (x.sin() * x).exp() @ _mk(lib, 4)


@pytest.mark.parametrize("mode", ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "anomaly"])
def test_modes_entered_between_forward_and_backward(mode):
    def program(lib):
        x, y = _chain(lib)
        calls = []
        graph = lib.autograd.graph
        ctx = {"saved_tensors_hooks": lambda: graph.saved_tensors_hooks(lambda t: calls.append("pack") or t,
                                                                         lambda t: calls.append("unpack") or t),
               "save_on_cpu": graph.save_on_cpu,
               "disable_saved_tensors_hooks": lambda: graph.disable_saved_tensors_hooks("off"),
               "anomaly": lib.autograd.detect_anomaly}[mode]
        with ctx():
            y.backward(retain_graph=True)
            saved = y.grad_fn.next_functions[0][0]._saved_result
        return [calls, x.grad, saved]
    _compare(program)


def test_anomaly_entered_after_an_output_was_written():
    def program(lib):
        y = _mk(lib, 4).exp()
        y.add_(1)
        with lib.autograd.detect_anomaly():
            y.sum().backward()
    _compare(program)


def test_saved_tensors_hooks_in_a_create_graph_backward():
    def program(lib):
        x = _mk(lib, 4)
        y = x.exp()
        calls = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: calls.append(("pack", tuple(t.shape))) or t,
                                                    lambda t: calls.append("unpack") or t):
            (g,) = lib.autograd.grad(y.sin().sum(), x, create_graph=True)
        g.sum().backward()
        return [calls, x.grad]
    _compare(program)


# ---- writes into a saved value, its data or its base -------------------------------------------------------


WRITES = {
    "data_of_input": lambda lib: _write_input(lib, lambda a: setattr(a, "data", lib.ones(4))),
    "data_of_output": lambda lib: _write_output(lib, lambda y: setattr(y, "data", lib.ones(4))),
    "data_mul_of_output": lambda lib: _write_output(lib, lambda y: y.data.mul_(2)),
    "set_input": lambda lib: _write_input(lib, lambda a: a.set_(lib.zeros(4)), no_grad=True),
    "set_output": lambda lib: _write_output(lib, lambda y: y.set_(lib.zeros(4)), no_grad=True),
    "detach_input": lambda lib: _write_input(lib, lambda a: a.detach_()),
    "detach_output": lambda lib: _write_output(lib, lambda y: y.detach_(), then=lambda y: y.sin()),
    "output_through_view": lambda lib: _write_output(lib, lambda y: y[1:].mul_(2)),
}


def _write_input(lib, write, no_grad=False):
    x = _mk(lib, 4)
    a = x * 1
    y = a.sin() * a
    if no_grad:
        with lib.no_grad():
            write(a)
    else:
        write(a)
    y.sum().backward()
    return x.grad


def _write_output(lib, write, no_grad=False, then=None):
    x = _mk(lib, 4)
    y = x.exp()
    z = then(y) if then is not None else y
    if no_grad:
        with lib.no_grad():
            write(y)
    else:
        write(y)
    z.sum().backward()
    return x.grad


@pytest.mark.parametrize("name", WRITES)
def test_saved_value_written(name):
    _compare(WRITES[name])


@pytest.mark.parametrize("op", ["sin", "mul", "mm"])
def test_base_of_a_saved_view_written(op):
    def program(lib):
        b = _mk(lib, 4, 4) * 1
        v = b.t() if op == "mm" else b[1:]
        y = {"sin": lambda: v.sin(), "mul": lambda: v * b[:3], "mm": lambda: v @ v}[op]()
        b.add_(1)
        return [y.grad_fn._saved_self.grad_fn.name(), raised(lib, lambda lib: y.sum().backward())]
    _compare(program)
