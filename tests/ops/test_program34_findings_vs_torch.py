"""Differences that the programs of ``tests/test_user_programs34_vs_torch.py`` (tensors as ordinary Python objects,
mixed with NumPy) ran into, each reduced to the call that caused it and compared with torch.

- ``reversed(t)`` gave Python's reverse iterator over the rows; torch's ``Tensor.__reversed__`` is ``t.flip(0)``
  (a tensor with ``FlipBackward0``) and a 0-d tensor itself;
- ``t.numpy()`` returned the tensor's own array object: the same object at every call, the very array a
  ``from_numpy`` caller holds (``torch.from_numpy(a).numpy() is a``), and one that says it owns its data; torch
  makes a new array over the tensor's memory at each call (``numpy(force=True)`` included);
- ``pickle`` of tensors sharing a storage (a dict of a tensor and its views) loaded them sharing one array; torch
  pickles each tensor with a storage object of its own, so each loads over a whole copy of its storage, at its
  offset and strides (``torch.save`` and ``deepcopy`` keep the sharing, in both);
- "received an invalid combination of arguments - got (...)" listed the keywords in reverse order where torch lists
  them in the iteration order of the C++ ``std::unordered_map`` its formatter copies them into (``np.var(t)``:
  torch's "got (ddof=int, dtype=NoneType, out=NoneType, axis=NoneType, )"), as did its "some of the keywords were
  incorrect" lines and the legacy constructors' refusal (``torch.FloatTensor(a=1, device="cpu")``);
- ``pow(t, 2, 5)`` said "Tensor.__pow__() takes 2 positional arguments but 3 were given"; torch's ``__pow__``
  makes the TypeError NotImplemented, so Python says "unsupported operand type(s) for ** or pow(): 'Tensor',
  'int', 'int'".
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from _lib import tg, torch

LIBS = (tg, torch)


def _outcome(f, lib):
    """What ``f(lib)`` gives (a tensor by its metadata and values), or its error's type and message."""
    try:
        value = f(lib)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e).replace("tracegrad", "torch")
    if isinstance(value, (tg.Tensor, torch.Tensor)):
        grad_fn = value.grad_fn.name() if value.grad_fn is not None else None
        return "tensor", str(value.dtype).replace("tracegrad", "torch"), tuple(value.shape), value.tolist(), grad_fn
    return repr(value).replace("tracegrad", "torch")


# ---- reversed(t) ----------------------------------------------------------------------------------------------

_REVERSED = {
    "vector": lambda lib: reversed(lib.arange(4)),
    "matrix_rows": lambda lib: reversed(lib.arange(6).reshape(3, 2)),
    "requires_grad": lambda lib: reversed(lib.arange(3.0).requires_grad_()),
    "zero_d_is_itself": lambda lib: (lambda t: reversed(t) is t)(lib.tensor(5.0)),
    "empty": lambda lib: reversed(lib.zeros(0, 2)),
    "list_of_reversed": lambda lib: [r.tolist() for r in reversed(lib.arange(4).reshape(2, 2))],
}


@pytest.mark.parametrize("case", sorted(_REVERSED))
def test_reversed_is_flip_along_the_first_dim(case):
    assert _outcome(_REVERSED[case], tg) == _outcome(_REVERSED[case], torch)


def test_reversed_gradient_flows_through_flip():
    grads = []
    for lib in LIBS:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (reversed(x) * lib.tensor([1.0, 10.0, 100.0])).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [100.0, 10.0, 1.0]


# ---- numpy() ---------------------------------------------------------------------------------------------------

def _numpy_identity(lib) -> tuple:
    arr = np.zeros(3, dtype=np.float32)
    t = lib.from_numpy(arr)
    w = lib.ones(2, requires_grad=True)
    base = lib.arange(4.0)
    return (t.numpy() is arr, t.numpy() is t.numpy(), np.shares_memory(t.numpy(), arr), t.numpy().flags.owndata,
            base.numpy().flags.owndata, w.numpy(force=True).flags.owndata, np.asarray(base).flags.owndata,
            np.shares_memory(w.numpy(force=True), w.detach().numpy()), base.numpy().flags.writeable)


def test_numpy_makes_a_new_array_over_the_tensor_memory_at_each_call():
    assert _numpy_identity(tg) == _numpy_identity(torch)


def test_numpy_array_still_writes_through_to_the_tensor():
    for lib in LIBS:
        t = lib.arange(4.0)
        t.numpy()[1:3] = -1.0
        t[0] = 9.0
        assert t.tolist() == [9.0, -1.0, -1.0, 3.0] and t.numpy().tolist() == t.tolist()


# ---- pickle of tensors sharing a storage ---------------------------------------------------------------------

def _shared_state(lib) -> dict:
    base = lib.arange(6.0)
    return {"base": base, "head": base[:3], "tail": base[3:], "col": base.view(2, 3)[:, 0], "again": base}


def _geometry(state: dict) -> list:
    """Each tensor's offset, strides, storage size and values, and which earlier tensor's storage it shares."""
    ptrs = {}
    return [(name, t.storage_offset(), t.stride(), t.untyped_storage().nbytes(), t.tolist(),
             ptrs.setdefault(t.untyped_storage().data_ptr(), name)) for name, t in state.items()]


def _pickled_then_written(lib) -> list:
    loaded = pickle.loads(pickle.dumps(_shared_state(lib)))
    loaded["base"][3] = -3.0  # (shows through in "again", the same tensor, and in no other)
    return _geometry(loaded) + [loaded["base"] is loaded["again"]]


def test_pickle_gives_each_tensor_a_copy_of_its_whole_storage():
    assert _pickled_then_written(tg) == _pickled_then_written(torch)


def test_copy_copy_and_deepcopy_still_share_as_torch():
    def shared(lib):
        state = _shared_state(lib)
        shallow = {k: copy.copy(v) for k, v in state.items()}
        deep = copy.deepcopy(state)
        state["base"][0] = 100.0
        deep["base"][4] = -4.0
        return _geometry(shallow), _geometry(deep)

    assert shared(tg) == shared(torch)


def test_pickle_of_a_parameter_view_and_a_transposed_tensor():
    def round_trips(lib):
        p = lib.nn.Parameter(lib.arange(4.0))
        with lib.no_grad():
            parts = [p[1:], lib.arange(6.0).reshape(2, 3).T]
        return _geometry(dict(enumerate(pickle.loads(pickle.dumps(parts)))))

    assert round_trips(tg) == round_trips(torch)


# ---- keyword order in the argument parser's messages ------------------------------------------------------------

_KEYWORD_SETS = [
    ("axis", "dtype", "out", "ddof"),  # (np.var(t)'s call of t.var)
    ("axis", "dtype", "out", "ddof", "keepdims"),
    ("x", "dtype", "out", "ddof"),
    ("x", "dtype", "out", "y"),
    ("x", "out", "dtype", "y"),
    ("a", "b", "c"),
    ("b", "keepdim", "c", "d"),
    ("dim", "b", "c"),
    ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda_", "mu", "nu",
     "xi", "omicron", "pi"),
]


@pytest.mark.parametrize("keys", _KEYWORD_SETS, ids=lambda keys: "-".join(keys[:4]))
def test_invalid_combination_lists_keywords_in_torch_order(keys):
    def call(lib):
        return lib.ones(2).var(**{k: None for k in keys})

    assert _outcome(call, tg) == _outcome(call, torch)


@pytest.mark.parametrize("make", [
    lambda lib: np.var(lib.tensor([[3.0, -1.0], [2.0, 5.0]])),
    lambda lib: np.std(lib.tensor([1.0, 2.0]), axis=0),
    lambda lib: lib.ones(2).clamp(a=1, b=2, c=3, d=4),
    lambda lib: lib.FloatTensor(a=1, b=2, c=3),
    lambda lib: lib.FloatTensor(a=1, device="cpu"),
    lambda lib: lib.FloatTensor(x=1, dtype=None, device="cpu"),
], ids=["np_var", "np_std_axis", "clamp", "legacy_abc", "legacy_device", "legacy_three"])
def test_numpy_functions_and_legacy_constructors_name_keywords_in_torch_order(make):
    assert _outcome(make, tg) == _outcome(make, torch)


# ---- pow with a modulus --------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda lib: pow(lib.tensor([2, 3]), 2, 5),
    lambda lib: pow(lib.tensor(2), lib.tensor(3), 5),
    lambda lib: pow(lib.tensor(2.0), 2.0, 7),
    lambda lib: pow(2, lib.tensor(3), 5),
    lambda lib: lib.tensor(2).__pow__(2, 5),
    lambda lib: pow(lib.tensor([2.0, 3.0]), 2, None),
], ids=["tensor_int_int", "tensor_tensor_int", "float", "int_tensor_int", "dunder", "modulus_none"])
def test_three_argument_pow_is_refused_by_python_as_in_torch(make):
    assert _outcome(make, tg) == _outcome(make, torch)
