"""``torch.utils.checkpoint``: trade compute for memory by recomputing activations during backward.

Two variants, as in PyTorch:

* reentrant (``use_reentrant=True``): a custom ``Function`` runs ``fn`` under ``no_grad``, keeps only the
  inputs, and in its backward re-runs ``fn`` with grad enabled and calls ``autograd.backward`` on the
  result (a nested, "reentrant" backward). It therefore only supports ``.backward()``.
* non-reentrant (``use_reentrant=False``): ``fn`` runs normally inside ``saved_tensors_hooks`` whose pack
  hook keeps a small placeholder instead of each saved tensor. The first unpack in a backward re-runs
  ``fn`` under a second pair of hooks that collects the recomputed tensors (stopping early once all are
  there), checks them against the originals' metadata, and hands each out exactly once.

Selective activation checkpointing (SAC, :func:`create_selective_checkpoint_contexts`) gives the non-reentrant
variant a pair of contexts: in the forward, an op interceptor asks a policy about every operator call and keeps
the outputs of those to save; in the recomputation, a second one hands those outputs back (in call order, per
operator) instead of running the operator again. PyTorch does this with two ``TorchDispatchMode``s below
autograd; tracegrad's interceptors (``utils/_python_dispatch.py``) sit above it, and a cached output goes
through the operator's autograd recording without its kernel, which comes to the same.
"""

from __future__ import annotations

import contextlib
import enum
import uuid
import warnings
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from .._ops import OpOverload, OpOverloadPacket, aten, overload_of
from .._state import STATE
from .._tensor import Tensor
from ..autograd import engine as _engine
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad
from ..autograd.graph import saved_tensors_hooks
from ..autograd.saved import SavedTensor, save
from ._python_dispatch import OpInterceptor, run_with_result

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity",
           "detach_variable", "noop_context_fn", "set_checkpoint_early_stop", "set_checkpoint_debug_enabled",
           "GraphExecGroup", "get_device_states", "set_device_states", "DefaultDeviceType", "CheckpointPolicy",
           "SelectiveCheckpointContext", "create_selective_checkpoint_contexts", "SAC_IGNORED_OPS"]

_DEFAULT_DETERMINISM_MODE = "default"
_checkpoint_debug_enabled: bool | None = None
_enable_checkpoint_early_stop: bool | None = None


class CheckpointError(RuntimeError):
    """A checkpointed region recomputed something other than what its forward saved."""


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Override ``debug=`` of every non-reentrant checkpoint in the block (None: use each call's flag)."""
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    _checkpoint_debug_enabled = enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether recomputation stops as soon as every needed tensor has been recomputed (default True)."""
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    _enable_checkpoint_early_stop = enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def detach_variable(inputs: tuple) -> tuple:
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, Tensor):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs: Iterable[Any]) -> None:
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", UserWarning,
                      stacklevel=2)


class DefaultDeviceType:
    """Kept for API compatibility: the device type whose RNG state checkpoint preserves."""

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        return DefaultDeviceType._default_device_type or "cpu"


def get_device_states(*args) -> tuple[list, list]:
    """Accelerator RNG states (tracegrad's GPU back end has none to preserve)."""
    return [], []


def set_device_states(devices, states, *, device_type=None) -> None:
    return None


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


# ---- RNG state --------------------------------------------------------------------------------------------


def _get_rng_state():
    from .. import _factories

    return _factories.get_rng_state()


@contextlib.contextmanager
def _fork_rng(state, enabled: bool):
    """Run the body from RNG ``state`` and restore the caller's state afterwards."""
    if not enabled:
        yield
        return
    from .. import _factories

    current = _factories.get_rng_state()
    _factories.set_rng_state(state)
    try:
        yield
    finally:
        _factories.set_rng_state(current)


# ---- reentrant variant ------------------------------------------------------------------------------------


def _autocast_kwargs() -> dict[str, dict]:
    """The autocast state the forward ran under, per device type (torch's ``_get_autocast_kwargs`` for its
    default device type, "cuda", and for "cpu"): a recomputation re-enters it, so that a segment checkpointed
    inside an autocast region recomputes in the dtypes of its forward."""
    from ..amp import autocast_state

    return {device: {"enabled": autocast_state.is_autocast_enabled(device),
                     "dtype": autocast_state.get_autocast_dtype(device),
                     "cache_enabled": autocast_state.is_autocast_cache_enabled()}
            for device in ("cuda", "cpu")}


def _autocast_as_in_forward(kwargs: dict[str, dict]) -> contextlib.ExitStack:
    """Autocast regions restoring the state :func:`_autocast_kwargs` recorded (entered in its order)."""
    from ..amp.autocast_mode import autocast

    stack = contextlib.ExitStack()
    for device, state in kwargs.items():
        stack.enter_context(autocast(device, **state))
    return stack


def _is_checkpoint_valid() -> bool:
    """False inside ``autograd.grad`` or ``backward(inputs=...)``: the nested backward could not see the
    gradients those calls capture (PyTorch's ``Engine::is_checkpoint_valid``)."""
    tasks = getattr(_engine, "_TASKS", None)
    if tasks is None:
        task = _engine.current_graph_task()
        tasks = [task] if task is not None else []
    return all(task.exec_info is None for task in tasks)


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = _get_rng_state()
        ctx.autocast_kwargs = _autocast_kwargs()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *args):
        from ..autograd.api import backward

        if not _is_checkpoint_valid():
            raise RuntimeError("When use_reentrant=True, torch.utils.checkpoint is incompatible with "
                               ".grad() or passing an `inputs` parameter to .backward(). To resolve this "
                               "error, you can either set use_reentrant=False, or call .backward() without "
                               "passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = tensor
        with _fork_rng(getattr(ctx, "fwd_cpu_state", None), ctx.preserve_rng_state):
            detached = detach_variable(tuple(inputs))
            with enable_grad(), _autocast_as_in_forward(ctx.autocast_kwargs):
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outputs_with_grad, args_with_grad = [], []
        for out, grad in zip(outputs, args):
            if isinstance(out, Tensor) and out.requires_grad:
                outputs_with_grad.append(out)
                args_with_grad.append(grad)
        if not outputs_with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        backward(outputs_with_grad, args_with_grad)
        grads = tuple(inp._grad if isinstance(inp, Tensor) else None for inp in detached)
        return (None, None) + grads


# ---- public entry points ----------------------------------------------------------------------------------


_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch "
    "2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is "
    "recommended, but if you need to preserve the current default behavior, you can pass "
    "use_reentrant=True. Refer to docs for more details on the differences between the two variants."
)


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple] = noop_context_fn,
               determinism_check: str = _DEFAULT_DETERMINISM_MODE,
               debug: bool = False, early_stop: bool = True, **kwargs: Any) -> Any:
    """Run ``function(*args, **kwargs)`` without keeping its intermediates; recompute them in backward."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    gen = _checkpoint_without_reentrant_generator(function, preserve, context_fn, determinism_check, debug,
                                                  early_stop, *args, **kwargs)
    next(gen)
    try:
        ret = function(*args, **kwargs)
    except BaseException as e:
        try:
            gen.throw(e)
        except StopIteration as stop:
            raise RuntimeError("torch.utils.checkpoint: the forward context provided by context_fn "
                               "suppressed an exception raised during the checkpointed forward. This is not "
                               "supported because checkpoint cannot return a value for a failed "
                               "forward.") from stop
        raise
    try:
        next(gen)
    except StopIteration:
        return ret
    raise AssertionError("torch.utils.checkpoint: expected context_fn generator to yield exactly twice, but "
                         "it yielded more than twice.")


def checkpoint_sequential(functions, segments: int, input: Any, use_reentrant: bool | None = None,
                          **kwargs: Any) -> Any:
    """Checkpoint ``functions`` (or an ``nn.Sequential``) in ``segments`` chunks; the last runs plainly."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
                      "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not "
                      "passed. use_reentrant=False is recommended, but if you need to preserve the current "
                      "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
                      "the differences between the two variants.", UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start: int, end: int, functions):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    if hasattr(functions, "children") and callable(functions.children):  # nn.Sequential
        functions = list(functions.children())
    functions = list(functions)
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)


# ---- non-reentrant variant --------------------------------------------------------------------------------


_DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint-debug mode globally.
"""

_DEBUG_TEMPLATE = """ \
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `torch.utils.checkpoint.checkpoint()`.

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and
 tensors to be saved during the original forward and differ between those saved
 during recomputation. This can happen if different operators were ran in the
 original forward and in the recomputation.

 To identify where the mismatch may be coming from, compare the operators ran
 during original forward and recomputation (printed above, in the order they
 were executed) to see where they differ.
--------------------------------------------------------------------------------
"""


def _internal_assert(cond: bool) -> None:
    if not cond:
        raise AssertionError("Something went unexpectedly wrong in activation checkpoint. Please report "
                             "this bug by filing an issue to PyTorch.")


class _Handle:
    """Key of one recomputed tensor for one backward (weakly referenced by the frame)."""


class _Holder:
    """What the pack hook saves instead of a tensor: one handle per graph execution."""

    def __init__(self) -> None:
        self.handles: dict = {}


class _CheckpointFrame:
    """State of one non-reentrant checkpoint call, shared by its pack/unpack hooks."""

    def __init__(self, recompute_fn: Callable, early_stop: bool, unpack_error_cb, metadata_fn) -> None:
        self.recompute_fn = recompute_fn
        self.saved_args: list = []
        self.weak_holders: list = []
        self.recomputed: defaultdict = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter: defaultdict = defaultdict(int)
        self.is_recomputed: defaultdict = defaultdict(bool)
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.unpack_error_cb = unpack_error_cb
        self.x_metadatas: list = []
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, *args) -> None:
        self.saved_args = [save(a) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self) -> list:
        return [a.unpack() if isinstance(a, SavedTensor) else a for a in self.saved_args]

    def check_recomputed_tensors_match(self, gid) -> None:
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the original "
                "forward and recomputation.\nNumber of tensors saved during forward: "
                f"{len(self.weak_holders)}\nNumber of tensors saved during recomputation: "
                f"{self.recomp_counter[gid]}.\n{_DEBUG_TIP}")
        mismatched = []
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            _internal_assert(holder.handles.get(gid) is not None)
            recomputed_x = self.recomputed[gid][holder.handles[gid]]
            meta = self.metadata_fn(recomputed_x)
            if self.x_metadatas[idx] != meta:
                mismatched.append((idx, self.x_metadatas[idx], meta))
        if mismatched:
            details = "".join(f"tensor at position {idx}:\nsaved metadata: {saved}\nrecomputed metadata: "
                              f"{new}\n"
                              for idx, saved, new in mismatched)
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have "
                                  "different metadata than during the forward "
                                  f"pass.\n{details}.\n{_DEBUG_TIP}")


class _StopRecomputationError(Exception):
    pass


class GraphExecGroup:
    """Backward calls inside one group share a single recomputation of each checkpointed region."""

    _current: GraphExecGroup | None = None

    def __enter__(self) -> GraphExecGroup:
        if GraphExecGroup._current is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{GraphExecGroup._current}")
        GraphExecGroup._current = self
        return self

    def __exit__(self, *args: object) -> None:
        GraphExecGroup._current = None

    @classmethod
    def _get_current_group(cls) -> GraphExecGroup | None:
        return cls._current


def _current_graph_id():
    group = GraphExecGroup._get_current_group()
    if group is not None:
        return group
    task = _engine.current_graph_task()
    if task is not None:
        return task.id
    return int(uuid.uuid4())  # unpacked outside backward: a fresh recomputation every time


class _recomputation_hook(saved_tensors_hooks):
    """During recomputation: hand each newly saved tensor to the placeholder saved at the same position."""

    def __init__(self, frame_ref, gid) -> None:
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            frame = frame_ref()
            _internal_assert(frame is not None)
            idx = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if idx >= len(frame.weak_holders):
                _internal_assert(not frame.early_stop)
                if not frame.forward_completed:
                    # Still in the original forward (nested checkpoint): nothing to compare against.
                    frame.ignore_saved_mismatch = True
                    return x
                raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during "
                                      f"recomputation than during the original forward pass.\n{_DEBUG_TIP}")
            holder = frame.weak_holders[idx]()
            if holder is not None:
                _internal_assert(holder.handles.get(gid) is None)
                holder.handles[gid] = _Handle()
                frame.recomputed[gid][holder.handles[gid]] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputationError
            return x

        def unpack_hook(x):
            return x

        super().__init__(pack_hook, unpack_hook)


class _checkpoint_hook(saved_tensors_hooks):
    """During the checkpointed forward: save placeholders; on unpack, recompute (once per backward)."""

    def __init__(self, frame: _CheckpointFrame) -> None:
        def pack_hook(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with no_grad():
                    frame.x_metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            gid = _current_graph_id()
            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            _internal_assert(gid in holder.handles)
            if holder.handles[gid] is None:
                extra = ""
                if GraphExecGroup._get_current_group() is not None:
                    extra = ("Performing two backward calls that overlap (i.e. require the same saved "
                             "activation in order to compute gradients) is not allowed while under the "
                             "torch.utils.checkpoint.GraphExecGroup context. ")
                raise CheckpointError("torch.utils.checkpoint: Unpack is being triggered for a tensor that "
                                      f"was already unpacked once. {extra}If you are calling "
                                      "ctx.saved_tensors in backward, make sure to do so only once. "
                                      "Otherwise please open an issue with details on your use case.")
            _internal_assert(holder.handles[gid] in frame.recomputed[gid])
            ret = frame.recomputed[gid][holder.handles[gid]]
            holder.handles[gid] = None
            return ret

        if frame.unpack_error_cb is not None:
            def unpack_hook_with_error_cb(holder):
                try:
                    return unpack_hook(holder)
                except CheckpointError as e:
                    frame.unpack_error_cb(e)

            super().__init__(pack_hook, unpack_hook_with_error_cb)
        else:
            super().__init__(pack_hook, unpack_hook)


def _default_meta_extractor(x: Tensor) -> dict:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns: dict = {
    _DEFAULT_DETERMINISM_MODE: _default_meta_extractor,
    "none": lambda _: None,
}


def _debug_context_and_cb():
    """``debug=True``: log the operators run in the forward and in the recomputation for the error message."""
    logs: dict = {"fwd": [], "recompute": []}

    def logging_ctx(key: str):
        @contextlib.contextmanager
        def ctx():
            from .. import _events as events  # the observation bus sees every operator call

            logs[key] = []
            unsubscribe = events.subscribe(lambda kind, payload: logs[key].append(str(payload.get("op")))
                                           if kind == "op" else None)
            try:
                yield
            finally:
                unsubscribe()

        return ctx()

    def unpack_error_cb(e: CheckpointError):
        raise CheckpointError(_DEBUG_TEMPLATE.format(forward_ops="\n".join(logs["fwd"]),
                                                     recompute_ops="\n".join(logs["recompute"]))) from e

    def context_fn():
        return logging_ctx("fwd"), logging_ctx("recompute")

    return context_fn, unpack_error_cb


def _checkpoint_without_reentrant_generator(fn, preserve_rng_state=True, context_fn=noop_context_fn,
                                            determinism_check=_DEFAULT_DETERMINISM_MODE, debug=False,
                                            early_stop=True, *args, **kwargs):
    """Yields once around the user's forward (run by :func:`checkpoint`), with the packing hooks active."""
    unpack_error_cb = None
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, unpack_error_cb = _debug_context_and_cb()
    if determinism_check not in _allowed_determinism_checks_to_fns:
        raise ValueError("determinism_check should be one of "
                         f"{list(_allowed_determinism_checks_to_fns.keys())}, but got {determinism_check}")
    metadata_fn = _allowed_determinism_checks_to_fns[determinism_check]
    forward_context, recompute_context = context_fn()
    fwd_rng_state = _get_rng_state() if preserve_rng_state else None
    autocast_kwargs = _autocast_kwargs()

    def recompute_fn(*inputs) -> None:
        with _fork_rng(fwd_rng_state, preserve_rng_state), _autocast_as_in_forward(autocast_kwargs), \
                recompute_context:
            fn(*inputs, **kwargs)

    if _enable_checkpoint_early_stop is not None:
        early_stop = _enable_checkpoint_early_stop
    frame = _CheckpointFrame(recompute_fn, early_stop, unpack_error_cb, metadata_fn)
    if not STATE.grad_enabled:
        yield
        return
    frame.save_inputs(*args)
    suppressed = False
    with _checkpoint_hook(frame), forward_context:
        try:
            yield
        except BaseException:
            suppressed = True
            raise
    if suppressed:
        raise RuntimeError("torch.utils.checkpoint: the forward context provided by context_fn suppressed "
                           "an exception raised during the checkpointed forward. This is not supported "
                           "because checkpoint cannot return a value for a failed forward.")
    frame.forward_completed = True


# ---- selective activation checkpointing -------------------------------------------------------------------


class SelectiveCheckpointContext:
    """What a SAC policy function gets besides the operator and its arguments.

    The policy is only asked during the forward (a recomputation takes the cached outputs by position), so
    ``is_recompute`` is always False; ``op_output`` is the operator's output."""

    def __init__(self, *, is_recompute: bool, op_output: Any = None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """What a SAC policy decides for an operator's output: ``*_SAVE`` keeps it from the forward, ``*_RECOMPUTE``
    recomputes it in backward. ``MUST_*`` is not to be overridden by other subsystems (``torch.compile``);
    eagerly, ``MUST_`` and ``PREFER_`` are the same, and ``*_CPU_OFFLOAD`` (tracegrad has one device) recomputes."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


def _policy_from_bool(b: bool) -> CheckpointPolicy:
    return CheckpointPolicy.MUST_SAVE if b else CheckpointPolicy.PREFER_RECOMPUTE  # (older policies return bools)


# Operators SAC leaves alone, as PyTorch: checkpointing itself runs a different number of ``detach`` in the
# forward and in the recomputation. (PyTorch's other entries, ``prim.device`` and the metadata queries such as
# ``aten.size.default``, are not operators in tracegrad.)
SAC_IGNORED_OPS: set = {aten.detach.default}

_RECOMPUTE = object()
_CONSUMED = object()
_SAC_MISMATCH_MSG = ("This can happen if the operations in the checkpointed region are nondeterministic or depend on "
                     "global state that changed between forward and backward.")


class _VersionWrapper:
    """A cached output and its version when cached: a cache entry must not have been written since."""

    def __init__(self, val: Any) -> None:
        self.val = val
        self.version = val._version if isinstance(val, Tensor) else None

    def get_val(self, allow_cache_entry_mutation: bool) -> Any:
        if self.version is not None and not allow_cache_entry_mutation and self.val._version != self.version:
            raise RuntimeError("Tensor cached during selective activation checkpoint has been mutated")
        return self.val


def _map_outputs(fn: Callable, out: Any) -> Any:
    """``fn`` applied to each of an operator's outputs (a multi-output result becomes a plain tuple)."""
    if isinstance(out, (tuple, list)):
        return tuple(fn(o) for o in out)
    return fn(out)


def _kernel_result(op, values: Any) -> Any:
    """The cached outputs as ``op``'s kernel returns them: arrays for tensors."""
    def array(v):
        return v._data if isinstance(v, Tensor) else v

    if isinstance(values, tuple):
        arrays = [array(v) for v in values]
        return arrays if op.returns_list else tuple(arrays)
    return array(values)


class _CachingInterceptor(OpInterceptor):
    """The SAC forward: run each operator, ask the policy, cache the outputs it says to save."""

    def __init__(self, policy_fn: Callable, storage: defaultdict) -> None:
        self.policy_fn = policy_fn
        self.storage = storage
        self.func_counter: defaultdict = defaultdict(int)

    def intercept(self, op, args: tuple, kwargs: dict) -> Any:
        func = overload_of(op)
        if func in SAC_IGNORED_OPS:
            return op(*args, **kwargs)
        out = op(*args, **kwargs)
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out), func, *args, **kwargs)
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        if policy in (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE):
            # (detached: the cache must not keep the forward's graph alive)
            self.storage[func][idx] = _map_outputs(
                lambda x: _VersionWrapper(x.detach() if isinstance(x, Tensor) else x), out)
        else:
            self.storage[func][idx] = _RECOMPUTE
        return out


class _CachedInterceptor(OpInterceptor):
    """The SAC recomputation: hand back the cached outputs, run the other operators again."""

    def __init__(self, storage: defaultdict, allow_cache_entry_mutation: bool = False) -> None:
        self.storage = storage
        self.allow_cache_entry_mutation = allow_cache_entry_mutation
        self.func_counter: defaultdict = defaultdict(int)

    def __enter__(self):
        self.func_counter.clear()  # so that a second backward reports "backward an extra time"
        return super().__enter__()

    def intercept(self, op, args: tuple, kwargs: dict) -> Any:
        func = overload_of(op)
        if func in SAC_IGNORED_OPS:
            return op(*args, **kwargs)
        idx = self.func_counter[func]
        self.func_counter[func] += 1
        func_storage = self.storage.get(func)
        if func_storage is None:
            raise RuntimeError(f"{func} encountered during backward but not found in storage. {_SAC_MISMATCH_MSG}")
        entry = func_storage.get(idx)
        if entry is None:
            raise RuntimeError(f"{func} invocation index {idx} encountered during backward but not found in storage. "
                               f"{_SAC_MISMATCH_MSG}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to backward once on any "
                               "region computed under selective activation checkpoint.")
        if entry is _RECOMPUTE:
            return op(*args, **kwargs)
        func_storage[idx] = _CONSUMED
        values = _map_outputs(lambda w: w.get_val(self.allow_cache_entry_mutation), entry)
        return run_with_result(op, args, kwargs, _kernel_result(op, values))


def create_selective_checkpoint_contexts(policy_fn_or_list: Callable | list,
                                         allow_cache_entry_mutation: bool = False) -> tuple:
    """The ``context_fn`` pair of selective activation checkpointing.

    ``policy_fn_or_list`` is either ``policy_fn(ctx, op, *args, **kwargs) -> CheckpointPolicy`` (or a bool:
    True saves), asked about every operator call of the forward, or a list of ``OpOverload``s
    (``torch.ops.aten.mm.default``) whose outputs to save, recomputing the rest. Unless
    ``allow_cache_entry_mutation``, using a cached output that was written in place since is an error."""
    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, OpOverload):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload.For example, if you have "
                         "`torch.ops.aten.mm`, change it to `torch.ops.aten.mm.default`."
                         if isinstance(op, OpOverloadPacket) else "")
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. "
                                 f"{extra}")
        ops_to_save = policy_fn_or_list

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in ops_to_save else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage: defaultdict = defaultdict(dict)
    return _CachingInterceptor(policy_fn, storage), _CachedInterceptor(storage, allow_cache_entry_mutation)
