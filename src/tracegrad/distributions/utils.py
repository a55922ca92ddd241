"""Helpers shared by the distributions (as ``torch.distributions.utils``)."""

from __future__ import annotations

from collections.abc import Callable
from functools import update_wrapper
from typing import Any, Generic, TypeVar

import tracegrad as torch
from tracegrad import Tensor

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant

# torch.types._Number: the numbers a distribution takes as parameters, Python's own (and np.float64, a float
# subclass); not numbers.Number, which a NumPy int or np.float32 is too, and which torch refuses
_Number = (int, float, bool)

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]


def broadcast_all(*values) -> tuple[Tensor, ...]:
    """Broadcast tensors and numbers together; numbers take the first tensor's dtype (else the default)."""
    if not all(isinstance(v, (Tensor, *_Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        dtype = next((v.dtype for v in values if isinstance(v, Tensor)), torch.get_default_dtype())
        values = tuple(v if isinstance(v, Tensor) else torch.tensor(v, dtype=dtype) for v in values)
    return torch.broadcast_tensors(*values)


def _standard_normal(shape, dtype, device) -> Tensor:
    return torch.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    if is_binary:
        return torch.sigmoid(logits)
    return torch.nn.functional.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamp to ``[eps, 1 - eps]`` with the dtype's machine epsilon."""
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return torch.log(ps_clamped) - torch.log1p(-ps_clamped)
    return torch.log(ps_clamped)


T = TypeVar("T", contravariant=True)
R = TypeVar("R", covariant=True)


class lazy_property(Generic[T, R]):  # (subscriptable, as PyTorch's)
    """A non-data descriptor computing the value once (with grad enabled) and caching it on the instance."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """Looks like a property to documentation tools and like a lazy_property to argument validation."""

    def __init__(self, wrapped: Callable[[Any], Any]) -> None:
        property.__init__(self, wrapped)


def _tril_mask(n: int, diag: int) -> Tensor:
    arange = torch.arange(n)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower-triangular entries of (batched) square matrices, in row order."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of :func:`tril_matrix_to_vec`."""
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    eps = torch.finfo(vec.dtype).eps
    if round(n) - n > eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + torch.Size((n, n)))
    mat[..., _tril_mask(n, diag)] = vec
    return mat


def _batch_shape_of(raw_args: tuple, broadcast: Tensor) -> torch.Size:
    """Scalar parameters give an empty batch shape; otherwise the broadcast parameters' shape."""
    return torch.Size() if all(isinstance(a, _Number) for a in raw_args) else broadcast.size()


def _set_probs_or_logits(dist: Any, probs: Any, logits: Any) -> Any:
    """Store exactly one of ``probs`` / ``logits`` (as a tensor) on ``dist``, and return the raw argument."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    if probs is not None:
        (dist.probs,) = broadcast_all(probs)
        dist._param = dist.probs
        return probs
    (dist.logits,) = broadcast_all(logits)
    dist._param = dist.logits
    return logits


def _empty_like_shape(param: Tensor, shape) -> Tensor:
    """An uninitialised tensor of ``shape`` with the parameter's dtype (PyTorch's ``param.new(shape)``)."""
    return torch.empty(shape, dtype=param.dtype)


class _BinaryProbs:
    """``probs`` <-> ``logits`` (log-odds) of the two-outcome families, each built lazily from the other."""

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> torch.Size:
        return self._param.size()

    def _new(self, *args, **kwargs) -> Tensor:
        return self._param.new(*args, **kwargs)
