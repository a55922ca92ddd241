"""torch.autocast beyond cpu/cuda, as torch 2.13's CPU build has it: every device type with an autocast dispatch
key (xpu, hpu, ipu, xla, mtia, maia...) is available, warns and disables itself for a dtype other than
float16/bfloat16, and records its flag when enabled; ``privateuseone`` asserts that no backend module is
registered; ``__enter__`` checks ``enabled``/``dtype``/``cache_enabled`` as torch's setters do."""

from __future__ import annotations

import warnings

import pytest
from _lib import tg, torch

_DEVICE_TYPES = ["cpu", "cuda", "ipu", "xpu", "hip", "maia", "xla", "lazy", "mps", "meta", "hpu", "mtia",
                 "privateuseone"]


def _outcome(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn()
        except Exception as error:  # noqa: BLE001 - the error is the result compared
            result = (type(error).__name__, str(error))
    return result, [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("device_type", _DEVICE_TYPES)
def test_is_autocast_available(device_type):
    assert _outcome(lambda: tg.amp.is_autocast_available(device_type)) == \
        _outcome(lambda: torch.amp.is_autocast_available(device_type))


@pytest.mark.parametrize("device_type", _DEVICE_TYPES)
def test_autocast_with_an_unsupported_dtype_on_any_device_type(device_type):
    def run(lib):
        def region():
            with lib.autocast(device_type, dtype=lib.float64):
                return lib.is_autocast_enabled(device_type), str(lib.get_autocast_dtype(device_type))

        return _outcome(region)

    assert run(tg) == run(torch)


@pytest.mark.parametrize("device_type", ["xpu", "mps", "hpu", "mtia"])
def test_autocast_enabled_on_a_device_type_without_tensors_records_its_flag(device_type):
    def run(lib):
        states = []
        with lib.autocast(device_type, dtype=lib.float16):
            states.append(lib.is_autocast_enabled(device_type))
            with lib.autocast(device_type, enabled=False):
                states.append(lib.is_autocast_enabled(device_type))
            states.append(lib.is_autocast_enabled(device_type))
        states.append(lib.is_autocast_enabled(device_type))
        return states

    assert run(tg) == run(torch)


# (a region whose __enter__ raised keeps the enabled flag and dtype it set: "xpu" with its default dtype, which the
# test sets back; "cpu" only where the check comes before anything is set)
@pytest.mark.parametrize(("device_type", "kwargs"), [
    ("cpu", {"enabled": 0}), ("cpu", {"enabled": None}), ("xpu", {"enabled": 0}), ("xpu", {"cache_enabled": 0}),
    ("xpu", {"cache_enabled": "yes"}),
])
def test_autocast_enter_checks_its_arguments_types(device_type, kwargs):
    def run(lib):
        def region():
            with lib.autocast(device_type, dtype=lib.float64 if device_type == "cpu" else lib.float16, **kwargs):
                return lib.is_autocast_cache_enabled()

        before = lib.autocast_increment_nesting() - 1
        lib.autocast_decrement_nesting()
        outcome = _outcome(region)
        after = lib.autocast_increment_nesting() - 1
        state = after - before, lib.is_autocast_enabled(device_type), lib.is_autocast_cache_enabled()
        # (torch raised inside __enter__, leaving the region's state set: set it back for the next tests)
        for _ in range(after + 1):
            lib.autocast_decrement_nesting()
        lib.set_autocast_enabled(device_type, False)
        lib.set_autocast_cache_enabled(True)
        return outcome, state

    assert run(tg) == run(torch)
