"""Forward-mode AD through ``torch._foreach_*``: every overload of every operator with dual tensors against torch
(tangents bit for bit, their dtypes and layouts, PyTorch's refusals in its words), with tangents on some inputs only,
and in-place forms over lists that repeat a tensor, cross another list or hold views of one base, where PyTorch's
order (every write, then each tensor's formula reading its inputs as written) shows in the tangents."""

from __future__ import annotations

import pytest

from tests._lib import assert_same_bits, np, raised, tg, torch
from tests.ops.test_foreach_vs_torch import _WITHIN_AN_ULP, CASES, OVERLOADS, _arguments

# Per-tensor operators whose tangents tracegrad computes within a few ulps of torch's (MKL's functions, or their
# formulas' order of operations): there each foreach tangent must carry tracegrad's per-tensor bits, and torch's
# within a few ulps
_TANGENTS_WITHIN_ULPS = _WITHIN_AN_ULP | {"acos", "asin", "erf", "erfc", "log10", "rsqrt", "sigmoid"}

# Which tensors get a tangent: all the floating ones, those of the first argument only, those of the others only
DUALS = ("all", "first", "others")


def _dual(lib, value, position: int, duals: str, rng):
    """``value`` (an argument) with tangents on its floating tensors where ``duals`` says."""
    wanted = duals == "all" or (duals == "first") == (position == 0)
    if isinstance(value, list) and value and isinstance(value[0], lib.Tensor):
        return [_dual(lib, t, position, duals, rng) for t in value]
    if not isinstance(value, lib.Tensor) or not wanted or not value.is_floating_point():
        return value
    tangent = rng.uniform(-1, 1, tuple(value.shape)).astype(str(value.dtype).split(".")[-1])
    return lib.autograd.forward_ad.make_dual(value.clone(), lib.tensor(tangent))


def _tangents(lib, name: str, overload: str, case: str, duals: str, per_tensor: bool = False):
    """The tangents of the results (of what an in-place form wrote), or the error; ``per_tensor``: of tracegrad's
    per-tensor operator called on each tensor instead."""
    schema = getattr(getattr(torch.ops.aten, name), overload)._schema
    args, kwargs = _arguments(lib, name, schema, case)
    fw = lib.autograd.forward_ad
    rng = np.random.default_rng(7)
    with fw.dual_level():
        args = [_dual(lib, a, k, duals, rng) for k, a in enumerate(args)]
        try:
            outs = _per_tensor(lib, name, args, kwargs) if per_tensor else getattr(lib, name)(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            return type(exc).__name__, str(exc)
        outs = args[0] if outs is None else outs
        return "tangents", [fw.unpack_dual(o).tangent for o in outs]


def _per_tensor(lib, name: str, args: list, kwargs: dict) -> list:
    fn = getattr(lib, name.removeprefix("_foreach_").rstrip("_"))
    count = max(len(a) for a in args if isinstance(a, list))
    return [fn(*[a[k] if isinstance(a, list) else a for a in args], **kwargs) for k in range(count)]


def _assert_same_tangents(name: str, overload: str, case: str, duals: str) -> None:
    ours, theirs = _tangents(tg, name, overload, case, duals), _tangents(torch, name, overload, case, duals)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] != "tangents":
        assert ours[1] == theirs[1]
        return
    within_ulps = name.removeprefix("_foreach_").rstrip("_") in _TANGENTS_WITHIN_ULPS
    references = _tangents(tg, name, overload, case, duals, per_tensor=True)[1] if within_ulps else theirs[1]
    assert len(ours[1]) == len(theirs[1])
    for a, b, reference in zip(ours[1], theirs[1], references):
        assert (a is None) == (b is None)
        if a is None:
            continue
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert a.stride() == b.stride()
        assert_same_bits(a, reference)
        if within_ulps:
            np.testing.assert_allclose(a.double().numpy(), b.double().numpy(), rtol=32 * float(tg.finfo(a.dtype).eps))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize(("name", "overload"), OVERLOADS)
def test_every_overload_gives_torchs_tangents(one_thread, name, overload, case):
    _assert_same_tangents(name, overload, case, "all")


def _takes_other_tensors(name: str, overload: str) -> bool:
    schema = getattr(getattr(torch.ops.aten, name), overload)._schema
    return any("Tensor" in str(p.type) for p in schema.arguments[1:])


@pytest.mark.parametrize("duals", ("first", "others"))
@pytest.mark.parametrize(("name", "overload"), [o for o in OVERLOADS if _takes_other_tensors(*o)])
def test_tangents_of_some_inputs_as_torch(one_thread, name, overload, duals):
    _assert_same_tangents(name, overload, "float64 and half", duals)


# ---- in-place forms: lists that repeat a tensor, cross or view each other --------------------------------------------


def _repeated(lib, x, a, b, plain):
    lib._foreach_mul_([x, x], [a, b])
    return [x]


def _crossed(lib, x, a, b, plain):
    lib._foreach_div_([a, b], [b, a])
    return [a, b]


def _repeated_exp(lib, x, a, b, plain):
    lib._foreach_exp_([x, x])
    return [x]


def _repeated_sin(lib, x, a, b, plain):
    lib._foreach_sin_([x, x])
    return [x]


def _repeated_self_and_operand(lib, x, a, b, plain):
    lib._foreach_addcmul_([x, x], [a, b], [b, x], [0.5, 2.0])
    return [x]


def _repeated_lerp(lib, x, a, b, plain):
    lib._foreach_lerp_([x, x], [a, b], [b, a])
    return [x]


def _repeated_maximum(lib, x, a, b, plain):
    lib._foreach_maximum_([x, x], [a, b])
    return [x]


def _repeated_pow(lib, x, a, b, plain):
    lib._foreach_pow_([x, x], 2.0)
    return [x]


def _tensor_and_its_view(lib, x, a, b, plain):
    lib._foreach_mul_([x, x[:1]], [a, b[:1]])
    return [x]


def _self_as_operand(lib, x, a, b, plain):
    x.mul_(x)
    a.addcmul_(b, a, value=0.5)
    return [x, a]


def _plain_tensor_repeated(lib, x, a, b, plain):
    lib._foreach_add_([plain, plain], [a, b])


def _views_of_a_plain_base(lib, x, a, b, plain):
    lib._foreach_mul_([plain[:1], plain[1:]], [a[:1], b[:1]])


def _view_then_plain_base(lib, x, a, b, plain):
    lib._foreach_add_([plain[:1], plain], [a[:1], b])


def _tangent_of_the_number_side(lib, x, a, b, plain):
    lib._foreach_add_([plain], [a])
    return [plain]


INPLACE_PROGRAMS = [_repeated, _crossed, _repeated_exp, _repeated_sin, _repeated_self_and_operand, _repeated_lerp,
                    _repeated_maximum, _repeated_pow, _tensor_and_its_view, _self_as_operand, _plain_tensor_repeated,
                    _views_of_a_plain_base, _view_then_plain_base, _tangent_of_the_number_side]


def _inplace_outcome(lib, program):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(lib.tensor([0.5, 1.25]), lib.tensor([0.5, -0.25]))
        a = fw.make_dual(lib.tensor([3.0, 4.0]), lib.tensor([1.0, 2.0]))
        b = fw.make_dual(lib.tensor([1.5, -2.0]), lib.tensor([0.75, -1.0]))
        plain = lib.tensor([0.25, 0.75])
        try:
            written = program(lib, x, a, b, plain)
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            written, error = [plain], (type(exc).__name__, str(exc))
        else:
            error = None
        return error, [(t.detach().clone(), fw.unpack_dual(t).tangent) for t in written]


@pytest.mark.parametrize("program", INPLACE_PROGRAMS)
def test_inplace_tangents_follow_torchs_order(program):
    (our_error, ours), (their_error, theirs) = _inplace_outcome(tg, program), _inplace_outcome(torch, program)
    assert our_error == their_error
    for (value, tangent), (their_value, their_tangent) in zip(ours, theirs):
        np.testing.assert_allclose(value.numpy(), their_value.numpy(), rtol=1e-5)  # (exp, sin: MKL's, within ulps)
        assert (tangent is None) == (their_tangent is None)
        if tangent is not None:
            np.testing.assert_allclose(tangent.numpy(), their_tangent.numpy(), rtol=1e-5)
            if program not in (_repeated_exp, _repeated_sin):
                assert_same_bits(tangent, their_tangent)


def _refused_after_writing(lib):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([0.5, 0.25]))
        written = lib.tensor([3.0, 4.0])
        error = raised(lib, lambda _: lib._foreach_copy_([written], [x]))
        return error, written.tolist(), fw.unpack_dual(written).tangent


def test_inplace_form_without_formula_writes_then_refuses_as_torch():
    assert _refused_after_writing(tg) == _refused_after_writing(torch)


def _refused_before_the_kernel(lib):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([0.5, 0.25]))
        return [raised(lib, program) for program in (
            lambda L: L._foreach_mm([x.reshape(1, 2)], [x.reshape(1, 2)]),  # (the shapes' error comes after)
            lambda L: L._foreach_addcdiv([x.long()], [x], [x], L.tensor([2.0])),  # (integer division's too)
            lambda L: L._foreach_pow(2.0, [x, x.long()]))]


def test_refusals_come_before_the_kernel_as_torch():
    assert _refused_before_the_kernel(tg) == _refused_before_the_kernel(torch)


def _forward_over_reverse(lib):
    """A tangent that requires grad: the foreach formulas record a graph, differentiated back to the tangent."""
    fw = lib.autograd.forward_ad
    tangent = lib.tensor([0.5, -0.25, 2.0], dtype=lib.float64, requires_grad=True)
    with fw.dual_level():
        x = fw.make_dual(lib.tensor([0.5, 1.25, -2.0], dtype=lib.float64), tangent)
        outs = lib._foreach_mul(lib._foreach_sin([x, x * 2]), [x, x])
        total = sum(fw.unpack_dual(o).tangent.sum() for o in outs)
    return lib.autograd.grad(total, tangent)[0].tolist()


def test_forward_over_reverse_as_torch():
    np.testing.assert_allclose(_forward_over_reverse(tg), _forward_over_reverse(torch), rtol=1e-14)


# ---- the per-tensor operators the foreach forms run, with tangents on some inputs ---------------------------------------

PER_TENSOR = {
    "lerp, number weight": lambda L, a, b, w: L.lerp(a, b, 0.75),
    "lerp, small number weight": lambda L, a, b, w: L.lerp(a, b, -0.25),
    "lerp, tensor weight": lambda L, a, b, w: L.lerp(a, b, w),
    "lerp_, tensor weight": lambda L, a, b, w: a.clone().lerp_(b, w),
    "maximum": lambda L, a, b, w: L.maximum(a, b),
    "minimum": lambda L, a, b, w: L.minimum(a, b),
    "fmax": lambda L, a, b, w: L.fmax(a, b),
    "fmin": lambda L, a, b, w: L.fmin(a, b),
}


def _per_tensor_tangent(lib, program, dtype: str, duals: str):
    fw = lib.autograd.forward_ad
    rng = np.random.default_rng(3)
    with fw.dual_level():
        values = [lib.tensor(rng.uniform(-1.5, 1.5, (3, 4)).astype(dtype)) for _ in range(3)]
        values[1][0, :2] = values[0][0, :2]  # (ties)
        tangents = [lib.tensor(rng.uniform(-1, 1, (3, 4)).astype(dtype)) for _ in range(3)]
        inputs = [fw.make_dual(v, t) if flag == "1" else v for v, t, flag in zip(values, tangents, duals)]
        return fw.unpack_dual(program(lib, *inputs)).tangent


@pytest.mark.parametrize("duals", ("100", "010", "001", "111"))
@pytest.mark.parametrize("dtype", ("float32", "float16"))
@pytest.mark.parametrize("program", PER_TENSOR.values(), ids=PER_TENSOR)
def test_per_tensor_tangents_as_torch(program, dtype, duals):
    ours, theirs = _per_tensor_tangent(tg, program, dtype, duals), _per_tensor_tangent(torch, program, dtype, duals)
    assert (ours is None) == (theirs is None)
    if ours is not None:
        assert_same_bits(ours, theirs)
