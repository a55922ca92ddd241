"""Differences that the programs of ``tests/test_user_programs14_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``autograd.grad(..., is_grads_batched=True)`` compared each gradient's shape without its batch dimension; torch
  indexes the batch's first gradient (``grad[0]``: a 0-dim or empty batch is an IndexError) and its message shows
  that first gradient's shape less one more size (``grad.shape[2:]``);
- ``SavedTensor.register_hooks`` given one hook, three or keywords failed in Python's words; torch's pybind11
  binding refuses them as "incompatible function arguments";
- the forward-mode ``jacobian``/``hessian`` (``vectorize=True``) ended in ``ViewBackward0`` over a slice; torch's
  results are split per input, permuted and reshaped (``ReshapeAliasBackward0`` over ``PermuteBackward0``);
- ``detect_anomaly(check_nan=0)`` and ``set_detect_anomaly(1)`` switched anomaly mode on (and the first stayed on
  after its error); torch refuses a flag that is no bool in ``set_anomaly_enabled``'s parser words;
- writing or deleting a read-only tensor attribute (``y.grad_fn = None``, ``x.is_leaf = True``, ``del x.shape``)
  said "property 'grad_fn' of 'Tensor' object has no setter" (a deletion of ``grad_fn`` a RuntimeError); torch:
  "attribute 'grad_fn' of 'torch._C.TensorBase' objects is not writable"; setting ``volatile`` did not warn; the
  deletions torch refuses with a RuntimeError (``_grad_fn``, ``data``, ...) were not in its words;
- ``autograd.Variable(t)`` returned ``t`` itself (a non-leaf kept its graph, so gradients flowed through the
  "Variable"); torch's legacy constructor always detaches, warns about ``volatile`` and refuses non-tensors;
- ``autograd.grad(..., only_inputs=False)`` did not give torch's FutureWarning.
"""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch
from _tutorial_lib import repr_or_error


def _batched_grad(lib, grad_shape):
    u = lib.ones(3, requires_grad=True)
    return lib.autograd.grad(u * 2, u, lib.ones(grad_shape), is_grads_batched=True)


def _batched_edge_grad(lib, grad_shape):
    u = lib.ones(3, requires_grad=True)
    edge = lib.autograd.graph.get_gradient_edge(u * 2)
    return lib.autograd.grad(edge, u, lib.ones(grad_shape), is_grads_batched=True)


BATCHED = {
    "one gradient per output element": lambda L: _batched_grad(L, (3,)),
    "a batch of wrong rows": lambda L: _batched_grad(L, (2, 4)),
    "an extra dimension": lambda L: _batched_grad(L, (2, 1, 3)),
    "a 0-dim gradient": lambda L: _batched_grad(L, ()),
    "an empty batch": lambda L: _batched_grad(L, (0, 3)),
    "a right batch": lambda L: _batched_grad(L, (2, 3)),
    "an edge, right batch": lambda L: _batched_edge_grad(L, (2, 3)),
    "an edge, wrong batch": lambda L: _batched_edge_grad(L, (2, 4)),
}


@pytest.mark.parametrize("case", BATCHED)
def test_batched_grad_outputs_checked_as_torch(case):
    f = BATCHED[case]
    assert repr_or_error(f, tg) == repr_or_error(f, torch)


def _register_on_raw_saved(lib, *args, **kwargs):
    x = lib.ones(3, requires_grad=True)
    raw = x.pow(2).grad_fn._raw_saved_self
    return raw.register_hooks(*args, **kwargs)


REGISTER_HOOKS = {
    "one hook": lambda L: _register_on_raw_saved(L, abs),
    "no hook": lambda L: _register_on_raw_saved(L),
    "three hooks": lambda L: _register_on_raw_saved(L, abs, abs, abs),
    "keywords": lambda L: _register_on_raw_saved(L, pack_hook=abs, unpack_hook=abs),
    "a keyword after one": lambda L: _register_on_raw_saved(L, abs, arg1=abs),
    "a number for a hook": lambda L: _register_on_raw_saved(L, abs, 3),
    "two hooks": lambda L: _register_on_raw_saved(L, abs, abs),
}


@pytest.mark.parametrize("case", REGISTER_HOOKS)
def test_raw_saved_register_hooks_refusals(case):
    f = REGISTER_HOOKS[case]
    assert repr_or_error(f, tg) == repr_or_error(f, torch)


def _node_chain(tensor, depth: int) -> list[str]:
    names, node = [], tensor.grad_fn
    for _ in range(depth):
        names.append(node.name())
        node = node.next_functions[0][0]
    return names


def _forward_mode_hessian(lib):
    def energy(p):
        return (p[0] ** 2 * p[1] + lib.exp(p[2]) * p[0]).reshape(())

    p = lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64)
    return lib.autograd.functional.hessian(energy, p, vectorize=True, outer_jacobian_strategy="forward-mode")


def _forward_mode_jacobian(lib):
    q = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
    r = lib.tensor([0.5], dtype=lib.float64, requires_grad=True)
    return lib.autograd.functional.jacobian(lambda a, b: a.exp() * b, (q, r), vectorize=True,
                                            strategy="forward-mode")


def test_forward_mode_hessian_graph_as_torch():
    ours, theirs = _forward_mode_hessian(tg), _forward_mode_hessian(torch)
    assert _node_chain(ours, 3) == _node_chain(theirs, 3) == [
        "ReshapeAliasBackward0", "PermuteBackward0", "SplitWithSizesBackward0"]
    assert ours.requires_grad is theirs.requires_grad is True
    torch.testing.assert_close(torch.from_numpy(ours.detach().numpy()), theirs.detach())


def test_forward_mode_jacobian_per_input_graphs_as_torch():
    ours, theirs = _forward_mode_jacobian(tg), _forward_mode_jacobian(torch)
    for mine, torchs in zip(ours, theirs):
        assert _node_chain(mine, 2) == _node_chain(torchs, 2)
        assert tuple(mine.shape) == tuple(torchs.shape)
        torch.testing.assert_close(torch.from_numpy(mine.detach().numpy()), torchs.detach())


def _anomaly_flags_after(lib, switch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            switch(lib)
            outcome = "ok"
        except TypeError as e:
            outcome = str(e)
    state = (lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())
    lib.set_anomaly_enabled(False)
    return outcome, state


def _entered_detect_anomaly(lib, *args, **kwargs):
    with lib.autograd.detect_anomaly(*args, **kwargs):
        pass


ANOMALY_FLAGS = {
    "detect_anomaly(3)": lambda L: _entered_detect_anomaly(L, 3),
    "detect_anomaly(check_nan='no')": lambda L: _entered_detect_anomaly(L, check_nan="no"),
    "detect_anomaly(check_nan=False)": lambda L: _entered_detect_anomaly(L, check_nan=False),
    "set_detect_anomaly(1)": lambda L: L.autograd.set_detect_anomaly(1),
    "set_detect_anomaly(True, check_nan=0)": lambda L: L.autograd.set_detect_anomaly(True, check_nan=0),
    "set_detect_anomaly(True, None)": lambda L: L.autograd.set_detect_anomaly(True, None),
    "set_detect_anomaly(True, False)": lambda L: L.autograd.set_detect_anomaly(True, False),
}


@pytest.mark.parametrize("case", ANOMALY_FLAGS)
def test_anomaly_flags_parsed_as_torch(case):
    switch = ANOMALY_FLAGS[case]
    assert _anomaly_flags_after(tg, switch) == _anomaly_flags_after(torch, switch)


READ_ONLY = ("grad_fn", "is_leaf", "_version", "output_nr", "shape", "dtype", "device", "ndim", "T", "mT", "H",
             "layout", "is_cuda", "is_nested", "itemsize", "nbytes", "retains_grad")


@pytest.mark.parametrize("name", READ_ONLY)
@pytest.mark.parametrize("action", ["set", "delete"])
def test_read_only_attributes_refused_as_torch(name, action):
    def write(lib):
        y = lib.ones(2, 2, requires_grad=True) * 2
        return setattr(y, name, None) if action == "set" else delattr(y, name)

    assert repr_or_error(write, tg) == repr_or_error(write, torch)


@pytest.mark.parametrize("name", ["_grad_fn", "requires_grad", "_backward_hooks", "data"])
def test_deletion_of_settable_attributes_refused_as_torch(name):
    def delete(lib):
        delattr(lib.ones(2, requires_grad=True), name)

    assert repr_or_error(delete, tg) == repr_or_error(delete, torch)


def test_read_only_attribute_of_a_parameter_refused_as_torch():
    def write(lib):
        lib.nn.Parameter(lib.ones(2)).shape = (1, 2)

    assert repr_or_error(write, tg) == repr_or_error(write, torch)


def _warnings_of(lib, action) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action(lib)
    return [f"{w.category.__name__}: {w.message}" for w in caught]


def _set_and_delete_volatile(lib):
    x = lib.ones(2)
    x.volatile = True
    del x.volatile


def test_volatile_setter_warns_as_torch():
    assert _warnings_of(tg, _set_and_delete_volatile) == _warnings_of(torch, _set_and_delete_volatile)


def _legacy_variable(lib, make_data, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v = lib.autograd.Variable(make_data(lib), *args, **kwargs)
    return v, v.requires_grad, v.is_leaf, v.grad_fn


def _non_leaf(lib):
    return lib.ones(2, requires_grad=True) * 2


def _custom_function_node(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Double.apply(lib.ones(2, requires_grad=True)).grad_fn


VARIABLES = {
    "a non-leaf": lambda L: _legacy_variable(L, _non_leaf),
    "a non-leaf, requires_grad": lambda L: _legacy_variable(L, _non_leaf, True),
    "a leaf": lambda L: _legacy_variable(L, lambda M: M.ones(2, requires_grad=True)),
    "None": lambda L: _legacy_variable(L, lambda M: None),
    "nothing": lambda L: L.autograd.Variable(),
    "a list": lambda L: _legacy_variable(L, lambda M: [1.0]),
    "a number": lambda L: _legacy_variable(L, lambda M: 3),
    "volatile": lambda L: _legacy_variable(L, _non_leaf, volatile=True),
    "volatile and requires_grad": lambda L: _legacy_variable(L, _non_leaf, True, True),
    "an int tensor requiring grad": lambda L: _legacy_variable(L, lambda M: M.arange(3), True),
    "_grad_fn a number": lambda L: _legacy_variable(L, _non_leaf, _grad_fn=3),
    "_grad_fn a built-in node": lambda L: _legacy_variable(L, _non_leaf, _grad_fn=_non_leaf(L).grad_fn),
    "_grad_fn a custom Function's node": lambda L: _legacy_variable(L, _non_leaf,
                                                                      _grad_fn=_custom_function_node(L)),
}


@pytest.mark.parametrize("case", VARIABLES)
def test_legacy_variable_as_torch(case):
    f = VARIABLES[case]
    assert repr_or_error(f, tg) == repr_or_error(f, torch)


def _gradient_through_variable(lib):
    x = lib.ones(2, requires_grad=True)
    v = lib.autograd.Variable(x * 2, requires_grad=True)
    (v * 3).sum().backward()
    return v.grad, x.grad


def test_legacy_variable_cuts_the_graph_as_torch():
    assert repr_or_error(_gradient_through_variable, tg) == repr_or_error(_gradient_through_variable, torch)


def _volatile_variable(lib):
    lib.autograd.Variable(lib.ones(2), volatile=True)


def _grad_not_only_inputs(lib):
    x = lib.ones(2, requires_grad=True)
    lib.autograd.grad((x * x).sum(), x, only_inputs=False)


@pytest.mark.parametrize("action", [_volatile_variable, _grad_not_only_inputs], ids=["volatile", "only_inputs"])
def test_deprecation_warnings_as_torch(action):
    assert _warnings_of(tg, action) == _warnings_of(torch, action)
