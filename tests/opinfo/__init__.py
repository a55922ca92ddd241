"""OpInfo-style operator database: one entry per operator configuration, shared by the generic tests.

``op_db`` lists every entry; ``REQUIRED_OPS`` is the operator set the project must cover (checked by
``tests/ops/test_ops_generic.py::test_required_ops_covered``). See README.md in this folder.
"""

from __future__ import annotations

from . import (
    db_attention,
    db_binary,
    db_fft,
    db_fractional,
    db_linalg,
    db_linalg_extra,
    db_nn,
    db_reductions,
    db_shape,
    db_tensor_extras,
    db_unary,
    db_views,
)
from .core import OpInfo

_NN = "nn.functional."


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# The required operator set, by public path (entry names must match these exactly).
REQUIRED_OPS: tuple[str, ...] = _words(
    """
    neg abs exp exp2 expm1 log log1p log2 log10 sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh sigmoid
    logit erf erfc sign floor ceil round trunc frac reciprocal square pow clamp lerp addcmul addcdiv where
    nan_to_num
    add sub mul div remainder fmod maximum minimum atan2 hypot copysign eq ne lt le gt ge
    logical_and logical_or logical_xor logical_not bitwise_and bitwise_or bitwise_xor bitwise_not
    sum mean prod max min amax amin var std var_mean norm logsumexp cumsum cumprod argmax argmin all any
    median sort topk kthvalue
    matmul mm bmm mv dot outer addmm baddbmm einsum tensordot kron trace tril triu linalg.norm
    linalg.vector_norm linalg.inv linalg.det linalg.slogdet linalg.solve linalg.cholesky linalg.qr
    linalg.eigh linalg.svd
    cat stack hstack vstack flatten unflatten Tensor.repeat tile repeat_interleave flip roll rot90 gather
    scatter scatter_add scatter_reduce index_select index_add index_copy index_fill index_put
    Tensor.masked_fill masked_scatter take take_along_dim narrow_copy movedim select_scatter slice_scatter
    diagonal_scatter as_strided_scatter
    Tensor.view reshape transpose permute t squeeze unsqueeze Tensor.expand select narrow diagonal unbind
    split chunk Tensor.unfold
    """
) + tuple(
    _NN + n
    for n in _words(
    """
    linear bilinear relu relu6 leaky_relu elu selu celu gelu silu mish softplus hardtanh hardswish softmax
    log_softmax cross_entropy nll_loss mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy
    binary_cross_entropy_with_logits kl_div dropout layer_norm group_norm batch_norm instance_norm conv1d
    conv2d conv_transpose2d max_pool1d max_pool2d avg_pool1d avg_pool2d adaptive_avg_pool2d embedding pad
    one_hot normalize cosine_similarity pairwise_distance unfold fold interpolate
    """
    )
)

op_db: list[OpInfo] = [*db_unary.OPS, *db_binary.OPS, *db_reductions.OPS, *db_linalg.OPS, *db_linalg_extra.OPS, *db_shape.OPS, *db_views.OPS, *db_nn.OPS,
                         *db_attention.OPS, *db_fractional.OPS, *db_tensor_extras.OPS, *db_fft.OPS]

_ids = [op.id for op in op_db]
assert len(set(_ids)) == len(_ids), sorted({i for i in _ids if _ids.count(i) > 1})

__all__ = ["op_db", "OpInfo", "REQUIRED_OPS"]
