"""NumPy arrays given to torch's functions and methods where a Tensor or a number goes, against torch: the same error
(type and message) where torch refuses, the same result where it accepts.

torch's argument parser takes no NumPy array for a Tensor, a Scalar or a float parameter, not even a 0-d one:
``torch.add(t, np.ones(2))`` is ``add(): argument 'other' (position 2) must be Tensor, not numpy.ndarray``, an array
in a tensor list is ``expected Tensor as element 1 in argument 0, but got numpy.ndarray``. tracegrad's kernels run
on arrays, so it computed instead (``torch.add(t, arr)`` a float64 tensor, ``t.add_(arr)``, ``torch.cat([t, arr])``,
``t.masked_fill(np_mask, 0)``, ``F.linear(x, arr)``...). What torch accepts stays accepted: the tensor constructors,
indexing with arrays, NumPy scalars read as numbers, and arrays beside tensors in Python's operators (NumPy's to
compute: ``test_numpy_arrays_beside_tensors_vs_torch.py``).

The sweeps are driven by the OpInfo database (each tensor of each sample given as an array in turn, each number as a
0-d array and as a NumPy scalar, through the function, its aliases and its in-place form) and by the operator registry
(every public name and Tensor method of a registered operator, given arrays at its first positions); the programs
below add the calls the database does not make (lists, ``out=``, modules, optimizers, constructors, indexing) and the
paths that hand a call on before the eager one (profiler, interceptors, transforms, forward AD, anomaly mode).
"""

from __future__ import annotations

import functools
import importlib
import warnings

import numpy as np
import pytest
from _lib import tg, torch
from opinfo import op_db
from opinfo.core import Call, flatten_outputs, resolve

from tracegrad.dispatch import Interpreter
from tracegrad.ops.registry import REGISTRY
from tracegrad.utils._python_dispatch import OpInterceptor


def _described(result) -> tuple:
    """A result comparable across libraries: each tensor's dtype, shape and values, or the value's type and repr."""
    tensors = flatten_outputs(result)
    if not tensors:
        return (("value", type(result).__name__, repr(result)),)
    return tuple((str(t.dtype).replace("tracegrad", "torch"), tuple(t.shape), np.array(t.detach().tolist()))
                 for t in tensors)


def _outcome(program, lib) -> tuple:
    """``program(lib)``'s described result, or its error's type and message (warnings ignored: errors compared)."""
    lib.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("ok", _described(program(lib)))
        except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
            return (type(exc).__name__, str(exc))


def _same(got: tuple, expected: tuple) -> bool:
    """Whether two outcomes agree: the same error, or results of the same kinds, dtypes and shapes with values equal
    to a float64 rounding (a kernel's last bits are other tests' business)."""
    if got[0] != "ok" or expected[0] != "ok":
        return got == expected
    if len(got[1]) != len(expected[1]):
        return False
    for ours, theirs in zip(got[1], expected[1]):
        if ours[:2] != theirs[:2]:
            return False
        if isinstance(ours[2], str) or isinstance(theirs[2], str):
            if ours[2] != theirs[2]:
                return False
        elif not np.allclose(ours[2], theirs[2], rtol=1e-12, atol=0, equal_nan=True):
            return False
    return True


# ---- the OpInfo database: each tensor as an array, each number as a 0-d array and as a NumPy scalar ----------------

# Functions that call torch.ops.aten in torch: its dispatcher refuses an array with a RuntimeError listing each
# overload's schema, the array's repr and pybind11's cast error, which tracegrad's ops.aten does not reproduce (it
# refuses in the Python binding's TypeError words): only that both refuse is compared
_REFUSED_THROUGH_TORCH_OPS = {"nn.grad.conv2d_input", "nn.grad.conv2d_weight"}


def _leaf_as_array(k: int):
    def spoil(call: Call) -> tuple[tuple, dict]:
        tensors = list(call.tensors)
        tensors[k] = np.array(tensors[k].detach().numpy())  # (a copy: an in-place form must not write the other's)
        return call._fill(tensors)
    return spoil


def _number_as(position, make):
    def spoil(call: Call) -> tuple[tuple, dict]:
        args, kwargs = call.args, call.kwargs
        if isinstance(position, int):
            return args[:position] + (make(args[position]),) + args[position + 1:], kwargs
        return args, dict(kwargs, **{position: make(kwargs[position])})
    return spoil


def _numpy_scalar(value):
    return np.float64(value) if isinstance(value, float) else np.int64(value)


def _spoilings(op, sample) -> list[tuple[str, object]]:
    """(label, the sample's arguments changed by it) for each tensor and each number of ``sample``."""
    spoilings = [(f"tensor {k} as an array", _leaf_as_array(k))
                 for k in range(len(Call(torch, op, sample, requires_grad=False).tensors))]
    for position, value in [*enumerate(sample.args), *sample.kwargs.items()]:
        if value.__class__ in (int, float):
            spoilings.append((f"number {position} as a 0-d array", _number_as(position, np.array)))
            spoilings.append((f"number {position} as a NumPy scalar", _number_as(position, _numpy_scalar)))
    return spoilings


def _spoiled_call(op, sample, path: str, spoil):
    def program(lib):
        args, kwargs = spoil(Call(lib, op, sample, requires_grad=False))
        if op.input_process is not None:
            args, kwargs = op.input_process(lib, args, kwargs)
        return resolve(lib, path)(*args, **kwargs)
    return program


@pytest.mark.parametrize("op", op_db, ids=lambda op: op.id)
def test_database_operators_given_arrays_as_torch(op):
    dtype = "float64" if "float64" in op.dtypes else op.dtypes[0]
    paths = [op.name, *op.aliases, *([op.inplace] if op.inplace else [])]
    differ = []
    for sample in op.samples(dtype):
        for label, spoil in _spoilings(op, sample):
            for path in paths:
                program = _spoiled_call(op, sample, path, spoil)
                expected = _outcome(program, torch)
                if "INTERNAL ASSERT FAILED" in expected[1]:
                    continue  # (torch's own bug: a 0-d array given for an int list)
                got = _outcome(program, tg)
                both_refuse = got[0] in ("TypeError", "RuntimeError") and expected[1].startswith(
                    "Overloaded torch operator invoked from Python failed to match any schema")
                if op.id in _REFUSED_THROUGH_TORCH_OPS and both_refuse:
                    continue
                if not _same(got, expected):
                    differ.append(f"{path}/{sample.name}, {label}: torch {expected}, tracegrad {got}")
    assert not differ, "\n".join(differ)


# ---- the operator registry: every public name and method of a registered operator, arrays at its first positions ---

def _registry_calls(name: str) -> list[str]:
    """Calls of the public function and the Tensor method ``name`` (where each library has one), as source."""
    calls = []
    if hasattr(torch, name) and hasattr(tg, name):
        calls += [f"L.{name}(np.ones(2))", f"L.{name}(L.ones(2), np.ones(2))", f"L.{name}(L.ones(2), np.array(1.0))",
                  f"L.{name}(L.ones(2), L.ones(2), np.ones(2))"]
    if hasattr(torch.Tensor, name) and hasattr(tg.Tensor, name):
        # (written out, not through getattr: CPython names the method in its own error by how it was called)
        calls += [f"L.ones(2).{name}(np.ones(2))", f"L.ones(2).{name}(np.array(1.0))",
                  f"L.ones(2).{name}(L.ones(2), np.ones(2))"]
    return calls


_REGISTERED = sorted(name for name in {op.schema.name for op in REGISTRY.values()}
                     if not name.startswith("_") and _registry_calls(name))


@pytest.mark.parametrize("name", _REGISTERED)
def test_registered_operator_given_arrays_as_torch(name):
    differ = []
    for source in _registry_calls(name):
        program = eval(f"lambda L: {source}")  # noqa: S307 - built above from the registry's names
        expected, got = _outcome(program, torch), _outcome(program, tg)
        if not _same(got, expected):
            differ.append(f"{source}: torch {expected}, tracegrad {got}")
    assert not differ, "\n".join(differ)


# ---- programs the database does not hold ---------------------------------------------------------------------------

def _set(t, index, value):
    t[index] = value
    return t


def _F(L):
    return L.nn.functional


def _seeded(L, make):
    L.manual_seed(0)
    return make()


PROGRAMS = {
    # refused where a Tensor goes: functions, methods, in-place methods, keywords, the input of any position
    "torch.add(t, arr)": lambda L: L.add(L.ones(2), np.ones(2)),
    "torch.add(arr, t)": lambda L: L.add(np.ones(2), L.ones(2)),
    "torch.mul(t, other=arr)": lambda L: L.mul(L.ones(2), other=np.ones(2)),
    "t.add(arr)": lambda L: L.ones(2).add(np.ones(2)),
    "t.add_(arr)": lambda L: L.ones(2).add_(np.ones(2)),
    "t.mul(arr)": lambda L: L.ones(2).mul(np.ones(2)),
    "t.div_(arr)": lambda L: L.ones(2).div_(np.ones(2)),
    "t.eq(arr)": lambda L: L.ones(2).eq(np.ones(2)),
    "torch.index_select(t, 0, arr)": lambda L: L.index_select(L.ones(2), 0, np.array([0])),
    "t.gather(0, arr)": lambda L: L.ones(2).gather(0, np.array([0])),
    "t.copy_(arr)": lambda L: L.ones(2).copy_(np.ones(2)),
    "torch.where(cond, arr, t)": lambda L: L.where(L.ones(2) > 0, np.ones(2), L.ones(2)),
    "torch.where(arr, t, t)": lambda L: L.where(np.array([True, False]), L.ones(2), L.ones(2)),
    "torch.matmul(t, arr)": lambda L: L.matmul(L.ones(2), np.ones(2)),
    "torch.mm(t, arr)": lambda L: L.mm(L.ones(2, 2), np.ones((2, 2))),
    "torch.sin(arr)": lambda L: L.sin(np.ones(2)),
    "torch.sum(arr)": lambda L: L.sum(np.ones(2)),
    "torch.zeros_like(arr)": lambda L: L.zeros_like(np.ones(2)),
    "torch.max(t, arr)": lambda L: L.max(L.ones(2), np.ones(2)),
    "torch.clamp(t, arr)": lambda L: L.clamp(L.ones(2), np.ones(2)),
    "t.masked_fill(arr, 0)": lambda L: L.ones(2).masked_fill(np.array([True, False]), 0),
    "t.scatter(0, index, arr)": lambda L: L.ones(2).scatter(0, L.tensor([0]), np.array([3.0])),
    "t.index_put_(indices, arr)": lambda L: L.ones(2).index_put_([L.tensor([0])], np.array(3.0)),
    "t.expand_as(arr)": lambda L: L.ones(1).expand_as(np.ones(2)),
    "t.type_as(arr)": lambda L: L.ones(1).type_as(np.ones(2)),
    "torch.einsum(eq, t, arr)": lambda L: L.einsum("i,i->", L.ones(2), np.ones(2)),
    "torch.atleast_1d(arr)": lambda L: L.atleast_1d(np.ones(2)),
    "torch.tensordot(t, arr, 1)": lambda L: L.tensordot(L.ones(2), np.ones(2), 1),
    "torch.split(arr, 2)": lambda L: L.split(np.ones(4), 2),
    "torch.norm(arr)": lambda L: L.norm(np.ones(2)),
    "torch.linalg.solve(t, arr)": lambda L: L.linalg.solve(L.eye(2), np.ones(2)),
    "torch.fft.fft(arr)": lambda L: L.fft.fft(np.ones(2)),
    # refused in a Tensor list, whichever element
    "torch.cat([t, arr])": lambda L: L.cat([L.ones(2), np.ones(2)]),
    "torch.cat([arr, t])": lambda L: L.cat([np.ones(2), L.ones(2)]),
    "torch.stack([t, arr])": lambda L: L.stack([L.ones(2), np.ones(2)]),
    "torch.hstack((arr, t))": lambda L: L.hstack((np.ones(2), L.ones(2))),
    "torch.broadcast_tensors(t, arr)": lambda L: L.broadcast_tensors(L.ones(2), np.ones(2)),
    "torch.broadcast_tensors(arr)": lambda L: L.broadcast_tensors(np.ones(2)),
    "torch.cartesian_prod(t, arr)": lambda L: L.cartesian_prod(L.ones(2), np.ones(2)),
    "torch.meshgrid(t, arr)": lambda L: L.meshgrid(L.ones(2), np.ones(2), indexing="ij"),
    "torch.atleast_2d(t, arr)": lambda L: L.atleast_2d(L.ones(2), np.ones(2)),
    "t.index_put_((arr,), value)": lambda L: L.ones(2).index_put_((np.array([0]),), L.tensor(3.0)),
    # a 0-d array is no number and no tensor to torch's parser; a NumPy scalar is a number
    "torch.add(t, 0-d arr)": lambda L: L.add(L.ones(2), np.array(2.0)),
    "t.mul(0-d arr)": lambda L: L.ones(2).mul(np.array(2.0)),
    "torch.add(t, np.float64)": lambda L: L.add(L.ones(2), np.float64(2)),
    "t.add(np.float32)": lambda L: L.ones(2).add(np.float32(2)),
    "torch.mul(t, np.bool_)": lambda L: L.mul(L.ones(2), np.True_),
    "torch.add(t, t, alpha=0-d arr)": lambda L: L.add(L.ones(2), L.ones(2), alpha=np.array(2.0)),
    "torch.add(t, t, alpha=np.float64)": lambda L: L.add(L.ones(2), L.ones(2), alpha=np.float64(2.0)),
    "torch.clamp(t, 0-d arr)": lambda L: L.clamp(L.ones(2), np.array(0.5)),
    "torch.clamp(t, min=0-d arr)": lambda L: L.clamp(L.ones(2), min=np.array(0.5)),
    "torch.clamp(t, np.float64)": lambda L: L.clamp(L.ones(2), np.float64(0.5)),
    "torch.pow(t, 0-d arr)": lambda L: L.pow(L.ones(2), np.array(2.0)),
    "torch.pow(np.float64, t)": lambda L: L.pow(np.float64(2), L.ones(2)),
    "t.fill_(0-d arr)": lambda L: L.ones(2).fill_(np.array(2.0)),
    "t.fill_(np.float32)": lambda L: L.ones(2).fill_(np.float32(3)),
    "t.masked_fill(mask, 0-d arr)": lambda L: L.ones(2).masked_fill(L.tensor([True, False]), np.array(0.5)),
    "t.masked_fill(mask, np.float64)": lambda L: L.ones(2).masked_fill(L.tensor([True, False]), np.float64(3)),
    "torch.where(cond, np.float64, t)": lambda L: L.where(L.tensor([True, False]), np.float64(3), L.ones(2)),
    "torch.lerp(t, t, 0-d arr)": lambda L: L.lerp(L.ones(2), L.zeros(2), np.array(0.5)),
    "torch.addcmul(t, t, t, value=0-d arr)": lambda L: L.addcmul(L.ones(2), L.ones(2), L.ones(2), value=np.array(0.5)),
    "torch.full((2,), 0-d arr)": lambda L: L.full((2,), np.array(2.0)),
    "t.new_full((2,), 0-d arr)": lambda L: L.ones(2).new_full((2,), np.array(1.0)),
    "t.copy_(0-d arr)": lambda L: L.ones(2).copy_(np.array(2.0)),
    "torch.sin(np.float64)": lambda L: L.sin(np.float64(2)),
    "torch.sin(0-d arr)": lambda L: L.sin(np.array(2.0)),
    "torch.cdist(t, t, p=0-d arr)": lambda L: L.cdist(L.ones(1, 2), L.ones(1, 2), p=np.array(2.0)),
    "t.view(np.int64)": lambda L: L.ones(2).view(np.int64(2)),
    "torch.movedim(t, np.int64, np.int64)": lambda L: L.movedim(L.ones(2, 3), np.int64(0), np.int64(1)),
    # out=
    "torch.add(t, t, out=arr)": lambda L: L.add(L.ones(2), L.ones(2), out=np.zeros(2)),
    "torch.sin(t, out=arr)": lambda L: L.sin(L.ones(2), out=np.zeros(2)),
    # nn.functional, modules, optimizers, initialisers
    "F.linear(t, arr)": lambda L: _F(L).linear(L.ones(2), np.ones((2, 2))),
    "F.linear(arr, t)": lambda L: _F(L).linear(np.ones(2), L.ones((2, 2))),
    "F.relu(arr)": lambda L: _F(L).relu(np.ones(2)),
    "F.gelu(arr)": lambda L: _F(L).gelu(np.ones(2)),
    "F.softmax(arr, 0)": lambda L: _F(L).softmax(np.ones(2), 0),
    "F.dropout(arr, 0.5, False)": lambda L: _F(L).dropout(np.ones(2), 0.5, False),
    "F.pad(arr, (1, 1))": lambda L: _F(L).pad(np.ones(2), (1, 1)),
    "F.conv1d(t, arr)": lambda L: _F(L).conv1d(L.ones(1, 1, 3), np.ones((1, 1, 1))),
    "F.conv2d(arr, t)": lambda L: _F(L).conv2d(np.ones((1, 1, 2, 2)), L.ones(1, 1, 1, 1)),
    "F.max_pool3d(arr, 1, return_indices=True)": lambda L: _F(L).max_pool3d(np.ones((1, 1, 1, 1, 1)), 1,
                                                                           return_indices=True),
    "F.embedding(arr, t)": lambda L: _F(L).embedding(np.array([0]), L.ones(2, 2)),
    "F.cross_entropy(t, arr)": lambda L: _F(L).cross_entropy(L.ones(1, 2), np.array([0])),
    "F.cross_entropy(t, t, weight=arr)": lambda L: _F(L).cross_entropy(L.ones(1, 2), L.tensor([0]), weight=np.ones(2)),
    "F.mse_loss(t, arr)": lambda L: _F(L).mse_loss(L.ones(2), np.ones(2)),
    "F.batch_norm(t, arr, t)": lambda L: _F(L).batch_norm(L.ones(2, 2), np.zeros(2), L.ones(2)),
    "F.layer_norm(t, (2,), arr)": lambda L: _F(L).layer_norm(L.ones(2, 2), (2,), np.ones(2)),
    "F.fractional_max_pool2d(t, ..., _random_samples=arr)": lambda L: _F(L).fractional_max_pool2d(
        L.ones(1, 1, 4, 4), 2, output_size=(2, 2), _random_samples=np.full((1, 1, 2), 0.5)),
    "nn.Linear(arr)": lambda L: _seeded(L, lambda: L.nn.Linear(2, 2)(np.ones((1, 2), np.float32))),
    "nn.ReLU(arr)": lambda L: L.nn.ReLU()(np.ones(2)),
    "nn.Conv1d(arr)": lambda L: _seeded(L, lambda: L.nn.Conv1d(1, 1, 1)(np.ones((1, 1, 2), np.float32))),
    "nn.Embedding(arr)": lambda L: _seeded(L, lambda: L.nn.Embedding(3, 2)(np.array([0]))),
    "nn.MSELoss(t, arr)": lambda L: L.nn.MSELoss()(L.ones(2), np.ones(2)),
    "nn.Sequential(arr)": lambda L: _seeded(L, lambda: L.nn.Sequential(L.nn.Linear(2, 2), L.nn.ReLU())(
        np.ones((1, 2), np.float32))),
    "optim.SGD([arr])": lambda L: L.optim.SGD([np.ones(2)], lr=0.1),
    "optim.Adam([t, arr])": lambda L: L.optim.Adam([L.ones(2, requires_grad=True), np.ones(2)]),
    "t.backward(arr)": lambda L: L.ones(2, requires_grad=True).mul(2).backward(np.ones(2)),
    # accepted: the constructors read arrays, indexing takes them, setitem refuses an array value
    "torch.tensor(arr)": lambda L: L.tensor(np.ones(2)),
    "torch.tensor(0-d arr)": lambda L: L.tensor(np.array(2.0)),
    "torch.as_tensor(arr)": lambda L: L.as_tensor(np.ones(2)),
    "torch.from_numpy(arr)": lambda L: L.from_numpy(np.ones(2)),
    "torch.asarray(arr)": lambda L: L.asarray(np.ones(2)),
    "torch.Tensor(arr)": lambda L: L.Tensor(np.ones(2)),
    "t.new_tensor(arr)": lambda L: L.ones(2).new_tensor(np.ones(2)),
    "nn.Parameter(arr)": lambda L: L.nn.Parameter(np.ones(2)),
    "torch.is_tensor(arr)": lambda L: L.is_tensor(np.ones(2)),
    "t[int arr]": lambda L: L.arange(3)[np.array([2, 0])],
    "t[bool arr]": lambda L: L.arange(3)[np.array([True, False, True])],
    "t[arr, arr]": lambda L: L.ones(2, 2)[np.array([0]), np.array([1])],
    "t[0-d arr]": lambda L: L.arange(3)[np.array(1)],
    "t[np.int64]": lambda L: L.arange(3)[np.int64(1)],
    "t[int arr] = t": lambda L: _set(L.ones(2), np.array([0]), L.tensor(5.0)),
    "t[bool arr] = 0": lambda L: _set(L.ones(2), np.array([True, False]), 0),
    "t[:] = np.float64": lambda L: _set(L.ones(2), slice(None), np.float64(5.0)),
    "t[bool arr] = arr": lambda L: _set(L.ones(2), np.array([True, False]), np.array([5.0])),
    "t[:] = arr": lambda L: _set(L.ones(2), slice(None), np.array([5.0, 6.0])),
    "t[0-d arr] = 0-d arr": lambda L: _set(L.ones(2), np.array(1), np.array(5.0)),
    "t[index] = arr": lambda L: _set(L.ones(2), L.tensor([0]), np.array([5.0])),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_as_torch(name):
    program = PROGRAMS[name]
    assert _same(_outcome(program, tg), _outcome(program, torch))


# ---- the paths that hand a call on before the eager one ------------------------------------------------------------

_REFUSED = {
    "torch.add(t, arr)": PROGRAMS["torch.add(t, arr)"],
    "t.mul(arr)": PROGRAMS["t.mul(arr)"],
    "t.add_(arr)": PROGRAMS["t.add_(arr)"],
    "torch.cat([t, arr])": PROGRAMS["torch.cat([t, arr])"],
    "torch.add(t, t, out=arr)": PROGRAMS["torch.add(t, t, out=arr)"],
    "t.masked_fill(arr, 0)": PROGRAMS["t.masked_fill(arr, 0)"],
    "torch.add(t, t, alpha=0-d arr)": PROGRAMS["torch.add(t, t, alpha=0-d arr)"],
    "t[int arr]": PROGRAMS["t[int arr]"],  # (accepted)
}


def _profiled(L, program):
    with L.profiler.profile():
        return program(L)


def _dual(L, program):
    forward_ad = importlib.import_module(f"{L.__name__}.autograd.forward_ad")
    with forward_ad.dual_level():
        forward_ad.make_dual(L.ones(2), L.ones(2))
        return program(L)


def _anomaly(L, program):
    with L.autograd.detect_anomaly():
        return program(L)


def _no_grad(L, program):
    with L.no_grad():
        return program(L)


def _inference(L, program):
    with L.inference_mode():
        return program(L)


def _selectively_checkpointed(L, program):
    checkpoint = importlib.import_module(f"{L.__name__}.utils.checkpoint")

    def policy(ctx, op, *args, **kwargs):
        return checkpoint.CheckpointPolicy.MUST_SAVE

    x = L.ones(2, requires_grad=True)
    context = functools.partial(checkpoint.create_selective_checkpoint_contexts, policy)
    return checkpoint.checkpoint(lambda x: program(L) * x, x, use_reentrant=False, context_fn=context)


@pytest.mark.parametrize("context", [_profiled, _dual, _anomaly, _no_grad, _inference, _selectively_checkpointed],
                         ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("name", _REFUSED)
def test_refused_in_any_mode_as_torch(name, context):
    program = _REFUSED[name]
    assert _same(_outcome(lambda L: context(L, program), tg), _outcome(lambda L: context(L, program), torch))


class _Seeing(OpInterceptor):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def intercept(self, op, args, kwargs):
        self.seen.append(op.name)
        return op(*args, **kwargs)


class _Passing(Interpreter):
    """A transform that runs each call below itself: it must never be handed an array torch refuses."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def process(self, op, args, kwargs):
        self.seen.append(op.name)
        with self.lower():
            return op(*args, **kwargs)


@pytest.mark.parametrize("handler", [_Seeing, _Passing], ids=["interceptor", "transform"])
@pytest.mark.parametrize("name", _REFUSED)
def test_refused_before_interceptors_and_transforms(name, handler):
    """tracegrad's interceptors and transforms see a call only once torch's parser would have taken it (torch's
    dispatch modes and functorch's transforms sit below its parser)."""
    program = _REFUSED[name]
    with handler() as seeing:
        got = _outcome(program, tg)
    assert _same(got, _outcome(program, torch))
    if got[0] != "ok":
        assert not {"add", "add_", "mul", "cat", "masked_fill"} & set(seeing.seen), seeing.seen
