"""Types and helpers of the operator database.

A sample is described once, with NumPy arrays, and *materialised* separately for each library
(tracegrad and the torch oracle), so both libraries see bit-identical inputs. Arrays wrapped in
:class:`Arr` carry a memory layout ("contig", "T" = transposed view, "strided" = every other
element of a wider tensor); the values are the same whatever the layout, only the strides change.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FLOATS: tuple[str, ...] = ("float32", "float64")
FLOATS_INT: tuple[str, ...] = ("float32", "float64", "int64")
FLOATS_INTS_BOOL: tuple[str, ...] = ("float32", "float64", "int64", "int32", "bool")
INTS: tuple[str, ...] = ("int64", "int32", "uint8")
INTS_BOOL: tuple[str, ...] = ("int64", "int32", "uint8", "bool")
COMPLEX: tuple[str, ...] = ("complex64", "complex128")
C128: tuple[str, ...] = ("complex128",)

# (rtol, atol) per dtype when comparing tracegrad with torch (a complex dtype compares real and imaginary
# parts with its real counterpart's tolerance unless an entry's ``tol`` names the complex dtype itself).
DEFAULT_TOL: dict[str, tuple[float, float]] = {"float32": (1e-5, 1e-5), "float64": (1e-7, 1e-9),
                                               "complex64": (1e-5, 1e-5), "complex128": (1e-7, 1e-9)}
# dtypes whose runs differentiate (gradcheck, gradients, graphs, forward AD)
GRAD_DTYPES: tuple[str, ...] = ("float64", "complex128")

LAYOUTS = ("contig", "T", "strided")


def is_floating(dtype: str) -> bool:
    return dtype.startswith("float")


def is_complex(dtype: str) -> bool:
    return dtype.startswith("complex")


def is_inexact(dtype: str) -> bool:
    """Floating or complex: the runs whose samples take continuous values (and can have gradients)."""
    return is_floating(dtype) or is_complex(dtype)


def real_dtype(dtype: str) -> str:
    """complex64 -> float32, complex128 -> float64; any other dtype unchanged."""
    return {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)


# --------------------------------------------------------------------------------------------- sample values


@dataclass(frozen=True)
class Arr:
    """A tensor argument: its logical values and the memory layout used to build it."""

    values: np.ndarray
    layout: str = "contig"

    def __post_init__(self) -> None:
        assert self.layout in LAYOUTS, self.layout
        if self.layout == "T":
            assert self.values.ndim >= 2, "a transposed layout needs at least 2 dims"
        if self.layout == "strided":
            assert self.values.ndim >= 1, "a strided layout needs at least 1 dim"

    @property
    def dtype(self) -> str:
        return str(self.values.dtype)


@dataclass(frozen=True)
class DType:
    """A dtype argument (``sum(x, dtype=torch.float64)``), resolved per library."""

    name: str


@dataclass
class SampleInput:
    """One call: ``op(*args, **kwargs)``. Leaves that are :class:`Arr` (or ndarrays) become tensors."""

    name: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    # generic test -> reason, for a sample that does not apply to a test ("out": torch.where has no
    # out= overload with a Python-scalar other). Keys: forward gradcheck gradgrad grad graph inplace out
    # nondiff.
    skips: dict = field(default_factory=dict)


class Maker:
    """Deterministic array factory for one (op, dtype) pair.

    ``make(*shape)`` returns an :class:`Arr` of the pair's dtype (or ``dtype=``), with values in
    ``[low, high)``; ``layout`` chooses the strides of the tensor later built from it. A complex dtype draws
    the real and the imaginary parts independently, both in ``[low, high)`` (``exclude_zero`` moves the real
    part, so ``|v| >= 0.25`` too); the structured helpers (``well_conditioned``, ``spd``...) make complex
    matrices with the same structure (Hermitian where the real one is symmetric, unitary factors).
    """

    def __init__(self, rng: np.random.RandomState, dtype: str) -> None:
        self.rng = rng
        self.dtype = dtype

    def values(self, shape: tuple[int, ...], dtype: str | None = None, low: float | None = None,
               high: float | None = None, exclude_zero: bool = False, distinct: bool = False) -> np.ndarray:
        dtype = dtype or self.dtype
        rng = self.rng
        if dtype == "bool":
            return np.asarray(rng.rand(*shape) < 0.5)
        if is_complex(dtype):
            real = self.values(shape, real_dtype(dtype), low, high, exclude_zero)
            imag = self.values(shape, real_dtype(dtype), low, high)
            return np.asarray(real + 1j * imag, dtype=dtype)
        if is_floating(dtype):
            low = -2.0 if low is None else low
            high = 2.0 if high is None else high
            v = rng.uniform(low, high, size=shape)
            if exclude_zero:  # keep |v| away from 0 (division, reciprocal, copysign kinks)
                v = np.where(np.abs(v) < 0.25, np.copysign(0.25, v) + v, v)
            return np.asarray(v, dtype=dtype)
        # integers: unsigned types get non-negative values
        n = int(np.prod(shape, dtype=np.int64))
        if distinct:  # a permutation: no ties for sort / topk / argmax (range widened as needed)
            low = (0 if dtype == "uint8" else -n) if low is None else int(low)
            high = max(low + n, 6) if high is None else int(high)
            assert high - low >= n, "range too small for distinct values"
            v = rng.permutation(np.arange(low, high))[:n].reshape(shape)
        else:
            low = (0 if dtype == "uint8" else -5) if low is None else int(low)
            high = 6 if high is None else int(high)
            v = rng.randint(low, high, size=shape)
        if exclude_zero:
            v = np.where(v == 0, 1, v)
        return np.asarray(v, dtype=dtype)

    def __call__(self, *shape: int, layout: str = "contig", **kw: Any) -> Arr:
        return Arr(self.values(tuple(shape), **kw), layout)

    def index(self, shape: tuple[int, ...], high: int, low: int = 0, layout: str = "contig") -> Arr:
        """An int64 index tensor with entries in [low, high)."""
        return Arr(self.rng.randint(low, high, size=shape).astype(np.int64), layout)

    def perm_index(self, n: int, k: int | None = None) -> Arr:
        """k distinct int64 indices below n (no duplicates: deterministic scatter/index_copy)."""
        return Arr(self.rng.permutation(n)[: (n if k is None else k)].astype(np.int64))

    def scatter_index(self, shape: tuple[int, ...], dim: int, size: int) -> Arr:
        """int64 index of ``shape`` whose entries along ``dim`` are distinct values below ``size``
        (so scatter / put without accumulation is deterministic and its gradient well defined)."""
        dim = dim % len(shape)
        moved = shape[:dim] + shape[dim + 1:] + (shape[dim],)
        rows = [self.rng.permutation(size)[: shape[dim]] for _ in range(int(np.prod(moved[:-1], dtype=int)))]
        v = np.array(rows, dtype=np.int64).reshape(moved)
        return Arr(np.ascontiguousarray(np.moveaxis(v, -1, dim)))

    def mask(self, *shape: int, layout: str = "contig") -> Arr:
        return Arr(np.asarray(self.rng.rand(*shape) < 0.5), layout)

    # ---- matrices with a known structure (domain restrictions of linalg ops)
    def _uniform(self, low: float, high: float, shape: tuple[int, ...]) -> np.ndarray:
        """uniform(low, high) values; complex (both parts drawn) for a complex run."""
        v = self.rng.uniform(low, high, size=shape)
        if is_complex(self.dtype):
            v = v + 1j * self.rng.uniform(low, high, size=shape)
        return v

    def _normal(self, shape: tuple[int, ...]) -> np.ndarray:
        v = self.rng.normal(size=shape)
        if is_complex(self.dtype):
            v = v + 1j * self.rng.normal(size=shape)
        return v

    def well_conditioned(self, *shape: int, layout: str = "contig") -> Arr:
        """Square matrices (batched) close to the identity: invertible with condition number < ~10."""
        n = shape[-1]
        scale = 0.5 / np.sqrt(n) / (np.sqrt(2) if is_complex(self.dtype) else 1)  # |entries| <= 0.5/sqrt(n)
        v = self._uniform(-1, 1, shape) * scale + np.eye(n) * self.rng.choice([-1, 1], n)
        return Arr(v.astype(self.dtype), layout)

    def spd(self, *shape: int, layout: str = "contig") -> Arr:
        """Symmetric (Hermitian) positive definite matrices: A Aᴴ + n·I."""
        n = shape[-1]
        a = self._uniform(-1, 1, shape)
        v = a @ np.swapaxes(a, -1, -2).conj() + n * np.eye(n)
        return Arr(v.astype(self.dtype), layout)

    def symmetric_distinct_eig(self, *shape: int, layout: str = "contig") -> Arr:
        """Symmetric (Hermitian) matrices Q diag(λ) Qᴴ with eigenvalues at least 1 apart (eigh gradients need
        gaps)."""
        n = shape[-1]
        q, _ = np.linalg.qr(self._normal(shape))
        lam = np.arange(n) * 1.5 - n / 2 + self.rng.uniform(-0.2, 0.2, size=shape[:-1])
        v = (q * lam[..., None, :]) @ np.swapaxes(q, -1, -2).conj()
        v = (v + np.swapaxes(v, -1, -2).conj()) / 2
        return Arr(v.astype(self.dtype), layout)

    def distinct_singular(self, *shape: int, layout: str = "contig") -> Arr:
        """Matrices U diag(σ) Vᴴ with singular values at least 0.5 apart and away from 0."""
        m, n = shape[-2], shape[-1]
        k = min(m, n)
        u, _ = np.linalg.qr(self._normal(shape[:-2] + (m, k)))
        w, _ = np.linalg.qr(self._normal(shape[:-2] + (n, k)))
        s = 1.0 + 0.7 * np.arange(k)[::-1] + self.rng.uniform(0, 0.1, size=shape[:-2] + (k,))
        v = (u * s[..., None, :]) @ np.swapaxes(w, -1, -2).conj()
        return Arr(v.astype(self.dtype), layout)


def seeded_rng(*key: str) -> np.random.RandomState:
    """A RandomState seeded from a stable hash of the key (not Python's salted ``hash``)."""
    return np.random.RandomState(zlib.crc32("/".join(key).encode()) & 0x7FFFFFFF)


# --------------------------------------------------------------------------------------------- the entry


SampleFn = Callable[[Maker], Iterable[SampleInput]]
OutputProcess = Callable[[Any, Any], Any]  # (lib, output) -> comparable output
InputProcess = Callable[[Any, tuple, dict], tuple[tuple, dict]]


@dataclass(frozen=True)
class OpInfo:
    """One operator (or one configuration of an operator) and how to test it.

    ``name`` is the public path that resolves in both libraries: ``"sin"``, ``"linalg.inv"``,
    ``"nn.functional.gelu"``, or ``"Tensor.masked_fill"`` for a method called on the first argument.
    """

    name: str
    sample_inputs: SampleFn
    variant: str = ""  # distinguishes several entries of one op (test id: name.variant)
    dtypes: tuple[str, ...] = FLOATS
    # Autograd: the op is differentiable w.r.t. every floating tensor argument except those in
    # ``nondiff_args`` (positions or keyword names). Integer/bool tensors are never differentiable.
    differentiable: bool = True
    nondiff_args: frozenset = frozenset()
    supports_gradgrad: bool = True
    gradgrad_skip_reason: str = ""
    inplace: str | None = None  # path of the in-place variant, e.g. "Tensor.add_" or "nn.functional.relu_"
    supports_out: bool = False
    is_view: bool = False  # every output aliases args[0] (checked by mutating args[0] afterwards)
    aliases: tuple[str, ...] = ()  # other paths that must compute the same thing (e.g. "Tensor.sin")
    tol: dict = field(default_factory=dict)  # dtype -> (rtol, atol), overrides DEFAULT_TOL
    grad_tol: tuple[float, float] = (1e-7, 1e-9)  # (rtol, atol) of gradients vs torch (float64, complex128)
    gradcheck_kwargs: dict = field(default_factory=dict)  # e.g. {"atol": 1e-4} for slow-converging FD
    # Maps raw outputs to gauge-invariant ones (qr/eigh/svd signs) for every comparison and gradcheck.
    output_process: OutputProcess | None = None
    # Rewrites the arguments right before every call, in every test (lib, args, kwargs) -> (args, kwargs).
    # E.g. cholesky/eigh read one triangle only: symmetrising makes finite differences see what the
    # analytic (symmetric) gradient assumes.
    input_process: InputProcess | None = None
    # Why the recorded graph differs from torch's, where it knowingly does (test_graph_matches_torch skips it).
    graph_deviation: str = ""
    # Why gradients under create_graph=True are not connected to the inputs as torch's are (a known bug:
    # test_gradient_requires_grad_matches_torch expects the failure until it is fixed, and says so).
    create_graph_deviation: str = ""
    domain: str = ""  # the domain restriction the sample generator enforces (documentation)
    notes: str = ""

    def __post_init__(self) -> None:
        if not self.supports_gradgrad:
            assert self.gradgrad_skip_reason, f"{self.id}: record why gradgrad is skipped"
        if self.differentiable:
            assert "float64" in self.dtypes, f"{self.id}: gradients are checked in float64"

    @property
    def id(self) -> str:
        return f"{self.name}.{self.variant}" if self.variant else self.name

    def tolerance(self, dtype: str) -> tuple[float, float]:
        """(rtol, atol) for a run in ``dtype``. Integer/bool runs use float32's: their floating outputs are
        promoted to the default dtype, and any atol < 0.5 still compares integer outputs exactly. A complex
        run uses the entry's tolerance for its real counterpart unless ``tol`` names the complex dtype."""
        key = dtype if is_inexact(dtype) else "float32"
        return self.tol.get(key, self.tol.get(real_dtype(key), DEFAULT_TOL[key]))

    def samples(self, dtype: str) -> list[SampleInput]:
        out = list(self.sample_inputs(Maker(seeded_rng(self.id, dtype), dtype)))
        names = [s.name for s in out]
        assert len(set(names)) == len(names), f"{self.id}: duplicate sample names {names}"
        assert len(out) <= 3, f"{self.id}: keep at most 3 samples per dtype"
        return out


# --------------------------------------------------------------------------------------------- resolution


def resolve(lib: Any, path: str) -> Callable:
    """The callable at ``path`` in ``lib``; ``Tensor.foo`` calls ``args[0].foo(*args[1:])``."""
    if path.startswith("Tensor."):
        method = path[len("Tensor."):]

        def call_method(self, *args, **kwargs):
            return getattr(self, method)(*args, **kwargs)

        call_method.__name__ = method
        return call_method
    obj = lib
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


# --------------------------------------------------------------------------------------------- materialisation


@dataclass(frozen=True)
class _Slot:
    index: int


def _tree_map(fn: Callable[[Any], Any], obj: Any) -> Any:
    if isinstance(obj, tuple):
        return tuple(_tree_map(fn, o) for o in obj)
    if isinstance(obj, list):
        return [_tree_map(fn, o) for o in obj]
    if isinstance(obj, dict):
        return {k: _tree_map(fn, v) for k, v in obj.items()}
    return fn(obj)


def make_tensor(lib: Any, arr: Arr) -> Any:
    """Build a tensor of ``lib`` holding ``arr.values`` with ``arr.layout``'s strides."""
    v = arr.values
    if arr.layout == "contig":
        return lib.tensor(v)
    if arr.layout == "T":
        return lib.tensor(np.ascontiguousarray(np.swapaxes(v, -1, -2))).transpose(-2, -1)
    wide = np.zeros(v.shape[:-1] + (2 * v.shape[-1],), dtype=v.dtype)
    wide[..., ::2] = v
    return lib.tensor(wide)[..., ::2]


class Call:
    """A sample materialised for one library.

    ``tensors`` lists every tensor leaf (in argument order); ``diff`` the indices of those that
    require grad. ``run(fn, replace)`` calls ``fn`` with some leaves substituted (gradcheck).
    """

    def __init__(self, lib: Any, op: OpInfo, sample: SampleInput, requires_grad: bool,
                 grad_all_floats: bool = False) -> None:
        self.lib = lib
        self.op = op
        self.tensors: list[Any] = []
        self.diff: list[int] = []
        self.nondiff_float: list[int] = []

        def leaf(key):
            def build(x):
                if isinstance(x, np.ndarray):
                    x = Arr(x)
                if isinstance(x, DType):
                    return getattr(lib, x.name)
                if not isinstance(x, Arr):
                    return x
                t = make_tensor(lib, x)
                if x.layout != "contig" and lib.__name__ == "torch":
                    # validates the database itself: the layout must really be non-contiguous
                    assert not t.is_contiguous(), f"{op.id}/{sample.name}: layout {x.layout} is contiguous"
                floating = x.values.dtype.kind in "fc"  # floating or complex: may require grad
                wants = floating and (grad_all_floats or (op.differentiable and key not in op.nondiff_args))
                if requires_grad and wants:
                    t = t.detach().requires_grad_(True)
                    self.diff.append(len(self.tensors))
                elif floating and not wants:
                    self.nondiff_float.append(len(self.tensors))
                self.tensors.append(t)
                return _Slot(len(self.tensors) - 1)
            return build

        self._args = tuple(_tree_map(leaf(i), a) for i, a in enumerate(sample.args))
        self._kwargs = {k: _tree_map(leaf(k), v) for k, v in sample.kwargs.items()}

    def _fill(self, tensors: list[Any]) -> tuple[tuple, dict]:
        def sub(x):
            return tensors[x.index] if isinstance(x, _Slot) else x
        return _tree_map(sub, self._args), _tree_map(sub, self._kwargs)

    @property
    def args(self) -> tuple:
        return self._fill(self.tensors)[0]

    @property
    def kwargs(self) -> dict:
        return self._fill(self.tensors)[1]

    def run(self, fn: Callable, replace: dict[int, Any] | None = None, **extra: Any) -> Any:
        tensors = list(self.tensors)
        for i, t in (replace or {}).items():
            tensors[i] = t
        args, kwargs = self._fill(tensors)
        if self.op.input_process is not None:
            args, kwargs = self.op.input_process(self.lib, args, kwargs)
        return fn(*args, **kwargs, **extra)

    @property
    def diff_inputs(self) -> list[Any]:
        return [self.tensors[i] for i in self.diff]


def flatten_outputs(out: Any) -> list[Any]:
    """Tensors of a (nested) result, in order; non-tensors are dropped."""
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flatten_outputs(o)]
    return [out] if hasattr(out, "shape") and hasattr(out, "dtype") else []


def layouts(sample: SampleInput) -> set[str]:
    """Memory layouts used by the tensor arguments of a sample."""
    found: set[str] = set()

    def visit(x):
        if isinstance(x, Arr):
            found.add(x.layout)
        return x
    _tree_map(visit, (sample.args, sample.kwargs))
    return found


def dtype_name(dtype: Any) -> str:
    """'torch.float32' / 'tracegrad.float32' / np.float32 -> 'float32'."""
    return str(dtype).rsplit(".", 1)[-1]
