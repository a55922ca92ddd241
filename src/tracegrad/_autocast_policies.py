"""The operators CPU autocast casts the arguments of, and their policies: data only, importing nothing but the
state, so that ``guard_errors`` (which runs while the operator modules are being imported) can read it without
importing ``tracegrad.amp``. The casts themselves are in amp/cpu_policy.py."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ._state import STATE

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
            from .amp.cpu_policy import call_with_policy

            return call_with_policy(policy, fn, args, kwargs)
        return fn(*args, **kwargs)

    return autocast_entry
