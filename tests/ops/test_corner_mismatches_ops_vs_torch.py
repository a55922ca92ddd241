"""Operator corners where tracegrad and torch parted: a complex ``value`` of addcmul/addcdiv, mixed dtypes in the
matrix products and convolutions (whose message depends on the backend ATen picks), and view_as_complex of empty
and oddly strided tensors."""

from __future__ import annotations

import pytest
from _lib import tg, torch, value_or_error

# ---- addcmul / addcdiv with a complex value -----------------------------------------------------------------

ADDC_PROGRAMS = {
    "addcmul, no imaginary part": lambda lib: lib.addcmul(lib.ones(3), lib.ones(3), lib.full((3,), 3.0), value=2 + 0j),
    "addcdiv, no imaginary part": lambda lib: lib.addcdiv(lib.ones(3), lib.ones(3), lib.full((3,), 3.0), value=2 + 0j),
    "addcmul_ of longs": lambda lib: lib.ones(3, dtype=lib.long).addcmul_(lib.ones(3, dtype=lib.long),
                                                                          lib.ones(3, dtype=lib.long), value=2 + 0j),
    "addcdiv_, nan": lambda lib: lib.ones(3).addcdiv_(lib.ones(3), lib.ones(3), value=complex(float("nan"), 0)),
    "addcmul, imaginary part": lambda lib: lib.addcmul(lib.ones(3), lib.ones(3), lib.ones(3), value=1j),
    "addcdiv, complex self": lambda lib: lib.addcdiv(lib.ones(3, dtype=lib.complex64), lib.ones(3), lib.ones(3),
                                                     value=1j),
}


@pytest.mark.parametrize("name", ADDC_PROGRAMS)
def test_addc_with_a_complex_value(name):
    assert value_or_error(ADDC_PROGRAMS[name], tg) == value_or_error(ADDC_PROGRAMS[name], torch)


def _addc_gradients(lib, op: str, value, t2_dtype: str = "float32", create_graph: bool = False):
    z = lib.ones(3, requires_grad=True)
    t1 = lib.full((3,), 2.0, requires_grad=True)
    t2 = lib.full((3,), 3, dtype=getattr(lib, t2_dtype), requires_grad=t2_dtype == "float32")
    y = getattr(lib, op)(z, t1, t2, value=value)
    grads = lib.autograd.grad(y.sum(), (t1,), create_graph=create_graph)
    return grads[0], y.grad_fn._saved_value


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_addc_gradients_with_a_complex_value(op):
    (ours, ours_value), (theirs, their_value) = (_addc_gradients(lib, op, 0.1 + 0j) for lib in (tg, torch))
    assert ours.numpy().tobytes() == theirs.numpy().tobytes() and ours_value == their_value


@pytest.mark.parametrize("op", ["addcmul", "addcdiv"])
def test_addc_double_backward_graph_with_a_complex_value(op):
    def graph(lib):
        g = _addc_gradients(lib, op, 0.1 + 0j, create_graph=True)[0]
        names, fn = [], g.grad_fn
        while fn is not None:  # (down the first edges)
            names.append(fn.name())
            fn = fn.next_functions[0][0] if fn.next_functions else None
        return names

    assert graph(tg) == graph(torch)


@pytest.mark.parametrize("t2_dtype", ["long", "bool", "float64"])
def test_addcdiv_gradient_through_an_integer_divisor(t2_dtype):
    """torch's ``value / tensor2`` is ``empty_like(tensor2).fill_(value).div_(tensor2)``: an integer divisor refuses
    the float quotient in backward."""
    program = lambda lib: _addc_gradients(lib, "addcdiv", 0.5, t2_dtype)[0]  # noqa: E731
    assert value_or_error(program, tg) == value_or_error(program, torch)


# ---- mixed dtypes in matrix products ------------------------------------------------------------------------

F32, F64 = "float32", "float64"


def _t(lib, shape, dtype):
    return lib.ones(shape, dtype=getattr(lib, dtype))


MATRIX_PROGRAMS = {
    "addmm self float": lambda lib: lib.addmm(_t(lib, (2, 4), F32), _t(lib, (2, 3), F32), _t(lib, (3, 4), F64)),
    "addmm mat1 double": lambda lib: lib.addmm(_t(lib, (2, 4), F64), _t(lib, (2, 3), F32), _t(lib, (3, 4), F64)),
    "addmm self and mat1": lambda lib: lib.addmm(_t(lib, (2, 4), F32), _t(lib, (2, 3), F64), _t(lib, (3, 4), F64)),
    "addmm bad shapes too": lambda lib: lib.addmm(_t(lib, (2, 4), F32), _t(lib, (2, 3), F32), _t(lib, (4, 4), F64)),
    "addmm 3-d mat1 too": lambda lib: lib.addmm(_t(lib, (2, 4), F32), _t(lib, (2, 3, 1), F32), _t(lib, (3, 4), F64)),
    "addmm_": lambda lib: _t(lib, (2, 4), F32).addmm_(_t(lib, (2, 3), F32), _t(lib, (3, 4), F64)),
    "mm": lambda lib: lib.mm(_t(lib, (2, 3), F32), _t(lib, (3, 4), F64)),
    "linear": lambda lib: lib.nn.functional.linear(_t(lib, (2, 3), F32), _t(lib, (4, 3), F64)),
    "linear with bias": lambda lib: lib.nn.functional.linear(_t(lib, (2, 3), F32), _t(lib, (4, 3), F64),
                                                             _t(lib, (4,), F64)),
}


@pytest.mark.parametrize("name", MATRIX_PROGRAMS)
def test_matrix_product_of_mixed_dtypes(name):
    assert value_or_error(MATRIX_PROGRAMS[name], tg) == value_or_error(MATRIX_PROGRAMS[name], torch)


# ---- mixed dtypes in convolutions: oneDNN's refusal or the slow kernel's ---------------------------------------

# (input shape, weight shape, keyword arguments): batches, groups, strides, dilations, 1x1 and large kernels, big
# inputs, one to three dims; oneDNN takes a float32 input unless ATen's heuristic prefers its slow kernels
CONV_LAYOUTS = [
    ((1, 2, 5, 5), (3, 2, 2, 2), {}),
    ((2, 2, 5, 5), (3, 2, 2, 2), {}),
    ((1, 2, 5, 5), (3, 2, 2, 2), {"stride": 2}),
    ((1, 2, 5, 5), (3, 2, 2, 2), {"dilation": 2}),
    ((1, 4, 5, 5), (4, 2, 2, 2), {"groups": 2}),
    ((1, 2, 9, 9), (3, 2, 4, 4), {}),
    ((1, 2, 100, 100), (3, 2, 3, 3), {}),
    ((1, 2, 110, 100), (3, 2, 3, 3), {}),
    ((1, 2, 5, 5), (3, 2, 1, 1), {}),
    ((16, 2, 5, 5), (3, 2, 1, 1), {}),
    ((2, 5, 5), (3, 2, 2, 2), {}),
    ((1, 2, 5), (3, 2, 2), {}),
    ((4, 2, 5), (3, 2, 2), {}),
    ((1, 2, 3, 3, 3), (3, 2, 2, 2, 2), {}),
    ((2, 2, 3, 3, 3), (3, 2, 2, 2, 2), {}),
]


@pytest.fixture(params=[1, 2], ids=["1 thread", "2 threads"])
def threads(request):
    """Both libraries on ``n`` threads: ATen's choice of oneDNN for a 1x1 kernel reads at::get_num_threads()."""
    before = (tg.get_num_threads(), torch.get_num_threads())
    for lib in (tg, torch):
        lib.set_num_threads(request.param)
    yield request.param
    tg.set_num_threads(before[0])
    torch.set_num_threads(before[1])


@pytest.mark.parametrize("dtypes", [(F32, F64), (F64, F32), (F32, "float16"), ("int64", F32), (F32, "complex64")],
                         ids="-".join)
@pytest.mark.parametrize("layout", CONV_LAYOUTS, ids=str)
@pytest.mark.parametrize("transposed", [False, True], ids=["conv", "conv_transpose"])
def test_convolution_of_mixed_dtypes(threads, layout, dtypes, transposed):
    x_shape, w_shape, kwargs = layout
    if transposed:  # (in and out channels swapped)
        groups = kwargs.get("groups", 1)
        w_shape = (w_shape[1] * groups, w_shape[0] // groups) + w_shape[2:]
    name = f"conv{'_transpose' if transposed else ''}{len(w_shape) - 2}d"

    def program(lib):
        return getattr(lib.nn.functional, name)(_t(lib, x_shape, dtypes[0]), _t(lib, w_shape, dtypes[1]), **kwargs)

    assert value_or_error(program, tg) == value_or_error(program, torch)


# ---- view_as_complex ------------------------------------------------------------------------------------------

COMPLEX_VIEW_SOURCES = {
    "(0, 2)": lambda lib: lib.zeros(0, 2),
    "(0, 3, 2)": lambda lib: lib.zeros(0, 3, 2),
    "(3, 0, 2)": lambda lib: lib.zeros(3, 0, 2),
    "empty, every other row": lambda lib: lib.zeros(6, 0, 2)[::2],
    "empty, expanded": lambda lib: lib.zeros(1, 0, 2).expand(3, 0, 2),
    "empty, odd stride": lambda lib: lib.empty_strided((3, 0, 2), (3, 3, 1)),
    "empty, last stride 2": lambda lib: lib.empty_strided((3, 0, 2), (4, 4, 2)),
    "empty, permuted": lambda lib: lib.zeros(2, 0, 3).permute(1, 2, 0),
    "empty, odd offset": lambda lib: lib.zeros(6).as_strided((0, 2), (2, 1), 1),
    "0-d": lambda lib: lib.zeros(()),
    "odd offset": lambda lib: lib.zeros(5)[1:].view(2, 2),
    "even offset": lambda lib: lib.zeros(6)[2:].view(2, 2),
    "odd stride": lambda lib: lib.zeros(3, 3)[:, :2],
    # (a dimension of size 1 may have an odd stride: torch halves it, rounding down)
    "odd stride of a dimension of size 1": lambda lib: lib.zeros(1, 3)[:, :2],
    "odd strides of size-1 dimensions": lambda lib: lib.zeros(12).as_strided((1, 1, 2), (5, 3, 1)),
    "odd stride between": lambda lib: lib.zeros(12).as_strided((3, 1, 2), (2, 3, 1)),
    "odd stride of size 1, odd offset": lambda lib: lib.zeros(12).as_strided((1, 2), (3, 1), 1),
}


@pytest.mark.parametrize("name", COMPLEX_VIEW_SOURCES)
def test_view_as_complex_layout(name):
    def layout(lib):
        z = lib.view_as_complex(COMPLEX_VIEW_SOURCES[name](lib))
        return tuple(z.shape), z.stride(), z.is_contiguous(), str(z.dtype).replace("tracegrad", "torch")

    def outcome(lib):
        try:
            return layout(lib)
        except RuntimeError as exc:
            return str(exc)

    assert outcome(tg) == outcome(torch)


def test_view_as_complex_with_an_odd_stride_of_size_1_writes_through():
    def program(lib):
        x = lib.arange(12.0)
        z = lib.view_as_complex(x.as_strided((3, 1, 2), (2, 3, 1), 2))
        z.mul_(1j)
        return x

    assert value_or_error(program, tg) == value_or_error(program, torch)


def test_view_as_complex_of_an_empty_tensor_round_trips():
    def strides(lib):
        z = lib.view_as_complex(lib.zeros(4, 0, 2)[::2])
        return z.stride(), lib.view_as_real(z).stride()

    assert strides(tg) == strides(torch) == ((2, 1), (4, 2, 1))
