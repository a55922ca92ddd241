"""``F.max_unpool1d/2d/3d`` and ``nn.MaxUnpool*``, ``feature_alpha_dropout`` / ``nn.FeatureAlphaDropout`` and the
``nn.init`` additions (``eye_``, ``dirac_`` with groups, ``sparse_``, the deprecated aliases) against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import assert_close, raised, recorded_graph, tg, torch

# (dims, input shape, kernel, stride, padding, output_size)
UNPOOL_CASES = {
    "1d": (1, (2, 3, 8), 2, None, 0, None),
    "1d_output_size": (1, (2, 3, 9), 2, None, 0, [9]),
    "2d": (2, (2, 2, 4, 6), 2, None, 0, None),
    "2d_unbatched_stride_pad": (2, (2, 5, 5), 3, 2, 1, None),
    "2d_output_size_full": (2, (1, 2, 5, 5), 2, None, 0, [1, 2, 5, 5]),
    "3d": (3, (1, 2, 4, 4, 4), 2, None, 0, None),
    "3d_unbatched_output_size": (3, (2, 5, 4, 5), 2, 2, 0, [5, 4, 5]),
}


@pytest.mark.parametrize("case", sorted(UNPOOL_CASES))
@pytest.mark.parametrize("use_module", [False, True])
def test_max_unpool(case, use_module):
    n, shape, kernel, stride, padding, output_size = UNPOOL_CASES[case]

    def program(lib):
        x = lib.tensor(np.random.default_rng(0).permutation(int(np.prod(shape))).reshape(shape),
                       dtype=lib.float32)
        pool = getattr(lib.nn.functional, f"max_pool{n}d")
        pooled, indices = pool(x, kernel, stride, padding, return_indices=True)
        pooled = pooled.detach().requires_grad_()
        if use_module:
            module = getattr(lib.nn, f"MaxUnpool{n}d")(kernel, stride, padding)
            out = module(pooled, indices, output_size)
            info = repr(module)
        else:
            fn = getattr(lib.nn.functional, f"max_unpool{n}d")
            out = fn(pooled, indices, kernel, stride, padding, output_size)
            info = None
        weights = lib.arange(out.numel(), dtype=lib.float32).reshape(out.shape)
        (out * weights).sum().backward()
        return out, pooled.grad, recorded_graph([out]), info

    ours, theirs = program(tg), program(torch)
    assert_close(ours[:2], theirs[:2])
    assert ours[2:] == theirs[2:]


def test_max_unpool_double_backward_and_saved():
    def program(lib):
        x = lib.arange(16.0).reshape(1, 1, 4, 4)
        pooled, idx = lib.nn.functional.max_pool2d(x, 2, return_indices=True)
        pooled.requires_grad_()
        out = lib.nn.functional.max_unpool2d(pooled, idx, 2)
        g = lib.ones_like(out).requires_grad_()
        (grad,) = lib.autograd.grad(out, pooled, g, create_graph=True)
        (gg,) = lib.autograd.grad((grad * 3).sum(), g)
        return grad, gg, recorded_graph([grad]), out.grad_fn._saved_indices

    ours, theirs = program(tg), program(torch)
    assert_close(ours[:2], theirs[:2])
    assert ours[2] == theirs[2]
    assert_close(ours[3], theirs[3])


def _raw(lib, n: int):
    """The ATen operator (``torch._C._nn.max_unpool{n}d``; not in the top-level namespace)."""
    if lib is torch:
        return getattr(torch._C._nn, f"max_unpool{n}d")
    from tracegrad.ops.nn_ops import unpool

    return getattr(unpool, f"max_unpool{n}d")


def _pooled(lib, shape=(1, 1, 4, 4)):
    x = lib.arange(float(np.prod(shape))).reshape(shape)
    return lib.nn.functional.max_pool2d(x, 2, return_indices=True)


UNPOOL_ERRORS = {
    "output_size_len": lambda lib: lib.nn.functional.max_unpool2d(*_pooled(lib), 2, output_size=[4]),
    "output_size_range": lambda lib: lib.nn.functional.max_unpool2d(*_pooled(lib), 2, output_size=[7, 4]),
    "bad_index": lambda lib: _raw(lib, 2)(_pooled(lib)[0], _pooled(lib)[1] + 100, [4, 4]),
    "float_index": lambda lib: _raw(lib, 2)(_pooled(lib)[0], _pooled(lib)[1].float(), [4, 4]),
    "index_shape": lambda lib: _raw(lib, 2)(_pooled(lib)[0], _pooled(lib)[1][..., :1], [4, 4]),
    "2d_ndim": lambda lib: _raw(lib, 2)(_pooled(lib)[0][0, 0], _pooled(lib)[1][0, 0], [4, 4]),
    "2d_size_count": lambda lib: _raw(lib, 2)(*_pooled(lib), [4]),
    "3d_stride": lambda lib: _raw(lib, 3)(*_pooled(lib), [4, 4, 4], [0, 2, 2], [0, 0, 0]),
    "3d_padding_count": lambda lib: _raw(lib, 3)(*_pooled(lib), [4, 4, 4], [2, 2, 2], [0, 0]),
    "3d_ndim": lambda lib: _raw(lib, 3)(_pooled(lib)[0][0], _pooled(lib)[1][0], [4, 4, 4], [2, 2, 2], [0, 0, 0]),
}


@pytest.mark.parametrize("case", sorted(UNPOOL_ERRORS))
def test_max_unpool_errors(case):
    theirs = raised(torch, UNPOOL_ERRORS[case])
    assert theirs is not None
    assert raised(tg, UNPOOL_ERRORS[case]) == theirs


# ---- feature alpha dropout ---------------------------------------------------------------------------------


def test_feature_alpha_dropout():
    x = np.linspace(-2, 2, 2 * 3 * 16).reshape(2, 3, 4, 4)
    graphs = []
    for lib in (tg, torch):
        t = lib.tensor(x, dtype=lib.float32, requires_grad=True)
        lib.manual_seed(0)
        out = lib.nn.functional.feature_alpha_dropout(t, 0.5, True)
        graphs.append(recorded_graph([out]))
        # every (sample, channel) plane is either kept (affinely) or set to one constant
        flat = out.detach().numpy().reshape(6, 16)
        a = 1.0 / np.sqrt((1.7580993408473766**2 * 0.5 + 1) * 0.5)
        for row, src in zip(flat, x.reshape(6, 16), strict=True):
            dropped = np.allclose(row, row[0])
            assert dropped or np.allclose(row, src * a + 1.7580993408473766 * a * 0.5, atol=1e-5)
        module = lib.nn.FeatureAlphaDropout(0.3)
        assert repr(module) == "FeatureAlphaDropout(p=0.3, inplace=False)"
        module.eval()
        assert module(t) is t
        assert lib.nn.functional.feature_alpha_dropout(t, 0.5) is t  # training=False by default
    assert graphs[0] == graphs[1]
    bad = lambda lib: lib.nn.functional.feature_alpha_dropout(lib.ones(2, 2), 1.5)  # noqa: E731
    assert raised(tg, bad) == raised(torch, bad)


# ---- nn.init ------------------------------------------------------------------------------------------------


def test_init_exports_match():
    ours = {n for n in dir(tg.nn.init) if not n.startswith("_")}
    theirs = {n for n in dir(torch.nn.init) if not n.startswith("_")}
    # torch also re-exports its typing helpers and the torch module
    assert theirs - ours <= {"Callable", "Literal", "ParamSpec", "TypeVar", "torch"}


@pytest.mark.parametrize("shape,groups", [((4, 2, 3), 1), ((6, 2, 3, 3), 2), ((4, 4, 1, 3, 3), 4), ((2, 5, 3), 1)])
def test_dirac(shape, groups):
    ours = tg.nn.init.dirac_(tg.full(shape, 7.0), groups)
    theirs = torch.nn.init.dirac_(torch.full(shape, 7.0), groups)
    assert_close(ours, theirs)
    channels = shape[1] * groups
    x = np.linspace(-1, 1, 2 * channels * 5 ** (len(shape) - 2)).reshape((2, channels) + (5,) * (len(shape) - 2))
    conv = getattr(tg.nn.functional, f"conv{len(shape) - 2}d")
    tconv = getattr(torch.nn.functional, f"conv{len(shape) - 2}d")
    pad = shape[-1] // 2
    assert_close(conv(tg.tensor(x, dtype=tg.float32), ours, padding=pad, groups=groups),
                 tconv(torch.tensor(x, dtype=torch.float32), theirs, padding=pad, groups=groups))


@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2)])
def test_eye(shape):
    assert_close(tg.nn.init.eye_(tg.empty(shape)), torch.nn.init.eye_(torch.empty(shape)))


INIT_ERRORS = {
    "eye_3d": lambda lib: lib.nn.init.eye_(lib.empty(2, 2, 2)),
    "dirac_2d": lambda lib: lib.nn.init.dirac_(lib.empty(2, 2)),
    "dirac_groups": lambda lib: lib.nn.init.dirac_(lib.empty(3, 2, 3), 2),
    "sparse_3d": lambda lib: lib.nn.init.sparse_(lib.empty(2, 2, 2), 0.5),
}


@pytest.mark.parametrize("case", sorted(INIT_ERRORS))
def test_init_errors(case):
    assert raised(tg, INIT_ERRORS[case]) == raised(torch, INIT_ERRORS[case])


@pytest.mark.parametrize("sparsity", [0.0, 0.3, 0.5, 1.0])
def test_sparse(sparsity):
    """Same number of zeros per column as torch (the values come from tracegrad's own generator stream)."""
    ours = tg.nn.init.sparse_(tg.empty(10, 6), sparsity, std=0.5, generator=tg.Generator().manual_seed(3))
    theirs = torch.nn.init.sparse_(torch.empty(10, 6), sparsity, std=0.5, generator=torch.Generator().manual_seed(3))
    zeros_ours = (ours.numpy() == 0).sum(0)
    zeros_theirs = (theirs.numpy() == 0).sum(0)
    assert (zeros_ours == zeros_theirs).all()


@pytest.mark.parametrize("name,args", [("eye", ((3, 4),)), ("dirac", ((4, 2, 3),)), ("sparse", ((4, 3), 0.5)),
                                       ("uniform", ((2, 2),)), ("orthogonal", ((3, 3),))])
def test_deprecated_aliases(name, args):
    results = []
    for lib in (tg, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(lib.nn.init, name)(lib.empty(*args[0]), *args[1:])
        results.append(([(w.category.__name__, str(w.message)) for w in caught], getattr(lib.nn.init, name).__name__,
                        tuple(out.shape)))
    assert results[0] == results[1]
    if name in ("eye", "dirac"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            ours = getattr(tg.nn.init, name)(tg.empty(*args[0]))
            theirs = getattr(torch.nn.init, name)(torch.empty(*args[0]))
        assert_close(ours, theirs)
