"""What torch's Python bindings hold beyond tracegrad's declared operator schemas, for ``_arg_parser``.

tracegrad declares an operator's schema once (ops/), and computes some of the overloads torch binds through
another one (``torch.eq(x, 2)`` reaches ``eq.Tensor`` with a number). Many public names have no operator of their
own: factories, aliases, most of ``torch.linalg``/``special``/``fft``, nn functions and Tensor methods written in
Python. torch's parser lists and tries the overloads of every name it binds, so their schemas are written here, in
the same schema language (an alias's are derived from its operator's, ``_alias_overloads``). The sets below say
which overloads torch binds without ``out=``, which methods torch writes by hand, and which public names torch
implements in Python (their argument errors are Python's own, so no parser guard goes around them).
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

_OPERATOR_OVERLOADS: tuple[str, ...] = (
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
    "split.sizes(Tensor(a) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]",
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


# ---- names tracegrad computes in Python (or under another operator) that torch binds to an operator ----------

_OPTIONS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
_LIKE_OPTIONS = f"MemoryFormat? memory_format=None, {_OPTIONS}"  # (``*_like``: the memory format first)


def _unary(names: tuple[str, ...], returns: str = "Tensor") -> tuple[str, ...]:
    return tuple(f"{name}(Tensor self) -> {returns}" for name in names)


def _factory_overloads() -> tuple[str, ...]:
    """torch's Python factories (``_from_schema`` adds ``out`` before the options, and ``requires_grad``): a size
    is an int list, which also takes separate ints (``zeros(2, 3)``)."""
    schemas = [f"{name}(SymInt[] size, *, {_OPTIONS}) -> Tensor" for name in ("zeros", "ones", "rand", "randn")]
    schemas += [f"{name}.generator(SymInt[] size, *, Generator? generator, {_OPTIONS}) -> Tensor"
                for name in ("rand", "randn")]
    schemas += [
        f"empty(SymInt[] size, *, {_OPTIONS}, MemoryFormat? memory_format=None) -> Tensor",
        f"full(SymInt[] size, Scalar fill_value, *, {_OPTIONS}) -> Tensor",
        f"eye(SymInt n, *, {_OPTIONS}) -> Tensor",
        f"eye.m(SymInt n, SymInt m, *, {_OPTIONS}) -> Tensor",
        f"arange(Scalar end, *, {_OPTIONS}) -> Tensor",
        f"arange.start_step(Scalar start, Scalar end, Scalar step=1, *, {_OPTIONS}) -> Tensor",
        # (torch's deprecated ``range`` takes no ``pin_memory``)
        "range.step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool requires_grad=False) -> Tensor",
        f"randperm(SymInt n, *, {_OPTIONS}) -> Tensor",
        f"randperm.generator(SymInt n, *, Generator? generator, {_OPTIONS}) -> Tensor",
        f"fft_fftfreq(int n, float d=1.0, *, {_OPTIONS}) -> Tensor",
        f"fft_rfftfreq(int n, float d=1.0, *, {_OPTIONS}) -> Tensor",
    ]
    for low in ("", "SymInt low, "):
        schemas += [f"randint{'.low' if low else ''}({low}SymInt high, SymInt[] size, *, {_OPTIONS}) -> Tensor",
                    f"randint.{'low_' if low else ''}generator({low}SymInt high, SymInt[] size, *, "
                    f"Generator? generator, {_OPTIONS}) -> Tensor"]
    for name, base in (("linspace", ""), ("logspace", "float base=10.0, ")):
        for start, end in (("Tensor", "Tensor"), ("Tensor", "Scalar"), ("Scalar", "Tensor"), ("Scalar", "Scalar")):
            overload = "" if start == end == "Scalar" else f".{start}_{end}"
            schemas.append(f"{name}{overload}({start} start, {end} end, int steps, {base}*, {_OPTIONS}) -> Tensor")
    return tuple(schemas)


def _factories_without_out() -> tuple[str, ...]:
    """The factories torch binds without ``out=``: the windows, ``*_like``, and a few more."""
    schemas = [
        f"arange.start(Scalar start, Scalar end, *, {_OPTIONS}) -> Tensor",
        f"scalar_tensor(Scalar s, *, {_OPTIONS}) -> Tensor",
        f"empty_strided(SymInt[] size, SymInt[] stride, *, {_OPTIONS}) -> Tensor",
        f"empty_permuted(SymInt[] size, int[] physical_layout, *, {_OPTIONS}) -> Tensor",
        *(f"{name}(int row, int col, int offset=0, *, {_OPTIONS}) -> Tensor"
          for name in ("tril_indices", "triu_indices")),
    ]
    shapes = {"hamming": (("periodic_alpha", "float alpha"), ("periodic_alpha_beta", "float alpha, float beta")),
              "kaiser": (("beta", "float beta"),)}
    for name in ("bartlett", "blackman", "hann", "hamming", "kaiser"):
        schemas += [f"{name}_window(int window_length, *, {_OPTIONS}) -> Tensor",
                    f"{name}_window.periodic(int window_length, bool periodic, *, {_OPTIONS}) -> Tensor"]
        schemas += [f"{name}_window.{overload}(int window_length, bool periodic, {shape}, *, {_OPTIONS}) -> Tensor"
                    for overload, shape in shapes.get(name, ())]
    schemas += [f"{name}_like(Tensor self, *, {_LIKE_OPTIONS}) -> Tensor"
                for name in ("empty", "zeros", "ones", "rand", "randn")]
    schemas += [f"{name}_like.generator(Tensor self, *, Generator? generator, {_LIKE_OPTIONS}) -> Tensor"
                for name in ("rand", "randn")]
    for overload, bounds in (("int", "SymInt high"), ("low", "SymInt low, SymInt high"), ("Tensor", "Tensor high")):
        schemas += [f"randint_like.{overload}(Tensor self, {bounds}, *, {_LIKE_OPTIONS}) -> Tensor",
                    f"randint_like.{overload}_generator(Tensor self, {bounds}, *, Generator? generator, "
                    f"{_LIKE_OPTIONS}) -> Tensor"]
    return tuple(schemas)


def _fft_overloads() -> tuple[str, ...]:
    schemas = []
    for kind in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        schemas += [f"fft_{kind}(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor",
                    f"fft_{kind}2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor",
                    f"fft_{kind}n(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor"]
    return tuple(schemas)


def _rnn_overloads() -> tuple[str, ...]:
    schemas = []
    for name, hx, returns, cell_returns in (("lstm", "Tensor[] hx", "(Tensor, Tensor, Tensor)", "(Tensor, Tensor)"),
                                            ("gru", "Tensor hx", "(Tensor, Tensor)", "Tensor"),
                                            ("rnn_tanh", "Tensor hx", "(Tensor, Tensor)", "Tensor"),
                                            ("rnn_relu", "Tensor hx", "(Tensor, Tensor)", "Tensor")):
        run = "Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional"
        schemas += [f"{name}.input(Tensor input, {hx}, {run}, bool batch_first) -> {returns}",
                    f"{name}.data(Tensor data, Tensor batch_sizes, {hx}, {run}) -> {returns}",
                    f"{name}_cell(Tensor input, {hx}, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) "
                    f"-> {cell_returns}"]
    return tuple(schemas)



# The resampling operators F.interpolate calls: (name, spatial dims, whether it takes align_corners)
_UPSAMPLES = (
    *((f"{prefix}{n}d", n, False) for prefix in ("upsample_nearest", "_upsample_nearest_exact") for n in (1, 2, 3)),
    ("upsample_linear1d", 1, True), ("upsample_bilinear2d", 2, True), ("_upsample_bilinear2d_aa", 2, True),
    ("upsample_bicubic2d", 2, True), ("_upsample_bicubic2d_aa", 2, True), ("upsample_trilinear3d", 3, True),
    ("_upsample_lanczos2d_aa", 2, True),
)
_SCALES = {1: ("scales",), 2: ("scales_h", "scales_w"), 3: ("scales_d", "scales_h", "scales_w")}


def _upsample_overloads(vec: bool) -> tuple[str, ...]:
    """Each resampling operator's ``.vec`` overload (output sizes or scale factors, bound without ``out=``) or its
    sized one (an optional scale per dim)."""
    schemas = []
    for name, n, aligned in _UPSAMPLES:
        corners = "bool align_corners, " if aligned else ""
        if vec:
            schemas.append(f"{name}.vec(Tensor input, SymInt[]? output_size, {corners}float[]? scale_factors) "
                           "-> Tensor")
        else:
            scales = ", ".join(f"float? {scale}=None" for scale in _SCALES[n])
            schemas.append(f"{name}(Tensor self, SymInt[{n}] output_size, {corners}{scales}) -> Tensor")
    return tuple(schemas)

# Bound with ``out=`` (functional overloads returning tensors)
_WITH_OUT: tuple[str, ...] = (
    *_factory_overloads(),
    *_fft_overloads(),
    *_unary(("square", "msort", "inverse", "values_copy", "special_ndtr", "linalg_eigvals")),
    *(f"{name}(Tensor[] tensors) -> Tensor" for name in ("hstack", "vstack", "dstack", "column_stack", "row_stack")),
    "matmul(Tensor self, Tensor other) -> Tensor",
    "inner(Tensor self, Tensor other) -> Tensor",
    "cross(Tensor self, Tensor other, int? dim=None) -> Tensor",
    "diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor",
    "matrix_power(Tensor self, int n) -> Tensor",
    "cholesky(Tensor self, bool upper=False) -> Tensor",
    "lu_solve(Tensor self, Tensor LU_data, Tensor LU_pivots) -> Tensor",
    "orgqr(Tensor self, Tensor input2) -> Tensor",
    "qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)",
    "svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)",
    "slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)",
    "nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    *(schema for name in ("quantile", "nanquantile") for schema in (
        f"{name}(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation=\"linear\") -> Tensor",
        f"{name}.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, str interpolation=\"linear\") "
        "-> Tensor")),
    "argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor",
    "histogram.bins_tensor(Tensor self, Tensor bins, *, Tensor? weight=None, bool density=False) "
    "-> (Tensor hist, Tensor bin_edges)",
    "histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, Tensor? weight=None, bool density=False) "
    "-> (Tensor hist, Tensor bin_edges)",
    "bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor",
    "isin.Tensor_Tensor(Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False) "
    "-> Tensor",
    "isin.Tensor_Scalar(Tensor elements, Scalar test_element, *, bool assume_unique=False, bool invert=False) "
    "-> Tensor",
    "isin.Scalar_Tensor(Scalar element, Tensor test_elements, *, bool assume_unique=False, bool invert=False) "
    "-> Tensor",
    "float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
    "float_power.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
    "float_power.Scalar(Scalar self, Tensor exponent) -> Tensor",
    "true_divide.Tensor(Tensor self, Tensor other) -> Tensor",
    *(f"{name}.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor" for name in ("softmax", "log_softmax")),
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
    "bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    "special_round(Tensor self, *, int decimals=0) -> Tensor",
    # nn operators torch.nn.functional's Python calls (tracegrad computes them in Python or under other names)
    *_upsample_overloads(vec=False),
    "log_sigmoid(Tensor self) -> Tensor",
    "glu(Tensor self, int dim=-1) -> Tensor",
    *(f"adaptive_avg_pool{n}d(Tensor self, SymInt[{n}] output_size) -> Tensor" for n in (2, 3)),
    "multilabel_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
    # torch.linalg
    "linalg_det(Tensor A) -> Tensor",
    "linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)",
    "linalg_eigvalsh(Tensor self, str UPLO=\"L\") -> Tensor",
    "linalg_matrix_power(Tensor self, int n) -> Tensor",
    "linalg_multi_dot(Tensor[] tensors) -> Tensor",
    "linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor",
    "linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor",
    "linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (Tensor result, Tensor info)",
    "linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> (Tensor L, Tensor info)",
    "linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (Tensor LD, Tensor pivots)",
    "linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, Tensor pivots)",
    "linalg_tensorinv(Tensor self, int ind=2) -> Tensor",
    "linalg_tensorsolve(Tensor self, Tensor other, int[]? dims=None) -> Tensor",
    "linalg_cond(Tensor self, Scalar? p=None) -> Tensor",
    "linalg_cond.p_str(Tensor self, str p) -> Tensor",
    "linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) "
    "-> Tensor",
    "linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) "
    "-> Tensor",
    "linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2,-1], bool keepdim=False, *, ScalarType? dtype=None) "
    "-> Tensor",
    "linalg_matrix_norm.str_ord(Tensor self, str ord=\"fro\", int[] dim=[-2,-1], bool keepdim=False, *, "
    "ScalarType? dtype=None) -> Tensor",
    "linalg_matrix_rank(Tensor self, float tol, bool hermitian=False) -> Tensor",
    "linalg_matrix_rank.tol_tensor(Tensor input, Tensor tol, bool hermitian=False) -> Tensor",
    "linalg_matrix_rank.atol_rtol_tensor(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False) "
    "-> Tensor",
    "linalg_matrix_rank.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) "
    "-> Tensor",
    # operators torch's Python functions (torch/functional.py) end in
    "chain_matmul(Tensor[] matrices) -> Tensor",
    "tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor",
)

# Bound without ``out=``
_WITHOUT_OUT: tuple[str, ...] = (
    *_factories_without_out(),
    *_rnn_overloads(),
    *_unary(("adjoint", "argwhere", "conj", "corrcoef", "det", "logdet", "fliplr", "flipud", "positive", "ravel",
             "real", "imag", "resolve_conj", "resolve_neg", "selu")),
    *(f"fft_{name}(Tensor self, int[1]? dim=None) -> Tensor" for name in ("fftshift", "ifftshift")),
    *(schema for name in ("dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout") for schema in (
        f"{name}(Tensor input, float p, bool train) -> Tensor",
        f"{name}_(Tensor(a!) self, float p, bool train) -> Tensor(a!)")),
    *(schema for name in ("hsplit", "vsplit", "dsplit") for schema in (
        f"{name}.int(Tensor self, int sections) -> Tensor[]", f"{name}.array(Tensor self, int[] indices) -> Tensor[]")),
    "tensor_split.sections(Tensor self, SymInt sections, int dim=0) -> Tensor[]",
    "tensor_split.indices(Tensor self, SymInt[] indices, int dim=0) -> Tensor[]",
    "tensor_split.tensor_indices_or_sections(Tensor self, Tensor tensor_indices_or_sections, int dim=0) -> Tensor[]",
    "unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]",
    "broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)",
    "argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor",
    "combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor",
    "diagflat(Tensor self, int offset=0) -> Tensor",
    "vander(Tensor x, int? N=None, bool increasing=False) -> Tensor",
    "pinverse(Tensor self, float rcond=1e-15) -> Tensor",
    "cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) -> Tensor",
    "bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor",
    "true_divide.Scalar(Tensor self, Scalar other) -> Tensor",
    *(schema for name, dx in (("trapezoid", "Scalar dx=1"), ("trapz", "float dx=1"),
                              ("cumulative_trapezoid", "Scalar dx=1")) for schema in (
        f"{name}.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor",
        f"{name}.dx(Tensor y, *, {dx}, int dim=-1) -> Tensor")),
    "histogramdd(Tensor self, int[] bins, float[]? range=None, Tensor? weight=None, bool density=False) "
    "-> (Tensor hist, Tensor[] bin_edges)",
    "histogramdd.int_bins(Tensor self, int bins, float[]? range=None, Tensor? weight=None, bool density=False) "
    "-> (Tensor hist, Tensor[] bin_edges)",
    "histogramdd.TensorList_bins(Tensor self, Tensor[] bins, float[]? range=None, Tensor? weight=None, "
    "bool density=False) -> (Tensor hist, Tensor[] bin_edges)",
    "gradient.scalarint(Tensor self, *, Scalar? spacing=None, int? dim=None, int edge_order=1) -> Tensor[]",
    "gradient.scalararray(Tensor self, *, Scalar spacing, int[] dim, int edge_order=1) -> Tensor[]",
    "gradient.array(Tensor self, *, int[] dim, int edge_order=1) -> Tensor[]",
    "gradient.scalarrayint(Tensor self, *, Scalar[] spacing, int? dim=None, int edge_order=1) -> Tensor[]",
    "gradient.scalarrayarray(Tensor self, *, Scalar[] spacing, int[] dim, int edge_order=1) -> Tensor[]",
    "gradient.tensorarrayint(Tensor self, *, Tensor[] spacing, int? dim=None, int edge_order=1) -> Tensor[]",
    "gradient.tensorarray(Tensor self, *, Tensor[] spacing, int[] dim, int edge_order=1) -> Tensor[]",
    "istft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, "
    "bool center=True, bool normalized=False, bool? onesided=None, int? length=None, bool return_complex=False) "
    "-> Tensor",
    # nn: activations, normalization, pooling, losses, embeddings
    *_upsample_overloads(vec=True),
    "relu6(Tensor self) -> Tensor",
    "relu6_(Tensor(a!) self) -> Tensor(a!)",
    "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100, "
    "float label_smoothing=0.0) -> Tensor",
    "nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100) "
    "-> Tensor",
    "l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",
    "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, "
    "bool cudnn_enable=True) -> Tensor",
    "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, "
    "bool cudnn_enabled=True) -> Tensor",
    "rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor",
    *(f"{name}(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool {train}, "
      "float momentum, float eps, bool cudnn_enabled) -> Tensor"
      for name, train in (("batch_norm", "training"), ("instance_norm", "use_input_stats"))),
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) "
    "-> (Tensor, Tensor, Tensor)",
    "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, "
    "float eps) -> (Tensor, Tensor, Tensor)",
    "norm_except_dim(Tensor v, int pow=2, int dim=0) -> Tensor",
    *(f"max_pool{n}d(Tensor self, int[{n}] kernel_size, int[{n}] stride=[], int[{n}] padding=0, "
      f"int[{n}] dilation=1, bool ceil_mode=False) -> Tensor" for n in (1, 2, 3)),
    "max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, "
    "int[1] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    "adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)",
    *(f"{name}(Tensor input1, Tensor input2, Tensor target, float margin=0.0, int reduction=Mean) -> Tensor"
      for name in ("cosine_embedding_loss", "margin_ranking_loss")),
    "hinge_embedding_loss(Tensor self, Tensor target, float margin=1.0, int reduction=Mean) -> Tensor",
    "kl_div(Tensor self, Tensor target, int reduction=Mean, *, bool log_target=False) -> Tensor",
    "poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction) -> Tensor",
    "triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1.0, float p=2, "
    "float eps=1e-06, bool swap=False, int reduction=Mean) -> Tensor",
    *(f"ctc_loss.{overload}(Tensor log_probs, Tensor targets, {lengths} input_lengths, {lengths} target_lengths, "
      "int blank=0, int reduction=Mean, bool zero_infinity=False) -> Tensor"
      for overload, lengths in (("IntList", "int[]"), ("Tensor", "Tensor"))),
    "embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, "
    "bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False) "
    "-> (Tensor, Tensor, Tensor, Tensor)",
    "embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, "
    "bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) "
    "-> (Tensor, Tensor, Tensor, Tensor)",
    "grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor",
    "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, "
    "float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor",
    "pad(Tensor self, SymInt[] pad, str mode=\"constant\", float? value=None) -> Tensor",
    "rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, "
    "Generator? generator=None) -> Tensor",
    # torch.linalg and torch.special
    "linalg_diagonal(Tensor(a) A, *, int offset=0, int dim1=-2, int dim2=-1) -> Tensor(a)",
    "linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor",
    "special_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
    "special_log_softmax(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
    # the tensor-from-data factories (torch's hand-written bindings; their options are keyword-only)
    "tensor(Any data, *, ScalarType? dtype=None, Device? device=None, bool pin_memory=False, "
    "bool requires_grad=False) -> Tensor",
    "as_tensor(Any data, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
    "asarray(Any obj, *, ScalarType? dtype=None, Device? device=None, bool? copy=None, bool? requires_grad=False) "
    "-> Tensor",
    # operators torch's Python functions (torch/functional.py) end in
    "einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor",
    *(f"{name}(Tensor[] tensors) -> {ret}" for name, ret in (
        ("broadcast_tensors", "Tensor[]"), ("cartesian_prod", "Tensor"), ("meshgrid", "Tensor[]"))),
    "meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]",
    *(schema for n in (1, 2, 3) for schema in (
        f"atleast_{n}d(Tensor self) -> Tensor", f"atleast_{n}d.Sequence(Tensor[] tensors) -> Tensor[]")),
    "cdist(Tensor x1, Tensor x2, float p=2.0, int? compute_mode=None) -> Tensor",
    "_lu_with_info(Tensor self, bool pivot=True, bool check_errors=True) -> (Tensor LU, Tensor pivots, Tensor info)",
    *(f"stft{overload}(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, "
      f"{center}bool normalized=False, bool? onesided=None, bool? return_complex=None, bool? align_to_window=None) "
      "-> Tensor" for overload, center in (("", ""), (".center", "bool center=True, str pad_mode=\"reflect\", "))),
)

# Without ``out=`` by the derivation's own rules: in-place forms, results that are not tensors (a bool, a number,
# a dtype), and names torch binds as Tensor methods only
_OTHERS: tuple[str, ...] = (
    *_unary(("is_complex", "is_conj", "is_floating_point", "is_inference", "is_neg", "is_nonzero", "is_signed",
             "is_coalesced", "is_distributed"), returns="bool"),
    *_unary(("numel", "get_device", "dim", "dense_dim", "sparse_dim", "element_size", "storage_offset"),
            returns="int"),
    *(f"{name}(Tensor self, Tensor other) -> bool" for name in ("is_same_size", "equal")),
    "allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> bool",
    "can_cast(ScalarType from_, ScalarType to) -> bool",
    "promote_types(ScalarType type1, ScalarType type2) -> ScalarType",
    "result_type.Tensor(Tensor tensor, Tensor other) -> ScalarType",
    "result_type.Scalar(Tensor tensor, Scalar other) -> ScalarType",
    "result_type.Scalar_Tensor(Scalar scalar, Tensor tensor) -> ScalarType",
    "result_type.Scalar_Scalar(Scalar scalar1, Scalar scalar2) -> ScalarType",
    *(f"{name}_(Tensor(a!) self) -> Tensor(a!)" for name in ("square", "selu", "detach", "t", "squeeze")),
    "squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)",
    "squeeze_.dims(Tensor(a!) self, int[] dim) -> Tensor(a!)",
    "unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)",
    "transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)",
    "swapaxes_(Tensor(a!) self, int axis0, int axis1) -> Tensor(a!)",
    "as_strided_(Tensor(a!) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a!)",
    "resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor(a!)",
    "resize_as_(Tensor(a!) self, Tensor the_template, *, MemoryFormat? memory_format=None) -> Tensor(a!)",
    "requires_grad_(Tensor(a!) self, bool requires_grad=True) -> Tensor(a!)",
    "fill_diagonal_(Tensor(a!) self, Scalar fill_value, bool wrap=False) -> Tensor(a!)",
    "float_power_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)",
    "float_power_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)",
    *(f"true_divide_.{overload}(Tensor(a!) self, {other} other) -> Tensor(a!)"
      for overload, other in (("Tensor", "Tensor"), ("Scalar", "Scalar"))),
    "rrelu_(Tensor(a!) self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, "
    "Generator? generator=None) -> Tensor(a!)",
    "embedding_renorm_(Tensor(a!) self, Tensor indices, float max_norm, float norm_type) -> Tensor(a!)",
    # functions torch binds with its parser but without an operator (their errors are the parser's)
    "get_autocast_dtype(str device_type) -> ScalarType",
    "set_autocast_dtype(str device_type, ScalarType dtype) -> ()",
    "set_anomaly_enabled(bool enabled, bool check_nan=True) -> ()",
    "frombuffer(Any buffer, *, ScalarType dtype, int count=-1, int offset=0, bool requires_grad=False) -> Tensor",
    # Tensor methods
    "item(Tensor self) -> Scalar",
    "as_subclass(Tensor self, Any cls) -> Tensor",
    "retain_grad(Tensor(a!) self) -> ()",
    *(f"{name}(Tensor self, Tensor other) -> Tensor" for name in ("type_as", "view_as", "expand_as", "reshape_as")),
    "is_set_to(Tensor self, Tensor tensor) -> bool",
    "is_pinned(Tensor self, Device? device=None) -> bool",
    "pin_memory(Tensor(a) self, Device? device=None) -> Tensor(a)",
    "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
    "sum_to_size(Tensor self, SymInt[] size) -> Tensor",
    "to_dense(Tensor self, ScalarType? dtype=None, *, bool? masked_grad=None) -> Tensor",
    *(f"{name}(Tensor(a) self) -> Tensor(a)" for name in ("coalesce", "indices", "values")),
    *(f"new_{name}(Tensor self, SymInt[] size, *, {_OPTIONS}) -> Tensor" for name in ("empty", "zeros", "ones")),
    f"new_full(Tensor self, SymInt[] size, Scalar fill_value, *, {_OPTIONS}) -> Tensor",
    f"new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, {_OPTIONS}) -> Tensor",
)


def _alias_overloads(aliases: dict[str, str], inplace: bool, schemas: tuple[str, ...]) -> tuple[str, ...]:
    """The overloads of each alias (``arccos`` of ``acos``), derived from its operator's: the declared ones and
    those in ``schemas``, the functional ones and, with ``inplace``, the in-place ones (``arccos_``), renamed. An
    alias is its own name in torch's messages (``arccos()``)."""
    from .ops.registry import DECLARED

    texts = [ops[0].schema.text for ops in DECLARED.values() if not ops[0].schema.overload.endswith("out")]
    derived = []
    for alias, target in aliases.items():
        for text in (*texts, *schemas):
            name = text.partition("(")[0].partition(".")[0]
            if name == target or (inplace and name == f"{target}_"):
                derived.append(alias + text[len(target):])
    return tuple(dict.fromkeys(derived))


_WRITTEN = (*_OPERATOR_OVERLOADS, *_WITH_OUT, *_WITHOUT_OUT, *_OTHERS)

# torch's aliases with the parameters of their operator; those torch binds without ``out=`` are in WITHOUT_OUT
_ALIASES = (
    *_alias_overloads({
        "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
        "arctan": "atan", "arctanh": "atanh", "arctan2": "atan2", "clip": "clamp", "fix": "trunc", "negative": "neg",
        "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
        "multiply": "mul", "divide": "div", "subtract": "sub", "swapdims": "transpose", "moveaxis": "movedim",
        "concat": "cat", "concatenate": "cat", "ger": "outer", "matrix_exp": "linalg_matrix_exp",
    }, inplace=True, schemas=_WRITTEN),
    *_alias_overloads({
        "linalg_matmul": "matmul", "special_digamma": "digamma", "special_psi": "digamma", "special_erf": "erf",
        "special_erfc": "erfc", "special_erfinv": "erfinv", "special_exp2": "exp2", "special_expit": "sigmoid",
        "special_expm1": "expm1", "special_gammaln": "lgamma", "special_i0": "i0", "special_log1p": "log1p",
        "special_logit": "logit", "special_logsumexp": "logsumexp", "special_multigammaln": "mvlgamma",
        "special_polygamma": "polygamma", "special_sinc": "sinc", "special_xlogy": "xlogy",
        "special_gammainc": "igamma", "special_gammaincc": "igammac",
    }, inplace=False, schemas=_WRITTEN),
    # (torch binds these in-place overloads for the aliases, where the operator's is not bound)
    "divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    "subtract_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
)

EXTRA_OVERLOADS: tuple[str, ...] = (*_WRITTEN, *_ALIASES)


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
    # (torch's hand-written copy_ keeps the keyword's old name, ``async``, as a hidden signature)
    schemas.append("copy_(Tensor(a!) self, Tensor other, bool async=False) -> Tensor(a!)")
    return tuple(schemas)


DEPRECATED_OVERLOADS = _deprecated_overloads()

# Declared overloads whose Python signature torch writes differently (its hand-written bindings)
REPLACED_OVERLOADS: dict[str, str] = {
    "nonzero": "nonzero(Tensor self, *, bool as_tuple=False) -> Tensor",
    "copy_": "copy_(Tensor(a!) self, Tensor other, bool non_blocking=False) -> Tensor(a!)",
    "count_nonzero": "count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor",
    "full_like": f"full_like(Tensor self, Scalar fill_value, *, {_LIKE_OPTIONS}) -> Tensor",
}

# Tensor methods whose signatures torch writes by hand, differently from the function's
METHOD_OVERLOADS: dict[str, tuple[str, ...]] = {
    "nonzero": ("nonzero(Tensor self) -> Tensor", "nonzero.as_tuple(Tensor self, *, bool as_tuple) -> Tensor[]"),
    "polygamma": ("polygamma(Tensor self, int n) -> Tensor",),
    "where": ("where.self(Tensor self, Tensor condition, Tensor other) -> Tensor",
              "where.ScalarOther(Tensor self, Tensor condition, Scalar other) -> Tensor"),
    "to": tuple(f"to.{overload}(Tensor self, {first}, bool non_blocking=False, bool copy=False, *, "
                "MemoryFormat? memory_format=None) -> Tensor"
                for overload, first in (("device", "Device? device=None, ScalarType? dtype=None"),
                                        ("dtype", "ScalarType dtype"), ("other", "Tensor tensor"))),
    "size": ("size(Tensor self, int? dim=None) -> int[]",),
    "stride": ("stride(Tensor self, int? dim=None) -> int[]",),
    "is_contiguous": ("is_contiguous(Tensor self, *, MemoryFormat memory_format=contiguous_format) -> bool",),
    "numpy": ("numpy(Tensor self, *, bool force=False) -> Any",),
    "new_tensor": ("new_tensor(Tensor self, Any data, *, ScalarType? dtype=None, Device? device=None, "
                   "bool requires_grad=False) -> Tensor",),
    "map_": ("map_(Tensor(a!) self, Tensor other, Any callable) -> Tensor(a!)",),
    "map2_": ("map2_(Tensor(a!) self, Tensor x, Tensor y, Any callable) -> Tensor(a!)",),
    "set_": ("set_(Tensor(a!) self) -> Tensor(a!)",
             "set_.source_Storage(Tensor(a!) self, Storage source) -> Tensor(a!)",
             "set_.source_Storage_storage_offset(Tensor(a!) self, Storage source, SymInt storage_offset, "
             "SymInt[] size, SymInt[] stride=[]) -> Tensor(a!)",
             "set_.source_Tensor(Tensor(a!) self, Tensor source) -> Tensor(a!)",
             "set_.source_Tensor_storage_offset(Tensor(a!) self, Tensor source, SymInt storage_offset, "
             "SymInt[] size, SymInt[] stride=[]) -> Tensor(a!)"),
    # the conversions, with the memory format only
    **{name: (f"{name}(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",) for name in (
        "bool", "byte", "char", "short", "int", "long", "half", "float", "double", "cfloat", "cdouble", "cpu")},
    # CPython methods without parameters (METH_NOARGS), which answer in CPython's words
    **{name: (f"{name}(Tensor self) -> Any",) for name in (
        "_is_view", "data_ptr", "const_data_ptr", "ndimension", "nelement", "tolist", "untyped_storage")},
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
    # aliases torch binds without out= (where their operator's overload has it, or is not bound), full_like
    "divide.Scalar", "divide.Scalar_mode", "multiply.Scalar", "subtract.Scalar", "swapdims.*", "moveaxis.*",
    "matrix_exp", "full_like", "linalg_matrix_exp", "one_hot", "relu", "count_nonzero.*",
    "bernoulli.p",
}) | frozenset(schema.partition("(")[0] for schema in _WITHOUT_OUT)

# Overloads torch binds as functions only (not as Tensor methods)
FUNCTION_ONLY = frozenset({"mm.dtype", "bmm.dtype", "addmm.dtype", "baddbmm.dtype"})

# Public functions (operator names) and Tensor methods torch writes in Python
PYTHON_IN_TORCH = frozenset({
    "block_diag", "split", "unique_consecutive", "einsum", "tensordot", "cdist", "cartesian_prod", "broadcast_tensors",
    "meshgrid", "chain_matmul", "atleast_1d", "atleast_2d", "atleast_3d", "stft"})
PYTHON_IN_TORCH_METHODS = frozenset({"split", "unique_consecutive", "unflatten", "istft", "stft"})

# torch.nn.functional's names that are torch's C++ bindings (the rest of the module is Python in torch too)
NN_FUNCTIONAL_IN_CPP = frozenset({
    "adaptive_avg_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "bilinear", "celu_", "channel_shuffle",
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "cosine_similarity",
    "elu_", "gelu", "hardshrink", "hardtanh_", "leaky_relu_", "linear", "logsigmoid", "native_channel_shuffle",
    "one_hot", "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu", "relu_", "rrelu_",
    "scaled_dot_product_attention", "selu_", "softplus", "softshrink", "threshold_",
})
