"""Area E of seed 004 (PyTorch ``test_autograd.py``): saved tensors.

What a node keeps for backward, how ``grad_fn._saved_<name>`` / ``grad_fn._raw_saved_<name>`` expose it,
when it is freed, how ``torch.autograd.graph.saved_tensors_hooks`` (and ``save_on_cpu``,
``disable_saved_tensors_hooks``) intercept saving and unpacking, and the version check on saved tensors.

Seed tests ported here (all of area E): test_save_output_nr, test_no_unnecessary_save,
test_grad_fn_attr_bindings (split in several tests), test_get_data_and_hooks_from_raw_saved_variable,
test_cant_create_saved_tensors, test_custom_function_saved_tensors, test_no_unnecessary_unwrapping,
test_saved_variable_version_counter, test_saved_variable_packing_unpacking_saved_original_with_hooks,
test_saved_variable_saved_original_inplace_detach, test_saved_tensor_hooks_extra_exit_during_bw_no_crash,
test_saved_tensor_hooks_extra_enter_during_bw_no_leak.

Adaptations:
- ``torch._C._autograd.SavedTensor`` is reached by its public alias ``torch.autograd.SavedTensor``.
- test_grad_fn_attr_bindings: the sub-cases on ``interpolate``, ``Conv2d``, ``addbmm``, ``unfold``,
  ``pdist``, ``linalg.qr``, complex ``threshold`` and ``_foreach_maximum`` are left out (operators outside
  the core set; the rule each pins, e.g. "int field -> int", is covered by the ops kept here).
- The wrong-arity ``register_hooks`` calls only pin ``TypeError``: "incompatible function arguments" is
  pybind11's wording, not an autograd message.

The saved-tensor-hook tests beyond the seed's cut (named after their upstream counterparts, written from
the behaviour of torch 2.13): default hooks with double backward, nested hooks, wrapped numbers,
in-place pack hooks, save_on_cpu, disable_saved_tensors_hooks, pack/unpack call counts and release of the
packed objects after backward.
"""

from __future__ import annotations

import pickle
import weakref

import pytest
from _lib import assert_close, gc_disabled, np, run_both, tg

FREED = "after they have already been freed"


def identity(x):
    return x


def assert_values(actual, expected):
    """Compare a tensor with a literal (nested list or number)."""
    assert_close(actual, np.asarray(expected, dtype=np.float64))


# --------------------------------------------------------------------------------------------------------
# What is saved, and what unpacking gives back
# --------------------------------------------------------------------------------------------------------


def test_save_output_nr():
    """A saved tensor that is output 1 of a multi-output Function still reports output_nr == 1 when unpacked."""
    seen = []

    class TwoHalves(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:5], x[5:]

        @staticmethod
        def backward(ctx, *grads):
            return tg.cat(grads)

    class Double(tg.autograd.Function):
        @staticmethod
        def forward(ctx, b):
            ctx.save_for_backward(b)
            return b * 2

        @staticmethod
        def backward(ctx, grad_b):
            (b,) = ctx.saved_tensors
            seen.append(b.output_nr)
            return grad_b * 2

    x = tg.randn(10, requires_grad=True)
    _, second = TwoHalves.apply(x)
    assert second.output_nr == 1
    Double.apply(second).sum().backward()
    assert seen == [1]
    assert_values(x.grad, [0.0] * 5 + [2.0] * 5)


def test_no_unnecessary_save():
    """``x * constant`` must not save ``x``: reusing x's storage in place across iterations stays legal."""

    def program(lib):
        mu = lib.ones(1, requires_grad=True)
        x = lib.empty(1)
        loss = 0
        for i in range(3):
            x.detach_()
            x.copy_(mu + i)
            multiplied = x * lib.tensor([float(i)])
            loss = loss + multiplied.sum()
        loss.backward()
        return mu.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_values(ours, [3.0])


def test_no_unnecessary_unwrapping():
    """Saved inputs unpack to the very same object; a saved output unpacks to an equal but distinct tensor."""
    a = tg.randn(5, requires_grad=True)
    a_orig = a.detach().clone()
    b = a * a
    c = a * b
    d = tg.exp(a)

    # a is a leaf input
    assert b.grad_fn._saved_self is a
    assert b.grad_fn._saved_other is a
    assert c.grad_fn._saved_self is a
    # b is an input of c's node, not its output
    assert c.grad_fn._saved_other is b
    # d is the output of its own node: stored without its grad_fn to avoid a cycle, rebuilt on unpack
    assert_close(d.grad_fn._saved_result, d)
    assert d.grad_fn._saved_result is not d

    c.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        c.grad_fn._saved_self
    assert_close(a, a_orig)


def test_saved_variable_version_counter():
    """An unpacked saved output shares the version counter (and storage) of the original output."""
    a = tg.rand(2, requires_grad=True)
    b = tg.exp(a)
    b_unpacked = b.grad_fn._saved_result
    assert_close(b, b_unpacked)
    assert b._version == b_unpacked._version

    with tg.no_grad():
        b += 1
    assert_close(b, b_unpacked)
    assert b._version == b_unpacked._version == 1


def test_saved_output_keeps_grad_fn_on_unpack():
    """Unpacking a saved output restores its grad_fn, so it is the same node as the output's (beyond seed)."""
    a = tg.rand(3, requires_grad=True)
    d = a.exp()
    unpacked = d.grad_fn._saved_result
    assert unpacked.grad_fn is d.grad_fn
    assert unpacked.requires_grad


# --------------------------------------------------------------------------------------------------------
# grad_fn._saved_* / _raw_saved_* attribute bindings (test_grad_fn_attr_bindings)
# --------------------------------------------------------------------------------------------------------


def test_grad_fn_attr_bindings_saved_tensor_fields():
    """``_saved_<name>`` returns a Tensor, ``_raw_saved_<name>`` a SavedTensor; freed after backward, with wording."""
    a = tg.ones(1, requires_grad=True)
    b = tg.zeros(1, requires_grad=True)
    out1 = tg.stack([a, b], dim=0)
    out2 = (a * 2) * b

    assert_close(out2.grad_fn._saved_self, a * 2)
    assert isinstance(out2.grad_fn._saved_self, tg.Tensor)
    assert isinstance(out2.grad_fn._raw_saved_self, tg.autograd.SavedTensor)
    assert out1.grad_fn._saved_dim == 0
    assert type(out1.grad_fn._saved_dim) is int

    out2.grad_fn._raw_saved_self.register_hooks(identity, identity)
    out2.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        out2.grad_fn._saved_self
    # non-tensor fields survive the release of the saved tensors
    assert out1.grad_fn._saved_dim == 0

    a = tg.ones(2, 2, requires_grad=True)
    out = a * a
    out.grad_fn._raw_saved_self.register_hooks(identity, identity)
    out.sum().backward()
    with pytest.raises(RuntimeError, match="after it has been freed"):
        out.grad_fn._raw_saved_self.register_hooks(identity, identity)


def test_grad_fn_attr_bindings_optional_tensor_list():
    """Advanced indexing saves a tuple of optional tensors (None for the sliced dim) and int tuples of sizes."""
    a = tg.ones(2, 2, requires_grad=True)
    indices = tg.tensor([0, 1])
    out = a[:, indices]
    saved = out.grad_fn._saved_indices
    assert isinstance(saved, tuple) and len(saved) == 2
    assert saved[0] is None
    assert isinstance(saved[1], tg.Tensor)
    assert_close(saved[1], indices)
    assert isinstance(out.grad_fn._raw_saved_indices[1], tg.autograd.SavedTensor)
    assert tuple(out.grad_fn._saved_self_sym_sizes) == (2, 2)
    assert type(out.grad_fn._saved_self_sym_sizes[0]) is int

    out.grad_fn._raw_saved_indices[1].register_hooks(identity, identity)
    with pytest.raises(RuntimeError, match="None is forbidden"):
        out.grad_fn._raw_saved_indices[0].register_hooks(identity, identity)

    out = a.mean()
    assert tuple(out.grad_fn._saved_self_sym_sizes) == tuple(a.shape)
    assert all(type(s) is int for s in out.grad_fn._saved_self_sym_sizes)


def test_grad_fn_attr_bindings_scalar_and_optional_fields():
    """Scalars keep their Python type; optionals give None; strings stay strings; saved outputs compare equal."""
    x = tg.zeros(5, requires_grad=True)
    assert type(tg.threshold(x, threshold=1.0, value=1.0).grad_fn._saved_threshold) is float
    assert type(tg.threshold(x, threshold=1, value=1).grad_fn._saved_threshold) is int
    assert type(tg.threshold(x, threshold=False, value=False).grad_fn._saved_threshold) is bool

    a = tg.ones(2, 2, requires_grad=True)
    out = a.as_strided((3,), (1,), 1)
    assert out.grad_fn._saved_storage_offset == 1
    assert type(out.grad_fn._saved_storage_offset) is int
    assert a.as_strided((3,), (1,)).grad_fn._saved_storage_offset is None

    a = tg.ones(1, 1, 2, requires_grad=True)
    out = tg.logit(a, 1.0)
    assert out.grad_fn._saved_eps == 1.0
    assert type(out.grad_fn._saved_eps) is float
    assert tg.logit(a).grad_fn._saved_eps is None

    a = tg.tensor([1.0], requires_grad=True)
    assert tg.div(a, 2.0, rounding_mode="trunc").grad_fn._saved_rounding_mode == "trunc"
    assert tg.div(a, 2.0, rounding_mode=None).grad_fn._saved_rounding_mode is None

    a = tg.ones(2, requires_grad=True)
    out = tg.tanh(a)
    assert_close(out, out.grad_fn._saved_result)


def test_grad_fn_attr_bindings_optional_weight():
    """nll_loss saves ``weight`` as an optional tensor: None when absent, freed after backward when present."""
    a = tg.randn(3, 5, requires_grad=True)
    target = tg.tensor([1, 0, 4])
    out = tg.nn.functional.nll_loss(a, target)
    assert out.grad_fn._saved_weight is None
    out = tg.nn.functional.nll_loss(a, target, weight=tg.ones(5))
    assert_close(out.grad_fn._saved_weight, tg.ones(5))
    out.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        out.grad_fn._saved_weight


# --------------------------------------------------------------------------------------------------------
# SavedTensor objects
# --------------------------------------------------------------------------------------------------------


def test_get_data_and_hooks_from_raw_saved_variable():
    """``SavedTensor.data`` is the packed object with hooks; detached data for outputs, the input itself otherwise."""

    def pack_hook(t):
        return t

    def unpack_hook(t):
        return t

    a = tg.tensor(2.0, requires_grad=True)
    with tg.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
        b = a**2
    c = b.exp()
    d = c**2

    pow_sv = b.grad_fn._raw_saved_self
    exp_sv = c.grad_fn._raw_saved_result
    pow2_sv = d.grad_fn._raw_saved_self

    assert pow_sv.data is a
    assert pow_sv.unpack_hook is unpack_hook
    assert exp_sv.data is not c
    assert exp_sv.unpack_hook is None
    assert pow2_sv.data is c
    assert pow2_sv.unpack_hook is None


def test_cant_create_saved_tensors():
    """SavedTensor cannot be constructed from Python."""
    with pytest.raises(RuntimeError, match="Trying to create a SavedTensor object from Python is forbidden"):
        tg.autograd.SavedTensor()


def test_custom_function_saved_tensors():
    """A Function's node exposes saved_tensors / _raw_saved_tensors; hook registration errors; freeing."""

    def make_fn(save):
        class MyFn(tg.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if save:
                    ctx.save_for_backward(x, None)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        return MyFn

    a = tg.randn(5, requires_grad=True)
    y = make_fn(True).apply(a)
    saved_values = y.grad_fn.saved_tensors
    assert len(saved_values) == 2
    assert saved_values[0] is a
    assert saved_values[1] is None

    saved = y.grad_fn._raw_saved_tensors
    assert isinstance(saved[0], tg.autograd.SavedTensor)
    # a saved None is still a SavedTensor object: it is not known to be None without unpacking
    assert isinstance(saved[1], tg.autograd.SavedTensor)
    with pytest.raises(RuntimeError, match="None is forbidden"):
        saved[1].register_hooks(identity, identity)
    with pytest.raises(TypeError):
        saved[0].register_hooks(identity)
    with pytest.raises(TypeError):
        saved[0].register_hooks(1, 1)
    saved[0].register_hooks(identity, identity)
    with pytest.raises(RuntimeError, match="already been set"):
        saved[0].register_hooks(identity, identity)
    y.sum().backward()

    del saved
    with pytest.raises(RuntimeError, match=FREED):
        y.grad_fn._raw_saved_tensors
    with pytest.raises(RuntimeError, match=FREED):
        y.grad_fn.saved_tensors

    y = make_fn(False).apply(a)
    assert y.grad_fn.saved_tensors == ()
    assert y.grad_fn._raw_saved_tensors == ()


@pytest.mark.parametrize("is_leaf", [True, False], ids=["leaf", "not_leaf_not_output"])
def test_saved_variable_packing_unpacking_saved_original_with_hooks(is_leaf):
    """Per-SavedTensor hooks change what backward sees; unpack must return a Tensor; pack must not mutate."""

    def get_input():
        if is_leaf:
            return tg.randn(5, requires_grad=True)
        return 1 + tg.randn(5, requires_grad=True)

    # pack doubles, unpack halves: values round-trip
    a = get_input()
    grad_fn = a.grad_fn
    y = a * a
    y.grad_fn._raw_saved_self.register_hooks(lambda x: 2 * x, lambda x: x / 2)
    assert_close(a, y.grad_fn._saved_self)
    if not is_leaf:
        assert y.grad_fn._saved_self.grad_fn is grad_fn
    y.sum().backward()
    if is_leaf:
        assert_close(a.grad, 2 * a)

    # pack doubles only: the saved self is 2a, so d(a*a)/da reads 2a + a = 3a
    a = get_input()
    grad_fn = a.grad_fn
    y = a * a
    y.grad_fn._raw_saved_self.register_hooks(lambda x: 2 * x, identity)
    assert_close(2 * a, y.grad_fn._saved_self)
    if not is_leaf:
        assert y.grad_fn._saved_self.grad_fn is grad_fn
    y.sum().backward()
    if is_leaf:
        assert_close(a.grad, 3 * a)

    # double backward through a hooked saved tensor
    a = get_input()
    grad_fn = a.grad_fn
    y = a**3
    y.grad_fn._raw_saved_self.register_hooks(identity, identity)
    (g,) = tg.autograd.grad(tg.sum(y), (a,), create_graph=True)
    if not is_leaf:
        assert y.grad_fn._saved_self.grad_fn is grad_fn
    g.sum().backward()
    if is_leaf:
        assert_close(a.grad, 6 * a)

    a = get_input()
    y = a * a
    y.grad_fn._raw_saved_self.register_hooks(identity, lambda x: 1)
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a Tensor"):
        y.grad_fn._saved_self

    # the pack hook is called at registration time, so a wrong-arity pack hook fails right there
    a = get_input()
    y = a * a
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        y.grad_fn._raw_saved_self.register_hooks(lambda x, b: x, identity)

    a = get_input()
    y = a * a
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        y.grad_fn._raw_saved_self.register_hooks(lambda x, b: (x, b), identity)

    def inplace_double(x):
        x *= 2
        return x

    a = get_input()
    t = a * a
    with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input in place."):
        t.grad_fn._raw_saved_self.register_hooks(inplace_double, lambda x: x / 2)


def test_saved_variable_saved_original_inplace_detach():
    """``detach_()`` on a tensor that a node saved as an input makes backward fail with a clear message."""
    a = tg.tensor(1.0, requires_grad=True).clone()
    b = a.sin()
    a.detach_()
    with pytest.raises(RuntimeError, match="Trying to use a saved tensor that has been detached"):
        b.backward()


# --------------------------------------------------------------------------------------------------------
# Freeing and the version check
# --------------------------------------------------------------------------------------------------------


def test_saved_tensors_freed_after_backward_message():
    """A second backward through a node whose saved tensors were freed names retain_graph=True (beyond seed)."""
    a = tg.randn(3, requires_grad=True)
    y = (a * a).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=r"Trying to backward through the graph a second time") as info:
        y.backward()
    assert "retain_graph=True" in str(info.value)
    assert FREED in str(info.value)


def test_saved_tensor_version_check_message():
    """In-place on a saved tensor fails at backward with type, shape, producer node and both versions."""
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    z = a * a
    with tg.no_grad():
        a.add_(1)
    with pytest.raises(
        RuntimeError,
        match=r"one of the variables needed for gradient computation has been modified by an inplace "
        r"operation: \[torch\.FloatTensor \[2\]\] is at version 1; expected version 0 instead\.",
    ):
        z.sum().backward()

    a = tg.randn(3, requires_grad=True)
    y = a.exp()
    y.add_(1)
    with pytest.raises(
        RuntimeError,
        match=r"\[torch\.FloatTensor \[3\]\], which is output 0 of \w+, is at version 1; expected",
    ):
        y.sum().backward()


# --------------------------------------------------------------------------------------------------------
# saved_tensors_hooks (context manager)
# --------------------------------------------------------------------------------------------------------


def test_saved_tensor_hooks_extra_exit_during_bw_no_crash():
    """An unbalanced ``__exit__`` of a hooks context inside an unpack hook must not crash or leave hooks behind."""

    def unpack(x):
        ctx_1.__exit__()
        return x

    ctx_1 = tg.autograd.graph.saved_tensors_hooks(identity, unpack)
    ctx_2 = tg.autograd.graph.saved_tensors_hooks(identity, identity)

    for _ in range(3):
        with ctx_2:
            ctx_1.__enter__()
            x = tg.randn(3, 3, requires_grad=True)
            x.sin().sum().backward()

    for _ in range(3):
        ctx_1.__exit__()

    # no default hooks are left: registering per-tensor hooks is still allowed
    a = tg.tensor(1.0, requires_grad=True)
    y = a.exp()
    y.grad_fn._raw_saved_result.register_hooks(identity, identity)


def test_saved_tensor_hooks_extra_enter_during_bw_no_leak():
    """An unbalanced ``__enter__`` inside an unpack hook must not keep the hooks alive (no leak)."""

    def scope():
        def unpack(x):
            weak_ctx_1().__enter__()
            return x

        ctx_1 = tg.autograd.graph.saved_tensors_hooks(identity, unpack)
        weak_ctx_1 = weakref.ref(ctx_1)
        x = tg.randn(3, 3, requires_grad=True)
        with ctx_1:
            x.sin().sum().backward()
        return weakref.ref(unpack)

    with gc_disabled():
        unpack_hook_ref = scope()
        assert unpack_hook_ref() is None


def test_saved_tensors_hooks_pack_unpack_call_counts():
    """pack runs once per saved tensor at forward; unpack at every access and once per use in backward."""
    calls = []

    def pack(x):
        calls.append("pack")
        return x

    def unpack(x):
        calls.append("unpack")
        return x

    a = tg.randn(3, requires_grad=True)
    with tg.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = a * a
    assert calls == ["pack", "pack"]
    y.grad_fn._saved_self
    assert calls == ["pack", "pack", "unpack"]
    y.sum().backward()
    assert calls == ["pack", "pack", "unpack", "unpack", "unpack"]
    assert_close(a.grad, 2 * a)


def test_saved_tensors_hooks_change_backward_values():
    """Hooks that rescale on pack change the gradient: y = a*a with pack 2x gives a.grad = 2a + 2a."""

    def program(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda x: 2 * x, lambda x: x):
            y = a * a
        y.sum().backward()
        return a.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_values(ours, [4.0, 8.0, 12.0])


def test_saved_tensors_hooks_packed_objects_released_after_backward():
    """The objects returned by pack are dropped when backward frees the saved tensors (beyond seed)."""
    refs = []

    class Box:
        def __init__(self, t):
            self.t = t

    def pack(x):
        box = Box(x)
        refs.append(weakref.ref(box))
        return box

    with gc_disabled():
        a = tg.randn(3, requires_grad=True)
        with tg.autograd.graph.saved_tensors_hooks(pack, lambda box: box.t):
            y = (a * 2).exp()
        assert len(refs) == 1 and refs[0]() is not None
        y.sum().backward()
        assert refs[0]() is None


def test_setting_default_saved_variable_hooks_twice_should_use_inner():
    """Nested saved_tensors_hooks: the innermost pair applies, and the outer one is back after the inner exits."""

    def program(lib):
        with lib.autograd.graph.saved_tensors_hooks(lambda x: 3 * x, lambda x: 3 * x):
            b = lib.tensor([1.0, -2.0], requires_grad=True)
            with lib.autograd.graph.saved_tensors_hooks(lambda x: 5 * x, lambda x: 5 * x):
                a = lib.tensor([0.5, 4.0], requires_grad=True)
                y = a * a
            z = b * b
        y.sum().backward()
        z.sum().backward()
        return a.grad, b.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_values(ours[0], [25.0, 200.0])  # 2 * 5 * 5 * a
    assert_values(ours[1], [18.0, -36.0])  # 2 * 3 * 3 * b


def test_default_saved_tensors_hooks_double_backward():
    """Hooks active in forward apply to saves made there; a create_graph backward outside sees only those."""

    def program(lib):
        results = []
        with lib.autograd.graph.saved_tensors_hooks(identity, identity):
            a = lib.tensor([1.0, 2.0], requires_grad=True)
            y = a**3
            (g,) = lib.autograd.grad(y.sum(), (a,), create_graph=True)
            g.sum().backward()
        results.append(a.grad.clone())

        # a is saved once by pow in forward; the double backward saves more but outside the hooks
        with lib.autograd.graph.saved_tensors_hooks(lambda x: 2 * x, identity):
            a = lib.tensor([1.0, 2.0], requires_grad=True)
            y = a**3
        (g,) = lib.autograd.grad(y.sum(), (a,), create_graph=True)
        g.sum().backward()
        results.append(a.grad.clone())

        # hooks active during forward and during both backwards
        with lib.autograd.graph.saved_tensors_hooks(lambda x: 2 * x, identity):
            a = lib.tensor([1.0, 2.0], requires_grad=True)
            y = a**3
            (g,) = lib.autograd.grad(y.sum(), (a,), create_graph=True)
            g.sum().backward()
        results.append(a.grad.clone())
        return results

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_values(ours[0], [6.0, 12.0])  # 6a
    assert_values(ours[1], [12.0, 24.0])  # 6 * 2a
    assert_values(ours[2], [48.0, 96.0])  # grad and a also saved through the doubling pack hook


def test_saved_tensor_hooks_custom_function_intermediates():
    """Hooks see tensors saved by a custom Function (inputs and intermediates) and unpack on saved_tensors."""
    log = []

    def pack(x):
        log.append(("pack", tuple(x.shape)))
        return x

    def unpack(x):
        log.append(("unpack", tuple(x.shape)))
        return x

    class Cube(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            sq = x * x  # an intermediate, neither input nor output
            ctx.save_for_backward(x, sq)
            return sq * x

        @staticmethod
        def backward(ctx, grad):
            x, sq = ctx.saved_tensors
            return grad * 3 * sq

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    with tg.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = Cube.apply(x)
    assert log == [("pack", (2,)), ("pack", (2,))]
    out.sum().backward()
    assert log[2:] == [("unpack", (2,)), ("unpack", (2,))]
    assert_values(x.grad, [3.0, 12.0])


def test_saved_tensors_hooks_subclass():
    """saved_tensors_hooks can be subclassed, the way save_on_cpu is defined (beyond seed)."""
    counts = {"pack": 0, "unpack": 0}

    class CountingHooks(tg.autograd.graph.saved_tensors_hooks):
        def __init__(self):
            def pack(x):
                counts["pack"] += 1
                return x

            def unpack(x):
                counts["unpack"] += 1
                return x

            super().__init__(pack, unpack)

    a = tg.randn(2, requires_grad=True)
    with CountingHooks():
        y = a.sin()
    y.sum().backward()
    assert counts == {"pack": 1, "unpack": 1}
    assert_close(a.grad, a.cos())


def test_wrapped_number_saved_tensors_hooks():
    """Multiplying by a Python number must not call saved-tensor hooks for that number."""

    def err_hook(x):
        raise RuntimeError("this hook should not be called")

    with tg.autograd.graph.saved_tensors_hooks(err_hook, err_hook):
        a = tg.randn(5, requires_grad=True)
        out = (a * 3).sum()
        (g,) = tg.autograd.grad(out, (a,))
    assert_values(g, [3.0] * 5)


def test_pack_hook_with_inplace_modification_should_fail():
    """A pack hook that mutates its input in place raises, both from the context manager and per tensor."""
    msg = "A saved tensor pack hook is modifying its input in place."

    def inc(x):
        x += 1
        return x

    a = tg.randn(5, requires_grad=True)
    with tg.autograd.graph.saved_tensors_hooks(inc, identity), pytest.raises(RuntimeError, match=msg):
        tg.exp(a)
    y = tg.exp(a)
    with pytest.raises(RuntimeError, match=msg):
        y.grad_fn._raw_saved_result.register_hooks(inc, identity)


def test_saving_variable_to_disk(tmp_path):
    """Pack hooks may move a saved tensor out of memory (here pickled to a file) and unpack reloads it."""
    counter = [0]

    def pack(tensor):
        path = tmp_path / f"saved_{counter[0]}.pkl"
        counter[0] += 1
        path.write_bytes(pickle.dumps(tensor.detach()))
        return path

    def unpack(path):
        return pickle.loads(path.read_bytes())

    a = tg.tensor([0.5, 1.5, -2.0], requires_grad=True)
    with tg.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = a * a
    assert counter[0] == 2
    assert_close(y.grad_fn._saved_self, a)
    y.sum().backward()
    assert_close(a.grad, 2 * a)


def test_graph_save_on_cpu():
    """save_on_cpu gives the same gradients; with pin_memory=True the saved value is a copy (beyond seed)."""

    def program(lib):
        a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        b = lib.tensor([4.0, 5.0, 6.0], requires_grad=True)
        with lib.autograd.graph.save_on_cpu():
            y = (a * b).sin()
        y.sum().backward()
        return a.grad, b.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)

    a = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([4.0, 5.0], requires_grad=True)
    with tg.autograd.graph.save_on_cpu(pin_memory=True):
        y = a * b
    saved = y.grad_fn._saved_self
    assert saved is not a
    assert_close(saved, a)
    assert saved.dtype == a.dtype
    # the copy was taken at save time; hooked saved tensors skip the version check
    with tg.no_grad():
        a.mul_(2)
    y.sum().backward()
    assert_values(b.grad, [1.0, 2.0])


def test_saved_tensors_hooks_skip_version_check():
    """With saved-tensor hooks PyTorch does not check versions: an in-place change after save goes unnoticed."""
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    with tg.autograd.graph.saved_tensors_hooks(identity, identity):
        z = a * a
    with tg.no_grad():
        a.add_(1)
    z.sum().backward()
    assert_values(a.grad, [4.0, 6.0])


def test_disabling_saved_tensor_hooks():
    """disable_saved_tensors_hooks makes entering saved_tensors_hooks raise its message, and vice versa."""
    hooks = tg.autograd.graph.saved_tensors_hooks
    disable = tg.autograd.graph.disable_saved_tensors_hooks
    with (
        disable("error message"),
        pytest.raises(RuntimeError, match="error message"),
        hooks(identity, identity),
    ):
        pass

    # enabled again afterwards; disabling while hooks are active raises too
    with (
        hooks(identity, identity),
        pytest.raises(RuntimeError, match="error message"),
        disable("error message"),
    ):
        pass

    with hooks(identity, identity):
        pass


def test_disabling_saved_tensor_hooks_nested():
    """Nested disable contexts: the innermost message applies, and the outer one is restored on exit."""
    hooks = tg.autograd.graph.saved_tensors_hooks
    disable = tg.autograd.graph.disable_saved_tensors_hooks
    with disable("outer"):
        with disable("inner"), pytest.raises(RuntimeError, match="inner"), hooks(identity, identity):
            pass
        with pytest.raises(RuntimeError, match="outer"), hooks(identity, identity):
            pass
    with hooks(identity, identity):
        pass
