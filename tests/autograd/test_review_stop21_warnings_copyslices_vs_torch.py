"""Review of the twenty-first stop's NumPy-warnings and CopySlices work, against torch.

Hiding NumPy's floating-point warnings from tracegrad's own code must not hide a RuntimeWarning that is no
floating-point warning located there (the ambiguous ``kl_divergence`` warning, a user's hook warning with
``stacklevel=2``), and NumPy's ComplexWarning as tracegrad casts complex values to real is PyTorch's UserWarning
in the same words at the caller's line (hidden at HEAD)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import tracegrad

LIBS = [torch, tracegrad]


def _record(fn, action="always"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter(action)
        fn()
    return caught


def _seen(caught, here=False):
    """(category, message without torch's "(Triggered internally ...)" suffix[, shown in this file])"""
    out = []
    for w in caught:
        if issubclass(w.category, DeprecationWarning):  # (torch.jit's, on first use)
            continue
        text = str(w.message).split(" (Triggered internally")[0]
        out.append((w.category.__name__, text) + ((w.filename == __file__,) if here else ()))
    return out


def _ambiguous_kl(L):
    D = L.distributions

    class A(D.Normal):
        pass

    class B(D.Normal):
        pass

    D.kl.register_kl(A, D.Normal)(lambda p, q: L.zeros(()))
    D.kl.register_kl(D.Normal, B)(lambda p, q: L.ones(()))
    try:
        D.kl_divergence(A(0.0, 1.0), B(0.0, 1.0))
    finally:  # (the registries as they were, for the tests comparing them)
        D.kl._KL_REGISTRY.pop((A, D.Normal))
        D.kl._KL_REGISTRY.pop((D.Normal, B))
        D.kl._KL_MEMOIZE.clear()


@pytest.mark.parametrize("action", ["always", "default"])
def test_ambiguous_kl_divergence_warning_is_shown(action):
    got = [_seen(_record(lambda L=L: _ambiguous_kl(L), action)) for L in LIBS]
    assert got[0] == [("RuntimeWarning", "Ambiguous kl_divergence(A, B). Please register_kl(A, B)")]
    assert got[1] == got[0]


@pytest.mark.parametrize("action", ["always", "default"])
@pytest.mark.parametrize("stacklevel", [2, 3])
def test_users_runtime_warning_located_in_the_library_is_shown(action, stacklevel):
    def program(L):
        x = L.ones(2, requires_grad=True)
        x.register_hook(lambda g: warnings.warn("mine", RuntimeWarning, stacklevel=stacklevel))
        (x * 2).sum().backward()

    got = [_seen(_record(lambda L=L: program(L), action)) for L in LIBS]
    assert got[0] == [("RuntimeWarning", "mine")]
    assert got[1] == got[0]


def test_own_floating_point_warnings_stay_hidden_and_users_show():
    def program(L):
        L.log(L.tensor([-1.0, 0.0]))
        x = L.tensor([0.0, 1.0], requires_grad=True)
        (x.log() * L.tensor([np.inf, 0.0])).sum().backward()
        np.log(np.array([-1.0]))

    got = [_seen(_record(lambda L=L: program(L)), here=True) for L in LIBS]
    assert got[0] == [("RuntimeWarning", "invalid value encountered in log", True)]
    assert got[1] == got[0]


COMPLEX_TO_REAL = {
    "copy_": lambda L, c: L.zeros(2).copy_(c),
    "setitem": lambda L, c: L.zeros(2).__setitem__(0, c[0]),
    "slice_copy_": lambda L, c: L.zeros(3)[1:].copy_(c),
    "float": lambda L, c: c.float(),
    "to_double": lambda L, c: c.to(L.float64),
    "int": lambda L, c: c.int(),
    "strided_float": lambda L, c: L.ones(4, dtype=L.complex64)[::2].float(),
    "backward": lambda L, c: c.detach().requires_grad_().float().sum().backward(),
}


@pytest.fixture
def warn_always():
    for L in LIBS:
        L.set_warn_always(True)
    yield
    for L in LIBS:
        L.set_warn_always(False)


@pytest.mark.parametrize("case", sorted(COMPLEX_TO_REAL))
def test_complex_to_real_cast_warns_torchs_user_warning(case, warn_always):
    def program(L):
        COMPLEX_TO_REAL[case](L, L.ones(2, dtype=L.complex64) * (1 + 2j))

    got = [_seen(_record(lambda L=L: program(L)), here=True) for L in LIBS]
    assert got[0] == [("UserWarning", "Casting complex values to real discards the imaginary part", True)]
    assert got[1] == got[0]


def test_complex_to_real_cast_warns_once_without_warn_always():
    from tracegrad import _warnings

    _warnings._SEEN.discard(_warnings._COMPLEX_TO_REAL)
    c = tracegrad.ones(2, dtype=tracegrad.complex64)
    caught = _record(lambda: (tracegrad.zeros(2).copy_(c), c.float(), c.float()))
    assert _seen(caught) == [("UserWarning", "Casting complex values to real discards the imaginary part")]


def test_users_own_complex_warning_is_numpys():
    caught = _record(lambda: (tracegrad.ones(2, dtype=tracegrad.complex64).float(),
                              np.array([1 + 1j]).astype(float)))
    assert any(w.category is np.exceptions.ComplexWarning and w.filename == __file__ for w in caught)


@pytest.mark.parametrize("state", ["raise", "warn", "ignore"])
def test_every_hook_of_a_node_runs_under_the_callers_numpy_state(state):
    """The hooks of one node run under the caller's NumPy error state set once for them all (it was set around
    each hook, ten times a plain hook call's cost); each still sees it, also after one that raised inside."""

    def numpy_in_hook(log, name):
        def hook(*args):
            try:
                np.log(np.array([-1.0]))
                log.append((name, "quiet"))
            except FloatingPointError:
                log.append((name, "raised"))

        return hook

    def program(L):
        log = []
        x = L.ones(2, requires_grad=True)
        for i in range(3):
            x.register_hook(numpy_in_hook(log, f"leaf{i}"))
        x.register_post_accumulate_grad_hook(numpy_in_hook(log, "post_acc"))
        y = x * 2
        y.retain_grad()
        for i in range(2):
            y.register_hook(numpy_in_hook(log, f"y{i}"))
        y.grad_fn.register_prehook(numpy_in_hook(log, "pre"))
        y.grad_fn.register_hook(numpy_in_hook(log, "post"))
        with np.errstate(all=state):
            y.sum().backward()
        return log, y.grad.tolist(), x.grad.tolist()

    got = [None, None]
    for i, L in enumerate(LIBS):
        caught = _record(lambda i=i, L=L: got.__setitem__(i, program(L)))
        got[i] = (got[i], _seen(caught, here=True))
    assert got[1] == got[0]


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as exc:  # noqa: BLE001 (compared with torch's)
        return (type(exc).__name__, str(exc))


@pytest.mark.parametrize("make", [lambda: np.arange(6.0)[::-1], lambda: np.arange(6.0)[::-1][:1],
                                  lambda: np.arange(6.0).reshape(2, 3)[:, ::-1][:, :0]])
@pytest.mark.parametrize("dtype", [None, "float32", "float64"])
def test_as_tensor_refuses_negative_strides_as_from_numpy(make, dtype):
    got = [_outcome(lambda L=L: L.as_tensor(make(), dtype=None if dtype is None else getattr(L, dtype)).stride())
           for L in LIBS]
    assert got[0][0] == "ValueError"
    assert got[1] == got[0]


def _fmt(t):
    return None if t is None else (str(t.dtype).split(".")[-1], tuple(t.shape), t.detach().tolist())


def _write_then_backward(L, make_base):
    """In-place writes under autograd into views of a base whose memory a NumPy array (a view, a memmap, a
    buffer) or an ``as_strided`` chain holds: gradients, nodes, versions and values as torch's."""
    b = make_base(L)
    z = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v = b.view(-1)[2:8].view(2, 3)
    v[1] = z * 2
    v[0, ::2].mul_(z[:2])
    (b * L.arange(float(b.numel())).reshape(b.shape)).sum().backward()
    return _fmt(z.grad), b.grad_fn.name(), b._version, v.grad_fn.name(), _fmt(b)


BASES = {
    "from_numpy_slice": lambda L: L.from_numpy(np.arange(40.0)[4:16]).view(3, 4),
    "from_numpy_strided": lambda L: L.from_numpy(np.arange(40.0)[1::2][:12]),
    "np_frombuffer": lambda L: L.from_numpy(
        np.frombuffer(bytearray(np.arange(20.0).tobytes()), dtype=np.float64)[5:17]),
    "frombuffer_offset": lambda L: L.frombuffer(bytearray(np.arange(20.0).tobytes()), dtype=L.float64,
                                                offset=16, count=12),
}


@pytest.mark.parametrize("base", sorted(BASES))
def test_writes_into_views_of_non_owning_bases(base):
    got = [_write_then_backward(L, BASES[base]) for L in LIBS]
    assert got[1] == got[0]


def test_writes_into_views_of_a_memmap(tmp_path):
    arrays = []
    for i in range(2):
        mm = np.memmap(tmp_path / f"m{i}", dtype=np.float64, mode="w+", shape=(20,))
        mm[:] = np.arange(20.0)
        arrays.append(mm)
    got = [_write_then_backward(L, lambda L, mm=mm: L.from_numpy(mm[3:15])) for L, mm in zip(LIBS, arrays)]
    assert got[1] == got[0]


def _grads_through_the_write(L):
    x = L.ones(2, 3, requires_grad=True)
    y = x * 2
    y[0, ::2] = 5
    y[1, 1:].mul_(3)
    y.retain_grad()
    seen = []
    y.grad_fn.register_prehook(lambda go: seen.append(_fmt(go[0])))
    y.grad_fn.register_hook(lambda gi, go: seen.append(([_fmt(t) for t in gi], _fmt(go[0]))))
    g = L.arange(6.0).reshape(2, 3)
    y.backward(g)
    return seen, _fmt(g), _fmt(y.grad), _fmt(x.grad)


def test_the_raw_copyslices_backward_leaves_the_incoming_gradient_alone():
    got = [_grads_through_the_write(L) for L in LIBS]
    assert got[1] == got[0]


def _strictly(L, mode, fn):
    if mode == "raise":
        with np.errstate(all="raise"):
            return fn()
    if mode == "error":
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return fn()
    out = []  # (mode "hook": inside a tensor hook, under the caller's raising state)
    x = L.ones(1, requires_grad=True)
    x.register_hook(lambda g: out.append(fn()) and None)
    with np.errstate(all="raise"):
        (x * 2).sum().backward()
    return out[0]


@pytest.mark.parametrize("mode", ["raise", "error", "hook"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_cross_entropy_of_infinite_scores_is_silent_under_strict_numpy(mode, reduction):
    """cross_entropy's inline eager path ran log_softmax's and nll's kernels outside the rerun that answers a
    strict filter's or np.errstate(raise)'s floating-point signal: inf scores raised where torch gives NaN."""

    def program(L):
        F = L.nn.functional
        scores = L.tensor([[float("inf"), 0.0], [1.0, 2.0]])
        loss = _strictly(L, mode, lambda: F.cross_entropy(scores, L.tensor([1, 0]), reduction=reduction))
        nll = _strictly(L, mode, lambda: F.nll_loss(L.tensor([[-float("inf"), 0.0]]), L.tensor([0])))
        return str(loss.tolist()), str(nll.tolist())

    got = [_outcome(lambda L=L: program(L)) for L in LIBS]
    assert got[1] == got[0]


@pytest.mark.parametrize("case", sorted(COMPLEX_TO_REAL))
def test_complex_to_real_cast_under_a_strict_filter_raises_torchs_user_warning(case, warn_always):
    """A strict filter made NumPy's ComplexWarning the exception (it is PyTorch's UserWarning)."""

    def program(L):
        c = L.ones(2, dtype=L.complex64) * (1 + 2j)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            COMPLEX_TO_REAL[case](L, c)

    got = [_outcome(lambda L=L: program(L)) for L in LIBS]
    got = [(kind, text.split(" (Triggered internally")[0]) for kind, text in got]
    assert got[0] == ("UserWarning", "Casting complex values to real discards the imaginary part")
    assert got[1] == got[0]


def test_complex_to_real_copy_under_a_strict_filter_still_copies_the_real_part():
    out = []
    for L in LIBS:
        dst = L.zeros(3, dtype=L.float16)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.simplefilter("ignore", UserWarning)
            dst[1:].copy_(L.tensor([1.5 + 2j, 7e4 - 1j], dtype=L.complex128))
            strided = L.tensor([[1 + 1j, 2 + 2j], [3 + 3j, 4 + 4j]]).t().float()
        out.append((str(dst.tolist()), strided.tolist(), strided.stride()))
    assert out[1] == out[0]
