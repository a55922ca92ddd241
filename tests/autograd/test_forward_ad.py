"""Forward-mode AD as far as seed 004 uses it: ``forward_ad`` levels and duals, custom ``jvp``.

Ports the behaviour of seed 004 (PyTorch ``test_autograd.py``) area H:

- ``torch.autograd.forward_ad``: ``dual_level()``, ``make_dual(primal, tangent)``,
  ``unpack_dual(t)`` (a namedtuple ``(primal, tangent)``), ``_current_level`` (-1 outside a level);
- an op without a forward formula raises ``NotImplementedError("Trying to use forward AD with
  OP that does not support it ...")``;
- custom ``Function.jvp(ctx, *tangents)``: non-tensor arguments get ``None`` tangents; tensors
  are visible in ``jvp`` through ``ctx.saved_tensors`` only after ``ctx.save_for_forward``;
  outputs marked non-differentiable get a ``None`` tangent; ``mark_dirty`` requires the tangent
  to be modified in place; a forward returning a view (or an input as-is) requires ``jvp`` to
  return a view of the same tangent; a wrong formula is caught by
  ``gradcheck(check_forward_ad=True)``.

Seed tests ported here: test_not_implemented_fwad, test_custom_function_forward_mode_view_checks,
test_custom_function_forward_mode_inplace_checks, test_custom_function_forward_mode_wrong_formula,
test_custom_function_forward_mode_non_tensor_before_tensor_args,
test_custom_function_forward_mode_forward_is_no_op,
test_custom_function_forward_mode_non_differentiable, test_custom_function_save_for_forward, and
the forward-mode half of test_custom_function_mark_dirty_not_differentiable (its backward half
belongs to area G). The ``test_gradcheck_forward_ad*`` tests live in test_gradcheck.py.

The seed's dedicated forward-mode class is truncated; the ``test_forward_ad_*`` tests below pin a
few basic-op facts (level errors, tangent identity, tangents of common ops against the oracle).

``test_not_implemented_fwad`` uses ``igamma`` exactly as the seed does: the library must expose
``igamma`` with no forward (JVP) rule, or the test must be moved to another such op.

Skipped: none of area H is marked N.
"""

from __future__ import annotations

import importlib
import itertools

import pytest
from _lib import assert_close, np, run_both, tg


class _Lazy:
    """Attribute access resolved at use time, so a missing feature fails only the tests using it."""

    def __init__(self, dotted):
        self._dotted = dotted

    def __getattr__(self, name):
        return getattr(importlib.import_module(f"{tg.__name__}.{self._dotted}"), name)


fwAD = _Lazy("autograd.forward_ad")


def gradcheck(*args, **kwargs):
    return tg.autograd.gradcheck(*args, **kwargs)


def _dbl(lib, values, requires_grad=False):
    return lib.tensor(np.asarray(values, dtype=np.float64).tolist(), dtype=lib.float64, requires_grad=requires_grad)


# ---------------------------------------------------------------------------------------------------
# The forward_ad module itself


def test_forward_ad_current_level_and_errors():
    """_current_level is -1 outside a level; make_dual needs a level; levels cannot nest."""
    x = tg.tensor([1.0, 2.0, 3.0])
    assert fwAD._current_level == -1
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level\\(\\) first"):
        fwAD.make_dual(x, tg.ones(3))
    with fwAD.dual_level():
        assert fwAD._current_level >= 0
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the moment"), \
                fwAD.dual_level():
            pass
        with pytest.raises(RuntimeError, match="Trying to set a forward gradient that has a different size"):
            fwAD.make_dual(x, tg.ones(2))
        with pytest.raises(ValueError, match="Expected primal to be floating point or complex"):
            fwAD.make_dual(tg.tensor([1, 2]), tg.tensor([1, 2]))
    assert fwAD._current_level == -1


def test_forward_ad_make_unpack_dual():
    """unpack_dual returns a (primal, tangent) namedtuple; the tangent is the object given to make_dual."""
    x = tg.tensor([1.0, 2.0, 3.0])
    t = tg.tensor([1.0, 0.0, 2.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, t)
        unpacked = fwAD.unpack_dual(d)
        assert isinstance(unpacked, fwAD.UnpackedDualTensor)
        assert unpacked._fields == ("primal", "tangent")
        primal, tangent = unpacked
        assert tangent is t
        assert unpacked.tangent is t
        assert primal.tolist() == [1.0, 2.0, 3.0]
        assert d.requires_grad is False
        # A plain tensor has no tangent.
        assert fwAD.unpack_dual(x).tangent is None
        e = d.exp()
    # Leaving the level drops every tangent made in it.
    assert fwAD.unpack_dual(e).tangent is None
    assert fwAD.unpack_dual(d).tangent is None


def test_forward_ad_enter_exit_level_functions():
    """enter_dual_level / exit_dual_level are the function form of dual_level."""
    level = fwAD.enter_dual_level()
    try:
        assert fwAD._current_level == level
        d = fwAD.make_dual(tg.tensor([2.0]), tg.tensor([1.0]))
        assert fwAD.unpack_dual(d * d).tangent.tolist() == [4.0]
    finally:
        fwAD.exit_dual_level(level=level)
    assert fwAD._current_level == -1


_UNARY_OPS = {
    "neg": lambda lib, a: -a,
    "sin": lambda lib, a: a.sin(),
    "cos": lambda lib, a: lib.cos(a),
    "exp": lambda lib, a: a.exp(),
    "log": lambda lib, a: a.log(),
    "tanh": lambda lib, a: a.tanh(),
    "sigmoid": lambda lib, a: lib.sigmoid(a),
    "sqrt": lambda lib, a: a.sqrt(),
    "pow_scalar": lambda lib, a: a**3,
    "relu": lambda lib, a: lib.relu(a - 1.0),
    "sum": lambda lib, a: a.sum(),
    "sum_dim": lambda lib, a: a.sum(1),
    "mean": lambda lib, a: a.mean(),
    "view": lambda lib, a: a.view(6),
    "transpose": lambda lib, a: a.t(),
    "index": lambda lib, a: a[1, 1:],
    "clone": lambda lib, a: a.clone(),
}

_BINARY_OPS = {
    "add": lambda lib, a, b: a + b,
    "sub": lambda lib, a, b: a - b,
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / b,
    "pow": lambda lib, a, b: a**b,
    "matmul": lambda lib, a, b: a @ b.t(),
    "broadcast_mul": lambda lib, a, b: a * b[0],
}


@pytest.mark.parametrize("name", sorted(_UNARY_OPS))
def test_forward_ad_unary_op_tangents(name):
    """Tangents of common unary ops match PyTorch's forward-mode results."""
    rng = np.random.default_rng(0)
    xa = rng.uniform(0.5, 2.0, (2, 3))
    ta = rng.standard_normal((2, 3))

    def program(lib):
        f = lib.autograd.forward_ad
        with f.dual_level():
            dual = f.make_dual(_dbl(lib, xa), _dbl(lib, ta))
            primal, tangent = f.unpack_dual(_UNARY_OPS[name](lib, dual))
            return primal, tangent

    ours, theirs = run_both(program)
    assert_close(ours, theirs)


@pytest.mark.parametrize("name", sorted(_BINARY_OPS))
def test_forward_ad_binary_op_tangents(name):
    """Tangents of common binary ops match PyTorch, with one or both operands dual."""
    rng = np.random.default_rng(1)
    xa, ya = rng.uniform(0.5, 2.0, (2, 2, 3))
    ta, ua = rng.standard_normal((2, 2, 3))

    def program(lib):
        f = lib.autograd.forward_ad
        results = []
        with f.dual_level():
            for x_dual, y_dual in ((True, True), (True, False), (False, True)):
                x = f.make_dual(_dbl(lib, xa), _dbl(lib, ta)) if x_dual else _dbl(lib, xa)
                y = f.make_dual(_dbl(lib, ya), _dbl(lib, ua)) if y_dual else _dbl(lib, ya)
                results.append(tuple(f.unpack_dual(_BINARY_OPS[name](lib, x, y))))
        return results

    ours, theirs = run_both(program)
    assert_close(ours, theirs)


_INPLACE_OPS = {
    "add_broadcast": lambda lib, a, b: (a * 1).add_(b[0], alpha=2),
    "sub_": lambda lib, a, b: (a * 1).sub_(b),
    "mul_self": lambda lib, a, b: (a * b).mul_(a * b),
    "div_": lambda lib, a, b: (a * 1).div_(b),
    "pow_": lambda lib, a, b: (a * 1).pow_(b),
    "pow_scalar_": lambda lib, a, b: (a * 1).pow_(3),
    "exp_": lambda lib, a, b: (a * b).exp_(),
    "log_": lambda lib, a, b: (a * 1).log_(),
    "relu_": lambda lib, a, b: (a - b).relu_(),
    "addmm_": lambda lib, a, b: (a.t() * 1).addmm_(a, b, beta=0.5, alpha=2),
}


@pytest.mark.parametrize("name", sorted(_INPLACE_OPS))
def test_forward_ad_inplace_op_tangents(name):
    """In-place ops update the tangent like PyTorch (the rule sees self's value before the write), with a
    broadcast operand's tangent expanded to self's shape."""
    rng = np.random.default_rng(2)
    xa, ya = rng.uniform(0.5, 2.0, (2, 3, 3))
    ta, ua = rng.standard_normal((2, 3, 3))

    def program(lib):
        f = lib.autograd.forward_ad
        results = []
        with f.dual_level():
            for x_dual, y_dual in ((True, True), (True, False), (False, True)):
                x = f.make_dual(_dbl(lib, xa), _dbl(lib, ta)) if x_dual else _dbl(lib, xa)
                y = f.make_dual(_dbl(lib, ya), _dbl(lib, ua)) if y_dual else _dbl(lib, ya)
                primal, tangent = f.unpack_dual(_INPLACE_OPS[name](lib, x, y))
                results.append((primal, None if tangent is None else tangent.clone()))
        return results

    ours, theirs = run_both(program)
    assert_close(ours, theirs)


def test_forward_ad_scatter_reduce_prod_has_no_tangent():
    """PyTorch has no forward formula for scatter_reduce(reduce="prod"): the result has no tangent, and the
    in-place form fails when self carries one; the other reductions have tangents."""
    rng = np.random.default_rng(3)
    xa, sa = rng.uniform(0.5, 2.0, (3, 4)), rng.uniform(0.5, 2.0, (5, 4))
    index = rng.integers(0, 3, (5, 4)).tolist()

    def program(lib):
        f = lib.autograd.forward_ad
        idx = lib.tensor(index)
        with f.dual_level():
            x = f.make_dual(_dbl(lib, xa), lib.ones(3, 4, dtype=lib.float64))
            s = f.make_dual(_dbl(lib, sa), lib.ones(5, 4, dtype=lib.float64))
            prod = f.unpack_dual(lib.scatter_reduce(x, 0, idx, s, "prod")).tangent
            amax = f.unpack_dual(lib.scatter_reduce(x, 0, idx, s, "amax", include_self=False)).tangent
            src_only = f.unpack_dual(_dbl(lib, xa).scatter_reduce_(0, idx, s, "prod")).tangent
            with pytest.raises(RuntimeError):
                (x * 1).scatter_reduce_(0, idx, s, "prod")
        return prod, amax, src_only

    ours, theirs = run_both(program)
    assert ours[0] is None and theirs[0] is None
    assert ours[2] is None and theirs[2] is None
    assert_close(ours[1], theirs[1])


def test_forward_ad_common_ops_have_jvp_rules(monkeypatch):
    """An MLP step in forward mode runs explicit jvp rules only: no double backward per operator."""
    from tracegrad.autograd import forward_ad

    derived = []
    original = forward_ad._double_vjp
    monkeypatch.setattr(forward_ad, "_double_vjp", lambda op, *a: derived.append(op.name) or original(op, *a))
    x, w1, b1, w2 = (tg.randn(*s, dtype=tg.float64) for s in ((4, 3), (5, 3), (5,), (2, 5)))
    with fwAD.dual_level():
        xd = fwAD.make_dual(x, tg.randn(4, 3, dtype=tg.float64))
        h = tg.nn.functional.linear(xd, w1, b1).tanh() * tg.sigmoid(xd.sum(1, keepdim=True))
        y = tg.relu(h) @ w2.t() + tg.addmm(b1[:2], h.exp(), w2.t()) - h.mean(0).sum() / 2
        out = y.reshape(8).pow(2).mean() + tg.cat([y, y.T.T]).sin().cos().sum()
        assert fwAD.unpack_dual(out).tangent is not None
    assert derived == []


def test_forward_ad_tangent_composes_with_backward():
    """A dual whose primal requires grad still records a graph for backward."""

    def program(lib):
        f = lib.autograd.forward_ad
        r = lib.tensor([1.0, 2.0], requires_grad=True)
        with f.dual_level():
            d = f.make_dual(r, lib.ones(2))
            out = d * d
            primal, tangent = f.unpack_dual(out)
            flags = [out.requires_grad, primal.requires_grad]
            out.sum().backward()
        return flags, tangent, r.grad

    ours, theirs = run_both(program)
    assert ours[0] == theirs[0] == [True, True]
    assert_close(ours[1:], theirs[1:])


def test_not_implemented_fwad():
    """An op without a forward-mode formula raises NotImplementedError naming the op."""
    x = tg.randn(3)
    v = tg.rand(3)
    with fwAD.dual_level():
        dual_x = fwAD.make_dual(x, v)
        with pytest.raises(NotImplementedError, match=r"Trying to use forward AD with .* that does not support it"):
            tg.igamma(dual_x, dual_x)


# ---------------------------------------------------------------------------------------------------
# Custom Function jvp


def test_custom_function_forward_mode_view_checks():
    """A forward returning a view needs jvp to return a view of the same input tangent's base."""
    flag_to_error = {
        "ok": None,
        "not_a_view": "jvp is not returning a view",
        "not_a_view_of_inp": "jvp is not returning a view of the given",
        "not_a_view_of_inp_base": "jvp is not returning a view of the same base",
    }

    class ViewFn(tg.autograd.Function):
        @staticmethod
        def forward(ctx, foo, flag):
            ctx.flag = flag
            ctx.size = foo.size()
            return foo.narrow(0, 0, 2)

        @staticmethod
        def vjp(ctx, gO):
            gI = gO.new_zeros(ctx.size)
            gI.narrow(0, 0, 2).copy_(gO)
            return gI, None

        @staticmethod
        def jvp(ctx, gI, _):
            res = gI.narrow(0, 0, 2)
            if ctx.flag != "ok":
                res = res.clone()  # no longer a view
            if ctx.flag in ("not_a_view_of_inp", "not_a_view_of_inp_base"):
                res = res.view_as(res)  # a view, but of the wrong tensor
            return res

    inp = tg.rand(4, 4, dtype=tg.double, requires_grad=True)
    for flag, msg in flag_to_error.items():

        def fn(x, flag=flag):
            if flag == "not_a_view_of_inp_base":
                x = x.view_as(x)
            return ViewFn.apply(x, flag)

        if msg is None:
            assert gradcheck(fn, inp, check_forward_ad=True)
        else:
            with pytest.raises(RuntimeError, match=msg):
                gradcheck(fn, inp, check_forward_ad=True)


def test_custom_function_forward_mode_inplace_checks():
    """A mark_dirty Function's jvp must update the input tangent in place."""

    class InplaceFn(tg.autograd.Function):
        @staticmethod
        def forward(ctx, foo, flag):
            ctx.mark_dirty(foo)
            ctx.flag = flag
            foo.mul_(2)
            return foo

        @staticmethod
        def vjp(ctx, gO):
            return 2 * gO, None

        @staticmethod
        def jvp(ctx, gI, _):
            if ctx.flag:
                return 2 * gI  # out of place: wrong for a dirty input
            gI.mul_(2)
            return gI

    inp = tg.rand(4, 4, dtype=tg.double, requires_grad=True)

    def fn(x, flag):
        return InplaceFn.apply(x.clone(), flag)

    assert gradcheck(fn, (inp, False), check_forward_ad=True)
    with pytest.raises(
        RuntimeError, match="inplace custom Function is not modifying the forward mode gradients inplace"
    ):
        gradcheck(fn, (inp, True), check_forward_ad=True)


def test_custom_function_forward_mode_wrong_formula():
    """gradcheck(check_forward_ad=True) catches a jvp that disagrees with the numerical Jacobian."""

    class UserFn(tg.autograd.Function):
        @staticmethod
        def forward(ctx, foo, should_fail):
            ctx.should_fail = should_fail
            return foo * 2

        @staticmethod
        def vjp(ctx, gO):
            return 2 * gO, None

        @staticmethod
        def jvp(ctx, gI, _):
            return 3 * gI if ctx.should_fail else 2 * gI

    inp = tg.rand(10, dtype=tg.double, requires_grad=True)
    assert gradcheck(UserFn.apply, (inp, False), check_forward_ad=True)
    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch for output 0"):
        gradcheck(UserFn.apply, (inp, True), check_forward_ad=True)


def test_custom_function_forward_mode_non_tensor_before_tensor_args():
    """jvp receives None tangents for non-tensor arguments, in their positions."""
    seen = []

    class MyFn(tg.autograd.Function):
        @staticmethod
        def forward(ctx, nt, x, nt2, y):
            return x * 2 + y * 3

        @staticmethod
        def jvp(ctx, nt, x_t, nt2, y_t):
            seen.append((nt, nt2, y_t))
            return x_t * 2 + y_t * 3

    x = tg.tensor(1.0, dtype=tg.double)
    t = tg.tensor(1.0, dtype=tg.double)
    y = tg.tensor(1.0, dtype=tg.double)
    with fwAD.dual_level():
        out = MyFn.apply(1, fwAD.make_dual(x, t), 1, y)
        tangent = fwAD.unpack_dual(out).tangent
    assert seen[0][0] is None and seen[0][1] is None
    # y is not dual, so jvp still runs but sees a zero tangent for it.
    assert seen[0][2] is not None and float(seen[0][2]) == 0.0
    assert float(tangent) == 2.0

    assert gradcheck(
        MyFn.apply,
        (1, x.requires_grad_(True), 1, y.requires_grad_(True)),
        check_forward_ad=True,
        check_backward_ad=False,
        check_batched_grad=False,
    )


def test_custom_function_forward_mode_forward_is_no_op():
    """Returning an input as-is counts as a view: jvp must return a view of that input's tangent."""
    error_regex = "A custom Function's forward is returning a view \\(or an input as-is\\)"
    return_lambdas = {
        "view_as": lambda t: t.view_as(t),  # accepted
        "self": lambda t: t,  # rejected
        "mul_by_2": lambda t: t * 2,  # rejected
    }
    for key, fn in return_lambdas.items():

        class MyFn(tg.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y, x

            @staticmethod
            def vjp(ctx, gO1, gO2):
                return gO1 + gO2, gO1

            @staticmethod
            def jvp(ctx, x_t, y_t, fn=fn):
                return x_t + y_t, fn(x_t)

        a = tg.tensor(1.0, dtype=tg.double, requires_grad=True)
        t = tg.tensor(1.0, dtype=tg.double)
        b = tg.tensor(1.0, dtype=tg.double, requires_grad=True)
        c = tg.tensor(1.0, dtype=tg.double)
        t2 = tg.tensor(1.0, dtype=tg.double)
        d = tg.tensor(1.0, dtype=tg.double)

        with fwAD.dual_level():
            a_dual = fwAD.make_dual(a, t)
            c_dual = fwAD.make_dual(c, t2)
            if key == "view_as":
                _, out2 = MyFn.apply(a_dual, b)
                assert fwAD.unpack_dual(out2).tangent._base is t
                _, out2 = MyFn.apply(c_dual, d)
                assert fwAD.unpack_dual(out2).tangent._base is t2
            else:
                with pytest.raises(RuntimeError, match=error_regex):
                    MyFn.apply(a_dual, b)
                with pytest.raises(RuntimeError, match=error_regex):
                    MyFn.apply(c_dual, d)

        if key == "view_as":
            assert gradcheck(MyFn.apply, (a, c), check_forward_ad=True)
        else:
            with pytest.raises(RuntimeError, match=error_regex):
                gradcheck(MyFn.apply, (a, c), check_forward_ad=True)


def test_custom_function_forward_mode_non_differentiable():
    """Non-differentiable outputs get a None tangent, and jvp must return None for them."""
    x = tg.tensor(2.0)
    x_tangent = tg.tensor(1.0)

    class MarkedNonDiff(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            out = y.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out

        @staticmethod
        def jvp(ctx, x_t, y_t):
            return x_t, None

    with fwAD.dual_level():
        _, out2 = MarkedNonDiff.apply(fwAD.make_dual(x, x_tangent), tg.tensor(3.0))
        assert fwAD.unpack_dual(out2).tangent is None

    # An integer output is non-differentiable without being marked; its input tangent is None.
    seen = []

    class IntegerOutput(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_t, y_t):
            seen.append(y_t)
            return x_t, None

    with fwAD.dual_level():
        _, out2 = IntegerOutput.apply(fwAD.make_dual(x, x_tangent), tg.tensor(3))
        assert fwAD.unpack_dual(out2).tangent is None
    assert seen == [None]

    class WrongTangent(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            out = y.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out

        @staticmethod
        def jvp(ctx, x_t, y_t):
            return x_t, x_t.clone()

    with fwAD.dual_level():
        x_dual = fwAD.make_dual(x, x_tangent)
        with pytest.raises(RuntimeError, match="You should return None at that position instead"):
            WrongTangent.apply(x_dual, tg.tensor(3.0))

    class NonTensorOutput(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone(), object(), x.clone()

        @staticmethod
        def jvp(ctx, x_t):
            return x_t, None, x_t

    with fwAD.dual_level():
        out, marker, out2 = NonTensorOutput.apply(fwAD.make_dual(x, x_tangent))
        assert not isinstance(marker, type(x))
        assert float(fwAD.unpack_dual(out).tangent) == 1.0
        assert float(fwAD.unpack_dual(out2).tangent) == 1.0


def test_custom_function_save_for_forward():
    """ctx.save_for_forward makes tensors visible in jvp; save_for_backward alone does not."""

    class Func(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, z):
            ctx.save_for_backward(x, y)
            ctx.save_for_forward(x, y)
            ctx.z = z
            ctx.prod = x * y
            return z * ctx.prod

        @staticmethod
        def jvp(ctx, x_t, y_t, _):
            x_p, y_p = ctx.saved_tensors
            return ctx.z * (y_p * x_t + x_p * y_t)

        @staticmethod
        def vjp(ctx, grad_out):
            x, y = ctx.saved_tensors
            return ctx.z * grad_out * y, ctx.z * grad_out * x, None

    a = tg.tensor(1.0, requires_grad=True, dtype=tg.double)
    t = tg.tensor(1.0, dtype=tg.double)
    b = tg.tensor(2.0, requires_grad=True, dtype=tg.double)
    with fwAD.dual_level():
        out = Func.apply(fwAD.make_dual(a, t), b, 4)
        # d/da (4 * a * b) * t = 4 * b = 8
        assert float(fwAD.unpack_dual(out).tangent.detach()) == 8.0
        out.backward()
    assert float(a.grad) == 8.0 and float(b.grad) == 4.0
    assert gradcheck(Func.apply, (a, b, 4), check_forward_ad=True)

    counts = {}

    class SavedForBackwardOnly(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clone()

        @staticmethod
        def jvp(ctx, x_t):
            counts["jvp"] = len(ctx.saved_tensors)
            return x_t

        @staticmethod
        def vjp(ctx, grad_out):
            counts["vjp"] = len(ctx.saved_tensors)
            return grad_out

    with fwAD.dual_level():
        out = SavedForBackwardOnly.apply(fwAD.make_dual(a, t))
        out.backward()
    assert counts == {"jvp": 0, "vjp": 1}
    assert gradcheck(SavedForBackwardOnly.apply, (a,), check_forward_ad=True)


def test_custom_function_mark_dirty_not_differentiable_forward_mode():
    """A mark_dirty Function returns its input object; its jvp must modify the tangent in place."""

    def make(jvp_err):
        class InplaceMul(tg.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                result = x.mul_(2)
                ctx.mark_dirty(result)
                return result

            @staticmethod
            def backward(ctx, grad_output):
                pass

            @staticmethod
            def jvp(ctx, x_t):
                return x_t if jvp_err else x_t.mul_(2)

        return InplaceMul

    for requires_grad, jvp_err in itertools.product([True, False], repeat=2):
        InplaceMul = make(jvp_err)
        z = tg.tensor(1.0, requires_grad=requires_grad)
        x = z.clone()
        y = InplaceMul.apply(x)
        assert x is y
        assert float(x) == 2.0

        with fwAD.dual_level():
            x_tangent = tg.ones_like(x)
            x_dual = fwAD.make_dual(x, x_tangent)
            if jvp_err:
                with pytest.raises(RuntimeError, match="jvp function must modify the corresponding gradient inplace"):
                    InplaceMul.apply(x_dual)
            else:
                out_dual = InplaceMul.apply(x_dual)
                _, out_tangent = fwAD.unpack_dual(out_dual)
                assert out_dual is x_dual
                assert out_tangent is x_tangent
                assert float(out_tangent) == 2.0
