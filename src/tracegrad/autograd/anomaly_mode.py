"""Anomaly detection: record the forward stack of each node; on a backward error, show it; check NaNs."""

from __future__ import annotations

import traceback
import warnings

from .._state import STATE


class detect_anomaly:
    """Context manager (and decorator) that turns on anomaly detection."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = STATE.anomaly
        self.check_nan = check_nan
        self.prev_check_nan = STATE.anomaly_check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self) -> None:
        STATE.anomaly = True
        STATE.anomaly_check_nan = self.check_nan

    def __exit__(self, *exc) -> None:
        STATE.anomaly = self.prev
        STATE.anomaly_check_nan = self.prev_check_nan

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
        STATE.anomaly = mode
        STATE.anomaly_check_nan = check_nan

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        STATE.anomaly = self.prev
        STATE.anomaly_check_nan = self.prev_check_nan


def is_anomaly_enabled() -> bool:
    return STATE.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    return STATE.anomaly_check_nan


def record_forward_trace(node) -> None:
    stack = traceback.format_stack()[:-3]
    parent = _current_parent()
    node._anomaly_trace = (stack, parent)


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
            if g is not None and g._data.dtype.kind in "fc" and np.isnan(g._data).any():
                _warn_trace(node)
                raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")
    return outputs


def _warn_trace(node) -> None:
    info = node._anomaly_trace
    if info is None:
        warnings.warn(f"Error detected in {node.name()}. No forward pass information available. Enable detect "
                      "anomaly during forward pass for more information.", UserWarning, stacklevel=3)
        return
    stack, parent = info
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                  + "".join(stack), UserWarning, stacklevel=3)
    while parent is not None:
        pinfo = parent._anomaly_trace
        if pinfo is None:
            break
        warnings.warn(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of forward call that "
                      "induced the previous calculation:\n" + "".join(pinfo[0]), UserWarning, stacklevel=3)
        parent = pinfo[1]
