"""Complex gradients meeting real inputs, against torch.

PyTorch's engine (validate_outputs) refuses a complex gradient for a real input, and an integer or bool one for a
complex input, with a TORCH_CHECK's words; tracegrad's engine used to cast the first to its real part silently. The
built-in formulas that meet a real operand of a complex result take the real part themselves (``handle_r_to_c``:
add, sub, rsub, mul, div, pow, addcmul, addcdiv, cat, stack, block_diag, copy_, _to_copy), and only they: where
torch's formula does not (where of two tensors, sum/prod/mean with a complex dtype, fill_ and masked_fill with a
real 0-d value, ...), its engine refuses the gradient. So must a custom Function's backward that returns a complex
gradient for a real input. A leaf whose ``grad_dtype`` is None is cast by nobody, so its ``.grad`` shows what the
formula gave."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import recorded_graph, tg, to_numpy, torch
from opinfo import op_db
from opinfo.core import Arr, DType, _tree_map, flatten_outputs, make_tensor, resolve

LIBS = (torch, tg)
MISMATCH = ("Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to be true, but "
            "got false.  (Could this error message be improved?  If so, please report an enhancement request to "
            "PyTorch.)")


def _outcome(program, lib):
    """The gradients' dtypes and values, or the error's type and message."""
    try:
        grads = program(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    return [None if g is None else (str(g.dtype).split(".")[-1], to_numpy(g)) for g in grads]


def _same_in_both(program, bits: bool = True):
    """torch's and tracegrad's outcomes: the same error, or the same gradient dtypes and values (bit for bit, or
    within a few ulps)."""
    theirs, ours = (_outcome(program, lib) for lib in LIBS)
    if isinstance(theirs, tuple) or isinstance(ours, tuple):
        assert ours == theirs
        return theirs
    assert [g and g[0] for g in ours] == [g and g[0] for g in theirs]
    for a, b in zip(ours, theirs, strict=True):
        if a is not None:
            if bits:
                assert a[1].tobytes() == b[1].tobytes(), (a[1], b[1])
            else:
                np.testing.assert_allclose(a[1], b[1], rtol=1e-12, atol=0)
    return theirs


# ---- custom Functions and hooks: the engine's own check ------------------------------------------------------


def _function_returning(lib, make_grad):
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return make_grad(lib, g)

    return F


FUNCTION_GRADS = {
    "complex_for_real": (lambda lib, g: lib.complex(g, g), "float64"),
    "broadcast_complex_for_real": (lambda lib, g: lib.complex(g, g).expand(3, 2), "float64"),
    "integer_for_complex": (lambda lib, g: lib.ones(g.shape, dtype=lib.int64), "complex128"),
    "bool_for_complex": (lambda lib, g: lib.ones(g.shape, dtype=lib.bool), "complex128"),
    "integer_for_real": (lambda lib, g: lib.ones(g.shape, dtype=lib.int64), "float64"),
    "real_for_complex": (lambda lib, g: g.real, "complex128"),
}


@pytest.mark.parametrize("how", ["leaf", "non_leaf", "grad"])
@pytest.mark.parametrize("case", sorted(FUNCTION_GRADS))
def test_custom_function_gradient_kind_checked_as_torch(case, how):
    make_grad, dtype = FUNCTION_GRADS[case]

    def program(lib):
        x = lib.tensor([1.0, 2.0], dtype=getattr(lib, dtype), requires_grad=True)
        inner = x * 3 if how == "non_leaf" else x
        loss = _function_returning(lib, make_grad).apply(inner).abs().sum()
        if how == "grad":
            return lib.autograd.grad(loss, x)
        loss.backward()
        return [x.grad]

    outcome = _same_in_both(program)
    if case in ("complex_for_real", "broadcast_complex_for_real", "integer_for_complex", "bool_for_complex"):
        assert outcome == ("RuntimeError", MISMATCH)


HOOKS = {
    "tensor_hook": lambda y: y.register_hook(lambda g: g * (1 + 1j)),
    "leaf_hook": lambda y: y.grad_fn.next_functions[0][0].variable.register_hook(lambda g: g * (1 + 1j)),
    "node_prehook": lambda y: y.grad_fn.register_prehook(lambda go: (go[0] * (1 + 1j),)),
}


@pytest.mark.parametrize("case", sorted(HOOKS))
def test_hook_returning_complex_gradient_for_real_tensor_refused_as_torch(case):
    """torch names a complex tensor's type ``CPUComplexFloatType`` (Tensor::toString: no legacy class)."""

    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        HOOKS[case](y)
        (y * 3).sum().backward()
        return [x.grad]

    assert "CPUComplexFloatType" in _same_in_both(program)[1]


def test_complex_grad_outputs_for_real_outputs_refused_as_torch():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        return lib.autograd.grad(x * 2, x, grad_outputs=lib.tensor([1 + 1j, 2 + 0j]))

    _same_in_both(program)


# ---- grad_dtype: the leaf's cast, and no cast at all ----------------------------------------------------------


def test_complex_leaf_with_real_grad_dtype_takes_real_part_with_torchs_warning():
    def program(lib):
        lib.set_warn_always(True)
        try:
            x = lib.tensor([1 + 1j, 2.0], requires_grad=True)
            x.grad_dtype = lib.float32
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                (x * (1 + 2j)).abs().sum().backward()
        finally:
            lib.set_warn_always(False)
        texts = [str(w.message).split(" (Triggered internally")[0] for w in caught
                 if not issubclass(w.category, DeprecationWarning)]
        assert texts == ["Casting complex values to real discards the imaginary part"]
        return [x.grad]

    _same_in_both(program)


def test_real_leaf_with_complex_grad_dtype_refuses_complex_gradient_as_torch():
    """The check reads the input's own dtype, whatever its grad_dtype says."""

    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.grad_dtype = lib.complex64
        _function_returning(lib, FUNCTION_GRADS["complex_for_real"][0]).apply(x).abs().sum().backward()
        return [x.grad]

    assert _same_in_both(program) == ("RuntimeError", MISMATCH)


# ---- built-in formulas --------------------------------------------------------------------------------------


def _mask(lib):
    return lib.tensor([[True, False], [False, True]])


def _assigned(a, b):
    a = a.clone()
    a[0] = b[0]
    return a


# (real x, complex z) -> output
MIXED = {
    "add_number": lambda lib, x, z: x + 1j,
    "radd_number": lambda lib, x, z: 1j + x,
    "sub_number": lambda lib, x, z: x - 1j,
    "rsub_number": lambda lib, x, z: 1j - x,
    "mul_number": lambda lib, x, z: x * (1 + 1j),
    "div_number": lambda lib, x, z: x / (1 + 1j),
    "rdiv_number": lambda lib, x, z: (1 + 1j) / x,
    "pow_number": lambda lib, x, z: x.abs() ** (1 + 1j),
    "pow_zero_number": lambda lib, x, z: x ** 0j,
    "rpow_number": lambda lib, x, z: (1 + 1j) ** x,
    "pow_real_base": lambda lib, x, z: x.abs() ** z,
    "pow_real_exponent": lambda lib, x, z: z ** x,
    "add": lambda lib, x, z: x + z,
    "add_alpha": lambda lib, x, z: lib.add(x, z, alpha=1 + 1j),
    "add_alpha_real_other": lambda lib, x, z: lib.add(z, x, alpha=1 + 1j),
    "sub_alpha": lambda lib, x, z: lib.sub(x, z, alpha=2j),
    "mul": lambda lib, x, z: x * z,
    "div": lambda lib, x, z: x / z,
    "div_by_real": lambda lib, x, z: z / x,
    "broadcast_sum_to": lambda lib, x, z: x[0] + z,
    "addcmul_value": lambda lib, x, z: lib.addcmul(z, x, x, value=1j),
    "addcmul_mixed": lambda lib, x, z: lib.addcmul(x, z, x),
    "addcdiv_mixed": lambda lib, x, z: lib.addcdiv(x, z, x + 3),
    "mul_": lambda lib, x, z: z.clone().mul_(x),
    "add_": lambda lib, x, z: z.clone().add_(x),
    "div_": lambda lib, x, z: z.clone().div_(x),
    "sub_": lambda lib, x, z: z.clone().sub_(x, alpha=2j),
    "pow_": lambda lib, x, z: z.clone().pow_(x),
    "cat": lambda lib, x, z: lib.cat([x, z]),
    "stack": lambda lib, x, z: lib.stack([x, z]),
    "block_diag": lambda lib, x, z: lib.block_diag(x, z),
    "kron": lambda lib, x, z: lib.kron(x, z),
    "outer": lambda lib, x, z: lib.outer(x[0], z[0]),
    "diff_prepend": lambda lib, x, z: lib.diff(z, prepend=x),
    "copy_": lambda lib, x, z: z.clone().copy_(x),
    "setitem": lambda lib, x, z: _assigned(z, x),
    "where_number": lambda lib, x, z: lib.where(_mask(lib), x, 1j),
    "where_number_self": lambda lib, x, z: lib.where(_mask(lib), 1j, x),
    "where_method_number": lambda lib, x, z: x.where(_mask(lib), 1j),
    "to_complex": lambda lib, x, z: x.to(lib.complex64) * z,
    "abs_and_angle": lambda lib, x, z: (x * z).abs() + (x * z).angle(),
    "real_and_imag": lambda lib, x, z: lib.real(x * z) + lib.imag(x * z),
    "l1_loss": lambda lib, x, z: lib.nn.functional.l1_loss(x, z),
    "trapezoid": lambda lib, x, z: lib.trapezoid(z, x),
    "std": lambda lib, x, z: lib.std(x * z),
    # torch's formulas without handle_r_to_c: its engine refuses the complex gradient
    "where_tensors": lambda lib, x, z: lib.where(_mask(lib), x, z),
    "sum_complex_dtype": lambda lib, x, z: lib.sum(x, dtype=lib.complex128),
    "sum_dim_complex_dtype": lambda lib, x, z: lib.sum(x, 0, dtype=lib.complex128),
    "prod_complex_dtype": lambda lib, x, z: lib.prod(x, dtype=lib.complex128),
    "mean_complex_dtype": lambda lib, x, z: lib.mean(x, dtype=lib.complex128),
    "dist": lambda lib, x, z: lib.dist(x, z),
    "logaddexp": lambda lib, x, z: lib.logaddexp(x, z),
    "diagonal_scatter": lambda lib, x, z: lib.diagonal_scatter(z, x[0]),
    "fill_": lambda lib, x, z: z.clone().fill_(x[0, 0]),
    "masked_fill": lambda lib, x, z: z.masked_fill(_mask(lib), x[0, 0]),
    "index_fill": lambda lib, x, z: z.index_fill(0, lib.tensor([1]), x[0, 0]),
}


def _mixed_grads(lib, case: str, create_graph: bool, grad_dtype_none: bool):
    x = lib.tensor([[0.5, -1.25], [2.0, 0.75]], dtype=lib.float64, requires_grad=True)
    z = lib.tensor([[1 + 2j, -0.5 + 1j], [0.25 - 1j, 2 + 0.5j]], requires_grad=True)
    if grad_dtype_none:
        x.grad_dtype = None  # (no cast by the engine: the formula's own gradient)
    out = MIXED[case](lib, x, z)
    weight = lib.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape)))
    loss = (out * (weight + 0.7j)).real.sum() if out.is_complex() else (out * weight).sum()
    if not create_graph:
        loss.backward()
        return [x.grad, z.grad]
    grads = lib.autograd.grad(loss, [x, z], create_graph=True, allow_unused=True)
    live = [g for g in grads if g is not None and g.requires_grad]
    if not live:
        return grads
    second = sum((g * g.conj()).real.sum() + (g * (0.3 - 0.5j)).real.sum() for g in live)
    return [*grads, *lib.autograd.grad(second, [x, z], allow_unused=True)]


# complex powers: NumPy's, not ATen's, within an ulp (also where every input is complex)
POWERS = {"pow_real_base", "pow_real_exponent", "rpow_number", "pow_"}


@pytest.mark.parametrize("case", sorted(MIXED))
def test_real_input_beside_complex_values_gradients_as_torch(case):
    """Gradient values (bits) and dtypes of a real leaf without a grad_dtype (PyTorch's formulas give it a real
    gradient themselves), or torch's refusal."""
    _same_in_both(lambda lib: _mixed_grads(lib, case, create_graph=False, grad_dtype_none=True),
                  bits=case not in POWERS)


@pytest.mark.parametrize("case", sorted(MIXED))
def test_real_input_beside_complex_values_second_order_as_torch(case):
    """Second-order gradients through the real parts the formulas take (a complex64 product rounds in another
    order than ATen's: within a few ulps)."""
    _same_in_both(lambda lib: _mixed_grads(lib, case, create_graph=True, grad_dtype_none=False), bits=False)


def test_where_of_real_tensor_and_complex_number_records_to_copy_as_torch():
    """where.ScalarOther converts the tensor to the result's dtype first: ToCopyBackward0 below WhereBackward0."""
    graphs = []
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        graphs.append(recorded_graph(lib.where(x > 1, x, 1j)))
    assert graphs[1] == graphs[0]


# ---- the operator database: one complex argument made real --------------------------------------------------


def _with_one_real(sample, k: int):
    """The sample's arguments with its ``k``-th complex tensor replaced by its real part."""
    seen = [0]

    def visit(x):
        if isinstance(x, np.ndarray):
            x = Arr(x)
        if isinstance(x, Arr) and x.values.dtype.kind == "c":
            seen[0] += 1
            if seen[0] == k + 1:
                return Arr(np.ascontiguousarray(x.values.real), x.layout)
        return x

    return _tree_map(visit, sample.args), {key: _tree_map(visit, v) for key, v in sample.kwargs.items()}


def _complex_leaves(sample) -> int:
    found = []
    _tree_map(lambda x: found.append(1) if isinstance(x, Arr) and x.values.dtype.kind == "c" else x,
              (sample.args, sample.kwargs))
    return len(found)


# Entries whose torch gradient is not the derivative (kept out of the comparison)
TORCH_DEVIATES = {
    # torch 2.13 gives a real self beside a complex src the gradient of the part src overwrote, not of the rest
    "as_strided_scatter",
}


def _mixed_database_cases():
    cases = []
    for op in op_db:
        if ("complex128" not in op.dtypes or not op.differentiable or op.output_process is not None
                or op.id in TORCH_DEVIATES):
            continue
        sample = op.samples("complex128")[0]
        for k in range(_complex_leaves(sample) if _complex_leaves(sample) > 1 else 0):
            cases.append(pytest.param(op, sample, k, id=f"{op.id}-{sample.name}-real{k}"))
    return cases


def _database_grads(lib, op, sample, k: int):
    args, kwargs = _with_one_real(sample, k)
    leaves = []

    def build(x):
        if isinstance(x, DType):
            return getattr(lib, x.name)
        if not isinstance(x, Arr):
            return x
        t = make_tensor(lib, x).detach().requires_grad_(x.values.dtype.kind in "fc")
        if t.requires_grad:
            if not t.is_complex():
                t.grad_dtype = None  # (no cast by the engine: the formula's own gradient)
            leaves.append(t)
        return t

    args, kwargs = _tree_map(build, args), {key: _tree_map(build, v) for key, v in kwargs.items()}
    if op.input_process is not None:
        args, kwargs = op.input_process(lib, args, kwargs)
    outs = [o for o in flatten_outputs(resolve(lib, op.name)(*args, **kwargs)) if o.requires_grad]
    loss = sum((o * (lib.tensor(np.cos(np.arange(o.numel())).reshape(tuple(o.shape))) + 0.7j)).real.sum()
               for o in outs)
    return lib.autograd.grad(loss, leaves, allow_unused=True)


@pytest.mark.parametrize(("op", "sample", "k"), _mixed_database_cases())
def test_database_op_with_a_real_argument_among_complex_ones_as_torch(op, sample, k):
    """Every database entry with complex samples and several complex tensors, one of them made real, its leaf
    without a grad_dtype: gradient dtypes and values (the database's float64 tolerance), or torch's refusal (an
    operator refusing mixed dtypes in its forward says so in its own words: only the kind of error is compared)."""
    theirs, ours = (_outcome(lambda lib: _database_grads(lib, op, sample, k), lib) for lib in LIBS)
    if isinstance(theirs, tuple) or isinstance(ours, tuple):
        assert isinstance(ours, tuple) and isinstance(theirs, tuple), (ours, theirs)
        assert ours[0] == theirs[0]
        assert (ours[1] == MISMATCH) == (theirs[1] == MISMATCH), (ours, theirs)
        return
    assert [g and g[0] for g in ours] == [g and g[0] for g in theirs]
    for a, b in zip(ours, theirs, strict=True):
        if a is not None:
            np.testing.assert_allclose(a[1], b[1], rtol=1e-7, atol=1e-9)


# ---- forward refusals of complex values meeting real tensors ------------------------------------------------


def _mask1d(lib):
    return lib.tensor([True, False])


FORWARD = {
    # a 0-d tensor value is read as a Scalar (value.item()) and converted with a Scalar's checks
    "masked_fill_complex_value": lambda lib: lib.zeros(2).masked_fill(_mask1d(lib), lib.tensor(1j)),
    "masked_fill__complex_value": lambda lib: lib.zeros(2).masked_fill_(_mask1d(lib), lib.tensor(1j)),
    "masked_fill_real_complex_value": lambda lib: lib.zeros(2).masked_fill(_mask1d(lib), lib.tensor(1 + 0j)),
    "masked_fill_overflowing_value": lambda lib: lib.zeros(2).masked_fill(
        _mask1d(lib), lib.tensor(1e300, dtype=lib.float64)),
    "masked_fill_uint8_overflow": lambda lib: lib.zeros(2, dtype=lib.uint8).masked_fill(_mask1d(lib), lib.tensor(300)),
    "masked_fill_half_overflow": lambda lib: lib.zeros(2, dtype=lib.float16).masked_fill(_mask1d(lib), lib.tensor(1e6)),
    "masked_fill_rounded_value": lambda lib: lib.zeros(2).masked_fill(_mask1d(lib), lib.tensor(0.1, dtype=lib.float64)),
    "index_fill_complex_value": lambda lib: lib.zeros(2).index_fill(0, lib.tensor([1]), lib.tensor(1j)),
    "index_fill_real_complex_value": lambda lib: lib.zeros(2).index_fill(0, lib.tensor([1]), lib.tensor(1 + 0j)),
    "index_fill_complex_into_complex": lambda lib: lib.zeros(2, dtype=lib.complex64).index_fill(
        0, lib.tensor([1]), lib.tensor(1 + 1j)),
    "vector_norm_complex_dtype_of_real": lambda lib: lib.linalg.vector_norm(lib.ones(2), dtype=lib.complex128),
    "vector_norm_real_dtype_of_complex": lambda lib: lib.linalg.vector_norm(
        lib.ones(2, dtype=lib.complex64), dtype=lib.float32),
    "vector_norm_complex_dtype_of_complex": lambda lib: lib.linalg.vector_norm(
        lib.ones(2, dtype=lib.complex64), dtype=lib.complex128),
    "norm_complex_dtype_of_real": lambda lib: lib.ones(2).norm(dtype=lib.complex64),
    "vecdot_real_complex": lambda lib: lib.linalg.vecdot(lib.ones(2), lib.ones(2, dtype=lib.complex64)),
    "vecdot_complex_real": lambda lib: lib.linalg.vecdot(lib.ones(2, dtype=lib.complex64), lib.ones(2)),
    "vecdot_float_double": lambda lib: lib.linalg.vecdot(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    "vecdot_integers": lambda lib: lib.linalg.vecdot(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64)),
}


@pytest.mark.parametrize("case", sorted(FORWARD))
def test_complex_value_meeting_real_tensor_in_forward_as_torch(case):
    _same_in_both(lambda lib: [FORWARD[case](lib)])
