"""Loading the compared libraries, and the few helpers workloads need to stay library-agnostic.

A workload never names tracegrad or torch: it receives a module ``lib`` with PyTorch's API and a
``device`` string, and builds its tensors through :func:`tensor`, so the same code times both.
NumPy baselines receive an array module ``xp`` instead: NumPy on ``cpu``, CuPy on ``cuda`` (the column keeps
the name ``numpy``, since the targets name the hand-written baseline by it).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from benchmarks.harness import REPO_ROOT

DEFAULT_LIBS = ("tracegrad", "torch", "numpy")
# Libraries with PyTorch's API; the rest (numpy) are array modules used for hand-written baselines.
TORCHLIKE = ("tracegrad", "torch")
# The engine under test: targets are stated as ratios of this library to a baseline.
SUBJECT = "tracegrad"


@dataclass(frozen=True)
class Lib:
    name: str
    module: ModuleType
    device: str = "cpu"

    @property
    def torchlike(self) -> bool:
        return self.name in TORCHLIKE


def _import_tracegrad() -> ModuleType:
    try:
        mod = importlib.import_module("tracegrad")
    except ImportError:
        # Not installed into the venv: use the checkout's src/ layout directly.
        sys.path.insert(0, str(REPO_ROOT / "src"))
        mod = importlib.import_module("tracegrad")
    # src/tracegrad/ without an __init__.py imports as an empty namespace package; that is not an engine.
    if not hasattr(mod, "tensor"):
        raise ImportError("tracegrad has no `tensor` yet (engine not built)")
    return mod


def _import_torch() -> ModuleType:
    import torch

    torch.set_num_threads(1)
    # Only settable before the first parallel region; the intra-op threads above are what matter here.
    with contextlib.suppress(RuntimeError):
        torch.set_num_interop_threads(1)
    return torch


def load_libs(names: list[str], device: str = "cpu") -> tuple[list[Lib], list[str]]:
    """Import the requested libraries in order; one that fails is skipped with a note, not fatal."""
    libs: list[Lib] = []
    notes: list[str] = []
    for name in names:
        try:
            if name == "tracegrad":
                mod = _import_tracegrad()
            elif name == "torch":
                mod = _import_torch()
            elif name == "numpy":
                mod = np
            else:
                raise ValueError(f"unknown library {name!r} (known: {', '.join(DEFAULT_LIBS)})")
            if device == "cuda" and mod is np:
                mod = importlib.import_module("cupy")  # (the hand-written baseline, on the GPU)
        except Exception as exc:  # noqa: BLE001 - report and carry on with the others
            notes.append(f"{name}: skipped ({type(exc).__name__}: {exc})")
            continue
        libs.append(Lib(name, mod, device))
    return libs, notes


# ---------------------------------------------------------------------------------------------------------
# Library-agnostic helpers for torch-like libraries


def tensor(lib: ModuleType, data: np.ndarray, device: str = "cpu", requires_grad: bool = False) -> Any:
    """``lib.tensor(data)`` on ``device``; the device keyword is left out on cpu so an engine that
    does not accept it yet still runs."""
    if device == "cpu":
        return lib.tensor(data, requires_grad=requires_grad)
    return lib.tensor(data, device=device, requires_grad=requires_grad)


def to_numpy(t: Any, device: str = "cpu") -> np.ndarray:
    t = t.detach()
    if device != "cpu":
        t = t.cpu()
    return np.array(t.numpy(), dtype=np.float64)


def host_array(a: Any) -> np.ndarray:
    """A baseline's array (NumPy, or CuPy on the GPU) as a float64 NumPy array."""
    return np.asarray(a.get() if hasattr(a, "get") else a, dtype=np.float64)


def sync_fn(lib: Lib) -> Any:
    """What a bench calls before stopping the clock: nothing on cpu; on cuda, wait for the queued kernels."""
    if lib.device == "cpu":
        return lambda: None
    if lib.torchlike:
        return lib.module.cuda.synchronize
    return lib.module.cuda.runtime.deviceSynchronize  # (CuPy)
