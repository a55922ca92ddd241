"""``LinearCrossEntropyOptions``: the opt-in to the chunked path of ``nn.functional.linear_cross_entropy``
(PyTorch's ``torch.nn.modules.linear_cross_entropy_options``), with torch's validation, defaults and repr."""

from __future__ import annotations

import dataclasses
from typing import Literal, NamedTuple

from ...backend import dtypes as _dtypes

__all__ = ["LinearCrossEntropyOptions"]


class _AutoDefault(NamedTuple):
    acc_policy: str
    chunking_method: str


# torch's picks for the "auto" sentinels, keyed by (device type, input dtype); tracegrad has no bfloat16, so its
# rows are absent (they could never be looked up).
_AUTO_DEFAULTS: dict[tuple[str, object], _AutoDefault] = {
    ("cuda", _dtypes.float16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cpu", _dtypes.float16): _AutoDefault("accurate", "aspect_ratio"),
}
_AUTO_FALLBACK = _AutoDefault("compact", "aspect_ratio:2")
_ACC_POLICIES = frozenset({"auto", "accurate", "balanced", "compact"})
_SUPPORTED_ACC_DTYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _check_chunking_method(method) -> None:
    if method is None or method == "auto":
        return
    name, sep, factor = method.partition(":")
    if not sep:
        factor = "1"
    if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
        raise ValueError(f"invalid chunking_method: {method!r}")


def _aspect_ratio_chunk_size(method: str, num_batches: int, in_features: int, num_classes: int) -> int:
    """Rows per chunk so a chunk's logits take about the memory of the input (divided by the ``:N`` factor)."""
    factor = int(method.split(":", 1)[1]) if ":" in method else 1
    target = _ceil_div(num_batches, _ceil_div(num_classes, in_features))
    chunk_size = 1 << (target - 1).bit_length()  # the next power of two >= target
    return min(chunk_size // factor, num_batches)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Configuration for the chunked implementation of ``linear_cross_entropy`` (``options=None``: the
    reference path). Unsupported configurations fall back to the reference path with a warning."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: object | None = None

    def __post_init__(self) -> None:
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        _check_chunking_method(self.chunking_method)
        if not (self.batch_chunk_size is None
                or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _SUPPORTED_ACC_DTYPES:
            raise ValueError(
                f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, torch.float32, torch.float64}}, "
                f"got {self.acc_dtype!r}. Pass acc_dtype=None to let the op pick automatically."
            )

    @staticmethod
    def _resolve_auto_acc_dtype(dtype, device):
        """float32 for half input on a device with a mixed-precision product (the CPU), else None."""
        if device is None or dtype != _dtypes.float16:
            return None
        if device.type == "cpu":
            return _dtypes.float32
        if device.type == "cuda":  # (torch also asks for compute capability 7.0, which every CuPy GPU has)
            from ... import cuda

            return _dtypes.float32 if cuda.is_available() else None
        return None

    def _compute_batch_chunk_size(self, num_batches: int, in_features: int, num_classes: int,
                                  method: str | None = None) -> int:
        method = str(method if method is not None else self.chunking_method)
        if method.startswith("aspect_ratio"):
            return _aspect_ratio_chunk_size(method, num_batches, in_features, num_classes)
        raise AssertionError(f"unhandled chunking_method: {method!r}")

    def _resolved_auto(self, dtype, device) -> tuple:
        """(acc_policy, chunking_method) with the "auto" sentinels replaced by the (device, dtype) picks."""
        acc_policy, chunking_method = self.acc_policy, self.chunking_method
        if chunking_method == "auto" and self.batch_chunk_size is not None:
            chunking_method = None  # an explicit size wins over the heuristic
        if acc_policy == "auto" or chunking_method == "auto":
            picks = _AUTO_DEFAULTS.get((device.type, dtype), _AUTO_FALLBACK) if device is not None else _AUTO_FALLBACK
            acc_policy = picks.acc_policy if acc_policy == "auto" else acc_policy
            chunking_method = picks.chunking_method if chunking_method == "auto" else chunking_method
        return acc_policy, chunking_method

    def _adjust(self, num_batches, in_features, num_classes, dtype, device=None) -> LinearCrossEntropyOptions:
        """The options resolved for one call: no "auto" left, a concrete chunk size and accumulation dtype."""
        acc_policy, chunking_method = self._resolved_auto(dtype, device)
        batch_chunk_size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size, num_batches)
        if chunking_method is not None:
            batch_chunk_size = self._compute_batch_chunk_size(num_batches, in_features, num_classes, chunking_method)
            if self.batch_chunk_size is not None and self.batch_chunk_size != batch_chunk_size:
                raise ValueError(
                    f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method ('{chunking_method}') give "
                    f"different chunk sizes ({self.batch_chunk_size} vs {batch_chunk_size}); pass only one."
                )
        acc_dtype = self.acc_dtype
        if acc_dtype is None:
            auto_acc = self._resolve_auto_acc_dtype(dtype, device) if self.acc_policy == "auto" else None
            acc_dtype = auto_acc if auto_acc is not None else dtype
        return dataclasses.replace(self, acc_policy=acc_policy, chunking_method=chunking_method,
                                   batch_chunk_size=max(1, batch_chunk_size), acc_dtype=acc_dtype)
