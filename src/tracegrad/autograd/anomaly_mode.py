"""Anomaly detection: record the forward stack of each node; on a backward error, show it; check NaNs."""

from __future__ import annotations

import functools
import os
import traceback
import warnings
from collections.abc import Callable

from .._state import STATE
from ..backend.dtypes import is_differentiable_np


class detect_anomaly:
    """Context manager (and decorator) that turns on anomaly detection."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = STATE.anomaly
        self.check_nan = check_nan
        self.prev_check_nan = STATE.anomaly_check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        _parsed_set_anomaly_enabled()(True, self.check_nan)

    def __exit__(self, *exc) -> None:
        _parsed_set_anomaly_enabled()(self.prev, self.prev_check_nan)

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return func(*args, **kwargs)

        return wrapper


class set_detect_anomaly:
    """Turn anomaly detection on or off, immediately and as a context manager."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = STATE.anomaly
        self.prev_check_nan = STATE.anomaly_check_nan
        _parsed_set_anomaly_enabled()(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _parsed_set_anomaly_enabled()(self.prev, self.prev_check_nan)


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """``torch.set_anomaly_enabled``: switch anomaly mode for good (``set_detect_anomaly`` without restoring)."""
    STATE.anomaly = enabled
    STATE.anomaly_check_nan = check_nan


@functools.cache
def _parsed_set_anomaly_enabled() -> Callable:
    """``set_anomaly_enabled`` behind torch's argument parser, as torch's context managers call it: a flag that is
    not a bool (``detect_anomaly(check_nan=1)``, ``set_detect_anomaly("yes")``) is refused in the parser's words
    before anomaly mode changes."""
    from .._arg_parser import guard_errors

    return guard_errors("set_anomaly_enabled", set_anomaly_enabled)


def is_anomaly_enabled() -> bool:
    return STATE.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    return STATE.anomaly_check_nan


def record_forward_trace(node) -> None:
    # As PyTorch: the forward stack lives in the node's metadata under "traceback_", and a node made while
    # another node runs (double backward) points to it under "parent_".
    meta = node.metadata
    meta["traceback_"] = traceback.format_list(_visible_frames(traceback.extract_stack()[:-1]))
    parent = _current_parent()
    if parent is not None:
        meta["parent_"] = parent


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _visible_frames(frames: list) -> list:
    """The forward stack as PyTorch records it: PyTorch's operators are C++, so its stack ends at the innermost
    Python frame, the caller's (or one of PyTorch's own Python layers: ``nn`` modules and functions, a custom
    Function's ``apply``). tracegrad's operator machinery below that point is left out; the tracegrad frames
    that stand for those Python layers of PyTorch stay."""
    last_outside = -1
    for i, frame in enumerate(frames):
        if not frame.filename.startswith(_PACKAGE_DIR):
            last_outside = i
    kept = frames[:last_outside + 1]
    for frame in frames[last_outside + 1:]:
        if not _mirrors_torch_python(frame):
            break
        kept.append(frame)
    return kept


def _mirrors_torch_python(frame) -> bool:
    relative = frame.filename[len(_PACKAGE_DIR):].replace(os.sep, "/")
    if relative.startswith("nn/"):
        return True
    return relative == "autograd/function.py" and frame.name == "apply"


_RUNNING: list = []


def _current_parent():
    return _RUNNING[-1] if _RUNNING else None


def run_node(node, inputs):
    """Run a node under anomaly mode: show its forward trace on error, check its outputs for NaN."""
    _RUNNING.append(node)
    try:
        outputs = node.apply(inputs)
    except Exception:
        _warn_trace(node)
        raise
    finally:
        _RUNNING.pop()
    if STATE.anomaly_check_nan:
        import numpy as np

        for i, g in enumerate(outputs):
            if g is not None and is_differentiable_np(g._data.dtype) and np.isnan(g._data).any():
                _warn_trace(node)
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    return outputs


def _warn(message: str) -> None:
    # A report must never replace the error being reported: when warnings are turned into errors, PyTorch's
    # handler prints the report to stderr instead.
    try:
        warnings.warn(message, UserWarning, stacklevel=4)
    except Warning:
        import sys

        sys.stderr.write(f"UserWarning: {message}\n")


def _warn_trace(node) -> None:
    meta = node._metadata or {}
    stack = meta.get("traceback_")
    if stack is None:
        _warn(f"Error detected in {node.name()}. No forward pass information available. Enable detect "
              "anomaly during forward pass for more information.")
        return
    _warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
          + "".join(stack))
    parent = meta.get("parent_")
    while parent is not None:
        pmeta = parent._metadata or {}
        pstack = pmeta.get("traceback_")
        if pstack is None:
            break
        _warn(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of forward call that "
              "induced the previous calculation:\n" + "".join(pstack))
        parent = pmeta.get("parent_")
