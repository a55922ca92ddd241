"""The operator registry: each operator is declared once, with everything every layer needs.

An :class:`OpDef` holds the schema (with alias annotations), the array kernel, the VJP rule (written in
dispatched tracegrad ops, so it is itself differentiable), and slots for the JVP rule, the batching rule
and, for views, the inverse scatter. Calling an ``OpDef`` is calling :func:`tracegrad.dispatch.dispatch`:
with no transform active that is the eager interpreter below, inlined for speed.

The eager interpreter (``_eager``) runs the kernel and records the autograd node. It is deliberately
written as straight-line code over precomputed index tuples: it runs for every operator call.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .. import _torch_function
from .._arg_parser import refuse_arrays_among, refuse_as_torch, refuse_non_tensors_among
from .._events import emit_op_call
from .._state import STATE, next_sequence_nr
from .._strides import element_strides, storage_offset_of
from .._tensor import Tensor, _new, _wrap
from .._warnings import warn_at_caller
from ..autograd import views as _views
from ..autograd.edges import NO_EDGE, gradient_edge
from ..autograd.forward_ad import fallback_refusal
from ..autograd.node import UINT64_MAX, Node, read_only_property
from ..autograd.node_meta import meta_record, outputs_meta
from ..autograd.saved import SavedTensor, released, saved_objects, unpack_record
from ..backend import dtypes as _dt
from . import barebones_unsigned, bfloat16_in_float
from ._util import array_refused, autograd_dtype_refused, parsed_numbers, translate_value_error
from .aten_vec import FP_SIGNALS, quietly
from .mem_overlap import ARGUMENTS_CHECKED_FIRST, Check, check_overlap, inplace_check
from .result_layouts import follows_tensor_iterator, operand_positions
from .result_layouts import rule_for as _layout_rule_for
from .schema import Schema, SchemaKind, parse_schema

REGISTRY: dict[str, OpDef] = {}
# Operators PyTorch declares without an ``out=`` overload (views, the ``*_scatter`` family...): its Python
# binding refuses the keyword, where every other operator gets the derived out= variant.
NO_OUT_OVERLOAD = frozenset({
    "var_mean", "dist", "trace", "flip", "roll", "rot90", "index_put", "masked_scatter", "select_scatter",
    "diagonal_scatter", "as_strided_scatter", "transpose", "permute", "t", "unsqueeze", "select", "diagonal",
    "unbind", "unfold", "conv_tbc", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
    "diag_embed",
})
# Every declaration per schema name: an operator is declared once, so each list should hold one (a test checks)
DECLARED: dict[str, list] = {}


class Decomposition:
    """An ATen overload that tracegrad computes by calling another operator, as ATen's CompositeImplicitAutograd
    overloads do (``var(Tensor self, bool unbiased)`` calls ``var.correction``): the graph, the errors and what an
    interceptor sees are that operator's. Only ``torch.ops.aten`` reaches it (the public functions bind these
    signatures themselves); ``call`` takes the arguments bound to ``schema``, in its order."""

    def __init__(self, schema: str, call: Callable, before: str | None) -> None:
        self.schema = parse_schema(schema)
        self.name = self.schema.name
        self.call = call
        self.before = before  # the ATen overload name it precedes in torch's list of the packet's overloads


# Decompositions by operator name, in declaration order (``torch._ops`` merges them into the packets)
DECOMPOSITIONS: dict[str, list[Decomposition]] = {}


def defdecomposition(schema: str, call: Callable, *, before: str | None = None) -> Decomposition:
    """Declare an ATen overload computed by ``call(*bound_arguments)`` (see :class:`Decomposition`); ``before``
    places it before that overload in ``aten.<name>.overloads()`` (torch's order, which decides the overload a
    packet call picks), else after the ones so far."""
    decomposition = Decomposition(schema, call, before)
    DECOMPOSITIONS.setdefault(decomposition.name, []).append(decomposition)
    return decomposition

_ndarray = np.ndarray


class OpNode(Node):
    """Backward node of a registered operator; ``name()`` is PyTorch's, e.g. ``MulBackward0``."""

    __slots__ = ("_saved", "_attrs", "_out_meta")
    _op: OpDef

    def __new__(cls, *args, **kwargs):
        # (torch's generated node classes cannot be instantiated from Python; tracegrad makes them with
        # object.__new__)
        raise TypeError(f"cannot create '{cls.__name__}' instances")

    def apply(self, grads):
        state = STATE
        if state.grad_enabled and not state.in_formula and not state._stack:
            # create_graph: the formula records, with numbers as C++ Scalars (see fastpath.SCALAR_OVERLOADS);
            # the plain backward goes straight on below, without a second call
            state.in_formula = True
            try:
                return OpNode.apply(self, grads)
            finally:
                state.in_formula = False
        op = self._op
        if self._n_out == 1:
            g = grads[0]
            if g is None:
                return [None] * len(self._edges)
            out = op.vjp(self, g)
        else:
            if all(g is None for g in grads):
                return [None] * len(self._edges)
            if op.materialize_grads:
                grads = _materialize(grads, self._out_meta)
            out = op.vjp(self, *grads)
        if out.__class__ is not tuple and out.__class__ is not list:
            return [out]
        return out

    @property
    def saved_tensors(self) -> tuple:
        saved = self._saved if not STATE.special else saved_objects(self)  # (objects: their events carry them)
        if len(saved) == 1:  # the common cases, without building a list
            s = saved[0]
            return (s.unpack(self) if s.__class__ is SavedTensor else _unpack(s, self),)
        order = self._unpack_order  # PyTorch's order (see OpDef.pack_order), which unpack hooks see
        if len(saved) == 2:
            s, t = saved
            if order is not None:
                tu = t.unpack(self) if t.__class__ is SavedTensor else _unpack(t, self)
                return (s.unpack(self) if s.__class__ is SavedTensor else _unpack(s, self), tu)
            return (s.unpack(self) if s.__class__ is SavedTensor else _unpack(s, self),
                    t.unpack(self) if t.__class__ is SavedTensor else _unpack(t, self))
        if order is None:
            return tuple([s.unpack(self) if s.__class__ is SavedTensor else _unpack(s, self) for s in saved])
        values = [None] * len(saved)
        for k in order:
            s = saved[k]
            values[k] = s.unpack(self) if s.__class__ is SavedTensor else _unpack(s, self)
        return tuple(values)

    @property
    def attrs(self) -> tuple:
        return self._attrs

    @property
    def input_shapes(self) -> tuple:
        return tuple(m[0] if m is not None else None for m in self._in_meta)

    def release_variables(self) -> None:
        if not STATE.special:
            self._saved = released(self._saved)
            return
        for s in saved_objects(self):  # (as objects: releasing one tells an observer)
            if s.__class__ is SavedTensor:
                s.release()
            elif s.__class__ is list:
                for item in s:  # a saved Tensor[] / Tensor?[]
                    if item.__class__ is SavedTensor:
                        item.release()
        self._saved = released(self._saved)  # (what is left: a number given for a Tensor, freed too)


def public_operator(module: str, qualname: str) -> OpDef:
    """The operator a pickle refers to by its public home (``OpDef.__reduce_ex__``)."""
    import importlib

    holder = importlib.import_module(module)
    for part in qualname.split("."):
        holder = getattr(holder, part)
    return holder


def _tensor_list_item(item, items):
    """A ``Tensor[]``'s element that is no tensor: None (of a ``Tensor?[]``) as the kernel takes it; anything else
    refused, as torch's parser refuses it (NumPy would take a list or a number: ``torch.stack([[1, 2], [3, 4]])``).
    Only the tensors pay nothing for the test."""
    if item is not None:
        refuse_non_tensors_among(items, none_allowed=True)
    return item


def _saved_properties(op: OpDef) -> dict:
    """PyTorch exposes saved values as ``grad_fn._saved_<name>`` and the raw SavedVariable as
    ``_raw_saved_<name>``; like its generated node classes, each node class gets one property per name.
    (Properties rather than ``__getattr__``: a class with ``__getattr__`` makes every attribute read slower.)
    An output is named as PyTorch's codegen names it: by its return name, else ``result``/``result<N>``.
    Values declared ``hidden`` stay on the node without a getter; ``meta`` names get lazy getters."""

    def saved(k: int, raw: bool, tensor_param: bool):
        if raw:
            return property(lambda node: _raw_saved(_kept_object(node, k, tensor_param)))
        if tensor_param:  # a number given for a Tensor reads back as PyTorch's wrapped-number tensor
            return property(lambda node: _public_attr(_unpack(_kept_object(node, k, True), node)))
        return property(lambda node: _public_attr(_unpack(saved_objects(node)[k], node)))

    def attr(k: int, type_: str):
        if type_.startswith(("int[", "SymInt[")):  # a list argument given one int reads back as a 1-tuple
            return property(lambda node: _as_uint64(_as_list(_public_attr(node._attrs[k]))))
        if type_.startswith(("int", "SymInt")):
            return property(lambda node: _as_uint64(_public_attr(node._attrs[k])))
        return property(lambda node: _public_attr(node._attrs[k]))

    types = {p.name: p.type for p in op.schema.params}
    props = {}
    for k, key in enumerate(op.attr_names):
        slot = op.attr_idx[k]
        if slot.__class__ is tuple and slot[0] in ("geometry", "list_sizes") or key in op.hidden:
            continue  # a TensorGeometry or the sizes of a Tensor[]: PyTorch's nodes keep them without a getter
        props["_saved_" + key] = attr(k, types.get(key, ""))
    for k, key in enumerate(op.saved_attr_names):
        if key in op.saved_attr_names[:k] or op.saved_names[k] in op.hidden:
            continue  # the first saved value of that name wins
        tensor_param = types.get(op.saved_names[k], "").startswith("Tensor")
        props["_saved_" + key] = saved(k, False, tensor_param)
        props["_raw_saved_" + key] = saved(k, True, tensor_param)
    for name in op.meta:
        props["_saved_" + name] = _meta_property(op, name)
    return {name: read_only_property(prop.fget, name) for name, prop in props.items()}


def _saved_attr_name(op: OpDef, spec: str) -> str:
    kind, idx = _save_slot(list(op.param_names), spec)
    if kind == "out" and idx < len(op.schema.returns) and op.schema.returns[idx].name:
        return op.schema.returns[idx].name
    return spec


# ---- size metadata PyTorch's nodes keep (``self_sym_sizes``...), read lazily from what the node holds ----------

_META_KINDS = ("_sym_sizes_opt", "_sym_sizes", "_sym_strides", "_sym_numel", "_sym_argsize_", "_dim")


def _meta_property(op: OpDef, name: str) -> property:
    """A getter for ``<tensor>_sym_sizes`` / ``_sym_sizes_opt`` / ``_sym_strides`` / ``_sym_numel`` /
    ``_sym_argsize_<k>`` / ``_sym_argsize_minus_<k>`` / ``_dim``, where ``<tensor>`` is a parameter or a
    named output. The shapes come from the node's ``_in_meta``/``_out_meta`` (or a saved tensor), strides from
    those the node recorded (``OpDef.stride_edges``), else from the saved tensor."""
    for kind in _META_KINDS:
        base, sep, rest = name.partition(kind)
        if sep and (kind == "_sym_argsize_" or not rest):
            break
    else:
        raise ValueError(f"unknown metadata attribute {name!r}")
    shape_of, tensor_of, needs_grad = _meta_sources(op, base)
    if kind == "_sym_strides":
        k = op.diff_idx.index(op.param_names.index(base))  # (the input's edge)

        def get(node):
            if not needs_grad(node):  # PyTorch records strides only for an input whose gradient is computed
                return ()
            recorded = recorded_strides(node, k)
            if recorded is not None:
                return recorded
            t = tensor_of(node)
            if t is None:
                raise RuntimeError(f"{name}: tracegrad derives it from {base!r}, which this node does not hold "
                                   "(a non-leaf input not saved, or freed by backward)")
            return tuple(t.stride())
    elif kind == "_sym_argsize_":
        k = -int(rest[len("minus_"):]) if rest.startswith("minus_") else int(rest)
        def get(node):
            shape = shape_of(node)
            return None if shape is None else shape[k]
    else:
        def get(node):
            shape = shape_of(node)
            if shape is None:  # PyTorch's value for an absent optional tensor (one without a gradient reads so too)
                return (0,) if kind == "_sym_sizes_opt" else ()
            if kind == "_sym_numel":
                return math.prod(shape)
            return len(shape) if kind == "_dim" else tuple(shape)
    return property(get)


def _meta_sources(op: OpDef, base: str):
    """(shape_of(node), tensor_of(node), needs_grad(node)) for a parameter or output named ``base``."""
    returns = [r.name for r in op.schema.returns]
    if base in returns or base == "result":
        i = 0 if base == "result" else returns.index(base)
        return (lambda node: node._out_meta[i][0]), (lambda node: None), (lambda node: True)
    param = op.param_names.index(base)
    diff = op.diff_idx[:op.diff_idx.index(param) + 1] if param in op.diff_idx else ()
    if not diff or any(op.schema.params[i].is_tensor_list for i in diff):
        raise ValueError(f"{base!r} is not a differentiable single-tensor parameter of {op.name}")
    k = len(diff) - 1
    saved = "_saved_" + base if base in op.saved_names else None

    def tensor_of(node):
        t = getattr(node, saved) if saved is not None and node._saved else None
        if t is None:  # not saved (PyTorch saves what the other gradients read): a leaf's AccumulateGrad holds it
            t = getattr(node._edges[k][0], "variable", None)
        return t

    def shape_of(node):
        meta = node._in_meta[k]
        if meta is not None:
            return meta[0]
        t = tensor_of(node)  # an input without a gradient: its shape, if it was saved
        return None if t is None else tuple(t.shape)

    return shape_of, tensor_of, (lambda node: node._in_meta[k] is not None)


def _wrapped_number(value):
    """PyTorch saves a number passed for a Tensor as a 0-dim "wrapped number" tensor (int64, float64...)."""
    if value.__class__ in (int, float, bool, complex):
        return _wrap(np.asarray(value))
    return value


def _kept_object(node, k: int, tensor_param: bool):
    """``saved_objects(node)[k]``, where it is nothing saved or a number given for a Tensor made the SavedVariable
    PyTorch holds (of None; of the wrapped-number tensor), in the node's place for good: each read hands out the same
    object, as PyTorch's do, and backward then unpacks it too (hooks registered on it, an in-place write to the
    tensor), as PyTorch's backward does. Until read, the node keeps the number, which its formula reads cheaper."""
    saved = saved_objects(node)
    value = saved[k]
    if value is None or (tensor_param and value.__class__ in (int, float, bool, complex)):
        value = SavedTensor._make_none() if value is None else SavedTensor._make_unhooked(_wrapped_number(value))
        node._saved = saved[:k] + (value,) + saved[k + 1:]
    return value


def _unpack(value, node):
    if value.__class__ is SavedTensor:
        return value.unpack(node)
    if value.__class__ is tuple:
        return unpack_record(value, node)
    if value.__class__ is list:
        return [v.unpack(node) if v.__class__ is SavedTensor else v for v in value]
    return value


def _as_uint64(value):
    """PyTorch hands a node's saved ``int``/``SymInt`` attributes to Python as unsigned 64-bit numbers: a
    ``dim=-1`` reads back as 18446744073709551615 (Scalars keep their sign)."""
    if value.__class__ is int and value < 0:
        return value + (1 << 64)
    if value.__class__ is tuple:
        return tuple(_as_uint64(v) for v in value)
    return value


def _as_list(value):
    return (value,) if value.__class__ is int else value


def _raw_saved(value):
    """``_raw_saved_<name>``: PyTorch's SavedVariable whatever was kept, one holding None for a value not saved
    (``x * 2`` keeps no ``self``) and the wrapped-number tensor for a number."""
    if value is None:
        return SavedTensor._make_none()
    if value.__class__ in (int, float, bool, complex):
        return SavedTensor._make_unhooked(_wrapped_number(value))
    return _public_attr(value)


def _public_attr(value):
    if isinstance(value, list):
        return tuple(value)
    return value


def _materialize(grads, out_meta):
    from .. import _factories

    res = list(grads)
    for i, g in enumerate(res):
        if g is None and out_meta is not None and out_meta[i] is not None:
            shape, dt = out_meta[i]
            res[i] = _factories.zeros_array_tensor(shape, dt)
    return res


class OpDef:
    """One operator: schema, kernel and the rules of every transform."""

    _fw_hook = True  # _eager routes calls through forward_ad while a dual level is active
    # One tensor in, one out, element by element: without a ``jvp`` rule, forward AD applies the VJP rule to
    # the tangent (PyTorch's auto_element_wise) instead of differentiating it (see forward_ad._vjp_of_tangent).
    elementwise_jvp = False
    # A multi-output node's rule gets zeros for the outputs without a gradient, unless its formula (as PyTorch's
    # group_norm's) must tell them apart: then None.
    materialize_grads = True
    # PyTorch's refusal of forward AD before its kernel runs, for an operator without a forward formula whose
    # autograd kernel checks its inputs' tangents first (None: tangents are computed, or refused after the kernel)
    forward_ad_refusal: str | None = None
    # An in-place operator whose ``jvp`` writes into ``self``'s tangent itself and returns it (PyTorch's
    # ``self_t_raw.op_(...)``): forward AD neither clones that tangent first nor copies the result into it
    jvp_writes_self_tangent = False
    # An operator whose ``jvp`` returns ``self``'s tangent unchanged and whose output shares it, as PyTorch's does
    # where its formula is ``self_t`` itself (sub.Scalar: an in-place op on the output then writes
    # into the input's tangent too); other rules' tangents that alias an input's are cloned
    jvp_shares_tangent = False
    # An operator whose ``jvp`` gives the tangent PyTorch's formula gives in its dtype too (copy_'s is ``src``'s): not
    # cast to the output's dtype (see forward_ad._cast_to_output_dtype)
    jvp_keeps_dtype = False
    # ``(args) -> result`` where torch's autograd kernel does not run though an input requires grad (inference tensors
    # alone), for an operator whose CPU kernel then records something all the same (clone's copy_) or refuses (an
    # inner out= call's check); it returns None where the plain result, without history, stands. None: nothing
    without_autograd_kernel: Callable[[tuple], object] | None = None
    # How many counted writes the CPU kernel makes into each new result for inference tensors alone outside inference
    # mode: torch's autograd kernel, whose guard leaves the writes of an inner ``copy_``/``fill_``/``out=`` call
    # uncounted, does not run for them (clone's ``empty_like(self).copy_(self)``: 1; mean's ``sum_out`` then
    # ``div_``: 2). The result then starts at that version. Where the count depends on the arguments (diag's: 2 for
    # a vector, 1 for a matrix), ``(args) -> int`` of the bound arguments (see ops/inference_writes.py). (A value
    # read here, only where it is not 0, not a wrapper around ``_eager``, which would slow every call.)
    inference_writes: int | Callable[[tuple], int] = 0
    # An in-place operator PyTorch writes through the out= overload of a non-differentiable operator
    # (``logical_not_``): autograd neither checks its target (a leaf requiring grad is written) nor records it.
    writes_outside_autograd = False

    def __init__(
        self,
        schema: str,
        kernel: Callable,
        *,
        vjp: Callable | None = None,
        jvp: Callable | None = None,
        batch: Callable | None = None,
        saves: tuple[str, ...] = (),
        attrs: tuple[str, ...] = (),
        differentiable: tuple[str, ...] | None = None,
        inverse: Callable | None = None,
        node_name: str | None = None,
        multi_output_view: bool = False,
        nondifferentiable_reason: str | None = None,
        save_if: dict[str, str] | None = None,
        public_name: str | None = None,
        meta: tuple[str, ...] = (),
        hidden: tuple[str, ...] = (),
        nondiff_outputs: tuple[int, ...] = (),
        complex_grad: bool = True,
    ) -> None:
        self.schema: Schema = parse_schema(schema)
        self.name = self.schema.name
        # What users call: observers and the inspector show it. nn.functional's internal operators
        # ("_nn_layer_norm") read as their public call; a fused one names the call it implements ("linear").
        self.public_name = public_name or (self.name[4:] if self.name.startswith("_nn_") else self.name)
        self.__name__ = self.public_name  # (what __torch_function__ handlers read of ``func``)
        self.kernel = kernel
        self.vjp = vjp
        self.jvp = jvp
        self.batch = batch
        self.inverse = inverse  # views: (base, src, *view_args) -> new base
        self.multi_output_view = multi_output_view
        self.nondifferentiable_reason = nondifferentiable_reason
        params = self.schema.params
        names = [p.name for p in params]
        self.param_names = tuple(names)
        self.n_params = len(params)
        self.n_positional = len(self.schema.positional)
        self.defaults = tuple(p.default for p in params)
        self.required = tuple(not p.has_default for p in params)
        self.tensor_idx = tuple(i for i, p in enumerate(params) if p.is_tensor and not (p.is_write and p.kwarg_only))
        self.list_idx = tuple(i for i, p in enumerate(params) if p.is_tensor_list)
        # (where a NumPy scalar is read as torch's parser reads a number)
        self.number_idx = tuple(i for i, p in enumerate(params)
                                if p.type.rstrip("?") in ("Scalar", "float", "Tensor") and not p.is_write)
        self.float_idx = tuple(i for i, p in enumerate(params) if p.type.rstrip("?") == "float")
        diff = differentiable if differentiable is not None else tuple(
            p.name for p in params if (p.is_tensor or p.is_tensor_list) and not (p.is_write and p.kwarg_only))
        self.diff_idx = tuple(names.index(n) for n in diff)
        self.diff_has_list = any(params[i].is_tensor_list for i in self.diff_idx)
        self.saved_names = tuple(saves)
        self.save_spec = tuple(_save_slot(names, s) for s in saves)
        # Like PyTorch, keep a value only when a gradient that reads it can be asked for: ``x * c`` with a
        # constant ``c`` does not save ``x``. ``save_if={"self": "other"}`` saves self only if other needs grad.
        save_if = save_if or {}
        # (a tuple of names: saved if any of them needs grad, e.g. _trilinear's inputs)
        self.save_conditions = tuple(
            -1 if s not in save_if else names.index(save_if[s]) if isinstance(save_if[s], str)
            else tuple(names.index(name) for name in save_if[s]) for s in saves)
        diff_set = set(self.diff_idx)
        self.rg_idx = tuple(i for i in self.tensor_idx if i in diff_set)
        self.rg_list_idx = tuple(i for i in self.list_idx if i in diff_set)
        self.saves_self = "self" in saves
        self.attr_names = tuple(attrs)
        self.attr_idx = tuple(_attr_slot(names, a) for a in attrs)
        # How PyTorch names each saved value (``_saved_<name>``); ``hidden`` attrs/saves have no getter (an
        # internal value PyTorch's node lacks); ``meta`` names sizes PyTorch keeps, derived on demand.
        self.saved_attr_names = tuple(_saved_attr_name(self, s) for s in saves)
        # PyTorch's generated code saves (packs) and reads back (unpacks) a node's values inputs first, each
        # group sorted by name (``other`` before ``self``), whatever order its formulas use: the order
        # saved_tensors_hooks see. None when that is the declaration order.
        order = tuple(sorted(range(len(saves)), key=lambda k: (self.save_spec[k][0] == "out",
                                                                self.saved_attr_names[k])))
        self.pack_order = order if order != tuple(range(len(saves))) else None
        self.hidden = tuple(hidden)
        # outputs PyTorch declares non-differentiable (native_layer_norm's mean and rstd): never require grad
        self.nondiff_outputs = frozenset(nondiff_outputs)
        # False: PyTorch's derivative is real-only, and its out-of-place op refuses to record a complex output
        # (its in-place form and forward AD do not check)
        self.complex_grad = complex_grad
        # how many of them end the returns (nll_loss's total_weight): the node takes no gradient for those
        n_returns = len(self.schema.returns)
        self.trailing_nondiff = next(k for k in range(n_returns + 1) if n_returns - 1 - k not in self.nondiff_outputs)
        # and how many begin them (linalg_lu's P): PyTorch's node numbers only the differentiable outputs, so L is
        # its output 0 (``output_nr``, the edges' input_nr, the hooks' gradient tuples)
        self.leading_nondiff = next(k for k in range(n_returns + 1) if k not in self.nondiff_outputs)
        self.meta = tuple(meta)
        # The inputs (as edge positions) whose strides PyTorch's node keeps (``<input>_sym_strides``): their layout
        # picks a branch of the backward (mm's), and an input with a gradient may not be saved, so the node
        # records them (NumPy's byte strides, in ``_strides``) when it is made.
        self.stride_edges = tuple(sorted(self.diff_idx.index(names.index(m[:-len("_sym_strides")]))
                                         for m in self.meta if m.endswith("_sym_strides")))
        kind = self.schema.kind
        self.is_inplace = kind is SchemaKind.inplace
        # A kernel that draws random numbers or writes into an input (an in-place op's self, batch norm's running
        # statistics) is not pure: it runs with NumPy's floating-point warnings off from the start rather than
        # again after a strict filter made one an exception (a second run would draw again, or write twice).
        # An in-place kernel that computes its whole result before writing it (``pointwise.writes_last``) writes
        # nothing before such a warning, so it runs again quietly as a pure one does: no cost where nothing warns.
        self.impure_kernel = any("Generator" in p.type for p in self.schema.params) or (
            any(p.is_write for p in self.schema.params) and not getattr(kernel, "writes_last", False))
        # PyTorch's generated code makes an operator's node (taking its sequence number) and packs the saved
        # inputs before the kernel runs, the outputs after it: a kernel error leaves the number taken and the
        # pack hooks called, and an input the kernel writes into (batch norm's running statistics, an in-place
        # op's ``other`` aliasing ``self``) is saved as it was before the write. Operators without a derivative
        # (comparisons; ``defop_without_derivative``) decide after the kernel, from the outputs' dtypes.
        self.node_before_kernel = vjp is not None
        # ``_to_copy``'s node exists only when the requested dtype can carry a gradient (PyTorch's
        # ``output_differentiability`` condition), ``copy_``'s only into a self that can carry one: a predicate over
        # the arguments, checked before the kernel
        self.records_if: Callable[[tuple], bool] | None = None
        self.is_view = self.schema.is_view and not self.is_inplace
        # New results take PyTorch's layout (result_layouts.py), decided for a pointwise op by its tensor operands
        # in ATen's order; ``iterates`` tells the fast paths they are pointwise
        self.iterates = follows_tensor_iterator(self.name) and not self.is_inplace
        self.result_layout = (None if self.is_inplace or self.is_view
                              else _layout_rule_for(self.name, self.schema.full_name))
        self.layout_operands = operand_positions(self.schema)
        # ATen's memory-overlap check between the written-to tensor and the other tensor inputs (mem_overlap.py)
        self.overlap_check = inplace_check(self.name) if self.is_inplace else Check.NONE
        self.overlap_inputs = tuple(i for i in self.tensor_idx + self.list_idx if i != 0
                                    ) if self.overlap_check is not Check.NONE else ()
        # Most of PyTorch's kernels refuse the barebones unsigned dtypes (uint16/32/64) that NumPy computes: the
        # operators barebones_unsigned.py lists get a kernel that refuses them once one of them exists
        functional_name = self.name[:-1] if self.is_inplace else self.name
        barebones_unsigned.declare(self, self.layout_operands if follows_tensor_iterator(functional_name) else None)
        bfloat16_in_float.declare(self)  # (computed in float once bfloat16 exists)
        self.returns_list = bool(self.schema.returns) and self.schema.returns[0].type.startswith("Tensor[]")
        self.n_returns = len(self.schema.returns)
        self.returns_tensor = tuple(r.type.startswith("Tensor") for r in self.schema.returns)
        cls_name = node_name or _node_name(self.name)
        slots = ("_strides",) if self.stride_edges else ()
        self.node_class = type(cls_name, (OpNode,), {"__slots__": slots, "_name": cls_name, "_op": self,
                                                     "_unpack_order": self.pack_order,
                                                     **_saved_properties(self)})
        self.node_class.__module__ = "builtins"  # (torch's generated C++ nodes: <class 'MulBackward0'>)
        key = self.schema.full_name
        DECLARED.setdefault(key, []).append(self)
        REGISTRY[key] = self
        REGISTRY.setdefault(self.name, self)

    def __repr__(self) -> str:
        return f"<OpDef {self.schema.full_name}>"

    def __reduce_ex__(self, protocol: int):
        """A public operator pickles as a reference to its public name (``pickle.dumps(torch.sin)``, as torch's
        builtins do; ``_public_names`` notes it), and copies as itself; any other as a plain object."""
        home = self.__dict__.get("_public_home")
        if home is None:
            return super().__reduce_ex__(protocol)
        return public_operator, home

    # ---- calling ------------------------------------------------------------------------------------------

    def __call__(self, /, *args, **kwargs):  # (``self=`` is an operator's argument)
        try:
            if STATE.op_call_checks:
                # (before any observer or transform sees the call: torch's parser refuses an array first)
                if STATE.special:
                    self._refuse_arrays(args, kwargs)
                if STATE.torch_function:
                    handled = _torch_function.handle_operator(self, args, kwargs)
                    if handled is not _torch_function.NOT_HANDLED:
                        return handled
                profiler = STATE.profiler
                if profiler is not None and not profiler.timing(self):
                    return profiler.op_call(self, args, kwargs)  # which calls this again, to be timed
                if STATE.autocast is not None:  # (CPU autocast: the operators torch lists run on cast arguments)
                    from ..amp.cpu_policy import POLICIES, call_with_policy

                    policy = POLICIES.get(self.schema.full_name)
                    if policy is not None:
                        return call_with_policy(policy, self, args, kwargs)
                interceptors = STATE.op_interceptors
                if interceptors:  # (tracegrad.utils._python_dispatch) it runs the op, or not, itself
                    return interceptors[-1](self, args, kwargs)
                if STATE.stack:
                    from ..dispatch import dispatch

                    return dispatch(self, args, kwargs)
            if kwargs:
                if "out" in kwargs and "out" not in self.param_names:
                    return self._call_with_out(args, kwargs)
                bound = self.bind(args, kwargs)
            elif len(args) != self.n_params:
                bound = self.bind(args, kwargs)
            else:
                bound = args
            return self._eager(parsed_numbers(bound, self.number_idx, self.float_idx))
        except Exception:
            # (only a failed call pays for this: torch's parser would have refused bad arguments first, after
            # handing objects with a __torch_function__ to it)
            handled = _torch_function.handle_refused(self, args, kwargs)
            if handled is not _torch_function.NOT_HANDLED:
                return handled
            refuse_as_torch(self.schema.name, args, kwargs)
            raise

    def _refuse_arrays(self, args: tuple, kwargs: dict) -> None:
        """Refuse a NumPy array given for a Tensor or a number, alone or in a ``Tensor[]``, or as ``out=``, as
        torch's parser does (the plain eager path refuses them in ``parsed_numbers`` and ``_eager``; this is for
        the paths that hand the call on before those run: profiler, interceptors, transforms)."""
        given = list(enumerate(args))
        for key, value in kwargs.items():
            key = "self" if key == "input" else key
            if key == "out":
                if isinstance(value, np.ndarray):
                    raise array_refused(value, "argument 'out'")
            elif key in self.param_names:
                given.append((self.param_names.index(key), value))
        for i, value in given:
            if i in self.list_idx:
                if value.__class__ is list or value.__class__ is tuple:
                    refuse_arrays_among(value)
            elif isinstance(value, np.ndarray) and (i in self.number_idx or i in self.tensor_idx):
                raise array_refused(value, f"argument '{self.param_names[i]}'")

    def _call_with_out(self, args: tuple, kwargs: dict):
        """The derived ``out=`` variant: compute functionally, then write into ``out`` (seed 003)."""
        if self.name in NO_OUT_OVERLOAD:
            raise TypeError(f"{self.public_name}() got an unexpected keyword argument 'out'")
        kwargs = dict(kwargs)
        out = kwargs.pop("out")
        if out is None:
            return self(*args, **kwargs)
        from .variants import write_out

        bound = parsed_numbers(self.bind(args, kwargs), self.number_idx, self.float_idx)
        return write_out(self, bound, out)

    def bind(self, args: tuple, kwargs: dict) -> tuple:
        """Positional+keyword arguments → a full positional tuple in schema order, with defaults."""
        n = len(args)
        if n > self.n_positional:
            raise TypeError(f"{self.name}() takes {self.n_positional} positional arguments but {n} were given")
        if not kwargs:
            if n == self.n_params:
                return args
            missing = [self.param_names[i] for i in range(n, self.n_params) if self.required[i]]
            if missing:
                raise self._missing(missing)
            return args + self.defaults[n:]
        full = list(args) + list(self.defaults[n:])
        names = self.param_names
        given = set()
        stray_self = False
        for key, value in kwargs.items():
            if key == "self":  # (torch's parser names it ``input``: a missing input is reported first)
                stray_self = True
                continue
            if key == "input":
                key = "self"
            try:
                i = names.index(key)
            except ValueError:
                i = self._numpy_spelling_index(key, n, kwargs, given)
            if i < n:
                raise TypeError(f"{self.name}() got multiple values for argument '{key}'")
            full[i] = value
            given.add(i)
        for i in range(n, self.n_params):
            if self.required[i] and i not in given:
                # (PyTorch lists every required argument from the first missing one on, given or not)
                raise self._missing([names[k] for k in range(i, self.n_params) if self.required[k]])
        if stray_self:
            raise TypeError(f"{self.name}() got an unexpected keyword argument 'self'")
        return tuple(full)

    def _numpy_spelling_index(self, key: str, n_positional: int, kwargs: dict, given: set) -> int:
        """The index of the parameter ``key`` spells as NumPy does (``axis`` for ``dim``, ``x`` for ``input``),
        which torch's parser takes where that parameter has no other value; else torch's refusal, which names the
        first keyword that is not one of torch's own names (``exp(x=t, a=t)``: 'x')."""
        from .._arg_parser import _PARAM_NAMES

        name = _PARAM_NAMES.get(key)
        own = "self" if name == "input" else name
        if own in self.param_names:
            i = self.param_names.index(own)
            if i >= n_positional and i not in given and name not in kwargs and own not in kwargs:
                return i
        own_names = {"input", *self.param_names} - {"self"}
        first = next(k for k in kwargs if k not in own_names)
        raise TypeError(f"{self.name}() got an unexpected keyword argument '{first}'")

    def _missing(self, names: list[str]) -> TypeError:
        """PyTorch's parser's words, its plural ending included ("1 required positional arguments")."""
        listed = ", ".join(f'"{"input" if name == "self" else name}"' for name in names)
        return TypeError(f"{self.public_name}() missing {len(names)} required positional argument"
                         f"{'s' if len(names) == 1 else ''}: {listed}")

    def _eager(self, args: tuple):
        if STATE.special and STATE.fw_grad_levels:
            from ..autograd import forward_ad

            return forward_ad.eager_with_tangents(self, args)
        arrays = list(args)
        for i in self.tensor_idx:
            a = args[i]
            if a.__class__ is Tensor or isinstance(a, Tensor):
                arrays[i] = a._data
        for i in self.list_idx:
            seq = args[i]
            if seq is not None:
                arrays[i] = [t._data if isinstance(t, Tensor) else _tensor_list_item(t, seq) for t in seq]
        requires_grad = False
        if STATE.grad_enabled:
            for i in self.rg_idx:
                a = args[i]
                if (a.__class__ is Tensor or isinstance(a, Tensor)) and (
                        a._rg or (a._base is not None and a._base._rg)):
                    requires_grad = True
                    break
            for i in self.rg_list_idx:
                for t in args[i] or ():
                    if isinstance(t, Tensor) and (t._rg or (t._base is not None and t._base._rg)):
                        requires_grad = True
                        a = t
            if requires_grad and STATE.inference_seen and a._inference and not self.is_inplace:
                # (an inference tensor made to require grad in inference mode: torch's autograd kernel runs only
                # where some other argument is a normal tensor; ``_eager_inplace`` decides for itself)
                requires_grad = _views.autograd_kernel_runs(args, self.tensor_idx)
                if not requires_grad and self.without_autograd_kernel is not None:
                    done = self.without_autograd_kernel(args)
                    if done is not None:
                        return done
        record = requires_grad and STATE.grad_enabled
        if self.is_inplace:
            return self._eager_inplace(args, arrays, record)
        node = None
        if record and self.node_before_kernel:
            if self.records_if is None or self.records_if(args):
                node = self._new_node(args)
                node._saved = self._save_inputs(args)
            else:
                record = False
        try:
            result = self.kernel(*arrays) if not self.impure_kernel else quietly(self.kernel, *arrays)
        except ValueError as exc:  # NumPy's broadcasting error in PyTorch's words
            raise translate_value_error(exc, arrays) from None
        except FP_SIGNALS:  # (a pure out-of-place kernel's, run again quietly: see aten_vec.quietly)
            result = quietly(self.kernel, *arrays)
        if self.n_returns == 1 and not self.returns_list:
            if result.__class__ is not _ndarray:
                if not self.returns_tensor[0]:
                    return result
                result = np.asarray(result)
            if self.result_layout is not None:
                result = self.result_layout(result, arrays, self.layout_operands)
            out = _new(Tensor)
            out._data = result
            out._rg = False
            out._gfn = None
            out._vc = None
            if STATE.special and STATE.inference:
                out._inference = True
            elif self.inference_writes and STATE.inference_seen and self._inference_inputs_alone(args):
                out._vc = inference_version(self, args)
            outs = (out,)
            if self.is_view:
                _views.make_view(out, args[0], self, args, 0)
            if record:
                self._record(args, outs, node)
            if STATE.observed:
                emit_op_call(self.public_name, outs, record)
            return out
        if self.result_layout is not None:
            result = tuple(self.result_layout(r, arrays, self.layout_operands) for r in result)
        # (a NumPy scalar, which a ufunc returns for a 0-d input, becomes a 0-d array as the single-output path does)
        outs = tuple(_wrap(r if r.__class__ is _ndarray or not isinstance(r, np.generic) else np.asarray(r))
                     if self.returns_list or self.returns_tensor[k] else r for k, r in enumerate(result))
        if self.is_view:
            for k, o in enumerate(outs):
                _views.make_view(o, args[0], self, args, k)
        elif self.inference_writes and STATE.inference_seen and self._inference_inputs_alone(args):
            for o in outs:
                o._vc = inference_version(self, args)
        if record:
            self._record(args, tuple(o for o in outs if o.__class__ is Tensor), node)
        if STATE.observed:
            emit_op_call(self.public_name, outs, record)
        return outs if self.returns_list else _return_tuple(self, outs)  # Tensor[]: a tuple in Python, as torch

    def _inference_inputs_alone(self, args: tuple) -> bool:
        """Whether ``args`` are inference tensors alone, outside inference mode (torch's autograd kernel skipped)."""
        return not STATE.inference and not _views.autograd_kernel_runs(args, self.tensor_idx)

    def _refuse_arguments_first(self, arrays: list) -> None:
        """For an overlap refused: the kernel's own refusal of its arguments where ATen checks them first
        (``ARGUMENTS_CHECKED_FIRST``), found by running it on a copy of the written-to array."""
        if self.name.rstrip("_") not in ARGUMENTS_CHECKED_FIRST:
            return
        copied = [arrays[0].copy(), *arrays[1:]]
        try:
            quietly(self.kernel, *copied)  # (its refusal, not a strict filter's floating-point warning)
        except ValueError as exc:
            raise translate_value_error(exc, copied) from None

    def _eager_inplace(self, args: tuple, arrays: list, record: bool, step: str = "all", made: tuple = ()):
        """An in-place call: its checks and node (whose first edge is the target's history before the write) with its
        saved inputs, then the kernel's checks, its write and the version bump, then the target's new history and the
        node's saved outputs; the target.

        A foreach in-place call (ops/foreach.py) takes each step for all its tensors at once, as PyTorch's generated
        code does (every node made before any write, every write before any history): ``step="node"`` returns
        ``(record, node, saved)``, which ``step="history"`` takes as ``made``. One function, so that an ordinary
        in-place call makes no call per step."""
        target = args[0]
        if step == "all" or step == "node":
            if record and self.records_if is not None and not self.records_if(args):
                record = False  # (before check_inplace, which then refuses nothing: PyTorch's copy_ into an integer)
            elif record and not self.node_before_kernel and not _dt.is_differentiable_np(target._data.dtype):
                # (an operator without a derivative, ``bitwise_and_``, ``floor_divide_``, into an integer tensor that
                # requires grad: torch's kernel has no autograd formula to run, and the target keeps its history)
                record = False
            if STATE.grad_enabled and not self.writes_outside_autograd:
                if target._inference and not _views.autograd_kernel_runs(args, self.tensor_idx):
                    record = False  # (torch's autograd kernel does not run: the refusal after the write is all)
                else:
                    record = _views.check_inplace(target, record)
            node = saved = None
            if record:
                node = self._new_node(args)
                original = None
                if self.saves_self and any(_wanted(args, cond) for (kind, idx), cond
                                           in zip(self.save_spec, self.save_conditions) if kind == "arg" and idx == 0):
                    from .creation import clone

                    # PyTorch saves ``self.clone()`` (a recorded copy, so double backward reaches self's history),
                    # and only when a gradient that reads it can be asked for: ``x.mul_(2)`` makes no copy.
                    original = clone(target)
                saved = self._save_inputs(args, original) if self.save_spec else None
            if step == "node":
                return record, node, saved
        elif step == "history":
            record, node, saved = made
        if step != "history":
            # The kernel's own checks, once autograd has made the node and saved the inputs, as in PyTorch
            if self.schema.full_name not in _OVERLAP_WRITERS:
                check_no_internal_overlap(target._data, self.schema.name)
            if self.overlap_inputs:
                try:
                    check_overlap(self.overlap_check, target._data, [arrays[i] for i in self.overlap_inputs])
                except RuntimeError:
                    self._refuse_arguments_first(arrays)
                    raise
            if STATE.before_write is not None:
                STATE.before_write(target)
            try:
                self.kernel(*arrays) if not self.impure_kernel else quietly(self.kernel, *arrays)
            except ValueError as exc:
                raise translate_value_error(exc, arrays) from None
            except FP_SIGNALS:  # (a strict filter's, raised before a ``writes_last`` kernel wrote: see impure_kernel)
                quietly(self.kernel, *arrays)
            if target._inference:  # (torch's version bump refuses it, after the kernel wrote)
                _views.refuse_inference_update(target)
            target._bump_version()
            if step == "write":
                return None
        if record:
            if target._base is not None:
                _views.record_inplace_on_view(self, args, target, node)
            else:
                _views.rebase_history(target, node)
            if saved is not None:
                node._saved = self._save_outputs(args, saved, lambda idx: _save_inplace_output(target))
            if STATE.special and STATE.anomaly:
                from ..autograd import anomaly_mode

                anomaly_mode.record_forward_trace(node)
        if STATE.observed:
            emit_op_call(self.public_name, (target,), record)
        return target

    # ---- autograd recording -----------------------------------------------------------------------------

    def _edges_and_meta(self, args: tuple):
        edges = []
        meta = []
        for i in self.diff_idx:
            a = args[i]
            if a.__class__ is list or a.__class__ is tuple:
                for t in a:
                    _append_edge(t, edges, meta)
            else:
                _append_edge(a, edges, meta)
        return tuple(edges), tuple(meta)

    def _new_node(self, args: tuple) -> Node:
        node = _new(self.node_class)
        node._seq = next_sequence_nr()
        node._edges, node._in_meta = self._edges_and_meta(args)
        node._attrs = tuple([args[i] if i.__class__ is int else _attr_value(args, i) for i in self.attr_idx]
                            ) if self.attr_idx else ()
        node._saved = ()
        node._out_meta = None
        if self.stride_edges:
            node._strides = _input_strides(args, self.diff_idx)
        return node

    def _save_inputs(self, args: tuple, original_self: Tensor | None = None) -> list:
        """The saved values that are inputs, packed in the node's order (outputs' slots left None);
        ``original_self`` stands for ``self`` (an in-place op saves a copy of it from before the write)."""
        saved = [None] * len(self.save_spec)
        for k in self.pack_order or range(len(saved)):
            (kind, idx), cond = self.save_spec[k], self.save_conditions[k]
            if kind != "out" and _wanted(args, cond):
                saved[k] = (SavedTensor._make(original_self) if original_self is not None and idx == 0
                            else _save_arg(args[idx]))
        return saved

    def _save_outputs(self, args: tuple, saved: list, save_output: Callable[[int], object]) -> tuple:
        """``saved`` (from :meth:`_save_inputs`) completed with the outputs, packed in the node's order."""
        for k in self.pack_order or range(len(saved)):
            (kind, idx), cond = self.save_spec[k], self.save_conditions[k]
            if kind == "out" and _wanted(args, cond):
                saved[k] = save_output(idx)
        return tuple(saved)

    def _record(self, args: tuple, outs: tuple, node: Node | None = None) -> Node | None:
        """Attach the outputs to ``node`` (made before the kernel, inputs saved) or to a new one."""
        nondiff = self.nondiff_outputs
        for n, o in enumerate(outs):
            if _dt.is_differentiable_np(o._data.dtype) and n not in nondiff:
                break
        else:
            if node is not None:  # an operator with a derivative asked for an integer result (sum(dtype=long))
                raise autograd_dtype_refused(outs[0]._data.dtype)
            # Like PyTorch, no node (and no sequence number) for a call none of whose outputs can have a
            # gradient (a comparison, ``any``, ``nonzero``).
            return None
        if not self.complex_grad and any(o._data.dtype.kind == "c" for o in outs):
            raise RuntimeError(f"{self.public_name} does not support automatic differentiation for outputs with "
                               "complex dtype.")
        if node is None:
            node = self._new_node(args)
            node._saved = self._save_inputs(args)
        lead = self.leading_nondiff
        returned = outs  # (the saved outputs below are named by their place in the returns)
        if lead:
            outs = outs[lead:]
            nondiff = {i - lead for i in nondiff}
        n = 0
        for o in outs:
            if _dt.is_differentiable_np(o._data.dtype) and n not in nondiff:
                o._gfn = node
                if n:
                    o._output_nr = n
                o._rg = True
            n += 1
        if self.trailing_nondiff:  # PyTorch's node takes a gradient per differentiable output only
            n -= self.trailing_nondiff
        if n != 1:
            node._n_out = n
        node._out_meta = outputs_meta([o._data for o in outs])
        node._saved = self._save_outputs(args, node._saved, lambda idx: _save_output(returned[idx]))
        if STATE.special and STATE.anomaly:
            from ..autograd import anomaly_mode

            anomaly_mode.record_forward_trace(node)
        return node


class UnaryPointwiseOp(OpDef):
    """Unary elementwise ops; each gets a subclass whose ``__call__`` is ``fastpath.unary``."""


class BinaryPointwiseOp(OpDef):
    """Broadcasting binary ops; each gets a subclass whose ``__call__`` is ``fastpath.binary``."""




# In-place operators PyTorch lets write into overlapping memory: every element gets the same number.
# (and those whose kernels warn as they write into an expanded tensor, after their own argument checks: masked_fill_
# and index_fill_ call ``check_no_internal_overlap`` themselves)
_OVERLAP_WRITERS = frozenset({"fill_.Scalar", "zero_", "masked_fill_.Scalar", "masked_fill_.Tensor",
                              "index_fill_.int_Scalar", "index_fill_.int_Tensor"})


# In-place operators PyTorch still lets write into an expanded tensor, with a deprecation warning (its kernels check
# has_internal_overlap and warn where the others assert): the name, and the indexing form the warning mentions.
_OVERLAP_DEPRECATED = {"index_put_": "tensor[indices] = tensor", "masked_fill_": "tensor[mask] = scalar",
                       "index_fill_": "tensor[mask] = scalar"}


def check_no_internal_overlap(a, op_name: str = "") -> None:
    """PyTorch's assert_no_internal_overlap: an in-place write into a tensor some of whose elements share memory (an
    expanded one: a stride of 0 on a dim of size 2 or more) is refused (``op_name``: the operator writing, which
    PyTorch may only warn about)."""
    strides = getattr(a, "strides", None)
    if strides and 0 in strides and a.size > 1 and any(s == 0 and n > 1 for s, n in zip(strides, a.shape)):
        example = _OVERLAP_DEPRECATED.get(op_name)
        if example is not None:
            # (a TORCH_WARN of the kernel: shown at the user's line that called into torch, whatever the depth)
            warn_at_caller(f"Use of {op_name} on expanded tensors is deprecated. Please clone() the tensor before "
                           f"performing this operation. This also applies to advanced indexing e.g. {example}",
                           UserWarning)
            return
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a single "
                           "memory location. Please clone() the tensor before performing the operation.")


def _needs_grad(value) -> bool:
    return isinstance(value, Tensor) and value._rg


def inference_version(op: OpDef, args: tuple) -> list | None:
    """A new result's version counter where ``args`` are inference tensors alone, outside inference mode: the
    writes torch's CPU kernel counts into it (``OpDef.inference_writes``, a number or a function of ``args``)."""
    writes = op.inference_writes
    if writes.__class__ is not int:
        writes = writes(args)
    return [writes] if writes else None


def _wanted(args: tuple, condition) -> bool:
    """Whether a value with this save condition is kept: always (-1), if that argument requires grad, or (a
    tuple) if any of those do."""
    if condition.__class__ is int:
        return condition < 0 or _needs_grad(args[condition])
    return any(_needs_grad(args[i]) for i in condition)


def _attr_slot(names: list[str], attr: str):
    if attr in names:
        return names.index(attr)
    if attr.endswith("_sizes") and attr[:-len("_sizes")] in names:  # shapes of every tensor of a Tensor[] arg
        return ("list_sizes", names.index(attr[:-len("_sizes")]))
    if attr.endswith("_sym_sizes") and attr[:-len("_sym_sizes")] in names:
        return ("sizes", names.index(attr[:-len("_sym_sizes")]))
    if attr.endswith("_geometry") and attr[:-len("_geometry")] in names:  # (sizes, strides, storage offset)
        return ("geometry", names.index(attr[:-len("_geometry")]))
    raise ValueError(f"unknown attribute {attr!r}")


def _attr_value(args: tuple, slot):
    if slot.__class__ is int:
        return args[slot]
    if slot[0] == "list_sizes":
        return tuple(tuple(t._data.shape) if isinstance(t, Tensor) else tuple(np.shape(t)) for t in args[slot[1]])
    if slot[0] == "geometry":
        data = args[slot[1]]._data
        return tuple(data.shape), element_strides(data), storage_offset_of(data)
    return tuple(args[slot[1]]._data.shape)


def _input_strides(args: tuple, diff_idx: tuple) -> tuple:
    """Each differentiable input's NumPy strides (None for a non-tensor), for a node's ``_strides``."""
    return tuple([a._data.strides if isinstance(a := args[i], Tensor) else None for i in diff_idx])


def recorded_strides(node, k: int) -> tuple | None:
    """The strides (in elements, as ``Tensor.stride()``) input ``k`` of ``node`` had when the node was made, or
    None where the node has no record of them (a node made by hand: the fused linear's)."""
    strides = getattr(node, "_strides", None)
    if strides is None or strides[k] is None or node._in_meta[k] is None:
        return None
    itemsize = node._in_meta[k][1].itemsize
    return tuple([s // itemsize for s in strides[k]])


def _save_inplace_output(target: Tensor):
    if target._base is not None:
        return SavedTensor._make_inplace_view_output(target)
    return SavedTensor._make(target, is_output=True)


def _append_edge(t, edges: list, meta: list) -> None:
    if isinstance(t, Tensor) and (t._rg or (t._base is not None and t._base._rg)):
        edges.append(gradient_edge(t))
        meta.append(meta_record(t._data.shape, t._data.dtype))  # (shared records: autograd/node_meta.py)
    else:
        edges.append(NO_EDGE)
        meta.append(None)


def _save_output(o: Tensor):
    return SavedTensor._make(o, is_output=True) if o._rg else SavedTensor._make(o)


def _save_arg(value):
    if value.__class__ is Tensor or isinstance(value, Tensor):
        return SavedTensor._make(value)
    if value.__class__ in (list, tuple) and any(isinstance(v, Tensor) for v in value):
        # A Tensor?[] keeps a SavedTensor for each None too, as PyTorch's SavedVariable list does.
        return [SavedTensor._make(v) if isinstance(v, Tensor)
                else SavedTensor._make_none() if v is None else v for v in value]
    if value.__class__ is tuple:  # (a Tensor?[] of Nones: a list, as a tuple in _saved is a record of saved.py)
        return list(value)
    return value


def _save_slot(names: list[str], spec: str) -> tuple[str, int]:
    if spec == "result":
        return ("out", 0)
    if spec.startswith("result") and spec[6:].isdigit():
        return ("out", int(spec[6:]))
    return ("arg", names.index(spec))


def _return_tuple(op: OpDef, outs: tuple):
    from ..return_types import make_return

    return make_return(op.schema, outs)


def _node_name(op_name: str) -> str:
    base = op_name.rstrip("_")
    camel = "".join(part[:1].upper() + part[1:] for part in base.split("_"))
    return f"{camel}Backward0"


def not_implemented(name: str):
    """A vjp for operators PyTorch has no derivative for."""

    def vjp(ctx, *grads):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")

    return vjp


class NoDerivativeOp(OpDef):
    """An operator PyTorch has no derivative for. PyTorch's autograd fallback gives its outputs a
    ``torch::autograd::NotImplemented`` node that takes no sequence number (it reports 2**64 - 1) and has edges
    only to the inputs that require grad."""

    def _new_node(self, args: tuple) -> Node:
        node = _new(self.node_class)
        node._seq = UINT64_MAX
        edges, meta = self._edges_and_meta(args)
        keep = [k for k, edge in enumerate(edges) if edge is not NO_EDGE]
        node._edges = tuple(edges[k] for k in keep)
        node._in_meta = tuple(meta[k] for k in keep)
        node._attrs = ()
        node._saved = ()
        node._out_meta = None
        return node


def defop_without_derivative(schema: str, kernel: Callable, **kwargs) -> OpDef:
    """An operator PyTorch has no derivative for (see :class:`NoDerivativeOp`): the namespace shows in its node's
    ``name()``, as for PyTorch's hand-written nodes, and a backward through it raises PyTorch's
    "derivative for aten::NAME is not implemented"; an input with a tangent is refused before the kernel runs, in the
    words of PyTorch's autograd-not-implemented fallback."""
    name = schema.split("(", 1)[0].split(".", 1)[0]

    def vjp(ctx, *grads):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    op = defop(schema, kernel, vjp=vjp, node_name="NotImplemented", **kwargs)
    op.__class__ = NoDerivativeOp
    op.node_before_kernel = False  # (its node saves nothing and takes no number: made once the outputs exist)
    op.node_class._name = "torch::autograd::NotImplemented"
    op.forward_ad_refusal = fallback_refusal(name)
    return op


_FAST_PATHS: dict = {}


def defop(schema: str, kernel: Callable, vjp: Callable | None = None, *, fast: str | None = None,
          ufunc=None, **rules) -> OpDef:
    """Declare an operator (see :class:`OpDef`). ``fast="unary"|"binary"`` selects a straight-line eager path
    for pointwise ops called as ``op(tensor)`` / ``op(tensor, tensor_or_number)``."""
    cls = _FAST_PATHS.get(fast, OpDef)
    op = cls(schema, kernel, vjp=vjp, **rules)
    assert cls is OpDef or all(c.__class__ is int for c in op.save_conditions), "fast paths take one condition"
    op.ufunc = ufunc  # the plain NumPy function to call when no dtype promotion is needed
    refusal = getattr(op.jvp, "refusal", None)
    if refusal is not None and not op.is_inplace:  # (an in-place one writes first: _INPLACE_WITHOUT_FORMULA)
        op.forward_ad_refusal = refusal
    if cls is not OpDef:
        # Values of the trailing defaulted parameters (e.g. alpha=1) and their attrs for the fast path.
        op.trailing_defaults = op.defaults[2:] if cls is BinaryPointwiseOp else ()
        full = (None, None) + op.trailing_defaults
        op.default_attrs = tuple(full[i] for i in op.attr_idx if isinstance(i, int))
        from . import fastpath

        call = fastpath.binary(op) if cls is BinaryPointwiseOp else fastpath.unary(op)
        op.__class__ = type(f"{cls.__name__}_{op.name}", (cls,), {"__call__": call})
        op.dunder = fastpath.binary(op, dunder=True) if cls is BinaryPointwiseOp else None
    return op


_FAST_PATHS.update(unary=UnaryPointwiseOp, binary=BinaryPointwiseOp)


def get(name: str) -> OpDef:
    return REGISTRY[name]
