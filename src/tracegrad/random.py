"""``torch.random``: the default CPU generator's seeding and state. The functions are the very objects exported
at the top level (``tracegrad.manual_seed is tracegrad.random.manual_seed``), as in PyTorch."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterable, Iterator

from ._factories import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng",
           "thread_safe_generator", "default_generator"]

_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(devices: Iterable[int] | None = None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str | None = None) -> Iterator[None]:
    """Restore the random state on exit: the CPU generator always, and the listed devices' generators."""
    if device_type == "meta":
        yield
        return
    import tracegrad

    # no accelerator API here: torch falls back to "cuda" when none is current
    device_type = device_type or "cuda"
    device_mod = getattr(tracegrad, device_type, None)
    if device_mod is None:
        raise RuntimeError(f"torch has no module of `{device_type}`, you should register "
                           "a module by `torch._register_device_module`.")
    global _fork_rng_warned_already
    if not enabled:
        yield
        return
    if devices is None:
        num_devices = device_mod.device_count()
        if num_devices > 1 and not _fork_rng_warned_already:
            upper = device_type.upper()
            warnings.warn(
                f"{upper} reports that you have {num_devices} available devices, and "
                f"you have used {_caller} without explicitly specifying which devices are being used. "
                f"For safety, we initialize *every* {upper} device by default, which can "
                f"be quite slow if you have a lot of {upper}s. If you know that you are only"
                f" making use of a few {upper} devices, set the environment variable "
                f"{upper}_VISIBLE_DEVICES or the '{_devices_kw}' keyword argument of {_caller} "
                "with the set of devices you are actually using. For example, if you are using CPU only, "
                "set device.upper()_VISIBLE_DEVICES= or devices=[]; if you are using device 0 only, "
                f"set {upper}_VISIBLE_DEVICES=0 or devices=[0].  To initialize all devices "
                f"and suppress this warning, set the '{_devices_kw}' keyword argument to "
                f"`range(torch.{device_type}.device_count())`.",
                stacklevel=3,
            )
            _fork_rng_warned_already = True
        devices = list(range(num_devices))
    else:
        devices = list(devices)
    # device generators are forked only where the device module keeps per-device state
    get_state = getattr(device_mod, "get_rng_state", None)
    device_states = [get_state(device) for device in devices] if get_state else []
    cpu_rng_state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(cpu_rng_state)
        for device, state in zip(devices, device_states, strict=False):
            device_mod.set_rng_state(state, device)


def thread_safe_generator() -> Generator | None:
    """The DataLoader thread worker's generator; ``None`` (the global one) outside such a worker.
    tracegrad's DataLoader has no thread workers, so this is always ``None``."""
    return None
