"""``gradcheck`` / ``gradgradcheck``: numerical vs analytical Jacobians, in slow and fast mode.

Ports the behaviour of seed 004 (PyTorch ``test_autograd.py``) area K. The seed calls PyTorch's
internal test wrapper, whose defaults are ``fast_mode=True, check_batched_grad=True``; here the
public ``torch.autograd.gradcheck`` is called directly, every test runs in both ``fast_mode``
settings where the seed does, and ``check_batched_grad`` / ``check_batched_forward_grad`` stay
off because they need ``vmap``.

Seed tests ported here (Y): test_unrelated_inputs, test_gradcheck_single_input,
test_gradcheck_nondeterministic, test_gradcheck_check_no_differentiable_outputs,
test_gradcheck_undefined_grad, test_gradcheck_jacobian_mismatch,
test_gradcheck_output_shape_or_dtype_depend_on_values, test_gradcheck_complex_non_complex_outputs,
test_gradcheck_custom_error, test_gradcheck_forward_ad, test_gradcheck_forward_ad_runs_with_no_requires_grad,
test_gradcheck_check_forward_or_backward_only.
Adapted (A): test_gradcheck_validates_inputs and test_gradcheck_backward_mul_by_grad_output (dense
parts only), test_gradcheck_get_numerical_jacobian, test_gradcheck_get_analytical_jacobian,
test_gradcheck_forward_ad_respects_requires_grad (only the jvp counts that need no vmap: 2, 6,
and 1 / 2 with one non-differentiable input).

Complex-dtype halves of the seed tests are separate tests (``*_complex``) so that a library
without complex support fails only those.

Skipped:
- test_gradcheck_input (x5 sparse layouts), test_gradcheck_validates_input_mkldnn,
  test_gradcheck_test_outputs, test_gradcheck_check_batched_grad (sparse),
  test_gradcheck_dense_and_sparse_inputs, test_gradcheck_multiple_mkldnn_inputs: marked N
  (sparse / MKL-DNN layouts).
- test_gradcheck_forward_ad_batched_grad and the ``check_batched_forward_grad=True`` halves of
  test_gradcheck_forward_ad_runs_with_no_requires_grad / _respects_requires_grad: need ``vmap``.
"""

from __future__ import annotations

import importlib
import itertools
import warnings

import pytest
from _lib import tg


class _Lazy:
    """Attribute access resolved at use time, so a missing feature fails only the tests using it."""

    def __init__(self, dotted):
        self._dotted = dotted

    def __getattr__(self, name):
        return getattr(importlib.import_module(f"{tg.__name__}.{self._dotted}"), name)


fwAD = _Lazy("autograd.forward_ad")
# `torch.autograd.gradcheck` is the function; the module of the same name is reached by import.
gradcheck_module = _Lazy("autograd.gradcheck")


def gradcheck(*args, **kwargs):
    return tg.autograd.gradcheck(*args, **kwargs)


def gradgradcheck(*args, **kwargs):
    return tg.autograd.gradgradcheck(*args, **kwargs)


FAST_MODES = pytest.mark.parametrize("fast_mode", [True, False], ids=["fast", "slow"])


def _add_hook_bias(x):
    """Identity whose backward adds 1e-2 to the gradient: wrong, and not linear in grad_output."""
    y = x.clone()
    y.register_hook(lambda g: g + 1e-2)
    return y


def _nondet_func():
    class NonDetFunc(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, jitter=0.0):
            ctx._jitter = jitter
            return x

        @staticmethod
        def backward(ctx, grad_out):
            # Random jitter makes two backward passes disagree by about `jitter`.
            return (
                NonDetFunc.apply(grad_out, ctx._jitter) * (1 + tg.rand_like(grad_out) * ctx._jitter),
                None,
            )

    return NonDetFunc


def test_gradcheck_error_is_runtime_error():
    """GradcheckError, importable from the gradcheck module, subclasses RuntimeError."""
    assert issubclass(gradcheck_module.GradcheckError, RuntimeError)


def test_unrelated_inputs():
    """gradcheck and gradgradcheck pass when one differentiable input is unused."""

    def my_function(x, y):
        return x * x

    x = tg.rand(4, dtype=tg.double, requires_grad=True)
    y = tg.rand(4, dtype=tg.double, requires_grad=True)
    assert gradcheck(my_function, (x, y))
    assert gradgradcheck(my_function, (x, y))


@FAST_MODES
def test_gradcheck_single_input(fast_mode):
    """A single tensor (not a tuple) is accepted as the inputs argument."""

    def f(inp):
        return inp.mul(5)

    assert gradcheck(f, tg.rand(4, dtype=tg.float64, requires_grad=True), fast_mode=fast_mode)
    assert gradgradcheck(f, tg.rand(4, dtype=tg.float64, requires_grad=True), fast_mode=fast_mode)


@FAST_MODES
def test_gradcheck_nondeterministic(fast_mode):
    """A non-reentrant backward fails with 'Backward is not reentrant' unless within nondet_tol."""
    NonDetFunc = _nondet_func()
    inp = tg.randn(3, 3, dtype=tg.double, requires_grad=True)
    assert gradcheck(lambda x: NonDetFunc.apply(x, 0.0), inp, fast_mode=fast_mode)
    with pytest.raises(RuntimeError, match="Backward is not reentrant"):
        gradcheck(lambda x: NonDetFunc.apply(x, 1e-6), inp, fast_mode=fast_mode)
    with pytest.raises(RuntimeError, match="Backward is not reentrant"):
        gradgradcheck(lambda x: NonDetFunc.apply(x, 1e-12), inp, fast_mode=fast_mode)
    assert gradcheck(lambda x: NonDetFunc.apply(x, 0.0), inp, nondet_tol=1e-5, fast_mode=fast_mode)
    assert gradcheck(lambda x: NonDetFunc.apply(x, 1e-6), inp, nondet_tol=1e-5, fast_mode=fast_mode)
    assert gradgradcheck(lambda x: NonDetFunc.apply(x, 1e-12), inp, nondet_tol=1e-5, fast_mode=fast_mode)


@FAST_MODES
def test_gradcheck_validates_inputs(fast_mode):
    """Input validation: none requiring grad (ValueError), float32 (warning), stride-0 (error)."""
    # None of the inputs requires grad: raised even with raise_exception=False.
    x = tg.rand(4, requires_grad=False)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda t: t, (x,), raise_exception=False, fast_mode=fast_mode)

    x = tg.ones(1, dtype=tg.float32, requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double precision"):
        assert gradcheck(lambda t: t, (x,), atol=1e-1, fast_mode=fast_mode)

    # An expanded input aliases memory, so perturbing one element moves several: always raised.
    x = tg.ones(1, dtype=tg.float64, requires_grad=True).expand((2, 2))
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(lambda t: t, (x,), raise_exception=False, fast_mode=fast_mode)


@FAST_MODES
def test_gradcheck_check_no_differentiable_outputs(fast_mode):
    """No differentiable output but a non-zero numerical gradient fails; no outputs at all passes."""
    x = tg.ones((1,), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float32 input; scalar conversion of a grad-requiring tensor
        with pytest.raises(RuntimeError, match="Numerical gradient for function expected to be zero"):
            gradcheck(lambda t: tg.tensor([t]), x, fast_mode=fast_mode)
        assert gradcheck(lambda t: tg.tensor([t]), x, raise_exception=False, fast_mode=fast_mode) is False
        assert gradcheck(lambda t: (), (x,), fast_mode=fast_mode)


@FAST_MODES
def test_gradcheck_backward_mul_by_grad_output(fast_mode):
    """A backward that is not linear in grad_output is reported (dense case)."""
    x = tg.ones(1, dtype=tg.double, requires_grad=True)
    with pytest.raises(RuntimeError, match="backward not multiplied by grad_output"):
        gradcheck(_add_hook_bias, (x,), atol=1e-1, fast_mode=fast_mode)
    assert gradcheck(_add_hook_bias, (x,), atol=1e-1, raise_exception=False, fast_mode=fast_mode) is False


@FAST_MODES
def test_gradcheck_undefined_grad(fast_mode):
    """A backward that cannot take an undefined (None) output grad fails the undefined-grad check."""

    def fn(x):
        def hook(g):
            if g is None:
                raise RuntimeError("x is undefined")

        y = x.clone()
        y.register_hook(hook)
        return y

    x = tg.ones(1, dtype=tg.double, requires_grad=True)
    with pytest.warns(UserWarning, match="Backwards compatibility: New undefined gradient support checking feature"):
        with pytest.raises(RuntimeError, match="Expected backward function to handle undefined output grads"):
            gradcheck(fn, (x,), fast_mode=fast_mode)
        assert gradcheck(fn, (x,), raise_exception=False, fast_mode=fast_mode) is False
    # With the check turned off, the same function passes.
    assert gradcheck(fn, (x,), check_undefined_grad=False, fast_mode=fast_mode)


@FAST_MODES
def test_gradcheck_jacobian_mismatch(fast_mode):
    """A wrong analytical Jacobian names the output/input pair; raise_exception=False returns False."""
    x = tg.ones(2, 2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float32 input
        with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
            gradcheck(_add_hook_bias, (x,), fast_mode=fast_mode)
        assert gradcheck(_add_hook_bias, (x,), raise_exception=False, fast_mode=fast_mode) is False


def test_gradcheck_jacobian_mismatch_complex():
    """Complex halves of test_gradcheck_jacobian_mismatch: C->C, R->C report the imaginary part."""
    x_c = tg.ones(2, 2, requires_grad=True, dtype=tg.complex128)
    with pytest.raises(RuntimeError, match="While considering the imaginary part of complex outputs only"):
        gradcheck(_add_hook_bias, (x_c,), fast_mode=False)
    assert gradcheck(_add_hook_bias, (x_c,), raise_exception=False, fast_mode=False) is False

    def fn2(x):  # R -> C
        y = tg.complex(x, x)
        y.register_hook(lambda g: g + 1e-2)
        return y

    x = tg.ones(2, 2, requires_grad=True, dtype=tg.float64)
    with pytest.raises(RuntimeError, match="While considering the imaginary part of complex outputs only"):
        gradcheck(fn2, (x,), fast_mode=False)
    assert gradcheck(fn2, (x,), raise_exception=False, fast_mode=False) is False

    def fn3(x):  # C -> R
        y = tg.real(x)
        y.register_hook(lambda g: g + 1e-2)
        return y

    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(fn3, (x_c,), fast_mode=False)
    assert gradcheck(fn3, (x_c,), raise_exception=False, fast_mode=False) is False


@FAST_MODES
def test_gradcheck_output_shape_or_dtype_depend_on_values(fast_mode):
    """Outputs whose shape or dtype change under perturbation raise AssertionError."""

    def fn(x):
        if tg.all(x >= 1):
            return tg.cat([x, x])
        return x

    a = tg.ones(1, dtype=tg.double, requires_grad=True)
    with pytest.raises(AssertionError, match="return outputs with the same shape when inputs are perturbed"):
        gradcheck(fn, (a,), fast_mode=fast_mode)

    def fn2(x):
        if tg.all(x >= 1):
            return x.to(tg.float32)
        return x

    with pytest.raises(AssertionError, match="return outputs with the same dtype when inputs are perturbed"):
        gradcheck(fn2, (a,), fast_mode=fast_mode)


def test_gradcheck_complex_non_complex_outputs():
    """Mixed complex and real outputs, from real or complex inputs, pass gradcheck."""

    def fn(x, y):
        return tg.complex(x, y), x + 1

    a = tg.ones(2, 2, requires_grad=True, dtype=tg.float64)
    b = tg.ones(2, 2, requires_grad=True, dtype=tg.float64)
    assert gradcheck(fn, (a, b))

    def fn2(z):
        return z, tg.real(z)

    c = tg.ones(2, 2, requires_grad=True, dtype=tg.complex128)
    assert gradcheck(fn2, c)


def test_gradcheck_get_numerical_jacobian():
    """The deprecated get_numerical_jacobian warns and returns d(output 0)/d(input) per input."""
    get_numerical_jacobian = gradcheck_module.get_numerical_jacobian

    def fn(inputs):
        x, y = inputs[0], inputs[1]
        return 2 * x + y, x + 2 * y

    a = tg.rand(2, 2, requires_grad=True, dtype=tg.float64)
    b = tg.rand(2, 2, requires_grad=True, dtype=tg.float64)
    eye = tg.eye(4, dtype=tg.double)

    with pytest.warns(FutureWarning, match="`get_numerical_jacobian` was part of PyTorch's private API"):
        jacobian = get_numerical_jacobian(fn, (a, b), target=a, eps=1e-6)
    assert tg.allclose(jacobian[0], 2 * eye)

    with pytest.warns(FutureWarning, match="`get_numerical_jacobian` was part of PyTorch's private API"):
        jacobian = get_numerical_jacobian(fn, (a, b), eps=1e-6)
    assert tg.allclose(jacobian[0], 2 * eye)
    assert tg.allclose(jacobian[1], eye)

    with pytest.raises(ValueError, match="Expected grad_out to be 1.0"), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        get_numerical_jacobian(fn, (a, b), eps=1e-6, grad_out=2.0)


def test_gradcheck_get_analytical_jacobian():
    """The deprecated get_analytical_jacobian warns, returns Jacobians and a reentrancy flag."""
    get_analytical_jacobian = gradcheck_module.get_analytical_jacobian

    def fn(x, y):
        return 2 * x + y, x + 2 * y

    a = tg.rand(2, 2, requires_grad=True, dtype=tg.float64)
    b = tg.rand(2, 2, requires_grad=True, dtype=tg.float64)
    eye = tg.eye(4, dtype=tg.double)

    outputs = fn(a, b)
    with pytest.warns(FutureWarning, match="`get_analytical_jacobian` was part of PyTorch's private API"):
        jacobians, reentrant, correct_grad_sizes, correct_grad_types = get_analytical_jacobian((a, b), outputs[0])
    assert tg.allclose(jacobians[0], 2 * eye)
    assert tg.allclose(jacobians[1], eye)
    assert reentrant is True
    assert correct_grad_sizes is True and correct_grad_types is True

    NonDetFunc = _nondet_func()
    outputs = NonDetFunc.apply(a, 1e-6)
    with pytest.warns(FutureWarning, match="`get_analytical_jacobian` was part of PyTorch's private API"):
        _, reentrant, _, _ = get_analytical_jacobian((a,), outputs)
    assert reentrant is False

    with pytest.raises(ValueError, match="Expected grad_out to be 1.0"), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        get_analytical_jacobian((a,), outputs, grad_out=2.0)


@FAST_MODES
def test_gradcheck_custom_error(fast_mode):
    """Failures raise GradcheckError; raise_exception=False swallows only GradcheckErrors."""
    x = tg.ones(2, 2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float32 input
        with pytest.raises(gradcheck_module.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
            gradcheck(_add_hook_bias, (x,), fast_mode=fast_mode)
        assert gradcheck(_add_hook_bias, (x,), raise_exception=False, fast_mode=fast_mode) is False

        def fn2(t):
            raise RuntimeError("Not a GradcheckError!")

        with pytest.raises(RuntimeError, match="Not a GradcheckError!"):
            gradcheck(fn2, (x,), fast_mode=fast_mode, raise_exception=False)


def _bad_forward_fn(x, y):
    # Inside gradcheck's forward-AD check, scale y's tangent so the forward Jacobian is wrong.
    if fwAD._current_level >= 0:
        y_p, y_d = fwAD.unpack_dual(y)
        y = fwAD.make_dual(y_p, y_d * 1.1)
    return x + y, y


FWD_ERR = "Jacobian computed with forward mode mismatch for output 0 with respect to input 1"


@FAST_MODES
def test_gradcheck_forward_ad(fast_mode):
    """check_forward_ad compares forward-mode Jacobians and names the failing input."""

    def fn(x, y):
        return x + y, y

    x = tg.rand(2, dtype=tg.double, requires_grad=True)
    y = tg.rand(2, dtype=tg.double, requires_grad=True)
    assert gradcheck(fn, (x, y), check_forward_ad=True, fast_mode=fast_mode)
    with pytest.raises(RuntimeError, match=FWD_ERR):
        gradcheck(_bad_forward_fn, (x, y), check_forward_ad=True, fast_mode=fast_mode)


@FAST_MODES
def test_gradcheck_forward_ad_complex(fast_mode):
    """Complex halves of test_gradcheck_forward_ad: one or all inputs complex."""

    def fn(x, y):
        return x + y, y

    def basic_mul(x):
        return tg.view_as_real(tg.resolve_conj(x * 1j))

    x = tg.rand(2, dtype=tg.double, requires_grad=True)
    y = tg.rand(2, dtype=tg.double, requires_grad=True)
    assert gradcheck(basic_mul, x, check_forward_ad=True, fast_mode=fast_mode)

    x = tg.rand(2, dtype=tg.cdouble, requires_grad=True)
    assert gradcheck(fn, (x, y), check_forward_ad=True, fast_mode=fast_mode)
    with pytest.raises(RuntimeError, match=FWD_ERR):
        gradcheck(_bad_forward_fn, (x, y), check_forward_ad=True, fast_mode=fast_mode)

    y = tg.rand(2, dtype=tg.cdouble, requires_grad=True)
    assert gradcheck(fn, (x, y), check_forward_ad=True, fast_mode=fast_mode)
    with pytest.raises(RuntimeError, match=FWD_ERR):
        gradcheck(_bad_forward_fn, (x, y), check_forward_ad=True, fast_mode=fast_mode)


def test_gradcheck_forward_ad_runs_with_no_requires_grad():
    """Under the forward-AD check, inputs reach the function without requires_grad."""
    seen = []

    class UserFn(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            if fwAD._current_level >= 0:
                seen.append((x.requires_grad, y.requires_grad))
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_t, y_t):
            return x_t, y_t

    x = tg.rand(2, dtype=tg.double, requires_grad=True)
    y = tg.rand(2, dtype=tg.double, requires_grad=True)
    for check_undefined_grad in (False, True):
        assert gradcheck(
            UserFn.apply,
            (x, y),
            check_forward_ad=True,
            check_undefined_grad=check_undefined_grad,
            check_backward_ad=False,
            check_batched_grad=False,
            check_batched_forward_grad=False,
        )
    assert seen and all(flags == (False, False) for flags in seen)


def test_gradcheck_forward_ad_respects_requires_grad():
    """Only inputs with requires_grad get tangents: jvp runs once per differentiable input."""
    jvp_count = [0]

    class UserFn(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x.clone(), y.clone()

        @staticmethod
        def jvp(ctx, x_t, y_t):
            jvp_count[0] += 1
            return x_t, y_t

    def run(x, y, check_undefined_grad):
        jvp_count[0] = 0
        gradcheck(
            UserFn.apply,
            (x, y),
            check_forward_ad=True,
            check_undefined_grad=check_undefined_grad,
            check_backward_ad=False,
            check_batched_grad=False,
            check_batched_forward_grad=False,
        )
        return jvp_count[0]

    # numel 1 so that slow and fast mode make the same number of calls.
    x = tg.rand(1, dtype=tg.double, requires_grad=True)
    y = tg.rand(1, dtype=tg.double, requires_grad=True)
    assert run(x, y, False) == 2  # once per input
    # + once with a normal and once with an efficient zero tangent, per input
    assert run(x, y, True) == 6

    y = tg.rand(1, dtype=tg.double, requires_grad=False)
    assert run(x, y, False) == 1
    # With a single differentiable input the undefined-tangent check adds only one call.
    assert run(x, y, True) == 2


def test_gradcheck_check_forward_or_backward_only():
    """check_forward_ad / check_backward_ad select which code paths run; a backward failure wins."""
    fwd_fail_err_msg = "FAIL FWD"
    bwd_fail_err_msg = "FAIL BWD"

    class UserFn(tg.autograd.Function):
        @staticmethod
        def forward(ctx, foo, fwd_bad, bwd_bad):
            ctx.fwd_bad = fwd_bad
            ctx.bwd_bad = bwd_bad
            return foo * 2

        @staticmethod
        def vjp(ctx, gO):
            if ctx.bwd_bad:
                raise RuntimeError(bwd_fail_err_msg)
            return 2 * gO, None, None

        @staticmethod
        def jvp(ctx, gI, _1, _2):
            if ctx.fwd_bad:
                raise RuntimeError(fwd_fail_err_msg)
            return 2 * gI

    x = tg.rand(2, dtype=tg.double, requires_grad=True)

    def run(fast_mode, check_forward_ad, check_backward_ad, fwd_bad, bwd_bad):
        return gradcheck(
            UserFn.apply,
            (x, fwd_bad, bwd_bad),
            check_forward_ad=check_forward_ad,
            check_backward_ad=check_backward_ad,
            check_undefined_grad=check_backward_ad,
            check_batched_grad=False,
            fast_mode=fast_mode,
        )

    for args in itertools.product((True, False), repeat=5):
        fast_mode, check_forward_ad, check_backward_ad, fwd_bad, bwd_bad = args
        if not check_forward_ad and not check_backward_ad:
            with pytest.raises(AssertionError, match="Expected at least one of"):
                run(*args)
            continue
        fwd_should_fail = fwd_bad and check_forward_ad
        bwd_should_fail = bwd_bad and check_backward_ad
        if not fwd_should_fail and not bwd_should_fail:
            assert run(*args)
            continue
        fail_msg = bwd_fail_err_msg if bwd_should_fail else fwd_fail_err_msg
        with pytest.raises(RuntimeError, match=fail_msg):
            run(*args)


@FAST_MODES
def test_gradcheck_keyword_tolerances(fast_mode):
    """eps / atol / rtol are honoured: a 1% error passes with a loose atol and fails with a tight one."""

    class Scaled(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def backward(ctx, g):
            return g * 3.03

    x = tg.rand(3, dtype=tg.double, requires_grad=True)
    assert gradcheck(Scaled.apply, (x,), eps=1e-6, atol=0.1, rtol=0.0, fast_mode=fast_mode)
    assert gradcheck(Scaled.apply, (x,), atol=1e-5, rtol=1e-3, raise_exception=False, fast_mode=fast_mode) is False


@FAST_MODES
def test_gradgradcheck_detects_wrong_double_backward(fast_mode):
    """gradgradcheck fails when a backward's own derivative is wrong while gradcheck passes."""

    class Square(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            # Right value, wrong dependence on x for double backward: 2*x is computed from a detached copy.
            return g * 2 * x.detach()

    x = tg.rand(3, dtype=tg.double, requires_grad=True) + 0.5
    x = x.detach().requires_grad_(True)
    assert gradcheck(Square.apply, (x,), fast_mode=fast_mode)
    assert gradgradcheck(Square.apply, (x,), raise_exception=False, fast_mode=fast_mode) is False
    assert gradgradcheck(lambda t: t * t, (x,), fast_mode=fast_mode)
