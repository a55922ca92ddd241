"""``tracegrad.special`` against ``torch.special``: the namespace, the aliases' graph nodes, and the functions
of its own across their whole range (tails, poles, infinities), values, gradients and forward-AD tangents.

Differentiability, non-contiguous inputs and out= are covered by the operator database (``tests/opinfo``);
this file checks the numerics that its smooth samples do not reach.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import tg, torch

# torch.special entries tracegrad leaves out (none at present)
LEFT_OUT: set[str] = set()

WIDE = [-700.0, -40.0, -10.0, -3.0, -1.0, -0.5, -0.0, 0.0, 1e-10, 0.3, 1.0, 2.5, 5.0, 10.0, 26.0, 40.0, 100.0,
        700.0, float("inf"), -float("inf"), float("nan")]
PROBABILITIES = [0.0, 1e-300, 1e-20, 1e-5, 0.01, 0.3, 0.5, 0.7, 0.99, 1 - 1e-10, 1.0, 1.5, -0.1, float("nan")]
UNARY = ["entr", "erfcx", "i0", "i0e", "i1", "i1e", "log_ndtr", "ndtr", "ndtri", "expit", "gammaln", "psi",
         "digamma", "sinc", "logit", "erf", "erfc", "erfinv", "exp2", "expm1", "log1p", "round"]


def test_namespace_has_torchs_functions():
    theirs = {n for n in dir(torch.special) if not n.startswith("_") and callable(getattr(torch.special, n))}
    theirs -= {"Tensor"} | LEFT_OUT
    assert theirs <= set(dir(tg.special)), sorted(theirs - set(dir(tg.special)))


def _points(name: str) -> np.ndarray:
    return np.array(PROBABILITIES if name in ("ndtri", "erfinv", "logit") else WIDE)


def _evaluate(lib, name: str, dtype: str, mode: str) -> np.ndarray:
    fn, values = getattr(lib.special, name), _points(name)
    dt = getattr(lib, dtype)
    if mode == "value":
        return fn(lib.tensor(values, dtype=dt)).double().numpy()
    if mode == "gradient":
        x = lib.tensor(values, dtype=dt, requires_grad=True)
        return lib.autograd.grad(fn(x).sum(), x)[0].double().numpy()
    fa = lib.autograd.forward_ad
    with fa.dual_level():
        dual = fa.make_dual(lib.tensor(values, dtype=dt), lib.ones(len(values), dtype=dt))
        return fa.unpack_dual(fn(dual)).tangent.double().numpy()


@pytest.mark.parametrize("mode", ["value", "gradient", "tangent"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_functions_over_their_whole_range(name, mode):
    ours, theirs = _evaluate(tg, name, "float64", mode), _evaluate(torch, name, "float64", mode)
    with np.errstate(invalid="ignore"):
        close = np.isclose(ours, theirs, rtol=1e-9, atol=1e-300, equal_nan=True)
    points = _points(name)
    assert close.all(), list(zip(points[~close], ours[~close], theirs[~close]))


@pytest.mark.parametrize("name", UNARY)
def test_unary_values_in_float32(name):
    ours, theirs = _evaluate(tg, name, "float32", "value"), _evaluate(torch, name, "float32", "value")
    close = np.isclose(ours, theirs, rtol=2e-6, atol=1e-37, equal_nan=True)
    assert close.all(), list(zip(_points(name)[~close], ours[~close], theirs[~close]))


def test_aliases_record_the_main_operators_nodes():
    for name, node in [("expit", "SigmoidBackward0"), ("gammaln", "LgammaBackward0"), ("psi", "DigammaBackward0"),
                       ("erf", "ErfBackward0"), ("log1p", "Log1PBackward0"), ("ndtr", "MulBackward1"),
                       ("i0", "I0Backward0"), ("i0e", "SpecialI0EBackward0"), ("entr", "SpecialEntrBackward0")]:
        for lib in (tg, torch):
            x = lib.tensor([0.3, 0.7], requires_grad=True)
            assert getattr(lib.special, name)(x).grad_fn.name() == node, (lib.__name__, name)


def test_softmax_family_takes_dim_and_dtype():
    for lib in (tg, torch):
        x = lib.tensor([[1.0, 2.0, 3.0], [0.0, -1.0, 5.0]], requires_grad=True)
        s = lib.special.softmax(x, 1, dtype=lib.float64)
        ls = lib.special.log_softmax(x, 0)
        lse = lib.special.logsumexp(x, 1)
        if lib is tg:
            ours = (s.detach().numpy(), ls.detach().numpy(), lse.detach().numpy(), s.dtype)
        else:
            np.testing.assert_allclose(ours[0], s.detach().numpy(), rtol=1e-12)
            np.testing.assert_allclose(ours[1], ls.detach().numpy(), rtol=1e-6)
            np.testing.assert_allclose(ours[2], lse.detach().numpy(), rtol=1e-6)
            assert str(ours[3]) == str(s.dtype).replace("torch.", "tracegrad.") or ours[3] == tg.float64


def _pair_outcome(lib, fn):
    s = lib.tensor([2.0, 3.5, 1.0, 0.5, 4.0, 2.0, 2.0, 3.0, 10.0, 1.5, 2.0, 2.0], dtype=lib.float64)
    q = lib.tensor([1.0, 0.3, 2.0, 2.0, -2.5, -3.0, 0.0, -2.0, 5.0, 100.0, float("inf"), -float("inf")],
                   dtype=lib.float64, requires_grad=True)
    out = fn(lib, s, q)
    grad = lib.autograd.grad(out.sum(), q, allow_unused=True)[0]
    return out.detach().numpy(), (None if grad is None else grad.numpy()), out.grad_fn.name()


@pytest.mark.parametrize("case", ["zeta", "zeta_number_s", "zeta_number_q", "xlog1py", "xlog1py_number",
                                  "gammainc", "gammaincc"])
def test_two_argument_functions_as_in_torch(case):
    fn = {
        "zeta": lambda L, s, q: L.special.zeta(s, q),
        "zeta_number_s": lambda L, s, q: L.special.zeta(2.0, q),
        "zeta_number_q": lambda L, s, q: L.special.zeta(s, q.detach()) + 0 * q,
        "xlog1py": lambda L, s, q: L.special.xlog1py(q, s - 3),
        "xlog1py_number": lambda L, s, q: L.special.xlog1py(q, 0.5),
        "gammainc": lambda L, s, q: L.special.gammainc(s, q.abs()),
        "gammaincc": lambda L, s, q: L.special.gammaincc(s, q.abs()),
    }[case]
    ours, theirs = _pair_outcome(tg, fn), _pair_outcome(torch, fn)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-10, equal_nan=True)
    if theirs[1] is not None:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-9, equal_nan=True)
    if case.startswith("zeta") or case.startswith("xlog1py"):
        assert ours[2] == theirs[2]


def test_zeta_has_no_derivative_in_its_first_argument():
    for lib in (tg, torch):
        s = lib.tensor([2.0, 3.0], requires_grad=True)
        for q in (lib.tensor([1.0, 2.0]), 2.0):
            with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
                lib.special.zeta(s, q).sum().backward()


def test_multigammaln_as_in_torch():
    results = []
    for lib in (tg, torch):
        x = lib.tensor([[2.0, 3.0], [4.0, 5.5]], dtype=lib.float64, requires_grad=True)
        m = lib.special.multigammaln(x, 3)
        results.append((m.detach().numpy(), lib.autograd.grad(m.sum(), x)[0].numpy(), m.grad_fn.name(),
                        lib.mvlgamma(lib.tensor([0.5, 1.0, -1.0]), 3).numpy()))
        with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
            lib.special.multigammaln(x, 0)
    for ours, theirs in zip(*results):
        if isinstance(ours, str):
            assert ours == theirs
        else:
            np.testing.assert_allclose(ours, theirs, rtol=1e-12)
