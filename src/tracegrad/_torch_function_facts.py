"""Facts about torch 2.13's own objects that a ``__torch_function__`` handler can see, read off the installed
torch: how each Tensor method and namespace function finds its overloaded arguments, and the names of its ``func``.

torch finds the overloaded arguments of a call one of three ways, and the ``types`` a handler gets follow:

- the C++ argument parser (most methods and functions): the arguments whose class overrides the protocol, so a
  plain Tensor or a Parameter adds nothing (``x.add(1)``: ``types == ()``);
- the C++ methods that take nothing but ``self`` (``x.sin()``, ``x.numel()``) and the properties: ``self``
  always, its class in ``types`` whatever it is (``(Tensor,)``, ``(Parameter,)``);
- torch's functions and methods written in Python (``F.relu``, ``Tensor.__len__``): ``torch.overrides``' search,
  which counts a plain Tensor (its ``__torch_function__`` is the default one) but not a Parameter (it opts out).
"""

# Tensor methods whose one overloaded argument is ``self``
SELF_ONLY_METHODS = frozenset({
    "__abs__", "__bool__", "__complex__", "__float__", "__index__", "__int__", "__invert__", "__neg__", "__pos__",
    "abs", "abs_", "absolute", "absolute_", "acos", "acos_", "acosh", "acosh_", "adjoint", "angle", "arccos",
    "arccos_", "arccosh", "arccosh_", "arcsin", "arcsin_", "arcsinh", "arcsinh_", "arctan", "arctan_", "arctanh",
    "arctanh_", "argwhere", "asin", "asin_", "asinh", "asinh_", "atan", "atan_", "atanh", "atanh_", "bitwise_not",
    "bitwise_not_", "ceil", "ceil_", "coalesce", "conj", "conj_physical", "conj_physical_", "const_data_ptr",
    "corrcoef", "cos", "cos_", "cosh", "cosh_", "data_ptr", "deg2rad", "deg2rad_", "dense_dim", "det", "detach",
    "detach_", "digamma", "digamma_", "dim", "element_size", "erf", "erf_", "erfc", "erfc_", "erfinv", "erfinv_",
    "exp", "exp2", "exp2_", "exp_", "expm1", "expm1_", "fix", "fix_", "fliplr", "flipud", "floor", "floor_", "frac",
    "frac_", "frexp", "geqrf", "get_device", "i0", "i0_", "indices", "inverse", "is_coalesced", "is_complex",
    "is_conj", "is_distributed", "is_floating_point", "is_inference", "is_neg", "is_nonzero", "is_signed",
    "isfinite", "isinf", "isnan", "isneginf", "isposinf", "isreal", "item", "lgamma", "lgamma_", "log", "log10",
    "log10_", "log1p", "log1p_", "log2", "log2_", "log_", "logdet", "logical_not", "logical_not_", "matrix_exp",
    "msort", "ndimension", "neg", "neg_", "negative", "negative_", "nelement", "new", "new_tensor", "numel",
    "positive", "rad2deg", "rad2deg_", "ravel", "reciprocal", "reciprocal_", "relu", "relu_", "resolve_conj",
    "resolve_neg", "retain_grad", "rsqrt", "rsqrt_", "sgn", "sgn_", "sigmoid", "sigmoid_", "sign", "sign_",
    "signbit", "sin", "sin_", "sinc", "sinc_", "sinh", "sinh_", "slogdet", "sparse_dim", "sqrt", "sqrt_", "square",
    "square_", "storage_offset", "t", "t_", "tan", "tan_", "tanh", "tanh_", "tolist", "trace", "trunc", "trunc_",
    "untyped_storage", "values", "zero_"})

# Tensor methods torch writes in Python (torch/_tensor.py)
PYTHON_METHODS = frozenset({
    "__array__", "__contains__", "__deepcopy__", "__floordiv__", "__format__", "__ipow__", "__len__", "__pow__",
    "__repr__", "__rfloordiv__", "__rlshift__", "__rmatmul__", "__rmod__", "__rpow__", "__rrshift__", "__rsub__",
    "__rtruediv__", "backward", "dim_order", "eig", "is_shared", "istft", "lstsq", "lu", "norm", "register_hook",
    "register_post_accumulate_grad_hook", "reinforce", "resize", "resize_as", "share_memory_", "solve", "split",
    "stft", "storage", "storage_type", "symeig", "unflatten", "unique", "unique_consecutive"})

# (__name__, __qualname__) of Python methods that are not ``Tensor.<name>``: operators torch wraps from others
PYTHON_METHOD_NAMES = {"__rtruediv__": ("__rdiv__", "Tensor.__rdiv__"), "__pow__": ("pow", "TensorBase.pow"),
                       "__ipow__": ("pow_", "TensorBase.pow_")}

# (__name__, __qualname__, __module__) of torch's functions named other than their public name (and, for a builtin
# of linalg, special or fft, its prefix): those torch binds from another module under the name they have there
OTHER_NAMES = {("torch", "symeig"): ("_symeig", "_symeig", "torch._linalg_utils"),
               ("torch", "to_dlpack"): ("_to_dlpack", "_to_dlpack", "torch._C"),
               ("torch.nn.functional", "logsigmoid"): ("log_sigmoid", "log_sigmoid", "torch._C._nn"),
               ("torch.nn.functional", "threshold"): ("_threshold", "_threshold", "torch.nn.functional")}

# torch functions written in Python: namespace -> {name: the module torch defines it in}
PYTHON_FUNCTIONS = {
    "torch": {
        **dict.fromkeys(("atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "broadcast_shapes",
                         "broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "einsum", "lu", "meshgrid",
                         "norm", "split", "stft", "tensordot", "unique", "unique_consecutive", "unravel_index"),
                        "torch.functional"),
        **dict.fromkeys(("eig", "lstsq", "matrix_rank", "solve"), "torch._linalg_utils"),
        **dict.fromkeys(("pca_lowrank", "svd_lowrank"), "torch._lowrank"),
        "from_dlpack": "torch.utils.dlpack"},
    "torch.nn.functional": dict.fromkeys(frozenset({
        "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices",
        "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
        "adaptive_max_pool3d_with_indices", "affine_grid", "alpha_dropout", "batch_norm", "binary_cross_entropy",
        "binary_cross_entropy_with_logits", "celu", "cosine_embedding_loss", "cross_entropy", "ctc_loss", "dropout",
        "dropout1d", "dropout2d", "dropout3d", "elu", "embedding", "embedding_bag", "feature_alpha_dropout", "fold",
        "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
        "fractional_max_pool3d_with_indices", "gaussian_nll_loss", "glu", "grid_sample", "group_norm",
        "gumbel_softmax", "hardsigmoid", "hardswish", "hardtanh", "hinge_embedding_loss", "huber_loss",
        "instance_norm", "interpolate", "kl_div", "l1_loss", "layer_norm", "leaky_relu", "linear_cross_entropy",
        "local_response_norm", "log_softmax", "lp_pool1d", "lp_pool2d", "lp_pool3d", "margin_ranking_loss",
        "max_pool1d", "max_pool1d_with_indices", "max_pool2d", "max_pool2d_with_indices", "max_pool3d",
        "max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d", "mish", "mse_loss",
        "multi_head_attention_forward", "multi_margin_loss", "multilabel_margin_loss",
        "multilabel_soft_margin_loss", "nll_loss", "normalize", "pad", "poisson_nll_loss", "relu", "relu6",
        "rms_norm", "rrelu", "selu", "sigmoid", "silu", "smooth_l1_loss", "soft_margin_loss", "softmax", "softmin",
        "softsign", "tanh", "tanhshrink", "threshold", "triplet_margin_loss", "triplet_margin_with_distance_loss",
        "unfold", "upsample", "upsample_bilinear", "upsample_nearest"}), "torch.nn.functional"),
    "torch.autograd": {"backward": "torch.autograd", "grad": "torch.autograd"},
}

# torch.nn.functional's builtins held by torch._C._nn (its other builtins are torch's own: F.conv2d is torch.conv2d)
NN_BUILTINS = frozenset({
    "avg_pool2d", "avg_pool3d", "elu_", "gelu", "hardtanh_", "leaky_relu_", "linear", "logsigmoid", "one_hot",
    "scaled_dot_product_attention", "softplus", "softshrink"})
