"""``nn.utils.parametrize`` and ``nn.utils.parametrizations`` against torch: the generated class and its repr,
parameter and state-dict names, forward values, gradients and graph nodes, assignment through
``right_inverse`` (one tensor and a sequence), removal, caching, transfer, deepcopy and the errors."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from _lib import assert_close, raised, recorded_graph, tg, torch


def _linear(lib, n_in: int = 3, n_out: int = 4, seed: int = 0):
    """A Linear layer with the same weights in both libraries."""
    rng = np.random.default_rng(seed)
    m = lib.nn.Linear(n_in, n_out)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(rng.standard_normal((n_out, n_in)), dtype=lib.float32))
        m.bias.copy_(lib.tensor(rng.standard_normal(n_out), dtype=lib.float32))
    return m


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()

    return Symmetric()


def _split(lib):
    """A parametrization of two tensors: right_inverse returns (a, b), forward adds them."""

    class Split(lib.nn.Module):
        def forward(self, a, b):
            return a + b

        def right_inverse(self, X):
            return X * 0.25, X * 0.75

    return Split()


def _scale(lib, factor: float = 2.0):
    class Scale(lib.nn.Module):
        def forward(self, X):
            return X * factor

    return Scale()


def _both(program):
    return program(tg), program(torch)


def _names(m) -> tuple:
    return (
        type(m).__name__,
        [n for n, _ in m.named_parameters()],
        [n for n, _ in m.named_buffers()],
        list(m.state_dict()),
        repr(m),
    )


def test_register_symmetric_class_names_values_and_grads():
    def program(lib):
        m = _linear(lib, 4, 4)
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _symmetric(lib))
        x = lib.tensor(np.linspace(-1, 1, 8).reshape(2, 4), dtype=lib.float32)
        out = m(x)
        out.sum().backward()
        P = lib.nn.utils.parametrize
        return m, out, {
            "names": _names(m),
            "is": (P.is_parametrized(m), P.is_parametrized(m, "weight"), P.is_parametrized(m, "bias")),
            "before": P.type_before_parametrizations(m).__name__,
            "graph": recorded_graph([m.weight]),
            "bases": [c.__name__ for c in type(m).__mro__[:2]],
        }

    (m1, o1, info1), (m2, o2, info2) = _both(program)
    assert info1 == info2
    assert_close(o1, o2)
    assert_close(m1.parametrizations.weight.original.grad, m2.parametrizations.weight.original.grad)
    assert_close(m1.weight, m2.weight)


def test_assignment_chain_and_remove():
    def program(lib):
        P = lib.nn.utils.parametrize
        m = _linear(lib, 4, 4)
        P.register_parametrization(m, "weight", _symmetric(lib))
        P.register_parametrization(m, "weight", _scale(lib, 3.0), unsafe=True)
        original = m.parametrizations.weight.original
        chain = _names(m)
        bad = raised(lib, lambda lib: setattr(m, "weight", lib.ones(4, 4)))  # Scale has no right_inverse
        P.remove_parametrizations(m, "weight")
        after = _names(m)
        return m, original, chain, bad, after

    (m1, o1, *r1), (m2, o2, *r2) = _both(program)
    assert r1 == r2
    assert_close(m1.weight, m2.weight)
    assert m1.weight is o1 and m2.weight is o2  # the original Parameter object is kept


def test_assignment_through_right_inverse_and_leave_unparametrized():
    def program(lib):
        P = lib.nn.utils.parametrize
        m = _linear(lib, 4, 4)
        P.register_parametrization(m, "weight", _symmetric(lib))
        version = m.parametrizations.weight.original._version
        m.weight = lib.arange(16.0).reshape(4, 4)
        assigned = (m.weight.clone(), m.parametrizations.weight.original.clone())
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
        return assigned, m.weight, m.parametrizations if hasattr(m, "parametrizations") else None, version

    (a1, w1, p1, _), (a2, w2, p2, _) = _both(program)
    assert_close(a1, a2)
    assert_close(w1, w2)
    assert p1 is None and p2 is None


def test_multi_tensor_right_inverse():
    def program(lib):
        P = lib.nn.utils.parametrize
        m = _linear(lib)
        P.register_parametrization(m, "weight", _split(lib))
        names = _names(m)
        originals = (m.parametrizations.weight.original0.clone(), m.parametrizations.weight.original1.clone())
        x = lib.ones(2, 3)
        m(x).sum().backward()
        grads = (m.parametrizations.weight.original0.grad, m.parametrizations.weight.original1.grad)
        m.weight = lib.full((4, 3), 2.0)
        reassigned = m.parametrizations.weight.original0.clone()
        errs = [raised(lib, lambda lib: P.remove_parametrizations(m, "weight", leave_parametrized=False))]
        P.remove_parametrizations(m, "weight")
        return names, originals, grads, reassigned, errs, _names(m), m.weight

    ours, theirs = _both(program)
    assert ours[0] == theirs[0]
    assert_close(ours[1:4], theirs[1:4])
    assert ours[4] == theirs[4]
    assert ours[5] == theirs[5]
    assert_close(ours[6], theirs[6])


def test_buffer_parametrization_and_state_dict_roundtrip():
    def program(lib):
        P = lib.nn.utils.parametrize
        bn = lib.nn.BatchNorm1d(3)
        P.register_parametrization(bn, "running_var", _scale(lib, 2.0))
        src = _linear(lib)
        P.register_parametrization(src, "weight", _scale(lib, 2.0))
        dst = _linear(lib, seed=5)
        P.register_parametrization(dst, "weight", _scale(lib, 2.0))
        result = dst.load_state_dict(src.state_dict())
        return _names(bn), bn.running_var, str(result), dst.weight

    ours, theirs = _both(program)
    assert ours[0] == theirs[0] and ours[2] == theirs[2]
    assert_close(ours[1], theirs[1])
    assert_close(ours[3], theirs[3])


def test_cached_evaluates_once():
    def program(lib):
        P = lib.nn.utils.parametrize
        calls = []

        class Counting(lib.nn.Module):
            def forward(self, X):
                calls.append(1)
                return X * 2

        m = _linear(lib)
        P.register_parametrization(m, "weight", Counting())
        start = len(calls)
        with P.cached():
            same = m.weight is m.weight
            with P.cached():
                m(lib.ones(1, 3))
        inside = len(calls) - start
        m.weight
        return same, inside, len(calls) - start

    assert _both(program)[0] == _both(program)[1]


def test_transfer_parametrizations_and_deepcopy_and_pickle():
    def program(lib):
        P = lib.nn.utils.parametrize
        src = _linear(lib, 4, 4)
        P.register_parametrization(src, "weight", _symmetric(lib))
        dst = lib.nn.Linear(4, 4)
        P.transfer_parametrizations_and_params(src, dst)
        shared = dst.parametrizations.weight.original is src.parametrizations.weight.original
        clone = copy.deepcopy(src)
        err = raised(lib, lambda lib: pickle.dumps(src))
        return _names(dst), shared, _names(clone), clone.weight, err

    ours, theirs = _both(program)
    assert ours[0] == theirs[0] and ours[1:3] == theirs[1:3]
    assert_close(ours[3], theirs[3])
    assert ours[4] == theirs[4]


def _shape_changer(lib):
    class Flat(lib.nn.Module):
        def forward(self, X):
            return X.flatten()

    return Flat()


def _dtype_changer(lib):
    class Double(lib.nn.Module):
        def forward(self, X):
            return X.double()

    return Double()


def _bad_inverse(lib):
    class NotTensor(lib.nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return 3

    return NotTensor()


ERRORS = {
    "missing_name": lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(2, 2), "nope", _scale(lib)),
    "shape": lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(2, 2), "weight", _shape_changer(lib)),
    "dtype": lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(2, 2), "weight", _dtype_changer(lib)),
    "bad_right_inverse": lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(2, 2), "weight", _bad_inverse(lib)),
    "chain_shape": lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "weight", _scale(lib)),
        "weight", _shape_changer(lib)),
    "remove_missing": lambda lib: lib.nn.utils.parametrize.remove_parametrizations(lib.nn.Linear(2, 2), "weight"),
    "empty_list": lambda lib: lib.nn.utils.parametrize.ParametrizationList([], lib.ones(2)),
    "orth_1d": lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), "bias"),
    "orth_map": lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), orthogonal_map="qr"),
    "orth_name": lambda lib: lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(2, 2), "w"),
    "spectral_iters": lambda lib: lib.nn.utils.parametrizations.spectral_norm(
        lib.nn.Linear(2, 2), n_power_iterations=0),
    "spectral_dim": lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), dim=3),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match(case):
    ours, theirs = raised(tg, ERRORS[case]), raised(torch, ERRORS[case])
    assert theirs is not None
    if case == "missing_name":  # the message holds the module's repr
        assert ours[0] == theirs[0]
        assert ours[1].replace("tracegrad", "torch") == theirs[1]
    else:
        assert ours == theirs


# ---- parametrizations ------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("orth_map", ["cayley", "matrix_exp", "householder"])
def test_orthogonal(shape, orth_map):
    def program(lib):
        m = _linear(lib, shape[1], shape[0])
        lib.manual_seed(0)  # (the random completion of a non-square frame differs between libraries)
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orth_map)
        return m

    ours, theirs = _both(program)
    assert _names(ours) == _names(theirs)
    W = ours.weight
    n = min(shape)
    gram = W.mT @ W if shape[0] >= shape[1] else W @ W.mT
    assert_close(gram, np.eye(n), atol=1e-5)
    if shape[0] == shape[1]:  # a square Q is determined by the weight (no random completion)
        assert_close(ours.parametrizations.weight.original, theirs.parametrizations.weight.original, atol=1e-5)
        assert_close(ours.parametrizations.weight[0].base, theirs.parametrizations.weight[0].base,
                     atol=1e-5)
        assert_close(W, theirs.weight, atol=1e-5)
        # a gradient step leaves the weight orthogonal, through the same values
        x = np.linspace(-1, 1, 2 * n).reshape(2, n)
        (ours(tg.tensor(x, dtype=tg.float32)) ** 2).sum().backward()
        (theirs(torch.tensor(x, dtype=torch.float32)) ** 2).sum().backward()
        assert_close(ours.parametrizations.weight.original.grad, theirs.parametrizations.weight.original.grad,
                     atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("orth_map", ["cayley", "householder"])
def test_orthogonal_without_trivialization(orth_map):
    def program(lib):
        m = _linear(lib, 3, 5)
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orth_map, use_trivialization=False)
        assign = raised(lib, lambda lib: setattr(m, "weight", m.weight.detach().clone()))
        return m, assign

    (m1, a1), (m2, a2) = _both(program)
    assert _names(m1) == _names(m2)
    assert a1 == a2
    assert_close(m1.weight, m2.weight, atol=1e-5)
    assert_close(m1.parametrizations.weight.original, m2.parametrizations.weight.original, atol=1e-5)


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_parametrization(dim):
    def program(lib):
        m = _linear(lib)
        lib.nn.utils.parametrizations.weight_norm(m, dim=dim)
        x = lib.tensor(np.linspace(-2, 2, 6).reshape(2, 3), dtype=lib.float32)
        (m(x) ** 2).sum().backward()
        p = m.parametrizations.weight
        return m, (p.original0, p.original1, m.weight, p.original0.grad, p.original1.grad)

    (m1, v1), (m2, v2) = _both(program)
    assert _names(m1) == _names(m2)
    assert_close(v1, v2, atol=1e-5)
    if dim in (0, 1):  # the fused kernel (the composite's norm node name is tracegrad's LinalgVectorNorm)
        assert recorded_graph([m1.weight]) == recorded_graph([m2.weight])


def test_weight_norm_loads_legacy_checkpoint():
    def program(lib):
        legacy = lib.nn.utils.weight_norm(_linear(lib, seed=3))
        m = lib.nn.utils.parametrizations.weight_norm(_linear(lib))
        m.load_state_dict(legacy.state_dict())
        return m.weight

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        ours, theirs = _both(program)
    assert_close(ours, theirs)


def _copy_buffers(src, dst) -> None:
    """The power iteration starts from random vectors: give tracegrad torch's."""
    for (_, a), (_, b) in zip(src.named_buffers(), dst.named_buffers(), strict=True):
        with tg.no_grad():
            b.copy_(tg.tensor(a.detach().numpy()))


@pytest.mark.parametrize("make", ["linear", "conv_transpose", "conv_dim1"])
def test_spectral_norm_parametrization(make):
    def build(lib):
        rng = np.random.default_rng(1)
        if make == "linear":
            m, kw = lib.nn.Linear(3, 4), {}
        elif make == "conv_transpose":
            m, kw = lib.nn.ConvTranspose2d(2, 3, 2), {}
        else:
            m, kw = lib.nn.Conv1d(2, 3, 2), {"dim": 1, "n_power_iterations": 3}
        with lib.no_grad():
            m.weight.copy_(lib.tensor(rng.standard_normal(tuple(m.weight.shape)), dtype=lib.float32))
        return lib.nn.utils.parametrizations.spectral_norm(m, **kw)

    ours, theirs = build(tg), build(torch)
    assert _names(ours) == _names(theirs)
    _copy_buffers(theirs, ours)
    for _ in range(2):  # training: each access runs the power iteration, in place into _u / _v
        assert_close(ours.weight, theirs.weight, atol=1e-5)
    assert_close(dict(ours.named_buffers()), dict(theirs.named_buffers()), atol=1e-5)
    assert recorded_graph([ours.weight]) == recorded_graph([theirs.weight])
    ours.eval()
    theirs.eval()
    u = ours.parametrizations.weight[0]._u.clone()
    assert_close(ours.weight, theirs.weight, atol=1e-5)
    assert_close(ours.parametrizations.weight[0]._u, u)  # evaluation leaves the estimate alone
    ours.weight.sum().backward()
    theirs.weight.sum().backward()
    assert_close(ours.parametrizations.weight.original.grad, theirs.parametrizations.weight.original.grad,
                 atol=1e-5)


def test_spectral_norm_1d_is_normalize():
    def program(lib):
        m = _linear(lib)
        lib.nn.utils.parametrizations.spectral_norm(m, "bias")
        return _names(m), m.bias

    ours, theirs = _both(program)
    assert ours[0] == theirs[0]
    assert_close(ours[1], theirs[1])
