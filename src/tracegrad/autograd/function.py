"""``torch.autograd.Function``: user-defined operators with a hand-written backward (and jvp).

``Function.apply`` runs ``forward`` under ``no_grad`` (and without tangent propagation), then wires the
outputs to one backward node: an instance of ``<Name>Backward`` (``Function._backward_cls``), a subclass of
:class:`~tracegrad.autograd.node.Node` that is also the ``ctx`` the user's methods receive. So the engine
runs it like any other node, with every hook, and ``ctx.saved_tensors`` goes through
:class:`~tracegrad.autograd.saved.SavedTensor` (version checks, freeing, saved-tensor hooks).

The output processing follows PyTorch's ``_wrap_outputs``: inputs returned as-is become views of the
input, ``mark_dirty`` inputs have their history rebased (through ``CopySlices`` for views),
non-differentiable outputs are detached, and under forward AD the ``jvp`` staticmethod gives the outputs'
tangents, with PyTorch's checks for in-place and view outputs.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from .._events import emit_op_call
from .._state import STATE
from .._tensor import Tensor, _wrap
from .._warnings import warn_at_caller
from ..backend.dtypes import is_differentiable_np
from ..ops.aten_vec import as_caller
from . import views as _views
from .edges import NO_EDGE, gradient_edge
from .node import Error, Node, read_only_property, set_retains_grad_hook
from .saved import FREED_MESSAGE, SavedTensor, save

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "FunctionMeta", "InplaceFunction",
           "NestedIOFunction",
           "once_differentiable"]

IN_CUSTOM_FUNCTION = _views.IN_CUSTOM_FUNCTION


# ---- ctx --------------------------------------------------------------------------------------------------


class FunctionCtx:
    """The methods a custom Function's ``ctx`` offers to ``forward`` / ``setup_context``."""

    materialize_grads = True
    _materialize_non_diff_grads = True

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors (or None) for ``backward``; they come back through ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Keep tensors (or None) for ``jvp``; inside ``jvp`` they are ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you should save "
                                     f"non-tensors as attributes on ctx. (argument {i} is "
                                     f"{type(t).__name__})")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: Tensor) -> None:
        """Declare inputs that ``forward`` modified in place (they must be returned)."""
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs) -> None:
        warnings.warn("`mark_shared_storage` is deprecated. Tensors with shared storages are automatically "
                      "tracked. Note that calls to `set_()` are not tracked", FutureWarning, stacklevel=2)

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """Declare outputs that have no gradient: they do not require grad, backward sees zeros (or None)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """Whether undefined output gradients reach ``backward`` as zeros (default) or as None."""
        self.materialize_grads = value


class BackwardCFunction(FunctionCtx, Node):
    """The backward node of a custom Function, which is also its ``ctx``."""

    _forward_cls: type
    _masks_unneeded = False  # the user's backward returns every gradient, wanted or not
    _user_backward = True
    _c_method_owner = "_FunctionBase"  # (torch's C methods of a custom Function's node are _FunctionBase's)
    _tg_saved = None  # tuple of SavedTensor | None once forward saved something
    _tg_forward_saved = ()
    _tg_in_jvp = False
    _tg_freed = False
    _tg_needs = ()
    _tg_tensor_pos = ()
    _tg_out_meta = ()
    _tg_nondiff = frozenset()
    _tg_materialize = True
    # _FunctionBase's C fields read None until forward sets them; apply takes them away once it has read them.
    to_save = dirty_tensors = non_differentiable = saved_for_forward = None

    def _refuse_reading_materialize_grads(self):
        raise AttributeError("attribute 'materialize_grads' of 'torch._C._FunctionBase' objects is not readable")

    def _set_materialize_grads_flag(self, value: bool) -> None:
        if not isinstance(value, bool):  # (a C setter that takes only a Python bool, in its parser's words)
            raise TypeError("set_materialize_grads received an invalid combination of arguments - got (), but "
                            "expected (bool)")
        self._tg_materialize = value

    # (write-only in PyTorch: set_materialize_grads writes it, only the engine reads it)
    materialize_grads = property(_refuse_reading_materialize_grads, _set_materialize_grads_flag)

    # ---- what backward sees -------------------------------------------------------------------------------

    @property
    def needs_input_grad(self) -> tuple:
        """One bool per forward argument: whether it is a tensor that requires grad."""
        return self._tg_needs

    @needs_input_grad.setter
    def needs_input_grad(self, value) -> None:  # (a plain attribute in PyTorch: code may replace it)
        self._tg_needs = value

    def _get_saved_tensors(self) -> tuple:
        if self._tg_in_jvp:
            return self._tg_forward_saved
        if self._tg_freed:
            raise RuntimeError(FREED_MESSAGE)
        saved = self._tg_saved
        if saved is None:
            return ()
        return tuple(None if s is None else s.unpack(self) for s in saved)

    def _get_saved_variables(self) -> tuple:
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                      stacklevel=2)
        return self._get_saved_tensors()

    def _get_raw_saved_tensors(self) -> tuple:
        if self._tg_freed:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(self._tg_saved or ())

    # (_FunctionBase's C getters: writing or deleting them is refused in CPython's words)
    saved_tensors = read_only_property(_get_saved_tensors, "saved_tensors")
    saved_variables = read_only_property(_get_saved_variables, "saved_variables")
    _raw_saved_tensors = read_only_property(_get_raw_saved_tensors, "_raw_saved_tensors")

    def release_variables(self) -> None:
        for s in self._tg_saved or ():
            if s is not None:
                s.release()
        self._tg_freed = True

    # A Python class in PyTorch: the default object repr, with its module (Node's repr is a C++ node's).
    __repr__ = object.__repr__

    # ---- running backward ---------------------------------------------------------------------------------

    def apply(self, grads):
        fn = _user_backward(self._forward_cls)
        grads = list(grads)
        if len(grads) < self._n_out:  # CopySlices passes only the gradient of the modified view
            grads += [None] * (self._n_out - len(grads))
        if self._tg_materialize:
            _materialize(self, grads)
        result = as_caller(fn, self, *grads)  # (the user's NumPy code: the caller's error state)
        return self._tg_trim(result)

    def _tg_trim(self, result) -> list:
        """PyTorch's checks on what backward returned; keep one gradient per tensor input (per edge)."""
        if not isinstance(result, tuple):
            result = (result,)
        n_in = len(self._tg_needs)
        if len(result) > n_in and all(g is None for g in result[n_in:]):
            result = result[:n_in]
        if len(result) != n_in:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients (expected "
                               f"{n_in}, got {len(result)})")
        tensor_pos = self._tg_tensor_pos
        for i, g in enumerate(result):
            if g is None:
                continue
            if i not in tensor_pos:
                raise RuntimeError(f"function {self.name()} returned a gradient different than None at "
                                   f"position {i + 1}, but the corresponding forward input was not a "
                                   "Variable")
            if not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
        return [result[i] for i in tensor_pos]


def _materialize(ctx: BackwardCFunction, grads: list) -> None:
    from .. import _factories

    nondiff = ctx._tg_nondiff
    for i, meta in enumerate(ctx._tg_out_meta):
        if grads[i] is None and meta is not None and (ctx._materialize_non_diff_grads or i not in nondiff):
            grads[i] = _factories.zeros_array_tensor(*meta)


def _user_backward(cls) -> Callable:
    backward_fn = cls.backward
    vjp_fn = cls.vjp
    if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                           "You should only implement one of them.")
    return vjp_fn if vjp_fn is not Function.vjp else backward_fn


# ---- Function ---------------------------------------------------------------------------------------------


class FunctionMeta(type):
    """Gives every Function subclass its node class ``<Name>Backward`` (``_backward_cls``)."""

    def __init__(cls, name, bases, attrs) -> None:
        node_name = name + "Backward"
        backward_cls = type(node_name, (BackwardCFunction,), {"_forward_cls": cls, "_name": node_name})
        # PyTorch makes the class inside torch.autograd.function, whose module it then keeps: its nodes print
        # as ``<torch.autograd.function.MyFnBackward object at ...>``.
        backward_cls.__module__ = __name__
        backward_cls.__qualname__ = node_name
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class _SingleLevelFunction(FunctionCtx, metaclass=FunctionMeta):
    _tg_quiet = False  # True: its calls are not reported to observers (a library operator reports its own)

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use "
                                  "it with forward mode AD.")


class Function(_SingleLevelFunction):
    """Base class of custom operators: subclass it, write static ``forward``/``backward``, call ``apply``."""

    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
                      "static, so you should invoke them on the class itself. Instantiating an autograd "
                      "function will raise an error in a future version of "
                      "PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please "
                           "use new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the vmap "
                                  "staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        setup_ctx = _is_setup_context_defined(cls.setup_context)
        if setup_ctx:
            signature = inspect.signature(cls.forward)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        if STATE.stack and not setup_ctx:
            raise RuntimeError("In order to use an autograd.Function with functorch transforms (vmap, grad, "
                               "jvp, jacrev, ...), it must override the setup_context staticmethod. For "
                               "more details, please see "
                               "https://pytorch.org/docs/main/notes/extending.func.html")
        # _apply must be called from here directly: anomaly mode cuts its frames off the forward traceback.
        return _apply(cls, setup_ctx, args, kwargs)


def _is_setup_context_defined(fn) -> bool:
    return fn is not _SingleLevelFunction.setup_context


def _apply(cls, setup_ctx: bool, args: tuple, kwargs: dict):
    from . import forward_ad

    ctx = cls._backward_cls()
    tensor_pos = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    ctx._tg_tensor_pos = tensor_pos
    # (requires_grad, not _rg: a view made under no_grad of a tensor that requires grad requires grad too)
    ctx._tg_needs = needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
    executable = STATE.grad_enabled and any(ctx._tg_needs)
    if executable:
        # The edges are the inputs' histories before forward runs (forward may modify inputs in place).
        ctx._edges = tuple(gradient_edge(args[i]) if needs[i] else NO_EDGE for i in tensor_pos)
        ctx._in_meta = tuple((args[i]._data.shape, args[i]._data.dtype) for i in tensor_pos)
    level = forward_ad.current_level()
    tangents = None
    # (has_tangent: none in inference mode, where forward grad mode is off and jvp does not run)
    if level is not None and any(forward_ad.has_tangent(args[i]) for i in tensor_pos):
        tangents = [forward_ad.get_tangent(a, level) if isinstance(a, Tensor) else None for a in args]

    prev_grad = STATE.grad_enabled
    STATE.grad_enabled = False
    # (as PyTorch's profiler shows it: a range named after the class, with the sequence number of its node)
    profiled = STATE.profiler.begin(cls.__name__, ctx._seq) if STATE.profiler is not None else None
    raw = None
    try:
        with forward_ad.fw_disabled():
            if setup_ctx:
                raw = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, raw)
            else:
                raw = cls.forward(ctx, *args, **kwargs)
    finally:
        STATE.grad_enabled = prev_grad
        if profiled is not None:
            STATE.profiler.end(profiled, raw)

    is_tuple = isinstance(raw, tuple)
    outputs = raw if is_tuple else (raw,)
    saved_in_setup = _saved_ids(ctx) if setup_ctx else frozenset()
    info = _wrap_outputs(cls, ctx, args, outputs, executable, saved_in_setup)
    new_outputs = info.outputs
    if tangents is not None:
        _forward_ad_outputs(cls, ctx, args, tangents, info, level)
    ctx.__dict__.pop("saved_for_forward", None)
    to_save = ctx.__dict__.pop("to_save", None)
    if to_save is not None and executable:
        nondiff = ctx._tg_nondiff
        # As PyTorch: an output whose grad_fn is this node unpacks with it; a modified view input (its history
        # is its regenerated view node, over CopySlices and this node) is saved as an in-place-on-view output,
        # holding that history weakly so no reference cycle runs through the saved tensor.
        out_ids = {id(o) for i, o in enumerate(new_outputs)
                   if isinstance(o, Tensor) and i not in nondiff and o._grad_fn is ctx}
        view_ids = {id(o) for o in new_outputs
                    if isinstance(o, Tensor) and id(o) in info.dirty_ids and o._base is not None
                    and o._grad_fn is not ctx}
        ctx._tg_saved = tuple(SavedTensor._make_inplace_view_output(t) if id(t) in view_ids
                              else save(t, id(t) in out_ids) for t in to_save)
        if level is not None:  # saved outputs keep their tangents (forward-over-reverse)
            from .saved import attach_tangent

            for s, t in zip(ctx._tg_saved, to_save):
                tangent = forward_ad.get_tangent(t, level) if t is not None and id(t) in out_ids else None
                if tangent is not None:
                    attach_tangent(s, t, level, tangent)
    if executable and STATE.anomaly:
        from . import anomaly_mode

        anomaly_mode.record_forward_trace(ctx)
    if STATE.observed and not cls._tg_quiet:  # (an operator's autograd kernel: the operator tells observers)
        emit_op_call(cls.__name__, tuple(o for o in new_outputs if isinstance(o, Tensor)), executable)
    return tuple(new_outputs) if is_tuple else new_outputs[0]


class _Wrapped:
    """What output processing learned, for the forward-AD step."""

    __slots__ = ("outputs", "returned", "inputs_by_id", "dirty_ids", "aliases", "nondiff_fw")

    def __init__(self) -> None:
        self.outputs: list = []
        self.returned: tuple = ()  # what forward returned (a dirty input returned under no_grad: not its alias)
        self.nondiff_fw: set = set()  # outputs that can have no tangent (marked, or not floating point)
        self.inputs_by_id: dict = {}
        self.dirty_ids: set = set()
        self.aliases: dict = {}  # output index -> input index, for inputs returned as-is


def _saved_ids(ctx: BackwardCFunction) -> frozenset:
    """The ids of the tensors ``setup_context`` gave to ``save_for_backward`` or ``save_for_forward``."""
    saved = (ctx.__dict__.get("to_save") or ()) + (ctx.__dict__.get("saved_for_forward") or ())
    return frozenset(id(t) for t in saved if t is not None)


def _wrap_outputs(cls, ctx: BackwardCFunction, args: tuple, outputs: tuple, executable: bool,
                  saved_in_setup: frozenset) -> _Wrapped:
    info = _Wrapped()
    dirty = ctx.__dict__.pop("dirty_tensors", None) or ()
    nondiff = ctx.__dict__.pop("non_differentiable", None) or ()
    nondiff_ids = {id(t) for t in nondiff}
    info.dirty_ids = {id(t) for t in dirty}
    info.inputs_by_id = {id(a): i for i, a in enumerate(args) if isinstance(a, Tensor)}
    n_out = len(outputs)
    pure_view = bool(ctx.__dict__.get("_is_pure_view", False))
    if pure_view and (len(info.inputs_by_id) != 1 or n_out != 1):
        raise RuntimeError("Pure view custom Function can only have one input Tensor and one output Tensor. "
                           "Open an issue if you need to support more.")
    for t in dirty:
        t._bump_version()
    ctx._n_out = n_out
    out_meta = []
    nondiff_idx = set()
    new = list(outputs)
    for i, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            out_meta.append(None)
            continue
        out_meta.append((o._data.shape, o._data.dtype))
        is_input = id(o) in info.inputs_by_id
        is_modified = id(o) in info.dirty_ids
        differentiable = executable and id(o) not in nondiff_ids and is_differentiable_np(o._data.dtype)
        if not differentiable:
            nondiff_idx.add(i)
        if is_input and not is_modified and id(o) in saved_in_setup and (differentiable or not o.requires_grad):
            # (the output would become a view of the input, and the saved input is not that output)
            raise RuntimeError(_INPUT_RETURNED_AS_IS_SAVED)
        if id(o) in nondiff_ids or not is_differentiable_np(o._data.dtype):
            info.nondiff_fw.add(i)
        new[i] = _set_history(cls, ctx, o, i, is_input, is_modified, differentiable, n_out)
        if is_input and not is_modified:
            info.aliases[i] = info.inputs_by_id[id(o)]
    ctx._tg_out_meta = tuple(out_meta)
    ctx._tg_nondiff = frozenset(nondiff_idx)
    # Node._input_metadata: one entry per gradient the node receives (non-tensor outputs: no shape/dtype).
    ctx._out_meta = tuple(m if m is not None else ((), None) for m in out_meta)
    _set_view_creation_meta(new, info.dirty_ids, ctx._tg_nondiff, pure_view)
    if dirty:
        # (what forward returned: a dirty input returned under no_grad comes back detached, and that is fine)
        returned = {id(o) for o in outputs if isinstance(o, Tensor)}
        if any(id(t) not in returned for t in dirty):
            raise RuntimeError("Some elements marked as dirty during the forward method were not returned "
                               "as output. The inputs that are modified inplace must all be outputs of the "
                               "Function.")
    info.outputs = new
    info.returned = outputs
    return info


def _set_history(cls, ctx, var: Tensor, nr: int, is_input: bool, is_modified: bool, differentiable: bool,
                 n_out: int) -> Tensor:
    if not differentiable:
        # (requires_grad, not _rg: a view made under no_grad of a tensor that requires grad requires grad too)
        if not var.requires_grad:
            return _alias_no_grad(var) if is_input and not is_modified else var
        if is_input:
            return _detached(var)
        if var._base is None:
            var._gfn = None
            var._rg = False
        return var
    if is_modified:
        _rebase_dirty(ctx, var, nr, is_input, n_out)
        return var
    if is_input:
        var = _alias_no_grad(var)
    _set_edge(var, ctx, nr)
    return var


def _set_edge(var: Tensor, ctx: Node, nr: int) -> None:
    var._gfn = ctx
    var._output_nr = nr
    var._rg = True
    if var._base is not None:
        var._view_version = var._version_counter()[0]  # its history is this node, not a stale view's


def _set_view_creation_meta(outputs: list, dirty_ids: set, nondiff: frozenset, pure_view: bool) -> None:
    """In-place on a view output would bypass the custom backward, so PyTorch forbids it: every view output
    (but a modified input) is IN_CUSTOM_FUNCTION, or MULTI_OUTPUT_NODE when several outputs are
    differentiable. A Function that declares itself a pure view (``ctx._is_pure_view``) returns an
    ordinary view instead."""
    views = [(i, o) for i, o in enumerate(outputs)
             if isinstance(o, Tensor) and o._base is not None and id(o) not in dirty_ids]
    if not views:
        return
    n_diff = sum(1 for i, o in enumerate(outputs) if isinstance(o, Tensor) and i not in nondiff)
    for i, v in views:
        if pure_view:
            if i not in nondiff:
                v._creation_meta = _views.DEFAULT
        elif n_diff > 1 and i not in nondiff:
            v._creation_meta = _views.MULTI_OUTPUT_NODE
        else:
            v._creation_meta = IN_CUSTOM_FUNCTION


def _alias_no_grad(var: Tensor) -> Tensor:
    """PyTorch's ``_view_as_self_with_no_grad``: a view of an input, made without recording history."""
    from ..ops import views
    from . import forward_ad

    prev = STATE.grad_enabled
    STATE.grad_enabled = False
    try:
        with forward_ad.fw_disabled():
            out = views.view(var, tuple(var._data.shape))
    finally:
        STATE.grad_enabled = prev
    if type(var) is not Tensor:
        out.__class__ = type(var)
    return out


def _detached(var: Tensor) -> Tensor:
    from ..ops import creation

    out = creation.detach(var)
    if type(var) is not Tensor:
        out.__class__ = type(var)
    return out


_INPUT_RETURNED_AS_IS_SAVED = (
    "An input that has been returned as-is as output is being saved for backward. This is not supported if you "
    "override setup_context. You should return and save a view of the input instead, e.g. with x.view_as(x) or "
    "setup ctx inside the forward function itself.")

_DIRTY_NOT_INPUT = ("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have been "
                    "mutated should be passed to ctx.mark_dirty().")


def _rebase_dirty(ctx, var: Tensor, nr: int, is_input: bool, n_out: int) -> None:
    if var._gfn is None and var.requires_grad:  # (a view made under no_grad is a leaf too)
        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
    if not is_input:
        if var._base is not None:
            raise RuntimeError(_DIRTY_NOT_INPUT)
        warn_at_caller(_DIRTY_NOT_INPUT, UserWarning)  # (torch's C++ warning, in the words of the refusal above)
    if var._base is None:
        _rebase(var, ctx, nr)
        return
    if n_out > 1:
        raise RuntimeError(
            "If your Function modifies inplace an input that is a view of another Tensor, your Function "
            "cannot return more than one Tensor. This is not supported by the current autograd engine. You "
            "should either make sure the input is not a view (using .clone() for example) or make your "
            "Function only return one Tensor (potentially splitting it into two Functions: one doing the "
            "inplace that returns a single Tensor and a second one that does the other operations). You can "
            "ask on the forum https://discuss.pytorch.org/ if you need help to do this change.")
    _views.check_view_rebase(var)
    _views.record_inplace_on_view(None, (), var, ctx)


def _rebase(var: Tensor, node: Node, nr: int) -> None:
    """Make ``node`` output ``nr`` the history of ``var`` (which was modified in place)."""
    old_fn, old_nr = var._grad_fn, var._output_nr
    var._gfn = node
    var._output_nr = nr
    var._rg = True
    if var._retains_grad and old_fn is not None and old_fn is not node:
        hooks = old_fn._retains_grad_hooks
        hook = hooks.pop(old_nr, None) if hooks else None
        if hook is not None:
            set_retains_grad_hook(node, nr, hook)


# ---- forward AD -------------------------------------------------------------------------------------------


def _forward_ad_outputs(cls, ctx: BackwardCFunction, args: tuple, tangents: list, info: _Wrapped,
                        level: int) -> None:
    """Run ``jvp`` and attach its results to the outputs, with PyTorch's checks."""
    from .. import _functional_core as F
    from . import forward_ad

    grads_in = []
    for a, t in zip(args, tangents):
        if t is None and isinstance(a, Tensor) and is_differentiable_np(a._data.dtype):
            t = F.zeros_like(a)  # a differentiable input without tangent has a zero tangent
        grads_in.append(t if isinstance(a, Tensor) else None)
    versions = {id(t): t._version for t in grads_in if t is not None}
    ctx._tg_forward_saved = tuple(ctx.__dict__.get("saved_for_forward") or ())
    ctx._tg_in_jvp = True
    try:
        with forward_ad.fw_disabled():
            result = cls.jvp(ctx, *grads_in)
    finally:
        ctx._tg_in_jvp = False
        ctx._tg_forward_saved = ()
    outputs = info.outputs
    if not isinstance(result, tuple):
        result = (result,)
    if len(result) != len(outputs):
        raise RuntimeError("Function's jvp returned an invalid number of forward gradients (expected "
                           f"{len(outputs)} but got {len(result)})")
    nondiff = info.nondiff_fw
    for i, (out, grad) in enumerate(zip(outputs, result)):
        if not isinstance(out, Tensor):
            continue
        if i in nondiff:
            if grad is not None:
                raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but  the "
                                   "corresponding forward output is not a differentiable Tensor.You should "
                                   "return None at that position instead.")
            continue
        modified = id(info.returned[i]) in info.dirty_ids
        own = info.inputs_by_id[id(info.returned[i])] if modified else None
        if own is not None and tangents[own] is not None:
            # The input's own tangent, which jvp must have modified in place (None is refused), stays the input's:
            # the output is the input, or (under no_grad) its detached alias, which has no tangent.
            _check_inplace_tangent(grad, grads_in[own], versions[id(grads_in[own])])
            continue
        if grad is None:
            continue
        if not modified:
            src_idx = info.aliases.get(i)
            if src_idx is None and out._base is not None:
                src_idx = _viewed_input(out, args)
            if src_idx is not None:
                _check_view_tangent(grad, grads_in[src_idx])
        forward_ad.check_tangent_size(out, grad)
        forward_ad.set_tangent(out, grad, level)


def _check_inplace_tangent(grad: Tensor | None, input_grad: Tensor, version_before: int) -> None:
    if grad is None or grad._version == version_before:
        raise RuntimeError("An inplace custom Function is not modifying the forward mode gradients inplace. If the "
                           "forward is modifying an input inplace, then the jvp function must modify the "
                           "corresponding gradient inplace.")
    if grad is not input_grad:
        raise RuntimeError("An inplace custom Function is not returning the forward mode gradients as-is. If the "
                           "forward is modifying an input inplace, then the jvp function must modify the gradient "
                           "inplace and return it as-is.")


def _viewed_input(out: Tensor, args: tuple) -> int | None:
    base = out._base
    for i, a in enumerate(args):
        if isinstance(a, Tensor) and (a is base or a._base is base):
            return i
    return None


def _check_view_tangent(grad: Tensor, input_grad: Tensor | None) -> None:
    if grad._base is None:
        raise RuntimeError("A custom Function's forward is returning a view (or an input as-is) but the jvp "
                           "is not returning a view.")
    if input_grad is None:
        return
    if input_grad._base is not None:
        if grad._base is not input_grad._base:
            raise RuntimeError("A custom Function is returning a view but the jvp is not returning a view "
                               "of the same base as the given grad input.")
    elif grad._base is not input_grad:
        raise RuntimeError("A custom Function is returning a view but the jvp is not returning a view of "
                           "the given grad input.")


# ---- once_differentiable and legacy classes ---------------------------------------------------------------


def once_differentiable(fn: Callable) -> Callable:
    """Run a backward under ``no_grad``; differentiating its results again raises (via an ``Error`` node)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        from .grad_mode import no_grad

        with no_grad():
            outputs = fn(ctx, *args)
        if not STATE.grad_enabled:
            return outputs
        if not any(isinstance(a, Tensor) and a._rg for a in args):
            return outputs
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        fakes = [_fake_requires_grad(v) for v in outs]
        err = Error("trying to differentiate twice a function that was marked with @once_differentiable",
                    edges=[gradient_edge(f) if isinstance(f, Tensor) else NO_EDGE for f in fakes],
                    name="torch::autograd::Error")
        err._n_out = len(fakes)
        err._in_meta = tuple((f._data.shape, f._data.dtype) if isinstance(f, Tensor) else None for f in fakes)
        results = []
        for i, f in enumerate(fakes):
            if isinstance(f, Tensor):
                out = _wrap(f._data)
                out._vc = f._vc
                out._gfn = err
                out._output_nr = i
                out._rg = True
                f = out
            results.append(f)
        return tuple(results) if isinstance(outputs, tuple) else results[0]

    return wrapper


def _fake_requires_grad(v):
    if not isinstance(v, Tensor):
        return v
    d = _detached(v)
    d._rg = True
    return d


class InplaceFunction(Function):
    """Kept for backward compatibility: a Function with an ``inplace`` flag."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


def _nested_map(condition, fn):
    def _map(obj):
        if condition(obj):
            return fn(obj)
        if obj is None:
            return None
        if isinstance(obj, (list, tuple)):
            return type(obj)(_map(x) for x in obj)
        if isinstance(obj, dict):
            return {k: _map(v) for k, v in obj.items()}
        raise ValueError("Auto nesting doesn't know how to process an input object of type "
                         + type(obj).__name__)

    return _map


def _iter_tensors(obj):
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _iter_tensors(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _iter_tensors(x)


def _unflatten(flat, structure):
    it = iter(flat)

    def build(s):
        if isinstance(s, Tensor):
            return next(it)
        if isinstance(s, (list, tuple)):
            return type(s)(build(x) for x in s)
        return s

    return build(structure)


class NestedIOFunction(Function):
    """Legacy Function taking and returning nested structures of tensors (``forward_extended``)."""

    def _do_forward(self, *input):
        self._nested_input = input
        flat_input = tuple(_iter_tensors(input))
        nested = self

        class _Flat(Function):
            @staticmethod
            def forward(ctx, *flat):
                nested._flat_ctx = ctx
                result = nested.forward_extended(*nested._nested_input)
                nested._nested_output = result
                return tuple(_iter_tensors(result))

            @staticmethod
            def backward(ctx, *grads):
                nested_grads = _unflatten(grads, nested._nested_output)
                result = nested.backward_extended(*nested_grads)
                return tuple(_iter_tensors(result)) if result is not None else None

        flat_output = _Flat.apply(*flat_input)
        return _unflatten(flat_output, self._nested_output)

    def _do_backward(self, gradients, retain_variables):
        return self.backward_extended(*gradients)

    def __call__(self, *args):
        return self._do_forward(*args)

    def save_for_backward(self, *args: Any) -> None:
        self.to_save = tuple(_iter_tensors(args))
        self._to_save_nested = args
        self._flat_ctx.save_for_backward(*self.to_save)

    @property
    def saved_tensors(self):
        flat = self._flat_ctx.saved_tensors
        return _unflatten(flat, self._to_save_nested)

    def mark_dirty(self, *args: Any, **kwargs: Any) -> None:
        self._flat_ctx.mark_dirty(*_iter_tensors((args, kwargs)))

    def mark_non_differentiable(self, *args: Any, **kwargs: Any) -> None:
        self._flat_ctx.mark_non_differentiable(*_iter_tensors((args, kwargs)))

    def forward_extended(self, *input: Any) -> None:
        raise NotImplementedError

    def backward_extended(self, *grad_output: Any) -> None:
        raise NotImplementedError
