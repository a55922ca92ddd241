"""Top-level names a PyTorch script reaches for against torch's CPU build: constants, ``torch.version``, the
``has_*`` flags, the autocast state functions, DLPack exchange and a few old Tensor methods."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import raised, tg, torch, warning_texts

import tracegrad
from tracegrad.amp import autocast_state

# ---- 1. constants, torch.version, has_* ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["pi", "e", "inf", "nan", "newaxis"])
def test_constants(name):
    ours, theirs = getattr(tg, name), getattr(torch, name)
    assert type(ours) is type(theirs)
    if isinstance(theirs, float):
        np.testing.assert_equal(ours, theirs)
    else:
        assert ours is theirs is None
    # newaxis indexes like None
    if name == "newaxis":
        assert tg.ones(2, 3)[tg.newaxis].shape == torch.ones(2, 3)[torch.newaxis].shape


def test_version_module():
    assert tg.version.__all__ == torch.version.__all__
    for name in ("cuda", "hip", "rocm", "xpu", "debug"):
        assert getattr(tg.version, name) == getattr(torch.version, name), name
    assert tg.version.__version__ == tg.__version__ == "0.1.0"
    assert isinstance(tg.version.git_version, str)
    import tracegrad.version as module

    assert module is tg.version


def test_has_flags_agree_with_backends():
    for name in ("has_lapack", "has_mkl", "has_openmp", "has_spectral"):
        assert getattr(tg, name) is getattr(torch, name) is True, name
    assert tg.has_mkl == tg.backends.mkl.is_available()
    assert tg.has_openmp == tg.backends.openmp.is_available()


# ---- 2. autocast state ---------------------------------------------------------------------------------------


@pytest.fixture
def autocast_reset():
    yield
    for lib in (tg, torch):
        for device in ("cpu", "cuda", "mps", "xla"):
            lib.set_autocast_enabled(device, False)
        lib.set_autocast_cache_enabled(True)
    torch.set_autocast_dtype("cpu", torch.bfloat16)
    torch.set_autocast_dtype("cuda", torch.float16)
    torch.set_autocast_dtype("mps", torch.float16)
    autocast_state._fast_dtypes.clear()
    autocast_state._fast_dtypes.update(autocast_state._DEFAULT_DTYPES)


DEVICE_TYPES = ["cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
                "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone", "foo"]


@pytest.mark.parametrize("device", DEVICE_TYPES)
def test_is_autocast_enabled_and_default_dtypes(device, autocast_reset):
    assert raised(tg, lambda lib: lib.is_autocast_enabled(device)) == raised(
        torch, lambda lib: lib.is_autocast_enabled(device))
    theirs = raised(torch, lambda lib: lib.get_autocast_dtype(device))
    ours = raised(tg, lambda lib: lib.get_autocast_dtype(device))
    if theirs is None:
        assert repr(tg.get_autocast_dtype(device)) == repr(torch.get_autocast_dtype(device))
    else:
        assert ours == theirs


def test_autocast_defaults_and_legacy_forms(autocast_reset):
    for lib in (tg, torch):
        assert lib.is_autocast_enabled() is False
        assert lib.is_autocast_enabled(device_type="cpu") is False
        assert lib.is_autocast_cache_enabled() is True
        assert lib.clear_autocast_cache() is None
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        assert tg.is_autocast_cpu_enabled() is False
        assert repr(tg.get_autocast_gpu_dtype()) == "torch.float16"
        tg.set_autocast_cpu_enabled(False)
        tg.set_autocast_cpu_dtype(tg.float16)
        assert tg.get_autocast_cpu_dtype() is tg.float16
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.is_autocast_cpu_enabled()
        torch.get_autocast_gpu_dtype()
        torch.set_autocast_cpu_enabled(False)
        torch.set_autocast_cpu_dtype(torch.float16)
        assert torch.get_autocast_cpu_dtype() is torch.float16
    assert warning_texts(ours) == warning_texts(theirs)
    assert [w.category for w in ours] == [w.category for w in theirs] == [DeprecationWarning] * 5


def test_autocast_setters_round_trip(autocast_reset):
    for lib in (tg, torch):
        lib.set_autocast_dtype("cpu", lib.float16)
        assert lib.get_autocast_dtype("cpu") is lib.float16
        lib.set_autocast_dtype(device_type="cuda", dtype=lib.float32)
        assert lib.get_autocast_dtype("cuda") is lib.float32
        lib.set_autocast_cache_enabled(False)
        assert lib.is_autocast_cache_enabled() is False
        # device types tracegrad has no tensors on keep the flag as torch keeps it
        lib.set_autocast_enabled("mps", True)
        assert lib.is_autocast_enabled("mps") is True
        lib.set_autocast_enabled(True)  # the legacy form: CUDA's flag
        assert lib.is_autocast_enabled() is True and lib.is_autocast_enabled("cuda") is True
        lib.set_autocast_enabled(False)


def test_autocast_nesting_counter(autocast_reset):
    for lib in (tg, torch):
        assert [lib.autocast_increment_nesting(), lib.autocast_increment_nesting()] == [1, 2]
        assert [lib.autocast_decrement_nesting(), lib.autocast_decrement_nesting()] == [1, 0]
        with lib.autocast("cpu", enabled=False):
            assert lib.autocast_increment_nesting() == 2
            assert lib.autocast_decrement_nesting() == 1
            assert lib.is_autocast_enabled("cpu") is False
        assert lib.autocast_decrement_nesting() == -1
        assert lib.autocast_increment_nesting() == 0


def test_disabled_autocast_region_restores_the_state(autocast_reset):
    for lib in (tg, torch):
        lib.set_autocast_enabled("mps", True)
        with lib.autocast("mps", enabled=False, cache_enabled=False):
            assert lib.is_autocast_enabled("mps") is False
            assert lib.is_autocast_cache_enabled() is False
        assert lib.is_autocast_enabled("mps") is True
        assert lib.is_autocast_cache_enabled() is True


def test_enabling_cpu_autocast_switches_the_casts_on(autocast_reset):
    for lib in (tg, torch):
        for enable, args in ((lib.set_autocast_enabled, ("cpu", True)), (lib.set_autocast_cpu_enabled, (True,))):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                enable(*args)
            assert lib.is_autocast_enabled("cpu") is True
            assert lib.mm(lib.ones(1, 1), lib.ones(1, 1)).dtype is lib.bfloat16
            lib.set_autocast_enabled("cpu", False)
        assert lib.mm(lib.ones(1, 1), lib.ones(1, 1)).dtype is lib.float32


@pytest.mark.parametrize("program", [
    lambda lib: lib.is_autocast_enabled(1),
    lambda lib: lib.is_autocast_enabled("cpu", 1),
    lambda lib: lib.is_autocast_enabled(device_type=None),
    lambda lib: lib.set_autocast_enabled(),
    lambda lib: lib.set_autocast_enabled(1),
    lambda lib: lib.set_autocast_enabled("cpu"),
    lambda lib: lib.set_autocast_enabled("cpu", 1),
    lambda lib: lib.set_autocast_enabled("meta", False),
    lambda lib: lib.set_autocast_enabled("foo", False),
    lambda lib: lib.get_autocast_dtype(),
    lambda lib: lib.get_autocast_dtype(1),
    lambda lib: lib.set_autocast_dtype("cpu", 3),
    lambda lib: lib.set_autocast_dtype(1, lib.float16),
    lambda lib: lib.set_autocast_dtype("foo", lib.float16),
    lambda lib: lib.set_autocast_cpu_dtype(1),
    lambda lib: lib.set_autocast_cache_enabled(1),
    lambda lib: lib.set_autocast_cache_enabled(),
    lambda lib: lib.set_autocast_cpu_enabled(1),
    lambda lib: lib.autocast_increment_nesting(1),
])
def test_autocast_state_errors(program, autocast_reset):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ours, theirs = raised(tg, program), raised(torch, program)
    assert theirs is not None
    if theirs[1].startswith("get_autocast_dtype() missing"):  # a C++-parsed signature; ours is Python's
        assert ours[0] == "TypeError" and "device_type" in ours[1]
    else:
        assert ours == theirs


# ---- 3. DLPack -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool", "complex64", "float16"])
def test_from_dlpack_shares_memory_both_ways(dtype):
    source = torch.arange(6).reshape(2, 3).to(getattr(torch, dtype))
    ours = tg.from_dlpack(source)
    assert ours.dtype is getattr(tg, dtype) and tuple(ours.shape) == (2, 3)
    np.testing.assert_array_equal(ours.numpy(), source.numpy())
    value = True if dtype == "bool" else 7
    ours[1, 2] = value  # a write through tracegrad shows in torch
    assert source[1, 2].item() == value
    source[0, 0] = value  # and the other way
    assert ours[0, 0].item() == value

    back = torch.from_dlpack(ours)  # tracegrad -> torch
    assert back.dtype is getattr(torch, dtype)
    back[0, 1] = value
    assert ours[0, 1].item() == value
    assert back.data_ptr() == source.data_ptr()


def test_dlpack_keeps_strides_and_views():
    base = tg.arange(12.0).reshape(3, 4)
    view = base.t()[1:]
    theirs = torch.from_dlpack(view)
    assert theirs.stride() == view.stride() and tuple(theirs.shape) == tuple(view.shape)
    theirs[0, 0] = -1.0
    assert base[0, 1].item() == -1.0
    expanded = torch.ones(3).expand(2, 3)
    ours = tg.from_dlpack(expanded)
    assert ours.stride() == expanded.stride() == (0, 1)


def test_capsules_and_utils_dlpack():
    assert tg.utils.dlpack.from_dlpack is tg.from_dlpack
    assert tg.utils.dlpack.to_dlpack is tg.to_dlpack
    assert [m.name for m in tg.utils.dlpack.DLDeviceType] == [m.name for m in torch.utils.dlpack.DLDeviceType]
    assert [int(m) for m in tg.utils.dlpack.DLDeviceType] == [int(m) for m in torch.utils.dlpack.DLDeviceType]
    x = tg.arange(4)
    capsule = tg.utils.dlpack.to_dlpack(x)
    assert type(capsule).__name__ == "PyCapsule"
    theirs = torch.utils.dlpack.from_dlpack(capsule)
    theirs[0] = 9
    assert x[0].item() == 9
    t = torch.arange(4)
    ours = tg.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    ours[1] = 8
    assert t[1].item() == 8
    # a capsule is consumed once
    capsule = torch.utils.dlpack.to_dlpack(t)
    tg.from_dlpack(capsule)
    assert raised(tg, lambda lib: lib.from_dlpack(capsule)) == raised(torch, lambda lib: lib.from_dlpack(capsule))


def test_dlpack_device_and_numpy_interop():
    for lib in (tg, torch):
        device = lib.ones(2).__dlpack_device__()
        assert device == (1, 0) and type(device[0]).__name__ == "DLDeviceType"
        array = np.from_dlpack(lib.arange(3.0))
        array[0] = 5.0
    source = np.arange(3.0)
    ours = tg.from_dlpack(source)
    ours.add_(1.0)
    np.testing.assert_array_equal(source, [1.0, 2.0, 3.0])
    assert tg.from_dlpack(source, device="cpu").data_ptr() == source.ctypes.data


def test_from_dlpack_copy_flag():
    t = torch.arange(4.0)
    ours = tg.from_dlpack(t, copy=True)
    ours[0] = 5.0
    assert t[0].item() == 0.0
    own = tg.arange(3.0)
    assert tg.from_dlpack(own) is not own and tg.from_dlpack(own).data_ptr() == own.data_ptr()
    assert tg.from_dlpack(own, copy=True).data_ptr() != own.data_ptr()


@pytest.mark.parametrize("program", [
    lambda lib: lib.from_dlpack(lib.ones(2, requires_grad=True)),
    lambda lib: np.from_dlpack(lib.ones(2, requires_grad=True)),
    lambda lib: lib.ones(2, requires_grad=True).__dlpack__(),
    lambda lib: lib.ones(2).__dlpack__(stream=1),
    lambda lib: lib.from_dlpack(3),
    lambda lib: lib.from_dlpack([1, 2]),
    lambda lib: lib.from_dlpack(np.arange(3.0), device="meta"),
    lambda lib: lib.from_dlpack(np.arange(3.0), device=3),
])
def test_dlpack_errors(program):
    assert raised(tg, program) == raised(torch, program)


def test_dlpack_requires_grad_across_libraries():
    # each library refuses to hand over (or take) a tensor that requires grad
    theirs = raised(torch, lambda lib: tg.from_dlpack(torch.ones(2, requires_grad=True)))
    ours = raised(torch, lambda lib: torch.from_dlpack(tg.ones(2, requires_grad=True)))
    assert ours == theirs == ("BufferError", "Can't export tensors that require gradient, use tensor.detach()")
    # torch's legacy to_dlpack does not check, and neither does ours
    assert type(tg.utils.dlpack.to_dlpack(tg.ones(2, requires_grad=True))).__name__ == "PyCapsule"
    shared = tg.from_dlpack(torch.ones(2, requires_grad=True).detach())
    assert not shared.requires_grad


# ---- 4. old Tensor methods --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64", "complex128"])
@pytest.mark.parametrize("method", ["cfloat", "cdouble"])
def test_cfloat_cdouble(dtype, method):
    def program(lib):
        x = (lib.arange(6) - 2).reshape(2, 3).to(getattr(lib, dtype))
        y = getattr(x, method)()
        return y, y is x

    (ours, ours_same), (theirs, theirs_same) = program(tg), program(torch)
    assert repr(ours.dtype) == repr(theirs.dtype) and ours_same == theirs_same
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("method", ["cfloat", "cdouble"])
def test_cfloat_cdouble_gradients(method):
    def program(lib):
        x = lib.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
        y = getattr(x, method)()
        (y * y.conj() * (1 + 2j)).real.sum().backward()
        return y.grad_fn.name(), x.grad

    (our_node, our_grad), (their_node, their_grad) = program(tg), program(torch)
    assert our_node == their_node == "ToCopyBackward0"
    np.testing.assert_allclose(our_grad.numpy(), their_grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
                                   "float64", "complex64", "complex128"])
def test_storage_type(dtype):
    ours = tg.ones(2, dtype=getattr(tg, dtype)).storage_type()
    theirs = torch.ones(2, dtype=getattr(torch, dtype)).storage_type()
    assert ours.__name__ == theirs.__name__ and repr(ours) == repr(theirs)
    assert ours is getattr(tg, theirs.__name__)


def test_legacy_storage_classes():
    for lib in (tg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = lib.FloatStorage(3)
            assert type(s) is lib.TypedStorage and len(s) == 3 and s.dtype is lib.float32
            assert lib.LongStorage([1, 2]).tolist() == [1, 2]
            assert isinstance(lib.ones(2).storage(), lib.FloatStorage)
            assert not isinstance(lib.ones(2).storage(), lib.DoubleStorage)
            assert lib.FloatStorage.dtype is lib.float32


def test_reinforce_was_removed():
    for program in (lambda lib: lib.ones(2).reinforce(1), lambda lib: lib.ones(2).reinforce()):
        assert raised(tg, program) == raised(torch, program)


@pytest.mark.parametrize("shape,new", [((2, 3), (3, 2)), ((2, 3), (6,)), ((4,), (2, 2)), ((2, 3), (7,))])
def test_resize_and_resize_as(shape, new):
    def program(lib, as_tensor):
        x = lib.arange(float(np.prod(shape))).reshape(shape).requires_grad_()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = x.resize_as(lib.zeros(new)) if as_tensor else x.resize(*new)
        (y * lib.arange(float(np.prod(new))).reshape(new)).sum().backward()
        return y.detach(), y.grad_fn.name(), x.grad, warning_texts(caught)

    for as_tensor in (False, True):
        theirs = raised(torch, lambda lib, as_tensor=as_tensor: program(lib, as_tensor))
        if theirs is not None:
            assert raised(tg, lambda lib, as_tensor=as_tensor: program(lib, as_tensor)) == theirs
            continue
        (y, node, grad, texts), (ty, tnode, tgrad, ttexts) = program(tg, as_tensor), program(torch, as_tensor)
        np.testing.assert_array_equal(y.numpy(), ty.numpy())
        np.testing.assert_array_equal(grad.numpy(), tgrad.numpy())
        assert node == tnode == "ResizeBackward" and texts == ttexts


def test_resize_aliases_and_rejects_a_tuple():
    for lib in (tg, torch):
        x = lib.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = x.resize(3, 2)
        assert y._base is x and y.data_ptr() == x.data_ptr()
    program = lambda lib: lib.ones(2, 3).resize((3, 2))  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert raised(tg, program) == raised(torch, program)


def test_resize_as_in_place_exists():
    def program(lib):
        x = lib.arange(6.0).reshape(2, 3)
        return x.resize_as_(lib.ones(3, 2)).shape

    assert tuple(program(tg)) == tuple(program(torch))
    program = lambda lib: lib.ones(2, requires_grad=True).resize_as_(lib.ones(3))  # noqa: E731
    assert raised(tg, program) == raised(torch, program)


def test_package_is_tracegrad():
    assert tracegrad is tg or tg is torch
