"""tracegrad: PyTorch-shaped autograd on NumPy, built to be looked inside.

``import tracegrad as torch`` runs ordinary PyTorch code within the implemented operator set.
"""

from __future__ import annotations

from . import _tensor_methods, _warnings, autograd, ops

# NumPy warns about the floating-point events PyTorch computes silently (1 / 0 is inf, log(-1) NaN): not from
# tracegrad's own code. The user's own NumPy calls warn as before.
_warnings.silence_numpy_in_tracegrad()
from ._factories import (
    Generator,
    arange,
    as_tensor,
    empty,
    eye,
    from_numpy,
    full,
    get_rng_state,
    initial_seed,
    linspace,
    logspace,
    manual_seed,
    ones,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
    tensor,
    zeros,
)
from ._factories import default_generator as default_generator
from ._state import STATE as _STATE
from ._tensor import Tensor
from ._tensor import refuse_writes_to_read_only_properties as _refuse_writes_to_read_only_properties
from ._tensor_str import set_printoptions
from ._type_info import finfo, iinfo  # noqa: F401
from .autograd import enable_grad, inference_mode, no_grad, set_grad_enabled
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled
from .autograd.grad_mode import is_grad_enabled, is_inference_mode_enabled
from .backend.device import device
from .backend.dtypes import bool_ as bool
from .backend.dtypes import (
    complex64,
    complex128,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    set_default_dtype,
    uint8,
)
from .memory_format import (
    _mkldnn,
    channels_last,
    channels_last_3d,
    contiguous_format,
    jagged,
    layout,
    memory_format,
    preserve_format,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
    strided,
)
from .ops.creation import clone, detach, empty_like, full_like, ones_like, zeros_like
from .ops.indexing import public_index_put as index_put
from .ops.indexing import take
from .ops.linalg_core import matmul, mm
from .ops.pointwise import (
    add,
    cos,
    div,
    eq,
    exp,
    ge,
    gt,
    le,
    log,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    mul,
    ne,
    neg,
    pow,
    rsub,
    sigmoid,
    sin,
    sqrt,
    sub,
    tanh,
    where,
)
from .ops.reductions import mean, sum
from .ops.shape import cat, stack
from .ops.views import (
    as_strided,
    as_strided_scatter,
    chunk,
    diagonal,
    diagonal_scatter,
    flatten,
    movedim,
    narrow,
    permute,
    reshape,
    select,
    select_scatter,
    slice_scatter,
    split,
    squeeze,
    t,
    transpose,
    unbind,
    unsqueeze,
)
from .size import Size

moveaxis, swapaxes, swapdims = movedim, transpose, transpose
half, float, double, long, short, cdouble, cfloat = float16, float32, float64, int64, int16, complex128, complex64
int = int32
from .version import __version__  # noqa: E402

_tensor_methods.install()


def _export_public() -> None:
    namespace = globals()
    for module in ops.MODULES:
        for name, fn in getattr(module, "PUBLIC", {}).items():
            namespace[name] = fn


_export_public()


from . import _C  # noqa: E402
from ._legacy_types import (  # noqa: E402,F401
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    set_default_tensor_type,
)
from ._runtime import (  # noqa: E402,F401
    are_deterministic_algorithms_enabled,
    get_default_device,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    get_num_interop_threads,
    get_num_threads,
    init_num_threads,
    is_deterministic_algorithms_warn_only_enabled,
    set_default_device,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    set_flush_denormal,
    set_num_interop_threads,
    set_num_threads,
    use_deterministic_algorithms,
)
from ._warnings import is_warn_always_enabled, set_warn_always  # noqa: E402,F401


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:  # noqa: A002 - PyTorch's parameter name
    return input.numel()


def is_floating_point(input: Tensor) -> bool:  # noqa: A002
    return input.is_floating_point()


def is_complex(input: Tensor) -> bool:  # noqa: A002
    return input.is_complex()


# Layers above the core import tracegrad themselves, so they come last.
from . import (  # noqa: E402
    accelerator,
    amp,
    backends,
    compiler,
    cpu,
    cuda,
    distributed,
    distributions,
    fft,
    func,
    jit,
    linalg,
    mps,
    multiprocessing,
    nn,
    optim,
    overrides,
    profiler,
    quasirandom,
    random,
    serialization,
    signal,
    special,
    testing,
    utils,
)
from .amp import GradScaler, autocast  # noqa: E402,F401  (torch.GradScaler is torch.amp.GradScaler)
from .nn._torch_namespace import PUBLIC as _NN_PUBLIC  # noqa: E402
from .serialization import load, save  # noqa: E402,F401
from .storage import TypedStorage, UntypedStorage, is_storage  # noqa: E402,F401

globals().update(_NN_PUBLIC)  # torch.kl_div, torch.max_pool2d...: nn functions with ATen's signatures

from . import _public_names, _tensor_compat, version  # noqa: E402
from ._build_info import e, has_lapack, has_mkl, has_openmp, has_spectral, inf, nan, newaxis, pi  # noqa: E402,F401
from ._legacy_storages import (  # noqa: E402,F401
    BFloat16Storage,
    BoolStorage,
    ByteStorage,
    CharStorage,
    ComplexDoubleStorage,
    ComplexFloatStorage,
    DoubleStorage,
    FloatStorage,
    HalfStorage,
    IntStorage,
    LongStorage,
    ShortStorage,
)
from .amp.autocast_state import (  # noqa: E402,F401
    autocast_decrement_nesting,
    autocast_increment_nesting,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_cpu_dtype,
    set_autocast_cpu_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .utils.dlpack import from_dlpack, to_dlpack  # noqa: E402,F401

_tensor_compat.install()  # cfloat/cdouble, storage_type, resize/resize_as, __dlpack__...
_refuse_writes_to_read_only_properties(Tensor)  # (after every layer attached its properties)


def _guard_arguments() -> None:
    """torch's parser errors for the functions and methods torch binds in C++ (``_arg_parser``): installed last,
    around what every layer above has put in the namespaces."""
    from . import _arg_parser
    from ._python_overloads import NN_FUNCTIONAL_IN_CPP
    from .nn import functional

    _arg_parser.guard_functions(globals())
    for module, prefix in ((linalg, "linalg_"), (special, "special_"), (fft, "fft_")):
        _arg_parser.guard_functions(vars(module), prefix)
    _arg_parser.guard_functions(vars(functional), names=NN_FUNCTIONAL_IN_CPP)
    _arg_parser.guard_methods(Tensor)


_guard_arguments()
_tensor_compat.name_special_methods_as_torch()  # (last: on the methods as every layer left them)
_public_names.name_public_callables()  # (so are the public functions and methods)


def load_ipython_extension(ip) -> None:
    """``%load_ext tracegrad``: the magics and the live feed (tracegrad.notebook, imported only here)."""
    from .notebook import load_ipython_extension as load_extension

    load_extension(ip)


def unload_ipython_extension(ip) -> None:
    from .notebook import unload_ipython_extension as unload

    unload(ip)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the prebuilt JupyterLab extension lives (used by `jupyter labextension develop`)."""
    return [{"src": "labextension", "dest": "tracegrad-inspector"}]


_BAREBONES_UNSIGNED_NAMES = ("uint16", "uint32", "uint64")


def __getattr__(name: str):
    """``tracegrad.uint16``, ``uint32``, ``uint64``: PyTorch's barebones unsigned dtypes, brought into use (their
    refusing kernels installed, see ops/barebones_unsigned.py) the first time one is read, then plain globals."""
    if name == "bfloat16":
        from .backend.dtypes import bfloat16_in_use

        globals()[name] = bfloat16_in_use()
        return globals()[name]
    if name in _BAREBONES_UNSIGNED_NAMES:
        from .backend.dtypes import barebones_by_name

        namespace = globals()
        for each in _BAREBONES_UNSIGNED_NAMES:
            namespace[each] = barebones_by_name(each)
        return namespace[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_BAREBONES_UNSIGNED_NAMES, "bfloat16"})


from . import library  # noqa: E402,F401 - torch.library (after the operators it defines its own beside)
