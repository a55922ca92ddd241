"""What torch's Python bindings hold beyond tracegrad's declared operator schemas, for ``_arg_parser``.

tracegrad declares an operator's schema once (ops/), and computes some of the overloads torch binds through
another one (``torch.eq(x, 2)`` reaches ``eq.Tensor`` with a number). torch's parser lists and tries those
overloads too, so their schemas are written here, in the same schema language. The sets below say which
overloads torch binds without ``out=``, and which public names torch implements in Python (their argument errors
are Python's own, so no parser guard goes around them).
"""

from __future__ import annotations


def _comparison_overloads(names: tuple[str, ...], scalar_first: bool) -> tuple[str, ...]:
    schemas = []
    for name in names:
        schemas.append(f"{name}.Scalar(Tensor self, Scalar other) -> Tensor")
        schemas.append(f"{name}_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)")
        if scalar_first:
            schemas.append(f"{name}.Scalar_Tensor(Scalar self, Tensor other) -> Tensor")
    return tuple(schemas)


_CONVOLUTIONS = tuple(
    schema for n in (1, 2, 3) for schema in (
        f"conv{n}d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[{n}] stride=1, SymInt[{n}] padding=0, "
        f"SymInt[{n}] dilation=1, SymInt groups=1) -> Tensor",
        f"conv{n}d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[{n}] stride=1, "
        f"str padding=\"valid\", SymInt[{n}] dilation=1, SymInt groups=1) -> Tensor",
        f"conv_transpose{n}d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[{n}] stride=1, "
        f"SymInt[{n}] padding=0, SymInt[{n}] output_padding=0, SymInt groups=1, SymInt[{n}] dilation=1) -> Tensor"))

_VARIANCES = (("std", "Tensor"), ("var", "Tensor"), ("std_mean", "(Tensor, Tensor)"), ("var_mean", "(Tensor, Tensor)"))

EXTRA_OVERLOADS: tuple[str, ...] = (
    *_comparison_overloads(("eq", "ne", "lt", "le", "gt", "ge"), scalar_first=False),
    *_comparison_overloads(("bitwise_and", "bitwise_or", "bitwise_xor"), scalar_first=True),
    *(schema for name in ("bitwise_left_shift", "bitwise_right_shift") for schema in (
        f"{name}.Tensor_Scalar(Tensor self, Scalar other) -> Tensor",
        f"{name}_.Tensor_Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
        f"{name}.Scalar_Tensor(Scalar self, Tensor other) -> Tensor")),
    "normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None, ScalarType? dtype=None, "
    "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "where(Tensor condition) -> Tensor[]",
    "floor_divide.Scalar(Tensor self, Scalar other) -> Tensor",
    "floor_divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    "searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool right=False, "
    "str? side=None, Tensor? sorter=None) -> Tensor",
    "view_copy.dtype(Tensor self, ScalarType dtype) -> Tensor",
    "count_nonzero(Tensor self, int? dim=None) -> Tensor",
    "linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False) "
    "-> Tensor",
    "linalg_pinv.rcond_tensor(Tensor self, Tensor rcond, bool hermitian=False) -> Tensor",
    "linalg_pinv(Tensor self, float rcond, bool hermitian=False) -> Tensor",
    *_CONVOLUTIONS,
    "linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
    "bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor",
    "prelu(Tensor self, Tensor weight) -> Tensor",
    "pdist(Tensor input, float p=2) -> Tensor",
    "cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor",
    "pairwise_distance(Tensor x1, Tensor x2, float p=2, float eps=1e-06, bool keepdim=False) -> Tensor",
    "adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor",
    "avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, bool ceil_mode=False, "
    "bool count_include_pad=True) -> Tensor",
    "where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor",
    "where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor",
    "where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor",
    "div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor",
    "div_.Scalar_mode(Tensor(a!) self, Scalar other, *, str? rounding_mode) -> Tensor(a!)",
    "max.other(Tensor self, Tensor other) -> Tensor",
    "min.other(Tensor self, Tensor other) -> Tensor",
    "all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
    "any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
    *(f"{name}(Tensor self, bool unbiased=True) -> {ret}" for name, ret in _VARIANCES),
    *(f"{name}.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> {ret}"
      for name, ret in _VARIANCES),
    "nuclear_norm(Tensor self, bool keepdim=False) -> Tensor",
    "nuclear_norm.dim(Tensor self, int[2] dim, bool keepdim=False) -> Tensor",
    "frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
    # the ``out_dtype`` overloads of the matrix products
    "mm.dtype(Tensor self, Tensor mat2, ScalarType out_dtype) -> Tensor",
    "bmm.dtype(Tensor self, Tensor mat2, ScalarType out_dtype) -> Tensor",
    "addmm.dtype(Tensor self, Tensor mat1, Tensor mat2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1) "
    "-> Tensor",
    "baddbmm.dtype(Tensor self, Tensor batch1, Tensor batch2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1) "
    "-> Tensor",
    "outer(Tensor self, Tensor vec2) -> Tensor",
    "kron(Tensor self, Tensor other) -> Tensor",
    "take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor",
    "repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor",
    "repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor",
    "tile(Tensor self, SymInt[] dims) -> Tensor",
    "chunk(Tensor(a) self, int chunks, int dim=0) -> Tensor(a)[]",
    # views and shape functions computed through ``view``/``permute``
    "view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)",
    "reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)",
    "flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)",
    "unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)",
    "movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)",
    "movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)",
    "narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)",
    "narrow.Tensor(Tensor(a) self, int dim, Tensor start, SymInt length) -> Tensor(a)",
)

def _deprecated_overloads() -> tuple[str, ...]:
    """The deprecated argument orders torch still accepts (a scale before the tensors): hidden from its messages,
    but they are signatures, so with one of them torch lists the remaining one as the only option."""
    schemas = []
    for name in ("add", "sub"):
        schemas += [f"{name}(Tensor self, Scalar alpha, Tensor other) -> Tensor",
                    f"{name}_(Tensor(a!) self, Scalar alpha, Tensor other) -> Tensor(a!)"]
    for name in ("addcmul", "addcdiv"):
        schemas += [f"{name}(Tensor self, Scalar value, Tensor tensor1, Tensor tensor2) -> Tensor",
                    f"{name}_(Tensor(a!) self, Scalar value, Tensor tensor1, Tensor tensor2) -> Tensor(a!)"]
    for name, first, second in (("addmm", "mat1", "mat2"), ("addbmm", "batch1", "batch2"),
                                ("baddbmm", "batch1", "batch2"), ("addmv", "mat", "vec"), ("addr", "vec1", "vec2")):
        for op, self_type, ret in ((name, "Tensor", "Tensor"), (f"{name}_", "Tensor(a!)", "Tensor(a!)")):
            schemas += [f"{op}(Scalar beta, {self_type} self, Scalar alpha, Tensor {first}, Tensor {second}) -> {ret}",
                        f"{op}(Scalar beta, {self_type} self, Tensor {first}, Tensor {second}) -> {ret}"]
    return tuple(schemas)


DEPRECATED_OVERLOADS = _deprecated_overloads()

# Declared overloads whose Python signature torch writes differently (its hand-written bindings)
REPLACED_OVERLOADS: dict[str, str] = {
    "nonzero": "nonzero(Tensor self, *, bool as_tuple=False) -> Tensor",
    "copy_": "copy_(Tensor(a!) self, Tensor other, bool non_blocking=False) -> Tensor(a!)",
    "count_nonzero": "count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor",
}

# Tensor methods whose signatures torch writes by hand, differently from the function's
METHOD_OVERLOADS: dict[str, tuple[str, ...]] = {
    "nonzero": ("nonzero(Tensor self) -> Tensor", "nonzero.as_tuple(Tensor self, *, bool as_tuple) -> Tensor[]"),
}

# Overloads torch binds in Python without an ``out=`` keyword: full names, or ``name.*`` for all of a name's
WITHOUT_OUT = frozenset({
    "sum", "prod", "std", "var", "median", "nanmedian", "where", "where.ScalarSelf", "where.ScalarOther",
    "where.Scalar", "div.Scalar_mode", "remainder.Scalar_Tensor", "bitwise_and.Scalar_Tensor",
    "bitwise_or.Scalar_Tensor", "bitwise_xor.Scalar_Tensor", "bitwise_left_shift.Scalar_Tensor",
    "bitwise_right_shift.Scalar_Tensor", "repeat_interleave.*", "var_mean.*", "std_mean.*",
    "index_fill.*", "masked_fill.*", "squeeze.*", "tile", "reshape", "flatten.*", "unflatten.*", "movedim.*",
    "narrow.*", "view.*", "conv1d.*", "conv2d.*", "conv3d.*", "conv_transpose1d.*", "conv_transpose2d.*",
    "conv_transpose3d.*", "bilinear", "prelu", "pdist", "cosine_similarity", "pairwise_distance",
    "adaptive_avg_pool1d", "avg_pool1d", "fill.*", "rsub.*", "floor_divide.Scalar",
})

# Overloads torch binds as functions only (not as Tensor methods)
FUNCTION_ONLY = frozenset({"mm.dtype", "bmm.dtype", "addmm.dtype", "baddbmm.dtype"})

# Public functions (operator names) and Tensor methods torch writes in Python
PYTHON_IN_TORCH = frozenset({"block_diag", "split", "unique_consecutive"})
PYTHON_IN_TORCH_METHODS = frozenset({"split", "unique_consecutive", "unflatten"})

# torch.nn.functional's names that are torch's C++ bindings (the rest of the module is Python in torch too)
NN_FUNCTIONAL_IN_CPP = frozenset({
    "adaptive_avg_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "bilinear", "celu_", "channel_shuffle",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "cosine_similarity",
    "elu_", "gelu", "hardshrink", "hardtanh_", "leaky_relu_", "linear", "logsigmoid", "native_channel_shuffle",
    "one_hot", "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu", "relu_", "rrelu_",
    "scaled_dot_product_attention", "selu_", "softplus", "softshrink", "threshold_",
})
