"""Autograd corners where tracegrad and torch parted: integer tensors that require grad, ``.data`` of another
shape, ``detach_()`` of a weight ``linear`` saved, inference tensors made to require grad, and the identity of
a node's saved values."""

from __future__ import annotations

import pytest
from _lib import raised, tg, torch, value_or_error


def _described(result) -> tuple:
    """A tensor as both libraries can compare it: values, dtype, whether it requires grad, its node's name."""
    fn = result.grad_fn
    return (result.tolist(), str(result.dtype).replace("tracegrad", "torch"), result.requires_grad,
            None if fn is None else fn.name())


def _outcome(lib, program, described=_described):
    try:
        return described(program(lib))
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)


# ---- integer tensors that require grad --------------------------------------------------------------------


def _long_requiring_grad(lib):
    """``fill_`` with a value that requires grad gives an integer tensor a FillBackward3: torch's one way to an
    integer tensor that requires grad."""
    x = lib.tensor([1.5, 2.0, 3.0], requires_grad=True)
    return lib.zeros(3, dtype=lib.long).fill_(x[0])


INTEGER_PROGRAMS = {
    "mul number": lambda lib, a: a * 2,
    "mul tensor": lambda lib, a: a * a,
    "add": lambda lib, a: a + 1,
    "rsub": lambda lib, a: 1 - a,
    "neg": lambda lib, a: -a,
    "abs": lambda lib, a: a.abs(),
    "sign": lambda lib, a: a.sign(),
    "floor": lambda lib, a: a.floor(),
    "pow": lambda lib, a: a ** 2,
    "maximum": lambda lib, a: lib.maximum(a, lib.tensor([1, 2, 3])),
    "remainder": lambda lib, a: lib.remainder(a, a),
    "sum": lambda lib, a: a.sum(),
    "float result": lambda lib, a: a * 2.5,
    "reciprocal": lambda lib, a: a.reciprocal(),
    "comparison": lambda lib, a: a == 1,
    "floor_divide": lambda lib, a: a // 2,
    "bitwise_and": lambda lib, a: a & 3,
    "bitwise_and_": lambda lib, a: a.bitwise_and_(3),
    "bitwise_not_": lambda lib, a: a.bitwise_not_(),
    "floor_divide_": lambda lib, a: a.floor_divide_(2),
    "mul_": lambda lib, a: a.mul_(2),
}


@pytest.mark.parametrize("name", INTEGER_PROGRAMS)
def test_ops_on_an_integer_tensor_that_requires_grad(name):
    program = INTEGER_PROGRAMS[name]
    ours, theirs = (_outcome(lib, lambda lib: program(lib, _long_requiring_grad(lib))) for lib in (tg, torch))
    assert ours == theirs


def test_a_refused_integer_result_takes_its_sequence_number():
    """torch makes the node before the kernel: its number is taken even where set_history then refuses."""
    def numbers_taken(lib):
        x = lib.ones(3, requires_grad=True)
        a = _long_requiring_grad(lib)
        before = (x * 1).grad_fn._sequence_nr()
        with pytest.raises(RuntimeError, match="Autograd not support dtype: Long"):
            a * 2
        return (x * 1).grad_fn._sequence_nr() - before

    assert numbers_taken(tg) == numbers_taken(torch) == 2


# ---- .data of another shape ---------------------------------------------------------------------------------


def _reshaped_by_data(lib, consume, new_shape=(3,), op=lambda x: x * 2):
    x = lib.ones(5, requires_grad=True)
    y = op(x)
    y.data = lib.zeros(new_shape)
    consume(lib, y)
    return x.grad


DATA_PROGRAMS = {
    "sum": lambda lib: _reshaped_by_data(lib, lambda lib, y: y.sum().backward()),
    "sum of a product": lambda lib: _reshaped_by_data(lib, lambda lib, y: (y * 3).sum().backward()),
    "root": lambda lib: _reshaped_by_data(lib, lambda lib, y: y.backward(lib.ones(3))),
    "exp": lambda lib: _reshaped_by_data(lib, lambda lib, y: y.exp().sum().backward(), op=lambda x: x.exp()),
    "grad": lambda lib: _reshaped_by_data(lib, lambda lib, y: lib.autograd.grad(y.sum(), y.grad_fn.next_functions[0][0].variable)),
    "2-d": lambda lib: _reshaped_by_data(lib, lambda lib, y: y.sum().backward(), new_shape=(2, 3)),
    "0-d": lambda lib: _reshaped_by_data(lib, lambda lib, y: y.sum().backward(), new_shape=()),
    "broadcastable": lambda lib: _reshaped_by_data(lib, lambda lib, y: y.sum().backward(), new_shape=(1, 5)),
    "slice": lambda lib: _reshaped_by_data(lib, lambda lib, y: y.sum().backward(), op=lambda x: x[:4] * 1),
    # a gradient that expands to the receiver's record is summed to it, as torch's validate_outputs does
    "reduced to 0-d": lambda lib: _reshaped_by_data(lib, lambda lib, y: y.sum().backward(), op=lambda x: x.unbind()[0]),
    "reduced root": lambda lib: _reshaped_by_data(lib, lambda lib, y: y.backward(lib.ones(3)), op=lambda x: x[0]),
    "reduced to 1-d": lambda lib: _reshaped_by_data(lib, lambda lib, y: y.sum().backward(), new_shape=(2, 4),
                                                    op=lambda x: x[1:]),
    "reduced by a product": lambda lib: _reshaped_by_data(lib, lambda lib, y: (y * 2).sum().backward(),
                                                          op=lambda x: x.sum()),
}


@pytest.mark.parametrize("name", DATA_PROGRAMS)
def test_backward_through_an_output_whose_data_changed_shape(name):
    assert value_or_error(DATA_PROGRAMS[name], tg) == value_or_error(DATA_PROGRAMS[name], torch)


def _hooked_output_given_new_data(lib, new_data, root: bool):
    """The dtypes and shapes the hooks of ``y`` and of its node see, and ``y.grad``, once ``y.data = new_data``."""
    x = lib.ones(3, requires_grad=True)
    y = x.sum() * 2
    y.data = new_data(lib)
    seen = []
    y.register_hook(lambda g: seen.append(("tensor", str(g.dtype), list(g.shape))))
    y.grad_fn.register_prehook(lambda gs: seen.append(("prehook", str(gs[0].dtype), list(gs[0].shape))))
    y.retain_grad()
    if root:
        y.backward(lib.ones_like(y))
    else:
        (y * 1).sum().backward()
    return [(k, d.replace("tracegrad", "torch"), s) for k, d, s in seen], str(y.grad.dtype).replace("tracegrad", "torch"), x.grad.tolist()


@pytest.mark.parametrize("root", [False, True])
@pytest.mark.parametrize("new_data", ["float64", "float64 of another shape", "complex64"])
def test_hooks_of_an_output_whose_data_changed_see_its_recorded_dtype_and_shape(new_data, root):
    made = {"float64": lambda lib: lib.zeros((), dtype=lib.float64),
            "float64 of another shape": lambda lib: lib.zeros(4, dtype=lib.float64),
            "complex64": lambda lib: lib.zeros((), dtype=lib.complex64)}[new_data]
    program = lambda lib: _hooked_output_given_new_data(lib, made, root)  # noqa: E731
    assert _outcome(tg, program, tuple) == _outcome(torch, program, tuple)


def test_data_of_another_shape_on_a_leaf_still_accumulates():
    def program(lib):
        x = lib.ones(5, requires_grad=True)
        y = x * 1
        x.data = lib.zeros(3)
        y.sum().backward()
        return x.grad

    assert value_or_error(program, tg) == value_or_error(program, torch)


# ---- detach_() of a weight that linear saved ------------------------------------------------------------------


def _linear_then_detach(lib, bias: bool):
    p = lib.ones(2, 3, requires_grad=True)
    x = lib.arange(12.0).reshape(4, 3).requires_grad_()
    w = p * 1
    out = lib.nn.functional.linear(x, w, lib.ones(2) if bias else None)
    w.detach_()
    return p, x, w, out


@pytest.mark.parametrize("bias", [False, True])
def test_linear_backward_after_its_weight_is_detached_in_place(bias):
    def program(lib):
        p, x, w, out = _linear_then_detach(lib, bias)
        out.sum().backward()
        return lib.cat([x.grad.flatten(), p.grad.flatten()])

    assert value_or_error(program, tg) == value_or_error(program, torch)


@pytest.mark.parametrize("bias", [False, True])
def test_linear_saved_mat2_is_the_forward_transpose(bias):
    def facts(lib):
        p, x, w, out = _linear_then_detach(lib, bias)
        fn = out.grad_fn
        mat2 = fn._saved_mat2
        return (mat2 is fn._saved_mat2, mat2.grad_fn is fn.next_functions[-1][0], mat2._base is w,
                mat2.requires_grad, tuple(mat2.shape), mat2.stride())

    assert facts(tg) == facts(torch)


def test_detach_in_place_of_a_saved_input_is_still_refused():
    def program(lib):
        p, x = lib.ones(3, requires_grad=True), lib.ones(3, requires_grad=True)
        w = p * 1
        out = w * x
        w.detach_()
        out.sum().backward()

    assert raised(tg, program) == raised(torch, program) != None  # noqa: E711


# ---- inference tensors made to require grad -------------------------------------------------------------------


def _inference_leaf(lib):
    with lib.inference_mode():
        return lib.ones(3, 2, requires_grad=True)


INFERENCE_PROGRAMS = {
    "neg": lambda lib, x: x.neg(),
    "sum": lambda lib, x: x.sum(),
    "product with itself": lambda lib, x: x * x,
    "product with a number": lambda lib, x: x * 2,
    # (a number at a Scalar parameter is no tensor: the autograd kernel does not run)
    "power of a number": lambda lib, x: x ** 2,
    "pow": lambda lib, x: x.pow(2.5),
    "pow by keyword": lambda lib, x: lib.pow(x, exponent=2),
    "square": lambda lib, x: x.square(),
    # (rsub.Scalar's kernel calls sub with the number wrapped in a normal tensor: that records a SubBackward0)
    "number minus it": lambda lib, x: 1 - x,
    "rsub with alpha": lambda lib, x: lib.rsub(x, 2.5, alpha=3),
    "rsub of a complex number": lambda lib, x: lib.rsub(x, 1j),
    "sum with a normal tensor": lambda lib, x: x + lib.ones(3, 2),
    "relu": lambda lib, x: lib.nn.functional.relu(x),
    "linear": lambda lib, x: lib.nn.functional.linear(x, _inference_leaf(lib)),
    "linear with a normal weight": lambda lib, x: lib.nn.functional.linear(x, lib.ones(2, 2)),
    "cat": lambda lib, x: lib.cat([x, x]),
    "cat with a normal tensor": lambda lib, x: lib.cat([x, lib.ones(3, 2)]),
    "select": lambda lib, x: x[0],
    "clone": lambda lib, x: x.clone(),
    "double": lambda lib, x: x.double(),
    "long": lambda lib, x: x.long(),
    "detach": lambda lib, x: x.detach(),
    "inside inference_mode(False)": lambda lib, x: _outside_inference(lib, x),
}


def _outside_inference(lib, x):
    with lib.inference_mode(False):
        return x.reciprocal()


@pytest.mark.parametrize("name", INFERENCE_PROGRAMS)
def test_ops_on_an_inference_tensor_that_requires_grad(name):
    def outcome(lib):
        try:
            y = INFERENCE_PROGRAMS[name](lib, _inference_leaf(lib))
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            return type(exc).__name__, str(exc)
        return _described(y) + (y.is_inference(), [n and n.name() for n, _ in (y.grad_fn.next_functions
                                                                              if y.grad_fn else ())])

    assert outcome(tg) == outcome(torch)


def test_backward_from_an_op_on_an_inference_tensor_alone():
    program = lambda lib: _inference_leaf(lib).sum().backward()  # noqa: E731
    assert raised(tg, program) == raised(torch, program) != None  # noqa: E711


# ---- what a node's saved values are, read after read ----------------------------------------------------------


def _scaled(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 2.5
    return x, y, y.grad_fn


def test_saved_number_reads_back_as_one_object():
    def facts(lib):
        x, y, fn = _scaled(lib)
        raw, saved = fn._raw_saved_other, fn._saved_other
        first = (raw is fn._raw_saved_other, saved is fn._saved_other, raw.unpack() is saved,
                 fn._raw_saved_self is fn._raw_saved_self, str(saved.dtype), saved.requires_grad)
        y.sum().backward()
        return first + (fn._raw_saved_other is raw, raised(lib, lambda lib: fn._saved_other))

    assert facts(tg) == facts(torch)


def test_saved_number_written_in_place_is_refused_at_backward():
    def program(lib):
        x, y, fn = _scaled(lib)
        fn._saved_other.add_(1)
        y.sum().backward()
        return x.grad

    assert value_or_error(program, tg) == value_or_error(program, torch)


def test_unpack_hook_on_a_saved_number_runs_in_backward():
    def program(lib):
        x, y, fn = _scaled(lib)
        fn._raw_saved_other.register_hooks(lambda t: t, lambda t: t * 2)
        y.sum().backward()
        return x.grad

    assert value_or_error(program, tg) == value_or_error(program, torch)


@pytest.mark.parametrize("number", [0.1, 3, True])
def test_gradient_after_reading_a_saved_number_keeps_its_bits(number):
    import numpy as np

    def grads(lib):
        x = lib.tensor(np.random.RandomState(0).rand(7).astype(np.float32), requires_grad=True)
        y = x * number
        y.grad_fn._saved_other  # noqa: B018 - the read is the point
        y.sum().backward()
        return x.grad.numpy().tobytes()

    assert grads(tg) == grads(torch)
