"""A leaf's ``.grad`` as PyTorch's AccumulateGrad leaves it: which tensor it is, the memory it shares, its version counter.

PyTorch adopts a first gradient nobody else references and that obeys the gradient layout contract, as
``new_grad.detach()`` (a view's storage and version counter included); otherwise it copies it with
``clone_obey_contract`` (version 1 for a dense leaf). A leaf's ``grad_dtype`` casts each gradient in the engine
(``validate_outputs``), before the input buffer sums several in place, before hooks and ``autograd.grad`` see it.
Each program runs in both libraries and reports what it observed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import run_both, to_numpy

import tracegrad as tg
from tracegrad import _warnings


def _grad_state(t) -> tuple:
    g = t.grad
    return str(g.dtype).split(".")[-1], tuple(g.stride()), g._version, g._base is None, to_numpy(g).tolist()


# ---- an empty leaf: an expanded gradient does not obey the contract, however NumPy strides it -------------------

@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0)])
def test_empty_leaf_copies_the_expanded_gradient(shape):
    def program(lib):
        x = lib.zeros(shape, requires_grad=True)
        x.sum().backward()
        return x.grad._version, tuple(x.grad.stride())

    ours, theirs = run_both(program)
    assert ours == theirs
    assert theirs[0] == 1  # (new_empty_strided + copy_)


# ---- grad_dtype: each gradient is cast where the engine hands it on ----------------------------------------------

_SEVERAL_GRADIENTS = {
    "x*x": lambda x: x * x,
    "x*2+x*3": lambda x: x * 2 + x * 3,
    "x+x": lambda x: x + x,  # (one tensor twice: cast twice, so two fresh ones, added in place)
    "x*x+x": lambda x: x * x + x,
    "view": lambda x: x.view(3) * x.view(3),  # (summed in the view's node first, then cast once)
}


@pytest.mark.parametrize("name", sorted(_SEVERAL_GRADIENTS))
@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float32"), ("float32", "float16")])
def test_grad_dtype_casts_before_the_input_buffer_adds(name, dtypes):
    build = _SEVERAL_GRADIENTS[name]

    def program(lib):
        x = lib.tensor([1.0, -2.0, 0.5], dtype=getattr(lib, dtypes[0]), requires_grad=True)
        x.grad_dtype = getattr(lib, dtypes[1])
        seen = []
        for _ in range(2):
            build(x).sum().backward()
            seen.append(_grad_state(x))
        return seen

    ours, theirs = run_both(program)
    assert ours == theirs


def test_grad_dtype_set_after_the_graph_was_built():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * x
        x.grad_dtype = lib.float64
        y.sum().backward()
        return _grad_state(x)

    ours, theirs = run_both(program)
    assert ours == theirs
    assert theirs[0] == "float64" and theirs[2] == 1


def test_grad_dtype_hooks_and_autograd_grad_see_the_cast_gradient():
    def program(lib):
        x = lib.ones(3, requires_grad=True)
        x.grad_dtype = lib.float64
        seen = []
        x.register_hook(lambda g: seen.append((str(g.dtype), g._version)))
        x.register_post_accumulate_grad_hook(lambda p: seen.append(("post", p.grad._version)))
        (x * x).sum().backward()
        captured = lib.autograd.grad((x * x).sum(), x)[0]
        return seen, str(captured.dtype), _grad_state(x)

    ours, theirs = run_both(program)
    assert ours == theirs
    assert theirs[1] == "torch.float64"


def test_grad_dtype_casts_a_root_gradient_which_the_root_keeps():
    """``x.backward(g)`` on the leaf itself: the root holds the cast gradient, so ``.grad`` is a copy (version 1)."""

    def program(lib):
        x = lib.ones(3, requires_grad=True)
        x.grad_dtype = lib.float64
        seen = []
        x.register_hook(lambda g: seen.append(str(g.dtype)))
        x.backward(lib.full((3,), 2.0))
        direct = lib.autograd.grad(x, x, lib.ones(3))[0]
        return seen, _grad_state(x), str(direct.dtype)

    ours, theirs = run_both(program)
    assert ours == theirs
    assert theirs[1][2] == 1


# ---- a root gradient of another dtype: cast to the root's dtype before anything sees it ---------------------------

@pytest.mark.parametrize("root", ["leaf", "non_leaf"])
def test_a_root_gradient_is_cast_to_its_roots_dtype(root):
    def program(lib):
        rng = np.random.default_rng(0)
        data = rng.standard_normal(64).astype(np.float32)
        x = lib.tensor(data, requires_grad=True)
        y = x if root == "leaf" else x * lib.tensor(data)
        seen = []
        y.register_hook(lambda g: seen.append(str(g.dtype)))
        if root == "non_leaf":
            y.retain_grad()
        gradient = lib.tensor(rng.standard_normal(64))  # float64, into a float32 root
        captured = lib.autograd.grad(y, x, gradient, retain_graph=True)[0]
        y.backward(gradient)
        retained = None if root == "leaf" else (str(y.grad.dtype), y.grad._version)
        return seen, str(captured.dtype), retained, _grad_state(x)

    ours, theirs = run_both(program)
    assert ours == theirs  # (the bits too: the product is rounded once, in float32)
    assert theirs[3][0] == "float32" and theirs[0][0] == "torch.float32"


# ---- a view adopted as the gradient: detached, sharing its storage and version counter ---------------------------

def _view_returning_function(lib, keep: dict):
    class ViewOfOwnTensor(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            keep["base"] = base = lib.full((6,), 2.0)
            return base[:3]

    return ViewOfOwnTensor


def test_a_view_gradient_is_adopted_detached():
    def program(lib):
        keep = {}
        fn = _view_returning_function(lib, keep)
        x = lib.ones(3, requires_grad=True)
        fn.apply(x).sum().backward()
        base = keep["base"]
        first = (x.grad.data_ptr() == base.data_ptr(), x.grad._base is None, x.grad._version, base._version)
        (x * 3).sum().backward()  # added in place: into the base's memory, bumping its version
        return first, _grad_state(x), base._version, to_numpy(base).tolist()

    ours, theirs = run_both(program)
    assert ours == theirs
    assert theirs[0][0] and theirs[2] == 1


@pytest.mark.parametrize("how", ["view", "reshape", "custom_function_slice"])
def test_a_view_of_the_users_gradient_shares_its_memory(how):
    def program(lib):
        class Slice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g[:]

        x = lib.ones(2, 3, requires_grad=True)
        g = lib.arange(6.0) if how != "custom_function_slice" else lib.arange(6.0).view(2, 3)
        if how == "view":
            x.view(6).backward(g)
        elif how == "reshape":
            x.reshape(6).backward(g)
        else:
            Slice.apply(x).backward(g)
        shared = x.grad.data_ptr() == g.data_ptr()
        x.grad.mul_(2)  # through the shared memory: the user's tensor and its version change too
        return shared, x.grad is g, g._version, to_numpy(g).tolist(), _grad_state(x)

    ours, theirs = run_both(program)
    assert ours == theirs
    assert theirs[0] and not theirs[1]


@pytest.mark.parametrize("with_gradient", [False, True])
def test_the_adopted_expand_of_a_0d_gradient_is_writeable(with_gradient):
    """``x.sum()`` of a 0-d leaf: its backward expands to no new shape, a view PyTorch adopts and may write."""

    def program(lib):
        x = lib.tensor(2.0, requires_grad=True)
        x.sum().backward(lib.tensor(3.0) if with_gradient else None)
        x.grad.zero_()
        x.grad.add_(1.0)
        (x * 2).backward()
        return _grad_state(x)

    ours, theirs = run_both(program)
    assert ours == theirs


# ---- a gradient a node passes through unchanged is adopted when nothing else holds it ----------------------------

@pytest.mark.parametrize("leaf_shape", [(), (3,)])
def test_a_passed_through_sum_is_adopted(leaf_shape):
    """CloneBackward0 hands on the sum its input buffer made: nothing else holds it, so the leaf adopts it."""

    def program(lib):
        x = lib.ones(leaf_shape, requires_grad=True)
        a = x.clone()
        lib.cat([a.reshape(-1), a.reshape(-1)]).sum().backward()
        return _grad_state(x)

    ours, theirs = run_both(program)
    assert ours == theirs
    assert theirs[2] == 0


# ---- the layout warning: once for the in-place sum and once for the out-of-place one (two TORCH_WARN_ONCE sites) ---

def test_the_layout_warning_is_given_once_per_kind_of_sum(monkeypatch):
    """PyTorch warns once per process from each site (its process has warned before this test, so tracegrad alone is
    checked here, against what a fresh PyTorch process gives: warn, nothing, warn, nothing)."""
    monkeypatch.setattr(_warnings, "_SEEN", set())

    def layout_warnings(create_graph: bool) -> int:
        x = tg.ones(3, 4, requires_grad=True)
        x.grad = tg.ones(4, 3).t()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            (x * 2).sum().backward(create_graph=create_graph)
        return sum("gradient layout contract" in str(w.message) for w in caught)

    assert [layout_warnings(cg) for cg in (False, False, True, True)] == [1, 0, 1, 0]


def test_grad_values_are_unchanged_by_adoption():
    """The adopted view and the copied gradient hold the same numbers as PyTorch's."""

    def program(lib):
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        (x.view(6) * lib.arange(6.0)).sum().backward()
        x.view(3, 2).t().backward(lib.ones(2, 3) * 0.5)
        return _grad_state(x)

    ours, theirs = run_both(program)
    assert ours == theirs
