"""``torch.overrides``: the Python side of the ``__torch_function__`` protocol (see ``tracegrad._torch_function``)."""

from __future__ import annotations

import collections
import contextlib
import functools
from collections.abc import Callable, Iterable
from typing import Any

from . import _torch_function as _tf
from ._tensor import Tensor
from ._torch_function import default_nowrap_functions as get_default_nowrap_functions

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_default_nowrap_functions",
           "handle_torch_function", "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "is_tensor_like", "is_tensor_method_or_property", "wrap_torch_function", "enable_reentrant_dispatch",
           "TorchFunctionMode", "BaseTorchFunctionMode", "resolve_name"]


def _overrides(kind: type) -> bool:
    """torch's C++ test: a type whose ``__torch_function__`` is called (a plain Tensor's never is)."""
    return kind is not Tensor and _tf.defines_torch_function(kind)


def has_torch_function(relevant_args: Iterable) -> bool:
    """Whether a call with these arguments goes to a ``__torch_function__`` (an overriding type's, or a mode's)."""
    if not _tf.is_torch_function_enabled():
        return _tf.is_torch_function_mode_enabled()
    return _tf.is_torch_function_mode_enabled() or any(_overrides(type(arg)) for arg in relevant_args)


def has_torch_function_unary(arg: Any) -> bool:
    return has_torch_function((arg,))


def has_torch_function_variadic(*args: Any) -> bool:
    return has_torch_function(args)


def _get_overloaded_args(relevant_args: Iterable, get_type_fn: Callable | None = None) -> list:
    """The arguments whose types' ``__torch_function__`` is tried, in torch's order (a plain Tensor's included,
    as torch's Python version includes it)."""
    if get_type_fn is not None and get_type_fn is not type:
        raise NotImplementedError("get_type_fn other than type() is not supported")
    return _tf.overloaded_args(relevant_args, _tf.defines_torch_function)


def handle_torch_function(public_api: Callable, relevant_args: Iterable, *args: Any, **kwargs: Any) -> Any:
    """Hand ``public_api(*args, **kwargs)`` to the active mode and the overloaded arguments' handlers."""
    overloaded = _get_overloaded_args(relevant_args) if _tf.is_torch_function_enabled() else []
    return _tf.handle(public_api, overloaded, args, kwargs, python_api=True)


def wrap_torch_function(dispatcher: Callable) -> Callable:
    """Decorator: the function goes through the protocol for the arguments ``dispatcher`` picks."""
    def inner(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return inner


def is_tensor_like(inp: Any) -> bool:
    """A Tensor, or an object that takes part in the protocol (a class attribute ``__torch_function__``)."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func: Callable) -> bool:
    """Whether ``func`` is a Tensor method, or a property's ``__get__`` (what handlers get for attribute reads)."""
    name = getattr(func, "__name__", None)
    return name == "__get__" or (name is not None and any(
        value is func or getattr(value, "__wrapped__", None) is func for value in vars(Tensor).values()))


def resolve_name(f: Callable) -> str | None:
    """The qualified name of a torch function (``torch.add``, ``torch.Tensor.add``), None if unknown."""
    if getattr(f, "__name__", None) is None or getattr(f, "_torch_unlisted", False):
        return None
    accessor = _tf._property_accessor_name(f)
    if accessor is not None:
        return accessor
    try:
        name = _names_of_functions().get(f)
    except TypeError:  # (an unhashable callable is no torch function)
        return None
    if name is None and not _is_users_own(f):
        name = _tf.public_name(f)  # (what handlers are given may be the function a public one wraps)
    return name


def _is_users_own(f: Callable) -> bool:
    module = getattr(f, "__module__", None)
    return isinstance(module, str) and not module.startswith(("tracegrad", "torch"))


@functools.cache
def _names_of_functions() -> dict:
    """Each public function and Tensor method -> its qualified name, where torch's table of overridable functions
    has it (a function of the user's own, which only looks like one of torch's, has none); later namespaces win,
    as in torch's table."""
    import types

    import tracegrad

    from . import fft, linalg, special
    from .nn import functional, init

    names: dict = {}
    for prefix, owner in (("torch", tracegrad), ("torch.nn.functional", functional), ("torch.nn.init", init),
                          ("torch.Tensor", Tensor), ("torch.linalg", linalg), ("torch.fft", fft),
                          ("torch.special", special)):
        for name, value in vars(owner).items():
            private = name.startswith("_") and not (owner is Tensor and name.endswith("__"))
            if private or isinstance(value, (type, types.ModuleType)) or not callable(value):
                continue
            try:
                names[value] = f"{prefix}.{name}"
            except TypeError:
                continue
    return names


# The functions torch's get_ignored_functions lists (torch's names; those tracegrad has are returned)
_IGNORED = (
    "arange", "are_deterministic_algorithms_enabled", "as_strided", "as_tensor", "asarray",
    "autocast_decrement_nesting", "autocast_increment_nesting", "bartlett_window", "blackman_window",
    "broadcast_shapes", "can_cast", "clear_autocast_cache", "compile", "cond", "cudnn_affine_grid_generator",
    "cudnn_batch_norm", "cudnn_convolution", "cudnn_convolution_add_relu", "cudnn_convolution_relu",
    "cudnn_convolution_transpose", "cudnn_grid_sampler", "cudnn_is_acceptable", "default_generator", "device",
    "dtype", "empty", "empty_permuted", "empty_quantized", "empty_strided", "enable_grad", "eye", "fill",
    "finfo", "fork", "from_file", "from_numpy", "frombuffer", "full", "get_autocast_cpu_dtype",
    "get_autocast_dtype", "get_autocast_gpu_dtype", "get_autocast_ipu_dtype", "get_autocast_xla_dtype",
    "get_default_device", "get_default_dtype", "get_deterministic_debug_mode", "get_device_module",
    "get_float32_matmul_precision", "get_num_interop_threads", "get_num_threads", "get_rng_state",
    "hamming_window", "hann_window", "has_lapack", "has_mkl", "has_openmp", "has_spectral", "iinfo",
    "import_ir_module", "import_ir_module_from_buffer", "inference_mode", "init_num_threads", "initial_seed",
    "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled", "is_autocast_enabled", "is_autocast_ipu_enabled", "is_autocast_xla_enabled",
    "is_deterministic_algorithms_warn_only_enabled", "is_grad_enabled", "is_inference_mode_enabled",
    "is_storage", "is_tensor", "is_vulkan_available", "is_warn_always_enabled", "kaiser_window", "layout",
    "linspace", "load", "logspace", "manual_seed", "memory_format", "merge_type_from_type_comment",
    "miopen_ctc_loss", "mkldnn_adaptive_avg_pool2d", "mkldnn_convolution", "mkldnn_linear_backward_weights",
    "mkldnn_max_pool2d", "mkldnn_max_pool3d", "mkldnn_rnn_layer", "no_grad", "normal", "ones", "parse_ir",
    "parse_schema", "parse_type_comment", "promote_types", "qscheme", "rand", "rand_like", "randint",
    "randint_like", "randn", "randn_like", "randperm", "range", "result_type", "save", "scalar_tensor",
    "seed", "set_anomaly_enabled", "set_autocast_cache_enabled", "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled", "set_autocast_dtype", "set_autocast_enabled", "set_autocast_gpu_dtype",
    "set_autocast_ipu_dtype", "set_autocast_ipu_enabled", "set_autocast_xla_dtype",
    "set_autocast_xla_enabled", "set_default_device", "set_default_tensor_type",
    "set_deterministic_debug_mode", "set_float32_matmul_precision", "set_flush_denormal", "set_grad_enabled",
    "set_num_interop_threads", "set_num_threads", "set_printoptions", "set_rng_state", "set_warn_always",
    "sparse_bsc_tensor", "sparse_bsr_tensor", "sparse_compressed_tensor", "sparse_coo_tensor",
    "sparse_csc_tensor", "sparse_csr_tensor", "sym_constrain_range", "sym_constrain_range_for_size",
    "sym_fresh_size", "tensor", "thread_safe_generator", "tril_indices", "triu_indices", "typename",
    "unify_type_list", "use_deterministic_algorithms", "vander", "vmap", "wait", "zeros",
)
_IGNORED_TENSOR_METHODS = (
    "__delattr__", "__delitem__", "__dir__", "__getattribute__", "__hash__", "__init__", "__init_subclass__",
    "__iter__", "__new__", "__setattr__", "__subclasshook__", "__torch_dispatch__", "__torch_function__",
    "_addmm_activation", "_conj", "_conj_physical", "_dtensor__new__", "_fix_weakref", "_is_all_true",
    "_is_any_true", "_is_zerotensor", "_lazy_clone", "_make_subclass", "_make_wrapper_subclass", "_neg_view",
    "_philox_normal_", "_philox_uniform_", "_reduce_ex_internal", "_rev_view_func_unsafe", "_to_sparse",
    "_to_sparse_bsc", "_to_sparse_bsr", "_to_sparse_csc", "_to_sparse_csr", "_typed_storage", "_use_count",
    "_view_func", "_view_func_unsafe", "as_subclass", "eig", "lstsq", "new", "new_empty", "new_empty_strided",
    "new_full", "new_ones", "new_tensor", "new_zeros", "reinforce", "solve", "stride", "symeig",
    "to_padded_tensor", "to_sparse_bsc", "to_sparse_bsr", "to_sparse_coo", "to_sparse_csc", "to_sparse_csr",
    "unflatten",
)


def get_ignored_functions() -> set:
    """The public functions that never go through the protocol."""
    from . import __dict__ as namespace

    return ({namespace[name] for name in _IGNORED if name in namespace}
            | {vars(Tensor)[name] for name in _IGNORED_TENSOR_METHODS if name in vars(Tensor)}
            | {getattr(Tensor, name) for name in ("__new__", "__init_subclass__", "__subclasshook__")})


def get_overridable_functions() -> dict:
    """Namespace -> the functions in it that go through the protocol."""
    import types

    from . import linalg, special
    from .nn import functional

    result: dict = collections.defaultdict(list)  # (torch's is a defaultdict too)
    for owner in (__import__("tracegrad"), functional, linalg, special):
        result[owner] = [value for name, value in vars(owner).items()
                         if not name.startswith("_") and name not in _IGNORED
                         and (isinstance(value, types.FunctionType) or hasattr(value, "schema"))]
    result[Tensor] = [value for name, value in vars(Tensor).items()
                      if not name.startswith("_") and callable(value)]
    return result


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """torch's guard for reentrant dispatch: nothing to set up here."""
    yield


class TorchFunctionMode:
    """Sees every torch function, Tensor method and operator called while it is entered (innermost first),
    for plain tensors too. Its own calls inside ``__torch_function__`` reach the modes entered before it."""

    inner: TorchFunctionMode | None

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        _pop_mode()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any):
        import warnings

        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
                      stacklevel=2)
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every function as called."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _push_mode(mode: TorchFunctionMode) -> None:
    _tf.push_mode(mode)


def _pop_mode() -> TorchFunctionMode:
    return _tf.pop_mode()


@contextlib.contextmanager
def _pop_mode_temporarily():
    old = _pop_mode()
    try:
        yield old
    finally:
        _push_mode(old)


def _get_current_function_mode() -> TorchFunctionMode | None:
    stack = _tf.mode_stack()
    return stack[-1] if stack else None


def _get_current_function_mode_stack() -> list:
    return list(_tf.mode_stack())


def _is_torch_function_mode_enabled() -> bool:
    return _tf.is_torch_function_mode_enabled()
