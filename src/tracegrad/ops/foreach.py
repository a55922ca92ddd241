"""``torch._foreach_*``: the operators over lists of tensors (EMA updates, optimizers' foreach paths), one per
overload of PyTorch's schemas, generated from the tables below.

On the CPU PyTorch runs every foreach kernel as a loop of the per-tensor operator (``t.add(scalar)``,
``t.lerp_(end, weight)``), so each result carries that operator's bits, dtype and layout: here too, each tensor
goes through the per-tensor operator's kernel. What the foreach layer adds:

- its own checks of the lists (lengths, scalar lists, the 0-d ``Tensor`` operand), in PyTorch's words;
- for an out-of-place call, one autograd node over all the tensors (``ForeachAddBackward0List``), whose gradient
  is each tensor's per-tensor formula. Like PyTorch's, it saves what the formulas read whichever inputs need a
  gradient, so an in-place write into any of them is refused at backward;
- for an in-place call, the per-tensor in-place operator's own node on each tensor (``AddBackward1``), once every
  tensor has passed the leaf check (a refused call writes nothing), as PyTorch's generated code does;
- forward-mode AD in PyTorch's order and with its few formulas of its own (``foreach_tangents.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from .. import _torch_function as _tf
from .._state import STATE
from .._tensor import Tensor
from ..autograd import views as _views
from ..autograd.edges import NO_EDGE, gradient_edge
from ..autograd.node import UINT64_MAX, Error
from . import aten_norm, foreach_tangents
from ._util import parsed_numbers, translate_value_error
from .aten_vec import quietly
from .pointwise import inplace_kernel
from .registry import REGISTRY, OpDef, _attr_value, _save_arg, defop, defop_without_derivative

# ---- the tables ------------------------------------------------------------------------------------------------

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1", "floor", "frac",
          "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin",
          "sinh", "sqrt", "tan", "tanh", "trunc")

# name: (per-tensor operator of the Scalar and ScalarList overloads, its in-place form or None where PyTorch's
# foreach in-place op has no derivative; the same for the List (and Tensor) overloads; whether the List/Tensor
# overloads take ``alpha``; whether there is a Tensor overload)
_BINARY = {
    "add": ("add.Scalar", "add_.Scalar", "add", "add_", True, True),
    "sub": ("sub.Scalar", "sub_.Scalar", "sub", "sub_", True, False),
    "mul": ("mul.Scalar", "mul_.Scalar", "mul", "mul_", False, True),
    "div": ("div.Scalar", "div_.Scalar", "div.Tensor", "div_.Tensor", False, True),
    "clamp_min": ("clamp_min", "clamp_min_", "clamp_min.Tensor", "clamp_min_.Tensor", False, False),
    "clamp_max": ("clamp_max", "clamp_max_", "clamp_max.Tensor", "clamp_max_.Tensor", False, False),
    "maximum": ("clamp_min", None, "maximum", "maximum_", False, False),
    "minimum": ("clamp_max", None, "minimum", "minimum_", False, False),
}

# PyTorch's node names where they are not "Foreach" + the per-tensor node's name + the overload's name
_NODE_NAMES = {
    "_foreach_div.List": "ForeachDivBackward0",
    "_foreach_maximum.Scalar": "ForeachMaximumBackward0", "_foreach_maximum.ScalarList": "ForeachMaximumBackward1",
    "_foreach_minimum.Scalar": "ForeachMinimumBackward0", "_foreach_minimum.ScalarList": "ForeachMinimumBackward1",
    "_foreach_pow.List": "ForeachPowBackward0", "_foreach_pow.ScalarList": "ForeachPowBackward1",
    "_foreach_pow.ScalarAndTensor": "ForeachPowBackward2", "_foreach_norm.Scalar": "ForeachNormBackward0",
}


# The tensors PyTorch's foreach nodes save for their dtypes alone: its code generator turns a per-tensor formula's
# ``self.scalar_type()`` (AddBackward0's, MulBackward1's, AddcmulBackward0's ...) into saving the whole list, whether
# or not it needs a gradient, so that writing into one of them in place, or a second backward, is refused at backward
# as for any saved tensor.
_SAVED_FOR_DTYPE = {
    **{f"_foreach_{name}.{overload}": ("self",) for name in ("add", "sub", "mul", "div", "addcmul", "addcdiv")
       for overload in ("Scalar", "ScalarList")},
    "_foreach_add.List": ("self", "other"), "_foreach_add.Tensor": ("self", "other"),
    "_foreach_sub.List": ("self", "other"),
}


@dataclass(frozen=True)
class _Overload:
    """One overload: PyTorch's schema of its out-of-place form (or of its only, in-place, form), the registry keys
    of the per-tensor operators that compute it, and how the foreach arguments become theirs."""

    schema: str
    per_tensor: str | None  # None: an operator of no derivative with its own per-tensor ``kernel``
    inplace: str | None = None  # the per-tensor in-place operator of the ``_`` form (None: no ``_`` form)
    derivative: bool = True  # False: PyTorch records a NotImplemented node
    inplace_derivative: bool = True  # the same for the ``_`` form (its NotImplemented nodes are per tensor)
    functional: bool = True  # False: only the in-place form exists
    # (each tensor's arguments, in the foreach op's order) -> the per-tensor operator's leading arguments
    adapt: Callable[[tuple], tuple] | None = None
    kernel: Callable | None = None  # per-tensor kernel of an operator no registered operator computes
    empty_message: str = "Tensor list must have at least one tensor."
    # (an op of its own checks, composite in PyTorch: the first list non-empty, then the lengths in these words;
    # no autograd kernel checks the lengths before)
    lengths_message: str | None = None


def _norm_arguments(each: tuple) -> tuple:
    """``_foreach_norm``'s (self, ord, dtype) as ``linalg_vector_norm``'s, after its own refusal of an empty tensor's
    infinity norm (other norms without an identity are refused in linalg's words)."""
    x, ord, dtype = each
    if isinstance(ord, complex):  # (a complex Scalar, even of no imaginary part, before any check of the tensor)
        raise RuntimeError("foreach_tensor_norm_slow expects ord to be integer or float")
    if ord == float("inf") and _is_empty(x):
        raise RuntimeError("_foreach_norm cannot compute the infinity norm on an empty tensor because the operation "
                           "does not have an identity")
    return (x, ord, None, False, dtype)


def _is_empty(x) -> bool:
    return (x.numel() if isinstance(x, Tensor) else x.size) == 0


def _max_arguments(each: tuple) -> tuple:
    if _is_empty(each[0]):
        raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; max over zero elements is "
                           "undefined.")
    return each


def _powsum_kernel(a: np.ndarray, ord=2, dtype=None) -> np.ndarray:
    """``_foreach_powsum``'s per-tensor result: the sum of ``|x| ** ord`` as the norm kernel adds it."""
    from .linalg import _vector_norm_kernel

    if isinstance(ord, complex):  # (its ``ord.to<double>()``, first: a complex number is read if it is real)
        if ord.imag:
            raise RuntimeError("value cannot be converted to type double without overflow")
        ord = ord.real
    if dtype is not None or not aten_norm.supports(a.dtype):
        # (the dtype and kind checks of the norm, with its words; an integer input is the powsum kernel's own)
        if a.dtype.kind in "iub":
            from ..backend.dtypes import scalar_type_name

            # (ATen's dispatch macro's error: a c10::NotImplementedError)
            raise NotImplementedError(f'"powsum_cpu" not implemented for \'{scalar_type_name(a.dtype)}\'')
        _vector_norm_kernel(a[:0], 1, None, False, dtype)
        if dtype is not None:
            from ..backend.dtypes import to_dtype

            a = a.astype(to_dtype(dtype).np)
    return aten_norm.vector_powsum_as_aten(a, float(ord))


def _scalar_group(name: str, scalar_op: str, scalar_inplace: str | None, arg: str = "scalar",
                  list_arg: str = "scalars") -> list[_Overload]:
    derivative = scalar_inplace is not None  # (None: the values of ``scalar_op``'s in-place form, no derivative)
    inplace = scalar_inplace or scalar_op + "_"
    return [_Overload(f"_foreach_{name}.Scalar(Tensor[] self, Scalar {arg}) -> Tensor[]", scalar_op, inplace,
                      inplace_derivative=derivative),
            _Overload(f"_foreach_{name}.ScalarList(Tensor[] self, Scalar[] {list_arg}) -> Tensor[]", scalar_op,
                      inplace, inplace_derivative=derivative)]


def _binary(name: str, row: tuple) -> list[_Overload]:
    scalar_op, scalar_inplace, tensor_op, tensor_inplace, alpha, tensor_overload = row
    kw = ", *, Scalar alpha=1" if alpha else ""
    overloads = _scalar_group(name, scalar_op, scalar_inplace)
    overloads.append(_Overload(f"_foreach_{name}.List(Tensor[] self, Tensor[] other{kw}) -> Tensor[]", tensor_op,
                               tensor_inplace))
    if tensor_overload:
        overloads.append(_Overload(f"_foreach_{name}.Tensor(Tensor[] self, Tensor other{kw}) -> Tensor[]", tensor_op,
                                   tensor_inplace))
    return overloads


def _pointwise(name: str) -> list[_Overload]:
    lists = "Tensor[] self, Tensor[] tensor1, Tensor[] tensor2"
    return [_Overload(f"_foreach_{name}.Scalar({lists}, Scalar value=1) -> Tensor[]", name, name + "_"),
            _Overload(f"_foreach_{name}.ScalarList({lists}, Scalar[] scalars) -> Tensor[]", name, name + "_"),
            _Overload(f"_foreach_{name}.Tensor({lists}, Tensor scalars) -> Tensor[]", name, name + "_",
                      derivative=False, inplace_derivative=False)]


def _families() -> dict[str, list[_Overload]]:
    families = {name: [_Overload(f"_foreach_{name}(Tensor[] self) -> Tensor[]", name, name + "_")] for name in _UNARY}
    families.update({name: _binary(name, row) for name, row in _BINARY.items()})
    families.update({name: _pointwise(name) for name in ("addcmul", "addcdiv")})
    families["lerp"] = [
        _Overload("_foreach_lerp.List(Tensor[] self, Tensor[] tensors1, Tensor[] weights) -> Tensor[]", "lerp.Tensor",
                  "lerp_.Tensor"),
        _Overload("_foreach_lerp.Scalar(Tensor[] self, Tensor[] tensors1, Scalar weight) -> Tensor[]", "lerp.Scalar",
                  "lerp_.Scalar"),
        _Overload("_foreach_lerp.ScalarList(Tensor[] self, Tensor[] tensors1, Scalar[] weight) -> Tensor[]",
                  "lerp.Scalar", "lerp_.Scalar")]
    families["pow"] = [
        _Overload("_foreach_pow.List(Tensor[] self, Tensor[] exponent) -> Tensor[]", "pow.Tensor_Tensor",
                  "pow_.Tensor_Tensor"),
        *_scalar_group("pow", "pow.Tensor_Scalar", "pow_.Tensor_Scalar", "exponent", "exponent"),
        _Overload("_foreach_pow.ScalarAndTensor(Scalar self, Tensor[] exponent) -> Tensor[]", "pow.Scalar")]
    families["clone"] = [_Overload("_foreach_clone(Tensor[] self, *, MemoryFormat? memory_format=None) -> Tensor[]",
                                   "clone")]
    families["norm"] = [_Overload("_foreach_norm.Scalar(Tensor[] self, Scalar ord=2, ScalarType? dtype=None) -> "
                                  "Tensor[]", "linalg_vector_norm", adapt=_norm_arguments)]
    families["max"] = [_Overload("_foreach_max(Tensor[] self) -> Tensor[]", "max", adapt=_max_arguments)]
    families["mm"] = [_Overload("_foreach_mm(Tensor[] self, Tensor[] mat2) -> Tensor[]", "mm",
                                empty_message="_foreach_mm requires non-empty tensor lists",
                                lengths_message="_foreach_mm: self and mat2 must have the same number of tensors")]
    families["powsum"] = [_Overload("_foreach_powsum.Scalar(Tensor[] self, Scalar ord=2, ScalarType? dtype=None) -> "
                                    "Tensor[]", None, derivative=False, kernel=_powsum_kernel)]
    families["zero"] = [_Overload("_foreach_zero_(Tensor(a!)[] self) -> ()", None, "zero_", functional=False)]
    families["copy"] = [_Overload("_foreach_copy_(Tensor(a!)[] self, Tensor[] src, bool non_blocking=False) -> ()",
                                  None, "copy_", inplace_derivative=False, functional=False)]
    return families


# ---- what every overload shares: checks and slicing -------------------------------------------------------------


class _Lists:
    """Where an overload's lists stand: which parameters are ``Tensor[]`` / ``Scalar[]`` (indexed per tensor),
    which are one ``Tensor`` (shared by all, and 0-d) and which packed ``Tensor`` of scalars is read as a list."""

    def __init__(self, op: OpDef, overload: _Overload) -> None:
        params = op.schema.params
        self.tensor_lists = tuple(i for i, p in enumerate(params) if p.type.startswith("Tensor") and "[]" in p.type)
        self.scalar_lists = tuple(i for i, p in enumerate(params) if p.type == "Scalar[]")
        self.indexed = frozenset(self.tensor_lists + self.scalar_lists)
        shared = tuple(i for i, p in enumerate(params) if p.type == "Tensor")
        self.packed = shared if overload.per_tensor in ("addcmul", "addcdiv") else ()
        self.shared = () if self.packed else shared
        if self.packed:
            self.indexed |= frozenset(self.packed)
        self.empty_message = overload.empty_message
        self.lengths_message = overload.lengths_message
        self.adapt = overload.adapt

    def check_lengths(self, args: tuple) -> None:
        """The check PyTorch's autograd kernel of an op with a derivative makes first, before its in-place checks
        and the kernel's own: the tensor lists are as long as each other (the kernel refuses an empty list first)."""
        if self.lengths_message is not None:
            return
        count = len(args[self.tensor_lists[0]])
        for i in self.tensor_lists[1:]:
            _check_length(count, len(args[i]))

    def tensors_of(self, args: tuple, k: int) -> list:
        """The tensors the ``k``-th per-tensor operation reads (its scalars aside; lists too short left out, which
        the kernel refuses after the autograd kernel's in-place checks where the op has no derivative)."""
        return [args[i][k] for i in self.tensor_lists if k < len(args[i])] + [args[i] for i in self.shared]

    def check(self, args: tuple) -> tuple:
        """The kernel's checks (check_foreach_api_restrictions, then the scalars), in its order; ``args`` with a
        packed tensor of scalars read as a list."""
        first = args[self.tensor_lists[0]]
        for i in self.packed:
            args = args[:i] + (_unpacked_scalars(args[i], len(first)),) + args[i + 1:]
        _require_tensors(first, self.empty_message)
        for i in self.tensor_lists[1:]:
            if self.lengths_message is not None:
                if len(args[i]) != len(first):
                    raise RuntimeError(self.lengths_message)
                continue
            _require_tensors(args[i], self.empty_message)
            _check_length(len(first), len(args[i]))
        for i in self.scalar_lists + self.packed:
            if len(args[i]) != len(first):
                raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        for i in self.shared:
            shape = tuple(args[i].shape)
            if len(shape):
                raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {len(shape)} dimensions and "
                                   f"{int(np.prod(shape))} elements.")
        return args

    def each(self, args: tuple) -> list[tuple]:
        """Each tensor's arguments (lists indexed, the rest shared), as the per-tensor operator takes them."""
        indexed = self.indexed
        count = len(args[self.tensor_lists[0]])
        slices = [tuple(_number(a[k]) if i in indexed and i not in self.tensor_lists else a[k] if i in indexed
                        else a for i, a in enumerate(args)) for k in range(count)]
        return [self.adapt(s) for s in slices] if self.adapt is not None else slices


def _check_length(count: int, other: int) -> None:
    if other != count:
        raise RuntimeError(f"Tensor lists must have the same number of tensors, got {count} and {other}")


def _autograd_kernel_runs(op: OpDef, args: tuple) -> bool:
    """Whether PyTorch's autograd kernel, and its checks, run before the op's kernel (not in inference mode, nor on
    inference tensors alone)."""
    return not STATE.inference and _views.autograd_kernel_runs(args, op.tensor_idx)


def _require_tensors(tensors, message: str) -> None:
    if not len(tensors):
        raise RuntimeError(message)


def _unpacked_scalars(scalars, count: int) -> list:
    """``convert_tensor_to_scalar_list``: a 1-d tensor of one number per tensor."""
    shape = tuple(scalars.shape)
    if len(shape) != 1:
        raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got {len(shape)} instead.")
    if shape[0] != count:
        raise RuntimeError(f"Expected length of scalars to match input of length {count} but got {shape[0]} "
                           "instead.")
    return scalars.tolist()


def _number(value):
    """A Scalar[]'s element as a Python number (a NumPy scalar or a one-element tensor, as torch's parser reads)."""
    if isinstance(value, (np.generic, Tensor)):
        return value.item()
    return value


def _per_tensor_kernel(per: OpDef, args: tuple) -> np.ndarray:
    """The per-tensor operator on arrays, as its eager call runs it: kernel, errors, result layout."""
    args = args + per.defaults[len(args):]
    try:
        result = quietly(per.kernel, *args) if per.impure_kernel else per.kernel(*args)
    except ValueError as exc:
        raise translate_value_error(exc, args) from None
    result = np.asarray(result)
    if per.result_layout is not None:
        result = per.result_layout(result, list(args), per.layout_operands)
    return result


def _foreach_kernel(lists: _Lists, per_tensor: Callable[[tuple], np.ndarray]) -> Callable:
    def kernel(*args):
        return tuple(per_tensor(each) for each in lists.each(lists.check(args)))

    return kernel


# ---- the out-of-place overloads: one node, each tensor's formula ---------------------------------------------------


class _Slice:
    """What a per-tensor operator's backward rule reads of its node, for tensor ``k`` of a foreach node."""

    __slots__ = ("saved_tensors", "attrs", "needs_input_grad", "_in_meta")

    def __init__(self, saved: tuple, attrs: tuple, needs: tuple, in_meta: tuple) -> None:
        self.saved_tensors, self.attrs, self.needs_input_grad, self._in_meta = saved, attrs, needs, in_meta

    @property
    def input_shapes(self) -> tuple:
        return tuple(m[0] if m is not None else None for m in self._in_meta)


class ForeachOp(OpDef):
    """An out-of-place foreach overload whose node runs the per-tensor operator's backward rule on each tensor."""

    materialize_grads = False  # (an output without a gradient gives its inputs none, as in PyTorch)
    per: OpDef
    lists: _Lists
    dtype_saved: tuple[int, ...]  # the parameters in _SAVED_FOR_DTYPE

    def _edge_positions(self, count: int) -> list[tuple]:
        """For each tensor, the node's edges of the per-tensor operator's differentiable inputs (flattened lists)."""
        start, starts = 0, {}
        for i in self.diff_idx:
            starts[i] = start
            start += count if i in self.lists.tensor_lists else 1
        return [tuple(starts[i] + (k if i in self.lists.tensor_lists else 0) for i in self.per.diff_idx)
                for k in range(count)]

    def _each(self, args: tuple) -> list[tuple]:
        """Each tensor's full argument tuple of the per-tensor operator (its defaults filled in)."""
        defaults = self.per.defaults
        return [each + defaults[len(each):] for each in self.lists.each(args)]

    def _eager(self, args: tuple):
        if _autograd_kernel_runs(self, args):
            self.lists.check_lengths(args)
        return super()._eager(args)

    def _new_node(self, args: tuple):
        self.lists.check(args)  # (PyTorch's kernel checks the lists; the node reads each tensor's arguments)
        node = super()._new_node(args)
        node._each_attrs = [tuple(each[i] if i.__class__ is int else _attr_value(each, i) for i in self.per.attr_idx)
                            for each in self._each(args)]
        return node

    def _save_inputs(self, args: tuple, original_self=None) -> list:
        each = self._each(args)
        saved = [None if kind == "out" else [_save_arg(e[idx]) for e in each] for kind, idx in self.per.save_spec]
        for i in self.dtype_saved:  # (after the per-tensor formula's values, which its rule reads by position)
            tensors = args[i] if isinstance(args[i], (list, tuple)) else [args[i]]
            saved.append([_save_arg(t) for t in tensors])
        return saved

    def _save_outputs(self, args: tuple, saved: list, save_output: Callable) -> tuple:
        count = len(args[self.lists.tensor_lists[0]])
        spec = self.per.save_spec
        return tuple([save_output(k) for k in range(count)] if kind == "out" else s
                     for s, (kind, _) in zip(saved, spec)) + tuple(saved[len(spec):])


def _foreach_vjp(ctx, *grads):
    op = ctx._op
    needs = ctx.needs_input_grad
    saved = ctx.saved_tensors[:len(op.per.save_spec)]  # (unpacked first: a saved value written since is refused)
    shared = [len(needs) - 1] if op.lists.shared else []  # (the Tensor overloads' tensor: the last input)
    if len(grads) > 1 and any(needs[e] for e in shared):
        # (PyTorch's formula for the shared tensor gives a gradient per tensor of the list, for one input)
        raise RuntimeError("inconsistent range for TensorList output")
    in_meta = ctx._in_meta
    result = [None] * len(ctx._edges)
    for k, (g, edges) in enumerate(zip(grads, op._edge_positions(len(grads)))):
        if g is None:
            continue
        piece = _Slice(tuple(s[k] for s in saved), ctx._each_attrs[k], tuple(needs[e] for e in edges),
                       tuple(in_meta[e] for e in edges))
        if not any(piece.needs_input_grad):
            continue
        got = op.per.vjp(piece, g)
        for e, gi in zip(edges, got if got.__class__ in (tuple, list) else (got,)):
            result[e] = gi
    return result


def _node_name(schema_name: str, overload: str, per: OpDef) -> str:
    default = "Foreach" + per.node_class._name + ("" if overload in ("", "default") else overload)
    return _NODE_NAMES.get(f"{schema_name}.{overload}", default)


def _unset_kernel(*args):
    raise AssertionError("the kernel is set once the operator's lists are known")


def _functional(overload: _Overload) -> OpDef:
    if overload.kernel is not None:
        def per_tensor(each):
            return np.asarray(overload.kernel(*each))
    else:
        per = REGISTRY[overload.per_tensor]

        def per_tensor(each):
            return _per_tensor_kernel(per, each)
    if not overload.derivative:
        op = defop_without_derivative(overload.schema, _unset_kernel)
    else:
        op = defop(overload.schema, _unset_kernel, vjp=_foreach_vjp)
        op.__class__ = ForeachOp
        op.per = per
        op.dtype_saved = tuple(op.param_names.index(name) for name in _SAVED_FOR_DTYPE.get(op.schema.full_name, ()))
    op.lists = _Lists(op, overload)
    op.kernel = _foreach_kernel(op.lists, per_tensor)
    op.forward_ad_refusal = foreach_tangents.refusal(op, overload.derivative)
    if not overload.derivative:
        return op
    op.jvp = partial(foreach_tangents.foreach_jvp, op=op)
    op.node_class._name = _node_name(op.schema.name, op.schema.overload, per)
    op.node_class.__name__ = op.node_class._name
    return op


# ---- the in-place overloads: each tensor's in-place operator ---------------------------------------------------------


class ForeachInplaceOp(OpDef):
    """An in-place foreach overload: the per-tensor in-place operator on each tensor, after PyTorch's checks."""

    lists: _Lists
    per_inplace: OpDef
    derivative: bool

    def _eager(self, args: tuple):
        given, per = args, self.per_inplace
        if _autograd_kernel_runs(self, args):
            if self.derivative:  # (a generated autograd kernel: the lists' lengths first)
                self.lists.check_lengths(args)
            if STATE.grad_enabled:  # (it refuses leaves before the kernel checks the lists and scalars)
                self._refuse_leaves(args)
        args = self.lists.check(args)
        each = [parsed_numbers(one + per.defaults[len(one):], per.number_idx, per.float_idx)
                for one in self.lists.each(args)]
        if STATE.special and STATE.fw_grad_levels:
            foreach_tangents.write_with_tangents(self, given, each, lambda: self._write(given, each))
        else:
            self._write(given, each)
        return None

    def _write(self, given: tuple, each: list[tuple]) -> None:
        """Each tensor's in-place operator, with its autograd history; ``each`` holds their arguments."""
        per = self.per_inplace
        if not self.derivative:
            others = [t for a in given[1:] for t in (a if isinstance(a, (list, tuple)) else [a])
                      if isinstance(t, Tensor)]
            self._write_without_derivative(per, each, others)
        elif STATE.special and (STATE.stack or STATE.op_interceptors or STATE.profiler):
            for one in each:  # (a transform or an observer of operators sees each tensor's operator)
                per(*one)
        else:
            # As PyTorch's generated code: every node made from the histories before any write, its inputs saved
            # (a tensor twice in the list gets two nodes on its first history), then the writes, then the histories
            arrays = [[a._data if isinstance(a, Tensor) else a for a in one] for one in each]
            made = [per._eager_inplace(one, None, _records(per, one), "node") for one in each]
            for one, these in zip(each, arrays):
                per._eager_inplace(one, these, False, "write")
            for one, node in zip(each, made):
                per._eager_inplace(one, None, False, "history", node)

    def _refuse_leaves(self, args: tuple) -> None:
        """PyTorch's in-place checks on each tensor written whose operation reads a tensor that requires grad
        (every leaf refused before anything is written)."""
        written = args[self.lists.tensor_lists[0]]
        for k in range(len(written)):
            if _any_requires_grad(self.lists.tensors_of(args, k)):
                _views.check_inplace(written[k], True)

    def _write_without_derivative(self, per: OpDef, each: list, others: list) -> None:
        """PyTorch's autograd fallback for an in-place op without a derivative: the tensors are written, and each
        that requires grad, or whose operation reads another tensor that does, gets a NotImplemented node for its
        history, whose edges are the histories before any write."""
        from ..autograd.grad_mode import no_grad

        nodes = []
        for one in each:
            target = one[0]
            record = STATE.grad_enabled and (_any_requires_grad(one) or _any_requires_grad(others))
            nodes.append(Error(f"derivative for {self.name} is not implemented",
                               [gradient_edge(t) if _requires_grad(t) else NO_EDGE for t in [target, *others]],
                               name="torch::autograd::NotImplemented") if record else None)
        with no_grad():
            for one in each:
                per(*one)
        for one, node in zip(each, nodes):
            if node is not None:
                node._seq = UINT64_MAX
                _views.rebase_history(one[0], node)


def _records(per: OpDef, args: tuple) -> bool:
    """Whether grad mode records the per-tensor in-place call ``per(*args)``: one of its differentiable tensors
    requires grad (its arguments hold no list)."""
    return STATE.grad_enabled and any(_requires_grad(args[i]) for i in per.rg_idx)


def _requires_grad(t) -> bool:
    return isinstance(t, Tensor) and (t._rg or (t._base is not None and t._base._rg))


def _any_requires_grad(values) -> bool:
    return any(_requires_grad(v) for v in values)


def _inplace_schema(schema: str) -> str:
    """The ``_`` form's schema from the out-of-place one: ``self`` written, nothing returned."""
    head, _, rest = schema.partition("(")
    name, dot, overload = head.partition(".")
    params = rest.rpartition(")")[0].replace("Tensor[] self", "Tensor(a!)[] self", 1)
    return f"{name}_{dot}{overload}({params}) -> ()"


def _inplace(overload: _Overload) -> OpDef:
    schema = overload.schema if not overload.functional else _inplace_schema(overload.schema)
    op = defop(schema, _unset_kernel)
    op.__class__ = ForeachInplaceOp
    op.lists = _Lists(op, overload)
    op.per_inplace = REGISTRY[overload.inplace]
    op.derivative = overload.inplace_derivative
    return op


# ---- the per-tensor steps ATen has no operator of its own for ----------------------------------------------------


def _extremum_inplace(name: str) -> OpDef:
    """``maximum_``/``minimum_``: the step of ``_foreach_maximum_.List``, whose nodes are ``maximum``'s."""
    functional = REGISTRY[name]
    return defop(f"{name}_(Tensor(a!) self, Tensor other) -> Tensor(a!)", inplace_kernel(functional.kernel),
                 vjp=functional.vjp, saves=("self", "other"), node_name=functional.node_class._name,
                 jvp=functional.jvp)


for _name in ("maximum", "minimum"):
    _extremum_inplace(_name)


# ---- the Python functions: torch's parser picks the overload --------------------------------------------------------


def _overloaded(name: str, ops: list[OpDef]) -> Callable:
    from .._arg_parser import OverloadChoice

    choose = OverloadChoice([op.schema for op in ops])
    scalars = [frozenset(p.name for p in op.schema.params if p.type == "Scalar") for op in ops]

    def call(*args, **kwargs):
        if STATE.torch_function:  # (torch's parser hands the call to the handlers before reading any argument)
            found = _tf.wants(args, kwargs)
            if found is not None:
                return _tf.handle(call, found, args, kwargs)
        k = choose(args, kwargs)
        op = ops[k]
        if "self" in kwargs:  # (every schema's first parameter, given positionally: OpDef.__call__ has a ``self``)
            kwargs = dict(kwargs)
            args = (kwargs.pop("self"), *args)
        if any(isinstance(a, Tensor) for a in args) or any(isinstance(v, Tensor) for v in kwargs.values()):
            args, kwargs = _tensors_read_as_numbers(op, scalars[k], args, kwargs)
        result = op(*args, **kwargs)
        # (torch's Python binding of an in-place form hands back the list it was given, the same object)
        return args[0] if op.is_inplace else result

    # (the names handlers read off torch's binding, which ``resolve_name`` does not list)
    call.__name__ = name
    call.__qualname__ = "_VariableFunctionsClass." + name
    call.__module__ = "torch"
    call._torch_unlisted = True
    return call


def _tensors_read_as_numbers(op: OpDef, scalars: frozenset, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """A 0-d tensor that needs no gradient, which torch's parser takes for a Number (``_foreach_add(xs, t)``
    is the Scalar overload, ``_foreach_pow(t, xs)`` the ScalarAndTensor one), read as its number."""
    names = op.param_names
    args = tuple(a.item() if isinstance(a, Tensor) and names[i] in scalars else a for i, a in enumerate(args))
    kwargs = {key: v.item() if isinstance(v, Tensor) and key in scalars else v for key, v in kwargs.items()}
    return args, kwargs


def _declare() -> dict[str, Callable]:
    public = {}
    for family, overloads in _families().items():
        functional, inplace = [], []
        for overload in overloads:
            if overload.functional:
                functional.append(_functional(overload))
            if overload.inplace is not None:
                inplace.append(_inplace(overload))
        name = "_foreach_" + family
        if functional:
            public[name] = _overloaded(name, functional)
        if inplace:
            public[name + "_"] = _overloaded(name + "_", inplace)
    return public


PUBLIC = _declare()
