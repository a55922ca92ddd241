"""``torch.set_warn_always``: warnings PyTorch emits once per process unless warn-always is on."""

from __future__ import annotations

import os
import re
import sys
import types
import warnings
from collections.abc import Callable

import numpy as np

_ALWAYS = [False]
# (as the modules' code objects name their files: the loader's paths, as ``__file__`` has them)
_OWN_DIR = os.path.dirname(__file__) + os.sep
_SEEN: set = set()


def set_warn_always(mode: bool) -> None:
    _ALWAYS[0] = bool(mode)


def is_warn_always_enabled() -> bool:
    return _ALWAYS[0]


def _first_time(key: str, repeat_under_warn_always: bool = True) -> bool:
    """Whether a once-a-process warning is due: always with warn-always on (unless the warning ignores it), which
    (as TORCH_WARN_ONCE's) does not use up its one time; else the first time only."""
    if repeat_under_warn_always and _ALWAYS[0]:
        return True
    if key in _SEEN:
        return False
    _SEEN.add(key)
    return True


def warn_once(key: str, message: str, category=UserWarning, stacklevel: int = 3) -> None:
    if _first_time(key):
        warnings.warn(message, category, stacklevel=stacklevel)


def warn_once_at_caller(key: str, message: str, category: type[Warning] = UserWarning, *,
                        repeat_under_warn_always: bool = True) -> None:
    """``warn_at_caller`` once a process (unless warnings are set to always show): torch's ``TORCH_WARN_ONCE``.
    ``repeat_under_warn_always=False``: once a process whatever ``set_warn_always`` says (a warning torch guards
    with a flag of its own)."""
    if _first_time(key, repeat_under_warn_always):
        warn_at_caller(message, category)


def warn_at_caller(message: str, category: type[Warning]) -> None:
    """Warn at the innermost frame outside tracegrad: where a warning that torch's C++ code raises (NumPy's, from
    a ``__float__`` it calls) is shown, and past the filters that keep tracegrad's own NumPy warnings quiet."""
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_OWN_DIR):
        frame = frame.f_back
    module_globals = frame.f_globals
    # (code run by exec/eval in globals without a __name__ is module "<string>", as warnings.warn names it: an
    # explicit module=None makes warn_explicit drop the warning)
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                           module=module_globals.get("__name__", "<string>"),
                           registry=module_globals.setdefault("__warningregistry__", {}))


def warn_at_own_line(message: str, category: type[Warning]) -> None:
    """Warn at the calling line in tracegrad, shown past the filters that keep tracegrad's own NumPy warnings
    quiet: where torch's Python code (``torch/_tensor.py``) has NumPy warn at its own line."""
    frame = sys._getframe(1)
    warning = category(message)
    warning._tracegrad_shown = True  # (let through by _unless_from_tracegrad)
    # (no module name: the filter that ignores tracegrad's RuntimeWarnings matches it; warnings then names the
    # module by its file, as for code without one)
    warnings.warn_explicit(warning, category, frame.f_code.co_filename, frame.f_lineno,
                           registry=frame.f_globals.setdefault("__warningregistry__", {}))


# ---- NumPy's floating-point warnings from tracegrad's own kernels --------------------------------------------

_NUMPY_DIR = os.path.dirname(np.__file__) + os.sep
# The words of NumPy's floating-point warnings ("invalid value encountered in log", "overflow encountered in cast"):
# only those are tracegrad's own NumPy warnings at its own lines; another RuntimeWarning located there (the
# ambiguous ``kl_divergence`` one, a user's hook warning with ``stacklevel=2``) is shown as torch shows it.
_FP_MESSAGE = r"(divide by zero|overflow|underflow|invalid value) encountered in "
_is_fp_message = re.compile(_FP_MESSAGE).match
# NumPy's ComplexWarning as tracegrad's own code casts complex values to real (``copy_``, ``.float()``): PyTorch's
# copy warns a UserWarning in the same words, once per process (TORCH_WARN_ONCE), at the caller's line
_COMPLEX_TO_REAL = "Casting complex values to real discards the imaginary part"
_ComplexWarning = np.exceptions.ComplexWarning


def silence_numpy_in_tracegrad() -> None:
    """Keep NumPy's floating-point warnings from tracegrad's own kernels out of sight, as PyTorch computes ``1 / 0``
    or ``log(-1)`` silently; the user's own NumPy code warns as before.

    An import-time filter ignores them. A filter the program installs later comes first: ``"error"`` makes them
    exceptions, which the operators catch and answer by running their kernel again quietly (``aten_vec.quietly``);
    the actions that show a warning (``"always"``, ``"default"``, ``"module"``, ``"once"``, as pytest's capture and
    ``pytest.warns`` install) reach ``warnings._showwarnmsg``, which this wraps to drop them there. Only a warning
    about to be shown pays for the check, so the operators' path when nothing warns stays as it was."""
    warnings.filterwarnings("ignore", message=_FP_MESSAGE, category=RuntimeWarning, module=r"tracegrad(\.|$)")
    if not getattr(warnings._showwarnmsg, "_tracegrad", False):
        warnings._showwarnmsg = _unless_from_tracegrad(warnings._showwarnmsg)


def complex_to_real() -> None:
    """PyTorch's warning as its copy casts complex values to real: a UserWarning at the caller's line, once per
    process unless warn-always is on (TORCH_WARN_ONCE). Also where a strict filter made NumPy's ComplexWarning an
    exception before it copied (the copy then reads the real part)."""
    if _first_time(_COMPLEX_TO_REAL):
        warn_at_caller(_COMPLEX_TO_REAL, UserWarning)


Show = Callable[[warnings.WarningMessage], None]


def _unless_from_tracegrad(show: Show) -> Show:
    def showwarnmsg(msg: warnings.WarningMessage) -> None:
        if issubclass(msg.category, RuntimeWarning) and not getattr(msg.message, "_tracegrad_shown", False):
            frame = sys._getframe(1)  # (the code that warned: this is called from C, by ``warnings.warn``'s own)
            text = str(msg.message)
            if _raised_in_tracegrad(msg.filename, text, frame):
                _forget(msg, frame)
                return
            if msg.category is _ComplexWarning and text == _COMPLEX_TO_REAL and msg.filename.startswith(_OWN_DIR):
                _forget(msg, frame)  # (NumPy's, as tracegrad casts complex values to real: torch's own words)
                complex_to_real()
                return
        show(msg)

    showwarnmsg._tracegrad = True  # type: ignore[attr-defined]
    return showwarnmsg


def _raised_in_tracegrad(filename: str, text: str, frame: types.FrameType | None) -> bool:
    """Whether a warning at ``filename`` came from tracegrad's code: at its own line, or inside NumPy's Python code
    (``np.var``'s sums) that tracegrad called. ``frame``: the innermost frame running when it was raised."""
    if filename.startswith(_OWN_DIR):
        return _is_fp_message(text) is not None
    if not filename.startswith(_NUMPY_DIR):
        return False
    while frame is not None and frame.f_code.co_filename.startswith(_NUMPY_DIR):
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.startswith(_OWN_DIR)


def _forget(msg: warnings.WarningMessage, frame: types.FrameType | None) -> None:
    """Undo the records by which ``"default"``, ``"module"`` and ``"once"`` show a warning once, in the registry of
    the module it was raised in (CPython keys ``"module"`` and ``"once"`` on the text alone there): the user's own
    identical warning from NumPy's same code (``np.var``'s sums) is still shown the first time."""
    text, category = str(msg.message), msg.category
    at_frame = frame is not None and frame.f_code.co_filename == msg.filename
    registry = frame.f_globals.get("__warningregistry__") if at_frame else None
    if registry is None:
        warnings.onceregistry.pop((text, category), None)  # (``"once"`` where the module keeps no registry)
        return
    for key in ((text, category), (text, category, 0), (text, category, msg.lineno)):
        registry.pop(key, None)
