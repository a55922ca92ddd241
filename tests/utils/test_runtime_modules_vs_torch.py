"""The boilerplate modules of PyTorch scripts against torch's CPU build: random, backends, cpu, mps and amp."""

from __future__ import annotations

import inspect
import warnings

import pytest
import torch
from _precision_state import FRESH, precisions_kept, restore_state

import tracegrad as tg

NO_GPU = not tg.cuda.is_available()


@pytest.fixture(autouse=True)
def precisions_restored():
    """The float32 precision settings some tests here change, put back as they were (other tests read them)."""
    with precisions_kept(tg, torch):
        yield


def test_random_names_are_the_top_level_objects():
    for name in ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "default_generator"):
        assert getattr(tg.random, name) is getattr(tg, name), name
        # (importing torch._dynamo, which some other tests do, wraps torch.manual_seed)
        assert inspect.unwrap(getattr(torch.random, name)) is inspect.unwrap(getattr(torch, name)), name
    assert not hasattr(tg, "fork_rng") and not hasattr(torch, "fork_rng")
    assert tg.random.thread_safe_generator() is torch.random.thread_safe_generator() is None


def test_random_state_round_trip_and_seeds():
    tg.random.manual_seed(123)
    assert tg.random.initial_seed() == 123
    state = tg.random.get_rng_state()
    first = tg.rand(5)
    tg.random.set_rng_state(state)
    assert tg.equal(first, tg.rand(5))
    new_seed = tg.random.seed()
    assert tg.random.initial_seed() == new_seed and 0 <= new_seed < 2**64


def test_fork_rng_restores_the_state():
    for lib in (tg, torch):
        lib.manual_seed(7)
        with lib.random.fork_rng():
            inside = lib.rand(3)
        assert lib.equal(inside, lib.rand(3))
        with lib.random.fork_rng(enabled=False):
            lib.rand(3)
        lib.manual_seed(7)
        lib.rand(3)
        with lib.random.fork_rng(devices=[], device_type="cpu"):
            lib.rand(10)
        with lib.random.fork_rng(device_type="meta"):
            pass


def _backend_values(lib):
    b = lib.backends
    return {
        "fp32": b.fp32_precision,
        "cudnn": (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32,
                  b.cudnn.is_available(), b.cudnn.version(), b.cudnn.benchmark_limit, b.cudnn.fp32_precision,
                  b.cudnn.depthwise_kernel),
        "cuda": (b.cuda.is_built(), b.cuda.matmul.allow_tf32, b.cuda.matmul.allow_fp16_reduced_precision_reduction,
                 b.cuda.matmul.allow_bf16_reduced_precision_reduction, b.cuda.matmul.fp32_precision,
                 b.cuda.flash_sdp_enabled(), b.cuda.mem_efficient_sdp_enabled(), b.cuda.math_sdp_enabled(),
                 b.cuda.cudnn_sdp_enabled(), b.cuda.is_flash_attention_available(),
                 b.cuda.fp16_bf16_reduction_math_sdp_allowed()),
        "mps": (b.mps.is_available(), b.mps.is_built()),
        "mkldnn": (b.mkldnn.is_available(), b.mkldnn.enabled, b.mkldnn.deterministic, b.mkldnn.fp32_precision),
        "openmp": b.openmp.is_available(),
        "mkl": b.mkl.is_available(),
        "opt_einsum": (b.opt_einsum.is_available(), b.opt_einsum.enabled, b.opt_einsum.strategy),
        "cpu": b.cpu.get_cpu_capability(),
    }


def test_backend_answers_match_torch():
    # (from a new process's precision settings: a test elsewhere in this process may have changed either library's)
    for lib in (tg, torch):
        restore_state(lib, FRESH)
    assert _backend_values(tg) == _backend_values(torch)


def _set_outcome(module, attr, value):
    old = getattr(module, attr)
    try:
        setattr(module, attr, value)
    except Exception as error:  # noqa: BLE001 - the type and message are compared
        return type(error).__name__, str(error)
    result = getattr(module, attr)
    setattr(module, attr, old)
    return ("ok", result)


SETTINGS = [
    ("cudnn", "enabled", False), ("cudnn", "enabled", 1), ("cudnn", "benchmark", True), ("cudnn", "benchmark", None),
    ("cudnn", "deterministic", True), ("cudnn", "deterministic", 2.0), ("cudnn", "allow_tf32", False),
    ("cudnn", "allow_tf32", "y"), ("cudnn", "fp32_precision", "bad"), ("cudnn", "depthwise_kernel", "bad"),
    ("cudnn", "depthwise_kernel", "native"),
    ("cuda.matmul", "allow_tf32", True), ("cuda.matmul", "allow_tf32", 1),
    ("cuda.matmul", "allow_fp16_reduced_precision_reduction", False),
    ("cuda.matmul", "allow_fp16_reduced_precision_reduction", "x"),
    ("cuda.matmul", "allow_bf16_reduced_precision_reduction", (False,)),
    ("cuda.matmul", "allow_bf16_reduced_precision_reduction", ()),
    ("cuda.matmul", "fp32_precision", "bad"),
    ("mkldnn", "enabled", False), ("mkldnn", "enabled", 1), ("mkldnn", "deterministic", "x"),
    ("opt_einsum", "enabled", True), ("opt_einsum", "enabled", False),
]


@pytest.mark.parametrize(("module", "attr", "value"), SETTINGS)
def test_setting_backend_flags_matches_torch(module, attr, value):
    outcomes = []
    for lib in (tg, torch):
        target = lib.backends
        for part in module.split("."):
            target = getattr(target, part)
        outcomes.append(_set_outcome(target, attr, value))
    assert outcomes[0] == outcomes[1]


def test_matmul_allow_tf32_follows_float32_matmul_precision():
    for lib in (tg, torch):
        lib.backends.cuda.matmul.allow_tf32 = True
        assert lib.get_float32_matmul_precision() == "high"
        lib.backends.cuda.matmul.allow_tf32 = False
        assert lib.get_float32_matmul_precision() == "highest"
    with pytest.raises(AttributeError, match="Unknown attribute nope"):
        tg.backends.cuda.matmul.nope  # noqa: B018


def test_sdp_kernel_is_deprecated_and_restores_flags():
    for lib in (tg, torch):
        with pytest.warns(FutureWarning, match="sdp_kernel\\(\\)` is deprecated"), \
                lib.backends.cuda.sdp_kernel(enable_flash=False):
            assert not lib.backends.cuda.flash_sdp_enabled()
        assert lib.backends.cuda.flash_sdp_enabled()


def test_cpu_and_mps_modules_match_torch():
    for lib in (tg, torch):
        assert lib.cpu.is_available() and lib.cpu.is_initialized()
        assert lib.cpu.device_count() == 1 and lib.cpu.current_device() == "cpu"
        assert lib.cpu.synchronize() is None and lib.cpu.set_device("cpu") is None
        s = lib.cpu.Stream()
        with lib.cpu.stream(s):
            assert lib.cpu.current_stream() is s
        assert lib.cpu.current_stream() is not s
        with lib.cpu.StreamContext(None):
            pass
        assert lib.cpu.Event().query() is True
        assert lib.mps.is_available() is False and lib.mps.device_count() == 0
        assert lib.mps.manual_seed(0) is None
    for name, args in [("synchronize", ()), ("empty_cache", ()), ("seed", ()), ("get_rng_state", ()),
                       ("current_allocated_memory", ()), ("driver_allocated_memory", ()),
                       ("recommended_max_memory", ()), ("set_per_process_memory_fraction", (0.5,))]:
        messages = []
        for lib in (tg, torch):
            with pytest.raises(RuntimeError) as info:
                getattr(lib.mps, name)(*args)
            messages.append(str(info.value))
        assert messages[0] == messages[1], name


def _caught(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.skipif(not NO_GPU, reason="the CPU-build answers need a machine without the GPU back end")
@pytest.mark.parametrize("make", [
    lambda lib: lib.amp.GradScaler("cuda"), lambda lib: lib.amp.GradScaler(), lambda lib: lib.cuda.amp.GradScaler(),
    lambda lib: lib.amp.GradScaler("cuda", enabled=False),
])
def test_grad_scaler_without_cuda_is_disabled_like_torch(make):
    results = []
    for lib in (tg, torch):
        scaler, caught = _caught(lambda lib=lib: make(lib))
        model = lib.nn.Linear(2, 1)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        loss = model(lib.ones(3, 2)).sum()
        scaled = scaler.scale(loss)
        scaled.backward()
        before = model.weight.detach().clone()
        assert scaler.unscale_(opt) is None
        stepped = scaler.step(opt)
        scaler.update()
        results.append((caught, scaler.is_enabled(), scaled is loss, stepped, scaler.get_scale(), scaler.state_dict(),
                        scaler._get_growth_tracker(), scaler.load_state_dict({}),
                        bool((model.weight.detach() != before).any()), [scaler.scale([1, 2]), scaler.scale(3)]))
    assert results[0] == results[1]


def test_grad_scaler_cpu_scales_and_skips_inf_steps_like_torch():
    results = []
    for lib in (tg, torch):
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
        model = lib.nn.Linear(2, 1)
        with lib.no_grad():
            model.weight.fill_(1.0)
            model.bias.fill_(0.0)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        trace = []
        for x in (lib.ones(1, 2), lib.full((1, 2), float("inf")), lib.ones(1, 2), lib.ones(1, 2)):
            opt.zero_grad()
            scaled = scaler.scale(model(x).sum())
            scaled.backward()
            scaler.step(opt)
            scaler.update()
            trace.append((scaled.item(), scaler.get_scale(), scaler._get_growth_tracker(),
                          model.weight.detach().tolist()))
        results.append((trace, scaler.state_dict()))
    assert results[0] == results[1]
    for lib in (tg, torch):
        scaler = lib.amp.GradScaler("cpu")
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.1)
        scaler.scale(lib.ones(1))
        scaler.unscale_(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
            scaler.unscale_(opt)


def test_autocast_disabled_is_a_no_op_and_enabled_casts():
    outcomes = []
    for lib in (tg, torch):
        with lib.autocast("cpu", enabled=False):
            y = lib.ones(2) * 2

        @lib.amp.autocast("cpu", enabled=False)
        def f(x):
            return x + 1

        _, cuda_warnings = _caught(lambda lib=lib: lib.autocast("cuda"))
        _, cpu_warnings = _caught(lambda lib=lib: lib.cpu.amp.autocast(enabled=False))
        outcomes.append((y.tolist(), f(lib.ones(1)).tolist(), cuda_warnings if NO_GPU else None, cpu_warnings))
    assert outcomes[0] == outcomes[1]
    with tg.autocast("cpu"), tg.amp.autocast("cpu", dtype=tg.float16):  # (enabled: they cast)
        assert tg.mm(tg.ones(1, 1), tg.ones(1, 1)).dtype is tg.float16
    with pytest.raises(TypeError, match="requires a callable"):
        tg.autocast("cpu", enabled=False)(3)


@pytest.mark.parametrize(("flag_enabled", "flag_strategy"), [(True, None), (None, "auto"), (False, None)])
def test_opt_einsum_flags_check_like_torch(flag_enabled, flag_strategy):
    outcomes = []
    for lib in (tg, torch):
        try:
            with lib.backends.opt_einsum.flags(enabled=flag_enabled, strategy=flag_strategy):
                outcomes.append(("ok", lib.backends.opt_einsum.enabled, lib.backends.opt_einsum.strategy))
        except ValueError as error:
            outcomes.append(("ValueError", str(error)))
    assert outcomes[0] == outcomes[1]
