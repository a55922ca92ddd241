"""CPU autocast: which operators torch casts the arguments of, to what, and the cast itself.

The three lists are torch 2.13's ``AutocastCPU`` registrations (ATen's ``autocast_mode.cpp``, checked against the
installed build's dispatch table), as schema names. An operator listed runs with every floating-point CPU tensor
among its arguments (alone, optional or in a list; float64 ones excepted) cast:

- ``lower_precision_fp``: to autocast's dtype (bfloat16 unless set otherwise);
- ``fp32``: to float32;
- ``promote``: to the widest of its floating arguments, float32 over the lower dtype (float64 ones ignored).

Then the operator runs with autocast off, as torch's ``ExcludeDispatchKeyGuard`` runs it: the operators it is made
of (``linear``'s ``addmm``, ``cross_entropy_loss``'s ``log_softmax``) are not cast again. Casts of float32 leaves
that require grad to the lower dtype are cached until the outermost autocast region ends (torch's weight cache:
the first cast is reused, even after the weight changed in place).

Hooks: ``OpDef.__call__`` (behind ``STATE.special``, which CPU autocast sets) for operators tracegrad declares, and
``guard_errors`` for the ones it composes in Python (``linear``, ``conv2d``, the losses...), whose guarded entry
points carry torch's operator names.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._state import STATE

LOWER_PRECISION_FP = "lower_precision_fp"
FP32 = "fp32"
PROMOTE = "promote"

_LOWER_PRECISION_FP_OPS = (
    "conv1d", "conv1d.padding", "conv2d", "conv2d.padding", "conv3d", "conv3d.padding", "bmm", "mm",
    "linalg_vecdot", "baddbmm", "addmm", "_addmm_activation", "addbmm", "linear", "_convolution.deprecated",
    "matmul", "conv_tbc", "mkldnn_rnn_layer", "conv_transpose1d", "conv_transpose2d.input",
    "conv_transpose3d.input", "prelu", "scaled_dot_product_attention", "_native_multi_head_attention",
)
_FP32_OPS = (
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "prod.dim_int", "prod.dim_Dimname",
    "quantile", "quantile.scalar", "nanquantile", "nanquantile.scalar", "stft", "stft.center", "cdist",
    "grid_sampler_2d", "_grid_sampler_2d_cpu_fallback", "grid_sampler_3d", "trace", "view_as_complex", "cholesky",
    "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "max_pool3d",
    "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d", "reflection_pad2d",
    "replication_pad1d", "replication_pad2d", "replication_pad3d", "mse_loss", "cosine_embedding_loss", "nll_loss",
    "nll_loss2d", "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss", "l1_loss",
    "huber_loss", "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
    "ctc_loss.IntList", "ctc_loss.Tensor", "kl_div", "multilabel_margin_loss", "binary_cross_entropy_with_logits",
    "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2",
    "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft", "linalg_cond", "linalg_cond.p_str",
    "linalg_matrix_rank", "linalg_matrix_rank.tol_tensor", "linalg_matrix_rank.atol_rtol_tensor",
    "linalg_matrix_rank.atol_rtol_float", "linalg_solve", "linalg_cholesky", "linalg_svdvals", "linalg_eigvals",
    "linalg_eigvalsh", "linalg_inv", "linalg_householder_product", "linalg_tensorinv", "linalg_tensorsolve",
    "fake_quantize_per_tensor_affine", "geqrf", "_lu_with_info", "qr", "svd", "triangular_solve",
    "fractional_max_pool2d", "fractional_max_pool3d", "adaptive_max_pool3d", "multilabel_margin_loss_forward",
    "linalg_qr", "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh", "linalg_lstsq", "linalg_inv_ex",
)
_PROMOTE_OPS = ("stack", "cat", "index_copy", "index_copy.dimname")

# schema name (``name`` or ``name.overload``) -> policy
POLICIES: dict[str, str] = {
    **dict.fromkeys(_LOWER_PRECISION_FP_OPS, LOWER_PRECISION_FP),
    **dict.fromkeys(_FP32_OPS, FP32),
    **dict.fromkeys(_PROMOTE_OPS, PROMOTE),
}
# The names of the Python entry points tracegrad composes an operator in (``guard_errors``' names): each
# overload listed above shares its policy with the others of its name, and ``nll_loss_nd`` (torch's F.nll_loss)
# only reshapes before it calls nll_loss/nll_loss2d, which cast its input to float32
_COMPOSITE_POLICIES: dict[str, str] = {
    **{name.partition(".")[0]: policy for name, policy in POLICIES.items()},
    "nll_loss_nd": FP32,
}


def composite_policy(name: str) -> str | None:
    """The policy of the Python entry point guarded under torch's operator name ``name``, if autocast casts it."""
    return _COMPOSITE_POLICIES.get(name)


def padding_policy(mode: str, padded_dims: int) -> str | None:
    """The policy of the operator ``F.pad(mode=...)`` calls for that many padded dims (torch lists
    ``reflection_pad1d``/``2d`` and ``replication_pad1d``/``2d``/``3d``)."""
    kind = {"reflect": "reflection", "replicate": "replication"}.get(mode)
    return None if kind is None else POLICIES.get(f"{kind}_pad{padded_dims}d")


def with_autocast(name: str, fn: Callable) -> Callable:
    """``fn`` (torch's operator ``name``, composed in Python) with its arguments cast while CPU autocast is on; off,
    one test of ``STATE.special`` more."""
    policy = _COMPOSITE_POLICIES[name]

    @functools.wraps(fn)
    def autocast_entry(*args: Any, **kwargs: Any) -> Any:
        if STATE.special and STATE.autocast is not None:
            return call_with_policy(policy, fn, args, kwargs)
        return fn(*args, **kwargs)

    return autocast_entry


# ---- the casts --------------------------------------------------------------------------------------------------

# id of the float32 leaf -> (the leaf, its cast): the leaf is held, so no other tensor takes its id meanwhile
_cached_casts: dict[int, tuple] = {}


def clear_cache() -> None:
    _cached_casts.clear()


def call_with_policy(policy: str, fn: Callable, args: tuple, kwargs: dict) -> Any:
    """Run ``fn`` as torch's autocast kernel of that policy runs an operator: arguments cast, autocast off inside.
    An ``out=`` call is another operator (``mm.out``), which torch's autocast lists do not name."""
    lower = STATE.autocast
    if "out" in kwargs and kwargs["out"] is not None:
        return _without_autocast(lower, fn, args, kwargs)
    STATE.autocast = None  # (the casts themselves are not cast again either)
    try:
        to = _target_dtype(policy, lower, args, kwargs)
        args = tuple(_cast_argument(to, lower, a) for a in args)
        kwargs = {key: _cast_argument(to, lower, value) for key, value in kwargs.items()}
        return fn(*args, **kwargs)
    finally:
        STATE.autocast = lower


def _without_autocast(lower: Any, fn: Callable, args: tuple, kwargs: dict) -> Any:
    STATE.autocast = None
    try:
        return fn(*args, **kwargs)
    finally:
        STATE.autocast = lower


def _target_dtype(policy: str, lower: Any, args: tuple, kwargs: dict) -> Any:
    from ..backend.dtypes import float32

    if policy is LOWER_PRECISION_FP:
        return lower
    if policy is FP32:
        return float32
    promoted = lower
    for value in (*args, *kwargs.values()):
        for tensor in _tensors_in(value):
            promoted = _prioritize(promoted, tensor, lower)
    return promoted


def _prioritize(current: Any, tensor: Any, lower: Any) -> Any:
    """torch's ``at::autocast::prioritize``: float32 wins over the lower dtype; float64 tensors are ignored."""
    from ..backend.dtypes import float32, float64

    if not _is_eligible_device_and_kind(tensor):
        return current
    dtype = tensor.dtype
    if dtype is float64:
        return current
    if current is float32 or dtype is float32:
        return float32
    if current is lower and dtype is lower:
        return lower
    raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")


def _tensors_in(value: Any) -> tuple:
    from .._tensor import Tensor

    if isinstance(value, Tensor):
        return (value,)
    if value.__class__ is list or value.__class__ is tuple:
        return tuple(v for v in value if isinstance(v, Tensor))
    return ()


def _cast_argument(to: Any, lower: Any, value: Any) -> Any:
    from .._tensor import Tensor

    if isinstance(value, Tensor):
        return cached_cast(to, lower, value)
    if (value.__class__ is list or value.__class__ is tuple) and any(isinstance(v, Tensor) for v in value):
        return value.__class__(cached_cast(to, lower, v) if isinstance(v, Tensor) else v for v in value)
    return value


def _is_eligible_device_and_kind(tensor: Any) -> bool:
    return tensor.device.type == "cpu" and tensor.is_floating_point()


def cached_cast(to: Any, lower: Any, tensor: Any) -> Any:
    """torch's ``cached_cast``: an eligible tensor (a floating CPU tensor, not float64) of another dtype cast with
    ``to``; casts of float32 leaves that require grad to the lower dtype are kept while the cache is on."""
    from ..backend.dtypes import float32, float64
    from .autocast_state import is_autocast_cache_enabled

    dtype = tensor.dtype
    if dtype is to or dtype is float64 or not _is_eligible_device_and_kind(tensor):
        return tensor
    cacheable = (to is lower and dtype is float32 and tensor.requires_grad and tensor.is_leaf
                 and tensor._base is None and is_autocast_cache_enabled())
    if not cacheable:
        return tensor.to(to)
    cached = _cached_casts.get(id(tensor))
    if cached is not None:
        return cached[1]
    cast = tensor.to(to)
    _cached_casts[id(tensor)] = (tensor, cast)
    return cast
