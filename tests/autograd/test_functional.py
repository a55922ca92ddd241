"""``torch.autograd.functional``: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp``, ``hvp``.

Area K of the seed inventory names these APIs, but seed 004 holds no tests for them (upstream they
live in ``test/autograd/test_functional.py``, which is not a seed). The tests below follow that
file's test names and pin PyTorch 2.13's documented behaviour, checked against the oracle:

- argument validation (``TypeError`` for non-tensor inputs / outputs, ``v`` of the wrong length or
  size, ``v=None`` only for single-element cases) with PyTorch's wording;
- ``strict=True`` errors for outputs that do not require grad, outputs independent of an input,
  and (with ``create_graph=True``) Jacobians / Hessians independent of the input; with
  ``strict=False`` the mathematically expected zeros are returned instead;
- results are detached unless ``create_graph=True``, in which case they are differentiable
  (checked with ``gradcheck``), also when called under ``no_grad``;
- output structure: a Tensor for Tensor in/out, nested tuples otherwise;
- values agree with PyTorch and with each other (jacobian vs vjp/jvp, hessian vs vhp/hvp).

Only ``vectorize=False`` and the reverse-mode strategy are exercised (``vectorize=True`` and
``strategy="forward-mode"`` need ``vmap``); the errors those options raise before reaching vmap
are pinned.
"""

from __future__ import annotations

import importlib

import pytest
from _lib import assert_close, np, run_both, tg


class _Lazy:
    """Attribute access resolved at use time, so a missing feature fails only the tests using it."""

    def __init__(self, dotted):
        self._dotted = dotted

    def __getattr__(self, name):
        return getattr(importlib.import_module(f"{tg.__name__}.{self._dotted}"), name)


AF = _Lazy("autograd.functional")


def gradcheck(*args, **kwargs):
    return tg.autograd.gradcheck(*args, **kwargs)


def gradgradcheck(*args, **kwargs):
    return tg.autograd.gradgradcheck(*args, **kwargs)


_RNG = np.random.default_rng(1234)


def _arr(*shape):
    return _RNG.uniform(0.1, 1.0, shape)


def _t(lib, arr, requires_grad=False, dtype=None):
    dtype = lib.float64 if dtype is None else dtype
    return lib.tensor(np.asarray(arr).tolist(), dtype=dtype, requires_grad=requires_grad)


def _assert_same_struct(res, base):
    """res has the same Tensor/tuple structure and sizes as base."""
    if isinstance(base, tuple):
        assert isinstance(res, tuple) and len(res) == len(base)
        for r, b in zip(res, base):
            _assert_same_struct(r, b)
    else:
        assert isinstance(res, tg.Tensor)
        assert tuple(res.shape) == tuple(base.shape)


def _assert_interleaved_struct(res, base1, base2):
    """res[i][j] has size base1[i].size() + base2[j].size(), unpacking non-tuple levels."""
    if isinstance(base1, tuple):
        assert isinstance(res, tuple) and len(res) == len(base1)
        for r, b1 in zip(res, base1):
            _assert_interleaved_struct(r, b1, base2)
    elif isinstance(base2, tuple):
        assert isinstance(res, tuple) and len(res) == len(base2)
        for r, b2 in zip(res, base2):
            _assert_interleaved_struct(r, base1, b2)
    else:
        assert isinstance(res, tg.Tensor)
        assert tuple(res.shape) == tuple(base1.shape) + tuple(base2.shape)


def _flatten(res):
    if isinstance(res, (tuple, list)):
        return tuple(x for r in res for x in _flatten(r))
    return (res,)


def _all_zero(res):
    return all(float(t.detach().abs().sum()) == 0.0 for t in _flatten(res))


def _has_no_grad_fn(res):
    return all(t.grad_fn is None for t in _flatten(res))


def _has_grad_fn(res):
    return all(t.grad_fn is not None for t in _flatten(res))


def _narrow3(a):
    return 3 * a.narrow(0, 0, 3)


def _narrow3_with_str(a):
    return 3 * a.narrow(0, 0, 3), "bar"


def _detached_out(a):
    return a.detach()


def _disconnected_out(a):
    # Requires grad, but is not connected to the input.
    return a.long().double().requires_grad_().clone()


# ---------------------------------------------------------------------------------------------------
# vjp


def test_vjp_err_check():
    """vjp validates inputs, outputs and v, in PyTorch's words."""
    inp = _t(tg, _arr(4))
    v = tg.ones(3, dtype=tg.float64)
    with pytest.raises(TypeError, match="The inputs given to vjp must be either a Tensor"):
        AF.vjp(_narrow3, (inp, 2), v)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to vjp must"):
        AF.vjp(_narrow3_with_str, inp, v)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided function returns"):
        AF.vjp(_narrow3, inp)
    with pytest.raises(RuntimeError, match="The given v should contain a single Tensor."):
        AF.vjp(_narrow3, inp, (tg.ones_like(inp), tg.ones_like(inp)))
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be torch.Size\(\[3\]\) but got torch.Size\(\[2\]\)"):
        AF.vjp(_narrow3, inp, v[:2])
    with pytest.raises(TypeError, match="The v given to vjp must be either a Tensor or a tuple of Tensors"):
        AF.vjp(_narrow3, inp, (v, 2))
    _assert_same_struct(AF.vjp(_narrow3, inp, v)[1], inp)

    def two_outputs(a):
        return a * 2, a.sum()

    with pytest.raises(RuntimeError, match="v is a tuple of invalid length: should be 2 but got 1."):
        AF.vjp(two_outputs, inp, (tg.ones(4, dtype=tg.float64),))
    with pytest.raises(RuntimeError, match="Entry 1 in v has invalid size"):
        AF.vjp(two_outputs, inp, (tg.ones(4, dtype=tg.float64), tg.ones(2, dtype=tg.float64)))


def test_vjp_err_check_strict():
    """strict=True rejects outputs without grad or independent of the input; strict=False gives zeros."""
    inp = _t(tg, _arr(4))
    v = _t(tg, _arr(4))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        AF.vjp(_detached_out, inp, v, strict=True)
    res = AF.vjp(_detached_out, inp, v, strict=False)
    _assert_same_struct(res[1], inp)
    assert _all_zero(res[1])

    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 0"):
        AF.vjp(_disconnected_out, inp, v, strict=True)
    res = AF.vjp(_disconnected_out, inp, v, strict=False)
    _assert_same_struct(res[1], inp)
    assert _all_zero(res[1])

    # A linear function: its Jacobian does not depend on the input.
    inp.requires_grad_()
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function is independent of input 0."):
        AF.vjp(lambda a: a.clone(), inp, v, create_graph=True, strict=True)
    res = AF.vjp(lambda a: a.clone(), inp, v, create_graph=True, strict=False)
    _assert_same_struct(res[1], inp)
    assert tg.equal(res[1], v)


def test_vjp_no_grad():
    """Under no_grad results are detached, unless create_graph=True."""
    inputs = _t(tg, _arr(3, 3))
    v = tg.ones(3, dtype=tg.float64)
    with tg.no_grad():
        res = AF.vjp(lambda x: x.sum(dim=1), inputs, v)
    assert _has_no_grad_fn(res)
    assert not _all_zero(res[1])

    inputs.requires_grad_()
    v.requires_grad_()
    with tg.no_grad():
        res = AF.vjp(lambda x: x.sum(dim=1), inputs, v, create_graph=True)
    assert _has_grad_fn(res)
    assert not _all_zero(res[1])


def test_vjp_output():
    """vjp returns (outputs, vjp) detached, mirroring the tuple-ness of inputs and outputs."""
    xa, ya, ma = _arr(2), _arr(2), _arr(3, 3)

    def program(lib):
        F = lib.autograd.functional
        results = [F.vjp(lambda x: x.sum(dim=1), _t(lib, ma), lib.ones(3, dtype=lib.float64))]
        inputs = (_t(lib, xa), _t(lib, ya))
        results.append(F.vjp(lambda x, y: 2 * x + 3 * y, inputs, lib.ones(2, dtype=lib.float64)))
        v = (_t(lib, [1.0, 0.0]), _t(lib, [1.0, 0.0]))
        results.append(F.vjp(lambda x, y: (2 * x + 3 * y, x * y), inputs, v))
        return results

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    (out0, vjp0), (out1, vjp1), (out2, vjp2) = ours
    assert isinstance(out0, tg.Tensor) and isinstance(vjp0, tg.Tensor)
    assert isinstance(out1, tg.Tensor) and isinstance(vjp1, tuple) and len(vjp1) == 2
    assert isinstance(out2, tuple) and isinstance(vjp2, tuple)
    assert _has_no_grad_fn(ours)


def test_vjp_scalar():
    """Scalar outputs accept a 0-d v or v=None; a 0-d input gets a 0-d vjp."""
    inputs = _t(tg, _arr(3, 3))
    v = tg.ones([], dtype=tg.float64)
    for res in (AF.vjp(lambda x: x.sum(), inputs, v), AF.vjp(lambda x: x.sum(), inputs)):
        _assert_same_struct(res[0], v)
        _assert_same_struct(res[1], inputs)
        assert tg.equal(res[1], tg.ones_like(inputs))

    scalar = _t(tg, 0.5)
    v = tg.ones(4, dtype=tg.float64)
    res = AF.vjp(lambda x: x.unsqueeze(0).repeat(4), scalar, v)
    _assert_same_struct(res[0], v)
    _assert_same_struct(res[1], scalar)
    assert float(res[1]) == 4.0


def test_vjp_create_graph():
    """With create_graph=True the vjp is differentiable w.r.t. inputs and v."""
    inputs = _t(tg, _arr(2, 2), requires_grad=True)
    v = tg.ones(2, dtype=tg.float64, requires_grad=True)
    res = AF.vjp(lambda x: x.sum(dim=1), inputs, v, create_graph=True)
    _assert_same_struct(res[1], inputs)
    assert _has_grad_fn(res)

    def adder(x, y):
        return 2 * x + 3 * y, x * y

    args = (
        _t(tg, _arr(2), requires_grad=True),
        _t(tg, _arr(2), requires_grad=True),
        _t(tg, [1.0, 0.0], requires_grad=True),
        _t(tg, [1.0, 0.0], requires_grad=True),
    )
    assert gradcheck(lambda *a: AF.vjp(adder, a[:2], a[2:], create_graph=True)[1], args)
    assert gradgradcheck(lambda *a: AF.vjp(adder, a[:2], a[2:], create_graph=True)[1], args)

    def composed(*a):
        x, y = a[0].cos(), a[1]
        val, grad = AF.vjp(adder, (x, y), a[2:], create_graph=True)
        return val[0].exp() + val[1].exp() + grad[0].exp() + grad[1].exp() + x.exp() + y.exp()

    assert gradcheck(composed, args)


# ---------------------------------------------------------------------------------------------------
# jvp (computed with the double-backward trick)


def test_jvp_err_check():
    """jvp validates inputs, outputs and v, in PyTorch's words."""
    inp = _t(tg, _arr(4))
    v = _t(tg, _arr(4))
    with pytest.raises(TypeError, match="The inputs given to jvp must be either a Tensor"):
        AF.jvp(_narrow3, (inp, 2), v)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to jvp must"):
        AF.jvp(_narrow3_with_str, inp, v)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the input to the user-provided function"):
        AF.jvp(_narrow3, inp)
    with pytest.raises(RuntimeError, match="The given v should contain a single Tensor."):
        AF.jvp(_narrow3, inp, (v, v))
    with pytest.raises(RuntimeError, match="v has invalid size: should be torch.Size"):
        AF.jvp(_narrow3, inp, v[:2])
    _assert_same_struct(AF.jvp(_narrow3, inp, v)[1], _narrow3(inp))


def test_jvp_err_check_strict():
    """strict=True errors for jvp mirror vjp's; strict=False returns zeros shaped like the output."""
    inp = _t(tg, _arr(4))
    v = _t(tg, _arr(4))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        AF.jvp(_detached_out, inp, v, strict=True)
    res = AF.jvp(_detached_out, inp, v, strict=False)
    _assert_same_struct(res[1], res[0])
    assert _all_zero(res[1])

    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 0"):
        AF.jvp(_disconnected_out, inp, v, strict=True)
    res = AF.jvp(_disconnected_out, inp, v, strict=False)
    _assert_same_struct(res[1], res[0])
    assert _all_zero(res[1])

    inp.requires_grad_()
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function is independent of input 0."):
        AF.jvp(lambda a: a.clone(), inp, v, create_graph=True, strict=True)
    res = AF.jvp(lambda a: a.clone(), inp, v, create_graph=True, strict=False)
    _assert_same_struct(res[1], inp)
    assert tg.equal(res[1], v)


def test_jvp_no_grad():
    """Under no_grad results are detached, unless create_graph=True."""
    inputs = _t(tg, _arr(3, 3))
    v = tg.ones(3, 3, dtype=tg.float64)
    with tg.no_grad():
        res = AF.jvp(lambda x: x.sum(dim=1), inputs, v)
    assert _has_no_grad_fn(res)
    assert not _all_zero(res[1])

    inputs.requires_grad_()
    v.requires_grad_()
    with tg.no_grad():
        res = AF.jvp(lambda x: x.sum(dim=1), inputs, v, create_graph=True)
    assert _has_grad_fn(res)
    assert not _all_zero(res[1])


def test_jvp_output():
    """jvp returns (outputs, jvp) detached; jvp is shaped like the outputs."""
    xa, ya, ma = _arr(2), _arr(2), _arr(3, 3)

    def program(lib):
        F = lib.autograd.functional
        results = [F.jvp(lambda x: x.sum(dim=1), _t(lib, ma), lib.ones(3, 3, dtype=lib.float64))]
        inputs = (_t(lib, xa), _t(lib, ya))
        v = (lib.ones(2, dtype=lib.float64), lib.ones(2, dtype=lib.float64))
        results.append(F.jvp(lambda x, y: 2 * x + 3 * y, inputs, v))
        v = (_t(lib, [1.0, 0.0]), _t(lib, [1.0, 0.0]))
        results.append(F.jvp(lambda x, y: (2 * x + 3 * y, x * y), inputs, v))
        return results

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    (out1, jvp1), (out2, jvp2) = ours[1], ours[2]
    assert isinstance(out1, tg.Tensor) and isinstance(jvp1, tg.Tensor)
    assert isinstance(out2, tuple) and isinstance(jvp2, tuple)
    _assert_same_struct(jvp2, out2)
    assert _has_no_grad_fn(ours)


def test_jvp_scalar():
    """A scalar output gets a 0-d jvp; a 0-d input accepts v=None."""
    inputs = _t(tg, _arr(3, 3))
    res = AF.jvp(lambda x: x.sum(), inputs, tg.ones(3, 3, dtype=tg.float64))
    _assert_same_struct(res[0], tg.zeros([]))
    _assert_same_struct(res[1], res[0])

    scalar = _t(tg, 0.5)
    for res in (
        AF.jvp(lambda x: x.unsqueeze(0).repeat(4), scalar, tg.ones([], dtype=tg.float64)),
        AF.jvp(lambda x: x.unsqueeze(0).repeat(4), scalar),
    ):
        _assert_same_struct(res[0], tg.zeros(4))
        _assert_same_struct(res[1], res[0])
        assert res[1].tolist() == [1.0, 1.0, 1.0, 1.0]


def test_jvp_create_graph():
    """With create_graph=True the jvp is differentiable w.r.t. inputs and v."""
    inputs = _t(tg, _arr(2, 2), requires_grad=True)
    v = tg.ones(2, 2, dtype=tg.float64, requires_grad=True)
    res = AF.jvp(lambda x: x.sum(dim=1), inputs, v, create_graph=True)
    _assert_same_struct(res[1], res[0])
    assert _has_grad_fn(res)

    def adder(x, y):
        return 2 * x + 3 * y, x * y

    args = (
        _t(tg, _arr(2), requires_grad=True),
        _t(tg, _arr(2), requires_grad=True),
        _t(tg, [1.0, 0.0], requires_grad=True),
        _t(tg, [1.0, 0.0], requires_grad=True),
    )
    assert gradcheck(lambda *a: AF.jvp(adder, a[:2], a[2:], create_graph=True)[1], args)
    assert gradgradcheck(lambda *a: AF.jvp(adder, a[:2], a[2:], create_graph=True)[1], args)


# ---------------------------------------------------------------------------------------------------
# jacobian


def test_jacobian_err_check():
    """jacobian validates inputs and outputs; result[i][j] is sized out_i.shape + in_j.shape."""
    inp = _t(tg, _arr(4))
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor"):
        AF.jacobian(_narrow3, (inp, 2))
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to jacobian must"):
        AF.jacobian(_narrow3_with_str, inp)
    _assert_interleaved_struct(AF.jacobian(_narrow3, inp), _narrow3(inp), inp)

    def two_in_two_out(a, b):
        return b, 3 * a.narrow(0, 0, 3)

    inp = (_t(tg, _arr(4)), _t(tg, _arr(5)))
    _assert_interleaved_struct(AF.jacobian(two_in_two_out, inp), two_in_two_out(*inp), inp)


def test_jacobian_err_check_strict():
    """strict=True errors for jacobian; strict=False gives zeros; linear + create_graph is rejected."""
    inp = _t(tg, _arr(4))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        AF.jacobian(_detached_out, inp, strict=True)
    res = AF.jacobian(_detached_out, inp, strict=False)
    _assert_interleaved_struct(res, inp, inp)
    assert _all_zero(res)

    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 0."):
        AF.jacobian(_disconnected_out, inp, strict=True)
    res = AF.jacobian(_disconnected_out, inp, strict=False)
    assert _all_zero(res)

    inp.requires_grad_()
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function is independent of input 0."):
        AF.jacobian(lambda a: a.clone(), inp, create_graph=True, strict=True)
    res = AF.jacobian(lambda a: a.clone(), inp, create_graph=True, strict=False)
    _assert_interleaved_struct(res, inp, inp)
    assert tg.equal(res, tg.eye(4, dtype=tg.float64))


def test_jacobian_err_check_strict_vectorize():
    """strict=True and vectorize=True cannot be combined."""
    with pytest.raises(RuntimeError, match="not supported together"):
        AF.jacobian(lambda x: x, _t(tg, _arr(4)), strict=True, vectorize=True)


def test_jacobian_strategy_checks():
    """An unknown strategy is an AssertionError; forward-mode needs vectorize=True and no create_graph."""
    inp = _t(tg, _arr(3))
    with pytest.raises(AssertionError, match='Expected strategy to be either "forward-mode" or "reverse-mode".'):
        AF.jacobian(lambda x: x * 2, inp, strategy="sideways")
    with pytest.raises(NotImplementedError, match="`create_graph=True` and `strategy=\"forward-mode\"` are not"):
        AF.jacobian(lambda x: x * 2, inp, create_graph=True, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        AF.jacobian(lambda x: x * 2, inp, strategy="forward-mode")
    with pytest.raises(RuntimeError, match="`strict=True` and `strategy=\"forward-mode\"` are not supported together"):
        AF.jacobian(lambda x: x * 2, inp, strict=True, strategy="forward-mode")


def test_jacobian_no_grad():
    """Under no_grad the Jacobian is detached, unless create_graph=True."""
    inputs = _t(tg, _arr(3, 3))
    with tg.no_grad():
        res = AF.jacobian(lambda x: x.exp().sum(dim=1), inputs)
    assert res.grad_fn is None
    assert not _all_zero(res)
    with tg.no_grad():
        res = AF.jacobian(lambda x: x.exp().sum(dim=1), inputs, create_graph=True)
    assert res.grad_fn is not None
    assert not _all_zero(res)


def test_jacobian_output():
    """Jacobian values and structure match PyTorch for single and multiple inputs."""
    ma, xa, ya = _arr(3, 3), _arr(2, 3), _arr(2, 3)

    def program(lib):
        F = lib.autograd.functional
        return [
            F.jacobian(lambda x: x.exp().sum(dim=1), _t(lib, ma)),
            F.jacobian(lambda x: x.clone(), _t(lib, ma[0])),
            F.jacobian(lambda x, y: (x + y.exp()).sum(dim=1), (_t(lib, xa), _t(lib, ya))),
            F.jacobian(lambda x, y: (x * y, x.sum()), (_t(lib, xa), _t(lib, ya))),
        ]

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    inputs = _t(tg, ma)
    _assert_interleaved_struct(ours[0], inputs.sum(dim=1), inputs)
    assert tg.equal(ours[1], tg.eye(3, dtype=tg.float64))
    pair = (_t(tg, xa), _t(tg, ya))
    _assert_interleaved_struct(ours[2], pair[0].sum(dim=1), pair)
    _assert_interleaved_struct(ours[3], (pair[0], pair[0].sum()), pair)
    assert _has_no_grad_fn(ours)


def test_jacobian_scalar():
    """A scalar output gives a Jacobian shaped like the input; a 0-d input like the output."""
    inputs = _t(tg, _arr(3, 3))
    _assert_same_struct(AF.jacobian(lambda x: x.sum(), inputs), inputs)
    res = AF.jacobian(lambda x: x.unsqueeze(0).repeat(4), _t(tg, 0.5))
    _assert_same_struct(res, tg.zeros(4))
    assert res.tolist() == [1.0, 1.0, 1.0, 1.0]


def test_jacobian_create_graph():
    """With create_graph=True the Jacobian is differentiable (gradcheck / gradgradcheck)."""

    def exp_reducer(x):
        return x.exp().sum(dim=1)

    inputs = _t(tg, _arr(2, 2), requires_grad=True)
    res = AF.jacobian(exp_reducer, inputs, create_graph=True)
    _assert_interleaved_struct(res, exp_reducer(inputs), inputs)
    assert res.grad_fn is not None
    assert gradcheck(lambda inp: AF.jacobian(exp_reducer, inp, create_graph=True), inputs)
    assert gradgradcheck(lambda inp: AF.jacobian(exp_reducer, inp, create_graph=True), inputs)

    def add_exp_reducer(x, y):
        return (x + y).exp().sum(dim=1)

    pair = (_t(tg, _arr(2, 2), requires_grad=True), _t(tg, _arr(2, 2), requires_grad=True))
    res = AF.jacobian(add_exp_reducer, pair, create_graph=True)
    assert _has_grad_fn(res)
    assert gradcheck(lambda *inp: AF.jacobian(add_exp_reducer, inp, create_graph=True), pair)


def test_jacobian_match_vjp_jvp():
    """jvp = J v and vjp = v^T J for the Jacobian J."""
    xa, va = _arr(4), _arr(4)

    def foo(x):
        return x**3 + x.sum()

    inputs, v = _t(tg, xa), _t(tg, va)
    jac = AF.jacobian(foo, inputs)
    jvp = AF.jvp(foo, inputs, v)[1]
    vjp = AF.vjp(foo, inputs, v)[1]
    assert_close(jvp, tg.mm(jac, v.unsqueeze(1)).squeeze(1))
    assert_close(vjp, tg.mm(v.unsqueeze(0), jac).squeeze(0))

    def program(lib):
        x, w = _t(lib, xa), _t(lib, va)
        F = lib.autograd.functional
        return F.jacobian(foo, x), F.jvp(foo, x, w), F.vjp(foo, x, w)

    ours, theirs = run_both(program)
    assert_close(ours, theirs)


# ---------------------------------------------------------------------------------------------------
# hessian


def _exp_narrow_sum(a):
    return 3 * a.narrow(0, 0, 3).exp().sum()


def test_hessian_err_check():
    """hessian needs a single-Tensor, single-element output; result sized in_i + in_j."""
    inp = _t(tg, _arr(4))
    with pytest.raises(TypeError, match="The inputs given to hessian must be either a Tensor"):
        AF.hessian(_exp_narrow_sum, (inp, 2))
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to hessian must"):
        AF.hessian(_narrow3_with_str, inp)
    with pytest.raises(
        RuntimeError, match="The Tensor returned by the function given to hessian should contain a single element"
    ):
        AF.hessian(_narrow3, inp)
    with pytest.raises(RuntimeError, match="The function given to hessian should return a single Tensor"):
        AF.hessian(lambda a: (_narrow3(a), _narrow3(a)), inp)
    _assert_interleaved_struct(AF.hessian(_exp_narrow_sum, inp), inp, inp)

    def two_inputs(a, b):
        return (3 * b.narrow(0, 0, 3) * a.narrow(0, 0, 3)).sum()

    pair = (_t(tg, _arr(4)), _t(tg, _arr(5)))
    _assert_interleaved_struct(AF.hessian(two_inputs, pair), pair, pair)


def test_hessian_err_check_strict():
    """strict=True rejects outputs without grad, and Jacobians independent of the input (linear f)."""
    inp = _t(tg, _arr(4))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        AF.hessian(lambda a: a.detach().sum(), inp, strict=True)
    res = AF.hessian(lambda a: a.detach().sum(), inp, strict=False)
    _assert_interleaved_struct(res, inp, inp)
    assert _all_zero(res)

    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with respect to input 0"):
        AF.hessian(lambda a: _disconnected_out(a).sum(), inp, strict=True)
    assert _all_zero(AF.hessian(lambda a: _disconnected_out(a).sum(), inp, strict=False))

    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with respect to input 0 is"):
        AF.hessian(lambda a: (3 * a).sum(), inp, strict=True)
    res = AF.hessian(lambda a: (3 * a).sum(), inp, strict=False)
    _assert_interleaved_struct(res, inp, inp)
    assert _all_zero(res)


def test_hessian_err_check_strict_vectorize():
    """strict=True and vectorize=True cannot be combined for hessian either."""
    with pytest.raises(RuntimeError, match="not supported together"):
        AF.hessian(lambda x: (x**3).sum(), _t(tg, _arr(4)), strict=True, vectorize=True)


def test_hessian_no_grad():
    """Under no_grad the Hessian is detached, unless create_graph=True."""
    inputs = _t(tg, _arr(2, 2))
    with tg.no_grad():
        res = AF.hessian(lambda x: x.pow(3).sum(), inputs)
    assert res.grad_fn is None
    assert not _all_zero(res)
    with tg.no_grad():
        res = AF.hessian(lambda x: x.pow(3).sum(), inputs, create_graph=True)
    assert res.grad_fn is not None


def test_hessian_output():
    """Hessian values and nesting match PyTorch for one and two inputs."""
    xa, ya = _arr(2, 2), _arr(2, 2)

    def program(lib):
        F = lib.autograd.functional
        return [
            F.hessian(lambda x: x.pow(3).sum(), _t(lib, xa)),
            F.hessian(lambda x, y: (x + y).pow(3).sum(), (_t(lib, xa), _t(lib, ya))),
        ]

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    x = _t(tg, xa)
    _assert_interleaved_struct(ours[0], x, x)
    _assert_interleaved_struct(ours[1], (x, x), (x, x))
    assert _has_no_grad_fn(ours)


def test_hessian_scalar():
    """A 0-d input gives a 0-d Hessian; a (1,1,1)-shaped single-element output is accepted."""
    inputs = _t(tg, _arr(3, 3))
    _assert_interleaved_struct(AF.hessian(lambda x: x.sum(), inputs), inputs, inputs)
    scalar = _t(tg, 0.5)
    _assert_same_struct(AF.hessian(lambda x: x.sum(), scalar), scalar)
    _assert_interleaved_struct(AF.hessian(lambda x: x.sum().view(1, 1, 1), inputs), inputs, inputs)


def test_hessian_create_graph():
    """With create_graph=True the Hessian is differentiable."""

    def pow_reducer(x):
        return x.pow(3).sum()

    inputs = _t(tg, _arr(2, 2), requires_grad=True)
    res = AF.hessian(pow_reducer, inputs, create_graph=True)
    _assert_interleaved_struct(res, inputs, inputs)
    assert res.grad_fn is not None
    assert gradcheck(lambda inp: AF.hessian(pow_reducer, inp, create_graph=True), inputs)

    pair = (_t(tg, _arr(2), requires_grad=True), _t(tg, _arr(2), requires_grad=True))
    res = AF.hessian(lambda x, y: (x + y).pow(3).sum(), pair, create_graph=True)
    assert _has_grad_fn(res)
    assert gradcheck(lambda *inp: _flatten(AF.hessian(lambda x, y: (x + y).pow(3).sum(), inp, create_graph=True)), pair)


# ---------------------------------------------------------------------------------------------------
# vhp / hvp


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_hvp_err_check(api):
    """vhp/hvp validate inputs, outputs (single element) and v (size, type)."""
    fn = getattr(AF, api)
    inp = _t(tg, _arr(4))
    v = _t(tg, _arr(4))
    with pytest.raises(TypeError, match=f"The inputs given to {api} must be either a Tensor"):
        fn(_exp_narrow_sum, (inp, 2), v)
    with pytest.raises(TypeError, match=f"The outputs of the user-provided function given to {api} must"):
        fn(_narrow3_with_str, inp, v)
    with pytest.raises(
        RuntimeError, match=f"The Tensor returned by the function given to {api} should contain a single element"
    ):
        fn(_narrow3, inp, v)
    with pytest.raises(RuntimeError, match="v has invalid size:"):
        fn(_exp_narrow_sum, inp, _t(tg, _arr(5)))
    with pytest.raises(TypeError, match=f"The v given to {api} must be either a Tensor or a tuple of Tensors"):
        fn(_exp_narrow_sum, inp, (v, 2))
    with pytest.raises(RuntimeError, match="The vector v can only be None if the input to the user-provided function"):
        fn(_exp_narrow_sum, inp)
    _assert_same_struct(fn(_exp_narrow_sum, inp, v)[1], inp)

    def two_inputs(a, b):
        return (3 * b.narrow(0, 0, 3) * a.narrow(0, 0, 3)).sum()

    pair = (_t(tg, _arr(4)), _t(tg, _arr(5)))
    vs = (_t(tg, _arr(4)), _t(tg, _arr(5)))
    _assert_same_struct(fn(two_inputs, pair, vs)[1], pair)


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_hvp_err_check_strict(api):
    """strict=True errors for vhp/hvp; strict=False returns zeros."""
    fn = getattr(AF, api)
    inp = _t(tg, _arr(4))
    v = _t(tg, _arr(4))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not require gradients."):
        fn(lambda a: a.detach().sum(), inp, v, strict=True)
    res = fn(lambda a: a.detach().sum(), inp, v, strict=False)
    _assert_same_struct(res[1], inp)
    assert _all_zero(res[1])

    with pytest.raises(RuntimeError, match="The output of the user-provided function is independent of input 0"):
        fn(lambda a: _disconnected_out(a).sum(), inp, v, strict=True)
    assert _all_zero(fn(lambda a: _disconnected_out(a).sum(), inp, v, strict=False)[1])

    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with respect to input 0 is"):
        fn(lambda a: (3 * a).sum(), inp, v, strict=True)
    res = fn(lambda a: (3 * a).sum(), inp, v, strict=False)
    _assert_same_struct(res[1], inp)
    assert _all_zero(res[1])


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_hvp_no_grad(api):
    """Under no_grad vhp/hvp results are detached, unless create_graph=True."""
    fn = getattr(AF, api)
    inputs = _t(tg, _arr(3, 3))
    v = tg.ones(3, 3, dtype=tg.float64)
    with tg.no_grad():
        res = fn(lambda x: x.exp().sum(), inputs, v)
    assert _has_no_grad_fn(res)
    assert not _all_zero(res[1])
    with tg.no_grad():
        res = fn(lambda x: x.exp().sum(), inputs, v, create_graph=True)
    assert _has_grad_fn(res)
    assert not _all_zero(res[1])


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_hvp_output(api):
    """vhp/hvp values match PyTorch for one and two inputs; results are detached."""
    ma, aa, ba = _arr(4, 3), _arr(3), _arr(4)

    def program(lib):
        fn = getattr(lib.autograd.functional, api)
        one = fn(_exp_narrow_sum, _t(lib, ma), lib.ones(4, 3, dtype=lib.float64))
        two = fn(
            lambda a, b: (a + 3 * b.narrow(0, 0, 3)).exp().sum(),
            (_t(lib, aa), _t(lib, ba)),
            (lib.ones(3, dtype=lib.float64), lib.ones(4, dtype=lib.float64)),
        )
        return one, two

    ours, theirs = run_both(program)
    assert_close(ours, theirs)
    _assert_same_struct(ours[1][1], (_t(tg, aa), _t(tg, ba)))
    assert _has_no_grad_fn(ours)


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_hvp_scalar(api):
    """0-d inputs accept v=None; a (1,1,1)-shaped single-element output is accepted."""
    fn = getattr(AF, api)
    inputs = _t(tg, _arr(3, 3))
    _assert_same_struct(fn(lambda x: x.exp().sum(), inputs, tg.ones(3, 3, dtype=tg.float64))[1], inputs)
    scalar = _t(tg, 0.5)
    _assert_same_struct(fn(lambda x: x.exp().sum(), scalar, _t(tg, 0.3))[1], scalar)
    _assert_same_struct(fn(lambda x: x.exp().sum(), scalar)[1], scalar)
    _assert_same_struct(fn(lambda x: x.exp().sum().view(1, 1, 1), inputs, _t(tg, _arr(3, 3)))[1], inputs)


@pytest.mark.parametrize("api", ["vhp", "hvp"])
def test_vhp_hvp_create_graph(api):
    """With create_graph=True vhp/hvp are differentiable w.r.t. inputs and v."""
    fn = getattr(AF, api)
    inputs = _t(tg, _arr(4, 2), requires_grad=True)
    v = tg.ones(4, 2, dtype=tg.float64, requires_grad=True)
    res = fn(_exp_narrow_sum, inputs, v, create_graph=True)
    _assert_same_struct(res[1], inputs)
    assert _has_grad_fn(res)
    assert gradcheck(lambda inp, w: fn(_exp_narrow_sum, inp, w, create_graph=True), (inputs, v))

    def bar(a, b):
        return (a + 3 * b.narrow(0, 0, 3)).exp().sum()

    args = (
        _t(tg, _arr(3), requires_grad=True),
        _t(tg, _arr(4), requires_grad=True),
        tg.ones(3, dtype=tg.float64, requires_grad=True),
        tg.ones(4, dtype=tg.float64, requires_grad=True),
    )
    out, val = fn(bar, args[:2], args[2:], create_graph=True)
    assert out.grad_fn is not None and _has_grad_fn(val)
    assert gradcheck(lambda *a: fn(bar, a[:2], a[2:], create_graph=True)[1], args)


def test_hessian_match_vhp_hvp():
    """hvp = H v and vhp = v^T H for the Hessian H (symmetric here, so they agree)."""
    xa, va = _arr(4), _arr(4)
    inputs, v = _t(tg, xa), _t(tg, va)
    hes = AF.hessian(_exp_narrow_sum, inputs)
    hvp = AF.hvp(_exp_narrow_sum, inputs, v)[1]
    vhp = AF.vhp(_exp_narrow_sum, inputs, v)[1]
    assert_close(hvp, tg.mm(hes, v.unsqueeze(1)).squeeze(1))
    assert_close(vhp, tg.mm(v.unsqueeze(0), hes).squeeze(0))

    def program(lib):
        F = lib.autograd.functional
        x, w = _t(lib, xa), _t(lib, va)
        return F.hessian(_exp_narrow_sum, x), F.hvp(_exp_narrow_sum, x, w), F.vhp(_exp_narrow_sum, x, w)

    ours, theirs = run_both(program)
    assert_close(ours, theirs)


def test_functional_inputs_are_not_modified():
    """The user's input tensors keep their requires_grad and get no .grad from these calls."""
    x = _t(tg, _arr(3))
    y = _t(tg, _arr(3), requires_grad=True)
    AF.jacobian(lambda a: a.exp(), x)
    AF.vjp(lambda a: a.exp().sum(), y)
    AF.hessian(lambda a: a.pow(3).sum(), y)
    assert x.requires_grad is False
    assert y.requires_grad is True
    assert x.grad is None and y.grad is None
