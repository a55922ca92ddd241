"""``repr`` of tensors in PyTorch's format, e.g. ``tensor([2., 4.], grad_fn=<MulBackward0>)``."""

# (no ``from __future__ import annotations``: dataclasses.fields(PRINT_OPTS) shows each field's type, a class, as
# torch's do, not its text)
import contextlib
import dataclasses
from collections.abc import Iterator

import numpy as np

from .backend import dtypes as _dt


# (torch's class, by its name: a notebook showing ``torch._tensor_str.PRINT_OPTS`` prints
# ``__PrinterOptions(precision=4, ...)``, and code reads it with ``dataclasses.asdict``)
@dataclasses.dataclass
class __PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


OPTIONS = __PrinterOptions()
PRINT_OPTS = OPTIONS  # (torch's name for it: code saves, reads and writes the options through it)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    if profile == "default":
        OPTIONS.precision, OPTIONS.threshold, OPTIONS.edgeitems, OPTIONS.linewidth = 4, 1000, 3, 80
    elif profile == "short":
        OPTIONS.precision, OPTIONS.threshold, OPTIONS.edgeitems, OPTIONS.linewidth = 2, 1000, 2, 80
    elif profile == "full":
        OPTIONS.precision, OPTIONS.threshold, OPTIONS.edgeitems, OPTIONS.linewidth = 4, float("inf"), 3, 80
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            setattr(OPTIONS, name, value)
    OPTIONS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current options, as keyword arguments that ``set_printoptions`` takes back."""
    return dataclasses.asdict(OPTIONS)


@contextlib.contextmanager
def printoptions(**kwargs) -> Iterator[None]:
    """``set_printoptions(**kwargs)`` for the duration of a ``with`` block."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """PyTorch's ``_Formatter``: integer, fixed or scientific notation for the whole tensor, with the width
    taken from its nonzero finite values (zeros, infinities and NaN are padded to it)."""

    def __init__(self, values: np.ndarray) -> None:
        self.kind = values.dtype.kind
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if self.kind not in "fc":
            self.max_width = max((len(self.format_raw(v)) for v in flat), default=1)
            return
        vals = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if vals.size == 0:
            return  # no valid number: zeros print as "0.", the rest as nan / inf
        p = OPTIONS.precision
        absvals = np.abs(vals)
        lo, hi = absvals.min(), absvals.max()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        # (the width follows the notation finally used, set_printoptions(sci_mode=...) included)
        if OPTIONS.sci_mode is not None:
            self.sci_mode = OPTIONS.sci_mode
        else:
            self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or (not self.int_mode and lo < 1.0e-4))
        if self.sci_mode:
            self.max_width = max(len(f"{v:.{p}e}") for v in vals)
        elif self.int_mode:
            self.max_width = max(len(f"{v:.0f}") + 1 for v in vals)
        else:
            self.max_width = max(len(f"{v:.{p}f}") for v in vals)

    def format_raw(self, v) -> str:
        if self.kind == "b":
            return str(bool(v))
        if self.kind in "iu":
            return str(int(v))
        v = float(v)
        p = OPTIONS.precision
        if self.sci_mode:
            return f"{v:.{p}e}"
        if self.int_mode:
            return f"{v:.0f}" + ("" if np.isnan(v) or np.isinf(v) else ".")
        return f"{v:.{p}f}"

    def format(self, v) -> str:
        return self.format_raw(v).rjust(self.max_width)


class _ComplexFormatter:
    """PyTorch's pair of formatters for complex tensors: the real and imaginary parts are each formatted
    as a real tensor would be, then joined as ``re+imj`` (the imaginary part left-aligned)."""

    def __init__(self, values: np.ndarray) -> None:
        self.real = _Formatter(np.ascontiguousarray(values.real))
        self.imag = _Formatter(np.ascontiguousarray(values.imag))
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, v) -> str:
        real_str = self.real.format(v.real)
        imag_str = (self.imag.format(v.imag) + "j").lstrip()
        if imag_str[0] in "+-":
            return real_str + imag_str
        return real_str + "+" + imag_str

    format_raw = format


def _formatter(values: np.ndarray):
    return _ComplexFormatter(values) if values.dtype.kind == "c" else _Formatter(values)


def _summarize(a: np.ndarray) -> np.ndarray:
    """The values a summarized repr shows, from which its format is chosen (PyTorch's get_summarized_data)."""
    e = OPTIONS.edgeitems
    if a.ndim == 0:
        return a
    if not e:  # (PyTorch's: a vector keeps all its values, as a[-0:] is all of it; higher ranks show none)
        return a if a.ndim == 1 else np.empty((0,) * a.ndim, a.dtype)
    if a.shape[0] > 2 * e:
        parts = [a[:e], a[-e:]]
        return np.concatenate([_summarize(p) for p in parts]) if a.ndim == 1 else \
            np.concatenate([np.stack([_summarize(x) for x in p]) for p in parts])
    return np.stack([_summarize(x) for x in a]) if a.ndim > 1 else a


def _format_array(a: np.ndarray, fmt: _Formatter, indent: int, summarize: bool) -> str:
    if a.ndim == 0:
        return fmt.format_raw(a.item())
    e = OPTIONS.edgeitems
    if a.ndim == 1:
        if summarize and not e:
            items = ["..."]
        elif summarize and a.shape[0] > 2 * e:
            items = [fmt.format(v) for v in a[:e]] + [" ..."] + [fmt.format(v) for v in a[-e:]]
        else:
            items = [fmt.format(v) for v in a]
        per_line = max(1, (OPTIONS.linewidth - indent) // (fmt.max_width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = list(range(a.shape[0]))
    pieces = []
    if summarize and a.shape[0] > 2 * e:
        rows = list(range(e)) + [None] + list(range(a.shape[0] - e, a.shape[0]))
    for r in rows:
        pieces.append("..." if r is None else _format_array(a[r], fmt, indent + 1, summarize))
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(pieces) + "]"


def tensor_repr(t) -> str:
    from ._tensor import Tensor
    from .nn.parameter import Parameter

    # (torch's _str_intern: a subclass other than Parameter shows its class's name)
    kind = type(t)
    prefix = "tensor(" if kind is Tensor or kind is Parameter else f"{kind.__name__}("
    data = t._data
    if not isinstance(data, np.ndarray):
        data = data.get()
    dt = _dt.from_numpy_dtype(data.dtype)
    if dt is _dt.bfloat16:  # (printed as torch prints it: converted to float first)
        data = data.astype(np.float32)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    summarize = data.size > OPTIONS.threshold
    if data.size == 0:
        body = "[]"
        if data.shape != (0,):
            suffixes.append(f"size={tuple(data.shape)}")
    else:
        if not OPTIONS.edgeitems:  # (PyTorch's: with no edge items a summary shows no shape, so the suffix does)
            suffixes.append(f"size={tuple(data.shape)}")
        shown = _summarize(data) if summarize else data
        fmt = _formatter(shown)
        body = _format_array(data, fmt, len(prefix), summarize)
    default_float = _dt.DEFAULT.value
    # (an empty tensor shows every dtype but the default float one; a filled one hides the default complex one,
    # int64 and bool too, which its values show)
    if data.size == 0:
        implied = (default_float,)
    else:
        default_complex = _dt.complex128 if default_float is _dt.float64 else _dt.complex64
        implied = (default_float, default_complex, _dt.int64, _dt.bool_)
    if dt not in implied:
        suffixes.append(f"dtype={dt!r}")
    try:
        fn = t.grad_fn
    except RuntimeError:  # a view whose history may not be regenerated
        suffixes.append("grad_fn=<Invalid>")
    else:
        if fn is not None:  # (PyTorch shows a C++ node's type name: name() without its torch::autograd:: prefix)
            suffixes.append(f"grad_fn=<{fn.name().rpartition('::')[2]}>")
        elif t.requires_grad:  # a view requires grad through its base
            suffixes.append("requires_grad=True")
    if t._is_param:
        suffixes = [s for s in suffixes if s != "requires_grad=True"] + (["requires_grad=True"] if t._rg else [])
    tangent = _tangent(t)
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")
    text = _add_suffixes(prefix + body, suffixes, len(prefix))
    if t._is_param and kind is not Parameter and kind is not Tensor:
        # (torch's _str_intern marks a parameter of a class of its own, a Parameter subclass's or a Tensor subclass's)
        text = f"Parameter({text})"
    return "Parameter containing:\n" + text if issubclass(kind, Parameter) else text  # (Parameter.__repr__)


def _tangent(t):
    """The forward-mode tangent at the innermost active dual level, which PyTorch's repr shows; None outside."""
    from .autograd import forward_ad

    if forward_ad._current_level < 0:
        return None
    return forward_ad.get_tangent(t, forward_ad._current_level)


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    """PyTorch's _add_suffixes: each suffix on the last line while it fits in the line width, else on a new
    line (its length measure counts two more than the line, as PyTorch's does)."""
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > OPTIONS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(parts) + ")"
