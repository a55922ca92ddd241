"""Read-only views of engine objects as protocol dicts: tensor metadata, saved tensors, hooks, leaves.

Nothing here unpacks a saved tensor (user unpack hooks never run), bumps a version or keeps a reference:
saved values are read from the ``SavedTensor`` fields directly.
"""

from __future__ import annotations

import functools

from ..autograd import saved as _saved
from ..autograd.accumulate import AccumulateGrad
from ..autograd.function import BackwardCFunction
from ..autograd.node import UINT64_MAX
from ..backend.dtypes import from_numpy_dtype
from ..ops.registry import OpNode
from .ids import storage_of

_DTYPE_NAMES: dict = {}
FREED_STORAGE = "freed"


def dtype_name(np_dtype) -> str:
    """PyTorch's dtype name without the prefix (``float32``)."""
    name = _DTYPE_NAMES.get(np_dtype)
    if name is None:
        try:
            name = from_numpy_dtype(np_dtype).name
        except Exception:  # noqa: BLE001 - an unusual array dtype still gets a name
            name = str(np_dtype)
        _DTYPE_NAMES[np_dtype] = name
    return name


def array_meta(arr) -> dict:
    return {"shape": list(arr.shape), "dtype": dtype_name(arr.dtype)}


def tensor_meta(t) -> dict:
    return array_meta(t._data)


def hook_name(fn) -> str:
    """The hook's ``__qualname__`` (unwrapping ``functools.partial``), else its repr."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    return name if isinstance(name, str) else repr(fn)


# ---- nodes -------------------------------------------------------------------------------------------------

def node_kind(node) -> str:
    if node.__class__ is AccumulateGrad:
        return "accumulate"
    if isinstance(node, BackwardCFunction):
        return "custom"
    if isinstance(node, OpNode):
        return "function"
    return "other"


def node_seq(node) -> int | None:
    seq = node._seq
    return None if seq is None or seq >= UINT64_MAX else int(seq)


def node_op(node) -> str | None:
    """The forward operator that created ``node``, as users would name it."""
    if isinstance(node, OpNode):
        return type(node)._op.public_name
    if isinstance(node, BackwardCFunction):
        return getattr(node, "_forward_cls", type(node)).__name__
    return None


def node_kind_op(node) -> tuple[str, str | None]:
    """``(node_kind(node), node_op(node))``: both depend on the node's class only, so a snapshot works them
    out once per class (kept on the class itself, so no table outlives a custom Function's class)."""
    cls = node.__class__
    info = cls.__dict__.get("_viz_kind_op")
    if info is None:
        info = (node_kind(node), node_op(node))
        type.__setattr__(cls, "_viz_kind_op", info)
    return info


def node_outputs(node, memo: dict | None = None) -> list[dict]:
    """Shape/dtype of the gradients the node receives (its forward outputs). With a ``memo`` dict, nodes with
    equal metadata share one (read-only) list, as the many nodes of a repeated block do in a snapshot."""
    if node.__class__ is AccumulateGrad:
        return [tensor_meta(node.variable)]
    if isinstance(node, BackwardCFunction):
        meta = node._tg_out_meta
    else:
        meta = getattr(node, "_out_meta", None)
    if not meta:
        return []
    return shared(memo, meta, _outputs_of)


def shared(memo: dict | None, key, build):
    """``build(key)``; with a ``memo`` dict, built once per key and shared (the result is read-only then)."""
    if memo is None:
        return build(key)
    value = memo.get(key)
    if value is None:
        value = memo[key] = build(key)
    return value


def _outputs_of(meta) -> list[dict]:
    return [{"shape": list(m[0]), "dtype": dtype_name(m[1])} for m in meta if m is not None]


def node_hooks(node) -> list[dict]:
    hooks: list[dict] = []
    tensor_pre = node._tensor_pre_hooks
    if tensor_pre:
        for nr, per_output in tensor_pre.items():
            hooks.extend({"kind": "tensor_pre", "name": hook_name(fn), "output_nr": nr} for fn in per_output.values())
    retains = node._retains_grad_hooks
    if retains:
        hooks.extend({"kind": "retain_grad", "name": hook_name(fn), "output_nr": nr} for nr, fn in retains.items())
    if node._pre_hooks:
        hooks.extend({"kind": "pre", "name": hook_name(fn), "output_nr": None} for fn in node._pre_hooks.values())
    if node.__class__ is AccumulateGrad:
        post_acc = node.variable._post_acc_hooks
        if post_acc:
            hooks.extend({"kind": "post_accumulate", "name": hook_name(fn), "output_nr": None}
                         for fn in post_acc.values())
    if node._post_hooks:
        hooks.extend({"kind": "post", "name": hook_name(fn), "output_nr": None} for fn in node._post_hooks.values())
    return hooks


def leaf_info(node, labels: dict | None) -> dict | None:
    if node.__class__ is not AccumulateGrad:
        return None
    var = node.variable
    data = var._data
    grad = var._grad
    sid, _ = storage_of(data)
    return {"name": labels.get(id(var)) if labels else None, "shape": list(data.shape),
            "dtype": dtype_name(data.dtype), "grad": None if grad is None else tensor_meta(grad), "storage_id": sid}


# ---- saved tensors ------------------------------------------------------------------------------------------

def iter_saved(node):
    """Yield ``(name, role or None, SavedTensor, nominal (shape, dtype) or None)`` for each saved tensor."""
    if isinstance(node, OpNode):
        op = type(node)._op
        saved = _saved.saved_objects(node)
        names = op.saved_attr_names
        if len(names) != len(saved):
            names = tuple(f"saved{i}" for i in range(len(saved)))
        specs = op.save_spec if len(op.save_spec) == len(saved) else ()
        for i, value in enumerate(saved):
            spec = specs[i] if specs else None
            role = None if spec is None else ("output" if spec[0] == "out" else "input")
            if value.__class__ is _saved.SavedTensor:
                yield names[i], role, value, _nominal_meta(node, op, spec)
            elif value.__class__ is list:
                for j, item in enumerate(value):
                    if item.__class__ is _saved.SavedTensor:
                        yield f"{names[i]}[{j}]", role, item, None
    elif isinstance(node, BackwardCFunction):
        for i, value in enumerate(node.__dict__.get("_tg_saved") or ()):
            if value is not None:
                yield f"saved_tensors[{i}]", None, value, None


def _nominal_meta(node, op, spec):
    """The shape/dtype a saved value had, from the node's metadata (still known after it is freed)."""
    if spec is None:
        return None
    kind, idx = spec
    if kind == "out":
        meta = node._out_meta
        return meta[idx] if meta and idx < len(meta) else None
    if idx in op.diff_idx:
        k = op.diff_idx.index(idx)
        return node._in_meta[k] if k < len(node._in_meta) else None
    return None


def _packed_arrays(packed) -> list:
    """The arrays of a hook's packed object: a tensor, or a tuple/list holding tensors (one level deep)."""
    from .._tensor import Tensor

    items = packed if isinstance(packed, (tuple, list)) else (packed,)
    arrays = []
    for item in items:
        if isinstance(item, Tensor):
            arrays.append(item._data)
        elif hasattr(item, "nbytes") and hasattr(item, "shape") and hasattr(item, "dtype"):
            arrays.append(item)
    return arrays


def saved_entry(node, name: str, role: str | None, s, nominal) -> tuple[dict, int] | None:
    """One saved tensor as a protocol dict, with the bytes of the storage it keeps alive (the whole base
    array of a view); None for a saved ``None``."""
    kind = s._kind
    if kind == _saved._NONE:
        return None
    vc = s._vc
    entry = {"name": name, "shape": [], "dtype": "unknown", "bytes": 0, "role": role or "input",
             "version_saved": s._version, "version_now": vc[0] if vc is not None else None, "state": "alive",
             "packed_by_hook": kind == _saved._HOOKED, "storage_id": FREED_STORAGE, "error": None}
    arr = None
    storage_bytes = 0
    if kind == _saved._INPUT:
        arr = s._ref._data
    elif kind == _saved._OUTPUT or kind == _saved._VIEW_OUTPUT:
        arr = s._ref
        if role is None:
            entry["role"] = "output"
    elif kind == _saved._HOOKED:
        if role is None and s._extra[1]:
            entry["role"] = "output"
        arrays = _packed_arrays(s._ref)
        if arrays:
            arr = arrays[0]
            entry["bytes"] = sum(int(a.nbytes) for a in arrays)
        else:
            entry["storage_id"] = f"packed:{type(s._ref).__name__}"
    else:  # freed
        entry["state"] = "freed"
    if arr is not None:
        entry["shape"] = list(arr.shape)
        entry["dtype"] = dtype_name(arr.dtype)
        entry["storage_id"], storage_bytes = storage_of(arr)
        if kind != _saved._HOOKED:
            entry["bytes"] = int(arr.nbytes)
        else:
            storage_bytes = entry["bytes"]
    elif nominal is not None:
        shape, dtype = nominal
        entry["shape"] = list(shape)
        entry["dtype"] = dtype_name(dtype)
        size = 1
        for d in shape:
            size *= d
        entry["bytes"] = int(size * dtype.itemsize) if kind == _saved._FREED else 0
    if arr is not None and name in getattr(type(node), "_shown_transposed", ()):
        entry["shape"] = entry["shape"][::-1]  # see ops/nn_ops/linear.py: shown as PyTorch reports it
    if kind != _saved._HOOKED and kind != _saved._FREED:
        entry["error"] = backward_error(node, s)
    return entry, storage_bytes


def backward_error(node, s) -> str | None:
    """The message backward raises when it unpacks ``s`` (a version mismatch, or an in-place detach), or None."""
    kind = s._kind
    if kind == _saved._INPUT:
        t = s._ref
        if s._extra and t._gfn is None:
            return ("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is "
                    "not supported, please use out-of-place `.detach()` instead")
    if s._vc is None or s._vc[0] == s._version:
        return None
    if kind == _saved._INPUT:
        probe = s._ref
    else:
        probe = s._detached()
        if kind == _saved._VIEW_OUTPUT:
            ref = s._extra[1]
            fn = ref() if ref is not None else None
            probe._gfn = fn if fn is not None else node
            probe._output_nr = s._extra[0] if fn is not None else 0
    try:
        s._version_error(probe, node)
    except RuntimeError as exc:
        return str(exc)
    return None
