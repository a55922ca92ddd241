"""Op-level gradient correctness: indexing, setitem, select/slice/diagonal, chunk, var_mean, pow.

Ports the behaviour of seed 004 (PyTorch ``test_autograd.py``) area R. Values and gradients are
computed by the same program with tracegrad and PyTorch (``run_both``) and, where the seed states
the expected gradient, also checked against that value directly.

Seed tests ported here: test_indexing, test_indexing_duplicates,
test_index_backward_does_not_save_tensor, test_setitem, test_setitem_mask, test_select_sum,
test_diagonal_expanded_v, test_select_expanded_v, test_slice_expanded_v, test_unused_output,
test_var_mean_differentiable, test_pow_zero_tensor_gradient, test_power_function,
test_integer_outputs.

Adaptations: random masks are fixed NumPy masks; sizes are smaller than the seed's; the legacy
``Variable(...)`` wrapper and ``x.new(size)`` are replaced by ``tensor(...)`` / ``full(...)``;
test_integer_outputs checks the public ``unique`` / ``unique_consecutive`` only, not the private
``torch._unique``, ``torch._unique2`` and ``torch._VF.unique_dim`` bindings.

Skipped (marked N): test_to_sparse_backward, test_sparse_mm_backward, test_sparse_gather_* (x6)
(sparse tensors), test_lobpcg (LAPACK).
"""

from __future__ import annotations

import math

import pytest
from _lib import assert_close, np, run_both, tg


def gradcheck(*args, **kwargs):
    return tg.autograd.gradcheck(*args, **kwargs)


def gradgradcheck(*args, **kwargs):
    return tg.autograd.gradgradcheck(*args, **kwargs)


_MASK_4x4 = np.array(
    [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 1, 1]],
    dtype=bool,
)
_MASK_5x5 = np.array(
    [[1, 0, 1, 1, 0], [0, 0, 1, 0, 1], [1, 1, 0, 0, 0], [0, 1, 0, 1, 1], [1, 0, 0, 1, 0]],
    dtype=bool,
)


def _long(lib, values):
    # NumPy stands in for a library when computing expected gradients.
    if lib is np:
        return np.array(values, dtype=np.int64)
    return lib.tensor(values, dtype=lib.long)


def _mask(lib, arr):
    if lib is np:
        return arr
    return lib.tensor(arr.tolist(), dtype=lib.bool)


# Each case builds its index for a given library, so tensor indices are native to that library.
_INDEX_CASES_2D = {
    "int": lambda lib: 1,
    "int_pair": lambda lib: (1, 1),
    "slice_from": lambda lib: slice(1, None),
    "slice_to": lambda lib: slice(None, 2),
    "slice_int": lambda lib: (slice(None, 2), 2),
    "slice_1_2_int": lambda lib: (slice(1, 2), 2),
    "int_slice": lambda lib: (1, slice(2, None)),
    "full_slice_slice": lambda lib: (slice(None, None), slice(2, None)),
    "long_tensor": lambda lib: _long(lib, [0, 2]),
    "bool_mask": lambda lib: _mask(lib, _MASK_4x4),
    "ellipsis_slice": lambda lib: (Ellipsis, slice(2, None)),
    "lists_1_1": lambda lib: ([0], [0]),
    "lists_3_1": lambda lib: ([1, 2, 3], [0]),
    "lists_2_2": lambda lib: ([1, 2], [2, 1]),
    "nested_lists": lambda lib: ([[1, 2], [3, 0]], [[0, 1], [2, 3]]),
    "slice_list": lambda lib: (slice(None), [2, 3]),
    "list_slice": lambda lib: ([2, 3], slice(None)),
    "single_list": lambda lib: [0],
    "single_list_tuple": lambda lib: ([0],),
}

_INDEX_CASES_3D = {
    "slice_l_l": lambda lib: (slice(None), [0], [0]),
    "l_l_slice": lambda lib: ([0], [0], slice(None)),
    "slice_l3_l1": lambda lib: (slice(None), [0, 1, 2], [0]),
    "l3_l1_slice": lambda lib: ([0, 1, 2], [0], slice(None)),
    "slice_l2_l2": lambda lib: (slice(None), [1, 2], [2, 1]),
    "l2_l2_slice": lambda lib: ([1, 2], [2, 1], slice(None)),
    "slice_nested": lambda lib: (slice(None), [[1, 2], [2, 0]], [[0, 1], [2, 3]]),
    "nested_slice": lambda lib: ([[1, 2], [3, 0]], [[0, 1], [2, 2]], slice(None)),
    "slice_slice_l": lambda lib: (slice(None), slice(None), [2, 1]),
    "slice_l_slice": lambda lib: (slice(None), [2, 1], slice(None)),
    "l_slice_slice": lambda lib: ([2, 1], slice(None), slice(None)),
    "single_list_tuple": lambda lib: ([0],),
    "list_slice": lambda lib: ([0], slice(None)),
    "list_ellipsis": lambda lib: ([0], Ellipsis),
    "two_lists": lambda lib: ([1, 2], [0, 1]),
    "two_lists_ellipsis": lambda lib: ([1, 2], [0, 1], Ellipsis),
    "ellipsis_two_lists": lambda lib: (Ellipsis, [1, 2], [0, 1]),
    "long_tensor_ellipsis": lambda lib: (_long(lib, [0, 1]), Ellipsis),
}


def _index_program(lib, shape, make_index):
    n = int(np.prod(shape))
    x = lib.arange(1.0, n + 1).view(*shape)
    y = x.clone().requires_grad_(True)
    idx = make_index(lib)
    indexed = y[idx]
    indexed.sum().backward()
    return x[idx], indexed.detach(), y.grad


def _expected_index_grad(shape, make_index):
    expected = np.zeros(shape)
    idx = make_index(np)
    expected[idx] = 1
    return expected


@pytest.mark.parametrize("case", sorted(_INDEX_CASES_2D))
def test_indexing(case):
    """Basic and advanced indexing of a 4x4 tensor: values match, grad is 1 at selected places."""
    make_index = _INDEX_CASES_2D[case]
    ours, theirs = run_both(_index_program, (4, 4), make_index)
    assert_close(ours, theirs)
    assert_close(ours[1], ours[0])  # the autograd result equals plain indexing
    assert_close(ours[2], _expected_index_grad((4, 4), make_index))


@pytest.mark.parametrize("case", sorted(_INDEX_CASES_3D))
def test_indexing_3d(case):
    """Advanced indexing of a 4x3x4 tensor (fewer indices than dims, Ellipsis, index tensors)."""
    make_index = _INDEX_CASES_3D[case]
    ours, theirs = run_both(_index_program, (4, 3, 4), make_index)
    assert_close(ours, theirs)
    assert_close(ours[1], ours[0])


def test_indexing_duplicates():
    """Repeated indices accumulate their gradients (scatter-add)."""

    def program(lib, shape, make_index):
        n = int(np.prod(shape))
        y = lib.arange(1.0, n + 1).view(*shape).requires_grad_(True)
        y[make_index(lib)].sum().backward()
        return y.grad

    cases = [
        ((4, 4), lambda lib: _long(lib, [1, 1, 3, 2, 1, 2])),
        ((4, 4), lambda lib: ([1, 1, 3, 2, 1, 2], [0])),
        ((4, 4), lambda lib: ([[1, 2], [0, 0]], [[0, 1], [1, 1]])),
        ((4, 4, 4), lambda lib: ([1, 1, 1], slice(None), slice(None))),
    ]
    expected = []
    e = np.zeros((4, 4))
    for i in [1, 1, 3, 2, 1, 2]:
        e[i] += 1
    expected.append(e)
    e = np.zeros((4, 4))
    for i in [1, 1, 3, 2, 1, 2]:
        e[i][0] += 1
    expected.append(e)
    expected.append(np.array([[0.0, 2.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0] * 4]))
    e = np.zeros((4, 4, 4))
    e[1] = 3
    expected.append(e)

    for (shape, make_index), exp in zip(cases, expected):
        ours, theirs = run_both(program, shape, make_index)
        assert_close(ours, theirs)
        assert_close(ours, exp)


def test_index_backward_does_not_save_tensor():
    """Indexing does not save the indexed tensor, so writing into it afterwards is fine."""
    a = tg.tensor([1.0, 0, 0])
    b = tg.zeros(3, requires_grad=True)
    tensor = b + 0
    tensor[a != 0] = tensor[a != 0]
    tensor.backward(tg.zeros_like(tensor))
    assert b.grad.tolist() == [0.0, 0.0, 0.0]


def _setitem_scalar_program(lib, size, make_index):
    x = lib.ones(*size, requires_grad=True)
    y = x + 2
    version = y._version
    y[make_index(lib)] = 2
    bumped = y._version != version
    y.backward(lib.ones(*size))
    return bumped, y.detach(), x.grad


def _setitem_tensor_program(lib, size, make_index):
    x = lib.ones(*size, requires_grad=True)
    y = x + 2
    version = y._version
    idx = make_index(lib)
    value = lib.full(tuple(x[idx].shape), 7.0).requires_grad_(True)
    y[idx] = value
    bumped = y._version != version
    y.backward(lib.ones(*size))
    return bumped, y.detach(), x.grad, value.grad


def _expected_setitem_grad(size, make_index):
    expected = np.ones(size)
    expected[make_index(np)] = 0
    return expected


_SETITEM_CASES = {
    "5x5_int": ((5, 5), lambda lib: 1),
    "5_int": ((5,), lambda lib: 1),
    "1_int0": ((1,), lambda lib: 0),
    "10_list": ((10,), lambda lib: [0, 4, 2]),
    "5x5_lists": ((5, 5), lambda lib: ([0, 4], [2, 2])),
    "5x5x5_s_s_l": ((5, 5, 5), lambda lib: (slice(None), slice(None), [1, 3])),
    "5x5x5_s_l_s": ((5, 5, 5), lambda lib: (slice(None), [1, 3], slice(None))),
    "5x5x5_l_s_s": ((5, 5, 5), lambda lib: ([1, 3], slice(None), slice(None))),
    "5x5x5_s_l_l": ((5, 5, 5), lambda lib: (slice(None), [2, 4], [1, 3])),
    "5x5x5_l_l_s": ((5, 5, 5), lambda lib: ([1, 3], [2, 4], slice(None))),
}

_SETITEM_TENSOR_CASES = {
    "5x5_int": ((5, 5), lambda lib: 3),
    "5x5_lists": ((5, 5), lambda lib: ([0, 1], [1, 0])),
    "5_int": ((5,), lambda lib: 3),
    "5_0d_tensor": ((5,), lambda lib: _long(lib, [3]).sum()),
    # The seed writes [[0, 1, 2, 3]]; PyTorch reads that (deprecated) form as this tuple.
    "5_list_in_tuple": ((5,), lambda lib: ([0, 1, 2, 3],)),
    "5x5x5_s_s_l": ((5, 5, 5), lambda lib: (slice(None), slice(None), [1, 3])),
    "5x5x5_s_l_s": ((5, 5, 5), lambda lib: (slice(None), [1, 3], slice(None))),
    "5x5x5_l_s_s": ((5, 5, 5), lambda lib: ([1, 3], slice(None), slice(None))),
    "5x5x5_s_l_l": ((5, 5, 5), lambda lib: (slice(None), [2, 4], [1, 3])),
    "5x5x5_l_l_s": ((5, 5, 5), lambda lib: ([1, 3], [2, 4], slice(None))),
    "5x5x5_t_l_s": ((5, 5, 5), lambda lib: (_long(lib, [1, 3]), [2, 4], slice(None))),
}


@pytest.mark.parametrize("case", sorted(_SETITEM_CASES))
def test_setitem(case):
    """Assigning a scalar bumps _version and zeroes the gradient at the overwritten places."""
    size, make_index = _SETITEM_CASES[case]
    ours, theirs = run_both(_setitem_scalar_program, size, make_index)
    assert ours[0] is True and theirs[0] is True
    assert_close(ours[1:], theirs[1:])
    assert_close(ours[2], _expected_setitem_grad(size, make_index))


@pytest.mark.parametrize("case", sorted(_SETITEM_TENSOR_CASES))
def test_setitem_tensor(case):
    """Assigning a tensor that requires grad routes the overwritten places' gradient to it."""
    size, make_index = _SETITEM_TENSOR_CASES[case]
    ours, theirs = run_both(_setitem_tensor_program, size, make_index)
    assert ours[0] is True and theirs[0] is True
    assert_close(ours[1:], theirs[1:])
    assert_close(ours[2], _expected_setitem_grad(size, make_index))
    assert_close(ours[3], np.ones(tuple(ours[3].shape)))


def test_setitem_broadcast_value():
    """A value broadcast into y[1] gets a gradient reduced back to its own shape."""

    def program(lib):
        x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        y = lib.zeros(2, 3, 4)
        y[1] = x
        g = lib.arange(24.0).view(2, 3, 4)
        y.backward(g)
        return y.requires_grad, x.grad

    ours, theirs = run_both(program)
    assert ours[0] is True
    assert tuple(ours[1].shape) == (4,)
    assert_close(ours[1], theirs[1])
    assert_close(ours[1], np.arange(24.0).reshape(2, 3, 4)[1].sum(0))


def test_setitem_mask():
    """Boolean-mask setitem, with scalar and tensor values, on 5x5, 5 and 1-element tensors."""
    cases = [
        ((5, 5), lambda lib: _mask(lib, _MASK_5x5)),
        ((5,), lambda lib: _mask(lib, _MASK_5x5[0])),
        ((1,), lambda lib: _mask(lib, _MASK_5x5[0, 0:1])),
    ]
    for size, make_index in cases:
        ours, theirs = run_both(_setitem_scalar_program, size, make_index)
        assert ours[0] is True
        assert_close(ours[1:], theirs[1:])
        assert_close(ours[2], _expected_setitem_grad(size, make_index))
    for size, make_index in cases[:2]:
        ours, theirs = run_both(_setitem_tensor_program, size, make_index)
        assert ours[0] is True
        assert_close(ours[1:], theirs[1:])
        assert_close(ours[2], _expected_setitem_grad(size, make_index))


def test_select_sum():
    """select followed by sum (both return 0-d results) passes gradcheck and gradgradcheck."""
    x = tg.randn(5, dtype=tg.double, requires_grad=True)

    def func(t):
        return t.select(0, 1).sum()

    assert gradcheck(func, [x])
    assert gradgradcheck(func, [x])


def test_diagonal_expanded_v():
    """diagonal's backward accepts an expanded (stride-0) grad_output."""

    def program(lib):
        v = lib.tensor(0.75).expand(4)
        a = lib.rand(4, 4, dtype=lib.double, requires_grad=True)
        (result,) = lib.autograd.grad(a.diagonal(), a, v)
        return result

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert_close(ours, np.eye(4) * 0.75)


def test_select_expanded_v():
    """select's backward accepts an expanded grad_output and scatters it into slot 0."""
    row = np.linspace(0.1, 0.4, 4)

    def program(lib):
        v = lib.tensor(row.tolist()).expand(4, 4)
        a = lib.rand(4, 4, 4, requires_grad=True)
        (result,) = lib.autograd.grad(a[0], a, v)
        return result

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    expected = np.zeros((4, 4, 4))
    expected[0] = np.broadcast_to(row, (4, 4))
    assert_close(ours, expected)


def test_slice_expanded_v():
    """Slicing's backward accepts an expanded grad_output and scatters it into the slice."""
    col = np.linspace(0.1, 0.4, 4).reshape(4, 1)

    def program(lib):
        v = lib.tensor(col.tolist()).expand(2, 4, 4)
        a = lib.rand(5, 4, 4, requires_grad=True)
        (result,) = lib.autograd.grad(a[3:5], a, v)
        return result

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    expected = np.zeros((5, 4, 4))
    expected[3:5] = np.broadcast_to(col, (2, 4, 4))
    assert_close(ours, expected)


def test_unused_output():
    """Backward through one chunk gives zero gradient for the unused chunks."""
    g_arr = np.arange(20.0).reshape(2, 10) / 10

    def program(lib):
        x = lib.randn(10, 10, requires_grad=True)
        outputs = x.chunk(5)
        (outputs[2] * 4 + 2).sum().backward()
        first = x.grad.clone()
        with lib.no_grad():
            x.grad.zero_()
        outputs = x.chunk(5)
        outputs[0].backward(lib.tensor(g_arr.tolist()))
        return first, x.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    expected_first = np.zeros((10, 10))
    expected_first[4:6] = 4
    expected_second = np.zeros((10, 10))
    expected_second[:2] = g_arr
    assert_close(ours, [expected_first, expected_second])


def test_var_mean_differentiable():
    """var_mean over several dims has the same values and gradients as var and mean separately."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal((2, 3, 4, 2, 3))
    grad = rng.standard_normal((2, 4, 3))

    def program(lib):
        input1 = lib.tensor(data.tolist(), requires_grad=True)
        input2 = lib.tensor(data.tolist(), requires_grad=True)
        var1, mean1 = lib.var_mean(input1, dim=[1, 3], keepdim=False)
        var2 = input2.var(dim=[1, 3], keepdim=False)
        mean2 = input2.mean(dim=[1, 3], keepdim=False)
        r1 = var1 * var1 * mean1 * mean1
        r2 = var2 * var2 * mean2 * mean2
        g = lib.tensor(grad.tolist())
        lib.autograd.backward(r1, g)
        lib.autograd.backward(r2, g)
        return r1.detach(), r2.detach(), input1.grad, input2.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs, rtol=1e-4)
    assert_close(ours[0], ours[1], rtol=1e-4)
    assert_close(ours[2], ours[3], rtol=1e-4, atol=1e-5)


def test_pow_zero_tensor_gradient():
    """d/dx x**0 at x=0 is 0, not NaN, for tensor and scalar exponents."""

    def program(lib, input_size, exponent):
        inp = lib.zeros(*input_size, requires_grad=True)
        exp = lib.zeros(*exponent) if isinstance(exponent, tuple) else exponent
        inp.pow(exp).sum().backward()
        return inp.grad

    for size, exponent in (((4,), (4,)), ((3, 3), (3, 3)), ((4,), 0)):
        ours, theirs = run_both(program, size, exponent)
        assert_close(ours, theirs)
        assert float(ours.abs().sum()) == 0.0


def test_power_function():
    """d/db 0**b is -inf for b<0 and 0 for b>=0, for a zero tensor base and for the scalar 0."""

    def program(lib):
        a = lib.tensor([0.0, 0.0, 0.0])
        b = lib.tensor([-1.0, 0.0, 1.0], requires_grad=True)
        lib.sum(a**b).backward()
        b2 = lib.tensor([-1.0, 0.0, 1.0], requires_grad=True)
        lib.sum(0**b2).backward()
        return b.grad, b2.grad

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    assert ours[0].tolist() == [-math.inf, 0.0, 0.0]
    assert ours[1].tolist() == [-math.inf, 0.0, 0.0]


def test_integer_outputs():
    """Integer-valued results (argmax, argsort, searchsorted, bucketize, counts...) never require grad."""
    inp = tg.rand(4, requires_grad=True)
    for out in (inp.argmax(), inp.argmin(), inp.argsort()):
        assert not out.dtype.is_floating_point
        assert out.requires_grad is False

    val = tg.rand((), requires_grad=True)
    out = tg.searchsorted(inp.detach().sort().values.requires_grad_(True), val)
    assert not out.dtype.is_floating_point
    assert out.requires_grad is False

    bins = tg.linspace(0, 1.0, steps=10, requires_grad=True)
    vals = tg.rand(3, 3, requires_grad=True)
    out = tg.bucketize(vals, bins)
    assert not out.dtype.is_floating_point
    assert out.requires_grad is False

    out = tg.empty(5).requires_grad_().count_nonzero()
    assert out.requires_grad is False

    def assert_only_first_requires_grad(res):
        if not isinstance(res, tuple):
            res = (res,)
        assert res[0].requires_grad is True
        for extra in res[1:]:
            if extra is not None:
                assert extra.requires_grad is False

    for sort in (True, False):
        for return_inverse in (True, False):
            for return_counts in (True, False):
                kwargs = {"return_inverse": return_inverse, "return_counts": return_counts}
                assert_only_first_requires_grad(tg.unique(inp, sorted=sort, **kwargs))
                assert_only_first_requires_grad(tg.unique(inp, sorted=sort, dim=0, **kwargs))
                assert_only_first_requires_grad(tg.unique_consecutive(inp, **kwargs))
                assert_only_first_requires_grad(tg.unique_consecutive(inp, dim=0, **kwargs))


@pytest.mark.parametrize("point", [(0.0, 0.0), (1e-160, 0.0), (1e-160, 1e-170), (3.0, -4.0)])
def test_atan2_gradient_at_the_origin_and_below_underflow(point: tuple):
    """PyTorch's atan2_backward zeroes 1 / (y² + x²) only where that sum is exactly 0: the origin gets
    gradient 0, a point whose squares underflow gets inf/NaN as in torch."""

    def program(lib):
        y, x = (lib.tensor(v, dtype=lib.float64, requires_grad=True) for v in point)
        lib.atan2(y, x).backward()
        return str(y.grad.item()), str(x.grad.item())

    ours, theirs = run_both(program)
    assert ours == theirs
